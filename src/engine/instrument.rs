//! Measurement builds: the file with every SCoP region wrapped in
//! polytune's own instrumentation, so that any program can be timed and
//! verified whatever it prints (issue 17). The same wrapping goes around
//! the original regions and around every variant's, so that both builds
//! carry the same overhead; the program written for the user carries none.
//!
//! Around region `k` the wrapping
//! - times every execution (`polytune_rt_begin/end`, a monotonic clock,
//!   accumulated; the count of executions kept beside it);
//! - when the run asks for it (`POLYTUNE_DUMP=1`), records after every
//!   execution everything the region wrote: the written footprint, from the
//!   SCoP's write accesses over its domain, scanned by loops that isl
//!   generates (each element once, in lexicographic order), at the run's
//!   own parameter values; not the scalars dead after the region, whose
//!   last value no one reads and a variant may leave different. Each execution gives a summary line per array
//!   (exact hash of integers; sum, position-weighted sum and sum of
//!   magnitudes of floating-point values, compared within tolerances); the
//!   last execution is kept in full;
//! - writes all of it at exit to the file named by `POLYTUNE_SIDE`, never
//!   to the program's own output (format read by `lab::side`).
//!
//! The runtime (`instrument_rt.c`) includes no header: it is placed before
//! the user's code and must not change what the user's code sees.

use crate::engine::codegen::expr;
use crate::engine::model::EngineError;
use crate::frontend::SourceFile;
use crate::frontend::scop::{Scop, isl_names};
use crate::isl::{
    self, AstExpr, AstNode, AstOp, Ctx, MultiUnionPwAff, Schedule, Set, UnionMap, UnionSet,
};
use std::fmt::Write;

/// The runtime placed at the top of an instrumented file.
const RUNTIME: &str = include_str!("instrument_rt.c");

// The runtime reads POLYTUNE_SIDE (the side file), POLYTUNE_DUMP=1
// (record), POLYTUNE_STOP_AFTER (exit after that many executions) and
// POLYTUNE_DUMP_LIMIT (bytes of full values per region); the lab sets them.

/// The file with region `k`'s body replaced by `bodies[k]` (the original
/// text, or a variant's) and every region instrumented.
pub(crate) fn instrument(src: &SourceFile, bodies: &[String]) -> Result<String, EngineError> {
    let path = src.path.display().to_string();
    let quoted = path.replace('\\', "\\\\").replace('"', "\\\"");
    let mut wrapped = Vec::with_capacity(bodies.len());
    for (scop, body) in src.scops.iter().zip(bodies) {
        let indent = src.indent_of(scop);
        let k = scop.index;
        // The record names the SCoP's parameters: the invariant loads
        // among them are declared here too (read before the region, which
        // does not write them).
        let loads = scop.invariant_declarations(&indent);
        // A SCoP beyond the engine's limits is never transformed: it is
        // timed, but neither warmed nor recorded (isl would take minutes
        // over its footprint; what it reads that a variant wrote is in
        // that variant's regions' records).
        let modelled = crate::engine::pipeline::check_limits(scop).is_ok();
        let warm = if modelled {
            warm(scop, &indent)?
        } else {
            String::new()
        };
        let params = parameter_record(scop, &indent);
        // A variant's body uses polytune's helper macros, defined outside
        // its region in the program written for the user: here around it,
        // the body at its own line for the compiler's messages.
        let (first, _) = src.line_col(scop.region.body.start);
        let mut body = format!(
            "{}#line {first} \"{quoted}\"\n{body}",
            expr::helper_defines()
        );
        if !body.ends_with('\n') {
            body.push('\n');
        }
        body.push_str(&expr::helper_undefs());
        let mut w = if loads.is_empty() && warm.is_empty() && params.is_empty() {
            format!("{indent}{{ polytune_rt_begin({k});\n{body}")
        } else {
            format!("{indent}{{\n{loads}{warm}{params}{indent}polytune_rt_begin({k});\n{body}")
        };
        let _ = writeln!(w, "{indent}polytune_rt_end({k});");
        let _ = writeln!(w, "{indent}if (polytune_rt_dumping({k})) {{");
        if modelled {
            let dead = crate::frontend::liveness::dead_scalars(src, scop);
            w.push_str(&record(scop, &dead, &format!("{indent}  "))?);
        }
        let _ = writeln!(w, "{indent}}}");
        let _ = writeln!(w, "{indent}polytune_rt_after({k}); }}");
        // Back to the user's line numbers for the compiler's messages.
        let (line, _) = src.line_col(scop.region.close.start);
        let _ = writeln!(w, "#line {line} \"{quoted}\"");
        wrapped.push(w);
    }
    Ok(format!(
        "#define POLYTUNE_RT_REGIONS {}\n{RUNTIME}#line 1 \"{quoted}\"\n{}",
        src.scops.len().max(1),
        src.splice(&wrapped)
    ))
}

