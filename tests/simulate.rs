//! `polytune simulate` end to end (and `evaluate --ranking variant`, on
//! the same cut of the shipped dataset): at budget 6 it reproduces `evaluate`'s
//! multi-model ×6 and diverse figures exactly (the same dataset, the same
//! leave-one-out folds), on a trimmed copy of the paper-space dataset (models/dataset-paper.sqlite) so the
//! test takes seconds; the full shipped dataset behind `--ignored`.

mod common;

use common::root;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn polytune(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args(args)
        .output()
        .expect("run polytune")
}

/// Asserts that the command succeeded, showing its standard error if not.
fn succeeded(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn json(o: &Output) -> Value {
    succeeded(o);
    serde_json::from_slice(&o.stdout).expect("JSON on standard output")
}

/// The paper-space dataset (fixed: the shipped one is refreshed by
/// campaigns) cut down to three kernels and every twelfth variant.
fn tiny_dataset(dir: &Path) -> PathBuf {
    cut(dir, "dataset-paper.sqlite", "'gemm', 'atax', 'mvt'", 12)
}

/// A copy of `models/NAME` in `dir` with the measurements of the kernels
/// `kernels` (an SQL list) only, and of their originals and every
/// `every`-th variant.
fn cut(dir: &Path, name: &str, kernels: &str, every: u32) -> PathBuf {
    let db = dir.join(name);
    std::fs::copy(root().join("models").join(name), &db).unwrap();
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(&format!(
        "CREATE TEMP TABLE gone AS SELECT m.id AS id FROM measurements m
           JOIN variants v ON v.id = m.variant_id JOIN kernels k ON k.id = v.kernel_id
           WHERE k.name NOT IN ({kernels}) OR (v.original = 0 AND v.id % {every} != 0);
         DELETE FROM samples WHERE measurement_id IN (SELECT id FROM gone);
         DELETE FROM measurements WHERE id IN (SELECT id FROM gone);"
    ))
    .unwrap();
    db
}

/// `simulate` at budget 6 against `evaluate --shots 6`: per kernel and on
/// average, multi-model ×6 and diverse, to the last bit.
fn reproduces_evaluate(db: &str, compiler: &str, models: &str) {
    let e = json(&polytune(&[
        "evaluate",
        "--db",
        db,
        "--compiler",
        compiler,
        "--models",
        models,
        "--shots",
        "6",
        "--json",
    ]));
    let s = json(&polytune(&[
        "simulate",
        "--db",
        db,
        "--compiler",
        compiler,
        "--models",
        models,
        "--strategies",
        "multi-model,diverse,random",
        "--budget",
        "6",
        "--seeds",
        "2",
        "--format",
        "json",
    ]));
    let ek = e["evaluation"]["kernels"].as_array().unwrap();
    let st = s["simulation"]["strategies"].as_array().unwrap();
    assert_eq!(st[0]["strategy"], "multi-model");
    assert_eq!(st[1]["strategy"], "diverse");
    assert_eq!(st[2]["runs_per_kernel"], 2);
    for (column, curves) in [("multi_n", &st[0]), ("diverse_n", &st[1])] {
        let sk = curves["kernels"].as_array().unwrap();
        assert_eq!(sk.len(), ek.len());
        for (k, c) in ek.iter().zip(sk) {
            assert_eq!(k["kernel"], c["kernel"]);
            let want = 100.0 * k[column].as_f64().unwrap() / k["opt"].as_f64().unwrap();
            assert_eq!(c["percent"][5].as_f64().unwrap(), want, "{column} {k}");
            assert_eq!(c["percent"].as_array().unwrap().len(), 6);
        }
    }
    let summary = e["summary"].as_array().unwrap();
    for (row, curves) in [("multi-model ×6", &st[0]), ("diverse", &st[1])] {
        let r = summary.iter().find(|r| r["model"] == row).unwrap();
        assert_eq!(
            curves["mean"][5].as_f64().unwrap(),
            r["n_shot_pct_opt"].as_f64().unwrap(),
            "{row}"
        );
    }
}

#[test]
fn simulate_at_six_reproduces_evaluates_multi_model_x6() {
    let dir = tempfile::tempdir().unwrap();
    let db = tiny_dataset(dir.path());
    reproduces_evaluate(db.to_str().unwrap(), "gcc", "LR,IBk,K*");
}

#[test]
fn simulate_renders_markdown_csv_and_a_plot() {
    let dir = tempfile::tempdir().unwrap();
    let db = tiny_dataset(dir.path());
    let db = db.to_str().unwrap();
    let svg = dir.path().join("curves.svg");
    let common = [
        "simulate",
        "--db",
        db,
        "--models",
        "LR,IBk",
        "--strategies",
        "multi-model,local,bo",
        "--budget",
        "12",
        "--seeds",
        "3",
    ];
    let mut args = common.to_vec();
    args.extend(["--plot", svg.to_str().unwrap()]);
    let o = polytune(&args);
    assert_eq!(o.status.code(), Some(0));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.contains("| bo | 1 |"), "{md}");
    assert!(md.contains("### % of Opt per kernel after 12 evaluations"));
    assert!(md.contains("Fields that matter (bo)"), "{md}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<polyline"));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("simulated runs"), "{e}");
    // The stopping rule of `optimize` by default: the evaluations spent.
    assert!(md.contains("### Evaluations spent"), "{md}");
    let mut args = common.to_vec();
    args.extend(["--min-ei", "0"]);
    let md = String::from_utf8_lossy(&polytune(&args).stdout).to_string();
    assert!(!md.contains("### Evaluations spent"), "{md}");
    let mut args = common.to_vec();
    args.extend(["--min-ei", "-1"]);
    assert_eq!(polytune(&args).status.code(), Some(2));
    let mut args = common.to_vec();
    args.extend(["--format", "csv"]);
    let o = polytune(&args);
    let csv = String::from_utf8_lossy(&o.stdout);
    assert!(csv.starts_with("strategy,kernel,evaluations,percent_of_opt,spent\n"));
    // 3 strategies × (3 kernels + mean + geomean) × 12 budgets.
    assert_eq!(csv.lines().count(), 1 + 3 * 5 * 12);
    let bad = polytune(&["simulate", "--db", db, "--strategies", "best"]);
    assert_eq!(bad.status.code(), Some(2));
    let bad = polytune(&[
        "simulate",
        "--db",
        db,
        "--models",
        "LR",
        "--strategies",
        "model:IBk",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("among --models"));
    // --trace: each strategy's proposals on one kernel, and its fastest.
    let kernel = json(&polytune(
        &[common.as_slice(), &["--format", "json"]].concat(),
    ))["simulation"]["landscapes"][0]["kernel"]
        .as_str()
        .unwrap()
        .to_string();
    let mut args = common.to_vec();
    args.extend(["--trace", kernel.as_str()]);
    let md = String::from_utf8_lossy(&polytune(&args).stdout).to_string();
    for st in ["multi-model", "local", "bo"] {
        assert!(
            md.contains(&format!("### Trace: {st} on {kernel} (first seed)")),
            "{md}"
        );
    }
    assert!(md.contains(&format!("### The five fastest variants of {kernel}")));
    args.extend(["--format", "json"]);
    let j = json(&polytune(&args));
    assert_eq!(j["simulation"]["traces"].as_array().unwrap().len(), 3);
    assert_eq!(
        j["simulation"]["traces"][0]["steps"]
            .as_array()
            .unwrap()
            .len(),
        12
    );
    let bad = polytune(&[common.as_slice(), &["--trace", "no-such-kernel"]].concat());
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no kernel of that name"));
}

