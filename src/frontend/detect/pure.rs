//! Small functions of the file that are pure by inspection (issue 40):
//! a body that is one `return` of an expression over the function's own
//! scalar parameters, literals, operators and calls to pure functions
//! (`static double sq(double x) { return x * x; }`). A call to one in a
//! nest is a pure call, as if the user had passed `--pure`; no memory
//! read (a subscript, a member, `*p`, a global), assignment, `++`/`--` or
//! other call is allowed, so the value depends on the arguments only.

use super::clang::{Function, Kind, Node};
use std::collections::HashSet;

/// The functions of `functions` that are pure given the pure functions
/// `known`, in the order found (a pure function may call another one of
/// the file: found again until nothing changes).
pub(super) fn inferred(functions: &[Function], known: &HashSet<String>) -> Vec<String> {
    let mut pure = known.clone();
    let mut found = Vec::new();
    loop {
        let before = found.len();
        for f in functions {
            if !pure.contains(&f.name) && returns_pure(&f.body, &pure) {
                pure.insert(f.name.clone());
                found.push(f.name.clone());
            }
        }
        if found.len() == before {
            return found;
        }
    }
}

/// `{ return e; }` with `e` pure.
fn returns_pure(body: &Node, pure: &HashSet<String>) -> bool {
    match (body.kind, body.children.as_slice()) {
        (Kind::Compound, [ret]) if ret.kind == Kind::Return => {
            matches!(ret.children.as_slice(), [e] if value(e, pure))
        }
        _ => false,
    }
}

/// An expression whose value depends on scalar parameters only.
fn value(e: &Node, pure: &HashSet<String>) -> bool {
    let ok = match e.kind {
        Kind::Literal | Kind::Other => true,
        Kind::DeclRef => match &e.var {
            Some(v) if v.variable => v.parameter && !v.pointer && !v.array,
            // A function name or an enumerator.
            _ => true,
        },
        Kind::Binary => {
            e.op.as_deref()
                .is_some_and(|op| !op.ends_with('=') || matches!(op, "==" | "!=" | "<=" | ">="))
        }
        Kind::Unary => matches!(e.op.as_deref(), Some("-" | "+" | "!" | "~")),
        Kind::Call => pure.contains(&e.name),
        _ => false,
    };
    ok && e.children.iter().all(|c| value(c, pure))
}
