//! Issue 36: tuning at the size a program runs. The characterization is
//! bounded (a prefix of the regions' execution, the same on every run,
//! said on stderr and in JSON), its refusals name the bound and how to
//! raise it, an interrupted one leaves nothing behind, and `measure
//! --head-to-head` decides by the rule `optimize` confirms with.

mod common;

use common::{polytune, root};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::json_of_success as json;

fn gemm() -> String {
    common::corpus("linear-algebra/gemm.c")
}

/// A prefix of 4M instructions of gemm at MEDIUM (1.3 billion multiply-adds
/// in all): the same features twice, and the run says what it counted.
#[test]
fn a_bounded_characterization_is_deterministic_and_says_what_it_counted() {
    let f = gemm();
    let args = [
        "characterize",
        f.as_str(),
        "--size",
        "medium",
        "--bound",
        "4000000",
        "--json",
    ];
    let first = polytune(&args);
    let v = json(&first);
    assert_eq!(v["counted"]["part"], "prefix", "{v}");
    assert_eq!(v["counted"]["budget"], 4_000_000);
    let counted = v["counted"]["instructions"].as_u64().unwrap();
    assert!((4_000_000..40_000_000).contains(&counted), "{v}");
    assert_eq!(
        v["features"]["PAPI_TOT_INS"].as_f64().unwrap(),
        counted as f64
    );
    let err = String::from_utf8_lossy(&first.stderr);
    assert!(
        err.contains("counted a prefix: the first") && err.contains("the run stopped there"),
        "{err}"
    );
    let second = json(&polytune(&args));
    assert_eq!(v, second, "the same features on every run");
    // A small size is counted whole, within the default bound.
    let v = json(&polytune(&[
        "characterize",
        f.as_str(),
        "--size",
        "mini",
        "--json",
    ]));
    assert_eq!(v["counted"]["part"], "whole", "{v}");
}

/// A program that never reaches a region is refused, saying why.
#[test]
fn a_run_without_a_region_is_refused_with_the_reason() {
    let f = root().join("tests/fixtures/robustness/exits_before_kernel.c");
    let out = polytune(&["characterize", f.to_str().unwrap(), "--size", "mini"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ended without running any of its SCoP regions") && err.contains("--run-args"),
        "{err}"
    );
}

/// Interrupted in the middle of the simulation (SIGINT, as Ctrl-C):
/// valgrind is killed and its dumps are removed with the scratch
/// directory.
#[test]
fn an_interrupted_characterization_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let f = gemm();
    let mut child = Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args([
            "characterize",
            f.as_str(),
            "--size",
            "large",
            "--bound",
            "100000000000",
            "-q",
        ])
        .env("TMPDIR", tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Until callgrind has written its first dump.
    let dumped = |dir: &Path| {
        walk(dir)
            .iter()
            .any(|p| p.to_string_lossy().contains("callgrind.out."))
    };
    let start = Instant::now();
    while !dumped(tmp.path()) {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no dump within two minutes"
        );
        assert!(child.try_wait().unwrap().is_none(), "ended too soon");
        std::thread::sleep(Duration::from_millis(50));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert!(!status.success());
    let left = walk(tmp.path());
    assert!(left.is_empty(), "{left:?}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            out.push(e.path());
            out.extend(walk(&e.path()));
        }
    }
    out
}

/// `measure --head-to-head`: the original against itself (an A/A check
/// of the rule) takes the planned rounds of a short region and reports
/// the test; with a configuration it holds the variant against the
/// original.
#[test]
fn measure_decides_head_to_head() {
    let f = gemm();
    let v = json(&polytune(&[
        "measure",
        f.as_str(),
        "--size",
        "mini",
        "--head-to-head",
        "--json",
    ]));
    assert_eq!(v["head_to_head"].as_array().unwrap().len(), 1);
    let h = &v["head_to_head"][0];
    // A region of microseconds: the most rounds planned.
    assert_eq!(h["planned"], 30, "{h}");
    let rounds = h["original"].as_array().unwrap().len();
    assert!(rounds >= 30, "{h}");
    assert_eq!(h["candidate"].as_array().unwrap().len(), rounds);
    let last = h["looks"].as_array().unwrap().last().unwrap().clone();
    let p = last["p_value"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&p), "{h}");
    assert_eq!(last["rounds"].as_u64().unwrap() as usize, rounds);
    let out = polytune(&[
        "measure",
        f.as_str(),
        "--size",
        "mini",
        "--config",
        "tile=32x32x32",
        "--head-to-head",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("head to head:") && text.contains(" rounds, "),
        "{text}"
    );
}
