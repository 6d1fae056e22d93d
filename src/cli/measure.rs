//! `polytune measure`: compile, verify and time a program and a variant.

use super::args::{BuildArgs, CompileLine, ConfigArgs, OutputArgs, ProgramArgs, RunArgs};
use super::render::{json_text, measure_text};
use super::{Ui, out};
use crate::app::measure::{self, Event};
use crate::frontend;
use crate::lab::harness::Harness;
use crate::lab::scratch::Scratch;
use anyhow::Result;
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
pub(crate) struct Args {
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

/// `polytune measure`: the program parsed and its harness set up, the
/// measurement by the app layer, its report printed.
pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    let src = measure::source(&a.file).map_err(super::app_error)?;
    // Removed on every way out of this function, errors included.
    let dir = Scratch::new("measure")?;
    let setup = measure::Setup {
        harness: harness(&a, &src, dir.path(), ui)?,
        config: a.config.config(),
        head_to_head: a.head_to_head,
        size: a.run.size,
    };
    let report = measure::measure(&src, &setup, &mut |e| match e {
        Event::Masked(n) => ui.warn(format!(
            "{n} line(s) of the program's standard output differ from run to run (times?): not compared"
        )),
        Event::Skipped(s) => ui.warn(s),
    })
    .map_err(super::app_error)?;
    drop(dir);
    out(&if a.output.json {
        json_text(&serde_json::to_value(&report)?)?
    } else {
        measure_text(&report)
    })?;
    super::internal_errors(&report.internal)
}

/// The harness that builds and runs the program in `dir`.
fn harness(a: &Args, src: &frontend::SourceFile, dir: &Path, ui: &Ui) -> Result<Harness> {
    let recipe = a.program.recipe(
        a.build.compiler()?,
        src,
        a.build.include_for(&a.file),
        a.run.size,
        &a.compile_line.words,
        dir,
        ui,
    )?;
    Ok(Harness {
        recipe,
        protocol: a.run.protocol(),
        tolerance: a.program.tolerance(),
        workdir: dir.to_path_buf(),
    })
}
