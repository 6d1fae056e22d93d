//! SCoP detection end to end: the corpus with its pragmas stripped is
//! detected as the pragmas mark it, the negative examples are rejected
//! with their reasons, and the CLI's `--detect` / `--mark` work.
#![cfg(feature = "detect")]

mod common;

use common::{include_dir, root};
use polytune::detect::{DetectOptions, detect_file};
use polytune::frontend::{self, Options};
use std::path::{Path, PathBuf};
use std::process::Command;

fn options() -> DetectOptions {
    DetectOptions {
        clang_args: vec![format!("-I{}", include_dir().display())],
        pure_functions: Vec::new(),
    }
}

fn corpus() -> Vec<PathBuf> {
    let mut v = Vec::new();
    fn walk(d: &Path, v: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, v);
            } else if p.extension().is_some_and(|x| x == "c") {
                v.push(p);
            }
        }
    }
    walk(&root().join("polybench"), &mut v);
    v.sort();
    v
}

/// The pragma region's lines once the pragma lines are removed.
fn pragma_lines(text: &str) -> (usize, usize) {
    let open = text
        .lines()
        .position(|l| l.trim() == "#pragma scop")
        .unwrap()
        + 1;
    let close = text
        .lines()
        .position(|l| l.trim() == "#pragma endscop")
        .unwrap()
        + 1;
    (open, close - 2)
}

/// Every kernel of the corpus: the region detected in its `kernel_*`
/// function has exactly the lines of its pragma region, and the front end
/// reads the same SCoP from it. (No kernel differs; an exception would be
/// listed here with the reason detection must report.)
#[test]
fn corpus_without_pragmas_is_detected_as_marked() {
    let files = corpus();
    assert_eq!(files.len(), 30);
    let dir = tempfile::tempdir().unwrap();
    let mut matched = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let expected = pragma_lines(&text);
        let stripped = dir.path().join(f.file_name().unwrap());
        std::fs::write(&stripped, frontend::strip_scop_pragmas(&text)).unwrap();
        let d = detect_file(&stripped, &options()).unwrap();
        let kernels: Vec<_> = d
            .regions
            .iter()
            .enumerate()
            .filter(|(_, r)| r.function.starts_with("kernel_"))
            .collect();
        assert_eq!(
            kernels.len(),
            1,
            "{}: {:?}, rejected {:?}",
            f.display(),
            d.regions,
            d.rejected
        );
        let (k, r) = kernels[0];
        assert_eq!(
            (r.first_line, r.last_line),
            expected,
            "{}: rejected {:?}",
            f.display(),
            d.rejected
        );
        let original = frontend::parse_file(f, &Options::default()).unwrap();
        let detected = d.source.as_ref().unwrap();
        assert_eq!(
            detected.scops[k].to_c(""),
            original.scops[0].to_c(""),
            "{}",
            f.display()
        );
        assert_eq!(
            frontend::strip_scop_pragmas(&d.marked),
            d.text,
            "{}: marking only adds pragma lines",
            f.display()
        );
        matched += 1;
    }
    assert_eq!(matched, 30);
}

/// Each negative example: nothing detected, and the reason reported.
#[test]
fn negative_examples_are_rejected_with_their_reason() {
    let cases = [
        ("alias.c", "`a` and `b` may alias"),
        (
            "side_effect.c",
            "call to `printf`, which may have side effects",
        ),
        (
            "impure_call.c",
            "call to `bump`, which may have side effects",
        ),
        (
            "data_bound.c",
            "data-dependent loop bound: `n[0]` reads memory",
        ),
        ("while_loop.c", "`while` loop"),
        ("early_break.c", "`break`: an early exit"),
        ("early_return.c", "`return` inside the nest"),
        ("goto.c", "`goto`"),
        ("bound_write.c", "loop bound `n` is written inside the nest"),
        ("nonaffine.c", "non-affine subscript `i * j`"),
        ("indirect.c", "data-dependent subscript `idx[i]`"),
    ];
    for (file, reason) in cases {
        let path = root().join("tests/fixtures/detect").join(file);
        let d = detect_file(&path, &options()).unwrap();
        assert!(d.regions.is_empty(), "{file}: detected {:?}", d.regions);
        assert!(d.source.is_none());
        assert_eq!(d.marked, d.text, "{file}: nothing to mark");
        assert!(
            d.rejected.iter().any(|r| r.reason.contains(reason)),
            "{file}: expected `{reason}` in {:?}",
            d.rejected
        );
    }
}

