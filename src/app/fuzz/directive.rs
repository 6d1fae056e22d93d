//! The directive mode (`fuzz --omp-directives`, issue 40): each program
//! carries a user's OpenMP directive on one loop of its SCoP, correct or
//! not, and polytune must never take one that does not hold.
//!
//! Whether a directive holds is decided here without polytune: the
//! interpreter runs the program once more with the annotated loop's
//! iterations in reverse order. A loop whose iterations do not commute
//! (a result or a dumped scalar differs) has a dependence between them
//! that the directive denies — a parallel run may produce the other
//! order's result — so the directive is wrong, and a SCoP polytune
//! transforms under it is a finding. The converse is not claimed: a
//! loop that commutes under reversal may still not be parallel (polytune
//! may refuse it), and one polytune proves must commute.

use super::generate::Generated;
use super::interp::Machine;
use super::program::{Lhs, Loop, Program, Stmt, VExpr};
use crate::lab::rng::SplitMix64;

/// The directive a program carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drawn {
    /// `#pragma omp parallel for private(s1) reduction(+:s0)`.
    pub text: String,
    /// The annotated loop's position among the SCoP's loops (preorder).
    pub loop_index: usize,
    /// Whether reversing the loop changes what the program prints:
    /// `Some(true)` the directive is wrong; `None` when the reversed run
    /// is not legal (an overflow in another order), so nothing is known.
    pub racy: Option<bool>,
    /// The parameter sets (indices) at which it does.
    pub racy_sets: Vec<usize>,
    /// The program without the directive: what the original is built
    /// from, so that it computes the sequential result the interpreter
    /// predicts (a wrong directive, run by OpenMP, computes another).
    pub plain: String,
}

