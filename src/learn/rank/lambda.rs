//! The ranking losses' gradients and hessians over one group (one
//! kernel's variants).
//!
//! Pairwise (RankNet): every pair of rows with different relevance adds
//! `w · log(1 + exp(−σ (s_i − s_j)))`, `i` the more relevant, `w` the
//! mean of the two rows' weights. LambdaRank (LambdaMART once boosted)
//! multiplies each pair's term by `|ΔNDCG_ij|`, how much NDCG would change
//! were the two rows swapped in the current ranking: pairs at the top
//! weigh most. `ΔNDCG` is held constant in the derivatives (Burges 2010,
//! "From RankNet to LambdaRank to LambdaMART"); so is it in
//! [`group`]'s loss, which is then exactly the function whose gradient
//! and diagonal hessian are returned.

use super::Objective;
use super::metrics::{discount, gain};

/// `log(1 + exp(x))` without overflow.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// One group's ranking loss at `scores`, adding each row's gradient and
/// hessian to `g` and `h` (all slices of the group's length). `rel`:
/// the rows' relevance ([`super::metrics::relevance`]); `weight`: the
/// rows' weights; `sigma`: the logistic's steepness; `truncation`: with
/// LambdaRank, only the pairs one of whose rows is ranked above this
/// position count.
#[allow(clippy::too_many_arguments)]
pub(super) fn group(
    objective: Objective,
    sigma: f64,
    truncation: Option<usize>,
    scores: &[f64],
    rel: &[f64],
    weight: &[f64],
    g: &mut [f64],
    h: &mut [f64],
) -> f64 {
    let n = scores.len();
    let lambda = objective == Objective::LambdaRank;
    // Positions in the current ranking (ties by row) and the ideal DCG.
    let mut pos = vec![0usize; n];
    let mut norm = 1.0;
    if lambda {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        for (p, &i) in order.iter().enumerate() {
            pos[i] = p;
        }
        let mut best: Vec<f64> = rel.iter().map(|&r| gain(r)).collect();
        best.sort_by(|a, b| b.total_cmp(a));
        let ideal: f64 = best.iter().enumerate().map(|(p, &v)| v * discount(p)).sum();
        if ideal <= 0.0 {
            return 0.0;
        }
        norm = ideal;
    }
    // Per row, once: its gain and the discount of its position.
    let gains: Vec<f64> = rel.iter().map(|&r| gain(r)).collect();
    let disc: Vec<f64> = pos.iter().map(|&p| discount(p)).collect();
    let cut = truncation.unwrap_or(usize::MAX);
    let mut loss = 0.0;
    for i in 0..n {
        for j in 0..n {
            if rel[i] <= rel[j] {
                continue;
            }
            let mut w = (weight[i] + weight[j]) / 2.0;
            if lambda {
                if pos[i].min(pos[j]) >= cut {
                    continue;
                }
                w *= (gains[i] - gains[j]).abs() * (disc[i] - disc[j]).abs() / norm;
            }
            if w == 0.0 {
                continue;
            }
            let d = sigma * (scores[i] - scores[j]);
            loss += w * softplus(-d);
            // ρ = 1/(1 + exp(σ (s_i − s_j))): the chance the pair is
            // ranked the wrong way.
            let rho = 1.0 / (1.0 + d.exp());
            g[i] -= sigma * w * rho;
            g[j] += sigma * w * rho;
            let c = sigma * sigma * w * rho * (1.0 - rho);
            h[i] += c;
            h[j] += c;
        }
    }
    loss
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loss(o: Objective, s: &[f64], rel: &[f64], w: &[f64]) -> f64 {
        let n = s.len();
        group(
            o,
            1.3,
            None,
            s,
            rel,
            w,
            &mut vec![0.0; n],
            &mut vec![0.0; n],
        )
    }

    /// The gradient and the diagonal hessian are the loss's: central
    /// finite differences, at scores far enough apart that a step does
    /// not reorder them (LambdaRank's ΔNDCG stays put).
    #[test]
    fn gradients_and_hessians_match_finite_differences() {
        let s = [0.3, -1.2, 2.0, 0.9, -0.4, 1.5];
        let rel = [1.0, 3.0, 0.0, 2.5, 2.5, 0.7];
        let w = [1.0, 2.0, 0.5, 1.0, 3.0, 1.0];
        for o in [Objective::LambdaRank, Objective::Pairwise] {
            let (mut g, mut h) = (vec![0.0; 6], vec![0.0; 6]);
            let l0 = group(o, 1.3, None, &s, &rel, &w, &mut g, &mut h);
            assert!(l0 > 0.0);
            let eps = 1e-5;
            for i in 0..6 {
                let at = |e: f64| {
                    let mut t = s;
                    t[i] += e;
                    t
                };
                let fd = (loss(o, &at(eps), &rel, &w) - loss(o, &at(-eps), &rel, &w)) / (2.0 * eps);
                assert!((fd - g[i]).abs() < 1e-7, "{o:?} g[{i}]: {fd} vs {}", g[i]);
                // The hessian: the gradient's own finite difference.
                let grad = |t: [f64; 6]| {
                    let (mut g, mut h) = (vec![0.0; 6], vec![0.0; 6]);
                    group(o, 1.3, None, &t, &rel, &w, &mut g, &mut h);
                    g[i]
                };
                let fd2 = (grad(at(eps)) - grad(at(-eps))) / (2.0 * eps);
                assert!((fd2 - h[i]).abs() < 1e-7, "{o:?} h[{i}]: {fd2} vs {}", h[i]);
            }
            // A constant shift of every score changes nothing.
            let shifted: Vec<f64> = s.iter().map(|v| v + 5.0).collect();
            assert!((loss(o, &shifted, &rel, &w) - l0).abs() < 1e-12);
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
        let grads = |s: &[f64], cut| {
            let (mut g, mut h) = (vec![0.0; 4], vec![0.0; 4]);
            group(Objective::LambdaRank, 1.0, cut, s, &rel, &w, &mut g, &mut h);
            g
        };
        assert!(grads(&top, None)[0].abs() > grads(&bottom, None)[2].abs());
        assert_eq!(loss(Objective::LambdaRank, &top, &[1.0; 4], &w), 0.0);
        assert_eq!(loss(Objective::Pairwise, &top, &[1.0; 4], &w), 0.0);
        // A cut at 1 keeps the pairs of the top-ranked row (row 1) only:
        // row 3 keeps its pair with row 1, loses those with rows 0 and 2.
        let (all, cut) = (grads(&top, None), grads(&top, Some(1)));
        assert!(
            cut[3] != 0.0 && cut[3].abs() < all[3].abs(),
            "{cut:?} {all:?}"
        );
        assert_eq!(grads(&top, Some(0)), vec![0.0; 4]);
        assert_eq!(grads(&top, Some(4)), all);
    }
}
