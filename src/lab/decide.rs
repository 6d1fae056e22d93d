//! Whether a candidate is faster than the original, from paired timings
//! taken in alternation (issue 36).
//!
//! The rule it replaces ("faster by 2% on the medians and in six of seven
//! rounds") cannot tell a 2x win from noise when a sample is one
//! millisecond: gemm at MEDIUM, a packed variant 2x faster by the medians
//! and faster in 5 of 7 rounds, was rejected. Here:
//!
//! - **How many rounds** ([`Rule::rounds_for`]): enough that each side has
//!   [`Rule::enough_seconds`] of region time, at least
//!   [`Rule::min_rounds`], at most [`Rule::max_rounds`] (a 1 ms region
//!   gets 30 rounds, a 10 s one 3). Decided from the first round's times.
//! - **The test** ([`test`]): one-sided, on the rounds' log ratios
//!   `d = ln(original / candidate)` less the smallest speedup worth a
//!   change, `ln(min_speedup)`: Wilcoxon's signed-rank test from 11 rounds
//!   (exact under the A/A null, whatever the noise's shape), Student's t
//!   below. A round's pair shares the machine's state of that moment, so
//!   the pairing removes the slow drifts of a shared machine; the log
//!   makes a ratio's noise symmetric. The median ratio must also reach
//!   `min_speedup`, so that one huge round cannot carry the test.
//! - **Looks** ([`decide`]): the test is taken at the planned rounds `n`
//!   and, while the time allowed lasts and it is still undecided, at `2n`
//!   and `4n` (at most `max_look_rounds`). Each look spends a third of
//!   `alpha` (Bonferroni), so the chance that an A/A comparison (a program against
//!   itself) is declared faster is at most `alpha` over all looks,
//!   whatever the region's length: [`Rule::alpha`] is 1%. Measured with a
//!   synthetic noisy timer in the tests below and with real runs by
//!   `scripts/decision_rates.py`.

use super::runner::median;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The decision's knobs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rule {
    /// The false-positive rate over all looks: the chance that a candidate
    /// no faster than the original is declared faster.
    pub alpha: f64,
    /// The smallest speedup worth a change (1.02: 2%).
    pub min_speedup: f64,
    /// Region seconds each side should have (0.2 s).
    pub enough_seconds: f64,
    pub min_rounds: usize,
    /// At most this many planned rounds.
    pub max_rounds: usize,
    /// At most this many rounds in all, with the further looks.
    pub max_look_rounds: usize,
    /// Wall seconds the rounds after the planned ones may take in all: a
    /// further look is taken only if its rounds fit.
    pub more_seconds: f64,
}

impl Default for Rule {
    fn default() -> Rule {
        Rule {
            alpha: 0.01,
            min_speedup: 1.02,
            enough_seconds: 0.2,
            min_rounds: 3,
            max_rounds: 30,
            max_look_rounds: 120,
            more_seconds: 30.0,
        }
    }
}

/// The looks the rule may take: at most three.
const LOOKS: usize = 3;

impl Rule {
    /// Rounds planned after a first round that took `original` and
    /// `candidate` region seconds: enough that the slower side has
    /// [`Rule::enough_seconds`], within the bounds.
    pub(crate) fn rounds_for(&self, original: f64, candidate: f64) -> usize {
        let per = original.min(candidate).max(1e-9);
        let want = (self.enough_seconds / per).ceil();
        let want = if want.is_finite() {
            want.min(self.max_rounds as f64) as usize
        } else {
            self.max_rounds
        };
        want.clamp(self.min_rounds.max(2), self.max_rounds.max(2))
    }

    /// The rounds at which the test is taken after `planned` rounds.
    pub(crate) fn looks(&self, planned: usize) -> Vec<usize> {
        let mut out = vec![planned];
        let mut n = planned;
        while out.len() < LOOKS && n < self.max_look_rounds {
            n = (2 * n).min(self.max_look_rounds);
            out.push(n);
        }
        out
    }

    /// The false-positive rate one look may spend.
    pub fn alpha_per_look(&self) -> f64 {
        self.alpha / LOOKS as f64
    }
}

/// One look's statistics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Test {
    pub rounds: usize,
    /// Median seconds of each side.
    pub original: f64,
    pub candidate: f64,
    /// The median of the rounds' ratios original / candidate.
    pub median_ratio: f64,
    /// exp of the mean log ratio: the speedup the test is about.
    pub speedup: f64,
    /// One-sided p-value of "no more than `min_speedup` faster".
    pub p_value: f64,
    /// Whether the candidate is declared faster at the look's level.
    pub faster: bool,
}

