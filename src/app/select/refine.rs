//! Refinement, mostly beyond the paper's space: after the learned search,
//! a greedy local search from the fastest candidate over the primitives
//! the models were never trained on — register tiles with and without packed
//! operands, diamond tiles in time, tile sizes other than 32, loops run as
//! reductions, privatized or expanded scalars, a cyclic distribution of
//! parallel loops, separate unroll factors (issues 20 and 41).
//!
//! Each [`Step`] changes one field of the fastest configuration so far;
//! the steps are tried in a fixed order, most valuable first (on the
//! corpus gemm at LARGE, gcc, 2 threads: the packed 8×16 register tile
//! runs 108.5 GFLOP/s against the paper space's best 39.5, the scalar
//! 4×16 66.5; `scripts/bench_gemm.py`). A step is run only when it
//! produces code not run before and its own primitive was applied (a
//! register tile the rules refuse produces the code without it: not run).
//! When a step's program is faster than the fastest so far, the search
//! moves there and starts again from the first step.

use crate::config::{
    Config, Fusion, MAX_TILE_SIZE, Privatize, Reductions, RegisterTile, UnrollJam, VectorTarget,
};
use crate::engine::features::ParamValues;
use crate::frontend::SourceFile;
use crate::frontend::scop::{Formula, Term};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::fmt;

/// One change to a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// `rb=MRxNR,pack=1` with OpenMP: packed operands and the vector
    /// micro-kernel, in the two shapes that fit the compile target's
    /// registers best
    /// ([`VectorTarget::packed_tiles`]: 6x32 and 8x24 with AVX-512, 4x12
    /// and 6x8 with AVX2).
    PackedRegisterTile,
    /// A packed register tile's column tiles sixteen, else four times as
    /// wide (at most 4096): the panel of the packed operand a thread streams through
    /// (gauss-filter at LARGE, gcc, 2 threads, Zen 5, 2026-11-29, its
    /// best `tile=48x256x256,rb=6x32,pack=1` 5.26×, 1024 columns 6.24×,
    /// 4096 7.02× against Polly-parallel's 6.1×; gemm 25.8× at 256 and
    /// 1024 columns alike). First: it applies only from a packed tile, so
    /// right after the search moved to one, before the other shapes.
    WiderPanels,
    /// `rb=4x16`: scalar accumulators.
    RegisterTile,
    /// `tt=diamond`: time loops tiled in diamonds of 32 by 32, 256 along
    /// the third member (the shape that ran best on jacobi-2d and
    /// fdtd-2d at LARGE; the tile steps then scale it), without a
    /// register tile or unroll-and-jam; also with maximal fusion.
    DiamondTiles,
    /// Every tiled dimension twice as large (at most 256).
    LargerTiles,
    /// Every tiled dimension half as large (at least 8).
    SmallerTiles,
    /// `red=1`, then `red=2`: maximally fused without tiles or
    /// unroll-and-jam, as fused as before, fused maximally.
    Reductions,
    /// `priv=1`, then `priv=2` with OpenMP: temporary arrays too, a copy
    /// per iteration of a parallel loop (doitgen's `sum[p]`, which
    /// otherwise serializes the loops around it).
    Privatized,
    /// `cyc=1` with OpenMP: the iterations of parallel loops of unequal
    /// work dealt to the threads in turn, which balances triangles (LARGE,
    /// gcc, 2 threads, Zen 5, 2026-11-29: syrk's best 4.58× → 6.43×,
    /// cholesky's 2.33× → 3.40×; gramschmidt's 14.2× → 4.2×: a field to
    /// measure, not a rule). Early: it costs no run where no parallel loop
    /// is uneven (the same code as without).
    Cyclic,
    /// `dist=1`: the outermost band's innermost loop distributed, each
    /// statement's own inside the fused ones (reg_detect at LARGE, gcc, 2
    /// threads, Zen 5, 2026-11-29: its best `fuse=no,tile=1x1x16,omp=1,
    /// uj=4,cyc=1` 1.40× → 2.78×, Polly-parallel 1.99×: the division
    /// vectorizes apart from the prefix sum's chain). Early: it costs no
    /// run where the band has one member or one statement (the same code
    /// as without).
    Distributed,
    /// `exp=1`.
    ExpandedScalars,
    /// The innermost loop unrolled twice more (`uj=Ox2`).
    InnerUnroll,
    /// The outer loop's unroll-and-jam factor doubled (at most 8).
    OuterUnroll,
}

