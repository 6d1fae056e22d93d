//! Leave-one-benchmark-out evaluation (paper section 5): every model is
//! trained on all kernels but one and ranks the held-out kernel's
//! variants; the measured speedups of what it would have picked are
//! compared with the best in the space (Opt) and with random picks.
//!
//! The selection strategies (what a model's predictions make a selection
//! measure) are in `strategy.rs`; the tables in `table.rs`.

mod strategy;
mod table;

use super::dataset::Dataset;
use super::{Kind, LearnError, Regressor};
use crate::config::Config;
use crate::lab::rng::Lcg;
use rayon::iter::{ParallelBridge, ParallelIterator};
use serde::Serialize;
pub(crate) use strategy::{
    DIVERSE_BITS, FLOOR, consensus, diverse, ensemble, ranking, round_robin,
};
pub use table::predictions_csv;

/// What to evaluate and how.
#[derive(Debug, Clone)]
pub struct Options {
    pub models: Vec<Kind>,
    /// N of N-shot.
    pub shots: usize,
    /// Random draws averaged for the Random column.
    pub random_draws: usize,
    pub seed: u64,
    /// Worker threads for the folds.
    pub threads: usize,
    /// What the models learn.
    pub target: super::Target,
    /// Train each fold on this many of the other kernels only, drawn at
    /// random per held-out kernel ([`training_kernels`]): how the
    /// models' leave-one-out quality grows with the kernels they learn
    /// from. `None`: all the others.
    pub train_kernels: Option<usize>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            models: Kind::ALL.to_vec(),
            shots: 6,
            random_draws: 100,
            seed: 1,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            target: super::Target::Speedup,
            train_kernels: None,
        }
    }
}

