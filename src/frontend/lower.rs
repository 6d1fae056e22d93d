//! Turns a parsed SCoP into its polyhedral description and rejects what is
//! not static control: every loop bound, condition and subscript must be
//! (quasi-)affine in the enclosing iterators and in parameters that the
//! SCoP never writes.

use super::error::SpanError;
use crate::scop::ast::{AssignOp, BinOp, Expr, ExprKind, ForLoop, Span, Stmt, StmtKind, UnOp};
use crate::scop::{
    Access, Affine, Array, DivisionCheck, Formula, Region, ScheduleDim, Scop, Statement,
};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Functions known to be pure (math library and PolyBench's macros).
pub const PURE_FUNCTIONS: &[&str] = &[
    "sqrt",
    "sqrtf",
    "exp",
    "expf",
    "log",
    "logf",
    "log2",
    "log10",
    "pow",
    "powf",
    "fabs",
    "fabsf",
    "abs",
    "labs",
    "sin",
    "sinf",
    "cos",
    "cosf",
    "tan",
    "tanh",
    "atan",
    "atan2",
    "floor",
    "ceil",
    "round",
    "fmin",
    "fmax",
    "fminf",
    "fmaxf",
    "fmod",
    "cbrt",
    "hypot",
    "min",
    "max",
    "MIN",
    "MAX",
    "floord",
    "ceild",
    "SQRT_FUN",
    "EXP_FUN",
    "POW_FUN",
    "FABS_FUN",
    "LOG_FUN",
    "SCALAR_VAL",
];

/// Where an affine expression appears, for messages.
#[derive(Clone, Copy)]
enum Place {
    Bound,
    Condition,
    Subscript,
}

impl Place {
    fn name(self) -> &'static str {
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
enum Piecewise {
    Aff(Affine),
    Min(Vec<Piecewise>),
    Max(Vec<Piecewise>),
}

impl Piecewise {
    fn map(self, f: &mut impl FnMut(Affine) -> Option<Affine>) -> Option<Piecewise> {
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

    fn add(self, other: Piecewise) -> Option<Piecewise> {
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
    fn floor_div(self, d: i64) -> Option<Piecewise> {
        self.map(&mut |a| Some(a.floor_div(d)))
    }

    fn as_affine(&self) -> Option<&Affine> {
        match self {
            Piecewise::Aff(a) => Some(a),
            _ => None,
        }
    }
}

/// `a <= b` as a formula.
fn le(a: &Piecewise, b: &Piecewise) -> Option<Formula> {
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

fn compare(op: BinOp, a: &Piecewise, b: &Piecewise) -> Option<Formula> {
    match op {
        BinOp::Le => le(a, b),
        BinOp::Lt => lt(a, b),
        BinOp::Ge => le(b, a),
        BinOp::Gt => lt(b, a),
        BinOp::Eq => Some(Formula::and(vec![le(a, b)?, le(b, a)?])),
        _ => Some(Formula::or(vec![lt(a, b)?, lt(b, a)?])),
    }
}

struct LoopScope {
    iterator: String,
}

struct Lowerer<'o> {
    pure: &'o HashSet<String>,
    all_iterators: HashSet<String>,
    written_scalars: HashMap<String, Span>,
    loops: Vec<LoopScope>,
    guards: Vec<Formula>,
    prefix: Vec<ScheduleDim>,
    counters: Vec<usize>,
    parameters: Vec<String>,
    statements: Vec<Statement>,
    divisions: Vec<DivisionCheck>,
    /// Name -> (rank, span of first use) for every array or scalar use.
    uses: BTreeMap<String, (usize, Span)>,
    /// Identifiers read as values; those that turn out to be parameters
    /// are dropped from the reads at the end.
    current_reads: Vec<Access>,
}

type R<T> = Result<T, SpanError>;

fn overflow(span: Span) -> SpanError {
    SpanError::new(span, "integer overflow in an affine expression")
}

/// Lowers the parsed body of one SCoP.
pub fn lower(index: usize, region: Region, body: Vec<Stmt>, pure: &HashSet<String>) -> R<Scop> {
    let mut all_iterators = HashSet::new();
    let mut written_scalars = HashMap::new();
    for s in &body {
        collect(s, &mut all_iterators, &mut written_scalars)?;
    }
    if let Some((name, span)) = written_scalars
        .iter()
        .find(|(n, _)| all_iterators.contains(*n))
    {
        return Err(SpanError::new(
            *span,
            format!("`{name}` is a loop iterator and is also assigned in the SCoP"),
        )
        .help("loop iterators may only be changed by their loop header; use another variable"));
    }
    let mut l = Lowerer {
        pure,
        all_iterators,
        written_scalars,
        loops: Vec::new(),
        guards: Vec::new(),
        prefix: Vec::new(),
        counters: vec![0],
        parameters: Vec::new(),
        statements: Vec::new(),
        divisions: Vec::new(),
        uses: BTreeMap::new(),
        current_reads: Vec::new(),
    };
    for s in &body {
        l.stmt(s)?;
    }
    if l.statements.is_empty() {
        return Err(
            SpanError::new(region.open, "the SCoP contains no statement")
                .help("put at least one assignment between `#pragma scop` and `#pragma endscop`"),
        );
    }
    l.finish(index, region, body)
}

/// Pre-pass: every loop iterator, and every scalar that is assigned.
fn collect(s: &Stmt, iters: &mut HashSet<String>, written: &mut HashMap<String, Span>) -> R<()> {
    match &s.kind {
        StmtKind::For(l) => {
            iters.insert(l.iterator.clone());
            collect(&l.body, iters, written)
        }
        StmtKind::If { then, other, .. } => {
            collect(then, iters, written)?;
            if let Some(o) = other {
                collect(o, iters, written)?;
            }
            Ok(())
        }
        StmtKind::Block(v) => v.iter().try_for_each(|x| collect(x, iters, written)),
        StmtKind::Assign { lhs, .. } => {
            if let ExprKind::Ident(n) = &lhs.kind {
                written.entry(n.clone()).or_insert(lhs.span);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

impl Lowerer<'_> {
    fn in_scope(&self, name: &str) -> Option<usize> {
        self.loops.iter().position(|l| l.iterator == name)
    }

    fn stmt(&mut self, s: &Stmt) -> R<()> {
        match &s.kind {
            StmtKind::For(l) => self.for_loop(l),
            StmtKind::If { cond, then, other } => {
                let f = self.condition(cond, Place::Condition)?;
                self.guards.push(f.clone());
                self.stmt(then)?;
                self.guards.pop();
                if let Some(o) = other {
                    let neg = f.negate().ok_or_else(|| overflow(cond.span))?;
                    self.guards.push(neg);
                    self.stmt(o)?;
                    self.guards.pop();
                }
                Ok(())
            }
            StmtKind::Block(v) => v.iter().try_for_each(|x| self.stmt(x)),
            StmtKind::Assign { id, lhs, op, rhs } => self.assignment(*id, s.span, lhs, *op, rhs),
            StmtKind::Expr(e) => Err(match &e.kind {
                ExprKind::Unary {
                    op: UnOp::PostInc | UnOp::PreInc | UnOp::PostDec | UnOp::PreDec,
                    ..
                } => SpanError::new(e.span, "increment or decrement outside a loop header is not supported")
                    .help("write it as an assignment, e.g. `x = x + 1;`"),
                ExprKind::Call { name, .. } => {
                    SpanError::new(e.span, format!("call to `{name}` as a statement is not supported in a SCoP"))
                        .help("a SCoP may only contain assignments; move the call outside the region")
                }
                _ => SpanError::new(e.span, "expression statement without assignment")
                    .help("a SCoP statement must assign to an array element or a scalar"),
            }),
            StmtKind::Unsupported(what) => Err(SpanError::new(s.span, format!("{what} is not supported in a SCoP"))
                .help("a SCoP may contain only for loops, if statements, blocks and assignments; move other code outside `#pragma scop` ... `#pragma endscop`")),
            StmtKind::Empty => Ok(()),
        }
    }

    fn for_loop(&mut self, l: &ForLoop) -> R<()> {
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
        let init = self.piecewise(&l.init, Place::Bound)?;
        // Bring the iterator into scope for the condition.
        self.loops.push(LoopScope {
            iterator: it.to_string(),
        });
        let cond = self.condition(&l.cond, Place::Bound);
        self.loops.pop();
        let cond = cond?;
        check_monotone(&cond, it, stride, l.cond.span)?;

        let var = Piecewise::Aff(Affine::var(it));
        let start = if stride > 0 {
            le(&init, &var)
        } else {
            le(&var, &init)
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
        });
        let r = self.stmt(&l.body);
        self.loops.pop();
        self.counters.pop();
        self.prefix.truncate(self.prefix.len() - 2);
        self.counters[d] += 1;
        self.guards.pop();
        r
    }

    fn assignment(&mut self, id: usize, span: Span, lhs: &Expr, op: AssignOp, rhs: &Expr) -> R<()> {
        self.current_reads.clear();
        let write = match &lhs.kind {
            ExprKind::Access { name, subscripts } => self.access(name, subscripts, lhs.span)?,
            ExprKind::Ident(name) => {
                self.note_use(name, 0, lhs.span)?;
                Access {
                    array: name.clone(),
                    subscripts: vec![],
                    span: lhs.span,
                }
            }
            _ => {
                return Err(SpanError::new(
                    lhs.span,
                    "assignment target must be an array element or a scalar variable",
                )
                .help("write to `A[i][j]` or to a local scalar"));
            }
        };
        if op != AssignOp::Assign {
            self.current_reads.push(write.clone());
        }
        self.value(rhs)?;
        let d = self.loops.len();
        let mut schedule = self.prefix.clone();
        schedule.push(ScheduleDim::Position(self.counters[d]));
        self.counters[d] += 1;
        self.statements.push(Statement {
            id,
            iterators: self.loops.iter().map(|l| l.iterator.clone()).collect(),
            domain: Formula::and(self.guards.clone()),
            schedule,
            reads: std::mem::take(&mut self.current_reads),
            writes: vec![write],
            span,
        });
        Ok(())
    }

    fn note_use(&mut self, name: &str, rank: usize, span: Span) -> R<()> {
        match self.uses.get(name) {
            Some(&(r, first)) if r != rank => {
                let what = |r: usize| {
                    if r == 0 {
                        "a scalar".to_string()
                    } else {
                        format!("an array with {r} subscript(s)")
                    }
                };
                Err(SpanError::new(span, format!("`{name}` is used as {} here but as {} earlier", what(rank), what(r)))
                    .help(format!("first use at byte {}; every use of an array needs the same number of subscripts", first.start)))
            }
            Some(_) => Ok(()),
            None => {
                self.uses.insert(name.to_string(), (rank, span));
                Ok(())
            }
        }
    }

    fn access(&mut self, name: &str, subscripts: &[Expr], span: Span) -> R<Access> {
        if self.all_iterators.contains(name) {
            return Err(SpanError::new(
                span,
                format!("loop iterator `{name}` is subscripted like an array"),
            ));
        }
        let mut subs = Vec::new();
        for s in subscripts {
            let p = self.piecewise(s, Place::Subscript)?;
            match p {
                Piecewise::Aff(a) => subs.push(a),
                _ => {
                    return Err(
                        SpanError::new(s.span, "min/max in a subscript is not supported")
                            .help("min and max are accepted in loop bounds and conditions only"),
                    );
                }
            }
        }
        self.note_use(name, subs.len(), span)?;
        Ok(Access {
            array: name.to_string(),
            subscripts: subs,
            span,
        })
    }

    /// Walks a value expression, recording reads.
    fn value(&mut self, e: &Expr) -> R<()> {
        match &e.kind {
            ExprKind::Int { .. } | ExprKind::Float(_) => Ok(()),
            ExprKind::Ident(name) => {
                if self.in_scope(name).is_some() {
                    return Ok(());
                }
                if self.all_iterators.contains(name) {
                    return Err(SpanError::new(e.span, format!("loop iterator `{name}` is used outside its loop"))
                        .help("its value after the loop is not static control; use the bound expression instead"));
                }
                self.note_use(name, 0, e.span)?;
                self.current_reads.push(Access {
                    array: name.clone(),
                    subscripts: vec![],
                    span: e.span,
                });
                Ok(())
            }
            ExprKind::Access { name, subscripts } => {
                let a = self.access(name, subscripts, e.span)?;
                self.current_reads.push(a);
                Ok(())
            }
            ExprKind::Call { name, args } => {
                if !self.pure.contains(name.as_str()) {
                    return Err(SpanError::new(
                        e.span,
                        format!("call to `{name}`, which polytune does not know to be pure"),
                    )
                    .help(format!(
                        "if `{name}` has no side effects, pass `--pure {name}`"
                    )));
                }
                args.iter().try_for_each(|a| self.value(a))
            }
            ExprKind::Unary { op, expr } => match op {
                UnOp::Neg | UnOp::Plus | UnOp::Not | UnOp::BitNot => self.value(expr),
                UnOp::Deref | UnOp::AddrOf => Err(SpanError::new(
                    e.span,
                    "pointer dereference or address-of is not supported in a SCoP",
                )
                .help("access data through array subscripts")),
                _ => Err(SpanError::new(
                    e.span,
                    "increment or decrement inside an expression is not supported",
                )
                .help("a SCoP statement may have only one side effect: its assignment")),
            },
            ExprKind::Binary { lhs, rhs, .. } => {
                self.value(lhs)?;
                self.value(rhs)
            }
            ExprKind::Ternary { cond, then, other } => {
                self.value(cond)?;
                self.value(then)?;
                self.value(other)
            }
            ExprKind::Cast { expr, .. } => self.value(expr),
            ExprKind::Unsupported(what) => Err(SpanError::new(
                e.span,
                format!("{what} is not supported in a SCoP"),
            )),
        }
    }

    /// A loop bound, condition operand or subscript.
    fn piecewise(&mut self, e: &Expr, place: Place) -> R<Piecewise> {
        let non_affine = |why: String| {
            SpanError::new(e.span, format!("non-affine {}: {why}", place.name())).help(
                "loop bounds, conditions and subscripts must be affine in the loop iterators and in parameters the SCoP does not write",
            )
        };
        match &e.kind {
            ExprKind::Int { value, .. } => Ok(Piecewise::Aff(Affine::constant(*value))),
            ExprKind::Ident(name) => {
                if self.in_scope(name).is_some() {
                    return Ok(Piecewise::Aff(Affine::var(name)));
                }
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
                Ok(Piecewise::Aff(Affine::var(name)))
            }
            ExprKind::Unary {
                op: UnOp::Plus,
                expr,
            } => self.piecewise(expr, place),
            ExprKind::Unary {
                op: UnOp::Neg,
                expr,
            } => self
                .piecewise(expr, place)?
                .scale(-1)
                .ok_or_else(|| overflow(e.span)),
            ExprKind::Cast { ty, expr } if is_integer_type(ty) => self.piecewise(expr, place),
            ExprKind::Binary { op, lhs, rhs } => match op {
                BinOp::Add | BinOp::Sub => {
                    let a = self.piecewise(lhs, place)?;
                    let mut b = self.piecewise(rhs, place)?;
                    if *op == BinOp::Sub {
                        b = b.scale(-1).ok_or_else(|| overflow(e.span))?;
                    }
                    a.add(b).ok_or_else(|| overflow(e.span))
                }
                BinOp::Mul => {
                    let a = self.piecewise(lhs, place)?;
                    let b = self.piecewise(rhs, place)?;
                    let (k, other) = match (constant_of(&a), constant_of(&b)) {
                        (Some(k), _) => (k, b),
                        (_, Some(k)) => (k, a),
                        _ => {
                            return Err(non_affine(
                                "product of two non-constant expressions".into(),
                            ));
                        }
                    };
                    other.scale(k).ok_or_else(|| overflow(e.span))
                }
                BinOp::Div => {
                    let a = self.piecewise(lhs, place)?;
                    let b = self.piecewise(rhs, place)?;
                    let d = self.divisor(&b, rhs.span)?;
                    if let Some(c) = constant_of(&a) {
                        // C truncates toward zero.
                        return Ok(Piecewise::Aff(Affine::constant(c / d)));
                    }
                    self.record_dividends(&a, e.span);
                    a.floor_div(d).ok_or_else(|| overflow(e.span))
                }
                BinOp::Mod => Err(non_affine(
                    "`%` is not supported in affine expressions".into(),
                )),
                _ => Err(non_affine(format!("operator `{}`", op.symbol()))),
            },
            ExprKind::Call { name, args } => match (name.as_str(), args.as_slice()) {
                ("min" | "MIN" | "max" | "MAX", [_, _, ..]) => {
                    let parts = args
                        .iter()
                        .map(|a| self.piecewise(a, place))
                        .collect::<R<Vec<_>>>()?;
                    Ok(if name.eq_ignore_ascii_case("min") {
                        Piecewise::Min(parts)
                    } else {
                        Piecewise::Max(parts)
                    })
                }
                ("floord" | "ceild", [a, b]) => {
                    let x = self.piecewise(a, place)?;
                    let y = self.piecewise(b, place)?;
                    let d = self.divisor(&y, b.span)?;
                    if name == "floord" {
                        x.floor_div(d).ok_or_else(|| overflow(e.span))
                    } else {
                        // ceil(x/d) = -floor(-x/d)
                        x.scale(-1)
                            .and_then(|n| n.floor_div(d))
                            .and_then(|f| f.scale(-1))
                            .ok_or_else(|| overflow(e.span))
                    }
                }
                _ => Err(non_affine(format!("call to `{name}`"))),
            },
            ExprKind::Access { name, .. } => Err(non_affine(format!(
                "it reads array `{name}`, so it depends on data"
            ))),
            ExprKind::Float(_) => Err(non_affine("floating-point constant".into())),
            ExprKind::Ternary { .. } => Err(non_affine(
                "conditional expression (use min/max instead)".into(),
            )),
            ExprKind::Cast { ty, .. } => {
                Err(non_affine(format!("cast to non-integer type `{ty}`")))
            }
            ExprKind::Unary { .. } => Err(non_affine("unsupported unary operator".into())),
            ExprKind::Unsupported(what) => Err(SpanError::new(
                e.span,
                format!("{what} is not supported in a SCoP"),
            )),
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

    fn condition(&mut self, e: &Expr, place: Place) -> R<Formula> {
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
                let a = self.piecewise(lhs, place)?;
                let b = self.piecewise(rhs, place)?;
                compare(*op, &a, &b).ok_or_else(|| overflow(e.span))
            }
            ExprKind::Int { value, .. } => Ok(if *value != 0 { Formula::truth() } else { Formula::Or(vec![]) }),
            _ => Err(SpanError::new(e.span, "condition must be a comparison of affine expressions")
                .help("combine comparisons with &&, || and !; data-dependent conditions are not static control")),
        }
    }

    fn finish(self, index: usize, region: Region, body: Vec<Stmt>) -> R<Scop> {
        let params: HashSet<&String> = self.parameters.iter().collect();
        let mut statements = self.statements;
        for s in &mut statements {
            s.reads
                .retain(|a| !(a.subscripts.is_empty() && params.contains(&a.array)));
        }
        // Arrays in order of first use.
        let mut order: Vec<(&String, &(usize, Span))> = self
            .uses
            .iter()
            .filter(|(n, _)| !params.contains(n))
            .collect();
        order.sort_by_key(|(_, (_, sp))| sp.start);
        let written: HashSet<&str> = statements
            .iter()
            .flat_map(|s| s.writes.iter().map(|w| w.array.as_str()))
            .collect();
        for (name, (rank, span)) in &order {
            if *rank > 0 && params.contains(name) {
                return Err(SpanError::new(
                    *span,
                    format!("`{name}` is used both as an array and as a parameter"),
                ));
            }
        }
        let arrays = order
            .iter()
            .map(|(name, (rank, _))| Array {
                name: (*name).clone(),
                rank: *rank,
                written: written.contains(name.as_str()),
            })
            .collect();
        Ok(Scop {
            index,
            region,
            parameters: self.parameters,
            arrays,
            statements,
            body,
            division_checks: self.divisions,
        })
    }
}

fn constant_of(p: &Piecewise) -> Option<i64> {
    p.as_affine().and_then(|a| a.as_constant())
}

fn is_integer_type(ty: &str) -> bool {
    ty.split_whitespace().all(|w| {
        matches!(
            w,
            "int"
                | "long"
                | "short"
                | "unsigned"
                | "signed"
                | "char"
                | "size_t"
                | "ptrdiff_t"
                | "int64_t"
                | "int32_t"
                | "uint64_t"
                | "uint32_t"
                | "const"
        )
    })
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
                    |t| matches!(t, crate::scop::Term::FloorDiv(e, _) if e.coefficient(it) != 0),
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
