//! Search strategies: which distinct variant of a program to measure
//! next, given the learned models' predictions and what has been
//! measured so far. One implementation serves the learned `optimize`
//! (which runs the proposals) and `simulate` (which replays them over a
//! space measured beforehand, running nothing).
//!
//! A strategy is either *planned* — an order fixed by the predictions
//! alone (multi-model, diverse, one model, random): the first N of the
//! order are its N shots — or *adaptive* — each proposal depends on the
//! measurements before it (local search, Bayesian optimization). Both are
//! driven through [`Searcher`]; no strategy knows its budget, so the
//! first N proposals of a run are the run with budget N.

use super::Kind;
use super::evaluate::{DIVERSE_BITS, consensus, diverse, ensemble, ranking, round_robin};
use crate::config::Config;
use crate::lab::rng::Lcg;

pub mod bo;
pub mod drive;
pub mod fields;
pub mod gp;
pub mod local;
pub mod simulate;
pub mod transfer;

/// How candidates are picked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Strategy {
    /// Each model's best guess in turn, then each model's second, … (the
    /// paper's multi-model).
    MultiModel,
    /// The six models' ensemble (mean log prediction), its best variant
    /// first, then the next best at least a few configuration bits away
    /// from every one taken: the runs go to distinct regions of the space.
    Diverse,
    /// One model's top N.
    Model(Kind),
    /// Variants drawn uniformly at random, without repetition (a
    /// baseline).
    Random,
    /// Greedy local search from a random variant: the unmeasured variant
    /// nearest (in configuration fields) to the best measured so far (a
    /// baseline; adaptive).
    Local,
    /// Bayesian optimization (a Gaussian process over the configuration's
    /// fields, expected improvement times the probability of being
    /// feasible); `prior`: the learned models' ensemble is its prior mean
    /// and their diversified picks its initial design, else a constant
    /// mean and random initial points. Adaptive.
    Bo { prior: bool },
}

impl Strategy {
    /// The name on the command line.
    pub fn name(self) -> String {
        match self {
            Strategy::MultiModel => "multi-model".into(),
            Strategy::Diverse => "diverse".into(),
            Strategy::Model(k) => format!("model:{}", k.name()),
            Strategy::Random => "random".into(),
            Strategy::Local => "local".into(),
            Strategy::Bo { prior: true } => "bo".into(),
            Strategy::Bo { prior: false } => "bo-plain".into(),
        }
    }

    /// Whether its proposals depend on measurements (it cannot be planned
    /// ahead of running anything).
    pub fn adaptive(self) -> bool {
        matches!(self, Strategy::Local | Strategy::Bo { .. })
    }

    /// Whether it draws at random (several seeds tell its spread).
    pub(crate) fn randomized(self) -> bool {
        matches!(
            self,
            Strategy::Random | Strategy::Local | Strategy::Bo { prior: false }
        )
    }
}

impl std::str::FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Strategy, String> {
        match s {
            "multi-model" => Ok(Strategy::MultiModel),
            "random" => Ok(Strategy::Random),
            "diverse" => Ok(Strategy::Diverse),
            "local" => Ok(Strategy::Local),
            "bo" => Ok(Strategy::Bo { prior: true }),
            "bo-plain" => Ok(Strategy::Bo { prior: false }),
            _ => match s.strip_prefix("model:") {
                Some(name) => Kind::parse(name).map(Strategy::Model),
                None => Err(format!(
                    "unknown strategy `{s}`: expected multi-model, diverse, model:NAME (NAME one of {}), random, local, bo or bo-plain",
                    Kind::ALL.map(Kind::name).join(", ")
                )),
            },
        }
    }
}

/// One program's space as a strategy sees it: its distinct variants
/// (each by its representative configuration) and every model's
/// predicted speedup of each.
#[derive(Debug, Clone, Copy)]
pub struct Space<'a> {
    pub kinds: &'a [Kind],
    pub configs: &'a [Config],
    /// `predicted[m][v]`: model m's predicted speedup of variant v.
    pub predicted: &'a [Vec<f64>],
    /// `transfer[p][v]`: the search's target (−ln speedup) that another
    /// measured program p had at variant v's configurations
    /// ([`transfer::Landscapes::project`]); empty without landscapes.
    pub transfer: &'a [Vec<Option<transfer::Known>>],
}

/// A measured variant: its speedup over the original, or `None` when it
/// failed (did not compile, crashed, timed out, computed a wrong result).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    pub variant: usize,
    pub speedup: Option<f64>,
}

