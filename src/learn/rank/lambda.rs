//! The ranking losses' gradients and hessians over one group (one
//! kernel's variants).
//!
//! Pairwise (RankNet): every pair of rows with different relevance adds
//! `w · log(1 + exp(−σ (s_i − s_j)))`, `i` the more relevant, `w` the
//! mean of the two rows' weights. LambdaRank (LambdaMART once boosted)
//! multiplies each pair's term by `|ΔNDCG_ij|`, how much NDCG would change
//! were the two rows swapped in the current ranking: pairs at the top
//! weigh most. `ΔNDCG` is held constant in the derivatives (Burges 2010,
//! "From RankNet to LambdaRank to LambdaMART"); so is it in the tests'
//! loss, which is then exactly the function whose gradient and diagonal
//! hessian [`Group::gradients`] returns. The boosting needs only those,
//! never the loss's value.
//!
//! Speed: what does not change while boosting is computed once per group
//! ([`Group::new`]: the rows sorted by relevance, so each row's pairs are
//! the rows after its block of equal relevance, their gains, the ideal
//! DCG); each pair's logistic `1/(1 + exp(σ (s_i − s_j)))` is
//! `e_j/(e_i + e_j)` with `e_k = exp(σ (s_k − c))`, one `exp` per row
//! rather than per pair (`c` the middle of the group's scores; per pair
//! again when the scores spread too far for `e_k` to stay finite).

use super::Objective;
use super::metrics::{discount, gain};

/// Above this, `exp` of a centred score could overflow (or underflow).
const MAX_EXPONENT: f64 = 700.0;

/// One group's rows and what of them stays fixed while boosting.
pub(super) struct Group {
    /// The rows (indices into the training data), most relevant first,
    /// ties in row order.
    pub rows: Vec<usize>,
    gain: Vec<f64>,
    weight: Vec<f64>,
    /// Per position in `rows`: the first position of a less relevant
    /// row (`rows.len()` if none).
    below: Vec<usize>,
    /// The ideal DCG, LambdaRank's normalizer (0 when all rows are
    /// equally relevant).
    ideal: f64,
}

impl Group {
    /// The group of rows `rows` whose relevance ([`super::metrics::relevance`])
    /// is `rel` (one per row of `rows`), weighing `weight[row]`.
    pub(crate) fn new(rows: &[usize], rel: &[f64], weight: &[f64]) -> Group {
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by(|&a, &b| rel[b].total_cmp(&rel[a]).then(rows[a].cmp(&rows[b])));
        let rel: Vec<f64> = order.iter().map(|&k| rel[k]).collect();
        let n = rel.len();
        let mut below = vec![n; n];
        for k in (0..n.saturating_sub(1)).rev() {
            below[k] = if rel[k + 1] < rel[k] {
                k + 1
            } else {
                below[k + 1]
            };
        }
        let gain: Vec<f64> = rel.iter().map(|&r| gain(r)).collect();
        let ideal = gain.iter().enumerate().map(|(p, &v)| v * discount(p)).sum();
        Group {
            rows: order.iter().map(|&k| rows[k]).collect(),
            weight: order.iter().map(|&k| weight[rows[k]]).collect(),
            gain,
            below,
            ideal,
        }
    }

    /// The gradients and hessians of the group's loss at `scores`
    /// (indexed by row), one per row of [`Group::rows`], in its order.
    /// `sigma`: the logistic's steepness; `truncation`: with LambdaRank,
    /// only the pairs one of whose rows is ranked above this position
    /// count.
    pub(crate) fn gradients(
        &self,
        objective: Objective,
        sigma: f64,
        truncation: Option<usize>,
        scores: &[f64],
    ) -> (Vec<f64>, Vec<f64>) {
        let n = self.rows.len();
        let (mut g, mut h) = (vec![0.0; n], vec![0.0; n]);
        let s: Vec<f64> = self.rows.iter().map(|&r| scores[r]).collect();
        let lambda = objective == Objective::LambdaRank;
        if lambda && self.ideal <= 0.0 {
            return (g, h);
        }
        // Positions in the current ranking (ties by row) and their
        // discounts, for ΔNDCG.
        let (mut pos, mut disc) = (vec![0usize; n], vec![0.0; n]);
        if lambda {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&a, &b| s[b].total_cmp(&s[a]).then(self.rows[a].cmp(&self.rows[b])));
            for (p, &k) in order.iter().enumerate() {
                pos[k] = p;
                disc[k] = discount(p);
            }
        }
        let lo = s.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mid = lo / 2.0 + hi / 2.0;
        let e: Option<Vec<f64>> = (sigma * (hi - lo) / 2.0 <= MAX_EXPONENT)
            .then(|| s.iter().map(|&v| (sigma * (v - mid)).exp()).collect());
        let pairs = Pairs {
            group: self,
            sigma,
            cut: if lambda {
                truncation.unwrap_or(usize::MAX)
            } else {
                usize::MAX
            },
            s: &s,
            e: e.as_deref().unwrap_or(&[]),
            pos: &pos,
            disc: &disc,
        };
        match (lambda, e.is_some()) {
            (true, true) => pairs.add::<true, false>(&mut g, &mut h),
            (true, false) => pairs.add::<true, true>(&mut g, &mut h),
            (false, true) => pairs.add::<false, false>(&mut g, &mut h),
            (false, false) => pairs.add::<false, true>(&mut g, &mut h),
        }
        (g, h)
    }
}

