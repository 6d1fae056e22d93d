//! The stages of [`super::select`], each a method of [`Selection`] with a
//! typed input and output: characterize → rank → (predict, with
//! `--no-run`) or build → time the original → search → refine → pick →
//! confirm → write.

use super::confirm::{head_to_head, holds_when_passive, passive_seconds};
use super::rank::{Ranking, rank};
use super::refine;
use super::report::*;
use super::{Confirmed, Ran, SelectionError, Setup, Strategy, measured_as, same_backend};
use crate::config::Config;
use crate::engine::features::ParamValues;
use crate::engine::space::{Variant, distinct_variants};
use crate::frontend::SourceFile;
use crate::lab::build::Recipe;
use crate::lab::characterize::{
    Backend, Features, characterize_instrumented, characterize_instrumented_by_pmu,
};
use crate::lab::harness::{Harness, Reference};
use crate::lab::head_to_head::Basis;
use crate::lab::scratch::Scratch;
use crate::lab::verify::Measurement;
use crate::learn::saved::SavedModel;
use crate::learn::search::drive::{Limits, Outcome, drive};
use crate::learn::search::transfer::Landscapes;
use crate::learn::search::{Planned, Searcher};
use crate::learn::{Kind, LearnError};
use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod measured;

/// One selection under way: its inputs, its sources, its clock and where
/// its progress goes.
pub(super) struct Selection<'a> {
    file: &'a Path,
    src: &'a SourceFile,
    models: &'a [SavedModel],
    setup: &'a Setup,
    context: Option<&'a str>,
    progress: &'a mut dyn FnMut(Event),
    sources: Sources<'a>,
    begun: Instant,
    /// Per variant, its features, when the variant ranker ranked: what
    /// the store keeps of a run.
    feature_rows: Vec<Option<Vec<f64>>>,
    /// The compile target's vector registers, asked of the compiler once
    /// (the draws' shapes and the refinement's need it).
    target: std::cell::OnceCell<crate::config::VectorTarget>,
}

/// The programs a selection builds, as instrumented sources in its
/// scratch directory (apart from the progress, so that a stage can write
/// a source and report in one closure).
struct Sources<'a> {
    src: &'a SourceFile,
    context: Option<&'a str>,
    work: Scratch,
    file_name: OsString,
}

impl Sources<'_> {
    /// Writes `text` as the file's name in a directory `dir` of its own
    /// in the scratch directory: every build polytune measures is
    /// instrumented, each under the file's own name.
    fn write(&self, dir: &str, text: &str) -> std::io::Result<PathBuf> {
        let d = self.work.path().join(dir);
        crate::lab::scratch::subdir(&d)?;
        let path = d.join(&self.file_name);
        std::fs::write(&path, text)?;
        Ok(path)
    }

    /// A program's instrumented text: from its own `text` (the engine is
    /// not run again), transformed anew by `config` only if its regions
    /// cannot be found.
    fn instrumented(&self, text: &str, config: &Config) -> Result<String, SelectionError> {
        Ok(
            match crate::engine::pipeline::instrumented_variant(self.src, text)? {
                Some(text) => text,
                None => {
                    crate::engine::pipeline::instrumented(self.src, Some(config), self.context)?
                        .text
                }
            },
        )
    }
}

/// The characterized original.
pub(super) struct Counted {
    /// The instrumented original's source, in the scratch directory.
    pub original: PathBuf,
    pub features: Features,
    pub seconds: f64,
}

/// The distinct variants and the models' predictions of them.
pub(super) struct Ranked {
    pub variants: Vec<Variant>,
    /// Of `variants`, those of the paper's space (the first ones).
    pub paper_variants: usize,
    pub warnings: Vec<String>,
    pub ranking: Ranking,
    /// A planned strategy's candidates (variant, why), best guess first;
    /// an adaptive strategy's come from its searcher.
    pub picks: Vec<(usize, String)>,
    /// Candidates to run at most.
    pub budget: usize,
    pub seconds: f64,
    /// How the variant ranker ranked, when it did.
    pub ranker: Option<RankerUse>,
    /// Each variant's place in the leading model's order (from 1), when
    /// one leads.
    pub places: Option<Vec<usize>>,
}

impl Ranked {
    fn config(&self, v: usize) -> Config {
        self.ranking.configs[v]
    }

