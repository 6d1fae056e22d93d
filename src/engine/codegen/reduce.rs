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
//!
//! An accumulator that moves along the loops inside but not along the
//! loop itself (atax's `y[j] += A[i][j] * tmp[i]` under a parallel `i`) is
//! an array section: every iteration of the loop updates the same
//! elements. OpenMP then gives each thread a copy of the section
//! (`reduction(+:y[lo:len])`, the bounds those of every element the
//! statement writes, from isl) and adds the copies at the end. The copies
//! live on the threads' stacks: a section of more than
//! [`MAX_SECTION_BYTES`] runs the loop as written (a run-time check).

use crate::engine::model::Model;
use crate::frontend::scop::ast::{ExprKind, StmtKind};
use crate::frontend::scop::reduction::{Combine, Reduction};
use crate::frontend::scop::{Affine, Scop, Statement};
use crate::isl::{self, AstExpr, UnionMap};
use std::collections::HashMap;

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
/// loop (they give the accumulator's element) and how it combines; and
/// the array sections it reduces.
#[derive(Debug, Clone)]
pub(super) struct Reduce {
    pub(super) kind: Kind,
    pub(super) accumulators: Vec<(usize, Vec<AstExpr>, Combine)>,
    pub(super) sections: Vec<Section>,
}

/// The largest array section, per thread, a loop reduces in parallel:
/// each thread's copy is on its stack (libgomp's threads get the process's
/// stack limit, 8 MiB by default, or `OMP_STACKSIZE`).
pub(super) const MAX_SECTION_BYTES: usize = 1 << 20;

/// An array of rank 1 that a loop reduces as a whole section: the
/// elements `lo..=hi` (expressions of the parameters) of `array`, a C
/// name.
#[derive(Debug, Clone)]
pub(super) struct Section {
    pub(super) stmt: usize,
    pub(super) array: String,
    pub(super) lo: AstExpr,
    pub(super) hi: AstExpr,
    pub(super) combine: Combine,
}

/// How a reduction statement's accumulator moves under a loop.
enum Moves {
    /// The same element all along the loop and the loops inside.
    Fixed(Vec<Affine>),
    /// A different element in each iteration of the loop: the loop does
    /// not carry its updates.
    Own,
    /// Along the loops inside only: an array section.
    Section,
    /// Otherwise: the loop does not run as a reduction.
    Other,
}

/// Marks the loops that run as reductions. With `scheduled` (`red=2`,
/// whose schedule may keep a reduction loop outermost for that reason) a
/// loop that can run as a parallel reduction does, in place of the
/// parallel loops inside it.
pub(super) fn mark_reductions(
    nodes: &mut [Node],
    scop: &Scop,
    lw: &Lowered<'_, '_>,
    omp: bool,
    scheduled: bool,
) {
    let reductions = scop.reductions();
    if !reductions.is_empty() {
        let pass = Pass {
            scop,
            lw,
            omp,
            scheduled,
            reductions: &reductions,
        };
        pass.walk(nodes, false, false);
    }
}

/// What the walk over the loops knows throughout.
struct Pass<'a, 'm, 'c> {
    scop: &'a Scop,
    lw: &'a Lowered<'m, 'c>,
    omp: bool,
    scheduled: bool,
    reductions: &'a [Reduction],
}

impl Pass<'_, '_, '_> {
    fn walk(&self, nodes: &mut [Node], in_omp: bool, jammed: bool) {
        for n in nodes {
            match n {
                // A register-blocked nest prints its statements itself (on
                // scalar accumulators): no loop in or around it runs as a
                // reduction.
                Node::For(l) if l.regblock.is_some() => {}
                Node::For(l) => self.mark(l, in_omp, jammed),
                Node::If { then, other, .. } => {
                    self.walk(then, in_omp, jammed);
                    self.walk(other, in_omp, jammed);
                }
                Node::Stmt { .. } => {}
            }
        }
    }

    fn mark(&self, l: &mut Loop, in_omp: bool, jammed: bool) {
        let of = |l: &Loop, may_parallel| {
            reduction_of(l, self.scop, self.lw, self.reductions, may_parallel, jammed)
        };
        let free = self.omp && !in_omp && !l.omp;
        l.reduce = if regblocked(&l.body) {
            None
        } else if free && omp_inside(&l.body) {
            // The parallel loops inside give way to a parallel reduction
            // only where the schedule was made for it.
            let parallel = self.scheduled.then(|| of(l, true)).flatten();
            match parallel.filter(|r| r.kind == Kind::Parallel) {
                Some(r) => {
                    serialize(&mut l.body);
                    Some(r)
                }
                None => of(l, false),
            }
        } else {
            of(l, free)
        };
        // A SIMD reduction gives no lane a copy of an array of its own.
        if l.reduce.as_ref().is_some_and(|r| r.kind == Kind::Simd) && self.lw.copies_arrays(l.info)
        {
            l.reduce = None;
        }
        match &l.reduce {
            Some(r) => {
                l.private = self.lw.private_names(l.info);
                // A parallel loop that reduces array sections only: the
                // loops inside may still sum their own accumulators with
                // SIMD (a scalar accumulator of this loop must not be
                // copied again inside).
                if r.kind == Kind::Parallel && r.accumulators.is_empty() {
                    self.walk(&mut l.body, true, l.jam > 1);
                }
            }
            None => self.walk(&mut l.body, in_omp || l.omp, l.jam > 1),
        }
    }
}

