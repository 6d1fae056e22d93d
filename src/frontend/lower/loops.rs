//! Loops: a `for` loop's iterator, stride, bounds and the domain it
//! adds, checked to agree with what the C loop runs.

use super::expr::{Piecewise, compare, le};
use super::*;

impl Lowerer<'_> {
    /// A `for` loop: its header checked, its bounds lowered and checked to
    /// agree with what the C loop runs, then its body under its domain.
    pub(super) fn for_loop(&mut self, l: &ForLoop) -> R<()> {
        let it = l.iterator.as_str();
        let (stride, declared) = self.loop_header(l)?;
        let (init, _) = self.piecewise(&l.init, Place::Bound)?;
        // Bring the iterator into scope for the condition.
        self.loops.push(LoopScope {
            iterator: it.to_string(),
            declared,
        });
        let (checks_before, divisions_before) = (self.unsigned.len(), self.divisions.len());
        let cond = self.condition(&l.cond, Place::Bound);
        self.loops.pop();
        let cond = cond?;
        check_monotone(&cond, it, stride, l.cond.span)?;
        let evaluated = self.evaluated(l, &init, &cond, stride)?;
        for c in &mut self.unsigned[checks_before..] {
            c.domain = evaluated.clone();
        }
        for c in &mut self.divisions[divisions_before..] {
            c.domain = evaluated.clone();
        }
        self.narrow_iterator(l, &evaluated);
        let parts = loop_domain(l, &init, cond, stride)?;
        self.guards.push(Formula::and(parts));
        let d = self.loops.len();
        self.prefix.push(ScheduleDim::Position(self.counters[d]));
        self.prefix.push(ScheduleDim::Iterator {
            index: d,
            reversed: stride < 0,
        });
        self.counters.push(0);
        self.loops.push(LoopScope {
            iterator: it.to_string(),
            declared,
        });
        let r = self.stmt(&l.body);
        self.loops.pop();
        self.counters.pop();
        self.prefix.truncate(self.prefix.len() - 2);
        self.counters[d] += 1;
        self.guards.pop();
        r
    }

    /// The loop's step (non-zero) and declared type (an integer one), its
    /// iterator its own.
    fn loop_header(&self, l: &ForLoop) -> R<(i64, Option<CType>)> {
        let it = l.iterator.as_str();
        if self.in_scope(it).is_some() {
            return Err(SpanError::new(
                l.iterator_span,
                format!("loop iterator `{it}` shadows an enclosing loop's iterator"),
            )
            .help("give the inner loop its own iterator"));
        }
        if l.step.variable != it {
            return Err(SpanError::new(
                l.step.span,
                format!(
                    "the loop steps `{}` but its iterator is `{it}`",
                    l.step.variable
                ),
            ));
        }
        let stride = match l.step.stride {
            Some(s) if s != 0 => s,
            _ => {
                return Err(SpanError::new(
                    l.step.span,
                    "loop step is not a non-zero integer constant",
                )
                .help("use `i++`, `i--`, `i += c` or `i -= c` with a constant c"));
            }
        };
        let declared = l.declared_type.as_deref().map(type_of_spelling);
        if declared == Some(CType::NotInteger) {
            return Err(SpanError::new(
                l.iterator_span,
                format!("loop iterator `{it}` is not of an integer type"),
            ));
        }
        Ok((stride, declared))
    }

    /// Where the condition is evaluated: at every iteration and once more,
    /// at the first value that fails it (its assumptions must hold there).
    fn evaluated(&self, l: &ForLoop, init: &Piecewise, cond: &Formula, stride: i64) -> R<Formula> {
        let it = l.iterator.as_str();
        let var = Piecewise::Aff(Affine::var(it));
        let entry = compare(BinOp::Eq, &var, init).ok_or_else(|| overflow(l.init.span))?;
        let previous = shift_formula(cond, it, -stride).ok_or_else(|| overflow(l.cond.span))?;
        let mut evaluated = self.guards.clone();
        evaluated.push(
            if stride > 0 {
                le(init, &var)
            } else {
                le(&var, init)
            }
            .ok_or_else(|| overflow(l.init.span))?,
        );
        evaluated.push(Formula::or(vec![entry, previous]));
        Ok(Formula::and(evaluated))
    }

    /// A narrow iterator (`short`, `char`) wraps when stored: every value
    /// it takes where the condition is `evaluated`, the last one included,
    /// must fit its type.
    fn narrow_iterator(&mut self, l: &ForLoop, evaluated: &Formula) {
        let it = l.iterator.as_str();
        let spelling = l
            .declared_type
            .clone()
            .or_else(|| self.types.get(it).map(|(_, sp)| sp.clone()));
        if let Some((lo, hi)) = spelling.as_deref().and_then(storage_range) {
            let mut iterators: Vec<String> =
                self.loops.iter().map(|l| l.iterator.clone()).collect();
            iterators.push(it.to_string());
            self.unsigned.push(UnsignedCheck {
                iterators,
                domain: evaluated.clone(),
                value: Affine::var(it),
                min: lo,
                max: hi,
                what: format!(
                    "loop iterator `{it}` of type `{}`",
                    spelling.unwrap_or_default()
                ),
                span: l.iterator_span,
            });
        }
    }
}

