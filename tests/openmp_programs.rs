//! Programs that already use OpenMP (issue 40): `--detect` takes a loop
//! nest under the user's own loop directive when the engine proves what
//! the directive promises, replaces the directive with polytune's own
//! (the clauses that still apply kept), and takes the work-shared loops
//! of a user's `parallel` region as regions of their own. What it cannot
//! prove stays as written, with the reason. The fixtures (tests/fixtures
//! /openmp) are written here in the style of OpenMP benchmark suites;
//! every variant is compiled with gcc and clang and run on 1, 2 and 4
//! threads against the original on one thread.
#![cfg(feature = "detect")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const CONFIGS: [&str; 7] = [
    "fuse=smart,tile=32x32x32,wave=0,omp=1,prevec=1,simd=1,uj=2",
    "fuse=max,tile=16x16x16,wave=1,omp=1,prevec=0,simd=0,uj=1",
    "fuse=no,tile=1x1x1,wave=0,omp=1,prevec=1,simd=1,uj=4",
    "fuse=smart,tile=8x64x32,wave=0,omp=1,prevec=0,simd=1,uj=1x2,rb=4x8",
    "fuse=smart,tile=32x32x32,wave=0,omp=1,prevec=0,simd=0,uj=1,red=1",
    "fuse=no,tile=1x1x1,wave=0,omp=1,prevec=0,simd=1,uj=1,red=1,priv=1,exp=1,rb=8x4,pack=1",
    "fuse=smart,tile=32x32x32,wave=0,omp=1,prevec=0,simd=0,uj=1,red=1,cyc=1",
];

fn fixture(name: &str) -> PathBuf {
    common::root().join("tests/fixtures/openmp").join(name)
}

/// Builds `src` with OpenMP.
fn build(cc: &str, src: &Path, exe: &Path) {
    let o = Command::new(cc)
        .args(["-O2", "-fopenmp"])
        .arg(src)
        .arg("-o")
        .arg(exe)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{cc} {}: {}",
        src.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs `exe` on `threads` OpenMP threads: its stdout.
fn run(exe: &Path, threads: usize) -> String {
    let out = Command::new("timeout")
        .arg("60")
        .arg(exe)
        .env("OMP_NUM_THREADS", threads.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}: {}", exe.display(), out.status);
    String::from_utf8(out.stdout).unwrap()
}

/// The user's directives left unproven, as the warnings say.
fn unproven(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("is not proven"))
        .collect()
}

/// Every configuration of `CONFIGS` on `name`: the directives proven (no
/// warning that one is not), and the program prints what the original
/// prints on one thread, with both compilers on 1, 2 and 4 threads.
/// Returns the variants' texts.
fn every_variant_matches(name: &str, threads: &[usize]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture(name);
    let reference = dir.path().join("reference");
    build("gcc", &src, &reference);
    let expected = run(&reference, 1);
    let mut texts = Vec::new();
    for (k, config) in CONFIGS.iter().enumerate() {
        let out = dir.path().join(format!("v{k}.c"));
        let stderr = common::optimize_detected(&src, config, &out);
        if name != "wrong.c" {
            assert!(unproven(&stderr).is_empty(), "{config}: {stderr}");
        }
        for cc in common::compilers() {
            let exe = dir.path().join(format!("v{k}-{cc}"));
            build(cc, &out, &exe);
            for &t in threads {
                assert_eq!(
                    run(&exe, t),
                    expected,
                    "{name}, {config}, {cc}, {t} threads"
                );
            }
        }
        texts.push(std::fs::read_to_string(&out).unwrap());
    }
    texts
}

