//! `polytune train`: the six speedup models from a campaign's
//! measurements.

use super::Ui;
use super::args::{DataArgs, OutputArgs, models_dir};
use super::render::json_text;
use anyhow::Result;
use serde_json::json;
use std::path::PathBuf;

/// Train the six speedup models on a campaign's measurements.
///
/// Train the six speedup models on a campaign's measurements and write
/// them (one JSON file each, with their feature schema, machine and
/// compiler) to a directory (seconds to a few minutes, no program runs).
#[derive(clap::Args)]
pub struct Args {
    /// Results database of a campaign.
    #[arg(long)]
    db: PathBuf,
    /// Directory for the model files [default: models/<compiler>, where
    /// `optimize` looks for them].
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    #[command(flatten)]
    data: DataArgs,
    /// Leave out a kernel (repeatable): models that have never seen
    /// it, to try on it as on a new program.
    #[arg(long, value_name = "KERNEL")]
    exclude: Vec<String>,
    #[command(flatten)]
    json: OutputArgs,
}

pub fn run(a: Args, ui: &Ui) -> Result<()> {
    let output = a
        .output
        .clone()
        .unwrap_or_else(|| models_dir(a.data.compiler));
    let mut d = a.data.dataset(&a.db, ui)?;
    if !a.exclude.is_empty() {
        d = d.without_kernels(&a.exclude)?;
    }
    ui.note(format!(
        "training on {} variants of {} kernels ({}, {})",
        d.rows.len(),
        d.kernels.len(),
        d.compiler,
        d.machine
    ));
    let mut written = Vec::new();
    for kind in a.data.kinds() {
        let t = std::time::Instant::now();
        let m = crate::learn::saved::SavedModel::train(kind, &d, a.data.target)?;
        let p = m.save(&output)?;
        let seconds = t.elapsed().as_secs_f64();
        ui.note(format!(
            "  {:4} {seconds:.1} s -> {}",
            kind.name(),
            p.display()
        ));
        written.push(json!({"model": kind.name(), "file": p, "seconds": seconds}));
    }
    // The programs the models learned from, as measured: Bayesian
    // optimization's transfer prior in `optimize`.
    let landscapes = output.join(crate::learn::search::transfer::FILE);
    crate::learn::search::transfer::Landscapes::of_dataset(&d, None).save(&landscapes)?;
    ui.note(format!(
        "  landscapes of {} kernels -> {}",
        d.kernels.len(),
        landscapes.display()
    ));
    if a.json.json {
        super::out(&json_text(&json!({
            "db": a.db,
            "output": output,
            "compiler": d.compiler,
            "flags": d.flags,
            "machine": d.machine,
            "size": d.selection.size,
            "measured_threads": d.selection.threads,
            "target": a.data.target.name(),
            "kernels": d.kernels.iter().map(|k| &k.name).collect::<Vec<_>>(),
            "excluded": a.exclude,
            "variants": d.rows.len(),
            "models": written,
            "landscapes": landscapes,
        }))?)?;
    }
    Ok(())
}
