//! Run-time alias checks (issue 40): `--detect` without flags takes
//! kernels whose arrays are pointer parameters that may overlap, and
//! versions each on a check that the address ranges it reaches are
//! disjoint. Called with distinct arrays the transformed code runs;
//! called with overlapping ones (`shift(n, buf, buf + 1)`, a 2-D sweep in
//! place or shifted by a row, a delinearized product whose output is an
//! input, a pointer into the global it updates, a pointer to the global
//! loop bound, an output that holds the bound read from memory once,
//! arrays the caller passes from a struct's fields) the original runs and
//! the
//! program prints what the original prints: every configuration, both
//! compilers, one and two threads.
#![cfg(feature = "detect")]

mod common;

use std::path::Path;
use std::process::Command;

const CONFIGS: [&str; 4] = [
    "fuse=smart,tile=32x32x32,wave=0,omp=1,prevec=1,simd=1,uj=2",
    "fuse=max,tile=16x16x16,wave=1,omp=1,prevec=0,simd=0,uj=1",
    "fuse=no,tile=1x1x1,wave=0,omp=1,prevec=1,simd=1,uj=4",
    "fuse=smart,tile=8x64x32,wave=0,omp=1,prevec=0,simd=1,uj=1x2,rb=4x8",
];

/// Which path each kernel call of `overlap.c` takes, in call order.
const PATHS: [&str; 15] = [
    "transformed", // shift, apart
    "original",    // shift, y = x + 1
    "transformed", // smooth, apart
    "original",    // smooth, in place
    "original",    // smooth, shifted by a row
    "transformed", // product, apart
    "original",    // product, c = a
    "transformed", // accumulate, apart
    "original",    // accumulate into the global itself
    "transformed", // clear, apart from the bound
    "original",    // clear the bound itself
    "transformed", // scale, its count apart
    "original",    // scale, the output its own count
    "transformed", // shift, struct fields apart
    "original",    // shift, struct fields overlapping
];

fn fixture() -> std::path::PathBuf {
    common::root().join("tests/fixtures/alias/overlap.c")
}

/// Runs `exe` on `threads` OpenMP threads: stdout and stderr.
fn run(exe: &Path, threads: &str) -> (String, String) {
    let out = Command::new("timeout")
        .arg("60")
        .arg(exe)
        .env("OMP_NUM_THREADS", threads)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}: {}", exe.display(), out.status);
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The program with each alias check reporting which way it went on
/// stderr: `if (COND) {` becomes `if (polytune_probe(COND)) {`.
fn probed(text: &str) -> String {
    let mut out = String::from(
        "#include <stdio.h>\n#define polytune_probe(c) ((c) ? (fputs(\"transformed\\n\", stderr), 1) : (fputs(\"original\\n\", stderr), 0))\n",
    );
    let mut probes = 0;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("if (") && t.contains("__UINTPTR_TYPE__") && t.ends_with(") {") {
            let at = line.find("if (").unwrap();
            let cond = &line[at + 4..line.len() - 3];
            out += &format!("{}if (polytune_probe({cond})) {{\n", &line[..at]);
            probes += 1;
        } else {
            out += line;
            out.push('\n');
        }
    }
    assert_eq!(probes, 6, "one alias check per kernel:\n{text}");
    out
}

