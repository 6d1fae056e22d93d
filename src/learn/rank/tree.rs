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

use rayon::prelude::*;
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
    pub(crate) fn new(x: &[Vec<f64>], max_bins: usize) -> Bins {
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
    /// Multiplies every leaf's value by `by` (a chain's share of a bag).
    pub(crate) fn scale(&mut self, by: f64) {
        for n in &mut self.nodes {
            if let Node::Leaf(v) = n {
                *v *= by;
            }
        }
    }

    pub(crate) fn eval(&self, row: &[f64]) -> f64 {
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
#[derive(Debug, Clone, Copy, Default)]
struct Bin {
    g: f64,
    h: f64,
    n: u32,
}

/// Slots per attribute in a histogram (the most bins of one).
const SLOT: usize = 256;

/// Below this many (row, attribute) cells a histogram is built on one
/// thread.
const PARALLEL_CELLS: usize = 1 << 16;

/// The best split of a node.
struct Best {
    attr: usize,
    bin: usize,
}

/// Grows one tree on the rows `rows` with gradients `g` and hessians `h`
/// (indexed by row), splitting on the attributes `attrs` only; sets
/// `step[i]` of each row `i` of `rows` to its leaf's value (what
/// [`Tree::eval`] gives the row).
pub(super) fn grow(
    bins: &Bins,
    g: &[f64],
    h: &[f64],
    mut rows: Vec<usize>,
    attrs: &[usize],
    p: &Growth,
    step: &mut [f64],
) -> Tree {
    let mut t = Tree { nodes: Vec::new() };
    let mut b = Builder {
        bins,
        g,
        h,
        attrs,
        p,
        step,
        spare: Vec::new(),
        right: Vec::with_capacity(rows.len()),
        gh: Vec::with_capacity(rows.len()),
    };
    let hist = b.splittable(0, rows.len()).then(|| b.build(&rows));
    b.node(&mut rows, 0, hist, &mut t);
    t
}

/// What growing one tree reads, and buffers reused from node to node.
/// A node's histogram (per attribute of `attrs`, a [`SLOT`] of bins) is
/// built from its rows only for the smaller child of a split; the larger
/// child's is its parent's minus the smaller's.
struct Builder<'a> {
    bins: &'a Bins,
    g: &'a [f64],
    h: &'a [f64],
    attrs: &'a [usize],
    p: &'a Growth,
    /// Each row's leaf value.
    step: &'a mut [f64],
    /// Histograms no node holds any more.
    spare: Vec<Vec<Bin>>,
    /// The right side of a partition, for a moment.
    right: Vec<usize>,
    /// The gradients and hessians of a node's rows, in their order.
    gh: Vec<(f64, f64)>,
}

impl Builder<'_> {
    /// Whether a node of `rows` rows at `level` may split.
    fn splittable(&self, level: usize, rows: usize) -> bool {
        level < self.p.depth && rows >= 2 * self.p.min_leaf.max(1)
    }

    /// The histogram of `rows`.
    fn build(&mut self, rows: &[usize]) -> Vec<Bin> {
        let mut hist = self
            .spare
            .pop()
            .unwrap_or_else(|| vec![Bin::default(); self.attrs.len() * SLOT]);
        self.gh.clear();
        self.gh.extend(rows.iter().map(|&i| (self.g[i], self.h[i])));
        let (bins, gh) = (self.bins, &self.gh);
        let one = |(slot, &a): (&mut [Bin], &usize)| {
            let nb = bins.edges[a].len() + 1;
            let slot = &mut slot[..nb];
            slot.fill(Bin::default());
            let codes = &bins.codes[a];
            for (&i, &(g, h)) in rows.iter().zip(gh) {
                let b = &mut slot[codes[i] as usize];
                b.g += g;
                b.h += h;
                b.n += 1;
            }
        };
        if rows.len() * self.attrs.len() < PARALLEL_CELLS {
            hist.chunks_mut(SLOT).zip(self.attrs).for_each(one);
        } else {
            hist.par_chunks_mut(SLOT)
                .zip(self.attrs.par_iter())
                .for_each(one);
        }
        hist
    }

    /// Appends the subtree of `rows` at `level` to `t`, given the rows'
    /// histogram if the node may split; returns its index. Leaves `rows`
    /// partitioned, left child first, each side in its former order.
    fn node(
        &mut self,
        rows: &mut [usize],
        level: usize,
        hist: Option<Vec<Bin>>,
        t: &mut Tree,
    ) -> usize {
        let (g, h, p) = (self.g, self.h, self.p);
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
        let best = hist.and_then(|hist| {
            match best_split(self.bins, &hist, rows.len(), self.attrs, p, (sg, sh)) {
                Some(b) => Some((b, hist)),
                None => {
                    self.spare.push(hist);
                    None
                }
            }
        });
        let Some((best, mut hist)) = best else {
            for &i in rows.iter() {
                self.step[i] = value;
            }
            return me;
        };
        // A stable partition: the left rows moved up in place, the right
        // ones after them.
        let codes = &self.bins.codes[best.attr];
        self.right.clear();
        let mut nl = 0;
        for k in 0..rows.len() {
            let i = rows[k];
            if codes[i] as usize <= best.bin {
                rows[nl] = i;
                nl += 1;
            } else {
                self.right.push(i);
            }
        }
        rows[nl..].copy_from_slice(&self.right);
        let (l, r) = rows.split_at_mut(nl);
        let (split_l, split_r) = (
            self.splittable(level + 1, l.len()),
            self.splittable(level + 1, r.len()),
        );
        let (hl, hr) = if split_l || split_r {
            let small_left = l.len() <= r.len();
            let small = self.build(if small_left { l } else { r });
            // Only the attributes' own bins: a slot's rest is stale.
            let slots = hist.chunks_mut(SLOT).zip(small.chunks(SLOT));
            for ((big, small), &a) in slots.zip(self.attrs) {
                let nb = self.bins.edges[a].len() + 1;
                for (big, small) in big[..nb].iter_mut().zip(&small[..nb]) {
                    big.g -= small.g;
                    big.h -= small.h;
                    big.n -= small.n;
                }
            }
            let (hl, hr) = if small_left {
                (small, hist)
            } else {
                (hist, small)
            };
            let keep = |me: &mut Self, hist: Vec<Bin>, split: bool| {
                if split {
                    Some(hist)
                } else {
                    me.spare.push(hist);
                    None
                }
            };
            (keep(self, hl, split_l), keep(self, hr, split_r))
        } else {
            self.spare.push(hist);
            (None, None)
        };
        let left = self.node(l, level + 1, hl, t);
        let right = self.node(r, level + 1, hr, t);
        t.nodes[me] = Node::Split {
            attr: best.attr,
            threshold: self.bins.edges[best.attr][best.bin],
            left,
            right,
        };
        me
    }
}

