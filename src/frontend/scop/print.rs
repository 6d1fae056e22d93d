//! Regenerates C from the parsed SCoP tree. The output parses back to the
//! same tree (same operators, same association, literals as written), so
//! the compiler sees the same computation as in the original source.

use super::ast::{AssignOp, Expr, ExprKind, ForLoop, LocalPart, Stmt, StmtKind, UnOp};
use std::fmt::Write;

const PREC_TERNARY: u8 = 0;
const PREC_UNARY: u8 = 11;
const PREC_POSTFIX: u8 = 12;
const PREC_PRIMARY: u8 = 13;

fn precedence(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Ternary { .. } => PREC_TERNARY,
        ExprKind::Binary { op, .. } => op.precedence(),
        ExprKind::Unary {
            op: UnOp::PostInc | UnOp::PostDec,
            ..
        } => PREC_POSTFIX,
        ExprKind::Unary { .. } | ExprKind::Cast { .. } => PREC_UNARY,
        ExprKind::Access { .. } | ExprKind::Call { .. } => PREC_POSTFIX,
        _ => PREC_PRIMARY,
    }
}

/// C text of an expression.
pub fn expr_to_c(e: &Expr) -> String {
    expr_to_c_with(e, &|_| None)
}

/// Replaces identifiers (loop iterators) by C text, given with the C
/// precedence of its outermost operator (see [`PREC_ADDITIVE`]); the
/// printer adds parentheses where the context binds tighter.
pub(crate) type Substitution<'a> = &'a dyn Fn(&str) -> Option<(String, u8)>;

/// Precedence of `a + b` / `a - b`.
pub const PREC_ADDITIVE: u8 = 9;
/// Precedence of a name or a literal.
pub const PREC_ATOM: u8 = PREC_PRIMARY;

/// C text of an expression with identifiers substituted.
pub fn expr_to_c_with(e: &Expr, subst: Substitution<'_>) -> String {
    let mut s = String::new();
    write_expr(&mut s, e, PREC_TERNARY, subst, false);
    s
}

/// Writes `e` in a context that binds at `min_prec`. `in_call`: inside a
/// call's arguments, where the call may be a macro whose expansion pastes
/// the argument's text into its own: there a substituted iterator that is
/// not a name or a literal is parenthesized (`SQ(i)` with `i` = `c2 + 1`
/// is `SQ((c2 + 1))`, not `SQ(c2 + 1)`, which `#define SQ(x) x*x` reads as
/// `c2 + 1*c2 + 1`). The source's own parentheses are printed everywhere.
fn write_expr(out: &mut String, e: &Expr, min_prec: u8, subst: Substitution<'_>, in_call: bool) {
    let paren = precedence(e) < min_prec || e.parens;
    if paren {
        out.push('(');
    }
    match &e.kind {
        ExprKind::Int { text, .. } => out.push_str(text),
        ExprKind::Float(text) => out.push_str(text),
        ExprKind::Ident(name) => match subst(name) {
            // Inside the source's own parentheses (printed above) it
            // needs none of its own.
            Some((t, p)) if !e.parens && (p < min_prec || (in_call && p < PREC_ATOM)) => {
                out.push('(');
                out.push_str(&t);
                out.push(')');
            }
            Some((t, _)) => out.push_str(&t),
            None => out.push_str(name),
        },
        ExprKind::Access { name, subscripts } => {
            out.push_str(name);
            for s in subscripts {
                out.push('[');
                write_expr(out, s, PREC_TERNARY, subst, false);
                out.push(']');
            }
        }
        ExprKind::Call { name, args } => {
            out.push_str(name);
            out.push('(');
            for (k, a) in args.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_expr(out, a, PREC_TERNARY, subst, true);
            }
            out.push(')');
        }
        ExprKind::Unary { op, expr } => {
            let (prefix, postfix) = match op {
                UnOp::Neg => ("-", ""),
                UnOp::Plus => ("+", ""),
                UnOp::Not => ("!", ""),
                UnOp::BitNot => ("~", ""),
                UnOp::Deref => ("*", ""),
                UnOp::AddrOf => ("&", ""),
                UnOp::PreInc => ("++", ""),
                UnOp::PreDec => ("--", ""),
                UnOp::PostInc => ("", "++"),
                UnOp::PostDec => ("", "--"),
            };
            out.push_str(prefix);
            // Avoid `- -x` turning into `--x` and `+ +x` into `++x`.
            let inner_sign_clash = matches!(
                (&expr.kind, op),
                (
                    ExprKind::Unary {
                        op: UnOp::Neg | UnOp::PreDec,
                        ..
                    },
                    UnOp::Neg
                ) | (
                    ExprKind::Unary {
                        op: UnOp::Plus | UnOp::PreInc,
                        ..
                    },
                    UnOp::Plus
                )
            );
            let inner_min = if postfix.is_empty() {
                PREC_UNARY
            } else {
                PREC_POSTFIX
            };
            if inner_sign_clash && !expr.parens {
                out.push('(');
                write_expr(out, expr, PREC_TERNARY, subst, in_call);
                out.push(')');
            } else if inner_sign_clash {
                // Its own parentheses separate the signs.
                write_expr(out, expr, PREC_TERNARY, subst, in_call);
            } else {
                write_expr(out, expr, inner_min, subst, in_call);
            }
            out.push_str(postfix);
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let p = op.precedence();
            write_expr(out, lhs, p, subst, in_call);
            let _ = write!(out, " {} ", op.symbol());
            write_expr(out, rhs, p + 1, subst, in_call);
        }
        ExprKind::Ternary { cond, then, other } => {
            write_expr(out, cond, 1, subst, in_call);
            out.push_str(" ? ");
            write_expr(out, then, PREC_TERNARY, subst, in_call);
            out.push_str(" : ");
            write_expr(out, other, PREC_TERNARY, subst, in_call);
        }
        ExprKind::Cast { ty, expr } => {
            let _ = write!(out, "({ty})");
            write_expr(out, expr, PREC_UNARY, subst, in_call);
        }
        ExprKind::Unsupported(what) => {
            let _ = write!(out, "/* unsupported: {what} */");
        }
    }
    if paren {
        out.push(')');
    }
}

