//! How often each generated loop and statement runs, with the parameters
//! bound: the loops of the marked tree numbered, then executed on a
//! sample of their iterations.
//!
//! A loop of at most [`SAMPLES`] iterations runs them all; a longer one
//! runs its first and last iterations and [`SAMPLES`]` - 2` at the middle
//! of equal strata of the others, each standing for its stratum. Exact
//! for rectangular and tiled nests (a partial tile is a first or last
//! iteration) and for bounds linear in the sampled variable (triangular
//! nests) up to the rounding of the strata; the work is at most
//! `SAMPLES` to the depth of the loops that hold other loops or
//! conditions (an innermost loop of statements is counted, not run).

use super::eval::{Env, Interval};
use crate::engine::codegen::shape::{RegisterBlock, ShapeLoop, ShapeNode};
use crate::isl::AstExpr;

/// Iterations a loop runs exactly; beyond, it is sampled.
pub(super) const SAMPLES: i64 = 5;

/// The marked tree, its loops and statements numbered in pre-order.
pub(super) enum Tree {
    Loop(usize, Vec<Tree>),
    If(AstExpr, Vec<Tree>, Vec<Tree>),
    Stmt(usize),
}

/// A generated loop, numbered.
pub(super) struct LoopInfo<'s> {
    pub(super) shape: &'s ShapeLoop,
    /// The loops around it, outermost first.
    pub(super) outer: Vec<usize>,
}

/// A place of a statement in the generated code.
pub(super) struct Site<'s> {
    pub(super) id: usize,
    pub(super) args: &'s [AstExpr],
    /// The loops around it, outermost first.
    pub(super) chain: Vec<usize>,
}

/// The numbered tree with its loops and statement places.
pub(super) struct Indexed<'s> {
    pub(super) tree: Vec<Tree>,
    pub(super) loops: Vec<LoopInfo<'s>>,
    pub(super) sites: Vec<Site<'s>>,
}

pub(super) fn index(nodes: &[ShapeNode]) -> Indexed<'_> {
    let mut ix = Indexed {
        tree: Vec::new(),
        loops: Vec::new(),
        sites: Vec::new(),
    };
    let mut chain = Vec::new();
    ix.tree = number(nodes, &mut chain, &mut ix.loops, &mut ix.sites);
    ix
}

fn number<'s>(
    nodes: &'s [ShapeNode],
    chain: &mut Vec<usize>,
    loops: &mut Vec<LoopInfo<'s>>,
    sites: &mut Vec<Site<'s>>,
) -> Vec<Tree> {
    nodes
        .iter()
        .map(|n| match n {
            ShapeNode::Loop(l) => {
                let k = loops.len();
                loops.push(LoopInfo {
                    shape: l,
                    outer: chain.clone(),
                });
                chain.push(k);
                let body = number(&l.body, chain, loops, sites);
                chain.pop();
                Tree::Loop(k, body)
            }
            ShapeNode::If { cond, then, other } => Tree::If(
                cond.clone(),
                number(then, chain, loops, sites),
                number(other, chain, loops, sites),
            ),
            ShapeNode::Stmt { id, args } => {
                sites.push(Site {
                    id: *id,
                    args,
                    chain: chain.clone(),
                });
                Tree::Stmt(sites.len() - 1)
            }
        })
        .collect()
}

/// How often each loop is entered and iterates, and each statement place
/// runs, in one run of the SCoP.
#[derive(Debug, Clone, Default)]
pub(super) struct Counts {
    pub(super) entries: Vec<f64>,
    pub(super) iterations: Vec<f64>,
    pub(super) instances: Vec<f64>,
}

impl Counts {
    /// Mean iterations per entry of loop `k` (0 when never entered).
    pub(super) fn trip(&self, k: usize) -> f64 {
        if self.entries[k] > 0.0 {
            self.iterations[k] / self.entries[k]
        } else {
            0.0
        }
    }
}

/// Why a loop could not be counted: a bound this evaluation does not read.
#[derive(Debug)]
pub(super) struct Unreadable(pub(super) String);

/// Runs the numbered tree on samples.
pub(super) fn count(ix: &Indexed<'_>, env: &mut Env<'_>) -> Result<Counts, Unreadable> {
    let mut c = Counts {
        entries: vec![0.0; ix.loops.len()],
        iterations: vec![0.0; ix.loops.len()],
        instances: vec![0.0; ix.sites.len()],
    };
    run(&ix.tree, ix, env, 1.0, &mut c)?;
    Ok(c)
}

/// The first and last value of a loop (`None` when it runs no iteration)
/// and its number of iterations, at a point of the loops around it.
pub(super) fn bounds(l: &ShapeLoop, env: &Env<'_>) -> Result<Option<(i64, i64)>, Unreadable> {
    let unreadable = || Unreadable(format!("the bounds of loop {}", l.var));
    let lb = env.eval(&l.init).ok_or_else(unreadable)?;
    let ub = env.upper(&l.var, &l.cond).ok_or_else(unreadable)?;
    let (lb, ub) = (lb.lo, ub.hi);
    Ok((ub >= lb && l.step > 0).then(|| (lb, (ub - lb) / l.step + 1)))
}

fn run(
    nodes: &[Tree],
    ix: &Indexed<'_>,
    env: &mut Env<'_>,
    weight: f64,
    c: &mut Counts,
) -> Result<(), Unreadable> {
    for n in nodes {
        match n {
            Tree::Loop(k, body) => {
                let l = ix.loops[*k].shape;
                c.entries[*k] += weight;
                let Some((first, trips)) = bounds(l, env)? else {
                    continue;
                };
                c.iterations[*k] += weight * trips as f64;
                if body.iter().all(|b| matches!(b, Tree::Stmt(_))) {
                    for b in body {
                        if let Tree::Stmt(s) = b {
                            c.instances[*s] += weight * trips as f64;
                        }
                    }
                    continue;
                }
                for (i, w) in samples(trips) {
                    env.vars
                        .push((l.var.clone(), Interval::point(first + i * l.step)));
                    let r = run(body, ix, env, weight * w, c);
                    env.vars.pop();
                    r?;
                }
            }
            Tree::If(cond, then, other) => {
                // A condition that cannot be told runs its `then` part.
                let branch = if env.truth(cond).unwrap_or(true) {
                    then
                } else {
                    other
                };
                run(branch, ix, env, weight, c)?;
            }
            Tree::Stmt(s) => c.instances[*s] += weight,
        }
    }
    Ok(())
}

/// The iterations run of a loop of `trips` iterations, each with the
/// number of iterations it stands for.
pub(super) fn samples(trips: i64) -> Vec<(i64, f64)> {
    if trips <= SAMPLES {
        return (0..trips).map(|i| (i, 1.0)).collect();
    }
    let middle = trips - 2;
    let strata = SAMPLES - 2;
    let each = middle as f64 / strata as f64;
    let mut v = vec![(0, 1.0)];
    v.extend((0..strata).map(|j| (1 + ((j as f64 + 0.5) * each) as i64, each)));
    v.push((trips - 1, 1.0));
    v
}

/// The register tile a statement place is in: the tile and where its
/// three loops start in the place's chain.
pub(super) fn register_block(ix: &Indexed<'_>, site: &Site<'_>) -> Option<(RegisterBlock, usize)> {
    site.chain
        .iter()
        .enumerate()
        .find_map(|(j, &k)| ix.loops[k].shape.regblock.map(|b| (b, j)))
        .filter(|(_, j)| j + 3 <= site.chain.len())
}
