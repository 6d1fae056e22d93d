//! Turns a parsed SCoP into its polyhedral description and rejects what is
//! not static control: every loop bound, condition and subscript must be
//! (quasi-)affine in the enclosing iterators and in parameters that the
//! SCoP never writes.

use super::error::SpanError;
use crate::frontend::scop::ast::{
    AssignOp, BinOp, Expr, ExprKind, ForLoop, LocalPart, Span, Stmt, StmtKind, UnOp,
};
use crate::frontend::scop::{
    Access, Affine, Array, DivisionCheck, Formula, LONG_MAX, Region, ScheduleDim, Scop, Statement,
    UnsignedCheck,
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
    /// The C type of the iterator when the loop declares it.
    declared: Option<CType>,
}

struct Lowerer<'o> {
    pure: &'o HashSet<String>,
    /// The whole file, for the text of constructs in messages.
    text: &'o str,
    /// C types of the names declared before the SCoP (see [`declared_types`]).
    types: HashMap<String, (CType, String)>,
    unsigned: Vec<UnsignedCheck>,
    unsigned_seen: HashSet<(Vec<String>, Formula, Affine, i64, i64)>,
    all_iterators: HashSet<String>,
    written_scalars: HashMap<String, Span>,
    /// Every name a local block declares, and those of the block being
    /// lowered (declared so far).
    local_names: HashSet<String>,
    block_locals: Vec<String>,
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

