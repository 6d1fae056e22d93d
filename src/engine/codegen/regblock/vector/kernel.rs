//! The micro-kernel on vectors of a register-blocked nest (`pack=1`):
//! one branch per lane count, each loading the accumulators, running the
//! reduction loop on the packed rows' operands and the columns' vectors,
//! and storing the accumulators (see `vector.rs` for the design).

use crate::frontend::scop::ast::{AssignOp, BinOp, Expr, ExprKind, StmtKind, UnOp};
use crate::frontend::scop::print::expr_to_c_with;
use crate::isl::AstExpr;
use std::fmt::Write;

use super::super::super::expr;
use super::super::super::marks::affine_of;
use super::super::super::print::Printer;
use super::super::super::tree::{Loop, Node};
use super::super::Plan;
use super::super::operands::Moves;
use super::Operand;

/// The vector lane counts, by the preprocessor test that selects them.
const LANES: [(&str, i64); 3] = [
    ("defined(__AVX512F__)", 8),
    ("defined(__AVX__)", 4),
    ("", 2),
];

/// A statement at one point of the tile, printed on vectors.
struct Line<'a> {
    id: usize,
    /// The row of the tile (0 to `mr` - 1) and the first column of the
    /// line's vectors (0 to `nr` - 1).
    row: i64,
    column: i64,
    args: Vec<AstExpr>,
    /// The accumulator vector of this point.
    acc: String,
    rhs: &'a Expr,
    lhs: &'a Expr,
    op: AssignOp,
}

impl<'a> Printer<'a> {
    /// The micro-kernel of one block of `mr` rows and `nr` columns on
    /// vectors, for each lane count (see the module's documentation).
    /// Emitted as the body of the loop over blocks of columns.
    pub(in crate::engine::codegen::regblock) fn vector_kernel(
        &mut self,
        loops: [&Loop; 3],
        names: &[String],
        plan: &Plan,
        from: &str,
        indent: &str,
    ) {
        let (rows, columns) = self.operands(loops, plan);
        let branches = lane_branches(plan.tile.nr as i64);
        for (k, &(test, lanes)) in branches.iter().enumerate() {
            match (k, test.is_empty(), branches.len()) {
                (_, _, 1) => {}
                (0, _, _) => {
                    let _ = writeln!(self.out, "#if {test}");
                }
                (_, true, _) => {
                    let _ = writeln!(self.out, "#else");
                }
                _ => {
                    let _ = writeln!(self.out, "#elif {test}");
                }
            }
            let lines = self.kernel_lines(loops, plan, lanes);
            let kernel = Kernel {
                loops,
                names,
                plan,
                from,
                lanes,
                rows: &rows,
                columns: &columns,
            };
            self.lane_kernel(&kernel, &lines, indent);
        }
        if branches.len() > 1 {
            let _ = writeln!(self.out, "#endif");
        }
    }

