//! The printer: the marked tree written as C, with each statement's text
//! from the SCoP's parsed body and its iterators replaced.

use crate::frontend::scop::Scop;
use crate::frontend::scop::ast::{LocalPart, Stmt, StmtKind};
use crate::frontend::scop::print::{
    PREC_ADDITIVE, PREC_ATOM, assignment_to_c, compound_to_c, expr_to_c_with, local_part_to_c,
};
use crate::isl::{self, AstExpr, AstOp};
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use super::expr;
use super::marks::{shift, upper_bound};
use super::reduce::{Kind, Reduce};
use super::tree::{Loop, Node};
use crate::frontend::scop::reduction::{Combine, term};

/// Everything the printer needs.
pub(super) struct Printer<'a> {
    pub(super) scop: &'a Scop,
    pub(super) bodies: HashMap<usize, &'a Stmt>,
    pub(super) prefix: String,
    pub(super) out: String,
    /// Whether an OpenMP directive was written.
    pub(super) openmp: bool,
    /// The next parallel loop is work-shared among the user's team
    /// (`omp for`) rather than a team of its own (`omp parallel for`).
    pub(super) team: bool,
    /// The prefix of register-blocking accumulators (`acc0_1`).
    pub(super) acc: String,
    /// Parallel loops deal their iterations to the threads in turn
    /// (`cyc=1`).
    pub(super) cyclic: bool,
    /// Reduction statements printed with a private accumulator (inside a
    /// loop that runs as a reduction): statement to its name.
    pub(super) renamed: HashMap<usize, String>,
}

impl<'a> Printer<'a> {
    pub(super) fn name(&self, isl_name: &str) -> String {
        c_name(self.scop, &self.prefix, isl_name)
    }

    pub(super) fn c(&self, e: &AstExpr) -> String {
        expr::to_c(e, &|n| self.name(n))
    }

    pub(super) fn nodes(&mut self, nodes: &[Node], indent: &str) {
        for n in nodes {
            match n {
                Node::For(l) => self.for_loop(l, indent),
                Node::If { cond, then, other } => {
                    let _ = writeln!(self.out, "{indent}if ({}) {{", self.c(cond));
                    self.nodes(then, &format!("{indent}  "));
                    if other.is_empty() {
                        let _ = writeln!(self.out, "{indent}}}");
                    } else {
                        let _ = writeln!(self.out, "{indent}}} else {{");
                        self.nodes(other, &format!("{indent}  "));
                        let _ = writeln!(self.out, "{indent}}}");
                    }
                }
                Node::Stmt { id, args } => self.stmt(*id, args, indent),
            }
        }
    }

