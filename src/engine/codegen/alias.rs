//! The C text of a SCoP's run-time alias check (see `model/alias.rs`):
//! for every pair of arrays that may overlap, their address ranges, from
//! the element at the least subscripts to one past the element at the
//! greatest, compared as integers (`__UINTPTR_TYPE__`: comparing pointers
//! into distinct objects with `<` is undefined in C, comparing their
//! integer values is not).

use super::print::guard_to_c;
use crate::engine::model::EngineError;
use crate::engine::model::{AliasCheck, Model, Reach};
use crate::frontend::scop::Scop;
use crate::isl::{AstExpr, Ctx};

/// The check's C condition; `None` when there is no pair to check.
pub(super) fn alias_to_c(check: &AliasCheck, scop: &Scop) -> Option<String> {
    if check.is_empty() {
        return None;
    }
    let pairs: Vec<String> = check
        .pairs
        .iter()
        .map(|&(a, b)| pair_to_c(&check.reaches[a], &check.reaches[b], scop))
        .collect();
    Some(pairs.join(" && "))
}

/// The pair's arrays are apart: one range ends where the other begins,
/// or before; or one of them is not reached for these parameters.
fn pair_to_c(a: &Reach, b: &Reach, scop: &Scop) -> String {
    let apart = format!(
        "{} <= {} || {} <= {}",
        end(b, scop),
        start(a, scop),
        end(a, scop),
        start(b, scop)
    );
    let mut unreached: Vec<String> = Vec::new();
    for e in [a, b].iter().filter_map(|r| r.nonempty.as_ref()) {
        let c = format!("!({})", guard_to_c(e));
        if !unreached.contains(&c) {
            unreached.push(c);
        }
    }
    if unreached.is_empty() {
        format!("({apart})")
    } else {
        format!("({} || {apart})", unreached.join(" || "))
    }
}

/// The address of the array's element at `subscripts` (C text).
fn element(reach: &Reach, subscripts: &[AstExpr], scop: &Scop) -> String {
    if let Some(load) = scop.invariant_loads.iter().find(|l| l.name == reach.array) {
        return format!("&({})", load.expr);
    }
    let subs: Vec<String> = subscripts.iter().map(guard_to_c).collect();
    match scop.delinearized.iter().find(|d| d.array == reach.array) {
        Some(d) => format!("&{}", d.element(&subs)),
        None => {
            let mut s = format!("&{}", reach.array);
            for x in &subs {
                s.push_str(&format!("[{x}]"));
            }
            s
        }
    }
}

fn start(r: &Reach, scop: &Scop) -> String {
    format!("(__UINTPTR_TYPE__)({})", element(r, &r.least, scop))
}

fn end(r: &Reach, scop: &Scop) -> String {
    format!("(__UINTPTR_TYPE__)({} + 1)", element(r, &r.greatest, scop))
}

/// The run-time alias check the transformed code of `scop` makes (C
/// text), for the report of `scop`; `None` when it makes none.
pub fn alias_check_c(scop: &Scop) -> Result<Option<String>, EngineError> {
    if scop.alias_checks.is_empty() {
        return Ok(None);
    }
    let ctx = Ctx::new();
    let model = Model::new(&ctx, scop, None)?;
    Ok(alias_to_c(&model.alias, scop))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::scop::AliasPair;
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    /// The check of a marked SCoP given `pairs` (a marked region has none
    /// of its own).
    fn check(text: &str, pairs: &[(&str, &str)]) -> Option<String> {
        let src = parse_source(Path::new("t.c"), text.to_string(), &Options::default()).unwrap();
        let mut scop = src.scops[0].clone();
        scop.alias_checks = pairs
            .iter()
            .map(|(a, b)| AliasPair {
                first: a.to_string(),
                second: b.to_string(),
            })
            .collect();
        alias_check_c(&scop).unwrap()
    }

    #[test]
    fn ranges_come_from_the_least_and_greatest_subscripts() {
        // A triangle: row i reaches columns 0..i; B from row 1 on.
        let text = "void f(int n, double A[100][100], double B[100][100]) {\n  int i, j;\n#pragma scop\n  for (i = 1; i < n; i++)\n    for (j = 0; j < i; j++)\n      B[i][j] = A[i - 1][j];\n#pragma endscop\n}\n";
        assert_eq!(
            check(text, &[("A", "B")]).as_deref(),
            Some(
                "(!((long)(n) >= 2) || (__UINTPTR_TYPE__)(&B[(long)(n) - 1][(long)(n) - 2] + 1) <= (__UINTPTR_TYPE__)(&A[0][0]) || (__UINTPTR_TYPE__)(&A[(long)(n) - 2][(long)(n) - 2] + 1) <= (__UINTPTR_TYPE__)(&B[1][0]))"
            )
        );
        assert_eq!(check(text, &[]), None);
    }

    #[test]
    fn a_scalar_parameter_is_its_own_address() {
        let text = "int len;\nvoid f(int *p) {\n  int i;\n#pragma scop\n  for (i = 0; i < len; i++)\n    p[i] = 1;\n#pragma endscop\n}\n";
        assert_eq!(
            check(text, &[("len", "p")]).as_deref(),
            Some(
                "((__UINTPTR_TYPE__)(&p[(long)(len) - 1] + 1) <= (__UINTPTR_TYPE__)(&len) || (__UINTPTR_TYPE__)(&len + 1) <= (__UINTPTR_TYPE__)(&p[0]))"
            )
        );
        // A name the SCoP does not have is no check it can make.
        let e = {
            let src =
                parse_source(Path::new("t.c"), text.to_string(), &Options::default()).unwrap();
            let mut scop = src.scops[0].clone();
            scop.alias_checks = vec![AliasPair {
                first: "gone".into(),
                second: "p".into(),
            }];
            alias_check_c(&scop).unwrap_err()
        };
        assert!(e.to_string().contains("no longer names it"), "{e}");
    }
}