    /// The lines of the micro-kernel on vectors of `lanes` lanes: each
    /// statement of the body at each row of the tile and each vector of
    /// its columns.
    fn kernel_lines(&self, loops: [&Loop; 3], plan: &Plan, lanes: i64) -> Vec<Line<'a>> {
        let (p, q) = (plan.p, plan.q);
        let (mr, nr) = (plan.tile.mr as i64, plan.tile.nr as i64);
        let vectors = nr / lanes;
        // The points of the tile the vectors start at: row x, column
        // block v (its first column).
        let at = |x: i64, v: i64, args: &[AstExpr]| -> Vec<AstExpr> {
            args.iter()
                .map(|a| {
                    let a = expr::substitute(
                        a,
                        &loops[p].var,
                        &expr::plus(&AstExpr::Id(loops[p].var.clone()), x),
                    );
                    expr::substitute(
                        &a,
                        &loops[q].var,
                        &expr::plus(&AstExpr::Id(loops[q].var.clone()), v * lanes),
                    )
                })
                .collect()
        };
        let mut lines: Vec<Line<'a>> = Vec::new();
        for x in 0..mr {
            for v in 0..vectors {
                for n in &loops[2].body {
                    let Node::Stmt { id, args } = n else { continue };
                    let Some(&stmt) = self.bodies.get(id) else {
                        continue;
                    };
                    let StmtKind::Assign { lhs, op, rhs, .. } = &stmt.kind else {
                        continue;
                    };
                    lines.push(Line {
                        id: *id,
                        row: x,
                        column: v * lanes,
                        args: at(x, v, args),
                        acc: format!("{}{x}_{v}", self.acc),
                        rhs,
                        lhs,
                        op: *op,
                    });
                }
            }
        }
        lines
    }

    /// The accumulated element of a line, with the reduction loop at its
    /// first value (text).
    fn accumulated(&self, reduction: &Loop, l: &Line<'_>) -> String {
        let args: Vec<AstExpr> = l
            .args
            .iter()
            .map(|a| expr::substitute(a, &reduction.var, &reduction.init))
            .collect();
        let subst = self.substitution(l.id, &args);
        expr_to_c_with(l.lhs, &subst)
    }

    /// The micro-kernel on vectors of one lane count: the vector type, the
    /// accumulators loaded, the reduction loop over `lines`, the
    /// accumulators stored.
    fn lane_kernel(&mut self, k: &Kernel<'_, '_>, lines: &[Line<'_>], indent: &str) {
        let (lanes, reduction) = (k.lanes, k.loops[k.plan.r]);
        let nrr = &k.names[k.plan.r];
        let vec = format!("{}vec", self.acc);
        let first = self.accumulated(reduction, &lines[0]);
        let _ = writeln!(
            self.out,
            "{indent}typedef __typeof__({first}) {vec} __attribute__((vector_size({lanes} * sizeof({first}))));"
        );
        let mut seen = std::collections::HashSet::new();
        for l in lines {
            if seen.insert(l.acc.clone()) {
                let e = self.accumulated(reduction, l);
                let _ = writeln!(
                    self.out,
                    "{indent}{vec} {}; __builtin_memcpy(&{}, &{e}, sizeof {});",
                    l.acc, l.acc, l.acc
                );
            }
        }
        let _ = writeln!(
            self.out,
            "{indent}for (long {nrr} = {nrr}_lb; {nrr} <= {nrr}_ub; {nrr}++) {{"
        );
        let i1 = format!("{indent}  ");
        // Loads of the columns' operands, shared by the lines that read
        // the same vector; then the lines.
        let (loads, texts) = self.reduction_step(k, lines);
        for (name, access) in &loads {
            let _ = writeln!(
                self.out,
                "{i1}{vec} {name}; __builtin_memcpy(&{name}, &{access}, sizeof {name});"
            );
        }
        for t in texts {
            let _ = writeln!(self.out, "{i1}{t}");
        }
        let _ = writeln!(self.out, "{indent}}}");
        let mut seen = std::collections::HashSet::new();
        for l in lines {
            if seen.insert(l.acc.clone()) {
                let e = self.accumulated(reduction, l);
                let _ = writeln!(
                    self.out,
                    "{indent}__builtin_memcpy(&{e}, &{}, sizeof {});",
                    l.acc, l.acc
                );
            }
        }
    }

    /// One step of the reduction loop on vectors: the loads of the
    /// operands the lines share (name, access) and the lines' texts.
    fn reduction_step(
        &self,
        k: &Kernel<'_, '_>,
        lines: &[Line<'_>],
    ) -> (Vec<(String, String)>, Vec<String>) {
        let (mr, nr) = (k.plan.tile.mr as i64, k.plan.tile.nr as i64);
        let (nq, nrr) = (&k.names[k.plan.q], &k.names[k.plan.r]);
        let (from, depth) = (k.from, format!("{}depth", self.acc));
        let mut loads: Vec<(String, String)> = Vec::new();
        let mut texts = Vec::new();
        for l in lines {
            let subst = self.substitution(l.id, &l.args);
            let aff = l.args.iter().map(affine_of).collect::<Option<Vec<_>>>();
            let mut ctx = VecCtx {
                subst: &subst,
                moves: Moves {
                    iterators: &self.scop.statements[l.id].iterators,
                    args: aff.as_deref().unwrap_or_default(),
                },
                q: &k.loops[k.plan.q].var,
                array: &k.plan.array,
                acc: &l.acc,
                rows: k.rows,
                columns: k.columns,
                id: l.id,
                row_index: format!("[({nrr} - {nrr}_lb) * {mr} + {}]", l.row),
                column_index: format!(
                    "[({nq} - {from}) * {depth} + ({nrr} - {nrr}_lb) * {nr} + {}]",
                    l.column
                ),
                prefix: &self.acc,
                loads: &mut loads,
            };
            let rhs = ctx.print(l.rhs);
            texts.push(format!("{} {} {rhs};", l.acc, l.op.symbol()));
        }
        (loads, texts)
    }
}

/// The lane counts of the micro-kernel's branches, with the test of each
/// (the last one's empty: "else"): targets that get the same lanes share
/// the weaker test (AVX-512 implies AVX).
fn lane_branches(nr: i64) -> Vec<(&'static str, i64)> {
    let mut branches: Vec<(&'static str, i64)> = Vec::new();
    for &(test, l) in &LANES {
        let lanes = gcd(l, nr);
        match branches.last_mut() {
            Some(last) if last.1 == lanes => last.0 = test,
            _ => branches.push((test, lanes)),
        }
    }
    branches
}

/// What the micro-kernel on vectors of one lane count is built from.
struct Kernel<'k, 'e> {
    loops: [&'k Loop; 3],
    names: &'k [String],
    plan: &'k Plan,
    /// The first column of the packed columns' buffer (text).
    from: &'k str,
    lanes: i64,
    /// The nest's packed operands of the rows and of the columns.
    rows: &'k [Operand<'e>],
    columns: &'k [Operand<'e>],
}

/// What printing one line's right-hand side on vectors needs.
struct VecCtx<'c> {
    /// The statement's identifiers at the line's point.
    subst: &'c dyn Fn(&str) -> Option<(String, u8)>,
    moves: Moves<'c>,
    q: &'c str,
    array: &'c str,
    /// The line's accumulator vector.
    acc: &'c str,
    /// The nest's packed operands, and this line's statement and indices
    /// into their buffers.
    rows: &'c [Operand<'c>],
    columns: &'c [Operand<'c>],
    id: usize,
    row_index: String,
    column_index: String,
    prefix: &'c str,
    /// The column operands' vectors loaded so far: name and address.
    loads: &'c mut Vec<(String, String)>,
}

