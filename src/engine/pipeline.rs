//! One configuration applied to a whole file: every SCoP is transformed
//! and spliced back; a SCoP the engine cannot handle is left exactly as it
//! was, with the reason.

use crate::config::Config;
use crate::engine::codegen;
use crate::engine::instrument;
use crate::engine::model::{EngineError, Model};
use crate::engine::transform;
use crate::frontend::scop::Scop;
use crate::frontend::{Replacement, SourceFile};
use crate::isl::Ctx;

/// The transformed file and what could not be done.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub text: String,
    /// One line per SCoP left untouched, with the reason.
    pub skipped: Vec<String>,
    /// One line per SCoP left untouched because the engine caught a bug of
    /// its own (`EngineError::Internal`): to be reported, not just noted.
    pub internal: Vec<String>,
    /// Whether a SCoP's new code has an OpenMP directive.
    pub openmp: bool,
    /// What the configuration asked for and was not done in a SCoP that
    /// was transformed, with the reason (one line each).
    pub notes: Vec<String>,
}

/// Deepest loop nest the engine transforms. isl's scheduler grows about
/// as the fifth power of the depth: one statement in a perfect nest took,
/// with `fuse=smart,tile=32x32x32,wave=1,omp=1` on this machine (2-core
/// EPYC), 0.3 s at depth 8, 1.1 s at 12, 2.8 s at 16, 11.5 s at 24 and
/// more than 300 s at 100. PolyBench nests at most 4 deep.
pub(crate) const MAX_DEPTH: usize = 12;

/// Most statements the engine transforms in one SCoP: 200 statements in
/// one loop took 6.6 s per configuration, 400 took 33 s, 1000 took 56 s.
/// PolyBench has at most 16 (fdtd-apml).
pub(crate) const MAX_STATEMENTS: usize = 100;

/// Work limit of one configuration of one SCoP (model, schedule and code
/// generation), in isl operations (isl counts its allocations and solver
/// steps). The corpus needs at most 0.93 million (adi, `fuse=smart`, 1 s);
/// a SCoP within the depth and statement limits can still need far more
/// (4 statements in a 12-deep nest ran for more than 120 s), and this
/// stops it after a few seconds. 15 million took 4.5 s for 200 statements.
pub(crate) const MAX_ISL_OPERATIONS: u64 = 10_000_000;

/// Time limit of one configuration of one SCoP, a last resort for what
/// the limits above let through: 4 statements in a 6-deep nest, each
/// reading what the others write, made isl's scheduler run 34 s with
/// 1.9 million operations. The corpus needs at most 1 s (adi).
pub(crate) const MAX_SECONDS: u64 = 10;

/// Why the engine will not try `scop`, if it is larger than it can
/// transform in reasonable time ([`MAX_DEPTH`], [`MAX_STATEMENTS`]).
pub fn check_limits(scop: &Scop) -> Result<(), EngineError> {
    let depth = scop
        .statements
        .iter()
        .map(|s| s.iterators.len())
        .max()
        .unwrap_or(0);
    let reason = if depth > MAX_DEPTH {
        format!(
            "{depth} nested loops, more than the {MAX_DEPTH} polytune transforms (the scheduler's time grows steeply with depth)"
        )
    } else if scop.statements.len() > MAX_STATEMENTS {
        format!(
            "{} statements, more than the {MAX_STATEMENTS} polytune transforms in one SCoP (split it into several SCoPs)",
            scop.statements.len()
        )
    } else {
        return Ok(());
    };
    Err(EngineError::Unsupported {
        scop: scop.index,
        reason,
    })
}

/// Runs `work` (isl computations on `ctx` for `scop`) within
/// [`MAX_ISL_OPERATIONS`] and [`MAX_SECONDS`]; past either, its result is
/// dropped and the error says which limit was hit.
pub(crate) fn bounded<R>(
    ctx: &Ctx,
    scop: &Scop,
    work: impl FnOnce() -> R,
) -> Result<R, EngineError> {
    bounded_by(
        ctx,
        scop,
        MAX_ISL_OPERATIONS,
        std::time::Duration::from_secs(MAX_SECONDS),
        work,
    )
}

