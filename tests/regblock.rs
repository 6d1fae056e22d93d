//! Register blocking of contractions (`rb=MRxNR`, beyond the paper's
//! space): every contraction kernel of the corpus under a few register
//! tile shapes, with and without cache tiling and OpenMP, compiled by gcc
//! and clang and run at MINI and SMALL (sizes that are not multiples of
//! the shapes: the leftover rows and columns run), must dump what the
//! original dumps; the nests the rules refuse are refused with a reason.

mod common;

use common::{
    compile_variant, compilers, matches_reference, on_two_threads, root, run_dump_threads,
};
use polytune::config::Config;
use polytune::frontend::{self, Options};
use std::collections::HashSet;

/// The kernels whose contraction polytune register-blocks, and those it
/// refuses (trmm reads the accumulated array elsewhere in the loop, symm's
/// reduction loop depends on the column loop, doitgen accumulates into a
/// vector: no three-deep contraction).
const BLOCKED: [&str; 7] = [
    "linear-algebra/gemm.c",
    "linear-algebra/2mm.c",
    "linear-algebra/3mm.c",
    "linear-algebra/syrk.c",
    "linear-algebra/syr2k.c",
    "datamining/covariance.c",
    "datamining/correlation.c",
];
const REFUSED: [&str; 3] = [
    "linear-algebra/trmm.c",
    "linear-algebra/symm.c",
    "linear-algebra/doitgen.c",
];

const SHAPES: [&str; 3] = ["4x4", "4x8", "8x4"];
const BASES: [&str; 4] = [
    "fuse=no",
    "fuse=no,omp=1,simd=1",
    "fuse=no,tile=32x32x32,omp=1",
    "fuse=no,tile=32x32x32,omp=1,prevec=1,simd=1,uj=2",
];
const SIZES: [&str; 2] = ["mini", "small"];