/// The test at level `alpha` over paired samples (seconds, round by
/// round). Fewer than two rounds, or a non-positive time, decide nothing.
pub(crate) fn test(original: &[f64], candidate: &[f64], min_speedup: f64, alpha: f64) -> Test {
    let n = original.len().min(candidate.len());
    let (o, c) = (&original[..n], &candidate[..n]);
    let valid = n >= 2 && o.iter().chain(c).all(|&t| t > 0.0 && t.is_finite());
    let ratios: Vec<f64> = o.iter().zip(c).map(|(a, b)| a / b).collect();
    let mut t = Test {
        rounds: n,
        original: if n > 0 { median(o) } else { 0.0 },
        candidate: if n > 0 { median(c) } else { 0.0 },
        median_ratio: if valid { median(&ratios) } else { 0.0 },
        speedup: 0.0,
        p_value: 1.0,
        faster: false,
    };
    if !valid {
        return t;
    }
    let d: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let mean = d.iter().sum::<f64>() / n as f64;
    t.speedup = mean.exp();
    let excess: Vec<f64> = d.iter().map(|x| x - min_speedup.ln()).collect();
    // Wilcoxon's signed-rank test once it can reach the level (its least
    // p-value is 2^-n), with room: when the candidate is the original
    // (A/A), the two runs of a round are exchangeable, so the log ratio
    // is symmetric around 0 and the test's level holds exactly, without
    // assuming normal noise — a shared machine's hiccups are not. Student's
    // t below that (a long region, a few rounds of small noise), where
    // the signed ranks cannot decide at all. (On the synthetic timer
    // below, 1.5x at 1 ms with 30% noise and 10% of runs up to 3x slower:
    // both find it in 1000 of 1000 trials, in 34.4 rounds on average by
    // the signed ranks, 34.7 by t alone.)
    t.p_value = if 0.5f64.powi(n as i32) <= alpha / 4.0 {
        signed_rank_p(&excess)
    } else {
        t_test_p(&excess)
    };
    t.faster = t.p_value < alpha && t.median_ratio >= min_speedup;
    t
}

/// One-sided p-value of Student's t test that the mean of `x` is above 0.
fn t_test_p(x: &[f64]) -> f64 {
    let n = x.len();
    let mean = x.iter().sum::<f64>() / n as f64;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let se = (var / n as f64).sqrt();
    if se > 0.0 {
        let dist = StudentsT::new(0.0, 1.0, (n - 1) as f64).expect("degrees of freedom >= 1");
        1.0 - dist.cdf(mean / se)
    } else if mean > 0.0 {
        // Identical ratios in every round: no noise at all.
        0.0
    } else {
        1.0
    }
}

/// One-sided p-value of Wilcoxon's signed-rank test that `x` is centred
/// above 0: exact (the distribution of the positive ranks' sum counted
/// over all 2^n signs) when no two |x| tie and n <= 50, else the normal
/// approximation with the ties' correction. Zeros are dropped.
fn signed_rank_p(x: &[f64]) -> f64 {
    let mut v: Vec<f64> = x.iter().copied().filter(|&a| a != 0.0).collect();
    let n = v.len();
    if n == 0 {
        return 1.0;
    }
    v.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    // Average ranks of tied magnitudes.
    let mut ranks = vec![0.0; n];
    let mut ties = false;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && v[j + 1].abs() == v[i].abs() {
            j += 1;
        }
        let r = (i + j + 2) as f64 / 2.0;
        ranks[i..=j].iter_mut().for_each(|x| *x = r);
        let t = (j - i + 1) as f64;
        if t > 1.0 {
            ties = true;
            tie_term += t * t * t - t;
        }
        i = j + 1;
    }
    let w: f64 = v
        .iter()
        .zip(&ranks)
        .filter(|(a, _)| **a > 0.0)
        .map(|(_, r)| r)
        .sum();
    // Past 50 rounds the normal approximation is as good as exact (and
    // the exact count's cost grows with n^3).
    if ties || n > 50 {
        let nf = n as f64;
        let mean = nf * (nf + 1.0) / 4.0;
        let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_term / 48.0;
        let z = (w - mean - 0.5) / var.sqrt();
        return 1.0 - statrs::function::erf::erf(z / std::f64::consts::SQRT_2) / 2.0 - 0.5;
    }
    // counts[s]: sign patterns whose positive ranks sum to s.
    let max = n * (n + 1) / 2;
    let mut counts = vec![0f64; max + 1];
    counts[0] = 1.0;
    for r in 1..=n {
        for s in (r..=max).rev() {
            counts[s] += counts[s - r];
        }
    }
    let w = w.round() as usize;
    let total = 2f64.powi(n as i32);
    counts[w..].iter().sum::<f64>() / total
}