/// Proposes the next variant to measure.
pub trait Searcher {
    /// The next variant (never one in `history`), or `None` when the
    /// space is exhausted. `history` holds every earlier proposal with
    /// its outcome, in order.
    fn next(&mut self, history: &[Observation]) -> Option<usize>;

    /// The lengthscale of each configuration field in the searcher's
    /// model, by name, when it has one (the shorter, the more the field
    /// matters).
    fn lengthscales(&self) -> Option<Vec<(&'static str, f64)>> {
        None
    }

    /// The expected improvement of the last proposal over the best
    /// measured so far, relative (0.01: 1% faster), when the searcher
    /// computed one for it.
    fn expected_improvement(&self) -> Option<f64> {
        None
    }

    /// Why the last proposal was made, when the searcher says.
    fn why(&self) -> Option<String> {
        None
    }
}

impl<'a> Space<'a> {
    fn all(&self) -> Vec<usize> {
        (0..self.configs.len()).collect()
    }

    /// The variant with the least sum of ranks over all models.
    pub fn consensus(&self) -> Option<usize> {
        consensus(self.predicted, &self.all())
    }

    /// The six models' ensemble score (mean log predicted speedup) of
    /// every variant.
    pub(crate) fn ensemble(&self) -> Vec<f64> {
        ensemble(self.predicted, &self.all())
    }

    /// Up to `n` distinct variants of a planned strategy, best guess
    /// first, each with why it was chosen. An adaptive strategy has no
    /// plan: empty.
    pub fn plan(&self, strategy: Strategy, n: usize, seed: u64) -> Vec<(usize, String)> {
        let all = self.all();
        let mut out: Vec<(usize, String)> = Vec::new();
        match strategy {
            Strategy::MultiModel => {
                let ranks: Vec<Vec<usize>> =
                    self.predicted.iter().map(|p| ranking(&all, p)).collect();
                // Agreement between models costs no extra run.
                for (v, by) in round_robin(&ranks, n) {
                    let why: Vec<String> = by
                        .iter()
                        .map(|&(m, depth)| format!("{} #{}", self.kinds[m].name(), depth + 1))
                        .collect();
                    out.push((v, why.join(", ")));
                }
            }
            Strategy::Diverse => {
                let e = self.ensemble();
                let order = ranking(&all, &e);
                for v in diverse(&e, self.configs, n, DIVERSE_BITS) {
                    let place = order.iter().position(|&w| w == v).unwrap_or(0);
                    out.push((v, format!("ensemble #{}", place + 1)));
                }
            }
            Strategy::Model(kind) => {
                if let Some(m) = self.kinds.iter().position(|&k| k == kind) {
                    for (i, v) in ranking(&all, &self.predicted[m])
                        .into_iter()
                        .take(n)
                        .enumerate()
                    {
                        out.push((v, format!("{} #{}", kind.name(), i + 1)));
                    }
                }
            }
            Strategy::Random => {
                let mut rng = Lcg::new(seed);
                let mut pool = all;
                while out.len() < n && !pool.is_empty() {
                    let v = pool.swap_remove(pick(&mut rng, pool.len()));
                    out.push((v, "random".into()));
                }
            }
            Strategy::Local | Strategy::Bo { .. } => {}
        }
        out
    }

    /// A searcher for `strategy` over this space, seeded.
    pub fn searcher(&self, strategy: Strategy, seed: u64) -> Box<dyn Searcher + 'a> {
        self.searcher_with(strategy, seed, bo::BoDesign::Models)
    }

    /// A searcher for `strategy` over this space, seeded; Bayesian
    /// optimization with `design` (the other strategies have one).
    pub fn searcher_with(
        &self,
        strategy: Strategy,
        seed: u64,
        design: bo::BoDesign,
    ) -> Box<dyn Searcher + 'a> {
        match strategy {
            Strategy::Local => Box::new(local::Local::new(*self, seed)),
            Strategy::Bo { prior } => Box::new(bo::Bo::new(*self, prior, seed, design)),
            planned => Box::new(Planned::new(self.plan(planned, self.configs.len(), seed))),
        }
    }
}

/// An index drawn uniformly below `n` (> 0).
pub(crate) fn pick(rng: &mut Lcg, n: usize) -> usize {
    ((rng.uniform() * n as f64) as usize).min(n - 1)
}

/// A planned strategy's order, handed out one by one with why each was
/// chosen (skipping what was measured otherwise).
pub struct Planned {
    order: Vec<(usize, String)>,
    at: usize,
}

impl Planned {
    /// The searcher that proposes `plan` (as [`Space::plan`] gives it).
    pub fn new(plan: Vec<(usize, String)>) -> Planned {
        Planned { order: plan, at: 0 }
    }
}

