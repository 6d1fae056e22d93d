//! The memory side of a variant: each access of each statement place
//! over the generated loops' variables, its stride along a loop, and the
//! footprint (distinct bytes and cache lines) of one execution of each
//! generated loop.
//!
//! Footprints are boxes: the range of each subscript over the ranges of
//! the loops inside (interval arithmetic on the generated bounds, the
//! loops outside fixed at the middle of their ranges), the boxes of the
//! accesses that differ only by constants merged, the others added (and
//! capped by the hull of the array's boxes). Exact for rectangular and
//! tiled nests with one loop per subscript; a bounding estimate for
//! triangular nests and skewed subscripts.

use super::eval::{Env, Interval};
use super::walk::{Indexed, Site};
use crate::engine::codegen::{affine_of, compose};
use crate::engine::driver::ArrayLayout;
use crate::frontend::scop::{Affine, Scop, Term};
use std::collections::HashMap;

/// Bytes of an element whose array's declaration was not found.
pub(super) const DEFAULT_ELEMENT_BYTES: u64 = 8;

/// One array access of a statement place.
pub(super) struct Ref {
    pub(super) array: String,
    /// Subscripts over the generated loops' variables and the parameters
    /// (`None`: not affine there).
    pub(super) subscripts: Option<Vec<Affine>>,
    pub(super) element_bytes: u64,
    /// Elements between consecutive values of each subscript's position
    /// (row-major; an unknown inner extent counts as `fallback_extent`).
    pub(super) pitch: Vec<i64>,
}

impl Ref {
    /// Elements between the accesses of consecutive iterations of loop
    /// `var` (`None`: not affine).
    pub(super) fn stride(&self, var: &str) -> Option<i64> {
        let subs = self.subscripts.as_ref()?;
        let mut s = 0i64;
        for (k, a) in subs.iter().enumerate() {
            if divides(a, var) {
                return None;
            }
            s = s.checked_add(a.coefficient(var).checked_mul(self.pitch[k])?)?;
        }
        Some(s)
    }

    /// Whether the access moves with loop `var`.
    pub(super) fn moves_with(&self, var: &str) -> bool {
        self.subscripts
            .as_ref()
            .is_none_or(|s| s.iter().any(|a| a.coefficient(var) != 0 || divides(a, var)))
    }
}

fn divides(a: &Affine, var: &str) -> bool {
    a.terms.keys().any(|t| match t {
        Term::FloorDiv(e, _) => e.coefficient(var) != 0 || divides(e, var),
        Term::Var(_) => false,
    })
}

/// The array accesses of each statement place (scalars left out: they
/// live in registers).
pub(super) fn refs(
    scop: &Scop,
    ix: &Indexed<'_>,
    layouts: &HashMap<String, ArrayLayout>,
    fallback_extent: i64,
) -> Vec<Vec<Ref>> {
    ix.sites
        .iter()
        .map(|site| {
            let st = &scop.statements[site.id];
            let args: Vec<Option<Affine>> = site.args.iter().map(affine_of).collect();
            st.writes
                .iter()
                .chain(&st.may_writes)
                .chain(&st.reads)
                .filter(|a| !a.subscripts.is_empty())
                .map(|a| {
                    let layout = layouts.get(&a.array);
                    let n = a.subscripts.len();
                    let extent = |k: usize| {
                        layout
                            .and_then(|l| l.extents.get(k).copied().flatten())
                            .unwrap_or(fallback_extent)
                            .max(1)
                    };
                    let mut pitch = vec![1i64; n];
                    for k in (0..n.saturating_sub(1)).rev() {
                        pitch[k] = pitch[k + 1].saturating_mul(extent(k + 1));
                    }
                    Ref {
                        array: a.array.clone(),
                        subscripts: a
                            .subscripts
                            .iter()
                            .map(|s| compose(s, &st.iterators, &args))
                            .collect(),
                        element_bytes: layout.map_or(DEFAULT_ELEMENT_BYTES, |l| l.element_bytes),
                        pitch,
                    }
                })
                .collect()
        })
        .collect()
}

/// Distinct bytes and cache lines.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Footprint {
    pub(super) bytes: f64,
    pub(super) lines: f64,
}

/// A box of elements of one array, from accesses with the same linear
/// part.
struct Boxed {
    lo: Vec<i64>,
    hi: Vec<i64>,
    element_bytes: u64,
}

impl Boxed {
    fn elements(&self) -> f64 {
        self.lo
            .iter()
            .zip(&self.hi)
            .map(|(l, h)| (h - l + 1).max(1) as f64)
            .product()
    }

    fn lines(&self, line: u64) -> f64 {
        let n = self.lo.len();
        let last = (self.hi[n - 1] - self.lo[n - 1] + 1).max(1) as f64;
        let per_row = (last * self.element_bytes as f64 / line as f64).ceil();
        self.lo[..n - 1]
            .iter()
            .zip(&self.hi)
            .map(|(l, h)| (h - l + 1).max(1) as f64)
            .product::<f64>()
            * per_row
    }
}

