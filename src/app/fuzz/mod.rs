//! The differential fuzzer (`polytune fuzz`): random legal SCoPs as
//! complete C programs, each transformed under random configurations
//! through the same path as `optimize --config`, compiled with gcc and
//! clang, run at several parameter values and thread counts, and
//! compared with the untransformed program built by the same compiler.
//!
//! A program is legal by construction and by proof: the generator
//! ([`program`]) writes affine loop nests over its own syntax tree, and
//! the interpreter ([`interp`]), which follows C's rules for signed and
//! unsigned arithmetic, runs it at every chosen parameter set before it
//! is emitted; arrays are then sized (and subscripts shifted) so that
//! every access is in bounds, and a program with a signed overflow or too
//! long a run is drawn again. The interpreter's output is also the
//! expected output of the compiled original (a check of the fuzzer
//! itself, reported as `oracle`).
//!
//! With [`Options::alias`] the kernel takes its arrays as pointer
//! parameters and has no pragmas: it is transformed through detection
//! (`optimize --detect`), which versions it on a run-time check that the
//! arrays it writes do not overlap the others, and `main` calls it with
//! the arrays apart and then with some of them sharing storage
//! ([`overlap`]); every call's dump is compared with the original's.

mod check;
mod directive;
mod generate;
pub mod interp;
mod overlap;
pub mod program;

use crate::lab::compiler::{Compiler, Family};
use crate::lab::dump::{Dump, Tolerance};
use crate::lab::rng::SplitMix64;
pub use program::GenOptions;
pub use program::Program;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use check::{Ctx, ProgramResult};
pub use generate::{Generated, generate, pick_configs, uses_unsigned};

/// The seed of program `index` of a run seeded with `seed`.
pub(crate) fn program_seed(seed: u64, index: usize) -> u64 {
    SplitMix64::new(seed ^ (index as u64).wrapping_mul(0xA076_1D64_78BD_642F)).next_u64()
}

