//! Hand-computed features of small kernels.

use super::*;
use crate::frontend::{Options, parse_source};
use std::path::Path;

const MACHINE: MachineCaches = MachineCaches {
    l1: 32 * 1024,
    l2: 512 * 1024,
    l3: 16 * 1024 * 1024,
    line: 64,
    threads: 2,
};

fn source(body: &str) -> SourceFile {
    let text = format!(
        "void f(int n, double A[64][64], double B[64][64], double C[64][64]) {{\n  int i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
    );
    parse_source(Path::new("k.c"), text, &Options::default()).unwrap()
}

fn features_with(body: &str, config: &str, m: &MachineCaches) -> VariantFeatures {
    let src = source(body);
    let params: ParamValues = [("n".to_string(), 64)].into_iter().collect();
    variant_features(&src, &config.parse().unwrap(), None, &params, m).unwrap()
}

fn features(body: &str, config: &str) -> VariantFeatures {
    features_with(body, config, &MACHINE)
}

/// The test machine with `threads` threads.
fn on_threads(threads: u32) -> MachineCaches {
    MachineCaches { threads, ..MACHINE }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// `i, k, j`: the innermost loop runs along the rows of C and B (the
/// scheduler puts the reduction loop `k` innermost; pre-vectorization,
/// `prevec=1`, brings `j` back inside).
const MATMUL: &str = "for (i = 0; i < n; i++)\n  for (k = 0; k < n; k++)\n    for (j = 0; j < n; j++)\n      C[i][j] += A[i][k] * B[k][j];";

const STENCIL: &str = "for (i = 1; i < n - 1; i++)\n  for (j = 1; j < n - 1; j++)\n    B[i][j] = 0.2 * (A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);";

#[test]
fn names_and_values_agree() {
    let f = features(MATMUL, "fuse=no");
    assert_eq!(VariantFeatures::names().len(), f.values().len());
    let json = serde_json::to_value(&f).unwrap();
    for (name, v) in VariantFeatures::names().iter().zip(f.values()) {
        assert_eq!(json[name].as_f64(), Some(v), "{name}");
    }
}

#[test]
fn a_matrix_multiply_by_hand() {
    let f = features(MATMUL, "fuse=no,prevec=1");
    let n = 64.0f64;
    assert!(close(f.instances, n * n * n), "{f:?}");
    assert!(close(f.inner_trip, n) && close(f.second_trip, n), "{f:?}");
    assert!(
        close(f.loop_overhead, (n + n * n + n * n * n) / (n * n * n)),
        "{f:?}"
    );
    assert_eq!(f.guards_inner, 0.0);
    // Per instance: one addition (+=) and one multiplication.
    assert!(close(f.flops_add_sub, n * n * n) && close(f.flops_mul, n * n * n));
    assert!(close(f.flops, 2.0 * n * n * n));
    // Along j: C[i][j] (written and read) and B[k][j] contiguous,
    // A[i][k] invariant.
    assert!(close(f.stride_zero_share, 0.25), "{f:?}");
    assert!(close(f.stride_unit_share, 0.75), "{f:?}");
    assert_eq!(f.stride_other_share, 0.0);
    assert_eq!((f.access1_stride, f.access1_stride_bytes), (1.0, 8.0));
    // One execution of j: a row of C, one element of A, a row of B.
    assert!(close(f.fp_inner_bytes, (64.0 + 1.0 + 64.0) * 8.0), "{f:?}");
    assert!(close(f.fp_inner_lines, 8.0 + 1.0 + 8.0), "{f:?}");
    // One execution of k: a row of C, a row of A, all of B.
    assert!(
        close(f.fp_second_bytes, (64.0 + 64.0 + 64.0 * 64.0) * 8.0),
        "{f:?}"
    );
    // All three matrices.
    assert!(close(f.scop_bytes, 3.0 * 64.0 * 64.0 * 8.0), "{f:?}");
    assert!(close(f.intensity, 2.0 * n * n * n / f.scop_bytes));
    // j (1 KiB) and k (33 KiB) fit in L2, only j in L1.
    assert!(
        close(f.fit_levels_l1, 1.0) && close(f.fit_levels_l2, 3.0),
        "{f:?}"
    );
    assert_eq!(
        (f.omp_share, f.simd_share, f.parallel_regions),
        (0.0, 0.0, 0.0)
    );
}

#[test]
fn the_innermost_loop_decides_the_strides() {
    // i, j, k: along k, A[i][k] is contiguous and B[k][j] a column.
    let f = features(
        "for (i = 0; i < n; i++)\n  for (j = 0; j < n; j++)\n    for (k = 0; k < n; k++)\n      C[i][j] += A[i][k] * B[k][j];",
        "fuse=no",
    );
    assert!(close(f.stride_zero_share, 0.5), "{f:?}");
    assert!(close(f.stride_unit_share, 0.25), "{f:?}");
    assert!(close(f.stride_other_share, 0.25), "{f:?}");
    // The column of B costs a line per access.
    assert!(close(f.stride_bytes, (8.0 + 64.0) / 4.0), "{f:?}");
}

#[test]
fn tiling_by_32_makes_32_iteration_loops_and_tiles_of_three_blocks() {
    let f = features(MATMUL, "fuse=smart,tile=32x32x32");
    assert!(close(f.instances, 64.0 * 64.0 * 64.0), "{f:?}");
    assert!(close(f.inner_trip, 32.0), "{f:?}");
    assert!(close(f.second_trip, 32.0), "{f:?}");
    // A tile: a 32 x 32 block of each matrix.
    assert!(close(f.fp_tile_bytes, 3.0 * 32.0 * 32.0 * 8.0), "{f:?}");
    assert!(close(f.fp_tile_lines, 3.0 * 32.0 * 4.0), "{f:?}");
    // One execution of the innermost loop: 32 elements of C's and B's
    // rows, one of A.
    assert!(close(f.fp_inner_bytes, (32.0 + 1.0 + 32.0) * 8.0), "{f:?}");
    assert!(close(f.scop_bytes, 3.0 * 64.0 * 64.0 * 8.0), "{f:?}");
}

#[test]
fn the_parallel_loop_and_its_imbalance() {
    let f = features(MATMUL, "fuse=no,omp=1");
    assert!(close(f.omp_share, 1.0), "{f:?}");
    assert!(close(f.omp_trip, 64.0), "{f:?}");
    assert!(close(f.omp_work_imbalance, 1.0), "{f:?}");
    assert!(close(f.parallel_regions, 1.0), "{f:?}");
    let f = features_with(MATMUL, "fuse=no,omp=1", &on_threads(3));
    // 22 iterations for each of 3 threads, 64 to share.
    assert!(close(f.omp_work_imbalance, 66.0 / 64.0), "{f:?}");
    // Tiled by 32: two tile rows for two threads.
    let f = features(MATMUL, "fuse=smart,tile=32x32x32,omp=1");
    assert!(close(f.omp_trip, 2.0), "{f:?}");
}

/// A triangle: row `i` runs `i + 1` iterations.
const TRIANGLE: &str =
    "for (i = 0; i < n; i++)\n  for (j = 0; j <= i; j++)\n    C[i][j] = A[i][j] + B[j][i];";

#[test]
fn a_triangle_in_blocks_is_imbalanced_and_dealt_in_turn_is_not() {
    // Two threads, 64 rows in two blocks: the second block has 3/4 of
    // the work, 1.5 times the mean, as a straight line of row lengths
    // gives (2 * 2 - 1) / 2.
    let f = features(TRIANGLE, "fuse=no,omp=1");
    assert!(close(f.omp_trip, 64.0), "{f:?}");
    assert!(close(f.omp_work_imbalance, 1.5), "{f:?}");
    // Four threads: (2 * 4 - 1) / 4.
    let f = features_with(TRIANGLE, "fuse=no,omp=1", &on_threads(4));
    assert!(close(f.omp_work_imbalance, 1.75), "{f:?}");
    // `cyc=1` deals the rows in turn: balanced.
    let f = features(TRIANGLE, "fuse=no,omp=1,cyc=1");
    assert!(close(f.omp_work_imbalance, 1.0), "{f:?}");
    // A square's rows are even: `cyc=1` changes nothing.
    let f = features(MATMUL, "fuse=no,omp=1,cyc=1");
    assert!(close(f.omp_work_imbalance, 1.0), "{f:?}");
}

#[test]
fn a_stencil_by_hand() {
    let f = features(STENCIL, "fuse=no,simd=1");
    assert!(close(f.instances, 62.0 * 62.0), "{f:?}");
    assert!(close(f.inner_trip, 62.0), "{f:?}");
    // Four additions and a multiplication.
    assert!(close(f.flops_add_sub, 4.0 * 62.0 * 62.0), "{f:?}");
    assert!(close(f.flops_mul, 62.0 * 62.0), "{f:?}");
    // Every access is contiguous along j.
    assert!(close(f.stride_unit_share, 1.0), "{f:?}");
    // One row of j: three rows of A (columns 0 to 63) and 62 elements of B.
    assert!(close(f.fp_inner_bytes, (3.0 * 64.0 + 62.0) * 8.0), "{f:?}");
    // The inner loop is vectorized.
    assert!(
        close(f.simd_share, 1.0) && close(f.simd_trip, 62.0),
        "{f:?}"
    );
    // Unrolling by 2 halves the inner loop's iterations.
    let u = features(STENCIL, "fuse=no,uj=1x2");
    assert!(close(u.inner_trip, 31.0), "{u:?}");
    assert!(u.loop_overhead < f.loop_overhead, "{u:?}");
}

#[test]
fn a_parameter_without_a_value_is_refused() {
    let src = source(MATMUL);
    let e = variant_features(
        &src,
        &"fuse=no".parse().unwrap(),
        None,
        &ParamValues::new(),
        &MACHINE,
    )
    .unwrap_err();
    assert!(e.to_string().contains("parameter `n`"), "{e}");
}

#[test]
fn the_roofline_is_the_longer_of_compute_and_memory() {
    let f = features(MATMUL, "fuse=no");
    assert!(close(roofline_time(&f, f.flops, 1e30), 1.0));
    assert!(close(roofline_time(&f, 1e30, f.dram_bytes), 1.0));
}

#[test]
fn configurations_sharing_a_schedule_get_the_features_they_get_alone() {
    let src = source(&format!("{MATMUL}\n{STENCIL}"));
    let params: ParamValues = [("n".to_string(), 64)].into_iter().collect();
    let configs: Vec<Config> = [
        "fuse=no,tile=32x32x32",
        "fuse=no,tile=32x32x32,omp=1,simd=1",
        "fuse=smart,prevec=1,uj=4",
        "fuse=no,tile=32x32x32,omp=1,uj=4x2",
        "fuse=smart,prevec=1,omp=1,simd=1,uj=2",
        "fuse=no,tile=32x32x32,omp=1,rb=4x8,pack=1",
        "fuse=max,red=1",
    ]
    .iter()
    .map(|t| t.parse().unwrap())
    .collect();
    // Three schedules among seven configurations.
    assert_eq!(crate::engine::space::schedule_groups(&configs).len(), 3);
    let together = variant_features_each(&src, &configs, None, &params, &MACHINE);
    for (c, f) in configs.iter().zip(together) {
        let alone = variant_features(&src, c, None, &params, &MACHINE).unwrap();
        assert_eq!(f.unwrap(), alone, "{c}");
    }
    // A parameter without a value fails every configuration, as alone.
    let each = variant_features_each(&src, &configs, None, &ParamValues::new(), &MACHINE);
    assert!(each.iter().all(|f| {
        f.as_ref()
            .is_err_and(|e| e.to_string().contains("parameter `n`"))
    }));
}
