//! The polyhedral model of a SCoP in isl, and its dependences.
//!
//! Legality needs every ordering constraint of the original program:
//! value-based flow dependences (read after the *last* write), plus the
//! memory-based anti (write after read) and output (write after write)
//! dependences, since polytune does not rename or expand storage.

use crate::isl::{self, Ctx, IslError, Set, UnionMap, UnionSet};
use crate::scop::Scop;

/// Why the engine cannot handle a SCoP.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    Isl(#[from] IslError),
    #[error("SCoP {scop}: {reason}")]
    Unsupported { scop: usize, reason: String },
    #[error("invalid --context `{text}`: {reason}")]
    Context { text: String, reason: String },
}

/// The dependences that constrain any reordering.
pub struct Dependences<'c> {
    /// Read after write, value-based.
    pub flow: UnionMap<'c>,
    /// Write after read, memory-based.
    pub anti: UnionMap<'c>,
    /// Write after write, memory-based.
    pub output: UnionMap<'c>,
    /// All of the above.
    pub all: UnionMap<'c>,
}

/// A SCoP in isl: domains, accesses, original schedule, dependences.
pub struct Model<'c> {
    pub ctx: &'c Ctx,
    /// Constraints on the parameters (default: every parameter >= 1).
    pub context: Set<'c>,
    pub domain: UnionSet<'c>,
    pub reads: UnionMap<'c>,
    pub writes: UnionMap<'c>,
    pub original: UnionMap<'c>,
    pub deps: Dependences<'c>,
}

/// The default parameter context: every parameter at least 1.
pub fn default_context(scop: &Scop) -> String {
    let params = scop.parameters.join(", ");
    let cons: Vec<String> = scop
        .parameters
        .iter()
        .map(|p| format!("{p} >= 1"))
        .collect();
    if cons.is_empty() {
        format!("[{params}] -> {{ : }}")
    } else {
        format!("[{params}] -> {{ : {} }}", cons.join(" and "))
    }
}

impl<'c> Model<'c> {
    /// Builds the model; `context` overrides the default parameter
    /// context (isl notation, e.g. `[n] -> { : n >= 16 }`).
    pub fn new(ctx: &'c Ctx, scop: &Scop, context: Option<&str>) -> Result<Model<'c>, EngineError> {
        let context = match context {
            None => Set::parse(ctx, &default_context(scop))?,
            Some(text) => Set::parse(ctx, text).map_err(|e| EngineError::Context {
                text: text.to_string(),
                reason: e.message,
            })?,
        };
        let domain = UnionSet::parse(ctx, &scop.domains())?.intersect_params(&context)?;
        let reads = UnionMap::parse(ctx, &scop.reads())?.intersect_domain(&domain)?;
        let writes = UnionMap::parse(ctx, &scop.writes())?.intersect_domain(&domain)?;
        let original = UnionMap::parse(ctx, &scop.schedules())?.intersect_domain(&domain)?;

        // C division truncates, the model floors: they must agree.
        for check in &scop.division_checks {
            let bad = UnionSet::parse(ctx, &check.violations(&scop.parameters))?
                .intersect_params(&context)?;
            if !bad.is_empty()? {
                return Err(EngineError::Unsupported {
                    scop: scop.index,
                    reason: format!(
                        "the dividend `{}` of a C division can be negative, where C and the polyhedral model disagree",
                        check.dividend
                    ),
                });
            }
        }

        let flow = isl::dataflow(&reads, Some(&writes), None, &original)?.must;
        // Memory-based: every pair of accesses to one element, the first
        // before the second, the second a write.
        let before = original.lex_lt_union_map(&original)?;
        let overwritten = writes.reverse()?;
        let anti = reads.apply_range(&overwritten)?.intersect(&before)?;
        let output = writes.apply_range(&overwritten)?.intersect(&before)?;
        let all = flow.union(&anti)?.union(&output)?.coalesce()?;
        Ok(Model {
            ctx,
            context,
            domain,
            reads,
            writes,
            original,
            deps: Dependences {
                flow,
                anti,
                output,
                all,
            },
        })
    }

    /// Whether `schedule` (statement instances to time vectors) respects
    /// every dependence: each source runs strictly before its sink.
    pub fn respects(&self, schedule: &UnionMap<'c>) -> Result<bool, IslError> {
        if self.deps.all.is_empty()? {
            return Ok(true);
        }
        let before = schedule.lex_lt_union_map(schedule)?;
        self.deps.all.is_subset(&before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    fn scop(body: &str) -> Scop {
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
    fn negative_dividend_is_refused() {
        let ctx = Ctx::new();
        let s = scop("for (i = 0; i < n; i++) x[(i - 1) / 2] = 0;");
        assert!(matches!(
            Model::new(&ctx, &s, None),
            Err(EngineError::Unsupported { .. })
        ));
        let s = scop("for (i = 1; i < n; i++) x[(i - 1) / 2] = 0;");
        assert!(Model::new(&ctx, &s, None).is_ok());
    }

    #[test]
    fn user_context() {
        let ctx = Ctx::new();
        let s = scop("for (i = 0; i < n; i++) x[i] = 0;");
        assert!(Model::new(&ctx, &s, Some("[n] -> { : n >= 100 }")).is_ok());
        assert!(matches!(
            Model::new(&ctx, &s, Some("[n] -> { : n >= }")),
            Err(EngineError::Context { .. })
        ));
    }
}
