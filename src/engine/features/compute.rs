//! Floating-point operations of one instance of each statement, by kind,
//! counted on the statement's text: every arithmetic operation on values
//! (subscripts are addresses, not counted), compound assignments as their
//! operation. The front end does not type expressions: an integer
//! operation on values counts too (rare in numerical kernels). The loops
//! and conditions inside a compound statement count once.

use crate::frontend::scop::ast::{
    AssignOp, BinOp, Expr, ExprKind, LocalPart, Stmt, StmtKind, UnOp,
};
use std::collections::HashMap;

/// Operations by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Flops {
    pub(super) add_sub: f64,
    pub(super) mul: f64,
    pub(super) div: f64,
    pub(super) sqrt: f64,
    /// Calls of other functions (`exp`, `pow`, ...).
    pub(super) calls: f64,
}

impl Flops {
    pub(super) fn total(&self) -> f64 {
        self.add_sub + self.mul + self.div + self.sqrt + self.calls
    }

    pub(super) fn add_scaled(&mut self, o: &Flops, k: f64) {
        self.add_sub += k * o.add_sub;
        self.mul += k * o.mul;
        self.div += k * o.div;
        self.sqrt += k * o.sqrt;
        self.calls += k * o.calls;
    }
}

/// The operations of one instance of each statement of `body`, by id.
pub(super) fn per_statement(body: &[Stmt]) -> HashMap<usize, Flops> {
    let mut out = HashMap::new();
    collect(body, &mut out);
    out
}

fn collect(stmts: &[Stmt], out: &mut HashMap<usize, Flops>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { id, lhs, op, rhs } => {
                let mut f = Flops::default();
                assign(lhs, *op, rhs, &mut f);
                out.insert(*id, f);
            }
            StmtKind::Local { id, parts } => {
                let mut f = Flops::default();
                local(parts, &mut f);
                out.insert(*id, f);
            }
            StmtKind::For(l) => collect(std::slice::from_ref(&l.body), out),
            StmtKind::If { then, other, .. } => {
                collect(std::slice::from_ref(then), out);
                if let Some(o) = other {
                    collect(std::slice::from_ref(o), out);
                }
            }
            StmtKind::Block(v) => collect(v, out),
            _ => {}
        }
    }
}

fn assign(lhs: &Expr, op: AssignOp, rhs: &Expr, f: &mut Flops) {
    match op {
        AssignOp::Add | AssignOp::Sub => f.add_sub += 1.0,
        AssignOp::Mul => f.mul += 1.0,
        AssignOp::Div => f.div += 1.0,
        _ => {}
    }
    value(rhs, f);
    // The subscripts of the left side are addresses.
    if !matches!(lhs.kind, ExprKind::Access { .. } | ExprKind::Ident(_)) {
        value(lhs, f);
    }
}

fn local(parts: &[LocalPart], f: &mut Flops) {
    for p in parts {
        match p {
            LocalPart::Decl { init: Some(e), .. } => value(e, f),
            LocalPart::Decl { init: None, .. } => {}
            LocalPart::Assign { lhs, op, rhs, .. } => assign(lhs, *op, rhs, f),
            LocalPart::Stmt(s) => statement(s, f),
        }
    }
}

/// The operations of the assignments inside a compound statement's part.
fn statement(s: &Stmt, f: &mut Flops) {
    match &s.kind {
        StmtKind::Assign { lhs, op, rhs, .. } => assign(lhs, *op, rhs, f),
        StmtKind::Local { parts, .. } => local(parts, f),
        StmtKind::For(l) => statement(&l.body, f),
        StmtKind::If { then, other, .. } => {
            statement(then, f);
            if let Some(o) = other {
                statement(o, f);
            }
        }
        StmtKind::Block(v) => v.iter().for_each(|s| statement(s, f)),
        _ => {}
    }
}

/// The operations of evaluating `e` as a value.
fn value(e: &Expr, f: &mut Flops) {
    match &e.kind {
        ExprKind::Binary { op, lhs, rhs } => {
            match op {
                BinOp::Add | BinOp::Sub => f.add_sub += 1.0,
                BinOp::Mul => f.mul += 1.0,
                BinOp::Div => f.div += 1.0,
                _ => {}
            }
            value(lhs, f);
            value(rhs, f);
        }
        ExprKind::Call { name, args } => {
            if matches!(name.as_str(), "sqrt" | "sqrtf" | "sqrtl") {
                f.sqrt += 1.0;
            } else if !matches!(name.as_str(), "fabs" | "fabsf" | "abs" | "fmin" | "fmax") {
                f.calls += 1.0;
            }
            args.iter().for_each(|a| value(a, f));
        }
        ExprKind::Unary { op, expr } => {
            if !matches!(op, UnOp::Neg | UnOp::Plus) {
                return;
            }
            value(expr, f);
        }
        ExprKind::Ternary { cond, then, other } => {
            // Both branches' operations: an upper estimate of the one run.
            value(cond, f);
            value(then, f);
            value(other, f);
        }
        ExprKind::Cast { expr, .. } => value(expr, f),
        ExprKind::Access { .. }
        | ExprKind::Ident(_)
        | ExprKind::Int { .. }
        | ExprKind::Float(_)
        | ExprKind::Unsupported(_) => {}
    }
}
