//! `polytune optimize`: one configuration applied to a file, or the
//! learned selection (predict, then compile and time candidates).

use super::Ui;
use super::args::{
    BuildArgs, ConfigArgs, LearnArgs, ProgramArgs, RankingBy, RunArgs, models_to_read,
    refuse_overwrite, write_output,
};
use super::progress::Progress;
use super::source::SourceArgs;
use crate::app::select::{Draws, Event, Report, Setup, Strategy, default_strategy, select};
use crate::frontend::{self, SourceFile};
use crate::learn::saved::SavedModel;
use crate::learn::search::drive::DEFAULT_MIN_EI;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// Transform a C file's SCoPs: by a configuration, or learned (minutes).
///
/// Transform the SCoPs of a C file: with a configuration (fast), or by
/// learned selection (slow: compiles and times candidates for minutes).
///
/// With `--config T` and/or the named flags (--fuse, --tile, --wave,
/// --omp, --prevec, --simd, --uj, --rb, --priv) the configuration is applied
/// directly: no compiler runs. A kernel's SCoP takes well under a second;
/// a large one (dozens of statements, deep nests) seconds, and one that
/// needs more than 10 s (polytune's limit per SCoP and configuration) is
/// left unchanged with that reason: a file of many large SCoPs can take
/// minutes.
/// Every transformation is proven legal; a SCoP that cannot be handled is
/// left unchanged (and said so on stderr), and so is a register tile the
/// rules refuse (with the reason).
///
/// Without a configuration, the trained models predict the best variants
/// and polytune compiles, verifies and times the original and up to
/// --budget candidates with the back-end compiler, then keeps the fastest
/// correct program: this takes minutes (each candidate is run at least 5
/// times at --size). --no-run emits the top prediction without running
/// anything.
#[derive(clap::Args)]
// The learned selection's options, named by their argument groups (a
// flattened struct's group is named after it): refused beside a
// configuration. `-I` and the compile line serve both modes.
#[command(mut_group("configuration", |g| g.conflicts_with_all(
    ["LearnedArgs", "LearnArgs", "RunArgs", "ProgramArgs", "compiler", "cflags"]
)))]
pub(crate) struct Args {
    /// C source file (never modified unless --in-place).
    file: PathBuf,
    #[command(flatten, next_help_heading = "Configuration")]
    config: ConfigArgs,
    /// Parameter context in isl notation (default: every parameter >= 1).
    #[arg(long)]
    context: Option<String>,
    /// Output file (default: standard output).
    #[arg(short, long, help_heading = "Output")]
    output: Option<PathBuf>,
    /// Allow --output to be the input file.
    #[arg(long, help_heading = "Output")]
    in_place: bool,
    #[command(flatten, next_help_heading = "Finding the SCoPs")]
    source: SourceArgs,
    /// With --detect: keep the inserted `#pragma scop` / `#pragma endscop` lines.
    #[arg(long, requires = "detect")]
    mark: bool,
    #[command(flatten, next_help_heading = "Learned selection")]
    learned: LearnedArgs,
    // Apart from `LearnedArgs` (shared with `collect`): a flattened
    // struct with a flattened field has no argument group of its own.
    #[command(flatten, next_help_heading = "Learned selection")]
    learn: LearnArgs,
    #[command(flatten, next_help_heading = "Build and run")]
    build: BuildArgs,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    program: ProgramArgs,
}

