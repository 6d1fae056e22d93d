//! How deep a SCoP's tree may be, checked on the text before parsing
//! (an estimate, cheap and without recursion) so that no input makes the
//! parser or any later walk over the tree recurse without bound.

use super::*;

/// Deepest nesting the front end accepts, counted as loops, ifs, blocks,
/// brackets and operators on the way from the SCoP's top to the deepest
/// leaf of an expression. Every recursive walk over the parsed tree (the
/// lowering, the printer, code generation, even dropping it) then stays
/// within a known depth: at this limit, printing a tree, generating code
/// from it and dropping it took less than 1 MiB of stack in a debug build
/// (and overflowed 0.6 MiB), so threads of 2 MiB (Rust's default) have
/// room. PolyBench's deepest tree is 16 (seidel: a 9-term sum 3 loops
/// down); C compilers must accept 63 levels of parentheses and 127 of
/// blocks, clang stops at 256 brackets.
pub const MAX_NESTING: usize = 1000;

/// Limit of the estimate of [`check_nesting`], which may count several
/// times the real depth (every operator of `a*b*c + d*e*f` counts,
/// parentheses count twice): rejecting there only stops what is hopeless
/// early and cheaply (the parser needs 55 s and 6 GB for a sum of 10
/// million terms); the tree itself is held to [`MAX_NESTING`] exactly.
const MAX_ESTIMATE: usize = 4 * MAX_NESTING;

pub(super) fn expression_too_deep(at: usize) -> SpanError {
    SpanError::new(
        Span {
            start: at,
            end: at + 1,
        },
        format!(
            "expression too deeply nested (more than {MAX_NESTING} levels of operators and brackets)"
        ),
    )
    .help("split the expression into several assignments")
}

pub(super) fn statements_too_deep(at: usize) -> SpanError {
    SpanError::new(
        Span {
            start: at,
            end: at + 1,
        },
        format!("loops, ifs and blocks nested too deeply (more than {MAX_NESTING} levels)"),
    )
    .help("split the region into several SCoPs")
}

/// What opens a level in [`check_nesting`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Head {
    For,
    If,
    Else,
}

/// One bracket level of [`check_nesting`]; the SCoP body is the outermost.
struct Frame {
    /// `(`, `[`, `{`, or 0 for the body itself.
    open: u8,
    /// The bracket holds a `for (...)` or `if (...)` header.
    header: bool,
    /// Operators (one per character) and closed `(...)` groups since the
    /// start of the current expression: an upper bound on how deeply the
    /// expression nests, since a chain `a + b + ...` or `!!...!x` is parsed
    /// flat but becomes a tree as deep as it is long.
    ops: usize,
    /// Unbraced statement heads (`for (...)`, `if (...)`, `else`) whose
    /// body is still open: `for (...) for (...) x = 1;` nests twice.
    heads: Vec<Head>,
}

impl Frame {
    fn weight(&self) -> usize {
        usize::from(self.open != 0) + self.ops + self.heads.len()
    }
}

