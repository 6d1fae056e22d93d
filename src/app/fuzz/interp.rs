//! A small interpreter of generated programs with C's semantics (LP64:
//! usual arithmetic conversions, unsigned wrap-around, truncating
//! division), which proves a program legal at its parameter values (no
//! signed overflow, every access in bounds, a bounded run) and computes
//! the output the compiled original must print.

use super::program::{
    AExpr, Access, CmpOp, Cond, Elem, IntTy, Layout, Lhs, Loop, Program, Stmt, VExpr, init_value,
    lhs_elem, scalar_init,
};
use std::collections::HashMap;
use std::fmt::Write;

/// An integer value of a C type, kept within the type's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CInt {
    pub v: i128,
    pub ty: IntTy,
}

/// An element value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Val {
    Long(i64),
    ULong(u64),
    Double(f64),
}

/// Why a program is not legal C at some parameter values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Illegal {
    SignedOverflow,
    OutOfBounds { array: String },
    TooLong,
}

type R<T> = Result<T, Illegal>;

fn range(ty: IntTy) -> (i128, i128) {
    let b = ty.bits();
    if ty.signed() {
        (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
    } else {
        (0, (1i128 << b) - 1)
    }
}

/// Conversion to `ty` (modulo for unsigned targets; gcc's modulo for
/// out-of-range signed targets, which is implementation-defined, not UB).
pub(crate) fn convert(x: CInt, ty: IntTy) -> CInt {
    let m = 1i128 << ty.bits();
    let mut v = x.v.rem_euclid(m);
    if ty.signed() && v > range(ty).1 {
        v -= m;
    }
    CInt { v, ty }
}

/// The result of an arithmetic operation in `ty`: wraps if unsigned,
/// is undefined (rejected) on signed overflow.
fn arith_result(v: i128, ty: IntTy) -> R<CInt> {
    if ty.signed() {
        let (lo, hi) = range(ty);
        if v < lo || v > hi {
            return Err(Illegal::SignedOverflow);
        }
        Ok(CInt { v, ty })
    } else {
        Ok(convert(CInt { v, ty }, ty))
    }
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

fn binary(op: Op, a: CInt, b: CInt) -> R<CInt> {
    let t = IntTy::common(a.ty, b.ty);
    let (x, y) = (convert(a, t).v, convert(b, t).v);
    let v = match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        // Divisors are positive constants.
        Op::Div => x / y,
    };
    arith_result(v, t)
}

fn compare(op: CmpOp, a: CInt, b: CInt) -> bool {
    let t = IntTy::common(a.ty, b.ty);
    let (x, y) = (convert(a, t).v, convert(b, t).v);
    match op {
        CmpOp::Lt => x < y,
        CmpOp::Le => x <= y,
        CmpOp::Gt => x > y,
        CmpOp::Ge => x >= y,
        CmpOp::Eq => x == y,
        CmpOp::Ne => x != y,
    }
}

/// One array: in discovery mode its storage (unbounded, recording the
/// range of every subscript); in checked mode its extents (its elements
/// are in the layout's buffers).
struct Store {
    name: String,
    elem: Elem,
    id: usize,
    extents: Vec<usize>,
    data: HashMap<Vec<i128>, Val>,
    /// Per dimension, the smallest and largest subscript seen (unsigned
    /// values read as two's complement, so `0UL - 1` counts as -1).
    seen: Vec<Option<(i128, i128)>>,
}

/// The interpreter's state for one run.
pub(crate) struct Machine<'p> {
    p: &'p Program,
    vars: Vec<CInt>,
    arrays: Vec<Store>,
    scalars: Vec<Val>,
    checked: bool,
    budget: usize,
    /// Checked mode: where the arrays are, and the elements each buffer
    /// holds that the run wrote (by position).
    layout: Layout,
    mem: Vec<HashMap<u64, Val>>,
    /// The address of the loop whose iterations run in reverse order
    /// (the directive mode's test that they commute, `directive.rs`).
    reversed: Option<usize>,
}

/// Statement instances and loop iterations one run may take.
pub(crate) const BUDGET: usize = 30_000;

