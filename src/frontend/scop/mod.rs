//! The polyhedral description of a static control part: statements with
//! their iteration domains, access relations and original (2d+1)
//! schedule, plus the parsed tree they came from. The front end builds it;
//! the engine reads it through isl's textual notation.

mod affine;
pub mod ast;
pub mod delinearize;
pub mod print;
pub mod reduction;

use crate::isl::mangle;
use ast::Span;
use serde::Serialize;
use std::collections::BTreeMap;

pub use affine::{Affine, Constraint, Formula, Term};
pub(crate) use delinearize::Delinearized;

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
    /// An access inside the loops or conditions of a compound statement
    /// ([`ast::StmtKind::Local`]): every element it reaches for some
    /// value of those loops' iterators where `domain` holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inner: Option<Inner>,
}

/// The loops and conditions inside a compound statement around one of
/// its accesses: its subscripts may name `iterators` (quantified), and
/// `domain` bounds them (loop bounds, affine conditions; a condition
/// that depends on data is left out, which only widens the access).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inner {
    pub iterators: Vec<String>,
    pub domain: Formula,
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
    /// Elements every execution writes (must-writes).
    pub writes: Vec<Access>,
    /// Elements an execution may write (inside the loops or conditions
    /// of a compound statement): they kill no earlier write.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub may_writes: Vec<Access>,
    /// Iterators of a compound statement's loops declared outside the
    /// SCoP, with their C type: the generated block declares its own, so
    /// that each execution (each thread) has them private.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub private: Vec<(String, String)>,
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

/// Two arrays of a SCoP (names of [`Scop::arrays`]) that may overlap in
/// memory, one of them written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AliasPair {
    pub first: String,
    pub second: String,
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
    /// One-dimensional arrays the model sees with more dimensions (their
    /// subscripts split, see [`delinearize`]), with the assumptions that
    /// make the split exact.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub delinearized: Vec<Delinearized>,
    /// Values read from memory that the SCoP never writes, in loop
    /// bounds, conditions or subscripts (`grid_points[0]`, `Mat->mrows`):
    /// parameters (named so that they cannot clash with the file's
    /// names), loaded once before the transformed code.
    pub invariant_loads: Vec<InvariantLoad>,
    /// Pairs of the SCoP's arrays that may overlap in memory, one of them
    /// written (pointers `--detect` cannot prove apart): the transformed
    /// code checks at run time that the address ranges the SCoP accesses
    /// in each pair are disjoint, and the original runs where they are
    /// not. Empty for `#pragma scop` regions (the user marks arrays that
    /// do not overlap, as for Pluto) and under `--assume-no-alias`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alias_checks: Vec<AliasPair>,
    /// The user's OpenMP loop directives on loops of the SCoP: promises
    /// the engine proves before it transforms the SCoP (it leaves the
    /// SCoP unchanged, with the reason, when it cannot).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub directives: Vec<UserDirective>,
    /// The user's `#pragma omp parallel` region the SCoP lies in, when
    /// its loop is a work-shared `#pragma omp for`: every thread of the
    /// team runs the SCoP's code, and the transformed code shares its
    /// work among them (`codegen`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team: Option<crate::frontend::omp::Team>,
    /// Scalars the engine expanded into arrays (`exp=1`): empty as the
    /// front end writes a SCoP.
    #[serde(skip)]
    pub expanded: Vec<Expanded>,
}

/// A scalar expanded into an array (`exp=1`): one element per iteration
/// of the loops around all its accesses, indexed by their iterators.
#[derive(Debug, Clone, PartialEq)]
pub struct Expanded {
    /// The scalar, whose type the elements take.
    pub scalar: String,
    /// The array: a name the SCoP does not use, allocated before the
    /// transformed code and freed after it.
    pub array: String,
    /// Per dimension, the greatest index as an expression of the
    /// parameters (the least is at least 0).
    pub max: Vec<crate::isl::AstExpr>,
}

/// A user's OpenMP loop directive on a loop of a SCoP (issue 40).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserDirective {
    pub directive: crate::frontend::omp::Directive,
    /// The directive's line in the text.
    pub span: Span,
    /// The loops it binds, outermost first (one, or `n` with
    /// `collapse(n)`).
    pub iterators: Vec<String>,
    /// How many loops of the SCoP enclose the first of them.
    pub depth: usize,
    /// The statements inside the loop (ids).
    pub statements: Vec<usize>,
    /// Iterators of loops inside it that are declared outside it and
    /// named in no private clause: every thread would share them.
    pub shared_iterators: Vec<String>,
}

