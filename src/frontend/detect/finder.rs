//! Which statements qualify: the walk over function bodies that finds
//! runs of consecutive statements free of what is not static control
//! (see the module's documentation for the list).

use super::invariant::{any_outside, candidate};
pub(super) use super::why::Why;
use super::*;

/// Walks function bodies and collects candidate regions.
pub(super) struct Finder<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
    pub(super) pure: &'a HashSet<String>,
    /// Object-like macros of the file that expand to expressions writing
    /// nothing and reading no memory (`#define N (n + 1)`).
    pub(super) plain_macros: &'a HashSet<String>,
    /// Function-like macros of the file that name one array element
    /// (`#define A(i, j) a[(i) + (j) * lda]`): the front end reads a call
    /// as that element.
    pub(super) element_macros: &'a HashSet<String>,
    /// The user's pragmas.
    pub(super) pragmas: &'a [Pragma],
    pub(super) assume_no_alias: bool,
    /// The current function's local arrays whose address may be taken
    /// (used other than as `a[i]...[k]`): only these can be reached
    /// through a pointer.
    pub(super) escaping: HashSet<String>,
    /// The current function's variables assigned as a whole (`p = ...`)
    /// or whose address is taken.
    pub(super) reassigned: HashSet<String>,
    /// The current function's variables whose address is taken.
    pub(super) addressed: HashSet<String>,
    pub(super) regions: Vec<Region>,
    pub(super) rejected: Vec<Rejection>,
    pub(super) function: String,
    /// The loop statements around the current point (byte ranges,
    /// outermost first).
    pub(super) loops: Vec<(usize, usize)>,
}

fn contains_loop(n: &Node) -> bool {
    matches!(n.kind, Kind::For | Kind::While | Kind::Do) || n.children.iter().any(contains_loop)
}

pub(super) fn any(n: &Node, f: &dyn Fn(&Node) -> bool) -> Option<Node> {
    if f(n) {
        return Some(n.clone());
    }
    n.children.iter().find_map(|c| any(c, f))
}

/// Whether `n` is built of constants only: no variable, no call, no
/// memory read (literals, enumerators, `sizeof` and operators on them).
pub(super) fn constant(n: &Node) -> bool {
    any(n, &|x| {
        matches!(
            x.kind,
            Kind::Call | Kind::Subscript | Kind::Member | Kind::CompoundAssign
        ) || is_deref(x)
            || (x.kind == Kind::DeclRef && x.var.as_ref().is_none_or(|v| v.variable))
    })
    .is_none()
}