/// Which kernels a fold holding out `held_out` learns from: every other
/// kernel with variants, or with `n`, `n` of them drawn at random (the
/// draw a function of `seed` and `held_out` alone, so `evaluate` and
/// `simulate` draw the same).
pub(crate) fn training_kernels(
    d: &Dataset,
    held_out: usize,
    n: Option<usize>,
    seed: u64,
) -> Vec<bool> {
    let by_kernel = d.rows_by_kernel();
    let mut others: Vec<usize> = (0..d.kernels.len())
        .filter(|&k| k != held_out && !by_kernel[k].is_empty())
        .collect();
    if let Some(n) = n.filter(|&n| n < others.len()) {
        // A partial Fisher–Yates shuffle: the first n are the draw.
        let mut rng = Lcg::new(seed ^ (held_out as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for i in 0..n {
            let j = i
                + ((rng.uniform() * (others.len() - i) as f64) as usize).min(others.len() - i - 1);
            others.swap(i, j);
        }
        others.truncate(n);
    }
    let mut keep = vec![false; d.kernels.len()];
    for k in others {
        keep[k] = true;
    }
    keep
}

/// One held-out kernel's results, as speedups over its original.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KernelScores {
    pub kernel: String,
    pub variants: usize,
    pub opt: f64,
    /// The configuration of the best variant (its bit string in JSON).
    #[serde(serialize_with = "crate::config::as_text::serialize")]
    pub opt_config: Config,
    pub random: f64,
    /// Per model (in `Evaluation::models` order): its top-1 variant.
    pub one_shot: Vec<f64>,
    /// Per model: the best of its top N.
    pub n_shot: Vec<f64>,
    /// The best of every model's top-1 (the paper's multi-model).
    pub multi: f64,
    /// The best of N distinct variants taken round-robin from the models'
    /// rankings (every top-1 first): multi-model with N runs, as the
    /// learned `optimize` runs it.
    pub multi_n: f64,
    /// The models' consensus (least sum of ranks): multi-model 1-shot,
    /// what `optimize --no-run` picks.
    pub consensus: f64,
    /// The six models' ensemble's top-1 (`--strategy diverse --no-run`).
    pub diverse: f64,
    /// The best of N diversified candidates of the ensemble
    /// (`optimize --strategy diverse`).
    pub diverse_n: f64,
}

/// A whole evaluation: per kernel, and summaries over kernels.
#[derive(Debug, Clone, Serialize)]
pub struct Evaluation {
    pub models: Vec<String>,
    pub shots: usize,
    pub kernels: Vec<KernelScores>,
}

/// Leave-one-benchmark-out predictions: for each model, a predicted
/// speedup for every row, made by that model trained without the row's
/// kernel.
pub fn predictions(d: &Dataset, opts: &Options) -> Result<Vec<Vec<f64>>, LearnError> {
    predictions_with(d, opts, &|_, _| {})
}

/// [`predictions`], calling `progress(done, total)` as each of the
/// `total` folds (one model, one held-out kernel) is through, from the
/// worker threads.
pub fn predictions_with(
    d: &Dataset,
    opts: &Options,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Vec<f64>>, LearnError> {
    let by_kernel = d.rows_by_kernel();
    if by_kernel.iter().filter(|r| !r.is_empty()).count() < 2 {
        return Err(LearnError::Data(
            "leave-one-out needs at least two kernels with variants".into(),
        ));
    }
    let attrs: Vec<Vec<f64>> = d.all_row_attributes();
    // Per-kernel targets: a held-out kernel's rows never reach its model.
    let targets = opts.target.encode(d);
    let jobs: Vec<(usize, Kind)> = (0..d.kernels.len())
        .filter(|&k| !by_kernel[k].is_empty())
        .flat_map(|k| opts.models.iter().map(move |&m| (k, m)))
        .collect();
    // The slow models first, so the threads finish together.
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&j| match jobs[j].1 {
        Kind::Mlp => 0,
        Kind::Svm => 1,
        Kind::KStar => 2,
        _ => 3,
    });
    // One fold of one model: its predictions for the held-out rows.
    type Fold = Result<Vec<(usize, f64)>, LearnError>;
    let training: Vec<Vec<bool>> = (0..d.kernels.len())
        .map(|k| training_kernels(d, k, opts.train_kernels, opts.seed))
        .collect();
    let fold = |j: usize| -> Fold {
        let (k, kind) = jobs[j];
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for (i, r) in d.rows.iter().enumerate() {
            if training[k][r.kernel] {
                x.push(attrs[i].clone());
                y.push(targets[i]);
            }
        }
        let mut m = kind.model()?;
        m.fit(&x, &y)?;
        Ok(by_kernel[k]
            .iter()
            .map(|&i| (i, opts.target.decode(m.predict(&attrs[i]))))
            .collect())
    };
    // The folds are independent. `par_bridge` hands them out in `order`,
    // as a work queue would; each result goes to its own slots, so the
    // output does not depend on which thread ran what. Against the
    // hand-written queue of threads it replaced, the same time: `cargo
    // bench --bench learn -- --kernels 16 --variants 120 --runs 1`, seven
    // whole runs of each interleaved on 2 cores (load ~5 from other
    // work), median wall 14.4 s against 14.0 s, min 10.4 s against 13.5 s.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.max(1))
        .build()
        .map_err(std::io::Error::other)?;
    let through = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, Fold)> = pool.install(|| {
        order
            .iter()
            .par_bridge()
            .map(|&j| {
                let f = fold(j);
                let n = through.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(n, jobs.len());
                (j, f)
            })
            .collect()
    });
    // The first failure in job order, whichever thread met it first.
    done.sort_by_key(|(j, _)| *j);
    let mut out = vec![vec![f64::NAN; d.rows.len()]; opts.models.len()];
    for (j, preds) in done {
        let mi = opts.models.iter().position(|&m| m == jobs[j].1).unwrap();
        for (i, p) in preds? {
            out[mi][i] = p;
        }
    }
    Ok(out)
}

