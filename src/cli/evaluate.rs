//! `polytune evaluate`: leave-one-benchmark-out evaluation of the models.

use super::Ui;
use super::args::{DataArgs, RankingBy, models_to_read, same_file};
use super::progress::counting;
use super::render::{json_text, summary_md};
use crate::learn::evaluate::{self, Evaluation};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Evaluate the models leaving one kernel out (minutes, no runs).
///
/// Leave-one-benchmark-out evaluation of the models on a campaign's
/// measurements: Opt, Random, each model's 1-shot and N-shot, and
/// multi-model, per kernel and on average (paper Tables 8–13). Minutes:
/// every model is trained once per kernel; no program runs.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Results database of a campaign.
    #[arg(long)]
    db: PathBuf,
    #[command(flatten)]
    data: DataArgs,
    /// N of N-shot.
    #[arg(long, default_value_t = 6)]
    shots: usize,
    /// Output format.
    #[arg(long, default_value = "md", value_parser = ["md", "csv", "json"])]
    format: String,
    /// The same as --format json.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Also evaluate every model on the features LR's greedy selection keeps.
    ///
    /// As in the paper's Tables 14–16.
    #[arg(long)]
    subset: bool,
    /// Draw the sorted speedup distribution of every kernel's space and the
    /// per-model bars into DIR.
    ///
    /// SVG, and PNG when rsvg-convert is installed.
    #[arg(long, value_name = "DIR")]
    plots: Option<PathBuf>,
    /// Also write every variant's leave-one-out prediction by every model to
    /// FILE (CSV).
    ///
    /// To study rankings or combine models.
    #[arg(long, value_name = "FILE")]
    predictions: Option<PathBuf>,
    /// Also write the result as JSON (what --json prints) to FILE.
    ///
    /// Beside the chosen format on standard output: one evaluation, both forms
    /// (`scripts/results.sh` ships both).
    #[arg(long, value_name = "FILE")]
    save_json: Option<PathBuf>,
    /// Train each leave-one-out fold on N of the other kernels only.
    ///
    /// The N are drawn at random per held-out kernel (the same draw in
    /// `evaluate` and `simulate`): how the models' quality grows with the
    /// kernels they learn from.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    train_kernels: Option<u64>,
    /// Which model to evaluate. [default: models]
    ///
    /// models: the paper's six (--models). variant: the variant ranker, as
    /// `optimize` ranks by default, from its table of the variants' features
    /// (variants.json in the models directory, which matches the shipped
    /// dataset): per kernel and on average, Spearman's ρ, NDCG@6 and the
    /// share of Opt of its top 1, 6 and 12, over the extended space and the
    /// paper's.
    #[arg(long, value_enum, conflicts_with_all = ["models", "subset", "plots", "predictions"])]
    ranking: Option<RankingBy>,
    /// With --ranking variant: also each feature group left out in turn.
    ///
    /// Over the extended space: what each group adds to the ranking.
    #[arg(long, requires = "ranking")]
    ablations: bool,
    /// With --ranking variant: each fold also learns from the runs in this
    /// store (read only; repeatable).
    ///
    /// A store `collect --store` or the learned `optimize` wrote: its
    /// verified runs with the compiler, as other programs every fold learns
    /// from besides the table's kernels (this machine's weighing 3), never
    /// ranked themselves; a kernel's namesakes in it are left out of its own
    /// fold. What runs of new programs add to the ranking of the dataset's.
    #[arg(long, value_name = "FILE", requires = "ranking")]
    store: Vec<PathBuf>,
    /// With --ranking variant: the folds learn the variants' speedups from DB.
    ///
    /// DB holds the same kernels' variants timed again:
    /// models/dataset-confirmed.sqlite is the shipped dataset with each
    /// kernel's fastest variants confirmed; a variant it lacks keeps --db's
    /// speedup. Every kernel is still scored, and searches replayed,
    /// against --db's measurements.
    #[arg(long, value_name = "DB", requires = "ranking")]
    labels: Option<PathBuf>,
}

pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    for p in a.predictions.iter().chain(&a.save_json) {
        if same_file(p, &a.db) {
            anyhow::bail!(
                "refusing to overwrite the database {} with {}: name another file",
                a.db.display(),
                p.display()
            );
        }
    }
    let d = a.data.dataset(&a.db, ui)?;
    if a.ranking == Some(RankingBy::Variant) {
        return run_ranker(&a, &d, ui);
    }
    if a.ablations || !a.store.is_empty() || a.labels.is_some() {
        let what = if a.ablations {
            "--ablations"
        } else if a.labels.is_some() {
            "--labels"
        } else {
            "--store"
        };
        return Err(super::Usage(format!("{what} needs --ranking variant")).into());
    }
    let opts = evaluate::Options {
        models: a.data.kinds(),
        shots: a.shots,
        target: a.data.target,
        train_kernels: a.train_kernels.map(|n| n as usize),
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let p = counting(ui, "leave-one-out folds", |progress| {
        evaluate::predictions_with(&d, &opts, progress)
    })?;
    let e = evaluate::score(&d, &opts.models, &p, &opts);
    let took = t.elapsed().as_secs_f64();
    ui.detail(format!("evaluated in {took:.1} s"));
    if let Some(path) = &a.predictions {
        crate::lab::store::atomic::write(
            path,
            evaluate::predictions_csv(&d, &opts.models, &p).as_bytes(),
        )?;
    }
    let sub = if a.subset {
        let lr = crate::learn::saved::SavedModel::train(crate::learn::Kind::Lr, &d, a.data.target)?;
        let crate::learn::SpeedupModel::Lr(l) = &lr.model else {
            unreachable!("LR trains an LR model")
        };
        let keep: Vec<String> = l
            .selected
            .iter()
            .filter(|&&j| j < d.feature_names.len())
            .map(|&j| d.feature_names[j].clone())
            .collect();
        let ds = d.with_features(&keep);
        let p = counting(ui, "leave-one-out folds on LR's features", |progress| {
            evaluate::predictions_with(&ds, &opts, progress)
        })?;
        let e = evaluate::score(&ds, &opts.models, &p, &opts);
        Some((keep, e))
    } else {
        None
    };
    if let Some(dir) = &a.plots {
        plots(&d, &e, dir, ui)?;
    }
    let format = if a.json { "json" } else { a.format.as_str() };
    let r = crate::app::evaluate::report(&d, e, sub, a.data.target, opts.train_kernels);
    // Through a JSON value, whose keys are sorted: the files written
    // before the report was typed keep their order.
    let json = || json_text(&serde_json::to_value(&r)?);
    if let Some(path) = &a.save_json {
        crate::lab::store::atomic::write(path, json()?.as_bytes())?;
    }
    let text = match format {
        "csv" => r.evaluation.csv(),
        "json" => json()?,
        _ => {
            let mut o = format!(
                "## Leave-one-out evaluation: {} ({}), {}\n\n",
                r.compiler, r.flags, r.machine
            );
            o += &format!(
                // No wall time here (it is on stderr with -v): the same
                // dataset gives the same file, byte for byte.
                "{} kernels, {} verified variants, {} features + {} configuration bits; size {}, {} threads; the models learn the {}.\n",
                r.kernels,
                r.variants,
                r.features.len(),
                crate::learn::dataset::CONFIG_BITS,
                d.selection.size,
                d.selection.threads,
                a.data.target.describe(),
            );
            if let Some(n) = r.train_kernels {
                o += &format!(
                    "Each fold's models learned from {n} of the other kernels only, drawn at random per held-out kernel (--train-kernels).\n"
                );
            }
            o += &summary_md(&r.evaluation);
            o += "\n";
            o += &r.evaluation.markdown();
            o += &r.evaluation.best_configurations();
            if let Some(s) = &r.subset {
                o += &format!(
                    "\n## Feature subset (LR's greedy selection): {}\n\n",
                    s.features.join(", ")
                );
                o += &summary_md(&s.evaluation);
                o += "\n";
            }
            o
        }
    };
    super::out(&text)
}

