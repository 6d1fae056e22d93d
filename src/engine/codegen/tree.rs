//! The generated code as an owned tree (isl's AST converted), which the
//! post-passes mark and the printer writes.

use crate::isl::{AstExpr, AstNode, AstOp, IslError};

/// A loop of the generated code.
#[derive(Debug, Clone)]
pub(super) struct Loop {
    pub(super) var: String,
    pub(super) init: AstExpr,
    pub(super) cond: AstExpr,
    pub(super) step: i64,
    pub(super) body: Vec<Node>,
    /// Index of the loop's schedule in [`super::Lowered`], for its facts.
    pub(super) info: Option<usize>,
    pub(super) omp: bool,
    pub(super) simd: bool,
    /// Unroll-and-jam: copies of this loop's body jammed into its only
    /// child, the innermost loop (1: none).
    pub(super) jam: u8,
    /// Unrolling of this innermost loop: copies of its body per
    /// iteration (1: none).
    pub(super) unroll: u8,
    /// Register blocking of this loop and the two below it.
    pub(super) regblock: Option<Box<super::regblock::Plan>>,
    /// Runs as a reduction (`reduce.rs`).
    pub(super) reduce: Option<super::reduce::Reduce>,
    /// Privatized scalars (and arrays) the loop declares at the top of
    /// its body (a copy per iteration) because it runs in parallel or
    /// vectorized.
    pub(super) private: Vec<super::Copy>,
}

/// The generated code before it is printed.
#[derive(Debug, Clone)]
pub(super) enum Node {
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

pub(super) fn convert(n: AstNode, out: &mut Vec<Node>) -> Result<(), IslError> {
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
                jam: 1,
                unroll: 1,
                regblock: None,
                reduce: None,
                private: Vec::new(),
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

pub(super) fn contains_loop(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::For(_) => true,
        Node::If { then, other, .. } => contains_loop(then) || contains_loop(other),
        Node::Stmt { .. } => false,
    })
}

pub(super) fn for_each_stmt(nodes: &[Node], f: &mut dyn FnMut(usize, &[AstExpr])) {
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

/// Whether the iterations of `l` may differ in work: a loop or a guard
/// nested in it depends on its iterator (a triangle's rows). With equal
/// work per iteration a cyclic schedule balances nothing and costs
/// locality, so `cyc=1` leaves such a loop in blocks (and a program
/// without uneven parallel loops is the program without `cyc=1`). A tile
/// loop over rectangular tiles is even: its point loops' bounds name it,
/// but only to start each tile and cut the last one short
/// ([`tile_span`]).
pub(super) fn uneven(l: &Loop) -> bool {
    fn within(nodes: &[Node], var: &str) -> bool {
        nodes.iter().any(|n| match n {
            Node::For(m) => {
                ((super::expr::mentions(&m.init, var) || super::expr::mentions(&m.cond, var))
                    && !tile_span(m, var))
                    || within(&m.body, var)
            }
            Node::If { cond, then, other } => {
                super::expr::mentions(cond, var) || within(then, var) || within(other, var)
            }
            Node::Stmt { .. } => false,
        })
    }
    within(&l.body, &l.var)
}

/// Whether `m` runs the same number of iterations for every value of
/// `var` but the last: its lower bound is affine (in `var` among others)
/// and its upper bound the least of terms without `var` and of one term
/// that is the lower bound plus a constant (a tile's point loop:
/// `for (c2 = 32 * c0; c2 <= min(n - 1, 32 * c0 + 31); …)`).
fn tile_span(m: &Loop, var: &str) -> bool {
    let Some(lower) = super::marks::affine_of(&m.init) else {
        return false;
    };
    let AstExpr::Op(AstOp::Le | AstOp::Lt, c) = &m.cond else {
        return false;
    };
    if c.len() != 2 || !matches!(&c[0], AstExpr::Id(v) if *v == m.var) {
        return false;
    }
    let terms: Vec<&AstExpr> = match &c[1] {
        AstExpr::Op(AstOp::Min, parts) => parts.iter().collect(),
        bound => vec![bound],
    };
    let mut spans = 0;
    for t in terms.into_iter().filter(|t| super::expr::mentions(t, var)) {
        let span = super::marks::affine_of(t)
            .and_then(|upper| upper.add_scaled(&lower, -1))
            .and_then(|d| d.as_constant());
        if span.is_none() {
            return false;
        }
        spans += 1;
    }
    spans == 1
}
