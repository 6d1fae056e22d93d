//! pest grammar (`grammar/scop.pest`) to the SCoP tree. Spans are made
//! absolute (file offsets) so diagnostics point into the user's file.

use super::error::SpanError;
use crate::frontend::scop::ast::{
    AssignOp, BinOp, Expr, ExprKind, ForLoop, LocalPart, Span, Step, Stmt, StmtKind, UnOp,
};
use pest::Parser;
use pest::iterators::Pair;

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/scop.pest"]
struct ScopGrammar;

/// Deepest nesting the front end accepts, counted as loops, ifs, blocks,
/// brackets and operators on the way from the SCoP's top to the deepest
/// leaf of an expression. Every recursive walk over the parsed tree (the
/// lowering, the printer, code generation, even dropping it) then stays
/// within a known depth: at this limit, printing a tree, generating code
/// from it and dropping it took less than 1 MiB of stack in a debug build
/// (and overflowed 0.6 MiB), so threads of 2 MiB (Rust's default) have
/// room. PolyBench's deepest tree is 16 (seidel: a 9-term sum 3 loops
/// down); C compilers must accept 63 levels of parentheses and 127 of
/// blocks, clang stops at 256 brackets.
pub const MAX_NESTING: usize = 1000;

/// Limit of the estimate of [`check_nesting`], which may count several
/// times the real depth (every operator of `a*b*c + d*e*f` counts,
/// parentheses count twice): rejecting there only stops what is hopeless
/// early and cheaply (the parser needs 55 s and 6 GB for a sum of 10
/// million terms); the tree itself is held to [`MAX_NESTING`] exactly.
const MAX_ESTIMATE: usize = 4 * MAX_NESTING;

fn expression_too_deep(at: usize) -> SpanError {
    SpanError::new(
        Span {
            start: at,
            end: at + 1,
        },
        format!(
            "expression too deeply nested (more than {MAX_NESTING} levels of operators and brackets)"
        ),
    )
    .help("split the expression into several assignments")
}

fn statements_too_deep(at: usize) -> SpanError {
    SpanError::new(
        Span {
            start: at,
            end: at + 1,
        },
        format!("loops, ifs and blocks nested too deeply (more than {MAX_NESTING} levels)"),
    )
    .help("split the region into several SCoPs")
}

/// What opens a level in [`check_nesting`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Head {
    For,
    If,
    Else,
}

/// One bracket level of [`check_nesting`]; the SCoP body is the outermost.
struct Frame {
    /// `(`, `[`, `{`, or 0 for the body itself.
    open: u8,
    /// The bracket holds a `for (...)` or `if (...)` header.
    header: bool,
    /// Operators (one per character) and closed `(...)` groups since the
    /// start of the current expression: an upper bound on how deeply the
    /// expression nests, since a chain `a + b + ...` or `!!...!x` is parsed
    /// flat but becomes a tree as deep as it is long.
    ops: usize,
    /// Unbraced statement heads (`for (...)`, `if (...)`, `else`) whose
    /// body is still open: `for (...) for (...) x = 1;` nests twice.
    heads: Vec<Head>,
}

impl Frame {
    fn weight(&self) -> usize {
        usize::from(self.open != 0) + self.ops + self.heads.len()
    }
}