/// The learned selection (used when no configuration is given).
#[derive(clap::Args, Clone)]
struct LearnedArgs {
    /// Directory of trained models [default: models/<compiler> here, else the
    /// shipped models]
    ///
    /// models/<compiler> in the current directory is where `train` writes them.
    #[arg(long, value_name = "DIR")]
    model: Option<PathBuf>,
    /// Candidates to run besides the original: unique variants at most,
    /// whatever the strategy.
    ///
    /// --shots is the same option.
    #[arg(
        long = "budget",
        visible_alias = "shots",
        value_name = "N",
        default_value_t = 6
    )]
    shots: usize,
    /// How candidates are chosen: bo, diverse, multi-model, model:NAME, random,
    /// local or bo-plain [default: bo, diverse for one candidate]
    ///
    /// multi-model (each model's best guess in turn), diverse (the models'
    /// ensemble, candidates spread over the space), model:NAME (one model's top
    /// N), random, local (greedy local search) or bo (Bayesian optimization
    /// with the models as its prior; bo-plain without them). bo and local
    /// choose each candidate from the runs before it. Default: diverse for a
    /// single candidate, bo from 2.
    ///
    /// How close each comes to the best variant, replayed over the shipped
    /// dataset with each kernel new to the models: see `polytune simulate` or
    /// models/simulation-gcc.md and models/simulation-clang.md.
    #[arg(long, value_parser = parse_strategy)]
    strategy: Option<Strategy>,
    /// Stop proposing candidates once they have taken SECONDS.
    ///
    /// SECONDS of building, verifying and timing them; a candidate under way is
    /// finished. The original's runs before and the winner's head-to-head
    /// confirmation after are not counted.
    #[arg(long, value_name = "SECONDS", value_parser = non_negative)]
    time_budget: Option<f64>,
    /// Then refine: run up to N more programs, each one step from the fastest
    /// so far (0: none).
    ///
    /// Most steps lead beyond the paper's space the models were trained on: a
    /// packed register tile shaped for the target's vectors (6x32, 8x24 with
    /// AVX-512; 4x12, 6x8 with AVX2) and its panels four times as wide, a 4x16 one, uneven parallel loops dealt in turn
    /// (cyc=1), diamond tiles in time, tiles
    /// twice or half as large, loops run as reductions, privatized or expanded scalars, more unrolling
    /// (in that order; a step the engine refuses or whose code was run before
    /// is not run).
    #[arg(long, value_name = "N", default_value_t = crate::app::select::DEFAULT_REFINE)]
    refine: usize,
    /// bo, bo-plain: stop when the next candidate's expected improvement falls
    /// below this share.
    ///
    /// The expected improvement of the next candidate over the fastest of the
    /// original and the candidates measured (0.01: 1% faster); 0 never stops
    /// early.
    #[arg(long, value_name = "SHARE", default_value_t = DEFAULT_MIN_EI, value_parser = non_negative)]
    min_ei: f64,
    /// Also rank N configurations drawn at random beyond the paper's space
    /// (needs models that know it).
    ///
    /// The draws (register tiles, packing, free tile sizes, unroll-and-jam of
    /// two loops, reductions, privatized scalars) are ranked beside the paper's
    /// variants; the strategy then chooses among all of them. Needs models
    /// trained on a campaign that measured the extended space (`collect --space
    /// extended --sample N`). The draws depend on --seed and the file's name
    /// only, as `collect`'s do: for a corpus kernel, `--sample 30` searches the
    /// space `simulate` replays on such a dataset. Default: 30 with models that
    /// know the extended space, 0 (the paper's space and the refinement only)
    /// with models of the paper's space.
    #[arg(long, value_name = "N")]
    sample: Option<usize>,
    /// The seed of --sample's draws.
    #[arg(long, value_name = "S", default_value_t = 1, requires = "sample")]
    seed: u64,
    /// Which model ranks the variants for the search: variant or models
    /// [default: variant where the models directory has its table]
    ///
    /// variant: the ranker of each variant's own features (its loops,
    /// accesses and operations after the transformation, at the parameter
    /// values the program runs with, against this machine's caches and
    /// measured peaks), fitted to the measured variants in variants.json
    /// beside the models; the search follows it alone. models: the paper's
    /// six models, from the original's counters and the configuration. The
    /// six models' predictions are in the report either way. With --no-run,
    /// the six models (the ranker needs one run of the program).
    #[arg(long, value_enum)]
    ranking: Option<RankingBy>,
    /// Do not run anything: emit the top prediction (1-shot).
    #[arg(long)]
    no_run: bool,
    /// Print the selection's report as JSON on standard output.
    ///
    /// The report holds the candidates, their runs and the choice; the program
    /// goes to --output, and into the report's `program` without one.
    #[arg(long)]
    json: bool,
}

pub(super) fn non_negative(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x >= 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!("`{s}` is not a number >= 0")),
    }
}

fn parse_strategy(s: &str) -> Result<Strategy, String> {
    s.parse()
}

pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    refuse_overwrite(a.output.as_deref(), &a.file, a.in_place)?;
    // A SCoP beyond the engine's statement limit is left as written before
    // it is parsed.
    let src = a.source.load(
        &a.file,
        &a.build.include,
        Some(crate::engine::pipeline::MAX_STATEMENTS),
        ui,
    )?;
    let (text, internal) = match a.config.config() {
        // Every region is left as written (said above): nothing to tune,
        // the file as it is.
        None if src.scops.is_empty() && !src.kept.is_empty() => {
            if a.learned.json {
                // The report's keys that apply: the file, the warnings and,
                // without --output, the program.
                let mut v = serde_json::json!({
                    "file": a.file.display().to_string(),
                    "warnings": src.kept_notes(),
                });
                if a.output.is_none() {
                    v["program"] = serde_json::Value::String(src.text.clone());
                    return super::out(&super::render::json_text(&v)?);
                }
                super::out(&super::render::json_text(&v)?)?;
            }
            (src.text.clone(), Vec::new())
        }
        Some(c) => {
            let bits = if c.is_paper() {
                c.bits()
            } else {
                "beyond the paper's space, no bit string".to_string()
            };
            ui.detail(format!(
                "applying {c} ({bits}) to {} SCoP(s)",
                src.scops.len()
            ));
            let outcome = crate::engine::pipeline::optimize(&src, &c, a.context.as_deref())?;
            for s in outcome.skipped.iter().chain(&outcome.notes) {
                ui.warn(s);
            }
            (outcome.text, outcome.internal)
        }
        None => {
            let report = learned(&a, &src, ui)?;
            if a.learned.json {
                let mut v = serde_json::to_value(&report)?;
                if a.output.is_none() {
                    v["program"] = serde_json::Value::String(report.text.clone());
                }
                super::out(&super::render::json_text(&v)?)?;
                if a.output.is_none() {
                    return Ok(());
                }
            }
            (report.text, Vec::new())
        }
    };
    let text = if a.source.detect && !a.mark {
        frontend::strip_scop_pragmas(&text)
    } else {
        text
    };
    write_output(a.output.as_deref(), &text)?;
    // The output is written with those SCoPs unchanged; the bug is still
    // an error of its own.
    super::internal_errors(&internal)
}

/// Predict, run the candidates, keep the fastest correct program (the
/// original when nothing beats it): its stages.
fn learned(a: &Args, src: &SourceFile, ui: &Ui) -> Result<Report> {
    let (models, landscapes, dir) = models(a, ui)?;
    let sample = sample(a, &models, &dir, ui)?;
    // A bare kernel's driver lives as long as the selection's builds.
    let drivers = crate::lab::scratch::Scratch::new("driver")?;
    let mut setup = setup(a, src, sample, drivers.path(), ui)?;
    setup.ranker = ranker(a, &dir, ui)?;
    let report = select_with_progress(a, src, &models, landscapes.as_ref(), &setup, ui)?;
    if ui.verbosity >= super::Verbosity::Normal {
        eprint!("{}", super::render::selection_text(&report));
    }
    Ok(report)
}

/// The trained models (--model, else the compiler's), the landscapes
/// shipped beside them, and their directory.
fn models(
    a: &Args,
    ui: &Ui,
) -> Result<(
    Vec<SavedModel>,
    Option<crate::learn::search::transfer::Landscapes>,
    PathBuf,
)> {
    let compiler = a.build.compiler_name()?;
    let dir = a
        .learned
        .model
        .clone()
        .unwrap_or_else(|| models_to_read(compiler));
    let models = SavedModel::load_dir(&dir).with_context(|| {
        format!(
            "no trained models for {} (train some with `polytune train --db runs.sqlite --compiler {}`, or pass --model DIR or --config T)",
            compiler.as_str(),
            compiler.as_str(),
        )
    })?;
    ui.detail(format!("models from {}", dir.display()));
    // Other programs' measured landscapes, shipped beside the models:
    // Bayesian optimization's transfer prior.
    let landscapes = crate::learn::search::transfer::Landscapes::load(&dir)?;
    Ok((models, landscapes, dir))
}

/// The variant ranker's table, unless --ranking models (or --no-run).
fn ranker(
    a: &Args,
    dir: &Path,
    ui: &Ui,
) -> Result<Option<std::sync::Arc<crate::app::ranker::Shipped>>> {
    if a.learned.no_run {
        return Ok(None);
    }
    super::args::variant_ranker(a.learned.ranking, dir, ui)
}

