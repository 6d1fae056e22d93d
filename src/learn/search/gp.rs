//! A small Gaussian process for Bayesian optimization over configuration
//! fields: a Matérn-5/2 kernel over the weighted Euclidean distance of
//! the typed coordinates ([`super::fields`]), one lengthscale per field
//! (BaCO's kernel), Gaussian noise, hyperparameters by maximum a
//! posteriori (the marginal likelihood times a gamma prior on each
//! lengthscale, which keeps a lengthscale from collapsing to zero on a
//! handful of discrete points).
//!
//! Why not a crate: egobox-gp 0.37 (on linfa) builds here and has an
//! anisotropic Matérn-5/2, but it brings about two hundred crates into the
//! tree (two ndarray versions among them), its mean is a fixed regression
//! form (the learned prior would go in as residuals anyway) and it fits
//! hyperparameters by multistart COBYLA: 90 ms per fit of 30 points × 9
//! fields here (release, a loaded 2-core VM), against about 2 ms for this
//! one (the 30th step of a `simulate` run, expected improvement over
//! every variant included), and a whole simulation fits some 50,000 such
//! processes. friedrich's kernels are isotropic (one lengthscale for all
//! fields). What is needed fits in this file, with the Cholesky factor
//! and substitutions of [`crate::learn::linalg`].

use super::fields::{MAX_FIELDS, Point};
use crate::learn::linalg::{backward, cholesky, forward};

/// The Matérn-5/2 correlation at scaled distance `r`.
fn matern52(r: f64) -> f64 {
    let s = 5f64.sqrt() * r;
    (1.0 + s + s * s / 3.0) * (-s).exp()
}

/// The kernel's correlation between two points for the hyperparameters'
/// lengthscales (over the coordinates in use).
pub(crate) fn correlation(a: &Point, b: &Point, h: &Hyper) -> f64 {
    let l = &h.lengthscales;
    let r2: f64 = (0..h.dims).map(|i| ((a[i] - b[i]) / l[i]).powi(2)).sum();
    matern52(r2.sqrt())
}

/// Hyperparameters: lengthscales (in field units) and the noise variance
/// relative to the signal's (targets are standardized).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Hyper {
    /// One per coordinate in use (the first `dims`).
    pub lengthscales: [f64; MAX_FIELDS],
    pub dims: usize,
    pub noise: f64,
}

/// Gamma(shape, rate) prior on each lengthscale: mode at 2 field units,
/// standard deviation 1.1. A firm prior: with a handful of points a free
/// fit overfits. `simulate` on the shipped dataset (Bayesian optimization
/// with the learned prior, mean % of Opt at 6 / 12 evaluations; chosen
/// on gcc): with bo.rs's earlier settings (a fixed ensemble prior mean, 4
/// initial picks) Gamma(2, 1) (mode 1) gcc 87.7 / 92.1, Gamma(5, 2) 88.3
/// / 92.0, Gamma(9, 4) 88.6 / 92.4; lengthscales fixed at 2, not fitted,
/// 87.9 / 94.6. With today's (fitted weights, 5 picks 4 bits apart, a
/// decaying prior): at a decay of 0.9, Gamma(2, 0.5) 91.0 / 94.5,
/// Gamma(3, 1) 91.1 / 94.5, Gamma(4, 2) 91.1 / 94.7, Gamma(5, 2) 91.1 /
/// 94.7, Gamma(7, 2) (mode 3) 90.4 / 94.0, Gamma(9, 4) 91.1 / 94.4; at
/// 0.85, Gamma(5, 2) 91.1 / 95.1 and Gamma(9, 4) 91.1 / 94.2 (clang 87.0
/// / 92.7 both).
const SHAPE: f64 = 5.0;
const RATE: f64 = 2.0;
/// Lengthscale and noise bounds (log space is searched).
const L_MIN: f64 = 0.05;
const L_MAX: f64 = 20.0;
const NOISE_MIN: f64 = 1e-4;
const NOISE_MAX: f64 = 0.5;

/// A fitted process on standardized targets.
#[derive(Debug, Clone)]
pub(crate) struct Gp {
    pub hyper: Hyper,
    x: Vec<Point>,
    chol: Vec<f64>,
    alpha: Vec<f64>,
    mean: f64,
    scale: f64,
}

