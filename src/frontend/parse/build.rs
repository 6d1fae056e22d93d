//! pest's pairs to the SCoP tree: statements, loops and expressions, with
//! absolute spans and the depth of every expression counted.
//!
//! Why one file: the parse tree's builder, one function per grammar rule,
//! read beside the grammar (`c.pest`) in its order.

use super::depth::{MAX_NESTING, expression_too_deep, statements_too_deep};
use super::*;
use std::collections::HashSet;

/// Stack the builder leaves unused, as pest does (its
/// `REQUIRED_STACK_SPACE`): room for the frames of one more level and the
/// error's way out.
const STACK_MARGIN: usize = 64 << 10;

/// An expression and the depth of its tree (a leaf is 1).
type Built = (Expr, usize);

pub(super) struct Builder<'n> {
    offset: usize,
    next_id: &'n mut usize,
    /// Statements enclosing the one being built.
    level: usize,
    /// Blocks with scalars of their own (compound statements) enclosing
    /// the one being built.
    in_local: usize,
    /// The file's element macros (`#define A(i, j) a[...]`): a call reads
    /// memory.
    elements: &'n HashSet<String>,
    /// Loop iterators declared at the head of an enclosing block, with
    /// their types (see [`super::hoist`]).
    hoisted: Vec<(String, String)>,
}

