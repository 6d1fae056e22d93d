//! C text of isl AST expressions: integer-exact (floor division through a
//! helper macro, plain `/` only where isl proved the dividend
//! non-negative) and minimally parenthesized.

use crate::isl::{AstExpr, AstOp};

/// Names of the helper macros the generated code may use.
pub(crate) const FLOORD: &str = "polytune_floord";
pub(crate) const MIN: &str = "polytune_min";
pub(crate) const MAX: &str = "polytune_max";

/// `#define`s of the helpers (emitted at the top of a generated SCoP).
pub(crate) fn helper_defines() -> String {
    format!(
        "#define {FLOORD}(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))\n\
         #define {MIN}(a, b) ((a) < (b) ? (a) : (b))\n\
         #define {MAX}(a, b) ((a) > (b) ? (a) : (b))\n"
    )
}

pub(crate) fn helper_undefs() -> String {
    format!("#undef {FLOORD}\n#undef {MIN}\n#undef {MAX}\n")
}

fn prec(e: &AstExpr) -> u8 {
    match e {
        AstExpr::Int(v) if *v < 0 => 8,
        AstExpr::Int(_) | AstExpr::Id(_) => 10,
        AstExpr::Op(op, _) => match op {
            AstOp::Cond | AstOp::Select => 1,
            AstOp::Or | AstOp::OrElse => 2,
            AstOp::And | AstOp::AndThen => 3,
            AstOp::Eq => 4,
            AstOp::Le | AstOp::Lt | AstOp::Ge | AstOp::Gt => 5,
            AstOp::Add | AstOp::Sub => 6,
            AstOp::Mul | AstOp::Div | AstOp::PdivQ | AstOp::PdivR | AstOp::ZdivR => 7,
            AstOp::Minus => 8,
            _ => 10,
        },
    }
}

/// C text; `rename` maps isl's names (loop iterators) to ours.
pub(crate) fn to_c(e: &AstExpr, rename: &dyn Fn(&str) -> String) -> String {
    let mut s = String::new();
    write(&mut s, e, 0, rename);
    s
}

fn write(out: &mut String, e: &AstExpr, min: u8, rename: &dyn Fn(&str) -> String) {
    let p = prec(e);
    let paren = p < min;
    if paren {
        out.push('(');
    }
    match e {
        AstExpr::Int(v) => out.push_str(&v.to_string()),
        AstExpr::Id(name) => out.push_str(&rename(name)),
        AstExpr::Op(op, args) => {
            let bin = |out: &mut String, sym: &str, left_min: u8, right_min: u8| {
                write(out, &args[0], left_min, rename);
                out.push_str(sym);
                write(out, &args[1], right_min, rename);
            };
            match op {
                AstOp::And | AstOp::AndThen => bin(out, " && ", 3, 4),
                AstOp::Or | AstOp::OrElse => bin(out, " || ", 2, 3),
                AstOp::Eq => bin(out, " == ", 5, 5),
                AstOp::Le => bin(out, " <= ", 6, 6),
                AstOp::Lt => bin(out, " < ", 6, 6),
                AstOp::Ge => bin(out, " >= ", 6, 6),
                AstOp::Gt => bin(out, " > ", 6, 6),
                AstOp::Add => bin(out, " + ", 6, 7),
                AstOp::Sub => bin(out, " - ", 6, 7),
                AstOp::Mul => bin(out, " * ", 7, 8),
                AstOp::Div | AstOp::PdivQ => bin(out, " / ", 7, 8),
                AstOp::PdivR | AstOp::ZdivR => bin(out, " % ", 7, 8),
                AstOp::Minus => {
                    out.push('-');
                    write(out, &args[0], 9, rename);
                }
                AstOp::Cond | AstOp::Select => {
                    write(out, &args[0], 2, rename);
                    out.push_str(" ? ");
                    write(out, &args[1], 1, rename);
                    out.push_str(" : ");
                    write(out, &args[2], 1, rename);
                }
                AstOp::FdivQ => call(out, FLOORD, args, rename),
                AstOp::Min | AstOp::Max => {
                    // n-ary: fold as f(a, f(b, c)).
                    let name = if *op == AstOp::Min { MIN } else { MAX };
                    nary(out, name, args, rename);
                }
                AstOp::Call => {
                    let name = match &args[0] {
                        AstExpr::Id(n) => n.clone(),
                        other => to_c(other, rename),
                    };
                    call(out, &name, &args[1..], rename);
                }
                AstOp::Access | AstOp::Member | AstOp::AddressOf => {
                    out.push_str("/* unsupported isl expression */0");
                }
            }
        }
    }
    if paren {
        out.push(')');
    }
}

