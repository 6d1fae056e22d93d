//! Replays search strategies over a space measured beforehand (Kernel
//! Tuner's simulation mode), running nothing: each kernel is held out in
//! turn — the models' predictions for it come from models trained
//! without it, exactly the folds of [`crate::learn::evaluate`] — and each
//! strategy proposes unique variants one by one, answered from the
//! measurements, up to a budget. A strategy that draws at random is
//! replayed with several seeds.
//!
//! Reported per strategy and kernel: the best-so-far speedup as % of the
//! kernel's Opt after 1…budget evaluations (mean over seeds), the
//! evaluations needed to reach 90/95/99/100% of Opt, and on average over
//! kernels (arithmetic and geometric); per kernel, how peaked its
//! landscape is (the share of variants within 5/10/20% of Opt) and how
//! well the models rank its variants (Spearman's rank correlation of the
//! ensemble's prediction with the measured speedup).
//!
//! [`Options::prior_blend`] asks what a better prior would do: the
//! models' log predictions moved toward the measured truth by a share.
//! No search can run that way — it reads the answers — so it is a
//! counterfactual, reported as one: how good the models would have to
//! be for a strategy to reach a share of Opt.
//!
//! Why one file: its code is about 520 lines (the strategies' stages are in
//! `stages.rs`), the simulation with its reports; its tests make up the
//! rest.

use super::bo::BoDesign;
use super::drive::{Limits, drive};
use super::transfer::Landscapes;
use super::{Space, Strategy};
use crate::config::Config;
use crate::learn::dataset::Dataset;
use crate::learn::evaluate::{FLOOR, ensemble};
pub(crate) use crate::learn::rank::metrics::rank_correlation;
use crate::learn::{Kind, LearnError};
use serde::Serialize;

mod stages;

/// The thresholds of "evaluations to reach", in % of Opt.
pub(crate) const THRESHOLDS: [f64; 4] = [90.0, 95.0, 99.0, 100.0];

/// What to simulate.
#[derive(Debug, Clone)]
pub struct Options {
    pub strategies: Vec<Strategy>,
    /// Unique evaluations per run.
    pub budget: usize,
    /// Seeds for the strategies that draw at random (1, 2, … seeds).
    pub seeds: usize,
    pub threads: usize,
    /// The stopping rule of `optimize --min-ei`: a run also stops when the
    /// expected improvement of its next proposal over the incumbent falls
    /// below this share (strategies that compute one: Bayesian
    /// optimization past its initial design).
    pub min_ei: Option<f64>,
    /// Search the variants of the paper's space only, but measure them
    /// against the Opt of every variant of the dataset (beyond the
    /// paper's too): beside a run over all of them, what searching beyond
    /// the paper's space gains.
    pub paper_only: bool,
    /// Bayesian optimization without the other kernels' landscapes in
    /// its prior (as before they were: the models alone).
    pub no_transfer: bool,
    /// Bayesian optimization's design, by the quality of its prior
    /// ([`BoDesign`]).
    pub bo_design: BoDesign,
    /// The kernel whose runs to trace ([`Simulation::traces`]).
    pub trace: Option<String>,
    /// A counterfactual prior: each model's log prediction replaced by
    /// (1 − w) × itself + w × the log of the measured speedup. `None`
    /// (or 0): the models as they are.
    pub prior_blend: Option<f64>,
    /// Bayesian optimization's other landscapes ([`super::transfer`])
    /// from this many of the other kernels only, the ones
    /// [`crate::learn::evaluate::training_kernels`] draws with
    /// `train_seed` — the same the models' folds learned from when the
    /// predictions were made with the same `evaluate::Options`.
    pub train_kernels: Option<usize>,
    pub train_seed: u64,
}

/// What a strategy proposed for one kernel, in order (`simulate
/// --trace`): the run of its first seed.
#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    pub strategy: String,
    pub kernel: String,
    pub steps: Vec<Step>,
}

/// One variant of a trace, or of a kernel's fastest.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    #[serde(with = "crate::config::as_text")]
    pub config: Config,
    /// Its measured speedup (`None`: it failed).
    pub speedup: Option<f64>,
    /// Its speedup as a % of the kernel's Opt.
    pub percent: Option<f64>,
    /// The best % of Opt so far (in a trace).
    pub best: f64,
    /// The ensemble's leave-one-out prediction (the geometric mean of
    /// the models': one model's wild extrapolation does not swamp it).
    pub predicted: f64,
}

