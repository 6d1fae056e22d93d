//! `polytune measure`: compile, verify and time a program and a variant.

use super::args::{BuildArgs, CompileLine, ConfigArgs, OutputArgs, ProgramArgs, RunArgs};
use super::render::{json_text, measurement};
use super::{Ui, out};
use crate::frontend::{self, Options};
use crate::lab::compiler::Compiler;
use crate::lab::harness::{Harness, Reference};
use crate::lab::scratch::Scratch;
use crate::lab::verify::Measurement;
use anyhow::Result;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Compile, verify and time a program and its variant.
///
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
    /// Then decide head to head whether the variant is faster, TRIALS times (1
    /// unless given).
    ///
    /// By the rule of `optimize`'s confirmation: alternating runs until each
    /// side has 0.2 s of region time, a one-sided test at 1% with a smallest
    /// speedup of 2%. Without a configuration: the original against itself, a
    /// check of the rule (it must rarely say "faster":
    /// `scripts/decision_rates.py`).
    #[arg(long, value_name = "TRIALS", num_args = 0..=1, default_missing_value = "1")]
    head_to_head: Option<usize>,
    #[command(flatten)]
    output: OutputArgs,
}

/// `polytune measure`: its stages, from the parse to the printed report.
pub fn run(a: Args, ui: &Ui) -> Result<()> {
    let file = a.file.as_path();
    let src = parse(file)?;
    // Removed on every way out of this function, errors included.
    let dir = Scratch::new("measure")?;
    let (harness, compiler) = harness(&a, &src, dir.path(), ui)?;
    let (orig, reference) = original(&harness, &src, dir.path(), file)?;
    let (mut report, mut text) = header(&a, file, &compiler, &orig, &reference, ui);
    let (internal, variant_timed) = variant(
        &a,
        &src,
        &harness,
        (&orig, &reference),
        dir.path(),
        (&mut report, &mut text),
        ui,
    )?;
    if let Some(trials) = a.head_to_head {
        head_to_head(
            &a,
            trials,
            &harness,
            &reference,
            dir.path(),
            variant_timed,
            (&mut report, &mut text),
        )?;
    }
    drop(dir);
    print(a.output.json, &report, &text)?;
    super::internal_errors(&internal)
}

/// The program, parsed: an error when it has no SCoP region to measure.
fn parse(file: &Path) -> Result<frontend::SourceFile> {
    let src = frontend::parse_file(file, &Options::default())?;
    if src.scops.is_empty() {
        anyhow::bail!(
            "{}: no `#pragma scop` region to measure (polytune times and verifies the SCoP regions)",
            file.display()
        );
    }
    Ok(src)
}

/// The harness that builds and runs the program in `dir`, and its compiler.
fn harness(
    a: &Args,
    src: &frontend::SourceFile,
    dir: &Path,
    ui: &Ui,
) -> Result<(Harness, Compiler)> {
    let compiler = a.build.compiler()?;
    let recipe = a.program.recipe(
        compiler.clone(),
        src,
        a.build.include_for(&a.file),
        a.run.size,
        &a.compile_line.words,
        dir,
        ui,
    )?;
    let harness = Harness {
        recipe,
        protocol: a.run.protocol(),
        tolerance: a.program.tolerance(),
        workdir: dir.to_path_buf(),
    };
    Ok((harness, compiler))
}

/// The original, instrumented, built, run for its reference and timed.
fn original(
    harness: &Harness,
    src: &frontend::SourceFile,
    dir: &Path,
    file: &Path,
) -> Result<(Measurement, Reference)> {
    let name = file.file_name().unwrap_or_default();
    let original_dir = dir.join("original-src");
    crate::lab::scratch::subdir(&original_dir)?;
    let original_path = original_dir.join(name);
    std::fs::write(
        &original_path,
        crate::engine::pipeline::instrumented(src, None, None)?.text,
    )?;
    Ok(harness.reference(&original_path, true)?)
}

