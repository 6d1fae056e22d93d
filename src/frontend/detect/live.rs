//! Loop iterators whose value after a region may be read. The rewritten
//! loops run on iterators of their own and leave no final value in the
//! user's (`for (k = 0; k < N; k++)` ends with `k == N`; rewritten, `k` is
//! what it was before), so a region is taken only when the value each of
//! its iterators holds after it is dead.
//!
//! A light scan of the user's text with the one scanner (`lex.rs`),
//! conservative. From the region's end to the end of its function, the
//! iterator must be written before anything names it otherwise: by a `for`
//! header (`for (i = 0;`) or an assignment statement (`i = 0;`), the value
//! not naming it, run on every path from the region: a statement of a
//! block around the region, or of a bare block inside one, not the body
//! of a condition or a loop that starts after the region. (One that may
//! not run, `if (c) for (i = 0; ...) ...`, reads only what it wrote: the
//! scan goes on after it.) Nothing before may jump (`goto`, `break`,
//! `continue`, a `case` label, `longjmp`) or, when the iterator is not a
//! local of the function (a global, a `static`, one whose address is
//! taken), call a function or return. At the end of a loop around the
//! region, the loop's next iteration is scanned the same way: its
//! condition and step, then its body up to the region. At the function's
//! end a local's value is dead. A macro of the file that names the
//! iterator reads it where it is used; a pragma reads it unless it names
//! it only in `private(...)`.

use crate::frontend::lex::{Tok, Token};
use crate::frontend::liveness::{declaration, function_start};
use crate::frontend::scop::Scop;
use crate::frontend::scop::ast::{LocalPart, Span, Stmt, StmtKind};
use std::collections::HashSet;

/// The iterators of `scop`'s loops that their headers do not declare (nor
/// a block of the SCoP), each with the span of the last loop over it.
pub(super) fn undeclared_iterators(scop: &Scop) -> Vec<(String, Span)> {
    let mut loops = Vec::new();
    let mut declared = Vec::new();
    for s in &scop.body {
        loops_in(s, &mut loops, &mut declared);
    }
    let mut last: Vec<(String, Span)> = Vec::new();
    for (name, span) in loops {
        if declared.contains(&name) {
            continue;
        }
        match last.iter_mut().find(|(n, _)| *n == name) {
            Some(l) => l.1 = span,
            None => last.push((name, span)),
        }
    }
    last
}

fn loops_in(s: &Stmt, loops: &mut Vec<(String, Span)>, declared: &mut Vec<String>) {
    match &s.kind {
        StmtKind::For(l) => {
            if l.declared_type.is_none() {
                loops.push((l.iterator.clone(), l.span));
            }
            loops_in(&l.body, loops, declared);
        }
        StmtKind::If { then, other, .. } => {
            loops_in(then, loops, declared);
            if let Some(o) = other {
                loops_in(o, loops, declared);
            }
        }
        StmtKind::Block(v) => v.iter().for_each(|x| loops_in(x, loops, declared)),
        StmtKind::Local { parts, .. } => {
            for p in parts {
                match p {
                    LocalPart::Decl { name, .. } => declared.push(name.clone()),
                    LocalPart::Stmt(x) => loops_in(x, loops, declared),
                    LocalPart::Assign { .. } => {}
                }
            }
        }
        _ => {}
    }
}

/// A region of the user's text and the loop statements around it
/// (byte ranges, innermost last).
pub(super) struct Place<'a> {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) loops: &'a [(usize, usize)],
}

