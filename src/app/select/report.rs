//! What the learned selection reports: progress events as it goes, and
//! the [`Report`] it returns (serialized as the JSON of `optimize --json`;
//! the keys are part of the interface, listed in the book's learning chapter, docs/src/learning.md).

use crate::config::Config;
use crate::lab::verify::{Measurement, Status};
use crate::learn::Kind;
use crate::learn::search::drive::Stop;
use serde::Serialize;
use std::path::PathBuf;

/// What the selection is doing, as it goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event {
    /// The original's characterization has counted `instructions` inside
    /// its regions so far; it stops at `bound`.
    Characterizing { instructions: u64, bound: u64 },
    /// The original was characterized: `counters` values in `seconds`,
    /// over the `counted` part of its run.
    Characterized {
        counters: usize,
        seconds: f64,
        counted: crate::lab::characterize::Counted,
    },
    /// `drawn` configurations beyond the paper's space were drawn
    /// (`--sample`): `new` of them are variants of their own.
    Sampled { drawn: usize, new: usize },
    /// The original and then `candidates` candidates (and at most
    /// `refinements` programs of the refinement after them) are
    /// about to be compiled, verified and timed.
    Started {
        candidates: usize,
        refinements: usize,
    },
    /// The original was compiled, verified and timed.
    Baseline { status: Status },
    /// Candidate `k` (from 1) of `n` was compiled, verified and timed.
    Candidate { k: usize, n: usize, status: Status },
    /// The refinement's program `k` (from 1) of at most `n` was
    /// compiled, verified and timed.
    Refined { k: usize, n: usize, status: Status },
    /// The head-to-head confirmation of the winner started.
    HeadToHead { rule: crate::lab::decide::Rule },
    /// Nothing is left to run.
    Done,
}

/// A configuration in JSON: its readable form.
fn readable<S: serde::Serializer>(c: &Config, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(c)
}

fn readable_opt<S: serde::Serializer>(c: &Option<Config>, s: S) -> Result<S::Ok, S::Error> {
    match c {
        Some(c) => s.collect_str(c),
        None => s.serialize_none(),
    }
}

fn model_name<S: serde::Serializer>(k: &Kind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.name())
}

/// One model's predicted speedup of a candidate.
#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    #[serde(serialize_with = "model_name")]
    pub model: Kind,
    pub speedup: f64,
}

/// How a candidate (or the original) fared when run.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub status: Status,
    /// The first line of why it failed; empty when it ran.
    pub detail: String,
    /// Median kernel seconds (ok runs only).
    pub seconds: Option<f64>,
    /// Over the original's median (ok runs only).
    pub speedup: Option<f64>,
}

impl Run {
    pub(super) fn of(m: &Measurement, base: f64) -> Run {
        let seconds = m
            .timing
            .as_ref()
            .filter(|_| m.status == Status::Ok)
            .map(|t| t.median);
        Run {
            status: m.status,
            detail: m.detail.lines().next().unwrap_or("").trim().to_string(),
            seconds,
            speedup: seconds.map(|t| base / t),
        }
    }
}

/// A ranked candidate, best guess first.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    #[serde(serialize_with = "readable")]
    pub config: Config,
    /// The same configuration, bit form (none beyond the paper's space:
    /// `--sample`'s draws).
    pub bits: Option<String>,
    /// Which models (and at which rank) chose it; for an adaptive
    /// strategy, which step of the search (`bo initial design (1 of 5)`,
    /// `bo #5 (EI 3.2%)`).
    pub chosen_by: String,
    pub predicted: Vec<Prediction>,
    /// Bayesian optimization's expected improvement of it over the best
    /// measured before it (relative: 0.03 is 3% faster); `None` for other
    /// strategies and for its initial design.
    pub expected_improvement: Option<f64>,
    /// `None` with `--no-run`.
    pub run: Option<Run>,
    /// Its place (from 1) among all the variants in the order of the
    /// model that ranked them ([`Report::ranker`]), when the variant
    /// ranker did.
    pub place: Option<usize>,
    /// The model whose ranking the search followed: the variant ranker,
    /// or the six models together.
    pub ranked_by: String,
}

/// How the variant ranker ranked a program's variants.
#[derive(Debug, Clone, Serialize)]
pub struct RankerUse {
    /// Measured variants and kernels it was fitted to, and of them those
    /// of the user's store.
    pub rows: usize,
    pub kernels: usize,
    pub local_rows: usize,
    pub local_kernels: usize,
    /// Variants whose features the engine could not compute (ranked
    /// last).
    pub unfeatured: usize,
    /// Seconds fitting it, and in all (fitting, the features, scoring).
    pub fit_seconds: f64,
    pub seconds: f64,
}

/// What a selection added to the user's store.
#[derive(Debug, Clone, Serialize)]
pub struct Learned {
    pub store: PathBuf,
    pub runs: usize,
}

/// A program of the refinement: one step from the fastest before it,
/// mostly beyond the paper's space.
#[derive(Debug, Clone, Serialize)]
pub struct Refined {
    #[serde(serialize_with = "readable")]
    pub config: Config,
    /// The configuration it is a step from.
    #[serde(serialize_with = "readable")]
    pub from: Config,
    pub step: super::Step,
    pub run: Run,
}

