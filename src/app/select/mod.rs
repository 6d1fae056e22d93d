//! The learned selection (paper section 5): rank a program's distinct
//! variants with trained speedup models, then prove the best guesses by
//! running them — verified against the original, timed in the same batch
//! — and keep the fastest correct one. The original is always a
//! candidate, so the result is never slower than the input as measured.
//!
//! [`select`] prints nothing: it reports progress as [`Event`]s and
//! returns a [`Report`] that the command line renders as text or JSON.

use crate::config::Config;
use crate::engine::model::EngineError;
use crate::frontend::SourceFile;
use crate::lab::build::Recipe;
use crate::lab::characterize::CharacterizeError;
use crate::lab::compiler::Compiler;
use crate::lab::dump::Tolerance;
use crate::lab::harness::OriginalError;
use crate::lab::runner::Protocol;
use crate::lab::size::Size;
use crate::learn::LearnError;
use crate::learn::saved::SavedModel;
use crate::learn::search::transfer::Landscapes;
use std::path::Path;

mod confirm;
mod rank;
mod refine;
mod report;
mod stages;
pub(crate) use refine::Step;
pub use report::*;

/// Why the learned selection could not produce a program.
#[derive(Debug, thiserror::Error)]
pub enum SelectionError {
    #[error(
        "{0}: no `#pragma scop` region to optimize (mark the loop nests with #pragma scop / #pragma endscop)"
    )]
    NoScop(String),
    #[error(
        "the models were trained on the paper's space only (their dataset has no variant beyond it): they cannot rank configurations drawn beyond it; draw no sample beyond it, or train on a store measured over the extended space"
    )]
    PaperModels,
    #[error("drawing configurations beyond the paper's space: {0}")]
    Sample(#[from] crate::engine::extended::SampleError),
    #[error(transparent)]
    Learn(#[from] LearnError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("characterizing {path}")]
    Characterize {
        path: String,
        source: CharacterizeError,
    },
    #[error(
        "the models were trained on features counted by {trained}, and this program's were counted by {given}: they are not the same numbers (simulated caches against the hardware's), so the models cannot rank from them\n  help: train models on a store characterized with the {given} back end, or characterize with {trained}"
    )]
    Backend {
        trained: crate::lab::characterize::Backend,
        given: crate::lab::characterize::Backend,
    },
    /// (`why` is not a `source`: its text is in this message, and the
    /// chain would print it twice.)
    #[error("{path}: the original program cannot be measured: {why}")]
    Unmeasurable { path: String, why: OriginalError },
    #[error("the variant ranker: {0}")]
    Ranker(#[from] crate::app::ranker::RankerError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// How candidates are built, run and chosen.
#[derive(Debug, Clone)]
pub struct Setup {
    pub compiler: Compiler,
    pub size: Size,
    /// How the user's program is built and run.
    pub recipe: Recipe,
    pub tolerance: Tolerance,
    pub protocol: Protocol,
    pub strategy: Strategy,
    /// Candidates to run besides the original: unique variants, at most
    /// (the budget).
    pub shots: usize,
    /// Programs to run after the search, each a step from the fastest so
    /// far, most beyond the paper's space ([`refine`]); 0: none.
    pub refine: usize,
    /// Stop proposing candidates once they have taken this many seconds
    /// (building, verifying and timing them; the original's runs, the
    /// passive-threads check and the head-to-head confirmation are not
    /// counted).
    pub time_budget: Option<f64>,
    /// Bayesian optimization stops when the expected improvement of its
    /// next candidate over the incumbent (the fastest of the original and
    /// the candidates measured) falls below this (0.01: 1%).
    pub min_ei: Option<f64>,
    /// Also rank configurations drawn beyond the paper's space.
    pub draws: Option<Draws>,
    /// Emit the top prediction without running anything.
    pub no_run: bool,
    /// How the final head-to-head confirmation decides (its rounds, its
    /// test).
    pub decision: crate::lab::decide::Rule,
    /// How much of the original's run its characterization counts.
    pub bound: crate::lab::characterize::Bound,
    /// The ranker of the variant's table ([`crate::app::ranker`]): with
    /// it the variants are ranked by their own features (the six models'
    /// predictions stay in the report), else by the six models.
    pub ranker: Option<std::sync::Arc<crate::app::ranker::Shipped>>,
    /// The store of what this user measured ([`crate::app::ranker`]):
    /// the ranker learns from it too, and the selection's runs are
    /// appended to it. `None`: neither (`--no-learn`).
    pub store: Option<std::path::PathBuf>,
}

/// `n` configurations drawn uniformly beyond the paper's space, as
/// `collect --space extended --sample N --seed S` draws them for a
/// kernel of the file's name: the same draws, so a corpus kernel's search
/// runs over the space `simulate` replays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Draws {
    pub n: usize,
    pub seed: u64,
}