/// Whether the value `name` holds after the region is dead (see the
/// module's documentation); `toks` are the tokens of `text`.
pub(super) fn dead_after(text: &str, toks: &[Token], at: &Place<'_>, name: &str) -> bool {
    let region = toks.partition_point(|t| t.start < at.start);
    let from = toks.partition_point(|t| t.start < at.end);
    // The function's body: the outermost brace around the region.
    let Some(body) = (0..region).find(|&k| toks[k].word == "{" && toks[k].close > from) else {
        return false;
    };
    let end = toks[body].close - 1;
    let scan = Scan {
        text,
        toks,
        name,
        macros: macros_naming(text, toks, name),
        local: local_of_function(toks, body, end, name),
    };
    // The loops around the region, innermost first, as the scan leaves
    // them.
    let mut loops: Vec<(usize, usize)> = at
        .loops
        .iter()
        .rev()
        .map(|&(s, e)| {
            (
                toks.partition_point(|t| t.start < s),
                toks.partition_point(|t| t.start < e),
            )
        })
        .collect();
    loops.retain(|&(s, e)| s < region && e >= from);
    let mut pos = from;
    for &(start, stop) in &loops {
        match scan.run(pos, stop) {
            Seen::Set => return true,
            Seen::Read => return false,
            Seen::Nothing => {}
        }
        // The loop's next iteration, up to the region.
        let (repeat, body_start) = loop_parts(toks, start, stop);
        if scan.run(repeat, body_start) != Seen::Nothing
            || scan.run(body_start, region) == Seen::Read
        {
            return false;
        }
        pos = stop;
    }
    match scan.run(pos, end) {
        Seen::Set => true,
        Seen::Read => false,
        Seen::Nothing => scan.local,
    }
}

/// Where a loop statement of tokens `start..stop` repeats from (its
/// condition: after a `for` header's initializer, a `while`'s `(`) and
/// where its body starts (inside its braces).
fn loop_parts(toks: &[Token], start: usize, stop: usize) -> (usize, usize) {
    let head = &toks[start];
    if head.word == "do" || toks.get(start + 1).is_none_or(|t| t.word != "(") {
        let body = start + 1;
        let inside = if toks.get(body).is_some_and(|t| t.word == "{") {
            body + 1
        } else {
            body
        };
        return (inside.min(stop), inside.min(stop));
    }
    let close = toks[start + 1].close.max(start + 2);
    let repeat = if head.word == "for" {
        (start + 2..close)
            .find(|&k| toks[k].word == ";")
            .map_or(start + 1, |k| k + 1)
    } else {
        start + 1
    };
    let body = if toks.get(close).is_some_and(|t| t.word == "{") {
        close + 1
    } else {
        close
    };
    (repeat.min(stop), body.min(stop))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// A `for` header run on every path sets the name first.
    Set,
    /// Something may read it (or jump where it may be read).
    Read,
    /// Nothing names it.
    Nothing,
}

struct Scan<'t> {
    text: &'t str,
    toks: &'t [Token],
    name: &'t str,
    /// The file's macros whose expansion names it.
    macros: Vec<&'t str>,
    /// A local of the function: no other function can read it.
    local: bool,
}