/// C text of a statement list, each line prefixed with `indent` plus two
/// spaces per nesting level.
pub(crate) fn stmts_to_c(stmts: &[Stmt], indent: &str) -> String {
    let mut out = String::new();
    for s in stmts {
        write_stmt(&mut out, s, indent, &|_| None);
    }
    out
}

/// C text of a compound block ([`LocalPart::is_compound`]) at `indent`,
/// with identifiers substituted and `declared` (name, C type) declared
/// first: the variables its loops need private to each execution.
pub fn compound_to_c(
    parts: &[LocalPart],
    declared: &[(String, String)],
    indent: &str,
    subst: Substitution<'_>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{indent}{{");
    for (name, ty) in declared {
        let _ = writeln!(out, "{indent}  {ty} {name};");
    }
    write_parts(&mut out, parts, indent, subst);
    let _ = writeln!(out, "{indent}}}");
    out
}

fn write_parts(out: &mut String, parts: &[LocalPart], indent: &str, subst: Substitution<'_>) {
    let inner = format!("{indent}  ");
    for p in parts {
        match p {
            LocalPart::Stmt(s) => write_stmt(out, s, &inner, subst),
            p => {
                let _ = writeln!(out, "{inner}{};", local_part_to_c(p, subst));
            }
        }
    }
}

fn write_stmt(out: &mut String, s: &Stmt, indent: &str, subst: Substitution<'_>) {
    let expr_to_c = |e: &Expr| expr_to_c_with(e, subst);
    match &s.kind {
        StmtKind::For(l) => {
            let _ = write!(out, "{indent}{}", for_header_with(l, subst));
            write_body(out, &l.body, indent, false, subst);
        }
        StmtKind::If { cond, then, other } => {
            let _ = write!(out, "{indent}if ({})", expr_to_c(cond));
            // Brace a non-block then-branch when an else follows, so the
            // else cannot attach to a nested if.
            write_body(
                out,
                then,
                indent,
                other.is_some() && ends_with_open_if(then),
                subst,
            );
            if let Some(other) = other {
                let _ = write!(out, "{indent}else");
                write_body(out, other, indent, false, subst);
            }
        }
        StmtKind::Block(stmts) => {
            let _ = writeln!(out, "{indent}{{");
            let inner = format!("{indent}  ");
            for st in stmts {
                write_stmt(out, st, &inner, subst);
            }
            let _ = writeln!(out, "{indent}}}");
        }
        StmtKind::Assign { lhs, op, rhs, .. } => {
            let _ = writeln!(
                out,
                "{indent}{} {} {};",
                expr_to_c(lhs),
                op.symbol(),
                expr_to_c(rhs)
            );
        }
        StmtKind::Local { parts, .. } => {
            let _ = writeln!(out, "{indent}{{");
            write_parts(out, parts, indent, subst);
            let _ = writeln!(out, "{indent}}}");
        }
        StmtKind::Expr(e) => {
            let _ = writeln!(out, "{indent}{};", expr_to_c(e));
        }
        StmtKind::Unsupported(what) => {
            let _ = writeln!(out, "{indent}/* unsupported: {what} */");
        }
        StmtKind::Empty => {
            let _ = writeln!(out, "{indent};");
        }
    }
}

