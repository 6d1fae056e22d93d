//! pest grammar (`grammar/scop.pest`) to the SCoP tree. Spans are made
//! absolute (file offsets) so diagnostics point into the user's file.
//!
//! Before pest runs, `depth.rs` bounds how deep the tree can be (a cheap
//! scan of the text); `build.rs` turns pest's pairs into the tree, within
//! the same bound.

mod build;
mod depth;
mod hoist;

use build::Builder;
pub use depth::MAX_NESTING;
use depth::check_nesting;

use super::error::SpanError;
use crate::frontend::scop::ast::{
    AssignOp, BinOp, Expr, ExprKind, ForLoop, LocalPart, Span, Step, Stmt, StmtKind, UnOp,
};
use pest::Parser;
use pest::iterators::Pair;

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/scop.pest"]
struct ScopGrammar;

/// Parses the text of one SCoP body that starts at byte `offset` of its
/// file. `next_id` numbers assignment statements across the file.
#[cfg(test)]
pub(crate) fn parse_body(
    text: &str,
    offset: usize,
    next_id: &mut usize,
) -> Result<Vec<Stmt>, SpanError> {
    parse_body_with(text, offset, next_id, &std::collections::HashSet::new())
}

/// [`parse_body`] knowing the file's element macros (a call of one in an
/// `if` condition reads memory: the `if` is a compound statement).
pub(crate) fn parse_body_with(
    text: &str,
    offset: usize,
    next_id: &mut usize,
    elements: &std::collections::HashSet<String>,
) -> Result<Vec<Stmt>, SpanError> {
    check_nesting(text, offset)?;
    let mut pairs =
        ScopGrammar::parse(Rule::scop_body, text).map_err(|e| syntax_error(e, offset))?;
    let body = pairs.next().expect("scop_body");
    let mut b = Builder::new(offset, next_id, elements);
    let mut out = Vec::new();
    for p in body.into_inner() {
        if p.as_rule() != Rule::EOI {
            out.push(b.stmt(p)?);
        }
    }
    Ok(out)
}

/// Parses one expression (a macro's expansion); every node gets `span`,
/// the place in the user's file it stands for.
pub(crate) fn parse_expr(text: &str, span: Span) -> Result<Expr, SpanError> {
    check_nesting(text, span.start)?;
    let at = |e: SpanError| SpanError::new(span, e.message.clone());
    let mut pairs =
        ScopGrammar::parse(Rule::expr_only, text).map_err(|e| at(syntax_error(e, span.start)))?;
    let whole = pairs.next().expect("expr_only");
    let mut ids = 0;
    let none = std::collections::HashSet::new();
    let mut b = Builder::new(span.start, &mut ids, &none);
    let inner = whole
        .into_inner()
        .next()
        .expect("an expression before the end");
    let (mut e, _) = b.expr(inner).map_err(at)?;
    fn respan(e: &mut Expr, span: Span) {
        e.span = span;
        match &mut e.kind {
            ExprKind::Access { subscripts: v, .. } | ExprKind::Call { args: v, .. } => {
                v.iter_mut().for_each(|x| respan(x, span));
            }
            ExprKind::Unary { expr, .. } | ExprKind::Cast { expr, .. } => respan(expr, span),
            ExprKind::Binary { lhs, rhs, .. } => {
                respan(lhs, span);
                respan(rhs, span);
            }
            ExprKind::Ternary { cond, then, other } => {
                respan(cond, span);
                respan(then, span);
                respan(other, span);
            }
            _ => {}
        }
    }
    respan(&mut e, span);
    Ok(e)
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
        return too_deep_for_the_stack(offset + pos, message);
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

/// The error of a parse that ran short of stack at byte `at`, whether in
/// pest (its "stack limit reached") or in the tree's builder.
fn too_deep_for_the_stack(at: usize, cause: &str) -> SpanError {
    SpanError::new(
        Span {
            start: at,
            end: at + 1,
        },
        format!("SCoP nested too deeply for the parser ({cause})"),
    )
    .help("split the region into several SCoPs or simplify the expressions")
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
#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::scop::print::{PREC_ADDITIVE, compound_to_c, stmts_to_c};

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
        // The source's own parentheses stay, needed or not: a macro's
        // expansion is text (`#define HALF n/2`, `#define SQ(x) x*x`).
        let out = roundtrip("x = (a / b) * c + d / (HALF) + SQ((i + 1)) + SQ(i + 1);");
        assert_eq!(
            out,
            "x = (a / b) * c + d / (HALF) + SQ((i + 1)) + SQ(i + 1);\n"
        );
    }

    #[test]
    fn a_block_with_declarations_and_loops_prints_back_and_substitutes() {
        let src = "for (y = 1; y < h; y++) { float acc = 0.0f; for (dy = -1; dy <= 1; dy++) { float w = k[dy + 1]; if (w > 0) acc += in[y + dy] * w; } out[y] = acc; }";
        let out = roundtrip(src);
        assert_eq!(
            out,
            "for (y = 1; y < h; y++) {\n  float acc = 0.0f;\n  for (dy = -1; dy <= 1; dy++) {\n    float w = k[dy + 1];\n    if (w > 0)\n      acc += in[y + dy] * w;\n  }\n  out[y] = acc;\n}\n"
        );
        assert_eq!(roundtrip(&out), out);
        let mut id = 0;
        let body = parse_body(src, 0, &mut id).unwrap();
        // One statement: the block.
        assert_eq!(id, 1);
        let StmtKind::For(l) = &body[0].kind else {
            panic!("a loop")
        };
        let StmtKind::Local { parts, .. } = &l.body.kind else {
            panic!("a block with declarations: {:?}", l.body.kind)
        };
        assert!(LocalPart::is_compound(parts));
        let subst = |n: &str| (n == "y").then(|| ("c0 + 1".to_string(), PREC_ADDITIVE));
        let declared = [("dy".to_string(), "int".to_string())];
        assert_eq!(
            compound_to_c(parts, &declared, "  ", &subst),
            "  {\n    int dy;\n    float acc = 0.0f;\n    for (dy = -1; dy <= 1; dy++) {\n      float w = k[dy + 1];\n      if (w > 0)\n        acc += in[c0 + 1 + dy] * w;\n    }\n    out[c0 + 1] = acc;\n  }\n"
        );
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
                    LocalPart::Stmt(s) => stmt_depth(s),
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