fn bounded_by<R>(
    ctx: &Ctx,
    scop: &Scop,
    operations: u64,
    time: std::time::Duration,
    work: impl FnOnce() -> R,
) -> Result<R, EngineError> {
    ctx.limit_operations(operations);
    let (r, late) = ctx.with_deadline(time, work);
    // Whatever came out while isl was refusing work is not trusted.
    let what = if late {
        format!(
            "took more than {} s, polytune's time limit",
            time.as_secs_f64()
        )
    } else if ctx.operations_exhausted() {
        format!("needed more than {operations} isl operations, polytune's work limit")
    } else {
        return Ok(r);
    };
    Err(EngineError::Unsupported {
        scop: scop.index,
        reason: format!(
            "the transformation {what} per SCoP and configuration (split the SCoP into smaller ones)"
        ),
    })
}

/// The new body of one SCoP under `config`.
pub(crate) fn transform_scop(
    src: &SourceFile,
    scop: &Scop,
    config: &Config,
    context: Option<&str>,
) -> Result<codegen::Emitted, EngineError> {
    let indent = src.indent_of(scop);
    let (mut body, notes) = with_lowered(src, scop, config, context, |scop, lowered| {
        codegen::emit(scop, lowered, config, &indent)
    })?;
    body.notes.splice(0..0, notes);
    Ok(body)
}

/// The stage every use of one SCoP's variant shares: the SCoP modelled
/// (with `exp=1`, its scalars expanded; with `priv=1`, privatized), its
/// schedule under `config` and the generated loops, handed to `use_`
/// with the SCoP they were generated for (the rewritten one with
/// `exp=1`), within the engine's limits. Also returns what the
/// configuration asked for and was not done before `use_` (expansion,
/// privatization), as notes.
pub(crate) fn with_lowered<R>(
    src: &SourceFile,
    scop: &Scop,
    config: &Config,
    context: Option<&str>,
    use_: impl FnOnce(&Scop, &codegen::Lowered<'_, '_>) -> R,
) -> Result<(R, Vec<String>), EngineError> {
    let mut use_ = Some(use_);
    let (mut used, notes) = with_lowered_each(
        src,
        scop,
        std::slice::from_ref(config),
        context,
        |scop, lowered, _| use_.take().map(|u| u(scop, lowered)),
    )?;
    Ok((used.pop().flatten().expect("one configuration"), notes))
}

