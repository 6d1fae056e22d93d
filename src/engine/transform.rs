//! From a configuration to a schedule tree, in the paper's order
//! (section 2.6): fusion choice, tiling-hyperplane schedule, pre-
//! vectorization, rectangular tiling, wavefronting of the tile loops.
//!
//! The schedule itself comes from isl's scheduler, which implements a
//! Pluto-style tiling-hyperplane search (outermost coincident — parallel —
//! dimensions first, permutable bands for tiling, proximity to shorten
//! reuse distances). Its clustering options map one-to-one onto the three
//! fusion structures, so writing a second hyperplane search would only add
//! risk. Every edit below is legal by construction (permutations and
//! skews inside permutable bands, tiling of permutable bands), and the
//! final schedule is still checked against every dependence.

use crate::config::{Config, Fusion, Privatize, Reductions};
use crate::engine::model::{EngineError, Model};
use crate::frontend::scop::Scop;
use crate::isl::{self, Clustering, IslError, NodeKind, Schedule, ScheduleNode};

mod base;
mod diamond;
mod distribute;
mod outer;

use base::Computed;
pub(crate) use base::{Base, Bases};
pub(crate) use distribute::distributed;
pub(crate) use outer::hyperplanes as outer_hyperplanes;

/// The schedule tree for `config`. With `tt=diamond`, where no band
/// takes diamond tiles (no time loop, a Gauss-Seidel dependence, tiles
/// of size 1) or there is no schedule with time bands, the schedule
/// without it: `tt=diamond` then writes the same program as without.
pub fn schedule<'c>(
    model: &Model<'c>,
    scop_index: usize,
    config: &Config,
) -> Result<Schedule<'c>, EngineError> {
    let mut bases = Computed {
        model,
        scop_index,
        config,
        held: None,
    };
    schedule_on(model, scop_index, config, &mut bases)
}

/// The schedule tree for `config` over the hyperplanes `bases` gives, in
/// stages: `outer=1` keeps the outermost loop (its own hyperplanes, then
/// diamond tiles or the refinement); `tt=diamond` takes diamond tiles
/// where a band of the time-band hyperplanes takes them; otherwise the
/// plain hyperplanes, their innermost member distributed with `dist=1`,
/// then tiles and the other marks ([`refine`]).
pub(crate) fn schedule_on<'c>(
    model: &Model<'c>,
    scop_index: usize,
    config: &Config,
    bases: &mut dyn Bases<'c>,
) -> Result<Schedule<'c>, EngineError> {
    let plain = Config {
        diamond: false,
        ..*config
    };
    if config.outer {
        let base = bases.get(Base::Outer)?;
        if config.diamond
            && let Some(s) = diamonds(model, scop_index, base, config)?
        {
            return Ok(s);
        }
        return refine(model, scop_index, base, &plain);
    }
    if config.diamond
        && let Ok(base) = bases.get(Base::TimeBands)
        && let Some(s) = diamonds(model, scop_index, base, config)?
    {
        return Ok(s);
    }
    let base = bases.get(Base::Plain)?;
    if config.distribute {
        let scheduled = config.reduce == Reductions::Scheduled;
        let d = distributed(model, scop_index, base, scheduled)?;
        return refine(model, scop_index, &d, &plain);
    }
    refine(model, scop_index, base, &plain)
}

/// [`refine`] of a `tt=diamond` configuration over hyperplanes with time
/// bands; `None` when no band took diamond tiles.
pub(crate) fn diamonds<'c>(
    model: &Model<'c>,
    scop_index: usize,
    s: &Schedule<'c>,
    config: &Config,
) -> Result<Option<Schedule<'c>>, EngineError> {
    let (result, tiled) = refine_counting(model, scop_index, s, config)?;
    Ok((tiled > 0).then_some(result))
}