fn call(out: &mut String, name: &str, args: &[AstExpr], rename: &dyn Fn(&str) -> String) {
    out.push_str(name);
    out.push('(');
    for (k, a) in args.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        write(out, a, 0, rename);
    }
    out.push(')');
}

fn nary(out: &mut String, name: &str, args: &[AstExpr], rename: &dyn Fn(&str) -> String) {
    if args.len() == 1 {
        write(out, &args[0], 0, rename);
        return;
    }
    out.push_str(name);
    out.push('(');
    write(out, &args[0], 0, rename);
    out.push_str(", ");
    nary(out, name, &args[1..], rename);
    out.push(')');
}

/// `e + k`, folded when `e` is a sum ending in a constant.
pub(crate) fn plus(e: &AstExpr, k: i64) -> AstExpr {
    if k == 0 {
        return e.clone();
    }
    match e {
        AstExpr::Int(v) => AstExpr::Int(v + k),
        AstExpr::Op(AstOp::Add, a) if matches!(a[1], AstExpr::Int(_)) => {
            let AstExpr::Int(v) = a[1] else {
                unreachable!()
            };
            plus(&a[0], v + k)
        }
        _ if k < 0 => AstExpr::Op(AstOp::Sub, vec![e.clone(), AstExpr::Int(-k)]),
        _ => AstExpr::Op(AstOp::Add, vec![e.clone(), AstExpr::Int(k)]),
    }
}

/// Replaces identifier `name` by `by` everywhere in `e`.
pub(crate) fn substitute(e: &AstExpr, name: &str, by: &AstExpr) -> AstExpr {
    match e {
        AstExpr::Id(n) if n == name => by.clone(),
        AstExpr::Op(op, args) => {
            AstExpr::Op(*op, args.iter().map(|a| substitute(a, name, by)).collect())
        }
        other => other.clone(),
    }
}

/// Whether `e` mentions identifier `name`.
pub(crate) fn mentions(e: &AstExpr, name: &str) -> bool {
    match e {
        AstExpr::Id(n) => n == name,
        AstExpr::Op(_, args) => args.iter().any(|a| mentions(a, name)),
        AstExpr::Int(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> AstExpr {
        AstExpr::Id(s.into())
    }

    #[test]
    fn prints_with_minimal_parentheses() {
        let e = AstExpr::Op(
            AstOp::Mul,
            vec![
                AstExpr::Int(32),
                AstExpr::Op(AstOp::Add, vec![id("c0"), AstExpr::Int(1)]),
            ],
        );
        assert_eq!(to_c(&e, &|s| s.to_string()), "32 * (c0 + 1)");
        let e = AstExpr::Op(
            AstOp::Sub,
            vec![id("a"), AstExpr::Op(AstOp::Sub, vec![id("b"), id("c")])],
        );
        assert_eq!(to_c(&e, &|s| s.to_string()), "a - (b - c)");
        let e = AstExpr::Op(AstOp::Min, vec![id("a"), id("b"), id("c")]);
        assert_eq!(
            to_c(&e, &|s| s.to_string()),
            "polytune_min(a, polytune_min(b, c))"
        );
        let e = AstExpr::Op(
            AstOp::FdivQ,
            vec![AstExpr::Op(AstOp::Minus, vec![id("n")]), AstExpr::Int(32)],
        );
        assert_eq!(to_c(&e, &|s| format!("x_{s}")), "polytune_floord(-x_n, 32)");
        assert_eq!(to_c(&plus(&plus(&id("i"), 3), -3), &|s| s.to_string()), "i");
    }
}
