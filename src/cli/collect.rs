//! `polytune collect`: a training campaign into a SQLite database.

use super::Ui;
use super::args::{
    BuildArgs, CompileLine, LearnArgs, OutputArgs, ProgramArgs, RunArgs, corpus_include,
};
use super::progress::Progress;
use crate::app::campaign::Event;
use crate::lab::runner::Protocol;
use anyhow::Result;
use std::path::PathBuf;

/// Run or resume a training campaign into a SQLite store (hours).
///
/// Run (or resume) a training campaign into a SQLite database (hours:
/// every distinct variant of every kernel is compiled and timed).
///
/// Measures the original and every distinct variant of every kernel
/// with every compiler: verified against the original's output, then
/// timed. Programs in the corpus style (polytune_bench.h) use its
/// protocol; any other program is measured through polytune's
/// instrumentation, built with the compile line after `--` (or --build)
/// and run with --run-args (or --run); a bare kernel gets a driver
/// (--param). Results are written as they arrive; rerunning the same
/// command after an interruption skips what is stored. Each kernel's
/// verified measurements are also appended, with their features, to the
/// store of this machine's runs that the learned `optimize` learns from
/// (--store, --no-learn).
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Kernel files or directories (searched recursively).
    #[arg(required_unless_present = "status")]
    paths: Vec<PathBuf>,
    /// Results database (created if missing).
    #[arg(long)]
    db: PathBuf,
    #[command(flatten)]
    build: BuildArgs,
    #[command(flatten)]
    run: RunArgs,
    /// Measure at most N variants per kernel (spread over the space).
    #[arg(long, value_name = "N")]
    max_variants: Option<usize>,
    /// Which configurations to measure: the paper's space, or also a sample of
    /// the extended space.
    ///
    /// `paper`, every distinct variant of the paper's space, or `extended`,
    /// those and per kernel --sample configurations drawn uniformly from the
    /// extended space (tile sizes 1, 8, 16, 32, 64, 128 or 256 per dimension,
    /// loops run as reductions or not, register tiles 4x8, 8x4, 4x16, 8x16 or
    /// none, and the paper's other choices), deduplicated by generated code: a
    /// draw with a paper variant's code is stored with it, not measured again.
    #[arg(long, value_enum, default_value = "paper")]
    space: SpaceArg,
    /// Configurations drawn per kernel with --space extended.
    #[arg(long, value_name = "N")]
    sample: Option<usize>,
    /// The seed of --space extended's draws (with the kernel's name).
    ///
    /// The same seed draws the same configurations, so a campaign resumes, and
    /// a larger --sample draws a smaller one's first.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Samples per program: at least MIN, more up to MAX while their spread is
    /// wide.
    ///
    /// More samples are taken, up to MAX, while the spread exceeds 10%. The
    /// verification run is the warm-up and, as the kernel is timed inside the
    /// program, also the first sample.
    #[arg(long, value_name = "MIN..MAX", default_value = "5..7", value_parser = parse_runs)]
    runs: (usize, usize),
    /// A variant this many times slower than its baseline gets only two
    /// samples.
    ///
    /// Slower in its verification run; such a variant can never be chosen.
    #[arg(long, value_name = "X", default_value_t = 3.0)]
    slow_factor: f64,
    /// Build N variants at once.
    ///
    /// Without --timing-cores they build in batches of N between timed runs
    /// (nothing compiles while anything is timed); with it, beside the timed
    /// runs on the other cores.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    jobs: u16,
    /// Run every program measured (and only those) on these cores, e.g. `0-1`.
    ///
    /// Cores as taskset names them. The compilers run on the others, beside the
    /// timed runs: on a many-core node the campaign is then not compile-bound.
    /// At least as many cores as --threads.
    #[arg(long, value_name = "LIST")]
    timing_cores: Option<crate::lab::confine::Cores>,
    /// While this file exists, wait before the next measurement.
    ///
    /// This lets other work use the machine without disturbing a timed run.
    #[arg(long, value_name = "FILE")]
    pause_file: Option<PathBuf>,
    /// Measure only shard K of N, a deterministic share of the campaign.
    ///
    /// A share of the kernel × compiler × variant units, cut by expected cost
    /// (see --costs), each kernel's original timed again in every shard that
    /// measures its variants. Give each shard its own --db; `polytune store
    /// merge` joins them.
    #[arg(long, value_name = "K/N")]
    shard: Option<crate::app::campaign::Shard>,
    /// A store whose measurements give the expected cost of each unit when
    /// cutting shards.
    ///
    /// E.g. an earlier campaign's; without it the shards get equal numbers of
    /// units. Every shard must be given the same one.
    #[arg(long, value_name = "STORE")]
    costs: Option<PathBuf>,
    /// Instead of measuring here, submit the campaign to Slurm as a job array
    /// of N shards.
    ///
    /// One whole node each (`--exclusive`), and a job that merges their stores
    /// into --db once all have succeeded. The binary and the kernels are staged
    /// in the job directory `DB.slurm` (on a file system the nodes share);
    /// submitting again resumes the shards.
    #[arg(long, value_name = "N", conflicts_with = "shard", value_parser = clap::value_parser!(u16).range(1..))]
    slurm: Option<u16>,
    /// Extra sbatch options for the jobs of --slurm, e.g. "--partition=x
    /// --time=4:00:00".
    #[arg(
        long,
        value_name = "OPTIONS",
        requires = "slurm",
        allow_hyphen_values = true
    )]
    sbatch: Option<String>,
    /// Show the progress of the campaign submitted for --db with --slurm.
    ///
    /// Every task's state and count of measurements, and the merge.
    #[arg(long, conflicts_with_all = ["slurm", "shard"])]
    status: bool,
    /// Once a kernel's variants are measured, time its K fastest again against
    /// the original.
    ///
    /// They are timed interleaved with the original (one run of each per round,
    /// so that the machine's load hits them alike), and the medians of those
    /// rounds stored: the fastest of a few hundred noisy measurements is the
    /// likeliest to be lucky. A variant that drops out of the top lets the next
    /// one in, confirmed in a further pass (three at most). On a store already
    /// measured, rerunning the campaign with it only confirms. Needs the whole
    /// campaign: give it to the merged store of a sharded one.
    #[arg(long, value_name = "K", conflicts_with_all = ["slurm", "shard"])]
    confirm_top: Option<usize>,
    /// Interleaved rounds of --confirm-top, after one round of warm-up.
    #[arg(long, value_name = "R", default_value_t = 9, requires = "confirm_top", value_parser = clap::value_parser!(u16).range(1..))]
    confirm_rounds: u16,
    #[command(flatten)]
    learn: LearnArgs,
    #[command(flatten)]
    program: ProgramArgs,
    #[command(flatten)]
    compile_line: CompileLine,
    #[command(flatten)]
    output: OutputArgs,
}

