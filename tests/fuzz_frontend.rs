//! Property tests: the front end never panics, whatever the input, and
//! errors always carry a position inside the file.

use polytune::config::Config;
use polytune::frontend::{self, FrontendError, MAX_NESTING, Options};
use proptest::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};

fn check(text: String) {
    let len_lines = text.lines().count().max(1);
    match frontend::parse_source(Path::new("fuzz.c"), text, &Options::default()) {
        Ok(src) => {
            // Whatever parsed must regenerate and parse again.
            let again =
                frontend::parse_source(Path::new("fuzz.c"), src.regenerated(), &Options::default());
            assert!(
                again.is_ok(),
                "regenerated text does not parse: {:?}",
                again.err()
            );
        }
        Err(FrontendError::Source(d)) => {
            assert!(
                d.line >= 1 && d.line <= len_lines + 1,
                "line {} of {len_lines}",
                d.line
            );
            assert!(d.column >= 1);
            assert!(!d.message.is_empty());
        }
        Err(e) => panic!("unexpected error kind: {e}"),
    }
}

const TOKENS: &[&str] = &[
    "for", "if", "else", "while", "(", ")", "[", "]", "{", "}", ";", "=", "+=", "-=", "*=", "/=",
    "++", "--", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "!", "+", "-", "*", "/", "%", "?",
    ":", ",", "i", "j", "n", "A", "B", "x", "0", "1", "2", "32", "1.5", "min", "max", "floord",
    "ceild", "sqrt", "(double)", "int", "\n", " ", "/*c*/", "//c\n",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..80).prop_map(|t| t.join(" "))
}

fn wrap(body: &str) -> String {
    format!("void f(void) {{\n#pragma scop\n{body}\n#pragma endscop\n}}\n")
}

const GEMM_SCOP: &str = "for (i = 0; i < ni; i++) {\n  for (j = 0; j < nj; j++)\n    C[i][j] *= beta;\n  for (k = 0; k < nk; k++)\n    for (j = 0; j < nj; j++)\n      C[i][j] += alpha * A[i][k] * B[k][j];\n}\n";

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_in_a_scop(body in "\\PC{0,200}") {
        check(wrap(&body));
    }

    #[test]
    fn arbitrary_files(text in "(\\PC|\n|#pragma scop\n|#pragma endscop\n){0,60}") {
        check(text);
    }

    #[test]
    fn token_soups(body in token_soup()) {
        check(wrap(&body));
    }

    #[test]
    fn mutated_gemm(edits in prop::collection::vec((0usize..GEMM_SCOP.len(), prop::sample::select(TOKENS), 0usize..3), 1..6)) {
        let mut body = GEMM_SCOP.to_string();
        for (at, tok, kind) in edits {
            let mut at = at.min(body.len());
            while !body.is_char_boundary(at) { at -= 1; }
            match kind {
                0 => body.insert_str(at, tok),
                1 => { let end = (at + tok.len()).min(body.len()); if body.is_char_boundary(end) { body.replace_range(at..end, ""); } }
                _ => { let end = (at + 1).min(body.len()); if body.is_char_boundary(end) { body.replace_range(at..end, tok); } }
            }
        }
        check(wrap(&body));
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    for body in [
        format!("x = {}1{};", "(".repeat(100_000), ")".repeat(100_000)),
        format!("{} x = 1;", "for (i = 0; i < n; i++) ".repeat(5000)),
        format!("x = {} 1;", "a ? b : ".repeat(5000)),
        format!("x = {}1;", "-".repeat(200_000)),
        format!("x = {}1;", "- ".repeat(200_000)),
        format!("x = {}1;", "(double)".repeat(100_000)),
        format!("x = {}1;", "a + ".repeat(100_000)),
    ] {
        check(wrap(&body));
    }
}

