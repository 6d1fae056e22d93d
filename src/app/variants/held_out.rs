//! The ranker leaving one kernel out on a table: each kernel's variants
//! ranked by the ranker fitted to the other kernels (`evaluate
//! --ranking variant`, the figures of the book's "cost model of the
//! variant"), and those rankings as the predicted speedups of a
//! dataset's rows (`simulate --ranking variant`).

use super::VariantTable;
use crate::learn::dataset::Dataset;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// How well the ranker orders one held-out kernel's variants.
#[derive(Debug, Clone, Serialize)]
pub struct HeldOut {
    pub kernel: String,
    pub variants: usize,
    /// Spearman's ρ between scores and speedups (`None`: constant).
    pub rank_correlation: Option<f64>,
    /// NDCG at 6.
    pub ndcg6: Option<f64>,
    /// The best speedup among the top 1, 6 and 12 scored variants, as a
    /// share of the kernel's best.
    pub top1: f64,
    pub best_of_6: f64,
    pub best_of_12: f64,
}

/// A leave-one-kernel-out run of the ranker on a table.
#[derive(Debug, Clone, Serialize)]
pub struct Evaluation {
    /// The features the ranker saw.
    pub features: Vec<String>,
    pub kernels: Vec<HeldOut>,
    pub median_rank_correlation: Option<f64>,
    pub mean_rank_correlation: Option<f64>,
    pub median_ndcg6: Option<f64>,
    pub mean_top1: f64,
    pub mean_best_of_6: f64,
    pub mean_best_of_12: f64,
    /// Other programs' kernels and runs the folds also learned from
    /// ([`Folds::also`]; 0 without).
    pub also_kernels: usize,
    pub also_rows: usize,
    /// The table's rows whose label the folds learned from
    /// [`Folds::labels`] (0 without).
    pub relabelled: usize,
    /// Each row's score when its kernel was held out, in the table's row
    /// order (the leave-one-out predictions `simulate --predictions`
    /// replays searches with).
    #[serde(skip)]
    pub scores: Vec<f64>,
}

/// The ranker's leave-one-kernel-out predictions of a dataset's rows
/// ([`VariantTable::leave_one_out_speedups`]).
#[derive(Debug, Clone)]
pub struct LeftOut {
    /// Per row of the dataset, its predicted speedup.
    pub speedups: Vec<f64>,
    /// Rows of the dataset the table lacks (given their kernel's least
    /// prediction).
    pub unmatched: usize,
    /// The ranking's figures over the rows the table has.
    pub evaluation: Evaluation,
}

/// Trains the ranker on every kernel of `t` but one, with the features
/// `keep` (indices into [`VariantTable::names`]), and ranks the held-out
/// kernel's variants; each kernel in turn (folds in parallel).
pub fn leave_one_kernel_out(
    t: &VariantTable,
    params: &crate::learn::rank::RankerParams,
    keep: &[usize],
) -> Result<Evaluation, crate::learn::LearnError> {
    leave_one_kernel_out_from(t, params, keep, Folds::default())
}

/// Runs of other programs that every fold learns from besides the
/// table's kernels (a store of `collect`'s or `optimize`'s runs, with the
/// table's features): never held out nor ranked, and left out of the
/// fold of a kernel of the same name (the same program measured
/// elsewhere would tell the ranker the answer).
#[derive(Debug, Clone, Copy)]
pub struct Also<'a> {
    /// Names of the kernels the rows' `kernel` indexes.
    pub kernels: &'a [String],
    pub rows: &'a [super::VariantRow],
    /// Per row, its weight against one of the table's (1).
    pub weight: &'a [f64],
}

/// What each leave-one-kernel-out fold learns from besides the table's
/// other kernels.
#[derive(Debug, Clone, Copy, Default)]
pub struct Folds<'a> {
    /// Per held-out kernel, the table's kernels its ranker is fitted to
    /// (indexed by kernel); all the others when `None`.
    pub train: Option<&'a [Vec<bool>]>,
    /// Other programs' runs every fold learns from too.
    pub also: Option<Also<'a>>,
    /// The measurements the folds learn their labels from, when not the
    /// table's own: the same kernels' variants timed again (a confirmed
    /// copy of the dataset, `--labels`). A row it lacks keeps its own
    /// label; each held-out kernel is scored against the table's labels
    /// either way.
    pub labels: Option<&'a Dataset>,
}

/// What every fold learns from besides the table's other kernels, as
/// the command line gives it: other programs' runs (`--store`) and the
/// measurements to learn the labels from (`--labels`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Besides<'a> {
    pub also: Option<Also<'a>>,
    pub labels: Option<&'a Dataset>,
}

impl<'a> Folds<'a> {
    /// Folds on the kernels `train` marks (all the others: `None`),
    /// learning from `besides` too.
    pub fn new(train: Option<&'a [Vec<bool>]>, besides: Besides<'a>) -> Folds<'a> {
        Folds {
            train,
            also: besides.also,
            labels: besides.labels,
        }
    }
}

