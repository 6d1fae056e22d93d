//! The commands a script reads, end to end: `--json` of `train`,
//! `evaluate`, `space` and `measure` parsed, `space --verify` and its
//! progress, and `compare` (polytune beside gcc, Graphite and Polly).
//! MINI sizes and a trimmed copy of the paper-space dataset keep each test to
//! seconds.

mod common;

use common::root;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn polytune(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args(args)
        .output()
        .expect("run polytune")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Standard output parsed as JSON, after checking the exit status.
fn json(o: &Output, code: i32) -> Value {
    assert_eq!(o.status.code(), Some(code), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            stderr(o)
        )
    })
}

fn kernel(p: &str) -> String {
    root().join(p).to_string_lossy().into_owned()
}

/// The paper-space dataset (fixed: the shipped one is refreshed by campaigns) cut down to three kernels and every twelfth
/// variant: leave-one-out and training take a fraction of a second.
fn tiny_dataset(dir: &Path) -> PathBuf {
    let db = dir.join("tiny.sqlite");
    std::fs::copy(root().join("models/dataset-paper.sqlite"), &db).unwrap();
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "CREATE TEMP TABLE gone AS SELECT m.id AS id FROM measurements m
           JOIN variants v ON v.id = m.variant_id JOIN kernels k ON k.id = v.kernel_id
           WHERE k.name NOT IN ('gemm', 'atax', 'mvt') OR (v.original = 0 AND v.id % 12 != 0);
         DELETE FROM samples WHERE measurement_id IN (SELECT id FROM gone);
         DELETE FROM measurements WHERE id IN (SELECT id FROM gone);",
    )
    .unwrap();
    db
}

#[test]
fn train_and_evaluate_print_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = tiny_dataset(dir.path());
    let db = db.to_str().unwrap();
    let models = dir.path().join("models");
    let o = polytune(&[
        "train",
        "--db",
        db,
        "--models",
        "LR,IBk",
        "-o",
        models.to_str().unwrap(),
        "--json",
    ]);
    let v = json(&o, 0);
    let written = v["models"].as_array().unwrap();
    assert_eq!(written.len(), 2, "{v}");
    for (m, name) in written.iter().zip(["LR", "IBk"]) {
        assert_eq!(m["model"], name);
        assert!(Path::new(m["file"].as_str().unwrap()).exists(), "{m}");
        assert!(m["seconds"].as_f64().unwrap() > 0.0, "{m}");
    }
    let mut kernels: Vec<&str> = v["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    kernels.sort();
    assert_eq!(kernels, ["atax", "gemm", "mvt"]);
    assert!(v["variants"].as_u64().unwrap() > 10, "{v}");
    // Beside the models, the kernels' measured landscapes: every variant
    // with its speedup and the configurations that produce it.
    let l: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(v["landscapes"].as_str().unwrap()).unwrap())
            .unwrap();
    let programs = l["programs"].as_array().unwrap();
    assert_eq!(programs.len(), 3, "{l}");
    let measured: usize = programs
        .iter()
        .map(|p| p["variants"].as_array().unwrap().len())
        .sum();
    assert_eq!(measured as u64, v["variants"].as_u64().unwrap());
    for p in programs {
        for m in p["variants"].as_array().unwrap() {
            assert!(m["speedup"].as_f64().unwrap() > 0.0);
            assert!(!m["configs"].as_array().unwrap().is_empty());
        }
    }
    assert_eq!(v["target"], "log");
    assert_eq!(
        v["compiler"].as_str().unwrap().split(' ').next(),
        Some("gcc")
    );

    let o = polytune(&[
        "evaluate", "--db", db, "--models", "LR,IBk", "--shots", "2", "--json",
    ]);
    let v = json(&o, 0);
    assert_eq!(v["kernels"], 3);
    let ks = v["evaluation"]["kernels"].as_array().unwrap();
    assert_eq!(ks.len(), 3);
    for k in ks {
        assert_eq!(k["one_shot"].as_array().unwrap().len(), 2, "{k}");
        assert!(k["opt"].as_f64().unwrap() > 0.0);
    }
    let summary = v["summary"].as_array().unwrap();
    assert!(summary.iter().any(|s| s["model"] == "LR"), "{v}");
    // Progress of the folds (2 models x 3 kernels), as plain lines.
    let e = stderr(&o);
    assert!(e.contains("[6/6] leave-one-out folds"), "{e}");
    assert!(!e.contains('\r'));
    // Each kernel's best configuration, readable; the target named.
    for b in v["best"].as_array().unwrap() {
        assert!(
            b["configuration"].as_str().unwrap().starts_with("fuse="),
            "{b}"
        );
    }
    assert_eq!(v["target"], "log");
    // The Markdown on stdout and the same JSON in a file, from one run.
    let saved = dir.path().join("evaluation.json");
    let o = polytune(&[
        "evaluate",
        "--db",
        db,
        "--models",
        "LR,IBk",
        "--shots",
        "2",
        "--save-json",
        saved.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("## Leave-one-out evaluation"));
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(file, v);
}

