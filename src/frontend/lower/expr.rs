//! Affine expressions: loop bounds, conditions and subscripts lowered to
//! piecewise quasi-affine values, and the assumptions (values in the range
//! of their C type, exact divisions) that make the lowering exact.
//!
//! Why one file: a little over 600 lines: `piecewise` lowers every C
//! expression form by one recursion over the same lowerer state, and
//! splitting it by form would spread that recursion over files.

use super::types::{common_type, is_integer_type, literal_type, type_of_spelling};
use super::*;

/// Where an affine expression appears, for messages.
#[derive(Clone, Copy)]
pub(super) enum Place {
    Bound,
    Condition,
    Subscript,
}

impl Place {
    pub(super) fn name(self) -> &'static str {
        match self {
            Place::Bound => "loop bound",
            Place::Condition => "condition",
            Place::Subscript => "subscript",
        }
    }
}

/// Affine expression that may contain `min`/`max` (only in bounds and
/// conditions, where they become conjunctions/disjunctions).
#[derive(Debug, Clone)]
pub(super) enum Piecewise {
    Aff(Affine),
    Min(Vec<Piecewise>),
    Max(Vec<Piecewise>),
}

impl Piecewise {
    pub(super) fn map(self, f: &mut impl FnMut(Affine) -> Option<Affine>) -> Option<Piecewise> {
        Some(match self {
            Piecewise::Aff(a) => Piecewise::Aff(f(a)?),
            Piecewise::Min(v) => {
                Piecewise::Min(v.into_iter().map(|p| p.map(f)).collect::<Option<_>>()?)
            }
            Piecewise::Max(v) => {
                Piecewise::Max(v.into_iter().map(|p| p.map(f)).collect::<Option<_>>()?)
            }
        })
    }

    /// Multiplies by a constant; a negative factor swaps min and max.
    fn scale(self, k: i64) -> Option<Piecewise> {
        let swapped = match self {
            Piecewise::Aff(a) => return Some(Piecewise::Aff(a.scale(k)?)),
            Piecewise::Min(v) if k < 0 => Piecewise::Max(v),
            Piecewise::Max(v) if k < 0 => Piecewise::Min(v),
            other => other,
        };
        swapped.map(&mut |a| a.scale(k))
    }

    pub(super) fn add(self, other: Piecewise) -> Option<Piecewise> {
        match (self, other) {
            (Piecewise::Aff(a), Piecewise::Aff(b)) => Some(Piecewise::Aff(a.add_scaled(&b, 1)?)),
            (Piecewise::Aff(a), p) | (p, Piecewise::Aff(a)) => p.map(&mut |x| x.add_scaled(&a, 1)),
            (Piecewise::Min(v), p) => Some(Piecewise::Min(
                v.into_iter()
                    .map(|x| x.add(p.clone()))
                    .collect::<Option<_>>()?,
            )),
            (Piecewise::Max(v), p) => Some(Piecewise::Max(
                v.into_iter()
                    .map(|x| x.add(p.clone()))
                    .collect::<Option<_>>()?,
            )),
        }
    }

    /// `floor(self / d)`; floor is monotone so it distributes over min/max.
    pub(super) fn floor_div(self, d: i64) -> Option<Piecewise> {
        self.map(&mut |a| Some(a.floor_div(d)))
    }

    pub(super) fn as_affine(&self) -> Option<&Affine> {
        match self {
            Piecewise::Aff(a) => Some(a),
            _ => None,
        }
    }

    /// The number of affine pieces.
    fn pieces(&self) -> usize {
        match self {
            Piecewise::Aff(_) => 1,
            Piecewise::Min(v) | Piecewise::Max(v) => v.iter().map(Piecewise::pieces).sum(),
        }
    }
}

/// Adding or comparing two min/max expressions multiplies their pieces:
/// a bound like `min(n,0) + min(n,1) + ...` with 22 terms took 36 s and
/// 4 GB. The corpus needs at most 4 pieces; 256 is far above any
/// hand-written bound and still lowers in milliseconds.
const MAX_PIECES: usize = 256;

