//! The packed vector micro-kernel of a register-blocked nest (`pack=1`).
//!
//! The rows' operands (the largest sub-expressions of a statement that do
//! not move with the column loop `q` but do with the reduction loop `r`,
//! such as `alpha * A[i][k]`) are computed once per block of `mr` rows
//! into a buffer on the stack, in micro-panel order (`mr` rows side by
//! side for each step of `r`), so the micro-kernel reads them one after
//! the other and broadcasts each from memory. The `nr` accumulators of a
//! row are `nr / L` vectors of `L` lanes (GCC and Clang vector
//! extensions), loaded and stored once per panel. The columns' operands
//! are loaded as vectors straight from the arrays where they are
//! contiguous along `q` (`B[k][j]`); where they are not but do not move
//! with the rows (syrk's `A[j][k]`), they are packed too, per block of
//! rows, `nr` columns side by side for each step of `r`.
//!
//! `L` is chosen when the program is compiled: 8 lanes where AVX-512 is
//! on, 4 with AVX, 2 otherwise (each as a divisor of `nr`). Wider generic
//! vectors than the target's registers are not an option: GCC keeps them
//! in memory (measured on this machine type: gemm LARGE with 64-byte
//! vectors built for AVX2 ran at 0.6 GFLOP/s against 39 for the scalar
//! micro-kernel).
//!
//! Each lane computes exactly what the scalar statement computes at its
//! column, with the same operations in the same order: the packed values
//! are the sub-expressions' own values (the other arrays are not written
//! in the nest, and a sub-expression that does not move with `q` never
//! reads the accumulated array, whose only references are the element
//! written), and vector arithmetic with a scalar operand applies the
//! scalar to every lane.
//!
//! Measured (`scripts/bench_gemm.py`, gemm LARGE, gcc 12, 2 threads): the
//! scalar `rb=4x16` kernel reaches 69 GFLOP/s; by hand, the same with
//! packing but scalar accumulators 50–65 (GCC's SLP vectorizer builds the
//! broadcasts with permutations), vector accumulators without packing 70
//! (each row's operand is multiplied by `alpha` and broadcast from a
//! register, on the port the FMAs need), both together 112; this code
//! generator's `rb=8x16,pack=1` in 32³ tiles 108.5, 72% of OpenBLAS's
//! 151 (the book, docs/src/results, quiet machine, 7 runs).

use crate::frontend::scop::Affine;
use crate::frontend::scop::ast::{AssignOp, Expr, ExprKind, Stmt, StmtKind};
use crate::frontend::scop::print::expr_to_c_with;
use crate::isl::{AstExpr, AstOp};
use std::collections::HashMap;
use std::fmt::Write;

use super::super::expr;
use super::super::marks::{affine_of, upper_bound};
use super::super::print::Printer;
use super::super::tree::{Loop, Node};
use super::Plan;
use super::operands::{Moves, packed_columns, packed_operands, vectorizable};

mod kernel;

/// The most elements a packed buffer may hold: it lives on the stack of
/// the thread that runs the block of rows (128 KiB of doubles).
const MAX_PANEL: i64 = 16384;

/// The bounds of a nest's packed buffers: `mr` × `depth` elements for
/// the rows' operands, `width` × `depth` for the columns' (`depth`: the
/// most steps of the reduction loop, `width` the most columns, each a
/// cache tile's extent; `width` only when columns' operands are packed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::engine::codegen) struct Panel {
    pub(in crate::engine::codegen) depth: i64,
    pub(in crate::engine::codegen) width: Option<i64>,
}

/// The most iterations `l` runs: one of its upper bound's `min` terms
/// less one of its lower bound's `max` terms is a constant (a cache
/// tile's point loop, triangular or not).
fn extent_bound(l: &Loop) -> Option<i64> {
    let terms = |e: &AstExpr, op: AstOp| match e {
        AstExpr::Op(o, a) if *o == op => a.iter().filter_map(affine_of).collect::<Vec<_>>(),
        other => affine_of(other).into_iter().collect(),
    };
    let lower = terms(&l.init, AstOp::Max);
    let upper = terms(&upper_bound(l)?, AstOp::Min);
    upper
        .iter()
        .flat_map(|u| {
            lower
                .iter()
                .filter_map(|lb| u.add_scaled(lb, -1)?.as_constant())
        })
        .min()
        .map(|d| d + 1)
}

