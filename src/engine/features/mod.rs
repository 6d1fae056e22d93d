//! A variant's features, computed before it runs (issue 38, item 1):
//! what a cost model of the variant itself reads of the engine's own
//! model of it — the generated loops with their marks (the same ones the
//! emitter prints), the statements' accesses over those loops, and the
//! parameters bound to the values the program runs with.
//!
//! `walk.rs` counts how often each generated loop and statement runs
//! (sampled, exact for rectangular and tiled nests), `memory.rs` the
//! accesses' strides and the footprints of the loops, `compute.rs` the
//! operations of the statements, `eval.rs` evaluates the generated
//! bounds. Everything is summed over the file's SCoPs; per-instance
//! features are means weighted by statement instances (per-access ones by
//! access instances).

mod compute;
mod eval;
mod memory;
mod sums;
mod walk;

#[cfg(test)]
mod tests;

use crate::config::Config;
use crate::engine::codegen::{self, shape::ShapeNode};
use crate::engine::driver;
use crate::engine::model::EngineError;
use crate::engine::pipeline;
use crate::frontend::SourceFile;
use crate::frontend::scop::Scop;
use eval::Env;
use memory::Footprint;
use serde::Serialize;
use std::collections::BTreeMap;
use sums::Sums;
use walk::{Counts, Indexed};

/// The value each SCoP parameter has when the program runs, by name.
pub type ParamValues = BTreeMap<String, i64>;

/// The machine the variant runs on: its data caches (bytes) and threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MachineCaches {
    pub l1: u64,
    pub l2: u64,
    pub l3: u64,
    pub line: u64,
    /// Threads an OpenMP loop runs on.
    pub threads: u32,
}