/// The statement that records the values of `scop`'s parameters at the
/// region's first execution (`param K NAME VALUE` in the side file): the
/// sizes the program runs with, which a variant's features are computed
/// at. Nothing for a SCoP without parameters.
fn parameter_record(scop: &Scop, indent: &str) -> String {
    if scop.parameters.is_empty() {
        return String::new();
    }
    let k = scop.index;
    let mut out = format!("{indent}if (!polytune_rt_count[{k}]) {{\n");
    for p in &scop.parameters {
        let _ = writeln!(
            out,
            "{indent}  polytune_rt_param({k}, \"{p}\", (long long)({p}));"
        );
    }
    let _ = writeln!(out, "{indent}}}");
    out
}

/// The statements that record what `scop` wrote, one array after another
/// in the order of the SCoP's arrays, but the scalars in `dead`: their
/// values are never read after the region (`liveness::dead_scalars`), and
/// a variant may leave another value in them (a privatized or expanded
/// scalar's own copy is written instead).
fn record(scop: &Scop, dead: &[String], indent: &str) -> Result<String, EngineError> {
    let ctx = Ctx::new();
    let internal = |e: isl::IslError| EngineError::Internal {
        scop: scop.index,
        reason: format!("the written footprint could not be computed: {e}"),
    };
    let domain = UnionSet::parse(&ctx, &scop.domains()).map_err(internal)?;
    let written = UnionMap::parse(&ctx, &scop.all_writes())
        .and_then(|w| w.intersect_domain(&domain))
        .and_then(|w| w.range())
        .map_err(internal)?;
    let params = isl_names(&scop.parameters);
    let locals = scop.local_names();
    let mut out = expr::helper_defines();
    for a in scop
        .arrays
        .iter()
        .filter(|a| a.written && !locals.contains(&a.name))
        .filter(|a| !(a.rank == 0 && dead.contains(&a.name)))
    {
        let element = scop.element_c(&a.name, &vec!["0".to_string(); a.rank]);
        let _ = writeln!(
            out,
            "{indent}polytune_rt_array(\"{}\", POLYTUNE_RT_FLOATING({element}));",
            a.name
        );
        if a.rank == 0 {
            let _ = writeln!(out, "{indent}POLYTUNE_RT_PUT({});", a.name);
            continue;
        }
        let tree =
            scan(&ctx, &written, &params, &isl::mangle(&a.name), a.rank).map_err(internal)?;
        if let Some(tree) = tree {
            let mut p = ScanPrinter {
                scop,
                out: &mut out,
                touch: None,
            };
            p.node(&tree, indent);
        }
    }
    out.push_str(&expr::helper_undefs());
    Ok(out)
}

/// The characterized build's warm-up of region `scop` (compiled only with
/// `-DPOLYTUNE_CALLGRIND`): before the region's first execution, which
/// starts the simulator's instrumentation (`--instr-atstart=no`: what
/// comes before runs at valgrind's plain speed, not simulated), a load of
/// every element of every array's footprint (what the region reads or
/// writes), at most 8 MiB of each array (the runtime's
/// `POLYTUNE_RT_WARM_BYTES`: the simulated last-level cache's size), with
/// counting off. The simulated caches then hold the region's data as a
/// program's own initialization leaves them (all of it when it fits, as in
/// every corpus kernel at the dataset's size), instead of starting empty:
/// counted from empty caches, the corpus' last-level misses per
/// instruction at SMALL were 10^3 to 10^4 times the stored ones, and the
/// models trained on those features lost 3 to 16 points of leave-one-out
/// % of Opt.
fn warm(scop: &Scop, indent: &str) -> Result<String, EngineError> {
    let ctx = Ctx::new();
    let internal = |e: isl::IslError| EngineError::Internal {
        scop: scop.index,
        reason: format!("the accessed footprint could not be computed: {e}"),
    };
    let domain = UnionSet::parse(&ctx, &scop.domains()).map_err(internal)?;
    let accessed = UnionMap::parse(&ctx, &scop.all_writes())
        .and_then(|w| w.union(&UnionMap::parse(&ctx, &scop.reads())?))
        .and_then(|a| a.intersect_domain(&domain))
        .and_then(|a| a.range())
        .map_err(internal)?;
    let params = isl_names(&scop.parameters);
    let locals = scop.local_names();
    let inner = format!("{indent}  ");
    let mut loops = String::new();
    for (n, a) in scop
        .arrays
        .iter()
        .filter(|a| a.rank > 0 && !locals.contains(&a.name))
        .enumerate()
    {
        let Some(tree) =
            scan(&ctx, &accessed, &params, &isl::mangle(&a.name), a.rank).map_err(internal)?
        else {
            continue;
        };
        let element = scop.element_c(&a.name, &vec!["0".to_string(); a.rank]);
        let done = format!("polytune_rt_warmed_{}_{n}", scop.index);
        let _ = writeln!(
            loops,
            "{inner}{{ long polytune_rt_lines = 0, polytune_rt_max = POLYTUNE_RT_WARM_BYTES / sizeof({element});"
        );
        let mut p = ScanPrinter {
            scop,
            out: &mut loops,
            touch: Some(Touch { done: done.clone() }),
        };
        p.node(&tree, &format!("{inner}  "));
        let _ = writeln!(loops, "{inner}{done}: ; }}");
    }
    if loops.is_empty() {
        return Ok(String::new());
    }
    Ok(format!(
        "#ifdef POLYTUNE_CALLGRIND\n{indent}if (polytune_rt_warming({k})) {{\n{}{loops}{}{indent}}}\n#endif\n",
        expr::helper_defines(),
        expr::helper_undefs(),
        k = scop.index
    ))
}

