//! The stages of [`generate_with`](super::generate_with), each a
//! function from what the previous ones found to what the next need:
//! the given values checked, the functions around the SCoPs found, each
//! function checked callable, its SCoPs' symbols checked settable, an
//! argument made for each of its parameters (arrays sized from their
//! extents or the footprint), the `-D` values collected, the text
//! written. Each returns the first refusal it finds.

use super::footprint::check_footprint;
use super::signature::{FileScan, Function, Kind, Param, Scalar};
use super::{DrivenArray, Driver, DriverError, FLOAT_VALUES, Needs, emit, extent, fits};
use crate::frontend::SourceFile;
use crate::frontend::error::Diagnostic;
use crate::frontend::scop::Scop;
use crate::isl::DimRange;
use std::collections::{BTreeSet, HashMap};

/// Check the given values: each name once.
pub(super) fn given_values(params: &[(String, i64)]) -> Result<HashMap<&str, i64>, DriverError> {
    let mut given: HashMap<&str, i64> = HashMap::new();
    for (name, v) in params {
        if given.insert(name, *v).is_some() {
            return Err(DriverError::Param {
                name: name.clone(),
                message: "given twice".into(),
            });
        }
    }
    Ok(given)
}

/// What the stages of [`generate_with`](super::generate_with) share:
/// the file, its scan and the values known.
pub(super) struct Stages<'a> {
    src: &'a SourceFile,
    scan: FileScan<'a>,
    /// The `--param` values, by name.
    given: HashMap<&'a str, i64>,
    /// The file's `#define NAME number` lines ([`FileScan::defines`]).
    defines: HashMap<String, (Vec<i64>, bool)>,
    /// Whether a pointer of unknown extent is sized from the footprint.
    from_footprint: bool,
}

/// A function the driver calls, with its SCoPs.
pub(super) struct Kernel<'k> {
    f: &'k Function,
    scops: &'k [&'k Scop],
    /// The byte range of each SCoP.
    regions: Vec<(usize, usize)>,
}

impl<'k> Kernel<'k> {
    /// The function `f`, which holds `scops`.
    pub(super) fn new(f: &'k Function, scops: &'k [&'k Scop]) -> Kernel<'k> {
        let regions = scops
            .iter()
            .map(|s| (s.region.open.start, s.region.close.end))
            .collect();
        Kernel { f, scops, regions }
    }

    /// Whether `name` is a parameter of the function.
    fn is_param(&self, name: &str) -> bool {
        self.f.params.iter().any(|p| p.name == name)
    }
}

/// An array parameter: [`Kind::Array`]'s parts, with the parameter.
struct ArrayParam<'p> {
    param: &'p Param,
    element: &'p Scalar,
    qualifiers: &'p str,
    extents: &'p [Option<extent::Expr>],
}

impl<'a> Stages<'a> {
    /// The stages' view of `src`, scanned as `scan`, at the values `given`.
    pub(super) fn new(
        src: &'a SourceFile,
        scan: FileScan<'a>,
        given: HashMap<&'a str, i64>,
        from_footprint: bool,
    ) -> Stages<'a> {
        Stages {
            src,
            defines: scan.defines(),
            scan,
            given,
            from_footprint,
        }
    }

    /// The refusal of the file at byte `offset`: where, why, what to do.
    fn at(&self, offset: usize, message: String, help: &str) -> DriverError {
        let (line, column) = self.src.line_col(offset);
        DriverError::Source(
            Box::new(Diagnostic {
                path: self.src.path.clone(),
                line,
                column,
                message,
                help: Some(help.to_string()),
                pure: None,
            }),
            None,
        )
    }

    /// [`Self::at`], with the values that would let the file be driven.
    fn needing(&self, offset: usize, message: String, help: &str, needs: Needs) -> DriverError {
        match self.at(offset, message, help) {
            DriverError::Source(d, _) => DriverError::Source(d, Some(needs)),
            other => other,
        }
    }

    /// The value known for `name`: given, or else the file's `#define`
    /// of it when all of them agree.
    pub(super) fn value(&self, name: &str) -> Option<i64> {
        self.given
            .get(name)
            .copied()
            .or_else(|| match self.defines.get(name) {
                Some((values, _)) if values.iter().all(|v| *v == values[0]) => Some(values[0]),
                _ => None,
            })
    }

