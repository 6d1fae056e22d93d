//! The table the ranking model of the variant learns from (issue 38): for
//! every measured variant of a corpus dataset, the features of the
//! variant itself ([`crate::engine::features`]: its loops, accesses and
//! operations after the transformation), computed at the parameter
//! values its kernel runs with at the dataset's size (recorded by one
//! native run of the instrumented original), on this machine's caches,
//! with the roofline estimate from this machine's measured peaks and the
//! original program's counter rates beside them; one group per kernel,
//! labelled with the log speedup.
//!
//! Stages: locate each kernel's source in the corpus → record its
//! parameters in one run → compute every variant's features (in
//! parallel) → add the roofline and the original's counters → the table.

use crate::config::Config;
use crate::engine::features::{
    MachineCaches, ParamValues, VariantFeatures, roofline_time, variant_features,
    variant_features_each,
};
use crate::frontend::{Options, SourceFile, parse_file};
use crate::lab::build::Recipe;
use crate::lab::compiler::Compiler;
use crate::lab::harness::{Harness, OriginalError};
use crate::lab::machine::{Caches, Peaks};
use crate::lab::runner::Protocol;
use crate::lab::scratch::Scratch;
use crate::learn::dataset::Dataset;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why the table could not be made.
#[derive(Debug, thiserror::Error)]
pub enum VariantsError {
    #[error("kernel `{0}` of the dataset is not in the corpus under {1}")]
    NotInCorpus(String, PathBuf),
    #[error("{0}: {1}")]
    Source(PathBuf, String),
    #[error("{path}: its parameters could not be recorded: {why}")]
    Parameters { path: PathBuf, why: OriginalError },
    #[error(transparent)]
    Machine(#[from] crate::lab::machine::MachineError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// One variant of the table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantRow {
    /// Index into [`VariantTable::kernels`].
    pub kernel: usize,
    #[serde(with = "crate::config::as_text")]
    pub config: Config,
    pub speedup: f64,
    /// The values of [`VariantTable::names`].
    pub x: Vec<f64>,
}

/// The table: feature names, kernels, rows.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantTable {
    /// The variant's features ([`VariantFeatures::names`]), then
    /// `roofline_log_ratio` (the log of the variant's roofline time over
    /// the plain schedule's), then the original's counters (`orig_…`).
    pub names: Vec<String>,
    pub kernels: Vec<String>,
    pub rows: Vec<VariantRow>,
    /// Rows of the dataset whose features could not be computed (the
    /// engine refused the configuration on this kernel): left out.
    pub skipped: usize,
    /// What the features were computed on.
    pub caches: Caches,
    pub peaks: Peaks,
}

/// How the table is made.
pub struct Setup<'a> {
    /// The corpus directory (`polybench/`): a dataset's kernel `gemm` is
    /// its `*/gemm.c`.
    pub corpus: &'a Path,
    /// Builds and runs the originals (their parameters), and measures the
    /// machine's peaks.
    pub compiler: &'a Compiler,
    pub threads: usize,
    /// Where the machine's peaks are cached.
    pub cache: &'a Path,
    /// The machine the dataset was measured on, when it is not this one:
    /// the features are of its caches and the roofline of its peaks (those
    /// a table made there records), not this machine's.
    pub measured_on: Option<(Caches, Peaks)>,
}

/// The group names of the features, for ablations: each feature's name
/// starts with one of them, or is in the group `other`.
pub fn feature_group(name: &str) -> &'static str {
    if name.starts_with("orig_") {
        "original counters"
    } else if name.starts_with("roofline") || name.contains("intensity") || name.contains("flops") {
        "compute and roofline"
    } else if name.contains("omp") || name.contains("parallel") || name.contains("simd") {
        "parallelism and vectors"
    } else if name.contains("trip") || name.contains("overhead") || name.contains("guards") {
        "loops"
    } else if name.contains("stride")
        || name.contains("bytes")
        || name.contains("lines")
        || name.contains("footprint")
        || name.contains("fits")
        || name.contains("reuse")
        || name.contains("pack")
    {
        "memory"
    } else {
        "other"
    }
}

