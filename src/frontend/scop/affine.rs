//! Quasi-affine expressions and formulas (conjunctions and disjunctions
//! of affine constraints), exact in integers: the vocabulary of domains,
//! bounds and subscripts, printed in isl's notation.

use crate::isl::mangle;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::{self, Write};

/// A variable of an affine expression or `floor(e / d)` of one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Term {
    Var(String),
    FloorDiv(Box<Affine>, i64),
}

/// A quasi-affine integer expression: constant + sum of coefficient * term.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
pub struct Affine {
    pub terms: BTreeMap<Term, i64>,
    pub constant: i64,
}

impl Affine {
    pub fn constant(c: i64) -> Affine {
        Affine {
            terms: BTreeMap::new(),
            constant: c,
        }
    }

    pub fn var(name: &str) -> Affine {
        Affine::term(Term::Var(name.to_string()))
    }

    pub(crate) fn term(t: Term) -> Affine {
        let mut terms = BTreeMap::new();
        terms.insert(t, 1);
        Affine { terms, constant: 0 }
    }

    /// The value when the expression has no variable.
    pub fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// `self + k * other`, `None` on overflow.
    pub fn add_scaled(&self, other: &Affine, k: i64) -> Option<Affine> {
        let mut r = self.clone();
        r.constant = r.constant.checked_add(other.constant.checked_mul(k)?)?;
        for (t, c) in &other.terms {
            let e = r.terms.entry(t.clone()).or_insert(0);
            *e = e.checked_add(c.checked_mul(k)?)?;
            if *e == 0 {
                r.terms.remove(t);
            }
        }
        Some(r)
    }

    pub fn scale(&self, k: i64) -> Option<Affine> {
        Affine::default().add_scaled(self, k)
    }

    pub(crate) fn plus_constant(&self, k: i64) -> Option<Affine> {
        let mut r = self.clone();
        r.constant = r.constant.checked_add(k)?;
        Some(r)
    }

    /// `floor(self / d)` for a positive constant `d`.
    pub fn floor_div(&self, d: i64) -> Affine {
        debug_assert!(d > 0);
        if d == 1 {
            return self.clone();
        }
        if let Some(c) = self.as_constant() {
            return Affine::constant(c.div_euclid(d));
        }
        Affine::term(Term::FloorDiv(Box::new(self.clone()), d))
    }

    /// Names of the plain variables (not inside divisions).
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.terms.keys().filter_map(|t| match t {
            Term::Var(v) => Some(v.as_str()),
            Term::FloorDiv(..) => None,
        })
    }

    /// The coefficient of a plain variable.
    pub fn coefficient(&self, name: &str) -> i64 {
        self.terms
            .get(&Term::Var(name.to_string()))
            .copied()
            .unwrap_or(0)
    }
}

impl Affine {
    /// The value at an integer point (`env` gives every variable).
    pub(crate) fn eval(&self, env: &dyn Fn(&str) -> i64) -> i64 {
        let mut v = self.constant;
        for (t, c) in &self.terms {
            let x = match t {
                Term::Var(name) => env(name),
                Term::FloorDiv(e, d) => e.eval(env).div_euclid(*d),
            };
            v += c * x;
        }
        v
    }
}

impl Formula {
    /// Whether the formula holds at an integer point.
    pub fn eval(&self, env: &dyn Fn(&str) -> i64) -> bool {
        match self {
            Formula::Atom(c) => {
                let v = c.expr.eval(env);
                if c.equality { v == 0 } else { v >= 0 }
            }
            Formula::And(v) => v.iter().all(|f| f.eval(env)),
            Formula::Or(v) => v.iter().any(|f| f.eval(env)),
        }
    }
}

impl fmt::Display for Affine {
    /// isl's notation (`2*i + n - 1`, `floor((i)/2)`), which is also C when
    /// there is no division.
    /// Names are mangled for isl ([`crate::isl::mangle`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (t, &c) in &self.terms {
            let name = match t {
                Term::Var(v) => mangle(v).into_owned(),
                Term::FloorDiv(e, d) => format!("floor(({e})/{d})"),
            };
            let (neg, mag) = (c < 0, c.unsigned_abs());
            if first {
                if neg {
                    f.write_char('-')?;
                }
            } else {
                f.write_str(if neg { " - " } else { " + " })?;
            }
            if mag != 1 {
                write!(f, "{mag}*")?;
            }
            f.write_str(&name)?;
            first = false;
        }
        if first {
            write!(f, "{}", self.constant)
        } else if self.constant != 0 {
            let sign = if self.constant < 0 { "-" } else { "+" };
            write!(f, " {sign} {}", self.constant.unsigned_abs())
        } else {
            Ok(())
        }
    }
}