/// One gradient step's view of a group (all slices in [`Group::rows`]'
/// order).
struct Pairs<'a> {
    group: &'a Group,
    sigma: f64,
    /// LambdaRank's truncation (`usize::MAX`: none).
    cut: usize,
    s: &'a [f64],
    /// `exp(σ (s_k − c))` per row, unless `DIRECT`.
    e: &'a [f64],
    pos: &'a [usize],
    disc: &'a [f64],
}

impl Pairs<'_> {
    /// Adds every pair's derivatives to `g` and `h`: `LAMBDA` weighs
    /// them by |ΔNDCG|, `DIRECT` takes one `exp` per pair.
    fn add<const LAMBDA: bool, const DIRECT: bool>(&self, g: &mut [f64], h: &mut [f64]) {
        let Pairs {
            group,
            sigma,
            cut,
            s,
            e,
            pos,
            disc,
        } = *self;
        let (gain, weight) = (&group.gain, &group.weight);
        // One division per group rather than per pair.
        let inv_norm = 1.0 / group.ideal;
        let n = s.len();
        let sigma2 = sigma * sigma;
        for i in 0..n {
            let start = group.below[i];
            if start >= n {
                break;
            }
            // With a truncation, a pair counts if either row is above it.
            let i_below_cut = pos[i] >= cut;
            let (mut gi, mut hi) = (0.0, 0.0);
            for j in start..n {
                let mut w = (weight[i] + weight[j]) / 2.0;
                if LAMBDA {
                    if i_below_cut && pos[j] >= cut {
                        continue;
                    }
                    w *= (gain[i] - gain[j]).abs() * (disc[i] - disc[j]).abs() * inv_norm;
                }
                // ρ = 1/(1 + exp(σ (s_i − s_j))): the chance the pair is
                // ranked the wrong way; q = 1 − ρ.
                let (rho, q) = if DIRECT {
                    let rho = 1.0 / (1.0 + (sigma * (s[i] - s[j])).exp());
                    (rho, 1.0 - rho)
                } else {
                    let inv = 1.0 / (e[i] + e[j]);
                    (e[j] * inv, e[i] * inv)
                };
                let a = sigma * w * rho;
                gi -= a;
                g[j] += a;
                let c = sigma2 * w * rho * q;
                hi += c;
                h[j] += c;
            }
            g[i] += gi;
            h[i] += hi;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `log(1 + exp(x))` without overflow.
    fn softplus(x: f64) -> f64 {
        if x > 0.0 {
            x + (-x).exp().ln_1p()
        } else {
            x.exp().ln_1p()
        }
    }

    /// The loss itself, straight from its definition (every ordered pair,
    /// positions by score, ties by row), with ΔNDCG taken at `at`.
    fn loss(o: Objective, s: &[f64], at: &[f64], rel: &[f64], w: &[f64]) -> f64 {
        let n = s.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| at[b].total_cmp(&at[a]).then(a.cmp(&b)));
        let mut pos = vec![0; n];
        for (p, &i) in order.iter().enumerate() {
            pos[i] = p;
        }
        let mut best: Vec<f64> = rel.iter().map(|&r| gain(r)).collect();
        best.sort_by(|a, b| b.total_cmp(a));
        let ideal: f64 = best.iter().enumerate().map(|(p, &v)| v * discount(p)).sum();
        let mut l = 0.0;
        for i in 0..n {
            for j in 0..n {
                if rel[i] <= rel[j] {
                    continue;
                }
                let mut pw = (w[i] + w[j]) / 2.0;
                if o == Objective::LambdaRank {
                    pw *= (gain(rel[i]) - gain(rel[j])).abs()
                        * (discount(pos[i]) - discount(pos[j])).abs()
                        / ideal;
                }
                l += pw * softplus(-1.3 * (s[i] - s[j]));
            }
        }
        l
    }

    /// [`Group::gradients`] in the rows' own order.
    fn grads(
        o: Objective,
        cut: Option<usize>,
        s: &[f64],
        rel: &[f64],
        w: &[f64],
    ) -> (Vec<f64>, Vec<f64>) {
        let rows: Vec<usize> = (0..s.len()).collect();
        let group = Group::new(&rows, rel, w);
        let (gs, hs) = group.gradients(o, 1.3, cut, s);
        let (mut g, mut h) = (vec![0.0; s.len()], vec![0.0; s.len()]);
        for (k, &r) in group.rows.iter().enumerate() {
            g[r] = gs[k];
            h[r] = hs[k];
        }
        (g, h)
    }

    /// The gradient and the diagonal hessian are the loss's: central
    /// finite differences, at scores far enough apart that a step does
    /// not reorder them (LambdaRank's ΔNDCG stays put). Also with one
    /// score far from the rest, where the logistic is taken per pair.
    #[test]
    fn gradients_and_hessians_match_finite_differences() {
        let rel = [1.0, 3.0, 0.0, 2.5, 2.5, 0.7];
        let w = [1.0, 2.0, 0.5, 1.0, 3.0, 1.0];
        let near = [0.3, -1.2, 2.0, 0.9, -0.4, 1.5];
        let far = [0.3, -1.2, 2.0, 0.9, -0.4, 1500.0];
        for (s, tol) in [(near, 1e-7), (far, 1e-6)] {
            for o in [Objective::LambdaRank, Objective::Pairwise] {
                let (g, h) = grads(o, None, &s, &rel, &w);
                let l0 = loss(o, &s, &s, &rel, &w);
                assert!(l0 > 0.0);
                let eps = 1e-5;
                for i in 0..6 {
                    let at = |e: f64| {
                        let mut t = s;
                        t[i] += e;
                        t
                    };
                    let fd = (loss(o, &at(eps), &s, &rel, &w) - loss(o, &at(-eps), &s, &rel, &w))
                        / (2.0 * eps);
                    assert!((fd - g[i]).abs() < tol, "{o:?} g[{i}]: {fd} vs {}", g[i]);
                    // The hessian: the gradient's own finite difference.
                    let fd2 = (grads(o, None, &at(eps), &rel, &w).0[i]
                        - grads(o, None, &at(-eps), &rel, &w).0[i])
                        / (2.0 * eps);
                    assert!((fd2 - h[i]).abs() < tol, "{o:?} h[{i}]: {fd2} vs {}", h[i]);
                }
                // A constant shift of every score changes nothing.
                let shifted: Vec<f64> = s.iter().map(|v| v + 5.0).collect();
                let (gs, _) = grads(o, None, &shifted, &rel, &w);
                assert!(g.iter().zip(&gs).all(|(a, b)| (a - b).abs() < 1e-9));
            }
        }
    }

    /// LambdaRank weighs a pair at the top more than the same pair lower
    /// down; equal relevance makes no pair; truncation drops the pairs
    /// below the cut.
    #[test]
    fn lambda_weighs_the_top() {
        let rel = [3.0, 2.0, 1.0, 0.0];
        let w = [1.0; 4];
        // Rows 0 and 1 swapped at the top, or rows 2 and 3 at the bottom.
        let top = [1.0, 2.0, 0.0, -1.0];
        let bottom = [2.0, 1.0, -1.0, 0.0];
        let g = |s: &[f64], cut| grads(Objective::LambdaRank, cut, s, &rel, &w).0;
        assert!(g(&top, None)[0].abs() > g(&bottom, None)[2].abs());
        for o in [Objective::LambdaRank, Objective::Pairwise] {
            assert_eq!(
                grads(o, None, &top, &[1.0; 4], &w),
                (vec![0.0; 4], vec![0.0; 4])
            );
        }
        // A cut at 1 keeps the pairs of the top-ranked row (row 1) only:
        // row 3 keeps its pair with row 1, loses those with rows 0 and 2.
        let (all, cut) = (g(&top, None), g(&top, Some(1)));
        assert!(
            cut[3] != 0.0 && cut[3].abs() < all[3].abs(),
            "{cut:?} {all:?}"
        );
        assert_eq!(g(&top, Some(0)), vec![0.0; 4]);
        assert_eq!(g(&top, Some(4)), all);
    }

    /// The pairs are the rows after each one's block of equal relevance.
    #[test]
    fn a_group_sorts_its_rows_by_relevance() {
        let rows = [4, 7, 9, 12, 20];
        let weight = vec![1.0; 21];
        let group = Group::new(&rows, &[1.0, 2.0, 1.0, 0.0, 2.0], &weight);
        assert_eq!(group.rows, vec![7, 20, 4, 9, 12]);
        assert_eq!(group.below, vec![2, 2, 4, 4, 5]);
    }
}
