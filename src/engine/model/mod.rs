//! The polyhedral model of a SCoP in isl, and its dependences.
//!
//! Legality needs every ordering constraint of the original program:
//! value-based flow dependences (read after the *last* write), plus the
//! anti (write after read) and output (write after write) dependences of
//! the memory, since polytune does not rename or expand storage. The
//! memory-based ones are kept between *adjacent* accesses only (a read
//! and the next write, a write and the next write); every other memory
//! dependence is a chain of those, so the set constrains exactly as much.
//!
//! `context.rs` holds the parameter values the model is valid for and the
//! run-time check of them; `private.rs` the model with the scalars the
//! SCoP writes privatized (`priv=1`), which drops their memory-based
//! dependences and checks instead that their live ranges stay apart.

mod alias;
mod context;
mod directive;
mod expand;
mod private;

use crate::frontend::scop::ast::{Span, Stmt, StmtKind};
use crate::frontend::scop::{Scop, isl_names};
use crate::isl::{self, Ctx, IslError, MultiUnionPwAff, Schedule, Set, UnionMap, UnionSet};
pub use alias::{AliasCheck, Reach};
use context::contexts;
pub use context::{default_context, run_time_check};
pub(crate) use directive::prove as prove_directives;
pub(crate) use private::{InLoop, Private, private_in};

/// Why the engine cannot handle a SCoP.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    Isl(#[from] IslError),
    #[error("SCoP {scop}: {reason}")]
    Unsupported { scop: usize, reason: String },
    /// A bug of polytune (or isl) caught before it could do harm: the
    /// result failed one of the engine's own checks, so it is not emitted.
    #[error("SCoP {scop}: internal error: {reason}")]
    Internal { scop: usize, reason: String },
    #[error(
        "the parameter context `{text}` is not valid: {reason}\n  help: write it in isl notation over the SCoP's parameters, e.g. `[n] -> {{ : n >= 1 }}`"
    )]
    Context { text: String, reason: String },
    /// An assumption of the model that no parameter value satisfies;
    /// `span` locates the C construct that needs it.
    #[error("SCoP {scop}: {reason}")]
    Assumption {
        scop: usize,
        span: Span,
        reason: String,
    },
}

impl EngineError {
    /// What went wrong, without the SCoP's number: for a note about a
    /// SCoP already named.
    pub(crate) fn reason(&self) -> String {
        match self {
            EngineError::Unsupported { reason, .. }
            | EngineError::Internal { reason, .. }
            | EngineError::Assumption { reason, .. } => reason.clone(),
            other => other.to_string(),
        }
    }
}

/// The dependences that constrain any reordering.
pub struct Dependences<'c> {
    /// Read after write, value-based.
    pub flow: UnionMap<'c>,
    /// Write after read: each read to the next write of its element.
    pub anti: UnionMap<'c>,
    /// Write after write: each write to the next write of its element.
    pub output: UnionMap<'c>,
    /// All of the above.
    pub all: UnionMap<'c>,
    /// The part of `all` between two updates of one accumulator by one
    /// reduction statement (`Scop::reductions`): what a reduction may
    /// reorder once reassociated.
    pub reduction: UnionMap<'c>,
    /// Every pair of instances of one reduction statement that update one
    /// element, in either order (a superset of `reduction`'s pairs).
    pub same_updates: UnionMap<'c>,
    /// Each instance of a reduction statement to the element it updates.
    pub updates: UnionMap<'c>,
}

/// A SCoP in isl: domains, accesses, original schedule, dependences.
pub struct Model<'c> {
    pub ctx: &'c Ctx,
    /// The parameter values the model is valid and proven for: the
    /// context (default: every parameter >= 1, or the user's) intersected
    /// with the assumptions of the model (C divisions with non-negative
    /// dividends, unsigned values in the range of their type).
    pub context: Set<'c>,
    /// `context` when it is not every parameter value: the generated code
    /// must check it at run time and fall back to the original.
    pub guard: Option<Set<'c>>,
    /// The run-time check that the arrays of `Scop::alias_checks` do not
    /// overlap where the SCoP reaches them (empty without pairs).
    pub alias: AliasCheck,
    pub domain: UnionSet<'c>,
    pub reads: UnionMap<'c>,
    pub writes: UnionMap<'c>,
    pub original: UnionMap<'c>,
    /// The original schedule as a tree (sequences and loop bands).
    pub original_tree: Schedule<'c>,
    pub deps: Dependences<'c>,
    /// With privatized scalars ([`Model::privatized`]): what legality
    /// needs about them beyond `deps`, which no longer holds their
    /// memory-based dependences.
    pub private: Option<Private<'c>>,
}