    /// Statement `id`'s iterators as the values `args`, each with the
    /// precedence the statement printer needs.
    pub(super) fn substitution(
        &self,
        id: usize,
        args: &[AstExpr],
    ) -> impl Fn(&str) -> Option<(String, u8)> + use<'a> {
        let scop: &'a Scop = self.scop;
        let st = &scop.statements[id];
        // Sums and products count as additive (safe for both), anything
        // else that is not atomic is parenthesized here.
        let texts: Vec<(String, u8)> = args
            .iter()
            .map(|a| match a {
                AstExpr::Int(v) if *v >= 0 => (v.to_string(), PREC_ATOM),
                AstExpr::Id(_) => (self.c(a), PREC_ATOM),
                AstExpr::Op(AstOp::Add | AstOp::Sub | AstOp::Mul, _) => (self.c(a), PREC_ADDITIVE),
                _ => (format!("({})", self.c(a)), PREC_ATOM),
            })
            .collect();
        let casts = &scop.iterator_casts;
        move |name: &str| {
            let k = st.iterators.iter().position(|i| i == name)?;
            Some(match casts.get(name) {
                // The original iterator's type, so that its value means
                // in the statement what it meant in the original.
                Some(ty) => (format!("(({ty})({}))", texts[k].0), PREC_ATOM),
                None => texts[k].clone(),
            })
        }
    }

    /// The left-hand side of assignment `id` at `args`.
    pub(super) fn lhs(&self, id: usize, args: &[AstExpr]) -> Option<String> {
        let subst = self.substitution(id, args);
        match self.bodies.get(&id).map(|s| &s.kind) {
            Some(StmtKind::Assign { lhs, .. }) => Some(expr_to_c_with(lhs, &subst)),
            _ => None,
        }
    }

    fn stmt(&mut self, id: usize, args: &[AstExpr], indent: &str) {
        let subst = self.substitution(id, args);
        let line = match self.bodies.get(&id).map(|s| &s.kind) {
            Some(StmtKind::Assign { lhs, op, rhs, .. }) => {
                match (
                    self.renamed.get(&id),
                    self.bodies.get(&id).and_then(|s| term(s)),
                ) {
                    // A reduction's update of its private accumulator.
                    (Some(name), Some((op, e))) => {
                        format!("{name} {} {}", op.symbol(), expr_to_c_with(e, &subst))
                    }
                    _ => assignment_to_c(lhs, *op, rhs, &subst),
                }
            }
            Some(StmtKind::Local { parts, .. }) if LocalPart::is_compound(parts) => {
                // Its own block, its loops' iterators declared in it:
                // private to this instance like the block's variables.
                let st = &self.scop.statements[id];
                self.out
                    .push_str(&compound_to_c(parts, &st.private, indent, &subst));
                return;
            }
            Some(StmtKind::Local { parts, .. }) => {
                // One line, its own block: the block's variables stay
                // private to this instance (unroll-and-jam copies included).
                let inner: Vec<String> = parts
                    .iter()
                    .map(|p| format!("{};", local_part_to_c(p, &subst)))
                    .collect();
                let _ = writeln!(self.out, "{indent}{{ {} }}", inner.join(" "));
                return;
            }
            _ => format!("/* missing statement S{id} */"),
        };
        let _ = writeln!(self.out, "{indent}{line};");
    }

    /// The clauses of a parallel loop over `body` beyond the construct:
    /// those of the user's directive that still apply (`schedule`,
    /// `num_threads`, `proc_bind`, see `frontend/omp.rs`: those of the
    /// directive whose loop holds every statement of its body), and with
    /// `cyc=1` a cyclic schedule where its iterations' work may differ
    /// ([`dealt_in_turn`]), each with a leading space; empty without.
    pub(super) fn parallel_clauses(&self, l: &Loop) -> String {
        let mut kept = user_clauses(self.scop, &l.body);
        if dealt_in_turn(self.scop, self.cyclic, l) {
            kept.push_str(" schedule(static, 1)");
        }
        kept
    }

    pub(super) fn pragmas(&mut self, l: &Loop, indent: &str) {
        match (l.omp, l.simd) {
            // Nothing may stand between an OpenMP loop directive and its
            // loop, so a loop that is both gets the combined construct.
            (true, simd) => {
                let kept = self.parallel_clauses(l);
                let construct = if std::mem::take(&mut self.team) {
                    "for"
                } else {
                    "parallel for"
                };
                let simd = if simd { " simd" } else { "" };
                let fit = self.copies_fit_clause(l);
                let _ = writeln!(self.out, "{indent}#pragma omp {construct}{simd}{kept}{fit}");
                self.openmp = true;
            }
            // Literal pragmas: GCC ignores an ivdep that comes from a macro.
            (false, true) => self.out.push_str(SIMD_PRAGMA),
            (false, false) => {}
        }
    }

    /// The copies of the privatized scalars a loop runs with, one per
    /// iteration: each declared at the top of its body, of the type of
    /// the variable it shadows (in `__typeof__(w) w;` the operand still
    /// names the outer `w`: the new one is in scope after its
    /// declarator). Every read of such a copy follows a write in the
    /// same iteration (`Model::private_in`).
    ///
    /// An array's copy (`priv=2`) is a variable-length array of its rows
    /// on the thread's stack, and the array's name is shadowed by a
    /// pointer to its first row: the copy's, or the array's own in the
    /// iteration that holds the last writes (loop variable `var`, `step`
    /// apart) and wherever the copy would not fit ([`Printer::fits`]: the
    /// loop then runs on one thread, its `if` clause false).
    fn declare_private(&mut self, l: &Loop, indent: &str, step: i64) {
        let var = self.name(&l.var);
        for c in &l.private {
            let name = &c.name;
            let Some(a) = &c.array else {
                let _ = writeln!(self.out, "{indent}__typeof__({name}) {name};");
                continue;
            };
            let rows = self.rows(a);
            let mut own = self.fits(name, &rows);
            if let Some(v) = &a.last {
                let v = self.c(v);
                if step == 1 {
                    let _ = write!(own, " && {var} != {v}");
                } else {
                    let _ = write!(own, " && !({var} <= {v} && {v} <= {var} + {})", step - 1);
                }
            }
            let (flag, copy, at) = (
                format!("polytune_own_{name}"),
                format!("polytune_copy_{name}"),
                format!("polytune_at_{name}"),
            );
            let _ = writeln!(self.out, "{indent}const int {flag} = {own};");
            let _ = writeln!(
                self.out,
                "{indent}__typeof__({name}[0]) {copy}[{flag} ? {rows} : 1];"
            );
            let _ = writeln!(
                self.out,
                "{indent}__typeof__(&{name}[0]) {at} = {flag} ? {copy} : &{name}[0];"
            );
            let _ = writeln!(self.out, "{indent}__typeof__(&{name}[0]) {name} = {at};");
        }
    }

    /// The rows of an array's copy, in C.
    fn rows(&self, a: &super::ArrayCopy) -> String {
        format!("({})", self.c(&successor(&a.top)))
    }

    /// Whether a copy of `rows` rows of array `name` fits a thread's
    /// stack ([`super::reduce::MAX_SECTION_BYTES`], as array sections
    /// reduced in parallel), in C.
    fn fits(&self, name: &str, rows: &str) -> String {
        let max = super::reduce::MAX_SECTION_BYTES;
        format!("{rows} >= 1 && {rows} * (long)sizeof({name}[0]) <= {max}")
    }

    /// The `if` clause of a parallel loop whose iterations copy arrays:
    /// one thread where a copy would not fit its stack (empty without
    /// arrays).
    fn copies_fit_clause(&self, l: &Loop) -> String {
        let fit: Vec<String> = l
            .private
            .iter()
            .filter_map(|c| Some((&c.name, c.array.as_ref()?)))
            .map(|(name, a)| format!("({})", self.fits(name, &self.rows(a))))
            .collect();
        if fit.is_empty() {
            String::new()
        } else {
            format!(" if({})", fit.join(" && "))
        }
    }

    /// Writes the head of a loop, `for (...) {`, at `indent`.
    pub(super) fn open_for(&mut self, indent: &str, var: &str, init: &str, cond: &str, step: i64) {
        let inc = match step {
            1 => format!("{var}++"),
            s => format!("{var} += {s}"),
        };
        let _ = writeln!(
            self.out,
            "{indent}for (long {var} = {init}; {cond}; {inc}) {{"
        );
    }

    fn for_loop(&mut self, l: &Loop, indent: &str) {
        if let Some(plan) = &l.regblock {
            self.register_tile(l, plan, indent);
            return;
        }
        if let Some(r) = &l.reduce {
            return self.reduction_loop(l, r, indent);
        }
        let var = self.name(&l.var);
        if l.jam > 1
            && let (Some(ub), [Node::For(inner)]) = (upper_bound(l), l.body.as_slice())
        {
            // Blocks of `jam` iterations, the inner loop jammed.
            let mut jammed = (**inner).clone();
            jammed.body = (0..i64::from(l.jam))
                .flat_map(|k| shift(&inner.body, &l.var, k))
                .collect();
            return self.blocked(l, &ub, l.jam, &[Node::For(Box::new(jammed))], indent);
        }
        if l.unroll > 1
            && let Some(ub) = upper_bound(l)
        {
            // Blocks of `unroll` iterations, one after the other.
            let copies: Vec<Node> = (0..i64::from(l.unroll))
                .flat_map(|k| shift(&l.body, &l.var, k))
                .collect();
            return self.blocked(l, &ub, l.unroll, &copies, indent);
        }
        if l.simd
            && let Some(ub) = upper_bound(l)
        {
            // GCC drops `ivdep` when it folds a `<= min(..) - 1` style
            // condition; a bound computed before the loop keeps it.
            let ub_name = format!("{var}_ub");
            let _ = writeln!(self.out, "{indent}{{");
            let ind = format!("{indent}  ");
            let _ = writeln!(self.out, "{ind}const long {ub_name} = {};", self.c(&ub));
            self.pragmas(l, &ind);
            self.open_for(
                &ind,
                &var,
                &self.c(&l.init),
                &format!("{var} <= {ub_name}"),
                l.step,
            );
            self.declare_private(l, &format!("{ind}  "), l.step);
            self.nodes(&l.body, &format!("{ind}  "));
            let _ = writeln!(self.out, "{ind}}}");
            let _ = writeln!(self.out, "{indent}}}");
            return;
        }
        self.pragmas(l, indent);
        self.open_for(indent, &var, &self.c(&l.init), &self.c(&l.cond), l.step);
        self.declare_private(l, &format!("{indent}  "), l.step);
        self.nodes(&l.body, &format!("{indent}  "));
        let _ = writeln!(self.out, "{indent}}}");
    }
}

