//! `outer=1`: the original's outermost loop kept outermost and run in
//! order, and isl's scheduler given only the dependences within one of
//! its iterations (Polly keeps a time loop so).
//!
//! Alone that was measured slower wherever tried (2026-11-29: isl then
//! fuses everything inside the time loop again, and a recurrence among
//! the statements skews the fused band to its diagonal). What makes it
//! pay is the grouping under `fuse=smart`: the pieces isl's serializing
//! scheduler makes inside the outer loop (its strongly connected
//! components, in a legal order) are fused greedily, a piece joining the
//! group before it only where the group's schedule keeps its outermost
//! loop — the same parallel direction over the group's statements — and
//! no fewer parallel outer loops. reg_detect: the two nests over
//! `(j, i)` fuse, rows parallel, and the `path` recurrence stays apart
//! instead of dragging all four onto a diagonal.
//!
//! Legal by construction: isl respects every dependence within a group,
//! the groups run in the serializing scheduler's order (which respects
//! those between them), and the outer loop runs in its original order
//! (it carries the rest); the final schedule is checked against every
//! dependence besides, as every schedule is.

use crate::config::Fusion;
use crate::engine::model::{EngineError, Model};
use crate::isl::{Clustering, IslError, MultiUnionPwAff, NodeKind, Schedule, UnionMap, UnionSet};

use super::{Constraints, bounded_coefficients, no_schedule};

/// The hyperplanes of an `outer=1` configuration: those of
/// [`super::hyperplanes`] without time bands where the SCoP is not one
/// loop nest (there is no outer loop to keep).
pub(crate) fn hyperplanes<'c>(
    model: &Model<'c>,
    scop_index: usize,
    fusion: Fusion,
    reductions: bool,
) -> Result<Schedule<'c>, EngineError> {
    let Some(outer) = outermost_loop(model)? else {
        return super::hyperplanes(model, scop_index, fusion, false, reductions);
    };
    let o = outer.to_union_map()?;
    let same_iteration = o.apply_range(&o.reverse()?)?;
    let within = Constraints::of(model, reductions)?.within(&same_iteration)?;
    let ctx = model.ctx;
    let inner = match fusion {
        Fusion::No => {
            ctx.set_clustering(Clustering::SerializeSccs);
            within.schedule(&model.domain, &model.context)
        }
        Fusion::Max => {
            ctx.set_clustering(Clustering::WholeComponent);
            within.schedule(&model.domain, &model.context)
        }
        Fusion::Smart => grouped(model, &within, &o),
    }
    .map_err(|e| no_schedule(scop_index, &e))?;
    let s = inner.insert_partial_schedule(&outer)?;
    bounded_coefficients(&s, scop_index, fusion)?;
    Ok(s)
}

/// The original's loop around every statement: the band at the top of
/// its tree (one member), if the SCoP is one loop nest.
fn outermost_loop<'c>(model: &Model<'c>) -> Result<Option<MultiUnionPwAff<'c>>, IslError> {
    let root = model.original_tree.root()?;
    if root.n_children()? != 1 {
        return Ok(None);
    }
    let top = root.child(0)?;
    if top.kind()? != NodeKind::Band {
        return Ok(None);
    }
    Ok(Some(top.band_partial_schedule()?))
}

/// A schedule of one group of statements and what its top band keeps.
/// isl schedules the outer loop's dimension too (nothing is carried
/// along it within one iteration, so it is parallel and usually comes
/// first): the members equal to the outer loop are not counted.
struct Group<'c> {
    domain: UnionSet<'c>,
    schedule: Schedule<'c>,
    /// The number of leading parallel members of its top band after the
    /// outer loop's (0 without a band over the whole group).
    parallel: usize,
    /// The first member of its top band other than the outer loop, as a
    /// relation from the group's statement instances.
    outermost: Option<UnionMap<'c>>,
    /// How many members of its top band the pieces share: those up to
    /// its last counted parallel one.
    shared: usize,
    /// The schedule of each of its pieces alone, in order.
    parts: Vec<Schedule<'c>>,
}

impl<'c> Group<'c> {
    /// isl's schedule of `domain`, everything fused that can be.
    fn of(
        model: &Model<'c>,
        within: &Constraints<'c>,
        outer: &UnionMap<'c>,
        domain: UnionSet<'c>,
    ) -> Result<Self, IslError> {
        model.ctx.set_clustering(Clustering::Incremental);
        let schedule = within.on(&domain)?.schedule(&domain, &model.context)?;
        let mut parallel = 0;
        let mut shared = 0;
        let mut outermost = None;
        if let Some(band) = top_band(&schedule)? {
            let outer = outer.intersect_domain(&domain)?;
            let partial = band.band_partial_schedule()?;
            for k in 0..band.band_n_member()? {
                let member = partial.get(k)?.to_union_map()?.intersect_domain(&domain)?;
                if outermost.is_none() && member.is_equal(&outer)? {
                    continue;
                }
                if !band.band_coincident(k)? {
                    break;
                }
                outermost.get_or_insert(member);
                parallel += 1;
                shared = k + 1;
            }
        }
        Ok(Group {
            domain,
            parts: vec![schedule.clone()],
            schedule,
            parallel,
            outermost,
            shared,
        })
    }

