//! M5P model trees: Quinlan's M5 as refined by Wang & Witten (the
//! paper's Weka M5P). A regression tree grown by standard-deviation
//! reduction carries a linear model at every node; the tree is pruned
//! bottom-up where a node's model does as well as its subtree, and
//! predictions are smoothed along the path back to the root so that
//! neighbouring leaves do not disagree sharply.

use super::{LearnError, Regressor, check_shape};
use serde::{Deserialize, Serialize};

/// Weight of a parent's model in smoothing, as in the M5 paper.
const SMOOTHING_K: f64 = 15.0;
/// Keeps the normal equations solvable when attributes are collinear,
/// while being far too small to bias a well-posed fit.
const RIDGE: f64 = 1e-8;
/// Nodes whose targets vary less than this fraction of the root's are
/// not worth splitting.
const SD_FRACTION: f64 = 0.05;

/// An M5P model tree.
///
/// The tree is stored flat (root first, children by index) so that deep
/// trees neither recurse in serde nor hit serde_json's nesting limit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct M5p {
    /// Fewest training rows on either side of a split.
    pub min_instances: usize,
    /// Blend leaf predictions with the models above them.
    pub smoothing: bool,
    nodes: Vec<Node>,
}

/// `intercept + Σ coef * row[attr]`, on raw attribute values so that
/// prediction needs no scaling state.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Linear {
    intercept: f64,
    terms: Vec<(usize, f64)>,
}

impl Linear {
    fn eval(&self, row: &[f64]) -> f64 {
        self.terms
            .iter()
            .fold(self.intercept, |s, &(a, c)| s + c * row[a])
    }
}

/// Rows with `row[attr] <= threshold` go left.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Split {
    attr: usize,
    threshold: f64,
    left: usize,
    right: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Node {
    /// Training rows that reached this node (the smoothing weight).
    n: usize,
    model: Linear,
    split: Option<Split>,
}

impl M5p {
    /// A tree whose splits leave at least `min_instances` rows on each
    /// side (the paper used 4), with smoothing on.
    pub(crate) fn new(min_instances: usize) -> M5p {
        M5p {
            min_instances,
            smoothing: true,
            nodes: Vec::new(),
        }
    }

    /// Number of nodes after pruning (0 before `fit`).
    #[cfg(test)]
    pub(crate) fn size(&self) -> usize {
        self.nodes.len()
    }
}

impl Default for M5p {
    fn default() -> M5p {
        M5p::new(4)
    }
}

impl Regressor for M5p {
    fn fit(&mut self, x: &[Vec<f64>], y: &[f64]) -> Result<(), LearnError> {
        let d = check_shape(x, y)?;
        let n = y.len();
        let cols: Vec<Vec<f64>> = (0..d).map(|j| x.iter().map(|r| r[j]).collect()).collect();
        let rows: Vec<usize> = (0..n).collect();
        // Sorting once at the root and partitioning stably afterwards
        // keeps every node's attribute orders without re-sorting.
        let sorted: Vec<Vec<usize>> = cols
            .iter()
            .map(|c| {
                let mut o = rows.clone();
                o.sort_by(|&a, &b| c[a].total_cmp(&c[b]));
                o
            })
            .collect();
        let mean = y.iter().sum::<f64>() / n as f64;
        let root_sd = (y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        let mut b = Builder {
            cols: &cols,
            y,
            min: self.min_instances.max(1),
            sd_floor: SD_FRACTION * root_sd,
            left: vec![false; n],
        };
        let tree = b.grow(rows, sorted, &mut Vec::new());
        let mut nodes = Vec::new();
        flatten(tree, &mut nodes);
        self.nodes = nodes;
        Ok(())
    }

    /// NaN before `fit`, since there is nothing to predict from.
    fn predict(&self, row: &[f64]) -> f64 {
        if self.nodes.is_empty() {
            return f64::NAN;
        }
        let mut path = vec![0];
        let mut i = 0;
        while let Some(s) = &self.nodes[i].split {
            i = if row[s.attr] <= s.threshold {
                s.left
            } else {
                s.right
            };
            path.push(i);
        }
        let mut p = self.nodes[i].model.eval(row);
        if self.smoothing {
            for w in path.windows(2).rev() {
                let nc = self.nodes[w[1]].n as f64;
                let q = self.nodes[w[0]].model.eval(row);
                p = (nc * p + SMOOTHING_K * q) / (nc + SMOOTHING_K);
            }
        }
        p
    }
}

/// A node while growing and pruning, before it is laid out flat.
struct Grown {
    n: usize,
    model: Linear,
    /// Sum of absolute training residuals of what is kept.
    abs: f64,
    /// Parameters of what is kept (all leaf models' coefficients).
    params: usize,
    /// Attributes tested anywhere in the grown subtree, pruned or not:
    /// the candidates for the parent's model.
    tested: Vec<usize>,
    split: Option<(usize, f64, Box<Grown>, Box<Grown>)>,
}

fn flatten(g: Grown, nodes: &mut Vec<Node>) -> usize {
    let i = nodes.len();
    nodes.push(Node {
        n: g.n,
        model: g.model,
        split: None,
    });
    if let Some((attr, threshold, l, r)) = g.split {
        let left = flatten(*l, nodes);
        let right = flatten(*r, nodes);
        nodes[i].split = Some(Split {
            attr,
            threshold,
            left,
            right,
        });
    }
    i
}

struct Builder<'a> {
    cols: &'a [Vec<f64>],
    y: &'a [f64],
    min: usize,
    sd_floor: f64,
    /// Scratch: which rows of the node being split go left.
    left: Vec<bool>,
}

