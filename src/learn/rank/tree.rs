//! Second-order regression trees on binned attributes, the weak learner
//! of the boosting in [`super::Ranker`]: each tree fits the loss's
//! gradients and hessians (Newton steps, as XGBoost and LightGBM do), its
//! splits found on per-node histograms over at most 256 bins per
//! attribute, grown depth-first to a depth limit.
//!
//! Unlike [`crate::learn::m5p`], whose splits reduce the variance of a
//! target and whose leaves carry linear models, a split here maximizes
//! the gain `G_L²/(H_L+λ) + G_R²/(H_R+λ) − G²/(H+λ)` and a leaf holds one
//! value, `−G/(H+λ)`: what a loss other than the squared error needs.

use serde::{Deserialize, Serialize};

/// Attribute values turned into bin codes once, before boosting: bin `b`
/// of attribute `a` holds the values `v` with `edges[a][b-1] < v <=
/// edges[a][b]`.
pub(super) struct Bins {
    /// Per attribute, the ascending thresholds between its bins (at most
    /// 255).
    pub edges: Vec<Vec<f64>>,
    /// Per attribute, each row's bin.
    pub codes: Vec<Vec<u8>>,
}

impl Bins {
    /// Bins every attribute of `x` (rows of one length, finite values)
    /// into at most `max_bins` (2 to 256) bins of about equal counts; an
    /// attribute with at most that many distinct values gets one bin
    /// per value.
    pub fn new(x: &[Vec<f64>], max_bins: usize) -> Bins {
        let max_bins = max_bins.clamp(2, 256);
        let d = x.first().map_or(0, Vec::len);
        let mut edges = Vec::with_capacity(d);
        let mut codes = Vec::with_capacity(d);
        for a in 0..d {
            let mut col: Vec<f64> = x.iter().map(|r| r[a]).collect();
            col.sort_by(f64::total_cmp);
            let e = edges_of(&col, max_bins);
            codes.push(
                x.iter()
                    .map(|r| e.partition_point(|&t| t < r[a]) as u8)
                    .collect(),
            );
            edges.push(e);
        }
        Bins { edges, codes }
    }
}

/// Thresholds cutting the sorted values `v` into at most `bins` bins of
/// about equal counts, each a midpoint between two distinct values.
fn edges_of(v: &[f64], bins: usize) -> Vec<f64> {
    let n = v.len();
    let mut e: Vec<f64> = Vec::new();
    for k in 1..bins {
        // The first value above the one at this quantile starts a bin.
        let i = (k * n / bins).max(1);
        if i >= n {
            break;
        }
        let j = i + v[i..].partition_point(|&x| x <= v[i - 1]);
        if j >= n {
            continue;
        }
        let t = v[j - 1] + (v[j] - v[j - 1]) / 2.0;
        if e.last().is_none_or(|&l| t > l) {
            e.push(t);
        }
    }
    e
}

/// One node of a tree, stored flat (root first, children by index).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(super) enum Node {
    Leaf(f64),
    /// Rows with `row[attr] <= threshold` go left.
    Split {
        attr: usize,
        threshold: f64,
        left: usize,
        right: usize,
    },
}

/// A regression tree over raw attribute values.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(super) struct Tree {
    pub nodes: Vec<Node>,
}

impl Tree {
    pub fn eval(&self, row: &[f64]) -> f64 {
        let mut i = 0;
        loop {
            match self.nodes[i] {
                Node::Leaf(v) => return v,
                Node::Split {
                    attr,
                    threshold,
                    left,
                    right,
                } => i = if row[attr] <= threshold { left } else { right },
            }
        }
    }
}

/// How a tree is grown.
pub(super) struct Growth {
    pub depth: usize,
    /// Fewest rows in a leaf.
    pub min_leaf: usize,
    /// Least sum of hessians in a leaf.
    pub min_child_weight: f64,
    /// L2 regularization of the leaf values (λ).
    pub l2: f64,
    /// Least gain for a split.
    pub min_gain: f64,
    /// Every leaf value is multiplied by this.
    pub shrinkage: f64,
}

/// Per bin: sums of gradients and hessians, and the row count.
type Hist = Vec<(f64, f64, u32)>;

/// The best split of a node.
struct Best {
    gain: f64,
    attr: usize,
    bin: usize,
}

/// Grows one tree on the rows `rows` with gradients `g` and hessians `h`
/// (indexed by row), splitting on the attributes `attrs` only.
pub(super) fn grow(
    bins: &Bins,
    g: &[f64],
    h: &[f64],
    rows: Vec<usize>,
    attrs: &[usize],
    p: &Growth,
) -> Tree {
    let mut t = Tree { nodes: Vec::new() };
    let mut hist: Hist = vec![(0.0, 0.0, 0); 256];
    node(bins, g, h, rows, attrs, p, 0, &mut t, &mut hist);
    t
}

