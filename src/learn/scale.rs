//! Attribute scaling shared by the models that need it.

use serde::{Deserialize, Serialize};

/// Maps each column linearly from its training range onto [lo, hi];
/// constant columns map to `lo`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Range {
    pub min: Vec<f64>,
    pub max: Vec<f64>,
    pub lo: f64,
    pub hi: f64,
}

impl Range {
    /// Learns the per-column ranges of `x`.
    pub fn fit(x: &[Vec<f64>], lo: f64, hi: f64) -> Range {
        let d = x.first().map_or(0, Vec::len);
        let mut min = vec![f64::INFINITY; d];
        let mut max = vec![f64::NEG_INFINITY; d];
        for r in x {
            for (j, &v) in r.iter().enumerate() {
                min[j] = min[j].min(v);
                max[j] = max[j].max(v);
            }
        }
        Range { min, max, lo, hi }
    }

    /// One value of column `j`, scaled.
    pub(crate) fn value(&self, j: usize, v: f64) -> f64 {
        let w = self.max[j] - self.min[j];
        if w > 0.0 {
            self.lo + (v - self.min[j]) / w * (self.hi - self.lo)
        } else {
            self.lo
        }
    }

    /// One row, scaled.
    pub fn row(&self, r: &[f64]) -> Vec<f64> {
        r.iter()
            .enumerate()
            .map(|(j, &v)| self.value(j, v))
            .collect()
    }

    /// Every row, scaled.
    pub fn rows(&self, x: &[Vec<f64>]) -> Vec<Vec<f64>> {
        x.iter().map(|r| self.row(r)).collect()
    }
}

/// Scales one target variable onto [lo, hi] and back.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TargetScale {
    pub min: f64,
    pub max: f64,
    pub lo: f64,
    pub hi: f64,
}

impl TargetScale {
    pub fn fit(y: &[f64], lo: f64, hi: f64) -> TargetScale {
        let min = y.iter().copied().fold(f64::INFINITY, f64::min);
        let max = y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        TargetScale { min, max, lo, hi }
    }

    pub fn scale(&self, v: f64) -> f64 {
        let w = self.max - self.min;
        if w > 0.0 {
            self.lo + (v - self.min) / w * (self.hi - self.lo)
        } else {
            self.lo
        }
    }

    pub(crate) fn unscale(&self, s: f64) -> f64 {
        let w = self.max - self.min;
        if w > 0.0 {
            self.min + (s - self.lo) / (self.hi - self.lo) * w
        } else {
            self.min
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_maps_training_extremes_onto_the_interval() {
        let x = vec![vec![1.0, 5.0], vec![3.0, 5.0], vec![2.0, 5.0]];
        let r = Range::fit(&x, 0.0, 1.0);
        assert_eq!(r.row(&[1.0, 5.0]), vec![0.0, 0.0]);
        assert_eq!(r.row(&[3.0, 7.0]), vec![1.0, 0.0]);
        assert_eq!(r.value(0, 2.0), 0.5);
        let t = TargetScale::fit(&[2.0, 4.0], -1.0, 1.0);
        assert_eq!(t.scale(3.0), 0.0);
        assert_eq!(t.unscale(t.scale(3.7)), 3.7);
    }
}