impl Builder<'_> {
    /// Grows the subtree over `rows` (`sorted[j]` = the same rows in
    /// order of attribute j), fits its models and prunes it on the way
    /// back up. `path` holds the attributes tested above.
    fn grow(&mut self, rows: Vec<usize>, sorted: Vec<Vec<usize>>, path: &mut Vec<usize>) -> Grown {
        let n = rows.len();
        let Some((attr, pos, threshold)) = self.best_split(&rows, &sorted) else {
            // A leaf has no tests below it, so its model may use the
            // attributes that led to it.
            let mut attrs = path.clone();
            attrs.sort_unstable();
            attrs.dedup();
            let (model, _, mae) = fit_linear(self.cols, self.y, &rows, &attrs);
            return Grown {
                n,
                params: model.terms.len() + 1,
                model,
                abs: mae * n as f64,
                tested: Vec::new(),
                split: None,
            };
        };
        for (k, &r) in sorted[attr].iter().enumerate() {
            self.left[r] = k <= pos;
        }
        let left = &self.left;
        let (lrows, rrows): (Vec<usize>, Vec<usize>) = rows.iter().partition(|&&r| left[r]);
        let (lsorted, rsorted): (Vec<Vec<usize>>, Vec<Vec<usize>>) = sorted
            .into_iter()
            .map(|s| s.into_iter().partition(|&r| left[r]))
            .unzip();
        path.push(attr);
        let l = self.grow(lrows, lsorted, path);
        let r = self.grow(rrows, rsorted, path);
        path.pop();
        let mut tested = l.tested.clone();
        tested.extend(&r.tested);
        tested.push(attr);
        tested.sort_unstable();
        tested.dedup();
        let (model, node_err, mae) = fit_linear(self.cols, self.y, &rows, &tested);
        let abs = l.abs + r.abs;
        let params = l.params + r.params + 1;
        // The subtree is charged for every parameter it fits (as in
        // Wang & Witten), not just the weighted errors of its children:
        // the latter let trees grown on pure noise survive almost whole.
        let sub_err = adjusted(n, params, abs / n as f64);
        if node_err <= sub_err {
            Grown {
                n,
                params: model.terms.len() + 1,
                model,
                abs: mae * n as f64,
                tested,
                split: None,
            }
        } else {
            Grown {
                n,
                model,
                abs,
                params,
                tested,
                split: Some((attr, threshold, Box::new(l), Box::new(r))),
            }
        }
    }

    /// The split with the largest standard-deviation reduction, as
    /// (attribute, last left position in its order, threshold), or None
    /// when the node is too small, too uniform, or nothing helps.
    fn best_split(&self, rows: &[usize], sorted: &[Vec<usize>]) -> Option<(usize, usize, f64)> {
        let n = rows.len();
        if n < 2 * self.min {
            return None;
        }
        let nf = n as f64;
        let y = self.y;
        let mean = rows.iter().map(|&r| y[r]).sum::<f64>() / nf;
        // Centred sums keep the running variances free of cancellation.
        let (tot, tot2) = rows.iter().fold((0.0, 0.0), |(s, s2), &r| {
            let e = y[r] - mean;
            (s + e, s2 + e * e)
        });
        let sd = sd_of(tot, tot2, n);
        if sd <= self.sd_floor {
            return None;
        }
        let mut best: Option<(f64, usize, usize)> = None;
        for (j, order) in sorted.iter().enumerate() {
            let col = &self.cols[j];
            let (mut s, mut s2) = (0.0, 0.0);
            for k in 0..n - 1 {
                let e = y[order[k]] - mean;
                s += e;
                s2 += e * e;
                let nl = k + 1;
                if nl < self.min {
                    continue;
                }
                if n - nl < self.min {
                    break;
                }
                if col[order[k]] >= col[order[k + 1]] {
                    continue;
                }
                let sdr = sd
                    - (nl as f64 / nf) * sd_of(s, s2, nl)
                    - ((n - nl) as f64 / nf) * sd_of(tot - s, tot2 - s2, n - nl);
                if sdr > best.map_or(0.0, |b| b.0) {
                    best = Some((sdr, j, k));
                }
            }
        }
        best.map(|(_, j, k)| {
            let col = &self.cols[j];
            let (a, b) = (col[sorted[j][k]], col[sorted[j][k + 1]]);
            let mid = 0.5 * a + 0.5 * b;
            // Between adjacent floats the midpoint can round up to `b`,
            // which would send `b`'s rows the wrong way at prediction.
            let t = if mid >= a && mid < b { mid } else { a };
            (j, k, t)
        })
    }
}

