//! Scalar privatization (`priv=1`, beyond the paper's space): the
//! dependences of a SCoP once the scalars it writes may reorder their
//! live ranges.
//!
//! A scalar written in a SCoP serializes it: every write goes to one
//! location, so the anti and output dependences on it order every
//! iteration of every loop around it (ludcmp's `w`, durbin's `sum`).
//! [`Model::privatized`] drops those memory-based dependences for the
//! scalars it can follow (written by plain assignments, never inside a
//! compound statement's loops) and keeps the value-based flow
//! dependences on them: the live ranges, each from a write to a read of
//! its value. A schedule is then legal when it respects the remaining
//! dependences *and* keeps the live ranges of each scalar apart
//! ([`Private::apart`]): no write to the scalar runs between a write and
//! a read of its value, none runs before a read of the value it had on
//! entry, and none after a last write (the value the code after the SCoP
//! sees). One storage location then still suffices when the code runs in
//! order; a loop whose iterations run at once gives each its own copy,
//! which is right when every live range that touches the loop lies in
//! one iteration and the loop holds no read of the entry value and no
//! last write ([`Model::private_in`]).
//!
//! With `priv=2` the same holds element by element for the arrays whose
//! every read takes a value written before in the SCoP (temporaries:
//! doitgen's `sum[p]`, reset for every `(r, q)`), with one difference: a
//! loop may hold the last writes of such an array when they all lie in
//! one iteration of it. That iteration then works on the array itself
//! (no other iteration touches it: each has its copy), the others on
//! copies ([`InLoop::last`]).

use super::{Dependences, EngineError, Model, memory};
use crate::frontend::scop::Scop;
use crate::isl::{self, IslError, UnionMap, UnionSet};

/// What the legality of a privatized model needs about its scalars.
#[derive(Clone)]
pub struct Private<'c> {
    pub scalars: Vec<Scalar<'c>>,
    /// Every dependence of the unprivatized model: the facts that do not
    /// know about private copies (unroll-and-jam, register blocking)
    /// still rest on them.
    pub full: UnionMap<'c>,
    /// The memory dependences dropped, and the live ranges they order:
    /// the scheduler's conditional validity and conditions.
    pub dropped: UnionMap<'c>,
    pub live: UnionMap<'c>,
}

/// One privatized scalar, or array (`priv=2`).
#[derive(Clone)]
pub struct Scalar<'c> {
    /// Its C name.
    pub name: String,
    /// Its number of subscripts (0: a scalar).
    pub rank: usize,
    /// The instances that write it.
    pub writes: UnionSet<'c>,
    /// Its live ranges: each write to the reads of its value.
    pub live: UnionMap<'c>,
    /// Every pair of its accesses in the original order but two reads,
    /// split in those that read the entry value or make a last write
    /// (`edges`: their order must stay) and the others (`inside`: their
    /// order must stay within an iteration that holds live ranges).
    pub inside: UnionMap<'c>,
    pub edges: UnionMap<'c>,
    /// The instances that read the value it had before the SCoP.
    pub entry: UnionSet<'c>,
    /// The instances whose write no later write overwrites: the value the
    /// code after the SCoP may read.
    pub last: UnionSet<'c>,
}

