//! Program characterization (paper section 4.1): event counts of the
//! *original* program normalized by its instruction count.
//!
//! The development machines are KVM guests without hardware counters, so
//! the default back end simulates them with valgrind's cache and branch
//! simulator (cachegrind's, run through callgrind so that only the kernel
//! function is counted), with an explicitly fixed cache geometry and a
//! fixed instruction set: the counts are then identical on every machine
//! and from run to run, which also makes them testable.
//!
//! Why one file: the valgrind back end and the PAPI one (`mod papi`, about
//! 350 lines with its reason to be in C) produce the same features through
//! the same normalization and are read together; its tests make up 60
//! lines.

use super::compiler::Compiler;
use super::confine::{self, Ending, Limits, Outcome};
use serde::Serialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

mod backend;
pub use backend::Backend;

/// The simulated caches: 32 KiB 8-way L1 instruction and data caches and
/// an 8 MiB 16-way last level, 64-byte lines.
pub(crate) const CACHE_GEOMETRY: [&str; 3] =
    ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"];

/// Flags of the characterized build (not the measured builds' flags).
/// `-fno-inline` keeps the `kernel_*` function out of `main`, so that
/// only the kernel is counted.
pub(crate) const PORTABLE_FLAGS: [&str; 3] = ["-O3", "-march=x86-64-v3", "-fno-inline"];

/// Named feature values, in a fixed order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Features {
    pub backend: Backend,
    pub values: Vec<(String, f64)>,
    /// What part of the run was counted.
    pub counted: Counted,
}

/// What part of a program's run its features count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "part")]
pub enum Counted {
    /// The counted code's whole execution (the regions' first executions,
    /// or the corpus kernel): `instructions` in all.
    Whole { instructions: u64 },
    /// A prefix: the first `instructions` inside the regions, at least
    /// `budget` of them; the run was stopped there ([`Bound`]).
    Prefix { instructions: u64, budget: u64 },
}

impl std::fmt::Display for Counted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Counted::Whole { instructions } => write!(
                f,
                "the regions' first executions, whole ({} instructions)",
                show_count(instructions)
            ),
            Counted::Prefix {
                instructions,
                budget,
            } => write!(
                f,
                "a prefix: the first {} instructions inside the regions (the bound is {}), the run stopped there",
                show_count(instructions),
                show_count(budget)
            ),
        }
    }
}

/// A count in millions (or thousands) for people.
fn show_count(n: u64) -> String {
    match n {
        n if n >= 10_000_000 => format!("{}M", n / 1_000_000),
        n if n >= 1_000_000 => format!("{:.1}M", n as f64 / 1e6),
        n if n >= 10_000 => format!("{}k", n / 1000),
        n => n.to_string(),
    }
}

/// The bound of a characterization (issue 36): callgrind's cache
/// simulation runs a program 50 to 300 times slower than native, so a
/// program that runs its kernel for seconds would take minutes to hours.
/// The features are rates per instruction, and a kernel's loops repeat the
/// same access pattern over and over: a prefix of the regions' execution
/// gives them. callgrind dumps its counts every `dump_every_bb` basic
/// blocks (`--dump-every-bb`, each dump the counts since the last); the
/// counts are the dumps, in order, up to the first whose running total
/// of instructions inside the regions reaches `instructions`. The program
/// is stopped as soon as that dump is written. Dumps fall at fixed basic
/// block counts of a deterministic simulation, so the same program gives
/// the same features on every run, however fast the machine is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Bound {
    pub instructions: u64,
    pub dump_every_bb: u64,
}

impl Default for Bound {
    /// 2^25 instructions (34M), dumps every 500k basic blocks (a few
    /// million instructions). On the AMD EPYC guest (2026-11-28,
    /// `scripts/bench_characterize.py --size large`) every corpus kernel
    /// at LARGE is characterized within max(3x its native run, 5 s) with
    /// it; with 2^26 gemver took 6.8 s against its 6.0 s (its rank-2
    /// update misses the simulated caches on every access, and its input
    /// takes 3 s to make under valgrind). Every corpus kernel at the
    /// dataset's size (SMALL) is counted whole.
    fn default() -> Bound {
        Bound {
            instructions: 1 << 25,
            dump_every_bb: 500_000,
        }
    }
}

