//! The instrumented build records the values of each SCoP's parameters at
//! the region's first execution: the sizes the program really runs with,
//! which the features of a variant are computed at.

mod common;

use polytune::frontend::{Options, parse_file};
use polytune::lab::side::Side;
use std::process::Command;

#[test]
fn the_instrumented_build_records_the_parameters_the_program_runs_with() {
    let file = std::path::PathBuf::from(common::corpus("linear-algebra/gemm.c"));
    let src = parse_file(&file, &Options::default()).unwrap();
    let out = polytune::engine::pipeline::instrumented(&src, None, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gemm.c");
    std::fs::write(&path, &out.text).unwrap();
    let exe = dir.path().join("gemm");
    common::compile("gcc", &path, &exe, "small");
    let side = dir.path().join("side");
    let run = Command::new(&exe)
        .env("POLYTUNE_SIDE", &side)
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let s = Side::parse(&std::fs::read_to_string(&side).unwrap()).unwrap();
    let mut params = s.params.clone();
    params.sort();
    // SMALL_DATASET: NI 60, NJ 70, NK 80 (polybench/linear-algebra/gemm.c),
    // passed to kernel_gemm(ni, nj, nk, ...).
    assert_eq!(
        params,
        vec![
            (0, "ni".to_string(), 60),
            (0, "nj".to_string(), 70),
            (0, "nk".to_string(), 80)
        ]
    );
}
