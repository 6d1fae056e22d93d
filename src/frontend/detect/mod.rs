//! SCoP detection: finds the static control parts of an ordinary C file
//! (no `#pragma scop` needed), like Polly's SCoP detection.
//!
//! libclang parses the whole translation unit with the preprocessor (so
//! macros and includes are seen as the compiler sees them); [`clang`]
//! copies each function body into an owned tree. In every block, the
//! maximal runs of consecutive statements that qualify and contain at
//! least one loop become candidate regions. Their text is marked with
//! `#pragma scop` / `#pragma endscop` in a copy of the file, which is
//! handed to the existing front end: it does the exact affine checks, and
//! a region it rejects is reported with its message and dropped.
//!
//! Conservative by construction. A statement does not qualify if it
//! contains `goto`, `break`, `continue`, `return`, `while`, `do`,
//! `switch`, labels, declarations, inline assembly, pointer dereferences,
//! address-of, struct members, a call to a function not known to be pure,
//! a loop bound or `if` condition that reads memory or calls a function,
//! or a subscript that reads memory or multiplies two variables. A region
//! is also rejected when a variable of a loop bound is written in it.
//!
//! The aliasing rule: every array accessed in a region is named by a
//! variable. Array objects (local and global variables of array type)
//! are distinct objects. A parameter is never an array object: in C,
//! `double x[]`, `double x[N]` and `double A[N][M]` (the PolyBench
//! style) declare pointers, exactly like `double *x`. A pointer used as
//! an array (a parameter in either spelling, `double (*p)[M]`, a local or
//! global pointer) that is not `restrict`-qualified may overlap any other
//! array or pointer of a compatible element type (same element type, or
//! `char`/`void`) that is not `restrict` either, so a region is rejected
//! when it accesses such a pointer and such an array and writes either
//! one, and the message names the `restrict` declaration that fixes it.
//! Exceptions: read-only pairs are fine; so is anything paired with a
//! `restrict` pointer (C's guarantee: what is modified through it is
//! reached only through it); a parameter the function never assigns
//! cannot point into a local (automatic) array of its own function, which
//! did not exist when it was called; and no pointer can point into a
//! local array whose address is never taken (used only as `r1[i]`, all
//! dimensions subscripted). `--assume-no-alias`
//! ([`DetectOptions::assume_no_alias`]) skips the rule: the user vouches
//! that no two arrays overlap.
//!
//! The user's pragmas: a loop nest is never taken when a pragma polytune
//! does not own (OpenMP, `GCC ivdep`, `clang loop`, ... see
//! [`crate::frontend::pragmas`]) lies inside it, in front of one of its
//! statements, or in front of a statement that encloses it: polytune
//! does not re-derive what the pragma promises, and a rewritten nest
//! would carry the promise onto loops it does not hold for.

mod clang;

use crate::frontend::pragmas::{self, Pragma};
use crate::frontend::{self, Options, PURE_FUNCTIONS, SourceFile, is_scop_pragma};
use clang::{Kind, Node};
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

/// Why detection could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}:{column}: error: {message} (libclang; pass include paths and -D flags after `--`)", path.display())]
    Clang {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: error: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error("{}:{line}:1: error: the file already has `#pragma scop` regions; run without --detect", path.display())]
    AlreadyMarked { path: PathBuf, line: usize },
}

/// Detection settings.
#[derive(Debug, Clone, Default)]
pub struct DetectOptions {
    /// Arguments for clang: include paths, `-D` flags, `-std=...`.
    pub clang_args: Vec<String>,
    /// Functions the user vouches are pure (`--pure NAME`).
    pub pure_functions: Vec<String>,
    /// The user vouches that no two arrays or pointers of a region
    /// overlap (`--assume-no-alias`): the aliasing rule is not applied.
    /// A wrong promise gives a wrong program.
    pub assume_no_alias: bool,
}

/// A detected static control part.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Region {
    pub function: String,
    pub first_line: usize,
    pub last_line: usize,
    /// Byte range in the original text (start of the first statement to
    /// the end of the last, its `;` included).
    #[serde(skip)]
    pub start: usize,
    #[serde(skip)]
    pub end: usize,
    /// The top-level statements: (start, end, first line, last line,
    /// contains a loop), so that a region the front end rejects can be
    /// split around the offending statement.
    #[serde(skip)]
    stmts: Vec<Stmt>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stmt {
    start: usize,
    end: usize,
    first_line: usize,
    last_line: usize,
    has_loop: bool,
}

impl Region {
    fn of(function: &str, stmts: Vec<Stmt>) -> Option<Region> {
        if !stmts.iter().any(|s| s.has_loop) {
            return None;
        }
        let (first, last) = (stmts[0], stmts[stmts.len() - 1]);
        Some(Region {
            function: function.to_string(),
            first_line: first.first_line,
            last_line: last.last_line,
            start: first.start,
            end: last.end,
            stmts,
        })
    }
}

/// A loop nest that was not taken, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rejection {
    pub function: String,
    pub first_line: usize,
    pub last_line: usize,
    /// Where the offending construct is.
    pub line: usize,
    pub column: usize,
    pub reason: String,
}

/// The outcome of detection on one file.
#[derive(Debug, Clone)]
pub struct Detection {
    pub path: PathBuf,
    /// The original text.
    pub text: String,
    pub regions: Vec<Region>,
    pub rejected: Vec<Rejection>,
    /// The text with the regions marked by `#pragma scop` lines.
    pub marked: String,
    /// The marked text parsed by the front end (`None` without regions).
    pub source: Option<SourceFile>,
}

