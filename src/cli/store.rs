//! `polytune store`: operations on whole stores (`merge`).

use super::Ui;
use super::args::OutputArgs;
use anyhow::Result;
use std::path::PathBuf;

/// Operations on whole results stores.
#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    Merge(MergeArgs),
}

/// Merge a campaign's shards, or several machines' stores, into one (seconds).
///
/// Merge stores (a campaign's shards, or campaigns on several machines)
/// into a new one (seconds).
///
/// The union of machines, compilers, kernels, variants, measurements and
/// features; a measurement in several stores is kept once (the first
/// store's); different machines stay apart. Stores of different tables
/// (schema version 1 with a later one), or with a kernel of different
/// sources, are refused, and so is an output that exists: nothing is
/// written then.
#[derive(clap::Args)]
struct MergeArgs {
    /// The stores to merge, in order of precedence.
    #[arg(required = true, num_args = 1..)]
    stores: Vec<PathBuf>,
    /// The new store (must not exist).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: PathBuf,
    #[command(flatten)]
    json: OutputArgs,
}

pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    match a.command {
        Command::Merge(m) => merge(m, ui),
    }
}

fn merge(a: MergeArgs, ui: &Ui) -> Result<()> {
    for s in &a.stores {
        if !s.exists() {
            anyhow::bail!("{} does not exist", s.display());
        }
    }
    let r = crate::lab::store::merge::merge(&a.stores, &a.output)?;
    if r.differing_features > 0 {
        ui.warn(format_args!(
            "{} features differ between the stores; the first store's values were kept",
            r.differing_features
        ));
    }
    super::out(&if a.json.json {
        super::render::json_text(&r)?
    } else {
        format!(
            "{}: {} stores merged: {} machines, {} kernels, {} variants, {} measurements ({} duplicates kept once)\n",
            r.output.display(),
            r.inputs,
            r.machines,
            r.kernels,
            r.variants,
            r.measurements,
            r.duplicates
        )
    })
}
