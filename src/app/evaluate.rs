//! `evaluate`: the leave-one-kernel-out evaluation of the models as one
//! typed report, which the command line renders as Markdown, CSV or JSON
//! (and `--save-json` writes: the shipped `models/evaluation-*.json`).

use crate::learn::dataset::Dataset;
use crate::learn::evaluate::Evaluation;
use serde::Serialize;

/// The whole evaluation (the command line writes its JSON with sorted
/// keys, as the files written before the report was typed).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The best measured configuration of every kernel (the paper's
    /// Tables 3–4).
    pub best: Vec<Best>,
    pub compiler: String,
    pub evaluation: Evaluation,
    /// The counters the models see.
    pub features: Vec<String>,
    pub flags: String,
    pub kernels: usize,
    pub machine: String,
    /// The same evaluation on LR's greedy feature subset (`--subset`).
    pub subset: Option<Subset>,
    pub summary: Vec<ModelSummary>,
    /// What the models learn (`speedup` or `log`).
    pub target: &'static str,
    /// Kernels each fold's models learned from (`--train-kernels`); all
    /// the others when `None`.
    pub train_kernels: Option<usize>,
    pub variants: usize,
}

/// A kernel's best measured configuration.
#[derive(Debug, Clone, Serialize)]
pub struct Best {
    pub configuration: String,
    pub kernel: String,
    pub speedup: f64,
    pub variants: usize,
}

/// A model's mean 1-shot and N-shot speedups, and their shares of Opt.
#[derive(Debug, Clone, Serialize)]
pub struct ModelSummary {
    pub model: String,
    pub n_shot: f64,
    pub n_shot_pct_opt: f64,
    pub one_shot: f64,
    pub one_shot_pct_opt: f64,
}

/// The evaluation on a subset of the features.
#[derive(Debug, Clone, Serialize)]
pub struct Subset {
    pub evaluation: Evaluation,
    pub features: Vec<String>,
    pub summary: Vec<ModelSummary>,
}

/// Every model's summary line of `e`.
pub(crate) fn summary(e: &Evaluation) -> Vec<ModelSummary> {
    e.summary()
        .into_iter()
        .map(
            |(model, one_shot, one_shot_pct_opt, n_shot, n_shot_pct_opt)| ModelSummary {
                model,
                n_shot,
                n_shot_pct_opt,
                one_shot,
                one_shot_pct_opt,
            },
        )
        .collect()
}

/// The report of evaluation `e` of dataset `d` (and of the subset's).
pub fn report(
    d: &Dataset,
    e: Evaluation,
    subset: Option<(Vec<String>, Evaluation)>,
    target: crate::learn::Target,
    train_kernels: Option<usize>,
) -> Report {
    Report {
        best: e
            .kernels
            .iter()
            .map(|k| Best {
                configuration: k.opt_config.to_string(),
                kernel: k.kernel.clone(),
                speedup: k.opt,
                variants: k.variants,
            })
            .collect(),
        compiler: d.compiler.clone(),
        summary: summary(&e),
        evaluation: e,
        features: d.feature_names.clone(),
        flags: d.flags.clone(),
        kernels: d.kernels.len(),
        machine: d.machine.clone(),
        subset: subset.map(|(features, evaluation)| Subset {
            summary: summary(&evaluation),
            evaluation,
            features,
        }),
        target: target.name(),
        train_kernels,
        variants: d.rows.len(),
    }
}
