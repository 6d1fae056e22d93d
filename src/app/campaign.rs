//! Training campaigns: every distinct variant of every kernel (and, with
//! `--space extended`, those of a sample of the extended space:
//! `sample.rs`), with every compiler, measured (verified, then timed)
//! right after its kernel's original in the same batch, and stored as it
//! arrives. Rerunning the same campaign resumes it: what is stored is
//! skipped.
//!
//! A campaign may be one shard of a larger one (`shard.rs`): it measures
//! its share of the units only, into its own store, to be merged. The two
//! ways of measuring a kernel live in `lab.rs`; `ahead.rs` builds variants
//! several at a time (`--jobs`) while they are timed one at a time;
//! `learn.rs` appends each kernel's verified measurements to the user's
//! store of this machine's runs ([`crate::app::ranker`]).
//!
//! [`run`] prints nothing: it reports progress as [`Event`]s and returns
//! a [`Summary`].

mod ahead;
mod confirm;
mod lab;
mod learn;
mod sample;
mod shard;
mod stages;

pub use confirm::Confirm;
pub use learn::{Learned, NotLearned};
pub use sample::Space;
pub(crate) use sample::{add_draws, draws};
pub use shard::Shard;

use crate::engine::space::{Variant, code_hash, distinct_variants};
use crate::frontend::{self, Options};
use crate::lab::build::{Recipe, corpus_style};
use crate::lab::characterize::{Backend, characterize, characterize_instrumented};
use crate::lab::compiler::{Compiler, Family};
use crate::lab::confine::Cores;
use crate::lab::dump::Tolerance;
use crate::lab::harness::Harness;
use crate::lab::runner::Protocol;
use crate::lab::scratch::Scratch;
use crate::lab::size::Size;
use crate::lab::store::{Key, Machine, Store, UnitCost};
use crate::lab::verify::{Bench, Status};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What a campaign measures and how.
#[derive(Debug, Clone)]
pub struct Campaign {
    pub kernels: Vec<PathBuf>,
    pub compilers: Vec<Compiler>,
    pub size: Size,
    pub protocol: Protocol,
    /// Variants this many times slower than their baseline on the
    /// verification run get the protocol's `slow_runs` only.
    pub slow_factor: Option<f64>,
    /// Measure at most this many variants of the paper's space per
    /// kernel (evenly spread over the enumeration order); all when `None`.
    pub max_variants: Option<usize>,
    /// The paper's space alone, or with a sample of the extended space
    /// (`sample.rs`).
    pub space: Space,
    pub include: Vec<PathBuf>,
    /// Dataset size for the cachegrind characterization of each original.
    pub feature_size: Size,
    /// While this file exists the campaign waits before its next
    /// measurement (see `wait_while_paused`).
    pub pause_file: Option<PathBuf>,
    /// How programs that are not in the corpus style are built and run
    /// (they are measured through polytune's instrumentation).
    pub program: Program,
    /// Measure only this shard of the units.
    pub shard: Option<Shard>,
    /// What measuring programs cost, for cutting shards (from a store
    /// every shard reads alike, never the shard's own).
    pub costs: Vec<UnitCost>,
    /// Variants built at once (`ahead.rs`): in batches of this many
    /// between timed runs, or beside them when the protocol gives the
    /// runs cores of their own (`protocol.cores`; the builders get the
    /// others).
    pub jobs: usize,
    /// Time each kernel's fastest variants again, interleaved with the
    /// original, once its variants are measured (`confirm.rs`).
    pub confirm: Option<Confirm>,
    /// The user's store of this machine's runs, which each kernel's
    /// verified measurements are appended to as it is done (`learn.rs`);
    /// `None`: not appended.
    pub learn: Option<PathBuf>,
}

/// How a campaign builds and runs the programs outside the corpus style
/// (issue 17): one compile line, command line and tolerance for all.
#[derive(Debug, Clone, Default)]
pub struct Program {
    /// The compile line after `--` (the kernel's directory is added).
    pub extra: Vec<String>,
    pub run_args: Vec<String>,
    pub build: Option<String>,
    pub run: Option<String>,
    pub tolerance: Tolerance,
    /// A bare kernel's parameter values (its generated driver).
    pub params: Vec<(String, i64)>,
    pub size_from_footprint: bool,
}

/// Why a campaign stopped.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error(transparent)]
    Store(#[from] crate::lab::store::StoreError),
    #[error(transparent)]
    Frontend(#[from] crate::frontend::FrontendError),
    #[error(transparent)]
    Engine(#[from] crate::engine::model::EngineError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Sample(#[from] crate::engine::extended::SampleError),
    #[error("{path}: {message}")]
    Driver { path: String, message: String },
    #[error("{0}")]
    Cores(String),
    /// A signal ended polytune while a program ran: its outcome is not
    /// stored (a resumed campaign measures it again).
    #[error("polytune was interrupted; the program being measured was not stored")]
    Interrupted,
    #[error(
        "{db} holds shard {stored} of a campaign, not {asked}\n  help: give each shard its own store"
    )]
    OtherShard {
        db: String,
        stored: String,
        asked: String,
    },
}