/// `--space`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SpaceArg {
    /// The paper's 12-bit space.
    Paper,
    /// The paper's space and a sample beyond it (--sample).
    Extended,
}

/// The configurations `--space`, `--sample` and `--seed` ask for.
fn space(a: &Args) -> Result<crate::app::campaign::Space, super::Usage> {
    use crate::app::campaign::Space;
    match (a.space, a.sample) {
        (SpaceArg::Paper, None) => Ok(Space::Paper),
        (SpaceArg::Paper, Some(_)) => Err(super::Usage(
            "--sample draws from the extended space: give --space extended with it".into(),
        )),
        (SpaceArg::Extended, None) => Err(super::Usage(
            "--space extended measures a sample of the extended space: give its size, --sample N"
                .into(),
        )),
        (SpaceArg::Extended, Some(n)) => {
            let space = crate::engine::extended::Extended::default();
            let beyond = space.beyond_paper();
            if n as u64 > beyond {
                return Err(super::Usage(format!(
                    "--sample {n} is more than the {beyond} configurations of the extended space beyond the paper's"
                )));
            }
            Ok(Space::Extended {
                space: Box::new(space),
                sample: n,
                seed: a.seed,
            })
        }
    }
}

pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    if a.status {
        let s = crate::app::slurm::status(&a.db)?;
        return super::out(&if a.output.json {
            super::render::json_text(&s)?
        } else {
            render_status(&s)
        });
    }
    if a.costs.is_some() && a.shard.is_none() && a.slurm.is_none() {
        return Err(
            super::Usage("--costs cuts shards: give it with --shard or --slurm".into()).into(),
        );
    }
    let space = space(&a)?;
    if let Some(n) = a.slurm {
        return submit(&a, n as usize, ui);
    }
    let compilers = a.build.compilers()?;
    let kernels = crate::app::campaign::kernel_files(&a.paths)?;
    if kernels.is_empty() {
        anyhow::bail!("no .c file under the given paths");
    }
    let costs = match &a.costs {
        Some(p) => crate::lab::store::Store::open_read_only(p)?.unit_costs(a.run.size)?,
        None => Vec::new(),
    };
    let mut store = crate::lab::store::Store::open_exclusive(&a.db)?;
    let learn = learn_store(&a, ui);
    let campaign = crate::app::campaign::Campaign {
        kernels,
        compilers,
        size: a.run.size,
        protocol: Protocol {
            warmup: 0,
            min_runs: a.runs.0,
            max_runs: a.runs.1,
            verification_is_sample: true,
            cores: a.timing_cores,
            // The dataset's fixed counts: its measurements stay comparable.
            adaptive: None,
            ..a.run.protocol()
        },
        slow_factor: Some(a.slow_factor).filter(|f| *f > 0.0),
        max_variants: a.max_variants,
        space,
        include: a
            .build
            .include
            .iter()
            .cloned()
            .chain([corpus_include()])
            .collect(),
        feature_size: crate::lab::size::Size::Small,
        pause_file: a.pause_file,
        program: crate::app::campaign::Program {
            extra: a.compile_line.words.clone(),
            run_args: match &a.program.run_args {
                Some(r) => crate::lab::build::split_args(r).map_err(super::Usage)?,
                None => Vec::new(),
            },
            build: a.program.build.clone(),
            run: a.program.run.clone(),
            tolerance: a.program.tolerance(),
            params: a.program.param.clone(),
            size_from_footprint: a.program.size_from_footprint,
        },
        shard: a.shard,
        costs,
        jobs: a.jobs as usize,
        confirm: a
            .confirm_top
            .filter(|k| *k > 0)
            .map(|top| crate::app::campaign::Confirm {
                top,
                rounds: a.confirm_rounds as usize,
            }),
        learn,
    };
    let confirming = campaign.confirm.is_some();
    let mut p = Progress::new(ui);
    p.doing("enumerating the variants");
    let r = crate::app::campaign::run(&campaign, &mut store, &mut |e| show(&mut p, e))?;
    p.finish();
    super::out(&if a.output.json {
        super::render::json_text(&r)?
    } else {
        summary_text(&a.db, &r, confirming)
    })
}