/// Appends the subtree of `rows` at `level` to `t`; returns its index.
#[allow(clippy::too_many_arguments)]
fn node(
    bins: &Bins,
    g: &[f64],
    h: &[f64],
    rows: Vec<usize>,
    attrs: &[usize],
    p: &Growth,
    level: usize,
    t: &mut Tree,
    hist: &mut Hist,
) -> usize {
    let (sg, sh) = rows
        .iter()
        .fold((0.0, 0.0), |(a, b), &i| (a + g[i], b + h[i]));
    let me = t.nodes.len();
    // No curvature (no pair in the node's rows): no step.
    let value = if sh + p.l2 > 0.0 {
        -p.shrinkage * sg / (sh + p.l2)
    } else {
        0.0
    };
    t.nodes.push(Node::Leaf(value));
    if level >= p.depth || rows.len() < 2 * p.min_leaf.max(1) {
        return me;
    }
    let Some(best) = best_split(bins, g, h, &rows, attrs, p, (sg, sh), hist) else {
        return me;
    };
    let codes = &bins.codes[best.attr];
    let (l, r): (Vec<usize>, Vec<usize>) =
        rows.iter().partition(|&&i| codes[i] as usize <= best.bin);
    drop(rows);
    let left = node(bins, g, h, l, attrs, p, level + 1, t, hist);
    let right = node(bins, g, h, r, attrs, p, level + 1, t, hist);
    t.nodes[me] = Node::Split {
        attr: best.attr,
        threshold: bins.edges[best.attr][best.bin],
        left,
        right,
    };
    me
}

/// The split of `rows` with the most gain above [`Growth::min_gain`]
/// that keeps both sides within the leaf limits; ties go to the lower
/// attribute and bin, so growth is deterministic.
#[allow(clippy::too_many_arguments)]
fn best_split(
    bins: &Bins,
    g: &[f64],
    h: &[f64],
    rows: &[usize],
    attrs: &[usize],
    p: &Growth,
    (sg, sh): (f64, f64),
    hist: &mut Hist,
) -> Option<Best> {
    let score = |g: f64, h: f64| g * g / (h + p.l2);
    let parent = score(sg, sh);
    let n = rows.len() as u32;
    let min_leaf = p.min_leaf.max(1) as u32;
    let mut best: Option<Best> = None;
    for &a in attrs {
        let nb = bins.edges[a].len() + 1;
        if nb < 2 {
            continue;
        }
        hist[..nb].fill((0.0, 0.0, 0));
        let codes = &bins.codes[a];
        for &i in rows {
            let b = &mut hist[codes[i] as usize];
            b.0 += g[i];
            b.1 += h[i];
            b.2 += 1;
        }
        let (mut gl, mut hl, mut nl) = (0.0, 0.0, 0u32);
        for (b, &(bg, bh, bn)) in hist[..nb - 1].iter().enumerate() {
            gl += bg;
            hl += bh;
            nl += bn;
            if bn == 0 || nl < min_leaf {
                continue;
            }
            if n - nl < min_leaf {
                break;
            }
            let (gr, hr) = (sg - gl, sh - hl);
            if hl < p.min_child_weight || hr < p.min_child_weight {
                continue;
            }
            let gain = score(gl, hl) + score(gr, hr) - parent;
            if gain > p.min_gain && best.as_ref().is_none_or(|x| gain > x.gain) {
                best = Some(Best {
                    gain,
                    attr: a,
                    bin: b,
                });
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_keep_order_and_cut_between_distinct_values() {
        let v: Vec<f64> = vec![1.0, 1.0, 1.0, 2.0, 3.0, 3.0, 4.0, 5.0];
        // Few distinct values: one bin each.
        assert_eq!(edges_of(&v, 256), vec![1.5, 2.5, 3.5, 4.5]);
        // Two bins: the cut at the median falls between distinct values.
        assert_eq!(edges_of(&v, 2), vec![2.5]);
        assert!(edges_of(&[7.0; 5], 8).is_empty());
        let x: Vec<Vec<f64>> = (0..1000)
            .map(|i| vec![((i * 7919) % 1000) as f64])
            .collect();
        let b = Bins::new(&x, 16);
        assert!(
            b.edges[0].len() <= 15 && b.edges[0].len() >= 14,
            "{:?}",
            b.edges[0]
        );
        for (r, &c) in x.iter().zip(&b.codes[0]) {
            let c = c as usize;
            assert!(c == 0 || r[0] > b.edges[0][c - 1]);
            assert!(c == b.edges[0].len() || r[0] <= b.edges[0][c]);
        }
    }

    /// On the squared error (g = prediction − y, h = 1, from 0) a stump
    /// finds the step of a step function and its two levels.
    #[test]
    fn a_stump_finds_a_step() {
        let x: Vec<Vec<f64>> = (0..100)
            .map(|i| vec![i as f64, ((i * 37) % 100) as f64])
            .collect();
        let y: Vec<f64> = x
            .iter()
            .map(|r| if r[0] < 30.0 { 1.0 } else { 3.0 })
            .collect();
        let g: Vec<f64> = y.iter().map(|v| -v).collect();
        let h = vec![1.0; 100];
        let p = Growth {
            depth: 1,
            min_leaf: 1,
            min_child_weight: 0.0,
            l2: 0.0,
            min_gain: 0.0,
            shrinkage: 1.0,
        };
        let t = grow(&Bins::new(&x, 256), &g, &h, (0..100).collect(), &[0, 1], &p);
        assert_eq!(t.nodes.len(), 3);
        assert!(matches!(t.nodes[0], Node::Split { attr: 0, threshold, .. } if threshold == 29.5));
        assert_eq!(t.eval(&[10.0, 0.0]), 1.0);
        assert_eq!(t.eval(&[50.0, 0.0]), 3.0);
        // A leaf of fewer rows than the limit is not made.
        let p = Growth { min_leaf: 40, ..p };
        let t = grow(&Bins::new(&x, 256), &g, &h, (0..100).collect(), &[0], &p);
        assert!(matches!(t.nodes[0], Node::Split { threshold, .. } if threshold == 39.5));
    }
}
