//! The reduction post-pass (issue 20, `red=1`): a loop whose only carried
//! dependences are the updates of reduction statements (`X += e`,
//! `Scop::reductions`) of one accumulator each, invariant along the loop
//! and every loop inside it, runs as a reduction. Each accumulator gets a
//! private copy for the loop (`__typeof__(X) polytune_r0 = X;` before,
//! `X = polytune_r0;` after), named in the directive: `omp simd
//! reduction` on an innermost loop, `omp parallel for [simd] reduction`
//! on a loop with no OpenMP loop around or inside it when `omp` is on.
//! It reassociates the updates, which changes floating-point rounding: a
//! variant with it is verified with a tolerance.

use crate::frontend::scop::reduction::{Combine, Reduction};
use crate::frontend::scop::{Affine, Scop};
use crate::isl::AstExpr;

use super::marks::{affine_of, compose, divides};
use super::tree::{Loop, Node, contains_loop, for_each_stmt};
use super::{Fact, Lowered};

/// How a loop runs as a reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `omp simd reduction(...)`.
    Simd,
    /// `omp parallel for reduction(...)`.
    Parallel,
    /// `omp parallel for simd reduction(...)`.
    ParallelSimd,
}

/// A loop's reduction: its kind and, per accumulator, the statement that
/// updates it, that statement's arguments at one of its places under the
/// loop (they give the accumulator's element) and how it combines.
#[derive(Debug, Clone)]
pub(super) struct Reduce {
    pub(super) kind: Kind,
    pub(super) accumulators: Vec<(usize, Vec<AstExpr>, Combine)>,
}

/// Marks the loops that run as reductions.
pub(super) fn mark_reductions(nodes: &mut [Node], scop: &Scop, lw: &Lowered<'_, '_>, omp: bool) {
    let reductions = scop.reductions();
    if !reductions.is_empty() {
        walk(nodes, scop, lw, omp, &reductions, false, false);
    }
}

fn walk(
    nodes: &mut [Node],
    scop: &Scop,
    lw: &Lowered<'_, '_>,
    omp: bool,
    reductions: &[Reduction],
    in_omp: bool,
    jammed: bool,
) {
    for n in nodes {
        match n {
            // A register-blocked nest prints its statements itself (on
            // scalar accumulators): no loop in or around it runs as a
            // reduction.
            Node::For(l) if l.regblock.is_some() => {}
            Node::For(l) => {
                let may_parallel = omp && !in_omp && !l.omp && !omp_inside(&l.body);
                l.reduce = if regblocked(&l.body) {
                    None
                } else {
                    reduction_of(l, scop, lw, reductions, may_parallel, jammed)
                };
                if l.reduce.is_some() {
                    l.private = lw.private_names(l.info);
                } else {
                    let inner_omp = in_omp || l.omp;
                    let jam = l.jam > 1;
                    walk(&mut l.body, scop, lw, omp, reductions, inner_omp, jam);
                }
            }
            Node::If { then, other, .. } => {
                walk(then, scop, lw, omp, reductions, in_omp, jammed);
                walk(other, scop, lw, omp, reductions, in_omp, jammed);
            }
            Node::Stmt { .. } => {}
        }
    }
}

fn regblocked(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::For(l) => l.regblock.is_some() || regblocked(&l.body),
        Node::If { then, other, .. } => regblocked(then) || regblocked(other),
        Node::Stmt { .. } => false,
    })
}

fn omp_inside(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::For(l) => l.omp || omp_inside(&l.body),
        Node::If { then, other, .. } => omp_inside(then) || omp_inside(other),
        Node::Stmt { .. } => false,
    })
}

/// The loops of a subtree, by variable.
fn loop_vars(nodes: &[Node], out: &mut Vec<String>) {
    for n in nodes {
        match n {
            Node::For(l) => {
                out.push(l.var.clone());
                loop_vars(&l.body, out);
            }
            Node::If { then, other, .. } => {
                loop_vars(then, out);
                loop_vars(other, out);
            }
            Node::Stmt { .. } => {}
        }
    }
}

