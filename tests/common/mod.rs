//! Shared helpers of the end-to-end tests: build and run corpus programs.
#![allow(dead_code)]

use polytune::lab::dump::Dump;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn include_dir() -> PathBuf {
    root().join("polybench").join("include")
}

/// gcc, or the versioned clang the project installs.
pub fn compilers() -> Vec<&'static str> {
    vec!["gcc", "clang-19"]
}

/// Compiles a corpus-style program at a dataset size; panics with the
/// compiler's message on failure or on any warning.
pub fn compile(cc: &str, src: &Path, exe: &Path, size: &str) {
    let out = Command::new(cc)
        .args([
            "-O2",
            "-march=native",
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
        ])
        .arg(format!("-D{}_DATASET", size.to_uppercase()))
        .arg("-I")
        .arg(include_dir())
        .arg(src)
        .arg("-o")
        .arg(exe)
        .arg("-lm")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e} (run scripts/setup.sh)"));
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{cc} {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs a program with `--dump` and parses what it printed.
pub fn run_dump(exe: &Path) -> Dump {
    let out = Command::new(exe)
        .arg("--dump")
        .output()
        .expect("run program");
    assert!(
        out.status.success(),
        "{} exited with {}: {}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.lines().any(|l| l.starts_with("polytune-time: ")),
        "{} printed no time line",
        exe.display()
    );
    Dump::parse(&String::from_utf8_lossy(&out.stdout)).expect("well-formed dump")
}

/// Compiles a generated variant (OpenMP on; warnings allowed, since the
/// original's now-unused iterators may be reported).
pub fn compile_variant(cc: &str, src: &Path, exe: &Path, size: &str) -> Result<(), String> {
    compile_variant_with(cc, src, exe, size, &[])
}

/// [`compile_variant`] with more flags after `-march=native` (e.g.
/// `-mno-avx512f`, to build what another target would run).
pub fn compile_variant_with(
    cc: &str,
    src: &Path,
    exe: &Path,
    size: &str,
    extra: &[&str],
) -> Result<(), String> {
    let out = Command::new(cc)
        .args(["-O2", "-march=native", "-std=c99", "-fopenmp"])
        .args(extra)
        .arg(format!("-D{}_DATASET", size.to_uppercase()))
        .arg("-I")
        .arg(include_dir())
        .arg(src)
        .arg("-o")
        .arg(exe)
        .arg("-lm")
        .output()
        .map_err(|e| format!("cannot run {cc}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Runs a program with `--dump` on two threads.
pub fn run_dump_threads(exe: &Path) -> Result<Dump, String> {
    let out = Command::new(exe)
        .arg("--dump")
        .env("OMP_NUM_THREADS", "2")
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "exit {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Dump::parse(&String::from_utf8_lossy(&out.stdout)).map_err(|e| e.to_string())
}

/// Every corpus kernel present, relative to `polybench/`.
pub fn corpus_files() -> Vec<String> {
    let base = root().join("polybench");
    polytune::app::campaign::kernel_files(std::slice::from_ref(&base))
        .unwrap()
        .iter()
        .map(|p| p.strip_prefix(&base).unwrap().to_str().unwrap().to_string())
        .collect()
}

/// Compiles a test program with OpenMP (`-O2 -fopenmp -w`, then `extra`,
/// then `-lm`); panics with the compiler's message if it fails.
pub fn build_openmp(cc: &str, src: &Path, exe: &Path, extra: &[&str]) {
    let out = Command::new(cc)
        .args(["-O2", "-fopenmp", "-w"])
        .args(extra)
        .arg("-o")
        .arg(exe)
        .arg(src)
        .arg("-lm")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e} (run scripts/setup.sh)"));
    assert!(
        out.status.success(),
        "{cc} {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Compiles `src` with OpenMP ([`build_openmp`]) and runs it on two
/// threads ([`run_two_threads`]): its standard output.
pub fn build_and_run(cc: &str, src: &Path, exe: &Path) -> String {
    build_openmp(cc, src, exe, &[]);
    run_two_threads(exe, &[])
}

/// Runs a test program on two OpenMP threads under a 60-second limit (a
/// variant that loops for hours is a failure too); its standard output.
pub fn run_two_threads(exe: &Path, args: &[&str]) -> String {
    let out = Command::new("timeout")
        .arg("60")
        .arg(exe)
        .args(args)
        .env("OMP_NUM_THREADS", "2")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} {args:?}: {}",
        exe.display(),
        out.status
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Builds `src` with `cc` at `size` (more flags in `extra`), runs it on
/// two threads and compares its dump with `reference` (the default
/// tolerance): why not, if it does not match.
pub fn matches_reference(
    cc: &str,
    src: &Path,
    exe: &Path,
    size: &str,
    extra: &[&str],
    reference: &Dump,
) -> Result<(), String> {
    compile_variant_with(cc, src, exe, size, extra)
        .map_err(|e| format!("compile error: {e}"))
        .and_then(|()| run_dump_threads(exe))
        .and_then(|d| {
            reference
                .compare(&d, polytune::lab::dump::Tolerance::default())
                .map_err(|m| format!("wrong output: {m}"))
        })
}

/// `check` on every item, the items split between two threads (the
/// machines the tests run on have two cores); all the failures.
pub fn on_two_threads<T: Sync>(
    items: &[T],
    check: impl Fn(&T) -> Vec<String> + Sync,
) -> Vec<String> {
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(items.len().div_ceil(2).max(1))
            .map(|chunk| s.spawn(|| chunk.iter().flat_map(&check).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// The JSON a polytune run printed on stdout; panics with both outputs
/// when it failed.
pub fn json_of_success(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs the polytune under test with `args`; its whole output.
pub fn polytune(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args(args)
        .output()
        .unwrap()
}

/// A corpus program's path (`linear-algebra/gemm.c`), as an argument.
pub fn corpus(rel: &str) -> String {
    root()
        .join("polybench")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

/// Learned `optimize` of `src` into `out` with `args` after the file
/// (a budget, `--detect`, a compile line after `--`): its JSON report,
/// the run having succeeded.
pub fn learned(src: &Path, out: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec![
        "optimize",
        src.to_str().unwrap(),
        "--refine",
        "0",
        "--json",
        "-o",
        out.to_str().unwrap(),
    ];
    // Options before the compile line's `--`.
    let split = args.iter().position(|a| *a == "--").unwrap_or(args.len());
    all.splice(2..2, args[..split].iter().copied());
    all.extend(&args[split..]);
    json_of_success(&polytune(&all))
}

/// The program built from `original` and from `transformed` (each with
/// `sources`, gcc with OpenMP) print the same on two threads.
pub fn same_output(original: &Path, transformed: &Path, sources: &[&Path]) {
    let dir = tempfile::tempdir().unwrap();
    let run = |src: &Path, name: &str| {
        let exe = dir.path().join(name);
        let out = Command::new("gcc")
            .args(["-O2", "-fopenmp", "-w", "-o"])
            .arg(&exe)
            .arg(src)
            .args(sources)
            .arg("-lm")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            src.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        run_two_threads(&exe, &[])
    };
    assert_eq!(run(transformed, "transformed"), run(original, "original"));
}

/// `optimize --detect --config CONFIG -o OUT` on `src`, which must
/// succeed: its stderr.
pub fn optimize_detected(src: &Path, config: &str, out: &Path) -> String {
    let o = polytune(&[
        "optimize",
        src.to_str().unwrap(),
        "--detect",
        "--config",
        config,
        "-o",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{config}: {stderr}");
    stderr
}