/// Characterizes `file`, ranks its distinct variants with `models`, runs
/// the candidates (verified, timed after the original), confirms the
/// winner head to head and returns the fastest correct program — the
/// original when nothing beats it — with how it was found. The stages are
/// [`stages::Selection`]'s methods.
pub fn select(
    file: &Path,
    src: &SourceFile,
    models: &[SavedModel],
    landscapes: Option<&Landscapes>,
    setup: &Setup,
    context: Option<&str>,
    progress: &mut dyn FnMut(Event),
) -> Result<Report, SelectionError> {
    if src.scops.is_empty() {
        return Err(SelectionError::NoScop(file.display().to_string()));
    }
    if models.is_empty() {
        return Err(LearnError::Data("no models to rank with".into()).into());
    }
    // A region whose user's OpenMP directive is not proven is left as
    // written by every variant: it is no SCoP to the selection.
    let mut refused = crate::engine::pipeline::unproven_directives(src, context);
    // A work-shared loop of the user's `omp parallel` region runs on every
    // thread of the team: the measurement build, which times and records
    // each execution of a region on its own, cannot.
    for s in src.scops.iter().filter(|s| s.team.is_some()) {
        if !refused.iter().any(|(k, _)| *k == s.index) {
            let (line, _) = src.line_col(s.region.open.start);
            refused.push((
                s.index,
                format!(
                    "{}:{line}: SCoP {} left unchanged: it is a work-shared loop of the user's `omp parallel` region, which every thread of the team runs, and the measurement build times and verifies a region only when one thread runs it (a configuration given by name transforms it)",
                    src.path.display(),
                    s.index
                ),
            ));
        }
    }
    refused.sort_by_key(|(k, _)| *k);
    let proven: SourceFile;
    let src = if refused.is_empty() || refused.len() == src.scops.len() {
        src
    } else {
        proven = src.without(&refused.iter().map(|(k, _)| *k).collect::<Vec<_>>());
        &proven
    };
    // A region the program never runs cannot be verified: it is left as
    // it is, and the others are tuned (an abort before).
    let reduced: SourceFile;
    let mut s = stages::Selection::new(file, src, models, setup, context, &mut *progress)?;
    let reach = if setup.no_run { None } else { Some(s.reach()?) };
    let unreached = reach.as_ref().map_or_else(Vec::new, |r| r.unreached());
    let mut unreached_notes = Vec::new();
    if !unreached.is_empty() {
        drop(s);
        for &k in &unreached {
            let (line, _) = src.line_col(src.scops[k].region.open.start);
            unreached_notes.push(format!(
                "{}:{line}: SCoP {k} left unchanged: the program never ran it, so no variant of it could be verified (run with input that reaches it to tune it)",
                src.path.display()
            ));
        }
        reduced = src.without(&unreached);
        s = stages::Selection::new(file, &reduced, models, setup, context, &mut *progress)?;
    }
    let counted = s.characterize()?;
    let params: Option<crate::engine::features::ParamValues> = reach.as_ref().map(|r| {
        r.params
            .iter()
            .map(|(_, name, value)| (name.clone(), *value))
            .collect()
    });
    let mut ranked = s.rank(landscapes, &counted.features, params.as_ref())?;
    let mut report = s.report(&counted, &mut ranked);
    report.warnings.splice(0..0, unreached_notes);
    report
        .warnings
        .splice(0..0, refused.into_iter().map(|(_, note)| note));
    if setup.no_run {
        return s.predict(&ranked, report);
    }
    let harness = s.harness();
    let prebuilt = s.build(&harness, &ranked, &mut report)?;
    let baseline = s.original(&harness, &counted, &mut report)?;
    let mut trials = s.search(&harness, &ranked, &baseline, prebuilt, &mut report)?;
    s.refine(
        &harness,
        &baseline,
        &mut trials,
        params.as_ref(),
        &mut report,
    )?;
    trials.account(&mut report);
    let best = s.pick(
        &harness,
        &baseline,
        std::mem::take(&mut trials.ran),
        &mut report,
    );
    let best = s.confirm(&harness, &baseline, best, &mut report);
    let mut report = s.write(best, &trials, report);
    s.learn(&ranked, &baseline, &mut report);
    Ok(report)
}

/// Models predict only from features counted by the back end they were
/// trained on.
fn same_backend(
    trained: crate::lab::characterize::Backend,
    given: crate::lab::characterize::Backend,
) -> Result<(), SelectionError> {
    if trained == given {
        Ok(())
    } else {
        Err(SelectionError::Backend { trained, given })
    }
}

