//! A ranking model (issue 38): gradient-boosted regression trees trained
//! with the LambdaRank objective (LambdaMART) or the pairwise logistic
//! one (RankNet), grouped by kernel, learning the order of a kernel's
//! variants rather than their speedups. Generic over feature rows: any
//! attributes, one group id per row, a label per row (the log speedup;
//! only its order and spread within a group matter), optional per-row
//! weights (to weigh this machine's measurements above the shipped ones
//! when refitting on both).
//!
//! # Why our own trees
//!
//! Surveyed (2026-11, crates.io and docs.rs):
//! - `gbdt` 0.1.3 (pure Rust): trains squared error, LAD and binary log
//!   loss only; `RankPairwise` exists for *inference* of XGBoost models,
//!   it cannot train one. No release since 2022.
//! - `lightgbm`/`lightgbm2`/`lightgbm3` (bindings, lambdarank with query
//!   groups): build LightGBM's C++ from source with cmake and bindgen,
//!   needing `cmake clang libclang-dev libc++-dev`; the model is an
//!   opaque handle saved in LightGBM's own format, not serde.
//! - `xgboost`/`xgboost-rs` bindings: the same kind of C++ build
//!   (git submodule, cmake).
//! - `hessboost` 0.4.6 (pure Rust, `rank:pairwise`/`rank:ndcg`):
//!   106,000 lines and zstd-sys (a C build) for a ~300-line algorithm,
//!   f32 labels and predictions, and ranking weights *per query* (it reads
//!   a group's first row's weight), so a kernel's local and shipped
//!   measurements cannot be weighed apart; `rust-version` 1.93, first
//!   released in 2026 and at its fourth minor version since. Its release
//!   build (with its dependencies, one job) took 3 min 40 s of CPU here.
//! - `perpetual`, `forust-ml`: regression and classification losses;
//!   `perpetual` has ranking *metrics*, no ranking objective.
//!   `smartcore`, `linfa-trees`: CART trees, no gradient boosting, no
//!   ranking.
//!
//! So the boosting, the trees ([`tree`]: second-order, histogram split
//! finding) and the losses ([`lambda`]) are ours, in plain f64, saved
//! with serde like the paper's six models, deterministic for a seed, and
//! checked against finite differences and known answers (the tests
//! below); `scripts/lambdarank_oracle.py` compares the ranking quality
//! with LightGBM's lambdarank on the same synthetic data.
//!
//! Training cost: per tree, the pairs of rows of different relevance in
//! each group (O(n²) per group, one `exp` per row, not per pair;
//! [`RankerParams::truncation`] bounds it for large groups), and
//! histograms over the attributes binned once per fit, built only for
//! the smaller child of each split (the larger's is its parent's minus
//! it). Groups, and the attributes of a histogram of many rows, are
//! shared out among rayon's threads; the fit does not depend on how many.
//! `cargo bench --bench rank` times it: measured 2026-11-28 on an AMD EPYC
//! (Zen 3) guest with 2 cores, under a load of 3 to 5, pinned to one
//! core, 200 trees of depth 6, LambdaRank: 7,700 rows x 35 attributes in
//! 30 groups (the shipped data's shape, uniform random attributes, so
//! every attribute gets all 255 bins) in 2.1 to 2.5 s; 8,000 x 60 in
//! 3.0 to 3.7 s, where it took 11.3 s before the pairs and the
//! histograms were sped up.

pub mod evaluate;
mod lambda;
pub mod metrics;
mod tree;

use super::{LearnError, check_shape};
use crate::lab::rng::SplitMix64;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the boosting minimizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Objective {
    /// Pairwise logistic loss weighted by each pair's |ΔNDCG|.
    LambdaRank,
    /// Pairwise logistic loss, every pair alike.
    Pairwise,
    /// Squared error on the label itself, groups ignored: a plain
    /// regressor on the same trees, the baseline the ranking losses are
    /// measured against.
    SquaredError,
}

