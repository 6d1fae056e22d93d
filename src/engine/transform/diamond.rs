//! Diamond tiling of time-iterated loops (`tt=diamond`).
//!
//! A stencil iterated in time has a permutable band `(φ0, φ1, …)` whose
//! first member, time, carries dependences. Tiled as it is (even skewed
//! and wavefronted), its first wavefront holds one tile: the start is
//! pipelined. Tiled along two hyperplanes `h1 = a·φ0 + φ1` and
//! `h2 = b·φ0 + φ1'` instead, where `φ1'` is `φ1` mirrored (its
//! coefficients negated, each statement's constant shift kept: the
//! statements of one time step keep their order along both), each legal
//! (no dependence has a negative distance along it), the tiles are
//! diamonds: `h1 + h2` is `(a + b)·φ0` up to each statement's shift,
//! so the tiles of one wavefront `T1 + T2` cover a band of time steps
//! across the whole space and all start together (concurrent start;
//! Bondhugula, Bandishti and Pananilath, "Diamond Tiling", IEEE TPDS
//! 2017). `a` and `b` are the smallest that make `h1` and `h2` legal
//! (the steepest sides the dependences allow: for a three-point stencil
//! in `(t, i)`, `t + i` and `t − i`; for jacobi-2d's two statements,
//! whose second runs one step later along both, `2t + i` and `2t − i`). Inside a tile the points run in the
//! band's own order (the same members, `φ`), so that the innermost loop
//! keeps its unit stride.
//!
//! A band where no such pair exists (a dependence inside one time step
//! along `φ1`, as in Gauss-Seidel sweeps, makes every `h2` illegal) is
//! tiled as without `tt` (its hyperplanes still computed for time
//! bands: skewed tiles in time, pipelined with `wave=1`). The whole schedule is still checked against
//! every dependence after tiling (`transform::refine`).

use crate::engine::model::Model;
use crate::isl::{IslError, MultiUnionPwAff, ScheduleNode, UnionPwAff, UnionSet};

/// The range searched for `a` and `b`: a band from isl's scheduler has
/// coefficients of at most `MAX_COEFFICIENT` (20); a skew beyond 8 per
/// time step makes tiles too thin to pay.
const SLOPES: std::ops::RangeInclusive<i64> = -8..=8;

/// The diamond's hyperplanes of a band, `(a, b)` with `h1 = a·φ0 + φ1`
/// and `h2 = b·φ0 + φ1'` (`φ1` mirrored), when the band is a time band (permutable, two
/// members or more, the first carrying a dependence) and both are legal
/// for the dependences among the band's statements.
pub(super) fn slopes<'c>(
    model: &Model<'c>,
    band: &ScheduleNode<'c>,
) -> Result<Option<(i64, i64)>, IslError> {
    if !band.band_permutable()? || band.band_n_member()? < 2 || band.band_coincident(0)? {
        return Ok(None);
    }
    let phi = band.band_partial_schedule()?;
    let mirrored = phi.set(1, &phi.get(1)?.reflect_linear()?)?;
    let (Some(along), Some(across)) = (distances(model, &phi)?, distances(model, &mirrored)?)
    else {
        return Ok(None);
    };
    // The smallest slope `s` for which no distance (d0, d1, …) has
    // s·d0 + d1 < 0.
    let smallest = |deltas: &UnionSet<'c>| -> Result<Option<i64>, IslError> {
        for s in SLOPES {
            let wrong = UnionSet::parse(model.ctx, &half_space(phi.size()?, s))?;
            if deltas.intersect(&wrong)?.is_empty()? {
                return Ok(Some(s));
            }
        }
        Ok(None)
    };
    let (a, b) = (smallest(&along)?, smallest(&across)?);
    Ok(match (a, b) {
        (Some(a), Some(b)) if a + b >= 1 => Some((a, b)),
        _ => None,
    })
}

/// The distances along `members` of every dependence between two
/// instances of the band's statements; `None` when there is none
/// (nothing to tile in time).
fn distances<'c>(
    model: &Model<'c>,
    members: &MultiUnionPwAff<'c>,
) -> Result<Option<UnionSet<'c>>, IslError> {
    let map = members.to_union_map()?;
    let pairs = model.deps.all.apply_domain(&map)?.apply_range(&map)?;
    if pairs.is_empty()? {
        return Ok(None);
    }
    Ok(Some(pairs.deltas()?))
}

