//! Code generation: isl's AST of a schedule, turned into C by our own
//! emitter, with the post-passes of the paper (section 2.6, steps 7–9):
//! SIMD marks on vectorizable innermost loops, OpenMP on the outermost
//! parallel loop of each nest, and unroll-and-jam of the two innermost
//! loops. Every mark rests on a dependence test made while the AST is
//! built (see [`Fact`]), never on the scheduler's word alone.

mod check;
pub mod expr;

use crate::config::Config;
use crate::engine::model::{EngineError, Model};
use crate::frontend::scop::ast::{Stmt, StmtKind};
use crate::frontend::scop::print::{
    PREC_ADDITIVE, PREC_ATOM, assignment_to_c, expr_to_c_with, local_part_to_c,
};
use crate::frontend::scop::{Affine, Scop, Term};
use crate::isl::{self, AstExpr, AstNode, AstOp, IslError, Schedule, Set, UnionMap};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// What the dependences say about one generated loop, given the loops
/// around it. Each is computed the first time a pass asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fact {
    /// No dependence is carried by this loop: iterations may run in any
    /// order or at once.
    Parallel = 0,
    /// This loop and its parent carry only non-negative distances: they
    /// may be interchanged, tiled, or unroll-and-jammed.
    JamWithParent = 1,
    /// No dependence carried by the parent has a non-zero distance along
    /// this loop: it stays parallel after unroll-and-jam of the parent.
    ParallelAfterJam = 2,
}

/// The distances that would falsify `fact` for a loop at depth `d`, as
/// boxes (see [`Set::boxes_like`]); `None` when the fact cannot hold at
/// that depth.
fn counterexamples(fact: Fact, d: usize) -> Option<Vec<Vec<isl::Bound>>> {
    const ZERO: isl::Bound = (Some(0), Some(0));
    const NEG: isl::Bound = (None, Some(-1));
    const POS: isl::Bound = (Some(1), None);
    const ANY: isl::Bound = (None, None);
    let (prefix, tails): (usize, Vec<Vec<isl::Bound>>) = match fact {
        // me != 0
        Fact::Parallel if d >= 1 => (d - 1, vec![vec![NEG], vec![POS]]),
        // parent < 0 or me < 0
        Fact::JamWithParent if d >= 2 => (d - 2, vec![vec![NEG, ANY], vec![ANY, NEG]]),
        // parent > 0 and me != 0
        Fact::ParallelAfterJam if d >= 2 => (d - 2, vec![vec![POS, NEG], vec![POS, POS]]),
        _ => return None,
    };
    Some(
        tails
            .into_iter()
            .map(|tail| std::iter::repeat_n(ZERO, prefix).chain(tail).collect())
            .collect(),
    )
}

/// A loop of the generated code.
#[derive(Debug, Clone)]
struct Loop {
    var: String,
    init: AstExpr,
    cond: AstExpr,
    step: i64,
    body: Vec<Node>,
    /// Index of the loop's schedule in [`Lowered`], for its facts.
    info: Option<usize>,
    omp: bool,
    simd: bool,
    unroll: u8,
}

/// The generated code before it is printed.
#[derive(Debug, Clone)]
enum Node {
    For(Box<Loop>),
    If {
        cond: AstExpr,
        then: Vec<Node>,
        other: Vec<Node>,
    },
    /// Statement `id` with the values of its original iterators.
    Stmt {
        id: usize,
        args: Vec<AstExpr>,
    },
}