/// This machine's caches as the features see them, for `threads`
/// threads.
pub fn machine_caches(caches: &Caches, threads: usize) -> MachineCaches {
    MachineCaches {
        l1: caches.l1,
        l2: caches.l2,
        l3: caches.l3,
        line: caches.line,
        threads: threads as u32,
    }
}

/// The names of a row of [`feature_rows`]: the variant's features, then
/// `roofline_log_ratio`.
pub fn variant_feature_names() -> Vec<String> {
    let mut names: Vec<String> = VariantFeatures::names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    names.push("roofline_log_ratio".into());
    names
}

/// The feature row of each configuration of `src` (in parallel): the
/// variant's features, then the log of its roofline time over the plain
/// schedule's on this machine's `peaks`; `None` where the engine does
/// not transform under the configuration.
pub fn feature_rows(
    src: &SourceFile,
    context: Option<&str>,
    configs: &[Config],
    params: &ParamValues,
    machine: &MachineCaches,
    peaks: &Peaks,
) -> Vec<Option<Vec<f64>>> {
    let base = variant_features(src, &Config::default(), context, params, machine)
        .map(|f| roofline_time(&f, peaks.flops, peaks.bandwidth))
        .ok();
    // The configurations of one schedule share its computation
    // (`variant_features_each`); the schedules run in parallel.
    let groups = crate::engine::space::schedule_groups(configs);
    let computed: Vec<Vec<(usize, Option<Vec<f64>>)>> = groups
        .par_iter()
        .map(|members| {
            let group: Vec<Config> = members.iter().map(|&k| configs[k]).collect();
            let each = variant_features_each(src, &group, context, params, machine);
            members
                .iter()
                .zip(each)
                .map(|(&k, f)| {
                    let row = f.ok().map(|f| {
                        let mut x = f.values();
                        let t = roofline_time(&f, peaks.flops, peaks.bandwidth);
                        x.push(match base {
                            Some(b) if b > 0.0 && t > 0.0 => (t / b).ln(),
                            _ => 0.0,
                        });
                        x
                    });
                    (k, row)
                })
                .collect()
        })
        .collect();
    let mut rows: Vec<Option<Vec<f64>>> = vec![None; configs.len()];
    for (k, row) in computed.into_iter().flatten() {
        rows[k] = row;
    }
    rows
}

/// The table of `d`'s variants (every row of every kernel).
pub fn table(d: &Dataset, setup: &Setup<'_>) -> Result<VariantTable, VariantsError> {
    let (caches, peaks) = match &setup.measured_on {
        Some((c, p)) => (*c, p.clone()),
        None => (
            Caches::this(),
            Peaks::measured_or_cached(setup.compiler, setup.threads, setup.cache)?,
        ),
    };
    let machine = machine_caches(&caches, setup.threads);
    let mut names = variant_feature_names();
    names.extend(d.feature_names.iter().map(|n| format!("orig_{n}")));
    let by_kernel = d.rows_by_kernel();
    let mut rows = Vec::new();
    let mut skipped = 0;
    for (k, kernel) in d.kernels.iter().enumerate() {
        if by_kernel[k].is_empty() {
            continue;
        }
        let file = corpus_file(setup.corpus, &kernel.name)?;
        let src = parse_file(&file, &Options::default())
            .map_err(|e| VariantsError::Source(file.clone(), e.to_string()))?;
        let params = parameters(&src, &file, d, setup)?;
        let configs: Vec<Config> = by_kernel[k].iter().map(|&i| d.rows[i].config).collect();
        let computed = feature_rows(&src, None, &configs, &params, &machine, &peaks);
        for (&i, x) in by_kernel[k].iter().zip(computed) {
            match x {
                Some(mut x) => {
                    x.extend(&kernel.features);
                    rows.push(VariantRow {
                        kernel: k,
                        config: d.rows[i].config,
                        speedup: d.rows[i].speedup,
                        x,
                    });
                }
                None => skipped += 1,
            }
        }
    }
    Ok(VariantTable {
        names,
        kernels: d.kernels.iter().map(|k| k.name.clone()).collect(),
        rows,
        skipped,
        caches,
        peaks,
    })
}

