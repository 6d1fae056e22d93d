//! `polytune compare`: polytune beside gcc -O3, GCC Graphite and Clang
//! Polly on the same kernels, verified and timed in alternation.

use super::Ui;
use super::args::{BuildArgs, OutputArgs, RankingBy, RunArgs, models_to_read};
use super::progress::Progress;
use super::render::{compare_text, json_text};
use crate::app::compare::{self, Event, Models, Setup};
use crate::app::select::{self, Strategy};
use crate::lab::compiler::Compiler;
use crate::learn::saved::SavedModel;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Compare polytune with Graphite, Polly and the compilers (minutes).
///
/// Compare polytune with the other polyhedral optimizers on kernels
/// (minutes per kernel: polytune's learned selection runs, then every
/// contender is built, verified and timed --rounds times).
///
/// Contenders: gcc with --cflags (the baseline), Graphite
/// (-floop-nest-optimize, and with -floop-parallelize-all
/// -ftree-parallelize-loops), Polly (clang -mllvm -polly, and with
/// -polly-parallel; "not available" without a clang that has it), with
/// --compiler clang the original built with clang, and polytune: the
/// learned `optimize`'s program built with --compiler and OpenMP. Every
/// build's output is compared with the baseline's; the correct ones are
/// timed in alternation (one run of each per round) and compared by
/// their medians, with the geometric mean over the kernels (a failed or
/// wrong contender counts as 1.0, the baseline it would fall back to).
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Kernel files in the corpus style.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    build: BuildArgs,
    #[command(flatten)]
    run: RunArgs,
    /// Alternating timing rounds.
    #[arg(long, default_value_t = 5, value_name = "N")]
    rounds: usize,
    /// polytune's candidates (besides the original), as `optimize --budget`.
    ///
    /// --shots is the same option.
    #[arg(
        long = "budget",
        visible_alias = "shots",
        value_name = "N",
        default_value_t = 6
    )]
    shots: usize,
    /// polytune: then refine up to N more programs, each one step from the
    /// fastest so far (0: none).
    ///
    /// As `optimize --refine`. Most steps lead beyond the paper's space the
    /// models were trained on: a packed register tile shaped for the target's
    /// vectors (6x32, 8x24 with AVX-512; 4x12, 6x8 with AVX2) and its panels
    /// four times as wide, a 4x16 one, uneven parallel loops dealt in turn (cyc=1), diamond tiles in time, tiles twice or half as large, loops run as reductions, privatized or expanded
    /// scalars, more unrolling (in that order; a step the engine refuses or
    /// whose code was run before is not run).
    #[arg(long, value_name = "N", default_value_t = crate::app::select::DEFAULT_REFINE)]
    refine: usize,
    /// polytune's strategy, as in `optimize` [default: bo, diverse for one
    /// candidate]
    ///
    /// multi-model, diverse, model:NAME, random, local, bo or bo-plain. By
    /// default as `optimize` chooses for the budget: bo from 2 candidates,
    /// diverse for one.
    #[arg(long, value_parser = parse_strategy)]
    strategy: Option<Strategy>,
    /// bo, bo-plain: stop when the next candidate's expected improvement falls
    /// below this share.
    ///
    /// As in `optimize`.
    #[arg(long, value_name = "SHARE", default_value_t = crate::learn::search::drive::DEFAULT_MIN_EI, value_parser = super::optimize::non_negative)]
    min_ei: f64,
    /// polytune: also rank N configurations drawn beyond the paper's space (as
    /// `optimize --sample`).
    ///
    /// The models must know that space (trained on, or --db, a campaign of
    /// `collect --space extended`). Default: 30 when they do, else 0 (as
    /// `optimize`).
    #[arg(long, value_name = "N")]
    sample: Option<usize>,
    /// The seed of --sample's draws.
    #[arg(long, value_name = "S", default_value_t = 1, requires = "sample")]
    seed: u64,
    /// Which model ranks polytune's variants, as `optimize --ranking`:
    /// variant or models [default: variant where the models directory has
    /// its table]
    ///
    /// With --db, the variant ranker's table (the models directory's) is
    /// used without the kernel's own rows, as the models are trained
    /// without it.
    #[arg(long, value_enum)]
    ranking: Option<RankingBy>,
    /// polytune's models [default: models/<compiler> here, else the
    /// shipped ones].
    #[arg(long, value_name = "DIR", conflicts_with = "db")]
    model: Option<PathBuf>,
    /// Train polytune's models for each kernel on this campaign's measurements
    /// without that kernel.
    ///
    /// As `train --exclude` does, so that every kernel is a new program to them
    /// (the shipped models have seen every corpus kernel).
    #[arg(long, value_name = "DB")]
    db: Option<PathBuf>,
    /// With --db: the measurements taken at this many OpenMP threads.
    #[arg(long, value_name = "N", default_value_t = 2, requires = "db")]
    measured_threads: i64,
    /// With --db: the measurements of the machine whose description contains
    /// TEXT.
    ///
    /// For a store holding several machine types.
    #[arg(long, value_name = "TEXT", requires = "db")]
    machine: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
}

