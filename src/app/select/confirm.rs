//! Whether a measured winner holds: a threaded one rerun with sleeping
//! threads, and the head-to-head confirmation against the original.

use crate::lab::confine::Limits;
use crate::lab::harness::Harness;
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

/// How much faster a candidate's median must be, head to head, to
/// replace the original: a program whose timings swing between two
/// modes (fine-grained OpenMP loops on a shared machine) can look faster
/// for a few rounds and be slower on the next run.
pub(super) const CONFIRM_MARGIN: f64 = 1.02;

/// Paired rounds a candidate must win: three quarters of them.
pub(super) fn wins_needed(rounds: usize) -> usize {
    (3 * rounds).div_ceil(4)
}

/// Paired rounds in which the candidate ran faster than the original.
pub(super) fn rounds_won(original: &[f64], candidate: &[f64]) -> usize {
    original
        .iter()
        .zip(candidate)
        .filter(|(o, c)| c < o)
        .count()
}

/// The head-to-head verdict on alternating runs of the original and a
/// candidate (seconds, round by round): its speedup when it is clearly
/// faster — by [`CONFIRM_MARGIN`] on the medians and in three quarters of
/// the rounds — else `None`, and the original is kept.
pub fn confirmed(original: &[f64], candidate: &[f64]) -> Option<f64> {
    if original.is_empty() || original.len() != candidate.len() {
        return None;
    }
    let (o, c) = (median(original), median(candidate));
    let wins = rounds_won(original, candidate);
    (c > 0.0 && o / c >= CONFIRM_MARGIN && wins >= wins_needed(original.len())).then_some(o / c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_clear_head_to_head_win_replaces_the_original() {
        let o = [1.0; 7];
        // Faster in every round by 20%.
        let s = confirmed(&o, &[0.8; 7]).unwrap();
        assert!((s - 1.25).abs() < 1e-12);
        // Two modes: fast in four rounds, slow in three. The median says
        // 1.25x, but it loses too many rounds.
        assert_eq!(confirmed(&o, &[0.8, 1.2, 0.8, 1.2, 0.8, 1.2, 0.8]), None);
        // Faster in every round, but by less than the margin.
        assert_eq!(confirmed(&o, &[0.99; 7]), None);
        // Six of seven rounds is enough.
        assert!(confirmed(&o, &[0.8, 0.8, 0.8, 1.1, 0.8, 0.8, 0.8]).is_some());
        assert_eq!(confirmed(&[], &[]), None);
        assert_eq!(confirmed(&o, &[0.8; 6]), None);
    }

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
