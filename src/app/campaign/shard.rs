//! Sharding a campaign (`collect --shard K/N`): the campaign's units (one
//! kernel's variant with one compiler) cut into N contiguous runs of about
//! equal expected cost, of which shard K measures the K-th.
//!
//! The cut depends only on the ordered units, N and the expected costs,
//! never on what a shard's own store holds: a shard resumed after its
//! task died measures the same units as before. Contiguous runs keep a
//! kernel's variants together, so few shards time the same original
//! (every shard that measures a kernel's variants times its original
//! again, in its own batch).

use super::{Campaign, Plan, kernel_name};
use crate::engine::space::{Variant, code_hash};
use crate::lab::compiler::Family;
use crate::lab::store::UnitCost;
use std::collections::HashMap;

/// Shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

/// A shard spec that is not `K/N` with 1 <= K <= N.
#[derive(Debug, thiserror::Error)]
#[error("`{spec}` is not a shard: {why} (expected K/N with 1 <= K <= N, e.g. 2/3)")]
pub struct ShardError {
    spec: String,
    why: &'static str,
}

impl std::str::FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let bad = |why| ShardError {
            spec: s.to_string(),
            why,
        };
        let (k, n) = s.split_once('/').ok_or_else(|| bad("no `/`"))?;
        let k: usize = k.trim().parse().map_err(|_| bad("K is not a number"))?;
        let n: usize = n.trim().parse().map_err(|_| bad("N is not a number"))?;
        if n == 0 {
            return Err(bad("N is 0"));
        }
        if k == 0 {
            return Err(bad("shards are numbered from 1"));
        }
        if k > n {
            return Err(bad("K is greater than N"));
        }
        Ok(Shard { index: k, count: n })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What this campaign (or shard) measures of each kernel: whether it
/// characterizes the kernel, and per compiler the variants it measures
/// after the original (`None`: not even the original). Unsharded, all of
/// it. A shard measures its units (`shard.rs`) and the original of every
/// kernel and compiler it has variants of; a kernel and compiler without
/// variants is one unit, its original; the first shard that measures
/// anything of a kernel characterizes it.
pub(super) fn select<'p>(
    c: &Campaign,
    plans: &'p [Plan],
) -> Vec<(bool, Vec<Option<Vec<&'p Variant>>>)> {
    let Some(shard) = c.shard else {
        return plans
            .iter()
            .map(|(_, _, v)| {
                (
                    true,
                    c.compilers
                        .iter()
                        .map(|_| Some(v.iter().collect()))
                        .collect(),
                )
            })
            .collect();
    };
    let costs = Costs::new(&c.costs);
    // (plan, compiler, variant: None for an original alone), in order.
    let mut units = Vec::new();
    let mut weights = Vec::new();
    for (p, (path, src, variants)) in plans.iter().enumerate() {
        let name = kernel_name(path);
        for (k, compiler) in c.compilers.iter().enumerate() {
            if variants.is_empty() {
                units.push((p, k, None));
                weights.push(costs.of(&name, &code_hash(&src.text), compiler.family));
            }
            for (i, v) in variants.iter().enumerate() {
                units.push((p, k, Some(i)));
                weights.push(costs.of(&name, &v.hash, compiler.family));
            }
        }
    }
    let owner = partition(&weights, shard.count);
    let mut out: Vec<(bool, Vec<Option<Vec<&Variant>>>)> = plans
        .iter()
        .map(|_| (false, vec![None; c.compilers.len()]))
        .collect();
    let mut first_owner: Vec<Option<usize>> = vec![None; plans.len()];
    for (&(p, k, v), &o) in units.iter().zip(&owner) {
        first_owner[p] = Some(first_owner[p].map_or(o, |f: usize| f.min(o)));
        if o + 1 != shard.index {
            continue;
        }
        let list = out[p].1[k].get_or_insert_with(Vec::new);
        if let Some(i) = v {
            list.push(&plans[p].2[i]);
        }
    }
    for (p, f) in first_owner.iter().enumerate() {
        out[p].0 = *f == Some(shard.index - 1);
    }
    out
}

/// The 0-based shard of every unit: the units in their order cut into
/// `count` contiguous runs, each unit in the run that holds the middle of
/// its cost on the cumulative scale. Equal costs give runs of equal length
/// (within one unit).
pub(crate) fn partition(costs: &[f64], count: usize) -> Vec<usize> {
    let total: f64 = costs.iter().sum();
    let mut before = 0.0;
    costs
        .iter()
        .map(|&c| {
            let middle = before + c / 2.0;
            before += c;
            if total <= 0.0 {
                return 0;
            }
            ((middle / total * count as f64) as usize).min(count - 1)
        })
        .collect()
}