/// One kernel's curve for one strategy.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KernelCurve {
    pub kernel: String,
    /// Mean over runs of the best-so-far % of Opt after 1…budget
    /// evaluations.
    pub percent: Vec<f64>,
    /// Per threshold: the mean evaluations to reach it, a run that never
    /// does counting as budget + 1.
    pub evaluations_to: Vec<f64>,
    /// Per threshold: the share of runs that reach it within the budget.
    pub reached: Vec<f64>,
    /// Mean over runs of the evaluations spent with a budget of
    /// 1…budget: the budget itself unless the run stopped earlier (on
    /// the expected-improvement rule, or the space ran out).
    pub spent: Vec<f64>,
    /// Lengthscales per configuration field of the last fit (Bayesian
    /// optimization, first seed): the shorter, the more the field
    /// matters.
    #[serde(skip_serializing_if = "Option::is_none")]
    /// In [`Simulation::fields`] order; `None` for a field this kernel's
    /// space does not have.
    pub lengthscales: Option<Vec<Option<f64>>>,
}

/// One strategy over every kernel.
#[derive(Debug, Clone, Serialize)]
pub struct StrategyCurves {
    pub strategy: String,
    pub runs_per_kernel: usize,
    pub kernels: Vec<KernelCurve>,
    /// Over kernels, at each budget: arithmetic and geometric means of
    /// the % of Opt.
    pub mean: Vec<f64>,
    pub geomean: Vec<f64>,
    /// Over kernels, per threshold: mean evaluations to reach it and the
    /// share of runs that do.
    pub evaluations_to: Vec<f64>,
    pub reached: Vec<f64>,
    /// Over kernels, at each budget: the mean evaluations spent.
    pub spent: Vec<f64>,
}

/// How peaked a kernel's landscape is.
#[derive(Debug, Clone, Serialize)]
pub struct Landscape {
    pub kernel: String,
    pub variants: usize,
    pub opt: f64,
    /// Shares of its variants within 5, 10 and 20% of Opt.
    pub within: [f64; 3],
    /// Spearman's rank correlation between the ensemble's prediction
    /// (mean log over the models) and the measured speedup over its
    /// variants: 1 ranks them as measured, 0 no better than chance.
    /// `None` below three variants or when either side is constant.
    pub rank_correlation: Option<f64>,
}

/// A whole simulation.
#[derive(Debug, Clone, Serialize)]
pub struct Simulation {
    pub models: Vec<String>,
    pub budget: usize,
    pub seeds: usize,
    /// The expected-improvement floor the runs stopped on, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_ei: Option<f64>,
    /// Only the paper's variants were searched ([`Options::paper_only`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub paper_only: bool,
    /// [`Options::no_transfer`].
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_transfer: bool,
    /// [`Options::bo_design`]; left out of the JSON when it is the
    /// default, the six models' design.
    #[serde(with = "design_name", skip_serializing_if = "design_name::is_default")]
    pub bo_design: BoDesign,
    /// [`Options::prior_blend`]: the predictions were this share of the
    /// measured truth (a counterfactual).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prior_blend: Option<f64>,
    /// [`Options::train_kernels`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train_kernels: Option<usize>,
    /// The median over kernels of [`Landscape::rank_correlation`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_rank_correlation: Option<f64>,
    pub thresholds: Vec<f64>,
    pub fields: Vec<String>,
    pub strategies: Vec<StrategyCurves>,
    pub landscapes: Vec<Landscape>,
    /// With [`Options::trace`]: each strategy's proposals on that
    /// kernel, and the kernel's five fastest variants (`fastest`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<Trace>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fastest: Vec<Step>,
}

/// A [`BoDesign`] in JSON: its name.
mod design_name {
    use super::BoDesign;

    pub fn serialize<S: serde::Serializer>(d: &BoDesign, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(d.name())
    }

    pub fn is_default(d: &BoDesign) -> bool {
        *d == BoDesign::default()
    }
}

