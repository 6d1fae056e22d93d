//! The one light scanner of C text: tokens with comments dropped, string
//! and character literals and whole preprocessor directives kept as one
//! token each, line continuations followed as the preprocessor does. The
//! front end reads the user's pragmas (`pragmas.rs`), the `#pragma scop`
//! regions (`extract.rs`) and the declarations in front of a SCoP
//! (`lower/types.rs`) with it, and the engine's driver reads function
//! headers with it.

/// Pairs the brackets of each kind: `close` of an opening bracket.
fn match_brackets(toks: &mut [Token]) {
    let mut open: [Vec<usize>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for k in 0..toks.len() {
        let (kind, opening) = match toks[k].kind {
            Tok::Punct(b'(') => (0, true),
            Tok::Punct(b'[') => (1, true),
            Tok::Punct(b'{') => (2, true),
            Tok::Punct(b')') => (0, false),
            Tok::Punct(b']') => (1, false),
            Tok::Punct(b'}') => (2, false),
            _ => continue,
        };
        if opening {
            open[kind].push(k);
        } else if let Some(o) = open[kind].pop() {
            toks[o].close = k + 1;
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok {
    Ident,
    Number,
    Literal,
    Punct(u8),
    /// A whole preprocessor directive (its newline excluded).
    Directive,
}

#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub(crate) kind: Tok,
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// The spelling of an identifier or punctuator (empty otherwise).
    pub(crate) word: String,
    /// For an opening bracket: one past its closing bracket (0 if none).
    pub(crate) close: usize,
}

/// The tokens of `text` (comments dropped, directives kept whole) with
/// their brackets paired: the scan `pragmas::foreign` uses, for other light
/// scans of C text (the engine's driver reads function headers with it).
pub(crate) fn tokens(text: &str) -> Vec<Token> {
    let mut toks = lex(text);
    match_brackets(&mut toks);
    toks
}

/// Whether a backslash-newline starts at `i`; returns its length.
fn splice(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'\\') {
        return None;
    }
    match (b.get(i + 1), b.get(i + 2)) {
        (Some(b'\n'), _) => Some(2),
        (Some(b'\r'), Some(b'\n')) => Some(3),
        _ => None,
    }
}

/// The tokens of `text`, comments dropped, directives kept whole.
fn lex(text: &str) -> Vec<Token> {
    let b = text.as_bytes();
    // C has a token per four or five bytes: growing from empty copied a
    // 20 MB file's tokens some twenty times.
    let mut out = Vec::with_capacity(text.len() / 4 + 16);
    let mut i = 0;
    let mut line_start = true;
    let tok = |kind, start, end| Token {
        kind,
        start,
        end,
        word: if matches!(kind, Tok::Ident | Tok::Punct(_)) {
            text[start..end].to_string()
        } else {
            String::new()
        },
        close: 0,
    };
    while i < b.len() {
        if let Some(n) = splice(b, i) {
            i += n;
            continue;
        }
        let c = b[i];
        match c {
            b'\n' => {
                line_start = true;
                i += 1;
            }
            b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c' => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => i = line_comment_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => i = block_comment_end(text, i),
            b'#' if line_start => {
                let end = directive_end(text, i);
                out.push(tok(Tok::Directive, i, end));
                i = end;
            }
            b'"' | b'\'' => {
                let end = literal_end(b, i);
                out.push(tok(Tok::Literal, i, end));
                i = end;
                line_start = false;
            }
            _ if c.is_ascii_digit()
                || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) =>
            {
                let start = i;
                i += 1;
                while i < b.len() {
                    let d = b[i];
                    if d.is_ascii_alphanumeric() || d == b'_' || d == b'.' {
                        if matches!(d, b'e' | b'E' | b'p' | b'P')
                            && matches!(b.get(i + 1), Some(b'+' | b'-'))
                        {
                            i += 1;
                        }
                        i += 1;
                    } else if d == b'\'' && b.get(i + 1).is_some_and(u8::is_ascii_alphanumeric) {
                        i += 2;
                    } else if let Some(n) = splice(b, i) {
                        i += n;
                    } else {
                        break;
                    }
                }
                out.push(tok(Tok::Number, start, i));
                line_start = false;
            }
            _ if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80 => {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'$'
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                // A string or character literal with an encoding prefix.
                if i < b.len()
                    && matches!(b[i], b'"' | b'\'')
                    && matches!(&text[start..i], "L" | "u" | "U" | "u8")
                {
                    let end = literal_end(b, i);
                    out.push(tok(Tok::Literal, start, end));
                    i = end;
                } else {
                    out.push(tok(Tok::Ident, start, i));
                }
                line_start = false;
            }
            _ => {
                out.push(tok(Tok::Punct(c), i, i + 1));
                i += 1;
                line_start = false;
            }
        }
    }
    out
}

/// End of a `//` comment: its newline (not one escaped by a backslash).
fn line_comment_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        if let Some(n) = splice(b, i) {
            i += n;
        } else if b[i] == b'\n' {
            return i;
        } else {
            i += 1;
        }
    }
    b.len()
}

fn block_comment_end(text: &str, i: usize) -> usize {
    text[i + 2..]
        .find("*/")
        .map(|k| i + 2 + k + 2)
        .unwrap_or(text.len())
}

/// End of a string or character literal starting at `i` (at its closing
/// quote, or at an unescaped newline if it is never closed).
fn literal_end(b: &[u8], i: usize) -> usize {
    let quote = b[i];
    let mut k = i + 1;
    while k < b.len() {
        match b[k] {
            b'\\' => k += 2,
            b'\n' => return k,
            c if c == quote => return k + 1,
            _ => k += 1,
        }
    }
    b.len()
}

/// End of the directive starting at `i`: the newline that ends its
/// logical line (comments may span lines inside it).
fn directive_end(text: &str, mut i: usize) -> usize {
    let b = text.as_bytes();
    while i < b.len() {
        if let Some(n) = splice(b, i) {
            i += n;
            continue;
        }
        match b[i] {
            b'\n' => return if i > 0 && b[i - 1] == b'\r' { i - 1 } else { i },
            b'/' if b.get(i + 1) == Some(&b'*') => i = block_comment_end(text, i),
            b'/' if b.get(i + 1) == Some(&b'/') => i = line_comment_end(b, i),
            b'"' | b'\'' => i = literal_end(b, i),
            _ => i += 1,
        }
    }
    b.len()
}

/// The words of a directive line after `#`, comments removed and
/// continuations joined; `None` if it is empty.
pub(crate) fn directive_words(line: &str) -> Option<Vec<String>> {
    let mut code = String::with_capacity(line.len());
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i = line[i + 2..]
                .find("*/")
                .map(|k| i + 2 + k + 2)
                .unwrap_or(b.len());
            code.push(' ');
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            break;
        } else if b[i] == b'\\' && matches!(b.get(i + 1), Some(b'\n' | b'\r')) {
            i += 1;
            code.push(' ');
        } else {
            let ch = line[i..].chars().next().unwrap_or(' ');
            code.push(ch);
            i += ch.len_utf8();
        }
    }
    let code = code.trim_start().strip_prefix('#')?;
    let words: Vec<String> = code.split_whitespace().map(str::to_string).collect();
    (!words.is_empty()).then_some(words)
}

/// A piece of C text on one line: continuations joined, white space
/// folded.
pub(crate) fn one_line(s: &str) -> String {
    s.replace("\\\r\n", " ")
        .replace("\\\n", " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
