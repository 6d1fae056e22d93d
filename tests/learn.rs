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
    names_its_configuration_in_both_forms(&text);
    let exe = dir.path().join("gemm_opt");
    common::compile_variant("gcc", &out_c, &exe, "mini").unwrap();
    common::run_dump_threads(&exe).unwrap();

    // --no-run: the top prediction, no timing table.
    let out = polytune(&["optimize", &kernels[0], "--model", models_s, "--no-run"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("without running it"));
    names_its_configuration_in_both_forms(&text);
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
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("multi-model, diverse, model:NAME"));
    let out = polytune(&[
        "optimize",
        &kernels[0],
        "--model",
        dir.path().to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("polytune train"));
}

/// A chosen program's header names its configuration readable, then, in
/// the paper's space, as its bit string: `configuration fuse=...,uj=1
/// (010000000000)`; beyond it, readable only: `configuration
/// fuse=...,rb=8x16,pack=1, measured ...`. (The original kept names none.)
fn names_its_configuration_in_both_forms(text: &str) {
    let header = text.lines().next().unwrap_or("");
    let Some(rest) = header.strip_prefix("/* polytune: configuration ") else {
        assert!(header.contains("kept unchanged"), "{header}");
        return;
    };
    let readable = rest.split([' ']).next().unwrap().trim_end_matches(',');
    let config: polytune::config::Config = readable.parse().unwrap();
    assert!(
        readable.starts_with("fuse=") && readable.contains(",uj="),
        "{header}"
    );
    if !config.is_paper() {
        assert!(rest.starts_with(&format!("{readable}, ")), "{header}");
        return;
    }
    let rest = rest.strip_prefix(&format!("{readable} (")).unwrap();
    let bits = &rest[..rest.find(')').unwrap()];
    assert!(
        bits.len() == 12 && bits.bytes().all(|b| b == b'0' || b == b'1'),
        "{header}"
    );
}

/// The paper-space dataset and its bytes (committed, and fixed: the
/// shipped dataset is refreshed by campaigns; no test may change either).
fn shipped() -> (std::path::PathBuf, Vec<u8>) {
    let p = root().join("models/dataset-paper.sqlite");
    let bytes = std::fs::read(&p).unwrap();
    (p, bytes)
}

/// Runs polytune with a file size limit of `kib` KiB (SIGXFSZ ignored, so
/// a write past it fails with EFBIG as on a full file system).
fn polytune_size_limited(kib: u32, args: &[&str]) -> Output {
    Command::new("bash")
        .arg("-c")
        .arg(format!("trap '' XFSZ; ulimit -f {kib}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_polytune"))
        .args(args)
        .output()
        .expect("run bash")
}

fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn fails_with(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(needle), "expected `{needle}` in:\n{err}");
}

#[test]
fn read_only_commands_never_write_a_foreign_or_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, "").unwrap();
    let other = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    let models = dir.path().join("models");
    let m = models.to_str().unwrap();
    for (db, why) in [
        (&empty, "it has no tables"),
        (&other, "no table `measurements`"),
    ] {
        let before = std::fs::read(db).unwrap();
        let d = db.to_str().unwrap();
        for args in [
            vec!["export", "--db", d],
            vec!["export", "--db", d, "--compact", "c.sqlite"],
            vec!["train", "--db", d, "-o", m],
            vec!["evaluate", "--db", d],
        ] {
            fails_with(
                &polytune(&args),
                &format!("{d} is not a polytune store ({why})"),
            );
            assert_eq!(std::fs::read(db).unwrap(), before, "{args:?} wrote");
        }
    }
    assert_eq!(listing(dir.path()), ["empty.sqlite", "other.sqlite"]);
}

#[test]
fn a_damaged_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("damaged.sqlite");
    let (_, mut bytes) = shipped();
    // Scribble over a b-tree page in the middle of the file.
    let at = bytes.len() / 2 / 4096 * 4096 + 8;
    bytes[at..at + 64].fill(0xff);
    std::fs::write(&db, &bytes).unwrap();
    let check: String =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap()
            .query_row("PRAGMA integrity_check(1)", [], |r| r.get(0))
            .unwrap();
    assert_ne!(check, "ok", "the damage went unnoticed by SQLite");
    let d = db.to_str().unwrap();
    let models = dir.path().join("models");
    for args in [
        vec![
            "train",
            "--db",
            d,
            "--models",
            "LR",
            "-o",
            models.to_str().unwrap(),
        ],
        vec!["evaluate", "--db", d, "--models", "LR"],
        vec!["export", "--db", d],
    ] {
        fails_with(&polytune(&args), &format!("{d} is damaged"));
    }
    assert!(!models.exists());
    assert_eq!(std::fs::read(&db).unwrap(), bytes);
}

