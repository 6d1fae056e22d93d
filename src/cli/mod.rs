//! The command-line edge: argument parsing, output formats and exit codes.
//! `main.rs` only calls [`main`].

use crate::config::{Config, Fusion};
use crate::frontend::scop::Scop;
use crate::frontend::{self, Options, SourceFile};
use crate::isl;
use crate::lab::scratch::Scratch;
use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

/// Exit code for input polytune rejects (bad C, not a SCoP, I/O).
pub const EXIT_INPUT: i32 = 1;
/// Exit code for a malformed command line or configuration.
pub const EXIT_USAGE: i32 = 2;
/// Exit code for an internal failure (a bug: please report it).
pub const EXIT_INTERNAL: i32 = 3;

#[derive(Parser)]
#[command(
    name = "polytune",
    version,
    about = "Polyhedral source-to-source optimizer for C with learned transformation selection",
    after_help = "Exit codes: 0 success, 1 input rejected (with file:line:col), 2 usage error, 3 internal error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The learned selection of `optimize` (used when no configuration is
/// given).
#[derive(clap::Args, Clone)]
struct LearnedArgs {
    /// Directory of trained models (default: the shipped models for the
    /// compiler, models/<compiler>).
    #[arg(long, value_name = "DIR")]
    model: Option<PathBuf>,
    /// Candidates to run (besides the original).
    #[arg(long, default_value_t = 6)]
    shots: usize,
    /// multi-model (each model's best guess in turn), diverse (the
    /// models' ensemble, candidates spread over the space), model:NAME
    /// (one model's top N) or random.
    #[arg(long, default_value = "multi-model")]
    strategy: String,
    /// Do not run anything: emit the top prediction (1-shot).
    #[arg(long)]
    no_run: bool,
    #[command(flatten)]
    run: RunArgs,
}

/// How programs are built and run (`measure` and the learned `optimize`).
#[derive(clap::Args, Clone)]
struct RunArgs {
    /// Back-end compiler: gcc or clang (`collect`: a comma-separated list).
    #[arg(long, default_value = "gcc")]
    compiler: String,
    /// Optimization flags of the back-end compiler.
    #[arg(long, default_value = "-O3 -march=native", allow_hyphen_values = true)]
    cflags: String,
    /// Dataset size of corpus-style programs: mini, small, medium or large.
    #[arg(long, default_value = "medium", value_parser = ["mini", "small", "medium", "large"])]
    size: String,
    /// OMP_NUM_THREADS for every run.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Per-run timeout in seconds (also the limit of the valgrind run that
    /// characterizes a program).
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// Address-space limit of every program run, e.g. 4G or 512M, or
    /// `none` [default: half of this machine's memory].
    #[arg(long, value_name = "SIZE")]
    memory_limit: Option<crate::lab::confine::MemoryLimit>,
    /// Extra include directory (repeatable); the file's and the corpus
    /// header's directories are always included.
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
}

impl RunArgs {
    fn memory_limit(&self) -> Option<u64> {
        memory_limit(self.memory_limit)
    }

    fn compiler(&self) -> Result<crate::lab::compiler::Compiler> {
        Ok(crate::lab::compiler::Compiler::detect(
            &self.compiler,
            Some(split_flags(&self.cflags)),
        )?)
    }

    /// The include path for `file`: the extra directories, the file's own
    /// and the corpus header's.
    fn include_for(&self, file: &std::path::Path) -> Vec<PathBuf> {
        let mut include = self.include.clone();
        include.push(
            file.parent()
                .map(|p| p.to_path_buf())
                .unwrap_or_else(|| PathBuf::from(".")),
        );
        include.push(corpus_include());
        include
    }

    fn bench(
        &self,
        file: &std::path::Path,
        workdir: &std::path::Path,
    ) -> Result<crate::lab::verify::Bench> {
        Ok(crate::lab::verify::Bench {
            compiler: self.compiler()?,
            size: self.size.clone(),
            include: self.include_for(file),
            protocol: crate::lab::runner::Protocol {
                threads: self.threads,
                timeout: std::time::Duration::from_secs(self.timeout),
                memory_limit: self.memory_limit(),
                ..Default::default()
            },
            workdir: workdir.to_path_buf(),
        })
    }
}

/// Which measurements of a store a model learns from.
#[derive(clap::Args, Clone)]
struct DataArgs {
    /// Back-end compiler whose measurements to use.
    #[arg(long, default_value = "gcc")]
    compiler: String,
    /// Dataset size of the measurements.
    #[arg(long, default_value = "medium", value_parser = ["mini", "small", "medium", "large"])]
    size: String,
    /// Thread count of the measurements.
    #[arg(long, default_value_t = 2)]
    threads: i64,
    /// Comma-separated models (default: all six: LR,SVM,IBk,K*,M5P,MLP).
    #[arg(long)]
    models: Option<String>,
    /// What the models learn: `log`, the logarithm of the speedup (a 2x
    /// loss weighs like a 2x gain), `speedup`, the paper's target, or
    /// `relative`, the log speedup over the kernel's typical variant.
    #[arg(long, default_value = "log", value_parser = ["log", "speedup", "relative"])]
    target: String,
}

impl DataArgs {
    fn selection(&self) -> crate::learn::dataset::Selection {
        crate::learn::dataset::Selection {
            compiler: self.compiler.clone(),
            size: self.size.clone(),
            threads: self.threads,
            ..Default::default()
        }
    }

    fn target(&self) -> crate::learn::Target {
        crate::learn::Target::parse(&self.target).expect("clap checked the value")
    }

    fn kinds(&self) -> Result<Vec<crate::learn::Kind>> {
        match &self.models {
            None => Ok(crate::learn::Kind::ALL.to_vec()),
            Some(m) => m
                .split(',')
                .map(|k| crate::learn::Kind::parse(k).map_err(|e| anyhow::anyhow!(e)))
                .collect(),
        }
    }

    fn dataset(&self, db: &std::path::Path) -> Result<crate::learn::dataset::Dataset> {
        if !db.exists() {
            anyhow::bail!(
                "{} does not exist (run `polytune collect` first)",
                db.display()
            );
        }
        let store = crate::lab::store::Store::open_read_only(db)?;
        crate::learn::dataset::Dataset::from_store(&store, &self.selection())
            .with_context(|| format!("cannot read the dataset in {}", db.display()))
    }
}

