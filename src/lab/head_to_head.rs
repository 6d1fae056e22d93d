//! The head to head of a candidate against the original: alternating
//! runs decided by the rule of [`super::decide`], on the regions' seconds
//! or, when the original's regions run too short to be timed, on the
//! whole program's; both kept for every round, so that the claim made is
//! the whole program's, measured in the same runs (issue 39).

use super::decide::{Decision, Rule};
use super::runner::{Timed, median};
use serde::Serialize;

/// Regions' seconds (the original's, in all) below which a region's
/// timing is no basis for a claim: a scheduler tick or an interrupt on a
/// virtual machine is of this order, and the clock's two reads per
/// execution (tens of nanoseconds each) are a visible part of it. Below
/// it the whole program's seconds decide.
pub const TIMEABLE_SECONDS: f64 = 1e-3;

/// What the head to head compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// The SCoP regions' seconds, as the instrumentation times them.
    Regions,
    /// The whole program's seconds, from its start to its end.
    Program,
}

impl Basis {
    /// The regions when the original's (`regions` seconds in all) can be
    /// timed, the whole program otherwise.
    pub fn for_original(regions: f64) -> Basis {
        if regions >= TIMEABLE_SECONDS {
            Basis::Regions
        } else {
            Basis::Program
        }
    }
}

/// A head to head: the decision on its basis, and both timings of every
/// round (original, candidate).
#[derive(Debug, Clone)]
pub struct Paired {
    pub decision: Decision,
    pub basis: Basis,
    pub rounds: Vec<(Timed, Timed)>,
}

impl Paired {
    /// The ratio original / candidate of the whole program's seconds:
    /// the Hodges–Lehmann estimate over the rounds (the median of the
    /// pairwise means of their log ratios, the estimate that goes with
    /// Wilcoxon's test). Not the plain median of the ratios: a short
    /// program's runs vary by a fifth (its start-up), and the median of
    /// 30 such ratios wanders. On a 160³ matrix product whose region's
    /// gain makes the whole program 1.05x faster (1 ms of 12 ms, 2.7x), two
    /// runs gave plain medians of 1.13 and 1.01; this estimate gave 1.04
    /// on the second (a Zen 3 guest, 2026-11-28).
    pub fn program_ratio(&self) -> f64 {
        let d: Vec<f64> = self
            .rounds
            .iter()
            .map(|(o, c)| (o.program / c.program.max(f64::MIN_POSITIVE)).ln())
            .collect();
        hodges_lehmann(&d).exp()
    }

    /// Median seconds of the whole program, original and candidate.
    pub fn program_seconds(&self) -> (f64, f64) {
        let o: Vec<f64> = self.rounds.iter().map(|(o, _)| o.program).collect();
        let c: Vec<f64> = self.rounds.iter().map(|(_, c)| c.program).collect();
        (median(&o), median(&c))
    }
}

/// The Hodges–Lehmann estimate of `d`'s centre: the median of the means
/// of every pair `(d[i] + d[j]) / 2`, `i <= j` (0 when empty).
pub(crate) fn hodges_lehmann(d: &[f64]) -> f64 {
    let mut walsh = Vec::with_capacity(d.len() * (d.len() + 1) / 2);
    for (i, x) in d.iter().enumerate() {
        walsh.extend(d[i..].iter().map(|y| (x + y) / 2.0));
    }
    if walsh.is_empty() {
        return 0.0;
    }
    median(&walsh)
}

/// [`super::decide::decide`] between two programs built by `harness`: one run of each
/// per round, the order swapped every round (a run can warm or disturb
/// the next), on `basis`: the regions' seconds as the harness times them,
/// or the whole program's. Both are kept for every round. `original` and
/// `candidate` may be the same program: an A/A check of the rule.
pub fn head_to_head(
    harness: &super::harness::Harness,
    original: &std::path::Path,
    candidate: &std::path::Path,
    rule: &Rule,
    basis: Basis,
) -> Result<Paired, super::runner::Run> {
    let mut k = 0;
    let mut rounds = Vec::new();
    let limits = harness.limits();
    let mut round = || -> Result<(f64, f64), super::runner::Run> {
        k += 1;
        let time = |exe| harness.timed_whole(exe, &[], &limits);
        let (o, c) = if k % 2 == 1 {
            let o = time(original)?;
            (o, time(candidate)?)
        } else {
            let c = time(candidate)?;
            (time(original)?, c)
        };
        rounds.push((o, c));
        Ok(match basis {
            Basis::Regions => (o.regions, c.regions),
            Basis::Program => (o.program, c.program),
        })
    };
    let started = std::time::Instant::now();
    let decision =
        super::decide::decide(rule, &mut round, &mut || started.elapsed().as_secs_f64())?;
    Ok(Paired {
        decision,
        basis,
        rounds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hodges_lehmann_finds_the_centre_of_two_heaps() {
        assert_eq!(hodges_lehmann(&[]), 0.0);
        assert_eq!(hodges_lehmann(&[0.3]), 0.3);
        // Walsh averages of 1, 2, 9: 1, 1.5, 5, 2, 5.5, 9 -> median 3.5.
        assert_eq!(hodges_lehmann(&[1.0, 2.0, 9.0]), 3.5);
        // Rounds alternate their order: first runs are 10% slower, so the
        // log ratios are 0.02 +- 0.1 in two heaps; the centre is 0.02.
        let d: Vec<f64> = (0..30)
            .map(|k| 0.02 + if k % 2 == 0 { 0.1 } else { -0.1 } + (k as f64) * 1e-4)
            .collect();
        let c = hodges_lehmann(&d);
        assert!((c - 0.0215).abs() < 0.005, "{c}");
    }

    #[test]
    fn the_basis_is_the_whole_program_below_a_millisecond_of_regions() {
        assert_eq!(Basis::for_original(0.5e-3), Basis::Program);
        assert_eq!(Basis::for_original(0.0), Basis::Program);
        assert_eq!(Basis::for_original(1e-3), Basis::Regions);
        assert_eq!(Basis::for_original(2.0), Basis::Regions);
    }
}