/// The tiling-hyperplane schedule for a fusion choice: the expensive
/// step, shared by every configuration with that fusion (and the same
/// `time_bands`).
///
/// With `time_bands` (`tt=diamond`) the scheduler does not insist on a
/// parallel outermost member in each band: a time loop's statements
/// then stay in one band with their space loops, skewed, which diamond
/// tiling needs (with it on, isl splits a stencil's band after the time
/// loop to make the space loops parallel, and there is nothing to tile
/// in time).
///
/// With `reductions` (`red=2`) a loop that carries only the reductions'
/// own dependences counts as parallel (coincident) for the scheduler: they
/// still order the schedule (validity) and draw it (proximity), and the
/// code generator runs such a loop as a reduction.
pub(crate) fn hyperplanes<'c>(
    model: &Model<'c>,
    scop_index: usize,
    fusion: Fusion,
    time_bands: bool,
    reductions: bool,
) -> Result<Schedule<'c>, EngineError> {
    let ctx = model.ctx;
    ctx.set_clustering(clustering(fusion));
    let c = Constraints::of(model, reductions)?;
    ctx.set_outer_coincidence(!time_bands);
    let computed = c.schedule(&model.domain, &model.context);
    ctx.set_outer_coincidence(true);
    let s = computed.map_err(|e| no_schedule(scop_index, &e))?;
    bounded_coefficients(&s, scop_index, fusion)?;
    Ok(s)
}

/// isl's clustering option for a fusion structure.
fn clustering(fusion: Fusion) -> Clustering {
    match fusion {
        Fusion::No => Clustering::SerializeSccs,
        Fusion::Smart => Clustering::Incremental,
        Fusion::Max => Clustering::WholeComponent,
    }
}

/// The error of a scheduler that found nothing.
fn no_schedule(scop_index: usize, e: &IslError) -> EngineError {
    EngineError::Unsupported {
        scop: scop_index,
        reason: format!("the scheduler found no legal schedule ({})", e.message),
    }
}

/// What the scheduler is given: the dependences it must respect
/// (validity, also its proximity), those that decide which loops are
/// parallel (coincidence), and the privatized scalars' conditional pair.
struct Constraints<'c> {
    validity: isl::UnionMap<'c>,
    coincidence: isl::UnionMap<'c>,
    /// (live ranges, the dependences that bind only where a band does
    /// not keep them within one iteration).
    conditional: Option<(isl::UnionMap<'c>, isl::UnionMap<'c>)>,
}

impl<'c> Constraints<'c> {
    /// With `reductions` (`red=2`) a loop that carries only the
    /// reductions' own dependences counts as parallel.
    fn of(model: &Model<'c>, reductions: bool) -> Result<Self, IslError> {
        let deps = &model.deps.all;
        // Privatized scalars: their memory dependences bind the scheduler
        // only where it would not keep their live ranges inside one
        // iteration.
        let conditional = model
            .private
            .as_ref()
            .map(|p| (p.live.clone(), p.dropped.clone()));
        let (validity, coincidence) = if reductions {
            let validity = deps.union(&accumulator_order(model)?)?.coalesce()?;
            let coincidence = validity.subtract(&model.deps.reduction)?;
            (validity, coincidence)
        } else {
            (deps.clone(), deps.clone())
        };
        Ok(Constraints {
            validity,
            coincidence,
            conditional,
        })
    }

    /// The constraints between pairs of `pairs` only.
    fn within(&self, pairs: &isl::UnionMap<'c>) -> Result<Self, IslError> {
        let conditional = match &self.conditional {
            Some((live, dropped)) => Some((live.intersect(pairs)?, dropped.intersect(pairs)?)),
            None => None,
        };
        Ok(Constraints {
            validity: self.validity.intersect(pairs)?,
            coincidence: self.coincidence.intersect(pairs)?,
            conditional,
        })
    }

    /// The constraints between elements of `domain` only.
    fn on(&self, domain: &isl::UnionSet<'c>) -> Result<Self, IslError> {
        let inside = |m: &isl::UnionMap<'c>| m.intersect_domain(domain)?.intersect_range(domain);
        let conditional = match &self.conditional {
            Some((live, dropped)) => Some((inside(live)?, inside(dropped)?)),
            None => None,
        };
        Ok(Constraints {
            validity: inside(&self.validity)?,
            coincidence: inside(&self.coincidence)?,
            conditional,
        })
    }

    /// isl's schedule of `domain` under these constraints and the
    /// context's options.
    fn schedule(
        &self,
        domain: &isl::UnionSet<'c>,
        context: &isl::Set<'c>,
    ) -> Result<Schedule<'c>, IslError> {
        isl::compute_schedule(
            domain,
            context,
            &self.validity,
            &self.coincidence,
            &self.validity,
            self.conditional.as_ref().map(|(a, b)| (a, b)),
        )
    }
}

