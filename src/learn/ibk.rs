//! IBk: k nearest neighbours (k = 5, Euclidean distance on attributes
//! scaled to [0, 1] over the training data), predicting the mean target
//! of the neighbours. Rows tied with the k-th distance are all kept, so
//! the prediction does not depend on the training order.

use super::scale::Range;
use super::{LearnError, Regressor, check_shape};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ibk {
    pub k: usize,
    range: Range,
    rows: Vec<Vec<f64>>,
    y: Vec<f64>,
}

impl Default for Ibk {
    fn default() -> Self {
        Ibk::new(5)
    }
}

impl Ibk {
    pub fn new(k: usize) -> Ibk {
        Ibk {
            k: k.max(1),
            range: Range::default(),
            rows: Vec::new(),
            y: Vec::new(),
        }
    }
}

impl Regressor for Ibk {
    fn fit(&mut self, x: &[Vec<f64>], y: &[f64]) -> Result<(), LearnError> {
        check_shape(x, y)?;
        self.range = Range::fit(x, 0.0, 1.0);
        self.rows = self.range.rows(x);
        self.y = y.to_vec();
        Ok(())
    }

    fn predict(&self, row: &[f64]) -> f64 {
        let q = self.range.row(row);
        let mut d: Vec<(f64, usize)> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.iter().zip(&q).map(|(a, b)| (a - b) * (a - b)).sum(), i))
            .collect();
        let k = self.k.min(d.len());
        d.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0));
        let kth = d[k - 1].0;
        let (sum, n) = d
            .iter()
            .filter(|(dist, _)| *dist <= kth)
            .fold((0.0, 0usize), |(s, n), &(_, i)| (s + self.y[i], n + 1));
        sum / n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::testdata::{nonlinear, rmse_vs_mean};

    #[test]
    fn averages_the_nearest_neighbours_including_ties() {
        let x = vec![
            vec![0.0],
            vec![1.0],
            vec![2.0],
            vec![3.0],
            vec![10.0],
            vec![10.0],
        ];
        let y = vec![1.0, 2.0, 3.0, 4.0, 100.0, 200.0];
        let mut m = Ibk::new(1);
        m.fit(&x, &y).unwrap();
        assert_eq!(m.predict(&[2.1]), 3.0);
        assert_eq!(m.predict(&[10.0]), 150.0, "both tied rows count");
        let mut m5 = Ibk::default();
        m5.fit(&x, &y).unwrap();
        assert_eq!(
            m5.predict(&[0.0]),
            (1.0 + 2.0 + 3.0 + 4.0 + 100.0 + 200.0) / 6.0
        );
    }

    #[test]
    fn beats_the_mean_on_a_nonlinear_problem() {
        let (train, test) = nonlinear(3, 500, 200);
        let mut m = Ibk::default();
        m.fit(&train.0, &train.1).unwrap();
        assert!(rmse_vs_mean(&m, &train, &test) < 0.5);
    }
}