/// The statements of the nest's innermost body, with their iterators'
/// values.
fn statements<'b>(
    c: &'b Loop,
    bodies: &HashMap<usize, &'b Stmt>,
) -> Option<Vec<(usize, &'b Stmt, Vec<Affine>)>> {
    c.body
        .iter()
        .map(|n| match n {
            Node::Stmt { id, args } => Some((
                *id,
                *bodies.get(id)?,
                args.iter().map(affine_of).collect::<Option<Vec<_>>>()?,
            )),
            _ => None,
        })
        .collect()
}

/// The bounds of the packed buffers of a register-blocked nest, or why
/// its operands are not packed.
pub(super) fn panel(
    loops: [&Loop; 3],
    plan: &Plan,
    scop: &crate::frontend::scop::Scop,
    bodies: &HashMap<usize, &Stmt>,
) -> Result<Panel, String> {
    if !plan.tile.nr.is_multiple_of(2) {
        return Err(format!(
            "{} columns do not fill vectors of 2 lanes",
            plan.tile.nr
        ));
    }
    let Some(depth) = extent_bound(loops[plan.r]) else {
        return Err(
            "the reduction loop is not the points of a cache tile (tile it: the tile size \
             bounds the packed buffers)"
                .into(),
        );
    };
    let mr = plan.tile.mr as i64;
    if depth.saturating_mul(mr) > MAX_PANEL {
        return Err(format!(
            "a packed buffer of {mr} x {depth} elements is more than {MAX_PANEL} on the stack \
             (use a smaller tile along the reduction loop)"
        ));
    }
    let c = loops[2];
    let stmts = statements(c, bodies).ok_or("the innermost body is not only statements")?;
    let (p, q) = (loops[plan.p].var.as_str(), loops[plan.q].var.as_str());
    let mut columns = false;
    for (id, body, args) in &stmts {
        let StmtKind::Assign { lhs, op, rhs, .. } = &body.kind else {
            return Err("the innermost body has a block of local variables".into());
        };
        if !matches!(
            op,
            AssignOp::Assign | AssignOp::Add | AssignOp::Sub | AssignOp::Mul | AssignOp::Div
        ) {
            return Err(format!("`{}=` is not vector arithmetic", op.symbol()));
        }
        let m = Moves {
            iterators: &scop.statements[*id].iterators,
            args,
        };
        if !matches!(&lhs.kind, ExprKind::Access { name, .. } if *name == plan.array) {
            return Err("a statement writes something else than the accumulated element".into());
        }
        vectorizable(rhs, &m, (p, q), &plan.array)?;
        let mut packed = Vec::new();
        packed_columns(rhs, &m, (p, q), &plan.array, &mut packed);
        columns |= !packed.is_empty();
    }
    let width = if columns {
        let Some(width) = extent_bound(loops[plan.q]) else {
            return Err(
                "a columns' operand to pack is not contiguous, and the columns are not the \
                 points of a cache tile (tile them: the tile size bounds the packed buffers)"
                    .into(),
            );
        };
        if width.saturating_mul(depth) > MAX_PANEL {
            return Err(format!(
                "a packed buffer of {width} x {depth} elements is more than {MAX_PANEL} on the \
                 stack (use smaller tiles)"
            ));
        }
        Some(width)
    } else {
        None
    };
    Ok(Panel { depth, width })
}

/// A packed operand: its statement, the statement's iterators' values in
/// the loops, and the sub-expression.
type Operand<'e> = (usize, Vec<AstExpr>, &'e Expr);