/// How good the models would have to be: `--prior-blend` moves their
/// predictions toward the truth, and the report says it is a
/// counterfactual; `--train-kernels` learns each fold from fewer
/// kernels, in `evaluate` and `simulate` alike.
#[test]
fn simulate_asks_what_a_better_prior_or_fewer_kernels_would_do() {
    let dir = tempfile::tempdir().unwrap();
    let db = tiny_dataset(dir.path());
    let db = db.to_str().unwrap();
    let common = [
        "simulate",
        "--db",
        db,
        "--models",
        "LR,IBk",
        "--strategies",
        "multi-model,bo",
        "--budget",
        "6",
        "--seeds",
        "2",
        "--format",
        "json",
    ];
    let run = |extra: &[&str]| {
        json(&polytune(&[common.as_slice(), extra].concat()))["simulation"].clone()
    };
    let (models, truth) = (run(&[]), run(&["--prior-blend", "1"]));
    let rho = |s: &Value| s["median_rank_correlation"].as_f64().unwrap();
    assert!(rho(&models) < 1.0 - 1e-9, "{models}");
    assert!((rho(&truth) - 1.0).abs() < 1e-9, "{truth}");
    assert_eq!(truth["prior_blend"].as_f64(), Some(1.0));
    assert!(models.get("prior_blend").is_none());
    // The models knowing the answer: multi-model's first pick is Opt.
    assert_eq!(truth["strategies"][0]["mean"][0].as_f64(), Some(100.0));
    let md = polytune(&[&common[..common.len() - 2], &["--prior-blend", "0.5"]].concat());
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains("**counterfactual**") && md.contains("models' ρ"),
        "{md}"
    );
    assert!(md.contains("Median ρ over kernels:"), "{md}");
    for bad in ["1.5", "-0.1", "x"] {
        let o = polytune(&[common.as_slice(), &["--prior-blend", bad]].concat());
        assert_eq!(o.status.code(), Some(2), "{bad}");
    }
    // Fewer kernels to learn from: evaluate writes the folds' predictions,
    // simulate reads them with the landscapes of the same kernels.
    let csv = dir.path().join("few.csv");
    let o = polytune(&[
        "evaluate",
        "--db",
        db,
        "--models",
        "LR,IBk",
        "--train-kernels",
        "1",
        "--predictions",
        csv.to_str().unwrap(),
    ]);
    succeeded(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("from 1 of the other kernels only"));
    let few = run(&[
        "--train-kernels",
        "1",
        "--predictions",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(few["train_kernels"].as_u64(), Some(1));
    assert_ne!(few["strategies"], models["strategies"]);
    let o = polytune(&[common.as_slice(), &["--train-kernels", "0"]].concat());
    assert_eq!(o.status.code(), Some(2));
}

/// The same on the whole shipped dataset, both compilers, all six models
/// (minutes: `cargo test --release --test simulate -- --ignored`).
#[test]
#[ignore = "minutes: all six models' folds on the whole shipped dataset, both compilers"]
fn simulate_reproduces_evaluate_on_the_shipped_dataset() {
    let db = root().join("models/dataset.sqlite");
    for compiler in ["gcc", "clang"] {
        reproduces_evaluate(db.to_str().unwrap(), compiler, "LR,SVM,IBk,K*,M5P,MLP");
    }
}

/// The shipped dataset (whose variants the shipped variant table has)
/// cut down to five kernels and every third variant.
fn shipped_cut(dir: &Path) -> PathBuf {
    cut(
        dir,
        "dataset.sqlite",
        "'gemm', 'atax', 'mvt', 'syrk', 'jacobi-2d-imper'",
        3,
    )
}

/// `simulate --ranking variant`: the strategies follow the variant
/// ranker's leave-one-out predictions from the shipped table, bo with the
/// ranker's design, and the report says how the ranker ranked.
#[test]
fn simulate_follows_the_variant_ranker() {
    let dir = tempfile::tempdir().unwrap();
    let db = shipped_cut(dir.path());
    let db = db.to_str().unwrap();
    let base = [
        "simulate",
        "--db",
        db,
        "--ranking",
        "variant",
        "--strategies",
        "bo,diverse",
        "--budget",
        "6",
        "--min-ei",
        "0",
    ];
    let v = json(&polytune(&[&base[..], &["--format", "json"]].concat()));
    let r = &v["ranker"];
    assert_eq!(r["unmatched"], 0, "{r}");
    assert_eq!(
        r["evaluation"]["kernels"].as_array().unwrap().len(),
        5,
        "{r}"
    );
    let r = &r["evaluation"];
    let rho = r["median_rank_correlation"].as_f64().unwrap();
    assert!(rho > 0.3, "the ranker ranks the held-out kernels: {r}");
    let best6 = r["mean_best_of_6"].as_f64().unwrap();
    assert!(best6 > 0.0 && best6 <= 1.0, "{r}");
    let s = &v["simulation"];
    assert_eq!(s["models"], serde_json::json!(["variant ranker"]));
    assert_eq!(s["bo_design"], "ranker");
    let curves = s["strategies"].as_array().unwrap();
    assert_eq!(curves.len(), 2);
    for c in curves {
        let mean = c["mean"].as_array().unwrap();
        assert_eq!(mean.len(), 6);
        // Best so far: never down, and a share of Opt.
        let m: Vec<f64> = mean.iter().map(|x| x.as_f64().unwrap()).collect();
        assert!(m.windows(2).all(|w| w[1] >= w[0] - 1e-9), "{m:?}");
        assert!(m[5] <= 100.0 + 1e-9 && m[0] > 0.0, "{m:?}");
    }
    // The markdown says what ranked.
    let o = polytune(&base);
    succeeded(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("the models (variant ranker)"), "{text}");
    assert!(
        text.contains("The variant ranker, each kernel held out: median Spearman's ρ"),
        "{text}"
    );
    // The ranker's predictions are not read from a file nor the six
    // models': a usage error (exit 2).
    for extra in [["--predictions", "p.csv"], ["--models", "M5P"]] {
        let o = polytune(&[&base[..], &extra[..]].concat());
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {o:?}");
    }
}

/// `evaluate --ranking variant`: the variant ranker's leave-one-out
/// figures over the extended and the paper's space, and each feature
/// group left out; the same figures `simulate --ranking variant` reports.
#[test]
fn evaluate_reports_the_variant_ranker() {
    let dir = tempfile::tempdir().unwrap();
    let db = shipped_cut(dir.path());
    let db = db.to_str().unwrap();
    let v = json(&polytune(&[
        "evaluate",
        "--db",
        db,
        "--ranking",
        "variant",
        "--ablations",
        "--json",
    ]));
    let spaces = v["spaces"].as_array().unwrap();
    assert_eq!(spaces.len(), 2, "{v}");
    let (ext, paper) = (&spaces[0], &spaces[1]);
    assert_eq!(
        (ext["space"].as_str(), paper["space"].as_str()),
        (Some("extended"), Some("paper"))
    );
    let n = |s: &Value| s["variants"].as_u64().unwrap();
    assert!(n(paper) < n(ext) && n(paper) > 0, "{v}");
    let e = &ext["evaluation"];
    assert_eq!(e["kernels"].as_array().unwrap().len(), 5);
    let rho = e["median_rank_correlation"].as_f64().unwrap();
    assert!(rho > 0.3, "{e}");
    for k in e["kernels"].as_array().unwrap() {
        for f in ["top1", "best_of_6", "best_of_12"] {
            let x = k[f].as_f64().unwrap();
            assert!(x > 0.0 && x <= 1.0 + 1e-12, "{k}");
        }
        assert!(k["best_of_6"].as_f64() <= k["best_of_12"].as_f64(), "{k}");
    }
    let features = ext["features"].as_u64().unwrap();
    let ablations = v["ablations"].as_array().unwrap();
    assert!(ablations.len() >= 3, "{v}");
    for a in ablations {
        assert!(a["features"].as_u64().unwrap() < features, "{a}");
    }
    // The same folds as simulate's.
    let s = ranker_figures(db, &[]);
    assert_eq!(s["median_rank_correlation"].as_f64(), Some(rho));
    assert_eq!(s["kernels"], e["kernels"]);
    // Each fold's ranker from 2 of the other 4 kernels: other figures,
    // the same draws in both commands.
    let few = json(&polytune(&[
        "evaluate",
        "--db",
        db,
        "--ranking",
        "variant",
        "--train-kernels",
        "2",
        "--json",
    ]));
    assert_eq!(few["train_kernels"], 2);
    let fe = &few["spaces"][0]["evaluation"];
    assert_ne!(
        fe["kernels"], e["kernels"],
        "fewer kernels, another ranking"
    );
    let fs = ranker_figures(db, &["--train-kernels", "2"]);
    assert_eq!(fs["kernels"], fe["kernels"]);
    // CSV: one line per space and kernel.
    let o = polytune(&[
        "evaluate",
        "--db",
        db,
        "--ranking",
        "variant",
        "--format",
        "csv",
    ]);
    succeeded(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("space,kernel,variants,rank_correlation,"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1 + 10, "{text}");
    // --ablations is the ranker's: a usage error without it.
    let o = polytune(&["evaluate", "--db", db, "--ablations"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}

/// `simulate --ranking variant`'s figures of the ranker on `db` (one
/// short strategy), with `extra` options.
fn ranker_figures(db: &str, extra: &[&str]) -> Value {
    let base = [
        "simulate",
        "--db",
        db,
        "--ranking",
        "variant",
        "--strategies",
        "diverse",
        "--budget",
        "6",
        "--format",
        "json",
    ];
    let v = json(&polytune(&[&base[..], extra].concat()));
    v["ranker"]["evaluation"].clone()
}

/// `simulate --ranking variant` on `db` with `flag value`.
fn ranker_simulate<'a>(db: &'a str, flag: &'a str, value: &'a str) -> Vec<&'a str> {
    vec!["simulate", "--db", db, "--ranking", "variant", flag, value]
}

/// Each command line of `cases` fails with a usage error (exit 2) whose
/// message says its text.
fn usage_errors(cases: &[(Vec<&str>, &str)]) {
    for (args, says) in cases {
        let o = polytune(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// `evaluate --ranking variant` with `extra`: its folds rank each
/// kernel as `simulate`'s did (`figures`, [`ranker_figures`]), and its
/// markdown says `says`.
fn evaluate_agrees(db: &str, extra: &[&str], figures: &Value, says: &str) {
    let evaluate = [&["evaluate", "--db", db, "--ranking", "variant"][..], extra].concat();
    let e = json(&polytune(&[&evaluate[..], &["--json"]].concat()));
    assert_eq!(e["spaces"][0]["evaluation"]["kernels"], figures["kernels"]);
    let o = polytune(&evaluate);
    succeeded(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(says), "{text}");
}

/// `--store` with `--ranking variant`: every fold also learns from the
/// runs of other programs in a store (here the shipped stores of two Zen 5
/// campaigns, one or both), the same in `evaluate` and `simulate`; without the
/// ranker, without the file or without runs of the compiler, a usage
/// error (exit 2) that says which.
#[test]
fn the_ranker_also_learns_from_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = shipped_cut(dir.path());
    let db = db.to_str().unwrap();
    let store = common::root().join("models/zen5-store.sqlite");
    let store = store.to_str().unwrap();
    let alone = ranker_figures(db, &[]);
    assert_eq!(
        (alone["also_kernels"].as_u64(), alone["also_rows"].as_u64()),
        (Some(0), Some(0))
    );
    let with = ranker_figures(db, &["--store", store]);
    assert_eq!(with["also_kernels"], 10, "{with}");
    assert!(with["also_rows"].as_u64().unwrap() >= 100, "{with}");
    assert_ne!(
        with["kernels"], alone["kernels"],
        "more to learn from, another ranking"
    );
    evaluate_agrees(
        db,
        &["--store", store],
        &with,
        "every fold also learned from",
    );
    // Two stores, one after the other: the programs of both.
    let more = common::root().join("models/zen5-more-store.sqlite");
    let both = ranker_figures(db, &["--store", store, "--store", more.to_str().unwrap()]);
    assert_eq!(both["also_kernels"], 20, "{both}");
    assert!(
        both["also_rows"].as_u64() > with["also_rows"].as_u64(),
        "{both}"
    );
    let missing = dir.path().join("none.sqlite");
    // The store with its runs of clang only.
    let clang_only = dir.path().join("clang-only.sqlite");
    std::fs::copy(store, &clang_only).unwrap();
    rusqlite::Connection::open(&clang_only)
        .unwrap()
        .execute_batch(
            "DELETE FROM samples WHERE measurement_id IN (SELECT m.id FROM measurements m
               JOIN compilers c ON c.id = m.compiler_id WHERE c.name LIKE 'gcc%');
             DELETE FROM measurements WHERE compiler_id IN
               (SELECT id FROM compilers WHERE name LIKE 'gcc%');",
        )
        .unwrap();
    let (missing, clang_only) = (missing.to_str().unwrap(), clang_only.to_str().unwrap());
    let simulate = |store| ranker_simulate(db, "--store", store);
    usage_errors(&[
        (vec!["evaluate", "--db", db, "--store", store], "--ranking"),
        (
            vec![
                "simulate",
                "--db",
                db,
                "--ranking",
                "models",
                "--store",
                store,
            ],
            "needs --ranking variant",
        ),
        (simulate(missing), "no such file"),
        (simulate(clang_only), "no verified runs with gcc"),
        // A campaign's dataset keeps no features of variants.
        (simulate(db), "no verified runs with gcc"),
    ]);
    // With clang, the same store teaches.
    let v = ranker_figures(db, &["--compiler", "clang", "--store", clang_only]);
    assert_eq!(v["also_kernels"], 10, "{v}");
}

/// `--labels` with `--ranking variant`: the folds learn the speedups of
/// the confirmed copy of the dataset (its fastest variants timed again),
/// the same in `evaluate` and `simulate`, and say so; every kernel is
/// still scored against --db's. Without the ranker, without the file or
/// with a database of other variants, a usage error (exit 2).
#[test]
fn the_ranker_learns_the_labels_of_a_confirmed_copy() {
    let dir = tempfile::tempdir().unwrap();
    let db = shipped_cut(dir.path());
    let db = db.to_str().unwrap();
    let kernels = "'gemm', 'atax', 'mvt', 'syrk', 'jacobi-2d-imper'";
    let conf = cut(dir.path(), "dataset-confirmed.sqlite", kernels, 3);
    let conf = conf.to_str().unwrap();
    let alone = ranker_figures(db, &[]);
    assert_eq!(alone["relabelled"], 0, "{alone}");
    let with = ranker_figures(db, &["--labels", conf]);
    let rows: u64 = (with["kernels"].as_array().unwrap().iter())
        .map(|k| k["variants"].as_u64().unwrap())
        .sum();
    assert_eq!(with["relabelled"].as_u64(), Some(rows), "{with}");
    assert_ne!(
        with["kernels"], alone["kernels"],
        "other labels, another ranking"
    );
    evaluate_agrees(
        db,
        &["--labels", conf],
        &with,
        "from the database given (--labels)",
    );
    // Another kernel's variants only (in a directory of its own: `cut`
    // names its copy as the shipped file).
    let elsewhere = dir.path().join("bicg");
    std::fs::create_dir(&elsewhere).unwrap();
    let others = cut(&elsewhere, "dataset.sqlite", "'bicg'", 3);
    let missing = dir.path().join("none.sqlite");
    let (others, missing) = (others.to_str().unwrap(), missing.to_str().unwrap());
    let simulate = |labels| ranker_simulate(db, "--labels", labels);
    usage_errors(&[
        (vec!["evaluate", "--db", db, "--labels", conf], "--ranking"),
        (
            vec!["simulate", "--db", db, "--labels", conf],
            "needs --ranking variant",
        ),
        (simulate(missing), "no such file"),
        (simulate(others), "none of its variants"),
    ]);
}