/// Population standard deviation from centred sums.
fn sd_of(s: f64, s2: f64, n: usize) -> f64 {
    let nf = n as f64;
    (s2 / nf - (s / nf).powi(2)).max(0.0).sqrt()
}

/// M5's error estimate: the mean absolute residual inflated for the `v`
/// parameters fitted to `n` rows; infinite when the fit could interpolate,
/// so such models always lose.
fn adjusted(n: usize, v: usize, mean_abs: f64) -> f64 {
    if n <= v {
        f64::INFINITY
    } else {
        (n + v) as f64 / (n - v) as f64 * mean_abs
    }
}

/// Least squares of y on `attrs` over `rows`, simplified by greedily
/// dropping terms while the adjusted error does not grow. Returns the
/// model, its adjusted error and its mean absolute residual.
fn fit_linear(cols: &[Vec<f64>], y: &[f64], rows: &[usize], attrs: &[usize]) -> (Linear, f64, f64) {
    let n = rows.len();
    let nf = n as f64;
    let ybar = rows.iter().map(|&r| y[r]).sum::<f64>() / nf;
    let e: Vec<f64> = rows.iter().map(|&r| y[r] - ybar).collect();
    let ee = e.iter().map(|v| v * v).sum::<f64>() / nf;
    // Standardized columns; constant ones carry no information here.
    let mut used = Vec::new();
    let mut z: Vec<Vec<f64>> = Vec::new();
    for &a in attrs {
        let c = &cols[a];
        let m = rows.iter().map(|&r| c[r]).sum::<f64>() / nf;
        let sd = (rows.iter().map(|&r| (c[r] - m).powi(2)).sum::<f64>() / nf).sqrt();
        if sd > 1e-12 * m.abs() && sd > 0.0 {
            used.push((a, m, sd));
            z.push(rows.iter().map(|&r| (c[r] - m) / sd).collect());
        }
    }
    let k = z.len();
    let mut g = vec![vec![0.0; k]; k];
    for p in 0..k {
        for q in p..k {
            let v = z[p].iter().zip(&z[q]).map(|(a, b)| a * b).sum::<f64>() / nf;
            g[p][q] = v;
            g[q][p] = v;
        }
    }
    let c: Vec<f64> = z
        .iter()
        .map(|zp| zp.iter().zip(&e).map(|(a, b)| a * b).sum::<f64>() / nf)
        .collect();
    let mean_abs = |set: &[usize], b: &[f64]| {
        let mut res = e.clone();
        for (&p, &bp) in set.iter().zip(b) {
            for (ri, zi) in res.iter_mut().zip(&z[p]) {
                *ri -= bp * zi;
            }
        }
        res.iter().map(|v| v.abs()).sum::<f64>() / nf
    };
    let mut set: Vec<usize> = (0..k).collect();
    let mut b = solve(&g, &c, &set);
    let mut mae = mean_abs(&set, &b);
    let mut err = adjusted(n, set.len() + 1, mae);
    while !set.is_empty() {
        // Rank removals by training squared error (cheap from the Gram
        // matrix), then judge only the best by the absolute-error estimate.
        let mut best: Option<(f64, Vec<usize>, Vec<f64>)> = None;
        for drop in 0..set.len() {
            let cand: Vec<usize> = set
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != drop)
                .map(|(_, &p)| p)
                .collect();
            let bc = solve(&g, &c, &cand);
            let mut sse = ee;
            for (i, &p) in cand.iter().enumerate() {
                sse -= 2.0 * bc[i] * c[p];
                for (l, &q) in cand.iter().enumerate() {
                    sse += bc[i] * bc[l] * g[p][q];
                }
            }
            if best.as_ref().is_none_or(|b| sse < b.0) {
                best = Some((sse, cand, bc));
            }
        }
        let Some((_, cand, bc)) = best else { break };
        let cmae = mean_abs(&cand, &bc);
        let cerr = adjusted(n, cand.len() + 1, cmae);
        if cerr <= err {
            set = cand;
            b = bc;
            err = cerr;
            mae = cmae;
        } else {
            break;
        }
    }
    let mut intercept = ybar;
    let mut terms = Vec::with_capacity(set.len());
    for (&p, &bp) in set.iter().zip(&b) {
        let (a, m, sd) = used[p];
        let w = bp / sd;
        intercept -= w * m;
        terms.push((a, w));
    }
    (Linear { intercept, terms }, err, mae)
}