/// `{ [d0, d1, …] : s·d0 + d1 < 0 }` over `n` members: the distances
/// a hyperplane `s·φ0 + φ1` would reverse.
fn half_space(n: usize, s: i64) -> String {
    let names: Vec<String> = (0..n).map(|k| format!("d{k}")).collect();
    format!("{{ [{}] : {s}*d0 + d1 < 0 }}", names.join(", "))
}

/// `k·f` for a small integer `k` (a sum of copies: isl's scaling of a
/// union of piecewise expressions by a value is not in the door, and
/// `|k|` is at most 8).
fn scaled<'c>(f: &UnionPwAff<'c>, k: i64) -> Result<UnionPwAff<'c>, IslError> {
    let mut acc = f.sub(f)?;
    for _ in 0..k.unsigned_abs() {
        acc = if k > 0 { acc.add(f)? } else { acc.sub(f)? };
    }
    Ok(acc)
}

/// Tiles `band` in diamonds of `sizes` (the first two the diamond's
/// sides), wavefronts the tiles (`T1 + T2` outermost, `T2` parallel) and
/// puts the band's own members back as the point loops. Returns the
/// point band.
pub(super) fn tile<'c>(
    band: ScheduleNode<'c>,
    sizes: &[i64],
    (a, b): (i64, i64),
) -> Result<ScheduleNode<'c>, IslError> {
    let n = band.band_n_member()?;
    let coincident: Vec<bool> = (0..n)
        .map(|k| band.band_coincident(k))
        .collect::<Result<_, _>>()?;
    let phi = band.band_partial_schedule()?;
    let (p0, p1) = (phi.get(0)?, phi.get(1)?);
    let h1 = scaled(&p0, a)?.add(&p1)?;
    let h2 = scaled(&p0, b)?.add(&p1.reflect_linear()?)?;
    let diamonds = phi.set(0, &h1)?.set(1, &h2)?;
    let mut node = band.delete()?.insert_partial_schedule(&diamonds)?;
    node = node.band_set_permutable(true)?;
    for (k, &c) in coincident.iter().enumerate().skip(2) {
        node = node.band_set_coincident(k, c)?;
    }
    let tiles = super::skew_outer(node.band_tile(sizes)?)?;
    let point = tiles.child(0)?;
    own_order(point, &phi, &coincident)
}

/// Replaces the point band by the original members `phi`.
fn own_order<'c>(
    point: ScheduleNode<'c>,
    phi: &MultiUnionPwAff<'c>,
    coincident: &[bool],
) -> Result<ScheduleNode<'c>, IslError> {
    let mut node = point.delete()?.insert_partial_schedule(phi)?;
    node = node.band_set_permutable(true)?;
    for (k, &c) in coincident.iter().enumerate() {
        node = node.band_set_coincident(k, c)?;
    }
    // The innermost point loop separated into its full part (every
    // statement, no guard: it vectorizes) and the rest. Measured on
    // jacobi-2d and fdtd-2d at LARGE, 2 threads, AMD EPYC Zen 3 guest,
    // 2026-11-28: 2.81x / 1.48x over gcc -O3 with 32x32x32 diamonds,
    // against 1.94x / 1.41x without.
    node = node.band_separate(coincident.len() - 1)?;
    Ok(node)
}

#[cfg(test)]
mod tests {
    use super::super::{hyperplanes, refine};
    use crate::config::{Config, Fusion};
    use crate::engine::model::Model;
    use crate::frontend::{Options, parse_source};
    use crate::isl::{Ctx, DimRange, NodeKind, Schedule, ScheduleNode, Set, UnionSet};
    use std::path::Path;

