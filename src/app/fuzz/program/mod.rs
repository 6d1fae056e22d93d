//! The fuzzer's own small language of SCoPs: its syntax tree, a random
//! generator and the printer to a complete C program (parameters from
//! `argv`, deterministic initialization, the SCoP in a function, every
//! array printed in the `lab::dump` format). The tree is here; the
//! printer is `print.rs` (`alias.rs` for `--alias`: arrays as pointer
//! parameters, the kernel called with some of them overlapping), the
//! generator `random.rs`.

mod alias;
mod print;
mod random;

pub(crate) use alias::print_alias_program;
pub(crate) use print::{init_value, lhs_elem, print_program, scalar_init};
pub use random::{GenOptions, generate, random_params};

/// The C integer types of iterators, parameters and literals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntTy {
    Int,
    Long,
    UInt,
    ULong,
}

impl IntTy {
    pub(crate) fn c_name(self) -> &'static str {
        match self {
            IntTy::Int => "int",
            IntTy::Long => "long",
            IntTy::UInt => "unsigned",
            IntTy::ULong => "unsigned long",
        }
    }

    pub(crate) fn suffix(self) -> &'static str {
        match self {
            IntTy::Int => "",
            IntTy::Long => "L",
            IntTy::UInt => "U",
            IntTy::ULong => "UL",
        }
    }

    pub(crate) fn bits(self) -> u32 {
        match self {
            IntTy::Int | IntTy::UInt => 32,
            IntTy::Long | IntTy::ULong => 64,
        }
    }

    pub(crate) fn signed(self) -> bool {
        matches!(self, IntTy::Int | IntTy::Long)
    }

    /// C's usual arithmetic conversions (LP64; every operand is at least
    /// `int`, so no promotion is needed).
    pub(crate) fn common(a: IntTy, b: IntTy) -> IntTy {
        if a == b {
            return a;
        }
        if a.signed() == b.signed() {
            return if a.bits() >= b.bits() { a } else { b };
        }
        let (s, u) = if a.signed() { (a, b) } else { (b, a) };
        if u.bits() >= s.bits() {
            u
        } else {
            // A wider signed type holds every value of the unsigned one.
            s
        }
    }
}

/// Element type of an array or scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    /// `long`: exact, and the interpreter rejects any signed overflow.
    Long,
    /// `unsigned long`: exact, wraps.
    ULong,
    /// `double`: compared within a tolerance.
    Double,
}

impl Elem {
    pub(crate) fn c_name(self) -> &'static str {
        match self {
            Elem::Long => "long",
            Elem::ULong => "unsigned long",
            Elem::Double => "double",
        }
    }
}

/// An integer expression: loop bound, condition operand or subscript.
#[derive(Debug, Clone, PartialEq)]
pub enum AExpr {
    /// A literal of a type (negative only for signed types).
    Lit(i64, IntTy),
    /// An iterator or parameter.
    Var(usize),
    Neg(Box<AExpr>),
    Add(Box<AExpr>, Box<AExpr>),
    Sub(Box<AExpr>, Box<AExpr>),
    /// `c * e` with an `int` constant.
    Mul(i64, Box<AExpr>),
    /// `e / d`, C's truncating division by a positive `int` constant.
    Div(Box<AExpr>, i64),
    Min(Box<AExpr>, Box<AExpr>),
    Max(Box<AExpr>, Box<AExpr>),
    Cast(IntTy, Box<AExpr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl CmpOp {
    fn symbol(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
        }
    }
}

/// An affine condition (loop bounds and `if`s).
#[derive(Debug, Clone, PartialEq)]
pub enum Cond {
    Cmp(CmpOp, AExpr, AExpr),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
    Not(Box<Cond>),
}

/// An array element access.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    pub array: usize,
    pub subs: Vec<AExpr>,
}