/// The reproducers of the findings (a SCoP with `B[i] = !!!...!1;` of 8.5
/// million `!`, 10 million `~`, a 10-million-term sum in an expression, a
/// bound or a subscript) overflowed the parser's stack. Each is now an
/// error at its place, found before the parser runs.
#[test]
fn huge_operator_chains_are_errors_at_their_place() {
    let head = "void f(int n, double B[10]) {\n  int i;\n#pragma scop\n";
    let tail = "\n#pragma endscop\n}\n";
    let n = 10_000_000;
    for (body, line, col) in [
        (
            format!(
                "for (i = 0; i < n; i++)\n  B[i] = {}1;",
                "!".repeat(8_500_000)
            ),
            5,
            10,
        ),
        (
            format!("for (i = 0; i < n; i++)\n  B[i] = {}1;", "~".repeat(n)),
            5,
            10,
        ),
        (
            format!("for (i = 0; i < n; i++)\n  B[i] = {}1;", "1+".repeat(n)),
            5,
            10,
        ),
        (
            format!("for (i = 0; i < {}n; i++)\n  B[i] = 1;", "1+".repeat(n)),
            4,
            18,
        ),
        (
            format!("for (i = 0; i < n; i++)\n  B[{}i] = 1;", "1+".repeat(n)),
            5,
            5,
        ),
    ] {
        let start = Instant::now();
        let text = format!("{head}{body}{tail}");
        let e = frontend::parse_source(Path::new("chain.c"), text, &Options::default())
            .expect_err("too deep");
        let d = e.diagnostic().expect("a position");
        assert!(
            d.message.contains(&format!(
                "expression too deeply nested (more than {MAX_NESTING}"
            )),
            "{}",
            d.message
        );
        // In the chain, within its first few thousand operators.
        assert_eq!(d.line, line, "{e}");
        assert!(d.column > col && d.column < col + 8 * MAX_NESTING, "{e}");
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{:?}",
            start.elapsed()
        );
    }
}

/// Everything polytune does with a parsed SCoP (print it, lower it, generate
/// code from it, drop it) runs on an ordinary thread, which in a debug
/// build of the tests has 2 MiB of stack: a tree as deep as the limit
/// must fit.
#[test]
fn trees_as_deep_as_the_limit_fit_every_walk() {
    let n = MAX_NESTING - 8;
    let config: Config = "fuse=smart,tile=32x32x1,wave=0,omp=1,prevec=1,simd=1,uj=2"
        .parse()
        .unwrap();
    for rhs in [
        format!("{}B[i]", "!".repeat(n)),
        format!("{}B[i]", "- ".repeat(n)),
        format!("{}B[i]", "(double)".repeat(n)),
        format!("B[i]{}", " + 1.0".repeat(n)),
        format!("B[i]{}", " * 2.0 - 1.0".repeat(n / 2)),
    ] {
        let text = wrap(&format!("for (i = 0; i < n; i++)\n  A[i] = {rhs};"));
        let src = frontend::parse_source(Path::new("deep.c"), text, &Options::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let again =
            frontend::parse_source(Path::new("deep.c"), src.regenerated(), &Options::default());
        assert!(again.is_ok(), "{:?}", again.err());
        let out = polytune::engine::pipeline::optimize(&src, &config, None).unwrap();
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        assert!(out.text.len() > src.text.len() / 2);
        drop(src);
    }
}

/// Chains of prefix and binary operators of any length, mixed with
/// brackets, in any place: never a crash, and the error (if any) has a
/// position.
fn chain() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "!", "~", "-", "- ", "+ ", "(double)", "(int)", "(", "1 +", "i *", "2 -", "a ?b:", "A[",
        "f(", "1 &&", ") +", "] -",
    ]);
    (
        prop::collection::vec(piece, 1..6),
        1usize..3 * MAX_NESTING,
        0usize..3,
    )
        .prop_map(|(pieces, reps, place)| {
            let mut e = String::new();
            for k in 0..reps {
                e.push_str(pieces[k % pieces.len()]);
            }
            e.push_str(" i");
            match place {
                0 => format!("for (i = 0; i < n; i++)\n  B[i] = {e};"),
                1 => format!("for (i = 0; i < {e}; i++)\n  B[i] = 1;"),
                _ => format!("for (i = 0; i < n; i++)\n  B[{e}] = 1;"),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, .. ProptestConfig::default() })]

    #[test]
    fn deep_chains(body in chain()) {
        check(wrap(&body));
    }
}