impl Step {
    /// In the order they are tried.
    pub(crate) const ALL: [Step; 13] = [
        Step::WiderPanels,
        Step::PackedRegisterTile,
        Step::RegisterTile,
        Step::Cyclic,
        Step::Distributed,
        Step::DiamondTiles,
        Step::LargerTiles,
        Step::SmallerTiles,
        Step::Reductions,
        Step::Privatized,
        Step::ExpandedScalars,
        Step::InnerUnroll,
        Step::OuterUnroll,
    ];

    /// In the order they are tried from a configuration whose program
    /// runs on one thread: privatization first, which may give it a
    /// parallel loop (doitgen's best in the paper's space is sequential:
    /// its `sum[p]` serializes every loop but the innermost, and only
    /// `priv=2` frees them), and costs no run where there is nothing to
    /// privatize (the same program as without).
    pub(crate) const SEQUENTIAL_FIRST: [Step; 13] = Step::privatized_first(Step::ALL);

    /// `order` with [`Step::Privatized`] moved to the front, the others
    /// in their order.
    const fn privatized_first(order: [Step; 13]) -> [Step; 13] {
        let mut at = 0;
        while !matches!(order[at], Step::Privatized) {
            at += 1;
        }
        let mut out = order;
        while at > 0 {
            out[at] = order[at - 1];
            at -= 1;
        }
        out[0] = Step::Privatized;
        out
    }

    /// The steps in the order they are tried from a configuration whose
    /// program has OpenMP directives (`parallel`) or not.
    pub(crate) fn order(parallel: bool) -> [Step; 13] {
        if parallel {
            Step::ALL
        } else {
            Step::SEQUENTIAL_FIRST
        }
    }

    /// `c` changed by this step, in the forms to try in turn; none when it
    /// changes nothing. `rows`: the rows each thread runs of the program's
    /// contractions at the sizes it runs with ([`rows_per_thread`]).
    pub(crate) fn apply(self, c: &Config, target: VectorTarget, rows: Option<u16>) -> Vec<Config> {
        let mut n = *c;
        // A register tile's reduction loop must be a tile's point loop for
        // the operands to be packed, and the tiles bound the packed
        // buffers: untiled dimensions get the paper's size.
        let tiled = |t: [u16; 3]| t.map(|s| if s == 1 { 32 } else { s });
        let scaled = |t: [u16; 3], f: &dyn Fn(u16) -> u16| t.map(|s| if s == 1 { 1 } else { f(s) });
        match self {
            Step::PackedRegisterTile => return packed_forms(c, target, rows),
            Step::RegisterTile => {
                n.regblock = Some(RegisterTile {
                    mr: 4,
                    nr: 16,
                    pack: false,
                });
                n.tile = tiled(c.tile);
                // A contraction fused with the statements around it (gemm's
                // `C *= beta` under `fuse=smart`) is no longer three
                // perfectly nested loops: then distributed.
                return also_fused(n, Fusion::No, c);
            }
            Step::DiamondTiles => {
                n.diamond = true;
                n.tile = [32, 32, 256];
                n.regblock = None;
                n.unroll = UnrollJam::NONE;
                // A stencil's statements share its time band only when
                // fused; smart fusion may keep them apart.
                return also_fused(n, Fusion::Max, c);
            }
            Step::WiderPanels => {
                // Sixteen times first (the widest, where gauss-filter ran
                // fastest), then four times if that was no faster: one run
                // reaches 4096 columns from 256, and a kernel that loses
                // there (gemm: 2048 columns 6% slower) still gets 1024.
                if !(c.regblock.is_some_and(|r| r.pack) && c.tile[1] > 1) {
                    return vec![];
                }
                let mut forms: Vec<Config> = Vec::new();
                for factor in [16, 4] {
                    let mut w = n;
                    w.tile[1] =
                        (u32::from(c.tile[1]) * factor).min(u32::from(MAX_TILE_SIZE)) as u16;
                    if w != *c && !forms.contains(&w) {
                        forms.push(w);
                    }
                }
                return forms;
            }
            Step::LargerTiles => n.tile = scaled(c.tile, &|s| (s * 2).min(256)),
            Step::SmallerTiles => n.tile = scaled(c.tile, &|s| (s / 2).max(8)),
            Step::Reductions => return reduction_forms(c),
            Step::Privatized => {
                let mut forms = Vec::new();
                if !c.privatize.on() {
                    n.privatize = Privatize::Scalars;
                    forms.push(n);
                }
                if c.privatize != Privatize::Arrays {
                    forms.push(Config {
                        privatize: Privatize::Arrays,
                        omp: true,
                        ..n
                    });
                }
                forms.retain(|x| x != c);
                return forms;
            }
            Step::Cyclic => {
                n.cyclic = true;
                n.omp = true;
            }
            Step::Distributed => n.distribute = true,
            Step::ExpandedScalars => n.expand = true,
            Step::InnerUnroll => {
                n.unroll = UnrollJam {
                    inner: 2,
                    ..c.unroll
                }
            }
            Step::OuterUnroll => {
                n.unroll = UnrollJam {
                    outer: (c.unroll.outer * 2).min(8),
                    ..c.unroll
                }
            }
        }
        if n == *c { vec![] } else { vec![n] }
    }