/// A program that ran: its configuration, code, speedup over the original,
/// executable (in the scratch directory) and whether it is threaded.
struct Ran {
    config: Config,
    text: String,
    speedup: f64,
    exe: String,
    omp: bool,
}

/// The winner confirmed head to head, with the speedups polytune claims:
/// the whole program's, and its SCoP regions' when they run long enough
/// to be timed ([`crate::lab::head_to_head::TIMEABLE_SECONDS`]).
struct Confirmed {
    ran: Ran,
    program: f64,
    regions: Option<f64>,
}

/// The header line that says how the program was built and run when it
/// was measured (with polytune's instrumentation, which the written
/// program does not carry).
fn measured_as(recipe: &Recipe, file: &Path, openmp: bool) -> String {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (build, run) = recipe.describe(&name, openmp);
    format!("/* polytune: measured as `{build}` then `{run}` */\n").replace("*/ */", "* / */")
}

/// Programs the refinement runs after the search unless told otherwise (`--refine`): enough for a contraction's packed and scalar
/// register tiles and two more steps from the faster of them.
pub const DEFAULT_REFINE: usize = 4;

/// Configurations drawn beyond the paper's space unless told otherwise
/// (`--sample`), when the models know that space (trained on a campaign
/// that measured it): the extended campaign's draws per kernel
/// (`EXTENDED=30 scripts/campaign.sh`), so that a corpus kernel's search
/// runs over the very space `simulate` replays. With models of the
/// paper's space alone, none.
pub(crate) const DEFAULT_SAMPLE: usize = 30;

/// The draws beyond the paper's space a selection ranks: `asked` when
/// given (an error if the models cannot rank them), else
/// [`DEFAULT_SAMPLE`] when the models know that space and none when
/// they do not.
pub fn sample_size(
    asked: Option<usize>,
    models_know_beyond: bool,
) -> Result<usize, SelectionError> {
    match asked {
        Some(n) if n > 0 && !models_know_beyond => Err(SelectionError::PaperModels),
        Some(n) => Ok(n),
        None if models_know_beyond => Ok(DEFAULT_SAMPLE),
        None => Ok(0),
    }
}

/// How candidates are picked: the strategies of [`crate::learn::search`].
pub use crate::lab::head_to_head::{Basis, TIMEABLE_SECONDS};
pub use crate::learn::search::Strategy;
pub use crate::learn::search::drive::Stop;

/// From this budget on, Bayesian optimization is the default strategy:
/// on the shipped (refreshed) dataset it leads `diverse` and
/// `multi-model` at every budget from 2 with both compilers (figures at
/// [`default_strategy`]); on the paper-space dataset it leads from 5,
/// and at 2, with both, and at 3 and 4 with gcc, trailing `diverse` by
/// 0.5 and 0.6 points with clang there (5 was the threshold until bo's
/// design reserved picks for draws).
pub(crate) const BO_FROM: usize = 2;

/// The strategy used unless one is named, by budget (unique candidates).
/// Chosen on the paper-space dataset (figures below). On the refreshed
/// dataset (the extended campaign's, `simulate --strategies
/// multi-model,diverse,bo --min-ei 0`, gcc / clang), with bo's design
/// reserving three of its five picks for draws beyond the paper's space
/// ([`crate::learn::search::bo::BEYOND_GUESSED`]): at 5 bo 80.7 / 71.2,
/// multi-model 75.9 / 68.7, diverse 74.1 / 66.9; at 6 bo 82.2 / 73.7,
/// multi-model 78.7 / 70.3; at 12 bo 90.8 / 83.4, multi-model 82.4 /
/// 76.6. There bo leads from 2 with both compilers (at 3 gcc 76.3
/// against diverse's 69.8, clang 63.6 against multi-model's 61.9; at 4
/// 79.3 / 67.5 against 71.2 / 65.3) and trails at 1 (51.3 / 42.1
/// against diverse's 57.6 / 49.9): hence [`BO_FROM`] 2.
/// `simulate --min-ei 0` over the paper-space dataset (each kernel held out,
/// mean % of Opt, gcc / clang; docs/src/results/simulate.md): at 4
/// candidates diverse 84.9 / 81.3, bo 86.2 / 80.7; at 5 diverse 85.7 /
/// 82.4, bo 88.6 / 84.5; at 6 bo 91.1 / 87.0, diverse 89.1 / 84.3,
/// multi-model 85.2 / 83.1; at 12 bo 95.1 / 92.7, diverse 91.6 / 87.6;
/// at 30 bo 98.0 / 99.2, diverse 94.5 / 92.1. At 1 they pick the same
/// variant; at 2 bo leads with both (76.0 / 73.5 against 74.6 / 68.2);
/// at 3 and 4 they are within 1.3 points, bo ahead with gcc, diverse
/// with clang (the threshold was 5 on this dataset).
pub fn default_strategy(budget: usize) -> Strategy {
    if budget >= BO_FROM {
        Strategy::Bo { prior: true }
    } else {
        Strategy::Diverse
    }
}

