//! `polytune train`: the six speedup models from a campaign's
//! measurements.

use super::Ui;
use super::args::{DataArgs, OutputArgs, models_dir};
use super::render::json_text;
use crate::app::train::{Event, Training, train};
use anyhow::Result;
use std::path::PathBuf;

/// Train the six speedup models on a campaign's measurements.
///
/// Train the six speedup models on a campaign's measurements and write
/// them (one JSON file each, with their feature schema, machine and
/// compiler) to a directory (seconds to a few minutes, no program runs).
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Results database of a campaign.
    #[arg(long)]
    db: PathBuf,
    /// Directory for the model files [default: models/<compiler>, where
    /// `optimize` looks for them].
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    #[command(flatten)]
    data: DataArgs,
    /// Leave out a kernel (repeatable), to try the models on it as on a new
    /// program.
    ///
    /// The models have then never seen it.
    #[arg(long, value_name = "KERNEL")]
    exclude: Vec<String>,
    #[command(flatten)]
    json: OutputArgs,
}

pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    let output = a
        .output
        .clone()
        .unwrap_or_else(|| models_dir(a.data.compiler));
    let mut d = a.data.dataset(&a.db, ui)?;
    if !a.exclude.is_empty() {
        d = d.without_kernels(&a.exclude)?;
    }
    let report = train(
        &Training {
            db: &a.db,
            dataset: &d,
            kinds: &a.data.kinds(),
            target: a.data.target,
            output: &output,
            excluded: &a.exclude,
        },
        &mut |e| match e {
            Event::Training {
                variants,
                kernels,
                compiler,
                machine,
            } => ui.note(format!(
                "training on {variants} variants of {kernels} kernels ({compiler}, {machine})"
            )),
            Event::Trained(t) => ui.note(format!(
                "  {:4} {:.1} s -> {}",
                t.model,
                t.seconds,
                t.file.display()
            )),
            Event::Landscapes { kernels, file } => ui.note(format!(
                "  landscapes of {kernels} kernels -> {}",
                file.display()
            )),
        },
    )?;
    if a.json.json {
        super::out(&json_text(&report)?)?;
    }
    Ok(())
}
