//! The stages of [`super::simulate`]: the kernels' spaces, the fields of
//! their configurations, the runs on a thread pool, and what they add up
//! to per strategy and kernel.

use super::{
    KernelCurve, KernelSpace, Options, RunResult, StrategyCurves, THRESHOLDS, Trace, one_run,
};
use crate::learn::dataset::Dataset;
use crate::learn::evaluate::{means, training_kernels};
use crate::learn::search::Strategy;
use crate::learn::search::fields::{Fields, NAMES};
use crate::learn::{Kind, LearnError};
use rayon::prelude::*;

/// A run's job, (strategy, kernel, seed), and what it found.
pub(super) type Done = ((usize, usize, u64), RunResult);

/// Each kernel's space of searched variants (the paper's only with
/// `paper_only`; a kernel with none is left out), its Opt the best of all.
pub(super) fn kernel_spaces(
    d: &Dataset,
    predicted: &[Vec<f64>],
    opts: &Options,
) -> Vec<KernelSpace> {
    d.rows_by_kernel()
        .iter()
        .enumerate()
        .filter_map(|(k, rows)| {
            let searched: Vec<usize> = rows
                .iter()
                .copied()
                .filter(|&i| !opts.paper_only || d.rows[i].config.is_paper())
                .collect();
            if searched.is_empty() {
                return None;
            }
            let training = training_kernels(d, k, opts.train_kernels, opts.train_seed);
            let transfer = (!opts.no_transfer).then_some(training.as_slice());
            let mut ks = KernelSpace::of(d, predicted, k, &searched, transfer);
            // Opt is the best of every variant, searched or not.
            ks.opt = rows
                .iter()
                .map(|&i| d.rows[i].speedup)
                .fold(ks.opt, f64::max);
            Some(ks)
        })
        .collect()
}

/// The paper's fields, then those beyond that any kernel's space has.
pub(super) fn fields(spaces: &[KernelSpace]) -> Vec<&'static str> {
    let mut fields: Vec<&'static str> = NAMES.to_vec();
    for ks in spaces {
        for f in Fields::of(&ks.configs).names() {
            if !fields.contains(&f) {
                fields.push(f);
            }
        }
    }
    let order = |f: &&str| {
        crate::config::EXTENDED_ATTRIBUTES
            .iter()
            .position(|e| e == f)
            .map_or(0, |p| p + 1)
    };
    fields[NAMES.len()..].sort_by_key(order);
    fields
}

/// The runs of a strategy per kernel: its seeds when it draws at random,
/// else one.
fn runs(opts: &Options, st: Strategy) -> usize {
    if st.randomized() {
        opts.seeds.max(1)
    } else {
        1
    }
}

/// Every run, on `opts.threads` threads, in the order of their jobs.
pub(super) fn run_all(
    spaces: &[KernelSpace],
    kinds: &[Kind],
    opts: &Options,
    budget: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Done>, LearnError> {
    // Jobs: (strategy, kernel, seed); the slow ones (Bayesian
    // optimization) first, so the threads finish together.
    let mut jobs: Vec<(usize, usize, u64)> = Vec::new();
    for (si, &st) in opts.strategies.iter().enumerate() {
        for k in 0..spaces.len() {
            for seed in 1..=runs(opts, st) as u64 {
                jobs.push((si, k, seed));
            }
        }
    }
    jobs.sort_by_key(|&(si, _, _)| !matches!(opts.strategies[si], Strategy::Bo { .. }));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.max(1))
        .build()
        .map_err(std::io::Error::other)?;
    let through = std::sync::atomic::AtomicUsize::new(0);
    let total = jobs.len();
    let mut done: Vec<Done> = pool.install(|| {
        jobs.par_iter()
            .map(|&(si, k, seed)| {
                let r = one_run(
                    &spaces[k],
                    kinds,
                    opts.strategies[si],
                    seed,
                    budget,
                    opts.min_ei,
                    opts.bo_design,
                );
                let n = through.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(n, total);
                ((si, k, seed), r)
            })
            .collect()
    });
    done.sort_by_key(|(j, _)| *j);
    Ok(done)
}