/// Detects the SCoPs of a C file.
pub fn detect_file(path: &Path, options: &DetectOptions) -> Result<Detection, DetectError> {
    let text = std::fs::read_to_string(path).map_err(|source| DetectError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if let Some(line) = text.lines().position(is_scop_pragma).map(|i| i + 1) {
        return Err(DetectError::AlreadyMarked {
            path: path.to_path_buf(),
            line,
        });
    }
    let unit = clang::functions(path, &options.clang_args)?;
    let functions = unit.functions;
    let mut pure: HashSet<String> = PURE_FUNCTIONS.iter().map(|s| s.to_string()).collect();
    pure.extend(options.pure_functions.iter().cloned());
    let foreign = pragmas::foreign_with(&text, &unit.pragma_macros);
    let mut finder = Finder {
        path,
        text: &text,
        pure: &pure,
        pragmas: &foreign,
        assume_no_alias: options.assume_no_alias,
        escaping: HashSet::new(),
        reassigned: HashSet::new(),
        regions: Vec::new(),
        rejected: Vec::new(),
        function: String::new(),
    };
    for f in &functions {
        finder.function = f.name.clone();
        finder.escaping = HashSet::new();
        escapes(&f.body, &mut finder.escaping);
        finder.reassigned = HashSet::new();
        reassigned(&f.body, &mut finder.reassigned);
        finder.block(&f.body);
    }
    let Finder {
        mut regions,
        mut rejected,
        ..
    } = finder;
    let front = Options {
        pure_functions: options.pure_functions.clone(),
    };
    // Hand the marked text to the front end; drop each region it rejects.
    loop {
        if regions.is_empty() {
            rejected.sort_by_key(|r| (r.first_line, r.line));
            return Ok(Detection {
                path: path.to_path_buf(),
                marked: text.clone(),
                text,
                regions,
                rejected,
                source: None,
            });
        }
        let (marked, lines) = mark(&text, &regions);
        match frontend::parse_source(path, marked.clone(), &front) {
            Ok(source) => {
                rejected.sort_by_key(|r| (r.first_line, r.line));
                return Ok(Detection {
                    path: path.to_path_buf(),
                    text,
                    regions,
                    rejected,
                    marked,
                    source: Some(source),
                });
            }
            Err(e) => {
                let d = e.diagnostic().cloned();
                let k = d
                    .as_ref()
                    .and_then(|d| lines.iter().position(|&(o, c)| o <= d.line && d.line <= c))
                    .unwrap_or(0);
                let r = regions.remove(k);
                let (line, column, message) = match d {
                    // Back to the original file's lines: minus the pragma
                    // lines inserted above.
                    Some(d) => (d.line.saturating_sub(2 * k + 1), d.column, d.message),
                    None => (r.first_line, 1, e.to_string()),
                };
                // Split the region around the offending statement; the
                // statements before and after it may still be SCoPs.
                let bad = r
                    .stmts
                    .iter()
                    .position(|s| s.first_line <= line && line <= s.last_line);
                let (first_line, last_line) = match bad {
                    Some(b) => (r.stmts[b].first_line, r.stmts[b].last_line),
                    None => (r.first_line, r.last_line),
                };
                if let Some(b) = bad {
                    let after = Region::of(&r.function, r.stmts[b + 1..].to_vec());
                    let before = Region::of(&r.function, r.stmts[..b].to_vec());
                    for part in [after, before].into_iter().flatten() {
                        regions.insert(k, part);
                    }
                }
                rejected.push(Rejection {
                    function: r.function,
                    first_line,
                    last_line,
                    line,
                    column,
                    reason: format!("rejected by the front end: {message}"),
                });
            }
        }
    }
}

/// The text with each region between pragma lines, and the (1-based)
/// lines of each region's pragmas in the marked text.
fn mark(text: &str, regions: &[Region]) -> (String, Vec<(usize, usize)>) {
    let mut out = String::with_capacity(text.len() + 32 * regions.len());
    let mut lines = Vec::new();
    let mut at = 0;
    for r in regions {
        let line_start = text[..r.start].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let indent: String = text[line_start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let own_line = text[line_start..r.start].trim().is_empty();
        let open_at = if own_line { line_start } else { r.start };
        out.push_str(&text[at..open_at]);
        if !own_line {
            out.push('\n');
        }
        let open_line = out.matches('\n').count() + 1;
        out.push_str(&format!("{indent}#pragma scop\n"));
        // The close pragma goes after the end of the last statement's line
        // when only blanks follow it there.
        let line_end = text[r.end..]
            .find('\n')
            .map(|i| r.end + i + 1)
            .unwrap_or(text.len());
        let rest_blank = text[r.end..line_end].trim().is_empty();
        if rest_blank {
            out.push_str(&text[open_at..line_end]);
            if !out.ends_with('\n') {
                out.push('\n');
            }
            at = line_end;
        } else {
            if !own_line {
                out.push_str(&indent);
            }
            out.push_str(&text[r.start.max(open_at)..r.end]);
            out.push('\n');
            at = r.end;
        }
        let close_line = out.matches('\n').count() + 1;
        out.push_str(&format!("{indent}#pragma endscop\n"));
        lines.push((open_line, close_line));
    }
    out.push_str(&text[at..]);
    (out, lines)
}

/// Walks function bodies and collects candidate regions.
struct Finder<'a> {
    path: &'a Path,
    text: &'a str,
    pure: &'a HashSet<String>,
    /// The user's pragmas.
    pragmas: &'a [Pragma],
    assume_no_alias: bool,
    /// The current function's local arrays whose address may be taken
    /// (used other than as `a[i]...[k]`): only these can be reached
    /// through a pointer.
    escaping: HashSet<String>,
    /// The current function's variables assigned as a whole (`p = ...`)
    /// or whose address is taken.
    reassigned: HashSet<String>,
    regions: Vec<Region>,
    rejected: Vec<Rejection>,
    function: String,
}

/// Why a construct disqualifies its statement, and where it is.
struct Why {
    line: usize,
    column: usize,
    reason: String,
    /// A user's pragma: reported once for the outermost nest it blocks,
    /// not again for each nest inside.
    pragma: bool,
}

impl Why {
    fn at(n: &Node, reason: impl Into<String>) -> Why {
        Why {
            line: n.line,
            column: n.column,
            reason: reason.into(),
            pragma: false,
        }
    }
}

fn contains_loop(n: &Node) -> bool {
    matches!(n.kind, Kind::For | Kind::While | Kind::Do) || n.children.iter().any(contains_loop)
}

fn any(n: &Node, f: &dyn Fn(&Node) -> bool) -> Option<Node> {
    if f(n) {
        return Some(n.clone());
    }
    n.children.iter().find_map(|c| any(c, f))
}

/// The variable an access is through: `A` of `A[i][j]`.
fn base(n: &Node) -> Option<&Node> {
    match n.kind {
        Kind::DeclRef => Some(n),
        Kind::Subscript => n.children.first().and_then(base),
        Kind::Other if n.children.len() == 1 => base(&n.children[0]),
        _ => None,
    }
}

fn is_deref(n: &Node) -> bool {
    n.kind == Kind::Unary && matches!(n.op.as_deref(), Some("*") | Some("&"))
}

/// Whether an expression mentions a variable (not only constants).
fn has_variable(n: &Node) -> bool {
    any(n, &|x| {
        x.kind == Kind::DeclRef && x.var.as_ref().is_some_and(|v| v.variable)
    })
    .is_some()
}

impl Finder<'_> {
    fn snippet(&self, n: &Node) -> String {
        let s = self.text.get(n.start..n.end).unwrap_or("");
        let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
        if s.chars().count() > 60 {
            format!("{}...", s.chars().take(57).collect::<String>())
        } else {
            s
        }
    }

    fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    /// End of a statement, its `;` included (libclang's extents stop
    /// before it).
    fn stmt_end(&self, n: &Node) -> usize {
        let b = self.text.as_bytes();
        if n.end == 0 || n.end > b.len() || b[n.end - 1] == b'}' || b[n.end - 1] == b';' {
            return n.end.min(b.len());
        }
        let mut i = n.end;
        while i < b.len() {
            match b[i] {
                b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    i = self.text[i + 2..]
                        .find("*/")
                        .map(|k| i + 2 + k + 2)
                        .unwrap_or(b.len())
                }
                b';' => return i + 1,
                _ => break,
            }
        }
        n.end
    }

    /// Scans a block: its qualifying runs become regions; the statements
    /// that do not qualify are searched for inner blocks.
    fn block(&mut self, b: &Node) {
        let mut run: Vec<&Node> = Vec::new();
        for s in &b.children {
            match self.pragma(s).and_then(|()| self.stmt(s)) {
                Ok(()) => run.push(s),
                Err(why) => {
                    self.flush(&mut run);
                    if contains_loop(s) {
                        self.reject(&[s], why);
                    }
                    self.descend(s);
                }
            }
        }
        self.flush(&mut run);
    }

    fn descend(&mut self, s: &Node) {
        for c in &s.children {
            if c.kind == Kind::Compound {
                self.block(c);
            } else if matches!(
                c.kind,
                Kind::For | Kind::While | Kind::Do | Kind::If | Kind::Label | Kind::Switch
            ) {
                self.descend(c);
            }
        }
    }

    fn reject(&mut self, stmts: &[&Node], why: Why) {
        let (first, last) = (stmts[0], stmts[stmts.len() - 1]);
        let r = Rejection {
            function: self.function.clone(),
            first_line: first.line,
            last_line: self.line_of(self.stmt_end(last).saturating_sub(1)),
            line: why.line,
            column: why.column,
            reason: why.reason,
        };
        if why.pragma
            && self.rejected.iter().any(|o| {
                o.reason == r.reason && o.first_line <= r.first_line && r.last_line <= o.last_line
            })
        {
            return;
        }
        self.rejected.push(r);
    }

    /// The variables of `s` named only inside a macro body (`#define
    /// ETA alpha`): the front end, which reads the text, sees the macro's
    /// name as a loop-invariant parameter instead.
    fn hidden_variables(&self, s: &Node) -> Vec<Node> {
        let end = self.stmt_end(s);
        let mut out = Vec::new();
        fn walk(n: &Node, hidden: &dyn Fn(&Node) -> bool, out: &mut Vec<Node>) {
            if hidden(n) {
                out.push(n.clone());
            }
            n.children.iter().for_each(|c| walk(c, hidden, out));
        }
        walk(
            s,
            &|x| {
                x.kind == Kind::DeclRef
                    && x.var.as_ref().is_some_and(|v| v.variable)
                    && !x.spelled.is_some_and(|o| {
                        s.start <= o && o < end && self.identifier_at(o) == Some(x.name.as_str())
                    })
            },
            &mut out,
        );
        out
    }

    /// The identifier that starts at byte `o` of the text.
    fn identifier_at(&self, o: usize) -> Option<&str> {
        let rest = self.text.get(o..)?;
        let n = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(rest.len());
        (n > 0).then(|| &rest[..n])
    }

    /// A statement the user's pragma bears on does not qualify: the
    /// pragma is inside it, in front of it, or in front of a statement
    /// that encloses it.
    fn pragma(&self, s: &Node) -> Result<(), Why> {
        let end = self.stmt_end(s);
        let Some(p) = pragmas::blocking(self.pragmas, s.start, end) else {
            return Ok(());
        };
        let relation = if s.start <= p.start && p.start < end {
            "is inside this loop nest"
        } else if p.target.is_some_and(|(t, _)| t == s.start) {
            "applies to this loop nest"
        } else {
            "applies to a statement that encloses this loop nest"
        };
        Err(Why {
            line: p.line,
            column: p.column,
            reason: format!(
                "left unchanged: the user's `{}` at {}:{} {relation}; polytune does not re-derive what it promises (remove the pragma to let polytune transform the nest)",
                p.text,
                self.path.display(),
                p.line
            ),
            pragma: true,
        })
    }

    fn flush(&mut self, run: &mut Vec<&Node>) {
        let stmts = std::mem::take(run);
        if !stmts.iter().any(|s| contains_loop(s)) {
            return;
        }
        if let Err(why) = self.region_checks(&stmts) {
            self.reject(&stmts, why);
            return;
        }
        let parts = stmts
            .iter()
            .map(|s| {
                let end = self.stmt_end(s);
                Stmt {
                    start: s.start,
                    end,
                    first_line: s.line,
                    last_line: self.line_of(end.saturating_sub(1)),
                    has_loop: contains_loop(s),
                }
            })
            .collect();
        self.regions.extend(Region::of(&self.function, parts));
    }

    /// Does one statement qualify on its own?
    fn stmt(&self, s: &Node) -> Result<(), Why> {
        match s.kind {
            // A straight-line block may declare variables of its own
            // (the front end makes it one statement; its variables are
            // private to each execution).
            Kind::Compound if s.children.iter().any(|c| c.kind == Kind::Decl) => {
                for c in &s.children {
                    match c.kind {
                        Kind::Decl if c.children.iter().all(|v| v.kind == Kind::VarDecl) => {}
                        Kind::Decl => self.stmt(c)?,
                        Kind::For | Kind::While | Kind::Do | Kind::If | Kind::Compound => {
                            return Err(Why::at(
                                c,
                                "a block that declares variables and also has loops or conditions (declare them before the loop nest)",
                            ));
                        }
                        _ => self.stmt(c)?,
                    }
                }
                Ok(())
            }
            Kind::Compound => s.children.iter().try_for_each(|c| self.stmt(c)),
            Kind::Null => Ok(()),
            Kind::For => {
                if s.children.len() != 4 {
                    return Err(Why::at(
                        s,
                        "`for` loop without an initialization, a condition or a step",
                    ));
                }
                for header in &s.children[..3] {
                    self.bound(header, "loop bound")?;
                }
                self.stmt(&s.children[3])
            }
            Kind::If => {
                self.bound(&s.children[0], "`if` condition")?;
                s.children[1..].iter().try_for_each(|c| self.stmt(c))
            }
            Kind::While => Err(Why::at(
                s,
                "`while` loop: its trip count is not static (write it as a `for` loop with affine bounds)",
            )),
            Kind::Do => Err(Why::at(
                s,
                "`do` ... `while` loop: its trip count is not static",
            )),
            Kind::Goto => Err(Why::at(s, "`goto` (control flow is not static)")),
            Kind::Break => Err(Why::at(
                s,
                "`break`: an early exit makes the trip count data-dependent",
            )),
            Kind::Continue => Err(Why::at(s, "`continue`: control flow is not static")),
            Kind::Return => Err(Why::at(s, "`return` inside the nest: an early exit")),
            Kind::Switch => Err(Why::at(s, "`switch` (control flow is not static)")),
            Kind::Label => Err(Why::at(s, "a label (a possible `goto` target)")),
            Kind::Decl => Err(Why::at(
                s,
                "a declaration (declare the variable before the loop nest)",
            )),
            Kind::Asm => Err(Why::at(s, "inline assembly")),
            Kind::Binary if s.op.as_deref() == Some("=") => self.expr(s),
            Kind::CompoundAssign => self.expr(s),
            Kind::Unary if matches!(s.op.as_deref(), Some("++" | "--" | "post++" | "post--")) => {
                self.expr(s)
            }
            Kind::Call => {
                self.expr(s)?;
                Err(Why::at(s, format!("call to `{}` as a statement", s.name)))
            }
            _ => Err(Why::at(
                s,
                format!("statement `{}` is not an assignment", self.snippet(s)),
            )),
        }
    }

    /// A loop header part or condition: must not read memory or call.
    fn bound(&self, e: &Node, what: &str) -> Result<(), Why> {
        if let Some(m) = any(e, &|x| {
            matches!(x.kind, Kind::Subscript | Kind::Call | Kind::Member) || is_deref(x)
        }) {
            return Err(Why::at(
                &m,
                format!("data-dependent {what}: `{}` reads memory", self.snippet(&m)),
            ));
        }
        if let Some(v) = any(e, &|x| {
            x.kind == Kind::DeclRef && x.var.as_ref().is_some_and(|v| v.variable && !v.integer)
        }) {
            return Err(Why::at(
                &v,
                format!("{what} uses `{}`, which is not an integer variable", v.name),
            ));
        }
        self.expr(e)
    }

    /// An expression: pure calls, no pointer tricks, affine-looking subscripts.
    fn expr(&self, e: &Node) -> Result<(), Why> {
        match e.kind {
            Kind::Call if !self.pure.contains(&e.name) => {
                return Err(Why::at(
                    e,
                    format!(
                        "call to `{}`, which may have side effects (pass --pure {} if it has none)",
                        e.name, e.name
                    ),
                ));
            }
            Kind::Unary if e.op.as_deref() == Some("*") => {
                return Err(Why::at(
                    e,
                    format!("pointer dereference `{}` (may alias)", self.snippet(e)),
                ));
            }
            Kind::Unary if e.op.as_deref() == Some("&") => {
                return Err(Why::at(e, format!("address-of `{}`", self.snippet(e))));
            }
            Kind::Unary | Kind::Binary | Kind::CompoundAssign if e.op.is_none() => {
                return Err(Why::at(
                    e,
                    format!(
                        "`{}` comes from a macro polytune cannot see through",
                        self.snippet(e)
                    ),
                ));
            }
            Kind::Member => {
                return Err(Why::at(
                    e,
                    format!("struct member access `{}`", self.snippet(e)),
                ));
            }
            Kind::Subscript => {
                if let Some(idx) = e.children.get(1) {
                    self.subscript(idx)?;
                }
            }
            _ => {}
        }
        e.children.iter().try_for_each(|c| self.expr(c))
    }

    fn subscript(&self, idx: &Node) -> Result<(), Why> {
        if let Some(m) = any(idx, &|x| {
            matches!(x.kind, Kind::Subscript | Kind::Call | Kind::Member) || is_deref(x)
        }) {
            return Err(Why::at(
                idx,
                format!(
                    "data-dependent subscript `{}`: `{}` reads memory",
                    self.snippet(idx),
                    self.snippet(&m)
                ),
            ));
        }
        if let Some(m) = any(idx, &|x| {
            x.kind == Kind::Binary
                && matches!(x.op.as_deref(), Some("*" | "/" | "%"))
                && x.children.len() == 2
                && has_variable(&x.children[0])
                && has_variable(&x.children[1])
        }) {
            return Err(Why::at(
                idx,
                format!(
                    "non-affine subscript `{}`: `{}` combines two variables",
                    self.snippet(idx),
                    self.snippet(&m)
                ),
            ));
        }
        if let Some(v) = any(idx, &|x| {
            x.kind == Kind::DeclRef && x.var.as_ref().is_some_and(|v| v.variable && !v.integer)
        }) {
            return Err(Why::at(
                &v,
                format!(
                    "subscript `{}` uses `{}`, which is not an integer variable",
                    self.snippet(idx),
                    v.name
                ),
            ));
        }
        Ok(())
    }

    /// Checks over a whole run: loop bounds not written, no aliasing.
    fn region_checks(&self, stmts: &[&Node]) -> Result<(), Why> {
        let mut written: BTreeSet<String> = BTreeSet::new();
        let mut accesses: Vec<(Node, bool)> = Vec::new();
        let mut bounds: Vec<(Node, HashSet<String>)> = Vec::new();
        for s in stmts {
            collect(s, &mut written, &mut accesses, &mut bounds, &mut Vec::new());
        }
        // A macro that names a variable is a loop-invariant parameter to
        // the front end: right only if the nest never writes it (macros
        // of constants and of read-only variables, on either side of an
        // operator, are fine).
        for s in stmts {
            if let Some(v) = self
                .hidden_variables(s)
                .into_iter()
                .find(|v| written.contains(&v.name))
            {
                let what = match self.identifier_at(v.start) {
                    Some(m) if m != v.name => format!("`{m}` is a macro that names"),
                    _ => "a macro used here names".to_string(),
                };
                return Err(Why::at(
                    &v,
                    format!(
                        "{what} the variable `{}`, which the nest writes: polytune cannot see that use in the text (write the expression out)",
                        v.name
                    ),
                ));
            }
        }
        for (var, iterators) in &bounds {
            if !iterators.contains(&var.name) && written.contains(&var.name) {
                return Err(Why::at(
                    var,
                    format!("loop bound `{}` is written inside the nest", var.name),
                ));
            }
        }
        // Aliasing: one entry per array variable, written or not.
        let mut arrays: Vec<(Node, bool)> = Vec::new();
        for (b, w) in accesses {
            match arrays.iter_mut().find(|(x, _)| x.name == b.name) {
                Some(x) => x.1 |= w,
                None => arrays.push((b, w)),
            }
        }
        if self.assume_no_alias {
            return Ok(());
        }
        for (p, pw) in &arrays {
            let pv = p.var.as_ref().expect("a reference has its declaration");
            if !pv.pointer || pv.restrict {
                continue;
            }
            for (q, qw) in &arrays {
                let qv = q.var.as_ref().expect("a reference has its declaration");
                if q.name == p.name
                    || qv.restrict
                    || !(pw | qw)
                    || !compatible(&pv.element, &qv.element)
                    || (qv.automatic
                        && (!self.escaping.contains(&q.name)
                            || (pv.parameter && !self.reassigned.contains(&p.name))))
                {
                    continue;
                }
                let what = if pv.parameter {
                    "a pointer parameter"
                } else {
                    "a pointer"
                };
                let fix = match restrict_declaration(&pv.declaration, &p.name) {
                    Some(d) => format!("declare it `{d}`"),
                    None => format!("declare `{}` `restrict`-qualified", p.name),
                };
                return Err(Why::at(
                    p,
                    format!(
                        "`{}` and `{}` may alias: `{}` is {what} that is not `restrict` and one of them is written (if they never overlap, {fix}, or pass --assume-no-alias)",
                        p.name, q.name, p.name
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The declaration of `name` with its pointer `restrict`-qualified, as
/// the user would write it: `int **restrict m1`, `double x[restrict]`,
/// `double A[restrict N][M]`, `double (*restrict p)[M]`. `tokens` are
/// the declaration's tokens as written (an initializer is dropped);
/// `None` when `name` is not declared as a pointer there (a macro hides
/// the declarator).
fn restrict_declaration(tokens: &[String], name: &str) -> Option<String> {
    // Drop an initializer, then split the declarators at commas.
    let mut depth = 0i32;
    let mut segments: Vec<Vec<&str>> = vec![Vec::new()];
    for t in tokens {
        match t.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            "=" | ";" if depth == 0 => break,
            "," if depth == 0 => {
                segments.push(Vec::new());
                continue;
            }
            _ => {}
        }
        segments.last_mut().expect("one segment").push(t);
    }
    let in_brackets = |seg: &[&str], k: usize| {
        seg[..k].iter().filter(|t| **t == "[").count()
            > seg[..k].iter().filter(|t| **t == "]").count()
    };
    let (which, k) = segments.iter().enumerate().find_map(|(i, seg)| {
        (0..seg.len())
            .find(|&k| seg[k] == name && !in_brackets(seg, k))
            .map(|k| (i, k))
    })?;
    let mut decl: Vec<&str> = segments[which].clone();
    let mut k = k;
    if which > 0 {
        // `double *a, *b`: the specifiers come from the first declarator.
        let first = &segments[0];
        let cut = first
            .iter()
            .position(|t| *t == "*" || *t == "(" || *t == "[")
            .unwrap_or(first.len().saturating_sub(1));
        let prefix: Vec<&str> = first[..cut].to_vec();
        k += prefix.len();
        decl = prefix.into_iter().chain(decl).collect();
    }
    if decl.get(k + 1) == Some(&"[") {
        decl.insert(k + 2, "restrict");
    } else {
        let qualifiers = ["const", "volatile", "restrict", "_Atomic"];
        let mut j = k;
        while j > 0 && qualifiers.contains(&decl[j - 1]) {
            j -= 1;
        }
        if j == 0 || decl[j - 1] != "*" {
            return None;
        }
        decl.insert(k, "restrict");
    }
    Some(render(&decl))
}

/// Tokens joined as C is usually written: `double (*restrict p)[M]`.
fn render(tokens: &[&str]) -> String {
    let mut out = String::new();
    let mut brackets = 0;
    let mut prev = "";
    for &t in tokens {
        let tight_after = matches!(prev, "(" | "[") || (prev == "*" && brackets == 0);
        let tight_before = matches!(t, ")" | "[" | "]" | ",");
        if !out.is_empty() && !tight_after && !tight_before {
            out.push(' ');
        }
        out.push_str(t);
        match t {
            "[" => brackets += 1,
            "]" => brackets -= 1,
            _ => {}
        }
        prev = t;
    }
    out
}

/// Collects the local (automatic) arrays of a function body that are
/// used other than to access one of their elements (`r1[i]`, `r1[i][j]`
/// with all dimensions): decayed to a pointer (`q = r1`, `f(r1)`, `r1 +
/// 1`, `r1[i]` of a 2-D array), or with an element's address taken
/// (`&r1[i]`). A pointer can point into such an array and no other.
fn escapes(n: &Node, out: &mut HashSet<String>) {
    // The array at the bottom of a chain of subscripts, and how many.
    fn chain(n: &Node) -> (usize, &Node) {
        match n.kind {
            Kind::Subscript if !n.children.is_empty() => {
                let (k, b) = chain(&n.children[0]);
                (k + 1, b)
            }
            _ => (0, n),
        }
    }
    fn automatic(n: &Node) -> Option<&clang::VarInfo> {
        (n.kind == Kind::DeclRef)
            .then_some(n.var.as_ref())
            .flatten()
            .filter(|v| v.automatic)
    }
    fn indices(n: &Node, out: &mut HashSet<String>) {
        if n.kind == Kind::Subscript
            && let Some((base, rest)) = n.children.split_first()
        {
            indices(base, out);
            rest.iter().for_each(|c| escapes(c, out));
        }
    }
    match n.kind {
        Kind::Subscript => {
            let (depth, base) = chain(n);
            match automatic(base) {
                Some(v) if depth >= v.rank => {
                    // An element: its indices may still use arrays.
                    indices(n, out);
                    return;
                }
                Some(_) => {
                    out.insert(base.name.clone());
                    indices(n, out);
                    return;
                }
                None => {}
            }
        }
        // `&r1[i]`: the element's address (an operator from a macro may
        // be `&` too).
        Kind::Unary if matches!(n.op.as_deref(), None | Some("&")) => {
            if let Some(c) = n.children.first() {
                let (depth, base) = chain(c);
                if let Some(v) = automatic(base)
                    && depth <= v.rank
                {
                    out.insert(base.name.clone());
                }
            }
        }
        Kind::DeclRef => {
            if automatic(n).is_some() {
                out.insert(n.name.clone());
            }
            return;
        }
        _ => {}
    }
    n.children.iter().for_each(|c| escapes(c, out));
}

/// Collects the variables of a function body that are assigned as a
/// whole (`p = q`, `p++`, `p += 2`) or whose address is taken (`&p`): a
/// parameter not among them still holds the value it was called with.
fn reassigned(n: &Node, out: &mut HashSet<String>) {
    let target = match n.kind {
        Kind::Binary if matches!(n.op.as_deref(), None | Some("=")) => n.children.first(),
        Kind::CompoundAssign => n.children.first(),
        Kind::Unary
            if matches!(
                n.op.as_deref(),
                None | Some("&" | "++" | "--" | "post++" | "post--")
            ) =>
        {
            n.children.first()
        }
        _ => None,
    };
    let mut t = target;
    while let Some(x) = t {
        match x.kind {
            Kind::DeclRef => {
                out.insert(x.name.clone());
                break;
            }
            Kind::Other if x.children.len() == 1 => t = x.children.first(),
            _ => break,
        }
    }
    n.children.iter().for_each(|c| reassigned(c, out));
}

fn compatible(a: &str, b: &str) -> bool {
    let chars = ["char", "signed char", "unsigned char", "void"];
    a == b || chars.contains(&a) || chars.contains(&b)
}

/// Written scalars and arrays, array accesses (base, written) and the
/// variables of loop bounds with the iterators in scope.
fn collect(
    n: &Node,
    written: &mut BTreeSet<String>,
    accesses: &mut Vec<(Node, bool)>,
    bounds: &mut Vec<(Node, HashSet<String>)>,
    iterators: &mut Vec<String>,
) {
    let target = match n.kind {
        Kind::Binary if n.op.as_deref() == Some("=") => n.children.first(),
        Kind::CompoundAssign => n.children.first(),
        Kind::Unary if matches!(n.op.as_deref(), Some("++" | "--" | "post++" | "post--")) => {
            n.children.first()
        }
        _ => None,
    };
    if let Some(t) = target.and_then(base) {
        written.insert(t.name.clone());
        if t.var.as_ref().is_some_and(|v| v.array || v.pointer) {
            accesses.push((t.clone(), true));
        }
    }
    if n.kind == Kind::Subscript
        && let Some(b) = base(n)
        && b.var.as_ref().is_some_and(|v| v.array || v.pointer)
    {
        accesses.push((b.clone(), false));
    }
    if n.kind == Kind::For && n.children.len() == 4 {
        // The iterator: `i` of `i = 0`, or of `int i = 0` (a declaration
        // whose variable is the loop's own).
        let init = &n.children[0];
        let it = match init.children.first() {
            Some(v) if init.kind == Kind::Decl && v.kind == Kind::VarDecl => Some(v.name.clone()),
            first => first.and_then(base).map(|b| b.name.clone()),
        };
        iterators.extend(it.clone());
        let scope: HashSet<String> = iterators.iter().cloned().collect();
        for h in &n.children[..3] {
            let mut refs = Vec::new();
            refs_of(h, &mut refs);
            bounds.extend(refs.into_iter().map(|r| (r, scope.clone())));
        }
        collect(&n.children[3], written, accesses, bounds, iterators);
        for h in &n.children[..3] {
            collect(h, written, accesses, bounds, iterators);
        }
        if it.is_some() {
            iterators.pop();
        }
        return;
    }
    for c in &n.children {
        collect(c, written, accesses, bounds, iterators);
    }
}

fn refs_of(n: &Node, out: &mut Vec<Node>) {
    if n.kind == Kind::DeclRef && n.var.as_ref().is_some_and(|v| v.variable) {
        out.push(n.clone());
    }
    n.children.iter().for_each(|c| refs_of(c, out));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect_text(c: &str) -> Detection {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.c");
        std::fs::write(&p, c).unwrap();
        detect_file(&p, &DetectOptions::default()).unwrap()
    }

    #[test]
    fn finds_a_simple_nest_and_marks_it() {
        let d = detect_text(
            "void f(int n, double A[100][100]) {\n  int i, j;\n  for (i = 0; i < n; i++)\n    for (j = 0; j < n; j++)\n      A[i][j] = 0.0;\n}\n",
        );
        assert_eq!(d.regions.len(), 1, "{:?}", d.rejected);
        assert_eq!((d.regions[0].first_line, d.regions[0].last_line), (3, 5));
        assert!(d.marked.contains("  #pragma scop\n  for (i = 0;"));
        assert!(d.marked.contains("A[i][j] = 0.0;\n  #pragma endscop\n}"));
        assert_eq!(frontend::strip_scop_pragmas(&d.marked), d.text);
        assert_eq!(d.source.unwrap().scops.len(), 1);
    }

    #[test]
    fn pointer_parameters_alias() {
        let d = detect_text(
            "void f(int n, double *a, double *b) {\n  int i;\n  for (i = 0; i < n; i++)\n    a[i] = b[i];\n}\n",
        );
        assert!(d.regions.is_empty());
        assert!(
            d.rejected[0].reason.contains("may alias"),
            "{:?}",
            d.rejected
        );
    }

    #[test]
    fn restrict_pointers_do_not_alias() {
        let d = detect_text(
            "void f(int n, double *restrict a, double *restrict b) {\n  int i;\n  for (i = 0; i < n; i++)\n    a[i] = b[i];\n}\n",
        );
        assert_eq!(d.regions.len(), 1, "{:?}", d.rejected);
    }

    #[test]
    fn consecutive_statements_merge() {
        let d = detect_text(
            "void f(int n, double x[restrict 10], double y[restrict 10]) {\n  int i;\n  double s;\n  s = 0.0;\n  for (i = 0; i < n; i++)\n    s += x[i];\n  for (i = 0; i < n; i++)\n    y[i] = s;\n  y[0] = 1.0;\n}\n",
        );
        assert_eq!(d.regions.len(), 1, "{:?}", d.rejected);
        assert_eq!((d.regions[0].first_line, d.regions[0].last_line), (4, 9));
    }

    fn toks(s: &str) -> Vec<String> {
        // Identifiers and numbers, and one token per other character.
        let mut out: Vec<String> = Vec::new();
        let mut word = false;
        for c in s.chars() {
            if c.is_whitespace() {
                word = false;
                continue;
            }
            let w = c.is_ascii_alphanumeric() || c == '_';
            match out.last_mut() {
                Some(last) if w && word => last.push(c),
                _ => out.push(c.to_string()),
            }
            word = w;
        }
        out
    }

    #[test]
    fn the_suggested_fix_names_the_declared_type() {
        let fix = |d: &str, n: &str| restrict_declaration(&toks(d), n);
        assert_eq!(fix("int **m1", "m1").unwrap(), "int **restrict m1");
        assert_eq!(fix("double x[]", "x").unwrap(), "double x[restrict]");
        assert_eq!(fix("double x[100]", "x").unwrap(), "double x[restrict 100]");
        assert_eq!(
            fix("double A[N][M]", "A").unwrap(),
            "double A[restrict N][M]"
        );
        assert_eq!(
            fix("double A[2*N][M+1]", "A").unwrap(),
            "double A[restrict 2 * N][M + 1]"
        );
        assert_eq!(
            fix("double (*p)[M]", "p").unwrap(),
            "double (*restrict p)[M]"
        );
        assert_eq!(
            fix("const double *p", "p").unwrap(),
            "const double *restrict p"
        );
        assert_eq!(
            fix("double *const p", "p").unwrap(),
            "double *const restrict p"
        );
        assert_eq!(fix("double *q = r1", "q").unwrap(), "double *restrict q");
        assert_eq!(fix("double *a, *b", "b").unwrap(), "double *restrict b");
        // A declarator hidden by a macro, or not a pointer: no suggestion.
        assert_eq!(fix("double POLYBENCH_2D(C, NI, NJ, ni, nj)", "C"), None);
        assert_eq!(fix("double s", "s"), None);
    }

    #[test]
    fn array_parameters_are_pointers() {
        let d = detect_text(
            "void f(int n, double x[], double y[]) {\n  int i;\n  for (i = 0; i < n; i++)\n    y[i] = x[i] + 1.0;\n}\n",
        );
        assert!(d.regions.is_empty(), "{:?}", d.regions);
        assert!(
            d.rejected[0].reason.starts_with(
                "`y` and `x` may alias: `y` is a pointer parameter that is not `restrict` and one of them is written (if they never overlap, declare it `double y[restrict]`, or pass --assume-no-alias)"
            ),
            "{:?}",
            d.rejected
        );
        let d = detect_text(
            "void f(int n, double A[restrict 10][10], double x[restrict]) {\n  int i;\n  for (i = 0; i < n; i++)\n    A[i][0] = x[i];\n}\n",
        );
        assert_eq!(d.regions.len(), 1, "{:?}", d.rejected);
    }

    #[test]
    fn a_parameter_never_points_into_a_local_array() {
        let src = "void f(int n, double *u) {\n  int i;\n  double r1[100];\n  for (i = 0; i < n; i++)\n    r1[i] = u[i];\n  for (i = 0; i < n; i++)\n    u[i] = r1[i] * 2.0;\n}\n";
        let d = detect_text(src);
        assert_eq!(d.regions.len(), 1, "{:?}", d.rejected);
        // A static local array can have escaped; a local pointer can
        // point into the local array.
        let d = detect_text(&src.replace("double r1[100]", "static double r1[100]"));
        assert!(
            d.rejected[0].reason.contains("`u` and `r1` may alias"),
            "{:?}",
            d.rejected
        );
        let d = detect_text(
            "void f(int n) {\n  int i;\n  double r1[100];\n  double *w = r1;\n  for (i = 0; i < n; i++)\n    w[i] = r1[i] + 1.0;\n}\n",
        );
        assert!(
            d.rejected[0]
                .reason
                .contains("`w` is a pointer that is not `restrict`"),
            "{:?}",
            d.rejected
        );
        // The array's address escapes: the parameter still holds what it
        // was called with, unless it is assigned.
        let escaped = "void g(double *q);\nvoid f(int n, double *p) {\n  int i;\n  double r1[100];\n  g(r1);\n  for (i = 0; i < n; i++)\n    p[i] = r1[i] + 1.0;\n}\n";
        assert_eq!(detect_text(escaped).regions.len(), 1);
        let d = detect_text(&escaped.replace("g(r1);", "g(r1);\n  p = r1 + 1;\n  g(p);"));
        assert!(
            d.rejected[0].reason.contains("`p` and `r1` may alias"),
            "{:?}",
            d.rejected
        );
    }

    #[test]
    fn assume_no_alias_skips_the_rule() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.c");
        std::fs::write(
            &p,
            "void f(int n, double *a, double *b) {\n  int i;\n  for (i = 0; i < n; i++)\n    a[i] = b[i];\n}\n",
        )
        .unwrap();
        let options = DetectOptions {
            assume_no_alias: true,
            ..DetectOptions::default()
        };
        assert_eq!(detect_file(&p, &options).unwrap().regions.len(), 1);
    }
}