impl Printer<'_> {
    /// Loop `l` (step 1, inclusive upper bound `ub`) in blocks of `u`
    /// iterations whose body is `main`, then the last (count mod `u`)
    /// iterations one by one with `l`'s own body; both keep `l`'s marks
    /// (the inner loop of the remainder, not jammed, keeps its own).
    fn blocked(&mut self, l: &Loop, ub: &AstExpr, u: u8, main: &[Node], indent: &str) {
        let var = self.name(&l.var);
        let u = i64::from(u);
        let lb_name = format!("{var}_lb");
        let ub_name = format!("{var}_ub");
        let _ = writeln!(self.out, "{indent}{{");
        let ind = format!("{indent}  ");
        let _ = writeln!(
            self.out,
            "{ind}const long {lb_name} = {}, {ub_name} = {};",
            self.c(&l.init),
            self.c(ub)
        );
        self.pragmas(l, &ind);
        self.open_for(
            &ind,
            &var,
            &lb_name,
            &format!("{var} <= {ub_name} - {}", u - 1),
            u,
        );
        self.declare_private(l, &format!("{ind}  "), u);
        self.nodes(main, &format!("{ind}  "));
        let _ = writeln!(self.out, "{ind}}}");
        let start = format!("{ub_name} - ({ub_name} - {lb_name} + 1) % {u} + 1");
        self.pragmas(l, &ind);
        self.open_for(&ind, &var, &start, &format!("{var} <= {ub_name}"), 1);
        self.declare_private(l, &format!("{ind}  "), 1);
        self.nodes(&l.body, &format!("{ind}  "));
        let _ = writeln!(self.out, "{ind}}}");
        let _ = writeln!(self.out, "{indent}}}");
    }
}