/// One kernel's space, owned: configurations, predictions, truth.
struct KernelSpace {
    name: String,
    configs: Vec<Config>,
    predicted: Vec<Vec<f64>>,
    /// The other kernels' landscapes at this kernel's variants
    /// ([`Space::transfer`]).
    transfer: Vec<Vec<Option<super::transfer::Known>>>,
    speedup: Vec<Option<f64>>,
    opt: f64,
}

impl KernelSpace {
    /// Kernel `k`'s space over `rows`; `transfer`: with the landscapes of
    /// the kernels it marks at its variants.
    fn of(
        d: &Dataset,
        predicted: &[Vec<f64>],
        k: usize,
        rows: &[usize],
        transfer: Option<&[bool]>,
    ) -> KernelSpace {
        let speedup: Vec<Option<f64>> = rows.iter().map(|&i| Some(d.rows[i].speedup)).collect();
        KernelSpace {
            name: d.kernels[k].name.clone(),
            configs: rows.iter().map(|&i| d.rows[i].config).collect(),
            predicted: predicted
                .iter()
                .map(|p| rows.iter().map(|&i| p[i]).collect())
                .collect(),
            transfer: match transfer {
                None => Vec::new(),
                Some(keep) => Landscapes::of_kernels(d, &|o| keep[o]).project(
                    &rows
                        .iter()
                        .map(|&i| d.rows[i].producing_configs())
                        .collect::<Vec<_>>(),
                ),
            },
            opt: speedup
                .iter()
                .flatten()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max),
            speedup,
        }
    }

    fn landscape(&self) -> Landscape {
        let ok: Vec<f64> = self.speedup.iter().flatten().copied().collect();
        let share = |f: f64| {
            ok.iter().filter(|&&s| s >= (1.0 - f) * self.opt).count() as f64
                / self.speedup.len().max(1) as f64
        };
        let measured: Vec<usize> = (0..self.speedup.len())
            .filter(|&v| self.speedup[v].is_some())
            .collect();
        let predicted = ensemble(&self.predicted, &measured);
        let truth: Vec<f64> = measured.iter().filter_map(|&v| self.speedup[v]).collect();
        Landscape {
            kernel: self.name.clone(),
            variants: self.speedup.len(),
            opt: self.opt,
            within: [share(0.05), share(0.10), share(0.20)],
            rank_correlation: rank_correlation(&predicted, &truth),
        }
    }
}

/// The median of the values that are there (`None` when none is).
fn median(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let x: Vec<f64> = v.flatten().collect();
    (!x.is_empty()).then(|| crate::lab::runner::median(&x))
}

/// [`Options::prior_blend`]: every model's log prediction of row `i`
/// moved a share `w` of the way to the log of its measured speedup.
fn blended(d: &Dataset, predicted: &[Vec<f64>], w: f64) -> Vec<Vec<f64>> {
    predicted
        .iter()
        .map(|p| {
            p.iter()
                .zip(&d.rows)
                .map(|(&v, r)| ((1.0 - w) * v.max(FLOOR).ln() + w * r.speedup.ln()).exp())
                .collect()
        })
        .collect()
}