/// Rejects, before the parser sees it, a SCoP body that nests far deeper
/// than [`MAX_NESTING`]: a linear scan that estimates from the tokens how
/// deep the parse tree will be, so that no input makes the parser recurse
/// without bound or spend its time on a hopeless input. Sequential
/// statements do not add up; only nesting counts.
fn check_nesting(text: &str, offset: usize) -> Result<(), SpanError> {
    let b = text.as_bytes();
    let mut frames = vec![Frame {
        open: 0,
        header: false,
        ops: 0,
        heads: Vec::new(),
    }];
    let mut total = 0usize;
    // A statement just ended under an `if`: the next token decides
    // whether an `else` continues it.
    let mut else_may_follow = false;
    // The previous token was `for` or `if`.
    let mut after_head = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        // Skip what is not a token.
        if c.is_ascii_whitespace() || c == b'\\' {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = text[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2);
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            i = text[i..].find('\n').map_or(b.len(), |k| i + k);
            continue;
        }
        // The token at `start`: a word, a literal or one punctuation byte.
        let word = if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c >= 0x80 {
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.' || b[i] >= 0x80)
            {
                i += 1;
            }
            Some(&text[start..i])
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            Some("")
        } else {
            i += 1;
            None
        };
        let top = frames.last_mut().expect("the body frame");
        let in_statements = top.open == 0 || top.open == b'{';
        if else_may_follow {
            else_may_follow = false;
            if word == Some("else") {
                // The pending `if` takes this `else`: one level either way.
                if let Some(h) = top.heads.last_mut() {
                    *h = Head::Else;
                }
                after_head = false;
                continue;
            }
            // Every open head in this frame has its statement complete.
            total -= top.heads.len();
            top.heads.clear();
        }
        let was_after_head = std::mem::take(&mut after_head);
        let mut statement_ended = false;
        match (word, c) {
            (Some(w @ ("for" | "if" | "else")), _) if in_statements => {
                top.heads.push(match w {
                    "for" => Head::For,
                    "if" => Head::If,
                    _ => Head::Else,
                });
                total += 1;
                after_head = w != "else";
                if total > MAX_ESTIMATE {
                    return Err(too_deep(&frames, total, offset + start));
                }
                continue;
            }
            (Some(_), _) => continue,
            (None, b'(' | b'[' | b'{') => {
                frames.push(Frame {
                    open: c,
                    header: was_after_head && c == b'(',
                    ops: 0,
                    heads: Vec::new(),
                });
                total += 1;
                if total > MAX_ESTIMATE {
                    return Err(too_deep(&frames, total, offset + start));
                }
                continue;
            }
            (None, b')' | b']' | b'}') => {
                if frames.len() > 1 {
                    let f = frames.pop().expect("an open bracket");
                    total -= f.weight();
                    let parent = frames.last_mut().expect("the body frame");
                    match f.open {
                        // A cast or a call is one level of the expression
                        // around it; a header is not.
                        b'(' if !f.header => {
                            parent.ops += 1;
                            total += 1;
                        }
                        b'{' => statement_ended = parent.open == 0 || parent.open == b'{',
                        _ => {}
                    }
                }
            }
            (None, b';' | b',') => {
                total -= top.ops;
                top.ops = 0;
                statement_ended = c == b';' && in_statements;
            }
            (None, _) => {
                top.ops += 1;
                total += 1;
            }
        }
        if statement_ended {
            let top = frames.last_mut().expect("the body frame");
            total -= top.ops;
            top.ops = 0;
            while let Some(&h) = top.heads.last() {
                if h == Head::If {
                    else_may_follow = true;
                    break;
                }
                top.heads.pop();
                total -= 1;
            }
        }
        if total > MAX_ESTIMATE {
            return Err(too_deep(&frames, total, offset + start));
        }
    }
    Ok(())
}

/// The error of [`check_nesting`] at `at`: about statements if loops, ifs
/// and blocks make most of the `total` depth, else about the expression.
fn too_deep(frames: &[Frame], total: usize, at: usize) -> SpanError {
    let statements: usize = frames
        .iter()
        .map(|f| f.heads.len() + usize::from(f.open == b'{'))
        .sum();
    if 2 * statements >= total {
        statements_too_deep(at)
    } else {
        expression_too_deep(at)
    }
}

/// Parses the text of one SCoP body that starts at byte `offset` of its
/// file. `next_id` numbers assignment statements across the file.
pub fn parse_body(text: &str, offset: usize, next_id: &mut usize) -> Result<Vec<Stmt>, SpanError> {
    check_nesting(text, offset)?;
    let mut pairs =
        ScopGrammar::parse(Rule::scop_body, text).map_err(|e| syntax_error(e, offset))?;
    let body = pairs.next().expect("scop_body");
    let mut b = Builder {
        offset,
        next_id,
        level: 0,
    };
    let mut out = Vec::new();
    for p in body.into_inner() {
        if p.as_rule() != Rule::EOI {
            out.push(b.stmt(p)?);
        }
    }
    Ok(out)
}