/// Each strategy's curves: per kernel, then on average over the kernels.
pub(super) fn strategy_curves(
    opts: &Options,
    spaces: &[KernelSpace],
    done: &[Done],
    fields: &[&'static str],
    budget: usize,
) -> Vec<StrategyCurves> {
    let mut strategies = Vec::new();
    for (si, &st) in opts.strategies.iter().enumerate() {
        let mut kernels = Vec::new();
        for (k, ks) in spaces.iter().enumerate() {
            let these: Vec<&RunResult> = done
                .iter()
                .filter(|((s, kk, _), _)| *s == si && *kk == k)
                .map(|(_, r)| r)
                .collect();
            kernels.push(kernel_curve(ks, &these, fields, budget));
        }
        let at = |b: usize| -> Vec<f64> { kernels.iter().map(|k| k.percent[b]).collect() };
        let avg = |f: &dyn Fn(&KernelCurve) -> f64| -> f64 {
            kernels.iter().map(f).sum::<f64>() / kernels.len().max(1) as f64
        };
        strategies.push(StrategyCurves {
            strategy: st.name(),
            runs_per_kernel: runs(opts, st),
            mean: (0..budget).map(|b| means(&at(b)).0).collect(),
            geomean: (0..budget).map(|b| means(&at(b)).1).collect(),
            evaluations_to: (0..THRESHOLDS.len())
                .map(|t| avg(&|k| k.evaluations_to[t]))
                .collect(),
            reached: (0..THRESHOLDS.len())
                .map(|t| avg(&|k| k.reached[t]))
                .collect(),
            spent: (0..budget).map(|b| avg(&|k| k.spent[b])).collect(),
            kernels,
        });
    }
    strategies
}

/// A kernel's curves under one strategy, from its runs (`these`).
fn kernel_curve(
    ks: &KernelSpace,
    these: &[&RunResult],
    fields: &[&'static str],
    budget: usize,
) -> KernelCurve {
    let n = these.len() as f64;
    let percent: Vec<f64> = (0..budget)
        .map(|b| these.iter().map(|r| r.0[b]).sum::<f64>() / n)
        .collect();
    let first = |r: &Vec<f64>, t: f64| r.iter().position(|&p| p >= t - 1e-9);
    let evaluations_to = THRESHOLDS
        .iter()
        .map(|&t| {
            these
                .iter()
                .map(|r| first(&r.0, t).map_or(budget + 1, |b| b + 1) as f64)
                .sum::<f64>()
                / n
        })
        .collect();
    let reached = THRESHOLDS
        .iter()
        .map(|&t| these.iter().filter(|r| first(&r.0, t).is_some()).count() as f64 / n)
        .collect();
    let spent = (1..=budget)
        .map(|b| these.iter().map(|r| r.1.min(b) as f64).sum::<f64>() / n)
        .collect();
    KernelCurve {
        kernel: ks.name.clone(),
        percent,
        evaluations_to,
        reached,
        spent,
        lengthscales: these.first().and_then(|r| r.2.as_ref()).map(|l| {
            fields
                .iter()
                .map(|f| l.iter().find(|(n, _)| n == f).map(|p| p.1))
                .collect()
        }),
    }
}

/// `--trace`: each strategy's first-seed run on kernel `k`, as steps.
pub(super) fn traces(
    opts: &Options,
    spaces: &[KernelSpace],
    done: &[Done],
    k: usize,
) -> Vec<Trace> {
    opts.strategies
        .iter()
        .enumerate()
        .filter_map(|(si, st)| {
            done.iter()
                .find(|((s, kk, seed), _)| *s == si && *kk == k && *seed == 1)
                .map(|(_, r)| Trace {
                    strategy: st.name(),
                    kernel: spaces[k].name.clone(),
                    steps: spaces[k].trace(&r.3),
                })
        })
        .collect()
}
