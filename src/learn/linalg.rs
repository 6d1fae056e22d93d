//! The small dense linear algebra the models need (systems of at most a
//! few dozen unknowns), so that no matrix crate is pulled in for it.

/// Ridge regression with a free intercept: the weights w (k of them, the
/// rows' first feature the constant 1) minimizing Σ (y − w·x)² +
/// `ridge` Σ_{i≥1} (w_i − t)², where `pull` = `ridge` · t (0 pulls toward
/// zero); the intercept carries only a tiny penalty, to keep the system
/// positive definite. `None` when it is not.
pub(crate) fn ridge_free_intercept(
    rows: impl IntoIterator<Item = (Vec<f64>, f64)>,
    k: usize,
    ridge: f64,
    pull: f64,
) -> Option<Vec<f64>> {
    let (mut a, mut rhs) = (vec![0.0; k * k], vec![0.0; k]);
    for (x, y) in rows {
        for i in 0..k {
            rhs[i] += x[i] * y;
            for j in 0..k {
                a[i * k + j] += x[i] * x[j];
            }
        }
    }
    a[0] += 1e-6;
    for i in 1..k {
        a[i * k + i] += ridge;
        rhs[i] += pull;
    }
    solve_spd(&a, &rhs)
}

/// Solves `a x = b` for a symmetric positive definite `a` (row-major,
/// n×n) by Cholesky; `None` when `a` is not positive definite.
pub(crate) fn solve_spd(a: &[f64], b: &[f64]) -> Option<Vec<f64>> {
    let n = b.len();
    let l = cholesky(a, n)?;
    Some(backward(&l, n, &forward(&l, n, b)))
}

/// The lower Cholesky factor L (L Lᵀ = `a`) of a symmetric positive
/// definite n×n matrix (row-major, read on and below the diagonal), or
/// `None` when it is not positive definite.
pub(crate) fn cholesky(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            if i == j {
                if s <= 0.0 || !s.is_finite() {
                    return None;
                }
                l[i * n + i] = s.sqrt();
            } else {
                l[i * n + j] = s / l[j * n + j];
            }
        }
    }
    Some(l)
}

/// Solves L z = `b` for a lower triangular n×n `l` (row-major), by
/// forward substitution.
pub(crate) fn forward(l: &[f64], n: usize, b: &[f64]) -> Vec<f64> {
    let mut z = b.to_vec();
    for i in 0..n {
        for k in 0..i {
            z[i] -= l[i * n + k] * z[k];
        }
        z[i] /= l[i * n + i];
    }
    z
}

/// Solves Lᵀ x = `z` for a lower triangular n×n `l` (row-major), by
/// backward substitution.
pub(crate) fn backward(l: &[f64], n: usize, z: &[f64]) -> Vec<f64> {
    let mut x = z.to_vec();
    for i in (0..n).rev() {
        for k in i + 1..n {
            x[i] -= l[k * n + i] * x[k];
        }
        x[i] /= l[i * n + i];
    }
    x
}

/// Least squares with a ridge on standardized columns: the normal
/// equations of the chosen columns, solved once per column subset.
#[derive(Debug, Clone)]
pub(crate) struct Gram {
    /// Column means and standard deviations (0 for constant columns).
    pub mean: Vec<f64>,
    pub sd: Vec<f64>,
    pub y_mean: f64,
    /// Σ z_j z_k over rows, z = standardized columns (d×d).
    pub zz: Vec<f64>,
    /// Σ z_j (y - ȳ).
    pub zy: Vec<f64>,
    /// Σ (y - ȳ)².
    pub yy: f64,
    pub n: usize,
}

