//! Learned `optimize` end to end on programs written in the styles of
//! real application suites (issue 39; the sources and their compile
//! lines are in `tests/fixtures/apps/`, `scripts/applications.sh` runs
//! them at their default sizes for `docs/src/results/applications.md`):
//!
//! - `npb_adi`: an NPB-style solver with OpenMP already on the loops
//!   around the kernel and an NPB report ("Time in seconds = ..."),
//!   found by `--detect`;
//! - `rodinia_lud`: a Rodinia-style program of three files, the kernel
//!   in `kernel.c` and `main` in `main.c`, found by `--detect`;
//! - `roi_filter`: an image filter over a region of interest whose
//!   bounds are named `r1`, `r2`, `c1`, `c2`, marked `#pragma scop`;
//! - `dead_helper`: a hot kernel beside a helper with a SCoP that the
//!   program never calls, both marked `#pragma scop`.
//!
//! Each run has its compile line after `--`, at a size smaller than the
//! default (a flag of that line or an argument of the program), two
//! candidates and no refinement, on one thread (a threaded candidate on a
//! loaded machine is timed by its waits, not its work); the variant
//! ranker's features of several hundred variants take minutes in a debug
//! build, so the six models rank. The program written is then built
//! with the same line and run on two threads: it prints what the
//! original prints, the lines of time aside.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn app(name: &str) -> PathBuf {
    common::root().join("tests/fixtures/apps").join(name)
}

/// The options every run here has before its own and its compile line.
const CHEAP: [&str; 6] = ["--budget", "2", "--threads", "1", "--ranking", "models"];

/// Learned `optimize` of `src` into `out` with `args` (the compile line
/// after `--`), then the checks every program here passes: the original
/// ran, the report gives the whole program's speedup and its reason.
fn optimize(src: &Path, out: &Path, args: &[&str]) -> serde_json::Value {
    let all: Vec<&str> = CHEAP.iter().chain(args).copied().collect();
    let report = common::learned(src, out, &all);
    assert_eq!(report["original"]["status"], "ok", "{report}");
    let choice = &report["choice"];
    let speedup = choice["speedup"].as_f64().unwrap_or(0.0);
    assert!(speedup > 0.0, "the whole program's speedup: {choice}");
    match choice["reason"].as_str().unwrap() {
        "measured" => {
            let h = &report["head_to_head"];
            assert!(h["program_original_seconds"].as_f64().unwrap() > 0.0, "{h}");
            assert!(
                h["program_candidate_seconds"].as_f64().unwrap() > 0.0,
                "{h}"
            );
        }
        reason => assert_eq!(reason, "original-kept", "{report}"),
    }
    report
}

/// The lines of standard output that hold a result (those containing
/// one of `results`) of `sources` built with gcc, OpenMP on, and the
/// compile line `line`, run with `args` on two threads.
fn results(sources: &[&Path], line: &[&str], args: &[&str], keep: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("a.out");
    let out = Command::new("gcc")
        .args(["-O3", "-march=native", "-fopenmp", "-w", "-o"])
        .arg(&exe)
        .args(sources)
        .args(line)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{sources:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<String> = common::run_two_threads(&exe, args)
        .lines()
        .filter(|l| keep.iter().any(|k| l.contains(k)))
        .map(String::from)
        .collect();
    assert!(!lines.is_empty(), "{sources:?} printed no result");
    lines
}

/// The text of `text` from `from` up to `to` (both found).
fn between<'t>(text: &'t str, from: &str, to: &str) -> &'t str {
    let start = text.find(from).unwrap_or_else(|| panic!("{from}: {text}"));
    let end = start + text[start..].find(to).unwrap();
    &text[start..end]
}

