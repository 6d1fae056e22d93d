//! Property tests: the front end never panics, whatever the input, and
//! errors always carry a position inside the file.

use polytune::frontend::{self, FrontendError, Options};
use proptest::prelude::*;
use std::path::Path;

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