/// [`with_lowered`] for configurations that share one schedule (the same
/// [`crate::engine::space::schedule_key`]; the first stands for them all):
/// the SCoP is modelled, scheduled and its loops generated once, and
/// `use_` called with each configuration in turn.
pub(crate) fn with_lowered_each<R>(
    src: &SourceFile,
    scop: &Scop,
    configs: &[Config],
    context: Option<&str>,
    mut use_: impl FnMut(&Scop, &codegen::Lowered<'_, '_>, &Config) -> R,
) -> Result<(Vec<R>, Vec<String>), EngineError> {
    let config = &configs[0];
    debug_assert!(
        configs
            .iter()
            .all(|c| crate::engine::space::schedule_key(c)
                == crate::engine::space::schedule_key(config)),
        "configurations of different schedules"
    );
    check_limits(scop)?;
    let ctx = Ctx::new();
    bounded(&ctx, scop, || {
        let model = Model::new(&ctx, scop, context)?;
        // The user's OpenMP directives hold on the original program, or
        // the SCoP stays as written.
        if !scop.directives.is_empty() {
            let dead = crate::frontend::liveness::dead_scalars(src, scop);
            crate::engine::model::prove_directives(&model, scop, &dead)?;
        }
        let mut notes = Vec::new();
        // With `exp=1`, the SCoP with its scalars expanded is modelled and
        // transformed instead.
        let rewritten;
        let (scop, model) = match expanded(src, scop, &model, config)? {
            Some(Ok(s)) => {
                rewritten = s;
                (&rewritten, Model::new(&ctx, &rewritten, context)?)
            }
            Some(Err(note)) => {
                notes.push(note);
                (scop, model)
            }
            None => (scop, model),
        };
        let private = if config.privatize.on() {
            let dead = crate::frontend::liveness::dead_scalars(src, scop);
            match transform::privatized(&model, scop, &dead, config, None)? {
                Ok(made) => Some(made),
                Err(note) => {
                    notes.push(note);
                    None
                }
            }
        } else {
            None
        };
        // The privatized schedule's loops, unless they cannot be
        // generated and checked (then without privatization, as `space`
        // enumerates it; the check of the generated order is stricter than
        // the scheduler's about live ranges at different depths).
        let privatized = match &private {
            Some((private, schedule)) => match codegen::lower(private, scop.index, schedule) {
                Ok(lowered) => Some(lowered),
                Err(e @ EngineError::Isl(_)) => return Err(e),
                Err(EngineError::Internal { .. }) => {
                    notes.push(
                        "priv=1 left out: the generated loops could not be shown to keep \
                         the scalars' live ranges apart"
                            .into(),
                    );
                    None
                }
                Err(e) => {
                    notes.push(format!("priv=1 left out: {}", e.reason()));
                    None
                }
            },
            None => None,
        };
        let lowered = match privatized {
            Some(lowered) => lowered,
            None => {
                let schedule = transform::schedule(&model, scop.index, config)?;
                codegen::lower(&model, scop.index, &schedule)?
            }
        };
        let used = configs.iter().map(|c| use_(scop, &lowered, c)).collect();
        Ok((used, notes))
    })?
}

/// With `exp=1` (`config.expand`): `scop` with its scalars expanded
/// ([`Model::expanded`]; `model` is its model), or why none can be.
pub(crate) fn expanded(
    src: &SourceFile,
    scop: &Scop,
    model: &Model<'_>,
    config: &Config,
) -> Result<Option<Result<Scop, String>>, EngineError> {
    if !config.expand {
        return Ok(None);
    }
    if scop.team.is_some() {
        // Every thread of the user's team would allocate its own arrays.
        return Ok(Some(Err(
            "exp=1 left out: the SCoP is a work-shared loop of the user's `omp parallel` region"
                .into(),
        )));
    }
    let dead = crate::frontend::liveness::dead_scalars(src, scop);
    model.expanded(scop, &dead).map(Some)
}

/// The SCoPs of `src` whose user's OpenMP directives do not hold on the
/// original program (`model/directive.rs`), each with the note that says
/// why: every variant leaves them as written. A SCoP the engine cannot
/// model is not among them (the transformation says why).
pub fn unproven_directives(src: &SourceFile, context: Option<&str>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for scop in src.scops.iter().filter(|s| !s.directives.is_empty()) {
        if let Err((Some(span), reason)) = prove_directives(src, scop, context) {
            let (line, col) = src.line_col(span.start);
            out.push((
                scop.index,
                format!(
                    "{}:{line}:{col}: SCoP {} left unchanged: {reason}",
                    src.path.display(),
                    scop.index
                ),
            ));
        }
    }
    out
}

/// Whether `scop`'s user's OpenMP directives hold (see
/// [`unproven_directives`]): the first that does not, with its position
/// and why, or why the SCoP could not be modelled (no position).
pub fn prove_directives(
    src: &SourceFile,
    scop: &Scop,
    context: Option<&str>,
) -> Result<(), (Option<crate::frontend::scop::ast::Span>, String)> {
    if scop.directives.is_empty() {
        return Ok(());
    }
    let ctx = Ctx::new();
    let proven = bounded(&ctx, scop, || {
        let model = Model::new(&ctx, scop, context)?;
        let dead = crate::frontend::liveness::dead_scalars(src, scop);
        crate::engine::model::prove_directives(&model, scop, &dead)
    });
    match proven {
        Ok(Ok(())) => Ok(()),
        Ok(Err(EngineError::Assumption { span, reason, .. })) => Err((Some(span), reason)),
        Ok(Err(e)) | Err(e) => Err((None, e.reason())),
    }
}

