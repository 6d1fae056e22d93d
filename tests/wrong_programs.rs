//! Wrong programs found by `polytune fuzz` (or by hand), minimized: each fixture of
//! tests/fixtures/wrong is transformed under several configurations
//! (among them the one that was miscompiled), compiled with gcc and clang,
//! run with two threads at several parameter values, and must print
//! exactly what the original prints. A configuration may be refused (the
//! SCoP is then left unchanged), never miscompiled.

mod common;

use common::compilers;
use std::process::Command;

const CONFIGS: &[&str] = &[
    // The miscompiled one: isl's AST lost an instance.
    "fuse=no,tile=32x1x32,wave=1,omp=0,prevec=1,simd=0,uj=1",
    "fuse=no,tile=32x1x32,wave=1,omp=0,prevec=1,simd=1,uj=2",
    "fuse=no,tile=32x1x32,wave=0,omp=1,prevec=1,simd=0,uj=1",
    "fuse=smart,tile=32x32x1,wave=1,omp=1,prevec=1,simd=1,uj=4",
    "fuse=max,tile=1x1x1,wave=0,omp=1,prevec=0,simd=0,uj=2",
];

/// Transforms `name` under every configuration and compares the variant's
/// output with the original's at each parameter list of `params`; returns
/// polytune's warnings.
fn same_output(name: &str, configs: &[&str], params: &[&[&str]]) -> String {
    let mut warnings = String::new();
    let src = common::root().join("tests/fixtures/wrong").join(name);
    let dir = tempfile::tempdir().unwrap();
    for cc in compilers() {
        let orig = dir.path().join("orig");
        common::build_openmp(cc, &src, &orig, &[]);
        let expected: Vec<String> = params
            .iter()
            .map(|p| common::run_two_threads(&orig, p))
            .collect();
        for (k, config) in configs.iter().enumerate() {
            let variant = dir.path().join(format!("v{k}.c"));
            let out = Command::new(env!("CARGO_BIN_EXE_polytune"))
                .args(["optimize", src.to_str().unwrap(), "--config", config, "-o"])
                .arg(&variant)
                .output()
                .unwrap();
            // Exit 3: the engine caught a bug of its own (isl's), wrote
            // the file with that SCoP unchanged and asked for a report.
            let caught = out.status.code() == Some(3)
                && String::from_utf8_lossy(&out.stderr).contains("internal error");
            assert!(
                out.status.success() || caught,
                "{name} {config}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            warnings.push_str(&String::from_utf8_lossy(&out.stderr));
            let exe = dir.path().join(format!("v{k}"));
            common::build_openmp(cc, &variant, &exe, &[]);
            for (p, want) in params.iter().zip(&expected) {
                let got = common::run_two_threads(&exe, p);
                assert!(
                    got == *want,
                    "{name} under {config} with {cc} at {p:?} prints other values than the original"
                );
            }
        }
    }
    warnings
}

#[test]
fn a_statement_instance_lost_by_isl_code_generation_is_caught() {
    same_output(
        "lost_instance.c",
        CONFIGS,
        &[&["1"], &["2"], &["3"], &["4"]],
    );
}

#[test]
fn schedules_with_huge_coefficients_are_refused() {
    let warnings = same_output(
        "huge_coefficients.c",
        &[
            // The one that timed out, and the fuzzer's other three.
            "fuse=no,tile=32x1x32,wave=0,omp=1,prevec=1,simd=1,uj=1",
            "fuse=no,tile=1x1x32,wave=0,omp=0,prevec=0,simd=0,uj=2",
            "fuse=smart,tile=32x32x1,wave=1,omp=1,prevec=1,simd=1,uj=4",
            "fuse=max,tile=1x1x1,wave=0,omp=1,prevec=0,simd=0,uj=2",
        ],
        &[
            &["0", "27", "22"],
            &["7", "3", "3"],
            &["2", "3", "-3"],
            &["7", "1", "3"],
        ],
    );
    assert!(
        warnings.contains("has a coefficient of") && warnings.contains("limit is 20"),
        "the refusal is not explained: {warnings}"
    );
}

#[test]
fn loops_that_break_a_dependence_are_refused() {
    let warnings = same_output(
        "isl_order.c",
        &[
            // The miscompiled ones (all of fuse=smart).
            "fuse=smart,tile=1x1x1,wave=0,omp=0,prevec=0,simd=0,uj=1",
            "fuse=smart,tile=1x1x1,wave=1,omp=1,prevec=0,simd=1,uj=4",
            "fuse=smart,tile=1x1x32,wave=1,omp=1,prevec=1,simd=0,uj=8",
            "fuse=no,tile=32x32x1,wave=0,omp=1,prevec=1,simd=1,uj=2",
        ],
        &[&["1"]],
    );
    assert!(
        warnings.contains("order that breaks a dependence"),
        "the refusal is not explained: {warnings}"
    );
}

#[test]
fn macro_arguments_keep_their_text_and_parentheses() {
    same_output(
        "macro_text.c",
        &[
            // The miscompiled one: the outer loop unrolled and jammed.
            "fuse=no,tile=32x32x1,wave=0,omp=0,prevec=0,simd=0,uj=2",
            "fuse=smart,tile=1x1x1,wave=0,omp=1,prevec=0,simd=1,uj=4",
            "fuse=max,tile=32x32x1,wave=1,omp=1,prevec=1,simd=0,uj=8",
            "fuse=no,tile=8x16x1,omp=1,uj=2x2",
        ],
        &[&["40"], &["33"], &["7"]],
    );
}