/// Why a program could not be characterized.
#[derive(Debug, thiserror::Error)]
pub enum CharacterizeError {
    #[error("compiling {path} failed:\n{stderr}")]
    Compile { path: String, stderr: String },
    #[error("valgrind is not installed (run scripts/setup.sh): {0}")]
    NoValgrind(std::io::Error),
    #[error("the program failed under cachegrind: {0}")]
    Run(String),
    #[error(
        "the program did not finish within {seconds} s under {tool} (the time limit): it hangs, or needs more time"
    )]
    Timeout { tool: &'static str, seconds: u64 },
    #[error(
        "the program reached none of its SCoP regions within {seconds} s under valgrind (the time limit): what it does before its first region (reading or making its input) runs 5-10 times slower there than natively, or it hangs\n  help: raise the time limit, or run it on a smaller input (its arguments)"
    )]
    NoRegion { seconds: u64 },
    #[error(
        "the program's regions were counted for {counted} of the bound's {bound} instructions within {seconds} s under callgrind (the time limit)\n  help: raise the time limit, or count fewer instructions (the bound)"
    )]
    Slow {
        counted: u64,
        bound: u64,
        seconds: u64,
    },
    #[error(
        "the program ended without running any of its SCoP regions: there is nothing to count\n  help: run it with arguments that reach the kernel"
    )]
    NeverRan,
    #[error("unreadable cachegrind output: {0}")]
    Parse(String),
    #[error(
        "PAPI cannot count on this machine: {0}\n  help: count with the simulator instead (the cachegrind back end, the default, or auto), and tune with models trained on its features (the shipped ones are)"
    )]
    Papi(String),
}

/// Parses the `events:` and `summary:` lines of a cachegrind output file.
pub(crate) fn parse_cachegrind(text: &str) -> Result<Vec<(String, u64)>, CharacterizeError> {
    let events: Vec<&str> = text
        .lines()
        .find_map(|l| l.strip_prefix("events:"))
        .ok_or_else(|| CharacterizeError::Parse("no `events:` line".into()))?
        .split_whitespace()
        .collect();
    let mut summary: Vec<u64> = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })
        .ok_or_else(|| CharacterizeError::Parse("no `summary:` line".into()))?
        .split_whitespace()
        .map(|v| {
            v.parse()
                .map_err(|_| CharacterizeError::Parse(format!("bad count `{v}`")))
        })
        .collect::<Result<_, _>>()?;
    // Trailing zero counts may be omitted.
    if summary.len() > events.len() {
        return Err(CharacterizeError::Parse("more counts than events".into()));
    }
    summary.resize(events.len(), 0);
    Ok(events.into_iter().map(String::from).zip(summary).collect())
}

/// Cachegrind's counts as features named after PAPI's presets where one
/// corresponds; every count but the instruction total is per instruction.
pub(crate) fn features_from_counts(
    counts: &[(String, u64)],
) -> Result<Features, CharacterizeError> {
    let get = |n: &str| {
        counts
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| *v as f64)
            .ok_or_else(|| {
                CharacterizeError::Parse(format!(
                    "event {n} missing (run with --cache-sim=yes --branch-sim=yes)"
                ))
            })
    };
    let ir = get("Ir")?;
    if ir <= 0.0 {
        return Err(CharacterizeError::Parse("no instruction executed".into()));
    }
    let per = |x: f64| x / ir;
    let values = vec![
        ("PAPI_TOT_INS".to_string(), ir),
        ("PAPI_LD_INS".to_string(), per(get("Dr")?)),
        ("PAPI_SR_INS".to_string(), per(get("Dw")?)),
        ("PAPI_L1_ICM".to_string(), per(get("I1mr")?)),
        ("PAPI_L1_DCM".to_string(), per(get("D1mr")? + get("D1mw")?)),
        ("PAPI_L1_LDM".to_string(), per(get("D1mr")?)),
        ("PAPI_L1_STM".to_string(), per(get("D1mw")?)),
        (
            "PAPI_L3_TCM".to_string(),
            per(get("ILmr")? + get("DLmr")? + get("DLmw")?),
        ),
        ("PAPI_L3_LDM".to_string(), per(get("DLmr")?)),
        ("PAPI_L3_ICM".to_string(), per(get("ILmr")?)),
        ("CG_LL_STM".to_string(), per(get("DLmw")?)),
        ("PAPI_BR_CN".to_string(), per(get("Bc")?)),
        ("PAPI_BR_MSP".to_string(), per(get("Bcm")? + get("Bim")?)),
        ("CG_BR_IND".to_string(), per(get("Bi")?)),
        ("CG_BR_IND_MSP".to_string(), per(get("Bim")?)),
    ];
    Ok(Features {
        backend: Backend::Cachegrind,
        values,
        counted: Counted::Whole {
            instructions: ir as u64,
        },
    })
}

