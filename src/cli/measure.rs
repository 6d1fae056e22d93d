//! `polytune measure`: compile, verify and time a program and a variant.

use super::args::{BuildArgs, ConfigArgs, OutputArgs, RunArgs};
use super::render::{json_text, measurement};
use super::{Ui, out};
use crate::frontend::{self, Options};
use crate::lab::scratch::Scratch;
use crate::lab::verify::{Bench, Status};
use anyhow::Result;
use serde_json::json;
use std::path::PathBuf;

/// Compile, verify and time a program and, with a configuration, its
/// variant; report both and the speedup (seconds to minutes: each program
/// runs at least 6 times at --size).
///
/// The variant is run once with `--dump` and compared with the
/// original's output before it is timed (median of at least 5 runs
/// after a warm-up, more while the spread exceeds 10%).
#[derive(clap::Args)]
pub struct Args {
    /// C source file in the corpus style (see polybench/include/polytune_bench.h).
    file: PathBuf,
    #[command(flatten)]
    config: ConfigArgs,
    #[command(flatten)]
    build: BuildArgs,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(a: Args, ui: &Ui) -> Result<()> {
    let file = a.file.as_path();
    // Removed on every way out of this function, errors included.
    let dir = Scratch::new("measure")?;
    let bench = Bench {
        compiler: a.build.compiler()?,
        size: a.run.size,
        include: a.build.include_for(file),
        protocol: a.run.protocol(),
        workdir: dir.path().to_path_buf(),
    };
    let (size, threads) = (a.run.size, a.run.threads);
    let (orig, reference) = bench.reference(file, true);
    let mut report = json!({
        "file": file.display().to_string(),
        "compiler": bench.compiler,
        "size": size,
        "threads": threads,
        "original": orig,
    });
    let mut text = format!(
        "{} with {} ({}), {size}, {threads} thread(s)\n  original: {}\n",
        file.display(),
        bench.compiler.name(),
        bench.compiler.version,
        measurement(&orig)
    );
    if orig.status != Status::Ok {
        print(a.output.json, &report, &text)?;
        anyhow::bail!(
            "the original program does not run correctly: {}",
            orig.detail.trim()
        );
    }
    let mut internal = Vec::new();
    if let Some(c) = a.config.config() {
        let src = frontend::parse_file(file, &Options::default())?;
        let outcome = crate::engine::pipeline::optimize(&src, &c, None)?;
        for s in &outcome.skipped {
            ui.warn(s);
        }
        internal = outcome.internal;
        let variant_path = dir.path().join(file.file_name().unwrap_or_default());
        std::fs::write(&variant_path, &outcome.text)?;
        let (var, _) = bench.measure(
            &variant_path,
            "variant",
            reference.as_ref(),
            outcome.openmp,
            true,
        );
        let speedup = match (&orig.timing, &var.timing) {
            (Some(o), Some(v)) if v.median > 0.0 => Some(o.median / v.median),
            _ => None,
        };
        text.push_str(&format!("  {c}: {}\n", measurement(&var)));
        if let Some(s) = speedup {
            text.push_str(&format!("  speedup: {s:.2}x\n"));
        }
        report["config"] = json!(c.to_string());
        report["variant"] = json!(var);
        report["speedup"] = json!(speedup);
    }
    drop(dir);
    print(a.output.json, &report, &text)?;
    super::internal_errors(&internal)
}

fn print(as_json: bool, report: &serde_json::Value, text: &str) -> Result<()> {
    if as_json {
        out(&json_text(report)?)
    } else {
        out(text)
    }
}