    /// `c` without this step's own primitive, where the engine may refuse
    /// it (and then write the same code as this).
    fn without(self, c: &Config) -> Option<Config> {
        let mut b = *c;
        match self {
            Step::PackedRegisterTile | Step::RegisterTile => b.regblock = None,
            Step::DiamondTiles => b.diamond = false,
            Step::Reductions => b.reduce = Reductions::Off,
            Step::Privatized => b.privatize = Privatize::Off,
            Step::Cyclic => b.cyclic = false,
            Step::Distributed => b.distribute = false,
            Step::ExpandedScalars => b.expand = false,
            Step::InnerUnroll => b.unroll.inner = 1,
            Step::WiderPanels | Step::LargerTiles | Step::SmallerTiles | Step::OuterUnroll => {
                return None;
            }
        }
        Some(b)
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Step::PackedRegisterTile => "packed register tile",
            Step::WiderPanels => "wider panels",
            Step::RegisterTile => "register tile 4x16",
            Step::DiamondTiles => "diamond tiles in time",
            Step::LargerTiles => "larger tiles",
            Step::SmallerTiles => "smaller tiles",
            Step::Reductions => "reductions",
            Step::Privatized => "privatized scalars or arrays",
            Step::Cyclic => "iterations dealt in turn",
            Step::Distributed => "innermost loop distributed",
            Step::ExpandedScalars => "expanded scalars",
            Step::InnerUnroll => "inner loop unrolled",
            Step::OuterUnroll => "more unroll-and-jam",
        }
    }
}

/// The rows each of `threads` threads runs when the rows of the file's
/// largest nest of three or more loops are split evenly among them: the
/// extent of its outermost loop (a statement's first iterator, bounded by
/// its domain's constraints on that iterator and the parameters alone) at
/// the parameters' values. `None`: no such nest, a parameter without a
/// value, or bounds that depend on other iterators only.
pub(crate) fn rows_per_thread(
    src: &SourceFile,
    params: &ParamValues,
    threads: usize,
) -> Option<u16> {
    let rows = src
        .scops
        .iter()
        .flat_map(|s| &s.statements)
        .filter(|s| s.iterators.len() >= 3)
        .filter_map(|s| first_extent(&s.domain, &s.iterators[0], params))
        .max()?;
    let threads = threads.max(1) as i64;
    let share = (rows + threads - 1) / threads;
    u16::try_from(share.clamp(1, i64::from(u16::MAX))).ok()
}