/// Refuses a schedule with a coefficient above [`MAX_COEFFICIENT`].
fn bounded_coefficients(
    s: &Schedule<'_>,
    scop_index: usize,
    fusion: Fusion,
) -> Result<(), EngineError> {
    let mut largest = 0.0f64;
    walk(&s.root()?, &mut |n| {
        if n.kind()? == NodeKind::Band {
            let partial = n.band_partial_schedule()?;
            for k in 0..partial.size()? {
                largest = largest.max(partial.get(k)?.max_abs_coefficient()?);
            }
        }
        Ok(n)
    })?;
    if largest > MAX_COEFFICIENT as f64 {
        return Err(EngineError::Unsupported {
            scop: scop_index,
            reason: format!(
                "the schedule isl found for fusion={fusion} has a coefficient of \
                 {largest:.0} (polytune's limit is {MAX_COEFFICIENT}): its loops would run \
                 mostly empty iterations and their index arithmetic could overflow"
            ),
        });
    }
    Ok(())
}

/// For `red=2`: every access to a reduction's accumulator by another
/// statement ordered before or after every update of that element, as in
/// the original program. The dependences order such an access only
/// before the first update of its element or after the last (they are
/// value-based); once the updates may run in any order, any of them can
/// be the first or the last (atax: `y[j] = 0` must come before every
/// `y[j] += A[i][j] * tmp[i]`, not only the one with `i = 0`, for the
/// loop over `i` to run as a reduction).
fn accumulator_order<'c>(model: &Model<'c>) -> Result<isl::UnionMap<'c>, IslError> {
    let d = &model.deps;
    if d.updates.is_empty()? {
        return Ok(d.updates.clone());
    }
    let touches = model
        .reads
        .union(&model.writes)?
        .apply_range(&d.updates.reverse()?)?
        .subtract(&d.same_updates)?;
    // The tree's map puts every statement in one time space (the
    // original's relation gives each nest depth its own).
    let original = model.original_tree.map()?;
    let before = original.lex_lt_union_map(&original)?;
    touches.union(&touches.reverse()?)?.intersect(&before)
}

/// The largest schedule coefficient polytune accepts (isl's
/// `schedule_max_coefficient`, the figure Polly uses too). isl honours
/// that option in its main problem but not when it falls back to carrying
/// dependences one dimension at a time; there it can return coefficients
/// near 2^31 (taken from the wide ranges of C's integer types), and the
/// generated index expressions then overflow 64 bits (the fuzzer's seed
/// 14, program 594: out-of-bounds reads). With coefficients at most 20
/// and tiles at most 32, an index expression stays within a small
/// multiple of the iterators' values, which index memory and so are far
/// below 2^63.
pub(crate) const MAX_COEFFICIENT: i32 = 20;

/// Pre-vectorization, tiling and wavefront applied to a hyperplane
/// schedule, then the legality check.
pub(crate) fn refine<'c>(
    model: &Model<'c>,
    scop_index: usize,
    s: &Schedule<'c>,
    config: &Config,
) -> Result<Schedule<'c>, EngineError> {
    refine_counting(model, scop_index, s, config).map(|(s, _)| s)
}

/// [`refine`], and how many bands took diamond tiles.
fn refine_counting<'c>(
    model: &Model<'c>,
    scop_index: usize,
    s: &Schedule<'c>,
    config: &Config,
) -> Result<(Schedule<'c>, usize), EngineError> {
    let mut root = s.root()?;
    if config.prevector {
        root = walk(&root, &mut |n| sink_parallel_member(n))?;
    }
    let tiling = Tiling {
        model,
        sizes: config.tile_sizes(),
        wavefront: config.wavefront,
        diamond: config.diamond,
        diamonds: std::cell::Cell::new(0),
    };
    if tiling.sizes.iter().any(|&s| s > 1) {
        root = tile(&root, &tiling)?;
    }
    let result = root.schedule()?;
    if !model.respects(&result.map()?)? {
        return Err(EngineError::Internal {
            scop: scop_index,
            reason: format!("the schedule for {config} violates a dependence; refusing to emit it"),
        });
    }
    Ok((result, tiling.diamonds.get()))
}