/// Rejects, before the parser sees it, a SCoP body that nests far deeper
/// than [`MAX_NESTING`]: a linear scan that estimates from the tokens how
/// deep the parse tree will be, so that no input makes the parser recurse
/// without bound or spend its time on a hopeless input. Sequential
/// statements do not add up; only nesting counts.
///
/// It streams over the bytes rather than using the front end's scanner
/// (`lex.rs`): the input may be a hopeless megabyte, and this check must
/// stop it before anything is built for it.
pub(super) fn check_nesting(text: &str, offset: usize) -> Result<(), SpanError> {
    let b = text.as_bytes();
    let mut frames = vec![Frame {
        open: 0,
        header: false,
        ops: 0,
        heads: Vec::new(),
    }];
    let mut total = 0usize;
    // A statement just ended under an `if`: the next token decides
    // whether an `else` continues it.
    let mut else_may_follow = false;
    // The previous token was `for` or `if`.
    let mut after_head = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        let (lexed, next) = lex(text, i);
        i = next;
        // The token at `start`: a word, a literal or one punctuation byte.
        let Lexed::Token(word) = lexed else {
            continue;
        };
        let top = frames.last_mut().expect("the body frame");
        let in_statements = top.open == 0 || top.open == b'{';
        if else_may_follow {
            else_may_follow = false;
            if word == Some("else") {
                // The pending `if` takes this `else`: one level either way.
                if let Some(h) = top.heads.last_mut() {
                    *h = Head::Else;
                }
                after_head = false;
                continue;
            }
            // Every open head in this frame has its statement complete.
            total -= top.heads.len();
            top.heads.clear();
        }
        let was_after_head = std::mem::take(&mut after_head);
        let mut statement_ended = false;
        match (word, c) {
            (Some(w @ ("for" | "if" | "else")), _) if in_statements => {
                top.heads.push(match w {
                    "for" => Head::For,
                    "if" => Head::If,
                    _ => Head::Else,
                });
                total += 1;
                after_head = w != "else";
                if total > MAX_ESTIMATE {
                    return Err(too_deep(&frames, total, offset + start));
                }
                continue;
            }
            (Some(_), _) => continue,
            (None, b'(' | b'[' | b'{') => {
                frames.push(Frame {
                    open: c,
                    header: was_after_head && c == b'(',
                    ops: 0,
                    heads: Vec::new(),
                });
                total += 1;
                if total > MAX_ESTIMATE {
                    return Err(too_deep(&frames, total, offset + start));
                }
                continue;
            }
            (None, b')' | b']' | b'}') => {
                if frames.len() > 1 {
                    let f = frames.pop().expect("an open bracket");
                    total -= f.weight();
                    let parent = frames.last_mut().expect("the body frame");
                    match f.open {
                        // A cast or a call is one level of the expression
                        // around it; a header is not.
                        b'(' if !f.header => {
                            parent.ops += 1;
                            total += 1;
                        }
                        b'{' => statement_ended = parent.open == 0 || parent.open == b'{',
                        _ => {}
                    }
                }
            }
            (None, b';' | b',') => {
                total -= top.ops;
                top.ops = 0;
                statement_ended = c == b';' && in_statements;
            }
            (None, _) => {
                top.ops += 1;
                total += 1;
            }
        }
        if statement_ended {
            let top = frames.last_mut().expect("the body frame");
            total -= top.ops;
            top.ops = 0;
            while let Some(&h) = top.heads.last() {
                if h == Head::If {
                    else_may_follow = true;
                    break;
                }
                top.heads.pop();
                total -= 1;
            }
        }
        if total > MAX_ESTIMATE {
            return Err(too_deep(&frames, total, offset + start));
        }
    }
    Ok(())
}

/// What the scan of [`check_nesting`] finds at a byte.
enum Lexed<'t> {
    /// Nothing that counts: a blank, a backslash, a comment.
    Skip,
    /// A token: a word or a literal (`Some`, a literal as ""), or one
    /// punctuation byte (`None`).
    Token(Option<&'t str>),
}

/// What is at byte `i` of `text`, and where the scan goes on.
fn lex(text: &str, i: usize) -> (Lexed<'_>, usize) {
    let b = text.as_bytes();
    let c = b[i];
    let start = i;
    let mut i = i;
    // Skip what is not a token.
    if c.is_ascii_whitespace() || c == b'\\' {
        return (Lexed::Skip, i + 1);
    }
    if c == b'/' && b.get(i + 1) == Some(&b'*') {
        return (
            Lexed::Skip,
            text[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2),
        );
    }
    if c == b'/' && b.get(i + 1) == Some(&b'/') {
        return (Lexed::Skip, text[i..].find('\n').map_or(b.len(), |k| i + k));
    }
    let word = if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c >= 0x80 {
        while i < b.len()
            && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.' || b[i] >= 0x80)
        {
            i += 1;
        }
        Some(&text[start..i])
    } else if c == b'"' || c == b'\'' {
        i += 1;
        while i < b.len() && b[i] != c && b[i] != b'\n' {
            i += if b[i] == b'\\' { 2 } else { 1 };
        }
        i = (i + 1).min(b.len());
        Some("")
    } else {
        i += 1;
        None
    };
    (Lexed::Token(word), i)
}

/// The error of [`check_nesting`] at `at`: about statements if loops, ifs
/// and blocks make most of the `total` depth, else about the expression.
fn too_deep(frames: &[Frame], total: usize, at: usize) -> SpanError {
    let statements: usize = frames
        .iter()
        .map(|f| f.heads.len() + usize::from(f.open == b'{'))
        .sum();
    if 2 * statements >= total {
        statements_too_deep(at)
    } else {
        expression_too_deep(at)
    }
}