impl<'n> Builder<'n> {
    /// A builder for a body at byte `offset` of its file.
    pub(super) fn new(
        offset: usize,
        next_id: &'n mut usize,
        elements: &'n HashSet<String>,
    ) -> Builder<'n> {
        Builder {
            offset,
            next_id,
            in_local: 0,
            elements,
            level: 0,
            hoisted: Vec::new(),
        }
    }

    pub(super) fn span(&self, p: &Pair<Rule>) -> Span {
        let s = p.as_span();
        Span {
            start: self.offset + s.start(),
            end: self.offset + s.end(),
        }
    }

    /// A node over children at most `below` deep, within [`MAX_NESTING`]
    /// counted from the top of the SCoP. This bounds the tree exactly;
    /// [`super::depth::check_nesting`] only estimates it.
    fn node(&self, kind: ExprKind, span: Span, below: usize) -> Result<Built, SpanError> {
        let depth = below + 1;
        if self.level + depth > MAX_NESTING {
            return Err(if self.level >= depth {
                statements_too_deep(span.start)
            } else {
                expression_too_deep(span.start)
            });
        }
        Ok((Expr::new(kind, span), depth))
    }

    pub(super) fn leaf(&self, kind: ExprKind, span: Span) -> Result<Built, SpanError> {
        self.node(kind, span, 0)
    }

    /// Stops the builder's recursion where pest stops its own: with less
    /// than [`STACK_MARGIN`] of the thread's stack left. pest guards its
    /// recursion, not ours: in a release build pest's frames are small
    /// enough to parse 900 nested loops on a 256 KiB thread, and building
    /// the tree from them then overflowed it.
    fn check_stack(&self, at: usize) -> Result<(), SpanError> {
        match stacker::remaining_stack() {
            Some(left) if left < STACK_MARGIN => {
                Err(super::too_deep_for_the_stack(at, "stack limit reached"))
            }
            _ => Ok(()),
        }
    }

    pub(super) fn stmt(&mut self, p: Pair<Rule>) -> Result<Stmt, SpanError> {
        let span = self.span(&p);
        self.check_stack(span.start)?;
        self.level += 1;
        if self.level > MAX_NESTING {
            return Err(statements_too_deep(span.start));
        }
        let kind = self.stmt_kind(p, span)?;
        self.level -= 1;
        Ok(Stmt { kind, span })
    }

    fn stmt_kind(&mut self, p: Pair<Rule>, span: Span) -> Result<StmtKind, SpanError> {
        Ok(match p.as_rule() {
            Rule::for_stmt => StmtKind::For(Box::new(self.for_loop(p, span)?)),
            Rule::if_stmt => {
                let first_id = *self.next_id;
                let mut it = p
                    .into_inner()
                    .filter(|q| !matches!(q.as_rule(), Rule::kw_if | Rule::kw_else));
                let cond = self.expr(it.next().expect("if cond"))?.0;
                // A condition that reads memory (`if (fabsf(y[i]) >
                // lim)`) makes the `if` a compound statement, as it is
                // inside a block with scalars of its own: it runs as
                // written, and what its branches touch is over-approximated.
                let compound = self.in_local == 0 && reads_memory(&cond, self.elements);
                if compound {
                    self.in_local += 1;
                }
                let then = self.stmt(it.next().expect("if body"));
                let other = match it.next() {
                    Some(q) => self.stmt(q).map(|x| Some(Box::new(x))),
                    None => Ok(None),
                };
                if compound {
                    self.in_local -= 1;
                }
                let s = StmtKind::If {
                    cond,
                    then: Box::new(then?),
                    other: other?,
                };
                if compound {
                    // One statement: the assignments inside numbered
                    // nothing.
                    *self.next_id = first_id + 1;
                    StmtKind::Local {
                        id: first_id,
                        parts: vec![LocalPart::Stmt(Stmt { kind: s, span })],
                    }
                } else {
                    s
                }
            }
            Rule::block => self.block(p)?,
            Rule::empty_stmt => StmtKind::Empty,
            Rule::expr_stmt => {
                let mut it = p.into_inner();
                let first = self.expr(it.next().expect("expr"))?.0;
                // l1 op1 l2 op2 ... ln opn r: the targets with their
                // operators, then the value.
                let mut targets = vec![];
                let mut last = first;
                while let Some(op) = it.next() {
                    let op = assign_op(op.as_str());
                    let next = self.expr(it.next().expect("rhs"))?.0;
                    targets.push((last, op));
                    last = next;
                }
                if targets.is_empty() {
                    return Ok(StmtKind::Expr(last));
                }
                // C runs a chain right to left, and each assignment's
                // value is its target's new value: `a = b = c;` is
                // `b = c; a = b;`.
                let mut rhs = last;
                let mut steps = vec![];
                for (lhs, op) in targets.into_iter().rev() {
                    let id = *self.next_id;
                    *self.next_id += 1;
                    let value = lhs.clone();
                    steps.push(Stmt {
                        kind: StmtKind::Assign { id, lhs, op, rhs },
                        span,
                    });
                    rhs = value;
                }
                if steps.len() == 1 {
                    steps.pop().expect("one step").kind
                } else {
                    StmtKind::Block(steps)
                }
            }
            Rule::unsupported_stmt => {
                let kw = p
                    .into_inner()
                    .next()
                    .map(|k| k.as_str().to_string())
                    .unwrap_or_default();
                StmtKind::Unsupported(format!("`{kw}` statement"))
            }
            Rule::declaration | Rule::local_decl => {
                StmtKind::Unsupported("a declaration outside a block".to_string())
            }
            r => StmtKind::Unsupported(format!("{r:?}")),
        })
    }

    /// A block; one that declares scalars of its own is a
    /// [`StmtKind::Local`] (a compound one when it holds loops or
    /// conditions).
    pub(super) fn block(&mut self, p: Pair<Rule>) -> Result<StmtKind, SpanError> {
        let mut pairs: Vec<Pair<Rule>> = p.into_inner().collect();
        // Iterators declared for the block's loops (`int x; for (x = 0;
        // ...)`) are the loops' own: the block is a plain one.
        let iterators = super::hoist::loop_iterators(&pairs);
        if !iterators.is_empty() {
            pairs.retain(|q| q.as_rule() != Rule::local_decl);
        }
        if !pairs.iter().any(|q| q.as_rule() == Rule::local_decl) {
            let depth = self.hoisted.len();
            self.hoisted.extend(iterators);
            let stmts = pairs
                .into_iter()
                .map(|q| self.stmt(q))
                .collect::<Result<_, _>>();
            self.hoisted.truncate(depth);
            return Ok(StmtKind::Block(stmts?));
        }
        let first_id = *self.next_id;
        let mut parts = Vec::new();
        self.in_local += 1;
        let parts_built = self.local_parts(pairs, &mut parts);
        self.in_local -= 1;
        parts_built?;
        if !parts.iter().any(|p| !matches!(p, LocalPart::Decl { .. })) {
            // Declarations alone do nothing.
            return Ok(StmtKind::Empty);
        }
        // The assignments inside took the ids first_id.. in order; the
        // block is one statement.
        *self.next_id = first_id + 1;
        Ok(StmtKind::Local {
            id: first_id,
            parts,
        })
    }

    /// The parts of a block with scalars of its own.
    fn local_parts(
        &mut self,
        pairs: Vec<Pair<Rule>>,
        parts: &mut Vec<LocalPart>,
    ) -> Result<(), SpanError> {
        for q in pairs {
            let span = self.span(&q);
            if q.as_rule() == Rule::local_decl {
                let mut it = q.into_inner();
                let ty = normalize_type(it.next().expect("type").as_str());
                for d in it {
                    let mut d = d.into_inner();
                    let name = d.next().expect("name").as_str().to_string();
                    let init = match d.next() {
                        Some(e) => Some(self.expr(e)?.0),
                        None => None,
                    };
                    parts.push(LocalPart::Decl {
                        ty: ty.clone(),
                        name,
                        init,
                        span,
                    });
                }
                continue;
            }
            let s = self.stmt(q)?;
            match s.kind {
                StmtKind::Assign { lhs, op, rhs, .. } => parts.push(LocalPart::Assign {
                    lhs,
                    op,
                    rhs,
                    span: s.span,
                }),
                StmtKind::Empty => {}
                // Loops, conditions, nested blocks: a compound statement;
                // anything else is refused at its own position.
                _ => parts.push(LocalPart::Stmt(s)),
            }
        }
        Ok(())
    }

    fn for_loop(&mut self, p: Pair<Rule>, span: Span) -> Result<ForLoop, SpanError> {
        let mut it = p.into_inner().filter(|q| q.as_rule() != Rule::kw_for);
        let init = it.next().expect("for init");
        let mut declared_type = None;
        let mut iterator = String::new();
        let mut iterator_span = Span::default();
        let mut init_expr = None;
        for q in init.into_inner() {
            match q.as_rule() {
                Rule::type_name => declared_type = Some(normalize_type(q.as_str())),
                Rule::identifier => {
                    iterator = q.as_str().to_string();
                    iterator_span = self.span(&q);
                }
                _ => init_expr = Some(self.expr(q)?.0),
            }
        }
        if declared_type.is_none() {
            declared_type = self
                .hoisted
                .iter()
                .rev()
                .find(|(name, _)| *name == iterator)
                .map(|(_, ty)| ty.clone());
        }
        let cond = self.expr(it.next().expect("for cond"))?.0;
        let step = self.step(it.next().expect("for step"))?;
        let body = Box::new(self.stmt(it.next().expect("for body"))?);
        Ok(ForLoop {
            iterator,
            declared_type,
            init: init_expr.expect("for init expr"),
            cond,
            step,
            body,
            span,
            iterator_span,
        })
    }

    pub(super) fn step(&mut self, p: Pair<Rule>) -> Result<Step, SpanError> {
        let span = self.span(&p);
        let q = p.into_inner().next().expect("step kind");
        let rule = q.as_rule();
        let parts: Vec<Pair<Rule>> = q.into_inner().collect();
        let mut variable = String::new();
        let mut stride = None;
        let mut text_expr = None;
        match rule {
            Rule::step_postfix | Rule::step_prefix => {
                for part in &parts {
                    match part.as_rule() {
                        Rule::identifier => variable = part.as_str().to_string(),
                        Rule::inc_op => stride = Some(if part.as_str() == "++" { 1 } else { -1 }),
                        _ => {}
                    }
                }
            }
            Rule::step_compound => {
                variable = parts[0].as_str().to_string();
                let sign = if parts[1].as_str() == "+=" { 1 } else { -1 };
                let e = self.expr(parts[2].clone())?.0;
                stride = constant_int(&e).and_then(|c| c.checked_mul(sign));
                if stride.is_none() {
                    text_expr = Some(e);
                }
            }
            _ => {
                // i = i + c, i = c + i, i = i - c
                variable = parts[0].as_str().to_string();
                let e = self.expr(parts[1].clone())?.0;
                stride = assign_stride(&variable, &e);
                if stride.is_none() {
                    text_expr = Some(e);
                }
            }
        }
        Ok(Step {
            variable,
            stride,
            text_expr,
            span,
        })
    }

    pub(super) fn expr(&mut self, p: Pair<Rule>) -> Result<Built, SpanError> {
        // Why one function: one match over every rule of the grammar's C
        // expressions, each arm building its node by recursion with the
        // same depth bookkeeping; an arm alone says nothing.
        let span = self.span(&p);
        self.check_stack(span.start)?;
        match p.as_rule() {
            Rule::expr => {
                let mut it = p.into_inner();
                let (cond, dc) = self.expr(it.next().expect("binary"))?;
                match (it.next(), it.next()) {
                    (Some(t), Some(o)) => {
                        let (then, dt) = self.expr(t)?;
                        let (other, d_o) = self.expr(o)?;
                        self.node(
                            ExprKind::Ternary {
                                cond: Box::new(cond),
                                then: Box::new(then),
                                other: Box::new(other),
                            },
                            span,
                            dc.max(dt).max(d_o),
                        )
                    }
                    _ => Ok((cond, dc)),
                }
            }
            Rule::binary_expr => self.binary(p),
            Rule::unary_expr => {
                let parts: Vec<Pair<Rule>> = p.into_inner().collect();
                let (last, prefixes) = parts.split_last().expect("operand");
                let (mut e, mut depth) = self.expr(last.clone())?;
                for op in prefixes.iter().rev() {
                    let op_span = self.span(op);
                    let whole = Span {
                        start: op_span.start,
                        end: e.span.end,
                    };
                    let kind = match op.as_rule() {
                        Rule::cast => {
                            let ty = op
                                .clone()
                                .into_inner()
                                .next()
                                .map(|t| normalize_type(t.as_str()))
                                .unwrap_or_default();
                            ExprKind::Cast {
                                ty,
                                expr: Box::new(e),
                            }
                        }
                        r => {
                            let op = match r {
                                Rule::pre_inc => UnOp::PreInc,
                                Rule::pre_dec => UnOp::PreDec,
                                Rule::neg => UnOp::Neg,
                                Rule::plus => UnOp::Plus,
                                Rule::not => UnOp::Not,
                                Rule::bitnot => UnOp::BitNot,
                                Rule::deref => UnOp::Deref,
                                _ => UnOp::AddrOf,
                            };
                            ExprKind::Unary {
                                op,
                                expr: Box::new(e),
                            }
                        }
                    };
                    (e, depth) = self.node(kind, whole, depth)?;
                }
                Ok((e, depth))
            }
            Rule::postfix_expr => {
                let mut it = p.into_inner();
                let (mut e, mut depth) = self.expr(it.next().expect("primary"))?;
                for op in it {
                    let op_span = self.span(&op);
                    let whole = Span {
                        start: e.span.start,
                        end: op_span.end,
                    };
                    // Depth of the children the new node keeps.
                    let mut below = depth;
                    let kind = match op.as_rule() {
                        Rule::subscript => {
                            let (idx, di) = self.expr(op.into_inner().next().expect("index"))?;
                            match e.kind {
                                ExprKind::Ident(name) => {
                                    below = di;
                                    ExprKind::Access {
                                        name,
                                        subscripts: vec![idx],
                                    }
                                }
                                ExprKind::Access {
                                    name,
                                    mut subscripts,
                                } => {
                                    // An access is one level over its deepest subscript.
                                    below = (depth - 1).max(di);
                                    subscripts.push(idx);
                                    ExprKind::Access { name, subscripts }
                                }
                                _ => {
                                    below = 0;
                                    ExprKind::Unsupported(
                                        "subscript of something that is not an array name".into(),
                                    )
                                }
                            }
                        }
                        Rule::call_args => {
                            let mut args = Vec::new();
                            let mut deepest = 0;
                            for a in op.into_inner() {
                                let (arg, da) = self.expr(a)?;
                                deepest = deepest.max(da);
                                args.push(arg);
                            }
                            match e.kind {
                                ExprKind::Ident(name) => {
                                    below = deepest;
                                    ExprKind::Call { name, args }
                                }
                                _ => {
                                    below = 0;
                                    ExprKind::Unsupported("call through an expression".into())
                                }
                            }
                        }
                        Rule::post_inc => ExprKind::Unary {
                            op: UnOp::PostInc,
                            expr: Box::new(e),
                        },
                        Rule::post_dec => ExprKind::Unary {
                            op: UnOp::PostDec,
                            expr: Box::new(e),
                        },
                        _ => {
                            below = 0;
                            ExprKind::Unsupported("member access (`.` or `->`)".into())
                        }
                    };
                    (e, depth) = self.node(kind, whole, below)?;
                }
                Ok((e, depth))
            }
            Rule::paren => {
                let inner = p.into_inner().next().expect("paren inner");
                let (mut e, depth) = self.expr(inner)?;
                e.parens = true;
                Ok((e, depth))
            }
            Rule::identifier => self.leaf(ExprKind::Ident(p.as_str().to_string()), span),
            Rule::int_lit => {
                let text = p.as_str().to_string();
                match parse_int(&text) {
                    Some(value) => self.leaf(ExprKind::Int { value, text }, span),
                    None => self.leaf(
                        ExprKind::Unsupported(format!("integer literal `{text}` out of range")),
                        span,
                    ),
                }
            }
            Rule::float_lit => self.leaf(ExprKind::Float(p.as_str().to_string()), span),
            Rule::char_lit => self.leaf(ExprKind::Unsupported("character literal".into()), span),
            Rule::string_lit => self.leaf(ExprKind::Unsupported("string literal".into()), span),
            r => self.leaf(ExprKind::Unsupported(format!("{r:?}")), span),
        }
    }

    /// Precedence climbing over the flat `operand (op operand)*` list.
    fn binary(&mut self, p: Pair<Rule>) -> Result<Built, SpanError> {
        let parts: Vec<Pair<Rule>> = p.into_inner().collect();
        let mut operands: Vec<Built> = Vec::new();
        let mut ops: Vec<BinOp> = Vec::new();
        for (k, part) in parts.into_iter().enumerate() {
            if k % 2 == 0 {
                operands.push(self.expr(part)?);
            } else {
                let op = bin_op(part.as_rule());
                while let Some(&top) = ops.last() {
                    if top.precedence() >= op.precedence() {
                        self.reduce(&mut operands, &mut ops)?;
                    } else {
                        break;
                    }
                }
                ops.push(op);
            }
        }
        while !ops.is_empty() {
            self.reduce(&mut operands, &mut ops)?;
        }
        Ok(operands.pop().expect("binary operand"))
    }

    fn reduce(&self, operands: &mut Vec<Built>, ops: &mut Vec<BinOp>) -> Result<(), SpanError> {
        let op = ops.pop().expect("op");
        let (rhs, dr) = operands.pop().expect("rhs");
        let (lhs, dl) = operands.pop().expect("lhs");
        let span = Span {
            start: lhs.span.start,
            end: rhs.span.end,
        };
        operands.push(self.node(
            ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            span,
            dl.max(dr),
        )?);
        Ok(())
    }
}