/// How a [`Ranker`] is trained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankerParams {
    pub objective: Objective,
    /// Boosting rounds (trees).
    pub trees: usize,
    /// Greatest depth of a tree.
    pub depth: usize,
    /// Shrinkage of each tree's values.
    pub learning_rate: f64,
    /// Fewest rows in a leaf.
    pub min_leaf: usize,
    /// Least sum of hessians in a leaf.
    pub min_child_weight: f64,
    /// L2 regularization of the leaf values.
    pub l2: f64,
    /// Least loss reduction for a split.
    pub min_gain: f64,
    /// Share of the groups each tree learns from (drawn per tree).
    pub subsample: f64,
    /// Share of the attributes each tree may split on (drawn per tree).
    pub colsample: f64,
    /// Most bins per attribute (2 to 256).
    pub max_bins: usize,
    /// Steepness of the pairwise logistic.
    pub sigma: f64,
    /// Relevance of a group's best row (its worst: 0), for NDCG.
    pub relevance_levels: f64,
    /// LambdaRank: only pairs with a row ranked above this position.
    pub truncation: Option<usize>,
    /// Boosted chains averaged (bagging): each its own seed, so its own
    /// draws of groups ([`RankerParams::subsample`]) and attributes
    /// ([`RankerParams::colsample`]); the score is their mean. 1: one
    /// chain. More chains cost that many times the fit and lower the
    /// variance of the ranking from one fit to the next. Not written
    /// when 1, so that a one-chain fit's parameters (and the digest of
    /// the shipped fit) read as before bagging.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub bags: usize,
    pub seed: u64,
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

impl Default for RankerParams {
    fn default() -> RankerParams {
        RankerParams {
            objective: Objective::LambdaRank,
            trees: 200,
            depth: 6,
            learning_rate: 0.1,
            min_leaf: 5,
            min_child_weight: 1e-3,
            l2: 0.0,
            min_gain: 0.0,
            subsample: 1.0,
            colsample: 1.0,
            max_bins: 255,
            sigma: 1.0,
            relevance_levels: 5.0,
            truncation: None,
            bags: 1,
            seed: 1,
        }
    }
}

impl RankerParams {
    fn check(&self) -> Result<(), LearnError> {
        let bad = |what: &str| Err(LearnError::Data(format!("ranker parameters: {what}")));
        let share = |v: f64| v > 0.0 && v <= 1.0;
        if self.depth == 0 {
            return bad("depth must be at least 1");
        }
        if self.bags == 0 {
            return bad("bags must be at least 1");
        }
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return bad("learning_rate must be positive");
        }
        if !share(self.subsample) || !share(self.colsample) {
            return bad("subsample and colsample must be in (0, 1]");
        }
        if !(self.l2 >= 0.0 && self.min_child_weight >= 0.0 && self.min_gain >= 0.0) {
            return bad("l2, min_child_weight and min_gain must not be negative");
        }
        if !(self.sigma > 0.0 && self.relevance_levels > 0.0) {
            return bad("sigma and relevance_levels must be positive");
        }
        Ok(())
    }
}

/// A trained ranker: a higher score ranks a row higher within its group.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ranker {
    pub params: RankerParams,
    /// The number of attributes of a row.
    pub attributes: usize,
    /// The score before any tree (the weighted mean label for the
    /// squared error, else 0).
    base: f64,
    trees: Vec<tree::Tree>,
}

