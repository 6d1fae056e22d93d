//! Leave-one-benchmark-out evaluation (paper section 5): every model is
//! trained on all kernels but one and ranks the held-out kernel's
//! variants; the measured speedups of what it would have picked are
//! compared with the best in the space (Opt) and with random picks.

use super::dataset::Dataset;
use super::rng::Lcg;
use super::{Kind, LearnError, Regressor};
use crate::config::Config;
use rayon::iter::{ParallelBridge, ParallelIterator};
use serde::Serialize;

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
        }
    }
}

/// One held-out kernel's results, as speedups over its original.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KernelScores {
    pub kernel: String,
    pub variants: usize,
    pub opt: f64,
    /// The configuration of the best variant (its bit string in JSON).
    #[serde(serialize_with = "crate::config::as_bits::serialize")]
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
    let attrs: Vec<Vec<f64>> = d.rows.iter().map(|r| d.row_attributes(r)).collect();
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
    let fold = |j: usize| -> Fold {
        let (k, kind) = jobs[j];
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for (i, r) in d.rows.iter().enumerate() {
            if r.kernel != k {
                x.push(attrs[i].clone());
                y.push(targets[i]);
            }
        }
        let mut m = kind.model();
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

/// Indices of `rows` ordered by predicted speedup, best first (ties keep
/// the dataset order, so the ranking is deterministic).
pub fn ranking(rows: &[usize], predicted: &[f64]) -> Vec<usize> {
    let mut r = rows.to_vec();
    r.sort_by(|&a, &b| predicted[b].total_cmp(&predicted[a]).then(a.cmp(&b)));
    r
}

/// Multi-model candidates: every model's best guess, then every model's
/// second, … until `n` distinct variants (what the learned `optimize`
/// runs); each with the (model index, depth) pairs that chose it.
pub fn round_robin(rankings: &[Vec<usize>], n: usize) -> Vec<(usize, Vec<(usize, usize)>)> {
    let mut out: Vec<(usize, Vec<(usize, usize)>)> = Vec::new();
    let longest = rankings.iter().map(Vec::len).max().unwrap_or(0);
    for depth in 0..longest {
        for (m, r) in rankings.iter().enumerate() {
            let Some(&v) = r.get(depth) else { continue };
            if let Some(c) = out.iter_mut().find(|c| c.0 == v) {
                c.1.push((m, depth));
            } else if out.len() < n {
                out.push((v, vec![(m, depth)]));
            }
        }
        if out.len() >= n {
            break;
        }
    }
    out
}

/// The row the models rank best together: the least sum of ranks over
/// the models (ties to the earlier row). What `optimize --no-run` picks
/// with multi-model.
pub fn consensus(predicted: &[Vec<f64>], rows: &[usize]) -> Option<usize> {
    let mut total = vec![0usize; rows.len()];
    let at: std::collections::HashMap<usize, usize> =
        rows.iter().enumerate().map(|(j, &i)| (i, j)).collect();
    for p in predicted {
        for (rank, i) in ranking(rows, p).into_iter().enumerate() {
            total[at[&i]] += rank;
        }
    }
    (0..rows.len())
        .min_by_key(|&j| (total[j], rows[j]))
        .map(|j| rows[j])
}

/// Below this a predicted speedup is treated as this (linear models can
/// predict zero or less; a log must not blow up).
const FLOOR: f64 = 1e-3;

/// The six models as one: the mean of their log predicted speedups, per
/// variant. A log mean lets no single model's scale dominate.
pub fn ensemble(predicted: &[Vec<f64>], rows: &[usize]) -> Vec<f64> {
    rows.iter()
        .map(|&i| {
            predicted.iter().map(|p| p[i].max(FLOOR).ln()).sum::<f64>()
                / predicted.len().max(1) as f64
        })
        .collect()
}

/// Bits in which two configurations differ.
fn distance(a: &Config, b: &Config) -> usize {
    let (a, b) = (a.bits(), b.bits());
    a.bytes().zip(b.bytes()).filter(|(x, y)| x != y).count()
}

/// How many bits apart the diversified candidates must be.
pub const DIVERSE_BITS: usize = 3;

/// Diversified candidates: the ensemble's best variant, then the next
/// best that differs from every one taken in at least `bits` bits of its
/// configuration, … until `n`; if the space runs out of such variants the
/// rest are filled in ensemble order. Near neighbours of a good guess tend
/// to be good or bad together, so spending the runs on distinct regions
/// of the space recovers more of Opt than the models' top-N do. Returns
/// positions into `score` / `configs`.
pub fn diverse(score: &[f64], configs: &[Config], n: usize, bits: usize) -> Vec<usize> {
    let all: Vec<usize> = (0..score.len()).collect();
    let order = ranking(&all, score);
    let mut out: Vec<usize> = Vec::new();
    for &v in &order {
        if out.len() >= n {
            break;
        }
        if out
            .iter()
            .all(|&w| distance(&configs[v], &configs[w]) >= bits)
        {
            out.push(v);
        }
    }
    for &v in &order {
        if out.len() >= n {
            break;
        }
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
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

/// Leave-one-out predictions as CSV: one line per variant with its
/// kernel, configuration, weight, measured speedup and every model's
/// predicted speedup.
pub fn predictions_csv(d: &Dataset, models: &[Kind], predicted: &[Vec<f64>]) -> String {
    let mut out = String::from("kernel,variant_id,config,configs,speedup");
    for m in models {
        out.push(',');
        out.push_str(m.name());
    }
    out.push('\n');
    for (i, r) in d.rows.iter().enumerate() {
        out.push_str(&format!(
            "{},{},{},{},{}",
            d.kernels[r.kernel].name,
            r.variant_id,
            r.config.bits(),
            r.configs,
            r.speedup
        ));
        for p in predicted {
            out.push_str(&format!(",{}", p[i]));
        }
        out.push('\n');
    }
    out
}

/// Predictions and scores in one go.
pub fn evaluate(d: &Dataset, opts: &Options) -> Result<Evaluation, LearnError> {
    let p = predictions(d, opts)?;
    Ok(score(d, &opts.models, &p, opts))
}

/// Arithmetic and geometric means of a column.
pub fn means(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = v.len() as f64;
    let a = v.iter().sum::<f64>() / n;
    let g = (v.iter().map(|x| x.ln()).sum::<f64>() / n).exp();
    (a, g)
}

/// A column of the tables: a name and a value per kernel.
type Column = (String, Vec<f64>);

impl Evaluation {
    fn columns(&self, n_shot: bool) -> Vec<Column> {
        let mut c = vec![
            (
                "Opt".to_string(),
                self.kernels.iter().map(|k| k.opt).collect(),
            ),
            (
                "Random".to_string(),
                self.kernels.iter().map(|k| k.random).collect(),
            ),
        ];
        for (m, name) in self.models.iter().enumerate() {
            c.push((
                name.clone(),
                self.kernels
                    .iter()
                    .map(|k| if n_shot { k.n_shot[m] } else { k.one_shot[m] })
                    .collect(),
            ));
        }
        // Multi-model 1-shot is the models' consensus; N-shot the best of
        // every model's top-1 (the paper's).
        c.push((
            "multi-model".to_string(),
            self.kernels
                .iter()
                .map(|k| if n_shot { k.multi } else { k.consensus })
                .collect(),
        ));
        if n_shot {
            c.push((
                format!("multi-model ×{}", self.shots),
                self.kernels.iter().map(|k| k.multi_n).collect(),
            ));
        }
        c.push((
            "diverse".to_string(),
            self.kernels
                .iter()
                .map(|k| if n_shot { k.diverse_n } else { k.diverse })
                .collect(),
        ));
        c
    }

    /// Per-kernel value as a percentage of that kernel's Opt.
    fn percent(&self, col: &[f64]) -> Vec<f64> {
        col.iter()
            .zip(&self.kernels)
            .map(|(v, k)| 100.0 * v / k.opt)
            .collect()
    }

    /// Mean over kernels of each model's and multi-model's % of Opt.
    pub fn summary(&self) -> Vec<(String, f64, f64, f64, f64)> {
        let one = self.columns(false);
        let n = self.columns(true);
        let mut out = Vec::new();
        for (name, col) in n.iter().skip(1) {
            let single = one.iter().find(|c| &c.0 == name).map(|c| c.1.clone());
            let (s1, p1) = match &single {
                Some(c) => (means(c).0, means(&self.percent(c)).0),
                None => (f64::NAN, f64::NAN),
            };
            out.push((
                name.clone(),
                s1,
                p1,
                means(col).0,
                means(&self.percent(col)).0,
            ));
        }
        out
    }

    /// The tables as Markdown: speedups over the original and as % of
    /// Opt, for 1-shot and for N-shot with multi-model (paper Tables 8–13).
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        for (title, n_shot) in [("1-shot", false), (&*format!("{}-shot", self.shots), true)] {
            let cols = self.columns(n_shot);
            for pct in [false, true] {
                s += &format!(
                    "\n### {title}: {}\n\n",
                    if pct {
                        "% of Opt"
                    } else {
                        "speedup over the original"
                    }
                );
                s += "| kernel |";
                for (n, _) in &cols {
                    s += &format!(" {n} |");
                }
                s += "\n|---|";
                s += &"---:|".repeat(cols.len());
                s += "\n";
                let vals: Vec<Vec<f64>> = cols
                    .iter()
                    .map(|(_, c)| if pct { self.percent(c) } else { c.clone() })
                    .collect();
                for (k, ks) in self.kernels.iter().enumerate() {
                    s += &format!("| {} |", ks.kernel);
                    for v in &vals {
                        s += &if pct {
                            format!(" {:.0} |", v[k])
                        } else {
                            format!(" {:.2} |", v[k])
                        };
                    }
                    s += "\n";
                }
                for (label, geo) in [("mean", false), ("geomean", true)] {
                    s += &format!("| **{label}** |");
                    for v in &vals {
                        let (a, g) = means(v);
                        let x = if geo { g } else { a };
                        s += &if pct {
                            format!(" {x:.0} |")
                        } else {
                            format!(" {x:.2} |")
                        };
                    }
                    s += "\n";
                }
            }
        }
        s
    }

    /// The best measured configuration of every kernel (the paper's
    /// Tables 3–4), in readable form.
    pub fn best_configurations(&self) -> String {
        let mut s = String::from(
            "\n### Best measured configuration per kernel\n\n| kernel | variants | speedup | configuration |\n|---|---:|---:|---|\n",
        );
        for k in &self.kernels {
            s += &format!(
                "| {} | {} | {:.2} | `{}` |\n",
                k.kernel, k.variants, k.opt, k.opt_config
            );
        }
        s
    }

    /// One line per kernel and column, for spreadsheets.
    pub fn csv(&self) -> String {
        let mut s = String::from("kernel,variants,column,shots,speedup,percent_of_opt\n");
        for (n_shot, shots) in [(false, 1), (true, self.shots)] {
            for (name, col) in self.columns(n_shot) {
                if n_shot && (name == "Opt" || name == "Random") {
                    continue;
                }
                for (k, v) in self.kernels.iter().zip(&col) {
                    s += &format!(
                        "{},{},{},{},{:.6},{:.3}\n",
                        k.kernel,
                        k.variants,
                        name,
                        shots,
                        v,
                        100.0 * v / k.opt
                    );
                }
            }
        }
        s
    }
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

    #[test]
    fn round_robin_fills_with_deeper_guesses_when_models_agree() {
        let r = vec![vec![5, 1, 2], vec![5, 2, 1]];
        let c = round_robin(&r, 3);
        assert_eq!(c.iter().map(|x| x.0).collect::<Vec<_>>(), vec![5, 1, 2]);
        assert_eq!(c[0].1, vec![(0, 0), (1, 0)]);
        assert_eq!(round_robin(&r, 10).len(), 3);
    }

    #[test]
    fn diversified_candidates_skip_near_neighbours_then_fill_in() {
        let score = [3.0, 2.0, 1.0, 0.0];
        // Bits 2 to 5 (tiles, wavefront), as 0000, 0001, 0011 and 1111.
        let configs = [
            "000000000000",
            "000001000000",
            "000011000000",
            "001111000000",
        ]
        .map(|b| Config::from_bits(b).unwrap());
        assert_eq!(diverse(&score, &configs, 2, 2), vec![0, 2]);
        assert_eq!(diverse(&score, &configs, 3, 2), vec![0, 2, 3]);
        // Only 3 is 3 bits from 0; 1 fills the last place.
        assert_eq!(diverse(&score, &configs, 3, 3), vec![0, 3, 1]);
        assert_eq!(diverse(&score, &configs, 9, 0), vec![0, 1, 2, 3]);
        // The ensemble ignores a model's non-positive predictions' size.
        let e = ensemble(&[vec![2.0, -5.0], vec![2.0, 0.0]], &[0, 1]);
        assert!((e[0] - 2f64.ln()).abs() < 1e-12 && e[1] == FLOOR.ln());
    }

    #[test]
    fn ranking_is_deterministic_on_ties() {
        assert_eq!(
            ranking(&[4, 2, 7], &[0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.5]),
            vec![2, 4, 7]
        );
    }
}