/// Compiles `src` (no OpenMP) and characterizes one run of it, confined
/// by `limits` (the deadline covers valgrind's whole run).
pub fn characterize(
    src: &Path,
    compiler: &Compiler,
    size: crate::lab::size::Size,
    include: &[PathBuf],
    backend: Backend,
    workdir: &Path,
    limits: &Limits,
) -> Result<Features, CharacterizeError> {
    if backend == Backend::Papi {
        return papi::characterize(src, compiler, size, include, workdir, limits);
    }
    // A fixed, portable instruction set: valgrind cannot decode AVX-512,
    // and the features must not depend on the host's -march=native.
    let portable = Compiler {
        flags: PORTABLE_FLAGS.iter().map(|s| s.to_string()).collect(),
        ..compiler.clone()
    };
    let exe = workdir.join("characterized");
    let c = portable.compile(src, &exe, size, include, false);
    if !c.ok {
        return Err(CharacterizeError::Compile {
            path: src.display().to_string(),
            stderr: c.stderr,
        });
    }
    // Count the kernel only (the corpus names it kernel_*); a program
    // without such a function is counted whole.
    let counts = run_cachegrind(&exe, workdir, Some("kernel_*"), limits)?;
    let counts = match counts.iter().find(|(k, _)| k == "Ir") {
        Some((_, 0)) | None => run_cachegrind(&exe, workdir, None, limits)?,
        _ => counts,
    };
    features_from_counts(&counts)
}

/// Executions of the SCoP regions counted per region before the
/// characterized run stops (`POLYTUNE_STOP_AFTER`): the features are
/// per instruction, so one execution is representative, and a program
/// that runs its kernel a thousand times is not simulated a thousand
/// times (a Linpack-style program took 741 s before this bound).
pub(crate) const EXECUTIONS_PER_REGION: usize = 1;

/// Characterizes an instrumented build (`engine::instrument`): counting
/// is switched on inside the SCoP regions only (callgrind's client
/// requests, `-DPOLYTUNE_CALLGRIND`), whatever the program's functions
/// are called, and the run stops after [`EXECUTIONS_PER_REGION`]
/// executions of each of its `regions`, or once `bound` instructions
/// inside them were counted. `progress` hears the instructions counted so
/// far, as the dumps come.
pub fn characterize_instrumented(
    src: &Path,
    recipe: &super::build::Recipe,
    regions: usize,
    workdir: &Path,
    limits: &Limits,
    bound: &Bound,
    progress: &mut dyn FnMut(u64),
) -> Result<Features, CharacterizeError> {
    let portable = super::build::Recipe {
        compiler: Compiler {
            flags: PORTABLE_FLAGS.iter().map(|s| s.to_string()).collect(),
            ..recipe.compiler.clone()
        },
        ..recipe.clone()
    };
    let exe = workdir.join("characterized");
    let c = portable.build(src, &exe, false, &["-DPOLYTUNE_CALLGRIND"]);
    if !c.ok {
        return Err(CharacterizeError::Compile {
            path: src.display().to_string(),
            stderr: c.stderr,
        });
    }
    let out_file = workdir.join("callgrind.out");
    let mut tool: Vec<String> = vec!["valgrind".into()];
    tool.extend(
        callgrind_args(&out_file)
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned()),
    );
    tool.push("--collect-atstart=no".into());
    // The runtime starts the instrumentation at the first region.
    tool.push("--instr-atstart=no".into());
    tool.push(format!("--dump-every-bb={}", bound.dump_every_bb));
    let stop = (regions.max(1) * EXECUTIONS_PER_REGION).to_string();
    let env = [
        ("OMP_NUM_THREADS", "1"),
        ("POLYTUNE_STOP_AFTER", stop.as_str()),
    ];
    let (program, args): (PathBuf, Vec<String>) = match &recipe.run {
        Some(_) => {
            let (p, a) = recipe.command(&exe);
            let line = a[1].replacen(
                &shell_words::quote(&exe.to_string_lossy()).into_owned(),
                &format!(
                    "{} {}",
                    shell_words::join(&tool),
                    shell_words::quote(&exe.to_string_lossy())
                ),
                1,
            );
            (p, vec!["-c".into(), line])
        }
        None => {
            let mut a: Vec<String> = tool[1..].to_vec();
            a.push(exe.to_string_lossy().into_owned());
            a.extend(recipe.run_args.iter().cloned());
            (PathBuf::from("valgrind"), a)
        }
    };
    let mut dumps = Dumps::new(&out_file, bound.instructions);
    let out = confine::run_watched(&program, &args, &env, limits, &mut || {
        let reached = dumps.read();
        progress(dumps.instructions);
        reached
    })
    .map_err(CharacterizeError::NoValgrind)?;
    if out.ending == Ending::Stopped {
        return dumps.features();
    }
    if out.ending == Ending::Timeout {
        let seconds = limits.timeout.as_secs();
        dumps.read();
        return Err(match dumps.instructions {
            0 => CharacterizeError::NoRegion { seconds },
            counted => CharacterizeError::Slow {
                counted,
                bound: bound.instructions,
                seconds,
            },
        });
    }
    // Finished (or stopped itself after its regions' executions): the
    // same rule over every dump, then the last part if none reached the
    // bound — whatever the watch saw before the end.
    if dumps.read() {
        return dumps.features();
    }
    let last = callgrind_counts(out, &out_file, limits)?;
    dumps.add(&last)?;
    if dumps.instructions == 0 {
        return Err(CharacterizeError::NeverRan);
    }
    features_from_counts(&dumps.counts)
}