/// What a finished (or resumed) campaign did, and what its store holds
/// now (the JSON of `collect --json`: keys listed in
/// docs/src/measuring.md).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The store (its file).
    pub db: String,
    #[serde(flatten)]
    pub summary: Summary,
    /// Measurements in the store in all.
    pub measurements: i64,
    /// What was appended to the user's store of this machine's runs
    /// (`None`: nothing asked, or the store failed before anything was).
    pub learned: Option<Learned>,
}

/// Counts of a campaign so far.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Summary {
    pub measured: usize,
    /// Found in the store, not measured again.
    #[serde(rename = "already_stored")]
    pub skipped: usize,
    pub failed: usize,
    /// Variants timed again by `--confirm-top` (`confirm.rs`).
    pub confirmed: usize,
}

/// Refuses to store an outcome once a signal is ending polytune: the
/// signal's clean-up killed the compiler or program, whose failure is
/// no measurement (stored, a resumed campaign would skip the variant).
fn not_interrupted() -> Result<(), CollectError> {
    if crate::lab::confine::ending() {
        Err(CollectError::Interrupted)
    } else {
        Ok(())
    }
}

/// Every `.c` file under the given files and directories (corpus headers
/// excluded), sorted.
pub fn kernel_files(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "include") {
                return Ok(());
            }
            for e in std::fs::read_dir(p)? {
                walk(&e?.path(), out)?;
            }
        } else if p.extension().is_some_and(|x| x == "c") {
            out.push(p.to_path_buf());
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if !p.exists() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{} does not exist", p.display()),
            ));
        }
        walk(p, &mut out)?;
    }
    out.sort();
    Ok(out)
}

/// What a campaign is doing, as it goes.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A variant the campaign cannot build: it is left out.
    Skipped {
        kernel: &'a Path,
        reason: &'a str,
    },
    /// `drawn` configurations of the extended space were drawn for a
    /// kernel: `new` are variants of their own, the others produce the
    /// code of a paper variant (or of another draw).
    Sampled {
        name: &'a str,
        drawn: usize,
        new: usize,
    },
    /// The campaign has `total` programs to go through (stored ones
    /// included).
    Planned {
        total: usize,
    },
    /// A kernel's original is measured with a compiler.
    Kernel {
        name: &'a str,
        compiler: Family,
    },
    /// No features for a kernel (its models will lack it).
    NoFeatures {
        name: &'a str,
        error: &'a str,
    },
    /// A kernel's original fails with a compiler: its variants are skipped.
    OriginalFailed {
        name: &'a str,
        compiler: Family,
        status: Status,
        detail: &'a str,
    },
    /// Program `done` of `total` was measured (`status`) or found stored
    /// (`None`); `eta` seconds of measuring are left at `each` per program.
    Variant {
        done: usize,
        total: usize,
        name: &'a str,
        compiler: Family,
        status: Option<Status>,
        so_far: Summary,
        each: f64,
        eta: f64,
    },
    /// The store holds `stale` measured variants of a kernel with this
    /// compiler on this machine whose code no variant of today's space
    /// has (another polytune generated them): they are not counted as
    /// done, and today's variants are measured.
    Stale {
        name: &'a str,
        compiler: Family,
        stale: usize,
        pending: usize,
    },
    /// A pass of `--confirm-top` over a kernel's fastest variants:
    /// `variants` of them are timed again, interleaved with the original.
    Confirming {
        name: &'a str,
        compiler: Family,
        pass: usize,
        variants: usize,
    },
    /// A variant's speedup, as the campaign measured it and as confirmed.
    Confirmed {
        name: &'a str,
        compiler: Family,
        config: &'a str,
        before: f64,
        after: f64,
    },
    /// A pass of `--confirm-top` that stored nothing, or a variant that
    /// failed its verification again.
    ConfirmFailed {
        name: &'a str,
        compiler: Family,
        detail: &'a str,
    },
    /// A kernel's measurements with a compiler could not be appended to
    /// the user's store of this machine's runs; with `stops`, the store
    /// itself failed and nothing more is appended (the campaign goes on,
    /// its own store untouched).
    NotLearned {
        name: &'a str,
        compiler: Family,
        error: &'a str,
        stops: bool,
    },
    /// Waiting while this file exists.
    Paused {
        file: &'a Path,
    },
    Resumed,
}

fn pick<T: Clone>(all: &[T], max: Option<usize>) -> Vec<T> {
    match max {
        Some(m) if m < all.len() => (0..m).map(|k| all[k * all.len() / m].clone()).collect(),
        _ => all.to_vec(),
    }
}

