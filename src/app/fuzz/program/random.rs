//! The random generator of programs and of their parameter values.
//!
//! Why one file: one generator whose methods draw each construct and call
//! one another recursively, sharing its scope, counters and random stream,
//! whose order of draws fixes every seed's program.

use super::*;
use crate::lab::rng::SplitMix64;

const ITER_NAMES: [&str; 4] = ["i", "j", "k", "l"];
const PARAM_NAMES: [&str; 3] = ["n", "m", "q"];

fn pick_int_ty(rng: &mut SplitMix64, unsigned_share: f64) -> IntTy {
    let x = rng.unit();
    if x < unsigned_share * 0.7 {
        IntTy::ULong
    } else if x < unsigned_share {
        IntTy::UInt
    } else if x < unsigned_share + (1.0 - unsigned_share) * 0.2 {
        IntTy::Int
    } else {
        IntTy::Long
    }
}

/// What the generator may use (to look past known bugs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenOptions {
    /// Unsigned iterators, parameters, literals and casts.
    pub unsigned: bool,
    /// Parameter values 0 and below.
    pub nonpositive: bool,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            unsigned: true,
            nonpositive: true,
        }
    }
}

struct Gen<'r> {
    rng: &'r mut SplitMix64,
    opts: GenOptions,
    p: Program,
    scope: Vec<usize>,
    max_depth: usize,
    stmts: usize,
}

/// A random program, before its arrays are sized.
pub fn generate(rng: &mut SplitMix64, opts: GenOptions) -> Program {
    let ushare = if opts.unsigned { 1.0 } else { 0.0 };
    let max_depth = 1 + rng.below(4);
    let mut p = Program {
        vars: Vec::new(),
        arrays: Vec::new(),
        scalars: Vec::new(),
        body: Vec::new(),
        param_sets: Vec::new(),
        depth: 0,
    };
    for name in PARAM_NAMES.iter().take(1 + rng.below(3)) {
        let ty = pick_int_ty(rng, 0.2 * ushare);
        p.vars.push(Var {
            name: name.to_string(),
            ty,
            param: true,
        });
    }
    // One element type for the whole program half of the time, so that
    // statements have something to read.
    let uniform = rng.chance(0.5);
    let pick_elem = |rng: &mut SplitMix64| match rng.below(3) {
        0 => Elem::Long,
        1 => Elem::ULong,
        _ => Elem::Double,
    };
    let first = pick_elem(rng);
    for (k, name) in ["A", "B", "C", "D"]
        .iter()
        .take(2 + rng.below(3))
        .enumerate()
    {
        let elem = if uniform || k == 0 {
            first
        } else {
            pick_elem(rng)
        };
        let rank = 1 + rng.below(3.min(max_depth.max(1)));
        p.arrays.push(Array {
            name: name.to_string(),
            elem,
            rank,
            extents: vec![1; rank],
        });
    }
    for name in ["s0", "s1"].iter().take(rng.below(3)) {
        let elem = if uniform { first } else { pick_elem(rng) };
        p.scalars.push(Scalar {
            name: name.to_string(),
            elem,
            // (Decided by name: the draws stay those of earlier versions.)
            local: *name == "s1",
        });
    }
    let mut g = Gen {
        rng,
        opts,
        p,
        scope: Vec::new(),
        max_depth,
        stmts: 0,
    };
    let nests = 1 + g.rng.below(3);
    let mut body = Vec::new();
    for _ in 0..nests {
        if g.rng.chance(0.1) {
            body.push(g.assign());
        } else if let Some(c) = g.rng.chance(0.15).then(|| g.contraction()).flatten() {
            body.push(c);
        } else {
            body.push(g.for_loop(0));
        }
    }
    g.p.body = body;
    g.p
}

