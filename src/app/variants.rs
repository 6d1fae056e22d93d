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
use std::path::{Path, PathBuf};

mod held_out;
pub use held_out::{
    Also, Besides, Evaluation, Folds, HeldOut, LeftOut, leave_one_kernel_out,
    leave_one_kernel_out_from, same_program,
};

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
mod tests;