fn bin_op(r: Rule) -> BinOp {
    match r {
        Rule::op_or => BinOp::Or,
        Rule::op_and => BinOp::And,
        Rule::op_bitor => BinOp::BitOr,
        Rule::op_xor => BinOp::BitXor,
        Rule::op_bitand => BinOp::BitAnd,
        Rule::op_eq => BinOp::Eq,
        Rule::op_ne => BinOp::Ne,
        Rule::op_shl => BinOp::Shl,
        Rule::op_shr => BinOp::Shr,
        Rule::op_le => BinOp::Le,
        Rule::op_ge => BinOp::Ge,
        Rule::op_lt => BinOp::Lt,
        Rule::op_gt => BinOp::Gt,
        Rule::op_add => BinOp::Add,
        Rule::op_sub => BinOp::Sub,
        Rule::op_mul => BinOp::Mul,
        Rule::op_div => BinOp::Div,
        _ => BinOp::Mod,
    }
}

pub(super) fn assign_op(s: &str) -> AssignOp {
    match s {
        "+=" => AssignOp::Add,
        "-=" => AssignOp::Sub,
        "*=" => AssignOp::Mul,
        "/=" => AssignOp::Div,
        "%=" => AssignOp::Mod,
        "&=" => AssignOp::BitAnd,
        "|=" => AssignOp::BitOr,
        "^=" => AssignOp::BitXor,
        "<<=" => AssignOp::Shl,
        ">>=" => AssignOp::Shr,
        _ => AssignOp::Assign,
    }
}