/// How the candidates were searched, and why the search stopped.
#[derive(Debug, Clone, Serialize)]
pub struct Search {
    pub strategy: String,
    /// Unique candidates at most (`--budget`/`--shots`).
    pub budget: usize,
    /// Seconds the candidates could take (`--time-budget`).
    pub time_budget: Option<f64>,
    /// The expected-improvement floor (adaptive strategies only).
    pub min_ei: Option<f64>,
    /// Candidates run.
    pub evaluated: usize,
    /// Seconds they took (building, verifying and timing them).
    pub seconds: f64,
    pub stop: Stop,
    /// With `stop` = `expected-improvement`: the expected improvement of
    /// the candidate that was not run.
    pub final_ei: Option<f64>,
    /// Bayesian optimization: the measured programs whose landscapes its
    /// prior mean matched to the runs (`landscapes.json` beside the
    /// models; none when the models have none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer_from: Option<usize>,
}

/// Wall seconds of each phase of the selection.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Phases {
    /// The original's characterization (its build and the simulator).
    pub characterize: f64,
    /// Enumerating and ranking the variants.
    pub rank: f64,
    /// The original built, run twice recording, then timed.
    pub original: f64,
    /// Compiling the candidates and the refinement's programs.
    pub builds: f64,
    /// Their verification and timing runs.
    pub runs: f64,
    /// Threaded winners rerun with sleeping threads.
    pub passive: f64,
    /// The winner head to head with the original.
    pub confirm: f64,
    /// From start to end.
    pub total: f64,
}

/// A threaded candidate rerun with sleeping threads.
#[derive(Debug, Clone, Serialize)]
pub struct PassiveCheck {
    #[serde(serialize_with = "readable")]
    pub config: Config,
    /// Kernel seconds per run; `None` for a failed or far too slow run.
    pub seconds: Vec<Option<f64>>,
    /// Whether it stays as fast as the original.
    pub holds: bool,
}

/// The winner against the original, in alternating runs.
#[derive(Debug, Clone, Serialize)]
pub struct HeadToHead {
    #[serde(serialize_with = "readable")]
    pub config: Config,
    /// What decided: the regions' seconds, or the whole program's when
    /// the original's regions run too short to be timed.
    pub basis: crate::lab::head_to_head::Basis,
    pub rounds: usize,
    /// Median seconds on the basis; `None` when the runs failed.
    pub original_seconds: Option<f64>,
    pub candidate_seconds: Option<f64>,
    /// The median of the rounds' ratios original / candidate, on the basis.
    pub speedup: Option<f64>,
    /// The whole program's median seconds in the same rounds.
    pub program_original_seconds: Option<f64>,
    pub program_candidate_seconds: Option<f64>,
    /// The median of the rounds' ratios of the whole program's seconds.
    pub program_speedup: Option<f64>,
    /// The same of the regions' seconds; `None` when they are too short
    /// to be a basis for a claim.
    pub regions_speedup: Option<f64>,
    /// The one-sided p-value of "no more than `min_speedup` faster" at
    /// the last look, and the level it had to be under (`lab::decide`).
    pub p_value: Option<f64>,
    pub level: f64,
    pub min_speedup: f64,
    /// Looks the test took (at most three).
    pub looks: usize,
    /// Its speedup when the win is clear.
    pub confirmed: Option<f64>,
    /// Why the runs failed.
    pub error: Option<String>,
}

/// Why the selection ended where it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// `--no-run`: the top prediction, not run.
    Predicted,
    /// Measured faster and confirmed head to head.
    Measured,
    /// No candidate beat the original: it is kept.
    OriginalKept,
}

/// What was chosen.
#[derive(Debug, Clone, Serialize)]
pub struct Choice {
    /// `None` when the original was kept.
    #[serde(serialize_with = "readable_opt")]
    pub config: Option<Config>,
    pub bits: Option<String>,
    pub reason: Reason,
    /// With `--no-run`, who predicted it.
    pub chosen_by: Option<String>,
    /// The whole program's speedup over the original, measured head to
    /// head (`None` without runs): what polytune claims.
    pub speedup: Option<f64>,
    /// Its SCoP regions' speedup in the same runs; `None` without runs or
    /// when they run too short to be timed.
    pub regions_speedup: Option<f64>,
}

/// Everything the learned selection did, and its program.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub file: PathBuf,
    /// Counters of the characterization, and the seconds it took.
    pub counters: usize,
    pub characterize_seconds: f64,
    /// What part of the original's run the counters count.
    pub counted: crate::lab::characterize::Counted,
    /// How long each phase took.
    pub phases: Phases,
    /// The build and run commands the program was tuned with (its size
    /// is in its compile line, or `size` for a corpus-style program).
    pub built_as: String,
    pub run_as: String,
    pub variants: usize,
    /// Of `variants`, those only configurations drawn beyond the paper's
    /// space produce (`--sample`).
    pub beyond_paper: usize,
    pub models: usize,
    /// Where the models were trained.
    pub trained_compiler: String,
    pub trained_machine: String,
    /// How the candidates were run (compiler and flags, size, threads).
    pub compiler: crate::lab::compiler::Family,
    pub flags: Vec<String>,
    pub size: crate::lab::size::Size,
    pub threads: usize,
    pub warnings: Vec<String>,
    /// The variant ranker, when it ranked the variants (the search then
    /// followed it alone); `None`: the six models did.
    pub ranker: Option<RankerUse>,
    /// Runs appended to the user's store, and where (`None`: nothing
    /// learned: `--no-learn`, no variant ranker, or the store failed, said
    /// in the warnings).
    pub learned: Option<Learned>,
    /// The original's run (`None` with `--no-run`).
    pub original: Option<Run>,
    pub candidates: Vec<Candidate>,
    /// `None` with `--no-run`.
    pub search: Option<Search>,
    /// The refinement's programs, run after the search.
    pub refinement: Vec<Refined>,
    pub passive: Vec<PassiveCheck>,
    pub head_to_head: Option<HeadToHead>,
    pub choice: Choice,
    /// The whole chosen file, with a header comment saying what was chosen.
    #[serde(skip)]
    pub text: String,
}
