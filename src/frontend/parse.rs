//! pest grammar (`grammar/scop.pest`) to the SCoP tree. Spans are made
//! absolute (file offsets) so diagnostics point into the user's file.

use super::error::SpanError;
use crate::scop::ast::{
    AssignOp, BinOp, Expr, ExprKind, ForLoop, Span, Step, Stmt, StmtKind, UnOp,
};
use pest::Parser;
use pest::iterators::Pair;

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/scop.pest"]
struct ScopGrammar;

/// Deepest nesting the parser accepts; deeper input is rejected up front
/// rather than risking the stack.
pub const MAX_NESTING: usize = 2000;

/// Parses the text of one SCoP body that starts at byte `offset` of its
/// file. `next_id` numbers assignment statements across the file.
pub fn parse_body(text: &str, offset: usize, next_id: &mut usize) -> Result<Vec<Stmt>, SpanError> {
    check_nesting(text, offset)?;
    let mut pairs =
        ScopGrammar::parse(Rule::scop_body, text).map_err(|e| syntax_error(e, offset))?;
    let body = pairs.next().expect("scop_body");
    let mut b = Builder { offset, next_id };
    let mut out = Vec::new();
    for p in body.into_inner() {
        if p.as_rule() != Rule::EOI {
            out.push(b.stmt(p));
        }
    }
    // Chains of prefix operators or casts nest without brackets; the tree
    // must stay shallow enough to be walked and dropped on any thread.
    for s in &out {
        if stmt_depth(s) > MAX_NESTING {
            return Err(SpanError::new(
                s.span,
                format!("SCoP is nested too deeply for polytune (more than {MAX_NESTING} levels)"),
            )
            .help("split the region into several SCoPs or simplify the expressions"));
        }
    }
    Ok(out)
}

fn stmt_depth(s: &Stmt) -> usize {
    1 + match &s.kind {
        StmtKind::For(l) => expr_depth(&l.init)
            .max(expr_depth(&l.cond))
            .max(stmt_depth(&l.body)),
        StmtKind::If { cond, then, other } => expr_depth(cond)
            .max(stmt_depth(then))
            .max(other.as_ref().map_or(0, |o| stmt_depth(o))),
        StmtKind::Block(v) => v.iter().map(stmt_depth).max().unwrap_or(0),
        StmtKind::Assign { lhs, rhs, .. } => expr_depth(lhs).max(expr_depth(rhs)),
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

fn check_nesting(text: &str, offset: usize) -> Result<(), SpanError> {
    let mut depth = 0usize;
    let mut max_depth = 0usize;
    let mut chained = 0usize;
    let mut worst = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            '?' => chained += 1,
            _ => {}
        }
        if depth + chained > max_depth {
            max_depth = depth + chained;
            worst = i;
        }
    }
    let statements = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| matches!(*w, "for" | "if" | "else"))
        .count();
    if max_depth + statements > MAX_NESTING {
        let at = offset + worst;
        return Err(SpanError::new(
            Span {
                start: at,
                end: at + 1,
            },
            format!("SCoP is nested too deeply for polytune (more than {MAX_NESTING} levels)"),
        )
        .help("split the region into several SCoPs or simplify the expressions"));
    }
    Ok(())
}

fn syntax_error(e: pest::error::Error<Rule>, offset: usize) -> SpanError {
    let pos = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
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

struct Builder<'n> {
    offset: usize,
    next_id: &'n mut usize,
}

