//! Measurement end to end: every failure status provoked by a deliberately
//! broken program, and a real kernel verified and timed.

mod common;

use common::{include_dir, root};
use polytune::lab::compiler::Compiler;
use polytune::lab::confine::Limits;
use polytune::lab::runner::Protocol;
use polytune::lab::verify::{Bench, Status};
use std::time::Duration;

fn bench(dir: &std::path::Path) -> Bench {
    Bench {
        compiler: Compiler::detect(
            polytune::lab::compiler::Family::Gcc,
            Some(vec!["-O1".into()]),
        )
        .unwrap(),
        size: polytune::lab::size::Size::Mini,
        include: vec![include_dir()],
        protocol: Protocol {
            timeout: Duration::from_secs(2),
            ..Protocol::default()
        },
        workdir: dir.to_path_buf(),
    }
}

#[test]
fn every_failure_has_its_status() {
    let dir = tempfile::tempdir().unwrap();
    let b = bench(dir.path());
    let fixtures = root().join("tests/fixtures/broken");
    let (good, reference) = b.reference(&fixtures.join("good.c"), false);
    assert_eq!(good.status, Status::Ok, "{}", good.detail);
    let reference = reference.unwrap();
    for (file, status) in [
        ("compile_error.c", Status::CompileError),
        ("crash.c", Status::Crash),
        ("hang.c", Status::Timeout),
        ("wrong.c", Status::WrongOutput),
        ("good.c", Status::Ok),
    ] {
        let (m, _) = b.measure(&fixtures.join(file), file, Some(&reference), false, false);
        assert_eq!(m.status, status, "{file}: {}", m.detail);
    }
}

#[test]
fn a_kernel_and_its_variant_are_verified_and_timed() {
    let dir = tempfile::tempdir().unwrap();
    let b = bench(dir.path());
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let (orig, reference) = b.reference(&gemm, true);
    assert_eq!(orig.status, Status::Ok);
    let t = orig.timing.unwrap();
    assert!(t.samples.len() >= 5 && t.median >= 0.0);
    let src = polytune::frontend::parse_file(&gemm, &Default::default()).unwrap();
    let variant = polytune::engine::pipeline::optimize(
        &src,
        &"fuse=no,tile=32x32,omp=1,simd=1,uj=2".parse().unwrap(),
        None,
    )
    .unwrap();
    let path = dir.path().join("gemm.c");
    std::fs::write(&path, variant.text).unwrap();
    let (m, _) = b.measure(&path, "variant", reference.as_ref(), true, true);
    assert_eq!(m.status, Status::Ok, "{}", m.detail);
    assert!(m.timing.is_some() && m.compile_seconds > 0.0);
}

#[test]
fn a_missing_compiler_is_a_clear_error() {
    let e = "icc"
        .parse::<polytune::lab::compiler::Family>()
        .unwrap_err();
    assert!(e.to_string().contains("unknown compiler"));
}

#[test]
fn simulated_counters_are_identical_across_runs() {
    use polytune::lab::characterize::{Backend, characterize};
    let dir = tempfile::tempdir().unwrap();
    let gcc = Compiler::detect(polytune::lab::compiler::Family::Gcc, None).unwrap();
    let f = root().join("polybench/stencils/jacobi-2d-imper.c");
    let inc = [include_dir()];
    let lim = Limits::new(Duration::from_secs(120), None);
    let run = |backend| {
        characterize(
            &f,
            &gcc,
            polytune::lab::size::Size::Mini,
            &inc,
            backend,
            dir.path(),
            &lim,
        )
    };
    let a = run(Backend::Cachegrind).unwrap();
    let b = run(Backend::Cachegrind).unwrap();
    assert_eq!(a, b);
    assert!(a.values.len() >= 10);
    let ins = a
        .values
        .iter()
        .find(|(k, _)| k == "PAPI_TOT_INS")
        .unwrap()
        .1;
    assert!(ins > 1000.0);
    for (k, v) in &a.values[1..] {
        assert!(v.is_finite() && *v >= 0.0, "{k} = {v}");
    }
    // PAPI fails over with a clear message on these machines.
    let e = run(Backend::Papi).unwrap_err();
    assert!(e.to_string().contains("the cachegrind back end"), "{e}");
}