/// `evaluate --ranking variant`: the variant ranker's report, printed
/// (and saved with --save-json).
fn run_ranker(a: &Args, d: &crate::learn::dataset::Dataset, ui: &Ui) -> Result<()> {
    let dir = models_to_read(a.data.compiler);
    let Some(shipped) = crate::app::ranker::load(&dir)? else {
        return Err(super::Usage(format!(
            "--ranking variant: no variant table in {} (the shipped models directory has one per compiler: models/<compiler>/{})",
            dir.display(),
            crate::app::ranker::FILE
        ))
        .into());
    };
    let also = also_learned(&a.store, a.data.compiler)?;
    let labels = learned_labels(a.labels.as_deref(), &a.data, d)?;
    let besides = crate::app::variants::Besides {
        also: also.as_ref().map(|l| l.also()),
        labels: labels.as_ref(),
    };
    let t = std::time::Instant::now();
    let r = counting(ui, "leave-one-out evaluations", |progress| {
        crate::app::evaluate::ranker_report(
            d,
            &shipped.table,
            a.ablations,
            a.train_kernels.map(|n| n as usize),
            besides,
            progress,
        )
    })?;
    ui.detail(format!("evaluated in {:.1} s", t.elapsed().as_secs_f64()));
    let json = || json_text(&serde_json::to_value(&r)?);
    if let Some(path) = &a.save_json {
        crate::lab::store::atomic::write(path, json()?.as_bytes())?;
    }
    let format = if a.json { "json" } else { a.format.as_str() };
    let text = match format {
        "json" => json()?,
        "csv" => ranker_csv(&r),
        _ => ranker_markdown(&r, &dir),
    };
    super::out(&text)
}

/// The variant ranker's report as Markdown.
fn ranker_markdown(r: &crate::app::evaluate::RankerReport, dir: &Path) -> String {
    let n = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.3}"));
    let mut o = format!(
        "## Leave-one-out evaluation of the variant ranker: {} ({}), {}

",
        r.compiler, r.flags, r.machine
    );
    o += &format!(
        "The ranker (LambdaMART grouped by kernel) of the variants' features in {}, each kernel ranked by the ranker fitted to the other kernels and labelled by this dataset's speedups{}.
",
        dir.join(crate::app::ranker::FILE).display(),
        if r.unmatched > 0 {
            format!(
                "; {} of the dataset's variants are not in the table and are left out",
                r.unmatched
            )
        } else {
            String::new()
        } + &r.train_kernels.map_or(String::new(), |n| format!(
            "; each fold's ranker learned from {n} of the other kernels only, drawn at random per held-out kernel (--train-kernels)"
        )) + &also_learned_clause(r.spaces.first().map(|s| &s.evaluation))
    );
    for s in &r.spaces {
        let e = &s.evaluation;
        o += &format!(
            "\n### The {} space: {} variants of {} kernels, {} features\n\nMedian Spearman's ρ {} (mean {}), median NDCG@6 {}; share of Opt of the top 1 {:.3}, best of the top 6 {:.3}, of the top 12 {:.3}.\n\n| kernel | variants | ρ | NDCG@6 | top 1 | best of 6 | best of 12 |\n|---|---:|---:|---:|---:|---:|---:|\n",
            s.space,
            s.variants,
            e.kernels.len(),
            s.features,
            n(e.median_rank_correlation),
            n(e.mean_rank_correlation),
            n(e.median_ndcg6),
            e.mean_top1,
            e.mean_best_of_6,
            e.mean_best_of_12
        );
        for h in &e.kernels {
            o += &format!(
                "| {} | {} | {} | {} | {:.3} | {:.3} | {:.3} |\n",
                h.kernel,
                h.variants,
                n(h.rank_correlation),
                n(h.ndcg6),
                h.top1,
                h.best_of_6,
                h.best_of_12
            );
        }
    }
    if !r.ablations.is_empty() {
        o += "\n### Each feature group left out (the extended space)\n\n| left out | features kept | median ρ | best of 6 | best of 12 |\n|---|---:|---:|---:|---:|\n";
        for a in &r.ablations {
            o += &format!(
                "| {} | {} | {} | {:.3} | {:.3} |\n",
                a.group,
                a.features,
                n(a.median_rank_correlation),
                a.mean_best_of_6,
                a.mean_best_of_12
            );
        }
    }
    o
}

/// The variant ranker's per-kernel figures as CSV, one row per space and
/// kernel.
fn ranker_csv(r: &crate::app::evaluate::RankerReport) -> String {
    let n = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let mut t = crate::learn::csv_text::CsvText::new([
        "space",
        "kernel",
        "variants",
        "rank_correlation",
        "ndcg6",
        "top1",
        "best_of_6",
        "best_of_12",
    ]);
    for s in &r.spaces {
        for h in &s.evaluation.kernels {
            t.row([
                s.space.to_string(),
                h.kernel.clone(),
                h.variants.to_string(),
                n(h.rank_correlation),
                n(h.ndcg6),
                h.top1.to_string(),
                h.best_of_6.to_string(),
                h.best_of_12.to_string(),
            ]);
        }
    }
    t.finish()
}