fn syntax_error(e: pest::error::Error<Rule>, offset: usize) -> SpanError {
    let pos = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    // pest stops before its recursion exhausts the stack; with
    // `check_nesting` first and the parser thread's stack that takes
    // more nesting than polytune accepts, but a thread with a small stack
    // gets here.
    if let pest::error::ErrorVariant::CustomError { message } = &e.variant
        && message.contains("limit reached")
    {
        return SpanError::new(
            Span {
                start: offset + pos,
                end: offset + pos + 1,
            },
            format!("SCoP nested too deeply for the parser ({message})"),
        )
        .help("split the region into several SCoPs or simplify the expressions");
    }
    let expected = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => {
            let mut names: Vec<String> = positives.iter().filter_map(|r| rule_name(*r)).collect();
            names.sort();
            names.dedup();
            names
        }
        pest::error::ErrorVariant::CustomError { .. } => vec![],
    };
    let found = e
        .line()
        .get(e.line_col_col().saturating_sub(1)..)
        .and_then(|rest| rest.split_whitespace().next())
        .map(|t| t.chars().take(20).collect::<String>());
    let mut message = String::from("syntax error in SCoP");
    if let Some(f) = found {
        message.push_str(&format!(" at `{f}`"));
    }
    if !expected.is_empty() {
        message.push_str(&format!(": expected {}", expected.join(" or ")));
    }
    SpanError::new(
        Span {
            start: offset + pos,
            end: offset + pos + 1,
        },
        message,
    )
    .help("the SCoP must contain only for loops, ifs, blocks and assignments (see `polytune scop --help`)")
}

trait LineColCol {
    fn line_col_col(&self) -> usize;
}

impl LineColCol for pest::error::Error<Rule> {
    fn line_col_col(&self) -> usize {
        match self.line_col {
            pest::error::LineColLocation::Pos((_, c)) => c,
            pest::error::LineColLocation::Span((_, c), _) => c,
        }
    }
}

fn rule_name(r: Rule) -> Option<String> {
    Some(
        match r {
            Rule::expr | Rule::binary_expr | Rule::unary_expr | Rule::postfix_expr => {
                "an expression"
            }
            Rule::statement | Rule::for_stmt | Rule::if_stmt | Rule::block | Rule::expr_stmt => {
                "a statement"
            }
            Rule::identifier => "a name",
            Rule::for_step
            | Rule::step_postfix
            | Rule::step_prefix
            | Rule::step_compound
            | Rule::step_assign => "a loop step",
            Rule::for_init => "a loop initialization",
            Rule::assign_op => "an assignment",
            Rule::EOI => "end of SCoP",
            Rule::int_lit | Rule::float_lit => "a number",
            _ => return None,
        }
        .to_string(),
    )
}

/// An expression and the depth of its tree (a leaf is 1).
type Built = (Expr, usize);

struct Builder<'n> {
    offset: usize,
    next_id: &'n mut usize,
    /// Statements enclosing the one being built.
    level: usize,
}