/// Characterizes an instrumented build by the hardware counters, through
/// PAPI, natively: each of its `regions` counted over its first
/// [`EXECUTIONS_PER_REGION`] executions, whole. Refused with PAPI's reason
/// where the machine has no counters (these KVM guests): see
/// [`pmu_available`].
pub fn characterize_instrumented_by_pmu(
    src: &Path,
    recipe: &super::build::Recipe,
    regions: usize,
    workdir: &Path,
    limits: &Limits,
) -> Result<Features, CharacterizeError> {
    papi::characterize_instrumented(src, recipe, regions, workdir, limits)
}

/// Whether this machine's hardware counters can be read through PAPI
/// (a probe built with `compiler` and run in `workdir`); if not, PAPI's
/// reason.
pub fn pmu_available(
    compiler: &Compiler,
    workdir: &Path,
    limits: &Limits,
) -> Result<(), CharacterizeError> {
    papi::available(compiler, workdir, limits)
}

/// callgrind's numbered dumps (`callgrind.out.1`, `.2`, …) read in order,
/// up to the first whose running total of instructions reaches the bound.
struct Dumps {
    base: PathBuf,
    bound: u64,
    next: usize,
    counts: Vec<(String, u64)>,
    instructions: u64,
    reached: bool,
}

impl Dumps {
    fn new(base: &Path, bound: u64) -> Dumps {
        Dumps {
            base: base.to_path_buf(),
            bound,
            next: 1,
            counts: Vec::new(),
            instructions: 0,
            reached: false,
        }
    }

    /// Reads the dumps written completely since the last call; whether
    /// the bound is reached.
    fn read(&mut self) -> bool {
        while !self.reached {
            let path = PathBuf::from(format!("{}.{}", self.base.display(), self.next));
            let Ok(text) = std::fs::read_to_string(&path) else {
                break;
            };
            // Written whole only once its closing `totals:` line is there.
            let complete = text
                .trim_end()
                .lines()
                .last()
                .is_some_and(|l| l.starts_with("totals:"));
            let Ok(counts) = parse_cachegrind(&text) else {
                break;
            };
            if !complete || self.add(&counts).is_err() {
                break;
            }
            self.next += 1;
            self.reached = self.instructions >= self.bound;
        }
        self.reached
    }

    fn add(&mut self, counts: &[(String, u64)]) -> Result<(), CharacterizeError> {
        if self.counts.is_empty() {
            self.counts = counts.to_vec();
        } else {
            if self.counts.len() != counts.len()
                || self.counts.iter().zip(counts).any(|(a, b)| a.0 != b.0)
            {
                return Err(CharacterizeError::Parse(
                    "callgrind's dumps count different events".into(),
                ));
            }
            for (a, b) in self.counts.iter_mut().zip(counts) {
                a.1 += b.1;
            }
        }
        self.instructions = self
            .counts
            .iter()
            .find(|(k, _)| k == "Ir")
            .map_or(0, |(_, v)| *v);
        Ok(())
    }

    /// The features of the prefix read.
    fn features(&self) -> Result<Features, CharacterizeError> {
        let mut f = features_from_counts(&self.counts)?;
        f.counted = Counted::Prefix {
            instructions: self.instructions,
            budget: self.bound,
        };
        Ok(f)
    }
}

/// valgrind's arguments for a callgrind run with the cache and branch
/// simulation, writing to `out_file`.
fn callgrind_args(out_file: &Path) -> Vec<OsString> {
    // No gdbserver: it leaves FIFOs in the temporary directory when
    // valgrind is killed.
    let mut args: Vec<OsString> = [
        "--tool=callgrind",
        "--vgdb=no",
        "--cache-sim=yes",
        "--branch-sim=yes",
    ]
    .into_iter()
    .chain(CACHE_GEOMETRY)
    .map(OsString::from)
    .collect();
    args.push(format!("--callgrind-out-file={}", out_file.display()).into());
    args
}