impl<'a> Printer<'a> {
    /// Declares and fills the packed buffers of one block of `mr` rows,
    /// inside the loop over blocks of rows (so each thread has its own):
    /// the rows' operands of its rows, and the columns' operands of the
    /// columns `from..=to` its rows share, when they share any (the
    /// operands are then values the original computes).
    pub(super) fn pack_rows(
        &mut self,
        loops: [&Loop; 3],
        names: &[String],
        plan: &Plan,
        panel: Panel,
        (from, to): (&str, &str),
        indent: &str,
    ) {
        let (p, q, r) = (plan.p, plan.q, plan.r);
        let (mr, nr) = (plan.tile.mr as i64, plan.tile.nr as i64);
        let (rows, columns) = self.operands(loops, plan);
        let (nq, nr_) = (&names[q], &names[r]);
        let depth = format!("{}depth", self.acc);
        if !columns.is_empty() {
            let _ = writeln!(
                self.out,
                "{indent}const long {depth} = {nr_}_ub - {nr_}_lb + 1;"
            );
        }
        // Each buffer's type: its operand's at the first column and the
        // reduction loop's first step (the rows' loop is in scope).
        let first = |e: &AstExpr| {
            let e = expr::substitute(e, &loops[q].var, &loops[q].init);
            expr::substitute(&e, &loops[r].var, &loops[r].init)
        };
        let buffers = [
            ("pk", &rows, mr),
            ("pc", &columns, panel.width.unwrap_or(0)),
        ];
        for (kind, ops, size) in buffers {
            for (n, (id, args, e)) in ops.iter().enumerate() {
                let at: Vec<AstExpr> = args.iter().map(first).collect();
                let subst = self.substitution(*id, &at);
                let _ = writeln!(
                    self.out,
                    "{indent}__typeof__({}) {}{kind}{n}[{size} * {}];",
                    expr_to_c_with(e, &subst),
                    self.acc,
                    panel.depth
                );
            }
        }
        let _ = writeln!(self.out, "{indent}if ({from} <= {to}) {{");
        let i1 = format!("{indent}  ");
        // An operand's text with one loop moved by `k`.
        let at = |this: &Self, (id, args, e): &Operand<'_>, l: usize, k: i64| {
            let by = expr::plus(&AstExpr::Id(loops[l].var.clone()), k);
            let at: Vec<AstExpr> = args
                .iter()
                .map(|a| expr::substitute(a, &loops[l].var, &by))
                .collect();
            expr_to_c_with(e, &this.substitution(*id, &at))
        };
        let step = format!("{i1}for (long {nr_} = {nr_}_lb; {nr_} <= {nr_}_ub; {nr_}++) {{");
        let _ = writeln!(self.out, "{step}");
        let i2 = format!("{i1}  ");
        for x in 0..mr {
            for (n, op) in rows.iter().enumerate() {
                let _ = writeln!(
                    self.out,
                    "{i2}{}pk{n}[({nr_} - {nr_}_lb) * {mr} + {x}] = {};",
                    self.acc,
                    at(self, op, p, x)
                );
            }
        }
        let _ = writeln!(self.out, "{i1}}}");
        if !columns.is_empty() {
            // In blocks of `nr` columns, each `depth` × `nr`: the kernel
            // reads a block's vectors one after the other.
            let _ = writeln!(
                self.out,
                "{i1}for (long {nq} = {from}; {nq} <= {to} - {}; {nq} += {nr}) {{",
                nr - 1
            );
            let _ = writeln!(self.out, "  {step}");
            let i3 = format!("{i2}  ");
            for y in 0..nr {
                for (n, op) in columns.iter().enumerate() {
                    let _ = writeln!(
                        self.out,
                        "{i3}{}pc{n}[({nq} - {from}) * {depth} + ({nr_} - {nr_}_lb) * {nr} + {y}] = {};",
                        self.acc,
                        at(self, op, q, y)
                    );
                }
            }
            let _ = writeln!(self.out, "{i2}}}");
            let _ = writeln!(self.out, "{i1}}}");
        }
        let _ = writeln!(self.out, "{indent}}}");
    }

    /// The packed operands of the nest's statements, the rows' and the
    /// columns', each with its statement and the statement's iterators'
    /// values in the loops.
    fn operands(&self, loops: [&Loop; 3], plan: &Plan) -> (Vec<Operand<'a>>, Vec<Operand<'a>>) {
        let [p, q, r] = [plan.p, plan.q, plan.r].map(|k| loops[k].var.as_str());
        let (mut rows, mut columns) = (Vec::new(), Vec::new());
        for n in &loops[2].body {
            let Node::Stmt { id, args } = n else { continue };
            let Some(StmtKind::Assign { rhs, .. }) = self.bodies.get(id).map(|s| &s.kind) else {
                continue;
            };
            let Some(aff) = args.iter().map(affine_of).collect::<Option<Vec<_>>>() else {
                continue;
            };
            let m = Moves {
                iterators: &self.scop.statements[*id].iterators,
                args: &aff,
            };
            let (mut found, mut cols) = (Vec::new(), Vec::new());
            packed_operands(rhs, &m, (q, r), &mut found);
            packed_columns(rhs, &m, (p, q), &plan.array, &mut cols);
            rows.extend(found.into_iter().map(|e| (*id, args.clone(), e)));
            columns.extend(cols.into_iter().map(|e| (*id, args.clone(), e)));
        }
        (rows, columns)
    }
}