/// The corpus file of kernel `name`: `corpus/*/name.c` or
/// `corpus/*/*/name.c`.
fn corpus_file(corpus: &Path, name: &str) -> Result<PathBuf, VariantsError> {
    let file = format!("{name}.c");
    let mut dirs = vec![corpus.to_path_buf()];
    for _ in 0..3 {
        let mut next = Vec::new();
        for d in &dirs {
            let here = d.join(&file);
            if here.is_file() {
                return Ok(here);
            }
            for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
                if e.path().is_dir() {
                    next.push(e.path());
                }
            }
        }
        next.sort();
        dirs = next;
    }
    Err(VariantsError::NotInCorpus(
        name.to_string(),
        corpus.to_path_buf(),
    ))
}

/// The values of the kernel's SCoP parameters when it runs at the
/// dataset's size: one native run of its instrumented original.
fn parameters(
    src: &SourceFile,
    file: &Path,
    d: &Dataset,
    setup: &Setup<'_>,
) -> Result<ParamValues, VariantsError> {
    corpus_parameters(
        src,
        file,
        setup.compiler,
        d.selection.size,
        vec![
            crate::lab::build::source_dir(file),
            setup.corpus.join("include"),
        ],
        setup.threads,
    )
}

/// The values of the SCoP parameters of `file`, a corpus-style kernel
/// (its source `src`), when it runs at `size`: one native run of its
/// instrumented original, built by `compiler` with `include` (what the
/// corpus' protocol, which records none, cannot say; a program measured
/// through the instrumentation records them as it is measured).
pub fn corpus_parameters(
    src: &SourceFile,
    file: &Path,
    compiler: &Compiler,
    size: crate::lab::size::Size,
    include: Vec<PathBuf>,
    threads: usize,
) -> Result<ParamValues, VariantsError> {
    let work = Scratch::new("variants")?;
    let text = crate::engine::pipeline::instrumented(src, None, None)
        .map_err(|e| VariantsError::Source(file.to_path_buf(), e.to_string()))?
        .text;
    let instrumented = work.path().join(file.file_name().unwrap_or_default());
    std::fs::write(&instrumented, text)?;
    let mut recipe = Recipe::new(compiler.clone(), file);
    recipe.size = Some(size);
    recipe.include = include;
    let harness = Harness {
        recipe,
        protocol: Protocol {
            threads,
            ..Protocol::default()
        },
        tolerance: Default::default(),
        workdir: work.path().to_path_buf(),
    };
    let side = harness
        .plain_run(&instrumented)
        .map_err(|why| VariantsError::Parameters {
            path: file.to_path_buf(),
            why,
        })?;
    Ok(side
        .params
        .into_iter()
        .map(|(_, name, value)| (name, value))
        .collect())
}

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
    leave_one_kernel_out_from(t, params, keep, None)
}