/// The SCoP's loops in preorder.
pub(super) fn loops(body: &[Stmt]) -> Vec<&Loop> {
    fn walk<'a>(body: &'a [Stmt], out: &mut Vec<&'a Loop>) {
        for s in body {
            match s {
                Stmt::For(l) => {
                    out.push(l);
                    walk(&l.body, out);
                }
                Stmt::If { then, other, .. } => {
                    walk(then, out);
                    if let Some(o) = other {
                        walk(o, out);
                    }
                }
                Stmt::IfData { then, .. } => walk(then, out),
                Stmt::Assign { .. } => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(body, &mut out);
    out
}

/// Draws a directive for one loop of `g`'s SCoP, puts it into the
/// program's text and decides whether it holds; `None` when the SCoP has
/// no loop.
pub(super) fn add(g: &mut Generated, rng: &mut SplitMix64) -> Option<Drawn> {
    let all = loops(&g.program.body);
    let canonical: Vec<usize> = (0..all.len())
        .filter(|&k| canonical(&g.program, all[k]))
        .collect();
    if canonical.is_empty() {
        return None;
    }
    let loop_index = canonical[rng.below(canonical.len())];
    let l = all[loop_index];
    let text = pragma(&g.program, l, rng);
    let racy_sets = racy(&g.program, l, &g.expected);
    let with = insert(&g.text, loop_index, &text)?;
    let plain = std::mem::replace(&mut g.text, with);
    Some(Drawn {
        text,
        loop_index,
        racy: racy_sets.as_ref().map(|v| !v.is_empty()),
        racy_sets: racy_sets.unwrap_or_default(),
        plain,
    })
}

/// Whether `l` has OpenMP's canonical loop form (a compiler refuses a
/// loop directive on any other): its condition compares the iterator
/// with `<`, `<=`, `>` or `>=` to an expression free of it, both signed.
fn canonical(p: &Program, l: &Loop) -> bool {
    use super::program::{AExpr, CmpOp, Cond};
    fn mentions(e: &AExpr, v: usize) -> bool {
        match e {
            AExpr::Var(x) => *x == v,
            AExpr::Lit(..) => false,
            AExpr::Neg(a) | AExpr::Mul(_, a) | AExpr::Div(a, _) | AExpr::Cast(_, a) => {
                mentions(a, v)
            }
            AExpr::Add(a, b) | AExpr::Sub(a, b) | AExpr::Min(a, b) | AExpr::Max(a, b) => {
                mentions(a, v) || mentions(b, v)
            }
        }
    }
    matches!(&l.cond, Cond::Cmp(CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge, AExpr::Var(x), e)
        if *x == l.var
            && !mentions(e, l.var)
            && p.vars[l.var].ty.signed()
            && super::interp::type_of(p, e).signed()
            && super::interp::type_of(p, &l.init).signed())
}

/// A directive for `l`: `parallel for` (or `simd`), with the scalars it
/// writes drawn into `reduction(+:...)` (those only ever added to) or
/// `private(...)`, or left shared.
fn pragma(p: &Program, l: &Loop, rng: &mut SplitMix64) -> String {
    let mut written: Vec<(usize, bool)> = Vec::new();
    let mut read: Vec<usize> = Vec::new();
    scalars(&l.body, &mut written, &mut read);
    let mut private = Vec::new();
    let mut reduction = Vec::new();
    let mut names: Vec<usize> = written.iter().map(|w| w.0).collect();
    names.sort_unstable();
    names.dedup();
    for s in names {
        let only_added = written.iter().filter(|w| w.0 == s).all(|w| w.1) && !read.contains(&s);
        let name = p.scalars[s].name.clone();
        match rng.below(10) {
            0..=5 if only_added => reduction.push(name),
            0..=6 => private.push(name),
            _ => {}
        }
    }
    let mut text = if rng.below(5) == 0 {
        "#pragma omp simd".to_string()
    } else {
        "#pragma omp parallel for".to_string()
    };
    if !private.is_empty() {
        text += &format!(" private({})", private.join(", "));
    }
    if !reduction.is_empty() {
        text += &format!(" reduction(+:{})", reduction.join(", "));
    }
    text
}

/// The scalars `body` writes (with whether the write is `+=`) and those
/// it reads as values.
fn scalars(body: &[Stmt], written: &mut Vec<(usize, bool)>, read: &mut Vec<usize>) {
    fn reads(e: &VExpr, out: &mut Vec<usize>) {
        match e {
            VExpr::Scalar(s) => out.push(*s),
            VExpr::Add(x, y) | VExpr::Sub(x, y) | VExpr::Mul(x, y) => {
                reads(x, out);
                reads(y, out);
            }
            _ => {}
        }
    }
    for s in body {
        match s {
            Stmt::For(l) => scalars(&l.body, written, read),
            Stmt::If { then, other, .. } => {
                scalars(then, written, read);
                if let Some(o) = other {
                    scalars(o, written, read);
                }
            }
            Stmt::IfData { then, .. } => scalars(then, written, read),
            Stmt::Assign { lhs, add, rhs } => {
                if let Lhs::Scalar(x) = lhs {
                    written.push((*x, *add));
                }
                reads(rhs, read);
            }
        }
    }
}

/// The parameter sets at which running `l`'s iterations in reverse
/// changes what the program prints (`expected`: the forward runs' dumps);
/// `None` when a reversed run is not legal.
fn racy(p: &Program, l: &Loop, expected: &[String]) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for (k, (set, forward)) in p.param_sets.iter().zip(expected).enumerate() {
        let mut m = Machine::new(p, set, true);
        m.reverse(l);
        m.run().ok()?;
        if super::compare_outputs(forward, &m.dump()).is_err() {
            out.push(k);
        }
    }
    Some(out)
}

/// The parameter sets of `racy_sets` at which the code polytune wrote for
/// the SCoP of `text` runs (its assumed context holds; elsewhere the
/// original runs, with the user's directive as written): taking the
/// directive there is a wrong program. `None` when the context cannot be
/// evaluated (a SCoP parameter that is no program parameter).
pub(super) fn transformed_at(p: &Program, text: &str, racy_sets: &[usize]) -> Option<Vec<usize>> {
    use crate::engine::model::{EngineError, Model};
    let src = crate::frontend::parse_source(
        std::path::Path::new("prog.c"),
        text.to_string(),
        &crate::frontend::Options::default(),
    )
    .ok()?;
    let scop = src.scops.first()?;
    let names: Vec<&str> = p
        .params()
        .iter()
        .map(|&v| p.vars[v].name.as_str())
        .collect();
    let mut out = Vec::new();
    for &k in racy_sets {
        let values = &p.param_sets[k];
        // The default context (every parameter at least 1) at the set.
        let mut fixed = Vec::new();
        for q in &scop.parameters {
            let at = names.iter().position(|n| n == q)?;
            let q = crate::isl::mangle(q);
            fixed.push(format!("{q} = {} and {q} >= 1", values[at]));
        }
        let context = format!(
            "[{}] -> {{ : {} }}",
            crate::frontend::scop::isl_names(&scop.parameters),
            if fixed.is_empty() {
                "true".to_string()
            } else {
                fixed.join(" and ")
            }
        );
        let ctx = crate::isl::Ctx::new();
        // Outside the default context: the transformed code does not run.
        if crate::isl::Set::parse(&ctx, &context)
            .ok()?
            .is_empty()
            .ok()?
        {
            continue;
        }
        match Model::new(&ctx, scop, Some(&context)) {
            Ok(m) if !m.context.is_empty().ok()? => out.push(k),
            Ok(_) | Err(EngineError::Assumption { .. }) => {}
            Err(_) => return None,
        }
    }
    Some(out)
}

/// `text` with `pragma` on its own line in front of the `loop_index`-th
/// loop of its SCoP (the printer writes one `for (` line per loop, in
/// preorder).
pub(super) fn insert(text: &str, loop_index: usize, pragma: &str) -> Option<String> {
    let open = text.find("#pragma scop\n")?;
    let mut out = String::with_capacity(text.len() + pragma.len() + 1);
    out.push_str(&text[..open]);
    let mut seen = 0;
    let mut done = false;
    for line in text[open..].split_inclusive('\n') {
        if !done && line.trim_start().starts_with("for (") {
            if seen == loop_index {
                let indent = &line[..line.len() - line.trim_start().len()];
                out.push_str(&format!("{indent}{pragma}\n"));
                done = true;
            }
            seen += 1;
        }
        if line.starts_with("#pragma endscop") && !done {
            return None;
        }
        out.push_str(line);
    }
    done.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::fuzz::program::{AExpr, Access, Array, CmpOp, Cond, Elem, IntTy, n_and_i};

    /// `for (long i = 1; i < n; i++) A[i] = A[i - 1];` at n = 5, and at
    /// n = 0 (outside the default context).
    fn recurrence() -> Program {
        let i = AExpr::Var(1);
        Program {
            vars: n_and_i(),
            arrays: vec![Array {
                name: "A".into(),
                elem: Elem::Long,
                rank: 1,
                extents: vec![8],
            }],
            scalars: Vec::new(),
            body: vec![Stmt::For(Loop {
                var: 1,
                init: AExpr::Lit(1, IntTy::Long),
                cond: Cond::Cmp(CmpOp::Lt, i.clone(), AExpr::Var(0)),
                step: 1,
                body: vec![Stmt::Assign {
                    lhs: Lhs::Array(Access {
                        array: 0,
                        subs: vec![i.clone()],
                    }),
                    add: false,
                    rhs: VExpr::Read(Access {
                        array: 0,
                        subs: vec![AExpr::Sub(
                            Box::new(i),
                            Box::new(AExpr::Lit(1, IntTy::Long)),
                        )],
                    }),
                }],
            })],
            param_sets: vec![vec![5], vec![0]],
            depth: 1,
        }
    }

    #[test]
    fn a_recurrence_does_not_commute_and_its_directive_would_be_taken_where_it_runs() {
        let p = recurrence();
        let expected: Vec<String> = p
            .param_sets
            .iter()
            .map(|set| {
                let mut m = Machine::new(&p, set, true);
                m.run().unwrap();
                m.dump()
            })
            .collect();
        let l = loops(&p.body)[0];
        assert!(canonical(&p, l));
        // Reversed, the copy moves one element instead of four.
        assert_eq!(racy(&p, l, &expected), Some(vec![0]));
        let text = "long A[8];\nvoid kernel(long n)\n{\n#pragma scop\n  for (long i = 1; i < n; i++) {\n    A[i] = A[i - 1];\n  }\n#pragma endscop\n}\n";
        // At n = 5 the transformed code would run; at n = 0 it would not.
        assert_eq!(transformed_at(&p, text, &[0, 1]), Some(vec![0]));
    }

    #[test]
    fn the_pragma_goes_in_front_of_the_loop_of_its_index() {
        let text = "int main() {\n#pragma scop\nfor (int i = 0; i < n; i++) {\n  for (int j = 0; j < n; j++) {\n  }\n}\n#pragma endscop\nfor (int k = 0; k < 3; k++) {}\n}\n";
        let out = insert(text, 1, "#pragma omp simd").unwrap();
        assert!(out.contains("{\n  #pragma omp simd\n  for (int j"), "{out}");
        assert!(insert(text, 2, "#pragma omp simd").is_none());
    }
}