/// The report's start, as JSON and as text: the program and the
/// original's measurement (a warning when its output varies).
fn header(
    a: &Args,
    file: &Path,
    compiler: &Compiler,
    orig: &Measurement,
    reference: &Reference,
    ui: &Ui,
) -> (serde_json::Value, String) {
    let (size, threads) = (&a.run.size, a.run.threads);
    let report = json!({
        "file": file.display().to_string(),
        "compiler": compiler,
        "size": size,
        "threads": threads,
        "original": orig,
        "stdout_lines_masked": reference.masked,
    });
    let text = format!(
        "{} with {} ({}), {size}, {threads} thread(s)\n  original: {}\n",
        file.display(),
        compiler.name(),
        compiler.version,
        measurement(orig)
    );
    if reference.masked > 0 {
        ui.warn(format!(
            "{} line(s) of the program's standard output differ from run to run (times?): not compared",
            reference.masked
        ));
    }
    (report, text)
}

/// With a configuration: the variant generated, built, verified and timed,
/// added to the report with its speedup. Returns the engine's internal
/// errors and whether the variant was timed.
fn variant(
    a: &Args,
    src: &frontend::SourceFile,
    harness: &Harness,
    (orig, reference): (&Measurement, &Reference),
    dir: &Path,
    (report, text): (&mut serde_json::Value, &mut String),
    ui: &Ui,
) -> Result<(Vec<String>, bool)> {
    let Some(c) = a.config.config() else {
        return Ok((Vec::new(), false));
    };
    let outcome = crate::engine::pipeline::instrumented(src, Some(&c), None)?;
    for s in &outcome.skipped {
        ui.warn(s);
    }
    let internal = outcome.internal;
    let variant_dir = dir.join("variant-src");
    crate::lab::scratch::subdir(&variant_dir)?;
    let variant_path = variant_dir.join(a.file.file_name().unwrap_or_default());
    std::fs::write(&variant_path, &outcome.text)?;
    let var = harness.measure(&variant_path, "variant", reference, outcome.openmp, true);
    let variant_timed = var.timing.is_some();
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
    Ok((internal, variant_timed))
}

/// --head-to-head: the variant (or the original again) decided against
/// the original `trials` times, added to the report.
fn head_to_head(
    a: &Args,
    trials: usize,
    harness: &Harness,
    reference: &Reference,
    dir: &Path,
    variant_timed: bool,
    (report, text): (&mut serde_json::Value, &mut String),
) -> Result<()> {
    let candidate = match a.config.config() {
        Some(_) => dir.join("variant"),
        None => reference.exe.clone(),
    };
    if a.config.config().is_some() && !variant_timed {
        anyhow::bail!(
            "the variant did not build or verify: there is nothing to hold against the original"
        );
    }
    let rule = crate::lab::decide::Rule::default();
    let mut decisions = Vec::new();
    for _ in 0..trials.max(1) {
        let d = crate::lab::decide::head_to_head(harness, &reference.exe, &candidate, &rule)
            .map_err(|r| anyhow::anyhow!("a head-to-head run failed: {}", r.stderr.trim()))?;
        let t = d.last();
        text.push_str(&format!(
            "  head to head: {} rounds, {} look(s): original {:.6} s, {} {:.6} s (medians), ratio {:.3}, p = {:.2e}: {}\n",
            d.original.len(),
            d.looks.len(),
            t.original,
            if a.config.config().is_some() { "variant" } else { "original again" },
            t.candidate,
            t.median_ratio,
            t.p_value,
            if t.faster { "faster" } else { "not a clear win" }
        ));
        decisions.push(d);
    }
    let faster = decisions.iter().filter(|d| d.last().faster).count();
    if decisions.len() > 1 {
        text.push_str(&format!(
            "  faster in {faster} of {} trials\n",
            decisions.len()
        ));
    }
    report["head_to_head"] = json!(decisions);
    report["faster_in"] = json!(faster);
    Ok(())
}

fn print(as_json: bool, report: &serde_json::Value, text: &str) -> Result<()> {
    if as_json {
        out(&json_text(report)?)
    } else {
        out(text)
    }
}