#[test]
fn overlapping_calls_run_the_original_and_apart_ones_the_transformed_code() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture();
    let mut want: Vec<(String, String)> = Vec::new();
    for cc in common::compilers() {
        let exe = dir.path().join(format!("orig-{cc}"));
        common::build_openmp(cc, &src, &exe, &[]);
        want.push((cc.to_string(), run(&exe, "1").0));
    }
    assert_eq!(want[0].1.lines().count(), 15, "{}", want[0].1);
    for (k, config) in CONFIGS.iter().enumerate() {
        let out = dir.path().join(format!("opt{k}.c"));
        let notes = common::optimize_detected(&src, config, &out);
        assert!(notes.contains("versioned on aliasing"), "{config}: {notes}");
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(
            text.contains("#pragma omp parallel for"),
            "{config}: not transformed"
        );
        for (cc, reference) in &want {
            let exe = dir.path().join(format!("opt{k}-{cc}"));
            common::build_openmp(cc, &out, &exe, &[]);
            for threads in ["1", "2"] {
                assert_eq!(
                    &run(&exe, threads).0,
                    reference,
                    "{cc}, {threads} thread(s), {config}"
                );
            }
        }
        // The check takes the transformed code exactly where the arrays
        // are apart.
        let probe = dir.path().join(format!("probe{k}.c"));
        std::fs::write(&probe, probed(&text)).unwrap();
        let exe = dir.path().join(format!("probe{k}"));
        common::build_openmp("gcc", &probe, &exe, &[]);
        let (stdout, stderr) = run(&exe, "2");
        assert_eq!(stdout, want[0].1, "{config}");
        assert_eq!(stderr.lines().collect::<Vec<_>>(), PATHS, "{config}");
    }
}

#[test]
fn assume_no_alias_drops_the_check_and_scop_prints_it() {
    let src = fixture();
    let s = src.to_str().unwrap();
    let listing = common::polytune(&["scop", s, "--detect"]);
    assert!(listing.status.success());
    let text = String::from_utf8_lossy(&listing.stdout).into_owned();
    let text = text.replace(s, "overlap.c");
    insta::assert_snapshot!("scop_detect_alias_checks", text);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.c");
    let o = common::polytune(&[
        "optimize",
        s,
        "--detect",
        "--assume-no-alias",
        "--config",
        CONFIGS[0],
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains("__UINTPTR_TYPE__"), "{text}");
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("versioned on aliasing"),
        "no check under --assume-no-alias"
    );
}