/// The standardization of the targets: mean and standard deviation (1
/// when they are all equal or there is one).
fn standardize(y: &[f64]) -> (f64, f64) {
    let n = y.len() as f64;
    let mean = y.iter().sum::<f64>() / n;
    let var = y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, if var > 1e-12 { var.sqrt() } else { 1.0 })
}

/// Kernel matrix with noise on the diagonal, its factor, and the log
/// posterior density of the hyperparameters (up to a constant).
fn factor(x: &[Point], z: &[f64], h: &Hyper) -> Option<(Vec<f64>, Vec<f64>, f64)> {
    let n = x.len();
    let mut k = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..i {
            let c = correlation(&x[i], &x[j], h);
            k[i * n + j] = c;
            k[j * n + i] = c;
        }
        k[i * n + i] = 1.0 + h.noise + 1e-8;
    }
    let l = cholesky(&k, n)?;
    let w = forward(&l, n, z);
    let alpha = backward(&l, n, &w);
    let fit = -0.5 * w.iter().map(|v| v * v).sum::<f64>();
    let complexity: f64 = (0..n).map(|i| l[i * n + i].ln()).sum();
    let prior: f64 = h.lengthscales[..h.dims]
        .iter()
        .map(|&v| (SHAPE - 1.0) * v.ln() - RATE * v)
        .sum();
    Some((l, alpha, fit - complexity + prior))
}

impl Gp {
    /// Fits the process to points `x` and targets `y` (at least one),
    /// searching the hyperparameters from `start` (the previous fit's, or
    /// [`Gp::default_hyper`]): a compass search in log space.
    pub(crate) fn fit(x: &[Point], y: &[f64], start: Hyper) -> Option<Gp> {
        if x.is_empty() || x.len() != y.len() {
            return None;
        }
        let (mean, scale) = standardize(y);
        let z: Vec<f64> = y.iter().map(|v| (v - mean) / scale).collect();
        // θ: log lengthscales, then log noise.
        let dims = start.dims;
        let to_theta = |h: &Hyper| -> Vec<f64> {
            let mut t: Vec<f64> = h.lengthscales[..dims].iter().map(|v| v.ln()).collect();
            t.push(h.noise.ln());
            t
        };
        let of_theta = |t: &[f64]| -> Hyper {
            let mut l = [1.0; MAX_FIELDS];
            for i in 0..dims {
                l[i] = t[i].exp().clamp(L_MIN, L_MAX);
            }
            Hyper {
                lengthscales: l,
                dims,
                noise: t[dims].exp().clamp(NOISE_MIN, NOISE_MAX),
            }
        };
        let score = |t: &[f64]| factor(x, &z, &of_theta(t)).map_or(f64::NEG_INFINITY, |f| f.2);
        let mut theta = to_theta(&start);
        let mut best = score(&theta);
        let mut step = 1.0;
        let mut evals = 0;
        while step > 0.05 && evals < 400 {
            let mut moved = false;
            for i in 0..theta.len() {
                for dir in [1.0, -1.0] {
                    let mut t = theta.clone();
                    t[i] += dir * step;
                    evals += 1;
                    let s = score(&t);
                    if s > best {
                        best = s;
                        theta = t;
                        moved = true;
                        break;
                    }
                }
            }
            if !moved {
                step /= 2.0;
            }
        }
        let hyper = of_theta(&theta);
        let (chol, alpha, _) = factor(x, &z, &hyper)?;
        Some(Gp {
            hyper,
            x: x.to_vec(),
            chol,
            alpha,
            mean,
            scale,
        })
    }

    /// Where the hyperparameter search starts without a previous fit,
    /// for `dims` coordinates.
    pub(crate) fn default_hyper(dims: usize) -> Hyper {
        Hyper {
            lengthscales: [(SHAPE - 1.0) / RATE; MAX_FIELDS],
            dims: dims.min(MAX_FIELDS),
            noise: 0.01,
        }
    }