/// The distribution of every kernel's space and the per-model bars.
fn plots(d: &crate::learn::dataset::Dataset, e: &Evaluation, dir: &Path, ui: &Ui) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut n = 0;
    for (k, rows) in d.rows_by_kernel().iter().enumerate() {
        if !rows.is_empty() {
            let name = format!("distribution-{}.svg", d.kernels[k].name);
            crate::learn::plot::distribution(d, k, &dir.join(name))?;
            n += 1;
        }
    }
    crate::learn::plot::model_bars(e, &dir.join("models.svg"))?;
    let svgs: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .collect();
    let pngs = svgs.iter().filter(|p| crate::learn::plot::png(p)).count();
    ui.note(format!(
        "{} plots written to {} (SVG{})",
        n + 1,
        dir.display(),
        if pngs == svgs.len() {
            " and PNG"
        } else {
            "; PNG needs rsvg-convert from librsvg2-bin"
        }
    ));
    Ok(())
}

/// What the folds also learned from (`--store`, `--labels`), as clauses
/// of the report's first sentence (empty without).
pub(super) fn also_learned_clause(e: Option<&crate::app::variants::Evaluation>) -> String {
    let Some(e) = e else {
        return String::new();
    };
    let mut c = String::new();
    if e.also_rows > 0 {
        c += &format!(
            "; every fold also learned from {} runs of {} other programs in the store given (--store)",
            e.also_rows, e.also_kernels
        );
    }
    if e.relabelled > 0 {
        c += &format!(
            "; the folds learned the speedups of {} variants from the database given (--labels), each kernel scored against --db's",
            e.relabelled
        );
    }
    c
}

/// The measurements the variant ranker's folds learn their labels from
/// (`evaluate`/`simulate --ranking variant --labels DB`), selected as
/// `--db`'s are: a usage error when the file is missing or has none of
/// `d`'s variants.
pub(super) fn learned_labels(
    path: Option<&Path>,
    data: &DataArgs,
    d: &crate::learn::dataset::Dataset,
) -> Result<Option<crate::learn::dataset::Dataset>> {
    let Some(path) = path else {
        return Ok(None);
    };
    if !path.exists() {
        return Err(super::Usage(format!(
            "--labels {}: no such file (a campaign's database, as --db)",
            path.display()
        ))
        .into());
    }
    let store = crate::lab::store::Store::open_read_only(path)?;
    let l = crate::learn::dataset::Dataset::from_store(&store, &data.selection())
        .with_context(|| format!("--labels {}: cannot read its dataset", path.display()))?;
    let name = |x: &crate::learn::dataset::Dataset, r: &crate::learn::dataset::Row| {
        (x.kernels[r.kernel].name.clone(), r.config.to_string())
    };
    let ours: std::collections::HashSet<_> = d.rows.iter().map(|r| name(d, r)).collect();
    if !l.rows.iter().any(|r| ours.contains(&name(&l, r))) {
        return Err(super::Usage(format!(
            "--labels {}: none of its variants is one of --db's\n  help: name a copy of --db's campaign with variants timed again (models/dataset-confirmed.sqlite for the shipped dataset)",
            path.display()
        ))
        .into());
    }
    Ok(Some(l))
}

/// The runs in the stores `stores` that the variant ranker's
/// leave-one-out folds also learn from (`evaluate`/`simulate --ranking
/// variant --store`), of `compiler`, one after the other: a usage error
/// when a file is missing or has none.
pub(super) fn also_learned(
    stores: &[PathBuf],
    compiler: crate::lab::compiler::Family,
) -> Result<Option<crate::app::ranker::Local>> {
    let mut all: Option<crate::app::ranker::Local> = None;
    for path in stores {
        let l = match crate::app::ranker::local(path, compiler)? {
            None => {
                return Err(super::Usage(format!(
                    "--store {}: no such file (a store `collect --store` or `optimize` wrote)",
                    path.display()
                ))
                .into());
            }
            Some(l) if l.rows.is_empty() => {
                return Err(super::Usage(format!(
                    "--store {}: no verified runs with {} whose features this polytune computes\n  help: name a store that `collect --store` or the learned `optimize` wrote with {}",
                    path.display(),
                    compiler.as_str(),
                    compiler.as_str()
                ))
                .into());
            }
            Some(l) => l,
        };
        match &mut all {
            None => all = Some(l),
            Some(a) => a.extend(l),
        }
    }
    Ok(all)
}