/// The number of values of `it` in `domain` at `params`, from the
/// conjunction's constraints on `it` and the parameters alone.
fn first_extent(domain: &Formula, it: &str, params: &ParamValues) -> Option<i64> {
    let atoms: Vec<&crate::frontend::scop::Constraint> = match domain {
        Formula::Atom(c) => vec![c],
        Formula::And(fs) => fs
            .iter()
            .filter_map(|f| match f {
                Formula::Atom(c) => Some(c),
                _ => None,
            })
            .collect(),
        Formula::Or(_) => return None,
    };
    let (mut lo, mut hi) = (i64::MIN, i64::MAX);
    for c in atoms {
        let mut a = 0;
        let mut rest = c.expr.constant;
        let mut only_params = true;
        for (term, &k) in &c.expr.terms {
            match term {
                Term::Var(v) if v == it => a = k,
                Term::Var(v) => match params.get(v) {
                    Some(&x) => rest = rest.checked_add(k.checked_mul(x)?)?,
                    None => only_params = false,
                },
                Term::FloorDiv(..) => only_params = false,
            }
        }
        if a == 0 || !only_params {
            continue;
        }
        // a * it + rest >= 0 (or == 0): a bound on one side (both).
        let bound = if a > 0 {
            -rest.div_euclid(a)
        } else {
            rest.div_euclid(-a)
        };
        if a > 0 || c.equality {
            lo = lo.max(bound);
        }
        if a < 0 || c.equality {
            hi = hi.min(bound);
        }
    }
    if lo == i64::MIN || hi == i64::MAX {
        return None;
    }
    let n = hi.checked_sub(lo)?.checked_add(1)?;
    (n > 0).then_some(n)
}

/// The packed register tile's forms from `c` ([`Step::PackedRegisterTile`]).
fn packed_forms(c: &Config, target: VectorTarget, rows: Option<u16>) -> Vec<Config> {
    let mut n = *c;
    // Cache tiles of the shape's own: 256 steps of the
    // reduction, 8 blocks of columns, and along the rows (the
    // parallel tile loop of a band ordered rows, reduction,
    // columns, as gemm's is) first each thread's share of the
    // rows in one tile, then 8 blocks of rows. Every row tile
    // streams the whole columns' operand from memory, and a
    // tile is what a thread takes, so tall tiles split evenly
    // over the threads read it the fewest times without
    // leaving a thread idle. gemm LARGE, gcc, 2 threads, Zen 5
    // guest, median of 5: 8x24 in 64x256x192 tiles 0.145 s,
    // in 1000x256x192 0.116 s, in 384x256x192 (six tiles, one
    // of 80 rows: three and three) 0.132 s.
    let mut forms = Vec::new();
    let shapes: Vec<RegisterTile> = target.packed_tiles().into_iter().take(2).collect();
    let rows_tile = |shape: &RegisterTile, rows: Option<u16>| {
        let mr = u32::from(shape.mr);
        let t = rows.map_or(8 * mr, |r| u32::from(r).div_ceil(mr) * mr);
        t.clamp(8 * mr, u32::from(MAX_TILE_SIZE) / mr * mr) as u16
    };
    let tall = rows
        .into_iter()
        .flat_map(|_| shapes.iter().map(|s| (s, rows)));
    let short = shapes.iter().map(|s| (s, None));
    let mut sizes: Vec<(RegisterTile, [u16; 3])> = Vec::new();
    for (shape, r) in tall.chain(short) {
        let tile = [rows_tile(shape, r), 256, 8 * shape.nr as u16];
        if !sizes.contains(&(*shape, tile)) {
            sizes.push((*shape, tile));
        }
    }
    // The tiles are each thread's rows: the micro-kernel runs
    // in parallel also from a sequential program (correlation
    // at LARGE, gcc, 2 threads, Zen 5 guest: its best paper
    // candidate sequential, the packed 6x32 tile from it
    // 52.1x, with OpenMP in the run before 102.5x).
    n.omp = true;
    for (shape, tile) in sizes {
        n.regblock = Some(shape);
        n.tile = tile;
        forms.extend(also_fused(n, Fusion::No, c));
    }
    forms
}