/// What the fuzzer cannot do at all (no compiler, no output directory).
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    #[error(transparent)]
    Compiler(#[from] crate::lab::compiler::CompilerError),
    #[error("cannot use {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid fuzz options: {0}")]
    Options(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> FuzzError + '_ {
    move |source| FuzzError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A variant text modifier for tests of the fuzzer itself (a deliberately
/// broken transformation must be reported).
pub(crate) type Tamper = fn(&Program, &str) -> String;

/// What a campaign reports as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `done` of `total` programs are through (every tenth, and the last).
    Programs { done: usize, total: usize },
    /// A finding was saved: what, where.
    Finding(String),
}

/// A listener to a campaign's [`Event`]s, called from its worker threads.
pub type Progress = std::sync::Arc<dyn Fn(Event) + Send + Sync>;

/// A fuzzing campaign.
#[derive(Clone)]
pub struct Options {
    pub seed: u64,
    /// Index of the first program (chunks of one long run).
    pub first: usize,
    pub programs: usize,
    /// Configurations per program (distinct, drawn from the whole space).
    pub configs: usize,
    /// Draw them from the extended space (`engine::extended`: free tile
    /// sizes, separate unroll factors, reductions, register tiles with
    /// and without packing) instead of the paper's.
    pub extended: bool,
    /// Diamond tiles in time (`tt=diamond`) added to every configuration
    /// drawn.
    pub diamond: bool,
    /// Parameter sets per program.
    pub params: usize,
    pub compilers: Vec<Family>,
    pub threads: Vec<usize>,
    pub cflags: Vec<String>,
    /// Findings go to `out/findings`, scratch files to `out/work`.
    pub out: PathBuf,
    pub jobs: usize,
    pub timeout: Duration,
    /// Keep the scratch directory of every program.
    pub keep_work: bool,
    /// Hears progress and findings as they come (the command line prints
    /// them); `None`: nothing is reported before the summary.
    pub progress: Option<Progress>,
    pub tamper: Option<Tamper>,
    pub generator: GenOptions,
    /// Transform by running this polytune binary (with
    /// [`Self::optimize_args`], killed after `engine_timeout`) instead of
    /// calling the library in this process (which cannot be stopped if it
    /// hangs).
    pub polytune: Option<PathBuf>,
    pub engine_timeout: Duration,
    /// The arguments with which polytune optimizes a file `prog` with a
    /// configuration `config` into `out`, its SCoPs found by detection
    /// (`detect`: the alias mode) or by their pragmas: the command line's
    /// words, for the binary above and for each finding's script.
    pub optimize_args: OptimizeArgs,
    /// The alias mode: arrays as pointer parameters, no pragmas (the
    /// SCoPs are detected), and the kernel also called with arrays that
    /// overlap, compared with the original so called. Needs the `detect`
    /// feature and [`Self::polytune`].
    pub alias: bool,
    /// The directive mode (`directive.rs`): each program carries a user's
    /// OpenMP directive on one loop of its SCoP, correct or not; one the
    /// interpreter shows wrong must never be taken.
    pub directives: bool,
}

/// The words of one `optimize` run: `(prog, config, out, detect)`.
pub type OptimizeArgs = fn(prog: &str, config: &str, out: &str, detect: bool) -> Vec<String>;

impl Options {
    /// The defaults, with the command line's `optimize_args`.
    pub fn new(optimize_args: OptimizeArgs) -> Self {
        Options {
            seed: 1,
            first: 0,
            programs: 50,
            configs: 4,
            extended: false,
            diamond: false,
            params: 3,
            compilers: vec![Family::Gcc, Family::Clang],
            threads: vec![1, 2],
            cflags: vec!["-O2".into()],
            out: PathBuf::from("polytune-fuzz"),
            jobs: 2,
            timeout: Duration::from_secs(20),
            keep_work: false,
            progress: None,
            tamper: None,
            generator: GenOptions::default(),
            polytune: None,
            engine_timeout: Duration::from_secs(60),
            optimize_args,
            alias: false,
            directives: false,
        }
    }
}

/// Counts of a campaign. A pair is one program under one configuration;
/// it is `wrong`, `crashed`, ... if any of its builds or runs was.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Counts {
    pub programs: usize,
    /// Programs the generator could not make legal (drawn again 100 times).
    pub gave_up: usize,
    /// Generated programs the front end rejected.
    pub rejected: usize,
    pub pairs: usize,
    pub transformed: usize,
    /// Pairs the engine left unchanged with a reason.
    pub unchanged: usize,
    pub wrong: usize,
    pub crashed: usize,
    pub compile_errors: usize,
    pub engine_errors: usize,
    /// Compiled originals whose output differs from the interpreter's.
    pub oracle: usize,
    /// Originals that did not compile or run (a fuzzer bug).
    pub original_failed: usize,
    /// Variant runs compared.
    pub runs: usize,
    pub wrong_runs: usize,
    /// The alias mode: the kernel's calls with overlapping arrays (beside
    /// its call with them apart, one per program).
    pub overlap_calls: usize,
    /// Wrong runs whose first difference is in an overlapping call.
    pub wrong_overlap_runs: usize,
    /// The alias mode: programs in whose kernel detection found a region,
    /// the regions it found there and how many of them it versioned on a
    /// run-time alias check.
    pub detected: usize,
    pub regions: usize,
    pub versioned: usize,
    /// The directive mode: programs with a directive, those whose
    /// directive the reversed run shows wrong, the pairs that took a
    /// correct one (transformed) and those that took a wrong one (each a
    /// finding).
    pub directives: usize,
    pub wrong_directives: usize,
    pub directive_taken: usize,
    pub wrong_directive_taken: usize,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.programs += o.programs;
        self.gave_up += o.gave_up;
        self.rejected += o.rejected;
        self.pairs += o.pairs;
        self.transformed += o.transformed;
        self.unchanged += o.unchanged;
        self.wrong += o.wrong;
        self.crashed += o.crashed;
        self.compile_errors += o.compile_errors;
        self.engine_errors += o.engine_errors;
        self.oracle += o.oracle;
        self.original_failed += o.original_failed;
        self.runs += o.runs;
        self.wrong_runs += o.wrong_runs;
        self.overlap_calls += o.overlap_calls;
        self.wrong_overlap_runs += o.wrong_overlap_runs;
        self.directives += o.directives;
        self.wrong_directives += o.wrong_directives;
        self.directive_taken += o.directive_taken;
        self.wrong_directive_taken += o.wrong_directive_taken;
        self.detected += o.detected;
        self.regions += o.regions;
        self.versioned += o.versioned;
    }

    /// Anything that is a finding.
    pub fn findings(&self) -> usize {
        self.rejected
            + self.wrong
            + self.crashed
            + self.compile_errors
            + self.engine_errors
            + self.oracle
            + self.original_failed
    }
}

