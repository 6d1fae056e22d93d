//! Function-like macros of the file that are pure: a call to one in a
//! SCoP (`max_score(a, b)`) is read like a call to a pure function, as
//! `--pure NAME` would make it, without the flag.
//!
//! A macro is pure when every definition of it in the file (one per `#if`
//! branch, say) expands to an expression of its arguments only: no
//! assignment, no `++`/`--`, no call but to pure functions and to pure
//! macros, no name other than its parameters (a global variable read by
//! the expansion would be a read the model does not see), no memory read
//! (`[`, `.`, `->`, unary `*`), no statement (`;`, `{`).

use crate::frontend::lex::{self, Tok};
use std::collections::{HashMap, HashSet};

/// Words a pure expansion may hold besides its parameters: type names of
/// casts and `sizeof`.
const ALLOWED_WORDS: &[&str] = &[
    "sizeof", "int", "long", "short", "char", "unsigned", "signed", "float", "double", "const",
];

/// The function-like macros of `text` whose every definition is pure,
/// given the functions known to be pure.
pub(crate) fn pure_macros(text: &str, pure: &HashSet<String>) -> Vec<String> {
    // Name -> the body tokens of each definition (None: not an
    // expression of its parameters).
    let mut defs: HashMap<String, Vec<Option<Vec<String>>>> = HashMap::new();
    // Most files define no macro: no need to tokenize them (a 20 MB file
    // took 2.5 GB and seconds to tokenize).
    if !text.contains("define") {
        return Vec::new();
    }
    for t in lex::tokens(text) {
        if t.kind != Tok::Directive {
            continue;
        }
        if let Some((name, body)) = definition(&text[t.start..t.end]) {
            defs.entry(name).or_default().push(body);
        }
    }
    // Callees: a macro is pure once all it calls is.
    let mut found: HashSet<String> = HashSet::new();
    loop {
        let before = found.len();
        for (name, bodies) in &defs {
            if found.contains(name) {
                continue;
            }
            let ok = bodies.iter().all(|b| {
                b.as_ref().is_some_and(|callees| {
                    callees
                        .iter()
                        .all(|c| pure.contains(c) || found.contains(c))
                })
            });
            if ok {
                found.insert(name.clone());
            }
        }
        if found.len() == before {
            break;
        }
    }
    let mut out: Vec<String> = found.into_iter().collect();
    out.sort();
    out
}

/// The object-like macros of `text` whose every definition is an
/// expression that writes nothing and reads no memory: names, constants,
/// operators and calls of pure functions (`#define N (n + 1)`). Where
/// such a macro is used, the front end reads its name as a parameter;
/// that is right as long as the region writes none of the variables it
/// names, which detection checks (a hidden variable the nest writes).
#[cfg(any(feature = "detect", test))]
pub(crate) fn plain_object_macros(text: &str, pure: &HashSet<String>) -> HashSet<String> {
    let mut defs: HashMap<String, Vec<Option<Vec<String>>>> = HashMap::new();
    if !text.contains("define") {
        return HashSet::new();
    }
    for t in lex::tokens(text) {
        if t.kind != Tok::Directive {
            continue;
        }
        let directive = &text[t.start..t.end];
        let Some(rest) = directive
            .trim_start()
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|c| c.strip_prefix("define"))
            .filter(|r| r.starts_with([' ', '\t']))
            .map(str::trim_start)
        else {
            continue;
        };
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, body) = rest.split_at(name_len);
        if name.is_empty() || body.starts_with('(') {
            continue;
        }
        defs.entry(name.to_string())
            .or_default()
            .push(expression_body(body, &[], true));
    }
    defs.into_iter()
        .filter(|(_, bodies)| {
            bodies.iter().all(|b| {
                b.as_ref()
                    .is_some_and(|callees| callees.iter().all(|c| pure.contains(c)))
            })
        })
        .map(|(name, _)| name)
        .collect()
}

/// A function-like macro as the preprocessor would expand it: its
/// parameters and its body's tokens (comments and line continuations
/// gone; `true` where whitespace separated a token from the previous one).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Expansion {
    pub params: Vec<String>,
    body: Vec<(String, bool)>,
}

impl Expansion {
    /// A call `name(args)` expanded and parsed, every node at `span`;
    /// `None` when the number of arguments is not the macro's.
    pub(super) fn call(
        &self,
        name: &str,
        args: &[super::scop::ast::Expr],
        span: super::scop::ast::Span,
    ) -> Result<Option<super::scop::ast::Expr>, super::error::SpanError> {
        let texts: Vec<String> = args.iter().map(super::scop::print::expr_to_c).collect();
        let Some(text) = self.apply(&texts) else {
            return Ok(None);
        };
        super::parse::parse_expr(&text, span)
            .map(Some)
            .map_err(|err| {
                super::error::SpanError::new(
                    span,
                    format!(
                        "the expansion of macro `{name}`, `{}`, is not an expression polytune reads: {}",
                        text.trim(),
                        err.message
                    ),
                )
            })
    }