/// With `priv=1`: the model with the SCoP's scalars privatized (`priv=2`:
/// and its temporary arrays; `dead`:
/// those whose value after it is dead) and the
/// schedule of `config` on it, refined from `base` (its hyperplanes, when
/// already computed). `Ok(Err(note))` when there is no scalar to
/// privatize or no legal schedule with them private (the schedule would
/// not keep their live ranges apart): the configuration then runs
/// without privatization, and the note says why.
pub(crate) fn privatized<'c>(
    model: &Model<'c>,
    scop: &Scop,
    dead: &[String],
    config: &Config,
    base: Option<&Schedule<'c>>,
) -> Result<Result<(Model<'c>, Schedule<'c>), String>, EngineError> {
    let arrays = config.privatize == Privatize::Arrays;
    let what = if arrays {
        "scalar or temporary array"
    } else {
        "scalar"
    };
    let field = format!("priv={}", config.privatize);
    let Some(private) = model.privatized(scop, dead, arrays)? else {
        return Ok(Err(format!(
            "{field} left out: the SCoP writes no {what} polytune can privatize"
        )));
    };
    let made = match base {
        Some(b) => refine(&private, scop.index, b, config),
        None => schedule(&private, scop.index, config),
    };
    match made {
        Ok(s) => Ok(Ok((private, s))),
        Err(EngineError::Isl(e)) => Err(e.into()),
        Err(e) => Ok(Err(format!(
            "{field} left out: no legal schedule with the {what}s private ({})",
            e.reason()
        ))),
    }
}

/// Applies `f` to every node, outermost first; `f` must return a node at
/// the same position.
fn walk<'c>(
    node: &ScheduleNode<'c>,
    f: &mut dyn FnMut(ScheduleNode<'c>) -> Result<ScheduleNode<'c>, IslError>,
) -> Result<ScheduleNode<'c>, IslError> {
    let mut node = f(node.clone())?;
    for i in 0..node.n_children()? {
        node = walk(&node.child(i)?, f)?.parent()?;
    }
    Ok(node)
}

/// Pre-vectorization: in a permutable band whose innermost member is not
/// parallel, move the innermost parallel member to the innermost position.
fn sink_parallel_member(node: ScheduleNode<'_>) -> Result<ScheduleNode<'_>, IslError> {
    if node.kind()? != NodeKind::Band || !node.band_permutable()? {
        return Ok(node);
    }
    let n = node.band_n_member()?;
    if n < 2 || node.band_coincident(n - 1)? {
        return Ok(node);
    }
    let coincident: Vec<bool> = (0..n)
        .map(|k| node.band_coincident(k))
        .collect::<Result<_, _>>()?;
    let Some(k) = coincident.iter().rposition(|&c| c) else {
        return Ok(node);
    };
    let mut order: Vec<usize> = (0..n).filter(|&m| m != k).collect();
    order.push(k);
    permute_band(node, &order, &coincident)
}

/// Replaces a permutable band by the same members in `order`.
fn permute_band<'c>(
    node: ScheduleNode<'c>,
    order: &[usize],
    coincident: &[bool],
) -> Result<ScheduleNode<'c>, IslError> {
    let partial = node.band_partial_schedule()?;
    let mut permuted = partial.clone();
    for (pos, &from) in order.iter().enumerate() {
        permuted = permuted.set(pos, &partial.get(from)?)?;
    }
    let mut band = node.delete()?.insert_partial_schedule(&permuted)?;
    band = band.band_set_permutable(true)?;
    for (pos, &from) in order.iter().enumerate() {
        band = band.band_set_coincident(pos, coincident[from])?;
    }
    Ok(band)
}

/// What tiling does to each permutable band.
struct Tiling<'m, 'c> {
    model: &'m Model<'c>,
    sizes: [i64; 3],
    wavefront: bool,
    /// Diamond tiles for time bands (`tt=diamond`), where they are legal.
    diamond: bool,
    /// How many bands took them.
    diamonds: std::cell::Cell<usize>,
}