impl Printer<'_> {
    /// A loop that runs as a reduction (`reduce.rs`): private copies of
    /// its accumulators around it, named in its directive.
    fn reduction_loop(&mut self, l: &Loop, r: &Reduce, indent: &str) {
        let ind = format!("{indent}  ");
        let _ = writeln!(self.out, "{indent}{{");
        let mut copies = Vec::new();
        for (k, (id, args, combine)) in r.accumulators.iter().enumerate() {
            let x = self.lhs(*id, args).expect("a reduction is an assignment");
            let name = format!("polytune_r{k}");
            let _ = writeln!(self.out, "{ind}__typeof__({x}) {name} = {x};");
            self.renamed.insert(*id, name.clone());
            copies.push((x, name, *combine));
        }
        let mut clauses = String::new();
        // Per array section: its first element and length in C.
        let sections: Vec<(String, String, String)> = r
            .sections
            .iter()
            .map(|x| {
                let lo = self.c(&x.lo);
                // hi + 1 - lo.
                let end = successor(&x.hi);
                let len = match x.lo {
                    AstExpr::Int(k) => self.c(&expr::plus(&end, -k)),
                    _ => format!("({}) - ({lo})", self.c(&end)),
                };
                (x.array.clone(), lo, len)
            })
            .collect();
        for c in [Combine::Add, Combine::Mul] {
            let mut names: Vec<String> = copies
                .iter()
                .filter(|x| x.2 == c)
                .map(|x| x.1.clone())
                .collect();
            for (x, (array, lo, len)) in r.sections.iter().zip(&sections) {
                if x.combine == c {
                    names.push(format!("{array}[{lo}:{len}]"));
                }
            }
            if !names.is_empty() {
                let _ = write!(clauses, " reduction({}:{})", c.omp(), names.join(", "));
            }
        }
        let construct = match r.kind {
            Kind::Simd => "simd",
            Kind::Parallel => "parallel for",
            Kind::ParallelSimd => "parallel for simd",
        };
        if r.kind != Kind::Simd {
            clauses.push_str(&self.parallel_clauses(l));
            clauses.push_str(&self.copies_fit_clause(l));
        }
        let directive = format!("#pragma omp {construct}{clauses}");
        if sections.is_empty() {
            self.reduced_loop(l, Some(&directive), &ind);
        } else {
            // The sections' copies fit the threads' stacks, or the loop
            // runs as written.
            let bytes: Vec<String> = sections
                .iter()
                .map(|(array, _, len)| format!("({len}) * (long)sizeof({array}[0])"))
                .collect();
            let max = super::reduce::MAX_SECTION_BYTES;
            let _ = writeln!(self.out, "{ind}if ({} <= {max}) {{", bytes.join(" + "));
            self.reduced_loop(l, Some(&directive), &format!("{ind}  "));
            let _ = writeln!(self.out, "{ind}}} else {{");
            self.reduced_loop(l, None, &format!("{ind}  "));
            let _ = writeln!(self.out, "{ind}}}");
        }
        for (id, _, _) in &r.accumulators {
            self.renamed.remove(id);
        }
        for (x, name, _) in copies {
            let _ = writeln!(self.out, "{ind}{x} = {name};");
        }
        let _ = writeln!(self.out, "{indent}}}");
    }
}