impl<'p> Machine<'p> {
    /// `checked`: the arrays have their extents, each in a buffer of its
    /// own, and every access is bounds-checked; otherwise subscript ranges
    /// are recorded.
    pub(crate) fn new(p: &'p Program, params: &[i64], checked: bool) -> Machine<'p> {
        Self::with_layout(p, params, checked, Layout::apart(p))
    }

    /// Checked mode with the arrays where `layout` puts them (overlapping
    /// where it puts two in one buffer: a write through one is read
    /// through the other).
    pub(crate) fn overlapping(p: &'p Program, params: &[i64], layout: &Layout) -> Machine<'p> {
        Self::with_layout(p, params, true, layout.clone())
    }

    fn with_layout(p: &'p Program, params: &[i64], checked: bool, layout: Layout) -> Machine<'p> {
        let mut vars: Vec<CInt> = p.vars.iter().map(|v| CInt { v: 0, ty: v.ty }).collect();
        for (&v, &x) in p.params().iter().zip(params) {
            vars[v] = convert(
                CInt {
                    v: x as i128,
                    ty: IntTy::Long,
                },
                p.vars[v].ty,
            );
        }
        Machine {
            p,
            vars,
            arrays: p
                .arrays
                .iter()
                .enumerate()
                .map(|(id, a)| Store {
                    name: a.name.clone(),
                    elem: a.elem,
                    id,
                    extents: a.extents.clone(),
                    data: Default::default(),
                    seen: vec![None; a.rank],
                })
                .collect(),
            scalars: p
                .scalars
                .iter()
                .enumerate()
                .map(|(id, s)| scalar_init(s.elem, id))
                .collect(),
            checked,
            budget: BUDGET,
            mem: vec![HashMap::new(); layout.buffers.len()],
            layout,
            reversed: None,
        }
    }

    /// Runs `l`'s iterations (a loop of the program) in reverse order.
    pub(crate) fn reverse(&mut self, l: &Loop) {
        self.reversed = Some(l as *const Loop as usize);
    }

    fn tick(&mut self) -> R<()> {
        if self.budget == 0 {
            return Err(Illegal::TooLong);
        }
        self.budget -= 1;
        Ok(())
    }

    pub(crate) fn run(&mut self) -> R<()> {
        let p = self.p;
        self.stmts(&p.body)
    }

    fn a(&self, e: &AExpr) -> R<CInt> {
        Ok(match e {
            AExpr::Lit(v, ty) => {
                if *v < 0 {
                    // `-3`: unary minus applied to the literal 3.
                    arith_result(*v as i128, *ty)?
                } else {
                    CInt {
                        v: *v as i128,
                        ty: *ty,
                    }
                }
            }
            AExpr::Var(v) => self.vars[*v],
            AExpr::Neg(x) => {
                let x = self.a(x)?;
                arith_result(-x.v, x.ty)?
            }
            AExpr::Add(x, y) => binary(Op::Add, self.a(x)?, self.a(y)?)?,
            AExpr::Sub(x, y) => binary(Op::Sub, self.a(x)?, self.a(y)?)?,
            AExpr::Mul(c, x) => binary(
                Op::Mul,
                CInt {
                    v: *c as i128,
                    ty: IntTy::Int,
                },
                self.a(x)?,
            )?,
            AExpr::Div(x, d) => binary(
                Op::Div,
                self.a(x)?,
                CInt {
                    v: *d as i128,
                    ty: IntTy::Int,
                },
            )?,
            AExpr::Min(x, y) | AExpr::Max(x, y) => {
                // The macros: ((a) < (b) ? (a) : (b)), of the common type.
                let (x, y) = (self.a(x)?, self.a(y)?);
                let t = IntTy::common(x.ty, y.ty);
                let first = if matches!(e, AExpr::Min(..)) {
                    compare(CmpOp::Lt, x, y)
                } else {
                    compare(CmpOp::Gt, x, y)
                };
                convert(if first { x } else { y }, t)
            }
            AExpr::Cast(t, x) => convert(self.a(x)?, *t),
        })
    }

    fn cond(&self, c: &Cond) -> R<bool> {
        Ok(match c {
            Cond::Cmp(op, x, y) => compare(*op, self.a(x)?, self.a(y)?),
            Cond::And(x, y) => self.cond(x)? && self.cond(y)?,
            Cond::Or(x, y) => self.cond(x)? || self.cond(y)?,
            Cond::Not(x) => !self.cond(x)?,
        })
    }

    /// The element an access names: its key, or an out-of-bounds error.
    fn locate(&mut self, acc: &Access) -> R<Vec<i128>> {
        let mut key = Vec::with_capacity(acc.subs.len());
        for e in &acc.subs {
            let x = self.a(e)?;
            // A subscript is an offset from the array's start: an
            // unsigned value is that many elements on.
            key.push(x.v);
        }
        let st = &mut self.arrays[acc.array];
        if self.checked {
            for (k, &i) in key.iter().enumerate() {
                if i < 0 || i >= st.extents[k] as i128 {
                    return Err(Illegal::OutOfBounds {
                        array: st.name.clone(),
                    });
                }
            }
        } else {
            for (k, &i) in key.iter().enumerate() {
                let e = &acc.subs[k];
                let signed_view = {
                    let t = type_of(self.p, e);
                    if !t.signed() && i >= 1i128 << (t.bits() - 1) {
                        i - (1i128 << t.bits())
                    } else {
                        i
                    }
                };
                st.seen[k] = Some(match st.seen[k] {
                    None => (signed_view, signed_view),
                    Some((lo, hi)) => (lo.min(signed_view), hi.max(signed_view)),
                });
            }
        }
        Ok(key)
    }

    fn flat(st: &Store, key: &[i128]) -> u64 {
        let mut k: i128 = 0;
        for (d, &i) in key.iter().enumerate() {
            k = k * st.extents[d] as i128 + i;
        }
        k as u64
    }

    /// Checked mode: the buffer and position of an element.
    fn position(&self, array: usize, key: &[i128]) -> (usize, u64) {
        let (b, off) = self.layout.place[array];
        (b, off as u64 + Self::flat(&self.arrays[array], key))
    }

    fn load(&mut self, acc: &Access) -> R<Val> {
        let key = self.locate(acc)?;
        if self.checked {
            let (b, k) = self.position(acc.array, &key);
            let buf = &self.layout.buffers[b];
            return Ok(match self.mem[b].get(&k) {
                Some(v) => *v,
                None => init_value(buf.elem, buf.id, k),
            });
        }
        let st = &self.arrays[acc.array];
        Ok(match st.data.get(&key) {
            Some(v) => *v,
            None => init_value(st.elem, st.id, 0),
        })
    }

    fn store(&mut self, array: usize, key: Vec<i128>, v: Val) {
        if self.checked {
            let (b, k) = self.position(array, &key);
            self.mem[b].insert(k, v);
        } else {
            self.arrays[array].data.insert(key, v);
        }
    }

    fn v(&mut self, e: &VExpr, elem: Elem) -> R<Val> {
        Ok(match e {
            VExpr::Read(acc) => self.load(acc)?,
            VExpr::Scalar(s) => self.scalars[*s],
            VExpr::Int(c) => match elem {
                Elem::Long => Val::Long(*c),
                Elem::ULong => Val::ULong(*c as u64),
                Elem::Double => Val::Double(*c as f64),
            },
            VExpr::Float(f) => Val::Double(*f),
            VExpr::Index(v) => {
                let x = self.vars[*v];
                match elem {
                    Elem::Long => Val::Long(convert(x, IntTy::Long).v as i64),
                    Elem::ULong => Val::ULong(convert(x, IntTy::ULong).v as u64),
                    Elem::Double => Val::Double(x.v as f64),
                }
            }
            VExpr::Square(v) => {
                // `(T)x*x`: x converted, times x converted (the generator
                // keeps x small and signed).
                let x = self.vars[*v];
                match elem {
                    Elem::Long => {
                        let a = convert(x, IntTy::Long).v as i64;
                        Val::Long(a.wrapping_mul(a))
                    }
                    Elem::ULong => {
                        let a = convert(x, IntTy::ULong).v as u64;
                        Val::ULong(a.wrapping_mul(a))
                    }
                    Elem::Double => Val::Double(x.v as f64 * x.v as f64),
                }
            }
            VExpr::Add(x, y) | VExpr::Sub(x, y) | VExpr::Mul(x, y) => {
                let (x, y) = (self.v(x, elem)?, self.v(y, elem)?);
                let op = match e {
                    VExpr::Add(..) => Op::Add,
                    VExpr::Sub(..) => Op::Sub,
                    _ => Op::Mul,
                };
                val_op(op, x, y)?
            }
        })
    }

    fn stmts(&mut self, body: &[Stmt]) -> R<()> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::For(l) => {
                let ty = self.p.vars[l.var].ty;
                self.vars[l.var] = convert(self.a(&l.init)?, ty);
                // Reversed: the iterator's values first (the bounds read
                // no array), then the bodies from the last.
                let reversed = self.reversed == Some(l as *const Loop as usize);
                let mut values = Vec::new();
                loop {
                    self.tick()?;
                    if !self.cond(&l.cond)? {
                        break;
                    }
                    match reversed {
                        true => values.push(self.vars[l.var]),
                        false => self.stmts(&l.body)?,
                    }
                    // `i++`, `i--`, `i += c`, `i -= c`: i = i op c.
                    let cur = self.vars[l.var];
                    let c = CInt {
                        v: l.step.unsigned_abs() as i128,
                        ty: IntTy::Int,
                    };
                    let op = if l.step > 0 { Op::Add } else { Op::Sub };
                    let next = binary(op, cur, c)?;
                    // Assigning back converts; a wider signed result that
                    // does not fit would be implementation-defined, but
                    // `int op int` stays `int`.
                    self.vars[l.var] = convert(next, ty);
                }
                let after = self.vars[l.var];
                for v in values.into_iter().rev() {
                    self.vars[l.var] = v;
                    self.stmts(&l.body)?;
                }
                self.vars[l.var] = after;
                Ok(())
            }
            Stmt::If { cond, then, other } => {
                if self.cond(cond)? {
                    self.stmts(then)
                } else if let Some(o) = other {
                    self.stmts(o)
                } else {
                    Ok(())
                }
            }
            Stmt::IfData { read, then } => {
                let positive = match self.load(read)? {
                    Val::Long(v) => v > 0,
                    Val::ULong(v) => v > 0,
                    Val::Double(v) => v > 0.0,
                };
                if positive { self.stmts(then) } else { Ok(()) }
            }
            Stmt::Assign { lhs, add, rhs } => {
                self.tick()?;
                let elem = lhs_elem(self.p, lhs);
                let value = self.v(rhs, elem)?;
                match lhs {
                    Lhs::Scalar(s) => {
                        let new = if *add {
                            val_op(Op::Add, self.scalars[*s], value)?
                        } else {
                            value
                        };
                        self.scalars[*s] = new;
                    }
                    Lhs::Array(acc) => {
                        let new = if *add {
                            let old = self.load(acc)?;
                            val_op(Op::Add, old, value)?
                        } else {
                            value
                        };
                        let key = self.locate(acc)?;
                        self.store(acc.array, key, new);
                    }
                }
                Ok(())
            }
        }
    }

    /// Per array and dimension, the subscript range seen (discovery mode).
    pub(crate) fn ranges(&self) -> Vec<Vec<Option<(i128, i128)>>> {
        self.arrays.iter().map(|a| a.seen.clone()).collect()
    }

    /// What the compiled program prints after the call (checked mode):
    /// each buffer of the layout, then the global scalars (with the
    /// layout's prefix).
    pub(crate) fn dump(&self) -> String {
        let mut out = String::new();
        let line = |out: &mut String, v: Val| {
            let _ = match v {
                Val::Long(x) => writeln!(out, "{x}"),
                Val::ULong(x) => writeln!(out, "{x}"),
                Val::Double(x) => writeln!(out, "{:016x}", x.to_bits()),
            };
        };
        let header = |out: &mut String, name: &str, n: usize, elem: Elem| {
            let _ = writeln!(
                out,
                "begin {name} {n}{}",
                if elem == Elem::Double { " bits" } else { "" }
            );
        };
        for (buf, mem) in self.layout.buffers.iter().zip(&self.mem) {
            header(&mut out, &buf.name, buf.len, buf.elem);
            for k in 0..buf.len as u64 {
                let v = match mem.get(&k) {
                    Some(v) => *v,
                    None => init_value(buf.elem, buf.id, k),
                };
                line(&mut out, v);
            }
            let _ = writeln!(out, "end {}", buf.name);
        }
        for (s, v) in self.p.scalars.iter().zip(&self.scalars) {
            if s.local {
                continue;
            }
            let name = format!("{}{}", self.layout.prefix, s.name);
            header(&mut out, &name, 1, s.elem);
            line(&mut out, *v);
            let _ = writeln!(out, "end {name}");
        }
        out
    }
}

fn val_op(op: Op, x: Val, y: Val) -> R<Val> {
    Ok(match (x, y) {
        (Val::Long(a), Val::Long(b)) => Val::Long(
            match op {
                Op::Add => a.checked_add(b),
                Op::Sub => a.checked_sub(b),
                Op::Mul => a.checked_mul(b),
                Op::Div => a.checked_div(b),
            }
            .ok_or(Illegal::SignedOverflow)?,
        ),
        (Val::ULong(a), Val::ULong(b)) => Val::ULong(match op {
            Op::Add => a.wrapping_add(b),
            Op::Sub => a.wrapping_sub(b),
            Op::Mul => a.wrapping_mul(b),
            Op::Div => a / b,
        }),
        (Val::Double(a), Val::Double(b)) => Val::Double(match op {
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::Div => a / b,
        }),
        _ => unreachable!("the generator keeps each statement in one element type"),
    })
}

/// The C type of an integer expression.
pub(crate) fn type_of(p: &Program, e: &AExpr) -> IntTy {
    match e {
        AExpr::Lit(_, t) | AExpr::Cast(t, _) => *t,
        AExpr::Var(v) => p.vars[*v].ty,
        AExpr::Neg(x) => type_of(p, x),
        AExpr::Add(x, y) | AExpr::Sub(x, y) | AExpr::Min(x, y) | AExpr::Max(x, y) => {
            IntTy::common(type_of(p, x), type_of(p, y))
        }
        AExpr::Mul(_, x) | AExpr::Div(x, _) => IntTy::common(IntTy::Int, type_of(p, x)),
    }
}

#[cfg(test)]
mod tests;