/// How a warm-up scan ends: at most a last-level cache's worth of an
/// array's elements are loaded, then `done`. (Every element, not one per
/// cache line: a stride of a line leaves out the last line of a row that
/// starts inside one, and dynprog's triangular rows then missed 70 times
/// as often in the last level as after the program's own initialization.)
struct Touch {
    done: String,
}

/// isl's loops over the elements of array `name` (rank `rank`) in
/// `written`, lexicographically; `None` when no element is ever written.
fn scan<'c>(
    ctx: &'c Ctx,
    written: &UnionSet<'c>,
    params: &str,
    name: &str,
    rank: usize,
) -> Result<Option<AstNode>, isl::IslError> {
    let vars: Vec<String> = (0..rank).map(|d| format!("o{d}")).collect();
    let tuple = format!("{name}[{}]", vars.join(", "));
    let space = UnionSet::parse(ctx, &format!("[{params}] -> {{ {tuple} }}"))?;
    let set = written.intersect(&space)?.coalesce()?;
    if set.is_empty()? {
        return Ok(None);
    }
    let members: Vec<String> = vars
        .iter()
        .map(|v| format!("{{ {tuple} -> [({v})] }}"))
        .collect();
    let partial = MultiUnionPwAff::parse(ctx, &format!("[{params}] -> [{}]", members.join(", ")))?;
    let schedule = Schedule::from_domain(&set)?.insert_partial_schedule(&partial)?;
    let context = Set::parse(ctx, &format!("[{params}] -> {{ : }}"))?;
    let (tree, _) = isl::build_ast(&schedule, &context, &mut |_| Ok(()))?;
    Ok(Some(tree))
}

struct ScanPrinter<'a> {
    scop: &'a Scop,
    out: &'a mut String,
    /// A warm-up's loads instead of a record's values.
    touch: Option<Touch>,
}