/// How many configurations beyond the paper's space to rank: an error
/// when the models do not know that space or it has fewer.
fn sample(a: &Args, models: &[SavedModel], dir: &Path, ui: &Ui) -> Result<usize> {
    let knows_beyond = models.iter().any(|m| !m.extended.is_empty());
    let Ok(sample) = crate::app::select::sample_size(a.learned.sample, knows_beyond) else {
        bail!(
            "--sample {}: the models in {} were trained on the paper's space only (their dataset has no variant beyond it), so they cannot rank configurations drawn beyond it; drop --sample, or train models on a store measured with `polytune collect --space extended --sample N` and pass them with --model DIR",
            a.learned.sample.unwrap_or_default(),
            dir.display()
        );
    };
    let beyond = crate::engine::extended::Extended::default().beyond_paper();
    if sample as u64 > beyond {
        bail!(
            "--sample {sample} is more than the {beyond} configurations of the extended space beyond the paper's"
        );
    }
    if a.learned.sample.is_none() && sample > 0 {
        ui.detail(format!(
            "also ranking {sample} configurations drawn beyond the paper's space (the models know it; --sample 0: the paper's space only)"
        ));
    }
    Ok(sample)
}

/// The selection's setup, from the options; the driver of a bare kernel
/// is written in `drivers`.
fn setup(a: &Args, src: &SourceFile, sample: usize, drivers: &Path, ui: &Ui) -> Result<Setup> {
    Ok(Setup {
        compiler: a.build.compiler()?,
        size: a.run.size,
        recipe: a.program.recipe(
            a.build.compiler()?,
            src,
            a.build.include_for(&a.file),
            a.run.size,
            &a.source.compile_line.words,
            drivers,
            ui,
        )?,
        tolerance: a.program.tolerance(),
        protocol: a.run.protocol(),
        strategy: a
            .learned
            .strategy
            .unwrap_or_else(|| default_strategy(a.learned.shots)),
        shots: a.learned.shots,
        refine: a.learned.refine,
        time_budget: a.learned.time_budget,
        min_ei: Some(a.learned.min_ei),
        draws: (sample > 0).then_some(Draws {
            n: sample,
            seed: a.learned.seed,
        }),
        no_run: a.learned.no_run,
        decision: crate::lab::decide::Rule::default(),
        bound: crate::lab::characterize::Bound::default(),
        ranker: None,
        store: a.learn.store(),
    })
}

/// Runs the selection, its events shown on the progress line.
fn select_with_progress(
    a: &Args,
    src: &SourceFile,
    models: &[SavedModel],
    landscapes: Option<&crate::learn::search::transfer::Landscapes>,
    setup: &Setup,
    ui: &Ui,
) -> Result<Report> {
    let mut p = Progress::new(ui);
    p.doing("characterizing the original");
    let mut total = 0;
    // Candidates run so far: the refinement's programs count on.
    let mut searched = 0;
    Ok(select(
        &a.file,
        src,
        models,
        landscapes,
        setup,
        a.context.as_deref(),
        &mut |e| {
            match e {
            Event::Sampled { drawn, new } => p.note(format_args!(
                "{drawn} configurations drawn beyond the paper's space: {new} new variants"
            )),
            Event::Characterizing {
                instructions,
                bound,
            } => {
                // Millions of instructions counted of the bound's.
                let m = |n: u64| n.div_ceil(1_000_000) as usize;
                p.set(
                    m(instructions).min(m(bound)),
                    m(bound),
                    "characterizing the original (millions of instructions counted in its regions, under the simulator)",
                    None,
                    false,
                )
            }
            Event::Characterized {
                counters,
                seconds,
                counted,
            } => {
                p.note(format_args!(
                    "characterized {} ({counters} counters, {seconds:.1} s): counted {counted}",
                    a.file.display()
                ));
                p.doing("enumerating and ranking the variants");
            }
            Event::Started {
                candidates,
                refinements,
            } => {
                total = candidates + refinements + 1;
                p.set(
                    0,
                    total,
                    "compiling, verifying and timing the original",
                    None,
                    false,
                );
            }
            Event::Baseline { status } => p.set(
                1,
                total,
                &format!("original: {}", status.as_str()),
                None,
                false,
            ),
            Event::Candidate { k, n, status } => {
                searched = k;
                p.set(
                    k + 1,
                    total,
                    &format!("candidate {k} of {n}: {}", status.as_str()),
                    None,
                    false,
                )
            }
            Event::Refined { k, n, status } => p.set(
                (searched + 1 + k).min(total),
                total,
                &format!("refinement {k} of at most {n}: {}", status.as_str()),
                None,
                false,
            ),
            Event::HeadToHead { rule } => p.note(format_args!(
                "head to head with the original: alternating rounds until each side has {} s of region time ({} to {} rounds)",
                rule.enough_seconds, rule.min_rounds, rule.max_rounds
            )),
            Event::Done => p.finish(),
        }
        },
    )?)
}
