//! `polytune evaluate`: leave-one-benchmark-out evaluation of the models.

use super::Ui;
use super::args::{DataArgs, same_file};
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
