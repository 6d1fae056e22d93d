//! Snapshots of generated C for a few kernels and configurations: any
//! change in the code polytune emits shows up in review.

use polytune::config::Config;
use polytune::frontend::{self, Options};
use std::path::Path;

fn generated(rel: &str, config: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("polybench")
        .join(rel);
    let src = frontend::parse_file(&path, &Options::default()).unwrap();
    let config: Config = config.parse().unwrap();
    let out = polytune::engine::pipeline::optimize(&src, &config, None).unwrap();
    assert!(out.skipped.is_empty(), "{:?}", out.skipped);
    let start = out.text.find("#pragma scop").unwrap();
    let end = out.text.find("#pragma endscop").unwrap();
    out.text[start..end].to_string()
}

/// The whole file `text` under `config`, every SCoP transformed.
fn optimized(text: &str, config: &str) -> String {
    let src =
        frontend::parse_source(Path::new("k.c"), text.to_string(), &Options::default()).unwrap();
    let config: Config = config.parse().unwrap();
    let out = polytune::engine::pipeline::optimize(&src, &config, None).unwrap();
    assert!(out.skipped.is_empty(), "{:?}", out.skipped);
    out.text
}

#[test]
fn gemm_identity() {
    insta::assert_snapshot!(generated("linear-algebra/gemm.c", "fuse=smart"));
}

#[test]
fn gemm_tiled_parallel_vector_jammed() {
    insta::assert_snapshot!(generated(
        "linear-algebra/gemm.c",
        "fuse=no,tile=32x32x32,omp=1,prevec=1,simd=1,uj=4"
    ));
}

/// Diamond tiles in time (`tt=diamond`, beyond the paper's space):
/// jacobi-1d's two statements in one time band, tiled along `2t + i`
/// and `2t - i`, the tiles of a wavefront in parallel, the points in
/// the band's own order with the innermost loop separated.
#[test]
fn jacobi_1d_diamond_tiles() {
    insta::assert_snapshot!(generated(
        "stencils/jacobi-1d-imper.c",
        "fuse=max,tile=32x32,omp=1,tt=diamond"
    ));
}

#[test]
fn gemm_maxfuse_wavefront() {
    insta::assert_snapshot!(generated(
        "linear-algebra/gemm.c",
        "fuse=max,tile=32x32x1,wave=1,omp=1"
    ));
}

/// A guarded SCoP with unsigned values and an isl keyword as a name: the
/// check of the assumed context (every parameter read as a `long`), the
/// transformed code, and the original as the fallback.
#[test]
fn unsigned_guarded_with_keyword_names() {
    let text = "void f(size_t n, long max, double A[99][99], double x[99]) {\n  size_t i;\n  long j;\n#pragma scop\n  for (i = 0; i < n; i++)\n    for (j = 0; j < max; j++)\n      A[i][j] = x[i] * (double)(i - 1);\n#pragma endscop\n}\n";
    insta::assert_snapshot!(optimized(text, "fuse=smart,tile=32x32x1,omp=1"));
}

/// A block with scalars of its own, unrolled and jammed: each copy is a
/// block of its own, so its variables stay private.
#[test]
fn local_block_jammed() {
    let text = "void f(int n, double A[restrict 99][99], double B[restrict 99][99]) {\n  int i, j;\n#pragma scop\n  for (i = 1; i < n; i++)\n    for (j = 0; j < n; j++) {\n      double t = A[i][j] * 2.0;\n      B[i][j] = t * t + B[i - 1][j];\n    }\n#pragma endscop\n}\n";
    insta::assert_snapshot!(optimized(text, "fuse=smart,tile=1x1x1,uj=2"));
}

/// Register blocking (beyond the paper's space): gemm's 4x8 micro-kernel
/// inside 32x32x32 cache tiles, with its leftover rows and columns.
#[test]
fn gemm_register_blocked_micro_kernel() {
    insta::assert_snapshot!(generated(
        "linear-algebra/gemm.c",
        "fuse=no,tile=32x32x32,omp=1,rb=4x8"
    ));
}

