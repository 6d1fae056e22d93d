//! `polytune measure`: compile, verify and time a program and a variant.

use super::args::{BuildArgs, CompileLine, ConfigArgs, OutputArgs, ProgramArgs, RunArgs};
use super::render::{json_text, measurement};
use super::{Ui, out};
use crate::frontend::{self, Options};
use crate::lab::harness::Harness;
use crate::lab::scratch::Scratch;
use anyhow::Result;
use serde_json::json;
use std::path::PathBuf;

/// Compile, verify and time a program and, with a configuration, its
/// variant; report both and the speedup (seconds to minutes: each program
/// runs at least 6 times at --size).
///
/// Both are built with polytune's instrumentation around each SCoP
/// region: the regions are timed (median of at least 5 runs after a
/// warm-up, more while the spread exceeds 10%), and the variant is run
/// once recording everything the regions write, compared with the
/// original's record (and its exit status and standard output) before it
/// is timed. Build it like a compiler: `polytune measure 2mm.c --config T
/// -- -Iutilities utilities/polybench.c -DSMALL_DATASET -lm`.
#[derive(clap::Args)]
pub struct Args {
    /// C source file with `#pragma scop` regions; its compile line after `--`.
    file: PathBuf,
    #[command(flatten)]
    config: ConfigArgs,
    #[command(flatten)]
    build: BuildArgs,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    program: ProgramArgs,
    #[command(flatten)]
    compile_line: CompileLine,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(a: Args, ui: &Ui) -> Result<()> {
    let file = a.file.as_path();
    let src = frontend::parse_file(file, &Options::default())?;
    if src.scops.is_empty() {
        anyhow::bail!(
            "{}: no `#pragma scop` region to measure (polytune times and verifies the SCoP regions)",
            file.display()
        );
    }
    // Removed on every way out of this function, errors included.
    let dir = Scratch::new("measure")?;
    let compiler = a.build.compiler()?;
    let recipe = a.program.recipe(
        compiler.clone(),
        &src,
        a.build.include_for(file),
        a.run.size,
        &a.compile_line.words,
        dir.path(),
        ui,
    )?;
    let harness = Harness {
        recipe,
        protocol: a.run.protocol(),
        tolerance: a.program.tolerance(),
        workdir: dir.path().to_path_buf(),
    };
    let (size, threads) = (&a.run.size, a.run.threads);
    let name = file.file_name().unwrap_or_default();
    let original_dir = dir.path().join("original-src");
    crate::lab::scratch::subdir(&original_dir)?;
    let original_path = original_dir.join(name);
    std::fs::write(
        &original_path,
        crate::engine::pipeline::instrumented(&src, None, None)?.text,
    )?;
    let (orig, reference) = harness.reference(&original_path, true)?;
    let mut report = json!({
        "file": file.display().to_string(),
        "compiler": compiler,
        "size": size,
        "threads": threads,
        "original": orig,
        "stdout_lines_masked": reference.masked,
    });
    let mut text = format!(
        "{} with {} ({}), {size}, {threads} thread(s)\n  original: {}\n",
        file.display(),
        compiler.name(),
        compiler.version,
        measurement(&orig)
    );
    if reference.masked > 0 {
        ui.warn(format!(
            "{} line(s) of the program's standard output differ from run to run (times?): not compared",
            reference.masked
        ));
    }
    let mut internal = Vec::new();
    if let Some(c) = a.config.config() {
        let outcome = crate::engine::pipeline::instrumented(&src, Some(&c), None)?;
        for s in &outcome.skipped {
            ui.warn(s);
        }
        internal = outcome.internal;
        let variant_dir = dir.path().join("variant-src");
        crate::lab::scratch::subdir(&variant_dir)?;
        let variant_path = variant_dir.join(name);
        std::fs::write(&variant_path, &outcome.text)?;
        let var = harness.measure(&variant_path, "variant", &reference, outcome.openmp, true);
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