#[test]
fn full_disk_exports_and_models_leave_no_partial_file() {
    let (db, before) = shipped();
    let d = db.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("out.csv");
    let compact = dir.path().join("compact.sqlite");
    let models = dir.path().join("models");
    // Each output is larger than the 1 KiB the limit lets through.
    fails_with(
        &polytune_size_limited(1, &["export", "--db", d, "--csv", csv.to_str().unwrap()]),
        &format!("cannot write {}", csv.display()),
    );
    fails_with(
        &polytune_size_limited(
            1,
            &["export", "--db", d, "--compact", compact.to_str().unwrap()],
        ),
        &format!("cannot write {}", compact.display()),
    );
    let out = polytune_size_limited(
        1,
        &[
            "train",
            "--db",
            d,
            "--models",
            "LR",
            "-o",
            models.to_str().unwrap(),
        ],
    );
    fails_with(
        &out,
        &format!("cannot write {}", models.join("lr.json").display()),
    );
    assert_eq!(listing(dir.path()), ["models"]);
    assert!(listing(&models).is_empty(), "{:?}", listing(&models));

    // Without the limit the same commands succeed; the shipped dataset
    // is read, never written (no WAL or shared-memory file either).
    ok(&polytune(&[
        "export",
        "--db",
        d,
        "--csv",
        csv.to_str().unwrap(),
    ]));
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap().lines().count(),
        14355
    );
    ok(&polytune(&[
        "train",
        "--db",
        d,
        "--models",
        "LR",
        "-o",
        models.to_str().unwrap(),
    ]));
    assert_eq!(listing(&models), ["landscapes.json", "lr.json"]);
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the committed dataset changed"
    );
    for side in ["-wal", "-shm", "-journal"] {
        assert!(
            !root()
                .join(format!("models/dataset-paper.sqlite{side}"))
                .exists()
        );
    }
}

