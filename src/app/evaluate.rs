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

/// `evaluate --ranking variant`: the variant ranker, leave one kernel
/// out, on a dataset whose variants a variant table has (the shipped
/// `variants.json` and the shipped dataset), relabelled by the dataset's
/// speedups.
#[derive(Debug, Clone, Serialize)]
pub struct RankerReport {
    pub compiler: String,
    pub flags: String,
    pub machine: String,
    /// Kernels each fold's ranker learned from (`--train-kernels`); all
    /// the others when `None`.
    pub train_kernels: Option<usize>,
    /// The dataset's variants the table lacks (left out).
    pub unmatched: usize,
    /// The extended space (every variant), then the paper's (the
    /// variants of its configurations).
    pub spaces: Vec<SpaceFigures>,
    /// Over the extended space, each feature group left out in turn
    /// (`--ablations`; empty without).
    pub ablations: Vec<Ablation>,
}

/// The ranker's figures over one space.
#[derive(Debug, Clone, Serialize)]
pub struct SpaceFigures {
    /// `extended` or `paper`.
    pub space: &'static str,
    pub variants: usize,
    pub features: usize,
    pub evaluation: crate::app::variants::Evaluation,
}

/// The ranker without one feature group.
#[derive(Debug, Clone, Serialize)]
pub struct Ablation {
    pub group: &'static str,
    pub features: usize,
    pub median_rank_correlation: Option<f64>,
    pub mean_best_of_6: f64,
    pub mean_best_of_12: f64,
}

/// The variant ranker's report on `d` from table `t`, each fold learning
/// from `besides` too; `ablations` adds the feature groups left out in
/// turn; `progress(done, total)` after each evaluation (one per space and
/// ablation).
pub fn ranker_report(
    d: &Dataset,
    t: &crate::app::variants::VariantTable,
    ablations: bool,
    train_kernels: Option<usize>,
    besides: crate::app::variants::Besides<'_>,
    progress: &dyn Fn(usize, usize),
) -> Result<RankerReport, crate::learn::LearnError> {
    use crate::app::variants::{Folds, feature_group, leave_one_kernel_out_from};
    // Each fold on `train_kernels` of the other kernels, drawn as the
    // six models' folds and `simulate`'s are.
    let masks = crate::app::simulate::training_masks(
        d,
        train_kernels,
        crate::learn::evaluate::Options::default().seed,
    );
    let folds = Folds::new(masks.as_deref(), besides);
    let leave_one_kernel_out = |t, p, keep: &[usize]| leave_one_kernel_out_from(t, p, keep, folds);
    let params = crate::learn::rank::RankerParams::default();
    let all = t.labelled_by(d)?;
    let paper = all.rows_where(|r| r.config.is_paper());
    let every: Vec<usize> = (0..all.names.len()).collect();
    let mut groups: Vec<&'static str> = all.names.iter().map(|n| feature_group(n)).collect();
    groups.sort_unstable();
    groups.dedup();
    let total = 2 + if ablations { groups.len() } else { 0 };
    let mut spaces = Vec::new();
    for (k, (space, table)) in [("extended", &all), ("paper", &paper)]
        .into_iter()
        .enumerate()
    {
        if !table.rows.is_empty() {
            spaces.push(SpaceFigures {
                space,
                variants: table.rows.len(),
                features: every.len(),
                evaluation: leave_one_kernel_out(table, &params, &every)?,
            });
        }
        progress(k + 1, total);
    }
    let mut out = Vec::new();
    if ablations {
        for (k, g) in groups.iter().enumerate() {
            let keep = all.select(|n| feature_group(n) != *g);
            let e = leave_one_kernel_out(&all, &params, &keep)?;
            out.push(Ablation {
                group: g,
                features: keep.len(),
                median_rank_correlation: e.median_rank_correlation,
                mean_best_of_6: e.mean_best_of_6,
                mean_best_of_12: e.mean_best_of_12,
            });
            progress(3 + k, total);
        }
    }
    Ok(RankerReport {
        compiler: d.compiler.clone(),
        flags: d.flags.clone(),
        machine: d.machine.clone(),
        train_kernels,
        unmatched: all.skipped,
        spaces,
        ablations: out,
    })
}
