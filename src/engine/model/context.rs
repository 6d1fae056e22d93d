//! The parameter values a SCoP is transformed for: the user's or the
//! default context, intersected with the model's assumptions (exact
//! divisions, values in the range of their C types), and the run-time
//! check of them that the generated code makes.

use super::*;

/// The default parameter context: every parameter at least 1.
pub fn default_context(scop: &Scop) -> String {
    let params = isl_names(&scop.parameters);
    let cons: Vec<String> = scop
        .parameters
        .iter()
        .map(|p| format!("{} >= 1", isl::mangle(p)))
        .collect();
    if cons.is_empty() {
        format!("[{params}] -> {{ : }}")
    } else {
        format!("[{params}] -> {{ : {} }}", cons.join(" and "))
    }
}

/// The names a context in isl notation declares: the list in brackets
/// before `->` (`[n, m] -> { : ... }`); none without one.
fn context_names(text: &str) -> Vec<String> {
    let t = text.trim_start();
    let Some(rest) = t.strip_prefix('[') else {
        return Vec::new();
    };
    let Some((list, after)) = rest.split_once(']') else {
        return Vec::new();
    };
    if !after.trim_start().starts_with("->") {
        return Vec::new();
    }
    list.split(',')
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

/// The assumed context (see [`Model::context`]) and the run-time check
/// of it (see [`Model::guard`]).
pub(super) fn contexts<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    context: Option<&str>,
) -> Result<(Set<'c>, Option<Set<'c>>), EngineError> {
    let context = match context {
        None => Set::parse(ctx, &default_context(scop))?,
        // The user writes C names; isl reads the mangled ones.
        Some(text) => {
            let user =
                Set::parse(ctx, &isl::mangle_names_in(text, &scop.parameters)).map_err(|e| {
                    EngineError::Context {
                        text: crate::config::clip(text).into_owned(),
                        reason: e.message,
                    }
                })?;
            if let Some(stranger) = context_names(text)
                .into_iter()
                .find(|n| !scop.parameters.iter().any(|p| p == n))
            {
                return Err(EngineError::Context {
                    text: crate::config::clip(text).into_owned(),
                    reason: format!(
                        "`{stranger}` is not a parameter of SCoP {} (its parameters: {}); a \
                         check of another name would read whatever that name holds where the \
                         SCoP starts",
                        scop.index,
                        if scop.parameters.is_empty() {
                            "none".to_string()
                        } else {
                            scop.parameters.join(", ")
                        }
                    ),
                });
            }
            // Over every parameter of the SCoP, in its order, whichever
            // of them the user's text names (`[ni] -> { : ni > 3 }` for
            // a SCoP over ni, nj and nk): the model's texts declare
            // them all.
            let params = isl_names(&scop.parameters);
            Set::parse(ctx, &format!("[{params}] -> {{ : }}"))?.intersect(&user)?
        }
    };
    let context = assumed_context(ctx, scop, context)?;
    // The run-time check reads every parameter as a `long`: the range of
    // the parameter's type holds by construction and needs no test.
    let longs: Vec<String> = scop
        .parameters
        .iter()
        .map(|p| {
            let (lo, hi) = scop
                .parameter_ranges
                .get(p)
                .copied()
                .unwrap_or((i64::MIN, i64::MAX));
            format!("{lo} <= {} <= {hi}", isl::mangle(p))
        })
        .collect();
    let params = isl_names(&scop.parameters);
    let longs = Set::parse(
        ctx,
        &format!("[{params}] -> {{ : {} }}", longs.join(" and ")),
    )?;
    let check = context.gist(&longs)?;
    let universe = Set::parse(ctx, &format!("[{params}] -> {{ : }}"))?;
    let guard = if universe.is_subset(&check)? {
        None
    } else {
        Some(check)
    };
    Ok((context, guard))
}

/// What the generated code of a transformed SCoP checks before it runs
/// (isl notation, C names); `None` when every parameter value is covered.
/// An error says why no parameter value is.
pub fn run_time_check(scop: &Scop, context: Option<&str>) -> Result<Option<String>, EngineError> {
    let ctx = Ctx::new();
    let (_, guard) = contexts(&ctx, scop, context)?;
    Ok(guard.map(|g| isl::unmangle_text(&g.to_string())))
}