fn check_pieces(a: &Piecewise, b: &Piecewise, span: Span) -> Result<(), SpanError> {
    if a.pieces().saturating_mul(b.pieces()) > MAX_PIECES {
        return Err(SpanError::new(
            span,
            format!(
                "affine expression with too many `min`/`max` pieces (more than {MAX_PIECES}): polytune does not expand it; simplify the bound or compute it before the SCoP"
            ),
        ));
    }
    Ok(())
}

/// `a <= b` as a formula.
pub(super) fn le(a: &Piecewise, b: &Piecewise) -> Option<Formula> {
    Some(match (a, b) {
        (Piecewise::Min(xs), _) => Formula::or(xs.iter().map(|x| le(x, b)).collect::<Option<_>>()?),
        (Piecewise::Max(xs), _) => {
            Formula::and(xs.iter().map(|x| le(x, b)).collect::<Option<_>>()?)
        }
        (_, Piecewise::Min(ys)) => {
            Formula::and(ys.iter().map(|y| le(a, y)).collect::<Option<_>>()?)
        }
        (_, Piecewise::Max(ys)) => Formula::or(ys.iter().map(|y| le(a, y)).collect::<Option<_>>()?),
        (Piecewise::Aff(x), Piecewise::Aff(y)) => Formula::ge0(y.add_scaled(x, -1)?),
    })
}

fn lt(a: &Piecewise, b: &Piecewise) -> Option<Formula> {
    le(&a.clone().add(Piecewise::Aff(Affine::constant(1)))?, b)
}

pub(super) fn compare(op: BinOp, a: &Piecewise, b: &Piecewise) -> Option<Formula> {
    match op {
        BinOp::Le => le(a, b),
        BinOp::Lt => lt(a, b),
        BinOp::Ge => le(b, a),
        BinOp::Gt => lt(b, a),
        BinOp::Eq => Some(Formula::and(vec![le(a, b)?, le(b, a)?])),
        _ => Some(Formula::or(vec![lt(a, b)?, lt(b, a)?])),
    }
}