    /// Find the function around each SCoP: the functions, each with its
    /// SCoPs, in the order of their first SCoPs.
    pub(super) fn kernel_functions(&self) -> Result<Vec<(Function, Vec<&'a Scop>)>, DriverError> {
        let mut functions: Vec<(Function, Vec<&Scop>)> = Vec::new();
        for scop in &self.src.scops {
            let Some(f) = self.scan.function_at(scop.region.open.start) else {
                return Err(self.at(
                    scop.region.open.start,
                    "this SCoP is not inside a function definition, so no driver can call it"
                        .into(),
                    "put the loop nest in a function, or write a main",
                ));
            };
            match functions.iter_mut().find(|(g, _)| g.body == f.body) {
                Some((_, v)) => v.push(scop),
                None => functions.push((f, vec![scop])),
            }
        }
        // A region left as written is not modelled: the arrays it touches
        // in a function the driver calls could not be sized.
        for kept in &self.src.kept {
            let at = kept.region.open.start;
            if let Some(f) = self.scan.function_at(at)
                && functions.iter().any(|(g, _)| g.body == f.body)
            {
                return Err(self.at(
                    at,
                    "this region is left as written (see the warning above), so the driver cannot size the arrays it touches".into(),
                    "write a main",
                ));
            }
        }
        Ok(functions)
    }

    /// Check that another file can call `f` (not `static`, a return type
    /// a prototype can spell), and return that type.
    pub(super) fn callable(&self, f: &Function) -> Result<String, DriverError> {
        if let Some(what) = f.internal {
            return Err(self.at(
                f.at,
                format!(
                    "`{}` is {what}: a driver in another file cannot call it",
                    f.name
                ),
                &format!(
                    "remove `{what}` from the definition of `{}`, or write a main",
                    f.name
                ),
            ));
        }
        f.returns.clone().map_err(|words| {
            self.at(
                f.at,
                format!(
                    "`{}` returns `{words}`, a type polytune cannot declare",
                    f.name
                ),
                "return void or a number, or write a main",
            )
        })
    }

    /// Check that the driver can set every symbol of the kernel's SCoPs,
    /// and add them to `used`.
    pub(super) fn check_symbols(
        &self,
        k: &Kernel,
        used: &mut BTreeSet<String>,
    ) -> Result<(), DriverError> {
        for scop in k.scops {
            if let Some(l) = scop.invariant_loads.first() {
                return Err(self.at(
                    scop.region.open.start,
                    format!(
                        "the SCoP reads `{}` from memory in a loop bound, a condition or a subscript: a driver cannot set it",
                        l.expr
                    ),
                    "write a main that sets it",
                ));
            }
            for p in &scop.parameters {
                self.check_symbol(k, scop, p)?;
                used.insert(p.clone());
            }
        }
        Ok(())
    }

    /// Check that the driver can set the symbol `p` of `scop`: not a
    /// parameter the function may modify, not a variable of the file,
    /// and with a value.
    fn check_symbol(&self, k: &Kernel, scop: &Scop, p: &str) -> Result<(), DriverError> {
        let f = k.f;
        if k.is_param(p) && self.scan.may_modify(p, f.body, &k.regions) {
            return Err(self.at(
                scop.region.open.start,
                format!(
                    "`{}` may modify its parameter `{p}` before the SCoP, so a value given for it does not tell the SCoP's bounds",
                    f.name
                ),
                "leave the parameter unchanged outside the SCoP, or write a main",
            ));
        }
        if !k.is_param(p) && !self.defines.contains_key(p) && self.scan.declares(p) {
            return Err(self.at(
                scop.region.open.start,
                format!(
                    "the SCoP reads the variable `{p}`, which is not a parameter of `{}`: a driver cannot set it",
                    f.name
                ),
                &format!("make `{p}` a parameter of `{}`, or write a main", f.name),
            ));
        }
        if self.value(p).is_none() {
            let (what, help) = if k.is_param(p) {
                (
                    format!("parameter `{p}` of `{}` sets the SCoP's bounds", f.name),
                    format!("give its value, `{p}=VALUE`"),
                )
            } else {
                (
                    format!(
                        "the SCoP reads `{p}`, which is not a parameter of `{}` and has no `#define` with a number",
                        f.name
                    ),
                    format!(
                        "give its value, `{p}=VALUE` (the kernel is then compiled with -D{p}=VALUE)"
                    ),
                )
            };
            let needs = Needs::Value(p.to_string());
            return Err(self.needing(scop.region.open.start, what, &help, needs));
        }
        Ok(())
    }

