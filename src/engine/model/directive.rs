//! The proof of the user's OpenMP loop directives (issue 40; what they
//! promise is in `frontend/omp.rs`).
//!
//! A directive on loop `L` (with `collapse(n)`, the `n` loops from `L`
//! down) holds when, between two instances of `L`'s statements in the
//! same iteration of the loops around `L` and different iterations of
//! the bound loops:
//! - no dependence links them, once the accesses to the directive's
//!   private and reduction variables are left out;
//! - a private variable's value flows only within one iteration: an
//!   iteration never reads what another wrote, a `private` (not
//!   `firstprivate`) one is written before it is read in every
//!   iteration, and its value never leaves the loop (OpenMP leaves the
//!   original undefined after it: no later read in the SCoP, dead after
//!   the SCoP);
//! - a reduction variable is touched only by reduction statements
//!   (`Scop::reductions`) combining as the clause says.
//!
//! The dependences are the model's: value-based flow and adjacent
//! memory-based pairs, which imply every other memory dependence by
//! transitivity; since every instance between two instances of `L` in one
//! iteration of the loops around it is an instance of `L`, a dependence
//! carried by the bound loops implies an adjacent pair carried by them.

use super::{EngineError, Model, memory};
use crate::frontend::omp::{Construct, ReductionOp};
use crate::frontend::scop::reduction::Combine;
use crate::frontend::scop::{Scop, UserDirective};
use crate::isl::{IslError, UnionMap, UnionSet, mangle};

/// Proves every directive of `scop` on `model` (its original program),
/// or says why one does not hold. `dead` are the scalars dead after the
/// SCoP.
pub(crate) fn prove(model: &Model<'_>, scop: &Scop, dead: &[String]) -> Result<(), EngineError> {
    for d in &scop.directives {
        if let Some(why) = refutation(model, scop, d, dead)? {
            return Err(EngineError::Assumption {
                scop: scop.index,
                span: d.span,
                reason: format!(
                    "the user's `{}` is not proven: {why}; the loop nest is left as written",
                    d.directive.text
                ),
            });
        }
    }
    Ok(())
}

/// Why the directive `d` does not hold, or `None` when it does: its
/// clauses read (with the team's), then the reductions, the dependences
/// and the private variables checked in turn.
fn refutation(
    model: &Model<'_>,
    scop: &Scop,
    d: &UserDirective,
    dead: &[String],
) -> Result<Option<String>, IslError> {
    let clauses = match Clauses::of(scop, d) {
        Ok(c) => c,
        Err(why) => return Ok(Some(why)),
    };
    let Some(bound) = Bound::new(model, scop, d)? else {
        return Ok(None);
    };
    if let Some(why) = reductions_refuted(scop, d, &clauses) {
        return Ok(Some(why));
    }
    if let Some(why) = dependences_refuted(&bound, &clauses)? {
        return Ok(Some(why));
    }
    privates_refuted(&bound, &clauses, dead)
}

/// What the directive says of its variables, the team's added, restricted
/// to what can be checked.
struct Clauses {
    /// Private variables of the SCoP (scalars).
    private: Vec<String>,
    /// Those whose copies start with the value before the loop.
    firstprivate: Vec<String>,
    reductions: Vec<(ReductionOp, String)>,
}