impl Lowerer<'_> {
    /// The expansion of a call to one of the file's pure function-like
    /// macros, parsed (pushed on `expanding` until the caller pops it);
    /// `None` for a function, a macro without a single expansion, or one
    /// already being expanded.
    pub(super) fn expanded(
        &mut self,
        name: &str,
        args: &[Expr],
        span: Span,
        whole: bool,
    ) -> R<Option<Expr>> {
        let Some(x) = self.expansions.get(name) else {
            return Ok(None);
        };
        // Inside a larger expression the expansion's operators would bind
        // with the ones around it: only a body in parentheses is one
        // operand. A call that is the whole subscript or bound is.
        if !whole && !x.parenthesized() {
            return Ok(None);
        }
        if self.expanding.iter().any(|n| n == name) {
            return Ok(None);
        }
        let Some(e) = x.call(name, args, span)? else {
            return Ok(None);
        };
        self.expanding.push(name.to_string());
        Ok(Some(e))
    }

    /// Every call to one of the file's pure function-like macros in `e`
    /// replaced by its expansion (for a subscript's polynomial, which is
    /// read without the lowering's context).
    pub(super) fn expand_calls(&mut self, e: &Expr, whole: bool) -> R<Expr> {
        let mut out = e.clone();
        match &mut out.kind {
            ExprKind::Call { name, args } => {
                let name = name.clone();
                let args = args.clone();
                if let Some(x) = self.expanded(&name, &args, e.span, whole || e.parens)? {
                    let r = self.expand_calls(&x, true);
                    self.expanding.pop();
                    let mut r = r?;
                    // The call's value is one operand, as `(expansion)`
                    // would be in the user's expression.
                    r.parens = true;
                    return Ok(r);
                }
                let mut new = Vec::new();
                for a in &args {
                    new.push(self.expand_calls(a, true)?);
                }
                if let ExprKind::Call { args, .. } = &mut out.kind {
                    *args = new;
                }
            }
            ExprKind::Access { subscripts: v, .. } => {
                for x in v.iter_mut() {
                    *x = self.expand_calls(x, true)?;
                }
            }
            ExprKind::Unary { expr, .. } | ExprKind::Cast { expr, .. } => {
                **expr = self.expand_calls(expr, false)?;
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                **lhs = self.expand_calls(lhs, false)?;
                **rhs = self.expand_calls(rhs, false)?;
            }
            ExprKind::Ternary { cond, then, other } => {
                **cond = self.expand_calls(cond, false)?;
                **then = self.expand_calls(then, false)?;
                **other = self.expand_calls(other, false)?;
            }
            _ => {}
        }
        Ok(out)
    }

    /// A loop bound, condition operand or subscript, with its C type.
    /// Every value of a type that may be unsigned is recorded as an
    /// assumption (see [`Lowerer::assume_in_range`]).
    pub(super) fn piecewise(&mut self, e: &Expr, place: Place) -> R<(Piecewise, CType)> {
        // Why one function: one match over every form of C expression,
        // each lowered to its affine pieces and C type (or refused with
        // the reason), then the one range assumption they all share.
        let non_affine = |why: String| {
            SpanError::new(e.span, format!("non-affine {}: {why}", place.name())).help(
                "loop bounds, conditions and subscripts must be affine in the loop iterators and in parameters the SCoP does not write",
            )
        };
        let (value, ty, kind) = match &e.kind {
            ExprKind::Int { value, text } => (
                Piecewise::Aff(Affine::constant(*value)),
                literal_type(text, *value),
                Why::Value,
            ),
            ExprKind::Ident(name)
                if self.local_names.contains(name) && self.in_scope(name).is_none() =>
            {
                if let Some(Ok(v)) = self.local_defs.get(name).cloned() {
                    return self.piecewise(&v, place).map_err(|inner| SpanError {
                        span: e.span,
                        message: format!(
                            "`{name}` is declared in a block inside the SCoP with the value `{}`: {}",
                            self.span_text(&v),
                            inner.message
                        ),
                        ..inner
                    });
                }
                return Err(non_affine(self.not_one_value(name)));
            }
            ExprKind::Ident(name) => {
                let ty = self.var_type(name);
                if ty == CType::NotInteger {
                    return Err(non_affine(format!(
                        "`{name}` is not declared with an integer type"
                    )));
                }
                if self.in_scope(name).is_none() {
                    if self.all_iterators.contains(name) {
                        return Err(SpanError::new(
                            e.span,
                            format!("loop iterator `{name}` is used outside its loop"),
                        ));
                    }
                    if self.written_scalars.contains_key(name) {
                        return Err(non_affine(format!(
                            "`{name}` is assigned inside the SCoP, so its value is not static"
                        )));
                    }
                    if !self.parameters.iter().any(|p| p == name) {
                        self.parameters.push(name.clone());
                    }
                }
                (Piecewise::Aff(Affine::var(name)), ty, Why::Value)
            }
            ExprKind::Unary {
                op: UnOp::Plus,
                expr,
            } => {
                let (v, t) = self.piecewise(expr, place)?;
                (v, t.promoted(), Why::Value)
            }
            ExprKind::Unary {
                op: UnOp::Neg,
                expr,
            } => {
                let (v, t) = self.piecewise(expr, place)?;
                let v = v.scale(-1).ok_or_else(|| overflow(e.span))?;
                (v, t.promoted(), Why::Arithmetic)
            }
            ExprKind::Cast { ty, expr } if is_integer_type(ty) => {
                let (v, _) = self.piecewise(expr, place)?;
                (v, type_of_spelling(ty), Why::Value)
            }
            ExprKind::Binary { op, lhs, rhs } => match op {
                BinOp::Add | BinOp::Sub => {
                    let (a, ta) = self.piecewise(lhs, place)?;
                    let (mut b, tb) = self.piecewise(rhs, place)?;
                    let t = common_type(ta, tb);
                    self.operands_in_range(t, &[&a, &b], e);
                    if *op == BinOp::Sub {
                        b = b.scale(-1).ok_or_else(|| overflow(e.span))?;
                    }
                    check_pieces(&a, &b, e.span)?;
                    (
                        a.add(b).ok_or_else(|| overflow(e.span))?,
                        t,
                        Why::Arithmetic,
                    )
                }
                BinOp::Mul => {
                    let (a, ta) = self.piecewise(lhs, place)?;
                    let (b, tb) = self.piecewise(rhs, place)?;
                    let t = common_type(ta, tb);
                    self.operands_in_range(t, &[&a, &b], e);
                    let (k, other) = match (constant_of(&a), constant_of(&b)) {
                        (Some(k), _) => (k, b),
                        (_, Some(k)) => (k, a),
                        _ => {
                            return Err(non_affine(
                                "product of two non-constant expressions".into(),
                            ));
                        }
                    };
                    (
                        other.scale(k).ok_or_else(|| overflow(e.span))?,
                        t,
                        Why::Arithmetic,
                    )
                }
                BinOp::Div => {
                    let (a, ta) = self.piecewise(lhs, place)?;
                    let (b, tb) = self.piecewise(rhs, place)?;
                    let t = common_type(ta, tb);
                    self.operands_in_range(t, &[&a, &b], e);
                    let d = self.divisor(&b, rhs.span)?;
                    if let Some(c) = constant_of(&a) {
                        // C truncates toward zero.
                        (Piecewise::Aff(Affine::constant(c / d)), t, Why::Arithmetic)
                    } else {
                        self.record_dividends(&a, e.span);
                        (
                            a.floor_div(d).ok_or_else(|| overflow(e.span))?,
                            t,
                            Why::Arithmetic,
                        )
                    }
                }
                BinOp::Mod => {
                    return Err(non_affine(
                        "`%` is not supported in affine expressions".into(),
                    ));
                }
                _ => return Err(non_affine(format!("operator `{}`", op.symbol()))),
            },
            ExprKind::Call { name, args } => match (name.as_str(), args.as_slice()) {
                ("min" | "MIN" | "max" | "MAX", [_, _, ..]) => {
                    let mut parts = Vec::new();
                    let mut t: Option<CType> = None;
                    for a in args {
                        let (v, ta) = self.piecewise(a, place)?;
                        t = Some(t.map_or(ta.promoted(), |t| common_type(t, ta)));
                        parts.push(v);
                    }
                    let t = t.unwrap_or(CType::Int);
                    // The macros compare their arguments in the common type.
                    self.operands_in_range(t, &parts.iter().collect::<Vec<_>>(), e);
                    let v = if name.eq_ignore_ascii_case("min") {
                        Piecewise::Min(parts)
                    } else {
                        Piecewise::Max(parts)
                    };
                    (v, t, Why::Arithmetic)
                }
                ("floord" | "ceild", [a, b]) => {
                    let (x, tx) = self.piecewise(a, place)?;
                    let (y, ty) = self.piecewise(b, place)?;
                    let t = common_type(tx, ty);
                    self.operands_in_range(t, &[&x, &y], e);
                    let d = self.divisor(&y, b.span)?;
                    let v = if name == "floord" {
                        x.floor_div(d).ok_or_else(|| overflow(e.span))?
                    } else {
                        // ceil(x/d) = -floor(-x/d)
                        x.scale(-1)
                            .and_then(|n| n.floor_div(d))
                            .and_then(|f| f.scale(-1))
                            .ok_or_else(|| overflow(e.span))?
                    };
                    (v, t, Why::Arithmetic)
                }
                _ => match self.expanded(name, args, e.span, e.parens)? {
                    Some(x) => {
                        let r = self.piecewise(&x, place);
                        self.expanding.pop();
                        return r;
                    }
                    None => return Err(non_affine(format!("call to `{name}`"))),
                },
            },
            ExprKind::Access { name, .. } => match self.invariant_load(e, place)? {
                Some((v, t)) => (v, t, Why::Value),
                None => {
                    return Err(non_affine(format!(
                        "it reads array `{name}`, so it depends on data"
                    )));
                }
            },
            ExprKind::Float(_) => return Err(non_affine("floating-point constant".into())),
            ExprKind::Ternary { .. } => {
                return Err(non_affine(
                    "conditional expression (use min/max instead)".into(),
                ));
            }
            ExprKind::Cast { ty, .. } => {
                return Err(non_affine(format!("cast to non-integer type `{ty}`")));
            }
            ExprKind::Unary { .. } => return Err(non_affine("unsupported unary operator".into())),
            ExprKind::Unsupported(what) => match self.invariant_load(e, place)? {
                Some((v, t)) => (v, t, Why::Value),
                None => {
                    return Err(SpanError::new(
                        e.span,
                        format!("{what} is not supported in a SCoP"),
                    ));
                }
            },
        };
        if ty.maybe_unsigned() {
            self.assume_in_range(&value, ty, kind, e);
        }
        Ok((value, ty))
    }

    /// The C type of a variable: its loop's declaration, a declaration
    /// before the SCoP, or unknown.
    pub(super) fn var_type(&self, name: &str) -> CType {
        if let Some(l) = self.loops.iter().rev().find(|l| l.iterator == name)
            && let Some(t) = l.declared
        {
            return t;
        }
        self.types.get(name).map_or(CType::Unknown, |(t, _)| *t)
    }

    /// The operands of an operation done in type `t`: when `t` may be
    /// unsigned, each is converted to it and must be in `[0, 2^63)`.
    fn operands_in_range(&mut self, t: CType, operands: &[&Piecewise], e: &Expr) {
        if t.maybe_unsigned() {
            for v in operands {
                self.assume_in_range(v, t, Why::Operation, e);
            }
        }
    }

    /// Records that a value of C type `ty` (unsigned or unknown), computed
    /// by `e`, is in `[0, 2^63)` wherever it is evaluated: there the
    /// model's signed integers mean what C means.
    fn assume_in_range(&mut self, value: &Piecewise, ty: CType, why: Why, e: &Expr) {
        match value {
            Piecewise::Min(v) | Piecewise::Max(v) => {
                v.iter().for_each(|x| self.assume_in_range(x, ty, why, e))
            }
            Piecewise::Aff(a) => {
                // Unsigned int wraps at 2^32; the wider ones are read as
                // `long` by the generated code. A type polytune does not
                // know may be unsigned int.
                let max = if matches!(ty, CType::UInt | CType::Unknown) {
                    u32::MAX as i64
                } else {
                    LONG_MAX
                };
                let what = if ty == CType::Unknown {
                    let mut names = Vec::new();
                    self.untyped_names(e, &mut names);
                    let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                    let names = names.join(", ");
                    format!(
                        "`{}` may be unsigned: polytune does not see the declaration of {names} (a macro from a header, or a variable declared elsewhere) and assumes the worst; if it is signed, cast it, e.g. `(long){}`",
                        self.span_text(e),
                        names
                            .split(", ")
                            .next()
                            .unwrap_or_default()
                            .trim_matches('`')
                    )
                } else {
                    why_text(ty, why, &self.span_text(e))
                };
                self.assume_range(a, 0, max, what, e.span);
            }
        }
    }

    /// The names in `e` whose C type polytune does not know.
    fn untyped_names(&self, e: &Expr, out: &mut Vec<String>) {
        match &e.kind {
            ExprKind::Ident(n) if self.var_type(n) == CType::Unknown && !out.contains(n) => {
                out.push(n.clone());
            }
            ExprKind::Unary { expr, .. } => self.untyped_names(expr, out),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.untyped_names(lhs, out);
                self.untyped_names(rhs, out);
            }
            ExprKind::Call { args, .. } => args.iter().for_each(|a| self.untyped_names(a, out)),
            _ => {}
        }
    }

    pub(super) fn span_text(&self, e: &Expr) -> String {
        let words: Vec<&str> = self.text[e.span.start..e.span.end]
            .split_whitespace()
            .collect();
        words.join(" ")
    }

    /// Records that `a` is in `[min, max]` wherever it is evaluated.
    fn assume_range(&mut self, a: &Affine, min: i64, max: i64, what: String, span: Span) {
        {
            {
                if a.as_constant().is_some_and(|c| (min..=max).contains(&c)) {
                    return;
                }
                let iterators: Vec<String> =
                    self.loops.iter().map(|l| l.iterator.clone()).collect();
                let domain = Formula::and(self.guards.clone());
                let key = (iterators.clone(), domain.clone(), a.clone(), min, max);
                if !self.unsigned_seen.insert(key) {
                    return;
                }
                self.unsigned.push(UnsignedCheck {
                    iterators,
                    domain,
                    value: a.clone(),
                    min,
                    max,
                    what,
                    span,
                });
            }
        }
    }

    fn divisor(&self, p: &Piecewise, span: Span) -> R<i64> {
        match constant_of(p) {
            Some(d) if d > 0 => Ok(d),
            Some(_) => Err(SpanError::new(
                span,
                "division by a constant that is not positive",
            )),
            None => Err(SpanError::new(
                span,
                "division by a non-constant expression is not affine",
            )
            .help("only division by a positive integer constant is supported")),
        }
    }

    fn record_dividends(&mut self, p: &Piecewise, span: Span) {
        match p {
            Piecewise::Aff(a) => self.divisions.push(DivisionCheck {
                iterators: self.loops.iter().map(|l| l.iterator.clone()).collect(),
                domain: Formula::and(self.guards.clone()),
                dividend: a.clone(),
                span,
            }),
            Piecewise::Min(v) | Piecewise::Max(v) => {
                v.iter().for_each(|x| self.record_dividends(x, span))
            }
        }
    }

    pub(super) fn condition(&mut self, e: &Expr, place: Place) -> R<Formula> {
        match &e.kind {
            ExprKind::Binary { op: BinOp::And, lhs, rhs } => Ok(Formula::and(vec![self.condition(lhs, place)?, self.condition(rhs, place)?])),
            ExprKind::Binary { op: BinOp::Or, lhs, rhs } => Ok(Formula::or(vec![self.condition(lhs, place)?, self.condition(rhs, place)?])),
            ExprKind::Unary { op: UnOp::Not, expr } => {
                self.condition(expr, place)?.negate().ok_or_else(|| overflow(e.span))
            }
            ExprKind::Binary {
                op: op @ (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne),
                lhs,
                rhs,
            } => {
                let (a, ta) = self.piecewise(lhs, place)?;
                let (b, tb) = self.piecewise(rhs, place)?;
                let t = common_type(ta, tb);
                if t.maybe_unsigned() {
                    self.assume_in_range(&a, t, Why::Comparison, e);
                    self.assume_in_range(&b, t, Why::Comparison, e);
                }
                check_pieces(&a, &b, e.span)?;
                compare(*op, &a, &b).ok_or_else(|| overflow(e.span))
            }
            ExprKind::Int { value, .. } => Ok(if *value != 0 { Formula::truth() } else { Formula::Or(vec![]) }),
            _ => Err(SpanError::new(e.span, "condition must be a comparison of affine expressions")
                .help("combine comparisons with &&, || and !; data-dependent conditions are not static control")),
        }
    }
}

fn constant_of(p: &Piecewise) -> Option<i64> {
    p.as_affine().and_then(|a| a.as_constant())
}

/// The message of an assumption on a value of type `ty`.
fn why_text(ty: CType, why: Why, text: &str) -> String {
    match (ty, why) {
        (CType::Unknown, _) => format!("`{text}` may be unsigned"),
        (_, Why::Comparison) => format!("unsigned comparison `{text}`"),
        (_, Why::Value) => format!("`{text}` has an unsigned type"),
        _ => format!("unsigned arithmetic `{text}`"),
    }
}

/// Why a value must be in the range of its type, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    /// The value itself has an unsigned type.
    Value,
    /// The result of unsigned arithmetic.
    Arithmetic,
    /// An operand converted to the unsigned type of an operation.
    Operation,
    /// An operand of an unsigned comparison.
    Comparison,
}
