//! Block scalars with one value: `int c = x + y * n;` (or `int c; c = x +
//! y * n;`) in a loop body, then `b[c] = a[c - 1];`. The scalar holds the
//! same value wherever the block reads it, so a subscript, bound or
//! condition that reads it reads its defining expression.
//!
//! That holds when the scalar is declared once in the block (no other
//! variable of the same name inside it), integer-typed, and takes exactly
//! one value per execution of the block: it has an initializer and is
//! never assigned, or it is assigned exactly once, at the level of the
//! block that declares it, before any use the substitution applies to
//! (uses are lowered in the order of the text, and only those after the
//! definition are substituted). The defining expression's variables keep
//! their values over the block too: iterators in scope (a loop's header
//! alone changes its iterator, and a block inside the loop ends before
//! the next iteration), parameters (never written in the SCoP, else the
//! lowering refuses them) and other such scalars (substituted first). The
//! conversion to the scalar's type must keep every value: an `int` takes
//! an `int` expression, a `long` any signed or 32-bit value; a narrower
//! or unsigned scalar, or one of a type polytune does not know, is not
//! substituted (the lowering says it is not static).

use super::linear::widening;
use super::types::{common_type, literal_type, type_of_spelling};
use super::*;

/// The scalars declared in `parts` (and the blocks inside them) that take
/// one value per execution of their block, in the sense above; `iterators`
/// are the SCoP's loop iterators (changed by their loops).
pub(super) fn single_valued(parts: &[LocalPart], iterators: &HashSet<String>) -> HashSet<String> {
    let mut c = Counts::default();
    c.parts(parts);
    c.declared
        .iter()
        .filter(|(name, (count, init))| {
            let assigned = c.assigned.get(*name).copied().unwrap_or(0);
            let at_head = c.assigned_at_head.get(*name).copied().unwrap_or(0);
            *count == 1
                && !iterators.contains(*name)
                && if *init {
                    assigned == 0
                } else {
                    assigned == 1 && at_head == 1
                }
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// Declarations (how many, and whether the last had a value) and
/// assignments of each name in a block.
#[derive(Default)]
struct Counts {
    declared: HashMap<String, (usize, bool)>,
    assigned: HashMap<String, usize>,
    /// Plain assignments (`=`) at the level of the block that declares
    /// the name.
    assigned_at_head: HashMap<String, usize>,
}

impl Counts {
    /// The parts of one block (a block inside is counted with them, its
    /// own level apart).
    fn parts(&mut self, parts: &[LocalPart]) {
        let mut here: Vec<&str> = Vec::new();
        for p in parts {
            match p {
                LocalPart::Decl { name, init, .. } => {
                    let e = self.declared.entry(name.clone()).or_insert((0, false));
                    e.0 += 1;
                    e.1 = init.is_some();
                    here.push(name);
                }
                LocalPart::Assign { lhs, op, .. } => {
                    if let ExprKind::Ident(n) = &lhs.kind {
                        *self.assigned.entry(n.clone()).or_insert(0) += 1;
                        if *op == AssignOp::Assign && here.contains(&n.as_str()) {
                            *self.assigned_at_head.entry(n.clone()).or_insert(0) += 1;
                        }
                    }
                }
                LocalPart::Stmt(s) => self.stmt(s),
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::For(l) => self.stmt(&l.body),
            StmtKind::If { then, other, .. } => {
                self.stmt(then);
                if let Some(o) = other {
                    self.stmt(o);
                }
            }
            StmtKind::Block(v) => v.iter().for_each(|x| self.stmt(x)),
            StmtKind::Assign { lhs, .. } => {
                if let ExprKind::Ident(n) = &lhs.kind {
                    *self.assigned.entry(n.clone()).or_insert(0) += 1;
                }
            }
            StmtKind::Local { parts, .. } => self.parts(parts),
            _ => {}
        }
    }
}

impl Lowerer<'_> {
    /// Records the value of the block scalar `name` of type `ty` (its
    /// initializer or its one assignment) when it is one of the block's
    /// single-valued scalars and the value fits its type.
    pub(super) fn define_local(&mut self, name: &str, value: &Expr) {
        if !self.single_valued.contains(name) {
            return;
        }
        let Some(ty) = self.local_types.get(name).cloned() else {
            return;
        };
        let value = self.resolve_locals(value);
        let text = self.span_text(&value);
        let mut block_variable = None;
        mentions(&value, &mut |n| {
            if block_variable.is_none() && self.local_names.contains(n) {
                block_variable = Some(n.to_string());
            }
        });
        let to = type_of_spelling(&ty);
        let def = if let Some(v) = block_variable {
            Err(format!(
                "its value `{text}` reads `{v}`, a variable of the block, which may change"
            ))
        } else if !widening(&ty) {
            Err(format!(
                "it has type `{ty}`: polytune reads a block's scalar as its value only when it is `int` or `long` (a conversion to another type may change the value)"
            ))
        } else {
            match self.value_type(&value) {
                Some(CType::Int) => Ok(value),
                Some(CType::UInt | CType::Long | CType::LLong) if to != CType::Int => Ok(value),
                Some(_) => Err(format!(
                    "its value `{text}` has a type whose values may not fit its type `{ty}`"
                )),
                None => Err(format!(
                    "polytune cannot tell the type of its value `{text}` (an integer expression of iterators and parameters)"
                )),
            }
        };
        let def = def.map(|mut v| {
            v.parens = true;
            v
        });
        self.local_defs.insert(name.to_string(), def);
    }

    /// Why the block scalar `name` cannot be read as one value here.
    pub(super) fn not_one_value(&self, name: &str) -> String {
        let declared = format!("`{name}` is declared in a block inside the SCoP");
        match self.local_defs.get(name) {
            _ if !self.single_valued.contains(name) => format!(
                "{declared} and does not keep one value there (it is assigned more than once, or in a loop or condition of the block), so its value is not static"
            ),
            Some(Err(why)) => format!("{declared} and {why}, so its value is not static"),
            _ => {
                format!("{declared} and read before the block sets it, so its value is not static")
            }
        }
    }

    /// `e` with the block scalars whose value is known replaced by it.
    pub(super) fn resolve_locals(&self, e: &Expr) -> Expr {
        if !self.local_defs.values().any(Result::is_ok) {
            return e.clone();
        }
        let mut out = e.clone();
        match &mut out.kind {
            ExprKind::Ident(n) => {
                if let Some(Ok(v)) = self.local_defs.get(n) {
                    return v.clone();
                }
            }
            ExprKind::Access { subscripts: v, .. } | ExprKind::Call { args: v, .. } => {
                for x in v.iter_mut() {
                    *x = self.resolve_locals(x);
                }
            }
            ExprKind::Unary { expr, .. } | ExprKind::Cast { expr, .. } => {
                **expr = self.resolve_locals(expr);
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                **lhs = self.resolve_locals(lhs);
                **rhs = self.resolve_locals(rhs);
            }
            ExprKind::Ternary { cond, then, other } => {
                **cond = self.resolve_locals(cond);
                **then = self.resolve_locals(then);
                **other = self.resolve_locals(other);
            }
            _ => {}
        }
        out
    }

    /// The C type of an integer expression built of literals, variables
    /// of known types, `+ - *` and integer casts; `None` for anything else.
    fn value_type(&self, e: &Expr) -> Option<CType> {
        let t = match &e.kind {
            ExprKind::Int { value, text } => literal_type(text, *value),
            ExprKind::Ident(n) => self.var_type(n),
            ExprKind::Unary {
                op: UnOp::Neg | UnOp::Plus,
                expr,
            } => self.value_type(expr)?.promoted(),
            ExprKind::Binary {
                op: BinOp::Add | BinOp::Sub | BinOp::Mul,
                lhs,
                rhs,
            } => common_type(self.value_type(lhs)?, self.value_type(rhs)?),
            ExprKind::Cast { ty, .. } if widening(ty) => type_of_spelling(ty),
            _ => return None,
        };
        (!matches!(t, CType::Unknown | CType::NotInteger)).then_some(t)
    }
}

/// Calls `visit` on every name `e` reads (variables and arrays).
fn mentions(e: &Expr, visit: &mut dyn FnMut(&str)) {
    match &e.kind {
        ExprKind::Ident(n) => visit(n),
        ExprKind::Access { name, subscripts } => {
            visit(name);
            subscripts.iter().for_each(|x| mentions(x, visit));
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|x| mentions(x, visit)),
        ExprKind::Unary { expr, .. } | ExprKind::Cast { expr, .. } => mentions(expr, visit),
        ExprKind::Binary { lhs, rhs, .. } => {
            mentions(lhs, visit);
            mentions(rhs, visit);
        }
        ExprKind::Ternary { cond, then, other } => {
            mentions(cond, visit);
            mentions(then, visit);
            mentions(other, visit);
        }
        _ => {}
    }
}