    /// The group's schedule: its pieces' own, in order, under the
    /// members of the fused band they share (their parallel loops). The
    /// loops inside those stay each piece's own: isl would fuse them too
    /// (reg_detect: a prefix sum's loop with its input's, which then no
    /// longer vectorizes, measured 2× slower).
    fn tree(self) -> Result<Schedule<'c>, IslError> {
        let mut parts = self.parts.into_iter();
        let mut s = parts.next().expect("a group has a piece");
        if parts.len() == 0 {
            return Ok(s);
        }
        for p in parts {
            s = s.sequence(&p)?;
        }
        let band = top_band(&self.schedule)?.expect("a merged group has a top band");
        let permutable = band.band_permutable()?;
        let coincident = (0..self.shared)
            .map(|k| band.band_coincident(k))
            .collect::<Result<Vec<_>, _>>()?;
        let prefix = if self.shared < band.band_n_member()? {
            band.band_split(self.shared)?
        } else {
            band
        };
        let mut top = s
            .insert_partial_schedule(&prefix.band_partial_schedule()?)?
            .root()?
            .child(0)?
            .band_set_permutable(permutable)?;
        for (k, &c) in coincident.iter().enumerate() {
            top = top.band_set_coincident(k, c)?;
        }
        top.schedule()
    }

    /// Whether `merged` (this group and `next`) keeps what both had: at
    /// least as many parallel loops inside the outer one as the poorer of
    /// the two (and one), and this group's outermost parallel loop.
    fn kept_by(&self, next: &Group<'c>, merged: &Group<'c>) -> Result<bool, IslError> {
        if merged.parallel == 0 || merged.parallel < self.parallel.min(next.parallel) {
            return Ok(false);
        }
        match (&self.outermost, &merged.outermost) {
            (Some(own), Some(both)) => own.is_equal(&both.intersect_domain(&self.domain)?),
            _ => Ok(false),
        }
    }
}

/// The band right below the root, if the tree starts with one (it then
/// spans the whole domain).
fn top_band<'c>(s: &Schedule<'c>) -> Result<Option<crate::isl::ScheduleNode<'c>>, IslError> {
    let root = s.root()?;
    if root.n_children()? != 1 {
        return Ok(None);
    }
    let top = root.child(0)?;
    Ok((top.kind()? == NodeKind::Band).then_some(top))
}

/// `fuse=smart` inside the outer loop: the serializing scheduler's
/// pieces, in its order, fused greedily while [`Group::kept_by`] holds.
fn grouped<'c>(
    model: &Model<'c>,
    within: &Constraints<'c>,
    outer: &UnionMap<'c>,
) -> Result<Schedule<'c>, IslError> {
    model.ctx.set_clustering(Clustering::SerializeSccs);
    let serial = within.schedule(&model.domain, &model.context)?;
    // A filter names its statements only (isl keeps the constraints in
    // the domain above): the pieces are put back in the domain.
    let pieces = pieces(&serial)?
        .into_iter()
        .map(|p| p.intersect(&model.domain))
        .collect::<Result<Vec<_>, _>>()?;
    if pieces.len() < 2 {
        return Ok(serial);
    }
    let mut groups: Vec<Group<'c>> = Vec::new();
    for piece in pieces {
        let next = Group::of(model, within, outer, piece)?;
        if let Some(last) = groups.last() {
            let both = last.domain.union(&next.domain)?;
            // isl finding no schedule for the pair leaves them apart.
            if let Ok(mut merged) = Group::of(model, within, outer, both)
                && last.kept_by(&next, &merged)?
            {
                let last = groups.pop().expect("a last group");
                merged.parts = last.parts.into_iter().chain(next.parts).collect();
                groups.push(merged);
                continue;
            }
        }
        groups.push(next);
    }
    let mut it = groups.into_iter();
    let mut s = it.next().expect("two pieces or more").tree()?;
    for g in it {
        s = s.sequence(&g.tree()?)?;
    }
    Ok(s)
}

