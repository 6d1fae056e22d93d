//! Extents between brackets: small integer expressions of literals and
//! names (`n`, `N + 1`, `2 * m`), read from the front end's tokens.

use super::signature::QUALIFIERS;
use crate::frontend::lex::{Tok, Token};

/// An extent between brackets: a small integer expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Expr {
    Num(i64),
    Var(String),
    Neg(Box<Expr>),
    Bin(u8, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// The value, `Err(name)` for the first name `env` does not know;
    /// `Ok(None)` on overflow or division by zero.
    pub(super) fn eval(&self, env: &dyn Fn(&str) -> Option<i64>) -> Result<Option<i64>, String> {
        Ok(match self {
            Expr::Num(v) => Some(*v),
            Expr::Var(n) => Some(env(n).ok_or_else(|| n.clone())?),
            Expr::Neg(e) => e.eval(env)?.and_then(i64::checked_neg),
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.eval(env)?, b.eval(env)?);
                let (Some(a), Some(b)) = (a, b) else {
                    return Ok(None);
                };
                match op {
                    b'+' => a.checked_add(b),
                    b'-' => a.checked_sub(b),
                    b'*' => a.checked_mul(b),
                    b'/' => a.checked_div(b),
                    _ => a.checked_rem(b),
                }
            }
        })
    }
}

/// A C integer literal (decimal, hex, octal; `u`/`l` suffixes).
pub(super) fn integer_literal(s: &str) -> Option<i64> {
    let s = s.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        i64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

/// The extent between brackets: `None` for `[]`, `[*]` or an expression
/// this scan does not read; qualifiers and `static` skipped.
pub(super) fn extent(text: &str, toks: &[Token]) -> Option<Expr> {
    let mut k = 0;
    while toks
        .get(k)
        .is_some_and(|t| t.word == "static" || QUALIFIERS.contains(&t.word.as_str()))
    {
        k += 1;
    }
    let toks = &toks[k..];
    if toks.is_empty() || (toks.len() == 1 && toks[0].word == "*") {
        return None;
    }
    let mut p = ExprParser { text, toks, at: 0 };
    let e = p.sum()?;
    (p.at == toks.len()).then_some(e)
}

struct ExprParser<'a> {
    text: &'a str,
    toks: &'a [Token],
    at: usize,
}

impl ExprParser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.at)
    }

    fn sum(&mut self) -> Option<Expr> {
        let mut e = self.product()?;
        while let Some(op) = self.peek().and_then(|t| {
            ["+", "-"]
                .contains(&t.word.as_str())
                .then(|| t.word.as_bytes()[0])
        }) {
            self.at += 1;
            e = Expr::Bin(op, Box::new(e), Box::new(self.product()?));
        }
        Some(e)
    }

    fn product(&mut self) -> Option<Expr> {
        let mut e = self.unary()?;
        while let Some(op) = self.peek().and_then(|t| {
            ["*", "/", "%"]
                .contains(&t.word.as_str())
                .then(|| t.word.as_bytes()[0])
        }) {
            self.at += 1;
            e = Expr::Bin(op, Box::new(e), Box::new(self.unary()?));
        }
        Some(e)
    }

    fn unary(&mut self) -> Option<Expr> {
        let t = self.peek()?.clone();
        self.at += 1;
        match t.kind {
            Tok::Punct(b'-') => Some(Expr::Neg(Box::new(self.unary()?))),
            Tok::Punct(b'+') => self.unary(),
            Tok::Punct(b'(') => {
                let e = self.sum()?;
                (self.peek()?.word == ")").then(|| {
                    self.at += 1;
                    e
                })
            }
            Tok::Ident => Some(Expr::Var(t.word)),
            Tok::Number => integer_literal(&self.text[t.start..t.end]).map(Expr::Num),
            _ => None,
        }
    }
}