fn run_cachegrind(
    exe: &Path,
    workdir: &Path,
    only: Option<&str>,
    limits: &Limits,
) -> Result<Vec<(String, u64)>, CharacterizeError> {
    // callgrind runs valgrind's cache and branch simulation like
    // cachegrind, and can restrict counting to one function.
    let out_file = workdir.join("callgrind.out");
    let mut args = callgrind_args(&out_file);
    if let Some(f) = only {
        args.push(format!("--toggle-collect={f}").into());
    }
    args.push(exe.into());
    let out = confine::run(
        Path::new("valgrind"),
        &args,
        &[("OMP_NUM_THREADS", "1")],
        limits,
    )
    .map_err(CharacterizeError::NoValgrind)?;
    callgrind_counts(out, &out_file, limits)
}

/// The counts of a finished callgrind run that wrote `out_file`, or why
/// it failed.
fn callgrind_counts(
    out: Outcome,
    out_file: &Path,
    limits: &Limits,
) -> Result<Vec<(String, u64)>, CharacterizeError> {
    check_ending(&out, "callgrind", limits)?;
    if out.ending != Ending::Code(0) {
        let err = out.stderr.into_text();
        let why = err
            .lines()
            .find(|l| l.contains("Unrecognised instruction") || l.contains("terminating"))
            .unwrap_or_else(|| err.lines().last().unwrap_or(""));
        return Err(CharacterizeError::Run(why.to_string()));
    }
    let text =
        std::fs::read_to_string(out_file).map_err(|e| CharacterizeError::Parse(e.to_string()))?;
    parse_cachegrind(&text)
}

/// The errors of a confined run besides its exit code: the deadline, a
/// signal, processes left behind.
fn check_ending(
    out: &confine::Outcome,
    tool: &'static str,
    limits: &Limits,
) -> Result<(), CharacterizeError> {
    match out.ending {
        Ending::Timeout => Err(CharacterizeError::Timeout {
            tool,
            seconds: limits.timeout.as_secs(),
        }),
        Ending::Signal(s) => Err(CharacterizeError::Run(format!(
            "killed by signal {s}{}",
            match limits.memory {
                Some(m) => format!(
                    " (its address space was limited to {}, the memory limit)",
                    confine::show_bytes(m)
                ),
                None => String::new(),
            }
        ))),
        _ if out.strays > 0 => Err(CharacterizeError::Run(format!(
            "it left {} process(es) running after it exited (polytune killed them)",
            out.strays
        ))),
        _ if !out.output_complete => Err(CharacterizeError::Run(
            "its output stayed open after it exited".into(),
        )),
        _ => Ok(()),
    }
}

/// Hardware counters through PAPI, counted inside the program: the
/// instrumented build's runtime (`engine::instrument`, `-DPOLYTUNE_RT_PAPI
/// -lpapi`) starts and stops PAPI's preset events around each execution of
/// the SCoP regions, natively; the corpus header (`polytune_bench.h`,
/// `-DPOLYTUNE_PAPI`) does the same around its kernel. A small C probe, built and run like the
/// counted program, first asks PAPI whether this machine can count at all.
///
/// Why in C and not through `papi-sys` (the design card's crate): counters
/// opened by polytune's own process could only follow the child whole
/// (`PAPI_attach`), its input's setup and output included, not the regions;
/// and `papi-sys` 0.1.1 does not build against Debian's PAPI 7.0
/// (libpapi-dev 7.0.0-2, 2026-11-28): its bindings name a type PAPI 7 no
/// longer declares, `error[E0425]: cannot find type `vptr_t` in this
/// scope` (10 errors in its generated bindings.rs). No FFI in Rust either
/// way: `unsafe` stays in the isl and libclang doors.
mod papi {
    use super::*;

    /// Initializes PAPI, looks up `PAPI_TOT_INS` and counts it once; on
    /// failure prints which step failed and PAPI's reason, one
    /// `polytune-papi-probe:` line on stdout.
    const PROBE: &str = r#"#include <papi.h>
#include <stdio.h>
static const char *why(int rc)
{
  const char *s = PAPI_strerror(rc);
  return s ? s : "unknown PAPI error";
}
int main(void)
{
  int set = PAPI_NULL;
  long long count;
  int rc = PAPI_library_init(PAPI_VER_CURRENT);
  if (rc != PAPI_VER_CURRENT) {
    printf("polytune-papi-probe: init %s\n", why(rc));
    return 1;
  }
  rc = PAPI_query_named_event("PAPI_TOT_INS");
  if (rc != PAPI_OK) {
    printf("polytune-papi-probe: query %s\n", why(rc));
    return 1;
  }
  /* An event can exist in PAPI's tables and still not be countable (a
     KVM guest without a virtual PMU): add it, start and stop. */
  rc = PAPI_create_eventset(&set);
  if (rc == PAPI_OK)
    rc = PAPI_add_named_event(set, "PAPI_TOT_INS");
  if (rc == PAPI_OK)
    rc = PAPI_start(set);
  if (rc == PAPI_OK)
    rc = PAPI_stop(set, &count);
  if (rc != PAPI_OK) {
    printf("polytune-papi-probe: count %s\n", why(rc));
    return 1;
  }
  return 0;
}
"#;