/// The reductions' forms from `c` ([`Step::Reductions`]).
fn reduction_forms(c: &Config) -> Vec<Config> {
    let mut n = *c;
    // `red=1`; then `red=2`, the scheduler free to keep a
    // reduction loop outermost, also with maximal fusion
    // (atax: `y[j] += A[i][j] * tmp[i]` fused into the loop
    // over `i` that computes `tmp[i]`, one pass over `A`).
    // The fused reduction first as a plain loop nest: in tiles
    // or unroll-and-jammed its inner loops lose more than the
    // fusion gains (atax LARGE, gcc, 2 threads, Zen 5 guest:
    // `fuse=max,omp=1,red=2` 1.37x the original,
    // `fuse=max,tile=8x1x1,omp=1,simd=1,uj=8x2,red=2` 0.75x).
    // Without pre-vectorization too: its interchange puts the fused
    // reduction's loop over `j` outermost again (atax LARGE, gcc, 2
    // threads, Zen 5 guest, 2026-11-30, from a `prevec=1` best:
    // `fuse=max,omp=1,prevec=1,red=2,priv=1,exp=1` 0.22x the original,
    // the same with `prevec=0` 4.11x).
    let mut forms = Vec::new();
    if !c.reduce.on() {
        n.reduce = Reductions::Loops;
        forms.push(n);
    }
    if c.reduce != Reductions::Scheduled {
        n.reduce = Reductions::Scheduled;
        let plain = Config {
            fusion: Fusion::Max,
            tile: [1; 3],
            wavefront: false,
            unroll: UnrollJam::NONE,
            regblock: None,
            diamond: false,
            prevector: false,
            ..n
        };
        for f in std::iter::once(plain).chain(also_fused(n, Fusion::Max, c)) {
            if f != *c && !forms.contains(&f) {
                forms.push(f);
            }
        }
    }
    forms
}

/// `n`, then `n` with `fusion` when that differs; neither if it is `c`.
fn also_fused(n: Config, fusion: Fusion, c: &Config) -> Vec<Config> {
    let mut forms = vec![n];
    if n.fusion != fusion {
        forms.push(Config { fusion, ..n });
    }
    forms.retain(|x| x != c);
    forms
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A program the engine wrote for a configuration: the whole file, its
/// hash (configuration comments excluded) and whether it has OpenMP
/// directives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Written {
    pub text: String,
    pub hash: String,
    pub openmp: bool,
}

/// The greedy search from `start` (measured `speedup` over the original):
/// at most `budget` programs are run, none whose code is in `seen` (the
/// hashes of the programs run before; those run here are added). `write`
/// is the engine (`None`: it could not write the configuration; each
/// configuration is written once), `run` measures a step's program
/// (the configuration, the step, the configuration it is a step from)
/// and returns its speedup (`None`: it failed),
/// `out_of_time` stops the search between runs.
#[allow(clippy::too_many_arguments)]
pub(super) fn refine<E>(
    start: Config,
    target: VectorTarget,
    rows: Option<u16>,
    speedup: f64,
    budget: usize,
    seen: &mut HashSet<String>,
    write: &mut dyn FnMut(&Config) -> Option<Written>,
    run: &mut dyn FnMut(Config, Step, Config, Written) -> Result<Option<f64>, E>,
    out_of_time: &mut dyn FnMut() -> bool,
) -> Result<(), E> {
    let (mut best, mut best_speedup) = (start, speedup);
    let mut written: HashMap<Config, Option<Written>> = HashMap::new();
    let mut write = |c: &Config| written.entry(*c).or_insert_with(|| write(c)).clone();
    let mut tried: HashSet<Config> = HashSet::new();
    let mut spent = 0;
    'climb: while spent < budget && !out_of_time() {
        let parallel = write(&best).is_none_or(|w| w.openmp);
        for (step, next) in Step::order(parallel).into_iter().flat_map(|step| {
            step.apply(&best, target, rows)
                .into_iter()
                .map(move |n| (step, n))
        }) {
            if !tried.insert(next) {
                continue;
            }
            let Some(w) = write(&next) else { continue };
            if seen.contains(&w.hash) {
                continue;
            }
            if let Some(without) = step.without(&next)
                && write(&without).is_some_and(|b| b.hash == w.hash)
            {
                continue;
            }
            seen.insert(w.hash.clone());
            spent += 1;
            if let Some(s) = run(next, step, best, w)?
                && s > best_speedup
            {
                (best, best_speedup) = (next, s);
            }
            continue 'climb;
        }
        break;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