impl ScanPrinter<'_> {
    fn name(&self, isl_name: &str) -> String {
        crate::engine::codegen::c_name(self.scop, "polytune_rt_c", isl_name)
    }

    fn c(&self, e: &AstExpr) -> String {
        expr::to_c(e, &|n| self.name(n))
    }

    fn node(&mut self, n: &AstNode, indent: &str) {
        let inner = format!("{indent}  ");
        match n {
            AstNode::For {
                iterator,
                init,
                cond,
                inc,
                body,
                ..
            } => {
                let var = self.name(iterator);
                let line = format!(
                    "{indent}for (long {var} = {}; {}; {var} += {}) {{",
                    self.c(init),
                    self.c(cond),
                    self.c(inc)
                );
                let _ = writeln!(self.out, "{line}");
                self.node(body, &inner);
                let _ = writeln!(self.out, "{indent}}}");
            }
            AstNode::If { cond, then, other } => {
                let line = format!("{indent}if ({}) {{", self.c(cond));
                let _ = writeln!(self.out, "{line}");
                self.node(then, &inner);
                if let Some(o) = other {
                    let _ = writeln!(self.out, "{indent}}} else {{");
                    self.node(o, &inner);
                }
                let _ = writeln!(self.out, "{indent}}}");
            }
            AstNode::Block(nodes) => {
                for n in nodes {
                    self.node(n, indent);
                }
            }
            AstNode::Mark { body, .. } => self.node(body, indent),
            AstNode::User(call) => {
                let line = match call {
                    AstExpr::Op(AstOp::Call, args) if !args.is_empty() => {
                        let array = match &args[0] {
                            AstExpr::Id(a) => isl::unmangle(a).to_string(),
                            other => self.c(other),
                        };
                        let subs: Vec<String> = args[1..].iter().map(|s| self.c(s)).collect();
                        // A delinearized array is one-dimensional in C.
                        let element = self.scop.element_c(&array, &subs);
                        match &self.touch {
                            Some(t) => format!(
                                "{indent}POLYTUNE_RT_TOUCH({element}); if (++polytune_rt_lines >= polytune_rt_max) goto {};",
                                t.done
                            ),
                            None => format!("{indent}POLYTUNE_RT_PUT({element});"),
                        }
                    }
                    other => format!("{indent}/* unexpected element {other:?} */"),
                };
                let _ = writeln!(self.out, "{line}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    fn source(text: &str) -> SourceFile {
        parse_source(Path::new("t.c"), text.to_string(), &Options::default()).unwrap()
    }

    #[test]
    fn the_written_footprint_is_scanned_once_per_element() {
        let src = source(
            "void f(int n, double A[99][99], double x[99], double s) { int i, j;\n#pragma scop\nfor (i = 1; i < n; i++) { s = 0; for (j = 0; j <= i; j++) A[i][j] = x[j] + A[i-1][j]; x[i] = s; }\n#pragma endscop\nx[0] = s; }\n",
        );
        let body =
            src.text[src.scops[0].region.body.start..src.scops[0].region.body.end].to_string();
        let out = instrument(&src, &[body]).unwrap();
        assert!(out.starts_with("#define POLYTUNE_RT_REGIONS 1\n"), "{out}");
        assert!(out.contains("polytune_rt_begin(0);"));
        assert!(
            out.contains("polytune_rt_array(\"A\", POLYTUNE_RT_FLOATING(A[0][0]));"),
            "{out}"
        );
        // A's written elements: rows 1..n-1, columns 0..i (a triangle).
        assert!(
            out.contains("POLYTUNE_RT_PUT(A[polytune_rt_c0][polytune_rt_c1]);"),
            "{out}"
        );
        assert!(out.contains("polytune_rt_c1 <= polytune_rt_c0"), "{out}");
        assert!(out.contains("POLYTUNE_RT_PUT(x[polytune_rt_c0]);"), "{out}");
        assert!(out.contains("POLYTUNE_RT_PUT(s);"), "{out}");
        // The user's text is still there, and the compiler is told its lines.
        assert!(out.contains("#line 1 \"t.c\""));
        assert!(out.contains("#line 4 \"t.c\"\n#pragma endscop"), "{out}");
    }

    #[test]
    fn a_scalar_dead_after_the_region_is_not_recorded() {
        let text = |after: &str| {
            format!(
                "void f(int n, double A[99], double *o) {{ int i; double t, u;\n#pragma scop\nfor (i = 0; i < n; i++) {{ t = A[i]; u = t; A[i] = t * u; }}\n#pragma endscop\n{after}}}\n"
            )
        };
        let recorded = |text: String| {
            let src = source(&text);
            let body =
                src.text[src.scops[0].region.body.start..src.scops[0].region.body.end].to_string();
            let out = instrument(&src, &[body]).unwrap();
            ["t", "u", "A"]
                .into_iter()
                .filter(|a| out.contains(&format!("polytune_rt_array(\"{a}\"")))
                .collect::<Vec<_>>()
        };
        assert_eq!(recorded(text("")), ["A"]);
        assert_eq!(recorded(text("*o = u;\n")), ["u", "A"]);
    }

    #[test]
    fn a_delinearized_array_is_recorded_through_its_c_subscript() {
        let src = source(
            "void f(int n, int lda, double *a) { int i, j;\n#pragma scop\nfor (j = 0; j < n; j++) for (i = 0; i < n; i++) a[lda*j + i] = 0;\n#pragma endscop\n}\n",
        );
        let body =
            src.text[src.scops[0].region.body.start..src.scops[0].region.body.end].to_string();
        let out = instrument(&src, &[body]).unwrap();
        assert!(
            out.contains("POLYTUNE_RT_FLOATING(a[lda * (0) + (0)])"),
            "{out}"
        );
        assert!(
            out.contains("POLYTUNE_RT_PUT(a[lda * (polytune_rt_c0) + (polytune_rt_c1)]);"),
            "{out}"
        );
    }
}