/// Lowers the parsed body of one SCoP; `text` is the whole file, `types`
/// what [`TypeScan::visible_at`] tells at the start of the SCoP.
pub fn lower(
    index: usize,
    region: Region,
    body: Vec<Stmt>,
    pure: &HashSet<String>,
    text: &str,
    types: Types,
) -> R<Scop> {
    let mut all_iterators = HashSet::new();
    let mut written_scalars = HashMap::new();
    for s in &body {
        collect(s, &mut all_iterators, &mut written_scalars)?;
    }
    let locals: HashSet<String> = crate::frontend::scop::ast::local_names(&body)
        .into_iter()
        .collect();
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
        text,
        types,
        unsigned: Vec::new(),
        unsigned_seen: HashSet::new(),
        all_iterators,
        written_scalars,
        local_names: locals,
        block_locals: Vec::new(),
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
    let original = text[region.body.start..region.body.end].to_string();
    l.finish(index, region, body, original)
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
        StmtKind::Local { parts, .. } => {
            for p in parts {
                match p {
                    LocalPart::Decl { name, span, .. } => {
                        written.entry(name.clone()).or_insert(*span);
                    }
                    LocalPart::Assign { lhs, .. } => {
                        if let ExprKind::Ident(n) = &lhs.kind {
                            written.entry(n.clone()).or_insert(lhs.span);
                        }
                    }
                }
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
            StmtKind::Local { id, parts } => self.local_block(*id, s.span, parts),
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
        let declared = l.declared_type.as_deref().map(type_of_spelling);
        if declared == Some(CType::NotInteger) {
            return Err(SpanError::new(
                l.iterator_span,
                format!("loop iterator `{it}` is not of an integer type"),
            ));
        }
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
        // The condition is evaluated at every iteration and once more, at
        // the first value that fails it: its assumptions must hold there.
        let var = Piecewise::Aff(Affine::var(it));
        let entry = compare(BinOp::Eq, &var, &init).ok_or_else(|| overflow(l.init.span))?;
        let previous = shift_formula(&cond, it, -stride).ok_or_else(|| overflow(l.cond.span))?;
        let mut evaluated = self.guards.clone();
        evaluated.push(
            if stride > 0 {
                le(&init, &var)
            } else {
                le(&var, &init)
            }
            .ok_or_else(|| overflow(l.init.span))?,
        );
        evaluated.push(Formula::or(vec![entry, previous]));
        let evaluated = Formula::and(evaluated);
        for c in &mut self.unsigned[checks_before..] {
            c.domain = evaluated.clone();
        }
        for c in &mut self.divisions[divisions_before..] {
            c.domain = evaluated.clone();
        }
        // A narrow iterator (`short`, `char`) wraps when stored: every value
        // it takes, the last one included, must fit its type.
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

    fn assignment(&mut self, id: usize, span: Span, lhs: &Expr, op: AssignOp, rhs: &Expr) -> R<()> {
        self.current_reads.clear();
        let write = self.target(lhs, op)?;
        self.value(rhs)?;
        self.push_statement(id, span, vec![write]);
        Ok(())
    }

    /// The access an assignment writes; a compound assignment also reads it.
    fn target(&mut self, lhs: &Expr, op: AssignOp) -> R<Access> {
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
        Ok(write)
    }

    /// A statement at the current position, with the reads gathered so far.
    fn push_statement(&mut self, id: usize, span: Span, writes: Vec<Access>) {
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
            writes,
            span,
        });
    }

    /// A block with variables of its own: one statement whose accesses
    /// are those of its parts, its own variables left out (each execution
    /// of the block has fresh ones: nothing flows between executions).
    fn local_block(&mut self, id: usize, span: Span, parts: &[LocalPart]) -> R<()> {
        self.current_reads.clear();
        self.block_locals.clear();
        let mut writes = Vec::new();
        for p in parts {
            match p {
                LocalPart::Decl {
                    ty,
                    name,
                    init,
                    span,
                } => {
                    // A static variable is one for every execution, a
                    // pointer may reach anything, a volatile one is I/O.
                    let why = if ty.split_whitespace().any(|w| w == "static") {
                        Some("is `static`: one variable shared by every execution of the block")
                    } else if ty.contains('*') {
                        Some("is a pointer: what it points to is not known")
                    } else if ty.split_whitespace().any(|w| w == "volatile") {
                        Some("is `volatile`")
                    } else {
                        None
                    };
                    if let Some(why) = why {
                        return Err(SpanError::new(
                            *span,
                            format!("the block's variable `{name}` {why}"),
                        )
                        .help(
                            "declare it before the loop nest, or move the block outside the SCoP",
                        ));
                    }
                    if self.all_iterators.contains(name) || self.uses.contains_key(name) {
                        return Err(SpanError::new(
                            *span,
                            format!("`{name}` is declared here and also names another variable of the SCoP"),
                        )
                        .help("give the block's variable a name of its own"));
                    }
                    if let Some(e) = init {
                        self.value(e)?;
                    }
                    self.block_locals.push(name.clone());
                }
                LocalPart::Assign { lhs, op, rhs, .. } => {
                    match &lhs.kind {
                        // The block's own variable: private, not an access.
                        ExprKind::Ident(n) if self.block_locals.contains(n) => {}
                        _ => writes.push(self.target(lhs, *op)?),
                    }
                    self.value(rhs)?;
                }
            }
        }
        self.block_locals.clear();
        self.push_statement(id, span, writes);
        Ok(())
    }

    fn note_use(&mut self, name: &str, rank: usize, span: Span) -> R<()> {
        if self.local_names.contains(name) {
            return Err(SpanError::new(
                span,
                format!("`{name}` is used outside the block that declares it, or as an array"),
            )
            .help(
                "a variable declared in a block is private to it; give other variables other names",
            ));
        }
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
            let (p, _) = self.piecewise(s, Place::Subscript)?;
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
                if self.in_scope(name).is_some() || self.block_locals.contains(name) {
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

    /// A loop bound, condition operand or subscript, with its C type.
    /// Every value of a type that may be unsigned is recorded as an
    /// assumption (see [`Lowerer::assume_in_range`]).
    fn piecewise(&mut self, e: &Expr, place: Place) -> R<(Piecewise, CType)> {
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
            ExprKind::Ident(name) if self.local_names.contains(name) => {
                return Err(non_affine(format!(
                    "`{name}` is declared in a block inside the SCoP, so its value is not static"
                )));
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
                _ => return Err(non_affine(format!("call to `{name}`"))),
            },
            ExprKind::Access { name, .. } => {
                return Err(non_affine(format!(
                    "it reads array `{name}`, so it depends on data"
                )));
            }
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
            ExprKind::Unsupported(what) => {
                return Err(SpanError::new(
                    e.span,
                    format!("{what} is not supported in a SCoP"),
                ));
            }
        };
        if ty.maybe_unsigned() {
            self.assume_in_range(&value, ty, kind, e);
        }
        Ok((value, ty))
    }

    /// The C type of a variable: its loop's declaration, a declaration
    /// before the SCoP, or unknown.
    fn var_type(&self, name: &str) -> CType {
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

    fn span_text(&self, e: &Expr) -> String {
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

    fn finish(self, index: usize, region: Region, body: Vec<Stmt>, original: String) -> R<Scop> {
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
        let types = &self.types;
        let unsigned_parameters = self
            .parameters
            .iter()
            .filter(|p| types.get(*p).is_none_or(|(t, _)| t.maybe_unsigned()))
            .cloned()
            .collect();
        let parameter_ranges = self
            .parameters
            .iter()
            .map(|p| {
                let range = match types.get(p) {
                    Some((_, spelling)) if spelling == MACRO => (i64::MIN, i64::MAX),
                    Some((t, spelling)) => storage_range(spelling).unwrap_or(match t {
                        CType::Int => (i32::MIN as i64, i32::MAX as i64),
                        CType::UInt => (0, u32::MAX as i64),
                        _ => (i64::MIN, i64::MAX),
                    }),
                    None => (i64::MIN, i64::MAX),
                };
                (p.clone(), range)
            })
            .collect();
        let mut iterator_casts = BTreeMap::new();
        for s in &statements {
            for it in &s.iterators {
                if iterator_casts.contains_key(it) {
                    continue;
                }
                let declared = declared_iterator_type(&body, it);
                let cast = match declared {
                    Some(ty) => type_of_spelling(&ty).maybe_unsigned().then_some(ty),
                    None => match self.types.get(it) {
                        Some((t, _)) if !t.maybe_unsigned() => None,
                        _ => Some(format!("__typeof__({it})")),
                    },
                };
                if let Some(c) = cast {
                    iterator_casts.insert(it.clone(), c);
                }
            }
        }
        Ok(Scop {
            index,
            region,
            parameters: self.parameters,
            arrays,
            statements,
            body,
            division_checks: self.divisions,
            unsigned_checks: self.unsigned,
            original,
            unsigned_parameters,
            iterator_casts,
            parameter_ranges,
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

/// The C integer types after promotion (LP64: `long` and `long long` are
/// 64 bits, `int` 32), plus what the front end cannot tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CType {
    Int,
    UInt,
    Long,
    ULong,
    LLong,
    ULLong,
    /// Declared where polytune does not look: may be unsigned.
    Unknown,
    /// A pointer, an array, a floating or a structure type.
    NotInteger,
}

impl CType {
    fn unsigned(self) -> bool {
        matches!(self, CType::UInt | CType::ULong | CType::ULLong)
    }

    /// Unsigned, or not known to be signed.
    fn maybe_unsigned(self) -> bool {
        !matches!(self, CType::Int | CType::Long | CType::LLong)
    }

    fn rank(self) -> u8 {
        match self {
            CType::Int | CType::UInt => 1,
            CType::Long | CType::ULong => 2,
            _ => 3,
        }
    }

    /// The type after the integer promotions (already applied).
    fn promoted(self) -> CType {
        self
    }
}

/// The type of a binary operation's operands after the usual arithmetic
/// conversions (C11 6.3.1.8) on LP64.
fn common_type(a: CType, b: CType) -> CType {
    use CType::*;
    if a == Unknown || b == Unknown || a == NotInteger || b == NotInteger {
        return Unknown;
    }
    if a.unsigned() == b.unsigned() {
        return if a.rank() >= b.rank() { a } else { b };
    }
    let (u, s) = if a.unsigned() { (a, b) } else { (b, a) };
    if u.rank() >= s.rank() {
        u
    } else if u == UInt {
        // A 64-bit signed type holds every unsigned int.
        s
    } else {
        ULLong
    }
}

/// The type of an integer literal from its spelling (C11 6.4.4.1).
fn literal_type(text: &str, value: i64) -> CType {
    use CType::*;
    let suffix: String = text
        .chars()
        .rev()
        .take_while(|c| matches!(c, 'u' | 'U' | 'l' | 'L'))
        .collect();
    let unsigned = suffix.contains(['u', 'U']);
    let longs = suffix.chars().filter(|c| matches!(c, 'l' | 'L')).count();
    let decimal = !(text.starts_with('0') && text.len() > suffix.len() + 1);
    let fits_int = i32::try_from(value).is_ok();
    let fits_uint = u32::try_from(value).is_ok();
    match (unsigned, longs) {
        (false, 0) if fits_int => Int,
        (false, 0) if !decimal && fits_uint => UInt,
        (false, 0 | 1) => Long,
        (false, _) => LLong,
        (true, 0) if fits_uint => UInt,
        (true, 0 | 1) => ULong,
        (true, _) => ULLong,
    }
}

/// The C type named by a declaration's specifiers (`unsigned long`,
/// `const size_t`, `int64_t`, ...).
fn type_of_spelling(ty: &str) -> CType {
    use CType::*;
    let words: Vec<&str> = ty
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    if ty.contains(['*', '[']) {
        return NotInteger;
    }
    let mut unsigned = false;
    let mut longs = 0;
    let mut named: Option<CType> = None;
    let mut basic = false;
    for w in &words {
        match *w {
            "unsigned" => unsigned = true,
            "long" => longs += 1,
            "signed" | "int" | "short" | "char" | "_Bool" | "bool" => basic = true,
            "const" | "volatile" | "static" | "register" | "extern" | "auto" | "restrict"
            | "__restrict" | "__restrict__" | "inline" => {}
            "float" | "double" | "void" | "struct" | "union" | "_Complex" => return NotInteger,
            "enum" => return Int,
            other => match typedef_type(other) {
                Some(t) => named = Some(t),
                // An enumeration tag or a typedef polytune does not know.
                None => return Unknown,
            },
        }
    }
    if let Some(t) = named {
        return t;
    }
    if !(basic || unsigned || longs > 0) {
        return Unknown;
    }
    // `unsigned short` and `unsigned char` promote to int.
    let narrow = words
        .iter()
        .any(|w| matches!(*w, "short" | "char" | "_Bool" | "bool"));
    match (unsigned && !narrow, longs) {
        (false, 0) => Int,
        (false, 1) => Long,
        (false, _) => LLong,
        (true, 0) => UInt,
        (true, 1) => ULong,
        (true, _) => ULLong,
    }
}

/// The values a variable of a narrow integer type holds (`char` is signed
/// on the targets polytune knows); `None` for `int` and wider.
fn storage_range(ty: &str) -> Option<(i64, i64)> {
    let words: Vec<&str> = ty
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    Some(if has("_Bool") || has("bool") {
        (0, 1)
    } else if has("uint8_t") || (has("char") && has("unsigned")) {
        (0, 255)
    } else if has("int8_t") || has("char") {
        (-128, 127)
    } else if has("uint16_t") || (has("short") && has("unsigned")) {
        (0, 65535)
    } else if has("int16_t") || has("short") {
        (-32768, 32767)
    } else {
        return None;
    })
}

/// The standard typedefs of integer types (LP64).
fn typedef_type(name: &str) -> Option<CType> {
    use CType::*;
    Some(match name {
        "size_t" | "uintptr_t" | "uint64_t" | "uintmax_t" | "uint_fast64_t" | "uint_least64_t"
        | "uint_fast32_t" | "uint_fast16_t" => ULong,
        "ssize_t" | "ptrdiff_t" | "intptr_t" | "int64_t" | "intmax_t" | "off_t"
        | "int_fast64_t" | "int_least64_t" | "int_fast32_t" | "int_fast16_t" => Long,
        "uint32_t" | "uint_least32_t" => UInt,
        "int32_t" | "int16_t" | "int8_t" | "uint16_t" | "uint8_t" | "int_least32_t"
        | "int_least16_t" | "int_least8_t" | "uint_least16_t" | "uint_least8_t" | "int_fast8_t"
        | "uint_fast8_t" => Int,
        _ => return None,
    })
}

/// Whether a word can start or continue a declaration's specifiers.
fn is_specifier(w: &str) -> bool {
    matches!(
        w,
        "unsigned"
            | "signed"
            | "int"
            | "long"
            | "short"
            | "char"
            | "_Bool"
            | "bool"
            | "const"
            | "volatile"
            | "static"
            | "register"
            | "extern"
            | "auto"
            | "restrict"
            | "__restrict"
            | "__restrict__"
            | "inline"
            | "float"
            | "double"
            | "void"
            | "enum"
            | "struct"
            | "union"
            | "_Complex"
    ) || typedef_type(w).is_some()
}

/// The spelled type of iterator `it` when a loop of the SCoP declares it.
fn declared_iterator_type(body: &[Stmt], it: &str) -> Option<String> {
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

/// C types of the integer variables and macros visible at the end of
/// `text` (the file before a SCoP): a light scan of declarations
/// (`long i, k;`, function parameters, `for (size_t i = ...`), simple
/// typedefs and `#define NAME <integer literal>`. Names it cannot type
/// are absent: the caller treats them as possibly unsigned.
/// The spelling recorded for a macro: its type is known, its range is not
/// (another `#if` branch may define it otherwise).
const MACRO: &str = "#define";

/// Names to their C type and spelling.
pub(crate) type Types = HashMap<String, (CType, String)>;

/// The scan of a whole file, advanced from one SCoP to the next so that a
/// file is read once whatever its number of SCoPs.
pub(crate) struct TypeScan {
    tokens: Vec<Tok>,
    /// Byte offset of each token.
    offsets: Vec<usize>,
    typedefs: HashMap<String, CType>,
    /// Block scopes; declarations in parentheses wait in `pending` for the
    /// block that follows them (a function body or a loop body).
    scopes: Vec<Types>,
    pending: Types,
    closed: Option<Types>,
    depth: usize,
    /// Start of the current declaration segment, per parenthesis depth.
    seg: Vec<usize>,
    next: usize,
}

impl TypeScan {
    pub(crate) fn new(text: &str) -> TypeScan {
        let (offsets, tokens) = c_tokens(text).into_iter().unzip();
        TypeScan {
            tokens,
            offsets,
            typedefs: HashMap::new(),
            scopes: vec![HashMap::new()],
            pending: HashMap::new(),
            closed: None,
            depth: 0,
            seg: vec![0],
            next: 0,
        }
    }

    /// The C types of the integer variables and macros visible at byte
    /// `offset` (the start of a SCoP; offsets must not decrease): a light
    /// scan of declarations (`long i, k;`, function parameters,
    /// `for (size_t i = ...`), simple typedefs and `#define NAME <integer
    /// literal>`. Names it cannot type are absent: the caller treats them
    /// as possibly unsigned.
    pub(crate) fn visible_at(&mut self, offset: usize) -> Types {
        self.advance(offset);
        let mut out = HashMap::new();
        for s in &self.scopes {
            out.extend(s.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        out
    }

    fn advance(&mut self, offset: usize) {
        let TypeScan {
            tokens,
            offsets,
            typedefs,
            scopes,
            pending,
            closed,
            depth,
            seg,
            next,
        } = self;
        let end = offsets.partition_point(|&o| o < offset);
        let start = (*next).min(end);
        *next = end.max(*next);
        let mut depth_now = *depth;
        for k in start..end {
            let t = &tokens[k];
            match t {
                Tok::Define(name, ty) => {
                    // A macro defined twice (dataset sizes under #if) may
                    // have either type: unknown, unless both agree.
                    let ty = match (ty, scopes[0].get(name)) {
                        (Some(t), Some((old, sp))) if sp == MACRO && old != t => CType::Unknown,
                        (t, _) => t.unwrap_or(CType::Unknown),
                    };
                    scopes[0].insert(name.clone(), (ty, MACRO.to_string()));
                    seg[depth_now] = k + 1;
                    continue;
                }
                Tok::Punct(c) => {
                    match c {
                        '{' => {
                            let scope = if matches!(
                                k.checked_sub(1).map(|j| &tokens[j]),
                                Some(Tok::Punct(')'))
                            ) {
                                closed.take().unwrap_or_default()
                            } else {
                                HashMap::new()
                            };
                            scopes.push(scope);
                            depth_now = 0;
                            *seg = vec![k + 1];
                        }
                        '}' => {
                            if scopes.len() > 1 {
                                scopes.pop();
                            }
                            depth_now = 0;
                            *seg = vec![k + 1];
                        }
                        ';' => {
                            seg[depth_now] = k + 1;
                            if depth_now == 0 {
                                *closed = None;
                            }
                        }
                        '(' => {
                            if depth_now == 0 {
                                pending.clear();
                            }
                            depth_now += 1;
                            seg.push(k + 1);
                        }
                        ')' if depth_now > 0 => {
                            depth_now -= 1;
                            seg.pop();
                            if depth_now == 0 {
                                *closed = Some(std::mem::take(pending));
                            }
                        }
                        ',' if depth_now > 0 => seg[depth_now] = k + 1,
                        _ => {}
                    }
                    continue;
                }
                Tok::Other => continue,
                Tok::Word(_) => {}
            }
            let Tok::Word(name) = t else { continue };
            if is_specifier(name) || typedefs.contains_key(name.as_str()) {
                continue;
            }
            // Must end a declarator: followed by `,` `;` `=` `[` or `)`.
            let next = tokens.get(k + 1);
            let ends = matches!(next, Some(Tok::Punct(',' | ';' | '=' | '[' | ')')));
            if !ends {
                continue;
            }
            let start = seg[depth_now];
            // Specifiers from the segment's start.
            let mut j = start;
            let mut spelled = Vec::new();
            let mut typedef = false;
            while let Some(Tok::Word(w)) = tokens.get(j) {
                if w == "typedef" {
                    typedef = true;
                } else if is_specifier(w) || typedefs.contains_key(w.as_str()) {
                    spelled.push(w.clone());
                } else {
                    break;
                }
                j += 1;
            }
            if spelled.is_empty() {
                continue;
            }
            // Between the specifiers (or a `,` of the same list) and the name:
            // only `*` and qualifiers.
            let mut i = k;
            let mut pointer = false;
            let declarator_start = loop {
                if i == 0 {
                    break None;
                }
                i -= 1;
                match &tokens[i] {
                    Tok::Punct('*') => pointer = true,
                    Tok::Word(w)
                        if matches!(
                            w.as_str(),
                            "const" | "volatile" | "restrict" | "__restrict" | "__restrict__"
                        ) && i >= j => {}
                    _ => break Some(i),
                }
            };
            let Some(before) = declarator_start else {
                continue;
            };
            let first = before + 1 == j;
            let listed = depth_now == 0 && matches!(tokens[before], Tok::Punct(',')) && before >= j;
            if !(first || listed) {
                continue;
            }
            let array = matches!(next, Some(Tok::Punct('[')));
            let spelling = spelled.join(" ");
            let mut ty = match spelled.iter().find_map(|w| typedefs.get(w.as_str())) {
                Some(t) => *t,
                None => type_of_spelling(&spelling),
            };
            if pointer || array {
                ty = CType::NotInteger;
            }
            if typedef {
                typedefs.insert(name.clone(), ty);
                continue;
            }
            let target = if depth_now > 0 {
                &mut *pending
            } else {
                scopes.last_mut().expect("file scope")
            };
            target.insert(name.clone(), (ty, spelling));
        }
        *depth = depth_now;
    }
}

#[cfg(test)]
fn declared_types(text: &str) -> Types {
    TypeScan::new(text).visible_at(text.len())
}

/// A token of the light C scan.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Punct(char),
    /// `#define NAME value`, with the value's type when it is an integer
    /// literal.
    Define(String, Option<CType>),
    /// Numbers, strings, other directives.
    Other,
}

/// Tokens with their byte offsets.
fn c_tokens(text: &str) -> Vec<(usize, Tok)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'#' && line_start {
            let mut end = i;
            while end < b.len() && b[end] != b'\n' {
                if b[end] == b'\\' && end + 1 < b.len() {
                    end += 1;
                }
                end += 1;
            }
            let line = &text[i + 1..end];
            let words: Vec<&str> = line.split_whitespace().collect();
            if let ["define", name, value @ ..] = words.as_slice()
                && !name.contains('(')
            {
                let v = value.join(" ");
                let v = v.trim_start_matches('(').trim_end_matches(')').trim();
                let ty = v
                    .trim_end_matches(['u', 'U', 'l', 'L'])
                    .parse::<i64>()
                    .ok()
                    .map(|n| literal_type(v, n));
                out.push((i, Tok::Define(name.to_string(), ty)));
            } else {
                out.push((i, Tok::Other));
            }
            i = end;
            continue;
        }
        line_start = false;
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i = (i + 2).min(b.len());
            continue;
        }
        if c == b'"' || c == b'\'' {
            let s = i;
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            out.push((s, Tok::Other));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((s, Tok::Word(text[s..i].to_string())));
            continue;
        }
        if c.is_ascii_digit() {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
            out.push((s, Tok::Other));
            continue;
        }
        out.push((i, Tok::Punct(c as char)));
        i += 1;
    }
    out
}

#[cfg(test)]
mod types_tests {
    use super::*;

    #[test]
    fn literal_types_follow_c() {
        use CType::*;
        assert_eq!(literal_type("5", 5), Int);
        assert_eq!(literal_type("5UL", 5), ULong);
        assert_eq!(literal_type("5u", 5), UInt);
        assert_eq!(literal_type("5ll", 5), LLong);
        assert_eq!(literal_type("5ULL", 5), ULLong);
        assert_eq!(literal_type("3000000000", 3_000_000_000), Long);
        assert_eq!(literal_type("0xFFFFFFFF", 0xFFFF_FFFF), UInt);
        assert_eq!(literal_type("0", 0), Int);
    }

    #[test]
    fn usual_arithmetic_conversions() {
        use CType::*;
        assert_eq!(common_type(Long, ULong), ULong);
        assert_eq!(common_type(Long, UInt), Long);
        assert_eq!(common_type(Int, UInt), UInt);
        assert_eq!(common_type(LLong, ULong), ULLong);
        assert_eq!(common_type(Int, Long), Long);
        assert_eq!(common_type(Int, Unknown), Unknown);
        assert!(!common_type(Int, Long).maybe_unsigned());
        assert!(Unknown.maybe_unsigned());
    }

    #[test]
    fn spelled_types() {
        use CType::*;
        assert_eq!(type_of_spelling("unsigned long"), ULong);
        assert_eq!(type_of_spelling("const size_t"), ULong);
        assert_eq!(type_of_spelling("unsigned short"), Int);
        assert_eq!(type_of_spelling("long long"), LLong);
        assert_eq!(type_of_spelling("int64_t"), Long);
        assert_eq!(type_of_spelling("double"), NotInteger);
        assert_eq!(type_of_spelling("DATA_TYPE"), Unknown);
    }

    #[test]
    fn declarations_before_a_scop() {
        let text = "#define N 100\n#define BIG 5UL\n#if A\n#define TWICE 5\n#else\n#define TWICE 5UL\n#endif\n#define EXPR (N + 1)\ntypedef unsigned long ulong;\nstatic int g;\n\
                    void other(unsigned n) { long q; }\n\
                    /* int n; */ void f(long n, double A[N], ulong u, int *p) {\n  size_t i, j = 0, k;\n  int t;\n  for (int z = 0; z < 3; z++) { }\n";
        let t = declared_types(text);
        let ty = |n: &str| t.get(n).map(|(c, _)| *c);
        assert_eq!(ty("N"), Some(CType::Int));
        assert_eq!(ty("TWICE"), Some(CType::Unknown));
        assert_eq!(ty("EXPR"), Some(CType::Unknown));
        assert_eq!(ty("BIG"), Some(CType::ULong));
        assert_eq!(ty("g"), Some(CType::Int));
        // The other function's parameter and local are out of scope.
        assert_eq!(ty("n"), Some(CType::Long));
        assert_eq!(ty("q"), None);
        assert_eq!(ty("A"), Some(CType::NotInteger));
        assert_eq!(ty("u"), Some(CType::ULong));
        assert_eq!(ty("p"), Some(CType::NotInteger));
        assert_eq!(ty("i"), Some(CType::ULong));
        assert_eq!(ty("j"), Some(CType::ULong));
        assert_eq!(ty("k"), Some(CType::ULong));
        assert_eq!(ty("t"), Some(CType::Int));
        // A loop's own iterator is gone after its body.
        assert_eq!(ty("z"), None);
    }

    #[test]
    fn each_scop_sees_the_declarations_in_front_of_it() {
        let text = "void f(unsigned long n, double x[9]) { long i;\n#pragma scop\nfor (i = 0; i < n; i++) x[i] = 0;\n#pragma endscop\n}\n\
                    void g(int n, double x[9]) { unsigned i;\n#pragma scop\nfor (i = 0; i < n; i++) x[i] = 0;\n#pragma endscop\n}\n\
                    void h(int n, double x[9]) {\n#pragma scop\nfor (int i = 0; i < n; i++) x[i] = 0;\n#pragma endscop\n}\n";
        let src = crate::frontend::parse_source(
            std::path::Path::new("t.c"),
            text.to_string(),
            &crate::frontend::Options::default(),
        )
        .unwrap();
        let s = &src.scops;
        assert_eq!(s[0].unsigned_parameters, ["n"]);
        assert!(s[0].iterator_casts.is_empty());
        assert!(!s[0].unsigned_checks.is_empty());
        assert!(s[1].unsigned_parameters.is_empty());
        assert_eq!(s[1].iterator_casts["i"], "__typeof__(i)");
        assert!(s[2].unsigned_parameters.is_empty());
        assert!(s[2].iterator_casts.is_empty());
        assert!(s[2].unsigned_checks.is_empty());
        // The fallback is the region's text exactly.
        assert_eq!(s[2].original, "for (int i = 0; i < n; i++) x[i] = 0;\n");
    }
}