impl Ranker {
    /// Trains on rows `x` whose group (kernel) is `groups[i]` and whose
    /// label is `label[i]`, each weighing `weight[i]` (default 1; a pair's
    /// weight is the mean of its rows'). Groups need not be contiguous.
    /// Fails on empty, ragged or non-finite data, negative or all-zero
    /// weights, or bad parameters.
    pub fn fit(
        params: &RankerParams,
        x: &[Vec<f64>],
        groups: &[usize],
        label: &[f64],
        weight: Option<&[f64]>,
    ) -> Result<Ranker, LearnError> {
        params.check()?;
        let d = check_shape(x, label)?;
        let n = x.len();
        if groups.len() != n {
            return Err(LearnError::Data(format!(
                "{n} rows but {} group ids",
                groups.len()
            )));
        }
        let ones = vec![1.0; n];
        let weight = weight.unwrap_or(&ones);
        if weight.len() != n {
            return Err(LearnError::Data(format!(
                "{n} rows but {} weights",
                weight.len()
            )));
        }
        if weight.iter().any(|w| !(w.is_finite() && *w >= 0.0)) || weight.iter().all(|&w| w == 0.0)
        {
            return Err(LearnError::Data(
                "weights must be finite, non-negative and not all zero".into(),
            ));
        }
        // Each group's rows, in group-id order, and their relevance.
        let mut by_group: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, &g) in groups.iter().enumerate() {
            by_group.entry(g).or_default().push(i);
        }
        let members: Vec<Vec<usize>> = by_group.into_values().collect();
        let ranked: Vec<lambda::Group> = members
            .iter()
            .map(|m| {
                let l: Vec<f64> = m.iter().map(|&i| label[i]).collect();
                let rel = metrics::relevance(&l, params.relevance_levels);
                lambda::Group::new(m, &rel, weight)
            })
            .collect();
        let base = if params.objective == Objective::SquaredError {
            let sw: f64 = weight.iter().sum();
            label.iter().zip(weight).map(|(l, w)| l * w).sum::<f64>() / sw
        } else {
            0.0
        };
        let bins = tree::Bins::new(x, params.max_bins);
        let growth = tree::Growth {
            depth: params.depth,
            min_leaf: params.min_leaf,
            min_child_weight: params.min_child_weight,
            l2: params.l2,
            min_gain: params.min_gain,
            shrinkage: params.learning_rate,
        };
        let chain = Chain {
            params,
            x,
            label,
            weight,
            members: &members,
            ranked: &ranked,
            bins: &bins,
            growth: &growth,
            base,
        };
        let mut trees = Vec::with_capacity(params.trees * params.bags);
        for b in 0..params.bags {
            // Each chain its own seed; one chain keeps `seed` itself.
            let seed = params
                .seed
                .wrapping_add((b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let mut grown = chain.boost(seed);
            if params.bags > 1 {
                for t in &mut grown {
                    t.scale(1.0 / params.bags as f64);
                }
            }
            trees.extend(grown);
        }
        Ok(Ranker {
            params: params.clone(),
            attributes: d,
            base,
            trees,
        })
    }

    /// The score of a row (of [`Ranker::attributes`] values): within a
    /// group, higher ranks first.
    pub fn score(&self, row: &[f64]) -> f64 {
        self.trees.iter().fold(self.base, |s, t| s + t.eval(row))
    }

    /// The scores of several rows.
    pub fn scores(&self, x: &[Vec<f64>]) -> Vec<f64> {
        x.iter().map(|r| self.score(r)).collect()
    }

    #[cfg(test)]
    pub(crate) fn trees(&self) -> usize {
        self.trees.len()
    }
}

/// What one boosted chain of [`Ranker::fit`] learns from.
struct Chain<'a> {
    params: &'a RankerParams,
    x: &'a [Vec<f64>],
    label: &'a [f64],
    weight: &'a [f64],
    members: &'a [Vec<usize>],
    ranked: &'a [lambda::Group],
    bins: &'a tree::Bins,
    growth: &'a tree::Growth,
    base: f64,
}

