//! The learning side end to end: a small real campaign (three kernels at
//! MINI size), then `train`, `evaluate` and the learned `optimize` on it.

mod common;

use common::root;
use std::process::{Command, Output};

fn polytune(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn campaign_train_evaluate_and_learned_optimize() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let db_s = db.to_str().unwrap();
    let k = |p: &str| root().join(p).to_str().unwrap().to_string();
    let kernels = [
        k("polybench/linear-algebra/gemm.c"),
        k("polybench/linear-algebra/atax.c"),
        k("polybench/stencils/jacobi-1d-imper.c"),
    ];
    let mut args = vec![
        "collect",
        "--size",
        "mini",
        "--max-variants",
        "5",
        "--runs",
        "3",
        "--db",
        db_s,
    ];
    args.extend(kernels.iter().map(String::as_str));
    ok(&polytune(&args));

    // Evaluation: every kernel, every model, consistent numbers.
    let json = ok(&polytune(&[
        "evaluate", "--db", db_s, "--size", "mini", "--format", "json", "--shots", "2",
    ]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let ks = v["evaluation"]["kernels"].as_array().unwrap();
    assert_eq!(ks.len(), 3, "{json}");
    for kernel in ks {
        let opt = kernel["opt"].as_f64().unwrap();
        for col in ["one_shot", "n_shot"] {
            let vals = kernel[col].as_array().unwrap();
            assert_eq!(vals.len(), 6);
            for s in vals {
                assert!(s.as_f64().unwrap() <= opt + 1e-12);
            }
        }
        let multi = kernel["multi"].as_f64().unwrap();
        let best_one = kernel["one_shot"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_f64().unwrap())
            .fold(0.0, f64::max);
        assert_eq!(multi, best_one);
        let diverse = kernel["diverse_n"].as_f64().unwrap();
        assert!(diverse > 0.0 && diverse <= opt + 1e-12, "{json}");
    }
    let md = ok(&polytune(&[
        "evaluate", "--db", db_s, "--size", "mini", "--subset",
    ]));
    assert!(
        md.contains("### 1-shot: % of Opt") && md.contains("Feature subset"),
        "{md}"
    );

    // Training writes six loadable model files.
    let models = dir.path().join("models");
    let models_s = models.to_str().unwrap();
    ok(&polytune(&[
        "train", "--db", db_s, "--size", "mini", "-o", models_s,
    ]));
    for f in ["lr", "svm", "ibk", "kstar", "m5p", "mlp"] {
        assert!(models.join(format!("{f}.json")).exists(), "{f}");
    }

    // Every variant's leave-one-out prediction by every model, as CSV.
    let csv = dir.path().join("predictions.csv");
    ok(&polytune(&[
        "evaluate",
        "--db",
        db_s,
        "--size",
        "mini",
        "--models",
        "LR,IBk",
        "--predictions",
        csv.to_str().unwrap(),
    ]));
    let csv = std::fs::read_to_string(&csv).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("kernel,variant_id,config,configs,speedup,LR,IBk")
    );
    let rows: Vec<&str> = lines.collect();
    let variants = v["variants"].as_u64().unwrap() as usize;
    assert_eq!(rows.len(), variants, "{csv}");
    for r in &rows {
        let cells: Vec<&str> = r.split(',').collect();
        assert_eq!(cells.len(), 7, "{r}");
        for c in &cells[4..] {
            let x: f64 = c.parse().unwrap();
            assert!(x.is_finite() && x > 0.0, "{r}");
        }
    }

    // Models that have never seen atax, to try on it as on a new program.
    let without = dir.path().join("without-atax");
    ok(&polytune(&[
        "train",
        "--db",
        db_s,
        "--size",
        "mini",
        "--models",
        "LR",
        "--exclude",
        "atax",
        "-o",
        without.to_str().unwrap(),
    ]));
    let lr: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(without.join("lr.json")).unwrap()).unwrap();
    let seen: Vec<&str> = lr["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(seen, ["gemm", "jacobi-1d-imper"]);
    let out = polytune(&[
        "train",
        "--db",
        db_s,
        "--size",
        "mini",
        "--exclude",
        "nope",
        "-o",
        models_s,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such kernel"));

    // The learned optimize: candidates run and verified; the output
    // names what it chose and compiles.
    let out_c = dir.path().join("gemm_opt.c");
    let out = polytune(&[
        "optimize",
        &kernels[0],
        "--model",
        models_s,
        "--size",
        "mini",
        "--shots",
        "3",
        "-o",
        out_c.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("original") && stderr.contains("chosen by"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&out_c).unwrap();
    assert!(text.starts_with("/* polytune: "), "{}", &text[..200]);
    let exe = dir.path().join("gemm_opt");
    common::compile_variant("gcc", &out_c, &exe, "mini").unwrap();
    common::run_dump_threads(&exe).unwrap();

    // --no-run: the top prediction, no timing table.
    let out = polytune(&["optimize", &kernels[0], "--model", models_s, "--no-run"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("without running it"));
    // The diversified ensemble: its best guess runs first.
    let out = polytune(&[
        "optimize",
        &kernels[0],
        "--model",
        models_s,
        "--size",
        "mini",
        "--shots",
        "2",
        "--strategy",
        "diverse",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.contains("ensemble #1"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("/* polytune: "));
    let out = polytune(&[
        "optimize",
        &kernels[0],
        "--model",
        models_s,
        "--strategy",
        "best",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("multi-model, diverse, model:NAME"));
    let out = polytune(&[
        "optimize",
        &kernels[0],
        "--model",
        dir.path().to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("polytune train"));
}
