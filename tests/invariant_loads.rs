//! Issue 18: loop bounds read from memory the region does not write
//! (`grid_points[0]`, `Mat->mrows`, a PolyBench bound macro that reads
//! through a parameter) become parameters loaded once before the
//! transformed code, found by `--detect` and in hand-marked regions; and
//! function-like macros of the file are pure calls when their expansion
//! is. Each program is transformed and run with gcc and clang on two
//! threads against the original; the bounds whose memory the region
//! writes, or may write through a pointer, are refused with the reason
//! and the fix.
#![cfg(feature = "detect")]

mod common;

use common::root;
use polytune::frontend::detect::{DetectOptions, detect_file};
use std::path::{Path, PathBuf};
use std::process::Command;

const CONFIGS: [&str; 2] = [
    "fuse=smart,tile=32x32x1,wave=0,omp=1,prevec=0,simd=0,uj=1",
    "fuse=max,tile=32x32x32,wave=1,omp=0,prevec=1,simd=1,uj=2",
];

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/invariant").join(name)
}

fn polytune(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args(args)
        .output()
        .expect("run polytune")
}

/// The file with the regions detection finds marked by `#pragma scop`
/// (for the hand-marked path), and the functions of those regions.
fn marked(src: &Path, dir: &Path) -> (PathBuf, Vec<String>) {
    let d = detect_file(src, &DetectOptions::default()).unwrap();
    let p = dir.join(format!(
        "marked_{}",
        src.file_name().unwrap().to_str().unwrap()
    ));
    std::fs::write(&p, &d.marked).unwrap();
    (p, d.regions.iter().map(|r| r.function.clone()).collect())
}