    /// The posterior mean and standard deviation of the noise-free value
    /// at `p`, in the targets' units.
    pub(crate) fn predict(&self, p: &Point) -> (f64, f64) {
        let n = self.x.len();
        let k: Vec<f64> = self
            .x
            .iter()
            .map(|q| correlation(p, q, &self.hyper))
            .collect();
        let mu: f64 = k.iter().zip(&self.alpha).map(|(a, b)| a * b).sum();
        let v = forward(&self.chol, n, &k);
        let var = (1.0 - v.iter().map(|x| x * x).sum::<f64>()).max(1e-12);
        (self.mean + self.scale * mu, self.scale * var.sqrt())
    }
}

/// The standard normal density and distribution function.
fn phi(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

fn big_phi(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// The complementary error function (Numerical Recipes' erfcc, relative
/// error below 1.2e-7: plenty for ranking candidates).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    // The polynomial in Horner's form from its innermost term out: the
    // same operations in the same order as the nested expression, which
    // rustfmt took 18 s to lay out.
    const C: [f64; 9] = [
        1.000_023_68,
        0.374_091_96,
        0.096_784_18,
        -0.186_288_06,
        0.278_868_07,
        -1.135_203_98,
        1.488_515_87,
        -0.822_152_23,
        0.170_872_77,
    ];
    let poly = C[..8].iter().rev().fold(C[8], |acc, &c| c + t * acc);
    let r = t * (-z * z - 1.265_512_23 + t * poly).exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// Expected improvement below `best` of a value distributed N(mu, sd²)
/// (minimization).
pub(crate) fn expected_improvement(mu: f64, sd: f64, best: f64) -> f64 {
    if sd <= 0.0 {
        return (best - mu).max(0.0);
    }
    let z = (best - mu) / sd;
    (best - mu) * big_phi(z) + sd * phi(z)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::learn::search::fields::FIELDS;

    fn point(i: usize) -> Point {
        let mut p = [0.0; MAX_FIELDS];
        for (b, v) in p.iter_mut().take(FIELDS).enumerate() {
            *v = ((i >> b) & 1) as f64;
        }
        p
    }

    #[test]
    fn the_process_interpolates_and_finds_the_field_that_matters() {
        // y depends on field 0 only.
        let x: Vec<Point> = (0..30).map(|i| point(i * 7 % 64)).collect();
        let y: Vec<f64> = x.iter().map(|p| 3.0 * p[0] + 1.0).collect();
        let gp = Gp::fit(&x, &y, Gp::default_hyper(FIELDS)).unwrap();
        for (p, v) in x.iter().zip(&y) {
            let (mu, sd) = gp.predict(p);
            assert!((mu - v).abs() < 0.1, "{mu} vs {v}");
            assert!(sd < 0.5);
        }
        let l = gp.hyper.lengthscales;
        assert!(
            (1..6).all(|i| l[0] < l[i]),
            "field 0 has the shortest lengthscale among the varied: {l:?}"
        );
        // Far from the data the uncertainty grows.
        let mut far = [0.0; MAX_FIELDS];
        far[8] = 3.0;
        assert!(gp.predict(&far).1 > gp.predict(&x[0]).1);
    }

    #[test]
    fn expected_improvement_is_sane() {
        assert!((big_phi(0.0) - 0.5).abs() < 1e-7);
        assert!((big_phi(1.96) - 0.975).abs() < 1e-4);
        assert_eq!(expected_improvement(2.0, 0.0, 1.0), 0.0);
        assert_eq!(expected_improvement(0.5, 0.0, 1.0), 0.5);
        // More uncertainty, more expected improvement at the same mean.
        assert!(expected_improvement(1.0, 1.0, 1.0) > expected_improvement(1.0, 0.1, 1.0));
        assert!((expected_improvement(1.0, 1.0, 1.0) - phi(0.0)).abs() < 1e-9);
    }

    #[test]
    fn a_single_point_fits() {
        let gp = Gp::fit(&[[0.0; MAX_FIELDS]], &[2.0], Gp::default_hyper(FIELDS)).unwrap();
        let (mu, _) = gp.predict(&[0.0; MAX_FIELDS]);
        assert!((mu - 2.0).abs() < 1e-6);
    }
}