/// A region the front end rejects is dropped with its message; the nest
/// before it survives, and pointers that cannot alias are accepted.
#[test]
fn front_end_rejections_split_the_region() {
    let path = root().join("tests/fixtures/detect/mixed.c");
    let d = detect_file(&path, &options()).unwrap();
    let got: Vec<_> = d
        .regions
        .iter()
        .map(|r| (r.function.as_str(), r.first_line, r.last_line))
        .collect();
    assert_eq!(got, [("f", 7, 10), ("g", 18, 19)]);
    assert_eq!(d.rejected.len(), 1, "{:?}", d.rejected);
    let r = &d.rejected[0];
    assert_eq!((r.first_line, r.last_line, r.line), (11, 12, 11));
    assert!(
        r.reason
            .contains("front end: the loop condition is not a plain upper bound"),
        "{}",
        r.reason
    );
    assert_eq!(d.source.unwrap().scops.len(), 2);
}

#[test]
fn clang_errors_are_reported_with_their_position() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.c");
    std::fs::write(&p, "#include \"nowhere.h\"\nvoid f(void) {}\n").unwrap();
    let e = detect_file(&p, &DetectOptions::default()).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("bad.c:1:10: error:"), "{msg}");
    assert!(msg.contains("nowhere.h"), "{msg}");
}

fn polytune(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args(args)
        .output()
        .expect("run polytune")
}

fn stripped_gemm(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(root().join("polybench/linear-algebra/gemm.c")).unwrap();
    let p = dir.join("gemm.c");
    std::fs::write(&p, frontend::strip_scop_pragmas(&text)).unwrap();
    p
}

#[test]
fn cli_lists_marks_and_optimizes() {
    let dir = tempfile::tempdir().unwrap();
    let gemm = stripped_gemm(dir.path());
    let g = gemm.to_str().unwrap();
    let inc = format!("-I{}", include_dir().display());

    let out = polytune(&["scop", g, "--detect", "--", &inc]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("kernel_gemm lines 43-49"), "{stdout}");

    let neg = root().join("tests/fixtures/detect/alias.c");
    let out = polytune(&["scop", neg.to_str().unwrap(), "--detect", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["regions"].as_array().unwrap().len(), 0);
    assert!(
        v["rejected"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("may alias")
    );

    // --mark to a file; the input is untouched.
    let before = std::fs::read_to_string(&gemm).unwrap();
    let marked = dir.path().join("marked.c");
    let out = polytune(&[
        "scop",
        g,
        "--detect",
        "--mark",
        "-o",
        marked.to_str().unwrap(),
        "--",
        &inc,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&gemm).unwrap(), before);
    let m = std::fs::read_to_string(&marked).unwrap();
    assert_eq!(m.matches("#pragma scop").count(), 2, "{m}");
    assert!(frontend::parse_file(&marked, &Options::default()).is_ok());

    // Never the input without --in-place.
    let out = polytune(&["scop", g, "--detect", "--mark", "-o", g, "--", &inc]);
    assert!(!out.status.success());
    assert_eq!(std::fs::read_to_string(&gemm).unwrap(), before);
    let out = polytune(&["scop", g, "--detect", "--mark", "--in-place", "--", &inc]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&gemm).unwrap(), m);
    std::fs::write(&gemm, &before).unwrap();

    // optimize: without --mark the inserted pragmas are gone, with it kept.
    let out = polytune(&["optimize", g, "--detect", "--tile", "32,32,1", "--", &inc]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("#pragma scop"), "{text}");
    assert_ne!(text, before);
    let out = polytune(&[
        "optimize", g, "--detect", "--mark", "--tile", "32,32,1", "--", &inc,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert_eq!(text.matches("#pragma endscop").count(), 2);

    // No region at all: a clear error.
    let out = polytune(&[
        "optimize",
        neg.to_str().unwrap(),
        "--detect",
        "--tile",
        "32,32,1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no static control part detected"),
        "{stderr}"
    );
    assert!(stderr.contains("may alias"), "{stderr}");
}