    /// Variant `v` as a candidate of the report, chosen for `why`, not
    /// run yet.
    fn candidate(&self, v: usize, why: String) -> Candidate {
        let r = &self.ranking;
        Candidate {
            config: r.configs[v],
            bits: r.configs[v].is_paper().then(|| r.configs[v].bits()),
            chosen_by: why,
            predicted: (r.kinds.iter().zip(&r.predicted))
                .map(|(&model, p)| Prediction {
                    model,
                    speedup: p[v],
                })
                .collect(),
            expected_improvement: None,
            run: None,
            place: self.places.as_ref().map(|p| p[v]),
            ranked_by: match r.leader {
                Some(m) => r.kinds[m].name().to_string(),
                None => format!("the {} models together", r.kinds.len()),
            },
        }
    }

    /// The strategy's searcher over the ranking (seeded 1, as the plans
    /// are): a planned strategy hands out its plan.
    fn searcher(&self, strategy: Strategy) -> Box<dyn Searcher + '_> {
        if strategy.adaptive() {
            // Bayesian optimization's design for the prior it has: the
            // ranker's (simulate --bo-design ranker, with its predictions
            // as the one model: 83.9 / 86.1 % of Opt at 6 runs, gcc /
            // clang, against 84.0 / 78.1 with the six models' design).
            let design = match self.ranking.leader {
                Some(_) => crate::learn::search::bo::BoDesign::Ranker,
                None => crate::learn::search::bo::BoDesign::Models,
            };
            self.ranking.space().searcher_with(strategy, 1, design)
        } else {
            Box::new(Planned::new(self.picks.clone()))
        }
    }
}

/// The original as measured: what every candidate is held to.
pub(super) struct Baseline {
    pub reference: Reference,
    /// The original's median seconds (0 when it was not timed).
    pub base: f64,
}

/// What the search and the refinement ran.
pub(super) struct Trials {
    /// The programs that ran correctly, with their speedups.
    pub ran: Vec<Ran>,
    /// The code hashes of every program that ran.
    pub seen: HashSet<String>,
    /// Candidates the search evaluated.
    pub evaluated: usize,
    pub started: Instant,
    /// Compiler seconds inside the search and the refinement.
    pub builds: f64,
}

impl Trials {
    /// The report's seconds of building and of running, once the search
    /// and the refinement are over.
    pub(crate) fn account(&self, report: &mut Report) {
        report.phases.builds += self.builds;
        report.phases.runs = (self.started.elapsed().as_secs_f64() - self.builds).max(0.0);
    }
}

/// Candidates built before anything is timed (a planned strategy's), by
/// their place in the plan.
type Prebuilt = Vec<Option<Result<(PathBuf, f64), Measurement>>>;

/// A file's header comment.
fn header(what: String) -> String {
    format!("/* polytune: {what} */\n")
}

/// A chosen program's header: its configuration readable and, in the
/// paper's space, as bits.
fn chosen(c: &Config, how: String) -> String {
    header(match c.is_paper() {
        true => format!("configuration {c} ({}), {how}", c.bits()),
        false => format!("configuration {c}, {how}"),
    })
}

impl<'a> Selection<'a> {
    pub(crate) fn new(
        file: &'a Path,
        src: &'a SourceFile,
        models: &'a [SavedModel],
        setup: &'a Setup,
        context: Option<&'a str>,
        progress: &'a mut dyn FnMut(Event),
    ) -> Result<Self, SelectionError> {
        Ok(Selection {
            file,
            src,
            models,
            setup,
            context,
            progress,
            sources: Sources {
                src,
                context,
                work: Scratch::new("select")?,
                file_name: file.file_name().unwrap_or_default().to_owned(),
            },
            begun: Instant::now(),
            feature_rows: Vec::new(),
            target: std::cell::OnceCell::new(),
        })
    }

    /// The compile target's vector registers ([`Recipe::vector_target`]).
    fn vector_target(&self) -> crate::config::VectorTarget {
        *self
            .target
            .get_or_init(|| self.setup.recipe.vector_target())
    }