/// The arithmetic of the paper's tables, from predictions.
pub fn score(d: &Dataset, models: &[Kind], predicted: &[Vec<f64>], opts: &Options) -> Evaluation {
    let mut kernels = Vec::new();
    for (k, rows) in d.rows_by_kernel().into_iter().enumerate() {
        if rows.is_empty() {
            continue;
        }
        let s = |i: usize| d.rows[i].speedup;
        let best = *rows
            .iter()
            .max_by(|&&a, &&b| s(a).total_cmp(&s(b)).then(b.cmp(&a)))
            .unwrap();
        // Random: configurations drawn uniformly, so a variant is drawn in
        // proportion to the configurations that produce it.
        let weights: Vec<usize> = rows.iter().map(|&i| d.rows[i].configs.max(1)).collect();
        let total: usize = weights.iter().sum();
        let mut rng = Lcg::new(opts.seed.wrapping_add(k as u64));
        let mut acc = 0.0;
        for _ in 0..opts.random_draws {
            let mut t = ((rng.uniform() * total as f64) as usize).min(total - 1);
            let mut pick = rows[0];
            for (w, &i) in weights.iter().zip(&rows) {
                if t < *w {
                    pick = i;
                    break;
                }
                t -= w;
            }
            acc += s(pick);
        }
        let mut one_shot = Vec::new();
        let mut n_shot = Vec::new();
        for p in predicted {
            let r = ranking(&rows, p);
            one_shot.push(s(r[0]));
            n_shot.push(
                r.iter()
                    .take(opts.shots.max(1))
                    .map(|&i| s(i))
                    .fold(f64::NEG_INFINITY, f64::max),
            );
        }
        let multi = one_shot.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let rankings: Vec<Vec<usize>> = predicted.iter().map(|p| ranking(&rows, p)).collect();
        let multi_n = round_robin(&rankings, opts.shots.max(1))
            .iter()
            .map(|c| s(c.0))
            .fold(f64::NEG_INFINITY, f64::max);
        let configs: Vec<Config> = rows.iter().map(|&i| d.rows[i].config).collect();
        let picks = diverse(
            &ensemble(predicted, &rows),
            &configs,
            opts.shots.max(1),
            DIVERSE_BITS,
        );
        let diverse_n = picks
            .iter()
            .map(|&j| s(rows[j]))
            .fold(f64::NEG_INFINITY, f64::max);
        kernels.push(KernelScores {
            kernel: d.kernels[k].name.clone(),
            variants: rows.len(),
            opt: s(best),
            opt_config: d.rows[best].config,
            random: acc / opts.random_draws.max(1) as f64,
            one_shot,
            n_shot,
            multi,
            multi_n,
            consensus: consensus(predicted, &rows).map_or(f64::NAN, s),
            diverse: s(rows[picks[0]]),
            diverse_n,
        });
    }
    Evaluation {
        models: models.iter().map(|m| m.name().to_string()).collect(),
        shots: opts.shots,
        kernels,
    }
}