    /// Make the argument of each parameter of the kernel, with the arrays
    /// allocated; the integers given and the names of extents go into
    /// `used`.
    pub(super) fn arguments(
        &self,
        k: &Kernel,
        footprints: &HashMap<String, Vec<DimRange>>,
        used: &mut BTreeSet<String>,
    ) -> Result<(Vec<emit::Arg>, Vec<DrivenArray>), DriverError> {
        let mut args = Vec::new();
        let mut arrays = Vec::new();
        let mut floats = 0;
        for p in &k.f.params {
            match &p.kind {
                Kind::Other(why) => return Err(self.refuse(k.f, p, why)),
                Kind::Scalar(Scalar::Float(t)) => {
                    args.push(emit::Arg::scalar(t, FLOAT_VALUES[floats % 2]));
                    floats += 1;
                }
                Kind::Scalar(s @ Scalar::Int { unsigned, .. }) => {
                    args.push(self.integer(k.f, p, s, *unsigned)?);
                    used.insert(p.name.clone());
                }
                Kind::Array {
                    element,
                    qualifiers,
                    extents,
                } => {
                    let a = ArrayParam {
                        param: p,
                        element,
                        qualifiers,
                        extents,
                    };
                    let (arg, array) = self.array(k, &a, footprints.get(&p.name), used)?;
                    arrays.push(array);
                    args.push(arg);
                }
            }
        }
        Ok((args, arrays))
    }

    /// The refusal of the parameter `p` of `f`, which is `why`.
    fn refuse(&self, f: &Function, p: &Param, why: &str) -> DriverError {
        self.at(
            p.at,
            format!(
                "parameter `{}` of `{}` ({}) is {why}: a generated driver cannot make one",
                p.name, f.name, p.text
            ),
            &format!(
                "declare it as an array with extents (`double {0}[n]`) or a number, or write a main that calls `{1}`",
                p.name, f.name
            ),
        )
    }

    /// The argument of the integer parameter `p` of `f`, of type `s`: its
    /// given value, which the type must hold.
    fn integer(
        &self,
        f: &Function,
        p: &Param,
        s: &Scalar,
        unsigned: bool,
    ) -> Result<emit::Arg, DriverError> {
        let Some(&v) = self.given.get(p.name.as_str()) else {
            return Err(self.needing(
                p.at,
                format!(
                    "parameter `{}` of `{}` is an integer polytune cannot choose",
                    p.name, f.name
                ),
                &format!("give its value, `{}=VALUE`", p.name),
                Needs::Value(p.name.clone()),
            ));
        };
        if !fits(s.spelling(), unsigned, v) {
            return Err(DriverError::Param {
                name: p.name.clone(),
                message: format!(
                    "{v} does not fit the type `{}` of `{}`'s parameter",
                    s.spelling(),
                    f.name
                ),
            });
        }
        Ok(emit::Arg::scalar(s.spelling(), &v.to_string()))
    }

    /// Size the array parameter `a`, check that the SCoPs' footprint `fp`
    /// of it lies inside, and make its argument.
    fn array(
        &self,
        k: &Kernel,
        a: &ArrayParam,
        fp: Option<&Vec<DimRange>>,
        used: &mut BTreeSet<String>,
    ) -> Result<(emit::Arg, DrivenArray), DriverError> {
        let (f, p) = (k.f, a.param);
        let mut sizes = Vec::new();
        for (d, e) in a.extents.iter().enumerate() {
            let v = match e {
                Some(e) => self.declared_extent(f, p, e, used)?,
                None => self.unknown_extent(k, a, d, fp)?,
            };
            sizes.push(v);
        }
        if let Some(ranges) = fp {
            check_footprint(ranges, &sizes).map_err(|m| {
                self.needing(
                    p.at,
                    format!(
                        "at these values the SCoP of `{}` accesses `{}` {m}",
                        f.name, p.name
                    ),
                    "check the parameter values; a driver cannot call the kernel out of bounds",
                    Needs::OtherValues,
                )
            })?;
        }
        let arg = emit::Arg::array(a.element, a.qualifiers, &sizes).map_err(|()| {
            self.at(
                p.at,
                format!(
                    "parameter `{}` of `{}` would need more memory than can be addressed",
                    p.name, f.name
                ),
                "give smaller parameter values",
            )
        })?;
        let array = DrivenArray {
            function: f.name.clone(),
            parameter: p.name.clone(),
            element: a.element.spelling().to_string(),
            extents: sizes,
            from_footprint: a.extents[0].is_none(),
        };
        Ok((arg, array))
    }

    /// The extent `e` the signature declares for `p` of `f`, at the
    /// values known, refused unless at least 1; its names go into `used`.
    fn declared_extent(
        &self,
        f: &Function,
        p: &Param,
        e: &extent::Expr,
        used: &mut BTreeSet<String>,
    ) -> Result<i64, DriverError> {
        let v = e.eval(&|n| self.value(n)).map_err(|n| {
            self.needing(
                p.at,
                format!(
                    "extent `{n}` of parameter `{}` of `{}` has no value",
                    p.name, f.name
                ),
                &format!("give it, `{n}=VALUE`"),
                Needs::Value(n.to_string()),
            )
        })?;
        e_names(e, used);
        match v {
            Some(v) if v >= 1 => Ok(v),
            _ => Err(self.at(
                p.at,
                format!(
                    "an extent of parameter `{}` of `{}` is not a positive number at these values",
                    p.name, f.name
                ),
                "give parameter values that make every extent at least 1",
            )),
        }
    }