    fn first(&self) -> &'a SavedModel {
        &self.models[0]
    }

    /// Stage 1: counts the instrumented original's features, with the
    /// back end the models learned from (the simulator's features, or the
    /// PMU's, refused where there is none), corpus-style programs at the
    /// size the models' features were measured at, others as their
    /// compile line says.
    pub(crate) fn characterize(&mut self) -> Result<Counted, SelectionError> {
        let original = self.sources.write(
            "original-src",
            &crate::engine::pipeline::instrumented(self.src, None, self.context)?.text,
        )?;
        let t = Instant::now();
        let first = self.first();
        let setup = self.setup;
        let characterized = Recipe {
            size: setup
                .recipe
                .size
                .as_ref()
                .map(|_| first.selection.feature_size),
            ..setup.recipe.clone()
        };
        let progress = &mut *self.progress;
        let features = match first.selection.feature_backend {
            Backend::Cachegrind => characterize_instrumented(
                &original,
                &characterized,
                self.src.scops.len(),
                self.sources.work.path(),
                &setup.protocol.limits(),
                &setup.bound,
                &mut |instructions| {
                    progress(Event::Characterizing {
                        instructions,
                        bound: setup.bound.instructions,
                    })
                },
            ),
            Backend::Papi => characterize_instrumented_by_pmu(
                &original,
                &characterized,
                self.src.scops.len(),
                self.sources.work.path(),
                &setup.protocol.limits(),
            ),
        }
        .map_err(|source| SelectionError::Characterize {
            path: self.file.display().to_string(),
            source,
        })?;
        same_backend(first.selection.feature_backend, features.backend)?;
        let seconds = t.elapsed().as_secs_f64();
        progress(Event::Characterized {
            counters: features.values.len(),
            seconds,
            counted: features.counted,
        });
        Ok(Counted {
            original,
            features,
            seconds,
        })
    }

    /// Stage 2: the distinct variants (with the draws beyond the paper's
    /// space when asked) and every model's prediction of each; a planned
    /// strategy's candidates.
    pub(crate) fn rank(
        &mut self,
        landscapes: Option<&Landscapes>,
        features: &Features,
        params: Option<&ParamValues>,
    ) -> Result<Ranked, SelectionError> {
        let t = Instant::now();
        let (mut variants, mut warnings) = distinct_variants(self.src, self.context)?;
        let paper_variants = variants.len();
        if let Some(d) = self.setup.draws {
            if self.models.iter().all(|m| m.extended.is_empty()) {
                return Err(SelectionError::PaperModels);
            }
            let drawn = crate::app::campaign::draws(
                &crate::engine::extended::Extended::for_target(self.vector_target()),
                d.n,
                d.seed,
                &crate::app::campaign::kernel_name(self.file),
            )?;
            let (new, more) =
                crate::app::campaign::add_draws(self.src, self.context, &drawn, &mut variants)?;
            warnings.extend(more);
            (self.progress)(Event::Sampled {
                drawn: drawn.len(),
                new,
            });
        }
        let mut ranking = rank(self.models, landscapes, &features.values, &variants)?;
        let ranker = match (&self.setup.ranker, params) {
            (Some(table), Some(params)) => {
                self.rank_by_variant(table, params, &variants, &mut ranking, &mut warnings)?
            }
            _ => None,
        };
        let budget = self.setup.shots.max(1);
        let picks = ranking.candidates(self.setup.strategy, budget, 1);
        Ok(Ranked {
            variants,
            paper_variants,
            warnings,
            picks,
            budget,
            seconds: t.elapsed().as_secs_f64(),
            places: ranking.places(),
            ranker,
            ranking,
        })
    }

    /// Stage 2b: the variant ranker fitted to its table, the features of
    /// every variant at the program's parameter values, and its
    /// predictions, which the search follows; `None` (the six models
    /// rank) when it could compute no variant's features.
    fn rank_by_variant(
        &mut self,
        table: &crate::app::ranker::Shipped,
        params: &ParamValues,
        variants: &[Variant],
        ranking: &mut Ranking,
        warnings: &mut Vec<String>,
    ) -> Result<Option<RankerUse>, SelectionError> {
        let t = Instant::now();
        let local = match &self.setup.store {
            Some(path) => crate::app::ranker::local(path, self.setup.compiler.family)
                .unwrap_or_else(|e| {
                    warnings.push(format!(
                        "{e}; the ranker learns from the shipped variants alone this time"
                    ));
                    None
                }),
            None => None,
        };
        let cache = crate::lab::machine::cache_dir();
        let fitted = crate::app::ranker::fit(table, local.as_ref(), cache.as_deref())?;
        let fit_seconds = t.elapsed().as_secs_f64();
        let cache = cache.unwrap_or_else(|| self.sources.work.path().to_path_buf());
        let predicted = crate::app::ranker::predict(
            &fitted,
            self.src,
            self.context,
            &ranking.configs,
            &crate::app::ranker::Where {
                params,
                compiler: &self.setup.compiler,
                threads: self.setup.protocol.threads,
                cache: &cache,
            },
        )?;
        if predicted.unfeatured == variants.len() {
            warnings.push(
                "the variant ranker could compute no variant's features: the six models rank"
                    .into(),
            );
            return Ok(None);
        }
        if predicted.unfeatured > 0 {
            warnings.push(format!(
                "the variant ranker could not compute the features of {} of {} variants: it ranks them last",
                predicted.unfeatured,
                variants.len()
            ));
        }
        ranking.follow(Kind::Ranker, predicted.speedups);
        self.feature_rows = predicted.rows;
        Ok(Some(RankerUse {
            rows: fitted.rows,
            kernels: fitted.kernels,
            local_rows: fitted.local_rows,
            local_kernels: fitted.local_kernels,
            unfeatured: predicted.unfeatured,
            fit_seconds,
            seconds: t.elapsed().as_secs_f64(),
        }))
    }

    /// The report as ranking leaves it: nothing run yet, the planned
    /// candidates listed, the original kept.
    pub(crate) fn report(&self, counted: &Counted, ranked: &mut Ranked) -> Report {
        let setup = self.setup;
        let first = self.first();
        let file_name = self.sources.file_name.to_string_lossy().into_owned();
        let (built_as, run_as) = setup.recipe.describe(&file_name, false);
        Report {
            file: self.file.to_path_buf(),
            counters: counted.features.values.len(),
            characterize_seconds: counted.seconds,
            counted: counted.features.counted,
            phases: Phases {
                characterize: counted.seconds,
                rank: ranked.seconds,
                ..Phases::default()
            },
            built_as,
            run_as,
            variants: ranked.variants.len(),
            beyond_paper: ranked.variants.len() - ranked.paper_variants,
            models: self.models.len(),
            trained_compiler: first.compiler.clone(),
            trained_machine: first.machine.clone(),
            compiler: setup.compiler.family,
            flags: setup.compiler.flags.clone(),
            size: setup.size,
            threads: setup.protocol.threads,
            warnings: std::mem::take(&mut ranked.warnings),
            original: None,
            ranker: ranked.ranker.clone(),
            learned: None,
            candidates: ranked
                .picks
                .iter()
                .map(|(v, why)| ranked.candidate(*v, why.clone()))
                .collect(),
            search: None,
            refinement: Vec::new(),
            passive: Vec::new(),
            head_to_head: None,
            choice: Choice {
                config: None,
                bits: None,
                reason: Reason::OriginalKept,
                chosen_by: None,
                speedup: None,
                regions_speedup: None,
            },
            text: String::new(),
        }
    }

    /// With `--no-run`, the last stage: one model's top prediction; for
    /// multi-model, the variant the models rank best together (the least
    /// sum of ranks); for an adaptive strategy, its first proposal.
    pub(crate) fn predict(
        &mut self,
        ranked: &Ranked,
        mut report: Report,
    ) -> Result<Report, SelectionError> {
        let strategy = self.setup.strategy;
        let pick = if strategy == Strategy::MultiModel {
            ranked
                .ranking
                .consensus()
                .map(|v| (v, "all models' consensus".to_string()))
        } else if strategy.adaptive() {
            let mut searcher = ranked.searcher(strategy);
            let first = searcher
                .next(&[])
                .map(|v| (v, searcher.why().unwrap_or_default()));
            if let Some((v, why)) = &first {
                report.candidates = vec![ranked.candidate(*v, why.clone())];
            }
            first
        } else {
            ranked.picks.first().cloned()
        };
        let Some((v, why)) = pick else {
            return Err(LearnError::Data("no variant to choose from".into()).into());
        };
        (self.progress)(Event::Done);
        report.phases.total = self.begun.elapsed().as_secs_f64();
        let config = ranked.config(v);
        report.text = chosen(&config, format!("chosen by {why} without running it"))
            + &ranked.variants[v].text;
        report.choice = Choice {
            config: Some(config),
            bits: config.is_paper().then(|| config.bits()),
            reason: Reason::Predicted,
            chosen_by: Some(why),
            speedup: None,
            regions_speedup: None,
        };
        Ok(report)
    }
}