/// The variable an access is through: `A` of `A[i][j]`.
pub(super) fn base(n: &Node) -> Option<&Node> {
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
    pub(super) fn snippet(&self, n: &Node) -> String {
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
    pub(super) fn stmt_end(&self, n: &Node) -> usize {
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
    pub(super) fn block(&mut self, b: &Node) {
        let mut run: Vec<&Node> = Vec::new();
        for s in &b.children {
            match self.pragma(s).and_then(|()| self.stmt(s)) {
                // A work-shared loop of the user's `omp parallel` region is
                // a region of its own.
                Ok(()) if self.team_around(s) => {
                    self.flush(&mut run);
                    run.push(s);
                    self.flush(&mut run);
                }
                Ok(()) => run.push(s),
                // The block of the user's `omp parallel` region: its
                // work-shared loops may be taken (`omp::Team`).
                Err(_) if s.kind == Kind::Compound && self.team_on(s) => {
                    self.flush(&mut run);
                    self.block(s);
                }
                // A bare block (what is left of `#pragma omp parallel
                // { ... }`) is searched like a function body: its
                // statements say for themselves what is wrong.
                Err(why) if s.kind == Kind::Compound && !why.pragma => {
                    self.flush(&mut run);
                    self.block(s);
                }
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
        let is_loop = matches!(s.kind, Kind::For | Kind::While | Kind::Do);
        if is_loop {
            self.loops.push((s.start, self.stmt_end(s)));
        }
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
        if is_loop {
            self.loops.pop();
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
            vouch: why.vouch,
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
    pub(super) fn hidden_variables(&self, s: &Node) -> Vec<Node> {
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
                        s.start <= o
                            && o < end
                            && self.identifier_at(o).is_some_and(|w| {
                                // An element macro's expansion is what the
                                // front end reads (`access_macros.rs`).
                                w == x.name || self.element_macros.contains(w)
                            })
                    })
            },
            &mut out,
        );
        out
    }

    /// Whether `e` comes from the expansion of a pure function-like
    /// macro (`max_score(a, b)`: its operators are not in the text; the
    /// front end reads the call as a pure call).
    fn in_pure_macro(&self, e: &Node) -> bool {
        self.identifier_at(e.start)
            .is_some_and(|m| self.pure.contains(m) || self.element_macros.contains(m))
            && self.text[e.start..]
                .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_')
                .trim_start()
                .starts_with('(')
    }

    /// The identifier that starts at byte `o` of the text.
    pub(super) fn identifier_at(&self, o: usize) -> Option<&str> {
        let rest = self.text.get(o..)?;
        let n = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(rest.len());
        (n > 0).then(|| &rest[..n])
    }

    fn flush(&mut self, run: &mut Vec<&Node>) {
        let stmts = std::mem::take(run);
        if !stmts.iter().any(|s| contains_loop(s)) {
            return;
        }
        let may_alias = match self.region_checks(&stmts) {
            Ok(checked) => checked,
            Err(why) => {
                self.reject(&stmts, why);
                // An inner block may still qualify (`rowstr[j]` is invariant
                // in the loop over `k` inside the loop over `j`).
                for s in &stmts {
                    match s.kind {
                        Kind::Compound => self.block(s),
                        _ => self.descend(s),
                    }
                }
                return;
            }
        };
        let parts = stmts
            .iter()
            .map(|s| {
                let end = self.stmt_end(s);
                let last_line = self.line_of(end.saturating_sub(1));
                let start = self.start_with_directive(s);
                Stmt {
                    start,
                    end,
                    first_line: if start < s.start {
                        self.line_of(start)
                    } else {
                        s.line
                    },
                    last_line,
                    has_loop: contains_loop(s),
                    inside: self.inside(s),
                }
            })
            .collect();
        self.regions.extend(Region::of(
            &self.function,
            parts,
            self.loops.clone(),
            may_alias,
        ));
    }

    /// The regions inside a block statement on their own (nothing for
    /// any other statement), kept apart from the ones found so far.
    fn inside(&mut self, s: &Node) -> Inside {
        if s.kind != Kind::Compound || !contains_loop(s) {
            return Inside::default();
        }
        let regions = std::mem::take(&mut self.regions);
        let rejected = std::mem::take(&mut self.rejected);
        self.block(s);
        Inside {
            regions: std::mem::replace(&mut self.regions, regions),
            rejected: std::mem::replace(&mut self.rejected, rejected),
        }
    }

    /// Does one statement qualify on its own?
    fn stmt(&self, s: &Node) -> Result<(), Why> {
        self.stmt_in(s, false)
    }

    /// The same inside a block that declares variables (`compound`): an
    /// `if` there may depend on data (the front end over-approximates
    /// what its branches touch); loop bounds stay affine.
    fn stmt_in(&self, s: &Node, compound: bool) -> Result<(), Why> {
        match s.kind {
            // A block may declare variables of its own (the front end
            // makes it one statement, a compound one when it also holds
            // loops or conditions; its variables are private to each
            // execution). Its other statements qualify as anywhere.
            Kind::Compound if s.children.iter().any(|c| c.kind == Kind::Decl) => {
                for c in &s.children {
                    match c.kind {
                        Kind::Decl if c.children.iter().all(|v| v.kind == Kind::VarDecl) => {}
                        _ => self.stmt_in(c, true)?,
                    }
                }
                Ok(())
            }
            Kind::Compound => s
                .children
                .iter()
                .try_for_each(|c| self.stmt_in(c, compound)),
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
                self.stmt_in(&s.children[3], compound)
            }
            Kind::If if compound => {
                self.expr(&s.children[0])?;
                s.children[1..]
                    .iter()
                    .try_for_each(|c| self.stmt_in(c, compound))
            }
            // A condition that reads an element (`if (fabsf(y[i]) > lim)`):
            // the front end makes the `if` a compound statement, as in a
            // block with scalars of its own.
            Kind::If if any_outside(&s.children[0], &|x| x.kind == Kind::Subscript).is_some() => {
                self.stmt_in(s, true)
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
    pub(super) fn bound(&self, e: &Node, what: &str) -> Result<(), Why> {
        if let Some(m) = any_outside(e, &|x| {
            matches!(x.kind, Kind::Subscript | Kind::Call | Kind::Member) || is_deref(x)
        }) {
            return Err(Why::at(
                &m,
                format!("data-dependent {what}: `{}` reads memory", self.snippet(&m)),
            ));
        }
        if let Some(v) = any_outside(e, &|x| {
            x.kind == Kind::DeclRef && x.var.as_ref().is_some_and(|v| v.variable && !v.integer)
        }) {
            return Err(Why::at(
                &v,
                format!("{what} uses `{}`, which is not an integer variable", v.name),
            ));
        }
        self.affine_expr(e)
    }

    /// An expression: pure calls, no pointer tricks, affine-looking subscripts.
    fn expr(&self, e: &Node) -> Result<(), Why> {
        self.expr_in(e, false)
    }

    /// An expression in an affine position (a loop bound, a condition, a
    /// subscript): reads of memory that may be invariant are checked over
    /// the whole run (`invariant.rs`).
    fn affine_expr(&self, e: &Node) -> Result<(), Why> {
        self.expr_in(e, true)
    }

    fn expr_in(&self, e: &Node, affine: bool) -> Result<(), Why> {
        if affine && candidate(e) {
            return Ok(());
        }
        match e.kind {
            Kind::Call if !self.pure.contains(&e.name) => {
                return Err(Why::at(
                    e,
                    format!("call to `{}`, which may have side effects", e.name),
                )
                .unless(Vouch::Pure(e.name.clone())));
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
            // A macro whose expansion is built of constants only
            // (`#define MKMAX (2*MSIZE-1)`) is a compile-time constant:
            // the front end reads its name as a parameter, and no
            // operator hidden in it can write (an assignment, `++` or
            // `--` needs a variable to write to).
            Kind::Unary | Kind::Binary if e.op.is_none() && constant(e) => return Ok(()),
            // The same for a macro of the file whose expansion writes
            // nothing and reads no memory (`#define N (n + 1)`): a
            // variable it names that the nest writes is refused apart
            // (a hidden variable).
            Kind::Unary | Kind::Binary
                if e.op.is_none()
                    && self
                        .identifier_at(e.start)
                        .is_some_and(|m| self.plain_macros.contains(m)) =>
            {
                return Ok(());
            }
            Kind::Unary | Kind::Binary | Kind::CompoundAssign
                if e.op.is_none() && !(e.kind != Kind::CompoundAssign && self.in_pure_macro(e)) =>
            {
                return Err(Why::at(
                    e,
                    format!(
                        "`{}` comes from a macro polytune cannot see through",
                        self.snippet(e)
                    ),
                ));
            }
            Kind::Member => {
                let what = self.snippet(e);
                let fix = if e
                    .children
                    .first()
                    .is_some_and(|c| c.kind == Kind::Subscript)
                {
                    "an array of structs is no array polytune models (keep each field in an array of its own)"
                } else {
                    "polytune models arrays named by variables (before the nest, point a local pointer at it, as in `double (*u)[M] = g->u;`, and index that)"
                };
                return Err(Why::at(e, format!("struct member access `{what}`: {fix}")));
            }
            Kind::Subscript => {
                if let Some(idx) = e.children.get(1) {
                    self.subscript(idx)?;
                }
                if let Some((base, rest)) = e.children.split_first() {
                    self.expr_in(base, affine)?;
                    return rest.iter().try_for_each(|c| self.affine_expr(c));
                }
            }
            _ => {}
        }
        e.children.iter().try_for_each(|c| self.expr_in(c, affine))
    }

    pub(super) fn subscript(&self, idx: &Node) -> Result<(), Why> {
        if let Some(m) = any_outside(idx, &|x| {
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
        // A product of variables may be a linearized subscript
        // (`a[lda*j + i]`): the front end delinearizes it or says why not.
        if let Some(m) = any_outside(idx, &|x| {
            x.kind == Kind::Binary
                && matches!(x.op.as_deref(), Some("/" | "%"))
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
        if let Some(v) = any_outside(idx, &|x| {
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
}