impl Gen<'_> {
    fn params(&self) -> Vec<usize> {
        self.p.params()
    }

    fn lit(&mut self, lo: i64, hi: i64) -> AExpr {
        let v = lo + self.rng.below((hi - lo + 1) as usize) as i64;
        if v < 0 {
            AExpr::Lit(v, IntTy::Int)
        } else if self.rng.chance(0.12) {
            let t = [IntTy::Long, IntTy::UInt, IntTy::ULong][self.rng.below(3)];
            AExpr::Lit(v, if self.opts.unsigned { t } else { IntTy::Long })
        } else {
            AExpr::Lit(v, IntTy::Int)
        }
    }

    fn param(&mut self) -> AExpr {
        let ps = self.params();
        AExpr::Var(ps[self.rng.below(ps.len())])
    }

    fn outer(&mut self) -> Option<AExpr> {
        if self.scope.is_empty() {
            None
        } else {
            Some(AExpr::Var(self.scope[self.rng.below(self.scope.len())]))
        }
    }

    fn plus_const(&mut self, e: AExpr, lo: i64, hi: i64) -> AExpr {
        let c = lo + self.rng.below((hi - lo + 1) as usize) as i64;
        match c {
            0 => e,
            c if c > 0 => AExpr::Add(Box::new(e), Box::new(self.lit(c, c))),
            c => AExpr::Sub(Box::new(e), Box::new(self.lit(-c, -c))),
        }
    }

    /// A lower end of an iteration range.
    fn low(&mut self, may_minmax: bool) -> AExpr {
        match self.rng.below(9) {
            0..=2 => self.lit(0, 1),
            3 => self.lit(-2, 3),
            4 => {
                let p = self.param();
                AExpr::Neg(Box::new(p))
            }
            5 => {
                let p = self.param();
                self.plus_const(p, -3, 1)
            }
            6 | 7 => match self.outer() {
                Some(o) => self.plus_const(o, -1, 2),
                None => self.lit(0, 2),
            },
            _ => match self.outer() {
                Some(o) if may_minmax => {
                    let o = self.plus_const(o, -2, 0);
                    let l = self.lit(0, 1);
                    AExpr::Max(Box::new(l), Box::new(o))
                }
                _ => self.lit(0, 0),
            },
        }
    }

    /// An upper end of an iteration range.
    fn high(&mut self, may_minmax: bool) -> AExpr {
        match self.rng.below(12) {
            0..=3 => {
                let p = self.param();
                self.plus_const(p, -2, 2)
            }
            4 => self.lit(0, 12),
            5 => {
                // An unsigned literal bound: `i < 5UL` (C compares unsigned).
                let v = self.rng.below(10) as i64;
                let t = [IntTy::ULong, IntTy::UInt][self.rng.below(2)];
                AExpr::Lit(v, if self.opts.unsigned { t } else { IntTy::Long })
            }
            6 | 7 => match self.outer() {
                Some(o) => self.plus_const(o, 0, 3),
                None => self.lit(3, 10),
            },
            8 => match self.outer() {
                Some(o) if may_minmax => {
                    let p = self.param();
                    let o = self.plus_const(o, 0, 2);
                    AExpr::Min(Box::new(p), Box::new(o))
                }
                _ => self.param(),
            },
            9 => {
                let p = self.param();
                AExpr::Mul(2, Box::new(p))
            }
            10 if self.rng.chance(0.3) => {
                let p = self.param();
                AExpr::Div(Box::new(p), 2 + self.rng.below(2) as i64)
            }
            10 => self.param(),
            _ => {
                let p = self.param();
                let c = [IntTy::Long, IntTy::ULong, IntTy::Int][self.rng.below(3)];
                let c = if self.opts.unsigned || c.signed() {
                    c
                } else {
                    IntTy::Long
                };
                AExpr::Cast(c, Box::new(p))
            }
        }
    }

    fn for_loop(&mut self, depth: usize) -> Stmt {
        let d = self.scope.len();
        let var = self.p.vars.len();
        let name = format!("{}{}", ITER_NAMES[d.min(3)], self.stmts);
        self.stmts += 1;
        let ty = pick_int_ty(self.rng, if self.opts.unsigned { 0.15 } else { 0.0 });
        self.p.vars.push(Var {
            name,
            ty,
            param: false,
        });
        let step = match self.rng.below(20) {
            0..=13 => 1,
            14..=16 => -1,
            17 => 2,
            18 => -2,
            _ => 3,
        };
        let unit = step == 1 || step == -1;
        let (init, cond) = if step > 0 {
            let init = self.low(unit);
            let hi = self.high(true);
            let op = if self.rng.chance(0.6) {
                CmpOp::Lt
            } else {
                CmpOp::Le
            };
            let mut c = Cond::Cmp(op, AExpr::Var(var), hi);
            if self.rng.chance(0.12) {
                let h2 = self.high(true);
                c = Cond::And(
                    Box::new(c),
                    Box::new(Cond::Cmp(CmpOp::Lt, AExpr::Var(var), h2)),
                );
            }
            (init, c)
        } else {
            let init = self.high(unit);
            let lo = self.low(true);
            let op = if self.rng.chance(0.6) {
                CmpOp::Ge
            } else {
                CmpOp::Gt
            };
            (init, Cond::Cmp(op, AExpr::Var(var), lo))
        };
        self.scope.push(var);
        self.p.depth = self.p.depth.max(self.scope.len());
        let body = self.body(depth + 1);
        self.scope.pop();
        Stmt::For(Loop {
            var,
            init,
            cond,
            step,
            body,
        })
    }

    /// A contraction, the shape register blocking takes: three loops of
    /// step 1 (their bounds drawn as any loop's, so possibly triangular or
    /// with `min`/`max`) around `X[i+a][j+b] += F(i, k) * G(k, j) ...` on
    /// arrays of doubles, with offsets, transposed operands, a scalar or
    /// constant factor and sometimes a second product. `None` when the
    /// program has no two-dimensional array of doubles.
    fn contraction(&mut self) -> Option<Stmt> {
        let doubles: Vec<usize> = (0..self.p.arrays.len())
            .filter(|&a| self.p.arrays[a].elem == Elem::Double)
            .collect();
        let target = *doubles.iter().find(|&&a| self.p.arrays[a].rank >= 2)?;
        let vars = self.contraction_loops();
        let [i, j, k] = [vars[0].0, vars[1].0, vars[2].0].map(AExpr::Var);
        // Which loop is the reduction one: usually the innermost.
        let (i, j, k) = match self.rng.below(4) {
            0 => (i, k, j),
            _ => (i, j, k),
        };
        let lhs_subs = self.contraction_subscripts(&i, &j, self.p.arrays[target].rank);
        // Operands other than the target where the program has them (the
        // target read elsewhere is a nest register blocking refuses).
        let others: Vec<usize> = doubles.iter().copied().filter(|&a| a != target).collect();
        let operands = if others.is_empty() || self.rng.chance(0.1) {
            doubles.clone()
        } else {
            others
        };
        let mut rhs = self.contraction_term(&operands, [&i, &j, &k]);
        if self.rng.chance(0.25) {
            let t = self.contraction_term(&operands, [&i, &j, &k]);
            rhs = VExpr::Add(Box::new(rhs), Box::new(t));
        }
        let mut body = vec![Stmt::Assign {
            lhs: Lhs::Array(Access {
                array: target,
                subs: lhs_subs,
            }),
            add: true,
            rhs,
        }];
        for (var, init, cond) in vars.into_iter().rev() {
            self.scope.pop();
            body = vec![Stmt::For(Loop {
                var,
                init,
                cond,
                step: 1,
                body,
            })];
        }
        body.pop()
    }

    /// The three loops of a contraction, outermost first, as (variable,
    /// initial value, condition); their variables are in scope after it
    /// (the caller leaves the scopes when it builds the loops).
    fn contraction_loops(&mut self) -> Vec<(usize, AExpr, Cond)> {
        let mut vars = Vec::new();
        for _ in 0..3 {
            let var = self.p.vars.len();
            let name = format!("{}{}", ITER_NAMES[self.scope.len().min(3)], self.stmts);
            self.stmts += 1;
            let ty = pick_int_ty(self.rng, if self.opts.unsigned { 0.15 } else { 0.0 });
            self.p.vars.push(Var {
                name,
                ty,
                param: false,
            });
            // Mostly the bounds of a dense kernel (0 or 1 to a parameter,
            // or to an outer iterator: triangular), else any loop's.
            let (init, hi) = if self.rng.chance(0.7) {
                let init = self.lit(0, 1);
                let hi = match self.outer() {
                    Some(o) if self.rng.chance(0.25) => self.plus_const(o, 0, 1),
                    _ => {
                        let p = self.param();
                        self.plus_const(p, -1, 2)
                    }
                };
                (init, hi)
            } else {
                (self.low(true), self.high(true))
            };
            let op = if self.rng.chance(0.6) {
                CmpOp::Lt
            } else {
                CmpOp::Le
            };
            vars.push((var, init, Cond::Cmp(op, AExpr::Var(var), hi)));
            self.scope.push(var);
        }
        self.p.depth = self.p.depth.max(self.scope.len());
        vars
    }

    /// The subscripts of an element at (`a`, `b`) with small offsets, for
    /// an array of `rank` dimensions (cut, or padded with constants).
    fn contraction_subscripts(&mut self, a: &AExpr, b: &AExpr, rank: usize) -> Vec<AExpr> {
        let mut subs = vec![
            self.plus_const(a.clone(), -1, 1),
            self.plus_const(b.clone(), -1, 1),
        ];
        subs.truncate(rank);
        while subs.len() < rank {
            subs.push(self.lit(0, 1));
        }
        subs
    }

    /// One product of a contraction's right-hand side, `F(i, k) * G(k, j)`
    /// on two of `operands` (either possibly transposed), sometimes scaled
    /// by a scalar or a constant.
    fn contraction_term(&mut self, operands: &[usize], [i, j, k]: [&AExpr; 3]) -> VExpr {
        let a = operands[self.rng.below(operands.len())];
        let b = operands[self.rng.below(operands.len())];
        let (rank_a, rank_b) = (self.p.arrays[a].rank, self.p.arrays[b].rank);
        let left = if self.rng.chance(0.7) {
            self.contraction_subscripts(i, k, rank_a)
        } else {
            self.contraction_subscripts(k, i, rank_a)
        };
        let right = if self.rng.chance(0.7) {
            self.contraction_subscripts(k, j, rank_b)
        } else {
            self.contraction_subscripts(j, k, rank_b)
        };
        let mut t = VExpr::Mul(
            Box::new(VExpr::Read(Access {
                array: a,
                subs: left,
            })),
            Box::new(VExpr::Read(Access {
                array: b,
                subs: right,
            })),
        );
        if self.rng.chance(0.5) {
            let c = self.leaf(Elem::Double);
            t = if self.rng.chance(0.5) {
                VExpr::Mul(Box::new(c), Box::new(t))
            } else {
                VExpr::Mul(Box::new(t), Box::new(c))
            };
        }
        t
    }

    fn body(&mut self, depth: usize) -> Vec<Stmt> {
        let n = 1 + self.rng.below(3);
        let mut v = Vec::new();
        for _ in 0..n {
            let x = self.rng.unit();
            if depth < self.max_depth && x < 0.45 {
                v.push(self.for_loop(depth));
            } else if x < 0.52 && depth > 0 && !self.p.arrays.is_empty() {
                // A condition on data.
                let a = self.rng.below(self.p.arrays.len());
                let read = self.access(a);
                let then = self.body_flat();
                v.push(Stmt::IfData { read, then });
            } else if x < 0.6 && depth > 0 {
                let cond = self.cond(0);
                let then = self.body_flat();
                let other = if self.rng.chance(0.3) {
                    Some(self.body_flat())
                } else {
                    None
                };
                v.push(Stmt::If { cond, then, other });
            } else if x < 0.7 && depth > 0 && self.p.scalars.iter().any(|s| s.local) {
                v.extend(self.temporary());
            } else {
                v.push(self.assign());
            }
        }
        v
    }

    /// A local scalar used as a temporary inside a loop body: set, then
    /// read by an assignment to an array (what `priv=1` privatizes and
    /// `exp=1` expands).
    fn temporary(&mut self) -> Vec<Stmt> {
        let locals: Vec<usize> = (0..self.p.scalars.len())
            .filter(|&s| self.p.scalars[s].local)
            .collect();
        let t = locals[self.rng.below(locals.len())];
        let elem = self.p.scalars[t].elem;
        let set = Stmt::Assign {
            lhs: Lhs::Scalar(t),
            add: false,
            rhs: self.value(elem, 0),
        };
        let arrays: Vec<usize> = (0..self.p.arrays.len())
            .filter(|&a| self.p.arrays[a].elem == elem)
            .collect();
        if arrays.is_empty() {
            return vec![set];
        }
        let a = arrays[self.rng.below(arrays.len())];
        let lhs = Lhs::Array(self.access(a));
        let add = self.rng.chance(0.25);
        let rhs = VExpr::Add(Box::new(self.value(elem, 1)), Box::new(VExpr::Scalar(t)));
        vec![set, Stmt::Assign { lhs, add, rhs }]
    }

    fn body_flat(&mut self) -> Vec<Stmt> {
        (0..1 + self.rng.below(2)).map(|_| self.assign()).collect()
    }

    fn operand(&mut self) -> AExpr {
        match self.rng.below(6) {
            0..=2 => match self.outer() {
                Some(o) => o,
                None => self.param(),
            },
            3 => self.param(),
            4 => self.lit(-1, 6),
            _ => match self.outer() {
                Some(o) => {
                    let p = self.outer().unwrap_or_else(|| self.param());
                    AExpr::Add(Box::new(o), Box::new(p))
                }
                None => self.lit(0, 3),
            },
        }
    }

    fn cond(&mut self, nest: usize) -> Cond {
        let x = self.rng.unit();
        if nest < 2 && x < 0.15 {
            Cond::And(Box::new(self.cond(nest + 1)), Box::new(self.cond(nest + 1)))
        } else if nest < 2 && x < 0.25 {
            Cond::Or(Box::new(self.cond(nest + 1)), Box::new(self.cond(nest + 1)))
        } else if nest < 2 && x < 0.3 {
            Cond::Not(Box::new(self.cond(nest + 1)))
        } else {
            let op = [
                CmpOp::Lt,
                CmpOp::Le,
                CmpOp::Gt,
                CmpOp::Ge,
                CmpOp::Eq,
                CmpOp::Ne,
            ][self.rng.below(6)];
            let a = self.operand();
            let b = self.operand();
            let b = self.plus_const(b, -2, 2);
            Cond::Cmp(op, a, b)
        }
    }

    fn subscript(&mut self) -> AExpr {
        match self.rng.below(10) {
            0..=5 => match self.outer() {
                Some(o) => self.plus_const(o, -1, 1),
                None => self.lit(0, 3),
            },
            6 => match self.outer() {
                Some(o) => AExpr::Mul(2, Box::new(o)),
                None => self.lit(0, 3),
            },
            7 => match self.outer() {
                Some(o) => {
                    let o2 = self.outer().expect("scope is not empty");
                    AExpr::Add(Box::new(o), Box::new(o2))
                }
                None => self.lit(0, 3),
            },
            8 => match self.outer() {
                Some(o) if self.rng.chance(0.2) => AExpr::Div(Box::new(o), 2),
                Some(o) => o,
                None => self.lit(0, 3),
            },
            _ => {
                if self.rng.chance(0.5) {
                    self.lit(0, 2)
                } else {
                    let p = self.param();
                    self.plus_const(p, -1, 1)
                }
            }
        }
    }

    fn access(&mut self, array: usize) -> Access {
        let rank = self.p.arrays[array].rank;
        Access {
            array,
            subs: (0..rank).map(|_| self.subscript()).collect(),
        }
    }

    fn assign(&mut self) -> Stmt {
        let to_scalar = !self.p.scalars.is_empty() && self.rng.chance(0.2);
        let lhs = if to_scalar {
            Lhs::Scalar(self.rng.below(self.p.scalars.len()))
        } else {
            let a = self.rng.below(self.p.arrays.len());
            Lhs::Array(self.access(a))
        };
        let elem = lhs_elem(&self.p, &lhs);
        let add = self.rng.chance(if to_scalar { 0.7 } else { 0.25 });
        let rhs = self.value(elem, 0);
        Stmt::Assign { lhs, add, rhs }
    }

    fn leaf(&mut self, elem: Elem) -> VExpr {
        let arrays: Vec<usize> = (0..self.p.arrays.len())
            .filter(|&a| self.p.arrays[a].elem == elem)
            .collect();
        let scalars: Vec<usize> = (0..self.p.scalars.len())
            .filter(|&s| self.p.scalars[s].elem == elem)
            .collect();
        match self.rng.below(10) {
            0..=5 if !arrays.is_empty() => {
                let a = arrays[self.rng.below(arrays.len())];
                VExpr::Read(self.access(a))
            }
            6 if !scalars.is_empty() => VExpr::Scalar(scalars[self.rng.below(scalars.len())]),
            7 => match self.outer() {
                // Now and then through a macro that pastes its argument.
                Some(AExpr::Var(v)) if self.p.vars[v].ty.signed() && self.rng.chance(0.3) => {
                    VExpr::Square(v)
                }
                Some(AExpr::Var(v)) => VExpr::Index(v),
                _ => {
                    let ps = self.params();
                    VExpr::Index(ps[self.rng.below(ps.len())])
                }
            },
            _ => self.constant(elem),
        }
    }

    fn constant(&mut self, elem: Elem) -> VExpr {
        match elem {
            Elem::Double => VExpr::Float([0.5, 1.5, 2.0, 0.25, -1.0, 3.0][self.rng.below(6)]),
            _ => VExpr::Int(self.rng.below(7) as i64 - 1),
        }
    }

    fn value(&mut self, elem: Elem, nest: usize) -> VExpr {
        if nest >= 2 || self.rng.chance(0.3) {
            return self.leaf(elem);
        }
        let a = self.value(elem, nest + 1);
        match self.rng.below(5) {
            0 | 1 => VExpr::Add(Box::new(a), Box::new(self.value(elem, nest + 1))),
            2 => VExpr::Sub(Box::new(a), Box::new(self.value(elem, nest + 1))),
            3 if elem != Elem::Long => {
                VExpr::Mul(Box::new(a), Box::new(self.value(elem, nest + 1)))
            }
            _ => {
                let c = self.constant(elem);
                VExpr::Mul(Box::new(a), Box::new(c))
            }
        }
    }
}

/// Random parameter values for `p` (0, 1 and negative ones included;
/// unsigned parameters never negative), scaled to its depth.
pub fn random_params(rng: &mut SplitMix64, p: &Program, opts: GenOptions) -> Vec<i64> {
    let top: i64 = match p.depth {
        0 | 1 => 60,
        2 => 30,
        3 => 10,
        _ => 6,
    };
    p.params()
        .iter()
        .map(|&v| {
            let signed = p.vars[v].ty.signed();
            let x = rng.below(100);
            let val = match x {
                0..=14 => 0,
                15..=27 => 1,
                28..=42 => -(1 + rng.below(4) as i64),
                43..=67 => 2 + rng.below(7) as i64,
                _ => 2 + rng.below(top as usize - 1) as i64,
            };
            let val = if !signed && val < 0 { -val } else { val };
            if opts.nonpositive { val } else { val.max(1) }
        })
        .collect()
}