/// A value expression, all of one element type (that of the statement).
#[derive(Debug, Clone, PartialEq)]
pub enum VExpr {
    Read(Access),
    Scalar(usize),
    Int(i64),
    Float(f64),
    /// An iterator or parameter, cast to the element type.
    Index(usize),
    /// The square of a signed iterator or parameter through a macro that
    /// does not parenthesize its argument, `(double)PT_SQ(i)` with
    /// `#define PT_SQ(x) x*x`: written back with the iterator replaced by
    /// a sum, it must stay the square of the sum.
    Square(usize),
    Add(Box<VExpr>, Box<VExpr>),
    Sub(Box<VExpr>, Box<VExpr>),
    Mul(Box<VExpr>, Box<VExpr>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Lhs {
    Array(Access),
    Scalar(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Loop {
    pub var: usize,
    pub init: AExpr,
    pub cond: Cond,
    /// Non-zero.
    pub step: i64,
    pub body: Vec<Stmt>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    For(Loop),
    If {
        cond: Cond,
        then: Vec<Stmt>,
        other: Option<Vec<Stmt>>,
    },
    Assign {
        lhs: Lhs,
        /// `+=` instead of `=`.
        add: bool,
        rhs: VExpr,
    },
    /// `if (A[...] > 0) { ... }`: a condition on data, as real code clips
    /// and thresholds (the front end makes it one compound statement).
    IfData {
        read: Access,
        then: Vec<Stmt>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Var {
    pub name: String,
    pub ty: IntTy,
    pub param: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    pub name: String,
    pub elem: Elem,
    pub rank: usize,
    /// Decided after interpretation (every access in bounds).
    pub extents: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    pub name: String,
    pub elem: Elem,
    /// Declared in the kernel and never read after its SCoP (so not
    /// dumped): what `priv=1` and `exp=1` may privatize or expand.
    pub local: bool,
}

/// A parameter `n` and an iterator `i`, both `long`: the variables of
/// the programs the unit tests build by hand.
#[cfg(test)]
pub(crate) fn n_and_i() -> Vec<Var> {
    ["n", "i"]
        .map(|name| Var {
            name: name.into(),
            ty: IntTy::Long,
            param: name == "n",
        })
        .to_vec()
}

/// A generated program and the parameter values it is legal at.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    pub vars: Vec<Var>,
    pub arrays: Vec<Array>,
    pub scalars: Vec<Scalar>,
    pub body: Vec<Stmt>,
    /// One value per parameter (in `params()` order), per set.
    pub param_sets: Vec<Vec<i64>>,
    /// Deepest loop nest.
    pub depth: usize,
}

impl Program {
    /// Parameter variable indices, in `argv` order.
    pub(crate) fn params(&self) -> Vec<usize> {
        (0..self.vars.len())
            .filter(|&v| self.vars[v].param)
            .collect()
    }

    /// Command-line arguments of one parameter set.
    pub(crate) fn args(&self, set: usize) -> Vec<String> {
        self.param_sets[set].iter().map(|v| v.to_string()).collect()
    }

    /// `n=3 m=0`.
    pub(crate) fn describe_params(&self, set: usize) -> String {
        self.params()
            .iter()
            .zip(&self.param_sets[set])
            .map(|(&v, x)| format!("{}={x}", self.vars[v].name))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A block of memory one call of the kernel passes its arrays in (`--alias`).
#[derive(Debug, Clone, PartialEq)]
pub struct Buffer {
    /// Its C name, which is also its name in the dump.
    pub name: String,
    pub elem: Elem,
    /// Which initial values it holds (`init_value`'s `id`).
    pub id: usize,
    /// Elements.
    pub len: usize,
}

/// Where one call of the kernel finds its arrays: each array at an offset
/// in one of the call's buffers; a buffer that holds two arrays makes them
/// overlap.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// What the call's dump names begin with (`""` for the call with the
    /// arrays apart, whose dump is the normal mode's).
    pub prefix: String,
    pub buffers: Vec<Buffer>,
    /// Per array: its buffer and its offset there, in elements.
    pub place: Vec<(usize, usize)>,
}

impl Layout {
    /// Every array in its own buffer, named and initialized as the array.
    pub fn apart(p: &Program) -> Layout {
        Layout {
            prefix: String::new(),
            buffers: p
                .arrays
                .iter()
                .enumerate()
                .map(|(id, a)| Buffer {
                    name: a.name.clone(),
                    elem: a.elem,
                    id,
                    len: a.extents.iter().product(),
                })
                .collect(),
            place: (0..p.arrays.len()).map(|a| (a, 0)).collect(),
        }
    }

    /// The arrays that share a buffer with another, grouped by buffer.
    pub fn shared(&self) -> Vec<Vec<usize>> {
        (0..self.buffers.len())
            .map(|b| {
                (0..self.place.len())
                    .filter(|&a| self.place[a].0 == b)
                    .collect::<Vec<_>>()
            })
            .filter(|g| g.len() > 1)
            .collect()
    }
}