/// Arithmetic and geometric means of a column.
pub(crate) fn means(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = v.len() as f64;
    let a = v.iter().sum::<f64>() / n;
    let g = (v.iter().map(|x| x.ln()).sum::<f64>() / n).exp();
    (a, g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::dataset::{Kernel, Row, Selection};

    fn hand_made() -> Dataset {
        let k = |name: &str| Kernel {
            name: name.into(),
            features: vec![0.0],
            baseline_seconds: 1.0,
        };
        let r = |kernel, config: &str, speedup| Row {
            kernel,
            variant_id: 0,
            config: Config::from_bits(config).unwrap(),
            configs: 1,
            speedup,
            all_configs: Vec::new(),
        };
        Dataset {
            selection: Selection::default(),
            machine: "m".into(),
            compiler: "c".into(),
            flags: String::new(),
            feature_names: vec!["F".into()],
            kernels: vec![k("a"), k("b")],
            rows: vec![
                r(0, "000000000000", 1.0),
                r(0, "000000000001", 4.0),
                r(0, "000000000011", 2.0),
                r(0, "000000000111", 0.5),
                r(1, "000000000000", 3.0),
                r(1, "000000000001", 3.0),
            ],
            extended_names: Vec::new(),
            beyond_paper: 0,
        }
    }

    #[test]
    fn folds_give_the_same_predictions_on_any_number_of_threads() {
        let d = Dataset::synthetic(4, 12, 3, 7);
        let run = |threads| {
            let opts = Options {
                models: vec![Kind::Lr, Kind::Ibk, Kind::M5p, Kind::KStar],
                threads,
                ..Options::default()
            };
            predictions(&d, &opts).unwrap()
        };
        let one = run(1);
        assert!(one.iter().flatten().all(|p| p.is_finite()));
        assert_eq!(one, run(3));
    }

    #[test]
    fn training_kernels_draws_n_others_repeatably() {
        let d = Dataset::synthetic(9, 10, 3, 7);
        let all = training_kernels(&d, 4, None, 1);
        assert_eq!(all.iter().filter(|&&k| k).count(), 8);
        assert!(!all[4]);
        assert_eq!(training_kernels(&d, 4, Some(8), 1), all);
        assert_eq!(training_kernels(&d, 4, Some(20), 1), all);
        let three = training_kernels(&d, 4, Some(3), 1);
        assert_eq!(three.iter().filter(|&&k| k).count(), 3);
        assert!(!three[4]);
        assert_eq!(three, training_kernels(&d, 4, Some(3), 1));
        // Other held-out kernels and seeds draw other sets.
        let draws: std::collections::HashSet<Vec<bool>> = (1..6)
            .map(|seed| training_kernels(&d, 4, Some(3), seed))
            .collect();
        assert!(draws.len() > 1);
        // A fold learns from its draw alone: fewer kernels, other
        // predictions, each still finite.
        let go = |train_kernels| {
            let opts = Options {
                models: vec![Kind::Lr, Kind::Ibk],
                threads: 2,
                train_kernels,
                ..Options::default()
            };
            predictions(&d, &opts).unwrap()
        };
        let (full, few) = (go(None), go(Some(2)));
        assert!(few.iter().flatten().all(|p| p.is_finite()));
        assert_ne!(full, few);
        assert_eq!(go(Some(8)), full);
    }

    #[test]
    fn the_tables_arithmetic_is_pinned() {
        let d = hand_made();
        // Two "models": one ranks kernel a's rows 3,2,1,0 (worst first
        // at the top), the other ranks row 2 (speedup 2) first.
        let p1 = vec![0.0, 1.0, 2.0, 3.0, 5.0, 4.0];
        let p2 = vec![0.0, 0.0, 9.0, 1.0, 1.0, 1.0];
        let opts = Options {
            shots: 2,
            random_draws: 100,
            ..Options::default()
        };
        let e = score(&d, &[Kind::Lr, Kind::Ibk], &[p1, p2], &opts);
        let a = &e.kernels[0];
        assert_eq!(a.opt, 4.0);
        assert_eq!(a.opt_config.bits(), "000000000001");
        assert_eq!(a.one_shot, vec![0.5, 2.0]);
        // Top 2: p1 → rows 3, 2 → max(0.5, 2); p2 → rows 2, 3 → 2.
        assert_eq!(a.n_shot, vec![2.0, 2.0]);
        assert_eq!(a.multi, 2.0);
        // Round-robin to 2 distinct: p1's #1 (row 3), p2's #1 (row 2).
        assert_eq!(a.multi_n, 2.0);
        // Ensemble (mean log, floored): rows 2, 3, 1, 0; rows 3, 1, 0 are
        // all within 2 bits of row 2, so row 3 only fills in.
        assert_eq!((a.diverse, a.diverse_n), (2.0, 2.0));
        // Sums of ranks: row 0 → 3 + 3, 1 → 2 + 2, 2 → 1 + 0, 3 → 0 + 1;
        // rows 2 and 3 tie, the earlier wins.
        assert_eq!(a.consensus, 2.0);
        // Random over four equally likely variants: mean 1.875.
        assert!((a.random - 1.875).abs() < 0.35, "{}", a.random);
        let b = &e.kernels[1];
        assert_eq!((b.opt, b.random, b.multi), (3.0, 3.0, 3.0));
        assert_eq!(b.one_shot, vec![3.0, 3.0]);
        // Summary: LR 1-shot mean (0.5 + 3) / 2 = 1.75, % of Opt
        // (12.5 + 100) / 2 = 56.25; multi-model 6-shot column mean 2.5.
        let sum = e.summary();
        let lr = sum.iter().find(|r| r.0 == "LR").unwrap();
        assert_eq!((lr.1, lr.2), (1.75, 56.25));
        assert_eq!((lr.3, lr.4), (2.5, 75.0));
        let multi = sum.iter().find(|r| r.0 == "multi-model").unwrap();
        assert_eq!((multi.3, multi.4), (2.5, 75.0));
        let (am, gm) = means(&[1.0, 4.0]);
        assert_eq!((am, gm), (2.5, 2.0));
        let md = e.markdown();
        assert!(md.contains("| a | 4.00 |"), "{md}");
        assert!(md.contains("### 2-shot: % of Opt"));
        let best = e.best_configurations();
        assert!(
            best.contains(
                "| a | 4 | 4.00 | `fuse=no,tile=1x1x1,wave=0,omp=0,prevec=0,simd=0,uj=2` |"
            ),
            "{best}"
        );
        assert!(e.csv().lines().count() > 10);
    }
}
