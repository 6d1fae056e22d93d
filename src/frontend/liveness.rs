//! Whether a scalar's value after a SCoP is dead: what scalar
//! privatization (`priv=1`) needs to give a loop that makes the scalar's
//! last write a copy of its own (and expansion, `exp=1`, an array); the
//! measurement build does not record a dead scalar's last value. A light scan of the C text with the one
//! scanner (`lex.rs`), conservative: the value is dead only when the
//! scalar is a local variable or parameter of the function around the
//! SCoP (declared without `static`), its address is never taken, the
//! SCoP is not inside a loop of the function (a later iteration could
//! read it before writing it), the function has no `goto`, and the name
//! occurs neither after the SCoP in the function nor in a directive. A
//! declaration starts with a C type word, or with a type name the file
//! defines (`#define DATA_TYPE double`, `typedef double real;`) or
//! PolyBench's `DATA_TYPE`, defined in a kernel's header (the grammar
//! takes it for a type word too).

use super::SourceFile;
use super::lex::{Tok, Token, directive_words, tokens};
use super::scop::Scop;
use std::collections::HashSet;

/// The basic type words a local scalar's declaration starts with.
const TYPE_WORDS: [&str; 11] = [
    "double", "float", "int", "long", "short", "char", "unsigned", "signed", "_Bool", "const",
    "register",
];

/// The scalars `scop` writes whose value is dead once it has run.
pub fn dead_scalars(src: &SourceFile, scop: &Scop) -> Vec<String> {
    let names: Vec<&str> = scop
        .arrays
        .iter()
        .filter(|a| a.rank == 0 && a.written)
        .map(|a| a.name.as_str())
        .collect();
    if names.is_empty() {
        return Vec::new();
    }
    dead_after(src, scop, &names)
}

/// The scalars among `names` whose value is dead once `scop` has run.
fn dead_after(src: &SourceFile, scop: &Scop, names: &[&str]) -> Vec<String> {
    let toks = tokens(&src.text);
    let open = scop.region.open.start;
    let close = scop.region.close.end;
    // The braces around the SCoP, outermost (the function body) first.
    let around: Vec<usize> = (0..toks.len())
        .filter(|&k| {
            toks[k].word == "{"
                && toks[k].start < open
                && toks[k].close > 0
                && toks[toks[k].close - 1].start >= close
        })
        .collect();
    let Some(&body) = around.first() else {
        return Vec::new();
    };
    let end = toks[body].close - 1;
    if around.iter().any(|&b| in_loop(&toks, b)) {
        return Vec::new();
    }
    let function = function_start(&toks, body);
    let range = function..end;
    if toks[range.clone()].iter().any(|t| t.word == "goto") {
        return Vec::new();
    }
    let types = type_names(&src.text, &toks);
    names
        .iter()
        .filter(|name| {
            let uses: Vec<usize> = range
                .clone()
                .filter(|&k| toks[k].kind == Tok::Ident && toks[k].word == **name)
                .collect();
            let Some(&first) = uses.first() else {
                return false;
            };
            let after = uses.iter().any(|&k| toks[k].start >= close);
            // A macro could name it where the scan does not see it.
            // (The user's OpenMP directives on the SCoP's loops name it
            // in their clauses only: `omp.rs` reads them.)
            // A pragma outside the function cannot name its local.
            let in_macro = toks.iter().any(|t| {
                t.kind == Tok::Directive
                    && (range.contains(&toks.partition_point(|u| u.start < t.start))
                        || directive_words(&src.text[t.start..t.end])
                            .is_some_and(|w| w.first().is_some_and(|d| d != "pragma")))
                    && !scop
                        .directives
                        .iter()
                        .any(|d| d.span.start <= t.start && t.start < d.span.end)
                    && src.text[t.start..t.end]
                        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .any(|w| w == **name)
            });
            let address = uses.iter().any(|&k| k > 0 && toks[k - 1].word == "&");
            !after
                && !address
                && !in_macro
                && (first < body || declaration(&toks, &types, body, first))
        })
        .map(|n| n.to_string())
        .collect()
}

