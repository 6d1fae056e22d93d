//! How well scores rank one group's rows (one kernel's variants):
//! Spearman's rank correlation, NDCG@k with graded relevance from the
//! labels, and the top-1 share of the group's optimum.
//!
//! Where scores tie, NDCG and the top-1 share count the tied rows worst
//! label first: a model that cannot tell variants apart earns nothing
//! from the order they happen to be in.

/// Ranks from 1, ties given their average rank.
fn ranks(x: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut r = vec![0.0; x.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && x[order[j + 1]] == x[order[i]] {
            j += 1;
        }
        let mean = (i + j) as f64 / 2.0 + 1.0;
        for &o in &order[i..=j] {
            r[o] = mean;
        }
        i = j + 1;
    }
    r
}

/// Spearman's rank correlation of two series of one length (Pearson's
/// of their ranks); `None` below three points or when either is
/// constant.
pub fn rank_correlation(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 3 {
        return None;
    }
    let (ra, rb) = (ranks(a), ranks(b));
    let n = ra.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in ra.iter().zip(&rb) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    (saa > 0.0 && sbb > 0.0).then(|| sab / (saa * sbb).sqrt())
}

/// Graded relevance of one group's labels: each label's place between
/// the group's least (0) and greatest (`levels`), linearly. With log
/// speedups as labels, equal ratios of speed are equal steps of
/// relevance. All 0 when the labels are all equal.
pub(crate) fn relevance(label: &[f64], levels: f64) -> Vec<f64> {
    let lo = label.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = label.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    label
        .iter()
        .map(|&l| {
            if hi > lo {
                levels * (l - lo) / (hi - lo)
            } else {
                0.0
            }
        })
        .collect()
}

/// The gain of a relevance in DCG: `2^rel − 1`.
pub(super) fn gain(rel: f64) -> f64 {
    rel.exp2() - 1.0
}

/// The discount of position `p` (from 0) in DCG: `1/log2(p + 2)`.
pub(super) fn discount(p: usize) -> f64 {
    1.0 / ((p + 2) as f64).log2()
}

/// Row indices from the highest score down; tied scores worst label
/// first (then by row).
fn ranked(scores: &[f64], label: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| {
        scores[b]
            .total_cmp(&scores[a])
            .then(label[a].total_cmp(&label[b]))
            .then(a.cmp(&b))
    });
    order
}

/// NDCG@k of the ranking `scores` make of one group whose labels are
/// `label`, relevance as [`relevance`] grades it with `levels`: the DCG
/// of the top `k` over the best possible. `None` when the group is
/// empty, the lengths differ or every label is the same.
pub fn ndcg_at(scores: &[f64], label: &[f64], k: usize, levels: f64) -> Option<f64> {
    if scores.is_empty() || scores.len() != label.len() {
        return None;
    }
    let rel = relevance(label, levels);
    let dcg: f64 = ranked(scores, label)
        .iter()
        .take(k)
        .enumerate()
        .map(|(p, &i)| gain(rel[i]) * discount(p))
        .sum();
    let mut ideal: Vec<f64> = rel.iter().map(|&r| gain(r)).collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let best: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(p, &v)| v * discount(p))
        .sum();
    (best > 0.0).then(|| dcg / best)
}

/// The top-1 share of the group's optimum: the speedup of the
/// highest-scored row over the best speedup in the group, the labels
/// being log speedups (1: the model's first pick is the optimum).
/// `None` when the group is empty or the lengths differ.
pub(crate) fn top1_share(scores: &[f64], log_speedup: &[f64]) -> Option<f64> {
    if scores.is_empty() || scores.len() != log_speedup.len() {
        return None;
    }
    let top = ranked(scores, log_speedup)[0];
    let best = log_speedup
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    Some((log_speedup[top] - best).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_correlation_is_spearmans() {
        let up = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(rank_correlation(&up, &[10.0, 20.0, 30.0, 400.0]), Some(1.0));
        assert_eq!(rank_correlation(&up, &[4.0, 3.0, 2.0, 1.0]), Some(-1.0));
        // Ties share their mean rank: ranks 1, 2.5, 2.5, 4 against 1..4.
        let r = rank_correlation(&up, &[1.0, 5.0, 5.0, 9.0]).unwrap();
        assert!((r - 4.5 / (5.0f64 * 4.5).sqrt()).abs() < 1e-12, "{r}");
        assert_eq!(rank_correlation(&up, &[2.0; 4]), None);
        assert_eq!(rank_correlation(&up[..2], &up[..2]), None);
    }

    #[test]
    fn ndcg_by_hand() {
        let label = [0.0, 1.0, 2.0];
        // Relevance 0, 1, 2 (levels 2): gains 0, 1, 3.
        assert_eq!(relevance(&label, 2.0), vec![0.0, 1.0, 2.0]);
        assert_eq!(ndcg_at(&[0.0, 1.0, 2.0], &label, 3, 2.0), Some(1.0));
        // Ranked 0, 2, 1: DCG = 0 + 3/log2(3) + 1/2; ideal = 3 + 1/log2(3).
        let want = (3.0 / 3f64.log2() + 0.5) / (3.0 + 1.0 / 3f64.log2());
        let got = ndcg_at(&[2.0, 0.0, 1.0], &label, 3, 2.0).unwrap();
        assert!((got - want).abs() < 1e-12, "{got} {want}");
        // @1: the first pick's gain over the best's.
        assert_eq!(ndcg_at(&[0.0, 2.0, 1.0], &label, 1, 2.0), Some(1.0 / 3.0));
        // Constant scores earn the worst order.
        let flat = ndcg_at(&[5.0; 3], &label, 1, 2.0).unwrap();
        assert_eq!(flat, 0.0);
        assert_eq!(ndcg_at(&[1.0, 2.0], &[3.0, 3.0], 2, 2.0), None);
        assert_eq!(ndcg_at(&[], &[], 2, 2.0), None);
    }

    #[test]
    fn top1_share_is_the_first_picks_speedup_over_the_best() {
        let log: Vec<f64> = [1.0f64, 2.0, 4.0].iter().map(|s| s.ln()).collect();
        assert!((top1_share(&[0.0, 1.0, 0.5], &log).unwrap() - 0.5).abs() < 1e-12);
        assert!((top1_share(&[0.0, 1.0, 2.0], &log).unwrap() - 1.0).abs() < 1e-12);
        // A tie at the top counts its worst row.
        assert!((top1_share(&[3.0, 0.0, 3.0], &log).unwrap() - 0.25).abs() < 1e-12);
        assert_eq!(top1_share(&[], &[]), None);
    }
}