impl Scan<'_> {
    /// The tokens `from..to`; a `for` header counts when it is run on
    /// every path from `from`.
    fn run(&self, from: usize, to: usize) -> Seen {
        let toks = self.toks;
        let to = to.min(toks.len());
        let mut k = from;
        while k < to {
            let t = &toks[k];
            if t.kind == Tok::Ident && t.word == self.name {
                match self.sets(from, k) {
                    Some(true) => return Seen::Set,
                    // A statement that may not run sets it before its own
                    // reads: what it does is no read of the value.
                    Some(false) => {
                        let header = k >= 2 && toks[k - 2].word == "for" && toks[k - 1].word == "(";
                        k = statement_end(toks, if header { k - 2 } else { k });
                        continue;
                    }
                    None => return Seen::Read,
                }
            }
            if (t.kind == Tok::Directive && !self.no_read_in(&self.text[t.start..t.end]))
                || (t.kind == Tok::Ident && self.macros.contains(&t.word.as_str()))
            {
                return Seen::Read;
            }
            if matches!(
                t.word.as_str(),
                "goto" | "break" | "continue" | "case" | "default" | "longjmp"
            ) || (t.word == "return" && !self.local)
            {
                return Seen::Read;
            }
            let call = t.kind == Tok::Ident
                && toks.get(k + 1).is_some_and(|n| n.word == "(")
                && !matches!(
                    t.word.as_str(),
                    "if" | "for" | "while" | "switch" | "return" | "sizeof" | "_Alignof"
                );
            if call && !self.local {
                return Seen::Read;
            }
            k += 1;
        }
        Seen::Nothing
    }

    /// Whether a directive does not read the name: it does not name it,
    /// or only in `private(...)` clauses (OpenMP gives each thread a copy
    /// without its value).
    fn no_read_in(&self, directive: &str) -> bool {
        let words = directive_tokens(directive);
        let mut private = false;
        let mut depth = 0usize;
        for w in &words {
            match *w {
                "(" => depth += 1,
                ")" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        private = false;
                    }
                }
                "private" if depth == 0 => private = true,
                w if w == self.name && !(private && depth == 1) => return false,
                _ => {}
            }
        }
        true
    }

    /// When the name at token `at` is written without being read, by a
    /// `for` header (`for (name = e;`) or an assignment statement (`name =
    /// e;`), `e` not naming it: whether that runs on every path from
    /// `from` (see the module's documentation). `None` for any other use.
    fn sets(&self, from: usize, at: usize) -> Option<bool> {
        let toks = self.toks;
        let assigns = toks.get(at + 1).is_some_and(|t| t.word == "=")
            && toks.get(at + 2).is_some_and(|t| t.word != "=");
        if !assigns {
            return None;
        }
        let before = (0..at).rev().find(|&p| toks[p].kind != Tok::Directive)?;
        let in_header = at >= from + 2 && toks[at - 1].word == "(" && toks[at - 2].word == "for";
        let statement = if in_header {
            at - 2
        } else if matches!(
            toks[before].word.as_str(),
            ";" | "{" | "}" | ")" | "else" | "do"
        ) {
            at
        } else {
            return None;
        };
        // The value: up to the `;` (a header's initializer, the statement).
        let mut end = at + 2;
        while end < toks.len() && toks[end].word != ";" {
            end = if toks[end].close > end {
                toks[end].close
            } else {
                end + 1
            };
        }
        if toks[at + 2..end.min(toks.len())]
            .iter()
            .any(|t| t.word == self.name || self.macros.contains(&t.word.as_str()))
        {
            return None;
        }
        let nested = (from..statement)
            .any(|k| toks[k].word == "{" && toks[k].close > statement && !statement_at(toks, k));
        Some(statement >= from && statement_at(toks, statement) && !nested)
    }
}

/// The file's macros whose expansion names `name`, through other macros
/// too.
fn macros_naming<'t>(text: &'t str, toks: &[Token], name: &str) -> Vec<&'t str> {
    let defines: Vec<(&str, Vec<&str>)> = toks
        .iter()
        .filter(|t| t.kind == Tok::Directive)
        .filter_map(|t| {
            let words = directive_tokens(&text[t.start..t.end]);
            (words.get(1) == Some(&"define") && words.len() > 2)
                .then(|| (words[2], words[3..].to_vec()))
        })
        .collect();
    let mut out: Vec<&str> = Vec::new();
    loop {
        let more: Vec<&str> = defines
            .iter()
            .filter(|(m, body)| {
                !out.contains(m) && body.iter().any(|w| *w == name || out.contains(w))
            })
            .map(|(m, _)| *m)
            .collect();
        if more.is_empty() {
            return out;
        }
        out.extend(more);
    }
}

/// One past the last token of the statement that starts at token `k`.
fn statement_end(toks: &[Token], k: usize) -> usize {
    let after_parens = |k: usize| {
        toks.get(k + 1)
            .filter(|t| t.word == "(")
            .map_or(k + 1, |t| t.close.max(k + 2))
    };
    let Some(t) = toks.get(k) else {
        return toks.len();
    };
    match t.word.as_str() {
        "{" => t.close.max(k + 1),
        "for" | "while" | "switch" => statement_end(toks, after_parens(k)),
        "if" => {
            let end = statement_end(toks, after_parens(k));
            if toks.get(end).is_some_and(|t| t.word == "else") {
                statement_end(toks, end + 1)
            } else {
                end
            }
        }
        "do" => {
            let body = statement_end(toks, k + 1);
            // `while (...) ;`
            statement_end(toks, body)
        }
        _ => {
            let mut j = k;
            while j < toks.len() && toks[j].word != ";" {
                j = if toks[j].close > j {
                    toks[j].close
                } else {
                    j + 1
                };
            }
            (j + 1).min(toks.len())
        }
    }
}

