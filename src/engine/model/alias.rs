//! Run-time alias checks (issue 40): for a SCoP whose arrays may overlap
//! in memory (pointers `--detect` cannot prove apart, `Scop::alias_checks`),
//! the range of elements the SCoP reaches in each array, as expressions of
//! the parameters, from which the generated code checks that the address
//! ranges of every pair are disjoint before the transformed code runs.
//!
//! Exact in the sense that matters: the model treats distinct arrays as
//! distinct memory, so its dependences are all the dependences there are
//! exactly when no element one pair's arrays reach is shared. The check
//! compares boxes: per dimension the least and the greatest subscript the
//! SCoP uses (isl's `dim_min`/`dim_max` over its accesses within the
//! context). In row-major order the element at the least subscripts has
//! the lowest address of all those the SCoP reaches, and the one at the
//! greatest the highest (each inner subscript stays in its dimension: C's
//! rule for declared arrays, a checked assumption for delinearized ones),
//! so disjoint boxes' address ranges imply disjoint elements. The check
//! may see an overlap where there is none (two triangles of one block);
//! then the original runs, which is never wrong.

use super::*;
use crate::isl::AstExpr;

/// The elements a SCoP reaches in one array.
#[derive(Debug, Clone)]
pub struct Reach {
    /// The array (a name of `Scop::arrays`).
    pub array: String,
    /// Where it reaches no element for some parameter values of the
    /// context: the condition that it reaches one (its bounds are
    /// meaningless elsewhere). `None` when it always does.
    pub nonempty: Option<AstExpr>,
    /// Per dimension, the least and the greatest subscript.
    pub least: Vec<AstExpr>,
    pub greatest: Vec<AstExpr>,
}

/// The run-time alias check of a SCoP: the reach of every array of a
/// pair, and the pairs as indices into `reaches`.
#[derive(Debug, Clone, Default)]
pub struct AliasCheck {
    pub reaches: Vec<Reach>,
    pub pairs: Vec<(usize, usize)>,
}

impl AliasCheck {
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

/// The alias check of `scop` over the accesses `reads` and `writes`
/// (already within `context`); empty when the SCoP has no pair to check.
/// A pair one of whose arrays the SCoP never reaches within the context
/// needs no check.
pub(super) fn alias_check<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    context: &Set<'c>,
    reads: &UnionMap<'c>,
    writes: &UnionMap<'c>,
) -> Result<AliasCheck, EngineError> {
    let mut check = AliasCheck::default();
    if scop.alias_checks.is_empty() {
        return Ok(check);
    }
    let reached = reads.union(writes)?.range()?;
    let params = isl_names(&scop.parameters);
    let index = |name: &str, check: &mut AliasCheck| -> Result<Option<usize>, EngineError> {
        if let Some(k) = check.reaches.iter().position(|r| r.array == name) {
            return Ok(Some(k));
        }
        let Some(reach) = reach(ctx, scop, (&params, context), &reached, name)? else {
            return Ok(None);
        };
        check.reaches.push(reach);
        Ok(Some(check.reaches.len() - 1))
    };
    for pair in &scop.alias_checks {
        let a = index(&pair.first, &mut check)?;
        let b = index(&pair.second, &mut check)?;
        if let (Some(a), Some(b)) = (a, b) {
            check.pairs.push((a, b));
        }
    }
    // Arrays of no pair left (the other one never reached) are not read.
    let used: Vec<usize> = (0..check.reaches.len())
        .filter(|k| check.pairs.iter().any(|(a, b)| a == k || b == k))
        .collect();
    let reaches = used.iter().map(|&k| check.reaches[k].clone()).collect();
    let pairs = check
        .pairs
        .iter()
        .map(|(a, b)| {
            let at = |x: &usize| used.iter().position(|k| k == x).expect("a used reach");
            (at(a), at(b))
        })
        .collect();
    Ok(AliasCheck { reaches, pairs })
}

/// The reach of array `name` among the `reached` elements (all arrays');
/// `None` when the SCoP reaches none of its elements within the context.
fn reach<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    (params, context): (&str, &Set<'c>),
    reached: &UnionSet<'c>,
    name: &str,
) -> Result<Option<Reach>, EngineError> {
    let Some(array) = scop.arrays.iter().find(|a| a.name == name) else {
        // A scalar read as a parameter, or a value loaded once (its
        // address is that of the expression it is loaded from): one
        // element, always reached.
        if scop.parameters.iter().any(|p| p == name) {
            return Ok(Some(Reach {
                array: name.to_string(),
                nonempty: None,
                least: Vec::new(),
                greatest: Vec::new(),
            }));
        }
        // A scalar that scalar expansion (`exp=1`) replaced by an array:
        // its memory is no longer the one the check was asked for.
        return Err(EngineError::Unsupported {
            scop: scop.index,
            reason: format!(
                "`{name}` may overlap another array, and the rewritten SCoP no longer names it, so no run-time check can compare them"
            ),
        });
    };
    let dims: Vec<String> = (0..array.rank).map(|k| format!("d{k}")).collect();
    let universe = UnionSet::parse(
        ctx,
        &format!(
            "[{params}] -> {{ {}[{}] }}",
            isl::mangle(name),
            dims.join(", ")
        ),
    )?;
    let elements = reached.intersect(&universe)?;
    if elements.is_empty()? {
        return Ok(None);
    }
    let somewhere = elements.params()?.gist(context)?;
    let universe_params = Set::parse(ctx, &format!("[{params}] -> {{ : }}"))?;
    let nonempty = if universe_params.is_subset(&somewhere)? {
        None
    } else {
        Some(isl::expr_from_set(&somewhere)?)
    };
    let set = elements.to_set()?;
    let unbounded = || EngineError::Unsupported {
        scop: scop.index,
        reason: format!(
            "the elements it reaches in `{name}` have no bound in some dimension, so no run-time check can tell whether `{name}` overlaps another array"
        ),
    };
    let mut least = Vec::with_capacity(array.rank);
    let mut greatest = Vec::with_capacity(array.rank);
    for d in 0..array.rank {
        least.push(isl::min_of_dim(&set, d)?.ok_or_else(unbounded)?);
        greatest.push(isl::max_of_dim(&set, d)?.ok_or_else(unbounded)?);
    }
    Ok(Some(Reach {
        array: name.to_string(),
        nonempty,
        least,
        greatest,
    }))
}