fn parse_strategy(s: &str) -> Result<Strategy, String> {
    s.parse()
}

/// `polytune compare`: its stages, from the models to the printed report.
pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    let name = a.build.compiler_name()?;
    let mine = a.build.compiler()?;
    let flags = mine.flags.clone();
    let gcc = Compiler::detect(crate::lab::compiler::Family::Gcc, Some(flags.clone()))?;
    let clang =
        Compiler::detect(crate::lab::compiler::Family::Clang, Some(flags)).map_err(|e| e.reason);
    let models = models(&a, name, mine.family, ui)?;
    let sample = sample(&a, &models)?;
    let include = include(&a);
    let dir = a.model.clone().unwrap_or_else(|| models_to_read(name));
    let ranker = super::args::variant_ranker(a.ranking, &dir, ui)?;
    let mut setup = setup(&a, gcc, clang, mine, models, sample, include);
    setup.select.ranker = ranker;
    let report = compare_with_progress(&a.files, &setup, ui)?;
    super::out(&if a.output.json {
        json_text(&report)?
    } else {
        compare_text(&report)
    })
}

/// polytune's models: trained per kernel on --db without it, or read from
/// --model (default: the compiler's).
fn models(
    a: &Args,
    name: crate::lab::compiler::Family,
    family: crate::lab::compiler::Family,
    ui: &Ui,
) -> Result<Models> {
    Ok(match &a.db {
        Some(db) => {
            if !db.exists() {
                anyhow::bail!("{} does not exist", db.display());
            }
            let store = crate::lab::store::Store::open_read_only(db)?;
            let selection = crate::learn::dataset::Selection {
                compiler: family,
                size: a.run.size,
                threads: a.measured_threads,
                machine: a.machine.clone(),
                ..Default::default()
            };
            let dataset = crate::learn::dataset::Dataset::from_store(&store, &selection)
                .with_context(|| format!("cannot read the dataset in {}", db.display()))?;
            super::args::note_beyond_paper(&dataset, ui);
            Models::LeaveOneOut {
                dataset: Box::new(dataset),
                kinds: crate::learn::Kind::ALL.to_vec(),
                target: crate::learn::Target::LogSpeedup,
            }
        }
        None => {
            let dir = a.model.clone().unwrap_or_else(|| models_to_read(name));
            Models::Fixed(
                SavedModel::load_dir(&dir).with_context(|| {
                    format!(
                        "no trained models for {} in {} (pass --model DIR or --db DATASET)",
                        name.as_str(),
                        dir.display()
                    )
                })?,
                crate::learn::search::transfer::Landscapes::load(&dir)?,
            )
        }
    })
}

