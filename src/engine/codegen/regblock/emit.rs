//! Printing a register-blocked nest: the micro-kernel (accumulators
//! loaded, the reduction loop over the unrolled tile, accumulators
//! stored) and the rows and columns left over, in the original order.

use crate::frontend::scop::ast::{Expr, ExprKind, StmtKind};
use crate::isl::AstExpr;
use std::fmt::Write;

use super::super::expr;
use super::super::marks::{shift, upper_bound};
use super::super::print::Printer;
use super::super::tree::{Loop, Node};
use super::{Plan, triple};

/// `expr` with every access to `array` replaced by the variable `name`.
fn replaced(e: &Expr, array: &str, name: &str) -> Expr {
    let mut e = e.clone();
    replace_in(&mut e, array, name);
    e
}

fn replace_in(e: &mut Expr, array: &str, name: &str) {
    match &mut e.kind {
        ExprKind::Access { name: n, .. } if n == array => {
            e.kind = ExprKind::Ident(name.to_string());
        }
        ExprKind::Access { subscripts: v, .. } | ExprKind::Call { args: v, .. } => {
            v.iter_mut().for_each(|x| replace_in(x, array, name));
        }
        ExprKind::Unary { expr, .. } | ExprKind::Cast { expr, .. } => replace_in(expr, array, name),
        ExprKind::Binary { lhs, rhs, .. } => {
            replace_in(lhs, array, name);
            replace_in(rhs, array, name);
        }
        ExprKind::Ternary { cond, then, other } => {
            replace_in(cond, array, name);
            replace_in(then, array, name);
            replace_in(other, array, name);
        }
        _ => {}
    }
}

/// The first access to `array` in `e`.
fn find_access<'e>(e: &'e Expr, array: &str) -> Option<&'e Expr> {
    match &e.kind {
        ExprKind::Access { name, .. } if name == array => Some(e),
        ExprKind::Access { subscripts: v, .. } | ExprKind::Call { args: v, .. } => {
            v.iter().find_map(|x| find_access(x, array))
        }
        ExprKind::Unary { expr, .. } | ExprKind::Cast { expr, .. } => find_access(expr, array),
        ExprKind::Binary { lhs, rhs, .. } => {
            find_access(lhs, array).or_else(|| find_access(rhs, array))
        }
        ExprKind::Ternary { cond, then, other } => find_access(cond, array)
            .or_else(|| find_access(then, array))
            .or_else(|| find_access(other, array)),
        _ => None,
    }
}

