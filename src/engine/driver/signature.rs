//! The header of the function around a SCoP, read from the file's text:
//! its name, return type and parameters, each classified as an integer
//! scalar, a floating scalar, an array (element type and extents) or
//! something a driver cannot make. Also the file's `#define NAME number`
//! lines and simple type aliases (`#define DATA_TYPE double`, `typedef
//! double real;`). A light scan on the front end's tokens
//! (`frontend/lex.rs`): it recognizes the declarations a
//! numerical kernel uses and classifies everything else as
//! [`Kind::Other`], never as something it is not.
//!
//! Why one file: a little over 600 lines, one declaration scan
//! (specifiers, declarators, aliases, defines, uses), which reads best in
//! one piece.

use super::extent::{Expr, extent, integer_literal};
use crate::frontend::lex::{Tok, Token, directive_words, one_line, tokens};
use std::collections::HashMap;

/// The scalar types a driver knows how to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Scalar {
    /// An integer type, with its C spelling (`int`, `unsigned long`,
    /// `size_t`) and whether it is unsigned.
    Int { spelling: String, unsigned: bool },
    /// `float`, `double` or `long double`.
    Float(String),
}

impl Scalar {
    pub(super) fn spelling(&self) -> &str {
        match self {
            Scalar::Int { spelling, .. } | Scalar::Float(spelling) => spelling,
        }
    }
}

/// What a parameter is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    Scalar(Scalar),
    /// An array: `T x[e1][e2]` (every extent given), `T x[][e2]`,
    /// `T (*x)[e2]` or `T *x` (the first extent unknown: `None`).
    Array {
        element: Scalar,
        /// `const` / `volatile` on the element, as written.
        qualifiers: String,
        extents: Vec<Option<Expr>>,
    },
    /// Not drivable, and why (`a struct`, `a pointer to pointers`).
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Param {
    pub name: String,
    /// Byte offset of the parameter's declaration.
    pub at: usize,
    /// The declaration as written, on one line.
    pub text: String,
    pub kind: Kind,
}

/// A function definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Function {
    pub name: String,
    /// Byte offset of the name.
    pub at: usize,
    /// The return type's C spelling (`void`, `int`, `double *`), `Err`
    /// with the words when it is not one a prototype can be written for.
    pub returns: Result<String, String>,
    /// `static` or a plain `inline`: no external definition to call.
    pub internal: Option<&'static str>,
    pub params: Vec<Param>,
    /// Byte range of the body, braces included.
    pub body: (usize, usize),
}

/// The file, scanned once.
pub(super) struct FileScan<'t> {
    text: &'t str,
    toks: Vec<Token>,
    /// Names of type aliases to the words they stand for.
    aliases: HashMap<String, Vec<String>>,
}

const INT_WORDS: &[&str] = &[
    "char", "short", "int", "long", "signed", "unsigned", "_Bool",
];
const INT_TYPEDEFS: &[&str] = &[
    "size_t",
    "ptrdiff_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "intptr_t",
    "uintptr_t",
];
pub(super) const QUALIFIERS: &[&str] = &[
    "const",
    "volatile",
    "restrict",
    "__restrict",
    "__restrict__",
    "register",
];