/// The corpus (PolyBench/C-style kernels of our own, whose arrays are
/// pointer parameters) with its pragmas stripped: `--detect` with no
/// flag finds every kernel, versions it on a run-time alias check (all
/// but the three that work on one array in place), and
/// the transformed program (called with distinct arrays, so the
/// transformed code runs) dumps what the original dumps, gcc and clang;
/// and called with two of its arrays the same buffer (20 of the 30), what
/// the original so called dumps.
#[test]
fn every_corpus_kernel_is_found_and_transformed_with_no_flag() {
    let files = common::corpus_files();
    assert_eq!(files.len(), 30);
    let dir = tempfile::tempdir().unwrap();
    let inc = format!("-I{}", common::include_dir().display());
    let overlapping = std::sync::atomic::AtomicUsize::new(0);
    let failures = common::on_two_threads(&files, |rel| {
        let from = common::root().join("polybench").join(rel);
        let name = rel.replace('/', "_");
        let src = dir.path().join(&name);
        let text = std::fs::read_to_string(&from).unwrap();
        std::fs::write(&src, polytune::frontend::strip_scop_pragmas(&text)).unwrap();
        let out = dir.path().join(format!("opt_{name}"));
        let o = common::polytune(&[
            "optimize",
            src.to_str().unwrap(),
            "--detect",
            "--config",
            CONFIGS[0],
            "-o",
            out.to_str().unwrap(),
            "--",
            &inc,
        ]);
        let notes = String::from_utf8_lossy(&o.stderr);
        if !o.status.success() {
            return vec![format!("{rel}: {notes}")];
        }
        let kernel = notes
            .lines()
            .find(|l| l.contains("detected a SCoP in kernel_"))
            .unwrap_or("");
        // Three kernels work on one array in place: nothing to check.
        let one_array = ["solvers/cholesky.c", "solvers/lu.c", "stencils/seidel.c"];
        if kernel.contains("versioned on aliasing") == one_array.contains(&rel.as_str()) {
            return vec![format!("{rel}: versioned or not, wrongly: {notes}")];
        }
        let written = std::fs::read_to_string(&out).unwrap();
        if !written.contains("/* polytune: ") {
            return vec![format!("{rel}: kernel not transformed")];
        }
        let mut failures = Vec::new();
        for cc in common::compilers() {
            let exe = dir.path().join(format!("{name}-{cc}-orig"));
            common::compile(cc, &from, &exe, "mini");
            let reference = common::run_dump(&exe);
            let exe = dir.path().join(format!("{name}-{cc}-opt"));
            if let Err(e) = common::matches_reference(cc, &out, &exe, "mini", &[], &reference) {
                failures.push(format!("{rel} {cc}: {e}"));
            }
        }
        // The same program calling its kernel with two of its arrays the
        // same buffer: the original runs, and computes what it computes.
        let Some((original, optimized)) =
            overlapping_call(&text).zip(overlapping_call(&std::fs::read_to_string(&out).unwrap()))
        else {
            return failures;
        };
        let (o, v) = (
            dir.path().join(format!("ov_{name}")),
            dir.path().join(format!("ov_opt_{name}")),
        );
        std::fs::write(&o, original).unwrap();
        std::fs::write(&v, optimized).unwrap();
        overlapping.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        for cc in common::compilers() {
            let exe = dir.path().join(format!("ov-{name}-{cc}-orig"));
            let reference = common::compile_variant(cc, &o, &exe, "mini")
                .and_then(|()| common::run_dump_threads(&exe))
                .unwrap_or_else(|e| panic!("{rel} {cc}, overlapping: {e}"));
            let exe = dir.path().join(format!("ov-{name}-{cc}-opt"));
            if let Err(e) = common::matches_reference(cc, &v, &exe, "mini", &[], &reference) {
                failures.push(format!("{rel} {cc}, called with overlapping arrays: {e}"));
            }
        }
        failures
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        overlapping.into_inner(),
        20,
        "kernels called with overlapping arrays"
    );
}

/// The program with its kernel called with one array in place of another
/// of the same declared shape (`kernel_adi(..., X, X, B)` for `X[N][N],
/// A[N][N]`): the first such pair of the kernel's parameters, the later
/// argument replaced by the earlier. `None` when no two array parameters
/// have the same shape.
fn overlapping_call(text: &str) -> Option<String> {
    let split = |list: &str| -> Vec<String> {
        let (mut depth, mut cur, mut out) = (0, String::new(), Vec::new());
        for ch in list.chars() {
            match ch {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(cur.trim().to_string());
                    cur.clear();
                    continue;
                }
                _ => {}
            }
            cur.push(ch);
        }
        out.push(cur.trim().to_string());
        out
    };
    let at = text.find("static void kernel_")?;
    let name_end = at + text[at..].find('(')?;
    let kernel = &text[at + "static void ".len()..name_end];
    let params = split(&text[name_end + 1..name_end + text[name_end..].find(')')?]);
    // (name, shape) of each array parameter, by position.
    let shape = |p: &str| -> Option<(String, String)> {
        let open = p.find('[')?;
        let name = p[..open].split_whitespace().last()?.to_string();
        Some((name, p[open..].split_whitespace().collect()))
    };
    let shapes: Vec<Option<(String, String)>> = params.iter().map(|p| shape(p)).collect();
    let (i, j) = (0..shapes.len()).find_map(|i| {
        let (_, si) = shapes[i].as_ref()?;
        (i + 1..shapes.len())
            .find(|&j| shapes[j].as_ref().is_some_and(|(_, sj)| sj == si))
            .map(|j| (i, j))
    })?;
    let call = format!("  {kernel}(");
    let c = text.find(&call)? + call.len();
    let close = c + text[c..].find(");")?;
    let mut args = split(&text[c..close]);
    args[j] = args[i].clone();
    Some(format!(
        "{}{}{}",
        &text[..c],
        args.join(", "),
        &text[close..]
    ))
}
