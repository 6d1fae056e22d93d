//! The generated code's integer expressions evaluated with the
//! parameters bound: at a point (the loop variables' values) and over
//! intervals (the loop variables' ranges).

use crate::isl::{AstExpr, AstOp};

/// Values of names: the loop variables bound so far (innermost last),
/// then the parameters.
pub(super) struct Env<'p> {
    pub(super) params: &'p dyn Fn(&str) -> Option<i64>,
    pub(super) vars: Vec<(String, Interval)>,
}

/// A closed range of integers; a point when `lo == hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Interval {
    pub(super) lo: i64,
    pub(super) hi: i64,
}

impl Interval {
    pub(super) fn point(v: i64) -> Interval {
        Interval { lo: v, hi: v }
    }
}

impl Env<'_> {
    fn get(&self, name: &str) -> Option<Interval> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
            .or_else(|| (self.params)(name).map(Interval::point))
    }

    /// The range of `e` over the variables' ranges (exact at a point;
    /// a bounding range otherwise). `None`: a name without a value, or
    /// an operation the bounds of generated loops do not use.
    pub(super) fn eval(&self, e: &AstExpr) -> Option<Interval> {
        use AstOp::*;
        let arg = |a: &[AstExpr], k: usize| self.eval(&a[k]);
        Some(match e {
            AstExpr::Int(v) => Interval::point(*v),
            AstExpr::Id(n) => self.get(n)?,
            AstExpr::Op(op, a) => match op {
                Add => {
                    let (x, y) = (arg(a, 0)?, arg(a, 1)?);
                    Interval {
                        lo: x.lo.checked_add(y.lo)?,
                        hi: x.hi.checked_add(y.hi)?,
                    }
                }
                Sub => {
                    let (x, y) = (arg(a, 0)?, arg(a, 1)?);
                    Interval {
                        lo: x.lo.checked_sub(y.hi)?,
                        hi: x.hi.checked_sub(y.lo)?,
                    }
                }
                Minus => {
                    let x = arg(a, 0)?;
                    Interval {
                        lo: x.hi.checked_neg()?,
                        hi: x.lo.checked_neg()?,
                    }
                }
                Mul => {
                    let (x, y) = (arg(a, 0)?, arg(a, 1)?);
                    corners(x, y, i64::checked_mul)?
                }
                Min | Max => {
                    let mut v = arg(a, 0)?;
                    for k in 1..a.len() {
                        let w = arg(a, k)?;
                        v = if *op == Min {
                            Interval {
                                lo: v.lo.min(w.lo),
                                hi: v.hi.min(w.hi),
                            }
                        } else {
                            Interval {
                                lo: v.lo.max(w.lo),
                                hi: v.hi.max(w.hi),
                            }
                        };
                    }
                    v
                }
                Div | FdivQ | PdivQ => {
                    let (x, d) = (arg(a, 0)?, arg(a, 1)?);
                    if d.lo != d.hi || d.lo == 0 {
                        return None;
                    }
                    corners(x, d, |p, q| Some(p.div_euclid(q)))?
                }
                PdivR | ZdivR => {
                    let (x, d) = (arg(a, 0)?, arg(a, 1)?);
                    if d.lo != d.hi || d.lo == 0 {
                        return None;
                    }
                    if x.lo == x.hi {
                        Interval::point(x.lo.rem_euclid(d.lo))
                    } else {
                        Interval {
                            lo: 0,
                            hi: d.lo.abs() - 1,
                        }
                    }
                }
                Eq | Le | Lt | Ge | Gt | And | AndThen | Or | OrElse => {
                    Interval::point(i64::from(self.truth(e)?))
                }
                Cond | Select => {
                    let c = arg(a, 0)?;
                    let (x, y) = (arg(a, 1)?, arg(a, 2)?);
                    match (c.lo, c.hi) {
                        (0, 0) => y,
                        (l, _) if l != 0 && c.lo == c.hi => x,
                        _ => Interval {
                            lo: x.lo.min(y.lo),
                            hi: x.hi.max(y.hi),
                        },
                    }
                }
                _ => return None,
            },
        })
    }

    /// Whether a condition holds at a point (`None` over ranges where it
    /// may go either way, or when it cannot be evaluated).
    pub(super) fn truth(&self, e: &AstExpr) -> Option<bool> {
        use AstOp::*;
        let AstExpr::Op(op, a) = e else {
            let v = self.eval(e)?;
            return (v.lo == v.hi).then_some(v.lo != 0);
        };
        match op {
            And | AndThen => Some(self.truth(&a[0])? && self.truth(&a[1])?),
            Or | OrElse => Some(self.truth(&a[0])? || self.truth(&a[1])?),
            Eq | Le | Lt | Ge | Gt => {
                let (x, y) = (self.eval(&a[0])?, self.eval(&a[1])?);
                let holds = |p: i64, q: i64| match op {
                    Eq => p == q,
                    Le => p <= q,
                    Lt => p < q,
                    Ge => p >= q,
                    _ => p > q,
                };
                let sure = holds(x.lo, y.lo)
                    && holds(x.hi, y.hi)
                    && holds(x.lo, y.hi)
                    && holds(x.hi, y.lo);
                let never = !holds(x.lo, y.lo)
                    && !holds(x.hi, y.hi)
                    && !holds(x.lo, y.hi)
                    && !holds(x.hi, y.lo);
                if sure {
                    Some(true)
                } else if never && *op != Eq {
                    Some(false)
                } else if x.lo == x.hi && y.lo == y.hi {
                    Some(holds(x.lo, y.lo))
                } else {
                    None
                }
            }
            _ => {
                let v = self.eval(e)?;
                (v.lo == v.hi).then_some(v.lo != 0)
            }
        }
    }

    /// The last value of loop variable `var` whose condition is `cond`,
    /// when the condition is an upper bound (`var <= e`, `var < e`, a
    /// conjunction of them); over ranges, the range of that value.
    pub(super) fn upper(&self, var: &str, cond: &AstExpr) -> Option<Interval> {
        use AstOp::*;
        let is_var = |e: &AstExpr| matches!(e, AstExpr::Id(n) if n == var);
        let AstExpr::Op(op, a) = cond else {
            return None;
        };
        let minus_one = |v: Interval| Interval {
            lo: v.lo - 1,
            hi: v.hi - 1,
        };
        match op {
            Le if is_var(&a[0]) => self.eval(&a[1]),
            Lt if is_var(&a[0]) => self.eval(&a[1]).map(minus_one),
            Ge if is_var(&a[1]) => self.eval(&a[0]),
            Gt if is_var(&a[1]) => self.eval(&a[0]).map(minus_one),
            And | AndThen => {
                let (x, y) = (self.upper(var, &a[0])?, self.upper(var, &a[1])?);
                Some(Interval {
                    lo: x.lo.min(y.lo),
                    hi: x.hi.min(y.hi),
                })
            }
            _ => None,
        }
    }
}

/// The range of `f` over the corners of two ranges (`f` monotone in
/// each argument on each side of zero, as products and divisions by a
/// constant are).
fn corners(x: Interval, y: Interval, f: impl Fn(i64, i64) -> Option<i64>) -> Option<Interval> {
    let v = [
        f(x.lo, y.lo)?,
        f(x.lo, y.hi)?,
        f(x.hi, y.lo)?,
        f(x.hi, y.hi)?,
    ];
    Some(Interval {
        lo: *v.iter().min()?,
        hi: *v.iter().max()?,
    })
}

/// Min and max operations in an expression (the guards of a loop's
/// bounds).
pub(super) fn min_max_count(e: &AstExpr) -> usize {
    match e {
        AstExpr::Op(op, a) => {
            let own = if matches!(op, AstOp::Min | AstOp::Max) {
                a.len().saturating_sub(1)
            } else {
                0
            };
            own + a.iter().map(min_max_count).sum::<usize>()
        }
        _ => 0,
    }
}