/// How many configurations beyond the paper's space polytune ranks: an
/// error when --sample asks for some the models do not know.
fn sample(a: &Args, models: &Models) -> Result<usize> {
    let paper_only = match models {
        Models::LeaveOneOut { dataset, .. } => dataset.beyond_paper == 0,
        Models::Fixed(m, _) => m.iter().all(|m| m.extended.is_empty()),
    };
    let Ok(sample) = select::sample_size(a.sample, !paper_only) else {
        anyhow::bail!(
            "--sample {}: polytune's models know the paper's space only (their dataset has no variant beyond it), so they cannot rank configurations drawn beyond it; drop --sample, or use a dataset measured with `polytune collect --space extended --sample N`",
            a.sample.unwrap_or_default()
        );
    };
    Ok(sample)
}

/// The include path of the builds: every kernel's directory is on it.
fn include(a: &Args) -> Vec<PathBuf> {
    let mut include: Vec<PathBuf> = a.build.include_for(&a.files[0]);
    for f in &a.files[1..] {
        for i in a.build.include_for(f) {
            if !include.contains(&i) {
                include.push(i);
            }
        }
    }
    include
}

/// The comparison's setup: the contenders' compilers and polytune's
/// selection, from the options.
fn setup(
    a: &Args,
    gcc: Compiler,
    clang: Result<Compiler, String>,
    mine: Compiler,
    models: Models,
    sample: usize,
    include: Vec<PathBuf>,
) -> Setup {
    Setup {
        gcc,
        clang,
        select: select::Setup {
            recipe: {
                let mut r = crate::lab::build::Recipe::new(mine.clone(), &a.files[0]);
                r.size = Some(a.run.size);
                r.include = include.clone();
                r
            },
            tolerance: crate::lab::dump::Tolerance::default(),
            compiler: mine,
            size: a.run.size,
            protocol: a.run.protocol(),
            strategy: a
                .strategy
                .unwrap_or_else(|| crate::app::select::default_strategy(a.shots)),
            shots: a.shots,
            refine: a.refine,
            time_budget: None,
            min_ei: Some(a.min_ei),
            draws: (sample > 0).then_some(select::Draws {
                n: sample,
                seed: a.seed,
            }),
            no_run: false,
            decision: crate::lab::decide::Rule::default(),
            bound: crate::lab::characterize::Bound::default(),
            ranker: None,
            store: None,
        },
        models,
        size: a.run.size,
        include,
        protocol: a.run.protocol(),
        rounds: a.rounds,
    }
}

/// Runs the comparison, its events shown on the progress line.
fn compare_with_progress(files: &[PathBuf], setup: &Setup, ui: &Ui) -> Result<compare::Report> {
    let mut p = Progress::new(ui);
    let (mut done, mut total, mut end, mut kernel) = (0, 0, 0, String::new());
    let report = compare::compare(files, setup, &mut |e| match e {
        Event::Kernel { k, n, name, steps } => {
            total = n * steps;
            done = (k - 1) * steps;
            end = k * steps;
            kernel = name;
            p.set(done, total, &format!("{kernel}: building"), None, false);
        }
        Event::Built { contender, verdict } => {
            done = (done + 1).min(end);
            p.set(
                done,
                total,
                &format!("{kernel}: {contender}: {}", verdict.as_str()),
                None,
                verdict != compare::Verdict::Ok,
            );
        }
        Event::Selecting(e) => match e {
            select::Event::Started { candidates, .. } => p.doing(&format!(
                "{kernel}: polytune runs the original and {candidates} candidates"
            )),
            select::Event::Refined { k, n, .. } => p.doing(&format!(
                "{kernel}: polytune's refinement {k} of at most {n}"
            )),
            select::Event::Candidate { k, n, .. } => {
                p.doing(&format!("{kernel}: polytune's candidate {k} of {n}"))
            }
            select::Event::HeadToHead { .. } => {
                p.doing(&format!("{kernel}: polytune's head to head"))
            }
            _ => {}
        },
        Event::Round { round, rounds } => {
            done = (done + 1).min(end);
            p.set(
                done,
                total,
                &format!("{kernel}: timing round {round} of {rounds}"),
                None,
                false,
            );
        }
    })?;
    p.finish();
    Ok(report)
}
