//! The footprint of a bare kernel's arrays: the range of every subscript
//! over the elements its SCoPs touch at the driver's parameter values
//! (isl), and the check that it stays inside the arrays the driver
//! allocates.

use super::DriverError;
use crate::frontend::scop::{Scop, isl_names};
use crate::isl::{Ctx, DimRange, Set, UnionMap, UnionSet, mangle};
use std::collections::HashMap;

/// `Err` with what goes out of bounds when the footprint leaves the box.
pub(super) fn check_footprint(ranges: &[DimRange], sizes: &[i64]) -> Result<(), String> {
    if ranges.len() != sizes.len() {
        return Err(format!(
            "with {} subscripts, but it is declared with {} dimensions",
            ranges.len(),
            sizes.len()
        ));
    }
    for (d, (r, &n)) in ranges.iter().zip(sizes).enumerate() {
        match *r {
            DimRange::Empty => {}
            DimRange::Unbounded => return Err(format!("without bound in dimension {}", d + 1)),
            DimRange::Between(lo, _) if lo < 0 => {
                return Err(format!("at index {lo} in dimension {}", d + 1));
            }
            DimRange::Between(_, hi) if hi >= n => {
                return Err(format!(
                    "at index {hi} in dimension {}, whose extent is {n}",
                    d + 1
                ));
            }
            DimRange::Between(..) => {}
        }
    }
    Ok(())
}

/// Per array of the SCoPs (rank at least 1): the range of each subscript
/// over every element they read or write at the values of `env`.
pub(super) fn footprints(
    scops: &[&Scop],
    env: &dyn Fn(&str) -> Option<i64>,
) -> Result<HashMap<String, Vec<DimRange>>, DriverError> {
    let internal = |e: crate::isl::IslError| DriverError::Internal(e.to_string());
    let ctx = Ctx::new();
    let mut out: HashMap<String, Vec<DimRange>> = HashMap::new();
    for scop in scops {
        let mut accessed = UnionMap::parse(&ctx, &scop.reads())
            .and_then(|r| r.union(&UnionMap::parse(&ctx, &scop.all_writes())?))
            .and_then(|a| a.intersect_domain(&UnionSet::parse(&ctx, &scop.domains())?))
            .map_err(internal)?;
        if !scop.parameters.is_empty() {
            let fixed: Vec<String> = scop
                .parameters
                .iter()
                .map(|p| format!("{} = {}", mangle(p), env(p).expect("checked by the caller")))
                .collect();
            let text = format!(
                "[{}] -> {{ : {} }}",
                isl_names(&scop.parameters),
                fixed.join(" and ")
            );
            accessed = Set::parse(&ctx, &text)
                .and_then(|s| accessed.intersect_params(&s))
                .map_err(internal)?;
        }
        let elements = accessed.range().map_err(internal)?;
        for a in scop.arrays.iter().filter(|a| a.rank > 0) {
            let dims: Vec<String> = (0..a.rank).map(|d| format!("d{d}")).collect();
            let filter = format!("{{ {}[{}] }}", mangle(&a.name), dims.join(", "));
            let mine = UnionSet::parse(&ctx, &filter)
                .and_then(|f| elements.intersect(&f))
                .map_err(internal)?;
            let ranges: Vec<DimRange> = if mine.is_empty().map_err(internal)? {
                vec![DimRange::Empty; a.rank]
            } else {
                let set = mine.to_set().map_err(internal)?;
                (0..a.rank)
                    .map(|d| set.dim_range(d))
                    .collect::<Result<_, _>>()
                    .map_err(internal)?
            };
            // A delinearized array is one-dimensional in C.
            let ranges = match scop.delinearized(&a.name) {
                Some(d) => vec![linear_range(&ranges, &d.sizes, env)],
                None => ranges,
            };
            let merged = match out.remove(&a.name) {
                Some(old) if old.len() == ranges.len() => old
                    .into_iter()
                    .zip(ranges)
                    .map(|(x, y)| merge(x, y))
                    .collect(),
                _ => ranges,
            };
            out.insert(a.name.clone(), merged);
        }
    }
    Ok(out)
}

/// The range of the linearized subscript over the box of the
/// multi-dimensional one (`sizes`: every dimension's but the outermost).
fn linear_range(
    ranges: &[DimRange],
    sizes: &[String],
    env: &dyn Fn(&str) -> Option<i64>,
) -> DimRange {
    let mut stride: i64 = 1;
    let (mut lo, mut hi) = (0i64, 0i64);
    for (k, r) in ranges.iter().enumerate().rev() {
        let DimRange::Between(l, h) = *r else {
            return *r;
        };
        let next = |acc: i64, v: i64| stride.checked_mul(v).and_then(|x| acc.checked_add(x));
        match (next(lo, l), next(hi, h)) {
            (Some(a), Some(b)) => (lo, hi) = (a, b),
            _ => return DimRange::Unbounded,
        }
        if k > 0 {
            let Some(s) = sizes
                .get(k - 1)
                .and_then(|n| env(n))
                .and_then(|v| stride.checked_mul(v))
            else {
                return DimRange::Unbounded;
            };
            stride = s;
        }
    }
    DimRange::Between(lo, hi)
}

fn merge(a: DimRange, b: DimRange) -> DimRange {
    use DimRange::*;
    match (a, b) {
        (Empty, x) | (x, Empty) => x,
        (Unbounded, _) | (_, Unbounded) => Unbounded,
        (Between(l1, h1), Between(l2, h2)) => Between(l1.min(l2), h1.max(h2)),
    }
}