/// Per row of `t`, the log speedup its folds learn from: `labels`'
/// measurement of the same kernel and configuration where it has one,
/// else the row's own; and how many rows took `labels`'.
fn learned_labels(t: &VariantTable, labels: Option<&Dataset>) -> (Vec<f64>, usize) {
    let own = t.rows.iter().map(|r| r.speedup.ln());
    let Some(d) = labels else {
        return (own.collect(), 0);
    };
    let measured: std::collections::HashMap<(&str, String), f64> = d
        .rows
        .iter()
        .map(|r| {
            let name = d.kernels[r.kernel].name.as_str();
            ((name, r.config.to_string()), r.speedup.ln())
        })
        .collect();
    let mut taken = 0;
    let learned = t
        .rows
        .iter()
        .zip(own)
        .map(|(r, l)| {
            let key = (t.kernels[r.kernel].as_str(), r.config.to_string());
            let m = measured.get(&key).copied();
            taken += usize::from(m.is_some());
            m.unwrap_or(l)
        })
        .collect();
    (learned, taken)
}

/// [`leave_one_kernel_out`], each held-out kernel `h`'s ranker fitted to
/// what `folds` says: the kernels `folds.train[h]` marks, and the runs of
/// `folds.also`.
pub fn leave_one_kernel_out_from(
    t: &VariantTable,
    params: &crate::learn::rank::RankerParams,
    keep: &[usize],
    folds: Folds<'_>,
) -> Result<Evaluation, crate::learn::LearnError> {
    use crate::learn::rank::Ranker;
    use crate::learn::rank::metrics::{ndcg_at, rank_correlation};
    let x: Vec<Vec<f64>> = t
        .rows
        .iter()
        .map(|r| keep.iter().map(|&i| r.x[i]).collect())
        .collect();
    let label: Vec<f64> = t.rows.iter().map(|r| r.speedup.ln()).collect();
    let (learned, relabelled) = learned_labels(t, folds.labels);
    let mut kernels: Vec<usize> = t.rows.iter().map(|r| r.kernel).collect();
    kernels.sort_unstable();
    kernels.dedup();
    let fold = |h: usize| -> Result<(HeldOut, Vec<(usize, f64)>), crate::learn::LearnError> {
        let learns = |k: usize| k != h && folds.train.is_none_or(|m| m[h].get(k) == Some(&true));
        let train: Vec<usize> = (0..t.rows.len())
            .filter(|&i| learns(t.rows[i].kernel))
            .collect();
        let mut tx: Vec<Vec<f64>> = train.iter().map(|&i| x[i].clone()).collect();
        let mut tg: Vec<usize> = train.iter().map(|&i| t.rows[i].kernel).collect();
        let mut tl: Vec<f64> = train.iter().map(|&i| learned[i]).collect();
        let mut tw: Option<Vec<f64>> = None;
        if let Some(a) = folds.also {
            let w = tw.insert(vec![1.0; tx.len()]);
            for (r, &rw) in a.rows.iter().zip(a.weight) {
                if !same_program(&a.kernels[r.kernel], &t.kernels[h]) {
                    tx.push(keep.iter().map(|&i| r.x[i]).collect());
                    // Their kernels numbered after the table's.
                    tg.push(t.kernels.len() + r.kernel);
                    tl.push(r.speedup.ln());
                    w.push(rw);
                }
            }
        }
        let m = Ranker::fit(params, &tx, &tg, &tl, tw.as_deref())?;
        let held: Vec<usize> = (0..t.rows.len())
            .filter(|&i| t.rows[i].kernel == h)
            .collect();
        let s: Vec<f64> = held.iter().map(|&i| m.score(&x[i])).collect();
        let l: Vec<f64> = held.iter().map(|&i| label[i]).collect();
        let out = HeldOut {
            kernel: t.kernels[h].clone(),
            variants: held.len(),
            rank_correlation: rank_correlation(&s, &l),
            ndcg6: ndcg_at(&s, &l, 6, params.relevance_levels),
            top1: best_of(&s, &l, 1),
            best_of_6: best_of(&s, &l, 6),
            best_of_12: best_of(&s, &l, 12),
        };
        Ok((out, held.into_iter().zip(s).collect()))
    };
    let ranked: Vec<(HeldOut, Vec<(usize, f64)>)> = kernels
        .into_par_iter()
        .map(fold)
        .collect::<Result<_, _>>()?;
    let mut scores = vec![f64::NAN; t.rows.len()];
    let mut held = Vec::new();
    for (h, s) in ranked {
        for (i, v) in s {
            scores[i] = v;
        }
        held.push(h);
    }
    let rhos: Vec<f64> = held.iter().filter_map(|h| h.rank_correlation).collect();
    let median = |v: &[f64]| (!v.is_empty()).then(|| crate::lab::runner::median(v));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let ndcg: Vec<f64> = held.iter().filter_map(|h| h.ndcg6).collect();
    Ok(Evaluation {
        features: keep.iter().map(|&i| t.names[i].clone()).collect(),
        median_rank_correlation: median(&rhos),
        mean_rank_correlation: (!rhos.is_empty()).then(|| mean(&rhos)),
        median_ndcg6: median(&ndcg),
        mean_top1: mean(&held.iter().map(|h| h.top1).collect::<Vec<_>>()),
        mean_best_of_6: mean(&held.iter().map(|h| h.best_of_6).collect::<Vec<_>>()),
        mean_best_of_12: mean(&held.iter().map(|h| h.best_of_12).collect::<Vec<_>>()),
        kernels: held,
        also_kernels: folds.also.map_or(0, |a| a.kernels.len()),
        also_rows: folds.also.map_or(0, |a| a.rows.len()),
        relabelled,
        scores,
    })
}