/// Packed operands and the vector micro-kernel (`pack=1`, beyond the
/// paper's space): gemm's 4x8 register tile in 32x32x32 cache tiles with
/// the row operand `alpha * A[i][k]` packed per block of rows, and one
/// branch of the kernel per vector width (8 and 4 lanes, 2 otherwise).
#[test]
fn gemm_packed_vector_micro_kernel() {
    insta::assert_snapshot!(generated(
        "linear-algebra/gemm.c",
        "fuse=no,tile=32x32x32,omp=1,prevec=1,rb=4x8,pack=1"
    ));
}

/// The AVX-512 micro-kernel of the shape `VectorTarget::AVX512` puts
/// first in the refinement: gemm's `rb=8x24,pack=1`, three vectors of 8
/// doubles per row (24 accumulators, 3 column vectors and one broadcast:
/// 28 of the 32 registers). Only its AVX-512 branch (the 4- and 2-lane
/// branches of the same nest are the kernel for other targets).
#[test]
fn gemm_avx512_micro_kernel_8x24() {
    let text = generated(
        "linear-algebra/gemm.c",
        "fuse=no,tile=96x256x192,omp=1,prevec=1,rb=8x24,pack=1",
    );
    let start = text
        .find("#if defined(__AVX512F__)")
        .expect("an AVX-512 branch");
    let end = start
        + text[start..]
            .find("#elif")
            .expect("another branch after it");
    insta::assert_snapshot!(&text[start..end]);
}

/// Separate unroll-and-jam factors (beyond the paper's space): gemm's
/// outer point loop jammed by 4, the innermost loop unrolled by 2, each
/// with its remainder (no SIMD marks: a loop marked for SIMD is left to
/// the vectorizer).
#[test]
fn gemm_unroll_and_jam_4x2() {
    insta::assert_snapshot!(generated(
        "linear-algebra/gemm.c",
        "fuse=no,tile=32x32x32,omp=1,uj=4x2"
    ));
}

/// Scalar expansion: durbin's `sum`, one element per iteration of `k`,
/// allocated before the new code and freed after it (the original runs
/// when it cannot be allocated).
#[test]
fn durbin_scalar_expanded() {
    insta::assert_snapshot!(generated("solvers/durbin.c", "fuse=no,exp=1"));
}

/// `red=2`: atax in one pass over `A`, the loop over `i` parallel with
/// `y` reduced as an array section (and the loop as written where the
/// section would not fit a thread's stack).
#[test]
fn atax_reduced_array_section() {
    insta::assert_snapshot!(generated("linear-algebra/atax.c", "fuse=max,omp=1,red=2"));
}

/// `priv=2`: doitgen's loop over `r` in parallel, each iteration with a
/// copy of `sum` but the one that leaves its values for the code after
/// (on one thread where the copy would not fit its stack).
#[test]
fn doitgen_privatized_array() {
    insta::assert_snapshot!(generated(
        "linear-algebra/doitgen.c",
        "fuse=no,omp=1,priv=2"
    ));
}

/// `outer=1,fuse=smart`: reg_detect's time loop kept outermost and in
/// order; inside it the two nests over `(j, i)` fused, rows parallel, each
/// statement's own loop over `cnt` kept apart, and the `path` recurrence
/// in a group of its own (isl alone puts all four nests on a diagonal).
#[test]
fn reg_detect_outer_loop_kept() {
    insta::assert_snapshot!(generated("medley/reg_detect.c", "fuse=smart,omp=1,outer=1"));
}

/// `dist=1`: reg_detect's outermost band (isl's diagonal, the time loop,
/// the skewed rows) kept, each statement's loop over `cnt` apart inside
/// it: the division vectorizes, the prefix sum's chain runs alone.
#[test]
fn reg_detect_innermost_distributed() {
    insta::assert_snapshot!(generated("medley/reg_detect.c", "fuse=max,omp=1,dist=1"));
}
