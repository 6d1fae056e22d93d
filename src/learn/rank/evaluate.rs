//! Leave-one-kernel-out evaluation of the ranker on a dataset, the folds
//! of [`crate::learn::evaluate`]: each kernel is held out in turn, the
//! ranker trained on every other kernel's variants (one group per
//! kernel, the label the log speedup, the attributes the models' own:
//! the original program's features and the configuration's), and the
//! held-out kernel's variants ranked by its scores.
//!
//! Per kernel: Spearman's ρ between score and measured speedup (as
//! `simulate` reports it for the six models' ensemble), NDCG@k and the
//! top-1 share of the kernel's optimum.

use super::metrics::{ndcg_at, rank_correlation, top1_share};
use super::{Ranker, RankerParams};
use crate::learn::LearnError;
use crate::learn::dataset::Dataset;
use rayon::iter::{IntoParallelIterator, ParallelIterator};
use serde::Serialize;

/// One held-out kernel.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KernelRanking {
    pub kernel: String,
    pub variants: usize,
    /// `None` below three variants or with constant scores.
    pub rank_correlation: Option<f64>,
    /// NDCG at [`RankEvaluation::k`] (`None`: every variant equally fast).
    pub ndcg: Option<f64>,
    /// The speedup of the top-scored variant over the kernel's best.
    pub top1: f64,
}

/// A whole leave-one-kernel-out run.
#[derive(Debug, Clone, Serialize)]
pub struct RankEvaluation {
    pub params: RankerParams,
    /// The k of NDCG@k.
    pub k: usize,
    pub kernels: Vec<KernelRanking>,
    /// Medians over kernels of ρ and of NDCG@k; mean and geometric mean
    /// of the top-1 share.
    pub median_rank_correlation: Option<f64>,
    pub median_ndcg: Option<f64>,
    pub mean_top1: f64,
    pub geomean_top1: f64,
}

/// Trains one ranker per kernel of `d` without it (on `threads` threads;
/// the result does not depend on how many) and scores the held-out
/// kernel's ranking. Fails with fewer than two kernels with variants.
pub fn leave_one_kernel_out(
    d: &Dataset,
    params: &RankerParams,
    k: usize,
    threads: usize,
) -> Result<RankEvaluation, LearnError> {
    let by_kernel = d.rows_by_kernel();
    let held: Vec<usize> = (0..d.kernels.len())
        .filter(|&k| !by_kernel[k].is_empty())
        .collect();
    if held.len() < 2 {
        return Err(LearnError::Data(
            "leave-one-out needs at least two kernels with variants".into(),
        ));
    }
    let x = d.all_row_attributes();
    let label: Vec<f64> = d.rows.iter().map(|r| r.speedup.ln()).collect();
    let fold = |h: usize| -> Result<KernelRanking, LearnError> {
        let train: Vec<usize> = (0..d.rows.len())
            .filter(|&i| d.rows[i].kernel != h)
            .collect();
        let tx: Vec<Vec<f64>> = train.iter().map(|&i| x[i].clone()).collect();
        let tg: Vec<usize> = train.iter().map(|&i| d.rows[i].kernel).collect();
        let tl: Vec<f64> = train.iter().map(|&i| label[i]).collect();
        let m = Ranker::fit(params, &tx, &tg, &tl, None)?;
        let rows = &by_kernel[h];
        let s: Vec<f64> = rows.iter().map(|&i| m.score(&x[i])).collect();
        let l: Vec<f64> = rows.iter().map(|&i| label[i]).collect();
        Ok(KernelRanking {
            kernel: d.kernels[h].name.clone(),
            variants: rows.len(),
            rank_correlation: rank_correlation(&s, &l),
            ndcg: ndcg_at(&s, &l, k, params.relevance_levels),
            top1: top1_share(&s, &l).unwrap_or(f64::NAN),
        })
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(std::io::Error::other)?;
    // Collected in kernel order whichever thread ran which fold.
    let kernels = pool.install(|| {
        held.into_par_iter()
            .map(fold)
            .collect::<Result<Vec<_>, _>>()
    })?;
    let median = |v: Vec<f64>| (!v.is_empty()).then(|| crate::lab::runner::median(&v));
    let top: Vec<f64> = kernels.iter().map(|r| r.top1).collect();
    Ok(RankEvaluation {
        params: params.clone(),
        k,
        median_rank_correlation: median(
            kernels.iter().filter_map(|r| r.rank_correlation).collect(),
        ),
        median_ndcg: median(kernels.iter().filter_map(|r| r.ndcg).collect()),
        mean_top1: top.iter().sum::<f64>() / top.len() as f64,
        geomean_top1: (top.iter().map(|t| t.ln()).sum::<f64>() / top.len() as f64).exp(),
        kernels,
    })
}