impl Gram {
    /// Accumulates the rows `idx` of `x` (all rows when `None`).
    pub(crate) fn new(x: &[Vec<f64>], y: &[f64], idx: Option<&[usize]>) -> Gram {
        let all: Vec<usize>;
        let idx = match idx {
            Some(i) => i,
            None => {
                all = (0..x.len()).collect();
                &all
            }
        };
        let d = x.first().map_or(0, Vec::len);
        let n = idx.len();
        let nf = n.max(1) as f64;
        let mut mean = vec![0.0; d];
        let mut y_mean = 0.0;
        for &i in idx {
            for j in 0..d {
                mean[j] += x[i][j];
            }
            y_mean += y[i];
        }
        mean.iter_mut().for_each(|m| *m /= nf);
        y_mean /= nf;
        let mut sd = vec![0.0; d];
        for &i in idx {
            for j in 0..d {
                sd[j] += (x[i][j] - mean[j]).powi(2);
            }
        }
        for s in &mut sd {
            let v = (*s / nf).sqrt();
            *s = if v > 1e-12 { v } else { 0.0 };
        }
        let mut zz = vec![0.0; d * d];
        let mut zy = vec![0.0; d];
        let mut yy = 0.0;
        let mut z = vec![0.0; d];
        for &i in idx {
            for j in 0..d {
                z[j] = if sd[j] > 0.0 {
                    (x[i][j] - mean[j]) / sd[j]
                } else {
                    0.0
                };
            }
            let dy = y[i] - y_mean;
            yy += dy * dy;
            for j in 0..d {
                zy[j] += z[j] * dy;
                for k in j..d {
                    zz[j * d + k] += z[j] * z[k];
                }
            }
        }
        for j in 0..d {
            for k in 0..j {
                zz[j * d + k] = zz[k * d + j];
            }
        }
        Gram {
            mean,
            sd,
            y_mean,
            zz,
            zy,
            yy,
            n,
        }
    }

    /// Ridge fit on the columns `cols` (constant columns are dropped):
    /// returns (intercept, coefficient per column of `cols` in original
    /// units, sum of squared errors).
    pub(crate) fn fit(&self, cols: &[usize], ridge: f64) -> (f64, Vec<f64>, f64) {
        let d = self.mean.len();
        let live: Vec<usize> = cols.iter().copied().filter(|&c| self.sd[c] > 0.0).collect();
        let p = live.len();
        let mut a = vec![0.0; p * p];
        let mut b = vec![0.0; p];
        for (r, &j) in live.iter().enumerate() {
            b[r] = self.zy[j];
            for (c, &k) in live.iter().enumerate() {
                a[r * p + c] = self.zz[j * d + k];
            }
            a[r * p + r] += ridge * self.n as f64 + 1e-12;
        }
        let beta = solve_spd(&a, &b).unwrap_or_else(|| vec![0.0; p]);
        // SSE = yy - 2 βᵀzy + βᵀ ZZ β
        let mut sse = self.yy;
        for r in 0..p {
            sse -= 2.0 * beta[r] * b[r];
            for c in 0..p {
                sse += beta[r] * beta[c] * self.zz[live[r] * d + live[c]];
            }
        }
        let mut coef = vec![0.0; cols.len()];
        let mut intercept = self.y_mean;
        for (r, &j) in live.iter().enumerate() {
            let w = beta[r] / self.sd[j];
            intercept -= w * self.mean[j];
            let pos = cols.iter().position(|&c| c == j).expect("live column");
            coef[pos] = w;
        }
        (intercept, coef, sse.max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cholesky_solves_a_known_system() {
        let a = [4.0, 2.0, 2.0, 3.0];
        let x = solve_spd(&a, &[2.0, 1.0]).unwrap();
        assert!((x[0] - 0.5).abs() < 1e-12 && x[1].abs() < 1e-12);
        assert!(solve_spd(&[0.0], &[1.0]).is_none());
    }

    #[test]
    fn gram_recovers_exact_coefficients() {
        let x: Vec<Vec<f64>> = (0..20)
            .map(|i| vec![i as f64, ((i * 7) % 5) as f64, 3.0])
            .collect();
        let y: Vec<f64> = x.iter().map(|r| 2.0 * r[0] - r[1] + 4.0).collect();
        let g = Gram::new(&x, &y, None);
        let (b0, w, sse) = g.fit(&[0, 1, 2], 0.0);
        assert!((b0 - 4.0).abs() < 1e-9, "{b0}");
        assert!((w[0] - 2.0).abs() < 1e-9 && (w[1] + 1.0).abs() < 1e-9 && w[2] == 0.0);
        assert!(sse < 1e-12);
    }
}
