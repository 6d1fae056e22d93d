//! The post-passes: SIMD marks on vectorizable innermost loops, OpenMP on
//! the outermost parallel loop of each nest, unroll-and-jam of the two
//! innermost loops; each asks [`Lowered`] for the dependence fact it rests
//! on.

use crate::config::UnrollJam;
use crate::frontend::scop::{Affine, Scop, Term};
use crate::isl::{AstExpr, AstOp};

use super::tree::{Loop, Node, contains_loop, for_each_stmt};
use super::{Fact, Lowered, expr};

/// An isl AST expression as an affine expression, when it is one.
pub(crate) fn affine_of(e: &AstExpr) -> Option<Affine> {
    Some(match e {
        AstExpr::Int(v) => Affine::constant(*v),
        AstExpr::Id(n) => Affine::var(n),
        AstExpr::Op(AstOp::Add, a) => affine_of(&a[0])?.add_scaled(&affine_of(&a[1])?, 1)?,
        AstExpr::Op(AstOp::Sub, a) => affine_of(&a[0])?.add_scaled(&affine_of(&a[1])?, -1)?,
        AstExpr::Op(AstOp::Minus, a) => affine_of(&a[0])?.scale(-1)?,
        AstExpr::Op(AstOp::Mul, a) => {
            let (x, y) = (affine_of(&a[0])?, affine_of(&a[1])?);
            match (x.as_constant(), y.as_constant()) {
                (Some(k), _) => y.scale(k)?,
                (_, Some(k)) => x.scale(k)?,
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// `aff` (over a statement's iterators) over the generated loops'
/// variables, given the iterators' values `args`; `None` when a value it
/// needs is not affine.
pub(crate) fn compose(
    aff: &Affine,
    iterators: &[String],
    args: &[Option<Affine>],
) -> Option<Affine> {
    let mut out = Affine::constant(aff.constant);
    for (t, &k) in &aff.terms {
        let term = match t {
            Term::Var(v) => match iterators.iter().position(|i| i == v) {
                Some(j) => args[j].clone()?,
                None => Affine::var(v),
            },
            Term::FloorDiv(e, d) => compose(e, iterators, args)?.floor_div(*d),
        };
        out = out.add_scaled(&term, k)?;
    }
    Some(out)
}

/// Whether `var` occurs inside a division of `aff`.
pub(super) fn divides(aff: &Affine, var: &str) -> bool {
    aff.terms.keys().any(|t| match t {
        Term::FloorDiv(e, _) => e.coefficient(var) != 0 || divides(e, var),
        Term::Var(_) => false,
    })
}

/// Coefficient of loop variable `var` in `subscript` once the statement's
/// iterators are replaced by `args`; `None` when it cannot be told.
fn stride(
    subscript: &Affine,
    iterators: &[String],
    args: &[Option<Affine>],
    var: &str,
) -> Option<i64> {
    let mut c = 0i64;
    for (t, &k) in &subscript.terms {
        match t {
            Term::Var(name) => {
                if let Some(j) = iterators.iter().position(|i| i == name) {
                    c += k * args[j].as_ref()?.coefficient(var);
                }
            }
            Term::FloorDiv(e, _) => {
                let touches = e.variables().any(|v| {
                    iterators
                        .iter()
                        .position(|i| i == v)
                        .is_some_and(|j| args[j].as_ref().is_none_or(|a| a.coefficient(var) != 0))
                });
                if touches {
                    return None;
                }
            }
        }
    }
    Some(c)
}

/// Whether every array access under `l` is contiguous or invariant along
/// its variable (stride 0 or 1 in the last subscript, 0 elsewhere).
fn unit_stride(l: &Loop, scop: &Scop) -> bool {
    let mut ok = true;
    for_each_stmt(&l.body, &mut |id, args| {
        let st = &scop.statements[id];
        let args: Vec<Option<Affine>> = args.iter().map(affine_of).collect();
        for a in st.reads.iter().chain(&st.writes).chain(&st.may_writes) {
            let n = a.subscripts.len();
            for (k, s) in a.subscripts.iter().enumerate() {
                match stride(s, &st.iterators, &args, &l.var) {
                    Some(0) => {}
                    Some(1) if k + 1 == n => {}
                    _ => ok = false,
                }
            }
        }
    });
    ok
}

/// Step 7: SIMD marks on parallel, unit-stride innermost loops.
pub(super) fn mark_simd(nodes: &mut [Node], scop: &Scop, lw: &Lowered<'_, '_>) {
    for n in nodes {
        match n {
            Node::For(l) => {
                if contains_loop(&l.body) {
                    mark_simd(&mut l.body, scop, lw);
                } else if l.step == 1
                    && unit_stride(l, scop)
                    && lw.holds(l.info, Fact::Parallel)
                    && !lw.copies_arrays(l.info)
                {
                    l.simd = true;
                    l.private = lw.private_names(l.info);
                }
            }
            Node::If { then, other, .. } => {
                mark_simd(then, scop, lw);
                mark_simd(other, scop, lw);
            }
            Node::Stmt { .. } => {}
        }
    }
}

/// Step 8: OpenMP on the outermost parallel loop of each nest.
pub(super) fn mark_omp(nodes: &mut [Node], lw: &Lowered<'_, '_>) {
    for n in nodes {
        match n {
            Node::For(l) => {
                if lw.holds(l.info, Fact::Parallel) {
                    l.omp = true;
                    l.private = lw.private_names(l.info);
                } else {
                    mark_omp(&mut l.body, lw);
                }
            }
            Node::If { then, other, .. } => {
                mark_omp(then, lw);
                mark_omp(other, lw);
            }
            Node::Stmt { .. } => {}
        }
    }
}

/// Inclusive upper bound of a loop whose condition is `var <= ub` or
/// `var < ub`.
pub(super) fn upper_bound(l: &Loop) -> Option<AstExpr> {
    match &l.cond {
        AstExpr::Op(AstOp::Le, a) if a[0] == AstExpr::Id(l.var.clone()) => Some(a[1].clone()),
        AstExpr::Op(AstOp::Lt, a) if a[0] == AstExpr::Id(l.var.clone()) => {
            Some(expr::plus(&a[1], -1))
        }
        _ => None,
    }
}

/// Step 9: unroll-and-jam of the two innermost loops. The outer factor
/// unrolls the outer of two perfectly nested innermost loops and jams its
/// copies into the inner one, when they are permutable, the inner bounds
/// do not depend on the outer loop and both steps are 1. The inner factor
/// (beyond the paper's space) unrolls every innermost loop whose step is
/// 1 and is not marked for SIMD: plain unrolling keeps the iterations'
/// order, so it is legal whatever the dependences; a loop parallel before
/// stays parallel in blocks, so its OpenMP mark stays (a SIMD mark would
/// let clang reorder the copies' accesses within an iteration: such a
/// loop is left to the vectorizer). Loops of a register tile are left alone
/// (the tile is their unroll-and-jam). Returns, per factor that could not
/// be applied somewhere, why.
pub(super) fn mark_unroll(nodes: &mut [Node], uj: UnrollJam, lw: &Lowered<'_, '_>) -> Vec<String> {
    let mut done = Unrolled::default();
    walk_unroll(nodes, uj, lw, &mut done);
    if uj.outer > 1 && done.jammed == 0 && done.outer.is_empty() {
        done.outer.push(
            "no two perfectly nested innermost loops (a loop whose body is only the innermost loop)"
                .into(),
        );
    }
    if uj.inner > 1 && done.unrolled == 0 && done.inner.is_empty() {
        done.inner.push("no loop".into());
    }
    let mut notes: Vec<String> = Vec::new();
    let (o, i) = (uj.outer, uj.inner);
    for (which, list) in [
        (format!("outer factor {o}"), done.outer),
        (format!("inner factor {i}"), done.inner),
    ] {
        for why in list {
            let n = format!("unroll-and-jam {uj}: {which} not applied: {why}");
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    notes
}

/// What step 9 did, and why not where it did not.
#[derive(Default)]
struct Unrolled {
    jammed: usize,
    unrolled: usize,
    outer: Vec<String>,
    inner: Vec<String>,
}

fn walk_unroll(nodes: &mut [Node], uj: UnrollJam, lw: &Lowered<'_, '_>, done: &mut Unrolled) {
    for n in nodes {
        match n {
            // The register tile is the nest's unroll-and-jam.
            Node::For(l) if l.regblock.is_some() => {}
            Node::For(l) if !contains_loop(&l.body) => {
                if uj.inner > 1 {
                    if l.simd {
                        // Found by `fuzz --extended` (seed 11, program
                        // 12): clang, told by `vectorize(assume_safety)`
                        // that the loop carries no dependence, groups the
                        // copies' strided accesses and moves a load of one
                        // copy above a store of the same iteration. The
                        // vectorizer unrolls the loop itself (and measured
                        // by hand, unrolling a vectorized loop here loses:
                        // gemm MEDIUM 2.89x with uj=8, 0.89x with 8x2).
                        done.inner.push(format!(
                            "loop {}: it is marked for SIMD (the vectorizer unrolls it)",
                            l.var
                        ));
                    } else if l.step != 1 {
                        done.inner
                            .push(format!("loop {}: its step is {}", l.var, l.step));
                    } else if upper_bound(l).is_none() {
                        done.inner.push(format!(
                            "loop {}: its condition is not an upper bound",
                            l.var
                        ));
                    } else {
                        l.unroll = uj.inner;
                        done.unrolled += 1;
                    }
                }
            }
            Node::For(l) => {
                if uj.outer > 1
                    && let [Node::For(inner)] = l.body.as_slice()
                    && !contains_loop(&inner.body)
                {
                    match jam_refusal(l, inner, lw) {
                        Some(why) => done
                            .outer
                            .push(format!("loops {}, {}: {why}", l.var, inner.var)),
                        None => {
                            l.jam = uj.outer;
                            done.jammed += 1;
                            if let [Node::For(inner)] = l.body.as_mut_slice()
                                && !lw.holds(inner.info, Fact::ParallelAfterJam)
                            {
                                inner.simd = false;
                                inner.omp = false;
                            }
                        }
                    }
                }
                walk_unroll(&mut l.body, uj, lw, done);
            }
            Node::If { then, other, .. } => {
                walk_unroll(then, uj, lw, done);
                walk_unroll(other, uj, lw, done);
            }
            Node::Stmt { .. } => {}
        }
    }
}

/// Why the innermost loop `inner`, the only child of `l`, cannot be
/// jammed with it; `None` when it can. The dependence test comes last:
/// it is the costly one.
fn jam_refusal(l: &Loop, inner: &Loop, lw: &Lowered<'_, '_>) -> Option<String> {
    if inner.step != 1 || l.step != 1 {
        Some("a step other than 1".into())
    } else if expr::mentions(&inner.init, &l.var) || expr::mentions(&inner.cond, &l.var) {
        Some(format!("the bounds of {} depend on {}", inner.var, l.var))
    } else if upper_bound(l).is_none() {
        Some(format!("the condition of {} is not an upper bound", l.var))
    } else if !lw.holds(inner.info, Fact::JamWithParent) {
        Some("the dependences forbid interchanging them".into())
    } else {
        None
    }
}

/// Replaces `var` by `var + k` in a subtree.
pub(super) fn shift(nodes: &[Node], var: &str, k: i64) -> Vec<Node> {
    let by = expr::plus(&AstExpr::Id(var.to_string()), k);
    let sub = |e: &AstExpr| expr::substitute(e, var, &by);
    nodes
        .iter()
        .map(|n| match n {
            Node::For(l) => {
                let mut l2 = (**l).clone();
                l2.init = sub(&l.init);
                l2.cond = sub(&l.cond);
                l2.body = shift(&l.body, var, k);
                Node::For(Box::new(l2))
            }
            Node::If { cond, then, other } => Node::If {
                cond: sub(cond),
                then: shift(then, var, k),
                other: shift(other, var, k),
            },
            Node::Stmt { id, args } => Node::Stmt {
                id: *id,
                args: args.iter().map(sub).collect(),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    fn generate(body: &str, config: &str) -> String {
        optimize(body, config).0
    }

    /// The generated text and the notes.
    fn optimize(body: &str, config: &str) -> (String, Vec<String>) {
        let text = format!(
            "void f(int n, int t_steps, double x[99], double y[99], double A[99][99]) {{ int t, i, j;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        );
        let src = parse_source(Path::new("t.c"), text, &Options::default()).unwrap();
        let out = crate::engine::pipeline::optimize(&src, &config.parse().unwrap(), None).unwrap();
        (out.text, out.notes)
    }

    #[test]
    fn a_loop_carrying_a_dependence_is_never_parallel() {
        let out = generate(
            "for (t = 0; t < t_steps; t++) { for (i = 1; i < n - 1; i++) y[i] = x[i - 1] + x[i + 1]; for (i = 1; i < n - 1; i++) x[i] = y[i]; }",
            "fuse=max,omp=1,simd=1",
        );
        let lines: Vec<&str> = out.lines().collect();
        let t_loop = lines
            .iter()
            .position(|l| l.contains("c0 < t_steps"))
            .unwrap();
        assert!(!lines[t_loop - 1].contains("omp"), "{out}");
        assert_eq!(
            out.matches("#pragma omp parallel for simd").count(),
            2,
            "{out}"
        );
    }

    #[test]
    fn cyclic_parallel_loops_deal_their_iterations_in_turn() {
        let triangle = "for (i = 0; i < n; i++) for (j = 0; j <= i; j++) A[i][j] = A[i][j] * 2.0;";
        let out = generate(triangle, "fuse=smart,omp=1,cyc=1");
        assert!(
            out.contains("#pragma omp parallel for schedule(static, 1)\n"),
            "{out}"
        );
        let out = generate(triangle, "fuse=smart,omp=1");
        assert!(out.contains("#pragma omp parallel for\n"), "{out}");
        assert!(!out.contains("schedule("), "{out}");
        // Without a parallel loop there is nothing to deal; rows of equal
        // work stay in blocks.
        let out = generate(triangle, "fuse=smart,cyc=1");
        assert!(!out.contains("schedule("), "{out}");
        let square = "for (i = 0; i < n; i++) for (j = 0; j < n; j++) A[i][j] = A[i][j] * 2.0;";
        let out = generate(square, "fuse=smart,omp=1,cyc=1");
        assert!(out.contains("#pragma omp parallel for\n"), "{out}");
        assert!(!out.contains("schedule("), "{out}");
        // Rectangular tiles are even too: the point loops name the tile
        // loop only to start a tile and cut the last one short.
        let out = generate(square, "fuse=smart,tile=32x32x1,omp=1,cyc=1");
        assert!(out.contains("min(n - 1, 32 * c0 + 31)"), "{out}");
        assert!(!out.contains("schedule("), "{out}");
        // Tiles of a triangle are not.
        let out = generate(triangle, "fuse=smart,tile=32x32x1,omp=1,cyc=1");
        assert!(out.contains("schedule(static, 1)"), "{out}");
    }

    #[test]
    fn reductions_are_not_vectorized_by_promise() {
        let out = generate(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) x[i] += A[i][j];",
            "fuse=smart,simd=1,omp=1",
        );
        // The j loop carries the reduction: no ivdep on it; i is parallel.
        assert!(!out.contains("GCC ivdep"), "{out}");
        assert!(out.contains("#pragma omp parallel for\n"), "{out}");
    }

    #[test]
    fn unroll_and_jam_needs_permutability() {
        // (i, j) with a (1, -1) dependence: interchange, hence jam, is illegal.
        let out = generate(
            "for (i = 1; i < n; i++) for (j = 0; j < n - 1; j++) A[i][j] = A[i - 1][j + 1] + 1;",
            "fuse=smart,uj=4",
        );
        assert!(
            !out.contains("c0 += 4") && !out.contains("c1 += 4"),
            "{out}"
        );
        let out = generate(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) x[i] += A[i][j];",
            "fuse=smart,uj=4",
        );
        assert!(out.contains("c0 += 4"), "{out}");
    }

    #[test]
    fn each_factor_unrolls_its_own_loop_with_a_remainder() {
        let (out, notes) = optimize(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) x[i] += A[i][j];",
            "fuse=smart,uj=4x3",
        );
        assert!(notes.is_empty(), "{notes:?}");
        // The outer loop in blocks of 4 jammed into the inner one, which
        // runs in blocks of 3: 12 copies, then the remainders.
        assert!(out.contains("c0 += 4") && out.contains("c1 += 3"), "{out}");
        assert!(out.contains("% 4 + 1") && out.contains("% 3 + 1"), "{out}");
        assert!(out.contains("x[c0 + 3] += A[c0 + 3][c1 + 2];"), "{out}");
        // (and the original, run where the parameters' assumed values
        // do not hold).
        assert_eq!(out.matches(" += A[").count(), 12 + 4 + 3 + 1 + 1, "{out}");
        // The inner factor alone unrolls a loop with no loop around it.
        let (out, notes) = optimize("for (i = 0; i < n; i++) x[i] = y[i];", "uj=1x3");
        assert!(notes.is_empty(), "{notes:?}");
        assert!(
            out.contains("c0 += 3") && out.contains("x[c0 + 2] = y[c0 + 2];"),
            "{out}"
        );
    }

    #[test]
    fn a_factor_that_cannot_be_applied_says_why() {
        // Distances (1, n - 1 - 2j) along (i, j), negative along j for
        // half the j: no skew makes the pair permutable, so no jam; the
        // inner loop is still unrolled (plain unrolling keeps the order).
        let (out, notes) = optimize(
            "for (i = 1; i < n; i++) for (j = 0; j < n; j++) A[i][j] = A[i - 1][n - 1 - j] + 1;",
            "fuse=smart,uj=4x2",
        );
        assert!(!out.contains("c0 += 4") && out.contains("c1 += 2"), "{out}");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].ends_with(
                "unroll-and-jam 4x2: outer factor 4 not applied: loops c0, c1: \
                 the dependences forbid interchanging them"
            ),
            "{notes:?}"
        );
        // A triangular nest: the inner bounds depend on the outer loop.
        let (out, notes) = optimize(
            "for (i = 0; i < n; i++) for (j = i; j < n; j++) A[i][j] = 2 * A[i][j];",
            "fuse=smart,uj=2x2",
        );
        assert!(!out.contains("c0 += 2") && out.contains("c1 += 2"), "{out}");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("the bounds of c1 depend on c0"),
            "{notes:?}"
        );
        // No nest of two loops at all.
        let (_, notes) = optimize("for (i = 0; i < n; i++) x[i] = y[i];", "uj=2x2");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("outer factor 2 not applied: no two perfectly nested"),
            "{notes:?}"
        );
        // The paper's factor is silent where it does not apply.
        let (_, notes) = optimize("for (i = 0; i < n; i++) x[i] = y[i];", "uj=2");
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn the_paper_factor_is_the_outer_one() {
        let body = "for (i = 0; i < n; i++) for (j = 0; j < n; j++) x[i] += A[i][j];";
        let paper = generate(body, "fuse=smart,simd=1,uj=4");
        let separate = generate(body, "fuse=smart,simd=1,uj=4x1");
        assert_eq!(paper, separate);
        assert!(!paper.contains("c1 += "), "{paper}");
    }
}
