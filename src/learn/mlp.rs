//! A multilayer perceptron as in the paper's tool (Weka's
//! MultilayerPerceptron): one hidden layer of sigmoid units (attributes +
//! 1 of them), a linear output, attributes and target scaled to [-1, 1],
//! per-instance back-propagation with learning rate 0.5 and momentum 0.2
//! for 500 epochs. A run that diverges restarts with half the learning
//! rate, as Weka does.

use super::scale::{Range, TargetScale};
use super::{LearnError, Regressor, check_shape};
use crate::lab::rng::Lcg;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mlp {
    pub learning_rate: f64,
    pub momentum: f64,
    pub epochs: usize,
    /// Hidden units; `None`: attributes + 1.
    pub hidden: Option<usize>,
    pub seed: u64,
    range: Range,
    target: TargetScale,
    /// Hidden weights, input-major: `w[j * h + k]` from input j (the bias
    /// is input d) to hidden unit k.
    w: Vec<f32>,
    /// Output weights: one per hidden unit, then the bias.
    v: Vec<f32>,
    d: usize,
    h: usize,
    /// The learning rate the last fit ended with (after any restarts).
    pub final_rate: f64,
}

impl Default for Mlp {
    fn default() -> Self {
        Mlp {
            learning_rate: 0.5,
            momentum: 0.2,
            epochs: 500,
            hidden: None,
            seed: 0,
            range: Range::default(),
            target: TargetScale::default(),
            w: Vec::new(),
            v: Vec::new(),
            d: 0,
            h: 0,
            final_rate: 0.0,
        }
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

impl Mlp {
    fn hidden_out(&self, x: &[f32], out: &mut [f32]) {
        let (d, h) = (self.d, self.h);
        out.copy_from_slice(&self.w[d * h..(d + 1) * h]);
        for j in 0..d {
            for k in 0..h {
                out[k] += x[j] * self.w[j * h + k];
            }
        }
        for o in out.iter_mut() {
            *o = sigmoid(*o);
        }
    }

    fn output(&self, hid: &[f32]) -> f32 {
        hid.iter().zip(&self.v).map(|(a, b)| a * b).sum::<f32>() + self.v[self.h]
    }

    /// One training run at `rate`; false when it diverged. The epochs run
    /// in a kernel compiled for AVX2 and FMA when the processor has them
    /// (the paper's 500 epochs dominate the evaluation's time).
    fn train(&mut self, x: &[Vec<f32>], t: &[f32], order: &[usize], rate: f32) -> bool {
        let (d, h) = (self.d, self.h);
        let mut rng = Lcg::new(self.seed);
        self.w = (0..h * (d + 1))
            .map(|_| (rng.uniform() as f32 - 0.5) * 0.1)
            .collect();
        self.v = (0..=h)
            .map(|_| (rng.uniform() as f32 - 0.5) * 0.1)
            .collect();
        let mut net = Net {
            d,
            h,
            w: std::mem::take(&mut self.w),
            v: std::mem::take(&mut self.v),
            rate,
            mom: self.momentum as f32,
        };
        let ok = epochs(&mut net, x, t, order, self.epochs);
        self.w = net.w;
        self.v = net.v;
        ok && self.w.iter().chain(&self.v).all(|w| w.is_finite())
    }
}

/// The weights under training.
struct Net {
    d: usize,
    h: usize,
    w: Vec<f32>,
    v: Vec<f32>,
    rate: f32,
    mom: f32,
}

/// A dot product in eight lanes, so that it vectorizes.
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let n = a.len().min(b.len());
    let chunks = n / 8;
    for c in 0..chunks {
        for l in 0..8 {
            acc[l] += a[c * 8 + l] * b[c * 8 + l];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for i in chunks * 8..n {
        s += a[i] * b[i];
    }
    s
}

/// Per-instance back-propagation with momentum over `n` epochs. The
/// hidden weights are stored input-major (`w[j * h + k]`: input j to unit
/// k, the bias as input d), so every inner loop runs over contiguous
/// hidden units and vectorizes. `multiversion` compiles it also for AVX2
/// and FMA and picks that version at run time when the processor has
/// them, without `unsafe` here. It is as fast as the hand-written
/// `#[target_feature]` function it replaced: `cargo bench --bench learn --
/// --kernels 10 --models MLP --runs 1`, five whole runs of each
/// interleaved, median CPU time 5.09 s against 5.29 s (noise ~4%).
#[multiversion::multiversion(targets("x86_64+avx+avx2+fma"))]
fn epochs(net: &mut Net, x: &[Vec<f32>], t: &[f32], order: &[usize], n: usize) -> bool {
    let (d, h) = (net.d, net.h);
    let (rate, mom) = (net.rate, net.mom);
    let mut dw = vec![0f32; (d + 1) * h];
    let mut dv = vec![0f32; h + 1];
    let mut hid = vec![0f32; h];
    let mut g = vec![0f32; h];
    for _ in 0..n {
        let mut sse = 0f64;
        for &i in order {
            let xi = &x[i];
            hid.copy_from_slice(&net.w[d * h..(d + 1) * h]);
            for j in 0..d {
                let xj = xi[j];
                let row = &net.w[j * h..(j + 1) * h];
                for k in 0..h {
                    hid[k] += xj * row[k];
                }
            }
            for v in hid.iter_mut() {
                *v = sigmoid(*v);
            }
            let out = dot(&hid, &net.v[..h]) + net.v[h];
            let err = t[i] - out;
            sse += (err as f64) * (err as f64);
            for k in 0..h {
                g[k] = rate * hid[k] * (1.0 - hid[k]) * net.v[k] * err;
                dv[k] = rate * err * hid[k] + mom * dv[k];
                net.v[k] += dv[k];
            }
            dv[h] = rate * err + mom * dv[h];
            net.v[h] += dv[h];
            for j in 0..=d {
                let xj = if j < d { xi[j] } else { 1.0 };
                let row = &mut net.w[j * h..(j + 1) * h];
                let drow = &mut dw[j * h..(j + 1) * h];
                for k in 0..h {
                    drow[k] = g[k] * xj + mom * drow[k];
                    row[k] += drow[k];
                }
            }
        }
        // Targets lie in [-1, 1]: an error far beyond that diverged.
        if !sse.is_finite() || sse / order.len().max(1) as f64 > 1e6 {
            return false;
        }
    }
    true
}

impl Regressor for Mlp {
    fn fit(&mut self, x: &[Vec<f64>], y: &[f64]) -> Result<(), LearnError> {
        let d = check_shape(x, y)?;
        self.range = Range::fit(x, -1.0, 1.0);
        self.target = TargetScale::fit(y, -1.0, 1.0);
        self.d = d;
        self.h = self.hidden.unwrap_or(d + 1).max(1);
        let xs: Vec<Vec<f32>> = x
            .iter()
            .map(|r| self.range.row(r).into_iter().map(|v| v as f32).collect())
            .collect();
        let ts: Vec<f32> = y.iter().map(|&v| self.target.scale(v) as f32).collect();
        // One fixed shuffled order, as the paper's tool randomizes once.
        let mut order: Vec<usize> = (0..x.len()).collect();
        let mut rng = Lcg::new(self.seed ^ 0x9e37_79b9);
        for i in (1..order.len()).rev() {
            let j = (rng.uniform() * (i + 1) as f64) as usize;
            order.swap(i, j.min(i));
        }
        let mut rate = self.learning_rate;
        for _ in 0..20 {
            if self.train(&xs, &ts, &order, rate as f32) {
                self.final_rate = rate;
                return Ok(());
            }
            rate /= 2.0;
        }
        Err(LearnError::Data(
            "the perceptron diverged at every learning rate tried".into(),
        ))
    }

    fn predict(&self, row: &[f64]) -> f64 {
        let x: Vec<f32> = self.range.row(row).into_iter().map(|v| v as f32).collect();
        let mut hid = vec![0f32; self.h];
        self.hidden_out(&x, &mut hid);
        self.target.unscale(self.output(&hid) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::testdata::{nonlinear, rmse_vs_mean};

    #[test]
    fn learns_a_linear_function() {
        let x: Vec<Vec<f64>> = (0..50).map(|i| vec![i as f64 / 49.0]).collect();
        let y: Vec<f64> = x.iter().map(|r| 2.0 * r[0] + 1.0).collect();
        let mut m = Mlp::default();
        m.fit(&x, &y).unwrap();
        for (r, v) in x.iter().zip(&y) {
            assert!((m.predict(r) - v).abs() < 0.1, "{} vs {v}", m.predict(r));
        }
    }

    #[test]
    fn beats_the_mean_on_a_nonlinear_problem() {
        let (train, test) = nonlinear(9, 500, 200);
        let mut m = Mlp::default();
        m.fit(&train.0, &train.1).unwrap();
        let r = rmse_vs_mean(&m, &train, &test);
        assert!(r < 0.5, "{r}");
    }
}
