//! Issue 17: the commands that build and run programs work on programs
//! written the way real code is (tests/fixtures/real): a PolyBench/C
//! 4.x-style kernel with its utilities, a multi-file program built by a
//! Makefile whose kernel runs several times — measured by polytune's own
//! instrumentation, not by what the programs print.

mod common;

use polytune::frontend::{Options, parse_source};
use polytune::lab::build::Recipe;
use polytune::lab::compiler::Compiler;
use polytune::lab::dump::Tolerance;
use polytune::lab::harness::Harness;
use polytune::lab::runner::Protocol;
use polytune::lab::verify::Status;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn polybench4() -> PathBuf {
    common::root().join("tests/fixtures/real/polybench4")
}

fn polytune(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_polytune"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

use common::json_of_success as json;

const TWO_MM: &str = "linear-algebra/kernels/2mm/2mm.c";
const LINE: [&str; 5] = [
    "--",
    "-Iutilities",
    "utilities/polybench.c",
    "-DMINI_DATASET",
    "-lm",
];

#[test]
fn a_polybench_style_kernel_is_measured_with_its_compile_line() {
    let mut args = vec![
        "measure",
        TWO_MM,
        "--config",
        "fuse=smart,tile=32x32x1,omp=1",
        "--threads",
        "2",
        "--json",
    ];
    args.extend(LINE);
    let v = json(&polytune(&polybench4(), &args));
    assert_eq!(v["original"]["status"], "ok", "{v}");
    assert_eq!(v["variant"]["status"], "ok", "{v}");
    assert!(v["variant"]["timing"]["median"].as_f64().unwrap() > 0.0);
    // Without the utilities' source, the program does not link: a clear
    // error naming the command and what to add.
    let out = polytune(
        &polybench4(),
        &[
            "measure",
            TWO_MM,
            "--",
            "-Iutilities",
            "-DMINI_DATASET",
            "-lm",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("does not build") && err.contains("polybench_alloc_data"),
        "{err}"
    );
    assert!(err.contains("extra sources"), "{err}");
}

#[test]
fn learned_optimize_runs_and_verifies_candidates_of_a_polybench_style_kernel() {
    let out_file = tempfile::NamedTempFile::new().unwrap();
    let out_path = out_file.path().to_str().unwrap().to_string();
    let mut args = vec![
        "optimize", TWO_MM, "-o", &out_path, "--shots", "2", "--json", "-q",
    ];
    args.extend(LINE);
    let v = json(&polytune(&polybench4(), &args));
    assert_eq!(v["original"]["status"], "ok", "{v}");
    let candidates = v["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 2, "{v}");
    for c in candidates {
        let status = &c["run"]["status"];
        assert!(
            status == "ok" || status == "wrong-output" || status == "crash",
            "{c}"
        );
        // Legal transformations verify.
        assert_eq!(status, "ok", "{c}");
    }
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert!(
        text.contains("measured as `"),
        "{}",
        &text[..300.min(text.len())]
    );
    assert!(text.contains("utilities/polybench.c -DMINI_DATASET -lm"));
    // The written program carries no instrumentation.
    assert!(
        !text.contains("polytune_rt"),
        "instrumentation left in the output"
    );
    // --no-run: characterization (instrumented) and ranking, no runs.
    let mut args = vec!["optimize", TWO_MM, "--no-run", "-q"];
    args.extend(LINE);
    let out = polytune(&polybench4(), &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("without running it"));
}

#[test]
fn characterization_counts_the_region_of_any_program() {
    let mut args = vec!["characterize", TWO_MM, "--json"];
    args.extend(LINE);
    let v = json(&polytune(&polybench4(), &args));
    let text = v.to_string();
    assert!(text.contains("PAPI_TOT_INS"), "{text}");
}

#[test]
fn a_corpus_kernel_calling_sqrt_needs_no_compile_line() {
    // The corpus' own build links the math library; the instrumented
    // build of a corpus-style program must too.
    let args = [
        "characterize",
        "polybench/solvers/cholesky.c",
        "--size",
        "mini",
        "--json",
    ];
    let v = json(&polytune(&common::root(), &args));
    assert!(v["features"]["PAPI_TOT_INS"].as_f64().unwrap() > 0.0, "{v}");
    // The back end as `--backend` and the store name it.
    assert_eq!(v["backend"], "cachegrind", "{v}");
    // Only the region is counted, not the instrumentation's clock (reached
    // through an indirect jump): the region has no indirect branch.
    assert_eq!(v["features"]["CG_BR_IND"].as_f64(), Some(0.0), "{v}");
}

fn makefile_args(run: &str) -> Vec<String> {
    vec![
        "measure".into(),
        "tests/fixtures/real/makefile_app/kernel.c".into(),
        "--config".into(),
        "fuse=smart,tile=32x32x1,omp=1".into(),
        "--build".into(),
        "make -s -C tests/fixtures/real/makefile_app CC={cc} CFLAGS={cflags} KERNEL={src} EXE={exe}".into(),
        "--run".into(),
        run.into(),
        "--json".into(),
    ]
}

#[test]
fn a_makefile_program_whose_kernel_runs_many_times_is_measured() {
    let args = makefile_args("{exe} 48 6");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let v = json(&polytune(&common::root(), &args));
    assert_eq!(v["original"]["status"], "ok", "{v}");
    assert_eq!(v["variant"]["status"], "ok", "{v}");
    // Learned optimize (candidates built by make, verified, timed) and
    // characterization through the same commands.
    let build = "make -s -C tests/fixtures/real/makefile_app CC={cc} CFLAGS={cflags} KERNEL={src} EXE={exe}";
    let v = json(&polytune(
        &common::root(),
        &[
            "optimize",
            "tests/fixtures/real/makefile_app/kernel.c",
            "--build",
            build,
            "--run",
            "{exe} 48 4",
            "--shots",
            "2",
            "--json",
            "-q",
        ],
    ));
    assert_eq!(v["original"]["status"], "ok", "{v}");
    for c in v["candidates"].as_array().unwrap() {
        assert_eq!(c["run"]["status"], "ok", "{c}");
    }
    assert!(
        v["program"]
            .as_str()
            .unwrap()
            .contains("measured as `make -s"),
        "{v}"
    );
    let v = json(&polytune(
        &common::root(),
        &[
            "characterize",
            "tests/fixtures/real/makefile_app/kernel.c",
            "--build",
            build,
            "--run",
            "{exe} 32 3",
            "--json",
        ],
    ));
    assert!(v.to_string().contains("PAPI_TOT_INS"), "{v}");
    // A run that never reaches the kernel (zero time steps) is an error
    // that says so.
    let args = makefile_args("{exe} 48 0");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = polytune(&common::root(), &args);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("never reached"), "{err}");
}

/// A variant that computes the printed result right but leaves a
/// temporary array different is caught: the record covers everything the
/// region writes, not what the program prints.
#[test]
fn a_wrong_temporary_that_the_program_never_prints_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let file = polybench4().join(TWO_MM);
    let text = std::fs::read_to_string(&file).unwrap();
    let broken = text.replacen(
        "#pragma endscop",
        "  tmp[0][0] = tmp[0][0] + 1.0;\n#pragma endscop",
        1,
    );
    assert_ne!(broken, text);
    let build = |text: String, name: &str| {
        let src = parse_source(&file, text, &Options::default()).unwrap();
        let out = polytune::engine::pipeline::instrumented(&src, None, None).unwrap();
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        let path = d.join("2mm.c");
        std::fs::write(&path, out.text).unwrap();
        path
    };
    let original = build(text, "o");
    let variant = build(broken, "v");
    let mut recipe = Recipe::new(
        Compiler::detect(polytune::lab::compiler::Family::Gcc, None).unwrap(),
        &file,
    );
    let u = polybench4().join("utilities");
    recipe.extra = vec![
        format!("-I{}", u.display()),
        u.join("polybench.c").display().to_string(),
        "-DMINI_DATASET".into(),
        "-DPOLYBENCH_DUMP_ARRAYS".into(),
        "-lm".into(),
    ];
    let harness = Harness {
        recipe,
        protocol: Protocol::default(),
        tolerance: Tolerance::default(),
        workdir: dir.path().to_path_buf(),
    };
    let (m, reference) = harness.reference(&original, false).unwrap();
    assert_eq!(m.status, Status::Ok);
    let same = harness.measure(&original, "same", &reference, false, false);
    assert_eq!(same.status, Status::Ok, "{}", same.detail);
    let wrong = harness.measure(&variant, "wrong", &reference, false, false);
    assert_eq!(wrong.status, Status::WrongOutput, "{}", wrong.detail);
    assert!(wrong.detail.contains("tmp"), "{}", wrong.detail);
}

/// A bare kernel (no `main`): polytune writes its driver from the
/// signature and the footprint, and every command that runs the program
/// builds with it; what it cannot size is refused with what to provide.
#[test]
fn a_bare_kernel_is_driven_by_a_generated_main() {
    let root = common::root();
    let v = json(&polytune(
        &root,
        &[
            "measure",
            "tests/fixtures/real/bare/syrk.c",
            "--config",
            "fuse=smart,tile=32x32x1,omp=1",
            "--param",
            "n=64,m=48",
            "--json",
        ],
    ));
    assert_eq!(v["original"]["status"], "ok", "{v}");
    assert_eq!(v["variant"]["status"], "ok", "{v}");
    let v = json(&polytune(
        &root,
        &[
            "characterize",
            "tests/fixtures/real/bare/heat.c",
            "--param",
            "n=40,tsteps=2",
            "--json",
        ],
    ));
    assert!(v.to_string().contains("PAPI_TOT_INS"), "{v}");
    // A pointer of unknown extent: refused, unless the user asks for the
    // footprint's size.
    let args = [
        "measure",
        "tests/fixtures/real/bare/unknown.c",
        "--param",
        "n=100",
    ];
    let out = polytune(&root, &args);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pointer of unknown extent") && err.contains("double x[n]"),
        "{err}"
    );
    let mut args = args.to_vec();
    args.extend(["--size-from-footprint", "--json"]);
    assert_eq!(json(&polytune(&root, &args))["original"]["status"], "ok");
    // Without the values, the error says which to give.
    let out = polytune(&root, &["measure", "tests/fixtures/real/bare/syrk.c"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--param"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The learned optimize, with runs and without.
    let v = json(&polytune(
        &root,
        &[
            "optimize",
            "tests/fixtures/real/bare/syrk.c",
            "--param",
            "n=48,m=40",
            "--shots",
            "2",
            "--json",
            "-q",
        ],
    ));
    assert_eq!(v["original"]["status"], "ok", "{v}");
    for c in v["candidates"].as_array().unwrap() {
        assert_eq!(c["run"]["status"], "ok", "{c}");
    }
    let out = polytune(
        &root,
        &[
            "optimize",
            "tests/fixtures/real/bare/syrk.c",
            "--param",
            "n=48,m=40",
            "--no-run",
            "-q",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("void kernel_syrk"));
    // The driver itself, for the user to build with the kernel.
    let out = polytune(
        &root,
        &[
            "driver",
            "tests/fixtures/real/bare/syrk.c",
            "--param",
            "n=8,m=4",
        ],
    );
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("int main(void)") && text.contains("kernel_syrk("),
        "{text}"
    );
}

/// `collect` measures programs outside the corpus style through the
/// instrumentation: a PolyBench-style kernel with its compile line, the
/// Makefile program with its build and run commands, a bare kernel with
/// its driver; every variant verified, and a rerun resumes.
#[test]
fn collect_measures_real_programs() {
    let root = common::root();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let db = db.to_str().unwrap();
    let u = "tests/fixtures/real/polybench4/utilities";
    let atax = "tests/fixtures/real/polybench4/linear-algebra/kernels/atax/atax.c";
    let runs: Vec<Vec<String>> = vec![
        vec![
            atax.into(),
            "--".into(),
            format!("-I{u}"),
            format!("{u}/polybench.c"),
            "-DMINI_DATASET".into(),
            "-lm".into(),
        ],
        vec![
            "tests/fixtures/real/makefile_app/kernel.c".into(),
            "--build".into(),
            "make -s -C tests/fixtures/real/makefile_app CC={cc} CFLAGS={cflags} KERNEL={src} EXE={exe}".into(),
            "--run".into(),
            "{exe} 32 3".into(),
        ],
        vec![
            "tests/fixtures/real/bare/syrk.c".into(),
            "--param".into(),
            "n=24,m=20".into(),
        ],
    ];
    for (k, extra) in runs.iter().enumerate() {
        let mut args = vec![
            "collect",
            "--db",
            db,
            "--max-variants",
            "2",
            "--size",
            "mini",
            "--json",
        ];
        args.extend(extra.iter().map(String::as_str));
        let v = json(&polytune(&root, &args));
        assert_eq!(v["measured"], 3, "{k}: {v}");
        assert_eq!(v["failed"], 0, "{k}: {v}");
        // Resumed: nothing measured twice.
        let v = json(&polytune(&root, &args));
        assert_eq!(v["measured"], 0, "{k}: {v}");
        assert_eq!(v["already_stored"], 3, "{k}: {v}");
        // The fastest variant timed again, interleaved with the original,
        // through the program's own build and run (the options before
        // the compile line after `--`).
        args.splice(1..1, ["--confirm-top", "1", "--confirm-rounds", "2"]);
        let v = json(&polytune(&root, &args));
        assert_eq!(
            (v["measured"].as_u64(), v["failed"].as_u64()),
            (Some(0), Some(0)),
            "{k}: {v}"
        );
        assert!(
            (1..=2).contains(&v["confirmed"].as_u64().unwrap()),
            "{k}: {v}"
        );
    }
}

/// An original that computes something else on every run cannot be a
/// reference: said so, with what to do, and nothing is measured.
#[test]
fn a_nondeterministic_original_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nondet.c");
    std::fs::write(
        &file,
        "#include <stdio.h>\n#include <unistd.h>\ndouble a[100];\nint main(void) { int i; double s = (double)getpid();\n#pragma scop\nfor (i = 0; i < 100; i++) a[i] = s + i;\n#pragma endscop\nprintf(\"%f\\n\", a[5]); return 0; }\n",
    )
    .unwrap();
    let out = polytune(dir.path(), &["measure", "nondet.c"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("different results from one run to the next"),
        "{err}"
    );
    assert!(err.contains("deterministic"), "{err}");
}

/// A kernel that the program's own threads call at the same time: the
/// instrumentation sees executions from two threads (overlapping or, on a
/// loaded machine, one after the other) and the run is refused
/// with the reason (before: a crash in the recording, two threads writing
/// one buffer). Since issue 40 a program that uses OpenMP is built with
/// `-fopenmp` whether or not the compile line says so, as its author runs
/// it (before, without the flag, the program measured was another one:
/// its one thread scaled half the rows).
#[test]
fn a_region_run_by_several_threads_at_once_is_refused() {
    let file = "tests/fixtures/real/threads/kernel_per_thread.c";
    let out = polytune(&common::root(), &["measure", file, "--", "-fopenmp"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ran a SCoP region from several of its threads") && !err.contains("exit Code"),
        "{err}"
    );
    // Without `-fopenmp` on the compile line: the same build, refused.
    let out = polytune(&common::root(), &["measure", file]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ran a SCoP region from several of its threads"),
        "{err}"
    );
}

/// A GPU suite's OpenMP port (tests/fixtures/real/gpu_port): pointers
/// indexed through a function-like macro (`in[IDX(r + 1, c, nc)]`), a
/// typedef'd block scalar, the kernel called once per time step with its
/// buffers swapped. Detection finds the nest; the transformed program
/// keeps the macro calls and prints what the original prints; the
/// learned `optimize` verifies every candidate it runs.
#[test]
fn a_gpu_port_indexed_through_a_macro_is_detected_and_transformed() {
    let src = common::root().join("tests/fixtures/real/gpu_port/hotspot.c");
    let dir = tempfile::tempdir().unwrap();
    let args = ["61", "47", "4"];
    for (k, config) in [
        "fuse=no,tile=32x32x1,omp=1,uj=2",
        "fuse=smart,tile=16x64x1,omp=1,prevec=1,simd=1,uj=4x2",
    ]
    .iter()
    .enumerate()
    {
        let out_c = dir.path().join(format!("v{k}.c"));
        let out = polytune(
            dir.path(),
            &[
                "optimize",
                src.to_str().unwrap(),
                "--detect",
                "--config",
                config,
                "-o",
                out_c.to_str().unwrap(),
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{config}: {stderr}");
        let text = std::fs::read_to_string(&out_c).unwrap();
        assert!(
            text.contains("#pragma omp parallel for"),
            "{config}: not transformed\n{stderr}"
        );
        assert!(text.contains("in[IDX("), "the macro calls are kept");
        for cc in common::compilers() {
            let orig = dir.path().join(format!("orig-{cc}"));
            common::build_openmp(cc, &src, &orig, &[]);
            let exe = dir.path().join(format!("v{k}-{cc}"));
            common::build_openmp(cc, &out_c, &exe, &[]);
            assert_eq!(
                common::run_two_threads(&exe, &args),
                common::run_two_threads(&orig, &args),
                "{cc} {config}"
            );
        }
    }
    let v = json(&polytune(
        dir.path(),
        &[
            "optimize",
            src.to_str().unwrap(),
            "--detect",
            "--run-args",
            "61 47 4",
            "--budget",
            "3",
            "--refine",
            "1",
            "--json",
            "-q",
        ],
    ));
    assert_eq!(v["original"]["status"], "ok", "{v}");
    let candidates = v["candidates"].as_array().unwrap();
    assert!(!candidates.is_empty(), "{v}");
    for c in candidates {
        assert_eq!(c["run"]["status"], "ok", "{c}");
    }
}

/// C translations of Fortran libraries (tests/fixtures/real/lapack_style):
/// column-major matrices through element macros, `C(i, j) += alpha *
/// A(i, l) * B(l, j)`. Detection takes both routines; the element a call
/// names is read and written as the preprocessor expands it; every
/// variant prints what the original prints.
#[test]
fn element_macros_of_a_fortran_style_library_are_read_and_written() {
    let src = common::root().join("tests/fixtures/real/lapack_style/blas3.c");
    let dir = tempfile::tempdir().unwrap();
    let listed = polytune(dir.path(), &["scop", src.to_str().unwrap(), "--detect"]);
    let text = String::from_utf8_lossy(&listed.stdout).to_string()
        + &String::from_utf8_lossy(&listed.stderr);
    assert!(
        text.contains("gemm_nn lines 17-20") && text.contains("gemv_n lines 28-30"),
        "{text}"
    );
    for (k, config) in [
        "fuse=no,tile=32x32x32,omp=1",
        "fuse=no,tile=32x32x32,omp=1,rb=4x8",
        "fuse=smart,tile=1x1x1,prevec=1,simd=1,uj=4",
        "fuse=no,tile=64x8x16,omp=1,red=1,uj=2x2",
    ]
    .iter()
    .enumerate()
    {
        let out_c = dir.path().join(format!("v{k}.c"));
        let out = polytune(
            dir.path(),
            &[
                "optimize",
                src.to_str().unwrap(),
                "--detect",
                "--config",
                config,
                "-o",
                out_c.to_str().unwrap(),
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{config}: {stderr}");
        let text = std::fs::read_to_string(&out_c).unwrap();
        // The generated loops name the elements the macros expand to.
        assert!(
            text.contains("* ldc]"),
            "{config}: not transformed\n{stderr}"
        );
        for cc in common::compilers() {
            let orig = dir.path().join(format!("orig-{cc}"));
            common::build_openmp(cc, &src, &orig, &[]);
            let exe = dir.path().join(format!("v{k}-{cc}"));
            common::build_openmp(cc, &out_c, &exe, &[]);
            for n in ["37", "64"] {
                assert_eq!(
                    common::run_two_threads(&exe, &[n]),
                    common::run_two_threads(&orig, &[n]),
                    "{cc} {config} n={n}"
                );
            }
        }
    }
}

/// Issue 36: a PolyBench/C-4-style program tuned at the size it runs.
/// `syrk.c` (tests/fixtures/real/polybench4/linear-algebra/blas/syrk) is
/// LARGE unless told otherwise: about 18 s a run with gcc -O3 on the AMD
/// EPYC development guest. The learned `optimize` characterizes a prefix
/// of its region, searches within `--time-budget 120`, confirms the
/// winner head to head, and says how long each phase took; the program it
/// writes, built and run like the original, prints the same results.
#[test]
#[ignore = "tunes an 18-second program end to end: about five minutes (run with --ignored)"]
fn a_program_of_seconds_is_tuned_at_the_size_it_runs() {
    const SYRK: &str = "linear-algebra/blas/syrk/syrk.c";
    let dir = tempfile::tempdir().unwrap();
    let out_c = dir.path().join("syrk.c");
    let out_path = out_c.to_str().unwrap();
    let started = std::time::Instant::now();
    let v = json(&polytune(
        &polybench4(),
        &[
            "optimize",
            SYRK,
            "-o",
            out_path,
            "--time-budget",
            "120",
            "--json",
            "-q",
            "--",
            "-Iutilities",
            "utilities/polybench.c",
            "-lm",
        ],
    ));
    let took = started.elapsed().as_secs_f64();
    assert_eq!(v["counted"]["part"], "prefix", "{v}");
    let p = &v["phases"];
    let phase = |k: &str| p[k].as_f64().unwrap();
    // Characterized within max(3x one native run, 5 s).
    let native = v["original"]["seconds"].as_f64().unwrap();
    assert!(
        phase("characterize") <= (3.0 * native).max(5.0),
        "{p} (native {native} s)"
    );
    // The search kept to its budget (a candidate started just before the
    // end may finish after it: one more candidate's runs).
    let search = v["search"]["seconds"].as_f64().unwrap();
    assert!(search <= 120.0 + 4.0 * native, "{search} s");
    assert!(phase("total") <= took + 1.0, "{p}: {took}");
    assert!(
        v["built_as"]
            .as_str()
            .unwrap()
            .contains("utilities/polybench.c"),
        "{v}"
    );
    // The written program: the original's results at the original's size.
    let utilities = polybench4().join("utilities");
    let build = |src: &Path, exe: &Path| {
        let include = format!("-I{}", utilities.display());
        let harness = utilities.join("polybench.c");
        common::build_openmp(
            "gcc",
            src,
            exe,
            &[
                "-DPOLYBENCH_DUMP_ARRAYS",
                &include,
                harness.to_str().unwrap(),
            ],
        );
    };
    let run = |exe: &Path| {
        let out = Command::new(exe)
            .env("OMP_NUM_THREADS", "2")
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let (orig_exe, new_exe) = (dir.path().join("orig"), dir.path().join("new"));
    build(&polybench4().join(SYRK), &orig_exe);
    // The output includes "syrk.h" from beside the original.
    std::fs::copy(
        polybench4().join("linear-algebra/blas/syrk/syrk.h"),
        dir.path().join("syrk.h"),
    )
    .unwrap();
    build(&out_c, &new_exe);
    let (a, b) = (run(&orig_exe), run(&new_exe));
    let numbers = |s: &str| -> Vec<f64> {
        s.split_whitespace()
            .filter_map(|w| w.parse::<f64>().ok())
            .collect()
    };
    let (a, b) = (numbers(&a), numbers(&b));
    assert_eq!(a.len(), b.len());
    assert!(a.len() > 1_000_000, "the dump: {} values", a.len());
    for (x, y) in a.iter().zip(&b) {
        // Printed with two decimals: a reordered sum may round the other
        // way at the last digit.
        assert!((x - y).abs() <= 0.011 + 1e-9 * x.abs(), "{x} against {y}");
    }
}