impl Builder<'_> {
    fn span(&self, p: &Pair<Rule>) -> Span {
        let s = p.as_span();
        Span {
            start: self.offset + s.start(),
            end: self.offset + s.end(),
        }
    }

    fn stmt(&mut self, p: Pair<Rule>) -> Stmt {
        let span = self.span(&p);
        let kind = match p.as_rule() {
            Rule::for_stmt => StmtKind::For(Box::new(self.for_loop(p, span))),
            Rule::if_stmt => {
                let mut it = p
                    .into_inner()
                    .filter(|q| !matches!(q.as_rule(), Rule::kw_if | Rule::kw_else));
                let cond = self.expr(it.next().expect("if cond"));
                let then = Box::new(self.stmt(it.next().expect("if body")));
                let other = it.next().map(|q| Box::new(self.stmt(q)));
                StmtKind::If { cond, then, other }
            }
            Rule::block => StmtKind::Block(p.into_inner().map(|q| self.stmt(q)).collect()),
            Rule::empty_stmt => StmtKind::Empty,
            Rule::expr_stmt => {
                let mut it = p.into_inner();
                let lhs = self.expr(it.next().expect("expr"));
                match it.next() {
                    Some(op) => {
                        let op = assign_op(op.as_str());
                        let rhs = self.expr(it.next().expect("rhs"));
                        let id = *self.next_id;
                        *self.next_id += 1;
                        StmtKind::Assign { id, lhs, op, rhs }
                    }
                    None => StmtKind::Expr(lhs),
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
            Rule::declaration => StmtKind::Unsupported("a declaration".to_string()),
            r => StmtKind::Unsupported(format!("{r:?}")),
        };
        Stmt { kind, span }
    }

    fn for_loop(&mut self, p: Pair<Rule>, span: Span) -> ForLoop {
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
                _ => init_expr = Some(self.expr(q)),
            }
        }
        let cond = self.expr(it.next().expect("for cond"));
        let step = self.step(it.next().expect("for step"));
        let body = Box::new(self.stmt(it.next().expect("for body")));
        ForLoop {
            iterator,
            declared_type,
            init: init_expr.expect("for init expr"),
            cond,
            step,
            body,
            span,
            iterator_span,
        }
    }

    fn step(&mut self, p: Pair<Rule>) -> Step {
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
                let e = self.expr(parts[2].clone());
                stride = constant_int(&e).and_then(|c| c.checked_mul(sign));
                if stride.is_none() {
                    text_expr = Some(e);
                }
            }
            _ => {
                // i = i + c, i = c + i, i = i - c
                variable = parts[0].as_str().to_string();
                let e = self.expr(parts[1].clone());
                stride = assign_stride(&variable, &e);
                if stride.is_none() {
                    text_expr = Some(e);
                }
            }
        }
        Step {
            variable,
            stride,
            text_expr,
            span,
        }
    }

    fn expr(&mut self, p: Pair<Rule>) -> Expr {
        let span = self.span(&p);
        match p.as_rule() {
            Rule::expr => {
                let mut it = p.into_inner();
                let cond = self.expr(it.next().expect("binary"));
                match (it.next(), it.next()) {
                    (Some(t), Some(o)) => Expr::new(
                        ExprKind::Ternary {
                            cond: Box::new(cond),
                            then: Box::new(self.expr(t)),
                            other: Box::new(self.expr(o)),
                        },
                        span,
                    ),
                    _ => cond,
                }
            }
            Rule::binary_expr => self.binary(p),
            Rule::unary_expr => {
                let parts: Vec<Pair<Rule>> = p.into_inner().collect();
                let (last, prefixes) = parts.split_last().expect("operand");
                let mut e = self.expr(last.clone());
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
                    e = Expr::new(kind, whole);
                }
                e
            }
            Rule::postfix_expr => {
                let mut it = p.into_inner();
                let mut e = self.expr(it.next().expect("primary"));
                for op in it {
                    let op_span = self.span(&op);
                    let whole = Span {
                        start: e.span.start,
                        end: op_span.end,
                    };
                    let kind = match op.as_rule() {
                        Rule::subscript => {
                            let idx = self.expr(op.into_inner().next().expect("index"));
                            match e.kind {
                                ExprKind::Ident(name) => ExprKind::Access {
                                    name,
                                    subscripts: vec![idx],
                                },
                                ExprKind::Access {
                                    name,
                                    mut subscripts,
                                } => {
                                    subscripts.push(idx);
                                    ExprKind::Access { name, subscripts }
                                }
                                _ => ExprKind::Unsupported(
                                    "subscript of something that is not an array name".into(),
                                ),
                            }
                        }
                        Rule::call_args => {
                            let args = op.into_inner().map(|a| self.expr(a)).collect();
                            match e.kind {
                                ExprKind::Ident(name) => ExprKind::Call { name, args },
                                _ => ExprKind::Unsupported("call through an expression".into()),
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
                        _ => ExprKind::Unsupported("member access (`.` or `->`)".into()),
                    };
                    e = Expr::new(kind, whole);
                }
                e
            }
            Rule::paren => {
                let inner = p.into_inner().next().expect("paren inner");
                self.expr(inner)
            }
            Rule::identifier => Expr::new(ExprKind::Ident(p.as_str().to_string()), span),
            Rule::int_lit => {
                let text = p.as_str().to_string();
                match parse_int(&text) {
                    Some(value) => Expr::new(ExprKind::Int { value, text }, span),
                    None => Expr::new(
                        ExprKind::Unsupported(format!("integer literal `{text}` out of range")),
                        span,
                    ),
                }
            }
            Rule::float_lit => Expr::new(ExprKind::Float(p.as_str().to_string()), span),
            Rule::char_lit => Expr::new(ExprKind::Unsupported("character literal".into()), span),
            Rule::string_lit => Expr::new(ExprKind::Unsupported("string literal".into()), span),
            r => Expr::new(ExprKind::Unsupported(format!("{r:?}")), span),
        }
    }

    /// Precedence climbing over the flat `operand (op operand)*` list.
    fn binary(&mut self, p: Pair<Rule>) -> Expr {
        let parts: Vec<Pair<Rule>> = p.into_inner().collect();
        let mut operands: Vec<Expr> = Vec::new();
        let mut ops: Vec<BinOp> = Vec::new();
        for (k, part) in parts.into_iter().enumerate() {
            if k % 2 == 0 {
                operands.push(self.expr(part));
            } else {
                let op = bin_op(part.as_rule());
                while let Some(&top) = ops.last() {
                    if top.precedence() >= op.precedence() {
                        reduce(&mut operands, &mut ops);
                    } else {
                        break;
                    }
                }
                ops.push(op);
            }
        }
        while !ops.is_empty() {
            reduce(&mut operands, &mut ops);
        }
        operands.pop().expect("binary operand")
    }
}

fn reduce(operands: &mut Vec<Expr>, ops: &mut Vec<BinOp>) {
    let op = ops.pop().expect("op");
    let rhs = operands.pop().expect("rhs");
    let lhs = operands.pop().expect("lhs");
    let span = Span {
        start: lhs.span.start,
        end: rhs.span.end,
    };
    operands.push(Expr::new(
        ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        span,
    ));
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
    use crate::scop::print::stmts_to_c;

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
        assert!(e.message.contains("nested too deeply"));
    }
}