/// The store of this machine's runs the campaign appends to: none with
/// --no-learn, or when it is --db itself (appended to, the campaign's
/// own store would have its measurements replaced; said).
fn learn_store(a: &Args, ui: &Ui) -> Option<PathBuf> {
    let store = a.learn.store()?;
    if super::args::same_file(&store, &a.db) {
        ui.warn(format_args!(
            "the store of this machine's runs is --db, {}: the campaign does not append its measurements to it",
            a.db.display()
        ));
        return None;
    }
    Some(store)
}

/// A finished campaign's summary line.
fn summary_text(
    db: &std::path::Path,
    r: &crate::app::campaign::Report,
    confirming: bool,
) -> String {
    let s = r.summary;
    format!(
        "{}: {} measured, {} already stored, {} failed{}; {} measurements in total{}\n",
        db.display(),
        s.measured,
        s.skipped,
        s.failed,
        if confirming {
            format!(", {} confirmed", s.confirmed)
        } else {
            String::new()
        },
        r.measurements,
        match &r.learned {
            Some(l) => format!(
                "; {} appended to the store of this machine's runs, {}",
                l.rows,
                l.store.display()
            ),
            None => String::new(),
        }
    )
}

/// Submits the campaign to Slurm (`--slurm N`): every task runs this
/// command line's `collect` arguments, the kernel paths and --costs as
/// staged, with its own --shard and --db.
fn submit(a: &Args, shards: usize, ui: &Ui) -> Result<()> {
    use crate::app::slurm::staged;
    use std::ffi::OsString;
    let argv: Vec<OsString> = std::env::args_os().collect();
    let start = argv
        .iter()
        .position(|w| w == "collect")
        .map_or(argv.len(), |i| i + 1);
    let mut args = Vec::new();
    let mut words = argv[start..].iter();
    let mut stage: Vec<(PathBuf, PathBuf)> =
        a.paths.iter().map(|p| (p.clone(), staged(p))).collect();
    while let Some(w) = words.next() {
        let text = w.to_string_lossy().into_owned();
        if text == "--" {
            args.push(text);
            args.extend(words.by_ref().map(|w| w.to_string_lossy().into_owned()));
            break;
        }
        let (name, inline) = match text.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (text.clone(), None),
        };
        match name.as_str() {
            "--slurm" | "--sbatch" | "--db" | "--costs" => {
                if inline.is_none() {
                    words.next();
                }
            }
            _ => match a.paths.iter().find(|p| p.as_os_str() == w.as_os_str()) {
                Some(p) => args.push(staged(p).to_string_lossy().into_owned()),
                None => args.push(text),
            },
        }
    }
    if let Some(c) = &a.costs {
        stage.push((c.clone(), PathBuf::from("costs.sqlite")));
        args.extend(["--costs".to_string(), "costs.sqlite".to_string()]);
    }
    // Corpus-style kernels find their header there when the build's own
    // directory is not on the node.
    stage.push((corpus_include(), PathBuf::from("polybench/include")));
    let s = crate::app::slurm::submit(&crate::app::slurm::Submission {
        db: a.db.clone(),
        shards,
        binary: std::env::current_exe()?,
        stage,
        collect_args: args,
        task_options: |shard, db| ["--shard", shard, "--db", db].map(str::to_string).to_vec(),
        sbatch: match &a.sbatch {
            Some(t) => crate::lab::build::split_args(t).map_err(super::Usage)?,
            None => Vec::new(),
        },
    })?;
    ui.note(format_args!(
        "job directory {}; follow it with `polytune collect --status --db {}`",
        s.dir.display(),
        a.db.display()
    ));
    super::out(&if a.output.json {
        super::render::json_text(&s)?
    } else {
        format!(
            "submitted job array {} ({} shards) and merge job {} into {}\n",
            s.array,
            s.shards,
            s.merge,
            s.db.display()
        )
    })
}

