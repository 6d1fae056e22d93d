//! The polyhedral description of a static control part: statements with
//! their iteration domains, access relations and original (2d+1)
//! schedule, plus the parsed tree they came from. The front end builds it;
//! the engine reads it through isl's textual notation.

pub mod ast;
pub mod print;

use crate::isl::mangle;
use ast::Span;
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

    pub fn term(t: Term) -> Affine {
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

    pub fn plus_constant(&self, k: i64) -> Option<Affine> {
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
    pub fn eval(&self, env: &dyn Fn(&str) -> i64) -> i64 {
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

impl Statement {
    /// The original schedule's time vector of one instance.
    pub fn time(&self, point: &[i64]) -> Vec<i64> {
        self.schedule
            .iter()
            .map(|d| match *d {
                ScheduleDim::Position(p) => p as i64,
                ScheduleDim::Iterator { index, reversed } => {
                    if reversed {
                        -point[index]
                    } else {
                        point[index]
                    }
                }
            })
            .collect()
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
    pub fn truth() -> Formula {
        Formula::And(vec![])
    }

    pub fn ge0(expr: Affine) -> Formula {
        Formula::Atom(Constraint {
            expr,
            equality: false,
        })
    }

    pub fn eq0(expr: Affine) -> Formula {
        Formula::Atom(Constraint {
            expr,
            equality: true,
        })
    }

    /// Conjunction, flattening nested conjunctions.
    pub fn and(parts: Vec<Formula>) -> Formula {
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
    pub fn or(parts: Vec<Formula>) -> Formula {
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
    pub fn negate(&self) -> Option<Formula> {
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

    pub fn is_true(&self) -> bool {
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

/// One dimension of the original 2d+1 schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum ScheduleDim {
    /// Textual position among the siblings of a loop body.
    Position(usize),
    /// The value of the statement's `index`-th iterator, negated for loops
    /// that count down.
    Iterator { index: usize, reversed: bool },
}

/// An array element (or a scalar, with no subscript) a statement touches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Access {
    pub array: String,
    pub subscripts: Vec<Affine>,
    pub span: Span,
}

/// A polyhedral statement: one assignment with its enclosing loops.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Statement {
    pub id: usize,
    /// Enclosing loop iterators, outermost first.
    pub iterators: Vec<String>,
    pub domain: Formula,
    pub schedule: Vec<ScheduleDim>,
    pub reads: Vec<Access>,
    pub writes: Vec<Access>,
    pub span: Span,
}

impl Statement {
    /// `S0`, `S1`, ...: the tuple name of the statement in isl.
    pub fn name(&self) -> String {
        format!("S{}", self.id)
    }

    fn tuple(&self) -> String {
        format!("{}[{}]", self.name(), isl_names(&self.iterators))
    }
}

/// Names joined for an isl tuple or parameter list, mangled.
pub fn isl_names(names: &[String]) -> String {
    names
        .iter()
        .map(|n| mangle(n))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether data is a scalar variable or an array, as used in the SCoP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Array {
    pub name: String,
    /// Number of subscripts; 0 for scalars.
    pub rank: usize,
    /// Written somewhere in the SCoP.
    pub written: bool,
}

/// Where a SCoP sits in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Region {
    /// The `#pragma scop` line, including its newline.
    pub open: Span,
    /// The text between the two pragma lines: what gets replaced.
    pub body: Span,
    /// The `#pragma endscop` line.
    pub close: Span,
}

/// A static control part, ready for the polyhedral engine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scop {
    /// 0-based position among the file's SCoPs.
    pub index: usize,
    pub region: Region,
    /// Integer symbols that are read but never written: isl parameters.
    pub parameters: Vec<String>,
    pub arrays: Vec<Array>,
    pub statements: Vec<Statement>,
    /// The parsed SCoP; `Assign` nodes carry their statement ids.
    pub body: Vec<ast::Stmt>,
    /// C integer divisions in affine positions: C truncates toward zero and
    /// the model floors, which agree only when the dividend is never
    /// negative where it is evaluated. The engine makes it an assumption
    /// on the parameters, checked at run time.
    pub division_checks: Vec<DivisionCheck>,
    /// Values in affine positions that must stay in the range of their C
    /// type (unsigned values, narrow iterators) wherever they are
    /// evaluated; assumptions on the parameters like the divisions.
    pub unsigned_checks: Vec<UnsignedCheck>,
    /// The text between the pragma lines exactly as the user wrote it:
    /// what a transformed SCoP falls back to at run time.
    pub original: String,
    /// Parameters whose C type is not known to be a signed integer type
    /// (unsigned, or declared where polytune does not look): the
    /// generated code reads them as `(long)(name)`.
    pub unsigned_parameters: Vec<String>,
    /// Loop iterators whose C type is not known to be a signed integer
    /// type, with the C type to give their values in statements
    /// (`size_t`, or `__typeof__(i)` when the declaration is not seen).
    pub iterator_casts: BTreeMap<String, String>,
    /// The values `(long)(p)` can take for each parameter `p`, from its C
    /// type (the `long` range when the type is not known): facts the
    /// run-time check need not test.
    pub parameter_ranges: BTreeMap<String, (i64, i64)>,
}

/// A value in an affine position that must stay in `[min, max]` wherever
/// it is evaluated for the model's integers to mean what C means: values
/// of unsigned type (`[0, 2^32)` or `[0, 2^63)`, the generated code reads
/// them as `long`), loop iterators of narrow types (`short`, `char`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnsignedCheck {
    /// Loop iterators in scope, outermost first.
    pub iterators: Vec<String>,
    /// Where the value is evaluated.
    pub domain: Formula,
    pub value: Affine,
    pub min: i64,
    pub max: i64,
    /// The C construct, for messages (`unsigned comparison `i < 5UL``).
    pub what: String,
    pub span: Span,
}

/// The largest value a `long` holds.
pub const LONG_MAX: i64 = i64::MAX;

impl UnsignedCheck {
    /// The range in the notation of messages (`[0, 2^63)`).
    pub fn range(&self) -> String {
        let hi = match self.max {
            LONG_MAX => "2^63)".to_string(),
            m if m == u32::MAX as i64 => "2^32)".to_string(),
            m => format!("{m}]"),
        };
        format!("[{}, {hi}", self.min)
    }

    /// isl notation of the points where the value leaves `[min, max]`.
    pub fn violations(&self, parameters: &[String]) -> String {
        let v = &self.value;
        let below = v
            .scale(-1)
            .and_then(|d| d.plus_constant(self.min))
            .and_then(|d| d.plus_constant(-1));
        let above = v.plus_constant(-self.max).and_then(|d| d.plus_constant(-1));
        let head = format!(
            "[{}] -> {{ [{}] : ",
            isl_names(parameters),
            isl_names(&self.iterators)
        );
        match (below, above) {
            (Some(b), Some(a)) => {
                let outside = Formula::or(vec![Formula::ge0(b), Formula::ge0(a)]);
                format!(
                    "{head}{} }}",
                    Formula::and(vec![self.domain.clone(), outside])
                )
            }
            // Constants at the edge of 64 bits: isl reads big integers.
            _ => format!(
                "{head}({}) and ({v} < {} or {v} > {}) }}",
                self.domain, self.min, self.max
            ),
        }
    }
}

/// A dividend that must be non-negative wherever it is evaluated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DivisionCheck {
    /// Loop iterators in scope, outermost first.
    pub iterators: Vec<String>,
    /// Where the division is evaluated (enclosing loops and guards).
    pub domain: Formula,
    pub dividend: Affine,
    pub span: Span,
}

impl DivisionCheck {
    /// isl notation of the points where the dividend would be negative
    /// (must be empty).
    pub fn violations(&self, parameters: &[String]) -> String {
        let cond = Formula::and(vec![
            self.domain.clone(),
            Formula::ge0(
                self.dividend
                    .scale(-1)
                    .and_then(|d| d.plus_constant(-1))
                    .unwrap_or_default(),
            ),
        ]);
        format!(
            "[{}] -> {{ [{}] : {} }}",
            isl_names(parameters),
            isl_names(&self.iterators),
            cond
        )
    }
}

impl Scop {
    /// The names the SCoP's local blocks declare.
    pub fn local_names(&self) -> Vec<String> {
        ast::local_names(&self.body)
    }

    fn params_prefix(&self) -> String {
        format!("[{}] -> ", isl_names(&self.parameters))
    }

    /// isl notation of one statement's iteration domain.
    pub fn domain_of(&self, s: &Statement) -> String {
        format!("{}{{ {} }}", self.params_prefix(), domain_piece(s))
    }

    /// isl notation of one statement's original schedule.
    pub fn schedule_of(&self, s: &Statement) -> String {
        format!("{}{{ {} }}", self.params_prefix(), schedule_piece(s))
    }

    /// isl notation of one statement's reads.
    pub fn reads_of(&self, s: &Statement) -> String {
        self.accesses_text(std::iter::once(s), |s| &s.reads)
    }

    /// isl notation of one statement's writes.
    pub fn writes_of(&self, s: &Statement) -> String {
        self.accesses_text(std::iter::once(s), |s| &s.writes)
    }

    /// Union of all statement domains.
    pub fn domains(&self) -> String {
        let pieces: Vec<_> = self.statements.iter().map(domain_piece).collect();
        format!("{}{{ {} }}", self.params_prefix(), pieces.join("; "))
    }

    /// Union of all original schedules, padded with zeros to one common
    /// length so that all statements share one time space.
    pub fn schedules(&self) -> String {
        let len = self
            .statements
            .iter()
            .map(|s| s.schedule.len())
            .max()
            .unwrap_or(0);
        let pieces: Vec<_> = self
            .statements
            .iter()
            .map(|s| {
                let mut p = schedule_piece(s);
                p.pop(); // the closing bracket
                for _ in s.schedule.len()..len {
                    p.push_str(", 0");
                }
                p.push(']');
                p
            })
            .collect();
        format!("{}{{ {} }}", self.params_prefix(), pieces.join("; "))
    }

    /// Union of all reads.
    pub fn reads(&self) -> String {
        self.accesses_text(self.statements.iter(), |s| &s.reads)
    }

    /// Union of all writes.
    pub fn writes(&self) -> String {
        self.accesses_text(self.statements.iter(), |s| &s.writes)
    }

    fn accesses_text<'a>(
        &self,
        stmts: impl Iterator<Item = &'a Statement>,
        pick: impl Fn(&'a Statement) -> &'a Vec<Access>,
    ) -> String {
        let mut pieces: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for s in stmts {
            for a in pick(s) {
                let subs: Vec<String> = a.subscripts.iter().map(|e| e.to_string()).collect();
                let p = format!("{} -> {}[{}]", s.tuple(), mangle(&a.array), subs.join(", "));
                if seen.insert(p.clone()) {
                    pieces.push(p);
                }
            }
        }
        format!("{}{{ {} }}", self.params_prefix(), pieces.join("; "))
    }

    /// The C text of the SCoP regenerated from the parsed tree.
    pub fn to_c(&self, indent: &str) -> String {
        print::stmts_to_c(&self.body, indent)
    }
}

fn domain_piece(s: &Statement) -> String {
    if s.domain.is_true() {
        s.tuple()
    } else {
        format!("{} : {}", s.tuple(), s.domain)
    }
}

fn schedule_piece(s: &Statement) -> String {
    let dims: Vec<String> = s
        .schedule
        .iter()
        .map(|d| match *d {
            ScheduleDim::Position(p) => p.to_string(),
            ScheduleDim::Iterator { index, reversed } => {
                let it = mangle(&s.iterators[index]);
                if reversed {
                    format!("-{it}")
                } else {
                    it.into_owned()
                }
            }
        })
        .collect();
    format!("{} -> [{}]", s.tuple(), dims.join(", "))
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