    /// Whether the whole body is in one pair of parentheses, so that an
    /// expansion is one operand wherever the call stands (`2 * IDX(i, j)`
    /// with `#define IDX(i, j) i*N+j` is `2 * i*N+j`, not twice the index).
    pub(crate) fn parenthesized(&self) -> bool {
        let (Some(first), Some(last)) = (self.body.first(), self.body.last()) else {
            return false;
        };
        if first.0 != "(" || last.0 != ")" {
            return false;
        }
        let mut depth = 0i32;
        for (k, (t, _)) in self.body.iter().enumerate() {
            match t.as_str() {
                "(" => depth += 1,
                ")" => depth -= 1,
                _ => {}
            }
            if depth == 0 && k + 1 < self.body.len() {
                return false;
            }
        }
        depth == 0
    }

    /// The C text of a call with arguments `args` (their own text): each
    /// parameter replaced by its argument as it is, unparenthesized, as
    /// the preprocessor pastes it (`#define IDX(r, c, n) r*n+c` with `i +
    /// 1` is `i + 1*n+c`), set apart by spaces so no tokens glue.
    pub(crate) fn apply(&self, args: &[String]) -> Option<String> {
        if args.len() != self.params.len() {
            return None;
        }
        let mut out = String::new();
        for (tok, spaced) in &self.body {
            if *spaced {
                out.push(' ');
            }
            match self.params.iter().position(|p| p == tok) {
                Some(k) => {
                    out.push(' ');
                    out.push_str(&args[k]);
                    out.push(' ');
                }
                None => out.push_str(tok),
            }
        }
        Some(out)
    }
}

/// The expansions of the function-like macros `names` of `text` (pure
/// ones: see [`pure_macros`]) that have one definition, or several that
/// are the same (a macro defined differently in `#if` branches has none:
/// which one holds is the preprocessor's to say). Bodies that stringify or
/// paste (`#`, `##`) have none either.
pub(crate) fn expansions(text: &str, names: &[String]) -> HashMap<String, Expansion> {
    if names.is_empty() {
        return HashMap::new();
    }
    single_definitions(text, &|name, x| {
        if names.iter().any(|n| n == name) {
            Some(x)
        } else {
            None
        }
    })
}

/// Which macros [`single_definitions`] keeps, and with which expansion.
type Keep<'a> = dyn Fn(&str, Option<Expansion>) -> Option<Option<Expansion>> + 'a;

/// The function-like macros of `text` that `keep` keeps (`Some`, with
/// the expansion it gives, `None` within it for none), each with its one
/// definition, or several that are the same.
fn single_definitions(text: &str, keep: &Keep<'_>) -> HashMap<String, Expansion> {
    let mut found: HashMap<String, Option<Expansion>> = HashMap::new();
    if !text.contains("define") {
        return HashMap::new();
    }
    for t in lex::tokens(text) {
        if t.kind != Tok::Directive {
            continue;
        }
        let Some((name, x)) = expansion(&text[t.start..t.end]) else {
            continue;
        };
        let Some(x) = keep(&name, x) else {
            continue;
        };
        match found.get(&name) {
            None => {
                found.insert(name, x);
            }
            Some(prev) if *prev != x => {
                found.insert(name, None);
            }
            Some(_) => {}
        }
    }
    found
        .into_iter()
        .filter_map(|(n, x)| x.map(|x| (n, x)))
        .collect()
}

/// The function-like macros of `text` that name one array element, as C
/// translations of Fortran libraries write their matrices (`#define A(i,
/// j) a[(i) + (j) * lda]`): a body that is a name followed by subscripts
/// (in one pair of parentheses or not), with one definition (or several
/// alike) and neither `#` nor `##`. In a SCoP such a call is read, and
/// written, as the element its expansion names.
pub(crate) fn access_macros(text: &str) -> HashMap<String, Expansion> {
    single_definitions(text, &|_, x| Some(x.filter(Expansion::is_element)))
}

impl Expansion {
    /// Whether the body is `name[...]...`, maybe in one pair of
    /// parentheses.
    fn is_element(&self) -> bool {
        let toks: Vec<&str> = self.body.iter().map(|(t, _)| t.as_str()).collect();
        let toks = if self.parenthesized() {
            &toks[1..toks.len() - 1]
        } else {
            &toks[..]
        };
        let Some((first, rest)) = toks.split_first() else {
            return false;
        };
        let ident = first
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if !ident || rest.first() != Some(&"[") {
            return false;
        }
        // Subscript groups to the end.
        let mut depth = 0i32;
        for t in rest {
            if depth == 0 && *t != "[" {
                return false;
            }
            match *t {
                "[" | "(" => depth += 1,
                "]" | ")" => depth -= 1,
                _ => {}
            }
            if depth < 0 {
                return false;
            }
        }
        depth == 0
    }
}