/// The context intersected with the model's assumptions: for each C
/// division, the parameter values where its dividend is never negative;
/// for each value of unsigned type, those where it stays in its range;
/// for each inner subscript of a delinearized array, those where it stays
/// within its dimension's size.
/// An error names the first assumption that leaves no parameter value.
fn assumed_context<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    context: Set<'c>,
) -> Result<Set<'c>, EngineError> {
    if context.is_empty()? {
        return Err(EngineError::Unsupported {
            scop: scop.index,
            reason: "the parameter context allows no parameter value".into(),
        });
    }
    let mut assumed = context;
    let params = &scop.parameters;
    let checks: Vec<(String, Span, String)> = scop
        .division_checks
        .iter()
        .map(|c| {
            let why = format!(
                "the dividend `{}` of a C division can be negative (C truncates, the model floors)",
                isl::unmangle_text(&c.dividend.to_string())
            );
            (c.violations(params), c.span, why)
        })
        .chain(scop.unsigned_checks.iter().map(|c| {
            let why = format!(
                "{}: polytune models integers as signed, and `{}` leaves {} where it is evaluated",
                c.what,
                isl::unmangle_text(&c.value.to_string()),
                c.range()
            );
            (c.violations(params), c.span, why)
        }))
        .chain(
            scop.delinearized
                .iter()
                .flat_map(|d| &d.checks)
                .map(|c| {
                    let why = format!(
                        "`{}` is read as an array with rows of `{}` elements, and its subscript `{}` in that dimension leaves [0, {})",
                        c.array,
                        c.size,
                        isl::unmangle_text(&c.value.to_string()),
                        c.size
                    );
                    (c.violations(params), c.span, why)
                }),
        )
        .collect();
    for (text, span, why) in checks {
        let bad = UnionSet::parse(ctx, &text)?.intersect_params(&assumed)?;
        if bad.is_empty()? {
            continue;
        }
        assumed = assumed.subtract(&bad.params()?)?.coalesce()?;
        if assumed.is_empty()? {
            return Err(EngineError::Assumption {
                scop: scop.index,
                span,
                reason: format!("{why}, for every parameter value in the context"),
            });
        }
    }
    Ok(assumed)
}

#[cfg(test)]
mod tests {
    use super::super::tests::scop;
    use super::*;
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    #[test]
    fn negative_dividend_is_refused() {
        let ctx = Ctx::new();
        let s = scop("for (i = 0; i < n; i++) x[(i - 1) / 2] = 0;");
        assert!(matches!(
            Model::new(&ctx, &s, None),
            Err(EngineError::Assumption { .. })
        ));
        let s = scop("for (i = 1; i < n; i++) x[(i - 1) / 2] = 0;");
        let m = Model::new(&ctx, &s, None).unwrap();
        // Only the default context: n >= 1.
        let expect = Set::parse(&ctx, "[n] -> { : n >= 1 }").unwrap();
        assert!(m.guard.unwrap().is_equal(&expect).unwrap());
    }

    #[test]
    fn a_dividend_negative_for_some_parameters_becomes_an_assumption() {
        let ctx = Ctx::new();
        let s = scop("for (i = 0; i < n; i++) x[(i - k) / 2] = 0;");
        let m = Model::new(&ctx, &s, Some("[n, k] -> { : n >= 1 }")).unwrap();
        // (i - k) >= 0 at i = 0 needs k <= 0.
        let expect = Set::parse(&ctx, "[n, k] -> { : n >= 1 and k <= 0 }").unwrap();
        assert!(m.context.is_equal(&expect).unwrap(), "{}", m.context);
        assert!(m.guard.is_some());
    }

    #[test]
    fn no_guard_when_every_parameter_value_is_covered() {
        let ctx = Ctx::new();
        let s = scop("for (i = 0; i < n; i++) x[i] = 0;");
        let m = Model::new(&ctx, &s, Some("[n] -> { : }")).unwrap();
        assert!(m.guard.is_none());
        let m = Model::new(&ctx, &s, None).unwrap();
        assert!(m.guard.is_some());
    }

