//! K* (Cleary & Trigg 1995): instance-based prediction with an entropic
//! distance. The probability of transforming a value a into b on one
//! numeric attribute falls off as exp(-|a-b| / x0); per query and
//! attribute, x0 is chosen so that the effective number of training
//! instances within reach, (Σ P)² / Σ P², sits at the *blend* (20%)
//! between the nearest ones alone and all of them. Attributes combine by
//! multiplying probabilities; the prediction is the probability-weighted
//! mean of the training targets.
//!
//! Attributes here take few distinct values (bits of T, per-kernel
//! features), so the x0 search runs over distinct values with counts.

use super::scale::Range;
use super::{LearnError, Regressor, check_shape};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KStar {
    /// Global blend, percent.
    pub blend: f64,
    range: Range,
    rows: Vec<Vec<f64>>,
    y: Vec<f64>,
    /// Per attribute: its distinct scaled training values and counts.
    distinct: Vec<Vec<(f64, f64)>>,
}

impl Default for KStar {
    fn default() -> Self {
        KStar::new(20.0)
    }
}

impl KStar {
    pub(crate) fn new(blend_percent: f64) -> KStar {
        KStar {
            blend: blend_percent.clamp(0.0, 100.0),
            range: Range::default(),
            rows: Vec::new(),
            y: Vec::new(),
            distinct: Vec::new(),
        }
    }

    /// The x0 of one attribute for a query value: 0 when the attribute
    /// cannot tell instances apart (every distance equal).
    fn scale(&self, j: usize, q: f64) -> f64 {
        let vals = &self.distinct[j];
        let n: f64 = vals.iter().map(|v| v.1).sum();
        let dmin = vals
            .iter()
            .map(|v| (v.0 - q).abs())
            .fold(f64::INFINITY, f64::min);
        let nmin: f64 = vals
            .iter()
            .filter(|v| (v.0 - q).abs() <= dmin + 1e-12)
            .map(|v| v.1)
            .sum();
        if nmin >= n {
            return 0.0;
        }
        let target = nmin + (n - nmin) * self.blend / 100.0;
        let effective = |x0: f64| {
            let (mut s, mut s2) = (0.0, 0.0);
            for &(v, c) in vals {
                // Relative to the nearest distance, against underflow.
                let p = (-((v - q).abs() - dmin) / x0).exp();
                s += c * p;
                s2 += c * p * p;
            }
            s * s / s2
        };
        // n0 grows with x0; bisect on log x0.
        let (mut lo, mut hi) = (-30.0f64, 30.0f64);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if effective(mid.exp()) < target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (0.5 * (lo + hi)).exp()
    }
}

impl Regressor for KStar {
    fn fit(&mut self, x: &[Vec<f64>], y: &[f64]) -> Result<(), LearnError> {
        let d = check_shape(x, y)?;
        self.range = Range::fit(x, 0.0, 1.0);
        self.rows = self.range.rows(x);
        self.y = y.to_vec();
        self.distinct = (0..d)
            .map(|j| {
                let mut v: Vec<f64> = self.rows.iter().map(|r| r[j]).collect();
                v.sort_by(f64::total_cmp);
                let mut out: Vec<(f64, f64)> = Vec::new();
                for x in v {
                    match out.last_mut() {
                        Some(last) if last.0 == x => last.1 += 1.0,
                        _ => out.push((x, 1.0)),
                    }
                }
                out
            })
            .collect();
        Ok(())
    }

    fn predict(&self, row: &[f64]) -> f64 {
        let q = self.range.row(row);
        let inv: Vec<f64> = (0..q.len())
            .map(|j| {
                let x0 = self.scale(j, q[j]);
                if x0 > 0.0 { 1.0 / x0 } else { 0.0 }
            })
            .collect();
        // log P(instance) up to a constant: −Σ_j |q_j − v_j| / x0_j.
        let logp: Vec<f64> = self
            .rows
            .iter()
            .map(|r| {
                -r.iter()
                    .zip(&q)
                    .zip(&inv)
                    .map(|((a, b), w)| (a - b).abs() * w)
                    .sum::<f64>()
            })
            .collect();
        let top = logp.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (mut num, mut den) = (0.0, 0.0);
        for (l, y) in logp.iter().zip(&self.y) {
            let w = (l - top).exp();
            num += w * y;
            den += w;
        }
        num / den
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::testdata::{nonlinear, rmse_vs_mean};

    #[test]
    fn a_constant_target_is_predicted_exactly() {
        let x: Vec<Vec<f64>> = (0..10).map(|i| vec![i as f64, (i % 3) as f64]).collect();
        let mut m = KStar::default();
        m.fit(&x, &[2.5; 10]).unwrap();
        assert!((m.predict(&[4.5, 1.0]) - 2.5).abs() < 1e-12);
    }

    #[test]
    fn separated_clusters_predict_their_own_value() {
        let mut x = Vec::new();
        let mut y = Vec::new();
        for i in 0..20 {
            let e = i as f64 * 0.002;
            x.push(vec![e]);
            y.push(1.0);
            x.push(vec![1.0 - e]);
            y.push(5.0);
        }
        let mut m = KStar::default();
        m.fit(&x, &y).unwrap();
        assert!(
            (m.predict(&[0.01]) - 1.0).abs() < 0.2,
            "{}",
            m.predict(&[0.01])
        );
        assert!(
            (m.predict(&[0.99]) - 5.0).abs() < 0.2,
            "{}",
            m.predict(&[0.99])
        );
        // Halfway, both clusters are equally likely.
        assert!((m.predict(&[0.5]) - 3.0).abs() < 0.2);
    }

    #[test]
    fn the_blend_sets_the_effective_neighbourhood() {
        let x: Vec<Vec<f64>> = (0..101).map(|i| vec![i as f64 / 100.0]).collect();
        let y = vec![0.0; 101];
        let mut m = KStar::new(20.0);
        m.fit(&x, &y).unwrap();
        let x0 = m.scale(0, 0.5);
        let vals = &m.distinct[0];
        let (s, s2) = vals.iter().fold((0.0, 0.0), |(s, s2), &(v, c)| {
            let p = (-(v - 0.5f64).abs() / x0).exp();
            (s + c * p, s2 + c * p * p)
        });
        assert!((s * s / s2 - (1.0 + 100.0 * 0.2)).abs() < 1e-6);
    }

    #[test]
    fn beats_the_mean_on_a_nonlinear_problem() {
        let (train, test) = nonlinear(4, 500, 200);
        let mut m = KStar::default();
        m.fit(&train.0, &train.1).unwrap();
        let r = rmse_vs_mean(&m, &train, &test);
        assert!(r < 0.6, "{r}");
    }
}