impl Printer<'_> {
    /// The loop of a reduction, under `directive` (none: as written).
    fn reduced_loop(&mut self, l: &Loop, directive: Option<&str>, ind: &str) {
        if let Some(d) = directive {
            let _ = writeln!(self.out, "{ind}{d}");
            self.openmp = true;
        }
        let var = self.name(&l.var);
        let ub = upper_bound(l).expect("a reduction loop has an upper bound");
        self.open_for(
            ind,
            &var,
            &self.c(&l.init),
            &format!("{var} <= {}", self.c(&ub)),
            l.step,
        );
        self.declare_private(l, &format!("{ind}  "), l.step);
        self.nodes(&l.body, &format!("{ind}  "));
        let _ = writeln!(self.out, "{ind}}}");
    }
}

/// `e + 1`, folded where isl wrote `n - 1`.
fn successor(e: &AstExpr) -> AstExpr {
    match e {
        AstExpr::Op(AstOp::Sub, a) => match a[1] {
            AstExpr::Int(v) => expr::plus(&a[0], 1 - v),
            _ => expr::plus(e, 1),
        },
        e => expr::plus(e, 1),
    }
}

/// The C spelling of a name in isl's AST of `scop`: a loop variable
/// `cN` of isl becomes `{prefix}N`; a parameter of unsigned type is read
/// as a `long` (its arithmetic must not wrap); any other name is the
/// user's own, unmangled.
pub(crate) fn c_name(scop: &Scop, prefix: &str, isl_name: &str) -> String {
    match isl_name.strip_prefix('c') {
        Some(d) if !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()) => {
            format!("{prefix}{d}")
        }
        _ => {
            let name = isl::unmangle(isl_name);
            if scop.unsigned_parameters.iter().any(|p| p == name) {
                format!("(long)({name})")
            } else {
                name.to_string()
            }
        }
    }
}

