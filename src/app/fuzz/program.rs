//! The fuzzer's own small language of SCoPs: its syntax tree, a random
//! generator and the printer to a complete C program (parameters from
//! `argv`, deterministic initialization, the SCoP in a function, every
//! array printed in the `lab::dump` format).

use super::Rng;
use std::fmt::Write;

/// The C integer types of iterators, parameters and literals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntTy {
    Int,
    Long,
    UInt,
    ULong,
}

impl IntTy {
    pub fn c_name(self) -> &'static str {
        match self {
            IntTy::Int => "int",
            IntTy::Long => "long",
            IntTy::UInt => "unsigned",
            IntTy::ULong => "unsigned long",
        }
    }

    pub fn suffix(self) -> &'static str {
        match self {
            IntTy::Int => "",
            IntTy::Long => "L",
            IntTy::UInt => "U",
            IntTy::ULong => "UL",
        }
    }

    pub fn bits(self) -> u32 {
        match self {
            IntTy::Int | IntTy::UInt => 32,
            IntTy::Long | IntTy::ULong => 64,
        }
    }

    pub fn signed(self) -> bool {
        matches!(self, IntTy::Int | IntTy::Long)
    }

    /// C's usual arithmetic conversions (LP64; every operand is at least
    /// `int`, so no promotion is needed).
    pub fn common(a: IntTy, b: IntTy) -> IntTy {
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
    pub fn c_name(self) -> &'static str {
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
    pub fn params(&self) -> Vec<usize> {
        (0..self.vars.len())
            .filter(|&v| self.vars[v].param)
            .collect()
    }

    /// Command-line arguments of one parameter set.
    pub fn args(&self, set: usize) -> Vec<String> {
        self.param_sets[set].iter().map(|v| v.to_string()).collect()
    }

    /// `n=3 m=0`.
    pub fn describe_params(&self, set: usize) -> String {
        self.params()
            .iter()
            .zip(&self.param_sets[set])
            .map(|(&v, x)| format!("{}={x}", self.vars[v].name))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

// ---- printing ------------------------------------------------------------

fn atomic_a(p: &Program, e: &AExpr) -> String {
    match e {
        AExpr::Var(_) => print_a(p, e),
        AExpr::Lit(v, _) if *v >= 0 => print_a(p, e),
        AExpr::Min(..) | AExpr::Max(..) => print_a(p, e),
        _ => format!("({})", print_a(p, e)),
    }
}

/// C text of an integer expression.
pub fn print_a(p: &Program, e: &AExpr) -> String {
    match e {
        AExpr::Lit(v, ty) => format!("{v}{}", ty.suffix()),
        AExpr::Var(v) => p.vars[*v].name.clone(),
        AExpr::Neg(a) => format!("-{}", atomic_a(p, a)),
        AExpr::Add(a, b) => format!("{} + {}", atomic_a(p, a), atomic_a(p, b)),
        AExpr::Sub(a, b) => format!("{} - {}", atomic_a(p, a), atomic_a(p, b)),
        AExpr::Mul(c, a) => format!("{c} * {}", atomic_a(p, a)),
        AExpr::Div(a, d) => format!("{} / {d}", atomic_a(p, a)),
        AExpr::Min(a, b) => format!("min({}, {})", print_a(p, a), print_a(p, b)),
        AExpr::Max(a, b) => format!("max({}, {})", print_a(p, a), print_a(p, b)),
        AExpr::Cast(t, a) => format!("({}){}", t.c_name(), atomic_a(p, a)),
    }
}

fn print_cond(p: &Program, c: &Cond) -> String {
    match c {
        Cond::Cmp(op, a, b) => format!("{} {} {}", print_a(p, a), op.symbol(), print_a(p, b)),
        Cond::And(a, b) => format!("({}) && ({})", print_cond(p, a), print_cond(p, b)),
        Cond::Or(a, b) => format!("({}) || ({})", print_cond(p, a), print_cond(p, b)),
        Cond::Not(a) => format!("!({})", print_cond(p, a)),
    }
}

fn print_access(p: &Program, a: &Access) -> String {
    let mut s = p.arrays[a.array].name.clone();
    for e in &a.subs {
        let _ = write!(s, "[{}]", print_a(p, e));
    }
    s
}

fn print_v(p: &Program, e: &VExpr, elem: Elem, top: bool) -> String {
    let wrap = |s: String| if top { s } else { format!("({s})") };
    match e {
        VExpr::Read(a) => print_access(p, a),
        VExpr::Scalar(s) => p.scalars[*s].name.clone(),
        VExpr::Int(v) => {
            if *v < 0 {
                format!("({v})")
            } else {
                v.to_string()
            }
        }
        VExpr::Float(f) => {
            if *f < 0.0 {
                format!("({f:?})")
            } else {
                format!("{f:?}")
            }
        }
        VExpr::Index(v) => format!("({}){}", elem.c_name(), p.vars[*v].name),
        VExpr::Add(a, b) => wrap(format!(
            "{} + {}",
            print_v(p, a, elem, false),
            print_v(p, b, elem, false)
        )),
        VExpr::Sub(a, b) => wrap(format!(
            "{} - {}",
            print_v(p, a, elem, false),
            print_v(p, b, elem, false)
        )),
        VExpr::Mul(a, b) => wrap(format!(
            "{} * {}",
            print_v(p, a, elem, false),
            print_v(p, b, elem, false)
        )),
    }
}

/// The element type a statement computes in.
pub fn lhs_elem(p: &Program, lhs: &Lhs) -> Elem {
    match lhs {
        Lhs::Array(a) => p.arrays[a.array].elem,
        Lhs::Scalar(s) => p.scalars[*s].elem,
    }
}

fn print_stmts(p: &Program, body: &[Stmt], indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    for s in body {
        match s {
            Stmt::For(l) => {
                let v = &p.vars[l.var];
                let step = match l.step {
                    1 => format!("{}++", v.name),
                    -1 => format!("{}--", v.name),
                    s if s > 0 => format!("{} += {s}", v.name),
                    s => format!("{} -= {}", v.name, -s),
                };
                let _ = writeln!(
                    out,
                    "{pad}for ({} {} = {}; {}; {step}) {{",
                    v.ty.c_name(),
                    v.name,
                    print_a(p, &l.init),
                    print_cond(p, &l.cond)
                );
                print_stmts(p, &l.body, indent + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::If { cond, then, other } => {
                let _ = writeln!(out, "{pad}if ({}) {{", print_cond(p, cond));
                print_stmts(p, then, indent + 1, out);
                match other {
                    Some(o) => {
                        let _ = writeln!(out, "{pad}}} else {{");
                        print_stmts(p, o, indent + 1, out);
                        let _ = writeln!(out, "{pad}}}");
                    }
                    None => {
                        let _ = writeln!(out, "{pad}}}");
                    }
                }
            }
            Stmt::Assign { lhs, add, rhs } => {
                let l = match lhs {
                    Lhs::Array(a) => print_access(p, a),
                    Lhs::Scalar(s) => p.scalars[*s].name.clone(),
                };
                let op = if *add { "+=" } else { "=" };
                let _ = writeln!(
                    out,
                    "{pad}{l} {op} {};",
                    print_v(p, rhs, lhs_elem(p, lhs), true)
                );
            }
        }
    }
}

/// Initial value of element `k` (row-major flat index) of array `id`;
/// the C text below computes the same.
pub fn init_value(elem: Elem, id: usize, k: u64) -> super::interp::Val {
    use super::interp::Val;
    let id = id as u64;
    match elem {
        Elem::Long => Val::Long(((k * 7 + 3 + 5 * id) % 23) as i64 - 11),
        Elem::ULong => Val::ULong(
            k.wrapping_mul(2654435761)
                .wrapping_add(7 + id)
                .wrapping_rem(1000),
        ),
        Elem::Double => Val::Double(((k * 13 + 5 + id) % 17) as f64 / 8.0 + 0.25),
    }
}

fn init_c(elem: Elem, id: usize) -> String {
    match elem {
        Elem::Long => format!("(long)((k * 7UL + {}UL) % 23UL) - 11", 3 + 5 * id),
        Elem::ULong => format!("(k * 2654435761UL + {}UL) % 1000UL", 7 + id),
        Elem::Double => format!("(double)((k * 13UL + {}UL) % 17UL) / 8.0 + 0.25", 5 + id),
    }
}

/// Initial value of scalar `id`.
pub fn scalar_init(elem: Elem, id: usize) -> super::interp::Val {
    init_value(elem, 100 + id, 0)
}

/// The complete C program.
pub fn print_program(p: &Program) -> String {
    let mut out = String::new();
    out.push_str(
        "/* generated by polytune fuzz */\n\
         #include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\
         #define min(a, b) ((a) < (b) ? (a) : (b))\n\
         #define max(a, b) ((a) > (b) ? (a) : (b))\n\n",
    );
    for a in &p.arrays {
        let dims: String = a.extents.iter().map(|e| format!("[{e}]")).collect();
        let _ = writeln!(out, "static {} {}{dims};", a.elem.c_name(), a.name);
    }
    for s in &p.scalars {
        let _ = writeln!(out, "static {} {};", s.elem.c_name(), s.name);
    }
    let params = p.params();
    let sig = if params.is_empty() {
        "void".to_string()
    } else {
        params
            .iter()
            .map(|&v| format!("{} {}", p.vars[v].ty.c_name(), p.vars[v].name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "\nstatic void kernel({sig})\n{{\n#pragma scop");
    print_stmts(p, &p.body, 1, &mut out);
    out.push_str("#pragma endscop\n}\n\nstatic void init(void)\n{\n");
    for (id, a) in p.arrays.iter().enumerate() {
        let n: usize = a.extents.iter().product();
        let zeros: String = a.extents.iter().map(|_| "[0]").collect();
        let _ = writeln!(
            out,
            "  {{ {} *p = &{}{zeros}; for (unsigned long k = 0; k < {n}UL; k++) p[k] = {}; }}",
            a.elem.c_name(),
            a.name,
            init_c(a.elem, id)
        );
    }
    for (id, s) in p.scalars.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {{ unsigned long k = 0; {} = {}; }}",
            s.name,
            init_c(s.elem, 100 + id)
        );
    }
    out.push_str(
        "}\n\n\
         static void dump_long(const char *name, const long *p, unsigned long n)\n\
         {\n  printf(\"begin %s %lu\\n\", name, n);\n  for (unsigned long k = 0; k < n; k++) printf(\"%ld\\n\", p[k]);\n  printf(\"end %s\\n\", name);\n}\n\n\
         static void dump_unsigned_long(const char *name, const unsigned long *p, unsigned long n)\n\
         {\n  printf(\"begin %s %lu\\n\", name, n);\n  for (unsigned long k = 0; k < n; k++) printf(\"%lu\\n\", p[k]);\n  printf(\"end %s\\n\", name);\n}\n\n\
         static void dump_double(const char *name, const double *p, unsigned long n)\n\
         {\n  printf(\"begin %s %lu bits\\n\", name, n);\n  for (unsigned long k = 0; k < n; k++) {\n    unsigned long long b;\n    memcpy(&b, &p[k], sizeof b);\n    printf(\"%016llx\\n\", b);\n  }\n  printf(\"end %s\\n\", name);\n}\n\n",
    );
    let _ = writeln!(
        out,
        "int main(int argc, char **argv)\n{{\n  if (argc != {}) {{\n    fprintf(stderr, \"usage: %s{}\\n\", argv[0]);\n    return 2;\n  }}",
        params.len() + 1,
        params
            .iter()
            .map(|&v| format!(" {}", p.vars[v].name))
            .collect::<String>()
    );
    for (k, &v) in params.iter().enumerate() {
        let var = &p.vars[v];
        let read = match var.ty {
            IntTy::Int => format!("(int)strtol(argv[{}], 0, 10)", k + 1),
            IntTy::Long => format!("strtol(argv[{}], 0, 10)", k + 1),
            IntTy::UInt => format!("(unsigned)strtoul(argv[{}], 0, 10)", k + 1),
            IntTy::ULong => format!("strtoul(argv[{}], 0, 10)", k + 1),
        };
        let _ = writeln!(out, "  {} {} = {read};", var.ty.c_name(), var.name);
    }
    let names: Vec<&str> = params.iter().map(|&v| p.vars[v].name.as_str()).collect();
    let _ = writeln!(out, "  init();\n  kernel({});", names.join(", "));
    for a in &p.arrays {
        let n: usize = a.extents.iter().product();
        let zeros: String = a.extents.iter().map(|_| "[0]").collect();
        let _ = writeln!(
            out,
            "  dump_{}(\"{}\", &{}{zeros}, {n}UL);",
            a.elem.c_name().replace(' ', "_"),
            a.name,
            a.name
        );
    }
    for s in &p.scalars {
        let _ = writeln!(
            out,
            "  dump_{}(\"{}\", &{}, 1UL);",
            s.elem.c_name().replace(' ', "_"),
            s.name,
            s.name
        );
    }
    out.push_str("  return 0;\n}\n");
    out
}

// ---- generation ------------------------------------------------------------

const ITER_NAMES: [&str; 4] = ["i", "j", "k", "l"];
const PARAM_NAMES: [&str; 3] = ["n", "m", "q"];

fn pick_int_ty(rng: &mut Rng, unsigned_share: f64) -> IntTy {
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
    rng: &'r mut Rng,
    opts: GenOptions,
    p: Program,
    scope: Vec<usize>,
    max_depth: usize,
    stmts: usize,
}

/// A random program, before its arrays are sized.
pub fn generate(rng: &mut Rng, opts: GenOptions) -> Program {
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
    let pick_elem = |rng: &mut Rng| match rng.below(3) {
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

    fn body(&mut self, depth: usize) -> Vec<Stmt> {
        let n = 1 + self.rng.below(3);
        let mut v = Vec::new();
        for _ in 0..n {
            let x = self.rng.unit();
            if depth < self.max_depth && x < 0.45 {
                v.push(self.for_loop(depth));
            } else if x < 0.6 && depth > 0 {
                let cond = self.cond(0);
                let then = self.body_flat();
                let other = if self.rng.chance(0.3) {
                    Some(self.body_flat())
                } else {
                    None
                };
                v.push(Stmt::If { cond, then, other });
            } else {
                v.push(self.assign());
            }
        }
        v
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
pub fn random_params(rng: &mut Rng, p: &Program, opts: GenOptions) -> Vec<i64> {
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