/// A parameter of a SCoP whose value is read from memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InvariantLoad {
    /// The parameter (a C identifier the file does not use).
    pub name: String,
    /// The C expression as the user wrote it (comments dropped).
    pub expr: String,
    /// Its C type as declared (`int`, or `__typeof__(expr)`).
    pub ty: String,
}

impl Scop {
    /// A name of the SCoP as the user wrote it: for the parameter of an
    /// invariant load, the expression it is loaded from.
    pub fn spelled<'a>(&'a self, name: &'a str) -> &'a str {
        self.invariant_loads
            .iter()
            .find(|l| l.name == name)
            .map(|l| l.expr.as_str())
            .unwrap_or(name)
    }

    /// [`Scop::alias_checks`] as the user spells them.
    pub fn spelled_alias_checks(&self) -> Vec<AliasPair> {
        self.alias_checks
            .iter()
            .map(|p| AliasPair {
                first: self.spelled(&p.first).to_string(),
                second: self.spelled(&p.second).to_string(),
            })
            .collect()
    }

    /// The declarations that load the invariant values, one per line
    /// (empty without them): what must precede code that names them.
    pub fn invariant_declarations(&self, indent: &str) -> String {
        self.invariant_loads
            .iter()
            .map(|l| format!("{indent}const {} {} = {};\n", l.ty, l.name, l.expr))
            .collect()
    }
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
pub(crate) const LONG_MAX: i64 = i64::MAX;

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
    /// How the model sees `array` when it is delinearized.
    pub fn delinearized(&self, array: &str) -> Option<&Delinearized> {
        self.delinearized.iter().find(|d| d.array == array)
    }

    /// The C text of an element of `array` at subscripts written in the
    /// model's dimensions (C text, outer first): linearized again for a
    /// delinearized array.
    pub fn element_c(&self, array: &str, subscripts: &[String]) -> String {
        match self.delinearized(array) {
            Some(d) => d.element(subscripts),
            None => {
                let subs: String = subscripts.iter().map(|s| format!("[{s}]")).collect();
                format!("{array}{subs}")
            }
        }
    }

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

    /// isl notation of one statement's may-writes.
    pub fn may_writes_of(&self, s: &Statement) -> String {
        self.accesses_text(std::iter::once(s), |s| &s.may_writes)
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

    /// Union of all must-writes.
    pub fn writes(&self) -> String {
        self.accesses_text(self.statements.iter(), |s| &s.writes)
    }

    /// Union of all may-writes (see [`Statement::may_writes`]).
    pub fn may_writes(&self) -> String {
        self.accesses_text(self.statements.iter(), |s| &s.may_writes)
    }

    /// Whether some statement may write what it does not surely write.
    pub fn has_may_writes(&self) -> bool {
        self.statements.iter().any(|s| !s.may_writes.is_empty())
    }

    /// Union of everything written, surely or maybe.
    pub fn all_writes(&self) -> String {
        let mut pieces = Vec::new();
        for s in &self.statements {
            for list in [&s.writes, &s.may_writes] {
                for a in list {
                    let p = access_piece(s, a);
                    if !pieces.contains(&p) {
                        pieces.push(p);
                    }
                }
            }
        }
        format!("{}{{ {} }}", self.params_prefix(), pieces.join("; "))
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
                let p = access_piece(s, a);
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

/// One access in isl notation. An access inside a compound statement's
/// loops names the element through fresh output variables (`o0_pt`: no
/// C name is mangled to it) bound by its subscripts, with the inner
/// iterators quantified.
fn access_piece(s: &Statement, a: &Access) -> String {
    let subs: Vec<String> = a.subscripts.iter().map(|e| e.to_string()).collect();
    let Some(inner) = &a.inner else {
        return format!("{} -> {}[{}]", s.tuple(), mangle(&a.array), subs.join(", "));
    };
    let outs: Vec<String> = (0..subs.len()).map(|k| format!("o{k}_pt")).collect();
    let mut conditions: Vec<String> = outs
        .iter()
        .zip(&subs)
        .map(|(o, e)| format!("{o} = {e}"))
        .collect();
    if !inner.domain.is_true() {
        conditions.push(format!("({})", inner.domain));
    }
    let body = if conditions.is_empty() {
        "true".to_string()
    } else {
        conditions.join(" and ")
    };
    let body = if inner.iterators.is_empty() {
        body
    } else {
        format!("exists ({} : {body})", isl_names(&inner.iterators))
    };
    format!(
        "{} -> {}[{}] : {body}",
        s.tuple(),
        mangle(&a.array),
        outs.join(", ")
    )
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