impl Clauses {
    /// The clauses of `d`, or why they cannot hold whatever the
    /// dependences.
    fn of(scop: &Scop, d: &UserDirective) -> Result<Clauses, String> {
        let dir = &d.directive;
        // Inside a team, the region's private and reduction variables join
        // the loop's (all read as `private`: a thread's copy may hold what
        // its earlier iterations wrote).
        let mut private = dir.private.clone();
        let mut reductions = dir.reductions.clone();
        if dir.construct == Construct::For {
            let Some(team) = &scop.team else {
                return Err("a work-sharing `for` whose `parallel` region is not around it in this function shares the loop among a team polytune does not see".into());
            };
            if d.depth != 0 || scop.body.len() != 1 {
                return Err(format!(
                    "inside the user's `{}`, polytune takes a work-shared loop only as a region of its own",
                    team.text
                ));
            }
            if let Some(p) = scop.parameters.iter().find(|p| team.private.contains(p)) {
                return Err(format!(
                    "`{p}` is each thread's own inside the user's `{}`, and the loop reads the value it had before: which iteration sees which thread's value depends on the schedule",
                    team.text
                ));
            }
            private.extend(team.private.iter().cloned());
            reductions.extend(team.reductions.iter().cloned());
        }
        if let Some(v) = d.shared_iterators.first() {
            return Err(format!(
                "the iterator `{v}` of an inner loop is declared outside the directive and named in no `private` clause, so every thread shares it (declare it in its loop, `for (int {v} = ...)`, or add `private({v})`)"
            ));
        }
        let rank = |v: &str| scop.arrays.iter().find(|a| a.name == v).map(|a| a.rank);
        if let Some(v) = private
            .iter()
            .chain(reductions.iter().map(|(_, v)| v))
            .find(|v| rank(v).is_some_and(|r| r > 0))
        {
            return Err(format!(
                "`{v}` is an array; polytune checks private and reduction clauses on scalars only"
            ));
        }
        let in_team = |v: &String| scop.team.as_ref().is_some_and(|t| t.private.contains(v));
        Ok(Clauses {
            firstprivate: dir
                .firstprivate
                .iter()
                .filter(|v| !in_team(v))
                .cloned()
                .collect(),
            private: private.into_iter().filter(|v| rank(v).is_some()).collect(),
            reductions: reductions
                .into_iter()
                .filter(|(_, v)| rank(v).is_some())
                .collect(),
        })
    }

    /// The variables whose dependences the directive sets apart.
    fn set_apart(&self) -> Vec<&String> {
        self.private
            .iter()
            .chain(self.reductions.iter().map(|(_, v)| v))
            .collect()
    }
}

/// Why a reduction clause does not hold: a statement inside touches its
/// variable other than as a reduction of the clause's kind.
fn reductions_refuted(scop: &Scop, d: &UserDirective, clauses: &Clauses) -> Option<String> {
    let reductions = scop.reductions();
    for (op, v) in &clauses.reductions {
        let kind = match op {
            ReductionOp::Add => Combine::Add,
            ReductionOp::Mul => Combine::Mul,
        };
        let inside = scop
            .statements
            .iter()
            .filter(|s| d.statements.contains(&s.id));
        for s in inside {
            let touches = s
                .reads
                .iter()
                .chain(&s.writes)
                .chain(&s.may_writes)
                .any(|a| a.array == *v);
            let is_update = reductions
                .iter()
                .any(|r| r.stmt == s.id && r.combine == kind)
                && s.writes.iter().any(|a| a.array == *v);
            if touches && !is_update {
                let sign = if kind == Combine::Add { "+" } else { "*" };
                return Some(format!(
                    "`{v}` is a `{sign}` reduction variable, but a statement of the loop uses it otherwise (only `{v} {sign}= e` with `e` free of `{v}` may touch it)"
                ));
            }
        }
    }
    None
}

/// Why the loop is not parallel once the clauses' variables are set
/// apart: the first array (or scalar) a carried dependence goes through.
fn dependences_refuted(
    bound: &Bound<'_, '_>,
    clauses: &Clauses,
) -> Result<Option<String>, IslError> {
    let apart = clauses.set_apart();
    if !bound.carried(&bound.deps_without(&apart)?)? {
        return Ok(None);
    }
    let mut culprit = None;
    for a in bound
        .scop
        .arrays
        .iter()
        .filter(|a| !apart.contains(&&a.name))
    {
        if bound.carried(&bound.deps_on(&a.name)?)? {
            culprit = Some(a);
            break;
        }
    }
    let first = bound.first();
    Ok(Some(match culprit {
        Some(a) if a.rank == 0 => format!(
            "the loop over `{first}` carries a dependence on the scalar `{}` (iterations share it: name it in `private` or `reduction` if each iteration writes it first)",
            a.name
        ),
        Some(a) => format!(
            "the loop over `{first}` carries a dependence on `{}`: one iteration touches an element another writes",
            a.name
        ),
        None => format!("the loop over `{first}` carries a dependence"),
    }))
}