// Parsed once per run: the size of the variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Transform the SCoPs of a C file with one configuration of the space.
    ///
    /// The configuration is `--config T` (a 12-bit string or the readable
    /// `fuse=smart,tile=32x32x1,wave=0,omp=1,prevec=1,simd=1,uj=4`) and/or
    /// the named flags, which override it. Every transformation is proven
    /// legal; a SCoP that cannot be handled is left unchanged (and said so
    /// on stderr).
    Optimize {
        /// C source file (never modified unless --in-place).
        file: PathBuf,
        /// Configuration T (bit string or readable form).
        #[arg(long)]
        config: Option<String>,
        /// Fusion structure.
        #[arg(long, value_parser = ["no", "smart", "max"])]
        fuse: Option<String>,
        /// Tile sizes of the first three band dimensions, each 1 or 32 (e.g. 32,32,1).
        #[arg(long)]
        tile: Option<String>,
        /// Wavefront the tile loops.
        #[arg(long)]
        wavefront: bool,
        /// OpenMP on the outermost parallel loops.
        #[arg(long)]
        omp: bool,
        /// Sink a parallel dimension innermost before tiling.
        #[arg(long)]
        prevector: bool,
        /// Mark vectorizable innermost loops for the compiler.
        #[arg(long)]
        simd: bool,
        /// Unroll-and-jam factor of the two innermost loops.
        #[arg(long, value_parser = ["1", "2", "4", "8"])]
        unroll_jam: Option<String>,
        /// Parameter context in isl notation (default: every parameter >= 1).
        #[arg(long)]
        context: Option<String>,
        /// Output file (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Allow --output to be the input file.
        #[arg(long)]
        in_place: bool,
        /// Treat NAME as a pure function inside SCoPs (repeatable).
        #[arg(long = "pure", value_name = "NAME")]
        pure: Vec<String>,
        /// Find the SCoPs without pragmas (libclang; clang arguments after `--`).
        #[arg(long)]
        detect: bool,
        /// With --detect: keep the inserted `#pragma scop` / `#pragma endscop` lines.
        #[arg(long, requires = "detect")]
        mark: bool,
        /// With --detect: assume that no two arrays or pointers of a region
        /// overlap (pointer and array parameters are otherwise taken to
        /// possibly alias). If they do overlap, the result is wrong.
        #[arg(long, requires = "detect")]
        assume_no_alias: bool,
        /// Arguments for clang with --detect: include paths, -D flags.
        #[arg(last = true, value_name = "CLANG_ARGS")]
        clang_args: Vec<String>,
        #[command(flatten)]
        learned: LearnedArgs,
    },
    /// Differential fuzzing: random legal SCoPs under random
    /// configurations, compiled and run, compared with the original.
    ///
    /// Every program is generated from the seed (deterministic), proven
    /// legal at its parameter values by an interpreter, transformed as by
    /// `optimize --config`, compiled with each compiler and run at each
    /// thread count and parameter set. Findings (wrong output, crash,
    /// compile error, engine error) are saved with a reproducer under
    /// OUT/findings; the exit code is 1 if there is any.
    Fuzz {
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
        /// Parameter sets per program.
        #[arg(long, default_value_t = 3)]
        params: usize,
        /// Comma-separated compilers.
        #[arg(long, default_value = "gcc,clang")]
        compilers: String,
        /// Comma-separated OMP_NUM_THREADS values.
        #[arg(long, default_value = "1,2")]
        threads: String,
        /// Flags of every compilation (-fopenmp is always added).
        #[arg(long, default_value = "-O2", allow_hyphen_values = true)]
        cflags: String,
        /// Output directory (findings/ and scratch files).
        #[arg(long, default_value = "polytune-fuzz")]
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
        /// Machine-readable summary on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Compile, verify and time a program and, with a configuration, its
    /// variant; report both and the speedup.
    ///
    /// The variant is run once with `--dump` and compared with the
    /// original's output before it is timed (median of at least 5 runs
    /// after a warm-up, more while the spread exceeds 10%).
    Measure {
        /// C source file in the corpus style (see polybench/include/polytune_bench.h).
        file: PathBuf,
        /// Configuration of the variant (bit string or readable form).
        #[arg(long)]
        config: Option<String>,
        #[command(flatten)]
        run: RunArgs,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Run (or resume) a training campaign into a SQLite database.
    ///
    /// Measures the original and every distinct variant of every kernel
    /// with every compiler: verified against the original's output, then
    /// timed. Results are written as they arrive; rerunning the same
    /// command after an interruption skips what is stored.
    Collect {
        /// Kernel files or directories (searched recursively).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Results database (created if missing).
        #[arg(long)]
        db: PathBuf,
        /// Build and run settings; `--compiler` takes a comma-separated
        /// list (gcc,clang).
        #[command(flatten)]
        run: RunArgs,
        /// Measure at most N variants per kernel (spread over the space).
        #[arg(long, value_name = "N")]
        max_variants: Option<usize>,
        /// Samples per program: at least MIN, up to MAX while the spread
        /// exceeds 10%. The verification run is the warm-up and, as the
        /// kernel is timed inside the program, also the first sample.
        #[arg(long, value_name = "MIN..MAX", default_value = "5..7", value_parser = parse_runs)]
        runs: (usize, usize),
        /// A variant whose verification run is this many times slower than
        /// its baseline gets only two samples (it can never be chosen).
        #[arg(long, value_name = "X", default_value_t = 3.0)]
        slow_factor: f64,
        /// While this file exists, wait before the next measurement: lets
        /// other work use the machine without disturbing a timed run.
        #[arg(long, value_name = "FILE")]
        pause_file: Option<PathBuf>,
    },
    /// Train the six speedup models on a campaign's measurements and write
    /// them (one JSON file each, with their feature schema, machine and
    /// compiler) to a directory.
    Train {
        /// Results database of a campaign.
        #[arg(long)]
        db: PathBuf,
        /// Directory for the model files.
        #[arg(short, long, default_value = "models")]
        output: PathBuf,
        #[command(flatten)]
        data: DataArgs,
        /// Leave out a kernel (repeatable): models that have never seen
        /// it, to try on it as on a new program.
        #[arg(long, value_name = "KERNEL")]
        exclude: Vec<String>,
    },
    /// Leave-one-benchmark-out evaluation of the models on a campaign's
    /// measurements: Opt, Random, each model's 1-shot and N-shot, and
    /// multi-model, per kernel and on average (paper Tables 8–13).
    Evaluate {
        /// Results database of a campaign.
        #[arg(long)]
        db: PathBuf,
        #[command(flatten)]
        data: DataArgs,
        /// N of N-shot.
        #[arg(long, default_value_t = 6)]
        shots: usize,
        /// Output format.
        #[arg(long, default_value = "md", value_parser = ["md", "csv", "json"])]
        format: String,
        /// Also evaluate every model on the features LR's greedy selection
        /// keeps (paper Tables 14–16).
        #[arg(long)]
        subset: bool,
        /// Draw the sorted speedup distribution of every kernel's space
        /// and the per-model bars into DIR (SVG, and PNG when rsvg-convert
        /// is installed).
        #[arg(long, value_name = "DIR")]
        plots: Option<PathBuf>,
        /// Also write every variant's leave-one-out prediction by every
        /// model to FILE (CSV), to study rankings or combine models.
        #[arg(long, value_name = "FILE")]
        predictions: Option<PathBuf>,
    },
    /// Characterize a program by its (simulated) hardware counters,
    /// normalized by its instruction count (paper section 4.1).
    Characterize {
        /// C source file in the corpus style.
        file: PathBuf,
        /// Counter back end: cachegrind (simulated, deterministic) or papi.
        #[arg(long, default_value = "cachegrind", value_parser = ["cachegrind", "papi"])]
        backend: String,
        /// Dataset size (cachegrind runs about 50 times slower than native).
        #[arg(long, default_value = "small", value_parser = ["mini", "small", "medium", "large"])]
        size: String,
        /// Compiler that builds the program.
        #[arg(long, default_value = "gcc")]
        compiler: String,
        /// Time limit of the (simulated) run in seconds.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
        /// Address-space limit of the program, e.g. 4G or 512M, or `none`
        /// [default: half of this machine's memory].
        #[arg(long, value_name = "SIZE")]
        memory_limit: Option<crate::lab::confine::MemoryLimit>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Export a results database as CSV.
    Export {
        #[arg(long)]
        db: PathBuf,
        /// Output file (default: standard output).
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Instead of CSV, write a compact copy of the database (every
        /// table but the per-run samples) for shipping with models;
        /// `evaluate` and `train` read it like the original.
        #[arg(long, value_name = "OUT", conflicts_with = "csv")]
        compact: Option<PathBuf>,
    },
    /// List the distinct programs of a file's optimization space.
    ///
    /// Enumerates all 1536 configurations, generates each, and groups them
    /// by the hash of the generated code.
    Space {
        /// C source file.
        file: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Write each distinct variant to DIR/<name>.v<k>.c.
        #[arg(long, value_name = "DIR")]
        emit: Option<PathBuf>,
        /// Parameter context in isl notation (default: every parameter >= 1).
        #[arg(long)]
        context: Option<String>,
        /// Treat NAME as a pure function inside SCoPs (repeatable).
        #[arg(long = "pure", value_name = "NAME")]
        pure: Vec<String>,
    },
    /// Print the static control parts of a C file in isl's notation.
    ///
    /// For every `#pragma scop` ... `#pragma endscop` region: its
    /// parameters, and per statement its iteration domain, original
    /// schedule and read/write access relations. With --detect: list the
    /// regions found without pragmas, and why nearby loop nests were not
    /// taken.
    Scop {
        /// C source file.
        file: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Also print each SCoP's C as regenerated from the parsed form.
        #[arg(long)]
        c: bool,
        /// Print the whole file with every SCoP regenerated by the
        /// pretty-printer (to stdout, or to --output).
        #[arg(long, conflicts_with_all = ["json", "c"])]
        regenerate: bool,
        /// Where --regenerate or --mark writes (never the input file
        /// unless --in-place).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Treat NAME as a pure function inside SCoPs (repeatable).
        #[arg(long = "pure", value_name = "NAME")]
        pure: Vec<String>,
        /// With --mark: write the marked file back to FILE.
        #[arg(long, requires = "mark")]
        in_place: bool,
        /// Find the SCoPs without pragmas (libclang; clang arguments after `--`).
        #[arg(long)]
        detect: bool,
        /// With --detect: write the file with `#pragma scop` / `#pragma endscop` inserted
        /// around the regions (to --output, FILE with --in-place, or stdout).
        #[arg(long, requires = "detect")]
        mark: bool,
        /// With --detect: assume that no two arrays or pointers of a region
        /// overlap (pointer and array parameters are otherwise taken to
        /// possibly alias). If they do overlap, the result is wrong.
        #[arg(long, requires = "detect")]
        assume_no_alias: bool,
        /// Arguments for clang with --detect: include paths, -D flags.
        #[arg(last = true, value_name = "CLANG_ARGS")]
        clang_args: Vec<String>,
    },
}

/// Restores the default SIGPIPE action, so that `polytune ... | head`
/// ends quietly like other Unix tools instead of failing on a closed pipe.
fn default_sigpipe() {
    #[cfg(unix)]
    {
        unsafe extern "C" {
            fn signal(signum: i32, handler: usize) -> usize;
        }
        const SIGPIPE: i32 = 13;
        const SIG_DFL: usize = 0;
        // SAFETY: installing the default disposition has no preconditions.
        unsafe {
            signal(SIGPIPE, SIG_DFL);
        }
    }
}

/// Runs the CLI; returns the process exit code.
pub fn main() -> i32 {
    default_sigpipe();
    // Programs polytune runs die with it, and its scratch directories go.
    if let Err(e) = crate::lab::confine::clean_up_on_signals() {
        eprintln!("polytune: warning: cannot handle signals: {e}");
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => 0,
        Err(e) => {
            if let Some(fe) = e.downcast_ref::<frontend::FrontendError>() {
                eprintln!("{fe}");
                EXIT_INPUT
            } else if let Some(ce) = e.downcast_ref::<crate::config::ConfigError>() {
                eprintln!("polytune: {ce}");
                EXIT_USAGE
            } else if e.downcast_ref::<isl::IslError>().is_some() {
                eprintln!("polytune: internal error: {e:#}");
                EXIT_INTERNAL
            } else {
                eprintln!("polytune: {e:#}");
                EXIT_INPUT
            }
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Optimize {
            file,
            config,
            fuse,
            tile,
            wavefront,
            omp,
            prevector,
            simd,
            unroll_jam,
            context,
            output,
            in_place,
            pure,
            detect,
            mark,
            assume_no_alias,
            clang_args,
            learned,
        } => {
            if let Some(out) = &output
                && !in_place
                && same_file(out, &file)
            {
                anyhow::bail!(
                    "refusing to overwrite the input {}: {} is the same file; pass --in-place to allow it",
                    file.display(),
                    out.display()
                );
            }
            let mut c: Config = match &config {
                Some(t) => t.parse()?,
                None => Config::default(),
            };
            if config.is_none()
                && fuse.is_none()
                && tile.is_none()
                && !wavefront
                && !omp
                && !prevector
                && !simd
                && unroll_jam.is_none()
            {
                let src = if detect {
                    detected_source(&file, &clang_args, &pure, assume_no_alias)?
                } else {
                    frontend::parse_file(
                        &file,
                        &Options {
                            pure_functions: pure,
                        },
                    )?
                };
                let text = learned_optimize(&file, &src, &learned, context.as_deref())?;
                let text = if detect && !mark {
                    frontend::strip_scop_pragmas(&text)
                } else {
                    text
                };
                return write_output(output.as_deref(), text.as_bytes());
            }
            if let Some(f) = fuse {
                c.fusion = match f.as_str() {
                    "no" => Fusion::No,
                    "smart" => Fusion::Smart,
                    _ => Fusion::Max,
                };
            }
            if let Some(t) = tile {
                c.tile =
                    crate::config::parse_tile(&t).map_err(|reason| crate::config::ConfigError {
                        text: t.clone(),
                        reason,
                    })?;
            }
            c.wavefront |= wavefront;
            c.omp |= omp;
            c.prevector |= prevector;
            c.simd |= simd;
            if let Some(u) = unroll_jam {
                c.unroll = u.parse()?;
            }
            let src = if detect {
                detected_source(&file, &clang_args, &pure, assume_no_alias)?
            } else {
                frontend::parse_file(
                    &file,
                    &Options {
                        pure_functions: pure,
                    },
                )?
            };
            let mut outcome = crate::engine::pipeline::optimize(&src, &c, context.as_deref())?;
            for s in &outcome.skipped {
                eprintln!("polytune: warning: {s}");
            }
            if detect && !mark {
                outcome.text = frontend::strip_scop_pragmas(&outcome.text);
            }
            write_output(output.as_deref(), outcome.text.as_bytes())
        }
        Command::Fuzz {
            seed,
            first,
            programs,
            configs,
            params,
            compilers,
            threads,
            cflags,
            out,
            jobs,
            timeout,
            keep,
            signed_only,
            positive_params,
            engine_timeout,
            json,
        } => {
            let threads = threads
                .split(',')
                .map(|t| t.trim().parse::<usize>())
                .collect::<Result<Vec<_>, _>>()
                .context("--threads must be comma-separated numbers")?;
            let opts = crate::app::fuzz::Options {
                seed,
                first,
                programs,
                configs,
                params,
                compilers: compilers.split(',').map(|c| c.trim().to_string()).collect(),
                threads,
                cflags: split_flags(&cflags),
                out,
                jobs,
                timeout: std::time::Duration::from_secs(timeout),
                keep_work: keep,
                verbose: true,
                tamper: None,
                generator: crate::app::fuzz::GenOptions {
                    unsigned: !signed_only,
                    nonpositive: !positive_params,
                },
                polytune: Some(std::env::current_exe().context("cannot find the polytune binary")?),
                engine_timeout: std::time::Duration::from_secs(engine_timeout),
            };
            let summary = crate::app::fuzz::run(&opts)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&summary)?);
            } else {
                for (why, n) in &summary.unchanged_reasons {
                    println!("unchanged x{n}: {why}");
                }
                for (label, n, dir) in summary.classes() {
                    println!("{label}: {n} finding(s), e.g. {}", dir.display());
                }
            }
            eprintln!("{}", summary.line());
            if summary.counts.findings() > 0 {
                anyhow::bail!(
                    "fuzz: {} finding(s) under {}",
                    summary.findings.len(),
                    opts.out.join("findings").display()
                );
            }
            Ok(())
        }
        Command::Measure {
            file,
            config,
            run,
            json,
        } => measure(&file, config.as_deref(), &run, json),
        Command::Collect {
            paths,
            db,
            run,
            max_variants,
            runs,
            slow_factor,
            pause_file,
        } => {
            let compilers = run
                .compiler
                .split(',')
                .map(|c| {
                    crate::lab::compiler::Compiler::detect(c.trim(), Some(split_flags(&run.cflags)))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let kernels = crate::app::campaign::kernel_files(&paths)?;
            if kernels.is_empty() {
                anyhow::bail!("no .c file under the given paths");
            }
            let mut store = crate::lab::store::Store::open_exclusive(&db)?;
            let campaign = crate::app::campaign::Campaign {
                kernels,
                compilers,
                size: run.size.clone(),
                protocol: crate::lab::runner::Protocol {
                    threads: run.threads,
                    timeout: std::time::Duration::from_secs(run.timeout),
                    memory_limit: run.memory_limit(),
                    warmup: 0,
                    min_runs: runs.0,
                    max_runs: runs.1,
                    verification_is_sample: true,
                    ..Default::default()
                },
                slow_factor: Some(slow_factor).filter(|f| *f > 0.0),
                max_variants,
                include: run
                    .include
                    .iter()
                    .cloned()
                    .chain([corpus_include()])
                    .collect(),
                feature_size: "small".into(),
                pause_file,
            };
            let s = crate::app::campaign::run(&campaign, &mut store, &mut std::io::stderr())?;
            println!(
                "{}: {} measured, {} already stored, {} failed; {} measurements in total",
                db.display(),
                s.measured,
                s.skipped,
                s.failed,
                store.count("measurements")?
            );
            Ok(())
        }
        Command::Train {
            db,
            output,
            data,
            exclude,
        } => {
            let mut d = data.dataset(&db)?;
            if !exclude.is_empty() {
                d = d.without_kernels(&exclude)?;
            }
            eprintln!(
                "polytune: training on {} variants of {} kernels ({}, {})",
                d.rows.len(),
                d.kernels.len(),
                d.compiler,
                d.machine
            );
            for kind in data.kinds()? {
                let t = std::time::Instant::now();
                let m = crate::learn::saved::SavedModel::train(kind, &d, data.target())?;
                let p = m.save(&output)?;
                eprintln!(
                    "  {:4} {:.1} s -> {}",
                    kind.name(),
                    t.elapsed().as_secs_f64(),
                    p.display()
                );
            }
            Ok(())
        }
        Command::Evaluate {
            db,
            data,
            shots,
            format,
            subset,
            plots,
            predictions,
        } => {
            if let Some(p) = &predictions
                && same_file(p, &db)
            {
                anyhow::bail!(
                    "refusing to overwrite the database {} with predictions: name another file",
                    db.display()
                );
            }
            let d = data.dataset(&db)?;
            let opts = crate::learn::evaluate::Options {
                models: data.kinds()?,
                shots,
                target: data.target(),
                ..Default::default()
            };
            let t = std::time::Instant::now();
            let p = crate::learn::evaluate::predictions(&d, &opts)?;
            let e = crate::learn::evaluate::score(&d, &opts.models, &p, &opts);
            let took = t.elapsed().as_secs_f64();
            if let Some(path) = &predictions {
                crate::lab::store::atomic::write(
                    path,
                    crate::learn::evaluate::predictions_csv(&d, &opts.models, &p).as_bytes(),
                )?;
            }
            let sub = if subset {
                let lr = crate::learn::saved::SavedModel::train(
                    crate::learn::Kind::Lr,
                    &d,
                    data.target(),
                )?;
                let crate::learn::Model::Lr(l) = &lr.model else {
                    unreachable!("LR trains an LR model")
                };
                let keep: Vec<String> = l
                    .selected
                    .iter()
                    .filter(|&&j| j < d.feature_names.len())
                    .map(|&j| d.feature_names[j].clone())
                    .collect();
                let ds = d.with_features(&keep);
                Some((keep, crate::learn::evaluate::evaluate(&ds, &opts)?))
            } else {
                None
            };
            if let Some(dir) = &plots {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                let by_kernel = d.rows_by_kernel();
                let mut n = 0;
                for (k, rows) in by_kernel.iter().enumerate() {
                    if !rows.is_empty() {
                        let name = format!("distribution-{}.svg", d.kernels[k].name);
                        crate::learn::plot::distribution(&d, k, &dir.join(name))?;
                        n += 1;
                    }
                }
                crate::learn::plot::model_bars(&e, &dir.join("models.svg"))?;
                let svgs: Vec<PathBuf> = std::fs::read_dir(dir)?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "svg"))
                    .collect();
                let pngs = svgs.iter().filter(|p| crate::learn::plot::png(p)).count();
                eprintln!(
                    "polytune: {} plots written to {} (SVG{})",
                    n + 1,
                    dir.display(),
                    if pngs == svgs.len() {
                        " and PNG"
                    } else {
                        "; PNG needs rsvg-convert from librsvg2-bin"
                    }
                );
            }
            match format.as_str() {
                "csv" => print!("{}", e.csv()),
                "json" => println!(
                    "{}",
                    serde_json::to_string_pretty(&json!({
                        "machine": d.machine, "compiler": d.compiler, "flags": d.flags,
                        "features": d.feature_names, "kernels": d.kernels.len(), "variants": d.rows.len(),
                        "evaluation": e, "summary": summary_json(&e),
                        "subset": sub.as_ref().map(|(k, s)| json!({"features": k, "evaluation": s, "summary": summary_json(s)})),
                    }))?
                ),
                _ => {
                    println!(
                        "## Leave-one-out evaluation: {} ({}), {}\n",
                        d.compiler, d.flags, d.machine
                    );
                    println!(
                        "{} kernels, {} verified variants, {} features + {} configuration bits; size {}, {} threads; the models learn the {}; evaluated in {:.1} s.",
                        d.kernels.len(),
                        d.rows.len(),
                        d.feature_names.len(),
                        crate::learn::dataset::CONFIG_BITS,
                        d.selection.size,
                        d.selection.threads,
                        data.target().describe(),
                        took
                    );
                    println!("{}", summary_md(&e));
                    print!("{}", e.markdown());
                    print!("{}", e.best_configurations());
                    if let Some((keep, s)) = &sub {
                        println!(
                            "\n## Feature subset (LR's greedy selection): {}\n",
                            keep.join(", ")
                        );
                        println!("{}", summary_md(s));
                    }
                }
            }
            Ok(())
        }
        Command::Characterize {
            file,
            backend,
            size,
            compiler,
            timeout,
            memory_limit,
            json,
        } => {
            use crate::lab::characterize::{Backend, characterize};
            let compiler = crate::lab::compiler::Compiler::detect(&compiler, None)?;
            let dir = Scratch::new("characterize")?;
            let include = vec![
                file.parent().map(|p| p.to_path_buf()).unwrap_or_default(),
                corpus_include(),
            ];
            let backend = if backend == "papi" {
                Backend::Papi
            } else {
                Backend::Cachegrind
            };
            let limits = crate::lab::confine::Limits::new(
                std::time::Duration::from_secs(timeout),
                self::memory_limit(memory_limit),
            );
            let f = characterize(
                &file,
                &compiler,
                &size,
                &include,
                backend,
                dir.path(),
                &limits,
            );
            drop(dir);
            let f = f?;
            if json {
                let map: serde_json::Map<String, serde_json::Value> = f
                    .values
                    .iter()
                    .map(|(k, v)| (k.clone(), json!(v)))
                    .collect();
                println!(
                    "{}",
                    serde_json::to_string_pretty(
                        &json!({"file": file.display().to_string(), "backend": f.backend, "size": size, "features": map})
                    )?
                );
            } else {
                for (k, v) in &f.values {
                    println!("{k:<14} {v:.6e}");
                }
            }
            Ok(())
        }
        Command::Export { db, csv, compact } => {
            if !db.exists() {
                anyhow::bail!("{} does not exist", db.display());
            }
            for out in csv.iter().chain(&compact) {
                if same_file(out, &db) {
                    anyhow::bail!(
                        "refusing to overwrite the database {} with the export: name another file",
                        db.display()
                    );
                }
            }
            let store = crate::lab::store::Store::open_read_only(&db)?;
            if let Some(out) = compact {
                let n = store.compact_copy(&out)?;
                eprintln!("{n} measurements in {}", out.display());
                return Ok(());
            }
            let n = match csv {
                Some(p) => {
                    let mut n = 0;
                    crate::lab::store::atomic::write_with(&p, |w| {
                        n = store.export_csv(w)?;
                        Ok(())
                    })?;
                    n
                }
                None => store
                    .export_csv(&mut std::io::stdout())
                    .context("cannot write the CSV to standard output")?,
            };
            eprintln!("{n} measurements exported");
            Ok(())
        }
        Command::Space {
            file,
            json,
            emit,
            context,
            pure,
        } => {
            let src = frontend::parse_file(
                &file,
                &Options {
                    pure_functions: pure,
                },
            )?;
            let (variants, skipped) =
                crate::engine::space::distinct_variants(&src, context.as_deref())?;
            for s in &skipped {
                eprintln!("polytune: warning: {s}");
            }
            let stem = file
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("variant")
                .to_string();
            if let Some(dir) = &emit {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                for (k, v) in variants.iter().enumerate() {
                    let p = dir.join(format!("{stem}.v{k}.c"));
                    if same_file(&p, &file) {
                        anyhow::bail!(
                            "refusing to overwrite the input {} with a variant; choose another --emit directory",
                            file.display()
                        );
                    }
                    crate::lab::store::atomic::write(&p, v.text.as_bytes())?;
                }
            }
            let total = Config::all().len();
            if json {
                let vs: Vec<_> = variants
                    .iter()
                    .enumerate()
                    .map(|(k, v)| {
                        json!({
                            "index": k,
                            "hash": v.hash,
                            "configs": v.configs.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
                            "bits": v.configs.iter().map(|c| c.bits()).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                let v = json!({
                    "file": file.display().to_string(),
                    "configurations": total,
                    "distinct": variants.len(),
                    "skipped": skipped,
                    "variants": vs,
                });
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                println!(
                    "{}: {} distinct variants of {total} configurations",
                    file.display(),
                    variants.len()
                );
                println!(
                    "{:>5}  {:<12}  {:>7}  canonical configuration",
                    "#", "hash", "configs"
                );
                for (k, v) in variants.iter().enumerate() {
                    println!(
                        "{k:>5}  {:<12}  {:>7}  {}",
                        &v.hash[..12],
                        v.configs.len(),
                        v.configs[0]
                    );
                }
            }
            Ok(())
        }
        Command::Scop {
            file,
            json,
            c,
            regenerate,
            output,
            pure,
            in_place,
            detect,
            mark,
            assume_no_alias,
            clang_args,
        } => {
            if output.is_some() && !regenerate && !mark {
                anyhow::bail!("--output is for --regenerate or --mark");
            }
            if let Some(out) = &output
                && !in_place
                && same_file(out, &file)
            {
                anyhow::bail!(
                    "refusing to overwrite the input {}: {} is the same file; pass --in-place to allow it",
                    file.display(),
                    out.display()
                );
            }
            if detect {
                let target = match (&output, in_place) {
                    (Some(o), _) => Some(o.clone()),
                    (None, true) => Some(file.clone()),
                    (None, false) => None,
                };
                return scop_detect(
                    &file,
                    &clang_args,
                    &pure,
                    assume_no_alias,
                    json,
                    mark,
                    target.as_deref(),
                );
            }
            let options = Options {
                pure_functions: pure,
            };
            let src = frontend::parse_file(&file, &options)?;
            if regenerate {
                let text = src.regenerated();
                return write_output(output.as_deref(), text.as_bytes());
            }
            let ctx = isl::Ctx::new();
            if json {
                let v = scop_json(&ctx, &src)?;
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                print!("{}", scop_text(&ctx, &src, c)?);
            }
            Ok(())
        }
    }
}

/// What `--detect` says without the `detect` feature.
pub const DETECT_MISSING: &str = "--detect needs libclang, and this polytune was built without the `detect` feature: rebuild it with `cargo build --release --features detect` (Debian/Ubuntu: apt install libclang-dev)";

/// The clang arguments of `--detect`: the user's, then the corpus header's
/// directory as a fallback. With `--assume-no-alias`, warns that the
/// result is only right if no arrays overlap.
#[cfg(feature = "detect")]
fn detect_options(
    clang_args: &[String],
    pure: &[String],
    assume_no_alias: bool,
) -> crate::frontend::detect::DetectOptions {
    let mut args = clang_args.to_vec();
    args.push(format!("-I{}", corpus_include().display()));
    if assume_no_alias {
        eprintln!("{ASSUME_NO_ALIAS_WARNING}");
    }
    crate::frontend::detect::DetectOptions {
        clang_args: args,
        pure_functions: pure.to_vec(),
        assume_no_alias,
    }
}

/// What `--assume-no-alias` prints on standard error.
pub const ASSUME_NO_ALIAS_WARNING: &str = "polytune: warning: --assume-no-alias: polytune assumes that the arrays and pointers of the detected regions never overlap (pointer and array parameters included); if any of them do, the optimized program computes a wrong result";

/// The detected SCoPs of `file`, ready for the engine.
#[cfg(feature = "detect")]
fn detected_source(
    file: &std::path::Path,
    clang_args: &[String],
    pure: &[String],
    assume_no_alias: bool,
) -> Result<SourceFile> {
    let d = crate::frontend::detect::detect_file(
        file,
        &detect_options(clang_args, pure, assume_no_alias),
    )?;
    for r in &d.rejected {
        eprintln!("polytune: note: {}", rejection_text(&d.path, r));
    }
    match d.source {
        Some(src) => {
            for r in &d.regions {
                eprintln!(
                    "polytune: detected a SCoP in {} at {}:{}-{}",
                    r.function,
                    file.display(),
                    r.first_line,
                    r.last_line
                );
            }
            Ok(src)
        }
        None => anyhow::bail!(
            "{}: no static control part detected (see the notes above for the loop nests that were rejected)",
            file.display()
        ),
    }
}

#[cfg(not(feature = "detect"))]
fn detected_source(
    _file: &std::path::Path,
    _clang_args: &[String],
    _pure: &[String],
    _assume_no_alias: bool,
) -> Result<SourceFile> {
    anyhow::bail!(DETECT_MISSING)
}

#[cfg(feature = "detect")]
fn rejection_text(path: &std::path::Path, r: &crate::frontend::detect::Rejection) -> String {
    format!(
        "rejected loop nest in {} (lines {}-{}): {}:{}:{}: {}",
        r.function,
        r.first_line,
        r.last_line,
        path.display(),
        r.line,
        r.column,
        r.reason
    )
}

/// `scop --detect`: lists the regions and rejections; with --mark, writes
/// the marked file.
#[cfg(feature = "detect")]
fn scop_detect(
    file: &std::path::Path,
    clang_args: &[String],
    pure: &[String],
    assume_no_alias: bool,
    json: bool,
    mark: bool,
    target: Option<&std::path::Path>,
) -> Result<()> {
    let d = crate::frontend::detect::detect_file(
        file,
        &detect_options(clang_args, pure, assume_no_alias),
    )?;
    let listing = if json {
        serde_json::to_string_pretty(&json!({
            "file": file.display().to_string(),
            "regions": d.regions,
            "rejected": d.rejected,
        }))? + "\n"
    } else {
        let mut o = format!(
            "{}: {} region(s) detected\n",
            file.display(),
            d.regions.len()
        );
        for (k, r) in d.regions.iter().enumerate() {
            o += &format!(
                "  region {k}: {} lines {}-{}\n",
                r.function, r.first_line, r.last_line
            );
        }
        for r in &d.rejected {
            o += &format!("  {}\n", rejection_text(file, r));
        }
        o
    };
    if !mark {
        print!("{listing}");
        return Ok(());
    }
    eprint!("{listing}");
    write_output(target, d.marked.as_bytes())
}

#[cfg(not(feature = "detect"))]
fn scop_detect(
    _file: &std::path::Path,
    _clang_args: &[String],
    _pure: &[String],
    _assume_no_alias: bool,
    _json: bool,
    _mark: bool,
    _target: Option<&std::path::Path>,
) -> Result<()> {
    anyhow::bail!(DETECT_MISSING)
}

/// `MIN..MAX` (or one number) for `--runs`.
fn parse_runs(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("`{s}` is not a run count: expected MIN..MAX (e.g. 5..7) or N");
    let (lo, hi) = match s.split_once("..") {
        Some((a, b)) => (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        ),
        None => {
            let n = s.trim().parse().map_err(|_| bad())?;
            (n, n)
        }
    };
    if lo == 0 || hi < lo {
        return Err(bad());
    }
    Ok((lo, hi))
}

fn measure(file: &std::path::Path, config: Option<&str>, run: &RunArgs, json: bool) -> Result<()> {
    use crate::lab::verify::Status;
    let dir = Scratch::new("measure")?;
    let bench = run.bench(file, dir.path())?;
    let (size, threads) = (&run.size, run.threads);
    let (orig, reference) = bench.reference(file, true);
    let mut report = json!({
        "file": file.display().to_string(),
        "compiler": bench.compiler,
        "size": size,
        "threads": threads,
        "original": orig,
    });
    let mut text = format!(
        "{} with {} ({}), {size}, {threads} thread(s)\n  original: {}\n",
        file.display(),
        bench.compiler.name,
        bench.compiler.version,
        describe(&orig)
    );
    if orig.status != Status::Ok {
        print_report(json, &report, &text)?;
        anyhow::bail!(
            "the original program does not run correctly: {}",
            orig.detail.trim()
        );
    }
    if let Some(c) = config {
        let c: Config = c.parse()?;
        let src = frontend::parse_file(file, &Options::default())?;
        let outcome = crate::engine::pipeline::optimize(&src, &c, None)?;
        for s in &outcome.skipped {
            eprintln!("polytune: warning: {s}");
        }
        let variant_path = dir.path().join(file.file_name().unwrap_or_default());
        std::fs::write(&variant_path, &outcome.text)?;
        let (var, _) = bench.measure(&variant_path, "variant", reference.as_ref(), c.omp, true);
        let speedup = match (&orig.timing, &var.timing) {
            (Some(o), Some(v)) if v.median > 0.0 => Some(o.median / v.median),
            _ => None,
        };
        text.push_str(&format!("  {c}: {}\n", describe(&var)));
        if let Some(s) = speedup {
            text.push_str(&format!("  speedup: {s:.2}x\n"));
        }
        report["config"] = json!(c.to_string());
        report["variant"] = json!(var);
        report["speedup"] = json!(speedup);
    }
    drop(dir);
    print_report(json, &report, &text)
}

/// The shipped models of a compiler.
fn shipped_models(compiler: &str) -> PathBuf {
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(compiler);
    if built.exists() {
        built
    } else {
        PathBuf::from("models").join(compiler)
    }
}

/// `optimize` without a configuration: predict, run the candidates,
/// keep the fastest correct program (the original when nothing beats it).
fn learned_optimize(
    file: &std::path::Path,
    src: &SourceFile,
    a: &LearnedArgs,
    context: Option<&str>,
) -> Result<String> {
    use crate::app::select::{Setup, Strategy, select};
    use crate::learn::saved::SavedModel;
    let strategy: Strategy = a.strategy.parse().map_err(|e: String| anyhow::anyhow!(e))?;
    let dir = a
        .model
        .clone()
        .unwrap_or_else(|| shipped_models(&a.run.compiler));
    let models = SavedModel::load_dir(&dir).with_context(|| {
        format!(
            "no trained models for {} (train some with `polytune train --db runs.sqlite -o {}`, or pass --model DIR or --config T)",
            a.run.compiler,
            dir.display()
        )
    })?;
    let setup = Setup {
        compiler: a.run.compiler()?,
        size: a.run.size.clone(),
        include: a.run.include_for(file),
        protocol: crate::lab::runner::Protocol {
            threads: a.run.threads,
            timeout: std::time::Duration::from_secs(a.run.timeout),
            memory_limit: a.run.memory_limit(),
            ..Default::default()
        },
        strategy,
        shots: a.shots,
        no_run: a.no_run,
        confirm_rounds: 7,
    };
    let chosen = select(file, src, &models, &setup, context, &mut std::io::stderr())?;
    Ok(chosen.text)
}

/// Averages over kernels per model: the paper's summary rows.
fn summary_md(e: &crate::learn::evaluate::Evaluation) -> String {
    let mut s = format!(
        "\n| model | 1-shot speedup | 1-shot % of Opt | {n}-shot speedup | {n}-shot % of Opt |\n|---|---:|---:|---:|---:|\n",
        n = e.shots
    );
    for (name, s1, p1, sn, pn) in e.summary() {
        let f = |v: f64, d: usize| {
            if v.is_nan() {
                "–".to_string()
            } else {
                format!("{v:.*}", d)
            }
        };
        s += &format!(
            "| {name} | {} | {} | {} | {} |\n",
            f(s1, 2),
            f(p1, 0),
            f(sn, 2),
            f(pn, 0)
        );
    }
    s
}

fn summary_json(e: &crate::learn::evaluate::Evaluation) -> serde_json::Value {
    json!(e
        .summary()
        .into_iter()
        .map(|(n, s1, p1, sn, pn)| json!({"model": n, "one_shot": s1, "one_shot_pct_opt": p1, "n_shot": sn, "n_shot_pct_opt": pn}))
        .collect::<Vec<_>>())
}

fn split_flags(f: &str) -> Vec<String> {
    f.split_whitespace().map(String::from).collect()
}

fn describe(m: &crate::lab::verify::Measurement) -> String {
    match &m.timing {
        Some(t) => format!(
            "{} median {:.6} s over {} runs, spread {:.1}%",
            m.status.as_str(),
            t.median,
            t.samples.len(),
            100.0 * t.spread
        ),
        None => format!(
            "{}: {}",
            m.status.as_str(),
            m.detail.lines().next().unwrap_or("")
        ),
    }
}

fn print_report(json: bool, report: &serde_json::Value, text: &str) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print!("{text}");
    }
    Ok(())
}

/// The corpus header's directory, found next to the executable's source
/// tree or the current directory.
fn corpus_include() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("polybench/include");
    if built.exists() {
        built
    } else {
        PathBuf::from("polybench/include")
    }
}

/// The address-space limit of child programs: the default (half of the
/// machine's memory) unless given.
fn memory_limit(given: Option<crate::lab::confine::MemoryLimit>) -> Option<u64> {
    match given {
        Some(m) => m.0,
        None => Some(crate::lab::confine::default_memory_limit()),
    }
}

/// Whether two paths name one file (device and inode: hard links,
/// symbolic links and `/dev/stdout` aliases included).
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    crate::lab::store::atomic::same_file(a, b)
}

/// Writes a command's text output: to `out` atomically (a failure leaves
/// the file as it was, with --in-place the input), or to standard output.
fn write_output(out: Option<&std::path::Path>, text: &[u8]) -> Result<()> {
    match out {
        Some(p) => crate::lab::store::atomic::write(p, text)?,
        None => std::io::stdout()
            .write_all(text)
            .context("cannot write to standard output")?,
    }
    Ok(())
}

/// isl's normal form of a set or a map written by the front end.
fn set(ctx: &isl::Ctx, text: &str) -> Result<String> {
    isl::normalize_set(ctx, text).with_context(|| format!("isl rejected the domain `{text}`"))
}

fn map(ctx: &isl::Ctx, text: &str) -> Result<String> {
    isl::normalize_map(ctx, text).with_context(|| format!("isl rejected the relation `{text}`"))
}

fn scop_lines(src: &SourceFile, s: &Scop) -> (usize, usize) {
    (
        src.line_col(s.region.open.start).0,
        src.line_col(s.region.close.start).0,
    )
}

fn statement_text(src: &SourceFile, st: &crate::frontend::scop::Statement) -> String {
    src.text[st.span.start..st.span.end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// How `scop` prints a SCoP's sets and relations: simplified by isl, or,
/// for a SCoP beyond the engine's limits (where isl would take minutes:
/// 26 s for a 600-deep nest; 0.3 ms per statement), as built.
struct IslView<'a> {
    ctx: &'a isl::Ctx,
    simplify: bool,
}

impl<'a> IslView<'a> {
    fn new(ctx: &'a isl::Ctx, s: &Scop) -> IslView<'a> {
        IslView {
            ctx,
            simplify: crate::engine::pipeline::check_limits(s).is_ok(),
        }
    }

    fn set(&self, text: &str) -> Result<String> {
        if self.simplify {
            set(self.ctx, text)
        } else {
            Ok(isl::unmangle_text(text))
        }
    }

    fn map(&self, text: &str) -> Result<String> {
        if self.simplify {
            map(self.ctx, text)
        } else {
            Ok(isl::unmangle_text(text))
        }
    }
}

fn scop_text(ctx: &isl::Ctx, src: &SourceFile, with_c: bool) -> Result<String> {
    use std::fmt::Write as _;
    let mut o = String::new();
    let name = src.path.display();
    for s in &src.scops {
        let (first, last) = scop_lines(src, s);
        writeln!(o, "SCoP {} at {name}:{first}-{last}", s.index)?;
        writeln!(o, "  parameters: [{}]", s.parameters.join(", "))?;
        let arrays: Vec<String> = s
            .arrays
            .iter()
            .map(|a| {
                let dims = if a.rank == 0 {
                    String::new()
                } else {
                    format!("[{}d]", a.rank)
                };
                let rw = if a.written { "" } else { " (read-only)" };
                format!("{}{dims}{rw}", a.name)
            })
            .collect();
        writeln!(o, "  arrays: {}", arrays.join(", "))?;
        let isl = IslView::new(ctx, s);
        if let Err(e) = crate::engine::pipeline::check_limits(s) {
            writeln!(
                o,
                "  note: isl notation as built, not simplified by isl: {e}"
            )?;
        }
        for st in &s.statements {
            let (l, c) = src.line_col(st.span.start);
            writeln!(
                o,
                "  {} at {name}:{l}:{c}: {}",
                st.name(),
                statement_text(src, st)
            )?;
            writeln!(o, "    domain:   {}", isl.set(&s.domain_of(st))?)?;
            writeln!(o, "    schedule: {}", isl.map(&s.schedule_of(st))?)?;
            writeln!(o, "    reads:    {}", isl.map(&s.reads_of(st))?)?;
            writeln!(o, "    writes:   {}", isl.map(&s.writes_of(st))?)?;
        }
        if !s.division_checks.is_empty() {
            let d: Vec<String> = s
                .division_checks
                .iter()
                .map(|c| isl::unmangle_text(&c.dividend.to_string()))
                .collect();
            writeln!(
                o,
                "  note: C division truncates; the model floors, assuming these are never negative: {}",
                d.join(", ")
            )?;
        }
        if isl.simplify {
            match crate::engine::model::run_time_check(s, None) {
                Ok(Some(check)) => writeln!(o, "  run-time check: {check}")?,
                Ok(None) => {}
                Err(e) => writeln!(o, "  not transformable: {e}")?,
            }
        }
        if with_c {
            writeln!(o, "  C:")?;
            o.push_str(&s.to_c("    "));
        }
    }
    Ok(o)
}

fn scop_json(ctx: &isl::Ctx, src: &SourceFile) -> Result<serde_json::Value> {
    let mut scops = Vec::new();
    for s in &src.scops {
        let (first, last) = scop_lines(src, s);
        let isl = IslView::new(ctx, s);
        let mut stmts = Vec::new();
        for st in &s.statements {
            let (l, c) = src.line_col(st.span.start);
            stmts.push(json!({
                "name": st.name(),
                "line": l,
                "column": c,
                "text": statement_text(src, st),
                "iterators": st.iterators,
                "domain": isl.set(&s.domain_of(st))?,
                "schedule": isl.map(&s.schedule_of(st))?,
                "reads": isl.map(&s.reads_of(st))?,
                "writes": isl.map(&s.writes_of(st))?,
            }));
        }
        scops.push(json!({
            "index": s.index,
            "first_line": first,
            "last_line": last,
            "parameters": s.parameters,
            "arrays": s.arrays,
            "domain": isl.set(&s.domains())?,
            "schedule": isl.map(&s.schedules())?,
            "reads": isl.map(&s.reads())?,
            "writes": isl.map(&s.writes())?,
            "division_dividends": s.division_checks.iter().map(|c| isl::unmangle_text(&c.dividend.to_string())).collect::<Vec<_>>(),
            "run_time_check": if isl.simplify { crate::engine::model::run_time_check(s, None).ok().flatten() } else { None },
            "statements": stmts,
            "c": s.to_c(""),
        }));
    }
    Ok(json!({ "file": src.path.display().to_string(), "scops": scops }))
}

#[cfg(all(test, not(feature = "detect")))]
mod tests {
    #[test]
    fn detect_without_the_feature_says_how_to_get_it() {
        let e = super::detected_source(std::path::Path::new("x.c"), &[], &[], false).unwrap_err();
        assert!(e.to_string().contains("--features detect"), "{e}");
        let e = super::scop_detect(
            std::path::Path::new("x.c"),
            &[],
            &[],
            false,
            false,
            false,
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("rebuild it with"), "{e}");
    }
}