#[cfg(test)]
mod tests {
    use super::rank::Ranking;
    use super::*;
    use crate::config::Config;
    use crate::learn::Kind;

    #[test]
    fn draws_beyond_the_paper_by_default_only_with_models_that_know_them() {
        assert_eq!(sample_size(None, true).unwrap(), DEFAULT_SAMPLE);
        assert_eq!(sample_size(None, false).unwrap(), 0);
        assert_eq!(sample_size(Some(0), true).unwrap(), 0);
        assert_eq!(sample_size(Some(0), false).unwrap(), 0);
        assert_eq!(sample_size(Some(12), true).unwrap(), 12);
        assert!(matches!(
            sample_size(Some(12), false),
            Err(SelectionError::PaperModels)
        ));
    }

    fn ranking_of(p: Vec<Vec<f64>>) -> Ranking {
        let n = p[0].len();
        Ranking {
            kinds: Kind::ALL[..p.len()].to_vec(),
            configs: Config::all()[..n].to_vec(),
            predicted: p,
            transfer: Vec::new(),
            leader: None,
        }
    }

    #[test]
    fn models_refuse_features_of_another_back_end() {
        use crate::lab::characterize::Backend;
        assert!(same_backend(Backend::Cachegrind, Backend::Cachegrind).is_ok());
        let e = same_backend(Backend::Cachegrind, Backend::Papi).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("the models were trained on features counted by cachegrind, and this program's were counted by papi")
                && text.contains("help: train models"),
            "{text}"
        );
    }

    #[test]
    fn the_default_strategy_follows_the_budget() {
        assert_eq!(default_strategy(1), Strategy::Diverse);
        assert_eq!(default_strategy(4), Strategy::Bo { prior: true });
        assert_eq!(default_strategy(6), Strategy::Bo { prior: true });
        assert_eq!(default_strategy(BO_FROM - 1), Strategy::Diverse);
        assert_eq!(default_strategy(BO_FROM), Strategy::Bo { prior: true });
        assert_eq!(default_strategy(30), Strategy::Bo { prior: true });
    }

    #[test]
    fn multi_model_takes_each_models_best_then_goes_deeper() {
        let r = ranking_of(vec![vec![3.0, 2.0, 1.0, 0.0], vec![3.0, 0.0, 1.0, 2.0]]);
        let c = r.candidates(Strategy::MultiModel, 2, 0);
        // Both models agree on variant 0; the second run is LR's #2.
        assert_eq!(c.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(c[0].1, "LR #1, SVM #1");
        let c = r.candidates(Strategy::MultiModel, 3, 0);
        assert_eq!(c.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1, 3]);
        let one = r.candidates(Strategy::Model(Kind::Svm), 2, 0);
        assert_eq!(one.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 3]);
        // Sums of ranks: 0 → 0, 1 → 1 + 3, 2 → 2 + 2, 3 → 3 + 1.
        assert_eq!(r.consensus(), Some(0));
        let rnd = r.candidates(Strategy::Random, 10, 5);
        assert_eq!(rnd.len(), 4, "never more than the variants");
    }

    #[test]
    fn diverse_spends_the_second_run_far_from_the_first() {
        let mut r = ranking_of(vec![vec![3.0, 2.0, 1.0, 0.0], vec![3.0, 0.0, 1.0, 2.0]]);
        // Ensemble order 0, 2, 1, 3; only variant 3 is 3 bits from 0.
        r.configs[3] = Config::from_bits("000000000111").unwrap();
        let c = r.candidates(Strategy::Diverse, 2, 0);
        assert_eq!(
            c,
            vec![(0, "ensemble #1".into()), (3, "ensemble #4".into())]
        );
        // Short of far variants, the ensemble's order fills in.
        let c = r.candidates(Strategy::Diverse, 3, 0);
        assert_eq!(c.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 3, 2]);
    }

    #[test]
    fn strategies_parse_with_helpful_errors() {
        assert_eq!("multi-model".parse(), Ok(Strategy::MultiModel));
        assert_eq!("diverse".parse(), Ok(Strategy::Diverse));
        assert_eq!("model:k*".parse(), Ok(Strategy::Model(Kind::KStar)));
        assert_eq!("model:M5P".parse(), Ok(Strategy::Model(Kind::M5p)));
        let e = "best".parse::<Strategy>().unwrap_err();
        assert!(e.contains("multi-model, diverse, model:NAME"), "{e}");
    }
}