/// The loop's domain: from its start, under its condition, and on its
/// stride's lattice when the step is not 1.
fn loop_domain(l: &ForLoop, init: &Piecewise, cond: Formula, stride: i64) -> R<Vec<Formula>> {
    let it = l.iterator.as_str();
    let var = Piecewise::Aff(Affine::var(it));
    let start = if stride > 0 {
        le(init, &var)
    } else {
        le(&var, init)
    }
    .ok_or_else(|| overflow(l.init.span))?;
    let mut parts = vec![start, cond];
    if stride.abs() > 1 {
        let Some(lb) = init.as_affine() else {
            return Err(SpanError::new(
                l.init.span,
                "a strided loop must start at a single affine expression",
            )
            .help("min/max is only supported in the start of loops with step 1"));
        };
        // (i - lb) mod |s| = 0, as i - lb - |s| * floor((i - lb) / |s|) = 0.
        let s = stride.abs();
        let diff = Affine::var(it)
            .add_scaled(lb, -1)
            .ok_or_else(|| overflow(l.init.span))?;
        let q = diff.floor_div(s);
        let e = diff
            .add_scaled(&q, -s)
            .ok_or_else(|| overflow(l.init.span))?;
        parts.push(Formula::eq0(e));
    }
    Ok(parts)
}

/// A C loop runs while its condition holds; the domain is the set where it
/// holds. They agree only when the condition, once false, stays false as
/// the iterator advances, and when it bounds the iterator at all.
fn check_monotone(cond: &Formula, it: &str, stride: i64, span: Span) -> R<()> {
    fn atoms_ok(f: &Formula, it: &str, stride: i64) -> bool {
        match f {
            Formula::Atom(c) => {
                let k = c.expr.coefficient(it);
                let in_div = c.expr.terms.keys().any(
                    |t| matches!(t, crate::frontend::scop::Term::FloorDiv(e, _) if e.coefficient(it) != 0),
                );
                let wrong_direction = k != 0 && ((k < 0) != (stride > 0));
                let pinned = c.equality && k != 0;
                !(in_div || pinned || wrong_direction)
            }
            Formula::And(v) | Formula::Or(v) => v.iter().all(|x| atoms_ok(x, it, stride)),
        }
    }
    fn bounded(f: &Formula, it: &str) -> bool {
        match f {
            Formula::Atom(c) => c.expr.coefficient(it) != 0,
            Formula::And(v) => v.iter().any(|x| bounded(x, it)),
            Formula::Or(v) => !v.is_empty() && v.iter().all(|x| bounded(x, it)),
        }
    }
    let dir = if stride > 0 { "upper" } else { "lower" };
    if !atoms_ok(cond, it, stride) {
        return Err(SpanError::new(span, format!("the loop condition is not a plain {dir} bound on `{it}`"))
            .help(format!(
                "a loop that {} `{it}` needs a condition like `{it} {} e` (several joined by && are fine)",
                if stride > 0 { "increments" } else { "decrements" },
                if stride > 0 { "<" } else { ">" }
            )));
    }
    if !bounded(cond, it) {
        return Err(
            SpanError::new(span, format!("the loop condition does not bound `{it}`"))
                .help(format!("add an {dir} bound on `{it}`")),
        );
    }
    Ok(())
}

/// The spelled type of iterator `it` when a loop of the SCoP declares it.
pub(super) fn declared_iterator_type(body: &[Stmt], it: &str) -> Option<String> {
    fn walk(s: &Stmt, it: &str) -> Option<String> {
        match &s.kind {
            StmtKind::For(l) => {
                if l.iterator == it
                    && let Some(t) = &l.declared_type
                {
                    return Some(t.clone());
                }
                walk(&l.body, it)
            }
            StmtKind::If { then, other, .. } => {
                walk(then, it).or_else(|| other.as_deref().and_then(|o| walk(o, it)))
            }
            StmtKind::Block(v) => v.iter().find_map(|x| walk(x, it)),
            _ => None,
        }
    }
    body.iter().find_map(|s| walk(s, it))
}

/// `f` with `it` replaced by `it + delta`.
fn shift_formula(f: &Formula, it: &str, delta: i64) -> Option<Formula> {
    Some(match f {
        Formula::Atom(c) => Formula::Atom(crate::frontend::scop::Constraint {
            expr: shift_affine(&c.expr, it, delta)?,
            equality: c.equality,
        }),
        Formula::And(v) => Formula::And(
            v.iter()
                .map(|x| shift_formula(x, it, delta))
                .collect::<Option<_>>()?,
        ),
        Formula::Or(v) => Formula::Or(
            v.iter()
                .map(|x| shift_formula(x, it, delta))
                .collect::<Option<_>>()?,
        ),
    })
}

fn shift_affine(a: &Affine, it: &str, delta: i64) -> Option<Affine> {
    let mut out = Affine::constant(a.constant);
    for (t, &k) in &a.terms {
        let term = match t {
            crate::frontend::scop::Term::Var(v) if v == it => {
                Affine::var(v).plus_constant(delta)?
            }
            crate::frontend::scop::Term::Var(_) => Affine::term(t.clone()),
            crate::frontend::scop::Term::FloorDiv(e, d) => {
                shift_affine(e, it, delta)?.floor_div(*d)
            }
        };
        out = out.add_scaled(&term, k)?;
    }
    Some(out)
}