/// The split of a node of `n` rows whose histogram is `hist` with the
/// most gain above [`Growth::min_gain`] that keeps both sides within the
/// leaf limits; ties go to the lower attribute and bin, so growth is
/// deterministic.
fn best_split(
    bins: &Bins,
    hist: &[Bin],
    n: usize,
    attrs: &[usize],
    p: &Growth,
    (sg, sh): (f64, f64),
) -> Option<Best> {
    let score = |g: f64, h: f64| g * g / (h + p.l2);
    let parent = score(sg, sh);
    let n = n as u32;
    let min_leaf = p.min_leaf.max(1) as u32;
    // The best so far, in locals (a split must beat `min_gain`).
    let (mut best_gain, mut best_attr, mut best_bin) = (p.min_gain, usize::MAX, 0);
    for (slot, &a) in hist.chunks(SLOT).zip(attrs) {
        let nb = bins.edges[a].len() + 1;
        if nb < 2 {
            continue;
        }
        let (mut gl, mut hl, mut nl) = (0.0, 0.0, 0u32);
        for (b, bin) in slot[..nb - 1].iter().enumerate() {
            gl += bin.g;
            hl += bin.h;
            nl += bin.n;
            if bin.n == 0 || nl < min_leaf {
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
            if gain > best_gain {
                (best_gain, best_attr, best_bin) = (gain, a, b);
            }
        }
    }
    (best_attr != usize::MAX).then_some(Best {
        attr: best_attr,
        bin: best_bin,
    })
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
        let mut step = vec![0.0; 100];
        let t = grow(
            &Bins::new(&x, 256),
            &g,
            &h,
            (0..100).collect(),
            &[0, 1],
            &p,
            &mut step,
        );
        assert!(x.iter().zip(&step).all(|(r, &v)| t.eval(r) == v));
        assert_eq!(t.nodes.len(), 3);
        assert!(matches!(t.nodes[0], Node::Split { attr: 0, threshold, .. } if threshold == 29.5));
        assert_eq!(t.eval(&[10.0, 0.0]), 1.0);
        assert_eq!(t.eval(&[50.0, 0.0]), 3.0);
        // A leaf of fewer rows than the limit is not made.
        let p = Growth { min_leaf: 40, ..p };
        let t = grow(
            &Bins::new(&x, 256),
            &g,
            &h,
            (0..100).collect(),
            &[0],
            &p,
            &mut step,
        );
        assert!(matches!(t.nodes[0], Node::Split { threshold, .. } if threshold == 39.5));
    }
}
