//! The frame around a SCoP's generated loops: the run-time checks of the
//! assumed context and of aliasing with the original as the fallback,
//! the arrays of expanded scalars, and the user's OpenMP team a
//! work-shared SCoP runs in.

use super::print::{Printer, guard_to_c};
use super::tree::Node;
use super::{Lowered, alias};
use crate::frontend::scop::Scop;
use crate::isl::AstExpr;
use std::fmt::Write;

/// Opens the code of a SCoP inside the user's `omp parallel` region
/// (`Scop::team`), and whether its loops must run under `omp single`.
pub(super) fn team_prologue(
    p: &mut Printer<'_>,
    scop: &Scop,
    nodes: &[Node],
    indent: &str,
) -> bool {
    // Inside the user's `omp parallel` region every thread of the team
    // runs this code: after a barrier (the user's earlier loops may end
    // in `nowait`, counting on each thread finding its own iterations'
    // results, which a transformed loop does not keep), the one parallel
    // loop is shared among them (`omp for`) or, when the code is not one
    // parallel loop, one thread runs it all (`omp single`, whose nested
    // parallel loops get one thread unless the user enabled nesting).
    // Both end in a barrier, as the user's `omp for` without `nowait`
    // does.
    // (The original, which the checks fall back to, holds the user's
    // `omp for`: it stays outside the `single`. `exp=1` is not applied
    // in a team, `pipeline::expanded`.)
    match &scop.team {
        None => false,
        Some(_) => {
            let shared = matches!(nodes, [Node::For(l)]
                    if l.omp && l.regblock.is_none() && l.reduce.is_none());
            let _ = writeln!(p.out, "{indent}#pragma omp barrier");
            p.openmp = true;
            p.team = shared;
            !shared
        }
    }
}

/// Allocates the expanded scalars' arrays and opens the test that they
/// were.
pub(super) fn allocate_expanded(p: &mut Printer<'_>, scop: &Scop, indent: &str) {
    let expanded = &scop.expanded;
    let _ = writeln!(p.out, "{indent}{{");
    for x in expanded {
        // An extent where the loop runs; 1 where it does not.
        let extent = |m: &AstExpr| {
            let m = p.c(m);
            format!("({m} >= 0 ? {m} + 1 : 1)")
        };
        let rows: String = x.max[1..]
            .iter()
            .map(|m| format!("[{}]", extent(m)))
            .collect();
        let n = extent(&x.max[0]);
        let _ = writeln!(
            p.out,
            "{indent}  __typeof__({s}) (*{a}){rows} = __builtin_malloc(sizeof(*{a}) * (__SIZE_TYPE__){n});",
            s = x.scalar,
            a = x.array,
        );
    }
    let all: Vec<&str> = expanded.iter().map(|x| x.array.as_str()).collect();
    let _ = writeln!(p.out, "{indent}  if ({}) {{", all.join(" && "));
}

/// The new code, under the run-time check of the assumed context when
/// there is one (the original runs elsewhere).
pub(super) fn guarded(
    p: &mut Printer<'_>,
    scop: &Scop,
    lowered: &Lowered<'_, '_>,
    nodes: &[Node],
    indent: &str,
    single: bool,
) {
    let transformed = |p: &mut Printer<'_>, indent: &str| {
        if single {
            let _ = writeln!(p.out, "{indent}#pragma omp single");
            let _ = writeln!(p.out, "{indent}{{");
            p.nodes(nodes, &format!("{indent}  "));
            let _ = writeln!(p.out, "{indent}}}");
        } else {
            p.nodes(nodes, indent);
        }
    };
    // The transformed code is proven for the parameter values of the
    // assumed context only, and where the arrays that may overlap do
    // not; elsewhere the original runs, as the user wrote it.
    let conditions: Vec<String> = lowered
        .guard
        .as_ref()
        .map(guard_to_c)
        .into_iter()
        .chain(alias::alias_to_c(&lowered.model.alias, scop))
        .collect();
    match conditions.is_empty() {
        true => transformed(p, indent),
        false => {
            // Each in parentheses: the context's check may be a
            // disjunction (`n >= 3 || n >= 1 && m >= 1`), which `&&`
            // would otherwise split (the alias check then guarded only
            // its last disjunct: found by `fuzz --alias`).
            let mut cond = match conditions.as_slice() {
                [one] => one.clone(),
                all => all
                    .iter()
                    .map(|c| format!("({c})"))
                    .collect::<Vec<_>>()
                    .join(" && "),
            };
            if !lowered.model.alias.is_empty() {
                // The transformed code is the likely side: without the
                // hint gcc lays the original's loop (vectorized with its
                // own alias check) in the hot path, and a kernel of 1024
                // elements called 3 million times ran 1.3-1.4x slower than
                // without the check (Zen 3, gcc 12, 2026-11-28); with it,
                // within the noise (scripts/alias_overhead.py).
                cond = format!("__builtin_expect({cond}, 1)");
            }
            let _ = writeln!(p.out, "{indent}if ({cond}) {{");
            transformed(p, &format!("{indent}  "));
            let _ = writeln!(p.out, "{indent}}} else {{");
            push_original(&mut p.out, scop);
            let _ = writeln!(p.out, "{indent}}}");
        }
    }
}

/// The original where the expanded arrays could not be allocated, then
/// the arrays freed.
pub(super) fn free_expanded(p: &mut Printer<'_>, scop: &Scop, outer: &str) {
    let expanded = &scop.expanded;
    let _ = writeln!(p.out, "{outer}  }} else {{");
    push_original(&mut p.out, scop);
    let _ = writeln!(p.out, "{outer}  }}");
    for x in expanded {
        let _ = writeln!(p.out, "{outer}  __builtin_free({});", x.array);
    }
    let _ = writeln!(p.out, "{outer}}}");
}

/// The SCoP's original text, ended by a newline.
fn push_original(out: &mut String, scop: &Scop) {
    out.push_str(&scop.original);
    if !scop.original.ends_with('\n') {
        out.push('\n');
    }
}