/// Whether two kernel names are of the same program: the same file stem
/// (the corpus' `gemm` and a store's `gemm.c`).
pub fn same_program(a: &str, b: &str) -> bool {
    let stem = |n: &str| {
        std::path::Path::new(n)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    stem(a) == stem(b)
}

/// The best speedup among the `n` best-scored variants, as a share of
/// the best speedup (ties in the scores broken against the variant).
fn best_of(scores: &[f64], log_speedup: &[f64], n: usize) -> f64 {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| {
        scores[b]
            .total_cmp(&scores[a])
            .then(log_speedup[a].total_cmp(&log_speedup[b]))
    });
    let best = log_speedup
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let got = order
        .iter()
        .take(n)
        .map(|&i| log_speedup[i])
        .fold(f64::NEG_INFINITY, f64::max);
    (got - best).exp()
}

impl VariantTable {
    /// [`VariantTable::relabelled`] by `d`, for evaluating the ranker on
    /// `d`'s speedups: an error when the table has none of `d`'s rows.
    pub fn labelled_by(&self, d: &Dataset) -> Result<VariantTable, crate::learn::LearnError> {
        let t = self.relabelled(d);
        if t.rows.is_empty() {
            return Err(crate::learn::LearnError::Data(format!(
                "the variant table has none of the dataset's {} variants (it is of other kernels or configurations)",
                d.rows.len()
            )));
        }
        Ok(t)
    }

    /// The ranker's leave-one-kernel-out predicted speedup of every row
    /// of `d`, as `optimize` would predict it for a new program: this
    /// table relabelled by `d`'s speedups ([`VariantTable::relabelled`]),
    /// each kernel's variants ranked by the ranker fitted to the other
    /// kernels, the scores standardized within the kernel and scaled by
    /// the other kernels' spread of log speedups. A row of `d` the table
    /// lacks gets its kernel's least prediction (as `optimize` treats a
    /// variant it cannot featurize) and is counted in
    /// [`LeftOut::unmatched`]. Fails when the table has none of `d`'s
    /// rows.
    pub fn leave_one_out_speedups(
        &self,
        d: &Dataset,
        params: &crate::learn::rank::RankerParams,
        folds: Folds<'_>,
    ) -> Result<LeftOut, crate::learn::LearnError> {
        use crate::learn::rank::{calibrated, group_spread};
        let t = self.labelled_by(d)?;
        let keep: Vec<usize> = (0..t.names.len()).collect();
        let e = leave_one_kernel_out_from(&t, params, &keep, folds)?;
        let label: Vec<f64> = t.rows.iter().map(|r| r.speedup.ln()).collect();
        let mut by_kernel: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, r) in t.rows.iter().enumerate() {
            by_kernel.entry(r.kernel).or_default().push(i);
        }
        let mut log = vec![f64::NAN; t.rows.len()];
        for (&k, rows) in &by_kernel {
            // The spread of the kernels its ranker learned from.
            let others: Vec<usize> = (0..t.rows.len())
                .filter(|&i| {
                    let o = t.rows[i].kernel;
                    o != k && folds.train.is_none_or(|m| m[k].get(o) == Some(&true))
                })
                .collect();
            let scale = group_spread(
                &others.iter().map(|&i| t.rows[i].kernel).collect::<Vec<_>>(),
                &others.iter().map(|&i| label[i]).collect::<Vec<_>>(),
            );
            let scores: Vec<f64> = rows.iter().map(|&i| e.scores[i]).collect();
            for (&i, v) in rows.iter().zip(calibrated(&scores, scale)) {
                log[i] = v;
            }
        }
        let at: std::collections::HashMap<(usize, String), usize> = t
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| ((r.kernel, r.config.to_string()), i))
            .collect();
        let least: BTreeMap<usize, f64> = by_kernel
            .iter()
            .map(|(&k, rows)| (k, rows.iter().map(|&i| log[i]).fold(0.0, f64::min)))
            .collect();
        let mut unmatched = 0;
        let speedups = d
            .rows
            .iter()
            .map(|r| match at.get(&(r.kernel, r.config.to_string())) {
                Some(&i) => log[i].exp(),
                None => {
                    unmatched += 1;
                    least.get(&r.kernel).copied().unwrap_or(0.0).exp()
                }
            })
            .collect();
        Ok(LeftOut {
            speedups,
            unmatched,
            evaluation: e,
        })
    }
}
