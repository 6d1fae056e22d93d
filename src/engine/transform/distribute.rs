//! `dist=1`: the innermost loop of the outermost band distributed, each
//! statement (each strongly connected component) with a loop of its own
//! inside the loops the band keeps fused.
//!
//! isl fuses a band to its innermost member: reg_detect's loop over
//! `cnt` runs its input's division and its prefix sum's chain in one
//! body with guards, and neither the division vectorizes nor the chain
//! overlaps with anything. Polly's schedule for it (exported with
//! `-polly-export`, clang 19) is isl's outer loops, the same diagonal and
//! time loop, with each statement's innermost loop apart.
//!
//! Legal by construction: the band's outer members are the hyperplane
//! schedule's own, which no dependence runs against; the dependences
//! they leave within one of their iterations are handed to isl's
//! serializing scheduler, which respects them. The schedule is checked
//! against every dependence besides, as every schedule is.

use crate::engine::model::{EngineError, Model};
use crate::isl::{Clustering, IslError, NodeKind, Schedule, ScheduleNode, UnionSet};

use super::{Constraints, no_schedule};

/// `s` with the innermost member of its outermost band distributed,
/// where the tree starts with a band of two members or more over two
/// statements or more; `s` itself otherwise (a tree that starts with a
/// sequence too: isl has no way to move a subtree between trees, and
/// rebuilding one from its flat map loses its bands' properties).
pub(crate) fn distributed<'c>(
    model: &Model<'c>,
    scop_index: usize,
    s: &Schedule<'c>,
    reductions: bool,
) -> Result<Schedule<'c>, EngineError> {
    let root = s.root()?;
    if root.n_children()? != 1 {
        return Ok(s.clone());
    }
    let c = Constraints::of(model, reductions)?;
    let made = inner_apart(model, &c, &model.domain, &root.child(0)?)
        .map_err(|e| no_schedule(scop_index, &e))?;
    Ok(made.unwrap_or_else(|| s.clone()))
}

/// The part of the tree at `node` (over `domain`) with its band's last
/// member distributed, or `None` when it has no such band.
fn inner_apart<'c>(
    model: &Model<'c>,
    c: &Constraints<'c>,
    domain: &UnionSet<'c>,
    node: &ScheduleNode<'c>,
) -> Result<Option<Schedule<'c>>, IslError> {
    if node.kind()? != NodeKind::Band {
        return Ok(None);
    }
    let n = node.band_n_member()?;
    if n < 2 || domain.n_sets()? < 2 {
        return Ok(None);
    }
    let permutable = node.band_permutable()?;
    let coincident = (0..n - 1)
        .map(|k| node.band_coincident(k))
        .collect::<Result<Vec<_>, _>>()?;
    let outer = node.band_split(n - 1)?.band_partial_schedule()?;
    let o = outer.to_union_map()?.intersect_domain(domain)?;
    let same = o.apply_range(&o.reverse()?)?;
    model.ctx.set_clustering(Clustering::SerializeSccs);
    let inside = c
        .within(&same)?
        .on(domain)?
        .schedule(domain, &model.context)?;
    let mut band = inside
        .insert_partial_schedule(&outer)?
        .root()?
        .child(0)?
        .band_set_permutable(permutable)?;
    for (k, &on) in coincident.iter().enumerate() {
        band = band.band_set_coincident(k, on)?;
    }
    Ok(Some(band.schedule()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, Fusion};
    use crate::isl::Ctx;

    fn model_of<'c>(ctx: &'c Ctx, body: &str) -> Model<'c> {
        crate::engine::transform::test_model(
            ctx,
            "int n, int m, double A[9][9], double S[9][9], double T[9]",
            body,
        )
    }

    /// A map and a prefix sum along `k`, per row `i`: isl fuses the two
    /// loops over `k` (the sum's first element under a guard).
    const ROWS: &str = "for (i = 0; i < n; i++) {
        for (k = 0; k < m; k++) A[i][k] = T[i] * k;
        S[i][0] = A[i][0];
        for (k = 1; k < m; k++) S[i][k] = S[i][k - 1] + A[i][k];
    }";

    #[test]
    fn the_innermost_loop_goes_apart_under_the_fused_rows() {
        let ctx = Ctx::new();
        let m = model_of(&ctx, ROWS);
        let base = super::super::hyperplanes(&m, 0, Fusion::Max, false, false).unwrap();
        let top = base.root().unwrap().child(0).unwrap();
        assert_eq!(top.kind().unwrap(), NodeKind::Band);
        assert_eq!(
            top.band_n_member().unwrap(),
            2,
            "isl fuses both loops: {base}"
        );
        let d = distributed(&m, 0, &base, false).unwrap();
        assert!(m.respects(&d.map().unwrap()).unwrap());
        // The rows' loop, parallel, then one piece per statement.
        let rows = d.root().unwrap().child(0).unwrap();
        assert_eq!(rows.kind().unwrap(), NodeKind::Band);
        assert_eq!(rows.band_n_member().unwrap(), 1);
        assert!(rows.band_coincident(0).unwrap());
        let inside = rows.child(0).unwrap();
        assert_eq!(inside.kind().unwrap(), NodeKind::Sequence, "{d}");
        assert_eq!(inside.n_children().unwrap(), 3, "{d}");
    }

    #[test]
    fn a_band_of_one_member_or_one_statement_is_kept() {
        let ctx = Ctx::new();
        for body in [
            "for (i = 0; i < n; i++) T[i] = T[i] * 2;",
            "for (i = 0; i < n; i++) for (k = 0; k < m; k++) A[i][k] = A[i][k] + 1;",
        ] {
            let m = model_of(&ctx, body);
            let base = super::super::hyperplanes(&m, 0, Fusion::Max, false, false).unwrap();
            let d = distributed(&m, 0, &base, false).unwrap();
            assert!(
                d.map().unwrap().is_equal(&base.map().unwrap()).unwrap(),
                "{body}"
            );
        }
    }

    #[test]
    fn every_config_with_the_loop_distributed_is_legal() {
        let ctx = Ctx::new();
        let m = model_of(&ctx, ROWS);
        for c in Config::all()
            .iter()
            .filter(|c| !c.omp && !c.simd && !c.unroll.is_some())
        {
            let c = Config {
                distribute: true,
                ..*c
            };
            let s = crate::engine::transform::schedule(&m, 0, &c).unwrap();
            assert!(m.respects(&s.map().unwrap()).unwrap(), "{c}");
        }
    }
}