fn convert(n: AstNode, out: &mut Vec<Node>) -> Result<(), IslError> {
    match n {
        AstNode::For {
            iterator,
            init,
            cond,
            inc,
            body,
            info,
        } => {
            let AstExpr::Int(step) = inc else {
                return Err(IslError {
                    message: format!("non-constant loop increment {inc:?}"),
                });
            };
            let mut b = Vec::new();
            convert(*body, &mut b)?;
            out.push(Node::For(Box::new(Loop {
                var: iterator,
                init,
                cond,
                step,
                body: b,
                info,
                omp: false,
                simd: false,
                unroll: 1,
            })));
        }
        AstNode::If { cond, then, other } => {
            let mut t = Vec::new();
            convert(*then, &mut t)?;
            let mut o = Vec::new();
            if let Some(e) = other {
                convert(*e, &mut o)?;
            }
            out.push(Node::If {
                cond,
                then: t,
                other: o,
            });
        }
        AstNode::Block(v) => {
            for c in v {
                convert(c, out)?;
            }
        }
        AstNode::Mark { body, .. } => convert(*body, out)?,
        AstNode::User(AstExpr::Op(AstOp::Call, args)) => {
            let id = match &args[0] {
                AstExpr::Id(name) => name.strip_prefix('S').and_then(|k| k.parse().ok()),
                _ => None,
            };
            let Some(id) = id else {
                return Err(IslError {
                    message: format!("unexpected statement {:?}", args[0]),
                });
            };
            out.push(Node::Stmt {
                id,
                args: args[1..].to_vec(),
            });
        }
        AstNode::User(e) => {
            return Err(IslError {
                message: format!("unexpected user expression {e:?}"),
            });
        }
    }
    Ok(())
}

fn contains_loop(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::For(_) => true,
        Node::If { then, other, .. } => contains_loop(then) || contains_loop(other),
        Node::Stmt { .. } => false,
    })
}

fn for_each_stmt(nodes: &[Node], f: &mut dyn FnMut(usize, &[AstExpr])) {
    for n in nodes {
        match n {
            Node::For(l) => for_each_stmt(&l.body, f),
            Node::If { then, other, .. } => {
                for_each_stmt(then, f);
                for_each_stmt(other, f);
            }
            Node::Stmt { id, args } => f(*id, args),
        }
    }
}