fn normalize_type(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn parse_int(text: &str) -> Option<i64> {
    let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16).ok()
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()
    } else {
        digits.parse().ok()
    }
}

fn constant_int(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int { value, .. } => Some(*value),
        ExprKind::Unary {
            op: UnOp::Neg,
            expr,
        } => constant_int(expr)?.checked_neg(),
        ExprKind::Unary {
            op: UnOp::Plus,
            expr,
        } => constant_int(expr),
        _ => None,
    }
}

fn assign_stride(var: &str, e: &Expr) -> Option<i64> {
    let is_var = |x: &Expr| matches!(&x.kind, ExprKind::Ident(n) if n == var);
    match &e.kind {
        ExprKind::Binary {
            op: BinOp::Add,
            lhs,
            rhs,
        } if is_var(lhs) => constant_int(rhs),
        ExprKind::Binary {
            op: BinOp::Add,
            lhs,
            rhs,
        } if is_var(rhs) => constant_int(lhs),
        ExprKind::Binary {
            op: BinOp::Sub,
            lhs,
            rhs,
        } if is_var(lhs) => constant_int(rhs)?.checked_neg(),
        _ => None,
    }
}

/// Whether an expression reads an array element (a subscript anywhere,
/// in a call's arguments too, or a call of an element macro).
fn reads_memory(e: &Expr, elements: &HashSet<String>) -> bool {
    let r = |x: &Expr| reads_memory(x, elements);
    match &e.kind {
        ExprKind::Access { .. } => true,
        ExprKind::Call { name, args } => elements.contains(name) || args.iter().any(r),
        ExprKind::Unary { expr, .. } | ExprKind::Cast { expr, .. } => r(expr),
        ExprKind::Binary { lhs, rhs, .. } => r(lhs) || r(rhs),
        ExprKind::Ternary { cond, then, other } => r(cond) || r(then) || r(other),
        _ => false,
    }
}
