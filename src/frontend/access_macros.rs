//! Calls of the file's element macros in a parsed SCoP (`C(i, j)` with
//! `#define C(i, j) c[(i) + (j) * ldc]`, see
//! [`super::macros::access_macros`]) are replaced by the element their
//! expansion names, as the preprocessor would replace them: the model
//! reads and writes that element, and the generated code names it
//! (`c[(c2) + (c0) * ldc]`). Arguments are expanded first and pasted as
//! they are written; a macro is not expanded again inside its own
//! expansion.

use super::error::SpanError;
use super::macros::Expansion;
use super::scop::ast::{Expr, ExprKind, LocalPart, Stmt, StmtKind};
use std::collections::HashMap;

type Macros = HashMap<String, Expansion>;

/// Expands every element macro call in `stmts`.
pub(super) fn expand(stmts: &mut [Stmt], m: &Macros) -> Result<(), SpanError> {
    if m.is_empty() {
        return Ok(());
    }
    for s in stmts {
        stmt(s, m)?;
    }
    Ok(())
}

fn stmt(s: &mut Stmt, m: &Macros) -> Result<(), SpanError> {
    let e = |x: &mut Expr| expr(x, m, &mut Vec::new());
    match &mut s.kind {
        StmtKind::For(l) => {
            e(&mut l.init)?;
            e(&mut l.cond)?;
            if let Some(x) = &mut l.step.text_expr {
                e(x)?;
            }
            stmt(&mut l.body, m)?;
        }
        StmtKind::If { cond, then, other } => {
            e(cond)?;
            stmt(then, m)?;
            if let Some(o) = other {
                stmt(o, m)?;
            }
        }
        StmtKind::Block(v) => {
            for x in v {
                stmt(x, m)?;
            }
        }
        StmtKind::Assign { lhs, rhs, .. } => {
            e(lhs)?;
            e(rhs)?;
        }
        StmtKind::Local { parts, .. } => {
            for p in parts {
                match p {
                    LocalPart::Decl { init: Some(x), .. } => e(x)?,
                    LocalPart::Decl { .. } => {}
                    LocalPart::Assign { lhs, rhs, .. } => {
                        e(lhs)?;
                        e(rhs)?;
                    }
                    LocalPart::Stmt(x) => stmt(x, m)?,
                }
            }
        }
        StmtKind::Expr(x) => e(x)?,
        StmtKind::Unsupported(_) | StmtKind::Empty => {}
    }
    Ok(())
}

/// `blocked`: the macros whose expansion `e` is part of.
fn expr(e: &mut Expr, m: &Macros, blocked: &mut Vec<String>) -> Result<(), SpanError> {
    match &mut e.kind {
        ExprKind::Access { subscripts: v, .. } | ExprKind::Call { args: v, .. } => {
            for x in v {
                expr(x, m, blocked)?;
            }
        }
        ExprKind::Unary { expr: x, .. } | ExprKind::Cast { expr: x, .. } => expr(x, m, blocked)?,
        ExprKind::Binary { lhs, rhs, .. } => {
            expr(lhs, m, blocked)?;
            expr(rhs, m, blocked)?;
        }
        ExprKind::Ternary { cond, then, other } => {
            expr(cond, m, blocked)?;
            expr(then, m, blocked)?;
            expr(other, m, blocked)?;
        }
        _ => {}
    }
    let ExprKind::Call { name, args } = &e.kind else {
        return Ok(());
    };
    let Some(x) = m.get(name).filter(|_| !blocked.contains(name)) else {
        return Ok(());
    };
    let Some(mut new) = x.call(name, args, e.span)? else {
        return Err(SpanError::new(
            e.span,
            format!(
                "macro `{name}` takes {} arguments, not {}",
                x.params.len(),
                args.len()
            ),
        ));
    };
    blocked.push(name.clone());
    let r = expr(&mut new, m, blocked);
    blocked.pop();
    r?;
    new.parens |= e.parens;
    *e = new;
    Ok(())
}
