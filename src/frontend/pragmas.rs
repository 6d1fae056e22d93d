//! The user's own pragmas, found in the source text, and the statements
//! they apply to.
//!
//! A pragma polytune does not own (OpenMP, `GCC ivdep`, `GCC unroll`,
//! `clang loop`, anything but `scop` / `endscop`) makes a promise about
//! the statement after it: that its iterations may run in parallel, that
//! it has no loop-carried dependence, ... polytune does not re-derive
//! these promises, and a rewritten loop nest would silently carry them
//! onto loops they do not hold for. So a region is never transformed
//! when such a pragma lies inside it, in front of one of its statements,
//! or in front of a statement that encloses it (an `omp parallel` block).
//!
//! The scan works on the text, not on a compiler's view of it (libclang
//! drops OpenMP pragmas without `-fopenmp`): a `#` that starts a logical
//! line (comments and line continuations followed as the preprocessor
//! does), `_Pragma(...)` and `__pragma(...)` operators, and macros of the
//! file whose definition contains one of them. Comments, string and
//! character literals are skipped.

use super::lex::{Tok, Token, directive_words, one_line, tokens};

/// A pragma that is not polytune's, and the statement it applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pragma {
    /// Byte range of the directive (its newline excluded), the operator
    /// or the macro use.
    pub start: usize,
    pub end: usize,
    /// 1-based line and column of `start`.
    pub line: usize,
    pub column: usize,
    /// How it reads, on one line: `#pragma omp parallel for`,
    /// `_Pragma("omp simd")`, `PAR (a macro that expands to a pragma)`.
    pub text: String,
    /// Byte range of the statement that follows it inside a function
    /// body (`None` at file scope or before a closing brace).
    pub target: Option<(usize, usize)>,
    /// The furthest end of the targets of this pragma and all before it
    /// (for [`bearing`]).
    reach: usize,
}

impl Pragma {
    /// Whether the pragma bears on the text range `[start, end)`: it lies
    /// inside it, or the statement it applies to overlaps it (the pragma
    /// is in front of a statement of the range, or of a statement that
    /// encloses the range).
    pub(crate) fn applies_to(&self, start: usize, end: usize) -> bool {
        (start <= self.start && self.start < end)
            || self.target.is_some_and(|(s, e)| s < end && start < e)
    }
}

/// Every pragma of `text` that polytune does not own, in order.
pub(crate) fn foreign(text: &str) -> Vec<Pragma> {
    foreign_with(text, &[])
}