#[test]
#[cfg(feature = "detect")]
fn an_npb_style_solver_with_its_own_openmp_and_timer() {
    let src = app("npb_adi/adi.c");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("adi.c");
    let line = ["-DCLASS_S", "-fopenmp", "-lm"];
    let mut args = vec!["--detect", "--"];
    args.extend(line);
    let report = optimize(&src, &out, &args);
    // The printed time and Mop/s differ between runs and between
    // variants: no candidate is rejected for them.
    let candidates = report["candidates"].as_array().unwrap();
    assert!(!candidates.is_empty(), "{report}");
    for c in candidates {
        assert_eq!(c["run"]["status"], "ok", "{c}");
    }
    // The user's OpenMP loops (set-up and norms) are taken only where the
    // engine proves their directives (issue 40, tests/openmp_programs.rs):
    // whichever variant won, it prints what the original prints.
    let keep = ["norm of the solution", "Verification"];
    assert_eq!(
        results(&[&out], &line, &[], &keep),
        results(&[&src], &line, &[], &keep)
    );
}

#[test]
#[cfg(feature = "detect")]
fn a_rodinia_style_program_with_main_in_another_file() {
    let kernel = app("rodinia_lud/kernel.c");
    let (main, helpers) = (app("rodinia_lud/main.c"), app("rodinia_lud/common.c"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("kernel.c");
    let mut args = vec!["--detect", "--run-args", "-s 256", "--"];
    let line = [main.to_str().unwrap(), helpers.to_str().unwrap(), "-lm"];
    args.extend(line);
    let report = optimize(&kernel, &out, &args);
    // Built as the user's line says, main.c's main running the kernel: no
    // driver of polytune's.
    let built = report["built_as"].as_str().unwrap();
    assert!(
        built.contains("main.c") && built.contains("common.c"),
        "{built}"
    );
    assert!(!built.contains("driver"), "{built}");
    assert!(
        report["run_as"].as_str().unwrap().ends_with("-s 256"),
        "{report}"
    );
    // The kernel written includes the program's header: `-I` its
    // directory.
    let include = format!("-I{}", app("rodinia_lud").display());
    let build = [include.as_str(), "-lm"];
    let keep = ["Checksum"];
    assert_eq!(
        results(&[&out, &main, &helpers], &build, &["-s", "256"], &keep),
        results(&[&kernel, &main, &helpers], &build, &["-s", "256"], &keep)
    );
}

#[test]
fn an_image_filter_whose_region_of_interest_is_c1_c2() {
    let src = app("roi_filter/filter.c");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("filter.c");
    let line = ["-DSIDE=512", "-DPASSES=8", "-lm"];
    let mut args = vec!["--"];
    args.extend(line);
    let report = optimize(&src, &out, &args);
    let text = std::fs::read_to_string(&out).unwrap();
    // The program's c1 and c2 are its own in whatever polytune wrote.
    assert!(!text.contains("polytune_c1"), "{text}");
    if report["choice"]["reason"] == "measured" {
        let region = between(&text, "static void blur_roi", "int main");
        assert!(region.contains("c1") && region.contains("c2"), "{region}");
    }
    let keep = ["sum of"];
    assert_eq!(
        results(&[&out], &line, &[], &keep),
        results(&[&src], &line, &[], &keep)
    );
}

#[test]
fn a_dead_helper_region_is_left_beside_the_hot_kernel() {
    let src = app("dead_helper/stats.c");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stats.c");
    let line = ["-DFEATURES=120", "-DSAMPLES=300", "-lm"];
    let mut args = vec!["--"];
    args.extend(line);
    let report = optimize(&src, &out, &args);
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("stats.c:37: SCoP 0 left unchanged: the program never ran it")),
        "{warnings:?}"
    );
    // The hot kernel's candidates ran and were verified.
    let candidates = report["candidates"].as_array().unwrap();
    assert!(
        candidates.iter().any(|c| c["run"]["status"] == "ok"),
        "{report}"
    );
    let original = std::fs::read_to_string(&src).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    let helper = between(&original, "void standardize", "/* The means");
    assert!(text.contains(helper), "{text}");
    let keep = ["trace", "weighted sum"];
    assert_eq!(
        results(&[&out], &line, &[], &keep),
        results(&[&src], &line, &[], &keep)
    );
}