/// Tiles every permutable band (first three members by the configured
/// sizes, deeper members by 1), and wavefronts the tile band when asked
/// and its outermost tile loop is not parallel. With `tt=diamond`, a
/// time band whose first two members are tiled gets diamond tiles
/// ([`diamond`]) instead, wavefronted always.
fn tile<'c>(node: &ScheduleNode<'c>, t: &Tiling<'_, 'c>) -> Result<ScheduleNode<'c>, IslError> {
    if node.kind()? == NodeKind::Band && node.band_permutable()? {
        let n = node.band_n_member()?;
        let band_sizes: Vec<i64> = (0..n)
            .map(|k| t.sizes.get(k).copied().unwrap_or(1))
            .collect();
        if band_sizes.iter().any(|&s| s > 1) {
            let slopes = if t.diamond && band_sizes[..2.min(n)].iter().all(|&s| s > 1) {
                diamond::slopes(t.model, node)?
            } else {
                None
            };
            // The point band (the tile's only child).
            let mut point = match slopes {
                Some(ab) => {
                    t.diamonds.set(t.diamonds.get() + 1);
                    diamond::tile(node.clone(), &band_sizes, ab)?
                }
                None => {
                    let mut tiles = node.band_tile(&band_sizes)?;
                    if t.wavefront && n >= 2 && !tiles.band_coincident(0)? {
                        tiles = skew_outer(tiles)?;
                    }
                    tiles.child(0)?
                }
            };
            for i in 0..point.n_children()? {
                point = tile(&point.child(i)?, t)?.parent()?;
            }
            return point.parent();
        }
    }
    let mut node = node.clone();
    for i in 0..node.n_children()? {
        node = tile(&node.child(i)?, t)?.parent()?;
    }
    Ok(node)
}

/// Wavefront: the outer member becomes the sum of the first two. In a
/// permutable band every unsatisfied dependence has non-negative distances,
/// so the new outer member carries every dependence the second one had and
/// the second becomes parallel.
fn skew_outer(band: ScheduleNode<'_>) -> Result<ScheduleNode<'_>, IslError> {
    let n = band.band_n_member()?;
    let coincident: Vec<bool> = (0..n)
        .map(|k| band.band_coincident(k))
        .collect::<Result<_, _>>()?;
    let partial = band.band_partial_schedule()?;
    let skewed = partial.set(0, &partial.get(0)?.add(&partial.get(1)?)?)?;
    let mut b = band.delete()?.insert_partial_schedule(&skewed)?;
    b = b.band_set_permutable(true)?;
    for (k, &c) in coincident.iter().enumerate() {
        b = b.band_set_coincident(k, c || k == 1)?;
    }
    Ok(b)
}

/// The model of a function `f(params)` whose body is one SCoP `body`
/// (iterators `t`, `i`, `j`, `k` declared): the transform modules' tests.
#[cfg(test)]
pub(crate) fn test_model<'c>(ctx: &'c crate::isl::Ctx, params: &str, body: &str) -> Model<'c> {
    let text =
        format!("void f({params}) {{ int t, i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}\n");
    let scop = crate::frontend::parse_source(
        std::path::Path::new("t.c"),
        text,
        &crate::frontend::Options::default(),
    )
    .unwrap()
    .scops
    .remove(0);
    Model::new(ctx, &scop, None).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::{Options, parse_source};
    use crate::isl::Ctx;
    use std::path::Path;

    fn model_of<'c>(ctx: &'c Ctx, body: &str) -> (crate::frontend::scop::Scop, Model<'c>) {
        let text = format!(
            "void f(int n, double A[9][9], double B[9][9]) {{ int i, j, k, t;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        );
        let scop = parse_source(Path::new("t.c"), text, &Options::default())
            .unwrap()
            .scops
            .remove(0);
        let m = Model::new(ctx, &scop, None).unwrap();
        (scop, m)
    }

    #[test]
    fn every_config_yields_a_legal_schedule() {
        let ctx = Ctx::new();
        let (_, m) = model_of(
            &ctx,
            "for (t = 0; t < n; t++) { for (i = 1; i < n - 1; i++) B[0][i] = A[0][i - 1] + A[0][i + 1]; for (i = 1; i < n - 1; i++) A[0][i] = B[0][i]; }",
        );
        for c in Config::all()
            .iter()
            .filter(|c| !c.omp && !c.simd && !c.unroll.is_some())
        {
            let s = schedule(&m, 0, c).unwrap();
            assert!(m.respects(&s.map().unwrap()).unwrap(), "{c}");
        }
    }
}