impl Searcher for Planned {
    fn next(&mut self, history: &[Observation]) -> Option<usize> {
        while let Some(&(v, _)) = self.order.get(self.at) {
            self.at += 1;
            if !history.iter().any(|o| o.variant == v) {
                return Some(v);
            }
        }
        None
    }

    fn why(&self) -> Option<String> {
        self.at
            .checked_sub(1)
            .and_then(|i| self.order.get(i))
            .map(|p| p.1.clone())
    }
}

/// Runs a searcher for up to `budget` unique measurements, `measure`
/// giving each proposal's outcome; returns the history.
#[cfg(test)]
pub(crate) fn run(
    searcher: &mut dyn Searcher,
    budget: usize,
    measure: &mut dyn FnMut(usize) -> Option<f64>,
) -> Vec<Observation> {
    let mut history: Vec<Observation> = Vec::new();
    while history.len() < budget {
        let Some(v) = searcher.next(&history) else {
            break;
        };
        debug_assert!(!history.iter().any(|o| o.variant == v), "a repeat");
        history.push(Observation {
            variant: v,
            speedup: measure(v),
        });
    }
    history
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A space of `n` variants with two models' predictions.
    pub(crate) fn space_of(n: usize) -> (Vec<Config>, Vec<Vec<f64>>) {
        let configs: Vec<Config> = Config::all().into_iter().step_by(7).take(n).collect();
        let p1 = (0..n).map(|i| 1.0 + (i as f64 * 0.37).sin()).collect();
        let p2 = (0..n).map(|i| 1.0 + (i as f64 * 0.11).cos()).collect();
        (configs, vec![p1, p2])
    }

    /// The measured truth of the test spaces: a smooth function of the
    /// configuration with a few failures.
    pub(crate) fn truth(c: &Config) -> Option<f64> {
        let t = c.features();
        if t[6] == 1.0 && t[10] == 1.0 && t[2] == 0.0 {
            return None;
        }
        Some(0.5 + 2.0 * t[2] + t[6] * (1.0 + t[3]) - 0.3 * t[10] + 0.2 * t[0])
    }

    #[test]
    fn every_strategy_is_deterministic_unique_and_within_budget() {
        let (configs, predicted) = space_of(60);
        let kinds = [Kind::Lr, Kind::Ibk];
        let s = Space {
            kinds: &kinds,
            configs: &configs,
            predicted: &predicted,
            transfer: &[],
        };
        for st in [
            Strategy::MultiModel,
            Strategy::Diverse,
            Strategy::Model(Kind::Ibk),
            Strategy::Random,
            Strategy::Local,
            Strategy::Bo { prior: true },
            Strategy::Bo { prior: false },
        ] {
            let go = |seed: u64, budget: usize| {
                run(&mut *s.searcher(st, seed), budget, &mut |v| {
                    truth(&configs[v])
                })
            };
            let a = go(3, 15);
            assert_eq!(a.len(), 15, "{st:?}");
            assert_eq!(a, go(3, 15), "{st:?}: the same seed, the same run");
            let mut seen: Vec<usize> = a.iter().map(|o| o.variant).collect();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), 15, "{st:?}: unique evaluations");
            // A shorter budget is a prefix of a longer one.
            assert_eq!(go(3, 6)[..], a[..6], "{st:?}");
            // The whole space, then nothing more (a small one: quick).
            let small = Space {
                configs: &configs[..12],
                ..s
            };
            let all = run(&mut *small.searcher(st, 3), 100, &mut |v| {
                truth(&configs[v])
            });
            assert_eq!(all.len(), 12, "{st:?}");
            if st.randomized() {
                assert_ne!(a, go(4, 15), "{st:?}: another seed, another run");
            }
            // Planned strategies' orders are their plans.
            if !st.adaptive() {
                let plan: Vec<usize> = s.plan(st, 15, 3).iter().map(|p| p.0).collect();
                assert_eq!(plan, a.iter().map(|o| o.variant).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn strategies_parse_with_helpful_errors() {
        assert_eq!("bo".parse(), Ok(Strategy::Bo { prior: true }));
        assert_eq!("bo-plain".parse(), Ok(Strategy::Bo { prior: false }));
        assert_eq!("local".parse(), Ok(Strategy::Local));
        for s in [
            "multi-model",
            "diverse",
            "model:K*",
            "random",
            "local",
            "bo",
        ] {
            assert_eq!(s.parse::<Strategy>().unwrap().name(), s);
        }
    }
}
