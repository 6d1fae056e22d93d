//! Running a searcher under limits, as `optimize` does: a budget of
//! unique evaluations, a wall-time budget on the evaluations, and — for a
//! searcher that computes one — a floor on the expected improvement of
//! its next proposal. The clock is passed in, so the limits are tested
//! without timing anything.

use super::{Observation, Searcher};
use serde::Serialize;

/// The default floor on the expected improvement (`--min-ei` of
/// `optimize` and `simulate`): a next candidate not expected to run even
/// 0.1% faster than the incumbent is not worth running. The process's
/// expected improvement is small once the design is in (its
/// uncertainty, fitted to a handful of runs, is narrow), so a floor of
/// 1% stopped too early: `bo` on the shipped dataset with gcc, mean % of
/// Opt and evaluations spent at budgets 6 / 12 / 30: 1% → 90.8 (5.3) /
/// 93.1 (5.8) / 93.4 (6.0); **0.1% → 91.8 (5.7) / 95.3 (8.5) / 95.5
/// (10.1)**; no floor → 91.9 (5.8) / 96.2 (11.2) / 99.9 (26.2). Clang
/// confirms: 85.1 / 86.0 / 86.0 at 1%, 86.7 / 92.9 / 93.6 at 0.1%
/// (docs/src/results/searching.md, "What the stopping rule costs").
pub const DEFAULT_MIN_EI: f64 = 0.001;

/// When a search stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Unique evaluations at most.
    pub budget: usize,
    /// Stop proposing once the evaluations have taken this many seconds
    /// (a running evaluation is finished).
    pub seconds: Option<f64>,
    /// Stop when the searcher's expected improvement of its next proposal
    /// (relative: 0.01 is 1% faster than the incumbent, the best of the
    /// original and the candidates measured) falls below
    /// this. Searchers without one (planned strategies, local search, a
    /// Bayesian search still in its initial design) are not stopped by it.
    pub min_ei: Option<f64>,
}

/// Why a search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// The budget of evaluations was spent.
    Budget,
    /// The time budget was spent.
    Time,
    /// The next proposal's expected improvement fell below the floor.
    ExpectedImprovement,
    /// Every variant was measured (or the plan ran out).
    Exhausted,
}

/// One proposal handed to the measurement: the variant, why the searcher
/// chose it and, when it computes one, its expected improvement.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub variant: usize,
    /// The evaluation's number, from 1.
    pub k: usize,
    pub why: Option<String>,
    pub expected_improvement: Option<f64>,
}

/// What a driven search did.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub history: Vec<Observation>,
    pub stop: Stop,
    /// The expected improvement of the proposal that was not measured
    /// (with [`Stop::ExpectedImprovement`]).
    pub final_ei: Option<f64>,
}

