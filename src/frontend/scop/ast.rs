//! The C subset of a SCoP as a tree: what the front end parses, what the
//! code generator re-emits statement bodies from, and what the
//! pretty-printer turns back into C.

use serde::Serialize;

/// A byte range in the source file (not in the SCoP), so every node can be
/// reported as file:line:col.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum BinOp {
    Or,
    And,
    BitOr,
    BitXor,
    BitAnd,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

impl BinOp {
    /// C precedence: larger binds tighter.
    pub(crate) fn precedence(self) -> u8 {
        use BinOp::*;
        match self {
            Or => 1,
            And => 2,
            BitOr => 3,
            BitXor => 4,
            BitAnd => 5,
            Eq | Ne => 6,
            Lt | Gt | Le | Ge => 7,
            Shl | Shr => 8,
            Add | Sub => 9,
            Mul | Div | Mod => 10,
        }
    }

    pub(crate) fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Or => "||",
            And => "&&",
            BitOr => "|",
            BitXor => "^",
            BitAnd => "&",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
            Shl => "<<",
            Shr => ">>",
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Mod => "%",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum UnOp {
    Neg,
    Plus,
    Not,
    BitNot,
    /// `*p`: parsed only to be rejected.
    Deref,
    /// `&x`: parsed only to be rejected.
    AddrOf,
    PreInc,
    PreDec,
    PostInc,
    PostDec,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ExprKind {
    /// Integer literal, with its original spelling (suffixes kept).
    Int {
        value: i64,
        text: String,
    },
    /// Floating literal, kept as written so the value is bit-identical.
    Float(String),
    Ident(String),
    /// `name[s0][s1]...`.
    Access {
        name: String,
        subscripts: Vec<Expr>,
    },
    Call {
        name: String,
        args: Vec<Expr>,
    },
    Unary {
        op: UnOp,
        expr: Box<Expr>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Ternary {
        cond: Box<Expr>,
        then: Box<Expr>,
        other: Box<Expr>,
    },
    Cast {
        ty: String,
        expr: Box<Expr>,
    },
    /// Something the SCoP language does not accept (string literals, member
    /// access, indexing a non-name, ...), kept with a description so the
    /// lowering pass can report it at its position.
    Unsupported(String),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// The source put it in parentheses. They are printed back even where
    /// precedence does not need them: a macro's expansion is text, so
    /// `a / (HALF)` and `SQ((j + 1))` mean something else without them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub parens: bool,
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr {
            kind,
            span,
            parens: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum AssignOp {
    Assign,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl AssignOp {
    pub fn symbol(self) -> &'static str {
        use AssignOp::*;
        match self {
            Assign => "=",
            Add => "+=",
            Sub => "-=",
            Mul => "*=",
            Div => "/=",
            Mod => "%=",
            BitAnd => "&=",
            BitOr => "|=",
            BitXor => "^=",
            Shl => "<<=",
            Shr => ">>=",
        }
    }
}

/// How a `for` loop advances its iterator.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// The variable the step updates (must be the loop's iterator).
    pub variable: String,
    /// Signed constant stride when the step is `i++`, `i -= 2`, `i = i + 4`...;
    /// `None` with the expression kept when the step is not a constant.
    pub stride: Option<i64>,
    pub text_expr: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForLoop {
    pub iterator: String,
    /// `Some("int")` for `for (int i = ...)`.
    pub declared_type: Option<String>,
    pub init: Expr,
    pub cond: Expr,
    pub step: Step,
    pub body: Box<Stmt>,
    pub span: Span,
    /// Span of the iterator name in the header.
    pub iterator_span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum StmtKind {
    For(Box<ForLoop>),
    If {
        cond: Expr,
        then: Box<Stmt>,
        other: Option<Box<Stmt>>,
    },
    Block(Vec<Stmt>),
    /// `lhs op rhs;`; `id` numbers the polyhedral statements of the SCoP
    /// in textual order (S0, S1, ...).
    Assign {
        id: usize,
        lhs: Expr,
        op: AssignOp,
        rhs: Expr,
    },
    /// A block that declares variables of its own,
    /// `{ double t = A[i][j] * 2.0; B[i][j] = t + 1.0; }`: one polyhedral
    /// statement. Its variables are private to each execution of the
    /// block, so they carry no dependence from one execution to the next.
    /// A block that also holds loops or conditions
    /// ([`LocalPart::Stmt`], `{ float acc = 0; for (k ...) acc += ...;
    /// out[i] = acc; }`) is a compound statement: it runs as written, and
    /// what its loops and conditions touch is over-approximated.
    Local {
        id: usize,
        parts: Vec<LocalPart>,
    },
    /// An expression statement without assignment (rejected when lowered).
    Expr(Expr),
    /// `while`, a declaration, ...: rejected when lowered.
    Unsupported(String),
    Empty,
}

/// One step of a [`StmtKind::Local`] block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum LocalPart {
    /// `type name = init;` or `type name;` (`ty` as written).
    Decl {
        ty: String,
        name: String,
        init: Option<Expr>,
        span: Span,
    },
    Assign {
        lhs: Expr,
        op: AssignOp,
        rhs: Expr,
        span: Span,
    },
    /// A loop, a condition, a nested block or any other statement (the
    /// lowering says what it refuses). Assignments inside carry ids that
    /// number nothing: the enclosing block is the statement.
    Stmt(Stmt),
}

impl LocalPart {
    /// Whether the block is a compound statement (see [`StmtKind::Local`]).
    pub fn is_compound(parts: &[LocalPart]) -> bool {
        parts.iter().any(|p| matches!(p, LocalPart::Stmt(_)))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

/// The names the local blocks of `stmts` declare (see [`StmtKind::Local`]).
pub fn local_names(stmts: &[Stmt]) -> Vec<String> {
    fn walk(s: &Stmt, out: &mut Vec<String>) {
        match &s.kind {
            StmtKind::For(l) => walk(&l.body, out),
            StmtKind::If { then, other, .. } => {
                walk(then, out);
                if let Some(o) = other {
                    walk(o, out);
                }
            }
            StmtKind::Block(v) => v.iter().for_each(|x| walk(x, out)),
            StmtKind::Local { parts, .. } => {
                for p in parts {
                    match p {
                        LocalPart::Decl { name, .. } => out.push(name.clone()),
                        LocalPart::Stmt(s) => walk(s, out),
                        LocalPart::Assign { .. } => {}
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    stmts.iter().for_each(|s| walk(s, &mut out));
    out
}

/// The iterators of the loops inside the compound statements of `stmts`
/// (see [`StmtKind::Local`]), each once, in textual order.
pub fn inner_iterators(stmts: &[Stmt]) -> Vec<String> {
    let mut out = Vec::new();
    stmts.iter().for_each(|s| iterators_in(s, false, &mut out));
    out
}

/// The iterators of the loops inside one block's parts, each once.
pub(crate) fn loop_iterators(parts: &[LocalPart]) -> Vec<String> {
    let mut out = Vec::new();
    parts_iterators(parts, &mut out);
    out
}

fn parts_iterators(parts: &[LocalPart], out: &mut Vec<String>) {
    for p in parts {
        if let LocalPart::Stmt(s) = p {
            iterators_in(s, true, out);
        }
    }
}

/// The iterators of the loops in `s` that are inside a compound block
/// (all of them when `inside`).
fn iterators_in(s: &Stmt, inside: bool, out: &mut Vec<String>) {
    match &s.kind {
        StmtKind::For(l) => {
            if inside && !out.contains(&l.iterator) {
                out.push(l.iterator.clone());
            }
            iterators_in(&l.body, inside, out)
        }
        StmtKind::If { then, other, .. } => {
            iterators_in(then, inside, out);
            if let Some(o) = other {
                iterators_in(o, inside, out);
            }
        }
        StmtKind::Block(v) => v.iter().for_each(|x| iterators_in(x, inside, out)),
        StmtKind::Local { parts, .. } => parts_iterators(parts, out),
        _ => {}
    }
}