/// `expr >= 0` or `expr = 0`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Constraint {
    pub expr: Affine,
    pub equality: bool,
}

/// A boolean combination of affine constraints (loop bounds, guards).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum Formula {
    Atom(Constraint),
    And(Vec<Formula>),
    Or(Vec<Formula>),
}

impl Formula {
    pub(crate) fn truth() -> Formula {
        Formula::And(vec![])
    }

    pub(crate) fn ge0(expr: Affine) -> Formula {
        Formula::Atom(Constraint {
            expr,
            equality: false,
        })
    }

    pub(crate) fn eq0(expr: Affine) -> Formula {
        Formula::Atom(Constraint {
            expr,
            equality: true,
        })
    }

    /// Conjunction, flattening nested conjunctions.
    pub(crate) fn and(parts: Vec<Formula>) -> Formula {
        let mut out = Vec::new();
        for p in parts {
            match p {
                Formula::And(inner) => out.extend(inner),
                other => out.push(other),
            }
        }
        if out.len() == 1 {
            out.pop().unwrap()
        } else {
            Formula::And(out)
        }
    }

    /// Disjunction, flattening nested disjunctions.
    pub(crate) fn or(parts: Vec<Formula>) -> Formula {
        let mut out = Vec::new();
        for p in parts {
            match p {
                Formula::Or(inner) => out.extend(inner),
                other => out.push(other),
            }
        }
        if out.len() == 1 {
            out.pop().unwrap()
        } else {
            Formula::Or(out)
        }
    }

    /// Logical negation over the integers (`!(e >= 0)` is `-e - 1 >= 0`).
    pub(crate) fn negate(&self) -> Option<Formula> {
        Some(match self {
            Formula::Atom(c) if c.equality => Formula::or(vec![
                Formula::ge0(c.expr.plus_constant(-1)?),
                Formula::ge0(c.expr.scale(-1)?.plus_constant(-1)?),
            ]),
            Formula::Atom(c) => Formula::ge0(c.expr.scale(-1)?.plus_constant(-1)?),
            Formula::And(parts) => {
                Formula::or(parts.iter().map(|p| p.negate()).collect::<Option<_>>()?)
            }
            Formula::Or(parts) => {
                Formula::and(parts.iter().map(|p| p.negate()).collect::<Option<_>>()?)
            }
        })
    }

    pub(crate) fn is_true(&self) -> bool {
        matches!(self, Formula::And(v) if v.is_empty())
    }
}

impl fmt::Display for Formula {
    /// isl's notation: `a >= 0 and (b = 0 or c >= 0)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Formula::Atom(c) => write!(f, "{} {} 0", c.expr, if c.equality { "=" } else { ">=" }),
            Formula::And(v) if v.is_empty() => f.write_str("true"),
            Formula::Or(v) if v.is_empty() => f.write_str("false"),
            Formula::And(v) | Formula::Or(v) => {
                let sep = if matches!(self, Formula::And(_)) {
                    " and "
                } else {
                    " or "
                };
                for (k, p) in v.iter().enumerate() {
                    if k > 0 {
                        f.write_str(sep)?;
                    }
                    if matches!(p, Formula::Atom(_)) {
                        write!(f, "{p}")?;
                    } else {
                        write!(f, "({p})")?;
                    }
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_prints_in_isl_notation() {
        let i = Affine::var("i");
        let n = Affine::var("n");
        let e = i
            .scale(2)
            .unwrap()
            .add_scaled(&n, -1)
            .unwrap()
            .plus_constant(-1)
            .unwrap();
        assert_eq!(e.to_string(), "2*i - n - 1");
        assert_eq!(Affine::constant(-3).to_string(), "-3");
        assert_eq!(i.floor_div(2).to_string(), "floor((i)/2)");
        assert_eq!(Affine::constant(-7).floor_div(2).to_string(), "-4");
        assert_eq!(i.add_scaled(&i, -1).unwrap(), Affine::constant(0));
    }

    #[test]
    fn negation_is_integer_exact() {
        let f = Formula::ge0(Affine::var("i"));
        assert_eq!(f.negate().unwrap().to_string(), "-i - 1 >= 0");
        let g = Formula::eq0(Affine::var("i"));
        assert_eq!(g.negate().unwrap().to_string(), "i - 1 >= 0 or -i - 1 >= 0");
        assert!(Affine::constant(i64::MAX).plus_constant(1).is_none());
    }
}
