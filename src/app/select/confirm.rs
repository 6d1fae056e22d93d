//! Whether a measured winner holds: a threaded one rerun with sleeping
//! threads, and the head-to-head confirmation against the original.

use super::HeadToHead;
use crate::lab::confine::Limits;
use crate::lab::decide::Rule;
use crate::lab::harness::Harness;
use crate::lab::head_to_head::Basis;
use crate::lab::runner::{Protocol, median};
use std::path::Path;

/// What a threaded candidate is also run with: threads that sleep at
/// barriers, as libgomp's do when the machine is loaded.
const PASSIVE: [(&str, &str); 1] = [("OMP_WAIT_POLICY", "passive")];

/// Runs of a threaded candidate with sleeping threads (fewer when the
/// first is clearly slow).
const PASSIVE_RUNS: usize = 3;

/// Kernel seconds of a threaded candidate's runs with sleeping threads;
/// `None` for a run that failed or took far longer than the original.
pub(super) fn passive_seconds(
    harness: &Harness,
    exe: &Path,
    base: f64,
    p: &Protocol,
) -> Vec<Option<f64>> {
    let limits = Limits {
        timeout: p
            .timeout
            .min(std::time::Duration::from_secs_f64(base * 5.0 + 2.0)),
        ..p.limits()
    };
    let mut out = Vec::new();
    for _ in 0..PASSIVE_RUNS {
        let t = harness.timed_with(exe, &PASSIVE, &limits).ok();
        let clearly_slow = t.is_none_or(|t| t > 2.0 * base);
        out.push(t);
        if clearly_slow {
            break;
        }
    }
    out
}

/// Whether a threaded candidate stays at least as fast as the original
/// (`base` seconds) with sleeping threads: every run finished and their
/// median is no slower.
pub(super) fn holds_when_passive(base: f64, passive: &[Option<f64>]) -> bool {
    let t: Vec<f64> = passive.iter().map_while(|t| *t).collect();
    !t.is_empty() && t.len() == passive.len() && median(&t) <= base
}

/// The winner against the original, head to head on `basis`: alternating
/// runs until the rule of [`crate::lab::decide`] decides. A lucky timing
/// in the search does not make the output slower than the input. The
/// whole program's ratio is reported whatever the basis; the regions'
/// only when they can be timed.
pub(super) fn head_to_head(
    harness: &Harness,
    original: &Path,
    candidate: &Path,
    config: crate::config::Config,
    rule: &Rule,
    basis: Basis,
) -> HeadToHead {
    let mut h = HeadToHead {
        config,
        basis,
        rounds: 0,
        original_seconds: None,
        candidate_seconds: None,
        speedup: None,
        program_original_seconds: None,
        program_candidate_seconds: None,
        program_speedup: None,
        regions_speedup: None,
        p_value: None,
        level: rule.alpha_per_look(),
        min_speedup: rule.min_speedup,
        looks: 0,
        confirmed: None,
        error: None,
    };
    match crate::lab::head_to_head::head_to_head(harness, original, candidate, rule, basis) {
        Ok(paired) => {
            let d = &paired.decision;
            let t = *d.last();
            h.rounds = d.original.len();
            h.original_seconds = Some(t.original);
            h.candidate_seconds = Some(t.candidate);
            h.speedup = Some(t.median_ratio);
            h.p_value = Some(t.p_value);
            h.looks = d.looks.len();
            h.confirmed = d.speedup();
            let (o, c) = paired.program_seconds();
            h.program_original_seconds = Some(o);
            h.program_candidate_seconds = Some(c);
            h.program_speedup = Some(paired.program_ratio());
            h.regions_speedup = (basis == Basis::Regions).then_some(t.median_ratio);
        }
        Err(r) => h.error = Some(r.stderr.trim().to_string()),
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threaded_candidate_must_hold_with_sleeping_threads() {
        assert!(holds_when_passive(1.0, &[Some(0.5), Some(1.2), Some(0.9)]));
        // jacobi-1d's fine-grained parallel loops: 23x slower.
        assert!(!holds_when_passive(0.1, &[Some(2.3)]));
        assert!(!holds_when_passive(1.0, &[Some(0.5), None]));
        assert!(!holds_when_passive(1.0, &[Some(1.1), Some(1.2), Some(0.9)]));
        assert!(!holds_when_passive(1.0, &[]));
    }
}