/// `collect --status` as text.
fn render_status(s: &crate::app::slurm::Status) -> String {
    let mut out = format!(
        "{}: job array {} ({} shards), merge job {}\n",
        s.submitted.db.display(),
        s.submitted.array,
        s.submitted.shards,
        s.submitted.merge
    );
    for t in &s.tasks {
        out += &format!(
            "  shard {}/{}: {}, {} measured{}\n",
            t.shard,
            s.submitted.shards,
            t.state.to_lowercase(),
            t.measured,
            t.planned
                .map(|p| format!(" of {p} programs"))
                .unwrap_or_default()
        );
    }
    out += &format!(
        "  merge: {}{}\n",
        s.merge_state.to_lowercase(),
        if s.merged {
            ", merged store written"
        } else {
            ""
        }
    );
    if !s.failed.is_empty() {
        out += &format!(
            "  shards {:?} did not finish: submit the same `collect --slurm` command again to resume them (nothing measured is measured again)\n",
            s.failed
        );
    }
    out
}

/// A campaign's progress event on standard error.
fn show(p: &mut Progress, e: Event) {
    match e {
        Event::Skipped { kernel, reason } => {
            p.note(format_args!("warning: {}: {reason}", kernel.display()))
        }
        Event::Sampled { name, drawn, new } => p.note(format_args!(
            "{name}: {drawn} configurations drawn from the extended space, {new} new variants"
        )),
        Event::Planned { total } => p.set(0, total, "starting", None, false),
        Event::Kernel { name, compiler } => p.doing(&format!("{name} {compiler}: the original")),
        Event::Resumed => p.note("resumed"),
        Event::NoFeatures { name, error } => p.note(format_args!("{name}: no features: {error}")),
        Event::OriginalFailed {
            name,
            compiler,
            status,
            detail,
        } => p.note(format_args!(
            "{name}: the original fails with {compiler} ({}); its variants are skipped{}",
            status.as_str(),
            if detail.is_empty() {
                String::new()
            } else {
                format!(":\n{}", detail.trim_end())
            }
        )),
        Event::Variant {
            done,
            total,
            name,
            compiler,
            status,
            so_far,
            each,
            eta,
        } => p.set(
            done,
            total,
            &format!(
                "{name} {compiler}: {} measured, {} already stored, {} failed; {each:.1} s each",
                so_far.measured, so_far.skipped, so_far.failed
            ),
            Some(eta),
            status.is_some_and(|s| s != crate::lab::verify::Status::Ok),
        ),
        Event::Stale {
            name,
            compiler,
            stale,
            pending,
        } => p.note(format_args!(
            "{name} {compiler}: the store holds {stale} measured variants whose code no variant of this space has (generated by another polytune, or drawn with another seed); they are kept but do not count as done, so {pending} are measured"
        )),
        Event::NotLearned {
            name,
            compiler,
            error,
            stops,
        } => p.note(if stops {
            // The clause follows the error's first line, before any help.
            let (what, help) = error.split_once('\n').unwrap_or((error, ""));
            format!(
                "warning: {what}; the campaign goes on without appending to it (--db is not affected){}{help}",
                if help.is_empty() { "" } else { "\n" }
            )
        } else {
            format!(
                "warning: {name} {compiler}: not appended to the store of this machine's runs: {error}"
            )
        }),
        Event::Paused { file } => p.note(format_args!("paused while {} exists", file.display())),
        Event::Confirming {
            name,
            compiler,
            pass,
            variants,
        } => p.doing(&format!(
            "{name} {compiler}: confirming {variants} of the fastest variants (pass {pass})"
        )),
        Event::Confirmed {
            name,
            compiler,
            config,
            before,
            after,
        } => p.note(format_args!(
            "{name} {compiler}: {config}: {before:.2}x in the campaign, {after:.2}x confirmed"
        )),
        Event::ConfirmFailed {
            name,
            compiler,
            detail,
        } => p.note(format_args!("{name} {compiler}: confirmation: {detail}")),
    }
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