impl<'t> FileScan<'t> {
    pub(super) fn new(text: &'t str) -> FileScan<'t> {
        let toks = tokens(text);
        let mut aliases = HashMap::new();
        for (k, t) in toks.iter().enumerate() {
            if t.kind == Tok::Directive {
                let words = directive_words(&text[t.start..t.end]).unwrap_or_default();
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                if let ["define", name, words @ ..] = words.as_slice()
                    && !words.is_empty()
                    && words.iter().all(|w| is_type_word(w))
                {
                    aliases.insert(
                        name.to_string(),
                        words.iter().map(|w| w.to_string()).collect(),
                    );
                }
            } else if t.word == "typedef" {
                // `typedef WORDS NAME ;` with type words only.
                let mut j = k + 1;
                let mut words = Vec::new();
                while let Some(u) = toks.get(j)
                    && u.kind == Tok::Ident
                {
                    words.push(u.word.clone());
                    j += 1;
                }
                if toks.get(j).is_some_and(|u| u.word == ";")
                    && let Some((name, spec)) = words.split_last()
                    && !spec.is_empty()
                    && spec
                        .iter()
                        .all(|w| is_type_word(w) || aliases.contains_key(w))
                {
                    let resolved = spec
                        .iter()
                        .flat_map(|w| aliases.get(w).cloned().unwrap_or_else(|| vec![w.clone()]))
                        .collect();
                    aliases.insert(name.clone(), resolved);
                }
            }
        }
        FileScan {
            text,
            toks,
            aliases,
        }
    }

    /// `#define NAME <integer literal>` lines: each name with its values
    /// and whether one of them is fixed: not under `#ifndef NAME` (or
    /// `#if !defined(NAME)`), so that `-DNAME=...` cannot change it.
    pub(super) fn defines(&self) -> HashMap<String, (Vec<i64>, bool)> {
        let mut out: HashMap<String, (Vec<i64>, bool)> = HashMap::new();
        // The enclosing conditions, spaces removed.
        let mut conditions: Vec<String> = Vec::new();
        for t in self.toks.iter().filter(|t| t.kind == Tok::Directive) {
            let words = directive_words(&self.text[t.start..t.end]).unwrap_or_default();
            match words.first().map(String::as_str) {
                Some("if" | "ifdef" | "ifndef") => conditions.push(words.concat()),
                Some("endif") => {
                    conditions.pop();
                }
                Some("define") if words.len() >= 3 => {
                    let value = words[2..].join("");
                    if let Some(v) =
                        integer_literal(value.trim_start_matches('(').trim_end_matches(')'))
                    {
                        let name = &words[1];
                        let guarded = conditions.iter().any(|c| guards(c, name));
                        let e = out.entry(name.clone()).or_default();
                        e.0.push(v);
                        e.1 |= !guarded;
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The function definition whose body contains byte `offset`.
    pub(super) fn function_at(&self, offset: usize) -> Option<Function> {
        let toks = &self.toks;
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            if t.word != "{" || t.close == 0 {
                i += 1;
                continue;
            }
            let end = toks[t.close - 1].end;
            if !(t.start <= offset && offset < end) {
                i = t.close;
                continue;
            }
            let close_paren = i.checked_sub(1)?;
            if toks[close_paren].word != ")" {
                return None;
            }
            let open = (0..close_paren)
                .rev()
                .find(|&j| toks[j].close == close_paren + 1)?;
            let name = toks.get(open.checked_sub(1)?)?;
            if name.kind != Tok::Ident {
                return None;
            }
            return Some(self.function(open - 1, open, close_paren, (t.start, end)));
        }
        None
    }

    fn function(&self, name: usize, open: usize, close: usize, body: (usize, usize)) -> Function {
        let toks = &self.toks;
        // The return type and specifiers: words and stars back to the
        // previous declaration or directive.
        let mut first = name;
        while first > 0 && (toks[first - 1].kind == Tok::Ident || toks[first - 1].word == "*") {
            first -= 1;
        }
        let words: Vec<&str> = toks[first..name].iter().map(|t| t.word.as_str()).collect();
        let internal = if words.contains(&"static") {
            Some("static")
        } else if words.contains(&"inline") && !words.contains(&"extern") {
            Some("inline")
        } else {
            None
        };
        let type_words: Vec<&str> = words
            .iter()
            .copied()
            .filter(|w| {
                !matches!(
                    *w,
                    "extern" | "inline" | "static" | "__inline" | "__inline__"
                )
            })
            .collect();
        let stars = type_words.iter().filter(|w| **w == "*").count();
        let base: Vec<&str> = type_words.iter().copied().filter(|w| *w != "*").collect();
        let returns = match self.scalar(&base) {
            Some(s) => Ok(format!("{}{}", s.spelling(), " *".repeat(stars))),
            None if base == ["void"] => Ok(format!("void{}", " *".repeat(stars))),
            None => Err(type_words.join(" ")),
        };
        // Parameters: comma-separated token runs inside the parentheses.
        let mut params = Vec::new();
        let mut start = open + 1;
        let mut k = open + 1;
        while k <= close {
            let t = &toks[k];
            if k == close || t.word == "," {
                if k > start {
                    params.push(self.param(&toks[start..k], start));
                }
                start = k + 1;
                k += 1;
            } else if t.close > 0 {
                k = t.close;
            } else {
                k += 1;
            }
        }
        if let [p] = params.as_slice()
            && p.text == "void"
        {
            params.clear();
        }
        Function {
            name: toks[name].word.clone(),
            at: toks[name].start,
            returns,
            internal,
            params,
            body,
        }
    }

    /// The parameter declared by `toks`, the tokens from index `base` of
    /// the file's.
    fn param(&self, toks: &[Token], base: usize) -> Param {
        // One past the closing bracket of an opening one, in `toks`.
        let close = |t: &Token| {
            let c = t.close.saturating_sub(base);
            (c > 0 && c <= toks.len()).then_some(c)
        };
        let text = one_line(&self.text[toks[0].start..toks[toks.len() - 1].end]);
        let at = toks[0].start;
        let (mut k, spec, qualifiers) = self.specifiers(toks);
        let other = |why: &str| Param {
            name: toks
                .iter()
                .rev()
                .find(|t| t.kind == Tok::Ident)
                .map(|t| t.word.clone())
                .unwrap_or_default(),
            at,
            text: text.clone(),
            kind: Kind::Other(why.to_string()),
        };
        if text == "void" {
            return Param {
                name: String::new(),
                at,
                text,
                kind: Kind::Other("void".into()),
            };
        }
        if spec
            .iter()
            .any(|w| matches!(*w, "struct" | "union" | "enum"))
        {
            return other("a struct, union or enum");
        }
        // The declarator: `*`s (with qualifiers), `(*name)`, or `name`.
        let mut stars = 0;
        let mut row_pointer = false;
        while let Some(t) = toks.get(k) {
            if t.word == "*" {
                stars += 1;
            } else if !(t.kind == Tok::Ident && QUALIFIERS.contains(&t.word.as_str())) {
                break;
            }
            k += 1;
        }
        let name_tok = match toks.get(k) {
            Some(t) if t.kind == Tok::Ident => {
                k += 1;
                t
            }
            // `(*name)[e]`: a pointer to rows.
            Some(t) if t.word == "(" && stars == 0 => {
                let Some(c) = close(t) else {
                    return other("a declarator polytune does not read");
                };
                let inner = &toks[k + 1..c - 1];
                let words: Vec<&str> = inner
                    .iter()
                    .map(|u| u.word.as_str())
                    .filter(|w| !QUALIFIERS.contains(w))
                    .collect();
                if words.len() != 2 || words[0] != "*" {
                    return other("a function pointer or a declarator polytune does not read");
                }
                row_pointer = true;
                let n = inner
                    .iter()
                    .rev()
                    .find(|u| u.kind == Tok::Ident)
                    .expect("two words");
                k = c;
                n
            }
            _ => return other("a declaration polytune does not read"),
        };
        let name = name_tok.word.clone();
        let mut extents = Vec::new();
        while let Some(t) = toks.get(k) {
            let Some(c) = close(t).filter(|_| t.word == "[") else {
                return other("a declarator polytune does not read");
            };
            extents.push(extent(self.text, &toks[k + 1..c - 1]));
            k = c;
        }
        let Some(element) = self.scalar(&spec) else {
            let why = if spec.is_empty() || spec == ["void"] {
                "of type void or of no type".to_string()
            } else {
                format!(
                    "of type `{}`, which polytune does not know (it reads int, long, unsigned, size_t, intN_t, float, double, and aliases of these the file defines)",
                    spec.join(" ")
                )
            };
            return Param {
                name,
                at,
                text,
                kind: Kind::Other(why),
            };
        };
        Param {
            name,
            at,
            text,
            kind: kind(element, &qualifiers, extents, stars, row_pointer),
        }
    }

    /// The leading specifiers and qualifiers of a parameter's tokens (or
    /// a type name from elsewhere, a header's, followed by the
    /// declarator): where the declarator starts, the specifier words and
    /// the element's qualifiers (`const`, `volatile`).
    fn specifiers<'k>(&self, toks: &'k [Token]) -> (usize, Vec<&'k str>, Vec<String>) {
        // Leading specifiers and qualifiers.
        let mut k = 0;
        let mut spec = Vec::new();
        let mut qualifiers = Vec::new();
        while let Some(t) = toks.get(k)
            && t.kind == Tok::Ident
            && (is_type_word(&t.word)
                || QUALIFIERS.contains(&t.word.as_str())
                || self.aliases.contains_key(&t.word)
                || matches!(t.word.as_str(), "struct" | "union" | "enum"))
        {
            if matches!(t.word.as_str(), "const" | "volatile") {
                qualifiers.push(t.word.clone());
            } else if !QUALIFIERS.contains(&t.word.as_str()) {
                spec.push(t.word.as_str());
            }
            k += 1;
        }
        // A type name from elsewhere (a header): a word followed by the
        // declarator.
        if spec.is_empty()
            && let (Some(t), Some(u)) = (toks.get(k), toks.get(k + 1))
            && t.kind == Tok::Ident
            && (u.kind == Tok::Ident || u.word == "*")
        {
            spec.push(t.word.as_str());
            k += 1;
        }
        (k, spec, qualifiers)
    }

    /// A scalar type from its specifier words (aliases resolved).
    pub(super) fn scalar(&self, words: &[&str]) -> Option<Scalar> {
        let mut resolved: Vec<String> = Vec::new();
        for w in words {
            match self.aliases.get(*w) {
                Some(ws) => resolved.extend(ws.iter().cloned()),
                None => resolved.push(w.to_string()),
            }
        }
        let resolved: Vec<&str> = resolved
            .iter()
            .map(String::as_str)
            .filter(|w| !QUALIFIERS.contains(w))
            .collect();
        let spelling = resolved.join(" ");
        if resolved.contains(&"float") || resolved.contains(&"double") {
            let ok = resolved
                .iter()
                .all(|w| matches!(*w, "float" | "double" | "long"));
            return ok.then_some(Scalar::Float(spelling));
        }
        if let [w] = resolved.as_slice()
            && INT_TYPEDEFS.contains(w)
        {
            return Some(Scalar::Int {
                unsigned: w.starts_with('u') || *w == "size_t",
                spelling,
            });
        }
        (!resolved.is_empty() && resolved.iter().all(|w| INT_WORDS.contains(w))).then(|| {
            Scalar::Int {
                unsigned: resolved.contains(&"unsigned") || resolved == ["_Bool"],
                spelling,
            }
        })
    }

    /// Whether identifier `name` appears in `[start, end)` outside the
    /// ranges `skip`.
    pub(super) fn mentions(
        &self,
        name: &str,
        (start, end): (usize, usize),
        skip: &[(usize, usize)],
    ) -> bool {
        !self.uses(name, (start, end), skip).is_empty()
    }

    /// Indices of the tokens that are identifier `name` in `[start, end)`
    /// outside the ranges `skip`.
    fn uses(
        &self,
        name: &str,
        (start, end): (usize, usize),
        skip: &[(usize, usize)],
    ) -> Vec<usize> {
        (0..self.toks.len())
            .filter(|&k| {
                let t = &self.toks[k];
                t.kind == Tok::Ident
                    && t.word == name
                    && start <= t.start
                    && t.end <= end
                    && !skip.iter().any(|&(s, e)| s <= t.start && t.start < e)
            })
            .collect()
    }

    /// Whether `name` may be modified in `[start, end)` outside `skip`:
    /// assigned (`=`, `+=`, ...), incremented, decremented, or its
    /// address taken.
    pub(super) fn may_modify(
        &self,
        name: &str,
        range: (usize, usize),
        skip: &[(usize, usize)],
    ) -> bool {
        let toks = &self.toks;
        // The operator right after token `k`: adjacent punctuation.
        let after = |k: usize| -> String {
            let mut s = String::new();
            let mut end = None;
            for t in &toks[k + 1..] {
                if end.is_some_and(|e| t.start != e)
                    || !matches!(t.kind, Tok::Punct(_))
                    || s.len() == 3
                {
                    break;
                }
                s.push_str(&t.word);
                end = Some(t.end);
            }
            s
        };
        self.uses(name, range, skip).into_iter().any(|k| {
            let next = after(k);
            let assigned = next.starts_with("++")
                || next.starts_with("--")
                || (next.starts_with('=') && !next.starts_with("=="))
                || ["+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="]
                    .iter()
                    .any(|op| next.starts_with(op));
            let before = |j: usize| toks.get(k.wrapping_sub(j)).map(|t| t.word.as_str());
            let prefixed = matches!(
                (before(2), before(1)),
                (Some("+"), Some("+")) | (Some("-"), Some("-"))
            ) || before(1) == Some("&");
            assigned || prefixed
        })
    }

    /// Whether the file declares `name` as a variable (a type word,
    /// `extern` or `*` right before it), outside directives.
    pub(super) fn declares(&self, name: &str) -> bool {
        self.uses(name, (0, self.text.len()), &[])
            .into_iter()
            .any(|k| {
                k > 0 && {
                    let w = self.toks[k - 1].word.as_str();
                    is_type_word(w) || w == "extern" || w == "*" || self.aliases.contains_key(w)
                }
            })
    }
}

/// Whether a file defines a function `main` (comments, strings and
/// directives ignored).
pub(super) fn has_main(text: &str) -> bool {
    let toks = tokens(text);
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if t.word == "{" && t.close > 0 {
            i = t.close;
            continue;
        }
        if t.word == "main"
            && let Some(p) = toks.get(i + 1)
            && p.word == "("
            && p.close > 0
            && toks.get(p.close).is_some_and(|b| b.word == "{")
        {
            return true;
        }
        i += 1;
    }
    false
}

fn is_type_word(w: &str) -> bool {
    INT_WORDS.contains(&w)
        || INT_TYPEDEFS.contains(&w)
        || matches!(w, "float" | "double" | "void")
        || QUALIFIERS.contains(&w)
}

/// Whether a condition (`ifndefN`, `if!defined(M)&&!defined(N)`, spaces
/// removed) holds only when `name` is not defined.
fn guards(condition: &str, name: &str) -> bool {
    if condition.strip_prefix("ifndef") == Some(name) {
        return true;
    }
    let Some(rest) = condition.strip_prefix("if") else {
        return false;
    };
    [format!("!defined({name})"), format!("!defined{name}")]
        .iter()
        .any(|pat| {
            rest.match_indices(pat.as_str()).any(|(i, _)| {
                !rest[i + pat.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            })
        })
}

/// A parameter's kind from its element type, qualifiers, extents and
/// declarator: a pointer (`*x`, `(*x)`) is an array whose first extent is
/// not known; `(*x)[e]` a pointer to rows.
fn kind(
    element: Scalar,
    qualifiers: &[String],
    extents: Vec<Option<Expr>>,
    stars: usize,
    row_pointer: bool,
) -> Kind {
    let pointers = stars + usize::from(row_pointer);
    match (pointers, stars) {
        (0, _) if extents.is_empty() => Kind::Scalar(element),
        (0, _) => Kind::Array {
            element,
            qualifiers: qualifiers.join(" "),
            extents,
        },
        (1, 0) | (1, 1) if row_pointer || extents.is_empty() => Kind::Array {
            element,
            qualifiers: qualifiers.join(" "),
            extents: std::iter::once(None).chain(extents).collect(),
        },
        (1, _) => Kind::Other("an array of pointers".into()),
        _ => Kind::Other("a pointer to pointers".into()),
    }
}