/// The statement sets of a serialized schedule's top sequence, in
/// order; the whole domain when it does not start with one.
fn pieces<'c>(s: &Schedule<'c>) -> Result<Vec<UnionSet<'c>>, IslError> {
    let root = s.root()?;
    if root.n_children()? == 1 {
        let top = root.child(0)?;
        if top.kind()? == NodeKind::Sequence {
            return (0..top.n_children()?)
                .map(|k| top.child(k)?.filter())
                .collect();
        }
    }
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::isl::Ctx;

    fn model_of<'c>(ctx: &'c Ctx, body: &str) -> Model<'c> {
        crate::engine::transform::test_model(
            ctx,
            "int n, int m, double A[9][9][9], double S[9][9][9], double M[9][9], double P[9][9], double T[9][9]",
            body,
        )
    }

    /// reg_detect's shape: two nests over a triangle's `(j, i)` (the
    /// second a prefix sum along `k`) and a diagonal recurrence, all in a
    /// time loop.
    const TIMED: &str = "for (t = 0; t < n; t++) {
        for (j = 0; j < n; j++) for (i = j; i < n; i++) for (k = 0; k < m; k++)
            A[j][i][k] = T[j][i] * k;
        for (j = 0; j < n; j++) for (i = j; i < n; i++) {
            S[j][i][0] = A[j][i][0];
            for (k = 1; k < m; k++) S[j][i][k] = S[j][i][k - 1] + A[j][i][k];
            M[j][i] = S[j][i][m - 1];
        }
        for (j = 1; j < n; j++) for (i = j; i < n; i++) P[j][i] = P[j - 1][i - 1] + M[j][i];
    }";

    /// The tree's top: the band of the kept loop, then what is below it.
    fn below_outer<'c>(s: &Schedule<'c>) -> crate::isl::ScheduleNode<'c> {
        let band = s.root().unwrap().child(0).unwrap();
        assert_eq!(band.kind().unwrap(), NodeKind::Band);
        assert_eq!(band.band_n_member().unwrap(), 1);
        assert!(
            !band.band_coincident(0).unwrap(),
            "the time loop runs in order"
        );
        band.child(0).unwrap()
    }

    #[test]
    fn smart_groups_the_nests_that_keep_their_rows_parallel() {
        let ctx = Ctx::new();
        let m = model_of(&ctx, TIMED);
        let s = hyperplanes(&m, 0, Fusion::Smart, false).unwrap();
        assert!(m.respects(&s.map().unwrap()).unwrap());
        let seq = below_outer(&s);
        assert_eq!(seq.kind().unwrap(), NodeKind::Sequence);
        // The two nests over (j, i) in one group, the recurrence apart.
        assert_eq!(seq.n_children().unwrap(), 2, "{s}");
        let first = seq.child(0).unwrap();
        assert_eq!(
            first.filter().unwrap().to_string().matches("S").count(),
            4,
            "{s}"
        );
        let fused = first.child(0).unwrap();
        assert_eq!(fused.kind().unwrap(), NodeKind::Band);
        // The outer loop's copy, then `j` and `i`, both parallel; the
        // loops over `k` stay each statement's own, below.
        let n = fused.band_n_member().unwrap();
        assert_eq!(n, 3, "{s}");
        assert!(fused.band_coincident(1).unwrap() && fused.band_coincident(2).unwrap());
        assert_eq!(fused.child(0).unwrap().kind().unwrap(), NodeKind::Sequence);
    }

    #[test]
    fn no_and_max_fusion_schedule_inside_the_kept_loop() {
        let ctx = Ctx::new();
        let m = model_of(&ctx, TIMED);
        for f in [Fusion::No, Fusion::Max] {
            let s = hyperplanes(&m, 0, f, false).unwrap();
            assert!(m.respects(&s.map().unwrap()).unwrap(), "{f}");
            below_outer(&s);
        }
        // Without the kept loop isl puts the time loop inside a diagonal.
        let plain = super::super::hyperplanes(&m, 0, Fusion::Smart, false, false).unwrap();
        let top = plain.root().unwrap().child(0).unwrap();
        assert!(top.band_coincident(0).unwrap(), "{plain}");
    }

    #[test]
    fn without_one_outer_loop_it_is_the_plain_schedule() {
        let ctx = Ctx::new();
        let m = model_of(
            &ctx,
            "for (i = 0; i < n; i++) M[0][i] = T[0][i];\nfor (i = 1; i < n; i++) P[0][i] = M[0][i - 1];",
        );
        for f in [Fusion::No, Fusion::Smart, Fusion::Max] {
            let kept = hyperplanes(&m, 0, f, false).unwrap().map().unwrap();
            let plain = super::super::hyperplanes(&m, 0, f, false, false)
                .unwrap()
                .map()
                .unwrap();
            assert!(kept.is_equal(&plain).unwrap(), "{f}");
        }
    }

    #[test]
    fn every_config_with_the_loop_kept_is_legal() {
        let ctx = Ctx::new();
        let m = model_of(&ctx, TIMED);
        for c in Config::all()
            .iter()
            .filter(|c| !c.omp && !c.simd && !c.unroll.is_some())
        {
            let c = Config { outer: true, ..*c };
            let s = crate::engine::transform::schedule(&m, 0, &c).unwrap();
            assert!(m.respects(&s.map().unwrap()).unwrap(), "{c}");
        }
    }
}
