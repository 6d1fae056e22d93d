//! Which parts of a contraction's statements move with which loop: the
//! analysis behind packed operands and the vector micro-kernel
//! (`vector.rs`), on the statements' expression trees with the
//! iterators' values over the generated loops.

use crate::frontend::scop::Affine;
use crate::frontend::scop::ast::{BinOp, Expr, ExprKind, UnOp};
use crate::frontend::scop::print::expr_to_c_with;

/// How one statement's expressions move with the loops: the statement's
/// iterators' values over the generated loops.
pub(super) struct Moves<'s> {
    pub(super) iterators: &'s [String],
    pub(super) args: &'s [Affine],
}

impl Moves<'_> {
    /// The coefficient of loop `var` in `e`, when `e` is affine in it.
    fn coefficient(&self, e: &Expr, var: &str) -> Option<i64> {
        match &e.kind {
            ExprKind::Int { .. } | ExprKind::Float(_) => Some(0),
            ExprKind::Ident(n) => Some(
                self.iterators
                    .iter()
                    .position(|i| i == n)
                    .map_or(0, |k| self.args[k].coefficient(var)),
            ),
            ExprKind::Unary {
                op: UnOp::Neg,
                expr,
            } => Some(-self.coefficient(expr, var)?),
            ExprKind::Unary {
                op: UnOp::Plus,
                expr,
            }
            | ExprKind::Cast { expr, .. } => {
                let k = self.coefficient(expr, var)?;
                // A cast of something that moves may truncate.
                (k == 0 || matches!(e.kind, ExprKind::Unary { .. })).then_some(k)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.coefficient(lhs, var)?, self.coefficient(rhs, var)?);
                match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => match (a, b) {
                        (0, 0) => Some(0),
                        (k, 0) => int_value(rhs)?.checked_mul(k),
                        (0, k) => int_value(lhs)?.checked_mul(k),
                        _ => None,
                    },
                    _ => (a == 0 && b == 0).then_some(0),
                }
            }
            _ => (!self.moves(e, var)).then_some(0),
        }
    }

    /// Whether `e` mentions an iterator that moves with loop `var`.
    pub(super) fn moves(&self, e: &Expr, var: &str) -> bool {
        let mut found = false;
        visit(e, &mut |x| {
            if let ExprKind::Ident(n) = &x.kind {
                found |= self
                    .iterators
                    .iter()
                    .position(|i| i == n)
                    .is_some_and(|k| self.args[k].coefficient(var) != 0);
            }
        });
        found
    }
}

fn int_value(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int { value, .. } => Some(*value),
        _ => None,
    }
}

/// Calls `f` on `e` and every expression inside it.
fn visit(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Access { subscripts: v, .. } | ExprKind::Call { args: v, .. } => {
            v.iter().for_each(|x| visit(x, f))
        }
        ExprKind::Unary { expr, .. } | ExprKind::Cast { expr, .. } => visit(expr, f),
        ExprKind::Binary { lhs, rhs, .. } => {
            visit(lhs, f);
            visit(rhs, f);
        }
        ExprKind::Ternary { cond, then, other } => {
            visit(cond, f);
            visit(then, f);
            visit(other, f);
        }
        _ => {}
    }
}

fn has_access(e: &Expr) -> bool {
    let mut found = false;
    visit(e, &mut |x| {
        found |= matches!(x.kind, ExprKind::Access { .. })
    });
    found
}

/// The sub-expressions of `e` packed into buffers, in the order the
/// micro-kernel meets them: the largest that do not move with `q`, move
/// with `r` and read an array.
pub(super) fn packed_operands<'e>(
    e: &'e Expr,
    m: &Moves<'_>,
    (q, r): (&str, &str),
    out: &mut Vec<&'e Expr>,
) {
    if !m.moves(e, q) {
        if m.moves(e, r) && has_access(e) {
            out.push(e);
        }
        return;
    }
    match &e.kind {
        ExprKind::Unary { expr, .. } => packed_operands(expr, m, (q, r), out),
        ExprKind::Binary { lhs, rhs, .. } => {
            packed_operands(lhs, m, (q, r), out);
            packed_operands(rhs, m, (q, r), out);
        }
        _ => {}
    }
}

/// Whether an access that moves with the columns `q` reads consecutive
/// elements along them (only its last subscript moves, by 1 per column).
pub(super) fn contiguous(e: &Expr, m: &Moves<'_>, q: &str) -> bool {
    let ExprKind::Access { subscripts, .. } = &e.kind else {
        return false;
    };
    let ks: Vec<Option<i64>> = subscripts.iter().map(|s| m.coefficient(s, q)).collect();
    matches!(ks.split_last(), Some((Some(1), rest)) if rest.iter().all(|k| *k == Some(0)))
}

/// The columns' operands of `e` that are packed: the accesses that move
/// with `q` (but not with the rows `p`) and are not contiguous along it,
/// in the order the micro-kernel meets them.
pub(super) fn packed_columns<'e>(
    e: &'e Expr,
    m: &Moves<'_>,
    (p, q): (&str, &str),
    array: &str,
    out: &mut Vec<&'e Expr>,
) {
    if !m.moves(e, q) {
        return;
    }
    match &e.kind {
        ExprKind::Access { name, .. }
            if name != array && !contiguous(e, m, q) && !m.moves(e, p) =>
        {
            out.push(e);
        }
        ExprKind::Unary { expr, .. } => packed_columns(expr, m, (p, q), array, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            packed_columns(lhs, m, (p, q), array, out);
            packed_columns(rhs, m, (p, q), array, out);
        }
        _ => {}
    }
}