/// An isl AST expression as an affine expression, when it is one.
fn affine_of(e: &AstExpr) -> Option<Affine> {
    Some(match e {
        AstExpr::Int(v) => Affine::constant(*v),
        AstExpr::Id(n) => Affine::var(n),
        AstExpr::Op(AstOp::Add, a) => affine_of(&a[0])?.add_scaled(&affine_of(&a[1])?, 1)?,
        AstExpr::Op(AstOp::Sub, a) => affine_of(&a[0])?.add_scaled(&affine_of(&a[1])?, -1)?,
        AstExpr::Op(AstOp::Minus, a) => affine_of(&a[0])?.scale(-1)?,
        AstExpr::Op(AstOp::Mul, a) => {
            let (x, y) = (affine_of(&a[0])?, affine_of(&a[1])?);
            match (x.as_constant(), y.as_constant()) {
                (Some(k), _) => y.scale(k)?,
                (_, Some(k)) => x.scale(k)?,
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// Coefficient of loop variable `var` in `subscript` once the statement's
/// iterators are replaced by `args`; `None` when it cannot be told.
fn stride(
    subscript: &Affine,
    iterators: &[String],
    args: &[Option<Affine>],
    var: &str,
) -> Option<i64> {
    let mut c = 0i64;
    for (t, &k) in &subscript.terms {
        match t {
            Term::Var(name) => {
                if let Some(j) = iterators.iter().position(|i| i == name) {
                    c += k * args[j].as_ref()?.coefficient(var);
                }
            }
            Term::FloorDiv(e, _) => {
                let touches = e.variables().any(|v| {
                    iterators
                        .iter()
                        .position(|i| i == v)
                        .is_some_and(|j| args[j].as_ref().is_none_or(|a| a.coefficient(var) != 0))
                });
                if touches {
                    return None;
                }
            }
        }
    }
    Some(c)
}

/// Whether every array access under `l` is contiguous or invariant along
/// its variable (stride 0 or 1 in the last subscript, 0 elsewhere).
fn unit_stride(l: &Loop, scop: &Scop) -> bool {
    let mut ok = true;
    for_each_stmt(&l.body, &mut |id, args| {
        let st = &scop.statements[id];
        let args: Vec<Option<Affine>> = args.iter().map(affine_of).collect();
        for a in st.reads.iter().chain(&st.writes) {
            let n = a.subscripts.len();
            for (k, s) in a.subscripts.iter().enumerate() {
                match stride(s, &st.iterators, &args, &l.var) {
                    Some(0) => {}
                    Some(1) if k + 1 == n => {}
                    _ => ok = false,
                }
            }
        }
    });
    ok
}

/// Step 7: SIMD marks on parallel, unit-stride innermost loops.
fn mark_simd(nodes: &mut [Node], scop: &Scop, lw: &Lowered<'_, '_>) {
    for n in nodes {
        match n {
            Node::For(l) => {
                if contains_loop(&l.body) {
                    mark_simd(&mut l.body, scop, lw);
                } else if l.step == 1 && unit_stride(l, scop) && lw.holds(l.info, Fact::Parallel) {
                    l.simd = true;
                }
            }
            Node::If { then, other, .. } => {
                mark_simd(then, scop, lw);
                mark_simd(other, scop, lw);
            }
            Node::Stmt { .. } => {}
        }
    }
}

/// Step 8: OpenMP on the outermost parallel loop of each nest.
fn mark_omp(nodes: &mut [Node], lw: &Lowered<'_, '_>) {
    for n in nodes {
        match n {
            Node::For(l) => {
                if lw.holds(l.info, Fact::Parallel) {
                    l.omp = true;
                } else {
                    mark_omp(&mut l.body, lw);
                }
            }
            Node::If { then, other, .. } => {
                mark_omp(then, lw);
                mark_omp(other, lw);
            }
            Node::Stmt { .. } => {}
        }
    }
}

/// Inclusive upper bound of a loop whose condition is `var <= ub` or
/// `var < ub`.
fn upper_bound(l: &Loop) -> Option<AstExpr> {
    match &l.cond {
        AstExpr::Op(AstOp::Le, a) if a[0] == AstExpr::Id(l.var.clone()) => Some(a[1].clone()),
        AstExpr::Op(AstOp::Lt, a) if a[0] == AstExpr::Id(l.var.clone()) => {
            Some(expr::plus(&a[1], -1))
        }
        _ => None,
    }
}

/// Step 9: unroll-and-jam of the two innermost loops when they are
/// permutable, the inner bounds do not depend on the outer loop, and the
/// nest is perfect.
fn mark_unroll(nodes: &mut [Node], factor: u8, lw: &Lowered<'_, '_>) {
    for n in nodes {
        match n {
            Node::For(l) => {
                let candidate = match l.body.as_slice() {
                    [Node::For(inner)] => {
                        !contains_loop(&inner.body)
                            && inner.step == 1
                            && l.step == 1
                            && !expr::mentions(&inner.init, &l.var)
                            && !expr::mentions(&inner.cond, &l.var)
                            && upper_bound(l).is_some()
                            && lw.holds(inner.info, Fact::JamWithParent)
                    }
                    _ => false,
                };
                if candidate {
                    l.unroll = factor;
                    if let [Node::For(inner)] = l.body.as_mut_slice()
                        && !lw.holds(inner.info, Fact::ParallelAfterJam)
                    {
                        inner.simd = false;
                        inner.omp = false;
                    }
                } else {
                    mark_unroll(&mut l.body, factor, lw);
                }
            }
            Node::If { then, other, .. } => {
                mark_unroll(then, factor, lw);
                mark_unroll(other, factor, lw);
            }
            Node::Stmt { .. } => {}
        }
    }
}

/// Replaces `var` by `var + k` in a subtree.
fn shift(nodes: &[Node], var: &str, k: i64) -> Vec<Node> {
    let by = expr::plus(&AstExpr::Id(var.to_string()), k);
    let sub = |e: &AstExpr| expr::substitute(e, var, &by);
    nodes
        .iter()
        .map(|n| match n {
            Node::For(l) => {
                let mut l2 = (**l).clone();
                l2.init = sub(&l.init);
                l2.cond = sub(&l.cond);
                l2.body = shift(&l.body, var, k);
                Node::For(Box::new(l2))
            }
            Node::If { cond, then, other } => Node::If {
                cond: sub(cond),
                then: shift(then, var, k),
                other: shift(other, var, k),
            },
            Node::Stmt { id, args } => Node::Stmt {
                id: *id,
                args: args.iter().map(sub).collect(),
            },
        })
        .collect()
}

/// Everything the printer needs.
struct Printer<'a> {
    scop: &'a Scop,
    bodies: HashMap<usize, &'a Stmt>,
    prefix: String,
    out: String,
    /// Whether an OpenMP directive was written.
    openmp: bool,
}

impl Printer<'_> {
    fn name(&self, isl_name: &str) -> String {
        match isl_name.strip_prefix('c') {
            Some(d) if !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()) => {
                format!("{}{d}", self.prefix)
            }
            _ => {
                let name = isl::unmangle(isl_name);
                if self.scop.unsigned_parameters.iter().any(|p| p == name) {
                    format!("(long)({name})")
                } else {
                    name.to_string()
                }
            }
        }
    }

    fn c(&self, e: &AstExpr) -> String {
        expr::to_c(e, &|n| self.name(n))
    }

    fn nodes(&mut self, nodes: &[Node], indent: &str) {
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

    fn stmt(&mut self, id: usize, args: &[AstExpr], indent: &str) {
        let st = &self.scop.statements[id];
        // Each value with the precedence the statement printer needs:
        // sums and products count as additive (safe for both), anything
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
        let casts = &self.scop.iterator_casts;
        let subst = |name: &str| {
            let k = st.iterators.iter().position(|i| i == name)?;
            Some(match casts.get(name) {
                // The original iterator's type, so that its value means
                // in the statement what it meant in the original.
                Some(ty) => (format!("(({ty})({}))", texts[k].0), PREC_ATOM),
                None => texts[k].clone(),
            })
        };
        let line = match self.bodies.get(&id).map(|s| &s.kind) {
            Some(StmtKind::Assign { lhs, op, rhs, .. }) => assignment_to_c(lhs, *op, rhs, &subst),
            Some(StmtKind::Local { parts, .. }) => {
                // One line, its own block: the block's variables stay
                // private to this instance (unroll-and-jam copies included).
                let c = |e: &crate::frontend::scop::ast::Expr| expr_to_c_with(e, &subst);
                let inner: Vec<String> = parts
                    .iter()
                    .map(|p| format!("{};", local_part_to_c(p, &c)))
                    .collect();
                let _ = writeln!(self.out, "{indent}{{ {} }}", inner.join(" "));
                return;
            }
            _ => format!("/* missing statement S{id} */"),
        };
        let _ = writeln!(self.out, "{indent}{line};");
    }

    fn pragmas(&mut self, l: &Loop, indent: &str) {
        match (l.omp, l.simd) {
            // Nothing may stand between an OpenMP loop directive and its
            // loop, so a loop that is both gets the combined construct.
            (true, true) => {
                let _ = writeln!(self.out, "{indent}#pragma omp parallel for simd");
                self.openmp = true;
            }
            (true, false) => {
                let _ = writeln!(self.out, "{indent}#pragma omp parallel for");
                self.openmp = true;
            }
            // Literal pragmas: GCC ignores an ivdep that comes from a macro.
            (false, true) => self.out.push_str(SIMD_PRAGMA),
            (false, false) => {}
        }
    }

    fn header(&self, var: &str, init: &str, cond: &str, step: i64) -> String {
        let inc = match step {
            1 => format!("{var}++"),
            s => format!("{var} += {s}"),
        };
        format!("for (long {var} = {init}; {cond}; {inc})")
    }

    fn for_loop(&mut self, l: &Loop, indent: &str) {
        let var = self.name(&l.var);
        if l.unroll > 1
            && let (Some(ub), [Node::For(inner)]) = (upper_bound(l), l.body.as_slice())
        {
            let u = l.unroll as i64;
            let lb_name = format!("{var}_lb");
            let ub_name = format!("{var}_ub");
            let _ = writeln!(self.out, "{indent}{{");
            let ind = format!("{indent}  ");
            let _ = writeln!(
                self.out,
                "{ind}const long {lb_name} = {}, {ub_name} = {};",
                self.c(&l.init),
                self.c(&ub)
            );
            // Main loop: blocks of u iterations, the inner loop jammed.
            self.pragmas(l, &ind);
            let _ = writeln!(
                self.out,
                "{ind}{} {{",
                self.header(
                    &var,
                    &lb_name,
                    &format!("{var} <= {ub_name} - {}", u - 1),
                    u
                )
            );
            let mut jammed = (**inner).clone();
            jammed.body = (0..u).flat_map(|k| shift(&inner.body, &l.var, k)).collect();
            self.for_loop(&jammed, &format!("{ind}  "));
            let _ = writeln!(self.out, "{ind}}}");
            // Remainder: the last (count mod u) iterations, unjammed.
            let mut rest = l.clone();
            rest.unroll = 1;
            let start = format!("{ub_name} - ({ub_name} - {lb_name} + 1) % {u} + 1");
            self.pragmas(&rest, &ind);
            let _ = writeln!(
                self.out,
                "{ind}{} {{",
                self.header(&var, &start, &format!("{var} <= {ub_name}"), 1)
            );
            // The unjammed inner loop keeps its own marks (legal without jam).
            self.nodes(&rest.body, &format!("{ind}  "));
            let _ = writeln!(self.out, "{ind}}}");
            let _ = writeln!(self.out, "{indent}}}");
            return;
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
            let _ = writeln!(
                self.out,
                "{ind}{} {{",
                self.header(
                    &var,
                    &self.c(&l.init),
                    &format!("{var} <= {ub_name}"),
                    l.step
                )
            );
            self.nodes(&l.body, &format!("{ind}  "));
            let _ = writeln!(self.out, "{ind}}}");
            let _ = writeln!(self.out, "{indent}}}");
            return;
        }
        self.pragmas(l, indent);
        let _ = writeln!(
            self.out,
            "{indent}{} {{",
            self.header(&var, &self.c(&l.init), &self.c(&l.cond), l.step)
        );
        self.nodes(&l.body, &format!("{indent}  "));
        let _ = writeln!(self.out, "{indent}}}");
    }
}

fn collect_bodies<'a>(stmts: &'a [Stmt], out: &mut HashMap<usize, &'a Stmt>) {
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
fn identifiers(scop: &Scop) -> HashSet<String> {
    let mut ids: HashSet<String> = scop.parameters.iter().cloned().collect();
    ids.extend(scop.arrays.iter().map(|a| a.name.clone()));
    for s in &scop.statements {
        ids.extend(s.iterators.iter().cloned());
    }
    ids.extend(scop.local_names());
    ids
}

/// A loop's dependence distances.
#[derive(Clone)]
enum Distances<'c> {
    /// No dependence between the loop's instances.
    Independent,
    /// The distances and the loop's depth.
    Known(Set<'c>, usize),
    /// isl could not tell: nothing is assumed.
    Unknown,
}

/// The generated loops of one schedule, before the post-passes: what
/// every configuration sharing that schedule starts from. Dependence
/// facts of a loop are computed when a pass first asks for them.
pub struct Lowered<'m, 'c> {
    model: &'m Model<'c>,
    nodes: Vec<Node>,
    /// The run-time check of the model's assumed context, when it is not
    /// every parameter value.
    guard: Option<AstExpr>,
    /// Per loop: statement instances to the loop's schedule dimensions.
    schedules: Vec<UnionMap<'c>>,
    /// Per loop: its dependence distances, once computed.
    distances: RefCell<Vec<Option<Distances<'c>>>>,
    /// Per loop and [`Fact`]: the answer, once computed.
    known: RefCell<Vec<[Option<bool>; 3]>>,
}

impl<'c> Lowered<'_, 'c> {
    /// Whether `fact` holds for a loop; nothing is assumed when it cannot
    /// be told.
    fn holds(&self, info: Option<usize>, fact: Fact) -> bool {
        let Some(k) = info else {
            return false;
        };
        if let Some(v) = self.known.borrow()[k][fact as usize] {
            return v;
        }
        let v = self.decide(k, fact).unwrap_or(false);
        self.known.borrow_mut()[k][fact as usize] = Some(v);
        v
    }

    fn decide(&self, k: usize, fact: Fact) -> Result<bool, IslError> {
        if self.distances.borrow()[k].is_none() {
            // The build's schedule nests one level per loop; flattened,
            // the last dimension is this loop.
            let d = match self.model.distances(&self.schedules[k]) {
                Ok(Some((set, d))) => Distances::Known(set, d),
                Ok(None) => Distances::Independent,
                Err(_) => Distances::Unknown,
            };
            self.distances.borrow_mut()[k] = Some(d);
        }
        let cache = self.distances.borrow();
        let (deltas, d) = match &cache[k] {
            Some(Distances::Known(set, d)) => (set, *d),
            Some(Distances::Independent) => return Ok(true),
            _ => return Ok(false),
        };
        let Some(boxes) = counterexamples(fact, d) else {
            return Ok(false);
        };
        let bad = deltas.boxes_like(&boxes)?;
        deltas.intersect(&bad)?.is_empty()
    }
}

/// Generates the AST of `schedule`, remembering each loop's schedule.
pub fn lower<'m, 'c>(
    model: &'m Model<'c>,
    scop_index: usize,
    schedule: &Schedule<'c>,
) -> Result<Lowered<'m, 'c>, EngineError> {
    let (tree, schedules) =
        isl::build_ast(schedule, &model.context, &mut |b| Ok(b.schedule.clone()))?;
    let mut nodes = Vec::new();
    convert(tree, &mut nodes)?;
    if let Err(f) = check::check(model, &nodes) {
        return Err(match f {
            check::Failure::Wrong(what) => EngineError::Internal {
                scop: scop_index,
                reason: format!("{what}; refusing to emit them (an isl code generation bug)"),
            },
            check::Failure::Unreadable(what) => EngineError::Unsupported {
                scop: scop_index,
                reason: format!("the generated loops cannot be checked (isl expression {what})"),
            },
            check::Failure::Isl(e) => e.into(),
        });
    }
    let guard = match &model.guard {
        Some(set) => Some(isl::expr_from_set(set)?),
        None => None,
    };
    let n = schedules.len();
    Ok(Lowered {
        model,
        nodes,
        guard,
        schedules,
        distances: RefCell::new(vec![None; n]),
        known: RefCell::new(vec![[None; 3]; n]),
    })
}

/// The C text of a SCoP's new body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Emitted {
    pub text: String,
    /// Whether it contains an OpenMP directive (it must be compiled with
    /// OpenMP to run in parallel).
    pub openmp: bool,
}

/// The C text replacing the body of `scop`, with the post-passes `config`
/// asks for. `indent` is the SCoP's indentation.
pub fn emit(scop: &Scop, lowered: &Lowered<'_, '_>, config: &Config, indent: &str) -> Emitted {
    let mut nodes = lowered.nodes.clone();
    if config.simd {
        mark_simd(&mut nodes, scop, lowered);
    }
    if config.omp {
        mark_omp(&mut nodes, lowered);
    }
    if config.unroll > 1 {
        mark_unroll(&mut nodes, config.unroll, lowered);
    }
    let ids = identifiers(scop);
    let clash = ids.iter().any(|i| {
        i.strip_prefix('c')
            .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
    });
    let mut bodies = HashMap::new();
    collect_bodies(&scop.body, &mut bodies);
    let mut p = Printer {
        scop,
        bodies,
        prefix: if clash {
            "polytune_c".into()
        } else {
            "c".into()
        },
        out: String::new(),
        openmp: false,
    };
    let _ = writeln!(p.out, "{indent}/* polytune: {config} */");
    p.out.push_str(&expr::helper_defines());
    match &lowered.guard {
        None => p.nodes(&nodes, indent),
        Some(cond) => {
            // The transformed code is proven for the parameter values of
            // the assumed context only; elsewhere the original runs, as
            // the user wrote it.
            let cond = guard_to_c(cond);
            let _ = writeln!(p.out, "{indent}if ({cond}) {{");
            p.nodes(&nodes, &format!("{indent}  "));
            let _ = writeln!(p.out, "{indent}}} else {{");
            p.out.push_str(&scop.original);
            if !scop.original.ends_with('\n') {
                p.out.push('\n');
            }
            let _ = writeln!(p.out, "{indent}}}");
        }
    }
    p.out.push_str(&expr::helper_undefs());
    Emitted {
        text: p.out,
        openmp: p.openmp,
    }
}

/// C text of the run-time check: every parameter read as a `long`, so
/// that its arithmetic neither overflows an `int` nor wraps unsigned.
fn guard_to_c(cond: &AstExpr) -> String {
    expr::to_c(cond, &|n| format!("(long)({})", isl::unmangle(n)))
}

/// The SIMD mark in the dialect of the compiler that builds the code: no
/// loop-carried dependence, vectorize without run-time alias checks.
const SIMD_PRAGMA: &str = "#if defined(__clang__)\n\
#pragma clang loop vectorize(assume_safety) interleave(enable)\n\
#elif defined(__GNUC__)\n\
#pragma GCC ivdep\n\
#endif\n";

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    fn resident_kib() -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// The runs themselves; ignored by default because resident memory is
    /// per process: other tests running beside it would inflate it. The
    /// test below runs it alone in a child process.
    #[test]
    #[ignore]
    fn leak_probe() {
        let text = "void f(int n, double A[9][9]) { int i, j;\n#pragma scop\nfor (i = 1; i < n; i++) for (j = 1; j < n; j++) A[i][j] = A[i-1][j] + A[i][j-1];\n#pragma endscop\n}\n";
        let src = parse_source(Path::new("t.c"), text.to_string(), &Options::default()).unwrap();
        let config: Config = "fuse=max,tile=32x32,wave=1,omp=1,prevec=1,simd=1,uj=2"
            .parse()
            .unwrap();
        let run = || {
            let out = crate::engine::pipeline::optimize(&src, &config, None).unwrap();
            assert!(out.skipped.is_empty());
        };
        for _ in 0..20 {
            run();
        }
        let before = resident_kib().unwrap_or(0);
        for _ in 0..200 {
            run();
        }
        let after = resident_kib().unwrap_or(0);
        println!("rss-kib: {before} {after}");
    }

    #[test]
    fn the_whole_pipeline_does_not_leak() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "engine::codegen::tests::leak_probe",
                "--nocapture",
                "--test-threads=1",
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        let line = stdout
            .lines()
            .find_map(|l| l.split_once("rss-kib: ").map(|(_, v)| v))
            .expect("the probe prints its resident memory");
        let v: Vec<u64> = line
            .split_whitespace()
            .take(2)
            .map(|x| x.parse().unwrap())
            .collect();
        assert!(
            v[1] < v[0] + 8_000,
            "resident memory grew from {} KiB to {} KiB over 200 runs",
            v[0],
            v[1]
        );
    }
}