fn write_body(
    out: &mut String,
    body: &Stmt,
    indent: &str,
    force_braces: bool,
    subst: Substitution<'_>,
) {
    match &body.kind {
        StmtKind::Block(stmts) => {
            out.push_str(" {\n");
            let inner = format!("{indent}  ");
            for st in stmts {
                write_stmt(out, st, &inner, subst);
            }
            let _ = writeln!(out, "{indent}}}");
        }
        StmtKind::Local { parts, .. } => {
            out.push_str(" {\n");
            write_parts(out, parts, indent, subst);
            let _ = writeln!(out, "{indent}}}");
        }
        _ if force_braces => {
            out.push_str(" {\n");
            write_stmt(out, body, &format!("{indent}  "), subst);
            let _ = writeln!(out, "{indent}}}");
        }
        _ => {
            out.push('\n');
            write_stmt(out, body, &format!("{indent}  "), subst);
        }
    }
}

/// Whether an `else` printed after `s` would attach to an `if` inside it.
fn ends_with_open_if(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::If { other: None, .. } => true,
        StmtKind::If { other: Some(o), .. } => ends_with_open_if(o),
        StmtKind::For(l) => ends_with_open_if(&l.body),
        _ => false,
    }
}

/// `for (init; cond; step)` of a loop.
pub fn for_header(l: &ForLoop) -> String {
    for_header_with(l, &|_| None)
}

/// [`for_header`] with identifiers substituted (not the loop's own).
fn for_header_with(l: &ForLoop, subst: Substitution<'_>) -> String {
    let expr_to_c = |e: &Expr| expr_to_c_with(e, subst);
    let decl = match &l.declared_type {
        Some(t) => format!("{t} "),
        None => String::new(),
    };
    let step = match l.step.stride {
        Some(1) => format!("{}++", l.iterator),
        Some(-1) => format!("{}--", l.iterator),
        Some(c) if c > 0 => format!("{} += {c}", l.iterator),
        Some(c) => format!("{} -= {}", l.iterator, -(c as i128)),
        None => match &l.step.text_expr {
            Some(e) => format!("{} = {}", l.iterator, expr_to_c(e)),
            None => format!("/* unsupported step of {} */", l.iterator),
        },
    };
    format!(
        "for ({decl}{} = {}; {}; {step})",
        l.iterator,
        expr_to_c(&l.init),
        expr_to_c(&l.cond)
    )
}

/// `lhs op rhs` of an assignment, without the semicolon, with
/// identifiers substituted.
pub fn assignment_to_c(lhs: &Expr, op: AssignOp, rhs: &Expr, subst: Substitution<'_>) -> String {
    format!(
        "{} {} {}",
        expr_to_c_with(lhs, subst),
        op.symbol(),
        expr_to_c_with(rhs, subst)
    )
}

/// One step of a local block as C (without the `;`), identifiers
/// substituted; a statement part on one line.
pub fn local_part_to_c(p: &LocalPart, subst: Substitution<'_>) -> String {
    let c = |e: &Expr| expr_to_c_with(e, subst);
    match p {
        LocalPart::Decl {
            ty,
            name,
            init: Some(e),
            ..
        } => format!("{ty} {name} = {}", c(e)),
        LocalPart::Decl { ty, name, .. } => format!("{ty} {name}"),
        LocalPart::Assign { lhs, op, rhs, .. } => {
            format!("{} {} {}", c(lhs), op.symbol(), c(rhs))
        }
        LocalPart::Stmt(s) => {
            let mut out = String::new();
            write_stmt(&mut out, s, "", subst);
            let words: Vec<&str> = out.split_whitespace().collect();
            words.join(" ").trim_end_matches(';').to_string()
        }
    }
}