impl<'c> Private<'c> {
    /// Whether `schedule` keeps every scalar's live ranges apart (see the
    /// module's comment). Checked on distances, as the model's legality
    /// is: let `d` be the number of outer schedule dimensions every live
    /// range of the scalar stays within (an iteration of the first `d`
    /// dimensions holds each whole). Then live ranges in different such
    /// iterations cannot interleave, and it suffices that the scalar's
    /// accesses inside each iteration keep their original order (every
    /// pair of them but two reads), that its reads of the entry value
    /// still come before every write and its last writes after every
    /// access. `false` when the schedule's shape does not allow the test.
    pub(crate) fn apart(&self, schedule: &UnionMap<'c>) -> Result<bool, IslError> {
        const ZERO: isl::Bound = (Some(0), Some(0));
        const NEG: isl::Bound = (None, Some(-1));
        const POS: isl::Bound = (Some(1), None);
        const ANY: isl::Bound = (None, None);
        // The deltas lexicographically at most zero once their first `d`
        // coordinates are zero.
        let not_after = |d: usize, n: usize| -> Vec<Vec<isl::Bound>> {
            let mut out: Vec<Vec<isl::Bound>> = (d..n)
                .map(|k| {
                    let mut b = vec![ZERO; k];
                    b.push(NEG);
                    b
                })
                .collect();
            out.push(vec![ZERO; n]);
            out
        };
        if schedule.range_dims().is_err() {
            return Ok(false);
        }
        for s in &self.scalars {
            let within = match Model::distances_of(&s.live, schedule)? {
                None => usize::MAX,
                Some((deltas, n)) => {
                    let mut d = 0;
                    while d < n {
                        let mut lead = vec![ANY; d];
                        lead.push(NEG);
                        let mut up = vec![ANY; d];
                        up.push(POS);
                        let moves = deltas.boxes_like(&[lead, up])?;
                        if !deltas.intersect(&moves)?.is_empty()? {
                            break;
                        }
                        d += 1;
                    }
                    d
                }
            };
            for (pairs, d) in [(&s.inside, within), (&s.edges, 0)] {
                if let Some((deltas, n)) = Model::distances_of(pairs, schedule)? {
                    let bad = deltas.boxes_like(&not_after(d.min(n), n))?;
                    if !deltas.intersect(&bad)?.is_empty()? {
                        return Ok(false);
                    }
                }
            }
        }
        Ok(true)
    }
}

/// A privatized scalar or array a loop writes, which each iteration of
/// the loop can have a copy of.
#[derive(Clone)]
pub struct InLoop<'c> {
    /// Its C name and number of subscripts (0: a scalar).
    pub name: String,
    pub rank: usize,
    /// An array's last writes under the loop (the values the code after
    /// the SCoP reads), when it holds some: all in one iteration of the
    /// loop, which then works on the array itself.
    pub last: Option<UnionSet<'c>>,
}

/// The privatized scalars and arrays written under a loop, given
/// `schedule` (the instances under it to its schedule dimensions, itself
/// last): `None` when one of them cannot be private to the loop's
/// iterations.
pub(crate) fn private_in<'c>(
    p: &Private<'c>,
    schedule: &UnionMap<'c>,
) -> Result<Option<Vec<InLoop<'c>>>, IslError> {
    let under = schedule.domain()?;
    let same = schedule.apply_range(&schedule.reverse()?)?;
    let mut out = Vec::new();
    for s in &p.scalars {
        if s.writes.intersect(&under)?.is_empty()? {
            continue;
        }
        let touching = s
            .live
            .intersect_domain(&under)?
            .union(&s.live.intersect_range(&under)?)?;
        if !touching.is_subset(&same)? || !s.entry.intersect(&under)?.is_empty()? {
            return Ok(None);
        }
        let last = s.last.intersect(&under)?;
        let last = if last.is_empty()? {
            None
        } else if s.rank > 0 && one_iteration(&last, schedule)? {
            Some(last)
        } else {
            return Ok(None);
        };
        out.push(InLoop {
            name: s.name.clone(),
            rank: s.rank,
            last,
        });
    }
    Ok(Some(out))
}

/// Whether the instances `of` lie in one iteration of the loop whose
/// schedule is `schedule` (and of the loops around it).
fn one_iteration<'c>(of: &UnionSet<'c>, schedule: &UnionMap<'c>) -> Result<bool, IslError> {
    let points = of.apply(schedule)?;
    points.is_subset(&points.lexmin()?)
}