#[test]
fn combined_parallel_loops_are_proven_and_transformed() {
    let texts = every_variant_matches("linalg.c", &[1, 2, 4]);
    let first = &texts[0];
    // Every nest of the file is taken: six SCoPs written by polytune.
    assert_eq!(first.matches("/* polytune: fuse=").count(), 6, "{first}");
    // polytune's directive keeps the user's schedule where its parallel
    // loop covers the user's loop (the sum, run as a reduction with
    // `red=1`; the product).
    assert!(
        texts[4].contains("#pragma omp parallel for reduction(+:polytune_r0) schedule(dynamic, 8)"),
        "{}",
        texts[4]
    );
    assert!(
        first.contains("  #pragma omp parallel for schedule(static)\n"),
        "{first}"
    );
    // With `cyc=1` too the user's schedule wins where the user chose one;
    // elsewhere every loop is rectangular (its rectangular tiles too: their
    // point loops only start a tile and cut the last one short), so there
    // is nothing to deal in turn: the program is the one without `cyc=1`.
    assert!(
        texts[6].contains("#pragma omp parallel for reduction(+:polytune_r0) schedule(dynamic, 8)"),
        "{}",
        texts[6]
    );
    assert!(
        !texts[6].contains("schedule(dynamic, 8) schedule("),
        "{}",
        texts[6]
    );
    assert!(!texts[6].contains("schedule(static, 1)"), "{}", texts[6]);
    let code = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.trim_start().starts_with("/* polytune:"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(code(&texts[6]), code(&texts[4]));
    // The original each region falls back to keeps the user's directive.
    assert!(first.contains("#pragma omp parallel for private(j, k) schedule(static)"));
}

#[test]
fn hand_parallelized_stencils_are_taken_where_the_directives_are_proven() {
    let texts = every_variant_matches("stencil.c", &[1, 2, 4]);
    let first = &texts[0];
    // `init`, the time loop of Jacobi sweeps (two directives inside it)
    // and the 3-D step; not the histogram (`atomic`) nor the maximum
    // (`critical`).
    assert_eq!(first.matches("/* polytune: fuse=").count(), 3, "{first}");
    assert!(
        first.contains("#pragma omp atomic\n    hist[b] += 1;"),
        "{first}"
    );
    assert!(first.contains("#pragma omp critical\n"), "{first}");
}

#[test]
fn the_work_shared_loops_of_a_parallel_region_are_taken_on_their_own() {
    let texts = every_variant_matches("team.c", &[1, 2, 4]);
    let first = &texts[0];
    // Six work-shared loops (four in `sweep`, two in `relax`'s time loop)
    // and `init`.
    assert_eq!(first.matches("/* polytune: fuse=").count(), 7, "{first}");
    // Each starts with a barrier and is shared among the user's team (one
    // parallel loop) or run by one of its threads.
    assert_eq!(first.matches("#pragma omp barrier").count(), 6, "{first}");
    assert!(
        first.contains("#pragma omp for schedule(static)\n  for (long c0"),
        "{first}"
    );
    assert!(first.contains("#pragma omp single"), "{first}");
    // The region's structure is kept.
    assert!(first.contains("#pragma omp parallel private(j)\n  {\n    double t;"));
}

#[test]
fn directives_that_do_not_hold_are_left_as_written_with_the_reason() {
    // Racy on more than one thread, as the user wrote them.
    every_variant_matches("wrong.c", &[1]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.c");
    let stderr = common::optimize_detected(&fixture("wrong.c"), CONFIGS[0], &out);
    let lines: Vec<String> = unproven(&stderr)
        .into_iter()
        .chain(stderr.lines().filter(|l| l.contains("lastprivate")))
        .map(|l| l.replace(&fixture("wrong.c").display().to_string(), "wrong.c"))
        .collect();
    insta::assert_snapshot!("openmp_wrong_directives", lines.join("\n"));
    // Each unproven nest is the user's text, directive included.
    let text = std::fs::read_to_string(&out).unwrap();
    for line in [
        "#pragma omp parallel for\n  for (int i = 1; i < n; i++)\n    b[i] = b[i - 1] * 0.5 + 1.0;",
        "#pragma omp parallel for private(t)\n  for (int i = 0; i < n; i++) {\n    c[i] = t;",
    ] {
        assert!(text.contains(line), "{text}");
    }
}

#[test]
fn a_marked_scop_carries_the_user_s_directive_and_a_misplaced_one_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("m.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\ndouble a[90][90];\nint main(void) {\n  int i, j;\n#pragma scop\n#pragma omp parallel for private(j) num_threads(2)\n  for (i = 0; i < 90; i++)\n    for (j = 0; j < 90; j++)\n      a[j][i] = i - j;\n#pragma endscop\n  printf(\"%.1f\\n\", a[3][80] + a[89][0]);\n  return 0;\n}\n",
    )
    .unwrap();
    let out = dir.path().join("o.c");
    let o = common::polytune(&[
        "optimize",
        src.to_str().unwrap(),
        "--config",
        CONFIGS[0],
        "-o",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && unproven(&stderr).is_empty(),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("#pragma omp parallel for num_threads(2)"),
        "{text}"
    );
    let exe = dir.path().join("o");
    build("gcc", &out, &exe);
    assert_eq!(run(&exe, 2), "-12.0\n");
    // A directive in front of no loop of the SCoP.
    let bad = dir.path().join("bad.c");
    std::fs::write(
        &bad,
        "double a[9];\nvoid f(void) {\n  int i;\n#pragma scop\n  for (i = 0; i < 9; i++)\n    a[i] = i;\n#pragma omp parallel for\n  a[0] = 1;\n#pragma endscop\n}\n",
    )
    .unwrap();
    let o = common::polytune(&[
        "optimize",
        bad.to_str().unwrap(),
        "--config",
        CONFIGS[0],
        "-o",
        dir.path().join("bad.out.c").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("bad.c:7:1: error: the user's `#pragma omp parallel for` does not stand in front of a loop of this SCoP"),
        "{stderr}"
    );
    assert!(!dir.path().join("bad.out.c").exists());
}

#[test]
fn a_learned_run_measures_the_original_with_openmp() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("team.c");
    std::fs::copy(fixture("team.c"), &src).unwrap();
    let out = dir.path().join("out.c");
    let report = common::learned(&src, &out, &["--detect", "--budget", "2"]);
    let built = report["built_as"].as_str().unwrap();
    assert!(built.contains("-fopenmp"), "{built}");
    // The work-shared loops are left to `--config`: the measurement build
    // cannot time a region every thread runs.
    let warnings = report["warnings"].to_string();
    assert_eq!(
        warnings.matches("work-shared loop of the user's").count(),
        6,
        "{warnings}"
    );
    // Whatever was chosen, it prints what the original prints.
    let (reference, exe) = (dir.path().join("r"), dir.path().join("o"));
    build("gcc", &fixture("team.c"), &reference);
    build("gcc", &out, &exe);
    for t in [1, 2, 4] {
        assert_eq!(run(&exe, t), run(&reference, 1));
    }
}

#[test]
fn scop_detect_says_which_directives_hold() {
    let mut text = String::new();
    for name in ["team.c", "wrong.c"] {
        let o = Command::new(env!("CARGO_BIN_EXE_polytune"))
            .args(["scop", "--detect", name])
            .current_dir(common::root().join("tests/fixtures/openmp"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        text.push_str(&String::from_utf8_lossy(&o.stdout));
    }
    insta::assert_snapshot!("openmp_scop_detect", text);
}

#[test]
fn triangular_rows_are_dealt_in_turn_under_cyc() {
    // Triangular loops (rows of growing length) under every configuration,
    // with both compilers on 1, 2 and 4 threads; with `cyc=1` the parallel
    // loop over the rows deals them to the threads one at a time.
    let texts = every_variant_matches("triangle.c", &[1, 2, 4]);
    assert!(texts[6].contains("schedule(static, 1)"), "{}", texts[6]);
    assert!(!texts[4].contains("schedule(static, 1)"), "{}", texts[4]);
}