/// Whether the block opened at `brace` is a loop's body (`for (...) {`,
/// `while (...) {`, `do {`).
fn in_loop(toks: &[Token], brace: usize) -> bool {
    let Some(prev) = brace.checked_sub(1) else {
        return false;
    };
    if toks[prev].word == "do" {
        return true;
    }
    if toks[prev].word != ")" {
        return false;
    }
    // The `(` whose pair ends at `prev`, and the word before it.
    (0..prev)
        .rev()
        .find(|&k| toks[k].word == "(" && toks[k].close == prev + 1)
        .and_then(|k| k.checked_sub(1))
        .is_some_and(|k| matches!(toks[k].word.as_str(), "for" | "while"))
}

/// The first token of the parameter list of the function whose body
/// opens at `body` (the body itself when there is none).
pub(crate) fn function_start(toks: &[Token], body: usize) -> usize {
    match body.checked_sub(1) {
        Some(prev) if toks[prev].word == ")" => (0..prev)
            .rev()
            .find(|&k| toks[k].word == "(" && toks[k].close == prev + 1)
            .unwrap_or(body),
        _ => body,
    }
}

/// The names declared by the declarations of the block that opens at
/// `start`, up to `end` (their declarators only: `t` and `u` in `double
/// t = x * 2, u[4];`, not `x`; not those of blocks inside it, which are
/// out of scope at `end`).
pub(crate) fn declared_in(text: &str, start: usize, end: usize) -> Vec<String> {
    let toks = tokens(text);
    let types = type_names(text, &toks);
    let first = toks.partition_point(|t| t.start < start);
    let last = toks.partition_point(|t| t.start < end);
    let mut out = Vec::new();
    let mut level = 0usize;
    let mut k = first;
    while k < last {
        let w = toks[k].word.as_str();
        match w {
            "{" => level += 1,
            "}" => level = level.saturating_sub(1),
            _ => {}
        }
        let declares = level == 1
            && (TYPE_WORDS.contains(&w) || types.contains(w))
            && k > first
            && matches!(toks[k - 1].word.as_str(), "{" | "}" | ";");
        if !declares {
            k += 1;
            continue;
        }
        // The statement's declarators: a name after the type words, a
        // `*` or a comma at the statement's own level.
        let mut depth = 0usize;
        let mut expect = true;
        while k < last && toks[k].word != ";" {
            let t = &toks[k];
            match t.word.as_str() {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth = depth.saturating_sub(1),
                "," if depth == 0 => expect = true,
                "=" if depth == 0 => expect = false,
                "*" | "const" | "restrict" | "volatile" => {}
                w if TYPE_WORDS.contains(&w) || types.contains(w) => {}
                _ if expect && depth == 0 && t.kind == Tok::Ident => {
                    if toks.get(k + 1).is_none_or(|n| n.word != "(") {
                        out.push(t.word.clone());
                    }
                    expect = false;
                }
                _ => {}
            }
            k += 1;
        }
    }
    out
}

/// Whether the identifier at `at` is declared by the statement it is in:
/// one that starts (after `{`, `}` or `;`) with a basic type word or one
/// of the file's type names (`types`), and is neither `static` nor
/// `extern`.
pub(crate) fn declaration(toks: &[Token], types: &HashSet<String>, body: usize, at: usize) -> bool {
    let start = (body..at)
        .rev()
        .find(|&k| matches!(toks[k].word.as_str(), "{" | "}" | ";"))
        .map_or(body, |k| k + 1);
    let first = toks[start].word.as_str();
    (TYPE_WORDS.contains(&first) || types.contains(first))
        && !toks[start..at]
            .iter()
            .any(|t| t.word == "static" || t.word == "extern")
}