    /// The extent `d` of `a` the signature leaves unknown (`double *x`,
    /// `double x[]`): the largest index of the footprint `fp` plus one
    /// (1 without a footprint); refused unless it is the first extent,
    /// sizing from the footprint is asked for, and the function uses `a`
    /// only in its SCoPs.
    fn unknown_extent(
        &self,
        k: &Kernel,
        a: &ArrayParam,
        d: usize,
        fp: Option<&Vec<DimRange>>,
    ) -> Result<i64, DriverError> {
        let (f, p) = (k.f, a.param);
        if d > 0 {
            return Err(self.refuse(f, p, "an array with an inner extent polytune cannot read"));
        }
        if !self.from_footprint {
            return Err(self.needing(
                p.at,
                format!(
                    "parameter `{}` of `{}` ({}) is a pointer of unknown extent",
                    p.name, f.name, p.text
                ),
                &format!(
                    "declare it as an array with extents, `{} {}[n]`, write a main, or let the driver size it from the elements the kernel touches",
                    a.element.spelling(),
                    p.name
                ),
                Needs::FootprintSizes,
            ));
        }
        let outside = self.scan.mentions(&p.name, f.body, &k.regions);
        if outside {
            return Err(self.at(
                p.at,
                format!(
                    "parameter `{}` of `{}` ({}) has no extent, and `{}` uses it outside the SCoP, where polytune cannot see how far it reaches",
                    p.name, f.name, p.text, f.name
                ),
                &format!(
                    "declare it as an array with extents, `{} {}[n]`, or write a main",
                    a.element.spelling(),
                    p.name
                ),
            ));
        }
        Ok(match fp.and_then(|r| r.first()) {
            Some(DimRange::Between(_, hi)) => hi.saturating_add(1).max(1),
            _ => 1,
        })
    }

    /// The values given for symbols of the SCoPs that are not parameters
    /// of the kernels, for the kernel's compile line (`-DNAME=VALUE`):
    /// refused when a given name is neither in `used` nor a parameter (a
    /// typo), or a fixed `#define` of the file keeps its value from the
    /// kernel.
    pub(super) fn kernel_defines(
        &self,
        params: &[(String, i64)],
        functions: &[(Function, Vec<&Scop>)],
        used: &BTreeSet<String>,
    ) -> Result<Vec<(String, i64)>, DriverError> {
        let src = self.src;
        let mut defs = Vec::new();
        for (name, v) in params {
            let is_param = functions
                .iter()
                .any(|(f, _)| f.params.iter().any(|p| &p.name == name));
            if !used.contains(name) && !is_param {
                return Err(DriverError::Param {
                    name: name.clone(),
                    message: format!(
                        "{} has no kernel parameter or SCoP symbol of this name",
                        src.path.display()
                    ),
                });
            }
            if is_param {
                continue;
            }
            if let Some((values, true)) = self.defines.get(name.as_str())
                && values.iter().any(|d| d != v)
            {
                return Err(DriverError::Param {
                    name: name.clone(),
                    message: format!(
                        "{} #defines {name} as {}, and not under #ifndef {name}: the value {v} cannot reach the kernel; edit the #define, or put it under #ifndef {name}",
                        src.path.display(),
                        values[0]
                    ),
                });
            }
            defs.push((name.clone(), *v));
        }
        Ok(defs)
    }

    /// Write the driver: its text, with `main` making `calls` in turn.
    pub(super) fn driver(
        &self,
        params: &[(String, i64)],
        calls: Vec<emit::Call>,
        defines: Vec<(String, i64)>,
        arrays: Vec<DrivenArray>,
    ) -> Driver {
        let src = self.src;
        Driver {
            text: emit::program(
                &src.path.file_name().map_or_else(
                    || src.path.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                ),
                params,
                &calls,
            ),
            functions: calls.iter().map(|c| c.name.clone()).collect(),
            defines,
            arrays,
        }
    }
}

/// Add the names the extent `e` reads to `out`.
fn e_names(e: &extent::Expr, out: &mut BTreeSet<String>) {
    use extent::Expr;
    match e {
        Expr::Var(n) => {
            out.insert(n.clone());
        }
        Expr::Num(_) => {}
        Expr::Neg(a) => e_names(a, out),
        Expr::Bin(_, a, b) => {
            e_names(a, out);
            e_names(b, out);
        }
    }
}