/// One finding, saved with a reproducer.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// wrong, crash, timeout, compile-error, engine-error, engine-panic,
    /// frontend-rejected, oracle, original-failed.
    pub kind: String,
    pub program: usize,
    pub config: Option<String>,
    pub compiler: Option<Family>,
    pub detail: String,
    /// Features of the program and run that known bugs need (unsigned
    /// arithmetic in the SCoP, a parameter <= 0), to triage findings.
    pub suspects: Vec<String>,
    pub dir: PathBuf,
}

/// The result of a campaign.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub seed: u64,
    pub first: usize,
    pub configs: usize,
    pub params: usize,
    pub compilers: Vec<Family>,
    pub threads: Vec<usize>,
    pub counts: Counts,
    /// Why pairs were left unchanged, with how often.
    pub unchanged_reasons: BTreeMap<String, usize>,
    /// The alias mode.
    pub alias: bool,
    /// The directive mode.
    pub directives: bool,
    /// The alias mode: why detection did not take a loop nest of a
    /// kernel, with in how many programs.
    pub rejected_nests: BTreeMap<String, usize>,
    pub findings: Vec<Finding>,
}

impl Summary {
    /// Findings grouped by kind and suspects: (label, count, first dir).
    pub fn classes(&self) -> Vec<(String, usize, PathBuf)> {
        let mut m: BTreeMap<String, (usize, PathBuf)> = BTreeMap::new();
        for f in &self.findings {
            let label = if f.suspects.is_empty() {
                format!("{} (no known cause)", f.kind)
            } else {
                format!("{} [{}]", f.kind, f.suspects.join(", "))
            };
            m.entry(label).or_insert((0, f.dir.clone())).0 += 1;
        }
        m.into_iter().map(|(k, (n, d))| (k, n, d)).collect()
    }

    /// The final line.
    pub fn line(&self) -> String {
        let c = &self.counts;
        let alias = if self.alias {
            format!(
                "; alias mode: {} kernel calls with overlapping arrays ({} wrong runs there), {} regions detected in {} of the kernels, {} of them versioned on aliasing",
                c.overlap_calls, c.wrong_overlap_runs, c.regions, c.detected, c.versioned
            )
        } else {
            String::new()
        };
        let directives = if self.directives {
            format!(
                "; directive mode: {} programs with a directive, {} of them wrong (the reversed loop prints otherwise), {} pairs took a correct one, {} took a wrong one",
                c.directives, c.wrong_directives, c.directive_taken, c.wrong_directive_taken
            )
        } else {
            String::new()
        };
        format!(
            "fuzz: {} program×configuration pairs ({} programs x {} configurations; x{} compilers x{} thread counts x{} parameter sets = {} runs), {} wrong, {} crashed, {} compile errors, {} engine errors, {} unchanged, {} rejected by the front end, {} oracle mismatches, {} originals failed, {} programs given up{alias}{directives}",
            c.pairs,
            c.programs,
            self.configs,
            self.compilers.len(),
            self.threads.len(),
            self.params,
            c.runs,
            c.wrong,
            c.crashed,
            c.compile_errors,
            c.engine_errors,
            c.unchanged,
            c.rejected,
            c.oracle,
            c.original_failed,
            c.gave_up
        )
    }
}