/// [`leave_one_kernel_out`], each held-out kernel `h`'s ranker fitted to
/// the kernels `train[h]` marks only (indexed by kernel; all the others
/// when `None`).
pub fn leave_one_kernel_out_from(
    t: &VariantTable,
    params: &crate::learn::rank::RankerParams,
    keep: &[usize],
    train: Option<&[Vec<bool>]>,
) -> Result<Evaluation, crate::learn::LearnError> {
    use crate::learn::rank::Ranker;
    use crate::learn::rank::metrics::{ndcg_at, rank_correlation};
    let x: Vec<Vec<f64>> = t
        .rows
        .iter()
        .map(|r| keep.iter().map(|&i| r.x[i]).collect())
        .collect();
    let label: Vec<f64> = t.rows.iter().map(|r| r.speedup.ln()).collect();
    let mut kernels: Vec<usize> = t.rows.iter().map(|r| r.kernel).collect();
    kernels.sort_unstable();
    kernels.dedup();
    let fold = |h: usize| -> Result<(HeldOut, Vec<(usize, f64)>), crate::learn::LearnError> {
        let learns = |k: usize| k != h && train.is_none_or(|m| m[h].get(k) == Some(&true));
        let train: Vec<usize> = (0..t.rows.len())
            .filter(|&i| learns(t.rows[i].kernel))
            .collect();
        let tx: Vec<Vec<f64>> = train.iter().map(|&i| x[i].clone()).collect();
        let tg: Vec<usize> = train.iter().map(|&i| t.rows[i].kernel).collect();
        let tl: Vec<f64> = train.iter().map(|&i| label[i]).collect();
        let m = Ranker::fit(params, &tx, &tg, &tl, None)?;
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
    let folds: Vec<(HeldOut, Vec<(usize, f64)>)> = kernels
        .into_par_iter()
        .map(fold)
        .collect::<Result<_, _>>()?;
    let mut scores = vec![f64::NAN; t.rows.len()];
    let mut held = Vec::new();
    for (h, s) in folds {
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
        scores,
    })
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
    /// The same variants labelled by another dataset of the same kernels
    /// (another compiler's campaign: its speedups): rows matched by
    /// kernel and configuration; a row of `d` the table lacks is left
    /// out and counted in `skipped`.
    pub fn relabelled(&self, d: &Dataset) -> VariantTable {
        use std::collections::HashMap;
        let known: HashMap<(&str, String), &VariantRow> = self
            .rows
            .iter()
            .map(|r| ((self.kernels[r.kernel].as_str(), r.config.to_string()), r))
            .collect();
        let counters = self.names.iter().filter(|n| n.starts_with("orig_")).count();
        let mut rows = Vec::new();
        let mut skipped = 0;
        for r in &d.rows {
            let name = d.kernels[r.kernel].name.as_str();
            match known.get(&(name, r.config.to_string())) {
                Some(v) => {
                    let mut x = v.x.clone();
                    // The original's counters (`orig_…`, last) are the
                    // other campaign's; a table without them (the
                    // shipped form) keeps its features as they are.
                    if counters > 0 {
                        x.truncate(x.len() - counters);
                        x.extend(&d.kernels[r.kernel].features);
                    }
                    rows.push(VariantRow {
                        kernel: r.kernel,
                        config: r.config,
                        speedup: r.speedup,
                        x,
                    });
                }
                None => skipped += 1,
            }
        }
        VariantTable {
            names: self.names.clone(),
            kernels: d.kernels.iter().map(|k| k.name.clone()).collect(),
            rows,
            skipped,
            caches: self.caches,
            peaks: self.peaks.clone(),
        }
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
        train: Option<&[Vec<bool>]>,
    ) -> Result<LeftOut, crate::learn::LearnError> {
        use crate::learn::rank::{calibrated, group_spread};
        let t = self.relabelled(d);
        if t.rows.is_empty() {
            return Err(crate::learn::LearnError::Data(format!(
                "the variant table has none of the dataset's {} variants (it is of other kernels or configurations)",
                d.rows.len()
            )));
        }
        let keep: Vec<usize> = (0..t.names.len()).collect();
        let e = leave_one_kernel_out_from(&t, params, &keep, train)?;
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
                    o != k && train.is_none_or(|m| m[k].get(o) == Some(&true))
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

    /// The table with the variant's features alone (the original's
    /// counters dropped: they are one value per kernel and add nothing to
    /// a ranking within it), each value rounded to 6 significant digits:
    /// the form `optimize` ships and reads ([`crate::app::ranker`]).
    pub fn shipped(&self) -> VariantTable {
        let keep = self.select(|n| !n.starts_with("orig_"));
        let round = |v: f64| {
            if v == 0.0 || !v.is_finite() {
                return v;
            }
            let digits = 5 - v.abs().log10().floor() as i32;
            let f = 10f64.powi(digits.clamp(-300, 300));
            (v * f).round() / f
        };
        VariantTable {
            names: keep.iter().map(|&i| self.names[i].clone()).collect(),
            rows: self
                .rows
                .iter()
                .map(|r| VariantRow {
                    x: keep.iter().map(|&i| round(r.x[i])).collect(),
                    ..r.clone()
                })
                .collect(),
            ..self.clone()
        }
    }

    /// The indices of the features whose names `keep` accepts.
    pub fn select(&self, keep: impl Fn(&str) -> bool) -> Vec<usize> {
        (0..self.names.len())
            .filter(|&i| keep(&self.names[i]))
            .collect()
    }

    /// The table with the rows `keep` accepts (e.g. the paper's space:
    /// `|r| r.config.is_paper()`); the features, kernels (a kernel left
    /// without rows is simply absent from the rows) and `skipped` as
    /// they were.
    pub fn rows_where(&self, keep: impl Fn(&VariantRow) -> bool) -> VariantTable {
        VariantTable {
            rows: self.rows.iter().filter(|r| keep(r)).cloned().collect(),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kernel: usize, config: &str, speedup: f64) -> VariantRow {
        VariantRow {
            kernel,
            config: config.parse().unwrap(),
            speedup,
            x: vec![speedup],
        }
    }

    #[test]
    fn rows_where_keeps_the_rows_it_is_asked_for() {
        let t = VariantTable {
            names: vec!["f".into()],
            kernels: vec!["gemm".into(), "atax".into()],
            rows: vec![
                row(0, "000000000000", 1.0),
                row(0, "tile=64x1x1", 2.0),
                row(1, "000000000001", 3.0),
                row(1, "uj=4x2", 4.0),
            ],
            skipped: 5,
            caches: Caches::default(),
            peaks: Peaks {
                flops: 1e9,
                bandwidth: 1e9,
                threads: 2,
                cpu: "cpu".into(),
                compiler: "cc".into(),
                flags: Vec::new(),
            },
        };
        let paper = t.rows_where(|r| r.config.is_paper());
        let speedups: Vec<f64> = paper.rows.iter().map(|r| r.speedup).collect();
        assert_eq!(speedups, [1.0, 3.0]);
        assert_eq!(paper.rows[1].kernel, 1);
        assert_eq!(
            (paper.names, paper.kernels),
            (t.names.clone(), t.kernels.clone())
        );
        assert_eq!(paper.skipped, 5);
        assert!(t.rows_where(|_| false).rows.is_empty());
        assert_eq!(t.rows_where(|_| true).rows.len(), 4);
    }

    fn peaks() -> Peaks {
        Peaks {
            flops: 1e9,
            bandwidth: 1e9,
            threads: 2,
            cpu: "cpu".into(),
            compiler: "cc".into(),
            flags: Vec::new(),
        }
    }

    /// A dataset of `kernels` kernels, each of the first `n` paper
    /// configurations, kernel k's variant v at speedup
    /// exp((v mod 7) · (k + 1) / 10), and its table: the feature `good`
    /// is the log speedup scaled by the kernel (so the rankers of other
    /// kernels order it rightly), `noise` a kernel-wide offset.
    fn synthetic(kernels: usize, n: usize) -> (Dataset, VariantTable) {
        let configs: Vec<Config> = Config::all().into_iter().take(n).collect();
        let names: Vec<String> = (0..kernels).map(|k| format!("k{k}")).collect();
        let mut rows = Vec::new();
        let mut table = Vec::new();
        for k in 0..kernels {
            for (v, c) in configs.iter().enumerate() {
                let log = (v % 7) as f64 * (k + 1) as f64 / 10.0;
                rows.push(crate::learn::dataset::Row {
                    kernel: k,
                    variant_id: (k * n + v) as i64,
                    config: *c,
                    configs: 1,
                    speedup: log.exp(),
                    all_configs: Vec::new(),
                });
                table.push(VariantRow {
                    kernel: k,
                    config: *c,
                    // Labels of another campaign: relabelled by `d`.
                    speedup: 1.0,
                    x: vec![log / (k + 1) as f64, k as f64],
                });
            }
        }
        let d = Dataset {
            selection: crate::learn::dataset::Selection::default(),
            machine: "m".into(),
            compiler: "cc".into(),
            flags: String::new(),
            feature_names: Vec::new(),
            kernels: names
                .iter()
                .map(|name| crate::learn::dataset::Kernel {
                    name: name.clone(),
                    features: Vec::new(),
                    baseline_seconds: 1.0,
                })
                .collect(),
            rows,
            extended_names: Vec::new(),
            beyond_paper: 0,
        };
        let t = VariantTable {
            names: vec!["good".into(), "noise".into()],
            kernels: names,
            rows: table,
            skipped: 0,
            caches: Caches::default(),
            peaks: peaks(),
        };
        (d, t)
    }

    /// A table in the shipped form (no `orig_` counters) keeps its
    /// features when relabelled; one with counters takes the dataset's.
    #[test]
    fn relabelling_swaps_the_counters_only_where_the_table_has_them() {
        let (mut d, t) = synthetic(2, 5);
        let r = t.relabelled(&d);
        assert_eq!(r.rows.len(), 10);
        assert_eq!(r.rows[3].x, t.rows[3].x);
        assert_eq!(r.rows[3].speedup, d.rows[3].speedup);
        let mut with = t.clone();
        with.names.push("orig_ipc".into());
        for row in &mut with.rows {
            row.x.push(9.0);
        }
        for k in &mut d.kernels {
            k.features = vec![0.5];
        }
        let r = with.relabelled(&d);
        assert_eq!(r.rows[3].x, [t.rows[3].x.clone(), vec![0.5]].concat());
    }

    /// The known answer: a feature that orders every kernel's variants
    /// makes each held-out kernel's predictions follow its speedups; the
    /// predictions' spread is the other kernels'; a variant the table
    /// lacks gets its kernel's least prediction.
    #[test]
    fn leave_one_out_speedups_rank_each_kernel_as_the_others_teach() {
        let (mut d, mut t) = synthetic(4, 21);
        // Kernel 3's first variant is not in the table.
        let gone = t.rows.iter().position(|r| r.kernel == 3).unwrap();
        t.rows.remove(gone);
        let p = crate::learn::rank::RankerParams {
            trees: 40,
            depth: 3,
            min_leaf: 2,
            ..Default::default()
        };
        let l = t.leave_one_out_speedups(&d, &p, None).unwrap();
        assert_eq!(l.unmatched, 1);
        assert_eq!(l.speedups.len(), d.rows.len());
        let rho = l.evaluation.median_rank_correlation.unwrap();
        assert!(rho > 0.95, "{rho}");
        for k in 0..4 {
            let rows: Vec<usize> = (0..d.rows.len())
                .filter(|&i| d.rows[i].kernel == k)
                .collect();
            let logs: Vec<f64> = rows.iter().map(|&i| l.speedups[i].ln()).collect();
            if k == 3 {
                let least = logs[1..].iter().copied().fold(0.0, f64::min);
                assert_eq!(logs[0], least);
                continue;
            }
            // The spread of the other kernels' log speedups, over the
            // table's rows (kernel 3 without its first variant).
            let sd = |k: usize| {
                let v: Vec<f64> = (0..21)
                    .filter(|&j| k != 3 || j != 0)
                    .map(|j| (j % 7) as f64 * (k + 1) as f64 / 10.0)
                    .collect();
                let n = v.len() as f64;
                let m = v.iter().sum::<f64>() / n;
                (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n).sqrt()
            };
            let others = (0..4).filter(|&o| o != k).map(sd).sum::<f64>() / 3.0;
            let m = logs.iter().sum::<f64>() / logs.len() as f64;
            let got =
                (logs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / logs.len() as f64).sqrt();
            assert!(
                (got - others).abs() < 1e-9,
                "kernel {k}: {got} against {others}"
            );
        }
        // Nothing in common: a clear error.
        d.rows.iter_mut().for_each(|r| r.kernel = 0);
        d.kernels.truncate(1);
        d.kernels[0].name = "other".into();
        let e = t.leave_one_out_speedups(&d, &p, None).unwrap_err();
        assert!(e.to_string().contains("none of the dataset's"), "{e}");
    }
}