/// One run's curve, the evaluations it spent and its model's last
/// lengthscales.
type RunResult = (
    Vec<f64>,
    usize,
    Option<Vec<(&'static str, f64)>>,
    Vec<super::Observation>,
);

/// One run's best-so-far % of Opt after 1…budget evaluations (the last
/// value held when the run stops first: the space ran out, or the
/// expected improvement fell below `min_ei`), and the last lengthscales.
/// The run with a smaller budget is a prefix of this one.
fn one_run(
    ks: &KernelSpace,
    kinds: &[Kind],
    strategy: Strategy,
    seed: u64,
    budget: usize,
    min_ei: Option<f64>,
    design: BoDesign,
) -> RunResult {
    let space = Space {
        kinds,
        configs: &ks.configs,
        predicted: &ks.predicted,
        transfer: &ks.transfer,
    };
    let mut s = space.searcher_with(strategy, seed, design);
    let limits = Limits {
        budget,
        seconds: None,
        min_ei,
    };
    let Ok(outcome) = drive::<std::convert::Infallible>(&mut *s, &limits, &mut || 0.0, &mut |p| {
        Ok(ks.speedup[p.variant])
    });
    let history = outcome.history;
    let mut best = 0.0f64;
    let mut curve = Vec::with_capacity(budget);
    for o in &history {
        if let Some(v) = o.speedup {
            best = best.max(v);
        }
        curve.push(100.0 * best / ks.opt);
    }
    while curve.len() < budget {
        curve.push(curve.last().copied().unwrap_or(0.0));
    }
    let n = history.len();
    (curve, n, s.lengthscales(), history)
}

impl KernelSpace {
    /// Variant `v` as a step, `best` the best % of Opt so far.
    fn step(&self, v: usize, speedup: Option<f64>, best: f64) -> Step {
        Step {
            config: self.configs[v],
            speedup,
            percent: speedup.map(|s| 100.0 * s / self.opt),
            best,
            predicted: ensemble(&self.predicted, &[v])[0].exp(),
        }
    }

    /// A run's proposals as steps.
    fn trace(&self, history: &[super::Observation]) -> Vec<Step> {
        let mut best = 0.0f64;
        history
            .iter()
            .map(|o| {
                best = best.max(o.speedup.map_or(0.0, |s| 100.0 * s / self.opt));
                self.step(o.variant, o.speedup, best)
            })
            .collect()
    }

    /// The five fastest variants searched.
    fn fastest(&self) -> Vec<Step> {
        let mut all: Vec<usize> = (0..self.configs.len())
            .filter(|&v| self.speedup[v].is_some())
            .collect();
        all.sort_by(|&a, &b| {
            self.speedup[b]
                .unwrap_or(0.0)
                .total_cmp(&self.speedup[a].unwrap_or(0.0))
        });
        all.iter()
            .take(5)
            .map(|&v| {
                let s = self.speedup[v];
                self.step(v, s, s.map_or(0.0, |s| 100.0 * s / self.opt))
            })
            .collect()
    }
}

/// Replays `opts.strategies` over the dataset's kernels, with the
/// leave-one-out `predicted` speedups of [`crate::learn::evaluate::predictions`]
/// (per model in `kinds` order, per row). `progress(done, total)` is
/// called from the worker threads as runs finish.
pub fn simulate(
    d: &Dataset,
    kinds: &[Kind],
    predicted: &[Vec<f64>],
    opts: &Options,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Simulation, LearnError> {
    let budget = opts.budget.max(1);
    let prior_blend = opts.prior_blend.filter(|&w| w > 0.0);
    let counterfactual;
    let predicted = match prior_blend {
        Some(w) => {
            counterfactual = blended(d, predicted, w.min(1.0));
            &counterfactual
        }
        None => predicted,
    };
    let spaces = stages::kernel_spaces(d, predicted, opts);
    let fields = stages::fields(&spaces);
    let done = stages::run_all(&spaces, kinds, opts, budget, progress)?;
    let strategies = stages::strategy_curves(opts, &spaces, &done, &fields, budget);
    let traced = opts
        .trace
        .as_deref()
        .and_then(|t| spaces.iter().position(|ks| ks.name == t));
    let traces = traced
        .map(|k| stages::traces(opts, &spaces, &done, k))
        .unwrap_or_default();
    let landscapes: Vec<Landscape> = spaces.iter().map(KernelSpace::landscape).collect();
    Ok(Simulation {
        traces,
        fastest: traced.map(|k| spaces[k].fastest()).unwrap_or_default(),
        models: kinds.iter().map(|k| k.name().to_string()).collect(),
        budget,
        seeds: opts.seeds,
        min_ei: opts.min_ei,
        paper_only: opts.paper_only,
        no_transfer: opts.no_transfer,
        bo_design: opts.bo_design,
        prior_blend,
        train_kernels: opts.train_kernels,
        thresholds: THRESHOLDS.to_vec(),
        fields: fields.iter().map(|s| s.to_string()).collect(),
        strategies,
        median_rank_correlation: median(landscapes.iter().map(|l| l.rank_correlation)),
        landscapes,
    })
}

/// Leave-one-out predictions read back from the CSV that `evaluate
/// --predictions` writes (kernel, variant_id, …, one column per model):
/// per model in `kinds` order, per row of `d`. Every row of `d` must be
/// there, and every model's column.
pub fn read_predictions(
    d: &Dataset,
    kinds: &[Kind],
    csv: &str,
) -> Result<Vec<Vec<f64>>, LearnError> {
    let bad = |m: String| LearnError::Data(format!("predictions file: {m}"));
    let mut r = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(csv.as_bytes());
    let head = r.headers().map_err(|e| bad(e.to_string()))?.clone();
    if head.is_empty() {
        return Err(bad("empty".into()));
    }
    let cols: Vec<usize> = kinds
        .iter()
        .map(|k| {
            head.iter()
                .position(|h| h == k.name())
                .ok_or_else(|| bad(format!("no column for model {}", k.name())))
        })
        .collect::<Result<_, _>>()?;
    let mut at = std::collections::HashMap::new();
    for rec in r.records() {
        let f = rec.map_err(|e| bad(e.to_string()))?;
        let line = || f.iter().collect::<Vec<_>>().join(",");
        let id: i64 = f
            .get(1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| bad(format!("bad line `{}`", line())))?;
        let p: Vec<f64> = cols
            .iter()
            .map(|&c| f.get(c).and_then(|v| v.parse().ok()))
            .collect::<Option<_>>()
            .ok_or_else(|| bad(format!("bad line `{}`", line())))?;
        at.insert((f[0].to_string(), id), p);
    }
    let mut out = vec![vec![0.0; d.rows.len()]; kinds.len()];
    for (i, r) in d.rows.iter().enumerate() {
        let name = &d.kernels[r.kernel].name;
        let p = at
            .get(&(name.clone(), r.variant_id))
            .ok_or_else(|| bad(format!("no prediction for {name} variant {}", r.variant_id)))?;
        for (m, v) in p.iter().enumerate() {
            out[m][i] = *v;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::evaluate::{self, means};

    /// The leave-one-out predictions of `models` on `d`, two threads.
    fn folds(d: &Dataset, models: &[Kind]) -> (evaluate::Options, Vec<Vec<f64>>) {
        let eo = evaluate::Options {
            models: models.to_vec(),
            threads: 2,
            ..Default::default()
        };
        let p = evaluate::predictions(d, &eo).unwrap();
        (eo, p)
    }

    /// A simulation of `strategies` on two threads, nothing else asked.
    fn options(strategies: Vec<Strategy>, budget: usize, seeds: usize) -> Options {
        Options {
            strategies,
            budget,
            seeds,
            threads: 2,
            min_ei: None,
            paper_only: false,
            no_transfer: false,
            bo_design: BoDesign::Models,
            trace: None,
            prior_blend: None,
            train_kernels: None,
            train_seed: 1,
        }
    }

    #[test]
    fn median_skips_what_is_not_there() {
        assert_eq!(
            median([Some(3.0), None, Some(1.0), Some(2.0)].into_iter()),
            Some(2.0)
        );
        assert_eq!(median([Some(4.0), Some(1.0)].into_iter()), Some(2.5));
        assert_eq!(median([None].into_iter()), None);
    }

    /// A prior that is the truth ranks every kernel's variants as
    /// measured, and the models' first pick is then each kernel's Opt.
    #[test]
    fn a_prior_blended_all_the_way_to_the_truth_is_the_truth() {
        let d = Dataset::synthetic(4, 30, 4, 5);
        let (eo, p) = folds(&d, &[Kind::Lr, Kind::Ibk]);
        let go = |prior_blend| {
            let o = Options {
                prior_blend,
                ..options(vec![Strategy::MultiModel], 3, 1)
            };
            simulate(&d, &eo.models, &p, &o, &|_, _| {}).unwrap()
        };
        let (models, truth, half) = (go(None), go(Some(1.0)), go(Some(0.5)));
        assert_eq!(models.prior_blend, None);
        assert_eq!(truth.prior_blend, Some(1.0));
        for l in &truth.landscapes {
            assert!(
                (l.rank_correlation.unwrap() - 1.0).abs() < 1e-12,
                "{}",
                l.kernel
            );
        }
        assert!((truth.median_rank_correlation.unwrap() - 1.0).abs() < 1e-12);
        assert!(
            truth.strategies[0]
                .kernels
                .iter()
                .all(|k| (k.percent[0] - 100.0).abs() < 1e-9)
        );
        let (m, h) = (
            models.median_rank_correlation.unwrap(),
            half.median_rank_correlation.unwrap(),
        );
        assert!(m < h && h < 1.0, "{m} {h}");
        let json = serde_json::to_string(&half).unwrap();
        assert!(json.contains("\"prior_blend\":0.5") && json.contains("rank_correlation"));
        assert!(
            !serde_json::to_string(&models)
                .unwrap()
                .contains("prior_blend")
        );
    }

    #[test]
    fn a_trace_is_the_first_seeds_run_step_by_step() {
        let d = Dataset::synthetic(3, 20, 4, 5);
        let (eo, p) = folds(&d, &[Kind::Lr, Kind::Ibk]);
        let name = d.kernels[1].name.clone();
        let o = Options {
            trace: Some(name.clone()),
            ..options(vec![Strategy::Diverse, Strategy::Random], 8, 3)
        };
        let s = simulate(&d, &eo.models, &p, &o, &|_, _| {}).unwrap();
        assert_eq!(s.traces.len(), 2);
        let k = s.landscapes.iter().position(|l| l.kernel == name).unwrap();
        for (t, c) in s.traces.iter().zip(&s.strategies) {
            assert_eq!(t.kernel, name);
            assert_eq!(t.strategy, c.strategy);
            assert_eq!(t.steps.len(), 8);
            let mut seen = std::collections::HashSet::new();
            for st in &t.steps {
                assert!(seen.insert(st.config), "unique proposals");
            }
            // The best so far only rises, to the best proposal's share
            // of Opt; a strategy of one run per kernel has it as its
            // curve's last value.
            assert!(t.steps.windows(2).all(|w| w[0].best <= w[1].best));
            let last = t.steps.last().unwrap().best;
            let top = t.steps.iter().filter_map(|s| s.percent).fold(0.0, f64::max);
            assert!((last - top).abs() < 1e-9);
            if c.runs_per_kernel == 1 {
                assert!((c.kernels[k].percent[7] - last).abs() < 1e-9);
            }
        }
        assert_eq!(s.fastest.len(), 5);
        assert!((s.fastest[0].percent.unwrap() - 100.0).abs() < 1e-9);
        assert!(s.fastest.windows(2).all(|w| w[0].speedup >= w[1].speedup));
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"traces\"") && json.contains("\"fastest\""));
        let untraced = simulate(
            &d,
            &eo.models,
            &p,
            &Options { trace: None, ..o },
            &|_, _| {},
        )
        .unwrap();
        assert!(untraced.traces.is_empty() && untraced.fastest.is_empty());
        assert!(!serde_json::to_string(&untraced).unwrap().contains("traces"));
    }

    /// With the paper's variants only searched, a kernel's curve ends at
    /// the best of them as a share of the best of all, beyond the paper's
    /// space too; searching all of them ends at 100%.
    #[test]
    fn paper_only_searches_the_paper_and_measures_against_all() {
        let mut d = Dataset::synthetic(4, 30, 4, 5);
        let beyond: Config = "omp=1,tile=64x64x64".parse().unwrap();
        for (i, r) in d.rows.iter_mut().enumerate() {
            if i % 10 == 3 {
                r.config = beyond;
                r.speedup *= 4.0;
            }
        }
        let (eo, p) = folds(&d, &[Kind::Lr, Kind::Ibk]);
        let go = |paper_only| {
            let o = Options {
                paper_only,
                ..options(vec![Strategy::Diverse], 30, 1)
            };
            simulate(&d, &eo.models, &p, &o, &|_, _| {}).unwrap()
        };
        let (all, paper) = (go(false), go(true));
        assert!(paper.paper_only && !all.paper_only);
        for (k, rows) in d.rows_by_kernel().iter().enumerate() {
            let best = |f: &dyn Fn(&&usize) -> bool| {
                rows.iter()
                    .filter(f)
                    .map(|&i| d.rows[i].speedup)
                    .fold(0.0, f64::max)
            };
            let opt = best(&|_| true);
            let paper_best = best(&|&&i| d.rows[i].config.is_paper());
            assert!(paper_best < opt);
            let (a, p) = (
                &all.strategies[0].kernels[k],
                &paper.strategies[0].kernels[k],
            );
            assert!((a.percent[29] - 100.0).abs() < 1e-9);
            assert!((p.percent[29] - 100.0 * paper_best / opt).abs() < 1e-9);
            assert_eq!(paper.landscapes[k].opt, opt);
            assert!(paper.landscapes[k].variants < all.landscapes[k].variants);
        }
    }

    #[test]
    fn at_six_evaluations_multi_model_is_evaluates_multi_model_x6() {
        let d = Dataset::synthetic(5, 40, 4, 3);
        let (eo, p) = folds(&d, &[Kind::Lr, Kind::Ibk, Kind::M5p]);
        let e = evaluate::score(&d, &eo.models, &p, &eo);
        let strategies = vec![Strategy::MultiModel, Strategy::Diverse, Strategy::Random];
        let s = simulate(&d, &eo.models, &p, &options(strategies, 8, 3), &|_, _| {}).unwrap();
        let mm = &s.strategies[0];
        for (k, c) in e.kernels.iter().zip(&mm.kernels) {
            assert_eq!(c.percent[5], 100.0 * k.multi_n / k.opt, "{}", k.kernel);
        }
        let dv = &s.strategies[1];
        for (k, c) in e.kernels.iter().zip(&dv.kernels) {
            assert_eq!(c.percent[5], 100.0 * k.diverse_n / k.opt, "{}", k.kernel);
        }
        let pct: Vec<f64> = e
            .kernels
            .iter()
            .map(|k| 100.0 * k.multi_n / k.opt)
            .collect();
        assert_eq!(mm.mean[5], means(&pct).0);
        // Curves never fall, and reach 100 at most.
        for st in &s.strategies {
            for k in &st.kernels {
                assert!(k.percent.windows(2).all(|w| w[0] <= w[1]));
                assert!(k.percent.iter().all(|&p| p <= 100.0 + 1e-9));
                assert_eq!(k.percent.len(), 8);
            }
        }
        assert_eq!(s.strategies[2].runs_per_kernel, 3);
        // Without a stopping rule every run spends its budget.
        for st in &s.strategies {
            assert_eq!(st.spent, (1..=8).map(|b| b as f64).collect::<Vec<_>>());
        }
        assert_eq!(s.landscapes.len(), 5);
        assert!(s.landscapes.iter().all(|l| l.within[0] > 0.0));
        // Predictions written by `evaluate --predictions` read back whole.
        let csv = evaluate::predictions_csv(&d, &eo.models, &p);
        assert_eq!(read_predictions(&d, &eo.models, &csv).unwrap(), p);
        let e = read_predictions(&d, &[Kind::Svm], &csv).unwrap_err();
        assert!(e.to_string().contains("no column for model SVM"), "{e}");
    }

    #[test]
    fn the_stopping_rule_spends_fewer_evaluations_and_holds_the_curve() {
        let d = Dataset::synthetic(4, 40, 4, 5);
        let (eo, p) = folds(&d, &[Kind::Lr, Kind::Ibk]);
        let go = |min_ei| {
            let o = Options {
                min_ei,
                ..options(vec![Strategy::Bo { prior: true }, Strategy::Diverse], 20, 1)
            };
            simulate(&d, &eo.models, &p, &o, &|_, _| {}).unwrap()
        };
        let (free, ruled) = (go(None), go(Some(0.05)));
        assert_eq!(ruled.min_ei, Some(0.05));
        let (f, r) = (&free.strategies[0], &ruled.strategies[0]);
        assert!(r.spent[19] < 20.0, "{:?}", r.spent);
        for (fk, rk) in f.kernels.iter().zip(&r.kernels) {
            // One run per kernel: it stopped after `s` evaluations, and
            // its curve is the free run's, held from there.
            let s = rk.spent[19] as usize;
            assert!(s >= super::super::bo::INITIAL_PRIOR, "{}", rk.kernel);
            for b in 0..20 {
                assert_eq!(rk.spent[b], (b + 1).min(s) as f64);
                assert_eq!(rk.percent[b], fk.percent[b.min(s - 1)], "{}", rk.kernel);
            }
        }
        // Planned strategies compute no expected improvement: untouched.
        assert_eq!(free.strategies[1].mean, ruled.strategies[1].mean);
        assert_eq!(ruled.strategies[1].spent[19], 20.0);
    }
}