pub(super) fn collect_bodies<'a>(stmts: &'a [Stmt], out: &mut HashMap<usize, &'a Stmt>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { id, .. } | StmtKind::Local { id, .. } => {
                out.insert(*id, s);
            }
            StmtKind::For(l) => collect_bodies(std::slice::from_ref(&l.body), out),
            StmtKind::If { then, other, .. } => {
                collect_bodies(std::slice::from_ref(then), out);
                if let Some(o) = other {
                    collect_bodies(std::slice::from_ref(o), out);
                }
            }
            StmtKind::Block(v) => collect_bodies(v, out),
            _ => {}
        }
    }
}

/// Identifiers of the SCoP, to keep generated names clear of them.
pub(super) fn identifiers(scop: &Scop) -> HashSet<String> {
    let mut ids: HashSet<String> = scop.parameters.iter().cloned().collect();
    ids.extend(scop.arrays.iter().map(|a| a.name.clone()));
    for s in &scop.statements {
        ids.extend(s.iterators.iter().cloned());
    }
    ids.extend(scop.local_names());
    ids.extend(crate::frontend::scop::ast::inner_iterators(&scop.body));
    ids
}

/// C text of the run-time check: every parameter read as a `long`, so
/// that its arithmetic neither overflows an `int` nor wraps unsigned.
pub(super) fn guard_to_c(cond: &AstExpr) -> String {
    expr::to_c(cond, &|n| format!("(long)({})", isl::unmangle(n)))
}

/// The SIMD mark in the dialect of the compiler that builds the code: no
/// loop-carried dependence, vectorize without run-time alias checks.
const SIMD_PRAGMA: &str = "#if defined(__clang__)\n\
#pragma clang loop vectorize(assume_safety) interleave(enable)\n\
#elif defined(__GNUC__)\n\
#pragma GCC ivdep\n\
#endif\n";

/// Whether parallel loop `l` deals its iterations to the threads one at
/// a time (`schedule(static, 1)`): with `cyc=1` (`cyclic`), where its
/// iterations' work may differ ([`super::tree::uneven`]) and the user's
/// directive names no schedule of its own (the user's wins).
pub(super) fn dealt_in_turn(scop: &Scop, cyclic: bool, l: &Loop) -> bool {
    cyclic && super::tree::uneven(l) && !user_clauses(scop, &l.body).contains("schedule(")
}

/// The clauses of the user's directive that still apply to a parallel
/// loop over `body` (see [`Printer::parallel_clauses`]), each with a
/// leading space.
fn user_clauses(scop: &Scop, body: &[Node]) -> String {
    let mut under = Vec::new();
    super::tree::for_each_stmt(body, &mut |id, _| under.push(id));
    scop.directives
        .iter()
        .find(|d| !under.is_empty() && under.iter().all(|s| d.statements.contains(s)))
        .map(|d| {
            d.directive
                .kept
                .iter()
                .map(|c| format!(" {c}"))
                .collect::<String>()
        })
        .unwrap_or_default()
}
