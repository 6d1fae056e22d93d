//! How many statements a SCoP region has at least, read from its tokens
//! before it is parsed: a region far beyond the engine's limit is left as
//! written at once (50,000 loops took minutes to parse, lower and model
//! before the engine refused them).
//!
//! The count never exceeds what the parser and the lowering make of the
//! region: an assignment statement is one polyhedral statement (a chain,
//! `a = b = c;`, is counted once), a loop counts what its body counts, an
//! `if` one at most (it may be a compound statement), a block with
//! scalars of its own one (none when it only declares). What it cannot
//! read (a statement the grammar rejects, unbalanced brackets, nesting
//! beyond the parser's) ends the count there.

use super::lex::{Tok, Token, tokens};
use super::parse::MAX_NESTING;

/// The type words a local declaration may start with (`grammar/scop.pest`'s
/// `type_name`); two names in a row declare too (`real d;`).
const TYPE_WORDS: [&str; 19] = [
    "unsigned",
    "signed",
    "long",
    "short",
    "int",
    "char",
    "float",
    "double",
    "size_t",
    "ptrdiff_t",
    "int64_t",
    "int32_t",
    "uint64_t",
    "uint32_t",
    "DATA_TYPE",
    "const",
    "volatile",
    "register",
    "static",
];

/// A lower bound on the polyhedral statements of a region's `body`.
pub(crate) fn statements_at_least(body: &str) -> usize {
    let t = tokens(body);
    let mut n = 0;
    let mut k = 0;
    while k < t.len() {
        match statement(&t, k, t.len(), 0) {
            Some((m, end)) => {
                n += m;
                k = end;
            }
            None => break,
        }
    }
    n
}

/// The statements of the statement at `k` at least, and the token after
/// it; `None` when it cannot be read before `end`.
fn statement(t: &[Token], k: usize, end: usize, depth: usize) -> Option<(usize, usize)> {
    if depth > MAX_NESTING || k >= end {
        return None;
    }
    match t[k].word.as_str() {
        "for" => statement(t, paren(t, k + 1, end)?, end, depth + 1),
        "if" => {
            let (then, e) = statement(t, paren(t, k + 1, end)?, end, depth + 1)?;
            let (other, e) = if e < end && t[e].word == "else" {
                statement(t, e + 1, end, depth + 1)?
            } else {
                (0, e)
            };
            Some(((then + other).min(1), e))
        }
        "{" => {
            let close = t[k].close;
            if close == 0 || close > end {
                return None;
            }
            Some((block(t, k + 1, close - 1, depth + 1)?, close))
        }
        "while" | "do" | "switch" | "else" | "break" | "continue" | "return" | "goto" | "case"
        | "default" | "}" => None,
        _ => {
            let e = simple_end(t, k, end)?;
            let assigns = !declares(t, k) && assigns(t, k, e);
            Some((usize::from(assigns), e))
        }
    }
}

/// A block's statements at least (its tokens between `start` and `end`):
/// one when it declares scalars and does something, else its statements'.
fn block(t: &[Token], start: usize, end: usize, depth: usize) -> Option<usize> {
    let mut items = Vec::new();
    let mut k = start;
    while k < end {
        let (n, e) = statement(t, k, end, depth)?;
        items.push((k, n));
        k = e;
    }
    if items.iter().any(|&(k, _)| declares(t, k)) {
        Some(usize::from(
            items.iter().any(|&(k, n)| !declares(t, k) && n > 0),
        ))
    } else {
        Some(items.iter().map(|&(_, n)| n).sum())
    }
}

/// The token after the parenthesis opening at `k`.
fn paren(t: &[Token], k: usize, end: usize) -> Option<usize> {
    (k < end && t[k].word == "(" && t[k].close > 0 && t[k].close <= end).then(|| t[k].close)
}

/// The token after the `;` ending the statement at `k`, brackets skipped.
fn simple_end(t: &[Token], mut k: usize, end: usize) -> Option<usize> {
    while k < end {
        match t[k].word.as_str() {
            ";" => return Some(k + 1),
            "(" | "[" | "{" if t[k].close == 0 || t[k].close > end => return None,
            "(" | "[" | "{" => k = t[k].close,
            ")" | "]" | "}" => return None,
            _ => k += 1,
        }
    }
    None
}

/// Whether the statement at `k` declares a scalar.
fn declares(t: &[Token], k: usize) -> bool {
    TYPE_WORDS.contains(&t[k].word.as_str())
        || (t[k].kind == Tok::Ident && t.get(k + 1).is_some_and(|n| n.kind == Tok::Ident))
}

