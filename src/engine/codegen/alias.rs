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