    /// Whether PAPI can count instructions here: builds the probe in
    /// `workdir` with `compiler` and runs it within `limits`.
    pub(crate) fn available(
        compiler: &Compiler,
        workdir: &Path,
        limits: &Limits,
    ) -> Result<(), CharacterizeError> {
        let src = workdir.join("papi_probe.c");
        std::fs::write(&src, PROBE).map_err(|e| CharacterizeError::Run(e.to_string()))?;
        let exe = workdir.join("papi_probe");
        let c = compiler.compile_with(
            &src,
            &exe,
            crate::lab::size::Size::Small,
            &[],
            false,
            &["-lpapi"],
        );
        if !c.ok {
            return Err(CharacterizeError::Papi(format!(
                "a program using PAPI does not build (is libpapi-dev installed?):\n{}",
                c.stderr
            )));
        }
        let out = confine::run(&exe, std::iter::empty::<&str>(), &[], limits)
            .map_err(|e| CharacterizeError::Run(e.to_string()))?;
        check_ending(&out, "the PAPI probe", limits)?;
        let ok = out.ending == Ending::Code(0);
        let text = out.stdout.into_text();
        match probe_failure(&text) {
            Some(e) => Err(e),
            None if ok => Ok(()),
            None => Err(CharacterizeError::Papi(format!(
                "the PAPI probe failed: {}",
                text.trim()
            ))),
        }
    }

    /// The error a probe's output reports, if any.
    fn probe_failure(stdout: &str) -> Option<CharacterizeError> {
        let line = stdout
            .lines()
            .find_map(|l| l.strip_prefix("polytune-papi-probe: "))?;
        let (step, msg) = line.split_once(' ').unwrap_or((line, ""));
        Some(CharacterizeError::Papi(match step {
            "init" => format!("PAPI_library_init failed: {msg}"),
            "query" => format!("PAPI_TOT_INS does not exist here ({msg}): no hardware counters"),
            "count" => format!("PAPI_TOT_INS cannot be counted here ({msg}): no PMU"),
            _ => format!("the PAPI probe failed: {line}"),
        }))
    }

    /// Raw counts (instructions, then events) as features: every count
    /// but the instruction total per instruction.
    fn features(counts: &[(String, f64)], skipped: &str) -> Result<Features, CharacterizeError> {
        let Some(&(_, ins)) = counts.iter().find(|(k, _)| k == "PAPI_TOT_INS") else {
            return Err(CharacterizeError::Papi(format!(
                "PAPI_TOT_INS cannot be counted: {}",
                if skipped.is_empty() {
                    "not counted"
                } else {
                    skipped
                }
            )));
        };
        if ins <= 0.0 {
            return Err(CharacterizeError::NeverRan);
        }
        let values = counts
            .iter()
            .map(|(k, v)| (k.clone(), if k == "PAPI_TOT_INS" { *v } else { v / ins }))
            .collect();
        Ok(Features {
            backend: Backend::Papi,
            values,
            counted: Counted::Whole {
                instructions: ins as u64,
            },
        })
    }

    /// The counts in the instrumented runtime's counter file (`counter`,
    /// `skipped`, `error` lines, then `done`).
    pub(super) fn parse_counters(text: &str) -> Result<Features, CharacterizeError> {
        let mut counts = Vec::new();
        let mut skipped = String::new();
        let mut done = false;
        for line in text.lines() {
            let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
            match kind {
                "counter" => {
                    let (name, value) = rest.split_once(' ').ok_or_else(|| {
                        CharacterizeError::Parse(format!("bad counter line `{line}`"))
                    })?;
                    let value: f64 = value
                        .trim()
                        .parse()
                        .map_err(|_| CharacterizeError::Parse(format!("bad count in `{line}`")))?;
                    counts.push((name.to_string(), value));
                }
                "skipped" => {
                    if let Some(why) = rest.strip_prefix("PAPI_TOT_INS ") {
                        skipped = why.trim().to_string();
                    }
                }
                "error" => {
                    let (step, why) = rest.split_once(' ').unwrap_or((rest, ""));
                    return Err(CharacterizeError::Papi(format!("{step} failed: {why}")));
                }
                "done" => done = true,
                _ => {}
            }
        }
        if !done {
            return Err(CharacterizeError::Parse(
                "the counter file ends before its `done` line".into(),
            ));
        }
        features(&counts, &skipped)
    }