/// A `#define NAME(params) body` directive's name and expansion (none for
/// a body with `#` or `##`).
fn expansion(directive: &str) -> Option<(String, Option<Expansion>)> {
    let code = directive.trim_start().strip_prefix('#')?.trim_start();
    let rest = code.strip_prefix("define")?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = rest.trim_start();
    let name_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(name_len);
    let after = after.strip_prefix('(')?;
    let close = after.find(')')?;
    let params: Vec<String> = after[..close]
        .split(',')
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    let body = &after[close + 1..];
    let toks = lex::tokens(body);
    let mut out = Vec::new();
    let mut end = None;
    for t in &toks {
        if t.kind == Tok::Punct(b'#') || t.kind == Tok::Directive {
            return Some((name.to_string(), None));
        }
        let spaced = end.is_some_and(|e| e < t.start);
        out.push((body[t.start..t.end].to_string(), spaced));
        end = Some(t.end);
    }
    Some((name.to_string(), Some(Expansion { params, body: out })))
}

/// A function-like macro's name and, when its body is an expression of
/// its parameters, the names it calls.
fn definition(directive: &str) -> Option<(String, Option<Vec<String>>)> {
    let code = directive.trim_start().strip_prefix('#')?.trim_start();
    let rest = code.strip_prefix("define")?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = rest.trim_start();
    let name_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(name_len);
    // Function-like: `(` right after the name.
    let after = after.strip_prefix('(')?;
    let close = after.find(')')?;
    let params: Vec<&str> = after[..close]
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    Some((
        name.to_string(),
        expression_body(&after[close + 1..], &params, false),
    ))
}