    fn unsigned_context(decls: &str, body: &str, params: &str) -> Result<String, EngineError> {
        let text = format!(
            "{decls}\nvoid f(double x[99]) {{\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        );
        let s = parse_source(Path::new("t.c"), text, &Options::default())
            .unwrap()
            .scops
            .remove(0);
        let ctx = Ctx::new();
        let m = Model::new(&ctx, &s, Some(&format!("[{params}] -> {{ : }}")))?;
        Ok(m.context.to_string())
    }

    #[test]
    fn unsigned_values_become_assumptions_on_the_parameters() {
        // `i < 5UL` converts i: i >= 0 from -n on needs n <= 0.
        let c = unsigned_context(
            "long n; long i;",
            "for (i = -n; i < 5UL; i++) x[i + 50] = 0;",
            "n",
        )
        .unwrap();
        assert_eq!(c, "[n] -> {  : -9223372036854775807 <= n <= 0 }");
        // size_t everywhere: accepted; n below 2^63.
        let c = unsigned_context(
            "size_t n; size_t i;",
            "for (i = 0; i < n; i++) x[i] = 0;",
            "n",
        )
        .unwrap();
        assert_eq!(c, "[n] -> {  : 0 <= n <= 9223372036854775807 }");
        // Signed types: no assumption at all.
        let c = unsigned_context(
            "int n; int i;",
            "for (i = -n; i < n; i++) x[i + 50] = 0;",
            "n",
        )
        .unwrap();
        assert_eq!(c, "[n] -> {  :  }");
        // An unsigned iterator counting down to -1 cannot be modelled.
        let e = unsigned_context(
            "unsigned n; unsigned i;",
            "for (i = n; i >= 0; i--) x[i] = 0;",
            "n",
        )
        .unwrap_err();
        assert!(matches!(e, EngineError::Assumption { .. }), "{e}");
        // An undeclared iterator may be unsigned: the same loop is refused,
        // an upward one is fine.
        let e = unsigned_context("int n;", "for (i = n; i >= 0; i--) x[i] = 0;", "n").unwrap_err();
        assert!(e.to_string().contains("may be unsigned"), "{e}");
        assert!(unsigned_context("int n;", "for (i = 0; i < n; i++) x[i] = 0;", "n").is_ok());
        // Unsigned subtraction in a subscript: i - m must not wrap.
        let c = unsigned_context(
            "unsigned long n, m, i;",
            "for (i = 0; i < n; i++) x[i - m + 10] = 0;",
            "n, m",
        )
        .unwrap();
        assert!(c.contains("m <= 0") || c.contains("m = 0"), "{c}");
    }

    #[test]
    fn narrow_and_32_bit_types_keep_their_ranges() {
        // unsigned int wraps at 2^32: n + 5 must stay below it.
        let c = unsigned_context(
            "unsigned n; long i;",
            "for (i = 0; i < n + 5; i++) x[i] = 0;",
            "n",
        )
        .unwrap();
        assert_eq!(c, "[n] -> {  : 0 <= n <= 4294967290 }");
        // A short iterator must fit a short, its exit value included.
        let c =
            unsigned_context("long n; short i;", "for (i = 0; i < n; i++) x[i] = 0;", "n").unwrap();
        assert_eq!(c, "[n] -> {  : n <= 32767 }");
        let e = unsigned_context(
            "long n; unsigned char i;",
            "for (i = 0; i < 300; i++) x[i] = 0;",
            "",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("loop iterator `i` of type `unsigned char`"),
            "{e}"
        );
    }

    #[test]
    fn delinearized_subscripts_stay_within_their_rows() {
        let text = "void f(int n, int lda, double *a) { int i, j;\n#pragma scop\nfor (j = 0; j < n; j++) for (i = 0; i < n; i++) a[lda*j + i + 1] = a[lda*(j + 1) + i];\n#pragma endscop\n}\n";
        let s = parse_source(Path::new("t.c"), text.to_string(), &Options::default())
            .unwrap()
            .scops
            .remove(0);
        // i + 1 < lda for i up to n - 1; row j + 1 has no bound.
        assert_eq!(
            run_time_check(&s, None).unwrap().unwrap(),
            "[n, lda] -> {  : n > 0 and lda > n }"
        );
        // No row length fits: refused, with the access and the reason.
        let e = run_time_check(&s, Some("[n, lda] -> { : n >= 10 and lda <= 5 }")).unwrap_err();
        assert!(
            e.to_string()
                .contains("`a` is read as an array with rows of `lda` elements, and its subscript `i` in that dimension leaves [0, lda), for every parameter value"),
            "{e}"
        );
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
        assert!(matches!(
            Model::new(&ctx, &s, Some("[n] -> { : n < 0 and n > 0 }")),
            Err(EngineError::Unsupported { .. })
        ));
        // A parameter named like an isl keyword, written as in C.
        let text = "void f(long max, double x[9]) { long i;\n#pragma scop\nfor (i = 0; i < max; i++) x[i] = 0;\n#pragma endscop\n}\n";
        let s = parse_source(Path::new("t.c"), text.to_string(), &Options::default())
            .unwrap()
            .scops
            .remove(0);
        let m = Model::new(&ctx, &s, Some("[max] -> { : 4 <= max <= 8 }")).unwrap();
        assert_eq!(
            isl::unmangle_text(&m.context.to_string()),
            "[max] -> {  : 4 <= max <= 8 }"
        );
    }
}