/// The names that stand for a plain type in `src`: PolyBench's
/// `DATA_TYPE`, the object-like macros whose expansion is type words
/// only, and the typedefs of type words (no storage class either way).
fn type_names(text: &str, toks: &[Token]) -> HashSet<String> {
    let mut types: HashSet<String> = HashSet::from(["DATA_TYPE".to_string()]);
    let plain = |w: &str, types: &HashSet<String>| TYPE_WORDS.contains(&w) || types.contains(w);
    let name = |w: &str| w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    for (k, t) in toks.iter().enumerate() {
        if t.kind == Tok::Directive {
            let words = directive_words(&text[t.start..t.end]).unwrap_or_default();
            if let [define, n, expansion @ ..] = words.as_slice()
                && define == "define"
                && name(n)
                && !expansion.is_empty()
                && expansion.iter().all(|w| plain(w, &types))
            {
                types.insert(n.clone());
            }
        } else if t.word == "typedef" {
            let Some(end) = toks[k + 1..].iter().position(|t| t.word == ";") else {
                continue;
            };
            if let [spelled @ .., n] = &toks[k + 1..k + 1 + end]
                && !spelled.is_empty()
                && n.kind == Tok::Ident
                && spelled.iter().all(|w| plain(&w.word, &types))
            {
                types.insert(n.word.clone());
            }
        }
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    fn dead(text: &str, names: &[&str]) -> Vec<String> {
        let src = parse_source(Path::new("t.c"), text.to_string(), &Options::default()).unwrap();
        dead_after(&src, &src.scops[0], names)
    }

    const BODY: &str = "#pragma scop\nfor (i = 0; i < n; i++) { t = x[i]; s = t; x[i] = t * s; }\n#pragma endscop\n";

    #[test]
    fn declared_names_are_the_declarators_only() {
        let text = "{ double t = x * 2, u[4]; int *p, k = f(a, b); typedef_t z; m = 3;\n";
        assert_eq!(declared_in(text, 0, text.len()), ["t", "u", "p", "k"]);
        let typed =
            "#define REAL double\n{ REAL s; const long n = 2; { int gone; } for (int i = 0;;) {}\n";
        let open = typed.find('{').unwrap();
        assert_eq!(declared_in(typed, open, typed.len()), ["s", "n"]);
    }

    #[test]
    fn a_local_not_named_after_the_scop_is_dead() {
        let text = format!(
            "void f(int n, double x[9], double *out) {{ int i; double t, s;\n{BODY}*out = s;\n}}\n"
        );
        assert_eq!(dead(&text, &["t", "s"]), ["t"]);
    }

    #[test]
    fn a_global_a_static_or_a_local_whose_address_is_taken_may_be_live() {
        let global = format!("double t, s;\nvoid f(int n, double x[9]) {{ int i;\n{BODY}}}\n");
        assert!(dead(&global, &["t", "s"]).is_empty());
        let fixed =
            format!("void f(int n, double x[9]) {{ int i; static double t; double s;\n{BODY}}}\n");
        assert_eq!(dead(&fixed, &["t", "s"]), ["s"]);
        let address = format!(
            "void g(double *);\nvoid f(int n, double x[9]) {{ int i; double t, s; g(&t);\n{BODY}}}\n"
        );
        assert_eq!(dead(&address, &["t", "s"]), ["s"]);
        let macro_use = format!(
            "#define RESULT s\nvoid f(int n, double x[9], double *o) {{ int i; double t, s;\n{BODY}*o = RESULT;\n}}\n"
        );
        assert_eq!(dead(&macro_use, &["t", "s"]), ["t"]);
    }

    #[test]
    fn a_local_of_a_type_the_file_names_is_dead_too() {
        for (define, ty) in [
            ("#define DATA_TYPE double\n", "DATA_TYPE"),
            ("", "DATA_TYPE"),
            ("#define REAL const double\n", "REAL"),
            ("typedef double real;\n", "real"),
        ] {
            let text = format!(
                "{define}void f(int n, double x[9], double *out) {{ int i; {ty} t; double s;\n{BODY}*out = s;\n}}\n"
            );
            assert_eq!(dead(&text, &["t", "s"]), ["t"], "{define}{ty}");
        }
        // Not a plain type: a storage class, a function-like macro, a
        // name the file does not define.
        for (define, ty) in [
            ("#define KEPT static double\n", "KEPT"),
            ("#define T(x) double\n", "T(1)"),
            ("", "real"),
        ] {
            let text = format!(
                "{define}void f(int n, double x[9], double *out) {{ int i; {ty} t; double s;\n{BODY}*out = s;\n}}\n"
            );
            assert!(dead(&text, &["t", "s"]).is_empty(), "{define}{ty}");
        }
    }

    #[test]
    fn inside_a_loop_every_value_may_be_live() {
        let text = format!(
            "void f(int n, int m, double x[9]) {{ int i, r; double t, s;\nfor (r = 0; r < m; r++) {{\n{BODY}}}\n}}\n"
        );
        assert!(dead(&text, &["t", "s"]).is_empty());
        let param = format!("void f(int n, double x[9], double t, double s) {{ int i;\n{BODY}}}\n");
        assert_eq!(dead(&param, &["t", "s"]), ["t", "s"]);
    }
}