/// Waits while `pause` exists, saying so once through `progress`. While it waits,
/// `pause` with the extension `ack` exists: whoever paused the campaign
/// knows from it that no measurement is running.
fn wait_while_paused(pause: Option<&Path>, progress: &mut dyn FnMut(Event)) -> std::io::Result<()> {
    let Some(p) = pause else { return Ok(()) };
    if p.exists() {
        let ack = p.with_extension("ack");
        std::fs::write(&ack, format!("{}\n", std::process::id()))?;
        progress(Event::Paused { file: p });
        while p.exists() {
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        let _ = std::fs::remove_file(&ack);
        progress(Event::Resumed);
    }
    Ok(())
}

/// Runs (or resumes) a campaign into `store`, reporting progress as it
/// goes. The stages are in `stages.rs`.
pub fn run(
    c: &Campaign,
    store: &mut Store,
    progress: &mut dyn FnMut(Event),
) -> Result<Report, CollectError> {
    let mode = build_mode(c)?;
    let machine = store.machine_id(&Machine::this())?;
    let scratch = Scratch::new("collect")?;
    let plans = stages::plan(c, progress)?;
    let mine = shard::select(c, &plans);
    let total = stages::claim(c, store, &mine, progress)?;
    let work = scratch.path().to_path_buf();
    let mut run = stages::Collecting::new(c, store, progress, work, machine, mode, total);
    for ((path, src, _), (features, per_compiler)) in plans.iter().zip(&mine) {
        let kernel = run.prepare(path, src)?;
        if *features {
            run.features(&kernel, path, src)?;
        }
        for (compiler, variants) in c.compilers.iter().zip(per_compiler) {
            if let Some(variants) = variants {
                run.compiler(&kernel, path, src, compiler, variants)?;
            }
        }
    }
    let summary = run.summary();
    let learned = run.learned();
    drop(scratch);
    Ok(Report {
        db: store_path(store),
        summary,
        measurements: store.count("measurements")?,
        learned,
    })
}

/// Seconds per measurement so far.
fn rate(spent: f64, measured: usize) -> f64 {
    spent / measured.max(1) as f64
}

/// How builds share the machine with timed runs: beside them on the
/// other cores when the runs have cores of their own.
fn build_mode(c: &Campaign) -> Result<ahead::Mode, CollectError> {
    let Some(timing) = c.protocol.cores else {
        return Ok(ahead::Mode::Batches);
    };
    let allowed = Cores::allowed()?;
    let outside = timing.without(&allowed);
    if !outside.is_empty() {
        return Err(CollectError::Cores(format!(
            "timing cores {outside} are not among the cores polytune may use here ({allowed})\n  help: pick timing cores from {allowed}"
        )));
    }
    if timing.len() < c.protocol.threads {
        return Err(CollectError::Cores(format!(
            "the timed runs use {} threads but the timing cores ({timing}) are {}: threads would share a core\n  help: give as many timing cores as threads",
            c.protocol.threads,
            timing.len()
        )));
    }
    let compile = allowed.without(&timing);
    if compile.is_empty() {
        return Err(CollectError::Cores(format!(
            "the timing cores ({timing}) are every core polytune may use: none is left for the compilers\n  help: leave at least one core out of the timing cores, or time without them (builds then run between timed runs)"
        )));
    }
    Ok(ahead::Mode::Overlap {
        compile: Some(compile),
    })
}

/// A kernel's plan: its file, its parsed source, the variants picked.
pub(crate) type Plan = (PathBuf, crate::frontend::SourceFile, Vec<Variant>);

/// A kernel's name: its file's stem.
pub(crate) fn kernel_name(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("kernel")
        .to_string()
}

/// The file of a store, for messages.
fn store_path(store: &Store) -> String {
    store.path().unwrap_or_else(|| "the store".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_while_the_pause_file_exists() {
        let dir = tempfile::tempdir().unwrap();
        let pause = dir.path().join("pause");
        let mut said = Vec::new();
        wait_while_paused(Some(&pause), &mut |e| said.push(format!("{e:?}"))).unwrap();
        assert!(said.is_empty(), "no file, no pause");
        std::fs::write(&pause, "").unwrap();
        let p = pause.clone();
        let remover = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            std::fs::remove_file(p).unwrap();
        });
        let ack = pause.with_extension("ack");
        let seen = std::thread::spawn(move || {
            (0..20).any(|_| {
                std::thread::sleep(std::time::Duration::from_millis(20));
                ack.exists()
            })
        });
        let t = Instant::now();
        wait_while_paused(Some(&pause), &mut |e| said.push(format!("{e:?}"))).unwrap();
        remover.join().unwrap();
        assert!(
            seen.join().unwrap(),
            "the acknowledgement appears while paused"
        );
        assert!(!pause.with_extension("ack").exists());
        assert!(t.elapsed().as_millis() >= 300);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(
            said[0].starts_with("Paused") && said[1] == "Resumed",
            "{said:?}"
        );
    }
}
