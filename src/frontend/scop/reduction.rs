//! Reductions (issue 20): statements that accumulate into one element,
//! `X += e`, `X -= e` or `X *= e` (or spelled `X = X + e`, `X = e + X`,
//! `X = X - e`, `X = X * e`, `X = e * X`), where `e` reads nothing of
//! `X`'s array. Along a loop whose only carried dependences are such a
//! statement's own updates of one `X`, the updates may be reassociated:
//! the engine then runs the loop as a reduction (OpenMP `reduction`,
//! SIMD), which changes floating-point rounding and is verified with a
//! tolerance.

use super::ast::{AssignOp, BinOp, Expr, ExprKind, Stmt, StmtKind};
use super::print::expr_to_c;
use super::{Scop, Statement};

/// How a reduction combines its partial results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// `+=` and `-=` (partial results start at 0 and are added).
    Add,
    /// `*=` (partial results start at 1 and are multiplied).
    Mul,
}

impl Combine {
    /// The OpenMP reduction identifier.
    pub fn omp(self) -> &'static str {
        match self {
            Combine::Add => "+",
            Combine::Mul => "*",
        }
    }
}

/// A statement of reduction shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reduction {
    pub stmt: usize,
    pub combine: Combine,
}

impl Scop {
    /// The statements of reduction shape (see [`term`]): one write, every
    /// other read on another array than the accumulator's, which is not
    /// delinearized.
    pub fn reductions(&self) -> Vec<Reduction> {
        let mut out = Vec::new();
        collect(&self.body, &mut |stmt| {
            let StmtKind::Assign { id, lhs, .. } = &stmt.kind else {
                return;
            };
            let Some((op, e)) = term(stmt) else { return };
            let combine = match op {
                AssignOp::Mul => Combine::Mul,
                _ => Combine::Add,
            };
            let Some(s) = self.statements.iter().find(|s| s.id == *id) else {
                return;
            };
            let array = match &lhs.kind {
                ExprKind::Access { name, .. } | ExprKind::Ident(name) => name,
                _ => return,
            };
            if !mentions(e, array) && accumulates(self, s) {
                out.push(Reduction { stmt: *id, combine });
            }
        });
        out
    }
}

/// A reduction-shaped assignment as its compound form: the operator
/// (`Add`, `Sub` or `Mul`) and the term it combines into the accumulator.
pub fn term(stmt: &Stmt) -> Option<(AssignOp, &Expr)> {
    let StmtKind::Assign { lhs, op, rhs, .. } = &stmt.kind else {
        return None;
    };
    match op {
        AssignOp::Add | AssignOp::Sub | AssignOp::Mul => Some((*op, rhs)),
        AssignOp::Assign => {
            let ExprKind::Binary { op, lhs: a, rhs: b } = &rhs.kind else {
                return None;
            };
            let same = |x: &Expr| expr_to_c(x) == expr_to_c(lhs);
            match op {
                BinOp::Add if same(a) => Some((AssignOp::Add, &**b)),
                BinOp::Add if same(b) => Some((AssignOp::Add, &**a)),
                BinOp::Sub if same(a) => Some((AssignOp::Sub, &**b)),
                BinOp::Mul if same(a) => Some((AssignOp::Mul, &**b)),
                BinOp::Mul if same(b) => Some((AssignOp::Mul, &**a)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `e` names `array`.
fn mentions(e: &Expr, array: &str) -> bool {
    match &e.kind {
        ExprKind::Ident(n) => n == array,
        ExprKind::Access { name, subscripts } => {
            name == array || subscripts.iter().any(|s| mentions(s, array))
        }
        ExprKind::Call { args, .. } => args.iter().any(|a| mentions(a, array)),
        ExprKind::Unary { expr, .. } | ExprKind::Cast { expr, .. } => mentions(expr, array),
        ExprKind::Binary { lhs, rhs, .. } => mentions(lhs, array) || mentions(rhs, array),
        ExprKind::Ternary { cond, then, other } => {
            mentions(cond, array) || mentions(then, array) || mentions(other, array)
        }
        ExprKind::Int { .. } | ExprKind::Float(_) => false,
        ExprKind::Unsupported(_) => true,
    }
}

/// `s` writes one element and reads nothing else of its array.
fn accumulates(scop: &Scop, s: &Statement) -> bool {
    let [w] = s.writes.as_slice() else {
        return false;
    };
    if w.inner.is_some() || !s.may_writes.is_empty() {
        return false;
    }
    if scop.delinearized(&w.array).is_some() {
        return false;
    }
    let itself = |r: &super::Access| r.array == w.array && r.subscripts == w.subscripts;
    s.reads.iter().any(itself) && s.reads.iter().all(|r| r.array != w.array || itself(r))
}

fn collect(stmts: &[Stmt], f: &mut dyn FnMut(&Stmt)) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { .. } => f(s),
            StmtKind::For(l) => collect(std::slice::from_ref(&l.body), f),
            StmtKind::If { then, other, .. } => {
                collect(std::slice::from_ref(then), f);
                if let Some(o) = other {
                    collect(std::slice::from_ref(o), f);
                }
            }
            StmtKind::Block(v) => collect(v, f),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    fn reductions(body: &str) -> Vec<(usize, &'static str)> {
        let text = format!(
            "double A[20][20], x[20], y[20], s, t;\nvoid f(int n) {{ int i, j;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        );
        let src = parse_source(Path::new("r.c"), text, &Options::default()).unwrap();
        src.scops[0]
            .reductions()
            .iter()
            .map(|r| (r.stmt, r.combine.omp()))
            .collect()
    }

    #[test]
    fn accumulations_into_one_element_are_reductions() {
        assert_eq!(
            reductions("for (i = 0; i < n; i++) for (j = 0; j < n; j++) y[i] += A[i][j] * x[j];"),
            [(0, "+")]
        );
        assert_eq!(
            reductions("for (i = 0; i < n; i++) { s -= x[i] * y[i]; t *= x[i]; }"),
            [(0, "+"), (1, "*")]
        );
        assert_eq!(
            reductions(
                "for (i = 0; i < n; i++) { s = s + x[i]; y[0] = x[i] * y[0]; t = t - x[i]; }"
            ),
            [(0, "+"), (1, "*"), (2, "+")]
        );
    }

    #[test]
    fn other_shapes_are_not() {
        // Reads its own array elsewhere, a plain assignment, a division.
        assert!(reductions("for (i = 1; i < n; i++) x[i] += x[i - 1];").is_empty());
        assert!(reductions("for (i = 0; i < n; i++) s = s + s;").is_empty());
        assert!(reductions("for (i = 0; i < n; i++) s = x[i] - s;").is_empty());
        assert!(reductions("for (i = 0; i < n; i++) s /= x[i];").is_empty());
    }
}