fn reduction_of(
    l: &Loop,
    scop: &Scop,
    lw: &Lowered<'_, '_>,
    reductions: &[Reduction],
    may_parallel: bool,
    jammed: bool,
) -> Option<Reduce> {
    if l.omp
        || l.simd
        || l.jam > 1
        || l.unroll > 1
        || jammed
        || l.step != 1
        || super::marks::upper_bound(l).is_none()
    {
        return None;
    }
    let innermost = !contains_loop(&l.body);
    let kind = match (innermost, may_parallel) {
        (true, true) => Kind::ParallelSimd,
        (true, false) => Kind::Simd,
        (false, true) => Kind::Parallel,
        (false, false) => return None,
    };
    if lw.holds(l.info, Fact::Parallel) || !lw.holds(l.info, Fact::ParallelButReductions) {
        return None;
    }
    let mut inside = vec![l.var.clone()];
    loop_vars(&l.body, &mut inside);
    // Per array written by a reduction under the loop: its statement and
    // the accumulator's element (affine in the loops around).
    let mut accumulators: Vec<(usize, Vec<AstExpr>, Combine, Vec<Affine>)> = Vec::new();
    let mut ok = true;
    for_each_stmt(&l.body, &mut |id, args| {
        if !ok {
            return;
        }
        let st = &scop.statements[id];
        let values: Vec<Option<Affine>> = args.iter().map(affine_of).collect();
        if let Some(r) = reductions.iter().find(|r| r.stmt == id) {
            let w = &st.writes[0];
            let element: Option<Vec<Affine>> = w
                .subscripts
                .iter()
                .map(|s| compose(s, &st.iterators, &values))
                .collect();
            // The same element all along the loop and the loops inside,
            // and printable before the loop (its values name none of them).
            let fixed = element.filter(|e| {
                e.iter().all(|a| {
                    inside
                        .iter()
                        .all(|v| a.coefficient(v) == 0 && !divides(a, v))
                }) && w.subscripts.iter().all(|s| {
                    s.variables()
                        .all(|v| match st.iterators.iter().position(|i| i == v) {
                            Some(j) => inside.iter().all(|lv| !super::expr::mentions(&args[j], lv)),
                            None => true,
                        })
                })
            });
            let Some(element) = fixed else {
                ok = false;
                return;
            };
            match accumulators
                .iter()
                .find(|a| scop.statements[a.0].writes[0].array == w.array)
            {
                Some(a) if a.0 == id && a.3 == element => {}
                Some(_) => ok = false,
                None => accumulators.push((id, args.to_vec(), r.combine, element)),
            }
        }
    });
    if !ok || accumulators.is_empty() {
        return None;
    }
    // No other statement under the loop touches an accumulator's array.
    for_each_stmt(&l.body, &mut |id, _| {
        for a in &accumulators {
            let array = &scop.statements[a.0].writes[0].array;
            let st = &scop.statements[id];
            let mut touches = st.reads.iter().chain(&st.writes).chain(&st.may_writes);
            if id != a.0 && touches.any(|x| &x.array == array) {
                ok = false;
            }
        }
    });
    ok.then(|| Reduce {
        kind,
        accumulators: accumulators
            .into_iter()
            .map(|(id, args, c, _)| (id, args, c))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    fn generate(body: &str, config: &str) -> String {
        let text = format!(
            "double x[99], y[99], z[99], A[99][99], B[99][99], C[99][99], s, w;\nvoid f(int n) {{ int i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        );
        let src = parse_source(Path::new("t.c"), text, &Options::default()).unwrap();
        crate::engine::pipeline::optimize(&src, &config.parse().unwrap(), None)
            .unwrap()
            .text
    }

    #[test]
    fn an_inner_sum_runs_as_a_simd_reduction_on_a_private_copy() {
        let body = "for (i = 0; i < n; i++) { w = y[i]; for (j = 0; j < i; j++) w -= A[i][j] * x[j]; z[i] = w; }";
        let out = generate(body, "fuse=no,red=1");
        assert!(out.contains("__typeof__(w) polytune_r0 = w;"), "{out}");
        assert!(
            out.contains("#pragma omp simd reduction(+:polytune_r0)"),
            "{out}"
        );
        assert!(out.contains("polytune_r0 -= A[c0][c1] * x[c1];"), "{out}");
        assert!(out.contains("w = polytune_r0;"), "{out}");
        // Without red=1: the paper's code, no reduction.
        assert!(!generate(body, "fuse=no").contains("reduction"));
    }

    #[test]
    fn an_outer_sum_runs_in_parallel_with_omp() {
        let out = generate(
            "for (i = 0; i < n; i++) s = s + x[i] * y[i];",
            "fuse=no,omp=1,red=1",
        );
        assert!(
            out.contains("#pragma omp parallel for simd reduction(+:polytune_r0)"),
            "{out}"
        );
        assert!(out.contains("polytune_r0 += x[c0] * y[c0];"), "{out}");
        let out = generate(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) s += A[i][j];",
            "fuse=no,omp=1,red=1",
        );
        assert!(
            out.contains("#pragma omp parallel for reduction(+:polytune_r0)"),
            "{out}"
        );
    }

    #[test]
    fn what_is_not_a_private_sum_stays_sequential() {
        for body in [
            // The partial sums are read: a prefix sum.
            "for (i = 0; i < n; i++) { s += x[i]; y[i] = s; }",
            // A recurrence through the array.
            "for (i = 1; i < n; i++) x[i] += x[i - 1];",
            // Two statements update one accumulator.
            "for (i = 0; i < n; i++) { s += x[i]; s += y[i]; }",
            // Division does not reassociate.
            "for (i = 0; i < n; i++) s /= x[i];",
        ] {
            let out = generate(body, "fuse=no,omp=1,red=1");
            assert!(!out.contains("reduction"), "{body}:\n{out}");
        }
    }

    #[test]
    fn a_parallel_loop_needs_no_reduction() {
        // i is parallel (each y[i] its own); the j loop is the reduction.
        let out = generate(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) y[i] += A[i][j] * x[j];",
            "fuse=no,omp=1,red=1",
        );
        assert!(out.contains("#pragma omp parallel for\n"), "{out}");
        assert!(
            out.contains("__typeof__(y[c0]) polytune_r0 = y[c0];"),
            "{out}"
        );
        assert!(
            out.contains("#pragma omp simd reduction(+:polytune_r0)"),
            "{out}"
        );
    }
}