/// Unmounts a file system when dropped.
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_wal_store_on_read_only_storage_is_exported() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let root_user = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout == b"0\n");
    // Root writes through permissions: a read-only mount instead.
    let _mounted = if root_user {
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=16m", "tmpfs"])
            .arg(&ro)
            .status()
            .is_ok_and(|s| s.success());
        // Not a skip: a test that cannot check what it says must fail.
        assert!(
            mounted,
            "running as root, where only a read-only mount can test this, and tmpfs cannot be mounted here"
        );
        Some(Mounted(ro.clone()))
    } else {
        None
    };
    let db = ro.join("wal.sqlite");
    std::fs::copy(root().join("models/dataset-paper.sqlite"), &db).unwrap();
    let mode: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    if root_user {
        let s = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&ro)
            .status()
            .unwrap();
        assert!(s.success());
    } else {
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    let out = polytune(&["export", "--db", db.to_str().unwrap()]);
    let csv = ok(&out);
    assert_eq!(csv.lines().count(), 14355);
    assert_eq!(listing(&ro), ["wal.sqlite"]);
    if !root_user {
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The learned `optimize --json` with the shipped models: the report
/// parses, names the candidates run (verified and timed) and the choice,
/// and carries the program; `-q` prints no progress.
#[test]
fn learned_optimize_json_reports_candidates_and_choice() {
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let models = root().join("models/gcc");
    let args = |extra: &[&str]| {
        let mut v = vec![
            "optimize",
            gemm.to_str().unwrap(),
            "--model",
            models.to_str().unwrap(),
            "--size",
            "mini",
            "--shots",
            "2",
            "--refine",
            "0",
        ];
        v.extend(extra);
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let a = args(&["--json"]);
    let out = polytune(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let json = ok(&out);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let cands = v["candidates"].as_array().unwrap();
    assert!(!cands.is_empty() && cands.len() <= 2, "{json}");
    for c in cands {
        // The readable form and the bits name the same configuration (a
        // draw beyond the paper's space has no bits).
        let config: polytune::config::Config = c["config"].as_str().unwrap().parse().unwrap();
        if config.is_paper() {
            assert_eq!(config.bits(), c["bits"].as_str().unwrap());
        } else {
            assert!(c["bits"].is_null(), "{c}");
        }
        assert!(!c["chosen_by"].as_str().unwrap().is_empty());
        // The six models' predictions, and the variant ranker's, which
        // ranked (each candidate has its place in its order).
        assert_eq!(c["predicted"].as_array().unwrap().len(), 7);
        assert_eq!(c["predicted"][6]["model"], "variant ranker");
        assert!(c["place"].as_u64().unwrap() >= 1);
        let status = c["run"]["status"].as_str().unwrap();
        assert_eq!(status, "ok", "{json}");
        assert!(c["run"]["seconds"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(v["original"]["status"], "ok");
    assert_eq!(v["refinement"], serde_json::json!([]), "--refine 0");
    let reason = v["choice"]["reason"].as_str().unwrap();
    assert!(["measured", "original-kept"].contains(&reason), "{json}");
    assert_eq!(v["choice"]["config"].is_null(), reason == "original-kept");
    assert!(basis_speedup(&v) >= 1.0, "{json}");
    assert!(v["choice"]["speedup"].as_f64().unwrap() > 0.0, "{json}");
    assert!(v["program"].as_str().unwrap().starts_with("/* polytune: "));
    // Progress and the table went to standard error, not into the JSON.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("chosen by") && stderr.contains("[3/3]"),
        "{stderr}"
    );
    assert!(!stderr.contains('\r'));

    // -q: the program on standard output, nothing on standard error.
    let mut a = vec!["-q".to_string()];
    a.extend(args(&[]));
    let out = polytune(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok(&out).starts_with("/* polytune: "));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// `optimize --strategy bo --budget 12` with the shipped models, end to
/// end at MINI: every candidate it proposes is distinct, verified and
/// timed, the search says why it stopped, and the result is never slower
/// than the input as measured (the original kept unless a candidate wins
/// the head-to-head confirmation).
#[test]
fn bayesian_optimize_runs_verified_unique_candidates_and_says_why_it_stopped() {
    let atax = root().join("polybench/linear-algebra/atax.c");
    let models = root().join("models/gcc");
    let dir = tempfile::tempdir().unwrap();
    let out_c = dir.path().join("atax_bo.c");
    let out = polytune(&[
        "optimize",
        atax.to_str().unwrap(),
        "--model",
        models.to_str().unwrap(),
        "--size",
        "mini",
        "--strategy",
        "bo",
        "--budget",
        "12",
        "--json",
        "-o",
        out_c.to_str().unwrap(),
    ]);
    let json = ok(&out);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let cands = v["candidates"].as_array().unwrap();
    assert!(!cands.is_empty() && cands.len() <= 12, "{json}");
    // Identified by the readable configuration: the shipped models know
    // the extended space, so draws beyond the paper's (no bits) compete.
    let mut configs: Vec<&str> = cands
        .iter()
        .map(|c| c["config"].as_str().unwrap())
        .collect();
    configs.sort();
    configs.dedup();
    assert_eq!(configs.len(), cands.len(), "unique candidates: {json}");
    for (i, c) in cands.iter().enumerate() {
        assert_eq!(c["run"]["status"], "ok", "{json}");
        let by = c["chosen_by"].as_str().unwrap();
        // The initial design's picks of the variant ranker (bo's design
        // for its prior), then the process's own.
        let design = polytune::learn::search::bo::Settings::RANKER.initial;
        if i < design {
            assert!(by.starts_with("bo initial design"), "{by}");
            assert!(c["expected_improvement"].is_null());
        } else {
            assert_eq!(
                by,
                format!(
                    "bo #{} (EI {:.1}%)",
                    i + 1,
                    100.0 * c["expected_improvement"].as_f64().unwrap()
                )
            );
        }
    }
    let s = &v["search"];
    assert_eq!(s["strategy"], "bo");
    assert_eq!(s["budget"], 12);
    // The shipped models come with the corpus's 30 measured landscapes,
    // the transfer prior.
    assert_eq!(s["transfer_from"], 30, "{json}");
    assert_eq!(s["evaluated"].as_u64().unwrap() as usize, cands.len());
    assert_eq!(s["min_ei"], 0.001);
    match s["stop"].as_str().unwrap() {
        "budget" => assert_eq!(cands.len(), 12),
        "expected-improvement" => {
            assert!(s["final_ei"].as_f64().unwrap() < 0.001, "{json}");
            assert!(
                cands.len() >= polytune::learn::search::bo::Settings::RANKER.initial,
                "the initial design is run whole"
            );
        }
        "exhausted" => {}
        other => panic!("stopped by {other}: {json}"),
    }
    // Never slower than the input, as measured.
    let reason = v["choice"]["reason"].as_str().unwrap();
    let speedup = basis_speedup(&v);
    assert!(speedup >= 1.0, "{json}");
    let text = std::fs::read_to_string(&out_c).unwrap();
    if reason == "measured" {
        let h = &v["head_to_head"];
        let confirmed = h["confirmed"].as_f64().unwrap();
        assert!((confirmed - speedup).abs() < 1e-9, "{json}");
    } else {
        assert_eq!(reason, "original-kept");
        let original = std::fs::read_to_string(&atax).unwrap();
        assert!(text.ends_with(&original), "the original, unchanged");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "polytune: bo (its prior: the variant ranker and 30 measured programs' landscapes) ran "
        ),
        "{stderr}"
    );
    let exe = dir.path().join("atax_bo");
    common::compile_variant("gcc", &out_c, &exe, "mini").unwrap();
    common::run_dump_threads(&exe).unwrap();
}

/// Models without `landscapes.json` beside them (trained before it was
/// shipped, or copied alone): `bo` runs with the models alone as its
/// prior and says so; with them it matches the corpus's 30 landscapes.
#[test]
fn bayesian_optimize_without_landscapes_says_its_prior_is_the_models_alone() {
    let kernel = root().join("polybench/stencils/jacobi-1d-imper.c");
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    std::fs::create_dir(&models).unwrap();
    for e in std::fs::read_dir(root().join("models/gcc")).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().unwrap() != "landscapes.json" {
            std::fs::copy(&p, models.join(p.file_name().unwrap())).unwrap();
        }
    }
    let run = |models: &std::path::Path| {
        let out = polytune(&[
            "optimize",
            kernel.to_str().unwrap(),
            "--model",
            models.to_str().unwrap(),
            "--size",
            "mini",
            "--strategy",
            "bo",
            "--budget",
            "6",
            "--refine",
            "0",
            "--min-ei",
            "0",
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
        (v, String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (v, stderr) = run(&models);
    assert_eq!(v["search"]["transfer_from"], 0, "{v}");
    assert!(
        stderr.contains(
            "polytune: bo (its prior: the variant ranker alone; the models have no landscapes.json) ran "
        ),
        "{stderr}"
    );
    assert!(basis_speedup(&v) >= 1.0, "{v}");
    let (v, _) = run(&root().join("models/gcc"));
    assert_eq!(v["search"]["transfer_from"], 30, "{v}");
}

/// After the search, `optimize` steps beyond the paper's space from the
/// fastest candidate: on gemm the first step is the packed register tile
/// (distributed: gemm's two statements are fused under `fuse=smart`), run
/// and verified like every candidate; a chosen program beyond the space
/// has no bits; whatever is chosen computes what the original does. The
/// six models rank (`--ranking models`): their first pick is in the
/// paper's space, where the variant ranker's is already a packed tile.
#[test]
fn refinement_steps_beyond_the_papers_space_verified() {
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let models = root().join("models/gcc");
    let dir = tempfile::tempdir().unwrap();
    let out_c = dir.path().join("gemm_refined.c");
    let out = polytune(&[
        "optimize",
        gemm.to_str().unwrap(),
        "--model",
        models.to_str().unwrap(),
        "--size",
        "mini",
        "--budget",
        "1",
        "--refine",
        "2",
        "--ranking",
        "models",
        "--json",
        "-o",
        out_c.to_str().unwrap(),
    ]);
    let json = ok(&out);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let refined = v["refinement"].as_array().unwrap();
    assert!(!refined.is_empty() && refined.len() <= 2, "{json}");
    let first = &refined[0];
    assert_eq!(first["step"], "packed-register-tile", "{json}");
    assert_eq!(first["from"], v["candidates"][0]["config"], "{json}");
    let config: polytune::config::Config = first["config"].as_str().unwrap().parse().unwrap();
    assert!(!config.is_paper() && config.regblock.is_some_and(|r| r.pack));
    // Shaped for this machine's vectors (gcc -march=native).
    let macros = std::process::Command::new("gcc")
        .args(["-O3", "-march=native", "-dM", "-E", "-x", "c", "/dev/null"])
        .output()
        .unwrap();
    let target =
        polytune::config::VectorTarget::from_macros(&String::from_utf8_lossy(&macros.stdout));
    assert_eq!(
        config.regblock,
        target.packed_tiles().first().copied(),
        "{target:?}: {json}"
    );
    for r in refined {
        assert_eq!(r["run"]["status"], "ok", "verified: {json}");
    }
    let choice = &v["choice"];
    if let Some(c) = choice["config"].as_str() {
        let c: polytune::config::Config = c.parse().unwrap();
        assert_eq!(choice["bits"].is_null(), !c.is_paper(), "{json}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refinement: packed register tile from "),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&out_c).unwrap();
    names_its_configuration_in_both_forms(&text);
    let reference = {
        let exe = dir.path().join("gemm_ref");
        common::compile("gcc", &gemm, &exe, "mini");
        common::run_dump(&exe)
    };
    let exe = dir.path().join("gemm_refined");
    common::matches_reference("gcc", &out_c, &exe, "mini", &[], &reference).unwrap();
}

/// The learned `optimize --json` of a corpus kernel with the shipped gcc
/// models and `args`: its report, parsed and as text.
fn learned_json(kernel: &str, args: &[&str]) -> (serde_json::Value, String) {
    let file = root().join("polybench").join(kernel);
    let models = root().join("models/gcc");
    let mut all = vec![
        "optimize",
        file.to_str().unwrap(),
        "--model",
        models.to_str().unwrap(),
        "--json",
    ];
    all.extend_from_slice(args);
    let json = ok(&polytune(&all));
    (serde_json::from_str(&json).unwrap(), json)
}

/// At the size the program runs with, the packed register tile's first
/// form takes each thread's share of the rows in one cache tile (gemm
/// MEDIUM: 1000 rows, 500 per thread on 2, rounded up to the shape's
/// rows), the parameters' values recorded by the instrumented original.
#[test]
fn the_packed_tiles_rows_are_each_threads_share_at_the_run_size() {
    let (v, json) = learned_json(
        "linear-algebra/gemm.c",
        &[
            "--size",
            "medium",
            "--threads",
            "2",
            "--budget",
            "1",
            "--refine",
            "1",
        ],
    );
    let first = &v["refinement"][0];
    assert_eq!(first["step"], "packed-register-tile", "{json}");
    assert_eq!(first["run"]["status"], "ok", "verified: {json}");
    let config: polytune::config::Config = first["config"].as_str().unwrap().parse().unwrap();
    let mr = u16::from(config.regblock.unwrap().mr);
    assert_eq!(config.tile[0], 500u16.div_ceil(mr) * mr, "{json}");
}

/// `--time-budget 0`: the original is measured, no candidate is, the
/// original is kept and the report says the time ran out.
#[test]
fn a_spent_time_budget_keeps_the_original() {
    let (v, json) = learned_json(
        "linear-algebra/mvt.c",
        &["--size", "mini", "--budget", "12", "--time-budget", "0"],
    );
    assert_eq!(v["original"]["status"], "ok", "{json}");
    assert_eq!(v["candidates"].as_array().unwrap().len(), 0, "{json}");
    // With a budget of 12 the default strategy is Bayesian optimization.
    assert_eq!(v["search"]["strategy"], "bo");
    assert_eq!(v["search"]["stop"], "time");
    assert_eq!(v["search"]["time_budget"], 0.0);
    assert_eq!(v["choice"]["reason"], "original-kept");
    assert!(
        v["program"]
            .as_str()
            .unwrap()
            .contains("no candidate of 0 ran faster")
    );
}

/// The speedup the head to head decided on: the regions' when they could
/// be timed, the whole program's otherwise (1 when the original was kept).
fn basis_speedup(v: &serde_json::Value) -> f64 {
    let choice = &v["choice"];
    match v["head_to_head"]["basis"].as_str() {
        Some("regions") if choice["reason"] == "measured" => {
            choice["regions_speedup"].as_f64().unwrap()
        }
        _ => choice["speedup"].as_f64().unwrap(),
    }
}
