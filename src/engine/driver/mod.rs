//! A driver for a bare kernel: a C file that holds the function of a SCoP
//! but no `main`. [`generate`] writes a second translation unit whose
//! `main` calls every function that contains a SCoP of the file once,
//! with arrays it allocates and fills itself.
//!
//! # Contract
//!
//! `generate(src, params)` returns the C text of the driver, the
//! functions it calls (in the file's order), the arrays it allocates and
//! the symbols the kernel file must be compiled with (`-DNAME=VALUE`).
//! The caller compiles the kernel file and the driver together; the
//! driver only calls: timing and dumps are the instrumentation's, in the
//! kernel file. Pure: no process, no file.
//!
//! - **Values.** `params` gives integers by name. A name is a parameter of
//!   a kernel function (its signature's spelling) or a symbol of a SCoP
//!   that is not one (a macro such as `N`): such a value is returned in
//!   [`Driver::defines`], for the kernel's compile line, and is refused
//!   when the file `#define`s the name to another value other than under
//!   `#ifndef NAME` or `#if !defined(NAME)` (the compile line could not
//!   change it). A SCoP symbol without
//!   a `--param` takes the value of the file's `#define NAME number` when
//!   it has one. A name that is none of these is refused (a typo).
//! - **Scalars.** Integer parameters (`int`, `long`, `unsigned`, `size_t`,
//!   `int64_t`, ...) must be given; floating ones (`float`, `double`) get
//!   1.5, 1.2, 1.5, ... in signature order.
//! - **Arrays.** Each array parameter is allocated on the heap. An extent
//!   the signature declares (`double A[1000][1000]`, the C99 `double
//!   C[n][n]`, `A[N]` with a macro) is used at the given values; the
//!   first extent of `double x[]`, `double (*x)[m]` or `double *x` is
//!   taken from the SCoP's access footprint (the largest index read or
//!   written, plus one), but only when the function names `x` nowhere
//!   outside its SCoPs: elsewhere polytune cannot see how far it reaches,
//!   and the parameter is refused. The footprint (isl: every element the
//!   SCoPs touch at these values) must lie inside the declared extents,
//!   and no index may be negative; otherwise the call would be out of
//!   bounds and `generate` says so.
//! - **Contents.** A fixed-seed generator fills floating elements with
//!   values in (0, 1] (multiples of 1/1024) and integer elements with
//!   1 to 9: deterministic, finite, no zero divisor, and products of
//!   elements stay at most 1.
//! - **Refused,** with the parameter named and what to write instead:
//!   structs, unions, enums, pointers to pointers, arrays of pointers,
//!   types polytune does not know, `static` or plain `inline` functions
//!   (not callable from another file), return types it cannot spell, a
//!   SCoP symbol without a value, a parameter of the SCoP's bounds the
//!   function may modify outside its SCoPs (assigned, incremented, its
//!   address taken), and a SCoP symbol that is a variable of the file
//!   (the driver cannot set it).
//! - Integers are checked against their type's range on LP64 (`int` 32
//!   bits, `long` 64).
//!
//! [`has_main`] tells whether a file defines `main` (comments, strings
//! and directives ignored), for the caller to decide whether a driver is
//! needed.

mod emit;
mod extent;
mod footprint;
mod signature;

use crate::frontend::SourceFile;
use crate::frontend::error::Diagnostic;
use crate::frontend::scop::Scop;
use crate::isl::DimRange;
use footprint::{check_footprint, footprints};
use signature::{FileScan, Function, Kind, Scalar};
use std::collections::{BTreeSet, HashMap};

/// A driver program for a kernel file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Driver {
    /// The C text of the driver's translation unit.
    pub text: String,
    /// The functions `main` calls, in order.
    pub functions: Vec<String>,
    /// Values given for SCoP symbols that are not function parameters:
    /// the kernel file must be compiled with `-DNAME=VALUE`.
    pub defines: Vec<(String, i64)>,
    /// Every array the driver allocates.
    pub arrays: Vec<DrivenArray>,
}