impl<'c> Model<'c> {
    /// The model with the scalars of `scop` privatized (see the module's
    /// comment); `None` when the SCoP writes no scalar it can follow.
    /// `dead` names the scalars whose value the code after the SCoP never
    /// reads (`frontend::liveness`): their last writes need not stay last.
    /// With `arrays` (`priv=2`), also the arrays of [`candidates`] whose
    /// every read takes a value written before in the SCoP.
    pub(crate) fn privatized(
        &self,
        scop: &Scop,
        dead: &[String],
        arrays: bool,
    ) -> Result<Option<Model<'c>>, EngineError> {
        let ctx = self.ctx;
        let tree = &self.original_tree;
        let set_of = |names: &[(&str, usize)]| {
            let pieces: Vec<String> = names
                .iter()
                .map(|&(n, rank)| {
                    let dims: Vec<String> = (0..rank).map(|d| format!("i{d}")).collect();
                    format!("{}[{}]", isl::mangle(n), dims.join(", "))
                })
                .collect();
            UnionSet::parse(ctx, &format!("{{ {} }}", pieces.join("; ")))
        };
        let reads = UnionMap::parse(ctx, &scop.reads())?.intersect_domain(&self.domain)?;
        let must = UnionMap::parse(ctx, &scop.writes())?.intersect_domain(&self.domain)?;
        // Inside the user's team the loops are work-shared (`omp for`),
        // which cannot fall back to one thread where the copies would not
        // fit the stacks: arrays stay shared there.
        let names = candidates(scop, arrays && scop.team.is_none());
        let names = temporaries(names, &set_of, &reads, &must, tree)?;
        if names.is_empty() {
            return Ok(None);
        }
        let all_scalars = set_of(&names)?;
        let may = if scop.has_may_writes() {
            Some(UnionMap::parse(ctx, &scop.may_writes())?.intersect_domain(&self.domain)?)
        } else {
            None
        };
        // The memory dependences of everything else, as the model computes
        // them for all data.
        let rest = |m: &UnionMap<'c>| m.subtract_range(&all_scalars);
        let (_, overwrite) = memory(
            &rest(&reads)?,
            &rest(&must)?,
            may.as_ref().map(rest).transpose()?.as_ref(),
            tree,
        )?;
        let output = overwrite.must.coalesce()?;
        let anti = overwrite.may.subtract(&output)?.coalesce()?;
        let all = self.deps.flow.union(&overwrite.may)?.coalesce()?;

        let mut scalars = Vec::new();
        let mut dropped = UnionMap::parse(ctx, "{ }")?;
        let mut live_all = UnionMap::parse(ctx, "{ }")?;
        for &(name, rank) in &names {
            let one = set_of(&[(name, rank)])?;
            let r = reads.intersect_range(&one)?;
            let w = must.intersect_range(&one)?;
            let live = isl::dataflow(&r, Some(&w), None, tree)?.must;
            let over = isl::dataflow(&w, Some(&w), Some(&r), tree)?;
            let writes = w.domain()?;
            let entry = r.domain()?.subtract(&live.range()?)?;
            // (isl reports a write followed by reads before the next write
            // as a may source of that write only: the last writes are
            // those with no next write at all.)
            let last = if dead.iter().any(|d| d == name) {
                UnionSet::parse(ctx, "{ }")?
            } else {
                let next = isl::dataflow(&w, Some(&w), None, tree)?.must;
                writes.subtract(&next.domain()?)?
            };
            // Every earlier write of each access, and every earlier read
            // of each write (may sources kill nothing).
            let accesses = r.union(&w)?;
            let order = isl::dataflow(&accesses, None, Some(&w), tree)?
                .may
                .union(&isl::dataflow(&w, None, Some(&r), tree)?.may)?;
            let edges = order
                .intersect_domain(&entry)?
                .union(&order.intersect_range(&last)?)?
                .coalesce()?;
            let inside = order.subtract(&edges)?.coalesce()?;
            dropped = dropped.union(&over.may)?;
            live_all = live_all.union(&live)?;
            scalars.push(Scalar {
                name: name.to_string(),
                rank,
                writes,
                live: live.coalesce()?,
                inside,
                edges,
                entry: entry.coalesce()?,
                last: last.coalesce()?,
            });
        }
        let reduction = self.deps.reduction.intersect(&all)?.coalesce()?;
        Ok(Some(Model {
            ctx,
            context: self.context.clone(),
            guard: self.guard.clone(),
            alias: self.alias.clone(),
            domain: self.domain.clone(),
            reads: self.reads.clone(),
            writes: self.writes.clone(),
            original: self.original.clone(),
            original_tree: self.original_tree.clone(),
            deps: Dependences {
                flow: self.deps.flow.clone(),
                anti,
                output,
                all,
                reduction,
                same_updates: self.deps.same_updates.clone(),
                updates: self.deps.updates.clone(),
            },
            private: Some(Private {
                scalars,
                full: self.deps.all.clone(),
                dropped: dropped.coalesce()?,
                live: live_all.coalesce()?,
            }),
        }))
    }
}