impl<'c> Model<'c> {
    /// Builds the model; `context` overrides the default parameter
    /// context (isl notation, e.g. `[n] -> { : n >= 16 }`).
    pub fn new(ctx: &'c Ctx, scop: &Scop, context: Option<&str>) -> Result<Model<'c>, EngineError> {
        let (context, guard) = contexts(ctx, scop, context)?;
        let domain = UnionSet::parse(ctx, &scop.domains())?.intersect_params(&context)?;
        let reads = UnionMap::parse(ctx, &scop.reads())?.intersect_domain(&domain)?;
        let must = UnionMap::parse(ctx, &scop.writes())?.intersect_domain(&domain)?;
        let original = UnionMap::parse(ctx, &scop.schedules())?.intersect_domain(&domain)?;

        let original_tree = original_tree(ctx, scop, &domain)?;
        let may = if scop.has_may_writes() {
            Some(UnionMap::parse(ctx, &scop.may_writes())?.intersect_domain(&domain)?)
        } else {
            None
        };
        let (flow, overwrite) = memory(&reads, &must, may.as_ref(), &original_tree)?;
        let writes = match &may {
            Some(may) => must.union(may)?,
            None => must,
        };
        let alias = alias::alias_check(ctx, scop, &context, &reads, &writes)?;
        // For every write, the previous write of its element (output) and
        // the reads since that write (anti). These adjacent pairs imply all
        // the others by transitivity, so respecting them is enough for
        // legality, parallelism and permutability, at a fraction of the
        // size of all memory-based pairs.
        let output = overwrite.must.coalesce()?;
        let anti = overwrite.may.subtract(&output)?.coalesce()?;
        let all = flow.union(&overwrite.may)?.coalesce()?;
        let mut reduction = UnionMap::parse(ctx, "{ }")?;
        let mut same_updates = reduction.clone();
        let mut updates = reduction.clone();
        for r in scop.reductions() {
            let s = scop
                .statements
                .iter()
                .find(|s| s.id == r.stmt)
                .expect("a reduction is a statement");
            let w = UnionMap::parse(ctx, &scop.writes_of(s))?.intersect_domain(&domain)?;
            let same = w.apply_range(&w.reverse()?)?;
            reduction = reduction.union(&all.intersect(&same)?)?;
            same_updates = same_updates.union(&same)?;
            updates = updates.union(&w)?;
        }
        Ok(Model {
            ctx,
            context,
            guard,
            alias,
            domain,
            reads,
            writes,
            original,
            original_tree,
            deps: Dependences {
                flow,
                anti,
                output,
                all,
                reduction: reduction.coalesce()?,
                same_updates: same_updates.coalesce()?,
                updates: updates.coalesce()?,
            },
            private: None,
        })
    }

    /// Whether `schedule` (statement instances to time vectors) respects
    /// every dependence: each source runs strictly before its sink.
    /// With privatized scalars, also whether it keeps their live ranges
    /// apart ([`Private::apart`]).
    pub fn respects(&self, schedule: &UnionMap<'c>) -> Result<bool, IslError> {
        if let Some(p) = &self.private
            && !p.apart(schedule)?
        {
            return Ok(false);
        }
        if self.deps.all.is_empty()? {
            return Ok(true);
        }
        match self.respects_by_distances(schedule) {
            Ok(Some(answer)) => Ok(answer),
            _ => self.respects_by_order(schedule),
        }
    }

    /// [`Model::distances`] of every dependence, those a privatized
    /// model dropped included: for the facts that know nothing of private
    /// copies.
    pub(crate) fn distances_full(
        &self,
        schedule: &UnionMap<'c>,
    ) -> Result<Option<(Set<'c>, usize)>, IslError> {
        match &self.private {
            Some(p) => Self::distances_of(&p.full, schedule),
            None => self.distances(schedule),
        }
    }

    /// The dependence distances under `schedule` (the sink's time minus
    /// the source's) in one flat space, with its dimension; `None` when
    /// no dependence pair is left. `schedule` must map every statement
    /// into one time space.
    pub(crate) fn distances(
        &self,
        schedule: &UnionMap<'c>,
    ) -> Result<Option<(Set<'c>, usize)>, IslError> {
        Self::distances_of(&self.deps.all, schedule)
    }

    /// [`Model::distances`] without the reductions' own dependences.
    pub(crate) fn distances_but_reductions(
        &self,
        schedule: &UnionMap<'c>,
    ) -> Result<Option<(Set<'c>, usize)>, IslError> {
        Self::distances_of(&self.deps.all.subtract(&self.deps.reduction)?, schedule)
    }

    pub(crate) fn distances_of(
        deps: &UnionMap<'c>,
        schedule: &UnionMap<'c>,
    ) -> Result<Option<(Set<'c>, usize)>, IslError> {
        if deps.is_empty()? {
            return Ok(None);
        }
        let deltas = deps
            .apply_domain(schedule)?
            .apply_range(schedule)?
            .deltas()?;
        if deltas.is_empty()? {
            return Ok(None);
        }
        let deltas = deltas.to_set()?.flatten()?;
        let d = deltas.dims()?;
        Ok(Some((deltas, d)))
    }

    /// The definition: every dependence pair is in the schedule's strict
    /// lexicographic order. Exact for any schedule, but it builds that
    /// order between every pair of statements, which is slow.
    fn respects_by_order(&self, schedule: &UnionMap<'c>) -> Result<bool, IslError> {
        let before = schedule.lex_lt_union_map(schedule)?;
        self.deps.all.is_subset(&before)
    }

    /// The same test on distances, when every statement is scheduled into
    /// one time space (as a schedule tree's map is): a pair is ordered iff
    /// its time difference is lexicographically positive. `None` when the
    /// schedule does not have that shape.
    fn respects_by_distances(&self, schedule: &UnionMap<'c>) -> Result<Option<bool>, IslError> {
        let deps = &self.deps.all;
        let scheduled = schedule.domain()?;
        if !deps.domain()?.is_subset(&scheduled)? || !deps.range()?.is_subset(&scheduled)? {
            return Ok(Some(false));
        }
        if schedule.range_dims().is_err() {
            return Ok(None);
        }
        let Some((deltas, d)) = self.distances(schedule)? else {
            return Ok(Some(true));
        };
        if d == 0 {
            // Every instance at the same time: nothing is ordered.
            return Ok(Some(false));
        }
        // Lexicographically at most zero: a first non-zero coordinate
        // that is negative, or none.
        let zero = (Some(0), Some(0));
        let mut not_after: Vec<Vec<isl::Bound>> = (0..d)
            .map(|k| {
                let mut b = vec![zero; k];
                b.push((None, Some(-1)));
                b
            })
            .collect();
        not_after.push(vec![zero; d]);
        let bad = deltas.boxes_like(&not_after)?;
        Ok(Some(deltas.intersect(&bad)?.is_empty()?))
    }
}

/// The value-based flow dependences of `reads` on the writes, and for
/// every write the previous write of its element and the reads since
/// (isl's must and may dependences of the writes as sinks). `may` holds
/// may-writes (inside a compound statement's loops), which kill no
/// earlier write: every write since the last must-write of an element is
/// a source of its reads, and every access since then precedes its next
/// write. isl's may dependences hold them all (a must-write coscheduled
/// with another write of its element gives may dependences only).
fn memory<'c>(
    reads: &UnionMap<'c>,
    must: &UnionMap<'c>,
    may: Option<&UnionMap<'c>>,
    tree: &Schedule<'c>,
) -> Result<(UnionMap<'c>, isl::Flow<'c>), IslError> {
    Ok(match may {
        Some(may) => {
            let writes = must.union(may)?;
            let flow = isl::dataflow(reads, Some(must), Some(may), tree)?.may;
            let earlier = may.union(reads)?;
            let overwrite = isl::dataflow(&writes, Some(must), Some(&earlier), tree)?;
            (flow, overwrite)
        }
        None => {
            let flow = isl::dataflow(reads, Some(must), None, tree)?.must;
            let overwrite = isl::dataflow(must, Some(must), Some(reads), tree)?;
            (flow, overwrite)
        }
    })
}