/// One array parameter as the driver allocates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrivenArray {
    pub function: String,
    pub parameter: String,
    /// Element type, as C spells it.
    pub element: String,
    pub extents: Vec<i64>,
    /// The first extent came from the access footprint.
    pub from_footprint: bool,
}

/// Why no driver can be made.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The file, as written, cannot be driven: where, why, what to do.
    #[error("{0}")]
    Source(Diagnostic),
    /// A `--param` that names nothing, or names something twice.
    #[error("--param {name}: {message}")]
    Param { name: String, message: String },
    /// A bug of polytune or isl.
    #[error("internal error while sizing the arrays of the driver: {0}")]
    Internal(String),
}

/// Whether `text` defines a function `main`.
pub fn has_main(text: &str) -> bool {
    signature::has_main(text)
}

/// The values the floating scalars get, in turn.
const FLOAT_VALUES: [&str; 2] = ["1.5", "1.2"];

/// The driver for the kernel file `src` at the integer values `params`.
pub fn generate(src: &SourceFile, params: &[(String, i64)]) -> Result<Driver, DriverError> {
    generate_with(src, params, true)
}

/// [`generate`], with pointer parameters of unknown extent (`double *x`,
/// `double x[]`) sized from the footprint only when `from_footprint`;
/// otherwise they are refused (the user says what they hold).
pub fn generate_with(
    src: &SourceFile,
    params: &[(String, i64)],
    from_footprint: bool,
) -> Result<Driver, DriverError> {
    let scan = FileScan::new(&src.text);
    let mut given: HashMap<&str, i64> = HashMap::new();
    for (name, v) in params {
        if given.insert(name, *v).is_some() {
            return Err(DriverError::Param {
                name: name.clone(),
                message: "given twice".into(),
            });
        }
    }
    let defines = scan.defines();
    let at = |offset: usize, message: String, help: &str| {
        let (line, column) = src.line_col(offset);
        DriverError::Source(Diagnostic {
            path: src.path.clone(),
            line,
            column,
            message,
            help: Some(help.to_string()),
        })
    };
    // The functions around the SCoPs, each with its SCoPs.
    let mut functions: Vec<(Function, Vec<&Scop>)> = Vec::new();
    for scop in &src.scops {
        let Some(f) = scan.function_at(scop.region.open.start) else {
            return Err(at(
                scop.region.open.start,
                "this SCoP is not inside a function definition, so no driver can call it".into(),
                "put the loop nest in a function, or write a main",
            ));
        };
        match functions.iter_mut().find(|(g, _)| g.body == f.body) {
            Some((_, v)) => v.push(scop),
            None => functions.push((f, vec![scop])),
        }
    }
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut calls = Vec::new();
    let mut arrays = Vec::new();
    for (f, scops) in &functions {
        if let Some(what) = f.internal {
            return Err(at(
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
        let returns = f.returns.clone().map_err(|words| {
            at(
                f.at,
                format!(
                    "`{}` returns `{words}`, a type polytune cannot declare",
                    f.name
                ),
                "return void or a number, or write a main",
            )
        })?;
        // Every name a value is known for, in this function.
        let env = |name: &str| -> Option<i64> {
            given
                .get(name)
                .copied()
                .or_else(|| match defines.get(name) {
                    Some((values, _)) if values.iter().all(|v| *v == values[0]) => Some(values[0]),
                    _ => None,
                })
        };
        let is_param = |name: &str| f.params.iter().any(|p| p.name == name);
        let regions: Vec<(usize, usize)> = scops
            .iter()
            .map(|s| (s.region.open.start, s.region.close.end))
            .collect();
        for scop in scops {
            if let Some(l) = scop.invariant_loads.first() {
                return Err(at(
                    scop.region.open.start,
                    format!(
                        "the SCoP reads `{}` from memory in a loop bound, a condition or a subscript: a driver cannot set it",
                        l.expr
                    ),
                    "write a main that sets it",
                ));
            }
            for p in &scop.parameters {
                if is_param(p) && scan.may_modify(p, f.body, &regions) {
                    return Err(at(
                        scop.region.open.start,
                        format!(
                            "`{}` may modify its parameter `{p}` before the SCoP, so --param does not tell the SCoP's bounds",
                            f.name
                        ),
                        "leave the parameter unchanged outside the SCoP, or write a main",
                    ));
                }
                if !is_param(p) && !defines.contains_key(p.as_str()) && scan.declares(p) {
                    return Err(at(
                        scop.region.open.start,
                        format!(
                            "the SCoP reads the variable `{p}`, which is not a parameter of `{}`: a driver cannot set it",
                            f.name
                        ),
                        &format!("make `{p}` a parameter of `{}`, or write a main", f.name),
                    ));
                }
                if env(p).is_none() {
                    let (what, help) = if is_param(p) {
                        (
                            format!("parameter `{p}` of `{}` sets the SCoP's bounds", f.name),
                            format!("give its value with --param {p}=VALUE"),
                        )
                    } else {
                        (
                            format!(
                                "the SCoP reads `{p}`, which is not a parameter of `{}` and has no `#define` with a number",
                                f.name
                            ),
                            format!(
                                "give its value with --param {p}=VALUE (the kernel is then compiled with -D{p}=VALUE)"
                            ),
                        )
                    };
                    return Err(at(scop.region.open.start, what, &help));
                }
                used.insert(p.clone());
            }
        }
        let footprints = footprints(scops, &env)?;
        let mut args = Vec::new();
        let mut floats = 0;
        for p in &f.params {
            let refuse = |why: &str| {
                at(
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
            };
            match &p.kind {
                Kind::Other(why) => return Err(refuse(why)),
                Kind::Scalar(Scalar::Float(t)) => {
                    args.push(emit::Arg::scalar(t, FLOAT_VALUES[floats % 2]));
                    floats += 1;
                }
                Kind::Scalar(s @ Scalar::Int { unsigned, .. }) => {
                    let Some(&v) = given.get(p.name.as_str()) else {
                        return Err(at(
                            p.at,
                            format!(
                                "parameter `{}` of `{}` is an integer polytune cannot choose",
                                p.name, f.name
                            ),
                            &format!("give its value with --param {}=VALUE", p.name),
                        ));
                    };
                    if !fits(s.spelling(), *unsigned, v) {
                        return Err(DriverError::Param {
                            name: p.name.clone(),
                            message: format!(
                                "{v} does not fit the type `{}` of `{}`'s parameter",
                                s.spelling(),
                                f.name
                            ),
                        });
                    }
                    used.insert(p.name.clone());
                    args.push(emit::Arg::scalar(s.spelling(), &v.to_string()));
                }
                Kind::Array {
                    element,
                    qualifiers,
                    extents,
                } => {
                    let fp = footprints.get(&p.name);
                    let mut sizes = Vec::new();
                    for (d, e) in extents.iter().enumerate() {
                        let v = match e {
                            Some(e) => {
                                let v = e.eval(&|n| env(n)).map_err(|n| {
                                    at(
                                        p.at,
                                        format!(
                                            "extent `{n}` of parameter `{}` of `{}` has no value",
                                            p.name, f.name
                                        ),
                                        &format!("give it with --param {n}=VALUE"),
                                    )
                                })?;
                                e_names(e, &mut used);
                                match v {
                                    Some(v) if v >= 1 => v,
                                    _ => {
                                        return Err(at(
                                            p.at,
                                            format!(
                                                "an extent of parameter `{}` of `{}` is not a positive number at these values",
                                                p.name, f.name
                                            ),
                                            "give parameter values that make every extent at least 1",
                                        ));
                                    }
                                }
                            }
                            None => {
                                if d > 0 {
                                    return Err(refuse(
                                        "an array with an inner extent polytune cannot read",
                                    ));
                                }
                                if !from_footprint {
                                    return Err(at(
                                        p.at,
                                        format!(
                                            "parameter `{}` of `{}` ({}) is a pointer of unknown extent",
                                            p.name, f.name, p.text
                                        ),
                                        &format!(
                                            "declare it as an array with extents, `{} {}[n]`, write a main, or pass --size-from-footprint to size it from the elements the kernel touches",
                                            element.spelling(),
                                            p.name
                                        ),
                                    ));
                                }
                                let outside = scan.mentions(&p.name, f.body, &regions);
                                if outside {
                                    return Err(at(
                                        p.at,
                                        format!(
                                            "parameter `{}` of `{}` ({}) has no extent, and `{}` uses it outside the SCoP, where polytune cannot see how far it reaches",
                                            p.name, f.name, p.text, f.name
                                        ),
                                        &format!(
                                            "declare it as an array with extents, `{} {}[n]`, or write a main",
                                            element.spelling(),
                                            p.name
                                        ),
                                    ));
                                }
                                match fp.and_then(|r| r.first()) {
                                    Some(DimRange::Between(_, hi)) => hi.saturating_add(1).max(1),
                                    _ => 1,
                                }
                            }
                        };
                        sizes.push(v);
                    }
                    if let Some(ranges) = fp {
                        check_footprint(ranges, &sizes).map_err(|m| {
                            at(p.at, format!("at these values the SCoP of `{}` accesses `{}` {m}", f.name, p.name), "check the --param values; a driver cannot call the kernel out of bounds")
                        })?;
                    }
                    let from_footprint = extents[0].is_none();
                    arrays.push(DrivenArray {
                        function: f.name.clone(),
                        parameter: p.name.clone(),
                        element: element.spelling().to_string(),
                        extents: sizes.clone(),
                        from_footprint,
                    });
                    args.push(emit::Arg::array(element, qualifiers, &sizes).map_err(|()| {
                        at(p.at, format!("parameter `{}` of `{}` would need more memory than can be addressed", p.name, f.name), "give smaller parameter values")
                    })?);
                }
            }
        }
        calls.push(emit::Call {
            name: f.name.clone(),
            returns,
            args,
        });
    }
    // Symbols of the SCoPs given on the command line: to be -D'efined.
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
        if let Some((values, true)) = defines.get(name.as_str())
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
    Ok(Driver {
        text: emit::program(
            &src.path.file_name().map_or_else(
                || src.path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            params,
            &calls,
        ),
        functions: calls.iter().map(|c| c.name.clone()).collect(),
        defines: defs,
        arrays,
    })
}

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

/// Whether `v` is a value of the integer type `spelling` (as on x86-64
/// and AArch64 Linux: `int` 32 bits, `long` 64).
fn fits(spelling: &str, unsigned: bool, v: i64) -> bool {
    let bits: u32 = if spelling == "_Bool" {
        1
    } else if spelling.contains("char") || spelling.contains("int8") {
        8
    } else if spelling.contains("short") || spelling.contains("int16") {
        16
    } else if spelling.contains("long")
        || spelling.contains("64")
        || spelling.contains("ptr")
        || spelling == "size_t"
    {
        64
    } else {
        32
    };
    let (lo, hi) = match (unsigned, bits) {
        (true, 64) => (0, i64::MAX),
        (true, b) => (0, (1i64 << b) - 1),
        (false, 1) => (0, 1),
        (false, 64) => (i64::MIN, i64::MAX),
        (false, b) => (-(1i64 << (b - 1)), (1i64 << (b - 1)) - 1),
    };
    (lo..=hi).contains(&v)
}

#[cfg(test)]
mod tests;