/// Why a private variable's value does not stay within one iteration.
fn privates_refuted(
    bound: &Bound<'_, '_>,
    clauses: &Clauses,
    dead: &[String],
) -> Result<Option<String>, IslError> {
    for v in &clauses.private {
        let flow = bound.flow_on(v)?;
        if bound.carried(&flow)? {
            return Ok(Some(format!(
                "`{v}` is private, but an iteration reads the value another iteration wrote"
            )));
        }
        if !clauses.firstprivate.contains(v) && bound.read_on_entry(v, &flow)? {
            return Ok(Some(format!(
                "`{v}` is private, so each thread's copy starts undefined, but an iteration reads it before writing it (make it `firstprivate` if the value before the loop is meant)"
            )));
        }
        if bound.leaves(&flow)? || (bound.writes(v)? && !dead.contains(v)) {
            return Ok(Some(format!(
                "`{v}` is private, but its value after the loop (which OpenMP leaves undefined) may be read"
            )));
        }
    }
    Ok(None)
}

/// The loops a directive binds, over the model.
struct Bound<'m, 'c> {
    model: &'m Model<'c>,
    scop: &'m Scop,
    d: &'m UserDirective,
    /// The statements inside, each to its iterators up to the last bound
    /// loop.
    prefix: UnionMap<'c>,
    /// Their instances.
    inside: UnionSet<'c>,
}

impl<'m, 'c> Bound<'m, 'c> {
    /// `None` when no statement of the SCoP lies inside the loops.
    fn new(
        model: &'m Model<'c>,
        scop: &'m Scop,
        d: &'m UserDirective,
    ) -> Result<Option<Self>, IslError> {
        let keep = d.depth + d.iterators.len();
        let pieces: Vec<String> = scop
            .statements
            .iter()
            .filter(|s| d.statements.contains(&s.id) && s.iterators.len() >= keep)
            .map(|s| {
                let vars: Vec<String> = (0..s.iterators.len()).map(|k| format!("i{k}")).collect();
                format!(
                    "{}[{}] -> [{}]",
                    s.name(),
                    vars.join(", "),
                    vars[..keep].join(", ")
                )
            })
            .collect();
        if pieces.is_empty() {
            return Ok(None);
        }
        let prefix = UnionMap::parse(model.ctx, &format!("{{ {} }}", pieces.join("; ")))?;
        let inside = prefix.domain()?.intersect(&model.domain)?;
        Ok(Some(Bound {
            model,
            scop,
            d,
            prefix,
            inside,
        }))
    }

    fn first(&self) -> &str {
        &self.d.iterators[0]
    }

    /// Whether a pair of `deps` links two instances inside in the same
    /// iteration of the loops around and different iterations of the
    /// bound ones.
    fn carried(&self, deps: &UnionMap<'c>) -> Result<bool, IslError> {
        let within = deps
            .intersect_domain(&self.inside)?
            .intersect_range(&self.inside)?;
        if within.is_empty()? {
            return Ok(false);
        }
        let deltas = within
            .apply_domain(&self.prefix)?
            .apply_range(&self.prefix)?
            .deltas()?;
        if deltas.is_empty()? {
            return Ok(false);
        }
        let deltas = deltas.to_set()?;
        let zero = (Some(0), Some(0));
        let mut boxes = Vec::new();
        for k in self.d.depth..self.d.depth + self.d.iterators.len() {
            for b in [(Some(1), None), (None, Some(-1))] {
                let mut v = vec![zero; k];
                v.push(b);
                boxes.push(v);
            }
        }
        let bad = deltas.boxes_like(&boxes)?;
        Ok(!deltas.intersect(&bad)?.is_empty()?)
    }

