//! The generated loops with their post-pass marks, as a public owned tree:
//! what a variant's cost model (`engine::features`) reads of the code a
//! configuration makes, without printing it. The same marks
//! ([`super::marked`]) the emitter prints from.

use super::reduce::Kind;
use super::tree::Node;
use crate::frontend::scop::Scop;
use crate::isl::AstExpr;

/// A node of a variant's generated code.
#[derive(Debug, Clone)]
pub(crate) enum ShapeNode {
    Loop(Box<ShapeLoop>),
    If {
        cond: AstExpr,
        then: Vec<ShapeNode>,
        other: Vec<ShapeNode>,
    },
    /// Statement `id` of the SCoP, with the values of its original
    /// iterators over the generated loops' variables.
    Stmt {
        id: usize,
        args: Vec<AstExpr>,
    },
}

/// A generated loop, `for (var = init; cond; var += step)`, with its marks.
#[derive(Debug, Clone)]
pub(crate) struct ShapeLoop {
    pub var: String,
    pub init: AstExpr,
    pub cond: AstExpr,
    pub step: i64,
    /// Runs in parallel (an OpenMP directive: the loop's own mark, a
    /// register tile's row-block loop or a parallel reduction).
    pub omp: bool,
    /// Vectorized (a SIMD mark, its own or a reduction's).
    pub simd: bool,
    /// Unroll-and-jam: copies of its body jammed into its only child.
    pub jam: u8,
    /// Unrolling of this innermost loop.
    pub unroll: u8,
    /// Register blocking of this loop and the two below it.
    pub regblock: Option<RegisterBlock>,
    /// Its iterations' work may differ (a triangle's rows:
    /// [`super::tree::uneven`]).
    pub uneven: bool,
    /// A parallel loop that deals its iterations to the threads one at a
    /// time (`cyc=1`: `schedule(static, 1)`), rather than in blocks.
    pub cyclic: bool,
    pub body: Vec<ShapeNode>,
}

/// A register tile on three perfectly nested loops, set on the outermost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RegisterBlock {
    pub mr: u8,
    pub nr: u8,
    /// Positions (0 the outermost of the three) of the row loop, the
    /// column loop and the reduction loop.
    pub p: usize,
    pub q: usize,
    pub r: usize,
    /// Its operands are packed into contiguous buffers (`pack=1` applied).
    pub packed: bool,
}

/// The public view of marked nodes; `cyclic`: `cyc=1`.
pub(super) fn view(scop: &Scop, cyclic: bool, nodes: &[Node]) -> Vec<ShapeNode> {
    nodes
        .iter()
        .map(|n| match n {
            Node::For(l) => {
                let red = l.reduce.as_ref().map(|r| r.kind);
                let plan = l.regblock.as_deref();
                let omp = l.omp
                    || plan.is_some_and(|p| p.omp)
                    || matches!(red, Some(Kind::Parallel | Kind::ParallelSimd));
                ShapeNode::Loop(Box::new(ShapeLoop {
                    var: l.var.clone(),
                    init: l.init.clone(),
                    cond: l.cond.clone(),
                    step: l.step,
                    omp,
                    simd: l.simd || matches!(red, Some(Kind::Simd | Kind::ParallelSimd)),
                    jam: l.jam,
                    unroll: l.unroll,
                    regblock: plan.map(|p| RegisterBlock {
                        mr: p.tile.mr,
                        nr: p.tile.nr,
                        p: p.p,
                        q: p.q,
                        r: p.r,
                        packed: p.pack.is_some(),
                    }),
                    uneven: super::tree::uneven(l),
                    cyclic: omp && super::print::dealt_in_turn(scop, cyclic, l),
                    body: view(scop, cyclic, &l.body),
                }))
            }
            Node::If { cond, then, other } => ShapeNode::If {
                cond: cond.clone(),
                then: view(scop, cyclic, then),
                other: view(scop, cyclic, other),
            },
            Node::Stmt { id, args } => ShapeNode::Stmt {
                id: *id,
                args: args.clone(),
            },
        })
        .collect()
}