/// Generates every configuration of the kernel, checks that it is (or is
/// not) register-blocked, and runs each distinct program; returns the
/// failures.
fn check(rel: &str, blocked: bool) -> Vec<String> {
    let path = root().join("polybench").join(rel);
    let src = frontend::parse_file(&path, &Options::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let references: Vec<_> = SIZES
        .iter()
        .map(|size| {
            let exe = dir.path().join(format!("orig_{size}"));
            compile_variant("gcc", &path, &exe, size).unwrap();
            run_dump_threads(&exe).unwrap()
        })
        .collect();
    let mut failures = Vec::new();
    let mut seen = HashSet::new();
    for (k, (base, shape)) in BASES
        .iter()
        .flat_map(|b| SHAPES.iter().map(move |s| (b, s)))
        .enumerate()
    {
        let config: Config = format!("{base},rb={shape}").parse().unwrap();
        let outcome = polytune::engine::pipeline::optimize(&src, &config, None).unwrap();
        assert!(
            outcome.skipped.is_empty(),
            "{rel} {config}: {:?}",
            outcome.skipped
        );
        let is_blocked = outcome.text.contains("__typeof__(");
        if is_blocked != blocked {
            failures.push(format!(
                "{rel} {config}: register-blocked {is_blocked}, expected {blocked} ({:?})",
                outcome.notes
            ));
        }
        if !blocked && outcome.notes.is_empty() {
            failures.push(format!("{rel} {config}: refused without a reason"));
        }
        if !seen.insert(outcome.text.clone()) {
            continue;
        }
        let file = dir.path().join(format!("v{k}.c"));
        std::fs::write(&file, &outcome.text).unwrap();
        for cc in compilers() {
            for (size, reference) in SIZES.iter().zip(&references) {
                let exe = dir.path().join(format!("v{k}_{cc}_{size}"));
                let result = matches_reference(cc, &file, &exe, size, &[], reference);
                if let Err(e) = result {
                    let name = path.file_stem().unwrap().to_string_lossy();
                    let keep = std::env::temp_dir().join(format!("polytune-rb-{name}-{k}.c"));
                    let _ = std::fs::write(&keep, &outcome.text);
                    failures.push(format!(
                        "{rel} {config} with {cc} at {size}: {e} (kept at {})",
                        keep.display()
                    ));
                }
            }
        }
    }
    failures
}

#[test]
fn contraction_kernels_compute_what_the_original_computes() {
    let all: Vec<(&str, bool)> = BLOCKED
        .iter()
        .map(|k| (*k, true))
        .chain(REFUSED.iter().map(|k| (*k, false)))
        .collect();
    let failures = on_two_threads(&all, |(k, b)| check(k, *b));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn notes(text: &str, config: &str) -> (String, Vec<String>) {
    let src = frontend::parse_source(
        std::path::Path::new("k.c"),
        text.to_string(),
        &Options::default(),
    )
    .unwrap();
    let out = polytune::engine::pipeline::optimize(&src, &config.parse().unwrap(), None).unwrap();
    assert!(out.skipped.is_empty(), "{:?}", out.skipped);
    (out.text, out.notes)
}

#[test]
fn illegal_nests_are_refused_with_the_reason() {
    let kernel = |body: &str| {
        format!(
            "void f(int n, double A[99][99], double B[99][99], double C[99][99], double x[300]) {{\n  int i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        )
    };
    // The reduction loop's bounds depend on a register loop: the tile's
    // instances would not share one reduction loop.
    let (text, n) = notes(
        &kernel(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < i; k++) C[i][j] += A[i][k] * B[k][j];",
        ),
        "fuse=no,rb=4x4",
    );
    assert!(!text.contains("__typeof__"), "{text}");
    assert!(
        n.len() == 1 && n[0].contains("the bounds of loop c2 depend on loop c0"),
        "{n:?}"
    );
    // Another reference to the accumulated array in the loop (it may be
    // one of the elements the scalars hold).
    let (text, n) = notes(
        &kernel(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++) C[i][j] += A[i][k] * C[k][j];",
        ),
        "fuse=no,rb=4x4",
    );
    assert!(!text.contains("__typeof__"), "{text}");
    assert!(
        n.len() == 1 && n[0].contains("may touch the accumulated elements of `C`"),
        "{n:?}"
    );
    assert!(
        n[0].contains("SCoP 0: register blocking 4x4 not applied"),
        "{n:?}"
    );
    // Not a contraction: a plain assignment, or one accumulator for the
    // whole nest (x[2i + j], rescheduled by isl, stays the same along two
    // loops).
    let (_, n) = notes(
        &kernel(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++) x[2 * i + j] += A[i][k] * B[k][j];",
        ),
        "fuse=no,rb=2x2",
    );
    assert!(n.len() == 1 && n[0].contains("no contraction"), "{n:?}");
    let (_, n) = notes(
        &kernel("for (i = 0; i < n; i++) for (j = 0; j < n; j++) C[i][j] = A[i][j] + B[j][i];"),
        "fuse=no,rb=4x4",
    );
    assert!(n.len() == 1 && n[0].contains("no contraction"), "{n:?}");
    // The legal contraction is blocked, with no note.
    let (text, n) = notes(
        &kernel(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++) C[i][j] += A[i][k] * B[k][j];",
        ),
        "fuse=no,rb=4x4",
    );
    assert!(
        text.contains("__typeof__(C[c0][c1]) acc0_0 = C[c0][c1];"),
        "{text}"
    );
    assert!(n.is_empty(), "{n:?}");
}

#[test]
fn the_cli_takes_rb_and_reports_a_refusal() {
    let bin = env!("CARGO_BIN_EXE_polytune");
    let out = std::process::Command::new(bin)
        .arg("optimize")
        .arg(root().join("polybench/linear-algebra/gemm.c"))
        .args(["--config", "fuse=no,tile=32x32x32", "--omp", "--rb", "4x8"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("rb=4x8 */"), "{text}");
    assert!(text.contains("acc3_7 += "), "{text}");
    let out = std::process::Command::new(bin)
        .arg("optimize")
        .arg(root().join("polybench/linear-algebra/trmm.c"))
        .args(["--config", "fuse=no,rb=4x4"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("register blocking 4x4 not applied") && err.contains("`B`"),
        "{err}"
    );
    // The readable form only: there is no bit string for it.
    let out = std::process::Command::new(bin)
        .arg("optimize")
        .arg(root().join("polybench/linear-algebra/gemm.c"))
        .args(["--config", "rb=4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no bit string"), "{err}");
}
