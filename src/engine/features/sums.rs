//! Running sums of a variant's features over its SCoPs and statement
//! places, and the features they make.

use super::compute::Flops;
use super::{MachineCaches, VariantFeatures};
use std::collections::BTreeMap;

/// Running sums over the SCoPs: totals, and weighted sums of the means
/// with their weights.
#[derive(Default)]
pub(super) struct Sums {
    pub(super) instances: f64,
    pub(super) iterations: f64,
    pub(super) regions: f64,
    pub(super) packing: f64,
    pub(super) dram: f64,
    pub(super) scop_bytes: f64,
    pub(super) flops: Flops,
    /// Weighted by instances.
    pub(super) per_instance: BTreeMap<&'static str, f64>,
    /// Weighted by access instances, with their weight.
    pub(super) per_access: BTreeMap<&'static str, f64>,
    pub(super) accesses: f64,
    pub(super) omp: f64,
    pub(super) simd: f64,
    /// Per access: its instances, stride in elements and in bytes.
    pub(super) top: Vec<(f64, f64, f64)>,
}

impl Sums {
    pub(super) fn add(&mut self, key: &'static str, w: f64, v: f64) {
        *self.per_instance.entry(key).or_default() += w * v;
    }

    pub(super) fn add_access(&mut self, key: &'static str, w: f64, v: f64) {
        *self.per_access.entry(key).or_default() += w * v;
    }

    pub(super) fn finish(mut self, m: &MachineCaches) -> VariantFeatures {
        let mean = |s: &Sums, key: &str, w: f64| {
            let v = s.per_instance.get(key).copied().unwrap_or(0.0);
            if w > 0.0 { v / w } else { 0.0 }
        };
        let access = |s: &Sums, key: &str| {
            let v = s.per_access.get(key).copied().unwrap_or(0.0);
            if s.accesses > 0.0 {
                v / s.accesses
            } else {
                0.0
            }
        };
        let n = self.instances;
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        self.top
            .sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
        let top = |k: usize| self.top.get(k).map_or((0.0, 0.0), |t| (t.1, t.2));
        let dram = self.dram.max(self.scop_bytes);
        let fp = |s: &Sums, key: &str| mean(s, key, n);
        let flops = self.flops.total();
        VariantFeatures {
            instances: n,
            inner_trip: mean(&self, "inner_trip", n),
            second_trip: mean(&self, "second_trip", n),
            loop_overhead: ratio(self.iterations, n),
            guards_inner: mean(&self, "guards_inner", n),
            guards_second: mean(&self, "guards_second", n),
            omp_share: ratio(self.omp, n),
            omp_trip: mean(&self, "omp_trip", self.omp),
            omp_work_imbalance: mean(&self, "omp_work_imbalance", self.omp),
            parallel_regions: self.regions,
            simd_share: ratio(self.simd, n),
            simd_trip: mean(&self, "simd_trip", self.simd),
            regblock_share: mean(&self, "regblock", n),
            packed_share: mean(&self, "packed", n),
            packing_bytes: self.packing,
            stride_zero_share: access(&self, "zero"),
            stride_unit_share: access(&self, "unit"),
            stride_other_share: access(&self, "other"),
            stride_bytes: access(&self, "stride_bytes"),
            access1_stride: top(0).0,
            access1_stride_bytes: top(0).1,
            access2_stride: top(1).0,
            access2_stride_bytes: top(1).1,
            access3_stride: top(2).0,
            access3_stride_bytes: top(2).1,
            fp_inner_bytes: fp(&self, "fp_inner_bytes"),
            fp_inner_lines: fp(&self, "fp_inner_lines"),
            fp_second_bytes: fp(&self, "fp_second_bytes"),
            fp_second_lines: fp(&self, "fp_second_lines"),
            fp_tile_bytes: fp(&self, "fp_tile_bytes"),
            fp_tile_lines: fp(&self, "fp_tile_lines"),
            fp_inner_l1: ratio(fp(&self, "fp_inner_bytes"), m.l1 as f64),
            fp_inner_l2: ratio(fp(&self, "fp_inner_bytes"), m.l2 as f64),
            fp_inner_l3: ratio(fp(&self, "fp_inner_bytes"), m.l3 as f64),
            fp_second_l1: ratio(fp(&self, "fp_second_bytes"), m.l1 as f64),
            fp_second_l2: ratio(fp(&self, "fp_second_bytes"), m.l2 as f64),
            fp_second_l3: ratio(fp(&self, "fp_second_bytes"), m.l3 as f64),
            fp_tile_l1: ratio(fp(&self, "fp_tile_bytes"), m.l1 as f64),
            fp_tile_l2: ratio(fp(&self, "fp_tile_bytes"), m.l2 as f64),
            fp_tile_l3: ratio(fp(&self, "fp_tile_bytes"), m.l3 as f64),
            fit_levels_l1: fp(&self, "fit_l1"),
            fit_levels_l2: fp(&self, "fit_l2"),
            fit_levels_l3: fp(&self, "fit_l3"),
            scop_bytes: self.scop_bytes,
            scop_l3: ratio(self.scop_bytes, m.l3 as f64),
            reuse_log2: access(&self, "reuse_log2"),
            reuse_fits_l1: access(&self, "reuse_l1"),
            reuse_fits_l2: access(&self, "reuse_l2"),
            reuse_fits_l3: access(&self, "reuse_l3"),
            dram_bytes: dram,
            flops_add_sub: self.flops.add_sub,
            flops_mul: self.flops.mul,
            flops_div: self.flops.div,
            flops_sqrt: self.flops.sqrt,
            flops_calls: self.flops.calls,
            flops,
            intensity: ratio(flops, self.scop_bytes),
            intensity_dram: ratio(flops, dram),
        }
    }
}