/// The words and brackets of a directive (`#pragma omp for private(c)`
/// gives `#`, `pragma`, `omp`, `for`, `private`, `(`, `c`, `)`).
fn directive_tokens(d: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in d.char_indices() {
        let word = c.is_ascii_alphanumeric() || c == '_';
        match (word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(&d[s..i]);
                start = None;
            }
            _ => {}
        }
        if !word && !c.is_whitespace() {
            out.push(&d[i..i + c.len_utf8()]);
        }
    }
    if let Some(s) = start {
        out.push(&d[s..]);
    }
    out
}

/// Whether a statement starts at token `k`: after `;`, `{` or `}` (and
/// any directive lines), so not the body of a condition or a loop.
fn statement_at(toks: &[Token], k: usize) -> bool {
    (0..k)
        .rev()
        .find(|&p| toks[p].kind != Tok::Directive)
        .is_some_and(|p| matches!(toks[p].word.as_str(), ";" | "{" | "}"))
}

/// Whether `name` is a local of the function whose body is the tokens
/// `body..=end` (a parameter, or declared in it without `static`), its
/// address never taken: nothing but the function can reach it.
fn local_of_function(toks: &[Token], body: usize, end: usize, name: &str) -> bool {
    let function = function_start(toks, body);
    let uses: Vec<usize> = (function..end)
        .filter(|&k| toks[k].kind == Tok::Ident && toks[k].word == name)
        .collect();
    // `&name`, not `a && name` or `a & name`.
    let address = uses.iter().any(|&k| {
        k > 0
            && toks[k - 1].word == "&"
            && k.checked_sub(2).is_none_or(|p| {
                !(matches!(toks[p].kind, Tok::Ident | Tok::Number)
                    || matches!(toks[p].word.as_str(), ")" | "]" | "&"))
            })
    });
    !address
        && uses
            .first()
            .is_some_and(|&first| first < body || declaration(toks, &HashSet::new(), body, first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::lex::tokens;

    /// Whether `i`'s value after the marked statement (between `/*R*/`
    /// and `/*E*/`) is dead; `loops` are the loops around it, each from a
    /// `/*L*/` to the next `/*M*/`.
    fn dead(text: &str) -> bool {
        let at = |m: &str| text.find(m).unwrap();
        let mut loops = Vec::new();
        let mut from = 0;
        while let Some(s) = text[from..].find("/*L*/") {
            let s = from + s + 5;
            let e = s + text[s..].find("/*M*/").unwrap();
            loops.push((s, e));
            from = s;
        }
        loops.sort_by_key(|&(s, _)| s);
        let place = Place {
            start: at("/*R*/") + 5,
            end: at("/*E*/"),
            loops: &loops,
        };
        dead_after(text, &tokens(text), &place, "i")
    }

    const NEST: &str = "/*R*/for (i = 0; i < n; i++) x[i] = 0;/*E*/";

    #[test]
    fn a_local_set_again_or_never_named_again_is_dead() {
        let f =
            |rest: &str| format!("int g;\nvoid f(int n, double *x) {{ int i;\n{NEST}\n{rest}}}\n");
        assert!(dead(&f("")));
        assert!(dead(&f("g = 1; h(); for (i = 1; i < n; i++) x[i] = 1;")));
        assert!(dead(&f("{ for (i = 1; i < n; i++) x[i] = 1; }")));
        assert!(dead(&f(
            "if (n > 2) return; for (i = 1; i < n; i++) x[i] = 1;"
        )));
        assert!(!dead(&f("g = i;")));
        assert!(!dead(&f("for (i = i; i < n; i++) x[i] = 1;")));
        assert!(!dead(&f("if (n) for (i = 0; i < n; i++) x[i] = 1; g = i;")));
        assert!(!dead(&f(
            "if (n) { for (i = 0; i < n; i++) x[i] = 1; } g = i;"
        )));
        assert!(!dead(&f(
            "goto out; for (i = 0; i < n; i++) x[i] = 1; out: g = i;"
        )));
        // A loop that may not run sets it before its own reads.
        assert!(dead(&f("if (n > 1) for (i = 1; i < n; i++) x[i] = i;")));
        assert!(dead(&f(
            "if (n > 1) { for (i = 1; i < n; i++) x[i] = i; } else g = 2;"
        )));
        assert!(dead(&f("h(); i = 0; g = i;")));
        assert!(dead(&f("if (n) i = 2; i = 0; g = i;")));
        assert!(!dead(&f("if (n) i = 2; g = i;")));
        assert!(!dead(&f("i = i + 1;")));
    }

    #[test]
    fn a_global_a_static_or_an_address_may_be_read_elsewhere() {
        let global = format!("int i;\nvoid f(int n, double *x) {{\n{NEST}\n}}\n");
        assert!(!dead(&global));
        let called = format!(
            "int i;\nvoid f(int n, double *x) {{\n{NEST}\nh(); for (i = 0; i < n; i++) x[i] = 1;\n}}\n"
        );
        assert!(!dead(&called));
        let set = format!(
            "int i;\nvoid f(int n, double *x) {{\n{NEST}\nfor (i = 0; i < n; i++) x[i] = 1;\n}}\n"
        );
        assert!(dead(&set));
        let fixed = format!("void f(int n, double *x) {{ static int i;\n{NEST}\n}}\n");
        assert!(!dead(&fixed));
        let address = format!("void f(int n, double *x) {{ int i; h(&i);\n{NEST}\n}}\n");
        assert!(!dead(&address));
        let and =
            format!("void f(int n, double *x) {{ int i; n = n && i; n = n & i;\n{NEST}\n}}\n");
        assert!(dead(&and));
        let in_macro = format!(
            "#define I i\n#define J (I + 1)\nvoid f(int n, double *x) {{ int i;\n{NEST}\nx[0] = J;\n}}\n"
        );
        assert!(!dead(&in_macro));
        let unused = format!("#define I i\nvoid f(int n, double *x) {{ int i;\n{NEST}\n}}\n");
        assert!(dead(&unused));
    }

    #[test]
    fn around_a_loop_the_next_iteration_is_scanned_too() {
        let body = |header: &str, before: &str, after: &str| {
            format!(
                "void f(int n, double *x) {{ int t, i;\n/*L*/{header} {{ {before}{NEST} {after}}}/*M*/\n}}\n"
            )
        };
        assert!(dead(&body("for (t = 0; t < n; t++)", "", "h();")));
        assert!(dead(&body("while (n > 0)", "n--; ", "")));
        assert!(dead(&body(
            "for (t = 0; t < n; t++)",
            "",
            "for (i = 0; i < n; i++) x[i] = 1;"
        )));
        assert!(dead(&body(
            "for (t = 0; t < n; t++)",
            "for (i = 0; i < n; i++) x[i] = 1; h(); ",
            ""
        )));
        assert!(!dead(&body("for (t = 0; t < i; t++)", "", "")));
        assert!(!dead(&body("for (t = 0; t < n; t++)", "x[0] = i; ", "")));
        assert!(!dead(&body(
            "for (t = 0; t < n; t++)",
            "",
            "if (x[0] > 1) break;"
        )));
        // The next iteration sets it in a loop that may not run, under a
        // pragma that gives each thread its own copy.
        let omp = "\n#pragma omp parallel for private(i)\n for (t = 0; t < n; t++) for (i = 0; i < n; i++) x[i] = 1;\n";
        assert!(dead(&body("for (t = 0; t < n; t++)", omp, "")));
        let first = omp.replace("private(i)", "firstprivate(i)");
        assert!(!dead(&body("for (t = 0; t < n; t++)", &first, "")));
        // A loop without braces around the region.
        let braceless = "void f(int n, double *x) { int t, i;\n/*L*/for (t = 0; t < i; t++) if (n) { /*R*/for (i = 0; i < n; i++) x[i] = 0;/*E*/ }/*M*/\n}\n";
        assert!(!dead(braceless));
    }
}