/// Runs `searcher` under `limits`: `elapsed` tells the seconds the
/// evaluations have taken so far, `measure` evaluates a proposal (its
/// speedup, `None` when it failed; an error ends the search).
pub fn drive<E>(
    searcher: &mut dyn Searcher,
    limits: &Limits,
    elapsed: &mut dyn FnMut() -> f64,
    measure: &mut dyn FnMut(&Proposal) -> Result<Option<f64>, E>,
) -> Result<Outcome, E> {
    let mut history: Vec<Observation> = Vec::new();
    let stop = |history, stop, final_ei| {
        Ok(Outcome {
            history,
            stop,
            final_ei,
        })
    };
    loop {
        if history.len() >= limits.budget {
            return stop(history, Stop::Budget, None);
        }
        if limits.seconds.is_some_and(|s| elapsed() >= s) {
            return stop(history, Stop::Time, None);
        }
        let Some(v) = searcher.next(&history) else {
            return stop(history, Stop::Exhausted, None);
        };
        let ei = searcher.expected_improvement();
        if let (Some(floor), Some(e)) = (limits.min_ei, ei)
            && e < floor
        {
            return stop(history, Stop::ExpectedImprovement, Some(e));
        }
        let p = Proposal {
            variant: v,
            k: history.len() + 1,
            why: searcher.why(),
            expected_improvement: ei,
        };
        history.push(Observation {
            variant: v,
            speedup: measure(&p)?,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{space_of, truth};
    use super::super::{Space, Strategy, run};
    use super::*;
    use crate::learn::Kind;

    /// [`drive`] with a measurement that cannot fail.
    fn go(
        searcher: &mut dyn Searcher,
        limits: &Limits,
        elapsed: &mut dyn FnMut() -> f64,
        measure: &mut dyn FnMut(&Proposal) -> Option<f64>,
    ) -> Outcome {
        drive::<std::convert::Infallible>(searcher, limits, elapsed, &mut |p| Ok(measure(p)))
            .unwrap()
    }

    fn limits(budget: usize) -> Limits {
        Limits {
            budget,
            seconds: None,
            min_ei: None,
        }
    }

    #[test]
    fn without_other_limits_it_is_the_plain_run() {
        let (configs, predicted) = space_of(50);
        let kinds = [Kind::Lr, Kind::Ibk];
        let s = Space {
            kinds: &kinds,
            configs: &configs,
            predicted: &predicted,
            transfer: &[],
        };
        for st in [Strategy::Diverse, Strategy::Bo { prior: true }] {
            let o = go(
                &mut *s.searcher(st, 1),
                &limits(10),
                &mut || 0.0,
                &mut |p| truth(&configs[p.variant]),
            );
            assert_eq!(o.stop, Stop::Budget);
            let plain = run(&mut *s.searcher(st, 1), 10, &mut |v| truth(&configs[v]));
            assert_eq!(o.history, plain, "{st:?}");
            // The whole of a small space, then nothing.
            let small = Space {
                configs: &configs[..7],
                ..s
            };
            let o = go(
                &mut *small.searcher(st, 1),
                &limits(10),
                &mut || 0.0,
                &mut |p| truth(&configs[p.variant]),
            );
            assert_eq!((o.history.len(), o.stop), (7, Stop::Exhausted));
        }
    }

    #[test]
    fn the_time_budget_stops_proposing_once_spent() {
        let (configs, predicted) = space_of(50);
        let kinds = [Kind::Lr, Kind::Ibk];
        let s = Space {
            kinds: &kinds,
            configs: &configs,
            predicted: &predicted,
            transfer: &[],
        };
        // Each evaluation "takes" 2.5 s on a clock that only the
        // measurements move.
        let clock = std::cell::Cell::new(0.0);
        let o = go(
            &mut *s.searcher(Strategy::Bo { prior: true }, 1),
            &Limits {
                budget: 12,
                seconds: Some(10.0),
                min_ei: None,
            },
            &mut || clock.get(),
            &mut |p| {
                clock.set(clock.get() + 2.5);
                truth(&configs[p.variant])
            },
        );
        // 0, 2.5, 5, 7.5 s spent before each of four; 10 s after them.
        assert_eq!((o.history.len(), o.stop), (4, Stop::Time));
        // A budget of 0 s runs nothing.
        let o = go(
            &mut *s.searcher(Strategy::Diverse, 1),
            &Limits {
                budget: 12,
                seconds: Some(0.0),
                min_ei: None,
            },
            &mut || 0.0,
            &mut |_| panic!("nothing may run"),
        );
        assert_eq!((o.history.len(), o.stop), (0, Stop::Time));
    }

    #[test]
    fn bayesian_search_stops_when_little_improvement_is_expected() {
        let (configs, predicted) = space_of(80);
        let kinds = [Kind::Lr, Kind::Ibk];
        let s = Space {
            kinds: &kinds,
            configs: &configs,
            predicted: &predicted,
            transfer: &[],
        };
        // A flat space: every variant as fast as the first measured, so
        // once the initial design is in, nothing is expected.
        let flat = |_: &Proposal| Some(1.0);
        let mut seen: Vec<Proposal> = Vec::new();
        let o = go(
            &mut *s.searcher(Strategy::Bo { prior: true }, 1),
            &Limits {
                budget: 30,
                seconds: None,
                min_ei: Some(0.01),
            },
            &mut || 0.0,
            &mut |p| {
                seen.push(p.clone());
                flat(p)
            },
        );
        assert_eq!(o.stop, Stop::ExpectedImprovement);
        let e = o.final_ei.unwrap();
        assert!((0.0..0.01).contains(&e), "{e}");
        // The initial design is never cut short, and says what it is.
        let initial = super::super::bo::INITIAL_PRIOR;
        assert!(o.history.len() >= initial, "{}", o.history.len());
        assert!(seen[0].why.as_deref().unwrap().contains("initial design"));
        assert_eq!(seen[0].expected_improvement, None);
        // Every proposal past the design carried its EI above the floor.
        for p in &seen[initial..] {
            assert!(p.expected_improvement.unwrap() >= 0.01, "{p:?}");
            assert!(p.why.as_deref().unwrap().starts_with("bo #"), "{p:?}");
        }
        // Without the floor the same search runs to its budget; with a
        // floor of 0 too.
        for floor in [None, Some(0.0)] {
            let o = go(
                &mut *s.searcher(Strategy::Bo { prior: true }, 1),
                &Limits {
                    budget: 30,
                    seconds: None,
                    min_ei: floor,
                },
                &mut || 0.0,
                &mut flat.clone(),
            );
            assert_eq!((o.history.len(), o.stop), (30, Stop::Budget));
        }
        // On a space with something to find, a 1% floor lets it go on
        // past its initial design while the expectation is high.
        let o = go(
            &mut *s.searcher(Strategy::Bo { prior: true }, 1),
            &Limits {
                budget: 30,
                seconds: None,
                min_ei: Some(0.01),
            },
            &mut || 0.0,
            &mut |p| truth(&configs[p.variant]),
        );
        assert!(o.history.len() > initial, "{o:?}");
        // Planned strategies have no EI: the floor never stops them.
        let o = go(
            &mut *s.searcher(Strategy::MultiModel, 1),
            &Limits {
                budget: 20,
                seconds: None,
                min_ei: Some(0.5),
            },
            &mut || 0.0,
            &mut flat.clone(),
        );
        assert_eq!((o.history.len(), o.stop), (20, Stop::Budget));
    }
}

#[cfg(test)]
mod errors {
    use super::super::tests::space_of;
    use super::super::{Space, Strategy};
    use super::*;
    use crate::learn::Kind;

    #[test]
    fn a_failed_measurement_ends_the_search() {
        let (configs, predicted) = space_of(20);
        let kinds = [Kind::Lr];
        let s = Space {
            kinds: &kinds,
            configs: &configs,
            predicted: &predicted[..1],
            transfer: &[],
        };
        let mut runs = 0;
        let r = drive(
            &mut *s.searcher(Strategy::Bo { prior: true }, 1),
            &Limits {
                budget: 10,
                seconds: None,
                min_ei: None,
            },
            &mut || 0.0,
            &mut |_| {
                runs += 1;
                if runs == 3 {
                    Err("disk full")
                } else {
                    Ok(Some(1.0))
                }
            },
        );
        assert_eq!(r, Err("disk full"));
        assert_eq!(runs, 3);
    }
}