/// Applies `config` to every SCoP of the file.
pub fn optimize(
    src: &SourceFile,
    config: &Config,
    context: Option<&str>,
) -> Result<Outcome, EngineError> {
    let (bodies, mut outcome) = transform_all(src, config, context)?;
    outcome.text = src.splice_framed(&bodies);
    Ok(outcome)
}

/// The measurement build of the file (see [`instrument`]): every SCoP
/// region instrumented, under `config`, or as the user wrote it when
/// `config` is `None`.
pub fn instrumented(
    src: &SourceFile,
    config: Option<&Config>,
    context: Option<&str>,
) -> Result<Outcome, EngineError> {
    let (bodies, mut outcome) = match config {
        Some(config) => {
            let (framed, outcome) = transform_all(src, config, context)?;
            (
                framed.into_iter().map(|r| r.body).collect::<Vec<_>>(),
                outcome,
            )
        }
        None => (
            src.scops
                .iter()
                .map(|s| src.text[s.region.body.start..s.region.body.end].to_string())
                .collect(),
            Outcome {
                text: String::new(),
                skipped: Vec::new(),
                internal: Vec::new(),
                openmp: false,
                notes: Vec::new(),
            },
        ),
    };
    outcome.text = instrument::instrument(src, &bodies)?;
    Ok(outcome)
}

/// The measurement build of `variant`, a program the engine wrote from
/// `src` (its SCoP regions in `src`'s order), without transforming again;
/// `None` when its regions do not match `src`'s.
pub fn instrumented_variant(
    src: &SourceFile,
    variant: &str,
) -> Result<Option<String>, EngineError> {
    match src.scop_bodies(variant) {
        Some(bodies) => Ok(Some(instrument::instrument(src, &bodies)?)),
        None => Ok(None),
    }
}