impl Printer<'_> {
    /// The statement `id` at `args`, with every access to `array` read and
    /// written as the scalar `name`, when given.
    fn assignment(
        &self,
        id: usize,
        args: &[AstExpr],
        replace: Option<(&str, &str)>,
    ) -> Option<String> {
        let Some(StmtKind::Assign { lhs, op, rhs, .. }) = self.bodies.get(&id).map(|s| &s.kind)
        else {
            return None;
        };
        let subst = self.substitution(id, args);
        let c = crate::frontend::scop::print::assignment_to_c;
        Some(match replace {
            Some((array, name)) => c(
                &replaced(lhs, array, name),
                *op,
                &replaced(rhs, array, name),
                &subst,
            ),
            None => c(lhs, *op, rhs, &subst),
        })
    }

    /// The C text of the access to `array` of statement `id` at `args`.
    fn access_text(&self, id: usize, args: &[AstExpr], array: &str) -> Option<String> {
        let Some(StmtKind::Assign { lhs, rhs, .. }) = self.bodies.get(&id).map(|s| &s.kind) else {
            return None;
        };
        let access = find_access(lhs, array).or_else(|| find_access(rhs, array))?;
        let subst = self.substitution(id, args);
        Some(crate::frontend::scop::print::expr_to_c_with(access, &subst))
    }

    /// The register-blocked nest whose outermost loop is `a` (see the
    /// module's documentation for the code's shape).
    pub(in crate::engine::codegen) fn register_tile(
        &mut self,
        a: &Loop,
        plan: &Plan,
        indent: &str,
    ) {
        let Some((a, b, c)) = triple(a) else {
            return;
        };
        let loops = [a, b, c];
        let names: Vec<String> = loops.iter().map(|l| self.name(&l.var)).collect();
        let (mr, nr) = (plan.tile.mr as i64, plan.tile.nr as i64);
        let (p, q, r) = (plan.p, plan.q, plan.r);
        let _ = writeln!(self.out, "{indent}{{");
        let ind = format!("{indent}  ");
        self.declare_bounds(&loops, &names, plan, &ind);
        let lb = |k: usize| format!("{}_lb", names[k]);
        let ub = |k: usize| format!("{}_ub", names[k]);
        // The first index of the leftover rows / columns.
        let rest = |k: usize, u: i64| format!("{} - ({} - {} + 1) % {u} + 1", ub(k), ub(k), lb(k));
        // Nothing runs when the reduction loop is empty; the scalars
        // would then load elements the original never touches.
        let _ = writeln!(self.out, "{ind}if ({} <= {}) {{", lb(r), ub(r));
        let i1 = format!("{ind}  ");
        if plan.omp {
            let kept = self.parallel_clauses(loops[0]);
            let _ = writeln!(self.out, "{i1}#pragma omp parallel for{kept}");
            self.openmp = true;
        }
        let (np, nq) = (&names[p], &names[q]);
        let _ = writeln!(
            self.out,
            "{i1}for (long {np} = {}; {np} <= {} - {}; {np} += {mr}) {{",
            lb(p),
            ub(p),
            mr - 1
        );
        let i2 = format!("{i1}  ");
        let (lo, hi) = if plan.dependent {
            self.common_columns(&loops, &names, plan, (&lb, &ub), &i2)
        } else {
            (lb(q), ub(q))
        };
        if let Some(panel) = plan.pack {
            self.pack_rows(loops, &names, plan, panel, (&lo, &hi), &i2);
        }
        let _ = writeln!(
            self.out,
            "{i2}for (long {nq} = {lo}; {nq} <= {hi} - {}; {nq} += {nr}) {{",
            nr - 1
        );
        let i3 = format!("{i2}  ");
        if plan.pack.is_some() {
            self.vector_kernel(loops, &names, plan, &lo, &i3);
        } else {
            self.scalar_kernel(&loops, plan, &i3);
        }
        let _ = writeln!(self.out, "{i2}}}");
        // Columns left over in this block of rows: the original order.
        let _ = writeln!(self.out, "{i2}{{");
        let i3 = format!("{i2}  ");
        let _ = writeln!(self.out, "{i3}const long {np}_blk = {np};");
        let mut bounds = self.own_bounds(&loops, &lb, &ub, plan);
        bounds[p] = (format!("{np}_blk"), format!("{np}_blk + {}", mr - 1));
        bounds[q].0 = if plan.dependent {
            format!("polytune_max({}, {nq}_end + 1)", bounds[q].0)
        } else {
            rest(q, nr)
        };
        self.plain_nest(&loops, &bounds, false, &i3);
        let _ = writeln!(self.out, "{i2}}}");
        let _ = writeln!(self.out, "{i1}}}");
        // Rows left over: the original order.
        let mut bounds = self.own_bounds(&loops, &lb, &ub, plan);
        bounds[p].0 = rest(p, mr);
        self.plain_nest(&loops, &bounds, true, &i1);
        let _ = writeln!(self.out, "{ind}}}");
        let _ = writeln!(self.out, "{indent}}}");
    }

    /// The columns every row of the block of rows at `{np}` has, when the
    /// columns' bounds depend on the row: declares their range
    /// (`{nq}_lo`, `{nq}_hi`) and the end of its full blocks of columns
    /// (`{nq}_end`), runs the columns before the range in the original
    /// order, and returns the range's bounds (text).
    fn common_columns(
        &mut self,
        loops: &[&Loop; 3],
        names: &[String],
        plan: &Plan,
        (lb, ub): (&dyn Fn(usize) -> String, &dyn Fn(usize) -> String),
        i2: &str,
    ) -> (String, String) {
        let (mr, nr) = (plan.tile.mr as i64, plan.tile.nr as i64);
        let (p, q) = (plan.p, plan.q);
        let (np, nq) = (&names[p], &names[q]);
        // The columns' own bounds at row `x` of the block (text).
        let q_init = |this: &Self, x: i64| {
            let at = expr::plus(&AstExpr::Id(loops[p].var.clone()), x);
            this.c(&expr::substitute(&loops[q].init, &loops[p].var, &at))
        };
        let q_ub = |this: &Self, x: i64| {
            let at = expr::plus(&AstExpr::Id(loops[p].var.clone()), x);
            let u = upper_bound(loops[q]).unwrap_or(AstExpr::Int(0));
            this.c(&expr::substitute(&u, &loops[p].var, &at))
        };
        // The columns every row of the block has.
        let _ = writeln!(
            self.out,
            "{i2}long {nq}_lo = {}, {nq}_hi = {};",
            q_init(self, 0),
            q_ub(self, 0)
        );
        for x in 1..mr {
            let _ = writeln!(
                self.out,
                "{i2}{nq}_lo = polytune_max({nq}_lo, {}), {nq}_hi = polytune_min({nq}_hi, {});",
                q_init(self, x),
                q_ub(self, x)
            );
        }
        let _ = writeln!(
            self.out,
            "{i2}const long {nq}_end = {nq}_hi < {nq}_lo ? {nq}_lo - 1 : {nq}_hi - ({nq}_hi - {nq}_lo + 1) % {nr};"
        );
        // Columns before them, in the original order.
        let _ = writeln!(self.out, "{i2}{{");
        let i3 = format!("{i2}  ");
        let _ = writeln!(self.out, "{i3}const long {np}_blk = {np};");
        let mut bounds = self.own_bounds(loops, lb, ub, plan);
        bounds[p] = (format!("{np}_blk"), format!("{np}_blk + {}", mr - 1));
        bounds[q].1 = format!("polytune_min({}, {nq}_lo - 1)", bounds[q].1);
        self.plain_nest(loops, &bounds, false, &i3);
        let _ = writeln!(self.out, "{i2}}}");
        (format!("{nq}_lo"), format!("{nq}_hi"))
    }

    /// `const long {n}_lb = …, {n}_ub = …;` for each loop of the nest but
    /// the columns when their bounds depend on the row.
    fn declare_bounds(&mut self, loops: &[&Loop; 3], names: &[String], plan: &Plan, ind: &str) {
        for (k, (l, n)) in loops.iter().zip(names).enumerate() {
            if plan.dependent && k == plan.q {
                continue;
            }
            let ub = upper_bound(l).map(|u| self.c(&u)).unwrap_or_default();
            let _ = writeln!(
                self.out,
                "{ind}const long {n}_lb = {}, {n}_ub = {ub};",
                self.c(&l.init)
            );
        }
    }

    /// The micro-kernel of one block of `mr` rows and `nr` columns on
    /// scalars: one accumulator per point of the tile, loaded, updated
    /// along the reduction loop and stored (scalar replacement).
    fn scalar_kernel(&mut self, loops: &[&Loop; 3], plan: &Plan, ind: &str) {
        let (mr, nr) = (plan.tile.mr as i64, plan.tile.nr as i64);
        let (p, q, r) = (plan.p, plan.q, plan.r);
        let c = loops[2];
        let nrr = self.name(&loops[r].var);
        let (lb_r, ub_r) = (format!("{nrr}_lb"), format!("{nrr}_ub"));
        // One instance of the body per point of the tile, with the
        // reduction loop at its first value (the elements do not depend
        // on it) for the loads and stores.
        let at_first = |nodes: &[Node]| -> Vec<Node> {
            nodes
                .iter()
                .map(|n| match n {
                    Node::Stmt { id, args } => Node::Stmt {
                        id: *id,
                        args: args
                            .iter()
                            .map(|e| expr::substitute(e, &loops[r].var, &loops[r].init))
                            .collect(),
                    },
                    other => other.clone(),
                })
                .collect()
        };
        let points: Vec<(String, Vec<Node>)> = (0..mr)
            .flat_map(|x| (0..nr).map(move |y| (x, y)))
            .map(|(x, y)| {
                let body = shift(&shift(&c.body, &loops[p].var, x), &loops[q].var, y);
                (format!("{}{x}_{y}", self.acc), body)
            })
            .collect();
        for (acc, body) in &points {
            if let Some(Node::Stmt { id, args }) = at_first(body).first() {
                let text = self.access_text(*id, args, &plan.array).unwrap_or_default();
                let _ = writeln!(self.out, "{ind}__typeof__({text}) {acc} = {text};");
            }
        }
        let _ = writeln!(
            self.out,
            "{ind}for (long {nrr} = {lb_r}; {nrr} <= {ub_r}; {nrr}++) {{"
        );
        let i4 = format!("{ind}  ");
        for (acc, body) in &points {
            for n in body {
                if let Node::Stmt { id, args } = n {
                    let line = self
                        .assignment(*id, args, Some((&plan.array, acc)))
                        .unwrap_or_else(|| format!("/* missing statement S{id} */"));
                    let _ = writeln!(self.out, "{i4}{line};");
                }
            }
        }
        let _ = writeln!(self.out, "{ind}}}");
        for (acc, body) in &points {
            if let Some(Node::Stmt { id, args }) = at_first(body).first() {
                let text = self.access_text(*id, args, &plan.array).unwrap_or_default();
                let _ = writeln!(self.out, "{ind}{text} = {acc};");
            }
        }
    }

    /// Each loop's own bounds: the constants computed before the nest,
    /// or, for columns that depend on the row, their expressions.
    fn own_bounds(
        &self,
        loops: &[&Loop; 3],
        lb: &dyn Fn(usize) -> String,
        ub: &dyn Fn(usize) -> String,
        plan: &Plan,
    ) -> Vec<(String, String)> {
        (0..3)
            .map(|k| {
                if plan.dependent && k == plan.q {
                    let u = upper_bound(loops[k]).unwrap_or(AstExpr::Int(0));
                    (self.c(&loops[k].init), self.c(&u))
                } else {
                    (lb(k), ub(k))
                }
            })
            .collect()
    }

    /// The three loops in their order with the given bounds, their marks
    /// kept (OpenMP only when `omp`), and the innermost body.
    fn plain_nest(
        &mut self,
        loops: &[&Loop; 3],
        bounds: &[(String, String)],
        omp: bool,
        indent: &str,
    ) {
        let mut ind = indent.to_string();
        for (l, (lo, hi)) in loops.iter().zip(bounds) {
            let mut marks = (*l).clone();
            marks.omp &= omp;
            self.pragmas(&marks, &ind);
            let v = self.name(&l.var);
            self.open_for(&ind, &v, lo, &format!("{v} <= {hi}"), 1);
            ind.push_str("  ");
        }
        self.nodes(&loops[2].body, &ind);
        for _ in 0..3 {
            ind.truncate(ind.len() - 2);
            let _ = writeln!(self.out, "{ind}}}");
        }
    }
}