/// Whether tokens `k..e` assign outside brackets (`=` that is not part of
/// `==`, `!=`, `<=` or `>=`; `<<=` and `>>=` are left out).
fn assigns(t: &[Token], mut k: usize, e: usize) -> bool {
    let joined = |a: &Token, b: &Token| a.end == b.start;
    while k < e {
        match t[k].word.as_str() {
            "(" | "[" | "{" => k = t[k].close.max(k + 1),
            "=" => {
                let after = t
                    .get(k + 1)
                    .is_some_and(|n| n.word == "=" && joined(&t[k], n));
                let before = k > 0
                    && matches!(t[k - 1].word.as_str(), "=" | "!" | "<" | ">")
                    && joined(&t[k - 1], &t[k]);
                if !after && !before {
                    return true;
                }
                k += if after { 2 } else { 1 };
            }
            _ => k += 1,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    /// The count and the parsed SCoP's statements, of `body` and one more
    /// statement (a SCoP has one at least).
    fn both(body: &str) -> (usize, usize) {
        let body = format!("{body}\nx[98] = 0;");
        let text = format!(
            "void f(int n, int m, double A[99][99], double x[99]) {{ int i, j; double s;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        );
        let src = parse_source(Path::new("t.c"), text, &Options::default()).unwrap();
        (statements_at_least(&body), src.scops[0].statements.len())
    }

    #[test]
    fn simple_loops_are_counted_exactly() {
        let many = "for (i = 0; i < n; i++) x[i] = x[i] + 1;\n".repeat(7);
        assert_eq!(both(&many), (8, 8));
        let nest = "for (i = 0; i < n; i++) { x[i] = 0; for (j = 0; j < m; j++) { A[i][j] += 1; x[i] -= A[i][j]; } }";
        assert_eq!(both(nest), (4, 4));
        assert_eq!(both("s = 0; x[0] = s; A[0][0] = x[0] == s;"), (4, 4));
    }

    #[test]
    fn the_count_never_exceeds_the_statements() {
        for body in [
            // Chains, comparisons, conditions, blocks of local scalars.
            "x[0] = x[1] = x[2];",
            "for (i = 0; i < n; i++) if (i <= m) x[i] = 1; else { x[i] = 2; x[i] += 3; }",
            "for (i = 0; i < n; i++) if (x[i] > 0) { x[i] = 1; A[i][0] = 2; }",
            "for (i = 0; i < n; i++) { double t = x[i]; x[i] = t * t; A[i][0] = t; }",
            "for (i = 0; i < n; i++) { double t = x[i]; }",
            "for (i = 0; i < n; i++) { double t = 0; for (j = 0; j < m; j++) t += A[i][j]; x[i] = t; }",
            "for (i = 0; i < n; i++) ;",
            "for (i = 0; i < n; i++) { if (i != m) x[i] = 0; if (i >= m) ; }",
        ] {
            let (at_least, made) = both(body);
            assert!(at_least <= made, "{body}: {at_least} > {made}");
            assert!(at_least >= 2 || made == 1, "{body}: {at_least}, {made}");
        }
    }

    #[test]
    fn what_cannot_be_read_ends_the_count() {
        assert_eq!(
            statements_at_least("x[0] = 1; while (1) x[1] = 2; x[2] = 3;"),
            1
        );
        assert_eq!(
            statements_at_least("x[0] = 1; for (i = 0; i < n; i++ x[1] = 2;"),
            1
        );
        assert_eq!(statements_at_least("x[0] = 1; }"), 1);
        assert_eq!(statements_at_least("double t = 1; x[0] = t;"), 1);
        let deep = format!(
            "{}x[0] = 1;",
            "for (i = 0; i < n; i++) ".repeat(MAX_NESTING + 5)
        );
        assert_eq!(statements_at_least(&deep), 0);
    }

    /// The `.c` files under `dir`, at any depth.
    fn c_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                c_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "c") {
                out.push(path);
            }
        }
    }

    #[test]
    fn the_corpus_and_the_fixtures_are_counted_within_their_statements() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        c_files(&root.join("polybench"), &mut files);
        c_files(&root.join("tests/fixtures"), &mut files);
        let mut seen = 0;
        for file in files {
            let Ok(src) = crate::frontend::parse_file(&file, &Options::default()) else {
                continue;
            };
            for scop in &src.scops {
                let body = &src.text[scop.region.body.start..scop.region.body.end];
                let at_least = statements_at_least(body);
                assert!(
                    (1..=scop.statements.len()).contains(&at_least),
                    "{}: {at_least} of {}",
                    file.display(),
                    scop.statements.len()
                );
                seen += 1;
            }
        }
        assert!(seen >= 60, "{seen}");
    }
}