macro_rules! features {
    ($($(#[doc = $d:literal])+ $name:ident,)*) => {
        /// The features of one variant, each named (see [`VariantFeatures::names`]).
        #[derive(Debug, Clone, Default, PartialEq, Serialize)]
        pub struct VariantFeatures {
            $($(#[doc = $d])+ pub $name: f64,)*
        }

        impl VariantFeatures {
            /// The features' names, in the order of [`VariantFeatures::values`].
            pub fn names() -> &'static [&'static str] {
                &[$(stringify!($name)),*]
            }

            /// The features' values, in the order of [`VariantFeatures::names`].
            pub fn values(&self) -> Vec<f64> {
                vec![$(self.$name),*]
            }
        }
    };
}

features! {
    /// Statement instances per run.
    instances,
    /// Iterations of the innermost loop per execution of it, after
    /// unrolling and register blocking (the reduction loop of a register
    /// tile); mean over instances.
    inner_trip,
    /// Iterations of the second-innermost loop per execution, after
    /// unroll-and-jam and register blocking (a register tile's column
    /// blocks); mean over instances.
    second_trip,
    /// Loop iterations executed (after unrolling, unroll-and-jam and
    /// register blocking) per statement instance.
    loop_overhead,
    /// Min and max operations in the bounds of the innermost loop; mean
    /// over instances.
    guards_inner,
    /// Min and max operations in the bounds of the second-innermost loop.
    guards_second,
    /// Share of instances under a parallel (OpenMP) loop.
    omp_share,
    /// Iterations of the parallel loop per execution; mean over its
    /// instances.
    omp_trip,
    /// Load imbalance of the parallel loop, the busiest thread's work over
    /// the mean (1: balanced): ceil(trip / threads) * threads / trip, and
    /// where its iterations' work differs (a triangle's rows) and they go
    /// to the threads in blocks, times (2 threads − 1) / threads, the
    /// busiest block's share of work growing in a straight line; dealt in
    /// turn (`cyc=1`), the rows balance. Mean over its instances.
    omp_work_imbalance,
    /// Parallel regions entered per run (each ends with one barrier).
    parallel_regions,
    /// Share of instances in a vectorized (SIMD) loop.
    simd_share,
    /// Iterations of the vectorized loop per execution; mean over its
    /// instances.
    simd_trip,
    /// Share of instances in a register tile.
    regblock_share,
    /// Share of instances in a register tile with packed operands.
    packed_share,
    /// Bytes copied into packed buffers per run (the rows' operands of
    /// `pack=1`: one element per row and reduction step of each block of
    /// rows).
    packing_bytes,
    /// Share of access instances invariant along the innermost loop.
    stride_zero_share,
    /// Share of access instances contiguous along the innermost loop
    /// (stride of one element, either direction).
    stride_unit_share,
    /// Share of access instances with another or an unknown stride.
    stride_other_share,
    /// Bytes between consecutive iterations' accesses of the innermost
    /// loop, capped at a cache line (the line traffic of a non-reused
    /// access); mean over access instances.
    stride_bytes,
    /// Stride in elements of the most frequent access along the innermost
    /// loop (unknown: the line's elements).
    access1_stride,
    /// Stride in bytes of the most frequent access.
    access1_stride_bytes,
    /// Stride in elements of the second most frequent access.
    access2_stride,
    /// Stride in bytes of the second most frequent access.
    access2_stride_bytes,
    /// Stride in elements of the third most frequent access.
    access3_stride,
    /// Stride in bytes of the third most frequent access.
    access3_stride_bytes,
    /// Distinct bytes of one execution of the innermost loop; mean over
    /// instances.
    fp_inner_bytes,
    /// Distinct cache lines of one execution of the innermost loop.
    fp_inner_lines,
    /// Distinct bytes of one execution of the second-innermost loop.
    fp_second_bytes,
    /// Distinct cache lines of one execution of the second-innermost loop.
    fp_second_lines,
    /// Distinct bytes of one tile: one iteration of the innermost loop
    /// whose variable bounds a loop inside it (a tile loop), else of the
    /// whole nest.
    fp_tile_bytes,
    /// Distinct cache lines of one tile.
    fp_tile_lines,
    /// `fp_inner_bytes` over this machine's L1 size.
    fp_inner_l1,
    /// `fp_inner_bytes` over L2.
    fp_inner_l2,
    /// `fp_inner_bytes` over L3.
    fp_inner_l3,
    /// `fp_second_bytes` over L1.
    fp_second_l1,
    /// `fp_second_bytes` over L2.
    fp_second_l2,
    /// `fp_second_bytes` over L3.
    fp_second_l3,
    /// `fp_tile_bytes` over L1.
    fp_tile_l1,
    /// `fp_tile_bytes` over L2.
    fp_tile_l2,
    /// `fp_tile_bytes` over L3.
    fp_tile_l3,
    /// Loop levels, counted from the innermost out, whose one execution
    /// fits in L1; mean over instances.
    fit_levels_l1,
    /// Loop levels whose one execution fits in L2.
    fit_levels_l2,
    /// Loop levels whose one execution fits in L3.
    fit_levels_l3,
    /// Distinct bytes the SCoPs touch per run.
    scop_bytes,
    /// The SCoPs' footprint over L3.
    scop_l3,
    /// log2 of the bytes touched between two uses of an element (one
    /// iteration of the innermost loop the access does not move with; no
    /// reuse: twice the SCoP's footprint); mean over access instances.
    reuse_log2,
    /// Share of access instances whose reuse distance fits in L1.
    reuse_fits_l1,
    /// Share of access instances whose reuse distance fits in L2.
    reuse_fits_l2,
    /// Share of access instances whose reuse distance fits in L3.
    reuse_fits_l3,
    /// Bytes from memory per run: a line's share per access instance whose
    /// reuse does not fit in L3 (at least the SCoPs' footprint).
    dram_bytes,
    /// Additions and subtractions per run.
    flops_add_sub,
    /// Multiplications per run.
    flops_mul,
    /// Divisions per run.
    flops_div,
    /// Square roots per run.
    flops_sqrt,
    /// Other calls (`exp`, `pow`, ...) per run.
    flops_calls,
    /// Operations per run.
    flops,
    /// Operations per distinct byte of the SCoPs.
    intensity,
    /// Operations per byte from memory.
    intensity_dram,
}

/// The analytic roofline time of a variant, in seconds: its operations at
/// `peak_flops` (per second) or its memory traffic at `peak_bw` (bytes per
/// second), whichever is longer.
pub fn roofline_time(f: &VariantFeatures, peak_flops: f64, peak_bw: f64) -> f64 {
    (f.flops / peak_flops).max(f.dram_bytes / peak_bw)
}

/// The features of `config` applied to `src`, with the parameters at
/// `params`, on `machine`. A SCoP the engine does not transform under
/// `config` is an error, as for the transformation; a parameter without a
/// value too.
pub fn variant_features(
    src: &SourceFile,
    config: &Config,
    context: Option<&str>,
    params: &ParamValues,
    machine: &MachineCaches,
) -> Result<VariantFeatures, EngineError> {
    variant_features_each(src, std::slice::from_ref(config), context, params, machine)
        .pop()
        .expect("one configuration")
}

/// [`variant_features`] of each of `configs`, in order: the configurations
/// that share a schedule ([`crate::engine::space::schedule_key`]) share its
/// computation, which is most of the time a variant's features take
/// (gemm, 392 variants at MEDIUM: 18 s one by one).
pub fn variant_features_each(
    src: &SourceFile,
    configs: &[Config],
    context: Option<&str>,
    params: &ParamValues,
    machine: &MachineCaches,
) -> Vec<Result<VariantFeatures, EngineError>> {
    let mut out: Vec<Option<Result<VariantFeatures, EngineError>>> =
        (0..configs.len()).map(|_| None).collect();
    for members in crate::engine::space::schedule_groups(configs) {
        let group: Vec<Config> = members.iter().map(|&k| configs[k]).collect();
        let mut accs: Vec<Sums> = group.iter().map(|_| Sums::default()).collect();
        // Per configuration, the first SCoP that failed and why.
        let mut failed: Vec<Option<EngineError>> = group.iter().map(|_| None).collect();
        for scop in &src.scops {
            let mut k = 0;
            let made =
                pipeline::with_lowered_each(src, scop, &group, context, |scop, lowered, c| {
                    let at = k;
                    k += 1;
                    if failed[at].is_some() {
                        return;
                    }
                    let (nodes, _) = codegen::shape(scop, lowered, c);
                    if let Err(e) = scop_features(src, scop, &nodes, params, machine, &mut accs[at])
                    {
                        failed[at] = Some(e);
                    }
                });
            if let Err(e) = made {
                for f in failed.iter_mut().filter(|f| f.is_none()) {
                    *f = Some(e.clone());
                }
            }
        }
        for ((&k, acc), error) in members.iter().zip(accs).zip(failed) {
            out[k] = Some(match error {
                Some(e) => Err(e),
                None => Ok(acc.finish(machine)),
            });
        }
    }
    out.into_iter()
        .map(|r| r.expect("every configuration is in a group"))
        .collect()
}

/// The features of one SCoP's marked loops `nodes`, added to `acc`.
fn scop_features(
    src: &SourceFile,
    scop: &Scop,
    nodes: &[ShapeNode],
    params: &ParamValues,
    m: &MachineCaches,
    acc: &mut Sums,
) -> Result<(), EngineError> {
    let unsupported = |reason: String| EngineError::Unsupported {
        scop: scop.index,
        reason,
    };
    if let Some(p) = scop.parameters.iter().find(|p| !params.contains_key(*p)) {
        return Err(unsupported(format!(
            "the variant's features need the value of parameter `{p}`"
        )));
    }
    let value = |n: &str| params.get(n).copied();
    let mut env = Env {
        params: &value,
        vars: Vec::new(),
    };
    let ix = walk::index(nodes);
    let counts = walk::count(&ix, &mut env)
        .map_err(|w| unsupported(format!("the variant's features cannot read {}", w.0)))?;
    let layouts = driver::array_layouts(src, scop, &value);
    // An array whose declaration is not read: as long as the longest
    // parameter.
    let fallback = params.values().copied().max().unwrap_or(1024).max(1);
    let refs = memory::refs(scop, &ix, &layouts, fallback);
    let middles: Vec<Vec<i64>> = ix
        .sites
        .iter()
        .map(|s| memory::middles(&ix, s, &mut env))
        .collect();
    // One execution of each loop, and the whole SCoP.
    let fp: Vec<Footprint> = (0..ix.loops.len())
        .map(|k| {
            let under: Vec<usize> = (0..ix.sites.len())
                .filter(|&s| ix.sites[s].chain.contains(&k))
                .collect();
            let from = |s: usize| ix.sites[s].chain.iter().position(|&c| c == k).unwrap_or(0);
            memory::footprint(&ix, &refs, &middles, &under, &from, &mut env, m.line)
        })
        .collect();
    let all: Vec<usize> = (0..ix.sites.len()).collect();
    let whole = memory::footprint(&ix, &refs, &middles, &all, &|_| 0, &mut env, m.line);
    acc.scop_bytes += whole.bytes;
    loop_totals(&ix, &counts, acc);
    let flops = compute::per_statement(&scop.body);
    let scope = Scope {
        ix: &ix,
        counts: &counts,
        refs: &refs,
        fp: &fp,
        whole,
        m,
    };
    for s in 0..ix.sites.len() {
        let w = counts.instances[s];
        if w <= 0.0 {
            continue;
        }
        acc.instances += w;
        if let Some(f) = flops.get(&ix.sites[s].id) {
            acc.flops.add_scaled(f, w);
        }
        scope.site(s, w, acc);
    }
    Ok(())
}

/// The loop iterations executed after the marks, and the parallel
/// regions entered.
fn loop_totals(ix: &Indexed<'_>, c: &Counts, acc: &mut Sums) {
    let mut k = 0;
    while k < ix.loops.len() {
        let l = ix.loops[k].shape;
        if l.omp {
            acc.regions += c.entries[k];
        }
        if let Some(b) = l.regblock
            && k + 2 < ix.loops.len()
        {
            // The three loops are consecutive in pre-order (a perfect nest).
            let t = |j: usize| c.trip(k + j);
            let (mr, nr) = (f64::from(b.mr), f64::from(b.nr));
            let (p, q, r) = (t(b.p), t(b.q), t(b.r));
            acc.iterations += c.entries[k] * (p / mr + p / mr * q / nr + p / mr * q / nr * r);
            k += 3;
            continue;
        }
        let parent_jam = ix.loops[k]
            .outer
            .last()
            .map_or(1.0, |&o| f64::from(ix.loops[o].shape.jam));
        let div = f64::from(l.unroll) * f64::from(l.jam) * parent_jam;
        acc.iterations += c.iterations[k] / div;
        k += 1;
    }
}

/// What the per-place features of one SCoP read.
struct Scope<'a, 's> {
    ix: &'a Indexed<'s>,
    counts: &'a Counts,
    refs: &'a [Vec<memory::Ref>],
    fp: &'a [Footprint],
    whole: Footprint,
    m: &'a MachineCaches,
}

impl Scope<'_, '_> {
    /// The features of statement place `s`, which runs `w` times.
    fn site(&self, s: usize, w: f64, acc: &mut Sums) {
        let (ix, c, m) = (self.ix, self.counts, self.m);
        let site = &ix.sites[s];
        let chain = &site.chain;
        let shape = |k: usize| ix.loops[k].shape;
        // The innermost and second-innermost loops after the marks.
        let (inner, second, inner_trip, second_trip) = match walk::register_block(ix, site) {
            Some((b, j)) => {
                acc.add("regblock", w, 1.0);
                let (q, r) = (chain[j + b.q], chain[j + b.r]);
                if b.packed {
                    acc.add("packed", w, 1.0);
                    let bytes = self.refs[s]
                        .last()
                        .map_or(memory::DEFAULT_ELEMENT_BYTES, |r| r.element_bytes);
                    acc.packing += w / c.trip(q).max(1.0) * bytes as f64;
                }
                (Some(r), Some(q), c.trip(r), c.trip(q) / f64::from(b.nr))
            }
            None => {
                let inner = chain.last().copied();
                let second = chain.len().checked_sub(2).map(|j| chain[j]);
                (
                    inner,
                    second,
                    inner.map_or(1.0, |k| c.trip(k) / f64::from(shape(k).unroll)),
                    second.map_or(1.0, |k| c.trip(k) / f64::from(shape(k).jam)),
                )
            }
        };
        acc.add("inner_trip", w, inner_trip);
        acc.add("second_trip", w, second_trip);
        let guards = |k: Option<usize>| {
            k.map_or(0, |k| {
                eval::min_max_count(&shape(k).init) + eval::min_max_count(&shape(k).cond)
            }) as f64
        };
        acc.add("guards_inner", w, guards(inner));
        acc.add("guards_second", w, guards(second));
        if let Some(&k) = chain.iter().find(|&&k| shape(k).omp) {
            let trip = match shape(k).regblock {
                Some(b) => c.trip(k) / f64::from(b.mr),
                None => c.trip(k),
            }
            .round()
            .max(1.0);
            let threads = f64::from(m.threads.max(1));
            acc.omp += w;
            acc.add("omp_trip", w, trip);
            let blocks = if shape(k).uneven && !shape(k).cyclic {
                (2.0 * threads - 1.0) / threads
            } else {
                1.0
            };
            acc.add(
                "omp_work_imbalance",
                w,
                (trip / threads).ceil() * threads / trip * blocks,
            );
        }
        if let Some(&k) = chain.iter().rev().find(|&&k| shape(k).simd) {
            acc.simd += w;
            acc.add("simd_trip", w, c.trip(k));
        }
        self.footprints(s, w, inner, second, acc);
        self.accesses(s, w, inner, acc);
    }

    /// The footprints of the place's innermost loops, its tile, and the
    /// loop levels that fit each cache.
    fn footprints(
        &self,
        s: usize,
        w: f64,
        inner: Option<usize>,
        second: Option<usize>,
        acc: &mut Sums,
    ) {
        let (ix, m) = (self.ix, self.m);
        let chain = &ix.sites[s].chain;
        let one = self.instance_bytes(s);
        let at = |k: Option<usize>| k.map_or(one, |k| self.fp[k]);
        let (fi, fs) = (at(inner), at(second));
        let tile = tile_position(ix, chain)
            .map(|j| chain.get(j + 1).map_or(one, |&k| self.fp[k]))
            .unwrap_or_else(|| chain.first().map_or(one, |&k| self.fp[k]));
        for (key, v) in [
            ("fp_inner_bytes", fi.bytes),
            ("fp_inner_lines", fi.lines),
            ("fp_second_bytes", fs.bytes),
            ("fp_second_lines", fs.lines),
            ("fp_tile_bytes", tile.bytes),
            ("fp_tile_lines", tile.lines),
        ] {
            acc.add(key, w, v);
        }
        for (key, size) in [("fit_l1", m.l1), ("fit_l2", m.l2), ("fit_l3", m.l3)] {
            let levels = chain
                .iter()
                .rev()
                .take_while(|&&k| self.fp[k].bytes <= size as f64)
                .count();
            acc.add(key, w, levels as f64);
        }
    }

    /// The bytes and lines of one instance of place `s` (its accesses).
    fn instance_bytes(&self, s: usize) -> Footprint {
        let bytes: f64 = self.refs[s].iter().map(|r| r.element_bytes as f64).sum();
        Footprint {
            bytes,
            lines: self.refs[s].len() as f64,
        }
    }

    /// Strides along the innermost loop, reuse distances and memory
    /// traffic of the place's accesses.
    fn accesses(&self, s: usize, w: f64, inner: Option<usize>, acc: &mut Sums) {
        let (ix, m) = (self.ix, self.m);
        let line = m.line as f64;
        let no_reuse = (2.0 * self.whole.bytes).max(1.0);
        for r in &self.refs[s] {
            let stride = match inner {
                Some(k) => r.stride(&ix.loops[k].shape.var),
                None => Some(0),
            };
            let (elements, bytes, class) = match stride {
                Some(0) => (0.0, 0.0, "zero"),
                Some(x) => {
                    let b = (x.unsigned_abs() * r.element_bytes) as f64;
                    (x as f64, b, if x.abs() == 1 { "unit" } else { "other" })
                }
                None => (line / r.element_bytes as f64, line, "other"),
            };
            let traffic = bytes.min(line);
            acc.accesses += w;
            acc.add_access(class, w, 1.0);
            acc.add_access("stride_bytes", w, traffic);
            acc.top.push((w, elements, bytes));
            let distance = self.reuse(s, r).unwrap_or(no_reuse).max(1.0);
            acc.add_access("reuse_log2", w, distance.log2());
            for (key, size) in [("reuse_l1", m.l1), ("reuse_l2", m.l2), ("reuse_l3", m.l3)] {
                acc.add_access(key, w, f64::from(u8::from(distance <= size as f64)));
            }
            if distance > m.l3 as f64 {
                acc.dram += w * if stride == Some(0) { 0.0 } else { traffic };
            }
        }
    }

    /// The bytes touched between two uses of an element by access `r` of
    /// place `s`: one iteration of the innermost loop of its chain the
    /// access does not move with (and no loop inside bounds by it);
    /// `None` when it moves with every loop.
    fn reuse(&self, s: usize, r: &memory::Ref) -> Option<f64> {
        let ix = self.ix;
        let chain = &ix.sites[s].chain;
        (0..chain.len()).rev().find_map(|j| {
            let var = &ix.loops[chain[j]].shape.var;
            let bounds_inside = chain[j + 1..].iter().any(|&k| {
                let l = ix.loops[k].shape;
                crate::engine::codegen::expr::mentions(&l.init, var)
                    || crate::engine::codegen::expr::mentions(&l.cond, var)
            });
            (!r.moves_with(var) && !bounds_inside).then(|| match chain.get(j + 1) {
                Some(&k) => self.fp[k].bytes,
                None => self.instance_bytes(s).bytes,
            })
        })
    }
}

/// The position in `chain` of the innermost loop whose variable bounds a
/// loop inside it (a tile loop), if any.
fn tile_position(ix: &Indexed<'_>, chain: &[usize]) -> Option<usize> {
    (0..chain.len()).rev().find(|&j| {
        let var = &ix.loops[chain[j]].shape.var;
        chain[j + 1..].iter().any(|&k| {
            let l = ix.loops[k].shape;
            crate::engine::codegen::expr::mentions(&l.init, var)
                || crate::engine::codegen::expr::mentions(&l.cond, var)
        })
    })
}