    /// The universe of the arrays `names`.
    fn arrays(&self, names: &[&String]) -> Result<UnionSet<'c>, IslError> {
        let pieces: Vec<String> = names
            .iter()
            .filter_map(|n| self.scop.arrays.iter().find(|a| a.name == **n))
            .map(|a| {
                let vars: Vec<String> = (0..a.rank).map(|k| format!("e{k}")).collect();
                format!("{}[{}]", mangle(&a.name), vars.join(", "))
            })
            .collect();
        UnionSet::parse(self.model.ctx, &format!("{{ {} }}", pieces.join("; ")))
    }

    /// The accesses (reads, must-writes, may-writes), restricted by `f`.
    fn accesses(
        &self,
        f: impl Fn(UnionMap<'c>) -> Result<UnionMap<'c>, IslError>,
    ) -> Result<(UnionMap<'c>, UnionMap<'c>, Option<UnionMap<'c>>), IslError> {
        let ctx = self.model.ctx;
        let parse = |t: &str| -> Result<UnionMap<'c>, IslError> {
            f(UnionMap::parse(ctx, t)?.intersect_domain(&self.model.domain)?)
        };
        let reads = parse(&self.scop.reads())?;
        let must = parse(&self.scop.writes())?;
        let may = if self.scop.has_may_writes() {
            Some(parse(&self.scop.may_writes())?)
        } else {
            None
        };
        Ok((reads, must, may))
    }

    fn deps_of(
        &self,
        (reads, must, may): (UnionMap<'c>, UnionMap<'c>, Option<UnionMap<'c>>),
    ) -> Result<UnionMap<'c>, IslError> {
        let (flow, overwrite) = memory(&reads, &must, may.as_ref(), &self.model.original_tree)?;
        flow.union(&overwrite.may)
    }

    /// Every dependence but those through the arrays `names`.
    fn deps_without(&self, names: &[&String]) -> Result<UnionMap<'c>, IslError> {
        if names.is_empty() {
            return Ok(self.model.deps.all.clone());
        }
        let out = self.arrays(names)?;
        self.deps_of(self.accesses(|m| m.subtract_range(&out))?)
    }

    /// The dependences through the array `name` alone.
    fn deps_on(&self, name: &String) -> Result<UnionMap<'c>, IslError> {
        let only = self.arrays(&[name])?;
        self.deps_of(self.accesses(|m| m.intersect_range(&only))?)
    }

    /// The value-based flow of the array `name` alone.
    fn flow_on(&self, name: &String) -> Result<UnionMap<'c>, IslError> {
        let only = self.arrays(&[name])?;
        let (reads, must, may) = self.accesses(|m| m.intersect_range(&only))?;
        Ok(memory(&reads, &must, may.as_ref(), &self.model.original_tree)?.0)
    }

    /// Whether an instance inside reads `name` with no write of it earlier
    /// in the same iteration of the bound loops (`flow` its flow).
    fn read_on_entry(&self, name: &String, flow: &UnionMap<'c>) -> Result<bool, IslError> {
        let only = self.arrays(&[name])?;
        let (reads, _, _) = self.accesses(|m| m.intersect_range(&only))?;
        let readers = reads.intersect_domain(&self.inside)?.domain()?;
        let same = self.same_iteration(flow)?;
        Ok(!readers.subtract(&same.range()?)?.is_empty()?)
    }

    /// The pairs of `flow` inside, in one iteration of the bound loops.
    fn same_iteration(&self, flow: &UnionMap<'c>) -> Result<UnionMap<'c>, IslError> {
        let within = flow
            .intersect_domain(&self.inside)?
            .intersect_range(&self.inside)?;
        // Pairs whose prefixes are equal.
        let equal = self.prefix.apply_range(&self.prefix.reverse()?)?;
        within.intersect(&equal)
    }

    /// Whether a value `flow` carries from inside is read outside, later
    /// in the SCoP.
    fn leaves(&self, flow: &UnionMap<'c>) -> Result<bool, IslError> {
        Ok(!flow
            .intersect_domain(&self.inside)?
            .subtract_range(&self.inside)?
            .is_empty()?)
    }

    /// Whether an instance inside writes `name`.
    fn writes(&self, name: &String) -> Result<bool, IslError> {
        let only = self.arrays(&[name])?;
        let (_, must, may) = self.accesses(|m| m.intersect_range(&only))?;
        let mut w = must;
        if let Some(may) = may {
            w = w.union(&may)?;
        }
        Ok(!w.intersect_domain(&self.inside)?.is_empty()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::{Options, SourceFile, parse_source};
    use crate::isl::Ctx;
    use std::path::Path;

    fn file(text: &str) -> SourceFile {
        parse_source(Path::new("t.c"), text.to_string(), &Options::default()).unwrap()
    }

    /// The proof of the one SCoP of `f`'s body `body` (declarations
    /// `int i, j; double t, s, u;` and arrays `a`, `b`, `c` before it):
    /// `None` when it holds, else why not.
    fn proof(body: &str) -> Option<String> {
        let text = format!(
            "double a[64][64], b[64], c[64];\nvoid f(int n) {{ int i, j; double t, s = 0, u = 1;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        );
        let src = file(&text);
        let scop = &src.scops[0];
        assert!(!scop.directives.is_empty(), "{body}");
        let ctx = Ctx::new();
        let model = Model::new(&ctx, scop, None).unwrap();
        let dead = crate::frontend::liveness::dead_scalars(&src, scop);
        match prove(&model, scop, &dead) {
            Ok(()) => None,
            Err(e) => Some(e.reason()),
        }
    }

    #[test]
    fn directives_that_hold_are_proven() {
        for body in [
            "#pragma omp parallel for private(j)\nfor (i = 0; i < n; i++) for (j = 0; j < n; j++) a[i][j] = b[j] + i;",
            "#pragma omp parallel for\nfor (i = 0; i < n; i++) for (int k = 0; k < n; k++) a[i][k] = a[i][k] * 2;",
            "#pragma omp parallel for private(j, t)\nfor (i = 0; i < n; i++) for (j = 0; j < n; j++) { t = b[j] * i; a[i][j] = t + 1; }",
            "#pragma omp parallel for firstprivate(u) private(j)\nfor (i = 0; i < n; i++) for (j = 0; j < n; j++) a[i][j] = u;",
            "#pragma omp parallel for reduction(+:s) private(j)\nfor (i = 0; i < n; i++) for (j = 0; j < n; j++) s += a[i][j];",
            "#pragma omp parallel for collapse(2)\nfor (i = 0; i < n; i++) for (j = 0; j < n; j++) a[j][i] = b[i] * b[j];",
            // The inner loop of a recurrence over `j` is parallel.
            "for (j = 1; j < n; j++)\n#pragma omp parallel for\nfor (i = 0; i < n; i++) a[i][j] = a[i][j - 1] + 1;",
            "#pragma omp simd\nfor (i = 0; i < n; i++) c[i] = b[i] * 2;",
        ] {
            assert_eq!(proof(body), None, "{body}");
        }
    }

    #[test]
    fn directives_that_do_not_hold_are_refused_with_the_reason() {
        for (body, why) in [
            (
                "#pragma omp parallel for\nfor (i = 1; i < n; i++) b[i] = b[i - 1] + 1;",
                "dependence on `b`",
            ),
            (
                "#pragma omp parallel for\nfor (i = 0; i < n; i++) for (j = 0; j < n; j++) a[i][j] = 1;",
                "iterator `j`",
            ),
            (
                "#pragma omp parallel for private(j)\nfor (i = 0; i < n; i++) for (j = 0; j < n; j++) { t = b[j]; a[i][j] = t; }",
                "scalar `t`",
            ),
            (
                "#pragma omp parallel for private(j, t)\nfor (i = 0; i < n; i++) for (j = 0; j < n; j++) { a[i][j] = t; t = b[j]; }",
                "another iteration wrote",
            ),
            (
                "#pragma omp parallel for private(t)\nfor (i = 0; i < n; i++) { c[i] = t; }",
                "before writing it",
            ),
            (
                "#pragma omp parallel for reduction(+:s)\nfor (i = 0; i < n; i++) { s += b[i]; c[i] = s; }",
                "uses it otherwise",
            ),
            (
                "#pragma omp parallel for reduction(*:s)\nfor (i = 0; i < n; i++) s += b[i];",
                "`*` reduction",
            ),
            (
                "#pragma omp parallel for collapse(2)\nfor (i = 1; i < n; i++) for (j = 0; j < n; j++) a[i][j] = a[i - 1][j];",
                "dependence on `a`",
            ),
            (
                "#pragma omp parallel for private(c)\nfor (i = 0; i < n; i++) c[i] = 1;",
                "is an array",
            ),
            (
                "#pragma omp simd\nfor (i = 1; i < n; i++) c[i] = c[i - 1] * 2;",
                "dependence on `c`",
            ),
            (
                "#pragma omp for\nfor (i = 0; i < n; i++) c[i] = 1;",
                "work-sharing `for`",
            ),
        ] {
            let got = proof(body).unwrap_or_else(|| panic!("proven: {body}"));
            assert!(got.contains(why), "{body}: {got}");
        }
    }

    #[test]
    fn a_private_value_read_after_the_loop_refuses_it() {
        let got = proof(
            "#pragma omp parallel for private(t)\nfor (i = 0; i < n; i++) { t = b[i]; c[i] = t; }\nc[0] = t;",
        )
        .unwrap();
        assert!(got.contains("after the loop"), "{got}");
    }

    #[test]
    fn inside_a_team_the_region_s_own_variables_are_private() {
        let team = |decl: &str, loop_: &str| {
            format!(
                "double a[64][64], b[64], c[64];\nvoid f(int n) {{ int i, j;\n#pragma omp parallel private(j)\n{{ {decl}\n#pragma scop\n{loop_}\n#pragma endscop\n}}\n}}\n"
            )
        };
        let prove_text = |text: &str| {
            let src = file(text);
            let scop = &src.scops[0];
            assert!(scop.team.is_some());
            let ctx = Ctx::new();
            let model = Model::new(&ctx, scop, None).unwrap();
            let dead = crate::frontend::liveness::dead_scalars(&src, scop);
            prove(&model, scop, &dead).err().map(|e| e.reason())
        };
        let body = "#pragma omp for\nfor (i = 0; i < n; i++) { for (j = 0; j < n; j++) { t = b[j]; a[i][j] = t; } }";
        assert_eq!(prove_text(&team("double t;", body)), None);
        // Declared outside the region: shared by the team.
        let shared = prove_text(&format!("double t;\n{}", team("", body)));
        assert!(shared.is_some_and(|w| w.contains("scalar `t`")));
        // A thread's own value read by the loop: the schedule decides.
        let own = prove_text(&team(
            "int m = n / 2;",
            "#pragma omp for\nfor (i = 0; i < n; i++) c[i] = m;",
        ));
        assert!(
            own.as_ref().is_some_and(
                |w| w.contains("`m` is each thread's own") || w.contains("`m` is private")
            ),
            "{own:?}"
        );
    }
}