/// `optimize` (with `extra`: `--detect` or nothing) under each
/// configuration: the code changes, holds every line of `expected`, and
/// prints what the original prints, with gcc and with clang.
fn runs_like_the_original(src: &Path, extra: &[&str], expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string(src).unwrap();
    for (k, config) in CONFIGS.iter().enumerate() {
        let mut args = vec!["optimize", src.to_str().unwrap(), "--config", config];
        args.extend(extra);
        let out = polytune(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{config}: {stderr}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert_ne!(text, original, "{config}: nothing transformed");
        for e in expected {
            assert!(text.contains(e), "{config}: no `{e}` in\n{text}");
        }
        let variant = dir.path().join(format!("v{k}.c"));
        std::fs::write(&variant, &text).unwrap();
        for cc in common::compilers() {
            let orig = dir.path().join("orig");
            common::build_openmp(cc, src, &orig, &[]);
            let want = common::run_two_threads(&orig, &[]);
            let exe = dir.path().join(format!("v{k}"));
            common::build_openmp(cc, &variant, &exe, &[]);
            assert_eq!(common::run_two_threads(&exe, &[]), want, "{cc} {config}");
        }
    }
}

/// Both paths: `--detect` on the file, and the front end on the file
/// marked where detection found its regions.
fn both_paths(name: &str, functions: &[&str], expected: &[&str]) {
    let src = fixture(name);
    let dir = tempfile::tempdir().unwrap();
    let (hand_marked, found) = marked(&src, dir.path());
    for f in functions {
        assert!(found.iter().any(|g| g == f), "{f} not detected: {found:?}");
    }
    runs_like_the_original(&src, &["--detect"], expected);
    runs_like_the_original(&hand_marked, &[], expected);
}

/// NPB style: `#include <omp.h>`, the extents in `int grid_points[3]`.
#[test]
fn npb_bounds_in_a_global_array() {
    both_paths(
        "npb_grid.c",
        &["compute_rhs", "add"],
        &[
            "const int __pt_p0 = grid_points[2];",
            "for (k = 1; k <= grid_points[2] - 2; k++)",
        ],
    );
}

/// `Mat->mrows` through a pointer, `m.ncols` of a struct passed by value.
#[test]
fn struct_field_bounds() {
    both_paths(
        "struct_bound.c",
        &["smooth", "transpose_add"],
        &[
            "const __typeof__(Mat->mrows) __pt_p0 = Mat->mrows;",
            "const __typeof__(m.ncols) __pt_p1 = m.ncols;",
        ],
    );
}

/// NPB CG style: `rs[j]`, `rs[j + 1]` bound the loop over a row's
/// elements; the loop over rows reads them at its iterator and is not
/// taken, the loop inside it is.
#[test]
fn row_ranges_read_in_the_loop_over_rows() {
    let d = detect_file(&fixture("csr_rows.c"), &DetectOptions::default()).unwrap();
    let r = d
        .rejected
        .iter()
        .find(|r| r.function == "scale_rows")
        .expect("the loop over rows is rejected");
    assert_eq!(
        r.reason,
        "data-dependent loop bound: `rs[j]` reads memory that changes with the loop iterator `j`"
    );
    both_paths(
        "csr_rows.c",
        &["scale_rows"],
        &["const int __pt_p0 = rs[j];", "const int __pt_p1 = rs[j+1];"],
    );
}

/// PolyBench/C 4 style: `_PB_N` expands to `sizes[0]`, read through the
/// kernel's parameter.
#[test]
fn polybench_bound_macro_reading_through_a_parameter() {
    both_paths(
        "polybench_bound.c",
        &["kernel_jacobi_2d"],
        &["i < _PB_N - 1"],
    );
}

/// nussinov's `max_score` and `match`, defined in the file: no `--pure`.
#[test]
fn function_like_macros_of_the_file_are_pure() {
    let src = fixture("macro_calls.c");
    runs_like_the_original(&src, &[], &["max_score("]);
    let dir = tempfile::tempdir().unwrap();
    let stripped = dir.path().join("macro_calls.c");
    let text = std::fs::read_to_string(&src).unwrap();
    std::fs::write(&stripped, polytune::frontend::strip_scop_pragmas(&text)).unwrap();
    let d = detect_file(&stripped, &DetectOptions::default()).unwrap();
    assert!(
        d.regions.iter().any(|r| r.function == "kernel_nussinov"),
        "{:?}",
        d.rejected
    );
    runs_like_the_original(&stripped, &["--detect"], &["max_score("]);
    // A macro with a side effect is still a call polytune does not know.
    let impure = dir.path().join("impure.c");
    std::fs::write(
        &impure,
        "int count;\n#define BUMP(x) (count++, (x))\nvoid f(int n, double A[10]) {\n  int i;\n#pragma scop\n  for (i = 0; i < n; i++)\n    A[i] = BUMP(A[i]);\n#pragma endscop\n}\n",
    )
    .unwrap();
    let out = polytune(&["scop", impure.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("call to `BUMP`, which polytune does not know to be pure"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The bound's memory written in the region: refused, with the reason;
/// reachable through a pointer the region writes: versioned on a run-time
/// alias check.
#[test]
fn bounds_the_region_may_write_are_refused() {
    let d = detect_file(&fixture("written_bound.c"), &DetectOptions::default()).unwrap();
    assert!(d.regions.is_empty(), "{:?}", d.regions);
    assert_eq!(
        d.rejected[0].reason,
        "data-dependent loop bound: `grid_points[0]` reads memory that the nest writes (`grid_points` is written in it)"
    );
    // Reachable through a pointer the region writes: versioned on a
    // run-time check of the value's address against the written range
    // (issue 40).
    let d = detect_file(&fixture("alias_bound.c"), &DetectOptions::default()).unwrap();
    let found: Vec<&str> = d.regions.iter().map(|r| r.function.as_str()).collect();
    assert_eq!(
        found,
        ["count", "clear", "accumulate", "scale"],
        "{:?}",
        d.rejected
    );
    assert!(d.rejected.is_empty(), "{:?}", d.rejected);
    let checked: Vec<Vec<(String, String)>> = d
        .source
        .as_ref()
        .unwrap()
        .scops
        .iter()
        .map(|s| {
            s.spelled_alias_checks()
                .into_iter()
                .map(|p| (p.first, p.second))
                .collect()
        })
        .collect();
    let pair = |a: &str, b: &str| vec![(a.to_string(), b.to_string())];
    assert_eq!(
        checked,
        [
            pair("cnt", "Mat->mrows"),
            pair("hist", "n[0]"),
            pair("total", "n[0]"),
            vec![]
        ]
    );
    // The user's promise drops the checks.
    let options = DetectOptions {
        assume_no_alias: true,
        ..DetectOptions::default()
    };
    let d = detect_file(&fixture("alias_bound.c"), &options).unwrap();
    assert_eq!(d.regions.len(), 4, "{:?}", d.rejected);
    assert!(
        d.source
            .as_ref()
            .unwrap()
            .scops
            .iter()
            .all(|s| s.alias_checks.is_empty())
    );
    // Hand-marked, the front end refuses the written bound too.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("written.c");
    let text = std::fs::read_to_string(fixture("written_bound.c"))
        .unwrap()
        .replace("  for (i", "#pragma scop\n  for (i")
        .replace("  }\n}", "  }\n#pragma endscop\n}");
    std::fs::write(&p, text).unwrap();
    let out = polytune(&["scop", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("non-affine loop bound: it reads array `grid_points` (`grid_points[0]`) that the SCoP writes (`grid_points` is written at line 11)"),
        "{stderr}"
    );
}

/// `scop` lists the loads; a bare kernel's driver cannot set them.
#[test]
fn scop_lists_the_loads_and_a_driver_refuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let (src, _) = marked(&fixture("npb_grid.c"), dir.path());
    let out = polytune(&["scop", src.to_str().unwrap()]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("  loaded once: __pt_p0 = grid_points[2] (int)\n"),
        "{stdout}"
    );
    let bare = dir.path().join("bare.c");
    std::fs::write(
        &bare,
        "int gp[3];\nvoid kernel(int n, double A[100][100])\n{\n  int i, j;\n#pragma scop\n  for (i = 0; i < gp[0]; i++)\n    for (j = 0; j < n; j++)\n      A[i][j] = A[i][j] * 2.0;\n#pragma endscop\n}\n",
    )
    .unwrap();
    let out = polytune(&["driver", bare.to_str().unwrap(), "--param", "n=10"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "the SCoP reads `gp[0]` from memory in a loop bound, a condition or a subscript: a driver cannot set it"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
