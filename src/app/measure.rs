//! `measure`: a program and, with a configuration, its variant compiled,
//! verified and timed through polytune's instrumentation, and optionally
//! decided head to head; one typed report that the command line prints as
//! text or JSON.

use super::error::Error;
use crate::config::Config;
use crate::frontend::SourceFile;
use crate::lab::compiler::Compiler;
use crate::lab::decide::{Decision, Rule};
use crate::lab::harness::{Harness, Reference};
use crate::lab::head_to_head::Basis;
use crate::lab::size::Size;
use crate::lab::verify::Measurement;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What to measure and how.
pub struct Setup {
    /// Builds and runs the program; its work directory is the scratch
    /// directory the sources are written to.
    pub harness: Harness,
    /// The variant's configuration; the original alone without one.
    pub config: Option<Config>,
    /// Decide head to head this many times (at least once) whether the
    /// variant (or, without one, the original again) is faster.
    pub head_to_head: Option<usize>,
    /// The dataset size, as reported.
    pub size: Size,
}

/// What happened on the way, for the user to hear about at once.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Lines of the original's standard output differ from run to run
    /// (they are not compared).
    Masked(usize),
    /// A SCoP the engine left unchanged in the variant, and why.
    Skipped(String),
}

/// The measurement of a program (JSON: keys in alphabetical order, as the
/// command line writes them through `serde_json::Value`).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The compiler that built both programs.
    pub compiler: Compiler,
    /// The measured program.
    #[serde(serialize_with = "super::serial::path")]
    pub file: PathBuf,
    /// The original, instrumented, verified against itself and timed.
    pub original: Measurement,
    /// The dataset size.
    pub size: Size,
    /// Lines of the original's standard output that differ from run to
    /// run, left out of the comparison.
    pub stdout_lines_masked: usize,
    /// OpenMP threads of every run.
    pub threads: usize,
    /// With a configuration: the variant (`config`, `variant`, `speedup`).
    #[serde(flatten)]
    pub variant: Option<Variant>,
    /// With --head-to-head: the decisions (`head_to_head`, `faster_in`).
    #[serde(flatten)]
    pub head_to_head: Option<HeadToHead>,
    /// The engine's internal errors (those SCoPs left unchanged): the
    /// command ends with exit status 3 after its report.
    #[serde(skip)]
    pub internal: Vec<String>,
}

/// The variant's part of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Variant {
    /// The configuration, in its readable form.
    #[serde(serialize_with = "super::serial::display")]
    pub config: Config,
    /// The original's median region time over the variant's, when both
    /// were timed.
    pub speedup: Option<f64>,
    /// The variant, verified against the original, then timed.
    pub variant: Measurement,
}

/// The head-to-head part of the report.
#[derive(Debug, Clone, Serialize)]
pub struct HeadToHead {
    /// Trials that declared the candidate faster.
    pub faster_in: usize,
    /// Every trial's decision.
    pub head_to_head: Vec<Decision>,
}

/// The program parsed, refused when it has no SCoP region to measure.
pub fn source(file: &Path) -> Result<SourceFile, Error> {
    super::with_regions(file, "measure", "times and verifies the SCoP regions")
}

/// `measure`: the original, then the variant, then the head to head.
pub fn measure(
    src: &SourceFile,
    setup: &Setup,
    on: &mut dyn FnMut(Event),
) -> Result<Report, Error> {
    let h = &setup.harness;
    let (original, reference) = original(h, src)?;
    if reference.masked > 0 {
        on(Event::Masked(reference.masked));
    }
    let mut report = Report {
        compiler: h.recipe.compiler.clone(),
        file: src.path.clone(),
        original,
        size: setup.size,
        stdout_lines_masked: reference.masked,
        threads: h.protocol.threads,
        variant: None,
        head_to_head: None,
        internal: Vec::new(),
    };
    if let Some(c) = setup.config {
        let (v, internal) = variant(h, src, c, &report.original, &reference, on)?;
        report.variant = Some(v);
        report.internal = internal;
    }
    if let Some(trials) = setup.head_to_head {
        let candidate = match &report.variant {
            Some(v) if v.variant.timing.is_none() => return Err(Error::NothingToHold),
            Some(_) => h.workdir.join("variant"),
            None => reference.exe.clone(),
        };
        report.head_to_head = Some(head_to_head(h, &reference, &candidate, trials)?);
    }
    Ok(report)
}

/// The original, instrumented, built, run for its reference and timed.
fn original(h: &Harness, src: &SourceFile) -> Result<(Measurement, Reference), Error> {
    let dir = h.workdir.join("original-src");
    crate::lab::scratch::subdir(&dir)?;
    let path = dir.join(src.path.file_name().unwrap_or_default());
    std::fs::write(
        &path,
        crate::engine::pipeline::instrumented(src, None, None)?.text,
    )?;
    Ok(h.reference(&path, true)?)
}

/// The variant generated, built, verified and timed, with its speedup,
/// and the engine's internal errors.
fn variant(
    h: &Harness,
    src: &SourceFile,
    c: Config,
    original: &Measurement,
    reference: &Reference,
    on: &mut dyn FnMut(Event),
) -> Result<(Variant, Vec<String>), Error> {
    let outcome = crate::engine::pipeline::instrumented(src, Some(&c), None)?;
    for s in &outcome.skipped {
        on(Event::Skipped(s.clone()));
    }
    let dir = h.workdir.join("variant-src");
    crate::lab::scratch::subdir(&dir)?;
    let path = dir.join(src.path.file_name().unwrap_or_default());
    std::fs::write(&path, &outcome.text)?;
    let variant = h.measure(&path, "variant", reference, outcome.openmp, true);
    let speedup = match (&original.timing, &variant.timing) {
        (Some(o), Some(v)) if v.median > 0.0 => Some(o.median / v.median),
        _ => None,
    };
    let v = Variant {
        config: c,
        speedup,
        variant,
    };
    Ok((v, outcome.internal))
}

/// The candidate decided against the original `trials` times (at least
/// once) by the rule of `optimize`'s confirmation.
fn head_to_head(
    h: &Harness,
    reference: &Reference,
    candidate: &Path,
    trials: usize,
) -> Result<HeadToHead, Error> {
    let rule = Rule::default();
    let decisions = (0..trials.max(1))
        .map(|_| {
            crate::lab::head_to_head::head_to_head(
                h,
                &reference.exe,
                candidate,
                &rule,
                Basis::Regions,
            )
            .map(|p| p.decision)
            .map_err(|r| Error::HeadToHead {
                stderr: r.stderr.trim().to_string(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(HeadToHead {
        faster_in: decisions.iter().filter(|d| d.last().faster).count(),
        head_to_head: decisions,
    })
}
