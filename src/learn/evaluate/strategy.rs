//! Selection strategies: how the models' predictions become the
//! candidates a selection measures (one model's ranking, several models'
//! rankings taken in turn, their consensus or ensemble, and candidates
//! kept apart in the space).

use crate::config::Config;

/// Indices of `rows` ordered by predicted speedup, best first (ties keep
/// the dataset order, so the ranking is deterministic).
pub(crate) fn ranking(rows: &[usize], predicted: &[f64]) -> Vec<usize> {
    let mut r = rows.to_vec();
    r.sort_by(|&a, &b| predicted[b].total_cmp(&predicted[a]).then(a.cmp(&b)));
    r
}

/// Multi-model candidates: every model's best guess, then every model's
/// second, … until `n` distinct variants (what the learned `optimize`
/// runs); each with the (model index, depth) pairs that chose it.
pub(crate) fn round_robin(rankings: &[Vec<usize>], n: usize) -> Vec<(usize, Vec<(usize, usize)>)> {
    let mut out: Vec<(usize, Vec<(usize, usize)>)> = Vec::new();
    let longest = rankings.iter().map(Vec::len).max().unwrap_or(0);
    for depth in 0..longest {
        for (m, r) in rankings.iter().enumerate() {
            let Some(&v) = r.get(depth) else { continue };
            if let Some(c) = out.iter_mut().find(|c| c.0 == v) {
                c.1.push((m, depth));
            } else if out.len() < n {
                out.push((v, vec![(m, depth)]));
            }
        }
        if out.len() >= n {
            break;
        }
    }
    out
}

/// The row the models rank best together: the least sum of ranks over
/// the models (ties to the earlier row). What `optimize --no-run` picks
/// with multi-model.
pub(crate) fn consensus(predicted: &[Vec<f64>], rows: &[usize]) -> Option<usize> {
    let mut total = vec![0usize; rows.len()];
    let at: std::collections::HashMap<usize, usize> =
        rows.iter().enumerate().map(|(j, &i)| (i, j)).collect();
    for p in predicted {
        for (rank, i) in ranking(rows, p).into_iter().enumerate() {
            total[at[&i]] += rank;
        }
    }
    (0..rows.len())
        .min_by_key(|&j| (total[j], rows[j]))
        .map(|j| rows[j])
}

/// Below this a predicted speedup is treated as this (linear models can
/// predict zero or less; a log must not blow up).
pub(crate) const FLOOR: f64 = 1e-3;

/// The six models as one: the mean of their log predicted speedups, per
/// variant. A log mean lets no single model's scale dominate.
pub(crate) fn ensemble(predicted: &[Vec<f64>], rows: &[usize]) -> Vec<f64> {
    rows.iter()
        .map(|&i| {
            predicted.iter().map(|p| p[i].max(FLOOR).ln()).sum::<f64>()
                / predicted.len().max(1) as f64
        })
        .collect()
}

/// Bits in which two configurations differ, plus the typed attributes
/// beyond the bits in which they differ (none in the paper's space: there
/// it is the bits' Hamming distance).
fn distance(a: &Config, b: &Config) -> usize {
    let bits = {
        let (a, b) = (a.bits(), b.bits());
        a.bytes().zip(b.bytes()).filter(|(x, y)| x != y).count()
    };
    let beyond = a
        .extended_attributes()
        .iter()
        .zip(b.extended_attributes())
        .filter(|(x, y)| **x != *y)
        .count();
    bits + beyond
}

/// How many bits apart the diversified candidates must be.
pub(crate) const DIVERSE_BITS: usize = 3;

/// Diversified candidates: the ensemble's best variant, then the next
/// best that differs from every one taken in at least `bits` bits of its
/// configuration, … until `n`; if the space runs out of such variants the
/// rest are filled in ensemble order. Near neighbours of a good guess tend
/// to be good or bad together, so spending the runs on distinct regions
/// of the space recovers more of Opt than the models' top-N do. Returns
/// positions into `score` / `configs`.
pub(crate) fn diverse(score: &[f64], configs: &[Config], n: usize, bits: usize) -> Vec<usize> {
    let all: Vec<usize> = (0..score.len()).collect();
    let order = ranking(&all, score);
    let mut out: Vec<usize> = Vec::new();
    for &v in &order {
        if out.len() >= n {
            break;
        }
        if out
            .iter()
            .all(|&w| distance(&configs[v], &configs[w]) >= bits)
        {
            out.push(v);
        }
    }
    for &v in &order {
        if out.len() >= n {
            break;
        }
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_fills_with_deeper_guesses_when_models_agree() {
        let r = vec![vec![5, 1, 2], vec![5, 2, 1]];
        let c = round_robin(&r, 3);
        assert_eq!(c.iter().map(|x| x.0).collect::<Vec<_>>(), vec![5, 1, 2]);
        assert_eq!(c[0].1, vec![(0, 0), (1, 0)]);
        assert_eq!(round_robin(&r, 10).len(), 3);
    }

    #[test]
    fn diversified_candidates_skip_near_neighbours_then_fill_in() {
        let score = [3.0, 2.0, 1.0, 0.0];
        // Bits 2 to 5 (tiles, wavefront), as 0000, 0001, 0011 and 1111.
        let configs = [
            "000000000000",
            "000001000000",
            "000011000000",
            "001111000000",
        ]
        .map(|b| Config::from_bits(b).unwrap());
        assert_eq!(diverse(&score, &configs, 2, 2), vec![0, 2]);
        assert_eq!(diverse(&score, &configs, 3, 2), vec![0, 2, 3]);
        // Only 3 is 3 bits from 0; 1 fills the last place.
        assert_eq!(diverse(&score, &configs, 3, 3), vec![0, 3, 1]);
        assert_eq!(diverse(&score, &configs, 9, 0), vec![0, 1, 2, 3]);
        // The ensemble ignores a model's non-positive predictions' size.
        let e = ensemble(&[vec![2.0, -5.0], vec![2.0, 0.0]], &[0, 1]);
        assert!((e[0] - 2f64.ln()).abs() < 1e-12 && e[1] == FLOOR.ln());
    }

    #[test]
    fn configurations_beyond_the_paper_are_apart_in_their_typed_attributes() {
        let c = |t: &str| t.parse::<Config>().unwrap();
        // Same bits: 64 and 32 are both "tiled".
        let (a, b) = (c("tile=64x32x1,omp=1"), c("tile=32x32x1,omp=1"));
        assert_eq!(a.bits(), b.bits());
        assert_eq!(distance(&a, &b), 1);
        assert_eq!(distance(&a, &c("tile=32x32x1,omp=1,red=1,rb=4x8")), 4);
        let score = [3.0, 2.0, 1.0];
        assert_eq!(diverse(&score, &[a, b, c("omp=1")], 2, 2), vec![0, 2]);
    }

    #[test]
    fn ranking_is_deterministic_on_ties() {
        assert_eq!(
            ranking(&[4, 2, 7], &[0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.5]),
            vec![2, 4, 7]
        );
    }
}
