//! `polytune fuzz`: differential fuzzing of the engine.

use super::args::split_flags;
use super::render::{fuzz_text, json_text};
use super::{Ui, Verbosity};
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Differential fuzzing of the transformations (minutes to hours).
///
/// Differential fuzzing: random legal SCoPs under random configurations,
/// compiled and run, compared with the original (minutes to hours:
/// every pair is compiled and run with each compiler).
///
/// Every program is generated from the seed (deterministic), proven
/// legal at its parameter values by an interpreter, transformed as by
/// `optimize --config`, compiled with each compiler and run at each
/// thread count and parameter set. Findings (wrong output, crash,
/// compile error, engine error) are saved with a reproducer under
/// OUT/findings; the exit code is 1 if there is any.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Seed of the whole run.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Index of the first program (to split a long run into chunks).
    #[arg(long, default_value_t = 0)]
    first: usize,
    /// Number of programs.
    #[arg(long, default_value_t = 50)]
    programs: usize,
    /// Configurations per program.
    #[arg(long, default_value_t = 4)]
    configs: usize,
    /// Draw the configurations from the extended space instead of the paper's.
    ///
    /// The extended space: free tile sizes, separate unroll factors, `red=1`,
    /// register tiles with and without `pack=1`.
    #[arg(long)]
    extended: bool,
    /// Add diamond tiles in time (tt=diamond) to every configuration drawn.
    #[arg(long = "tt")]
    diamond: bool,
    /// Parameter sets per program.
    #[arg(long, default_value_t = 3)]
    params: usize,
    /// Comma-separated compilers (`--compilers` is the same option).
    #[arg(
        long = "compiler",
        alias = "compilers",
        value_enum,
        value_delimiter = ',',
        default_value = "gcc,clang"
    )]
    compilers: Vec<crate::lab::compiler::Family>,
    /// Comma-separated OpenMP thread counts (OMP_NUM_THREADS).
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    threads: Vec<usize>,
    /// Flags of every compilation (-fopenmp is always added).
    #[arg(long, default_value = "-O2", allow_hyphen_values = true)]
    cflags: String,
    /// Output directory (findings/ and scratch files; `--out` is the same
    /// option).
    #[arg(
        short = 'o',
        long = "output",
        alias = "out",
        value_name = "DIR",
        default_value = "polytune-fuzz"
    )]
    out: PathBuf,
    /// Programs handled in parallel.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Per-run timeout in seconds.
    #[arg(long, default_value_t = 20)]
    timeout: u64,
    /// Keep every program's scratch directory.
    #[arg(long)]
    keep: bool,
    /// Seconds one `optimize` may take (it runs as a child process).
    #[arg(long, default_value_t = 60)]
    engine_timeout: u64,
    /// No unsigned types or literals in the generated SCoPs.
    #[arg(long)]
    signed_only: bool,
    /// Parameter values >= 1 only (the default context).
    #[arg(long)]
    positive_params: bool,
    /// Arrays as pointer parameters that may overlap: detection and its
    /// run-time alias checks.
    ///
    /// Each kernel takes its arrays as pointer parameters and has no
    /// `#pragma scop`: it is transformed as by `optimize --detect --config`,
    /// which versions it on a run-time check that the arrays do not overlap.
    /// `main` calls it with the arrays apart (checked against the
    /// interpreter) and then with some of them sharing storage (the same
    /// buffer twice, then one shifted by a few elements or a row), which
    /// must print what the original prints so called. Needs the `detect`
    /// feature.
    #[arg(long)]
    alias: bool,
    /// A user's OpenMP directive on one loop of each SCoP, right or wrong.
    ///
    /// Each program carries `#pragma omp parallel for` or `simd` on one
    /// loop, with its written scalars drawn into `private` or
    /// `reduction(+:...)` clauses or left shared. The interpreter runs the
    /// loop's iterations in reverse: when that prints otherwise, the
    /// directive is wrong and transforming the SCoP under it is a finding.
    #[arg(long, conflicts_with = "alias")]
    omp_directives: bool,
    #[command(flatten)]
    output: super::args::OutputArgs,
}

/// The arguments with which polytune optimizes `prog` with `config` into
/// `out`, with `--detect` when `detect` (the fuzzer runs them, and writes
/// them into its findings' scripts).
pub fn optimize_args(prog: &str, config: &str, out: &str, detect: bool) -> Vec<String> {
    let mut v: Vec<String> = ["optimize", prog].map(str::to_string).to_vec();
    if detect {
        v.push("--detect".to_string());
    }
    v.extend(["--config", config, "-o", out].map(str::to_string));
    v
}

pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    let opts = crate::app::fuzz::Options {
        seed: a.seed,
        first: a.first,
        programs: a.programs,
        configs: a.configs,
        extended: a.extended,
        diamond: a.diamond,
        params: a.params,
        compilers: a.compilers.clone(),
        threads: a.threads,
        cflags: split_flags(&a.cflags),
        out: a.out,
        jobs: a.jobs,
        timeout: std::time::Duration::from_secs(a.timeout),
        keep_work: a.keep,
        progress: (ui.verbosity >= Verbosity::Normal).then(|| {
            std::sync::Arc::new(|e: crate::app::fuzz::Event| match e {
                crate::app::fuzz::Event::Programs { done, total } => {
                    eprintln!("fuzz: {done}/{total} programs")
                }
                crate::app::fuzz::Event::Finding(line) => eprintln!("{line}"),
            }) as crate::app::fuzz::Progress
        }),
        tamper: None,
        generator: crate::app::fuzz::GenOptions {
            unsigned: !a.signed_only,
            nonpositive: !a.positive_params,
        },
        polytune: Some(std::env::current_exe().context("cannot find the polytune binary")?),
        engine_timeout: std::time::Duration::from_secs(a.engine_timeout),
        optimize_args,
        alias: a.alias,
        directives: a.omp_directives,
    };
    let summary = crate::app::fuzz::run(&opts)?;
    super::out(&if a.output.json {
        json_text(&summary)?
    } else {
        fuzz_text(&summary)
    })?;
    ui.note(summary.line());
    if summary.counts.findings() > 0 {
        anyhow::bail!(
            "fuzz: {} finding(s) under {}",
            summary.findings.len(),
            opts.out.join("findings").display()
        );
    }
    Ok(())
}