/// [`foreign`], where the uses of the macros `pragma_macros` (defined in
/// headers, say, and known to expand to a pragma) count as pragmas too.
pub(crate) fn foreign_with(text: &str, pragma_macros: &[String]) -> Vec<Pragma> {
    let toks = tokens(text);
    let mut macros: std::collections::HashSet<String> =
        self::pragma_macros(text, &toks).into_iter().collect();
    macros.extend(pragma_macros.iter().cloned());
    let lines = LineStarts::new(text);
    let mut out = Vec::new();
    // The first token at or after each index that is not a directive.
    let mut next_code = vec![toks.len(); toks.len() + 1];
    for k in (0..toks.len()).rev() {
        next_code[k] = if toks[k].kind == Tok::Directive {
            next_code[k + 1]
        } else {
            k
        };
    }
    let mut targets: std::collections::HashMap<usize, Option<(usize, usize)>> =
        std::collections::HashMap::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let (end, shown) = match t.kind {
            Tok::Punct(b'{') => {
                depth += 1;
                i += 1;
                continue;
            }
            Tok::Punct(b'}') => {
                depth = depth.saturating_sub(1);
                i += 1;
                continue;
            }
            Tok::Directive => match directive_words(&text[t.start..t.end]) {
                Some(words) if words.first().map(String::as_str) == Some("pragma") => {
                    if matches!(words.get(1).map(String::as_str), Some("scop" | "endscop")) {
                        i += 1;
                        continue;
                    }
                    (i + 1, format!("#{}", words.join(" ")))
                }
                _ => {
                    i += 1;
                    continue;
                }
            },
            Tok::Ident if is_operator_name(&text[t.start..t.end]) => {
                let after = group_end(&toks, i + 1).unwrap_or(i + 1);
                let shown = one_line(&text[t.start..toks[after - 1].end]);
                (after, shown)
            }
            Tok::Ident if macros.contains(&text[t.start..t.end]) => {
                let after = group_end(&toks, i + 1).unwrap_or(i + 1);
                (
                    after,
                    format!(
                        "{} (a macro that expands to a pragma)",
                        &text[t.start..t.end]
                    ),
                )
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let (line, column) = lines.line_col(text, t.start);
        let target = if depth > 0 {
            // Pragmas in a row share their statement: computed once.
            let first = next_code[end];
            *targets.entry(first).or_insert_with(|| {
                statement(&toks, first, 0).map(|(a, b)| (toks[a].start, toks[b - 1].end))
            })
        } else {
            None
        };
        out.push(Pragma {
            start: t.start,
            end: toks[end - 1].end,
            line,
            column,
            text: shorten(&shown),
            target,
            reach: out
                .last()
                .map_or(0, |p: &Pragma| p.reach)
                .max(target.map_or(0, |(_, e)| e)),
        });
        i = end;
    }
    out
}

/// Whether the program text uses OpenMP itself: an `omp` pragma (a
/// directive or an operator) or `omp.h` included.
pub fn uses_openmp(text: &str) -> bool {
    foreign(text).iter().any(|p| {
        p.text.starts_with("#pragma omp ") || p.text == "#pragma omp" || p.text.contains("(\"omp ")
    }) || super::lex::tokens(text).iter().any(|t| {
        t.kind == Tok::Directive
            && directive_words(&text[t.start..t.end]).is_some_and(|w| {
                w.first().is_some_and(|d| d == "include") && w.iter().any(|x| x.contains("omp.h"))
            })
    })
}

/// Every pragma of `pragmas` that bears on `[start, end)`, in order.
pub(crate) fn bearing(pragmas: &[Pragma], start: usize, end: usize) -> Vec<&Pragma> {
    let before = pragmas.partition_point(|p| p.start < end);
    let mut out: Vec<&Pragma> = pragmas[..before]
        .iter()
        .rev()
        .take_while(|p| p.reach > start || p.start >= start)
        .filter(|p| p.applies_to(start, end))
        .collect();
    out.reverse();
    out
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 70 {
        format!("{}...", s.chars().take(67).collect::<String>())
    } else {
        s.to_string()
    }
}

fn is_operator_name(s: &str) -> bool {
    s == "_Pragma" || s == "__pragma"
}

/// Names of the file's macros whose definition contains a pragma
/// operator or another such macro.
fn pragma_macros(text: &str, toks: &[Token]) -> Vec<String> {
    let defs: Vec<(String, String)> = toks
        .iter()
        .filter(|t| t.kind == Tok::Directive)
        .filter_map(|t| {
            let words = directive_words(&text[t.start..t.end])?;
            if words.first().map(String::as_str) != Some("define") {
                return None;
            }
            let rest = words.get(1..)?.join(" ");
            let name_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
                .unwrap_or(rest.len());
            let (name, body) = rest.split_at(name_len);
            (!name.is_empty()).then(|| (name.to_string(), body.to_string()))
        })
        .collect();
    let idents = |s: &str| -> Vec<String> {
        s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut found: Vec<String> = Vec::new();
    loop {
        let before = found.len();
        for (name, body) in &defs {
            if found.contains(name) {
                continue;
            }
            if idents(body)
                .iter()
                .any(|w| is_operator_name(w) || found.contains(w))
            {
                found.push(name.clone());
            }
        }
        if found.len() == before {
            return found;
        }
    }
}

/// Deeper statement nesting than this is not followed: the statement is
/// taken to run to the end of the text (conservative).
const MAX_DEPTH: usize = 1000;

/// The statement starting at token `i` (directives, pragma operators
/// and pragma macros in front of it skipped): (first token, one past
/// its last token). `None` at a closing brace or the end.
fn statement(toks: &[Token], mut i: usize, depth: usize) -> Option<(usize, usize)> {
    while i < toks.len() && toks[i].kind == Tok::Directive {
        i += 1;
    }
    let first = i;
    let t = toks.get(i)?;
    if depth > MAX_DEPTH {
        return Some((first, toks.len()));
    }
    let word = |k: usize, w: &str| toks.get(k).is_some_and(|t| t.word == w);
    let end = match t.kind {
        Tok::Punct(b'}') => return None,
        Tok::Punct(b'{') => group_end(toks, i).unwrap_or(toks.len()),
        Tok::Ident if matches!(t.word.as_str(), "for" | "while" | "switch") && word(i + 1, "(") => {
            let h = group_end(toks, i + 1).unwrap_or(toks.len());
            sub_end(toks, h, depth)
        }
        Tok::Ident if t.word == "if" && word(i + 1, "(") => {
            let h = group_end(toks, i + 1).unwrap_or(toks.len());
            let then = sub_end(toks, h, depth);
            let mut k = then;
            while k < toks.len() && toks[k].kind == Tok::Directive {
                k += 1;
            }
            if word(k, "else") {
                sub_end(toks, k + 1, depth)
            } else {
                then
            }
        }
        Tok::Ident if t.word == "do" => {
            let body = sub_end(toks, i + 1, depth);
            plain_end(toks, body)
        }
        Tok::Ident if (is_operator_name(&t.word) || t.word == "else") && !word(i + 1, "(") => {
            plain_end(toks, i)
        }
        Tok::Ident if is_operator_name(&t.word) => {
            let after = group_end(toks, i + 1).unwrap_or(toks.len());
            return statement(toks, after, depth + 1)
                .map(|(_, e)| (first, e))
                .or(Some((first, after)));
        }
        Tok::Ident if word(i + 1, ":") && !word(i + 2, ":") => sub_end(toks, i + 2, depth),
        _ => plain_end(toks, i),
    };
    Some((first, end.max(first + 1).min(toks.len())))
}

/// End of a sub-statement starting at `i` (the end if there is none).
fn sub_end(toks: &[Token], i: usize, depth: usize) -> usize {
    match statement(toks, i, depth + 1) {
        Some((_, e)) => e,
        None => i,
    }
}

/// End of a statement without a keyword: up to its `;` outside
/// brackets, or up to (not including) the closing brace of its block.
fn plain_end(toks: &[Token], mut i: usize) -> usize {
    while i < toks.len() {
        match toks[i].kind {
            Tok::Punct(b'(' | b'[' | b'{') => {
                let Some(after) = group_end(toks, i) else {
                    return toks.len();
                };
                // A braced group ends the statement when a new statement
                // follows (a block-like macro use `M(i) { ... }`);
                // `(T){...};` or `= {...},` go on.
                if toks[i].kind == Tok::Punct(b'{')
                    && toks.get(after).is_some_and(|t| {
                        matches!(t.kind, Tok::Ident | Tok::Directive | Tok::Punct(b'{'))
                    })
                {
                    return after;
                }
                i = after;
                continue;
            }
            Tok::Punct(b')' | b']' | b'}') => return i,
            Tok::Punct(b';') => return i + 1,
            _ => {}
        }
        i += 1;
    }
    toks.len()
}

/// One past the token that closes the bracket at `i` (`None` if `i` is
/// not an opening bracket or it is never closed).
fn group_end(toks: &[Token], i: usize) -> Option<usize> {
    let t = toks.get(i)?;
    (t.close > 0).then_some(t.close)
}

/// Line starts, for line and column numbers.
struct LineStarts(Vec<usize>);

impl LineStarts {
    fn new(text: &str) -> LineStarts {
        let mut v = vec![0];
        v.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineStarts(v)
    }

    fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let line = self.0.partition_point(|&s| s <= offset);
        let start = self.0[line - 1];
        (line, text[start..offset].chars().count() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<String> {
        foreign(src).into_iter().map(|p| p.text).collect()
    }

    #[test]
    fn finds_directives_at_logical_line_starts_only() {
        let src = "/* #pragma omp a */\n// #pragma omp b\nchar *s = \"\\n#pragma omp c\";\n\
                   int x = 1; #pragma not_a_directive\n\
                   #define Y 1 \\\n#pragma omp d\n\
                   /* c */ # pragma  GCC ivdep // trailing\n\
                   #pragma omp parallel \\\n  for /* multi\nline */ private(j)\n\
                   // line comment \\\n#pragma omp e\n\
                   #pragma scop\n#pragma endscop\n";
        assert_eq!(
            texts(src),
            ["#pragma GCC ivdep", "#pragma omp parallel for private(j)",]
        );
        let p = &foreign(src)[1];
        assert_eq!((p.line, p.column), (8, 1));
    }

    #[test]
    fn pragma_operators_and_pragma_macros() {
        let src = "#define PAR _Pragma(\"omp parallel for\")\n#define PAR2(x) PAR x\n\
                   void f(void) {\n  _Pragma(\"GCC ivdep\") for (;;) ;\n  PAR2(1) for (;;) ;\n  PAR\n  x = 1;\n}\n";
        let ps = foreign(src);
        let t: Vec<&str> = ps.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(
            t,
            [
                "_Pragma(\"GCC ivdep\")",
                "PAR2 (a macro that expands to a pragma)",
                "PAR (a macro that expands to a pragma)",
            ]
        );
        assert_eq!(
            &src[ps[0].target.unwrap().0..ps[0].target.unwrap().1],
            "for (;;) ;"
        );
        assert_eq!(
            &src[ps[2].target.unwrap().0..ps[2].target.unwrap().1],
            "x = 1;"
        );
    }

    fn target(src: &str) -> &str {
        let p = &foreign(src)[0];
        let (s, e) = p.target.expect("a target");
        &src[s..e]
    }

    #[test]
    fn the_statement_a_pragma_applies_to() {
        assert_eq!(
            target(
                "void f() {\n#pragma omp parallel for\n  for (i = 0; i < n; i++)\n    for (j = 0; j < n; j++)\n      a[i][j] = 0;\n  b = 1;\n}\n"
            ),
            "for (i = 0; i < n; i++)\n    for (j = 0; j < n; j++)\n      a[i][j] = 0;"
        );
        assert_eq!(
            target(
                "void f() {\n#pragma omp parallel\n#pragma scop\n  { x = 1; { y = 2; } }\n  z = 3;\n}"
            ),
            "{ x = 1; { y = 2; } }"
        );
        assert_eq!(
            target(
                "void f() {\n#pragma omp single\n  if (a) b = 1; else if (c) { d = 2; } else e = (int){3};\n  z = 3;\n}"
            ),
            "if (a) b = 1; else if (c) { d = 2; } else e = (int){3};"
        );
        assert_eq!(
            target("void f() {\n#pragma GCC unroll 4\n  do x++; while (x < 3);\n  z = 3;\n}"),
            "do x++; while (x < 3);"
        );
        assert_eq!(
            target("void f() {\n#pragma omp critical\n  FOR_EACH(i) { a[i] = 0; }\n  z = 3;\n}"),
            "FOR_EACH(i) { a[i] = 0; }"
        );
        assert_eq!(
            target("void f() {\n#pragma omp barrier\n  x = 1 /* ; */ + \";\";\n}"),
            "x = 1 /* ; */ + \";\";"
        );
        // Before a closing brace and at file scope: no statement.
        assert_eq!(
            foreign("void f() {\n#pragma omp barrier\n}\n")[0].target,
            None
        );
        assert_eq!(foreign("#pragma once\nint x;\n")[0].target, None);
    }

    #[test]
    fn applies_inside_in_front_and_around() {
        let src = "void f() {\n  a = 0;\n#pragma omp parallel\n  {\n    for (i = 0; i < n; i++) x[i] = 0;\n  }\n  for (i = 0; i < n; i++) y[i] = 0;\n}\n";
        let ps = foreign(src);
        let range = |s: &str| {
            let a = src.find(s).unwrap();
            (a, a + s.len())
        };
        let inner = range("for (i = 0; i < n; i++) x[i] = 0;");
        let after = range("for (i = 0; i < n; i++) y[i] = 0;");
        let before = range("a = 0;");
        let block = range("{\n    for (i = 0; i < n; i++) x[i] = 0;\n  }");
        assert!(!bearing(&ps, inner.0, inner.1).is_empty());
        assert!(!bearing(&ps, block.0, block.1).is_empty());
        assert!(!bearing(&ps, before.0, after.1).is_empty(), "inside");
        assert!(bearing(&ps, after.0, after.1).is_empty());
        assert!(bearing(&ps, before.0, before.1).is_empty());
    }

    #[test]
    fn deep_nesting_and_many_pragmas_stay_cheap() {
        let n = 100_000;
        let src = format!(
            "void f() {{\n#pragma omp parallel for\n{}x = 1;\n}}\n",
            "for (;;) ".repeat(n)
        );
        let p = &foreign(&src)[0];
        let (s, e) = p.target.unwrap();
        // Deeper than followed: taken to run to the end (conservative).
        assert_eq!(s, src.find("for (;;)").unwrap());
        assert!(e >= src.find("x = 1;").unwrap() + 6);
        let src = format!(
            "void f() {{\n{}  x = 1{};\n}}\n",
            "#pragma GCC ivdep\n".repeat(n),
            " + 1".repeat(n)
        );
        let started = std::time::Instant::now();
        let ps = foreign(&src);
        assert_eq!(ps.len(), n);
        assert!(ps.iter().all(|p| p.target == ps[0].target));
        // A guard against quadratic work (10^10 steps here), not a
        // performance figure: generous, since debug builds on a loaded
        // 2-core machine took more than 10 s.
        assert!(started.elapsed().as_secs() < 60);
    }

    #[test]
    fn a_program_uses_openmp_by_a_pragma_an_operator_or_its_header() {
        assert!(uses_openmp("void f() {\n#pragma omp parallel\n{}\n}\n"));
        assert!(uses_openmp(
            "void f() { _Pragma(\"omp simd\") for (;;) {} }\n"
        ));
        assert!(uses_openmp(
            "#include <omp.h>\nint main() { return omp_get_max_threads(); }\n"
        ));
        assert!(!uses_openmp(
            "#pragma GCC ivdep\n/* #pragma omp parallel */\nint x;\n"
        ));
    }
}
