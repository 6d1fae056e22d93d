//! Turns a parsed SCoP into its polyhedral description and rejects what is
//! not static control: every loop bound, condition and subscript must be
//! (quasi-)affine in the enclosing iterators and in parameters that the
//! SCoP never writes.
//!
//! `mod.rs` walks the statements (loops in `loops.rs`, assignments and
//! accesses in `stmt.rs`) and assembles the [`Scop`]; `expr.rs` lowers
//! bounds, conditions and subscripts to (piecewise) affine expressions
//! with the assumptions their C types call for; `types.rs` knows the C
//! integer types and scans the declarations in front of a SCoP.

mod compound;
mod defs;
mod expr;
mod invariant;
mod linear;
mod loops;
mod stmt;
mod types;

use super::error::{LineIndex, SpanError};
use crate::frontend::scop::ast::{
    AssignOp, BinOp, Expr, ExprKind, ForLoop, LocalPart, Span, Stmt, StmtKind, UnOp,
};
use crate::frontend::scop::{
    Access, Affine, Array, DivisionCheck, Formula, LONG_MAX, Region, ScheduleDim, Scop, Statement,
    UnsignedCheck,
};
use compound::Compound;
use expr::Place;
use loops::declared_iterator_type;
use std::collections::{BTreeMap, HashMap, HashSet};
pub(crate) use types::{CType, TypeScan, Types};
use types::{MACRO, storage_range, type_of_spelling};

/// Functions known to be pure (math library and PolyBench's macros).
pub(crate) const PURE_FUNCTIONS: &[&str] = &[
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

struct LoopScope {
    iterator: String,
    /// The C type of the iterator when the loop declares it.
    declared: Option<CType>,
}

struct Lowerer<'o> {
    pure: &'o HashSet<String>,
    /// The file's pure function-like macros as the preprocessor expands
    /// them: in a subscript, bound or condition a call to one is read as
    /// its expansion (the generated code keeps the call).
    expansions: &'o HashMap<String, crate::frontend::macros::Expansion>,
    /// The macros being expanded (the preprocessor does not expand a
    /// macro inside its own expansion).
    expanding: Vec<String>,
    /// The whole file, for the text of constructs in messages.
    text: &'o str,
    /// C types of the names declared before the SCoP (see [`TypeScan::visible_at`]).
    types: HashMap<String, (CType, String)>,
    unsigned: Vec<UnsignedCheck>,
    unsigned_seen: HashSet<(Vec<String>, Formula, Affine, i64, i64)>,
    all_iterators: HashSet<String>,
    written_scalars: HashMap<String, Span>,
    /// Every name a local block declares, and those of the block being
    /// lowered (declared so far).
    local_names: HashSet<String>,
    block_locals: Vec<String>,
    /// The block's scalars that take one value per execution, their
    /// types, and the values known so far (`defs.rs`).
    single_valued: HashSet<String>,
    local_types: HashMap<String, String>,
    local_defs: HashMap<String, Result<Expr, String>>,
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
    /// Accesses with a linearized subscript: array, access, polynomial.
    linear: Vec<linear::LinearAccess>,
    /// The arrays the SCoP writes, and the loads of memory it does not
    /// write that are parameters (`invariant.rs`).
    written_arrays: HashMap<String, Span>,
    invariants: Vec<crate::frontend::scop::InvariantLoad>,
    /// The compound block being lowered (`compound.rs`).
    compound: Option<Compound>,
}

type R<T> = Result<T, SpanError>;

fn overflow(span: Span) -> SpanError {
    SpanError::new(span, "integer overflow in an affine expression")
}

/// Lowers the parsed body of one SCoP; `text` is the whole file, `types`
/// what [`TypeScan::visible_at`] tells at the start of the SCoP.
pub(crate) fn lower(
    index: usize,
    region: Region,
    body: Vec<Stmt>,
    pure: &HashSet<String>,
    expansions: &HashMap<String, crate::frontend::macros::Expansion>,
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
        expansions,
        expanding: Vec::new(),
        text,
        types,
        unsigned: Vec::new(),
        unsigned_seen: HashSet::new(),
        all_iterators,
        written_scalars,
        local_names: locals,
        block_locals: Vec::new(),
        single_valued: HashSet::new(),
        local_types: HashMap::new(),
        local_defs: HashMap::new(),
        loops: Vec::new(),
        guards: Vec::new(),
        prefix: Vec::new(),
        counters: vec![0],
        parameters: Vec::new(),
        statements: Vec::new(),
        divisions: Vec::new(),
        uses: BTreeMap::new(),
        current_reads: Vec::new(),
        linear: Vec::new(),
        written_arrays: invariant::written_arrays(&body),
        invariants: Vec::new(),
        compound: None,
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
                    // Declared without a value, it may be the block's
                    // own loop iterator (`int k; for (k = 0; ...)`).
                    LocalPart::Decl {
                        name,
                        span,
                        init: Some(_),
                        ..
                    } => {
                        written.entry(name.clone()).or_insert(*span);
                    }
                    LocalPart::Decl { .. } => {}
                    LocalPart::Assign { lhs, .. } => {
                        if let ExprKind::Ident(n) = &lhs.kind {
                            written.entry(n.clone()).or_insert(lhs.span);
                        }
                    }
                    LocalPart::Stmt(s) => collect(s, iters, written)?,
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
            StmtKind::For(l) if self.compound.is_some() => self.inner_loop(l),
            StmtKind::If { cond, then, other } if self.compound.is_some() => {
                self.inner_if(cond, then, other.as_deref())
            }
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

    fn finish(self, index: usize, region: Region, body: Vec<Stmt>, original: String) -> R<Scop> {
        let params: HashSet<&String> = self.parameters.iter().collect();
        let mut statements = self.statements;
        for s in &mut statements {
            s.reads
                .retain(|a| !(a.subscripts.is_empty() && params.contains(&a.array)));
        }
        let delinearized = linear::delinearize_arrays(
            &mut statements,
            &self.linear,
            &self.all_iterators,
            self.text,
        )?;
        // Arrays in order of first use.
        let mut order: Vec<(&String, &(usize, Span))> = self
            .uses
            .iter()
            .filter(|(n, _)| !params.contains(n))
            .collect();
        order.sort_by_key(|(_, (_, sp))| sp.start);
        let written: HashSet<&str> = statements
            .iter()
            .flat_map(|s| {
                s.writes
                    .iter()
                    .chain(&s.may_writes)
                    .map(|w| w.array.as_str())
            })
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
                // The model's rank: more for a delinearized array.
                rank: delinearized
                    .iter()
                    .find(|d| &d.array == *name)
                    .map_or(*rank, |d| d.sizes.len() + 1),
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
        // Each iterator's type is looked up once (a walk of the whole
        // body: once per statement was quadratic, 50,000 loops of one
        // statement took minutes).
        let mut seen: HashSet<&str> = HashSet::new();
        for s in &statements {
            for it in &s.iterators {
                if !seen.insert(it.as_str()) {
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
            delinearized,
            invariant_loads: self.invariants,
            alias_checks: Vec::new(),
            directives: Vec::new(),
            team: None,
            expanded: Vec::new(),
        })
    }
}