impl Chain<'_> {
    /// The trees of one chain, its draws made from `seed`.
    fn boost(&self, seed: u64) -> Vec<tree::Tree> {
        let Chain {
            params,
            x,
            label,
            weight,
            members,
            ranked,
            bins,
            growth,
            base,
        } = *self;
        let (n, d) = (x.len(), x.first().map_or(0, Vec::len));
        let mut rng = SplitMix64::new(seed);
        let mut scores = vec![base; n];
        let (mut g, mut h, mut step) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let mut trees = Vec::with_capacity(params.trees);
        for _ in 0..params.trees {
            let chosen = draw(&mut rng, members.len(), params.subsample);
            let attrs = draw(&mut rng, d, params.colsample);
            gradients(
                params, &chosen, ranked, label, weight, &scores, &mut g, &mut h,
            );
            let rows: Vec<usize> = chosen
                .iter()
                .flat_map(|&k| members[k].iter().copied())
                .collect();
            // The rows the tree grew on know their leaves; the others
            // (of groups not drawn) are evaluated.
            let mut grown = vec![false; n];
            for &i in &rows {
                grown[i] = true;
            }
            let t = tree::grow(bins, &g, &h, rows, &attrs, growth, &mut step);
            for (i, (s, r)) in scores.iter_mut().zip(x).enumerate() {
                *s += if grown[i] { step[i] } else { t.eval(r) };
            }
            trees.push(t);
        }
        trees
    }
}

/// Indices `0..n`, each kept with chance `share` (all when it is 1), at
/// least one.
fn draw(rng: &mut SplitMix64, n: usize, share: f64) -> Vec<usize> {
    if share >= 1.0 {
        return (0..n).collect();
    }
    let mut v: Vec<usize> = (0..n).filter(|_| rng.chance(share)).collect();
    if v.is_empty() && n > 0 {
        v.push(rng.below(n));
    }
    v
}

/// Writes the gradients and hessians of the rows of the groups `chosen`
/// (of `groups`) into `g` and `h` (indexed by row). The groups are
/// shared out among rayon's threads; each writes only its own rows, so
/// the result does not depend on how many there are.
#[allow(clippy::too_many_arguments)]
fn gradients(
    p: &RankerParams,
    chosen: &[usize],
    groups: &[lambda::Group],
    label: &[f64],
    weight: &[f64],
    scores: &[f64],
    g: &mut [f64],
    h: &mut [f64],
) {
    if p.objective == Objective::SquaredError {
        for &k in chosen {
            for &i in &groups[k].rows {
                g[i] = weight[i] * (scores[i] - label[i]);
                h[i] = weight[i];
            }
        }
        return;
    }
    let each: Vec<(Vec<f64>, Vec<f64>)> = chosen
        .par_iter()
        .map(|&k| groups[k].gradients(p.objective, p.sigma, p.truncation, scores))
        .collect();
    for (&k, (gg, hh)) in chosen.iter().zip(each) {
        for (i, (a, b)) in groups[k].rows.iter().zip(gg.into_iter().zip(hh)) {
            g[*i] = a;
            h[*i] = b;
        }
    }
}

/// One group's scores as predicted log speedups, for a search that wants
/// predictions on the scale of its measurements: standardized within the
/// group and scaled by `scale`, the spread of log speedups that groups
/// show ([`group_spread`] of the training data). A constant group: all 0.
pub fn calibrated(scores: &[f64], scale: f64) -> Vec<f64> {
    let n = scores.len().max(1) as f64;
    let mean = scores.iter().sum::<f64>() / n;
    let sd = (scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n).sqrt();
    scores
        .iter()
        .map(|s| {
            if sd > 0.0 {
                (s - mean) / sd * scale
            } else {
                0.0
            }
        })
        .collect()
}

/// The mean over groups of the (population) standard deviation of
/// `label` within each group: how far apart a group's labels lie.
pub fn group_spread(groups: &[usize], label: &[f64]) -> f64 {
    let mut by: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for (&g, &l) in groups.iter().zip(label) {
        by.entry(g).or_default().push(l);
    }
    let sds: Vec<f64> = by
        .values()
        .map(|v| {
            let n = v.len() as f64;
            let m = v.iter().sum::<f64>() / n;
            (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n).sqrt()
        })
        .collect();
    sds.iter().sum::<f64>() / sds.len().max(1) as f64
}

#[cfg(test)]
mod tests;
