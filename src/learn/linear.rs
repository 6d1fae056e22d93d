//! Linear regression with greedy attribute selection (Weka's
//! `LinearRegression -S 2`): backward elimination guided by the Akaike
//! criterion, on a tiny ridge. The attributes it keeps are also the
//! feature subset of the paper's Tables 14–16.

use super::linalg::Gram;
use super::{LearnError, Regressor, check_shape};
use serde::{Deserialize, Serialize};

/// The ridge Weka's linear regression uses by default.
const RIDGE: f64 = 1e-8;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Linear {
    pub intercept: f64,
    /// One coefficient per attribute; 0 for attributes not selected.
    pub coef: Vec<f64>,
    /// The attributes greedy selection kept.
    pub selected: Vec<usize>,
    /// Fit without selection (for comparison and tests).
    pub no_selection: bool,
}

impl Linear {
    pub(crate) fn new() -> Linear {
        Linear::default()
    }
}

/// Akaike's criterion relative to the full model, as the greedy method of
/// the paper's tool computes it: SSE ratio scaled by the full model's
/// residual degrees of freedom, plus twice the parameter count.
fn akaike(sse: f64, full_sse: f64, n: usize, full_p: usize, p: usize) -> f64 {
    let ratio = if full_sse > 0.0 {
        sse / full_sse
    } else if sse > 0.0 {
        f64::INFINITY
    } else {
        1.0
    };
    ratio * (n as f64 - full_p as f64) + 2.0 * p as f64
}

impl Regressor for Linear {
    fn fit(&mut self, x: &[Vec<f64>], y: &[f64]) -> Result<(), LearnError> {
        let d = check_shape(x, y)?;
        let g = Gram::new(x, y, None);
        let mut cols: Vec<usize> = (0..d).filter(|&j| g.sd[j] > 0.0).collect();
        let n = x.len();
        let (_, _, full_sse) = g.fit(&cols, RIDGE);
        let full_p = cols.len() + 1;
        if !self.no_selection {
            let mut best = akaike(full_sse, full_sse, n, full_p, full_p);
            loop {
                let mut choice = None;
                for k in 0..cols.len() {
                    let mut trial = cols.clone();
                    trial.remove(k);
                    let (_, _, sse) = g.fit(&trial, RIDGE);
                    let a = akaike(sse, full_sse, n, full_p, trial.len() + 1);
                    if a < best {
                        best = a;
                        choice = Some(k);
                    }
                }
                match choice {
                    Some(k) => {
                        cols.remove(k);
                    }
                    None => break,
                }
            }
        }
        let (b0, w, _) = g.fit(&cols, RIDGE);
        self.intercept = b0;
        self.coef = vec![0.0; d];
        for (k, &j) in cols.iter().enumerate() {
            self.coef[j] = w[k];
        }
        self.selected = cols;
        Ok(())
    }

    fn predict(&self, row: &[f64]) -> f64 {
        self.intercept + self.coef.iter().zip(row).map(|(w, v)| w * v).sum::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::testdata::{Lcg, rmse_vs_mean};

    #[test]
    fn exact_linear_data_is_recovered_and_noise_attributes_dropped() {
        let mut r = Lcg::new(7);
        let x: Vec<Vec<f64>> = (0..200)
            .map(|_| (0..5).map(|_| r.uniform()).collect())
            .collect();
        let y: Vec<f64> = x
            .iter()
            .map(|v| 3.0 * v[0] - 2.0 * v[3] + 1.0 + 0.01 * (r.uniform() - 0.5))
            .collect();
        let mut m = Linear::new();
        m.fit(&x, &y).unwrap();
        assert!(m.selected.contains(&0) && m.selected.contains(&3));
        assert!(m.selected.len() <= 3, "kept {:?}", m.selected);
        assert!((m.coef[0] - 3.0).abs() < 0.01 && (m.coef[3] + 2.0).abs() < 0.01);
        assert!((m.predict(&[1.0, 0.0, 0.0, 1.0, 0.0]) - 2.0).abs() < 0.01);
    }

    #[test]
    fn beats_the_mean_on_a_monotone_nonlinear_problem() {
        let (train, test) = crate::learn::testdata::nonlinear(11, 400, 200);
        let mut m = Linear::new();
        m.fit(&train.0, &train.1).unwrap();
        assert!(rmse_vs_mean(&m, &train, &test) < 0.9);
    }

    #[test]
    fn rejects_ragged_and_empty_data() {
        let mut m = Linear::new();
        assert!(m.fit(&[], &[]).is_err());
        assert!(m.fit(&[vec![1.0], vec![1.0, 2.0]], &[1.0, 2.0]).is_err());
        assert!(m.fit(&[vec![f64::NAN]], &[1.0]).is_err());
    }
}