#[cfg(test)]
mod marks {
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    fn generate(body: &str, config: &str) -> String {
        let text = format!(
            "void f(int n, int t_steps, double x[99], double y[99], double A[99][99]) {{ int t, i, j;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        );
        let src = parse_source(Path::new("t.c"), text, &Options::default()).unwrap();
        crate::engine::pipeline::optimize(&src, &config.parse().unwrap(), None)
            .unwrap()
            .text
    }

    #[test]
    fn a_loop_carrying_a_dependence_is_never_parallel() {
        let out = generate(
            "for (t = 0; t < t_steps; t++) { for (i = 1; i < n - 1; i++) y[i] = x[i - 1] + x[i + 1]; for (i = 1; i < n - 1; i++) x[i] = y[i]; }",
            "fuse=max,omp=1,simd=1",
        );
        let lines: Vec<&str> = out.lines().collect();
        let t_loop = lines
            .iter()
            .position(|l| l.contains("c0 < t_steps"))
            .unwrap();
        assert!(!lines[t_loop - 1].contains("omp"), "{out}");
        assert_eq!(
            out.matches("#pragma omp parallel for simd").count(),
            2,
            "{out}"
        );
    }

    #[test]
    fn reductions_are_not_vectorized_by_promise() {
        let out = generate(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) x[i] += A[i][j];",
            "fuse=smart,simd=1,omp=1",
        );
        // The j loop carries the reduction: no ivdep on it; i is parallel.
        assert!(!out.contains("GCC ivdep"), "{out}");
        assert!(out.contains("#pragma omp parallel for\n"), "{out}");
    }

    #[test]
    fn unroll_and_jam_needs_permutability() {
        // (i, j) with a (1, -1) dependence: interchange, hence jam, is illegal.
        let out = generate(
            "for (i = 1; i < n; i++) for (j = 0; j < n - 1; j++) A[i][j] = A[i - 1][j + 1] + 1;",
            "fuse=smart,uj=4",
        );
        assert!(
            !out.contains("c0 += 4") && !out.contains("c1 += 4"),
            "{out}"
        );
        let out = generate(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) x[i] += A[i][j];",
            "fuse=smart,uj=4",
        );
        assert!(out.contains("c0 += 4"), "{out}");
    }
}