/// Why the right-hand side `e` cannot be computed on vectors along `q`,
/// if it cannot: what moves with `q` must be arithmetic (`+ - * /`,
/// negation) on the accumulated element and on array elements either
/// contiguous along `q` or independent of the rows `p` (those are packed).
pub(super) fn vectorizable(
    e: &Expr,
    m: &Moves<'_>,
    (p, q): (&str, &str),
    array: &str,
) -> Result<(), String> {
    if !m.moves(e, q) {
        return Ok(());
    }
    let text = || expr_to_c_with(e, &|_| None);
    match &e.kind {
        ExprKind::Access { name, .. } if name == array => Ok(()),
        ExprKind::Access { .. } if contiguous(e, m, q) || !m.moves(e, p) => Ok(()),
        ExprKind::Access { .. } => Err(format!(
            "`{}` moves with the rows and the columns and is not contiguous along the columns",
            text()
        )),
        ExprKind::Binary {
            op: BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div,
            lhs,
            rhs,
        } => {
            vectorizable(lhs, m, (p, q), array)?;
            vectorizable(rhs, m, (p, q), array)
        }
        ExprKind::Unary {
            op: UnOp::Neg | UnOp::Plus,
            expr,
        } => vectorizable(expr, m, (p, q), array),
        _ => Err(format!(
            "`{}` moves with the columns and is not arithmetic on array elements",
            text()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::scop::ast::{Stmt, StmtKind};
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    /// The right-hand side of the one statement of `body` (in loops i, j,
    /// k), printed, with the statement's iterators as the loops.
    fn with_rhs(body: &str, check: impl Fn(&Expr, &Moves<'_>)) {
        let text = format!(
            "void f(int n, double a, double A[99][99], double B[99][99], double C[99][99]) {{ int i, j, k;\n#pragma scop\nfor (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++)\n{body}\n#pragma endscop\n}}\n"
        );
        let scop = parse_source(Path::new("t.c"), text, &Options::default())
            .unwrap()
            .scops
            .remove(0);
        fn find(s: &[Stmt]) -> Option<&Expr> {
            s.iter().find_map(|s| match &s.kind {
                StmtKind::Assign { rhs, .. } => Some(rhs),
                StmtKind::For(l) => find(std::slice::from_ref(&l.body)),
                _ => None,
            })
        }
        let iterators = scop.statements[0].iterators.clone();
        let args: Vec<Affine> = iterators.iter().map(|i| Affine::var(i)).collect();
        let m = Moves {
            iterators: &iterators,
            args: &args,
        };
        check(find(&scop.body).unwrap(), &m);
    }

    fn texts(v: &[&Expr]) -> Vec<String> {
        v.iter().map(|e| expr_to_c_with(e, &|_| None)).collect()
    }

    #[test]
    fn the_rows_operands_are_the_largest_parts_that_stay_along_the_columns() {
        with_rhs("C[i][j] += a * A[i][k] * B[k][j];", |e, m| {
            let mut out = Vec::new();
            packed_operands(e, m, ("j", "k"), &mut out);
            assert_eq!(texts(&out), ["a * A[i][k]"]);
            assert_eq!(vectorizable(e, m, ("i", "j"), "C"), Ok(()));
        });
        // `a` does not move with k: left to the compiler, not packed.
        with_rhs(
            "C[i][j] += A[i][k] * B[k][j] * a + A[k][i] * B[k][j];",
            |e, m| {
                let mut out = Vec::new();
                packed_operands(e, m, ("j", "k"), &mut out);
                assert_eq!(texts(&out), ["A[i][k]", "A[k][i]"]);
                assert_eq!(vectorizable(e, m, ("i", "j"), "C"), Ok(()));
            },
        );
    }

    #[test]
    fn what_moves_with_the_columns_must_be_contiguous_arithmetic() {
        // Not contiguous, independent of the rows: packed.
        with_rhs("C[i][j] += A[i][k] * B[j][k] + B[k][2 * j];", |e, m| {
            assert_eq!(vectorizable(e, m, ("i", "j"), "C"), Ok(()));
            let mut out = Vec::new();
            packed_columns(e, m, ("i", "j"), "C", &mut out);
            assert_eq!(texts(&out), ["B[j][k]", "B[k][2 * j]"]);
        });
        // Not contiguous and moving with the rows too: no vectors.
        with_rhs("C[i][j] += A[i][k] * B[j][i];", |e, m| {
            let why = vectorizable(e, m, ("i", "j"), "C").unwrap_err();
            assert!(
                why.contains("`B[j][i]` moves with the rows and the columns"),
                "{why}"
            );
        });
        with_rhs("C[i][j] += A[i][k] * B[i][j + k];", |e, m| {
            assert_eq!(vectorizable(e, m, ("i", "j"), "C"), Ok(()));
            let mut out = Vec::new();
            packed_columns(e, m, ("i", "j"), "C", &mut out);
            assert!(out.is_empty());
        });
        with_rhs(
            "C[i][j] += A[i][k] * B[k][j + 1] - C[i][j] / 2.0;",
            |e, m| {
                assert_eq!(vectorizable(e, m, ("i", "j"), "C"), Ok(()));
            },
        );
        with_rhs("C[i][j] += A[i][k] * (j > k ? B[k][j] : 0.0);", |e, m| {
            let why = vectorizable(e, m, ("i", "j"), "C").unwrap_err();
            assert!(why.contains("is not arithmetic on array elements"), "{why}");
        });
        with_rhs("C[i][j] += A[i][k] * j;", |e, m| {
            assert!(vectorizable(e, m, ("i", "j"), "C").is_err());
        });
    }
}