impl Builder<'_> {
    fn span(&self, p: &Pair<Rule>) -> Span {
        let s = p.as_span();
        Span {
            start: self.offset + s.start(),
            end: self.offset + s.end(),
        }
    }

    /// A node over children at most `below` deep, within [`MAX_NESTING`]
    /// counted from the top of the SCoP. This bounds the tree exactly;
    /// [`check_nesting`] only estimates it.
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

    fn leaf(&self, kind: ExprKind, span: Span) -> Result<Built, SpanError> {
        self.node(kind, span, 0)
    }

    fn stmt(&mut self, p: Pair<Rule>) -> Result<Stmt, SpanError> {
        let span = self.span(&p);
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
                let mut it = p
                    .into_inner()
                    .filter(|q| !matches!(q.as_rule(), Rule::kw_if | Rule::kw_else));
                let cond = self.expr(it.next().expect("if cond"))?.0;
                let then = Box::new(self.stmt(it.next().expect("if body"))?);
                let other = match it.next() {
                    Some(q) => Some(Box::new(self.stmt(q)?)),
                    None => None,
                };
                StmtKind::If { cond, then, other }
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
    /// [`StmtKind::Local`] when it is straight-line code.
    fn block(&mut self, p: Pair<Rule>) -> Result<StmtKind, SpanError> {
        let pairs: Vec<Pair<Rule>> = p.into_inner().collect();
        if !pairs.iter().any(|q| q.as_rule() == Rule::local_decl) {
            return Ok(StmtKind::Block(
                pairs
                    .into_iter()
                    .map(|q| self.stmt(q))
                    .collect::<Result<_, _>>()?,
            ));
        }
        let first_id = *self.next_id;
        let mut parts = Vec::new();
        for q in pairs {
            let span = self.span(&q);
            if q.as_rule() == Rule::local_decl {
                let mut it = q.into_inner();
                let ty = normalize_type(it.next().expect("type").as_str());
                let name = it.next().expect("name").as_str().to_string();
                let init = match it.next() {
                    Some(e) => Some(self.expr(e)?.0),
                    None => None,
                };
                parts.push(LocalPart::Decl {
                    ty,
                    name,
                    init,
                    span,
                });
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
                StmtKind::Unsupported(what) => return Ok(StmtKind::Unsupported(what)),
                _ => {
                    return Ok(StmtKind::Unsupported(
                        "a declaration in a block that also has loops, conditions or other statements (only straight-line blocks may declare variables: declare it before the loop nest)"
                            .to_string(),
                    ));
                }
            }
        }
        if !parts.iter().any(|p| matches!(p, LocalPart::Assign { .. })) {
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

    fn step(&mut self, p: Pair<Rule>) -> Result<Step, SpanError> {
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

    fn expr(&mut self, p: Pair<Rule>) -> Result<Built, SpanError> {
        let span = self.span(&p);
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
                self.expr(inner)
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

fn assign_op(s: &str) -> AssignOp {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::scop::print::stmts_to_c;

    fn roundtrip(src: &str) -> String {
        let mut id = 0;
        let body = parse_body(src, 0, &mut id).unwrap();
        stmts_to_c(&body, "")
    }

    #[test]
    fn precedence_and_association_survive_printing() {
        let out = roundtrip("x = a - (b - c) * d / (e * f) + -(-g);");
        assert_eq!(out, "x = a - (b - c) * d / (e * f) + -(-g);\n");
        let out = roundtrip("x = a < b ? c : d ? e : f;");
        assert_eq!(out, "x = a < b ? c : d ? e : f;\n");
        let out = roundtrip("x = (a ? b : c) + (double)(i + 1) * 2.5e-3f;");
        assert_eq!(out, "x = (a ? b : c) + (double)(i + 1) * 2.5e-3f;\n");
    }

    #[test]
    fn loops_and_ifs() {
        let src = "for (int i = 0; i <= n - 1; i += 2) { if (i > 0 && i < m) A[i][i+1] += 1.0; else B[i] = SCALAR_VAL(0.5); }\nfor (j = n; j > 0; j--) C[j] = 0;";
        let out = roundtrip(src);
        assert_eq!(
            out,
            "for (int i = 0; i <= n - 1; i += 2) {\n  if (i > 0 && i < m)\n    A[i][i + 1] += 1.0;\n  else\n    B[i] = SCALAR_VAL(0.5);\n}\nfor (j = n; j > 0; j--)\n  C[j] = 0;\n"
        );
    }

    #[test]
    fn statements_are_numbered_in_order() {
        let mut id = 0;
        let body = parse_body(
            "a = 1; for (i = 0; i < n; i++) { b[i] = 2; c[i] = 3; }",
            10,
            &mut id,
        )
        .unwrap();
        assert_eq!(id, 3);
        assert_eq!(body[0].span.start, 10);
    }

    #[test]
    fn syntax_errors_have_positions() {
        let mut id = 0;
        let e = parse_body("A[i] = ;", 100, &mut id).unwrap_err();
        assert_eq!(e.span.start, 107);
        assert!(e.message.contains("syntax error"), "{}", e.message);
        let deep = format!("x = {}1{};", "(".repeat(5000), ")".repeat(5000));
        let e = parse_body(&deep, 0, &mut id).unwrap_err();
        assert!(e.message.contains("too deeply nested"), "{}", e.message);
    }

    #[test]
    fn operators_separated_by_spaces() {
        // `- -1.0` is two negations, not a `--` (false_reject_negneg.c).
        assert_eq!(roundtrip("B[i] = - -1.0;"), "B[i] = -(-1.0);\n");
        assert_eq!(roundtrip("x = a - -b + + c;"), "x = a - -b + +c;\n");
        assert_eq!(roundtrip("x = a- - -b;"), "x = a - -(-b);\n");
        assert_eq!(roundtrip("x = ! !a;"), "x = !!a;\n");
        assert_eq!(roundtrip("x = a & &b;"), "x = a & &b;\n");
        assert_eq!(roundtrip("x = a < - 1;"), "x = a < -1;\n");
        // Adjacent characters still make one operator.
        assert_eq!(roundtrip("x = a-- - --b;"), "x = a-- - --b;\n");
        let mut id = 0;
        assert!(parse_body("x = a - - = 1;", 0, &mut id).is_err());
    }

    /// Depth of a tree, counted as `parse_body` bounds it.
    fn stmt_depth(s: &Stmt) -> usize {
        1 + match &s.kind {
            StmtKind::For(l) => expr_depth(&l.init)
                .max(expr_depth(&l.cond))
                .max(l.step.text_expr.as_ref().map_or(0, expr_depth))
                .max(stmt_depth(&l.body)),
            StmtKind::If { cond, then, other } => expr_depth(cond)
                .max(stmt_depth(then))
                .max(other.as_ref().map_or(0, |o| stmt_depth(o))),
            StmtKind::Block(v) => v.iter().map(stmt_depth).max().unwrap_or(0),
            StmtKind::Assign { lhs, rhs, .. } => expr_depth(lhs).max(expr_depth(rhs)),
            StmtKind::Local { parts, .. } => parts
                .iter()
                .map(|p| match p {
                    LocalPart::Decl { init, .. } => init.as_ref().map_or(0, expr_depth),
                    LocalPart::Assign { lhs, rhs, .. } => expr_depth(lhs).max(expr_depth(rhs)),
                })
                .max()
                .unwrap_or(0),
            StmtKind::Expr(e) => expr_depth(e),
            _ => 0,
        }
    }

    fn expr_depth(e: &Expr) -> usize {
        1 + match &e.kind {
            ExprKind::Access { subscripts: v, .. } | ExprKind::Call { args: v, .. } => {
                v.iter().map(expr_depth).max().unwrap_or(0)
            }
            ExprKind::Unary { expr, .. } | ExprKind::Cast { expr, .. } => expr_depth(expr),
            ExprKind::Binary { lhs, rhs, .. } => expr_depth(lhs).max(expr_depth(rhs)),
            ExprKind::Ternary { cond, then, other } => expr_depth(cond)
                .max(expr_depth(then))
                .max(expr_depth(other)),
            _ => 0,
        }
    }

    /// Depth of the tree of `src`, parsed and measured with the stack the
    /// parser thread has.
    fn depth_of(src: &str) -> Result<usize, SpanError> {
        std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn_scoped(s, || {
                    let mut id = 0;
                    let body = parse_body(src, 0, &mut id)?;
                    Ok(body.iter().map(stmt_depth).max().unwrap_or(0))
                })
                .unwrap()
                .join()
                .unwrap()
        })
    }

    #[test]
    fn the_parser_stops_short_of_a_small_stack() {
        // 900 nested loops fit the limit but not pest on 256 KiB.
        let src = format!("{} x = 1;", "for (i = 0; i < n; i++) ".repeat(900));
        let e = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || parse_body(&src, 0, &mut 0).map(|_| ()))
            .unwrap()
            .join()
            .unwrap()
            .unwrap_err();
        assert!(
            e.message.contains("nested too deeply for the parser"),
            "{}",
            e.message
        );
    }

    #[test]
    fn sequential_statements_do_not_nest() {
        let n = MAX_NESTING + 200;
        for src in [
            "for (i = 0; i < n; i++) A[i] = 1;\n".repeat(n),
            "if (n > 2) A[0] = 1; else A[1] = 2;\n".repeat(n),
            "{ A[0] = a ? b : c; }\n".repeat(n),
            "for (i = 0; i < n; i++) { for (j = 0; j < n; j++) A[i][j] = (double)(i + j); }\n"
                .repeat(n),
            format!("x = f({});", "a + 1, ".repeat(n) + "b"),
        ] {
            assert!(depth_of(&src).unwrap() < 10, "{}", &src[..60]);
        }
    }

    #[test]
    fn nesting_is_bounded_before_and_while_parsing() {
        let n = MAX_NESTING + 1;
        let statements = [
            format!("{} x = 1;", "for (i = 0; i < n; i++) ".repeat(n)),
            format!("{} x = 1;", "if (n > 1) ".repeat(n)),
            format!(
                "if (n > 1) x = 1; {} x = 1;",
                "else if (n > 1) x = 1; ".repeat(n)
            ),
            format!("{}x = 1;{}", "{".repeat(n), "}".repeat(n)),
        ];
        for src in &statements {
            let e = depth_of(src).unwrap_err();
            assert!(
                e.message
                    .contains("loops, ifs and blocks nested too deeply"),
                "{}",
                e.message
            );
        }
        let expressions = [
            format!("B[i] = {}1;", "!".repeat(n)),
            format!("B[i] = {}1;", "~ ".repeat(n)),
            format!("B[i] = {}1;", "- ".repeat(n)),
            format!("B[i] = {}1;", "(double)".repeat(n)),
            format!("B[i] = {}1;", "1 + ".repeat(n)),
            format!("B[i] = {}1;", "1 * 2 - ".repeat(n)),
            format!("B[{}i] = 1;", "1+".repeat(n)),
            format!("for (i = 0; i < {}n; i++) x = 1;", "1+".repeat(n)),
            format!("B[i] = {}1;", "a ? b : ".repeat(n)),
            format!("B[i] = {}1{};", "f(".repeat(n), ")".repeat(n)),
            format!("B[i] = {}1{};", "A[".repeat(n), "]".repeat(n)),
            format!("B[i] = 1{};", "++".repeat(n)),
        ];
        for src in &expressions {
            let e = depth_of(src).unwrap_err();
            assert!(
                e.message.contains("expression too deeply nested"),
                "{}: {}",
                &src[..20],
                e.message
            );
            assert!(e.span.start < src.len());
        }
    }

    #[test]
    fn the_tree_is_bounded_even_where_the_estimate_is_low() {
        // ((x + a + ... + a) + a + ... + a) + ...: the estimate sees one
        // group at a time, the tree is as deep as all of them together.
        let mut e = "x".to_string();
        for _ in 0..40 {
            e = format!("({e}{})", " + a".repeat(60));
        }
        let e = depth_of(&format!("B[i] = {e};")).unwrap_err();
        assert!(
            e.message.contains("expression too deeply nested"),
            "{}",
            e.message
        );
        let mut e = "x".to_string();
        for _ in 0..15 {
            e = format!("({e}{})", " + a".repeat(60));
        }
        assert!(depth_of(&format!("B[i] = {e};")).unwrap() > 900);
    }

    #[test]
    fn chains_within_the_limit_parse() {
        let n = MAX_NESTING - 10;
        for src in [
            format!("B[i] = {}1;", "!".repeat(n)),
            format!("B[i] = {}1;", "(double)".repeat(n)),
            format!("B[i] = {}1;", "1 + ".repeat(n)),
            format!("{} x = 1;", "for (i = 0; i < n; i++) ".repeat(n)),
        ] {
            let d = depth_of(&src).unwrap();
            assert!(d > MAX_NESTING / 2 && d <= MAX_NESTING, "{d}");
        }
    }
}
