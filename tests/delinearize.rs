//! Linearized subscripts (issue 18): kernels written as real code writes
//! them (Linpack's column-major `a[lda*j + i]`, Rodinia's hotspot grid
//! indexed `r*col + c`, a 3-D grid `(i*n + j)*m + k`) are found with
//! their pragmas and with `--detect`, delinearized, transformed by
//! configurations that tile, interchange and parallelize them, and must
//! print what the original prints with gcc and clang, also at sizes where
//! the run-time check of the delinearization fails and the original code
//! runs.

mod common;

use common::{build_openmp, compilers, root, run_two_threads};
use std::path::{Path, PathBuf};
use std::process::Command;

struct Case {
    file: &'static str,
    /// The function the kernel is in.
    function: &'static str,
    /// The model's arrays, as `scop` prints them.
    arrays: &'static str,
    /// The delinearized arrays, as `scop` prints them.
    shapes: &'static str,
    /// The run-time check, as `scop` prints it.
    check: &'static str,
    /// Command lines to run; the last ones fail the check.
    runs: &'static [&'static [&'static str]],
}

const CASES: &[Case] = &[
    Case {
        file: "linpack.c",
        function: "kernel",
        arrays: "arrays: y[1d], a[2d], x[1d] (read-only)",
        shapes: "a[][lda]\n",
        check: "run-time check: [n, lda] -> {  : n > 0 and lda >= n }",
        // n, lda: lda < n makes rows overlap.
        runs: &[
            &["100", "101"],
            &["37", "37"],
            &["1", "1"],
            &["70", "40"],
            &["9", "2"],
        ],
    },
    Case {
        file: "rodinia.c",
        function: "compute_tran_temp",
        arrays: "arrays: result[2d], temp[2d], power[2d] (read-only)",
        shapes: "result[][col], temp[][col], power[][col]\n",
        check: "run-time check: [sim_time, row, col] -> {  : sim_time > 0 and row > 0 and col > 0 }",
        // row, col, steps: the check holds whenever the loops run.
        runs: &[
            &["64", "48", "5"],
            &["3", "70", "2"],
            &["40", "2", "3"],
            &["50", "50", "0"],
        ],
    },
    Case {
        file: "grid3d.c",
        function: "smooth",
        arrays: "arrays: b[3d], a[3d] (read-only), s[2d]",
        shapes: "b[][n][m], a[][n][m], s[][m]\n",
        check: "run-time check: [ni, nj, nk, n, m] -> {  : ni > 0 and nj > 0 and nk > 0 and ((nk >= 3 and n >= nj and m >= nk) or (nk <= 2 and n > 0 and m > 0)) }",
        // ni, nj, nk, n, m: nj > n or nk > m overlap the planes' rows.
        runs: &[
            &["6", "20", "30", "20", "32"],
            &["3", "7", "9", "40", "40"],
            &["5", "40", "33", "20", "32"],
            &["4", "10", "50", "12", "16"],
        ],
    },
];

/// Tiling with pre-vectorization (which interchanges), and maximal
/// fusion with tiles, wavefront and OpenMP.
const CONFIGS: &[&str] = &[
    "fuse=smart,tile=32x32x32,wave=0,omp=0,prevec=1,simd=1,uj=1",
    "fuse=max,tile=32x32x1,wave=1,omp=1,prevec=0,simd=0,uj=2",
];

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/delin").join(name)
}

fn polytune(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args(args)
        .output()
        .unwrap()
}

/// The fixture with its `#pragma scop` lines removed, as a user's file.
#[cfg(feature = "detect")]
fn unmarked(case: &Case, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture(case.file)).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("#pragma"))
        .collect();
    let p = dir.join(case.file);
    std::fs::write(&p, kept.join("\n") + "\n").unwrap();
    p
}

fn build(cc: &str, src: &Path, exe: &Path) {
    build_openmp(cc, src, exe, &["-std=gnu99"]);
}