/// The ranges of the loop variables of `site` from position `from` of its
/// chain inward, the loops outside fixed at `mid` (the middle of their
/// ranges); `None` where a bound cannot be read.
pub(super) fn ranges(
    ix: &Indexed<'_>,
    site: &Site<'_>,
    env: &mut Env<'_>,
    from: usize,
    mid: &[i64],
) -> Option<()> {
    for (j, &k) in site.chain.iter().enumerate() {
        let l = ix.loops[k].shape;
        let v = if j < from {
            Interval::point(mid[j])
        } else {
            let lo = env.eval(&l.init)?.lo;
            let hi = env.upper(&l.var, &l.cond)?.hi;
            Interval { lo, hi: hi.max(lo) }
        };
        env.vars.push((l.var.clone(), v));
    }
    Some(())
}

/// The middle of each loop variable's range along `site`'s chain, each
/// loop's range taken at the middle of the ones outside it.
pub(super) fn middles(ix: &Indexed<'_>, site: &Site<'_>, env: &mut Env<'_>) -> Vec<i64> {
    let base = env.vars.len();
    let mut mid = Vec::new();
    for &k in &site.chain {
        let l = ix.loops[k].shape;
        let lo = env.eval(&l.init).map(|v| v.lo);
        let hi = env.upper(&l.var, &l.cond).map(|v| v.hi);
        let m = match (lo, hi) {
            (Some(lo), Some(hi)) if hi >= lo => lo + ((hi - lo) / l.step.max(1) / 2) * l.step,
            (Some(lo), _) => lo,
            _ => 0,
        };
        mid.push(m);
        env.vars.push((l.var.clone(), Interval::point(m)));
    }
    env.vars.truncate(base);
    mid
}

/// The range of an affine expression over the variables' ranges.
fn range_of(a: &Affine, env: &Env<'_>) -> Option<Interval> {
    let mut lo = a.constant;
    let mut hi = a.constant;
    for (t, &k) in &a.terms {
        let v = match t {
            Term::Var(n) => env.eval(&crate::isl::AstExpr::Id(n.clone()))?,
            Term::FloorDiv(e, d) => {
                let x = range_of(e, env)?;
                Interval {
                    lo: x.lo.div_euclid(*d),
                    hi: x.hi.div_euclid(*d),
                }
            }
        };
        let (p, q) = (v.lo.checked_mul(k)?, v.hi.checked_mul(k)?);
        lo = lo.checked_add(p.min(q))?;
        hi = hi.checked_add(p.max(q))?;
    }
    Some(Interval { lo, hi })
}

/// The footprint of the accesses of the places `sites` (with their
/// refs), each with its loops from chain position `from(site)` inward
/// free and the ones outside fixed at their middles.
pub(super) fn footprint(
    ix: &Indexed<'_>,
    refs: &[Vec<Ref>],
    middles: &[Vec<i64>],
    sites: &[usize],
    from: &dyn Fn(usize) -> usize,
    env: &mut Env<'_>,
    line: u64,
) -> Footprint {
    // Per array: per linear part, the box.
    let mut arrays: HashMap<&str, Vec<(Vec<Affine>, Boxed)>> = HashMap::new();
    let mut unknown = Footprint::default();
    for &s in sites {
        let site = &ix.sites[s];
        let base = env.vars.len();
        let ok = ranges(ix, site, env, from(s), &middles[s]).is_some();
        for r in &refs[s] {
            let bounds = r.subscripts.as_ref().filter(|_| ok).and_then(|subs| {
                subs.iter()
                    .map(|a| range_of(a, env))
                    .collect::<Option<Vec<_>>>()
                    .map(|b| (subs, b))
            });
            let Some((subs, b)) = bounds else {
                // Not affine: one element per access, one line.
                unknown.bytes += r.element_bytes as f64;
                unknown.lines += 1.0;
                continue;
            };
            let linear: Vec<Affine> = subs
                .iter()
                .map(|a| Affine {
                    terms: a.terms.clone(),
                    constant: 0,
                })
                .collect();
            let groups = arrays.entry(r.array.as_str()).or_default();
            let (lo, hi): (Vec<i64>, Vec<i64>) = b.iter().map(|i| (i.lo, i.hi)).unzip();
            match groups.iter_mut().find(|(l, _)| *l == linear) {
                Some((_, g)) => {
                    for k in 0..lo.len() {
                        g.lo[k] = g.lo[k].min(lo[k]);
                        g.hi[k] = g.hi[k].max(hi[k]);
                    }
                }
                None => groups.push((
                    linear,
                    Boxed {
                        lo,
                        hi,
                        element_bytes: r.element_bytes,
                    },
                )),
            }
        }
        env.vars.truncate(base);
    }
    let mut f = unknown;
    for groups in arrays.values() {
        let bytes: f64 = groups
            .iter()
            .map(|(_, g)| g.elements() * g.element_bytes as f64)
            .sum();
        let lines: f64 = groups.iter().map(|(_, g)| g.lines(line)).sum();
        // The hull of the array's boxes caps the sum.
        let first = &groups[0].1;
        let mut hull = Boxed {
            lo: first.lo.clone(),
            hi: first.hi.clone(),
            element_bytes: first.element_bytes,
        };
        for (_, g) in &groups[1..] {
            if g.lo.len() != hull.lo.len() {
                continue;
            }
            for k in 0..g.lo.len() {
                hull.lo[k] = hull.lo[k].min(g.lo[k]);
                hull.hi[k] = hull.hi[k].max(g.hi[k]);
            }
        }
        f.bytes += bytes.min(hull.elements() * hull.element_bytes as f64);
        f.lines += lines.min(hull.lines(line));
    }
    f
}