    /// Counts the instrumented `src` natively by PAPI: built as `recipe`
    /// says with the portable flags, `-DPOLYTUNE_RT_PAPI` and `-lpapi`, run
    /// until each of its `regions` ran [`EXECUTIONS_PER_REGION`] times.
    pub(crate) fn characterize_instrumented(
        src: &Path,
        recipe: &crate::lab::build::Recipe,
        regions: usize,
        workdir: &Path,
        limits: &Limits,
    ) -> Result<Features, CharacterizeError> {
        available(&recipe.compiler, workdir, limits)?;
        // The code the simulator's features describe: the same portable
        // instruction set, so that the two back ends see one program.
        let mut linked = crate::lab::build::Recipe {
            compiler: Compiler {
                flags: PORTABLE_FLAGS.iter().map(|s| s.to_string()).collect(),
                ..recipe.compiler.clone()
            },
            ..recipe.clone()
        };
        linked.extra.push("-lpapi".into());
        let flags: &[&str] = match linked.build {
            Some(_) => &["-DPOLYTUNE_RT_PAPI", "-lpapi"],
            None => &["-DPOLYTUNE_RT_PAPI"],
        };
        let exe = workdir.join("counted");
        let c = linked.build(src, &exe, false, flags);
        if !c.ok {
            return Err(CharacterizeError::Compile {
                path: src.display().to_string(),
                stderr: c.stderr,
            });
        }
        let file = workdir.join("counters.txt");
        let _ = std::fs::remove_file(&file);
        let stop = (regions.max(1) * EXECUTIONS_PER_REGION).to_string();
        let file_env = file.to_string_lossy().into_owned();
        let env = [
            ("OMP_NUM_THREADS", "1"),
            ("POLYTUNE_STOP_AFTER", stop.as_str()),
            ("POLYTUNE_COUNTERS", file_env.as_str()),
        ];
        let (program, args) = linked.command(&exe);
        let out = confine::run(&program, &args, &env, limits)
            .map_err(|e| CharacterizeError::Run(e.to_string()))?;
        check_ending(&out, "the PAPI build", limits)?;
        match std::fs::read_to_string(&file) {
            Ok(text) => parse_counters(&text),
            Err(_) => Err(CharacterizeError::NeverRan),
        }
    }