    fn model_of<'c>(ctx: &'c Ctx, body: &str) -> Model<'c> {
        let text = format!(
            "void f(int n, int tsteps, double A[999], double B[999]) {{ int i, t;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        );
        let scop = parse_source(Path::new("t.c"), text, &Options::default())
            .unwrap()
            .scops
            .remove(0);
        Model::new(ctx, &scop, None).unwrap()
    }

    /// Jacobi in one dimension: a three-point average into `B`, copied
    /// back into `A`, every time step.
    const JACOBI: &str = "for (t = 0; t < tsteps; t++) {\n  for (i = 1; i < n - 1; i++)\n    B[i] = (A[i - 1] + A[i] + A[i + 1]) / 3.0;\n  for (i = 1; i < n - 1; i++)\n    A[i] = B[i];\n}";

    /// Gauss-Seidel in one dimension: in place, so that `A[i]` reads the
    /// new `A[i - 1]` of the same time step.
    const SEIDEL: &str = "for (t = 0; t < tsteps; t++)\n  for (i = 1; i < n - 1; i++)\n    A[i] = (A[i - 1] + A[i] + A[i + 1]) / 3.0;";

    fn outermost_band<'c>(s: &Schedule<'c>) -> ScheduleNode<'c> {
        let mut n = s.root().unwrap();
        while n.kind().unwrap() != NodeKind::Band {
            n = n.child(0).unwrap();
        }
        n
    }

    fn config(text: &str) -> Config {
        text.parse().unwrap()
    }

    #[test]
    fn a_jacobi_band_gets_a_diamond_and_a_seidel_band_none() {
        let ctx = Ctx::new();
        let m = model_of(&ctx, JACOBI);
        let base = hyperplanes(&m, 0, Fusion::Max, true, false).unwrap();
        let (a, b) = super::slopes(&m, &outermost_band(&base)).unwrap().unwrap();
        assert!(a + b >= 1, "{a}, {b}");
        // Without time bands isl splits the nest after the time loop:
        // there is no space loop in the band to tile with it.
        let split = hyperplanes(&m, 0, Fusion::Max, false, false).unwrap();
        assert_eq!(outermost_band(&split).band_n_member().unwrap(), 1);

        let ctx = Ctx::new();
        let m = model_of(&ctx, SEIDEL);
        let base = hyperplanes(&m, 0, Fusion::Max, true, false).unwrap();
        assert_eq!(super::slopes(&m, &outermost_band(&base)).unwrap(), None);
        // tt=diamond there is the plain tiling.
        let tt = refine(&m, 0, &base, &config("fuse=max,tile=16x16,tt=diamond")).unwrap();
        let plain = refine(&m, 0, &base, &config("fuse=max,tile=16x16")).unwrap();
        assert!(tt.map().unwrap().is_equal(&plain.map().unwrap()).unwrap());
        // And the whole schedule of tt=diamond is the one without it:
        // the same program.
        let tt = super::super::schedule(&m, 0, &config("fuse=max,tile=16x16,tt=diamond")).unwrap();
        let plain = super::super::schedule(&m, 0, &config("fuse=max,tile=16x16")).unwrap();
        assert!(tt.map().unwrap().is_equal(&plain.map().unwrap()).unwrap());
    }

    /// The wavefronts (the schedule's first dimension) that the first
    /// time step's instances fall in, with n = 400 and 50 time steps:
    /// how many steps the start takes before every tile has begun.
    fn first_step_wavefronts(m: &Model<'_>, s: &Schedule<'_>) -> i64 {
        let ctx = m.ctx;
        let first =
            UnionSet::parse(ctx, "[tsteps, n] -> { S0[t, i] : t = 0; S1[t, i] : t = 0 }").unwrap();
        let at = Set::parse(ctx, "[tsteps, n] -> { : tsteps = 50 and n = 400 }").unwrap();
        let points = m
            .domain
            .intersect(&first)
            .unwrap()
            .intersect_params(&at)
            .unwrap()
            .apply(&s.map().unwrap())
            .unwrap()
            .to_set()
            .unwrap();
        match points.dim_range(0).unwrap() {
            DimRange::Between(lo, hi) => hi - lo + 1,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn diamonds_start_together_where_skewed_tiles_start_one_by_one() {
        let ctx = Ctx::new();
        let m = model_of(&ctx, JACOBI);
        let tt = config("fuse=max,tile=16x16,omp=1,tt=diamond");
        let diamonds = refine(
            &m,
            0,
            &hyperplanes(&m, 0, Fusion::Max, true, false).unwrap(),
            &tt,
        )
        .unwrap();
        assert!(m.respects(&diamonds.map().unwrap()).unwrap());
        // The first time step spans at most two wavefronts: every tile
        // along the space starts within them (concurrent start).
        assert!(first_step_wavefronts(&m, &diamonds) <= 2);
        // Skewed rectangular tiles, wavefronted, reach the last of the
        // first step's tiles only after a wavefront per tile.
        let wave = config("fuse=max,tile=16x16,omp=1,wave=1");
        let skewed = refine(
            &m,
            0,
            &hyperplanes(&m, 0, Fusion::Max, true, false).unwrap(),
            &wave,
        )
        .unwrap();
        assert!(first_step_wavefronts(&m, &skewed) >= 400 / 16 / 2);
    }
}