/// Compares a variant's output with the reference's: integers exactly,
/// doubles within 1e-9 relative.
pub fn compare_outputs(expected: &str, actual: &str) -> Result<(), String> {
    let e = Dump::parse(expected).map_err(|e| format!("reference output: {e}"))?;
    let a = Dump::parse(actual).map_err(|e| format!("variant output: {e}"))?;
    e.compare(
        &a,
        Tolerance {
            rtol: 1e-9,
            atol: 1e-12,
            ..Tolerance::default()
        },
    )
    .map_err(|m| m.to_string())
}

/// Runs a campaign.
pub fn run(opts: &Options) -> Result<Summary, FuzzError> {
    if opts.threads.is_empty() || opts.compilers.is_empty() || opts.params == 0 {
        return Err(FuzzError::Options(
            "need at least one compiler, one thread count and one parameter set".into(),
        ));
    }
    if opts.alias && opts.directives {
        return Err(FuzzError::Options(
            "the alias mode and the directive mode are separate campaigns".into(),
        ));
    }
    if opts.alias && (!cfg!(feature = "detect") || opts.polytune.is_none()) {
        return Err(FuzzError::Options(
            "the alias mode transforms through detection, in a polytune binary built with the `detect` feature".into(),
        ));
    }
    let compilers = opts
        .compilers
        .iter()
        .map(|&c| Compiler::detect(c, Some(opts.cflags.clone())))
        .collect::<Result<Vec<_>, _>>()?;
    let work = opts.out.join("work");
    std::fs::create_dir_all(&work).map_err(io_err(&work))?;
    let ctx = Ctx { opts, compilers };
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, ProgramResult)>> = Mutex::new(Vec::new());
    let done = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.max(1) {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    if k >= opts.programs {
                        break;
                    }
                    let r = ctx.program(opts.first + k);
                    let d = done.fetch_add(1, Ordering::SeqCst) + 1;
                    if let Some(p) = &opts.progress
                        && (d.is_multiple_of(10) || d == opts.programs)
                    {
                        p(Event::Programs {
                            done: d,
                            total: opts.programs,
                        });
                    }
                    results
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((opts.first + k, r));
                }
            });
        }
    });
    if !opts.keep_work {
        let _ = std::fs::remove_dir(&work);
    }
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(k, _)| *k);
    let mut counts = Counts::default();
    let mut unchanged_reasons = BTreeMap::new();
    let mut rejected_nests = BTreeMap::new();
    let mut findings = Vec::new();
    for (_, r) in results {
        counts.add(&r.counts);
        for (k, v) in r.unchanged {
            *unchanged_reasons.entry(k).or_default() += v;
        }
        for k in r.rejected_nests {
            *rejected_nests.entry(k).or_default() += 1;
        }
        findings.extend(r.findings);
    }
    Ok(Summary {
        seed: opts.seed,
        first: opts.first,
        configs: opts.configs,
        params: opts.params,
        compilers: opts.compilers.clone(),
        threads: opts.threads.clone(),
        counts,
        unchanged_reasons,
        alias: opts.alias,
        directives: opts.directives,
        rejected_nests,
        findings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_is_exact_for_integers_and_tolerant_for_doubles() {
        let a = "begin A 2\n1\n2\nend A\n";
        assert!(compare_outputs(a, a).is_ok());
        assert!(compare_outputs(a, "begin A 2\n1\n3\nend A\n").is_err());
        let d = |x: f64| format!("begin B 1 bits\n{:016x}\nend B\n", x.to_bits());
        assert!(compare_outputs(&d(1.0), &d(1.0 + 1e-14)).is_ok());
        assert!(compare_outputs(&d(1.0), &d(1.0 + 1e-6)).is_err());
        assert!(compare_outputs(a, "").is_err());
    }
}