    pub(crate) fn characterize(
        src: &Path,
        compiler: &Compiler,
        size: crate::lab::size::Size,
        include: &[PathBuf],
        workdir: &Path,
        limits: &Limits,
    ) -> Result<Features, CharacterizeError> {
        available(compiler, workdir, limits)?;
        let exe = workdir.join("counted");
        let c = compiler.compile_with(
            src,
            &exe,
            size,
            include,
            false,
            &["-DPOLYTUNE_PAPI", "-lpapi"],
        );
        if !c.ok {
            return Err(CharacterizeError::Compile {
                path: src.display().to_string(),
                stderr: c.stderr,
            });
        }
        let out = confine::run(
            &exe,
            std::iter::empty::<&str>(),
            &[("OMP_NUM_THREADS", "1")],
            limits,
        )
        .map_err(|e| CharacterizeError::Run(e.to_string()))?;
        check_ending(&out, "the PAPI build", limits)?;
        let err = out.stderr.into_text();
        if let Some(e) = err
            .lines()
            .find_map(|l| l.strip_prefix("polytune-papi-error:"))
        {
            return Err(CharacterizeError::Papi(e.trim().to_string()));
        }
        let counts: Vec<(String, f64)> = err
            .lines()
            .filter_map(|l| l.strip_prefix("polytune-counter:"))
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                Some((w.next()?.to_string(), w.next()?.parse().ok()?))
            })
            .collect();
        let skipped = err
            .lines()
            .find_map(|l| l.strip_prefix("polytune-papi-skipped: PAPI_TOT_INS"))
            .unwrap_or("")
            .trim();
        features(&counts, skipped)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_probe_says_which_step_failed() {
            let e = probe_failure("polytune-papi-probe: query Event does not exist\n").unwrap();
            assert_eq!(
                e.to_string().lines().next().unwrap(),
                "PAPI cannot count on this machine: PAPI_TOT_INS does not exist here (Event does not exist): no hardware counters"
            );
            let e = probe_failure("polytune-papi-probe: init Not supported\n").unwrap();
            assert!(
                e.to_string()
                    .contains("PAPI_library_init failed: Not supported"),
                "{e}"
            );
            assert!(probe_failure("").is_none());
        }

        #[test]
        fn the_counter_file_gives_rates_per_instruction_or_papis_reason() {
            let f = parse_counters(
                "skipped PAPI_L3_TCM Event exists, but cannot be counted\ncounter PAPI_TOT_INS 1000\ncounter PAPI_LD_INS 250\ndone\n",
            )
            .unwrap();
            assert_eq!(f.backend, Backend::Papi);
            assert_eq!(
                f.values,
                vec![
                    ("PAPI_TOT_INS".to_string(), 1000.0),
                    ("PAPI_LD_INS".to_string(), 0.25)
                ]
            );
            assert_eq!(f.counted, Counted::Whole { instructions: 1000 });
            let e =
                parse_counters("skipped PAPI_TOT_INS Event does not exist\ndone\n").unwrap_err();
            assert_eq!(
                e.to_string().lines().next().unwrap(),
                "PAPI cannot count on this machine: PAPI_TOT_INS cannot be counted: Event does not exist"
            );
            let e = parse_counters("error PAPI_library_init Not supported\ndone\n").unwrap_err();
            assert!(
                e.to_string()
                    .contains("PAPI_library_init failed: Not supported"),
                "{e}"
            );
            assert!(matches!(
                parse_counters("counter PAPI_TOT_INS 1000\n"),
                Err(CharacterizeError::Parse(_))
            ));
            assert!(matches!(
                parse_counters("counter PAPI_TOT_INS 0\ndone\n"),
                Err(CharacterizeError::NeverRan)
            ));
        }

        /// The probe builds and runs here (with libpapi-dev): either PAPI
        /// counts, or it says why in PAPI's words.
        #[test]
        fn the_probe_builds_and_answers() {
            let dir = tempfile::tempdir().unwrap();
            let gcc = Compiler::detect(crate::lab::compiler::Family::Gcc, None).unwrap();
            match available(&gcc, dir.path(), &Limits::tool()) {
                Ok(()) => {}
                Err(CharacterizeError::Papi(m)) => assert!(
                    m.starts_with("PAPI_library_init failed")
                        || m.starts_with("PAPI_TOT_INS does not exist here")
                        || m.starts_with("PAPI_TOT_INS cannot be counted here"),
                    "{m}"
                ),
                Err(e) => panic!("{e}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(ir: u64, complete: bool) -> String {
        let mut t = format!(
            "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim\nsummary: {ir} 3 2 0 1 0 0 0 0 1 0 0 0\nfn=(1) k\n"
        );
        if complete {
            t += &format!("totals: {ir} 3 2 0 1 0 0 0 0 1 0 0 0\n");
        }
        t
    }

    /// The dumps are read in order, a dump only once it is whole, up to
    /// the first whose running total reaches the bound: the same counts
    /// however late the watch looks.
    #[test]
    fn dumps_are_summed_in_order_up_to_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("callgrind.out");
        let at = |k: usize| format!("{}.{k}", base.display());
        let mut d = Dumps::new(&base, 250);
        assert!(!d.read(), "no dump yet");
        std::fs::write(at(1), dump(100, true)).unwrap();
        std::fs::write(at(2), dump(100, false)).unwrap();
        assert!(!d.read());
        assert_eq!(d.instructions, 100, "the second is not whole yet");
        std::fs::write(at(2), dump(100, true)).unwrap();
        std::fs::write(at(3), dump(100, true)).unwrap();
        std::fs::write(at(4), dump(100, true)).unwrap();
        assert!(d.read());
        assert_eq!(d.instructions, 300, "up to the third, not the fourth");
        let f = d.features().unwrap();
        assert_eq!(
            f.counted,
            Counted::Prefix {
                instructions: 300,
                budget: 250
            }
        );
        // Read again from scratch, all at once: the same.
        let mut again = Dumps::new(&base, 250);
        assert!(again.read());
        assert_eq!(again.features().unwrap(), f);
        assert_eq!(
            f.counted.to_string(),
            "a prefix: the first 300 instructions inside the regions (the bound is 250), the run stopped there"
        );
    }

    #[test]
    fn parses_cachegrind_output() {
        let text = "desc: I1 cache: 32768 B\ncmd: ./a\nevents: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim\nfl=x\n1 2\nsummary: 1000 10 5 300 30 3 100 20 2 50 5 4 1\n";
        let f = features_from_counts(&parse_cachegrind(text).unwrap()).unwrap();
        let get = |n: &str| f.values.iter().find(|(k, _)| k == n).unwrap().1;
        assert_eq!(get("PAPI_TOT_INS"), 1000.0);
        assert_eq!(get("PAPI_LD_INS"), 0.3);
        assert_eq!(get("PAPI_L1_DCM"), 0.05);
        assert_eq!(get("PAPI_BR_MSP"), 0.006);
        assert!(parse_cachegrind("events: Ir\n").is_err());
    }
}