/// Takes the OpenMP marks off the loops of `nodes` (SIMD marks stay).
fn serialize(nodes: &mut [Node]) {
    for n in nodes {
        match n {
            Node::For(l) => {
                l.omp = false;
                serialize(&mut l.body);
            }
            Node::If { then, other, .. } => {
                serialize(then);
                serialize(other);
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
    let mut bodies = HashMap::new();
    super::print::collect_bodies(&scop.body, &mut bodies);
    // Per array written by a reduction under the loop: its statement and
    // the accumulator's element (affine in the loops around).
    let mut accumulators: Vec<(usize, Vec<AstExpr>, Combine, Vec<Affine>)> = Vec::new();
    let mut sections: Vec<Section> = Vec::new();
    let mut ok = true;
    for_each_stmt(&l.body, &mut |id, args| {
        if !ok {
            return;
        }
        let Some(r) = reductions.iter().find(|r| r.stmt == id) else {
            return;
        };
        let st = &scop.statements[id];
        let array = &st.writes[0].array;
        let same_array = |stmt: usize| &scop.statements[stmt].writes[0].array == array;
        let moved = match moves(st, args, &l.var, &inside) {
            // Each element's updates within one iteration, as the
            // dependences tell where the subscripts do not (an element of
            // a tile's rows under the loop over tiles).
            Moves::Section | Moves::Other if lw.keeps_updates_within(l.info, scop, st) => {
                Moves::Own
            }
            m => m,
        };
        match moved {
            Moves::Fixed(element) => match accumulators.iter().find(|a| same_array(a.0)) {
                Some(a) if a.0 == id && a.3 == element => {}
                Some(_) => ok = false,
                None => accumulators.push((id, args.to_vec(), r.combine, element)),
            },
            Moves::Own => {}
            Moves::Section if kind == Kind::Parallel => {
                if sections.iter().any(|x| x.stmt == id) {
                    return;
                }
                let apart = sections.iter().all(|x| !same_array(x.stmt));
                match section(scop, lw.model, &bodies, id, r.combine).filter(|_| apart) {
                    Some(x) => sections.push(x),
                    None => ok = false,
                }
            }
            Moves::Section | Moves::Other => ok = false,
        }
    });
    if !ok || (accumulators.is_empty() && sections.is_empty()) {
        return None;
    }
    // No other statement under the loop touches an accumulator's array.
    let owners: Vec<usize> = accumulators
        .iter()
        .map(|a| a.0)
        .chain(sections.iter().map(|x| x.stmt))
        .collect();
    for_each_stmt(&l.body, &mut |id, _| {
        for &owner in &owners {
            let array = &scop.statements[owner].writes[0].array;
            let st = &scop.statements[id];
            let mut touches = st.reads.iter().chain(&st.writes).chain(&st.may_writes);
            if id != owner && touches.any(|x| &x.array == array) {
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
        sections,
    })
}

/// How the accumulator of reduction statement `st`, at its place `args`
/// under loop `var`, moves along it and the loops `inside` it (`var`
/// first).
fn moves(st: &Statement, args: &[AstExpr], var: &str, inside: &[String]) -> Moves {
    let values: Vec<Option<Affine>> = args.iter().map(affine_of).collect();
    let w = &st.writes[0];
    let Some(element) = w
        .subscripts
        .iter()
        .map(|s| compose(s, &st.iterators, &values))
        .collect::<Option<Vec<Affine>>>()
    else {
        return Moves::Other;
    };
    let names = |a: &Affine, v: &String| a.coefficient(v) != 0 || divides(a, v);
    let inner = &inside[1..];
    // Printable before the loop: its values name none of the loops.
    let printable = w.subscripts.iter().all(|s| {
        s.variables()
            .all(|v| match st.iterators.iter().position(|i| i == v) {
                Some(j) => inside.iter().all(|lv| !super::expr::mentions(&args[j], lv)),
                None => true,
            })
    });
    if printable && element.iter().all(|a| inside.iter().all(|v| !names(a, v))) {
        return Moves::Fixed(element);
    }
    // One subscript a multiple of the loop's variable plus values fixed
    // for the loop's run: two iterations never share an element.
    let own = element
        .iter()
        .any(|a| a.coefficient(var) != 0 && !divides(a, var) && inner.iter().all(|v| !names(a, v)));
    if own {
        return Moves::Own;
    }
    let along_loop = element.iter().any(|a| names(a, &var.to_string()));
    if !along_loop && element.len() == 1 {
        Moves::Section
    } else {
        Moves::Other
    }
}

/// The array section reduction statement `id` updates, when it can be
/// named in C (an array of rank 1, spelled plainly, neither delinearized
/// nor expanded) and bounded for every parameter value.
fn section(
    scop: &Scop,
    model: &Model<'_>,
    bodies: &HashMap<usize, &crate::frontend::scop::ast::Stmt>,
    id: usize,
    combine: Combine,
) -> Option<Section> {
    let st = &scop.statements[id];
    let array = &st.writes[0].array;
    let name = match bodies.get(&id).map(|b| &b.kind) {
        Some(StmtKind::Assign { lhs, .. }) => match &lhs.kind {
            ExprKind::Access { name, subscripts } if subscripts.len() == 1 => name.clone(),
            _ => return None,
        },
        _ => return None,
    };
    let plain = scop.delinearized.iter().all(|d| &d.array != array)
        && scop.expanded.iter().all(|x| &x.array != array);
    let (lo, hi) = written_range(scop, model, st).filter(|_| plain)?;
    Some(Section {
        stmt: id,
        array: name,
        lo,
        hi,
        combine,
    })
}

/// The least and greatest element of its rank-1 array that `st` writes
/// anywhere in the SCoP, as expressions of the parameters; `None` unless
/// it writes one for every parameter value of the model's context (the
/// bounds then hold wherever the generated code runs).
fn written_range(scop: &Scop, model: &Model<'_>, st: &Statement) -> Option<(AstExpr, AstExpr)> {
    let range = || -> Result<Option<(AstExpr, AstExpr)>, isl::IslError> {
        let written = UnionMap::parse(model.ctx, &scop.writes_of(st))?
            .intersect_domain(&model.domain)?
            .range()?;
        if !model.context.is_subset(&written.params()?)? {
            return Ok(None);
        }
        let elements = written.to_set()?;
        Ok(isl::min_of_dim(&elements, 0)?.zip(isl::max_of_dim(&elements, 0)?))
    };
    range().ok().flatten()
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
    fn an_array_updated_along_the_inner_loops_is_reduced_as_a_section() {
        // atax: with red=2 and maximal fusion the loop over i computes
        // z[i] and adds its row into y, in parallel, y a reduced section.
        let body = "for (i = 0; i < n; i++) { z[i] = 0; for (j = 0; j < n; j++) z[i] += A[i][j] * x[j]; for (j = 0; j < n; j++) y[j] += A[i][j] * z[i]; }";
        let out = generate(body, "fuse=max,omp=1,red=2");
        let section = "#pragma omp parallel for reduction(+:y[0:n])";
        assert!(out.contains(section), "{out}");
        // Beyond a thread's share of stack, the loop as written.
        assert!(
            out.contains("if ((n) * (long)sizeof(y[0]) <= 1048576) {"),
            "{out}"
        );
        assert_eq!(
            out.matches("for (long c0 = 0; c0 <= n - 1;").count(),
            2,
            "{out}"
        );
        // z[i] is each iteration's own, summed by the inner loop.
        assert!(out.contains("polytune_r0 += A[c0][c1] * x[c1];"), "{out}");
        // In tiles of rows: the loop over tiles reduces y, and z[i], each
        // tile's own (the dependences tell), is no accumulator of it.
        let out = generate(body, "fuse=max,tile=8x1x1,omp=1,red=2");
        assert!(out.contains(section), "{out}");
        assert!(
            out.contains(&format!(
                "{section}\n      for (long c0 = 0; c0 <= (n - 1) / 8; c0++)"
            )),
            "{out}"
        );
        // With red=1 the scheduler splits the loop (y's loop over j is
        // parallel): no section.
        let out = generate(body, "fuse=max,omp=1,red=1");
        assert!(!out.contains("reduction(+:y["), "{out}");
    }

    #[test]
    fn a_section_needs_an_array_of_rank_one_and_bounds_for_every_parameter() {
        let row =
            "for (i = 0; i < n; i++) { z[i] = 0; for (j = 0; j < n; j++) z[i] += A[i][j] * x[j];";
        for (body, array) in [
            // Rank 2.
            (
                format!(
                    "{row} for (j = 0; j < n; j++) for (k = 0; k < n; k++) B[j][k] += A[i][j] * z[i]; }}"
                ),
                "B[",
            ),
            // The update does not run for n = 1: no bounds there.
            (
                format!("{row} for (j = 1; j < n; j++) y[j] += A[i][j] * z[i]; }}"),
                "y[",
            ),
        ] {
            let out = generate(&body, "fuse=max,omp=1,red=2");
            assert!(out.contains("for (long c0 = 0;"), "{body}:\n{out}");
            assert!(
                !out.contains(&format!("reduction(+:{array}")),
                "{body}:\n{out}"
            );
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
