//! `polytune export`: a results database as CSV, or a compact copy.

use super::Ui;
use super::args::same_file;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Export a results database as CSV (seconds).
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The results store (SQLite) to export.
    #[arg(long)]
    db: PathBuf,
    /// The CSV file (default: standard output; `--csv` is the same
    /// option).
    #[arg(short = 'o', long = "output", alias = "csv", value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Instead of CSV, write a compact copy of the database for shipping with
    /// models.
    ///
    /// The copy holds every table but the per-run samples; `evaluate` and
    /// `train` read it like the original.
    #[arg(long, value_name = "OUT", conflicts_with = "csv")]
    compact: Option<PathBuf>,
    /// With --compact: keep only the measurements of the machine whose
    /// description contains TEXT.
    ///
    /// The description names the processor, cores and OS.
    #[arg(long, value_name = "TEXT", requires = "compact")]
    machine: Option<String>,
}

pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    let db = &a.db;
    if !db.exists() {
        anyhow::bail!("{} does not exist", db.display());
    }
    for out in a.csv.iter().chain(&a.compact) {
        if same_file(out, db) {
            anyhow::bail!(
                "refusing to overwrite the database {} with the export: name another file",
                db.display()
            );
        }
    }
    let store = crate::lab::store::Store::open_read_only(db)?;
    if let Some(out) = a.compact {
        let n = store.compact_copy(&out, a.machine.as_deref())?;
        ui.note(format!("{n} measurements in {}", out.display()));
        return Ok(());
    }
    let n = match a.csv {
        Some(p) => {
            let mut n = 0;
            crate::lab::store::atomic::write_with(&p, |w| {
                n = store.export_csv(w)?;
                Ok(())
            })?;
            n
        }
        None => {
            let mut buf = Vec::new();
            let n = store.export_csv(&mut buf)?;
            super::out(&String::from_utf8(buf).context("the CSV is not UTF-8")?)?;
            n
        }
    };
    ui.note(format!("{n} measurements exported"));
    Ok(())
}