/// Expected seconds of measuring a unit, from what a store knows: the
/// variant's own cost with that compiler family when measured, else the
/// mean of its kernel's measured variants with that family, else the mean
/// of everything known; 1 for every unit when nothing is known (the cut
/// is then by count).
pub(crate) struct Costs {
    exact: HashMap<(String, String, Family), f64>,
    kernel: HashMap<(String, Family), (f64, usize)>,
    mean: Option<f64>,
}

impl Costs {
    /// From the costs a store reports (see `Store::unit_costs`).
    pub(crate) fn new(known: &[UnitCost]) -> Costs {
        let mut exact: HashMap<_, (f64, usize)> = HashMap::new();
        let mut kernel: HashMap<_, (f64, usize)> = HashMap::new();
        let mut all = (0.0, 0usize);
        for u in known {
            let e = exact
                .entry((u.kernel.clone(), u.code_hash.clone(), u.family))
                .or_default();
            e.0 += u.seconds;
            e.1 += 1;
            if !u.original {
                let k = kernel.entry((u.kernel.clone(), u.family)).or_default();
                k.0 += u.seconds;
                k.1 += 1;
                all.0 += u.seconds;
                all.1 += 1;
            }
        }
        Costs {
            exact: exact
                .into_iter()
                .map(|(k, (s, n))| (k, s / n as f64))
                .collect(),
            kernel,
            mean: (all.1 > 0).then(|| all.0 / all.1 as f64),
        }
    }

    pub(crate) fn of(&self, kernel: &str, code_hash: &str, family: Family) -> f64 {
        if let Some(&s) = self
            .exact
            .get(&(kernel.to_string(), code_hash.to_string(), family))
        {
            return s;
        }
        if let Some(&(s, n)) = self.kernel.get(&(kernel.to_string(), family)) {
            return s / n as f64;
        }
        self.mean.unwrap_or(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_bad_ones_say_why() {
        assert_eq!(
            "2/3".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 3 }
        );
        assert_eq!("2/3".parse::<Shard>().unwrap().to_string(), "2/3");
        for (s, why) in [
            ("0/3", "numbered from 1"),
            ("4/3", "greater than N"),
            ("x", "no `/`"),
            ("1/0", "N is 0"),
            ("a/3", "K is not a number"),
            ("1/-3", "N is not a number"),
        ] {
            let e = s.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains(why) && e.contains(&format!("`{s}`")), "{s}: {e}");
        }
    }

    #[test]
    fn equal_costs_cut_into_equal_contiguous_runs() {
        let p = partition(&[1.0; 10], 3);
        assert_eq!(p, [0, 0, 0, 1, 1, 1, 1, 2, 2, 2]);
        assert_eq!(partition(&[1.0; 2], 3), [0, 2], "more shards than units");
        assert_eq!(partition(&[], 3), Vec::<usize>::new());
        assert_eq!(partition(&[5.0, 1.0], 1), [0, 0]);
    }

    #[test]
    fn costs_balance_the_runs() {
        // One expensive unit, then many cheap ones: the first shard gets
        // the expensive one alone.
        let mut c = vec![10.0];
        c.extend([1.0; 10]);
        let p = partition(&c, 2);
        assert_eq!(p[0], 0);
        assert!(p[1..].iter().all(|&s| s == 1), "{p:?}");
        // Every shard's load is within one unit of the mean.
        let costs: Vec<f64> = (0..50).map(|i| 1.0 + (i % 7) as f64).collect();
        let p = partition(&costs, 4);
        let total: f64 = costs.iter().sum();
        for s in 0..4 {
            let load: f64 = costs
                .iter()
                .zip(&p)
                .filter(|x| *x.1 == s)
                .map(|x| x.0)
                .sum();
            assert!((load - total / 4.0).abs() <= 7.0, "shard {s}: {load}");
        }
        assert!(p.windows(2).all(|w| w[0] <= w[1]), "contiguous: {p:?}");
    }

    #[test]
    fn unknown_units_cost_what_their_kernel_or_the_store_costs() {
        let u = |kernel: &str, hash: &str, family, seconds| UnitCost {
            kernel: kernel.into(),
            code_hash: hash.into(),
            family,
            original: false,
            seconds,
        };
        let c = Costs::new(&[
            u("atax", "a", Family::Gcc, 2.0),
            u("atax", "b", Family::Gcc, 4.0),
            u("mvt", "m", Family::Gcc, 9.0),
        ]);
        assert_eq!(c.of("atax", "a", Family::Gcc), 2.0);
        assert_eq!(c.of("atax", "z", Family::Gcc), 3.0);
        assert_eq!(c.of("bicg", "z", Family::Gcc), 5.0);
        assert_eq!(c.of("atax", "a", Family::Clang), 5.0);
        assert_eq!(Costs::new(&[]).of("atax", "a", Family::Gcc), 1.0);
    }
}