/// The decision and the samples it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub rule: Rule,
    /// Rounds planned from the first one's times.
    pub planned: usize,
    /// Every look taken, the last one decisive.
    pub looks: Vec<Test>,
    /// Region seconds of every round, original and candidate.
    pub original: Vec<f64>,
    pub candidate: Vec<f64>,
}

impl Decision {
    /// The last look.
    pub fn last(&self) -> &Test {
        self.looks
            .last()
            .expect("a decision takes at least one look")
    }

    /// The candidate's speedup when it is declared faster.
    pub fn speedup(&self) -> Option<f64> {
        let t = self.last();
        t.faster.then_some(t.median_ratio)
    }
}

/// Runs rounds — `round()` times the original and the candidate once
/// each, in alternation — until the rule decides. `clock()` says the
/// seconds since the decision started (injected for the tests).
pub(crate) fn decide<E>(
    rule: &Rule,
    round: &mut dyn FnMut() -> Result<(f64, f64), E>,
    clock: &mut dyn FnMut() -> f64,
) -> Result<Decision, E> {
    let first = round()?;
    let planned = rule.rounds_for(first.0, first.1);
    let mut d = Decision {
        rule: *rule,
        planned,
        looks: Vec::new(),
        original: vec![first.0],
        candidate: vec![first.1],
    };
    let looks = rule.looks(planned);
    let mut planned_done = 0.0;
    for (k, &n) in looks.iter().enumerate() {
        if k > 0 {
            // A further look only when its rounds fit in the time allowed,
            // judged by the rounds so far.
            let per_round = clock() / d.original.len() as f64;
            let more = per_round * (n - d.original.len()) as f64;
            if clock() - planned_done + more > rule.more_seconds {
                break;
            }
        }
        while d.original.len() < n {
            let (o, c) = round()?;
            d.original.push(o);
            d.candidate.push(c);
        }
        if k == 0 {
            planned_done = clock();
        }
        let t = test(
            &d.original,
            &d.candidate,
            rule.min_speedup,
            rule.alpha_per_look(),
        );
        d.looks.push(t);
        if t.faster {
            break;
        }
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::rng::SplitMix64;

    /// The synthetic timer's seeded generator, with a standard normal
    /// draw (Box–Muller).
    struct Rng(SplitMix64);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0.unit()
        }
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.next().max(1e-300), self.next());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        }
    }

    /// A noisy machine: each run's time is `base` times lognormal noise of
    /// `sigma`, a slow drift shared by the round's two runs, and with
    /// probability `hiccup` a run disturbed by up to 3x.
    struct Machine {
        rng: Rng,
        sigma: f64,
        hiccup: f64,
    }
    impl Machine {
        fn run(&mut self, base: f64, drift: f64) -> f64 {
            let mut t = base * drift * (self.sigma * self.rng.normal()).exp();
            if self.rng.next() < self.hiccup {
                t *= 1.0 + 2.0 * self.rng.next();
            }
            t
        }
        fn trial(&mut self, original: f64, candidate: f64) -> Decision {
            let mut drift = 1.0f64;
            let mut round = || -> Result<(f64, f64), ()> {
                drift = (drift * (0.05 * self.rng.normal()).exp()).clamp(0.7, 1.5);
                let o = self.run(original, drift);
                let c = self.run(candidate, drift);
                Ok((o, c))
            };
            decide(&Rule::default(), &mut round, &mut || 0.0).unwrap()
        }
    }

    fn rate(m: &mut Machine, original: f64, candidate: f64, trials: usize) -> f64 {
        (0..trials)
            .filter(|_| m.trial(original, candidate).speedup().is_some())
            .count() as f64
            / trials as f64
    }

    #[test]
    fn signed_rank_p_values() {
        // All of n positive: 2^-n.
        assert!((signed_rank_p(&[1.0, 2.0, 3.0]) - 0.125).abs() < 1e-12);
        assert!((signed_rank_p(&[0.1; 0]) - 1.0).abs() < 1e-12);
        // Ranks 1..4, the negative one of rank 1: W = 9 of 10; patterns
        // with W >= 9: {2,3,4} (9) and all (10): 2 of 16.
        assert!((signed_rank_p(&[-1.0, 2.0, 3.0, 4.0]) - 2.0 / 16.0).abs() < 1e-12);
        // Symmetric around 0: about one half.
        let p = signed_rank_p(&[-1.0, 1.5, -2.0, 2.5, -3.0, 3.5]);
        assert!((0.3..0.7).contains(&p), "{p}");
        // Ties: the normal approximation, still small for all positive.
        assert!(signed_rank_p(&[1.0; 12]) < 0.001);
    }

    #[test]
    fn rounds_follow_the_region_length() {
        let r = Rule::default();
        assert_eq!(r.rounds_for(0.001, 0.0005), 30);
        assert_eq!(r.rounds_for(0.01, 0.02), 20);
        assert_eq!(r.rounds_for(10.0, 5.0), 3);
        assert_eq!(r.rounds_for(0.0, 0.0), 30);
        assert_eq!(r.looks(3), vec![3, 6, 12]);
        assert_eq!(r.looks(20), vec![20, 40, 80]);
        assert_eq!(r.looks(30), vec![30, 60, 120]);
        assert_eq!(r.looks(100), vec![100, 120]);
    }

    #[test]
    fn the_test_on_clear_and_unclear_samples() {
        let o = [1.0; 7];
        // 20% faster in every round, with a little noise.
        let c = [0.80, 0.81, 0.79, 0.80, 0.82, 0.80, 0.78];
        let t = test(&o, &c, 1.02, 0.01 / 3.0);
        assert!(t.faster, "{t:?}");
        assert!((t.median_ratio - 1.25).abs() < 1e-12);
        // Two modes: fast in four rounds, slow in three. The median says
        // 1.25x, the test does not.
        let t = test(&o, &[0.8, 1.2, 0.8, 1.2, 0.8, 1.2, 0.8], 1.02, 0.01);
        assert!(!t.faster, "{t:?}");
        // Faster in every round, by less than the smallest speedup.
        assert!(!test(&o, &[0.99; 7], 1.02, 0.01).faster);
        // Exactly 25% in every round: no noise, decided.
        assert!(test(&o, &[0.8; 7], 1.02, 0.01).faster);
        // Too few rounds, or broken samples, decide nothing.
        assert!(!test(&[1.0], &[0.5], 1.02, 0.01).faster);
        assert!(!test(&[1.0, 1.0], &[0.5, 0.0], 1.02, 0.01).faster);
        assert!(!test(&[], &[], 1.02, 0.01).faster);
    }

    /// An A/A comparison — the same program twice — is declared faster in
    /// at most 1% of trials, whatever the region's length and the noise
    /// (a 1 ms region with 30% noise and hiccups, a 10 s one with 2%).
    #[test]
    fn a_program_against_itself_is_rarely_faster() {
        for (base, sigma, hiccup) in [
            (0.001, 0.30, 0.10),
            (0.001, 0.10, 0.0),
            (0.02, 0.15, 0.05),
            (10.0, 0.02, 0.0),
            (10.0, 0.05, 0.10),
        ] {
            let mut m = Machine {
                rng: Rng(SplitMix64::new(7)),
                sigma,
                hiccup,
            };
            let r = rate(&mut m, base, base, 1000);
            assert!(r <= 0.01, "{base} s, noise {sigma}, hiccups {hiccup}: {r}");
        }
    }

    /// A variant 1.5x faster with 1 ms regions, on the same noisy machine,
    /// is chosen in at least 95% of trials; 2x with 10 s regions always.
    #[test]
    fn a_clear_win_is_found_at_any_region_length() {
        let mut m = Machine {
            rng: Rng(SplitMix64::new(11)),
            sigma: 0.30,
            hiccup: 0.10,
        };
        let r = rate(&mut m, 0.001, 0.001 / 1.5, 2000);
        assert!(r >= 0.95, "1.5x at 1 ms: {r}");
        let mut m = Machine {
            rng: Rng(SplitMix64::new(12)),
            sigma: 0.03,
            hiccup: 0.0,
        };
        let r = rate(&mut m, 10.0, 5.0, 500);
        assert!(r >= 0.99, "2x at 10 s: {r}");
    }

    /// The further looks are taken only while the time allowed lasts.
    #[test]
    fn further_looks_stop_at_the_time_allowed() {
        let rule = Rule::default();
        let elapsed = std::cell::Cell::new(0.0);
        let mut rounds = 0;
        let mut round = || -> Result<(f64, f64), ()> {
            rounds += 1;
            elapsed.set(elapsed.get() + 20.0);
            // Undecided: alternately faster and slower.
            Ok(if rounds % 2 == 0 {
                (10.0, 9.0)
            } else {
                (10.0, 11.0)
            })
        };
        let d = decide(&rule, &mut round, &mut || elapsed.get()).unwrap();
        // 3 planned rounds of 20 s: the next look (3 more) would take 60 s
        // more than the 30 s allowed.
        assert_eq!(d.original.len(), 3);
        assert_eq!(d.looks.len(), 1);
        assert_eq!(d.speedup(), None);
    }
}
