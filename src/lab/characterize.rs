//! Program characterization (paper section 4.1): event counts of the
//! *original* program normalized by its instruction count.
//!
//! The development machines are KVM guests without hardware counters, so
//! the default back end simulates them with valgrind's cache and branch
//! simulator (cachegrind's, run through callgrind so that only the kernel
//! function is counted), with an explicitly fixed cache geometry and a
//! fixed instruction set: the counts are then identical on every machine
//! and from run to run, which also makes them testable.

use super::compiler::Compiler;
use super::confine::{self, Ending, Limits, Outcome};
use serde::Serialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

mod backend;
pub use backend::{Backend, UnknownBackend};

/// The simulated caches: 32 KiB 8-way L1 instruction and data caches and
/// an 8 MiB 16-way last level, 64-byte lines.
pub const CACHE_GEOMETRY: [&str; 3] = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"];

/// Flags of the characterized build (not the measured builds' flags).
/// `-fno-inline` keeps the `kernel_*` function out of `main`, so that
/// only the kernel is counted.
pub const PORTABLE_FLAGS: [&str; 3] = ["-O3", "-march=x86-64-v3", "-fno-inline"];

/// Named feature values, in a fixed order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Features {
    pub backend: Backend,
    pub values: Vec<(String, f64)>,
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
        "the program did not finish within {seconds} s under {tool} (the time limit, --timeout): it hangs, or needs more time"
    )]
    Timeout { tool: &'static str, seconds: u64 },
    #[error("unreadable cachegrind output: {0}")]
    Parse(String),
    #[error(
        "PAPI cannot count on this machine: {0}\n  help: use --backend cachegrind (the default), which simulates the counters"
    )]
    Papi(String),
}

/// Parses the `events:` and `summary:` lines of a cachegrind output file.
pub fn parse_cachegrind(text: &str) -> Result<Vec<(String, u64)>, CharacterizeError> {
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
pub fn features_from_counts(counts: &[(String, u64)]) -> Result<Features, CharacterizeError> {
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
pub const EXECUTIONS_PER_REGION: usize = 1;

/// Characterizes an instrumented build (`engine::instrument`): counting
/// is switched on inside the SCoP regions only (callgrind's client
/// requests, `-DPOLYTUNE_CALLGRIND`), whatever the program's functions
/// are called, and the run stops after [`EXECUTIONS_PER_REGION`]
/// executions of each of its `regions`.
pub fn characterize_instrumented(
    src: &Path,
    recipe: &super::build::Recipe,
    regions: usize,
    workdir: &Path,
    limits: &Limits,
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
    let out = confine::run(&program, &args, &env, limits).map_err(CharacterizeError::NoValgrind)?;
    features_from_counts(&callgrind_counts(out, &out_file, limits)?)
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
                    " (its address space was limited to {}: --memory-limit)",
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

/// Hardware counters: the corpus header counts around the kernel when
/// built with `-DPOLYTUNE_PAPI -lpapi`. Behind the `papi` feature a small
/// C probe, built and run like the counted program, first asks PAPI
/// whether this machine can count at all (no FFI in Rust: `unsafe` stays
/// in the isl and libclang doors).
mod papi {
    use super::*;

    /// Initializes PAPI and looks up `PAPI_TOT_INS`; on failure prints
    /// which step failed and PAPI's reason, one `polytune-papi-probe:`
    /// line on stdout.
    #[cfg(feature = "papi")]
    const PROBE: &str = r#"#include <papi.h>
#include <stdio.h>
static const char *why(int rc)
{
  const char *s = PAPI_strerror(rc);
  return s ? s : "unknown PAPI error";
}
int main(void)
{
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
  return 0;
}
"#;

    /// Whether PAPI can count instructions here: builds the probe in
    /// `workdir` with `compiler` and runs it within `limits`.
    #[cfg(feature = "papi")]
    pub fn available(
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
    #[cfg_attr(not(feature = "papi"), allow(dead_code))]
    fn probe_failure(stdout: &str) -> Option<CharacterizeError> {
        let line = stdout
            .lines()
            .find_map(|l| l.strip_prefix("polytune-papi-probe: "))?;
        let (step, msg) = line.split_once(' ').unwrap_or((line, ""));
        Some(CharacterizeError::Papi(match step {
            "init" => format!("PAPI_library_init failed: {msg}"),
            "query" => format!("PAPI_TOT_INS does not exist here ({msg}): no hardware counters"),
            _ => format!("the PAPI probe failed: {line}"),
        }))
    }

    #[cfg(not(feature = "papi"))]
    pub fn available(_: &Compiler, _: &Path, _: &Limits) -> Result<(), CharacterizeError> {
        Err(CharacterizeError::Papi(
            "this polytune was built without the `papi` feature (cargo build --features papi, with libpapi-dev)".into(),
        ))
    }

    pub fn characterize(
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
        let Some(&(_, ins)) = counts.iter().find(|(k, _)| k == "PAPI_TOT_INS") else {
            let why = err
                .lines()
                .find_map(|l| l.strip_prefix("polytune-papi-skipped: PAPI_TOT_INS"))
                .unwrap_or(" not counted")
                .trim()
                .to_string();
            return Err(CharacterizeError::Papi(format!(
                "PAPI_TOT_INS cannot be counted: {why}"
            )));
        };
        let values = counts
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    if k == "PAPI_TOT_INS" {
                        *v
                    } else {
                        v / ins.max(1.0)
                    },
                )
            })
            .collect();
        Ok(Features {
            backend: Backend::Papi,
            values,
        })
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

        /// The probe builds and runs here (with libpapi-dev): either PAPI
        /// counts, or it says why in PAPI's words.
        #[cfg(feature = "papi")]
        #[test]
        fn the_probe_builds_and_answers() {
            let dir = tempfile::tempdir().unwrap();
            let gcc = Compiler::detect(crate::lab::compiler::Family::Gcc, None).unwrap();
            match available(&gcc, dir.path(), &Limits::tool()) {
                Ok(()) => {}
                Err(CharacterizeError::Papi(m)) => assert!(
                    m.starts_with("PAPI_library_init failed")
                        || m.starts_with("PAPI_TOT_INS does not exist here"),
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