/// What replaces every SCoP under `config` (its old body where the engine
/// could not transform it), with the reasons; the text is left empty.
fn transform_all(
    src: &SourceFile,
    config: &Config,
    context: Option<&str>,
) -> Result<(Vec<Replacement>, Outcome), EngineError> {
    let mut bodies = Vec::new();
    let mut skipped = Vec::new();
    let mut internal = Vec::new();
    let mut openmp = false;
    let mut notes = Vec::new();
    for s in &src.scops {
        match transform_scop(src, s, config, context) {
            Ok(body) => {
                openmp |= body.openmp;
                let (line, _) = src.line_col(s.region.open.start);
                notes.extend(
                    body.notes
                        .iter()
                        .map(|n| format!("{}:{line}: SCoP {}: {n}", src.path.display(), s.index)),
                );
                bodies.push(body.replacement());
            }
            Err(e @ EngineError::Context { .. }) => return Err(e),
            Err(EngineError::Assumption { span, reason, .. }) => {
                let (line, col) = src.line_col(span.start);
                skipped.push(format!(
                    "{}:{line}:{col}: SCoP {} left unchanged: {reason}",
                    src.path.display(),
                    s.index
                ));
                bodies.push(Replacement::body(s.original.clone()));
            }
            Err(e) => {
                let (line, _) = src.line_col(s.region.open.start);
                let list = if matches!(e, EngineError::Internal { .. }) {
                    &mut internal
                } else {
                    &mut skipped
                };
                list.push(format!(
                    "{}:{line}: SCoP {} left unchanged: {e}",
                    src.path.display(),
                    s.index
                ));
                bodies.push(Replacement::body(
                    src.text[s.region.body.start..s.region.body.end].to_string(),
                ));
            }
        }
    }
    Ok((
        bodies,
        Outcome {
            text: String::new(),
            skipped,
            internal,
            openmp,
            notes,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::{self, Options};
    use std::path::Path;
    use std::time::{Duration, Instant};

    fn source(body: &str) -> SourceFile {
        let text = format!(
            "void f(int n, double A[100][100], double B[100]) {{\n#pragma scop\n{body}#pragma endscop\n}}\n"
        );
        frontend::parse_source(Path::new("limits.c"), text, &Options::default()).unwrap()
    }

    fn nest(depth: usize, body: &str) -> String {
        (0..depth)
            .map(|k| format!("for (i{k} = 0; i{k} < n; i{k}++)\n"))
            .collect::<String>()
            + body
    }

    #[test]
    fn deep_nests_and_many_statements_are_refused_up_front() {
        let config: Config = "fuse=smart,tile=32x32x1,wave=0,omp=1,prevec=1,simd=1,uj=1"
            .parse()
            .unwrap();
        for (src, why) in [
            (
                source(&nest(MAX_DEPTH + 1, "B[i0] += 1;\n")),
                "13 nested loops",
            ),
            (
                source(&format!(
                    "for (i = 0; i < n; i++) {{ {} }}\n",
                    "B[i] += 1;".repeat(MAX_STATEMENTS + 1)
                )),
                "101 statements",
            ),
        ] {
            let start = Instant::now();
            let out = optimize(&src, &config, None).unwrap();
            assert!(start.elapsed() < Duration::from_secs(2));
            assert_eq!(out.text, src.text);
            assert_eq!(out.skipped.len(), 1);
            assert!(out.skipped[0].contains(why), "{}", out.skipped[0]);
        }
        // At the limits, the engine works.
        let src = source(&nest(MAX_DEPTH, "B[i0] += 1;\n"));
        assert!(check_limits(&src.scops[0]).is_ok());
    }

    /// Four statements in a 6-deep nest that read what the others write:
    /// isl's scheduler needs more than 30 s and 1.9 million operations.
    fn expensive() -> SourceFile {
        let body: String = (0..4)
            .map(|k| format!("  A[i5][i4] += B[i0] * A[i4][{k}];\n"))
            .collect();
        source(&nest(6, &format!("{{\n{body}}}\n")))
    }

    fn schedule_of(ctx: &Ctx, src: &SourceFile) -> Result<(), EngineError> {
        let scop = &src.scops[0];
        let model = Model::new(ctx, scop, None)?;
        let config: Config = "fuse=smart,tile=32x32x32,wave=1,omp=1,prevec=1,simd=1,uj=4"
            .parse()
            .unwrap();
        transform::schedule(&model, scop.index, &config)?;
        Ok(())
    }

    #[test]
    fn work_beyond_the_operation_limit_is_dropped() {
        let src = expensive();
        let ctx = Ctx::new();
        let start = Instant::now();
        let e = bounded_by(
            &ctx,
            &src.scops[0],
            200_000,
            Duration::from_secs(60),
            || schedule_of(&ctx, &src),
        )
        .unwrap_err();
        assert!(e.to_string().contains("200000 isl operations"), "{e}");
        assert!(start.elapsed() < Duration::from_secs(20));
        // The context is usable again once the limit is lifted.
        let r = bounded_by(&ctx, &src.scops[0], 0, Duration::from_secs(60), || {
            Model::new(&ctx, &src.scops[0], None).map(|_| ())
        });
        assert!(matches!(r, Ok(Ok(()))), "{r:?}");
    }

    #[test]
    fn work_beyond_the_time_limit_is_dropped() {
        let src = expensive();
        let ctx = Ctx::new();
        let start = Instant::now();
        let e = bounded_by(&ctx, &src.scops[0], 0, Duration::from_millis(300), || {
            schedule_of(&ctx, &src)
        })
        .unwrap_err();
        assert!(e.to_string().contains("took more than 0.3 s"), "{e}");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        let r = bounded_by(&ctx, &src.scops[0], 0, Duration::from_secs(60), || {
            Model::new(&ctx, &src.scops[0], None).map(|_| ())
        });
        assert!(matches!(r, Ok(Ok(()))), "{r:?}");
    }
}