/// The names a macro body calls, when it is an expression of `params`
/// (of any names, with `any_name`) that writes nothing and reads no
/// memory.
fn expression_body(body: &str, params: &[&str], any_name: bool) -> Option<Vec<String>> {
    let toks = lex::tokens(body);
    let word = |k: usize| &body[toks[k].start..toks[k].end];
    let mut callees = Vec::new();
    for k in 0..toks.len() {
        let t = &toks[k];
        let next = toks.get(k + 1).map(|n| (n.kind, n.start));
        match t.kind {
            Tok::Ident => {
                let w = word(k);
                if ALLOWED_WORDS.contains(&w) {
                    continue;
                }
                if next.is_some_and(|(kind, _)| kind == Tok::Punct(b'(')) && !params.contains(&w) {
                    callees.push(w.to_string());
                } else if !params.contains(&w) && !any_name {
                    return None;
                }
            }
            Tok::Number => {}
            Tok::Literal | Tok::Directive => return None,
            Tok::Punct(c) => {
                // Two-character operators are two tokens: `+` `+`, `-` `=`.
                let glued = next.filter(|(_, s)| *s == t.end).map(|(kind, _)| kind);
                let prev = k.checked_sub(1).map(|j| &toks[j]);
                let prev_glued = prev.filter(|p| p.end == t.start).map(|p| p.kind);
                match c {
                    b';' | b'{' | b'}' | b'[' | b']' | b'.' | b'#' => return None,
                    b'+' | b'-' if glued == Some(Tok::Punct(c)) => return None,
                    b'-' if glued == Some(Tok::Punct(b'>')) => return None,
                    b'=' => {
                        // `==`, `<=`, `>=`, `!=` are comparisons.
                        let comparison =
                            matches!(prev_glued, Some(Tok::Punct(b'=' | b'<' | b'>' | b'!')))
                                || glued == Some(Tok::Punct(b'='));
                        let shift = matches!(prev_glued, Some(Tok::Punct(b'<' | b'>')))
                            && k >= 2
                            && toks[k - 2].end == toks[k - 1].start
                            && toks[k - 2].kind == toks[k - 1].kind;
                        if !comparison || shift {
                            return None;
                        }
                    }
                    b'*' | b'&' => {
                        // Unary (a dereference, an address) unless after
                        // an operand.
                        let binary = prev.is_some_and(|p| {
                            matches!(p.kind, Tok::Ident | Tok::Number | Tok::Punct(b')'))
                        });
                        let logical = c == b'&'
                            && (glued == Some(Tok::Punct(b'&'))
                                || prev_glued == Some(Tok::Punct(b'&')));
                        if !binary && !logical {
                            return None;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    Some(callees)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pure_of(text: &str) -> Vec<String> {
        let known: HashSet<String> = ["sqrt".to_string()].into_iter().collect();
        pure_macros(text, &known)
    }

    #[test]
    fn expansions_paste_arguments_as_the_preprocessor_does() {
        let text = "#define IDX(r, c, n) ((r) * (n) /* row */ + (c))\n#define AT(r,c,n) r*n+c\n\
                    #define STR(x) #x\n#define TWO(a) \\\n  ((a)+(a))\n#if A\n#define K(x) (x)\n#else\n#define K(x) (2*(x))\n#endif\n\
                    #define SAME(x) (x)\n#define SAME(x) (x)\n";
        let names: Vec<String> = ["IDX", "AT", "STR", "TWO", "K", "SAME"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let x = expansions(text, &names);
        let mut found: Vec<&str> = x.keys().map(String::as_str).collect();
        found.sort();
        assert_eq!(found, ["AT", "IDX", "SAME", "TWO"]);
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            x["IDX"].apply(&args(&["i + 1", "j", "n"])).unwrap(),
            "(( i + 1 ) * ( n ) + ( j ))"
        );
        assert!(x["IDX"].parenthesized());
        assert_eq!(
            x["AT"].apply(&args(&["i + 1", "j", "n"])).unwrap(),
            " i + 1 * n + j "
        );
        assert!(!x["AT"].parenthesized());
        assert!(x["TWO"].parenthesized());
        assert!(x["AT"].apply(&args(&["i"])).is_none());
        let acc = access_macros(
            "#define A(i, j) a[(i) + (j) * lda]\n#define B(i, j) (b[i][j])\n#define S(i) a[i] + 1\n#define T(i) f(a[i])\n#define U(i) a[i] b\n",
        );
        let mut names: Vec<&str> = acc.keys().map(String::as_str).collect();
        names.sort();
        assert_eq!(names, ["A", "B"]);
        assert_eq!(
            acc["A"].apply(&args(&["i + 1", "k"])).unwrap(),
            "a[( i + 1 ) + ( k ) * lda]"
        );
        // `(a) + (b)` is not one pair of parentheses around the body.
        let y = expansions("#define P(a, b) (a) + (b)\n", &["P".to_string()]);
        assert!(!y["P"].parenthesized());
    }

    #[test]
    fn object_like_macros_that_write_nothing_and_read_no_memory() {
        let text = "#define N (n + 1)\n#define LAST (N - 1)\n#define ROOT sqrt(x)\n\
                    #define BUMP (k = k + 1)\n#define FIRST B[0]\n#define P (*p)\n\
                    #define CALL f(x)\n#define F(x) (x)\n#define INC k++\n#define CMP (a == b)\n";
        let pure: HashSet<String> = ["sqrt".to_string()].into();
        let mut got: Vec<String> = plain_object_macros(text, &pure).into_iter().collect();
        got.sort();
        assert_eq!(got, ["CMP", "LAST", "N", "ROOT"]);
    }

    #[test]
    fn expressions_of_their_arguments_are_pure() {
        let text = "#define max_score(s1, s2) ((s1 >= s2) ? s1 : s2)\n\
                    #define match(b1, b2) (((b1)+(b2)) == 3 ? 1 : 0)\n\
                    #define NORM(x, y) sqrt((x) * (x) + (y) * (y))\n\
                    #define BOTH(a, b) (max_score(a, b) && !match(a, b) & (a))\n\
                    #define CAST(x) ((double)(x) / sizeof(int))\n\
                    #define N 100\n";
        assert_eq!(
            pure_of(text),
            ["BOTH", "CAST", "NORM", "match", "max_score"]
        );
    }

    #[test]
    fn side_effects_memory_and_hidden_names_are_not() {
        for (def, why) in [
            ("#define BUMP(x) (count++, x)", "increment"),
            ("#define SET(x, v) (x = v)", "assignment"),
            ("#define ADDTO(x, v) (x += v)", "compound assignment"),
            ("#define SHL(x) (x <<= 1)", "shift assignment"),
            ("#define AT(a, i) a[i]", "memory read"),
            ("#define DEREF(p) (*p)", "dereference"),
            ("#define FIELD(p) p->n", "member"),
            ("#define SCALE(x) (x * alpha)", "a global"),
            ("#define LOG(x) (printf(\"%d\", x), x)", "impure call"),
            ("#define BLOCK(x) do { x; } while (0)", "statement"),
        ] {
            assert_eq!(pure_of(def), Vec::<String>::new(), "{why}: {def}");
        }
        // Every definition must be pure; a macro that calls an impure one is not.
        let text = "#if A\n#define F(x) (x)\n#else\n#define F(x) (x = 1)\n#endif\n#define G(x) F(x)\n#define H(x) (x <= 2)\n";
        assert_eq!(pure_of(text), ["H"]);
    }
}