/// The original execution order as a schedule tree: a sequence node for
/// every statement list, a one-member band for every loop.
fn original_tree<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    domain: &UnionSet<'c>,
) -> Result<Schedule<'c>, IslError> {
    // isl reads `[] -> [{ ... }]` as an empty tuple: no parameters, no
    // prefix (or the original order, and every dependence, is lost).
    let params = if scop.parameters.is_empty() {
        String::new()
    } else {
        format!("[{}] -> ", isl_names(&scop.parameters))
    };
    let built = tree_of(ctx, scop, &scop.body, 0, &params, domain)?;
    match built {
        Some(t) => Ok(t),
        None => Schedule::from_domain(domain),
    }
}

fn statement_ids(stmts: &[Stmt], out: &mut Vec<usize>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { id, .. } | StmtKind::Local { id, .. } => out.push(*id),
            StmtKind::For(l) => statement_ids(std::slice::from_ref(&l.body), out),
            StmtKind::If { then, other, .. } => {
                statement_ids(std::slice::from_ref(then), out);
                if let Some(o) = other {
                    statement_ids(std::slice::from_ref(o), out);
                }
            }
            StmtKind::Block(v) => statement_ids(v, out),
            _ => {}
        }
    }
}

fn tree_of<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    stmts: &[Stmt],
    depth: usize,
    params: &str,
    domain: &UnionSet<'c>,
) -> Result<Option<Schedule<'c>>, IslError> {
    let mut parts: Vec<Schedule<'c>> = Vec::new();
    for s in stmts {
        let part = match &s.kind {
            StmtKind::Assign { id, .. } | StmtKind::Local { id, .. } => {
                let st = &scop.statements[*id];
                let own = UnionSet::parse(ctx, &scop.domain_of(st))?.intersect(domain)?;
                Some(Schedule::from_domain(&own)?)
            }
            StmtKind::Block(v) => tree_of(ctx, scop, v, depth, params, domain)?,
            StmtKind::If { then, other, .. } => {
                let mut v = vec![(**then).clone()];
                if let Some(o) = other {
                    v.push((**o).clone());
                }
                tree_of(ctx, scop, &v, depth, params, domain)?
            }
            StmtKind::For(l) => match tree_of(
                ctx,
                scop,
                std::slice::from_ref(&l.body),
                depth + 1,
                params,
                domain,
            )? {
                None => None,
                Some(body) => {
                    let mut ids = Vec::new();
                    statement_ids(std::slice::from_ref(&l.body), &mut ids);
                    let sign = if l.step.stride.unwrap_or(1) < 0 {
                        "-"
                    } else {
                        ""
                    };
                    let pieces: Vec<String> = ids
                        .iter()
                        .map(|&id| {
                            let st = &scop.statements[id];
                            format!(
                                "{}[{}] -> [({sign}{})]",
                                st.name(),
                                isl_names(&st.iterators),
                                isl::mangle(&st.iterators[depth])
                            )
                        })
                        .collect();
                    let mupa = MultiUnionPwAff::parse(
                        ctx,
                        &format!("{params}[{{ {} }}]", pieces.join("; ")),
                    )?;
                    Some(body.insert_partial_schedule(&mupa)?)
                }
            },
            _ => None,
        };
        if let Some(p) = part {
            parts.push(p);
        }
    }
    let mut it = parts.into_iter();
    let Some(mut acc) = it.next() else {
        return Ok(None);
    };
    for p in it {
        acc = acc.sequence(&p)?;
    }
    Ok(Some(acc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    pub(super) fn scop(body: &str) -> Scop {
        let text = format!(
            "void f(int n, double A[9][9], double x[9]) {{ int i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        );
        parse_source(Path::new("t.c"), text, &Options::default())
            .unwrap()
            .scops
            .remove(0)
    }

    #[test]
    fn gemm_like_dependences() {
        let ctx = Ctx::new();
        let s = scop(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) { A[i][j] = 0; for (k = 0; k < n; k++) A[i][j] += x[k]; }",
        );
        let m = Model::new(&ctx, &s, None).unwrap();
        let expect = UnionMap::parse(
            &ctx,
            "[n] -> { S0[i, j] -> S1[i, j, 0] : 0 <= i < n and 0 <= j < n; S1[i, j, k] -> S1[i, j, k + 1] : 0 <= i < n and 0 <= j < n and 0 <= k < n - 1 }",
        )
        .unwrap();
        assert!(m.deps.flow.is_equal(&expect).unwrap(), "{}", m.deps.flow);
        // The reduction's anti and output dependences are the same pairs.
        assert!(m.deps.output.is_subset(&m.deps.all).unwrap());
        assert!(m.respects(&m.original).unwrap());
        // Reversing k breaks the reduction chain.
        let bad = UnionMap::parse(
            &ctx,
            "{ S0[i, j] -> [i, j, 0, 0]; S1[i, j, k] -> [i, j, 1, -k] }",
        )
        .unwrap();
        assert!(!m.respects(&bad).unwrap());
    }

    #[test]
    fn both_legality_tests_agree() {
        let ctx = Ctx::new();
        let s = scop(
            "for (k = 0; k < n; k++) for (i = 1; i < n - 1; i++) { x[i] = x[i - 1] + x[i + 1]; for (j = 0; j < n; j++) A[i][j] += x[j]; }",
        );
        let m = Model::new(&ctx, &s, None).unwrap();
        let schedules = [
            "{ S0[k, i] -> [k, i, 0, 0]; S1[k, i, j] -> [k, i, 1, j] }",
            "{ S0[k, i] -> [k, -i, 0, 0]; S1[k, i, j] -> [k, -i, 1, j] }",
            "{ S0[k, i] -> [k, i, 1, 0]; S1[k, i, j] -> [k, i, 0, j] }",
            "{ S0[k, i] -> [k + i, i, 0, 0]; S1[k, i, j] -> [k + i, i, 1, j] }",
            "{ S0[k, i] -> [i, k, 0, 0]; S1[k, i, j] -> [i, k, 1, j] }",
            "{ S0[k, i] -> [k, i, 0, 0]; S1[k, i, j] -> [k, i, 0, j] }",
            "{ S0[k, i] -> [0, 0, 0, 0]; S1[k, i, j] -> [0, 0, 0, 0] }",
            "{ S0[k, i] -> [k, i, 0, 0] }",
        ];
        let mut verdicts = Vec::new();
        for text in schedules {
            let u = UnionMap::parse(&ctx, text).unwrap();
            let slow = m.respects_by_order(&u).unwrap();
            let fast = m.respects_by_distances(&u).unwrap();
            assert_eq!(fast, Some(slow), "{text}");
            verdicts.push(slow);
        }
        assert_eq!(
            verdicts,
            [true, false, false, false, false, true, false, false]
        );
        // A schedule tree's map takes the fast path.
        let tree = m.original_tree.map().unwrap();
        assert_eq!(m.respects_by_distances(&tree).unwrap(), Some(true));
    }

    #[test]
    fn a_may_write_kills_no_flow() {
        let ctx = Ctx::new();
        // S1 writes x[i] only where data says so (a may-write); S2's read
        // of x[i] depends on S0's write as well as on S1's.
        let s = scop(
            "for (i = 0; i < n; i++) x[i] = i; \
             for (i = 0; i < n; i++) { double t = A[i][0]; if (t > 1.0) x[i] = t; } \
             for (i = 0; i < n; i++) A[i][1] = x[i];",
        );
        assert_eq!(s.statements[1].may_writes.len(), 1);
        let m = Model::new(&ctx, &s, None).unwrap();
        let want = UnionMap::parse(
            &ctx,
            "[n] -> { S0[i] -> S2[i] : 0 <= i < n; S1[i] -> S2[i] : 0 <= i < n }",
        )
        .unwrap();
        assert!(want.is_subset(&m.deps.flow).unwrap(), "{}", m.deps.flow);
        // The may-write is ordered after the must-write it may overwrite.
        let output = UnionMap::parse(&ctx, "[n] -> { S0[i] -> S1[i] : 0 <= i < n }").unwrap();
        assert!(output.is_subset(&m.deps.all).unwrap(), "{}", m.deps.all);
    }

    #[test]
    fn a_compound_statement_is_ordered_by_what_its_loops_touch() {
        let ctx = Ctx::new();
        // Each row's inner loop writes and reads all of x: rows in order.
        let s = scop(
            "for (i = 0; i < n; i++) { double t = 0; for (j = 0; j < n; j++) x[j] = x[j] + A[i][j]; for (j = 0; j < n; j++) t += x[j]; A[i][0] = t; }",
        );
        let m = Model::new(&ctx, &s, None).unwrap();
        let next = UnionMap::parse(&ctx, "[n] -> { S0[i] -> S0[i + 1] : 0 <= i < n - 1 }").unwrap();
        assert!(next.is_subset(&m.deps.flow).unwrap(), "{}", m.deps.flow);
        let reversed = UnionMap::parse(&ctx, "{ S0[i] -> [-i] }").unwrap();
        assert!(!m.respects(&reversed).unwrap());
    }
}