#[test]
fn space_json_and_its_verification() {
    let file = kernel("polybench/stencils/jacobi-1d-imper.c");
    let v = json(&polytune(&["space", &file, "--json"]), 0);
    let distinct = v["distinct"].as_u64().unwrap();
    assert_eq!(v["configurations"], 1536);
    assert_eq!(v["variants"].as_array().unwrap().len() as u64, distinct);
    assert!(v["verification"].is_null());

    // Every variant built with gcc, run and compared; progress to a file.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("progress.txt");
    let o = Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args(["space", &file, "--verify", "--compiler", "gcc", "--json"])
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()))
        .output()
        .unwrap();
    let progress = std::fs::read_to_string(&log).unwrap();
    let v = json(&o, 0);
    let r = &v["verification"];
    assert_eq!(r["variants"].as_u64(), Some(distinct), "{r}");
    assert_eq!(r["builds"].as_u64(), Some(distinct));
    assert_eq!(r["ok"].as_u64(), Some(distinct));
    assert_eq!(r["size"], "mini");
    assert_eq!(r["failures"].as_array().unwrap().len(), 0);
    let c = &r["compilers"].as_array().unwrap()[0];
    assert_eq!(
        (c["compiler"].as_str(), c["original"].as_str()),
        (Some("gcc"), Some("ok"))
    );
    assert_eq!(c["counts"]["ok"].as_u64(), Some(distinct));
    assert!(
        progress.contains(&format!("[{distinct}/{distinct}] variant")),
        "{progress}"
    );
    assert!(progress.contains("[96/96] schedules"), "{progress}");
    assert!(!progress.contains('\r'), "{progress:?}");

    // The verification's options need --verify.
    let o = polytune(&["space", &file, "--jobs", "2"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn space_verify_fails_when_the_original_does() {
    // A program whose every run fails: nothing can be verified against it.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fails.c");
    std::fs::write(
        &file,
        "#include <stdlib.h>\nstatic double A[16];\nint main(void)\n{\n  int i;\n#pragma scop\n  for (i = 1; i < 16; i++)\n    A[i] = A[i - 1] + 1;\n#pragma endscop\n  exit(A[15] > 0);\n}\n",
    )
    .unwrap();
    let o = polytune(&[
        "space",
        file.to_str().unwrap(),
        "--verify",
        "--compiler",
        "gcc",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("FAILED") && text.contains("the original fails (crash"),
        "{text}"
    );
}

#[test]
fn measure_prints_json() {
    let file = kernel("polybench/stencils/jacobi-1d-imper.c");
    let v = json(
        &polytune(&["measure", &file, "--size", "mini", "--omp", "--json"]),
        0,
    );
    assert_eq!(v["size"], "mini");
    assert_eq!(v["original"]["status"], "ok");
    assert_eq!(v["variant"]["status"], "ok", "{v}");
    assert!(v["original"]["timing"]["median"].as_f64().unwrap() > 0.0);
    assert!(v["speedup"].as_f64().unwrap() > 0.0);
    let c: polytune::config::Config = v["config"].as_str().unwrap().parse().unwrap();
    assert!(c.omp);
}

/// `compare` on one MINI kernel: the baseline and polytune run and are
/// verified; Graphite and Polly run where installed and say "not
/// available" where not.
#[test]
fn compare_reports_every_contender() {
    let file = kernel("polybench/stencils/jacobi-1d-imper.c");
    let o = polytune(&[
        "compare",
        &file,
        "--size",
        "mini",
        "--strategy",
        "bo",
        "--budget",
        "1",
        "--rounds",
        "2",
        "--json",
    ]);
    let v = json(&o, 0);
    let names: Vec<&str> = v["contenders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "gcc -O3",
            "graphite",
            "graphite-par",
            "polly",
            "polly-par",
            "polytune"
        ]
    );
    assert_eq!(v["rounds"], 2);
    let k = &v["kernels"].as_array().unwrap()[0];
    assert_eq!(k["kernel"], "jacobi-1d-imper");
    assert!(k["baseline_seconds"].as_f64().unwrap() > 0.0, "{k}");
    let entries = k["entries"].as_array().unwrap();
    for (e, (name, c)) in entries
        .iter()
        .zip(names.iter().zip(v["contenders"].as_array().unwrap()))
    {
        assert_eq!(e["contender"], *name);
        let verdict = e["verdict"].as_str().unwrap();
        if *name == "gcc -O3" || *name == "polytune" || c["available"] == true {
            assert_eq!(verdict, "ok", "{name}: {e}");
            assert_eq!(e["samples"].as_array().unwrap().len(), 2, "{e}");
            assert!(e["speedup"].as_f64().unwrap() > 0.0);
        } else {
            assert_eq!(verdict, "not-available", "{name}: {e}");
            assert!(!c["detail"].as_str().unwrap().is_empty());
        }
    }
    assert_eq!(entries[0]["speedup"].as_f64(), Some(1.0));
    assert!(k["choice"]["reason"].is_string(), "{k}");
    // What the selection measured to choose: its one candidate, run and
    // verified, and the original's run.
    let sel = &k["selection"];
    let cands = sel["candidates"].as_array().unwrap();
    assert_eq!(cands.len(), 1, "{sel}");
    assert!(cands[0]["config"].is_string(), "{sel}");
    assert!(
        cands[0]["chosen_by"].as_str().unwrap().contains("bo"),
        "{sel}"
    );
    assert!(cands[0]["run"].is_object(), "{sel}");
    assert!(sel["original"].is_object(), "{sel}");
    assert!(sel["refinement"].is_array(), "{sel}");
    let means = v["geomean"].as_array().unwrap();
    assert_eq!(means[0]["speedup"].as_f64(), Some(1.0));
    assert!(means[5]["speedup"].as_f64().unwrap() > 0.0);
    // An adaptive strategy runs here as in `optimize`.
    assert_eq!(
        v["contenders"][5]["detail"],
        "learned selection: strategy bo, budget 1"
    );
    let e = stderr(&o);
    assert!(e.contains("[8/8]"), "{e}");
    assert!(!e.contains('\r'));
}