/// The elements of the named candidates (C name and rank each).
type ElementsOf<'f, 'c> = dyn Fn(&[(&str, usize)]) -> Result<UnionSet<'c>, IslError> + 'f;

/// The candidates worth privatizing: every scalar, and the arrays that
/// are temporaries: read, no read takes a value from before the SCoP,
/// and there are memory dependences on them to drop (an output array has
/// none). `set_of` names a candidate's elements.
fn temporaries<'n, 'c>(
    names: Vec<(&'n str, usize)>,
    set_of: &ElementsOf<'_, 'c>,
    reads: &UnionMap<'c>,
    must: &UnionMap<'c>,
    tree: &isl::Schedule<'c>,
) -> Result<Vec<(&'n str, usize)>, IslError> {
    let mut kept = Vec::new();
    for (name, rank) in names {
        let one = set_of(&[(name, rank)])?;
        let written = must.intersect_range(&one)?;
        let read = reads.intersect_range(&one)?;
        if rank == 0
            || (!read.is_empty()?
                && isl::unsourced(&read, &written, tree)?.is_empty()?
                && !isl::dataflow(&written, Some(&written), Some(&read), tree)?
                    .may
                    .is_empty()?)
        {
            kept.push((name, rank));
        }
    }
    Ok(kept)
}

/// The scalars a SCoP writes that privatization can follow, and with
/// `arrays` its arrays too, with their ranks: written by a plain
/// assignment, never touched inside a compound statement's loops (those
/// accesses are over-approximated) nor maybe-written; an array also named
/// plainly in C (no member, no delinearized or expanded form: its copy
/// shadows the name).
pub(super) fn candidates(scop: &Scop, arrays: bool) -> Vec<(&str, usize)> {
    scop.arrays
        .iter()
        .filter(|a| a.written && (a.rank == 0 || arrays))
        .filter(|a| {
            a.rank == 0
                || (a
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && scop.delinearized.iter().all(|d| d.array != a.name)
                    && scop.expanded.iter().all(|x| x.array != a.name))
        })
        .filter(|a| {
            scop.statements.iter().all(|s| {
                s.may_writes.iter().all(|x| x.array != a.name)
                    && s.reads.iter().chain(&s.writes).all(|x| {
                        x.array != a.name || (x.inner.is_none() && x.subscripts.len() == a.rank)
                    })
            })
        })
        .map(|a| (a.name.as_str(), a.rank))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::scop;
    use super::*;
    use crate::isl::Ctx;

    const LU: &str = "for (i = 0; i < n; i++) for (j = 0; j < n; j++) { w = A[i][j]; \
                      for (k = 0; k < j; k++) w -= A[i][k] * A[k][j]; A[i][j] = w; }";

    #[test]
    fn a_scalar_temporary_loses_its_memory_dependences_only() {
        let ctx = Ctx::new();
        let s = scop(LU);
        let m = Model::new(&ctx, &s, None).unwrap();
        let p = m
            .privatized(&s, &[], false)
            .unwrap()
            .expect("w is a scalar it can follow");
        let private = p.private.as_ref().unwrap();
        assert_eq!(private.scalars.len(), 1);
        assert_eq!(private.scalars[0].name, "w");
        // Fewer dependences, every flow dependence kept.
        assert!(p.deps.all.is_subset(&m.deps.all).unwrap());
        assert!(!m.deps.all.is_subset(&p.deps.all).unwrap());
        assert!(m.deps.flow.is_subset(&p.deps.all).unwrap());
        // The original order keeps the live ranges apart.
        assert!(p.respects(&m.original).unwrap());
        // Running every k first interleaves the live ranges of different
        // (i, j): the A dependences allow the order below for i = 0 ... but
        // w's value would be overwritten.
        let interleaved = UnionMap::parse(
            &ctx,
            "{ S0[i, j] -> [i, 0, j, 0]; S1[i, j, k] -> [i, 1, k, j]; S2[i, j] -> [i, 2, j, 0] }",
        )
        .unwrap();
        assert!(!p.private.as_ref().unwrap().apart(&interleaved).unwrap());
        assert!(!p.respects(&interleaved).unwrap());
    }

    #[test]
    fn a_loop_holds_a_scalar_privately_when_its_live_ranges_stay_inside() {
        let ctx = Ctx::new();
        let s = scop(LU);
        let m = Model::new(&ctx, &s, None).unwrap();
        let p = m.privatized(&s, &[], false).unwrap().unwrap();
        let private = p.private.as_ref().unwrap();
        // The j loop: each (i, j) holds a whole live range, but the last
        // write (i = n - 1, j = n - 1) is in it: its value leaves the SCoP.
        let j = UnionMap::parse(
            &ctx,
            "[n] -> { S0[i, j] -> [i, j]; S1[i, j, k] -> [i, j]; S2[i, j] -> [i, j] }",
        )
        .unwrap()
        .intersect_domain(&p.domain)
        .unwrap();
        assert_eq!(names(private_in(private, &j).unwrap()), None);
        // Dead after the SCoP, it can: each (i, j) gets its own copy.
        let dead = m
            .privatized(&s, &["w".to_string()], false)
            .unwrap()
            .unwrap();
        let mine = dead.private.as_ref().unwrap();
        assert_eq!(
            names(private_in(mine, &j).unwrap()),
            Some(vec!["w".to_string()])
        );
        // The k loop: the live range runs across its iterations.
        let k = UnionMap::parse(&ctx, "{ S1[i, j, k] -> [i, j, k] }").unwrap();
        assert_eq!(names(private_in(private, &k).unwrap()), None);
        // A loop that does not write w needs no copy of it.
        let none = UnionMap::parse(&ctx, "{ S9[i] -> [i] }").unwrap();
        assert_eq!(names(private_in(private, &none).unwrap()), Some(vec![]));
    }

    #[test]
    fn a_value_read_on_entry_or_left_to_the_code_after_stays_in_order() {
        let ctx = Ctx::new();
        // x[0] reads w's value from before the SCoP; the last write of
        // w is S1's at i = n - 1.
        let s = scop("x[0] = w; for (i = 0; i < n; i++) { w = x[i]; A[i][0] = w; }");
        let m = Model::new(&ctx, &s, None).unwrap();
        let p = m.privatized(&s, &[], false).unwrap().unwrap();
        let private = p.private.as_ref().unwrap();
        assert!(p.respects(&m.original).unwrap());
        // The read of the entry value after a write.
        let late = UnionMap::parse(
            &ctx,
            "{ S0[] -> [1, 0, 0]; S1[i] -> [0, i, 0]; S2[i] -> [0, i, 1] }",
        )
        .unwrap();
        assert!(!private.apart(&late).unwrap());
        // The loop reversed: the last write is no longer last.
        let reversed = UnionMap::parse(
            &ctx,
            "{ S0[] -> [0, 0, 0]; S1[i] -> [1, -i, 0]; S2[i] -> [1, -i, 1] }",
        )
        .unwrap();
        assert!(!private.apart(&reversed).unwrap());
    }

    /// The names of what a loop holds privately.
    fn names(v: Option<Vec<InLoop<'_>>>) -> Option<Vec<String>> {
        v.map(|v| v.into_iter().map(|c| c.name).collect())
    }

    /// doitgen's nest: `sum` is reset for every (r, q), `A` read before
    /// it is written.
    fn doitgen() -> Scop {
        let text = "void f(int n, double A[9][9][9], double C[9][9], double sum[9]) { int r, q, p, s;\n#pragma scop\nfor (r = 0; r < n; r++) for (q = 0; q < n; q++) { for (p = 0; p < n; p++) { sum[p] = 0; for (s = 0; s < n; s++) sum[p] += A[r][q][s] * C[s][p]; } for (p = 0; p < n; p++) A[r][q][p] = sum[p]; }\n#pragma endscop\n}\n";
        crate::frontend::parse_source(
            std::path::Path::new("t.c"),
            text.to_string(),
            &crate::frontend::Options::default(),
        )
        .unwrap()
        .scops
        .remove(0)
    }

    #[test]
    fn a_temporary_array_is_private_to_the_loop_that_resets_it() {
        let ctx = Ctx::new();
        let s = doitgen();
        let m = Model::new(&ctx, &s, None).unwrap();
        // Scalars only: nothing to privatize.
        assert!(m.privatized(&s, &[], false).unwrap().is_none());
        let p = m
            .privatized(&s, &[], true)
            .unwrap()
            .expect("sum is a temporary");
        let private = p.private.as_ref().unwrap();
        let names: Vec<(&str, usize)> = private
            .scalars
            .iter()
            .map(|s| (s.name.as_str(), s.rank))
            .collect();
        assert_eq!(names, [("sum", 1)], "A is read before it is written");
        assert!(p.deps.all.is_subset(&m.deps.all).unwrap());
        assert!(!m.deps.all.is_subset(&p.deps.all).unwrap());
        assert!(p.respects(&m.original).unwrap());
        // The loop over r: every live range of sum within an iteration,
        // the last writes (r = q = n - 1) all in one.
        let r = UnionMap::parse(
            &ctx,
            "[n] -> { S0[r, q, p] -> [r]; S1[r, q, p, s] -> [r]; S2[r, q, p] -> [r] }",
        )
        .unwrap()
        .intersect_domain(&p.domain)
        .unwrap();
        let inside = private_in(private, &r).unwrap().expect("private to r");
        assert_eq!(inside.len(), 1);
        assert_eq!((inside[0].name.as_str(), inside[0].rank), ("sum", 1));
        assert!(inside[0].last.is_some());
        // The first loop over p: the live ranges run on to the second.
        let p1 = UnionMap::parse(
            &ctx,
            "[n] -> { S0[r, q, p] -> [r, q, p]; S1[r, q, p, s] -> [r, q, p] }",
        )
        .unwrap()
        .intersect_domain(&p.domain)
        .unwrap();
        assert!(private_in(private, &p1).unwrap().is_none());
        // Interleaving two (r, q) iterations' uses of sum breaks it.
        let interleaved = UnionMap::parse(
            &ctx,
            "{ S0[r, q, p] -> [0, p, r, q, 0]; S1[r, q, p, s] -> [0, p, r, q, 1 + s]; S2[r, q, p] -> [1, r, q, p, 0] }",
        )
        .unwrap();
        assert!(!private.apart(&interleaved).unwrap());
    }
}
