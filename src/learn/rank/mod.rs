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
//! Training cost: all pairs of a group each iteration (O(n²) per group;
//! [`RankerParams::truncation`] bounds it for large groups), a histogram
//! per attribute per node. `cargo bench --bench rank` times it.

pub mod evaluate;
mod lambda;
pub mod metrics;
mod tree;

use super::{LearnError, check_shape};
use crate::lab::rng::SplitMix64;
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
    pub seed: u64,
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
        let rel: Vec<Vec<f64>> = members
            .iter()
            .map(|m| {
                let l: Vec<f64> = m.iter().map(|&i| label[i]).collect();
                metrics::relevance(&l, params.relevance_levels)
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
        let mut rng = SplitMix64::new(params.seed);
        let mut scores = vec![base; n];
        let (mut g, mut h) = (vec![0.0; n], vec![0.0; n]);
        let mut trees = Vec::with_capacity(params.trees);
        for _ in 0..params.trees {
            let chosen = draw(&mut rng, members.len(), params.subsample);
            let attrs = draw(&mut rng, d, params.colsample);
            let mut rows = Vec::new();
            for &k in &chosen {
                gradients(
                    params,
                    &members[k],
                    &rel[k],
                    label,
                    weight,
                    &scores,
                    &mut g,
                    &mut h,
                );
                rows.extend_from_slice(&members[k]);
            }
            let t = tree::grow(&bins, &g, &h, rows, &attrs, &growth);
            for (s, r) in scores.iter_mut().zip(x) {
                *s += t.eval(r);
            }
            trees.push(t);
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

    pub fn trees(&self) -> usize {
        self.trees.len()
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

/// Writes the gradients and hessians of one group's rows `m` into `g`
/// and `h` (indexed by row).
#[allow(clippy::too_many_arguments)]
fn gradients(
    p: &RankerParams,
    m: &[usize],
    rel: &[f64],
    label: &[f64],
    weight: &[f64],
    scores: &[f64],
    g: &mut [f64],
    h: &mut [f64],
) {
    if p.objective == Objective::SquaredError {
        for &i in m {
            g[i] = weight[i] * (scores[i] - label[i]);
            h[i] = weight[i];
        }
        return;
    }
    let s: Vec<f64> = m.iter().map(|&i| scores[i]).collect();
    let w: Vec<f64> = m.iter().map(|&i| weight[i]).collect();
    let (mut gg, mut hh) = (vec![0.0; m.len()], vec![0.0; m.len()]);
    lambda::group(
        p.objective,
        p.sigma,
        p.truncation,
        &s,
        rel,
        &w,
        &mut gg,
        &mut hh,
    );
    for (k, &i) in m.iter().enumerate() {
        g[i] = gg[k];
        h[i] = hh[k];
    }
}

#[cfg(test)]
mod tests;
