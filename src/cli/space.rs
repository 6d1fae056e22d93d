//! `polytune space`: the distinct programs of a file's space.

use super::Ui;
use super::args::{OutputArgs, same_file};
use super::render::{json_text, space_json, space_text};
use crate::config::Config;
use crate::frontend::{self, Options};
use anyhow::{Context, Result};
use std::path::PathBuf;

/// List the distinct programs of a file's optimization space (seconds to
/// a minute per SCoP: every configuration is generated, nothing is
/// compiled).
///
/// Enumerates all 1536 configurations, generates each, and groups them
/// by the hash of the generated code.
#[derive(clap::Args)]
pub struct Args {
    /// C source file.
    file: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
    /// Write each distinct variant to DIR/<name>.v<k>.c.
    #[arg(long, value_name = "DIR")]
    emit: Option<PathBuf>,
    /// Parameter context in isl notation (default: every parameter >= 1).
    #[arg(long)]
    context: Option<String>,
    /// Treat NAME as a pure function inside SCoPs (repeatable).
    #[arg(long = "pure", value_name = "NAME")]
    pure: Vec<String>,
}

pub fn run(a: Args, ui: &Ui) -> Result<()> {
    let file = &a.file;
    let src = frontend::parse_file(
        file,
        &Options {
            pure_functions: a.pure,
        },
    )?;
    let (variants, skipped) = crate::engine::space::distinct_variants(&src, a.context.as_deref())?;
    for s in &skipped {
        ui.warn(s);
    }
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("variant")
        .to_string();
    if let Some(dir) = &a.emit {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for (k, v) in variants.iter().enumerate() {
            let p = dir.join(format!("{stem}.v{k}.c"));
            if same_file(&p, file) {
                anyhow::bail!(
                    "refusing to overwrite the input {} with a variant; choose another --emit directory",
                    file.display()
                );
            }
            crate::lab::store::atomic::write(&p, v.text.as_bytes())?;
        }
        ui.detail(format!(
            "{} variants written to {}",
            variants.len(),
            dir.display()
        ));
    }
    let total = Config::all().len();
    super::out(&if a.output.json {
        json_text(&space_json(file, &variants, total, &skipped))?
    } else {
        space_text(file, &variants, total)
    })
}
