//! What a comparison reports: progress events as it goes, and the
//! [`Report`] it returns (serialized as the JSON of `compare --json`; the
//! keys are part of the interface, listed in the book's "Peers side by
//! side").

use crate::app::select;
use crate::lab::verify::Status;
use serde::Serialize;
use std::path::PathBuf;

/// A contender: a name, a compiler and its flags.
#[derive(Debug, Clone, Serialize)]
pub struct Contender {
    pub name: String,
    pub compiler: String,
    pub version: String,
    pub flags: Vec<String>,
    pub openmp: bool,
    /// `false` when this machine cannot build it (then `detail` says why).
    pub available: bool,
    pub detail: String,
}

/// How a contender fared on a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Built, same output as the baseline, timed.
    Ok,
    /// This machine cannot build it.
    NotAvailable,
    /// polytune's selection failed, so there is no program.
    SelectionFailed,
    CompileError,
    Crash,
    Timeout,
    WrongOutput,
    /// Verified, then failed in a timed run.
    TimingFailed,
}

impl Verdict {
    pub(super) fn of(s: Status) -> Verdict {
        match s {
            Status::Ok => Verdict::Ok,
            Status::CompileError => Verdict::CompileError,
            Status::Crash => Verdict::Crash,
            Status::Timeout => Verdict::Timeout,
            Status::WrongOutput => Verdict::WrongOutput,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::NotAvailable => "not-available",
            Verdict::SelectionFailed => "selection-failed",
            Verdict::CompileError => "compile-error",
            Verdict::Crash => "crash",
            Verdict::Timeout => "timeout",
            Verdict::WrongOutput => "wrong-output",
            Verdict::TimingFailed => "timing-failed",
        }
    }
}

/// One contender on one kernel.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub contender: String,
    pub verdict: Verdict,
    /// The first line of why it failed; empty when it ran.
    pub detail: String,
    /// Kernel seconds of each round (ok only).
    pub samples: Vec<f64>,
    /// Their median.
    pub seconds: Option<f64>,
    /// The baseline's median over this one's.
    pub speedup: Option<f64>,
}

/// One kernel, every contender.
#[derive(Debug, Clone, Serialize)]
pub struct Kernel {
    pub kernel: String,
    pub file: PathBuf,
    /// The baseline's median seconds (`None`: it did not run, and the
    /// kernel is left out of the means).
    pub baseline_seconds: Option<f64>,
    /// What polytune chose (`None` when its selection failed).
    pub choice: Option<select::Choice>,
    /// What polytune's selection measured to choose it (`None` when its
    /// selection failed or did not run).
    pub selection: Option<Selection>,
    /// In the order of the report's contenders.
    pub entries: Vec<Entry>,
}

/// What polytune's selection measured on a kernel, as `optimize --json`
/// reports it: the original's run, every candidate (its configuration,
/// why it was picked, its predicted rank and its run), the refinement's
/// programs and the head-to-head that decided. Two comparisons that
/// chose differently say why here.
#[derive(Debug, Clone, Serialize)]
pub struct Selection {
    pub original: Option<select::Run>,
    pub candidates: Vec<select::Candidate>,
    pub refinement: Vec<select::Refined>,
    pub head_to_head: Option<select::HeadToHead>,
}

impl Selection {
    pub(super) fn of(r: select::Report) -> Selection {
        Selection {
            original: r.original,
            candidates: r.candidates,
            refinement: r.refinement,
            head_to_head: r.head_to_head,
        }
    }
}

/// A contender's geometric mean speedup over the kernels.
#[derive(Debug, Clone, Serialize)]
pub struct Mean {
    pub contender: String,
    /// A failed or wrong build counts as 1.0 (the baseline it would fall
    /// back to); `None` when the contender never was available.
    pub speedup: Option<f64>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub size: crate::lab::size::Size,
    pub threads: usize,
    pub rounds: usize,
    /// The first is the baseline; the last is polytune.
    pub contenders: Vec<Contender>,
    pub kernels: Vec<Kernel>,
    pub geomean: Vec<Mean>,
}

/// What the comparison is doing, as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Kernel `k` (from 1) of `n` starts; each has `steps` steps (builds
    /// and rounds).
    Kernel {
        k: usize,
        n: usize,
        name: String,
        steps: usize,
    },
    /// A contender was built and checked.
    Built { contender: String, verdict: Verdict },
    /// polytune's selection is under way.
    Selecting(select::Event),
    /// Round `round` (from 1) of the timing is through.
    Round { round: usize, rounds: usize },
}

impl Entry {
    pub(super) fn new(contender: &str, verdict: Verdict, detail: String) -> Entry {
        Entry {
            contender: contender.to_string(),
            verdict,
            detail,
            samples: Vec::new(),
            seconds: None,
            speedup: None,
        }
    }
}