/// Solves (G + RIDGE·I) b = c restricted to the indices in `set`, by
/// Cholesky (the matrix is a correlation matrix plus a ridge, so positive
/// definite).
fn solve(g: &[Vec<f64>], c: &[f64], set: &[usize]) -> Vec<f64> {
    let m = set.len();
    let mut l = vec![vec![0.0; m]; m];
    for i in 0..m {
        for j in 0..=i {
            let mut s = g[set[i]][set[j]];
            if i == j {
                s += RIDGE;
            }
            s -= l[i][..j]
                .iter()
                .zip(&l[j][..j])
                .map(|(a, b)| a * b)
                .sum::<f64>();
            l[i][j] = if i == j {
                // Rounding can only make a tiny pivot non-positive when the
                // columns are collinear; the ridge value is a safe stand-in.
                s.max(RIDGE).sqrt()
            } else {
                s / l[j][j]
            };
        }
    }
    let mut w = vec![0.0; m];
    for i in 0..m {
        let s = (0..i).fold(c[set[i]], |s, k| s - l[i][k] * w[k]);
        w[i] = s / l[i][i];
    }
    for i in (0..m).rev() {
        let s = (i + 1..m).fold(w[i], |s, k| s - l[k][i] * w[k]);
        w[i] = s / l[i][i];
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::rng::Lcg;

    /// `n` rows of `d` uniform draws from the crate's generator.
    trait Rows {
        fn rows(&mut self, n: usize, d: usize) -> Vec<Vec<f64>>;
    }

    impl Rows for Lcg {
        fn rows(&mut self, n: usize, d: usize) -> Vec<Vec<f64>> {
            (0..n)
                .map(|_| (0..d).map(|_| self.uniform()).collect())
                .collect()
        }
    }

    fn fitted(x: &[Vec<f64>], y: &[f64]) -> M5p {
        let mut m = M5p::default();
        m.fit(x, y).unwrap();
        m
    }

    fn nonlinear(x: &[f64]) -> f64 {
        (3.0 * x[0]).sin() * x[1] + x[2] * x[2]
    }

    #[test]
    fn linear_data_is_fitted_exactly() {
        let x = Lcg::new(1).rows(200, 2);
        let f = |r: &[f64]| 3.0 * r[0] - 2.0 * r[1] + 1.0;
        let y: Vec<f64> = x.iter().map(|r| f(r)).collect();
        let m = fitted(&x, &y);
        for r in x.iter().chain(&Lcg::new(2).rows(50, 2)) {
            assert!((m.predict(r) - f(r)).abs() < 1e-6, "{r:?}");
        }
    }

    #[test]
    fn piecewise_linear_data_is_learned() {
        let f = |r: &[f64]| if r[0] < 0.5 { r[0] } else { 5.0 - 2.0 * r[0] };
        let mut g = Lcg::new(3);
        let x = g.rows(1000, 2);
        let y: Vec<f64> = x.iter().map(|r| f(r)).collect();
        let m = fitted(&x, &y);
        let test = g.rows(300, 2);
        let mae = test
            .iter()
            .map(|r| (m.predict(r) - f(r)).abs())
            .sum::<f64>()
            / 300.0;
        assert!(mae < 0.05, "mae {mae}");
    }

    #[test]
    fn nonlinear_data_beats_the_mean() {
        let mut g = Lcg::new(4);
        let x = g.rows(500, 3);
        let y: Vec<f64> = x.iter().map(|r| nonlinear(r)).collect();
        let test = g.rows(200, 3);
        let m = fitted(&x, &y);
        let mean = y.iter().sum::<f64>() / y.len() as f64;
        let rmse = |p: &dyn Fn(&[f64]) -> f64| {
            (test
                .iter()
                .map(|r| (p(r) - nonlinear(r)).powi(2))
                .sum::<f64>()
                / 200.0)
                .sqrt()
        };
        let tree = rmse(&|r| m.predict(r));
        let base = rmse(&|_| mean);
        assert!(tree <= 0.5 * base, "tree {tree}, mean {base}");
    }

    #[test]
    fn json_round_trip_predicts_identically() {
        let mut g = Lcg::new(5);
        let x = g.rows(300, 3);
        let y: Vec<f64> = x.iter().map(|r| nonlinear(r)).collect();
        let m = fitted(&x, &y);
        let back: M5p = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        for r in g.rows(100, 3) {
            assert_eq!(m.predict(&r).to_bits(), back.predict(&r).to_bits());
        }
    }

    #[test]
    fn same_data_gives_the_same_model() {
        let mut g = Lcg::new(6);
        let x = g.rows(300, 3);
        let y: Vec<f64> = x.iter().map(|r| nonlinear(r)).collect();
        let a = serde_json::to_string(&fitted(&x, &y)).unwrap();
        let b = serde_json::to_string(&fitted(&x, &y)).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn empty_and_tiny_data() {
        assert!(M5p::default().fit(&[], &[]).is_err());
        let m = fitted(&[vec![1.0, 2.0]], &[7.0]);
        assert_eq!(m.predict(&[0.0, 0.0]), 7.0);
        assert!(M5p::default().predict(&[1.0]).is_nan());
    }

    /// Run with `--ignored --nocapture` to see the fit time on a data set
    /// of the size the paper's models learn from.
    #[test]
    #[ignore]
    fn fit_time_7000_by_30() {
        let mut g = Lcg::new(7);
        let x = g.rows(7000, 30);
        let y: Vec<f64> = x
            .iter()
            .map(|r| nonlinear(r) + r[3..].iter().sum::<f64>() * 0.1 + 0.1 * g.uniform())
            .collect();
        let t = std::time::Instant::now();
        let m = fitted(&x, &y);
        eprintln!("fit 7000x30: {:?}, {} nodes", t.elapsed(), m.size());
    }
}