/// Every configuration on `src` (with `extra` options) prints what the
/// original prints at every run, with both compilers.
fn same_output(case: &Case, src: &Path, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string(src).unwrap();
    for (k, config) in CONFIGS.iter().enumerate() {
        let out_c = dir.path().join(format!("v{k}.c"));
        let mut args = vec!["optimize", src.to_str().unwrap(), "--config", config];
        args.extend(extra);
        args.extend(["-o", out_c.to_str().unwrap()]);
        let o = polytune(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{} {config}: {stderr}", case.file);
        if extra.contains(&"--detect") {
            assert!(
                stderr.contains(&format!("detected a SCoP in {}", case.function)),
                "{}: {stderr}",
                case.file
            );
        }
        let text = std::fs::read_to_string(&out_c).unwrap();
        // Really transformed: tiles, and the check in front of them.
        assert_ne!(text, original);
        assert!(text.contains("32 * c"), "{} {config}:\n{text}", case.file);
        assert!(text.contains("} else {"), "{} {config}:\n{text}", case.file);
        for cc in compilers() {
            let orig = dir.path().join(format!("orig_{cc}"));
            if !orig.exists() {
                build(cc, src, &orig);
            }
            let exe = dir.path().join(format!("v{k}_{cc}"));
            build(cc, &out_c, &exe);
            for run in case.runs {
                assert_eq!(
                    run_two_threads(&exe, run),
                    run_two_threads(&orig, run),
                    "{} {config} with {cc} at {run:?}:\n{text}",
                    case.file
                );
            }
        }
    }
}

#[test]
fn each_kernel_is_delinearized_with_its_run_time_check() {
    for case in CASES {
        let f = fixture(case.file);
        let o = polytune(&["scop", f.to_str().unwrap()]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{}: {}",
            case.file,
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(out.contains(case.arrays), "{}:\n{out}", case.file);
        assert!(out.contains(case.check), "{}:\n{out}", case.file);
        let shapes = format!(
            "  delinearized (one-dimensional in C, row lengths checked at run time): {}",
            case.shapes
        );
        assert!(out.contains(&shapes), "{}:\n{out}", case.file);
    }
}

#[test]
fn marked_kernels_are_transformed_and_verified() {
    for case in CASES {
        same_output(case, &fixture(case.file), &[]);
    }
}

#[cfg(feature = "detect")]
#[test]
fn detected_kernels_are_transformed_and_verified() {
    let dir = tempfile::tempdir().unwrap();
    for case in CASES {
        let src = unmarked(case, dir.path());
        same_output(case, &src, &["--detect"]);
    }
}

/// Rodinia's own loop carries `omp parallel for`: since issue 40 the
/// engine proves the directive (the loop over the rows carries nothing
/// once `c` is private) and the whole time loop is taken, delinearized,
/// transformed and verified.
#[cfg(feature = "detect")]
#[test]
fn a_nest_under_the_users_proven_openmp_pragma_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("rodinia.c"))
        .unwrap()
        .replace("#pragma scop\n", "")
        .replace("#pragma endscop\n", "")
        .replace(
            "  for (t = 0; t < sim_time; t++) {\n",
            "  for (t = 0; t < sim_time; t++) {\n#pragma omp parallel for private(c)\n",
        );
    let src = dir.path().join("rodinia_omp.c");
    std::fs::write(&src, text).unwrap();
    let o = polytune(&["scop", src.to_str().unwrap(), "--detect"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains("region 0: compute_tran_temp lines 11-21\n    user's directive at line 12: `#pragma omp parallel for private(c)`: proven"),
        "{out}"
    );
    same_output(&CASES[1], &src, &["--detect"]);
}

const INCONSISTENT: &str = "void f(int n, int m, double *restrict a) {\n  int i, j;\n#pragma scop\n  for (i = 0; i < n; i++)\n    for (j = 0; j < m; j++)\n      a[i*n + j] = a[j*m + i];\n#pragma endscop\n}\n";

/// Accesses of one array with row lengths that do not divide one
/// another: rejected with the reason.
#[test]
fn inconsistent_linearizations_are_rejected_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.c");
    std::fs::write(&p, INCONSISTENT).unwrap();
    let o = polytune(&["scop", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.c:6:7"), "{err}");
    assert!(
        err.contains("the accesses of `a` cannot be read as one multi-dimensional array: the strides `m` and `n` of its subscripts are not multiples of one another"),
        "{err}"
    );
}

/// The same, unmarked: detection reports the front end's reason.
#[cfg(feature = "detect")]
#[test]
fn inconsistent_linearizations_are_not_detected() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("bad_unmarked.c");
    std::fs::write(
        &q,
        INCONSISTENT
            .replace("#pragma scop\n", "")
            .replace("#pragma endscop\n", ""),
    )
    .unwrap();
    let o = polytune(&["scop", q.to_str().unwrap(), "--detect"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("0 region(s) detected"), "{out}");
    assert!(out.contains("not multiples of one another"), "{out}");
}

/// polytune's own lab verifies a delinearized variant through its
/// instrumentation (the written footprint recorded through the user's
/// one-dimensional subscripts), where the check holds and where the
/// original runs instead.
#[test]
fn the_lab_verifies_delinearized_variants() {
    let f = fixture("linpack.c");
    for run in ["60 61", "60 20"] {
        let o = polytune(&[
            "measure",
            f.to_str().unwrap(),
            "--config",
            CONFIGS[0],
            "--run-args",
            run,
        ]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{run}: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            out.contains(&format!("{}: ok median", CONFIGS[0])),
            "{run}: {out}"
        );
    }
}