impl VecCtx<'_> {
    /// The position of `e` among `ops`, when it is one of them.
    fn packed(&self, ops: &[Operand<'_>], e: &Expr) -> Option<usize> {
        ops.iter()
            .position(|(id, _, x)| *id == self.id && std::ptr::eq(*x, e))
    }

    fn print(&mut self, e: &Expr) -> String {
        if !self.moves.moves(e, self.q) {
            return match self.packed(self.rows, e) {
                Some(n) => format!("{}pk{n}{}", self.prefix, self.row_index),
                None => format!("({})", expr_to_c_with(e, self.subst)),
            };
        }
        match &e.kind {
            ExprKind::Access { name, .. } if name == self.array => self.acc.to_string(),
            ExprKind::Access { .. } => {
                // A vector of consecutive elements: of the array itself,
                // or of a packed buffer (`panel` allowed nothing else).
                let address = match self.packed(self.columns, e) {
                    Some(n) => format!("{}pc{n}{}", self.prefix, self.column_index),
                    None => expr_to_c_with(e, self.subst),
                };
                match self.loads.iter().find(|(_, t)| *t == address) {
                    Some((n, _)) => n.clone(),
                    None => {
                        let n = format!("{}b{}", self.prefix, self.loads.len());
                        self.loads.push((n.clone(), address));
                        n
                    }
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let sym = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    _ => "/",
                };
                format!("({} {sym} {})", self.print(lhs), self.print(rhs))
            }
            ExprKind::Unary {
                op: UnOp::Neg,
                expr,
            } => format!("(-{})", self.print(expr)),
            ExprKind::Unary { expr, .. } => self.print(expr),
            // `panel` refused anything else.
            _ => format!("({})", expr_to_c_with(e, self.subst)),
        }
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a } else { gcd(b, a % b) }
}
