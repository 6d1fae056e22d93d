//! Campaigns end to end: a small campaign into a temporary database, then
//! one killed with SIGKILL in the middle and resumed: row counts prove that
//! nothing measured was lost or measured twice. Then what a campaign
//! appends to the store of this machine's runs (`--store`, `--no-learn`,
//! a damaged store).

mod common;

use common::root;
use polytune::lab::store::Store;
use polytune::lab::verify::Status;
use std::process::Command;
use std::time::{Duration, Instant};

/// `collect` of atax at MINI, `variants` variants, two runs each, into
/// `db` (global options such as `-q` go in `before`; the command's own
/// after it).
fn collect_atax(before: &[&str], db: &std::path::Path, variants: &str) -> Command {
    let mut c = polytune();
    c.args(before)
        .args([
            "collect",
            "--size",
            "mini",
            "--max-variants",
            variants,
            "--runs",
            "2",
            "--db",
        ])
        .arg(db)
        .arg(root().join("polybench/linear-algebra/atax.c"));
    c
}

fn polytune() -> Command {
    Command::new(env!("CARGO_BIN_EXE_polytune"))
}

#[test]
fn campaign_then_resume_is_a_no_op() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let atax = root().join("polybench/linear-algebra/atax.c");
    let run = || {
        polytune()
            .args([
                "collect",
                "--size",
                "mini",
                "--max-variants",
                "3",
                "--compiler",
                "gcc,clang",
                "--db",
            ])
            .arg(&db)
            .arg(&gemm)
            .arg(&atax)
            .output()
            .unwrap()
    };
    let out = run();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = Store::open(&db).unwrap();
    // 2 kernels x 2 compilers x (original + 3 variants)
    assert_eq!(store.count("measurements").unwrap(), 16);
    assert_eq!(store.count("kernels").unwrap(), 2);
    assert_eq!(store.count("compilers").unwrap(), 2);
    // Originals get at least five timed runs; a variant at least two (two
    // only when it is more than 3x slower than its original).
    assert!(store.count("samples").unwrap() >= 4 * 5 + 12 * 2);
    // One feature vector per kernel.
    assert_eq!(store.count("features").unwrap(), 2 * 15);
    // Every variant records the baseline it was timed against: its
    // original's median in the same batch.
    for m in store.measured().unwrap() {
        assert_eq!(m.baseline.is_some(), !m.original, "{m:?}");
    }
    let before = store.measurement_rows().unwrap();
    drop(store);
    let out = run();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 measured, 16 already stored"));
    let store = Store::open(&db).unwrap();
    assert_eq!(store.measurement_rows().unwrap(), before);
    let csv = polytune()
        .args(["export", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(csv.status.success());
    assert_eq!(String::from_utf8_lossy(&csv.stdout).lines().count(), 17);

    // A store written by another polytune: the same variants under other
    // code (as when the generator changes). They do not count as done,
    // the campaign says so, and today's variants are measured.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE variants SET code_hash = 'old-' || code_hash WHERE original = 0 AND kernel_id = (SELECT id FROM kernels WHERE name = 'gemm')",
        [],
    )
    .unwrap();
    drop(conn);
    let out = polytune()
        .args([
            "collect",
            "--size",
            "mini",
            "--max-variants",
            "3",
            "--compiler",
            "gcc",
            "--db",
        ])
        .arg(&db)
        .arg(&gemm)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(
            "gemm gcc: the store holds 3 measured variants whose code no variant of this space has"
        ),
        "{err}"
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("3 measured, 1 already stored"), "{said}");
}

#[test]
fn killed_campaign_resumes_without_loss_or_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let args = |c: &mut Command| {
        c.args(["collect", "--size", "mini", "--max-variants", "12", "--db"])
            .arg(&db)
            .arg(&gemm);
    };
    let mut first = polytune();
    args(&mut first);
    // SIGKILL leaves the campaign's scratch directory behind: keep it in
    // the test's own directory.
    let mut child = first
        .env("TMPDIR", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let n = Store::open(&db)
            .ok()
            .and_then(|s| s.count("measurements").ok())
            .unwrap_or(0);
        if n >= 4 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "campaign made no progress"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "campaign ended before it could be killed"
        );
    }
    // SIGKILL: no chance to clean up.
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = Store::open(&db).unwrap().measurement_rows().unwrap();
    assert!(kept.len() >= 4 && kept.len() < 13, "{}", kept.len());

    let mut again = polytune();
    args(&mut again);
    let out = again.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = Store::open(&db).unwrap();
    let rows = store.measurement_rows().unwrap();
    assert_eq!(rows.len(), 13, "original + 12 variants, each once");
    // Nothing measured before the kill was lost or re-measured.
    assert_eq!(&rows[..kept.len()], &kept[..]);
    let mut variants: Vec<i64> = rows.iter().map(|r| r.1).collect();
    variants.sort();
    variants.dedup();
    assert_eq!(variants.len(), 13);
}

#[test]
fn a_second_campaign_on_a_held_store_stops_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let pause = dir.path().join("pause");
    let ack = dir.path().join("pause.ack");
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let campaign = || {
        let mut c = polytune();
        c.args(["collect", "--size", "mini", "--max-variants", "2", "--db"])
            .arg(&db)
            .arg("--pause-file")
            .arg(&pause)
            .arg(&gemm);
        c
    };
    // The first campaign holds the store, paused before its first
    // measurement.
    std::fs::write(&pause, "").unwrap();
    let mut first = campaign()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !ack.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the first campaign never paused"
        );
        assert!(
            first.try_wait().unwrap().is_none(),
            "the first campaign ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let t = Instant::now();
    let out = campaign().output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "another campaign (process {}) holds {}",
            first.id(),
            db.display()
        )) && err.contains("nothing was measured"),
        "{err}"
    );
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "it waited or measured"
    );
    assert_eq!(
        Store::open_read_only(&db)
            .unwrap()
            .count("measurements")
            .unwrap(),
        0
    );
    // The first one goes on undisturbed.
    std::fs::remove_file(&pause).unwrap();
    let done = first.wait_with_output().unwrap();
    assert!(done.status.success());
    assert!(
        String::from_utf8_lossy(&done.stdout).contains("3 measured, 0 already stored, 0 failed"),
        "{}",
        String::from_utf8_lossy(&done.stdout)
    );
    // Once it is over, the store is free again.
    let out = campaign().output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 measured, 3 already stored"));
}

/// Progress written to a file (standard error is not a terminal): plain
/// `[k/n]` lines with an ETA, never a `\r`; `-q` writes none; `--json`
/// gives the summary.
#[test]
fn progress_to_a_file_is_plain_lines_and_quiet_is_silent() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let log = dir.path().join("progress.log");
    let collect = |quiet: bool, db: &std::path::Path| {
        collect_atax(if quiet { &["-q"] } else { &[] }, db, "2")
            .arg("--json")
            .stderr(std::fs::File::create(&log).unwrap())
            .output()
            .unwrap()
    };
    let out = collect(false, &db);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(out.status.success(), "{text}");
    assert!(!text.contains('\r'), "{text:?}");
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("/3] ") && !l.contains("[0/3]"))
        .collect();
    assert!(!lines.is_empty(), "{text}");
    assert!(lines.iter().all(|l| l.contains("ETA")), "{text}");
    assert!(text.contains("[3/3] atax gcc: 3 measured"), "{text}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["measured"], 3);
    assert_eq!(v["already_stored"], 0);
    assert_eq!(v["measurements"], 3);
    // Quiet: the same measurements, nothing said.
    let out = collect(true, &dir.path().join("quiet.sqlite"));
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["measured"], 3);
}

/// SIGTERM (Ctrl-C, a job scheduler's time limit) kills the programs a
/// campaign is building and timing: what they report then is not a
/// measurement and must not be stored as a failure, which a resumed
/// campaign would keep as measured.
#[test]
fn terminated_campaign_stores_no_failure_it_caused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let campaign = || {
        let mut c = polytune();
        c.args(["collect", "--size", "mini", "--max-variants", "12", "--db"])
            .arg(&db)
            .arg(&gemm)
            .env("TMPDIR", dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        c
    };
    let count = || {
        Store::open_read_only(&db)
            .ok()
            .and_then(|s| s.count("measurements").ok())
            .unwrap_or(0)
    };
    for round in 0..3 {
        let before = count();
        let mut child = campaign().spawn().unwrap();
        let start = Instant::now();
        // Terminated just after a measurement is stored: the next
        // variant is being built or run.
        while count() < before + 2 {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "round {round}: the campaign made no progress"
            );
            assert!(
                child.try_wait().unwrap().is_none(),
                "round {round}: the campaign ended before it was terminated"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let kill = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        assert!(!status.success(), "round {round}: {status:?}");
        let store = Store::open_read_only(&db).unwrap();
        for m in store.measured().unwrap() {
            assert_eq!(m.status, Status::Ok, "round {round}: {m:?}");
        }
    }
    let out = campaign().status().unwrap();
    assert!(out.success());
    let store = Store::open_read_only(&db).unwrap();
    let measured = store.measured().unwrap();
    assert_eq!(measured.len(), 13, "original + 12 variants, each once");
    assert!(
        measured.iter().all(|m| m.status == Status::Ok),
        "{measured:?}"
    );
    // The signal handler removed the scratch directories.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("polytune-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn confirm_top_times_the_fastest_again_and_resumes_without_repeating() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let kernel = root().join("polybench/linear-algebra/atax.c");
    let run = |confirm: bool| {
        let mut cmd = polytune();
        cmd.args([
            "collect",
            "--size",
            "mini",
            "--max-variants",
            "3",
            "--compiler",
            "gcc",
            "--db",
        ])
        .arg(&db)
        .arg(&kernel);
        if confirm {
            cmd.args(["--confirm-top", "2", "--confirm-rounds", "3"]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    run(false);
    let confirmed = || -> Vec<(i64, String)> {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let mut st = conn
            .prepare("SELECT variant_id, detail FROM measurements WHERE detail LIKE 'confirmed:%' ORDER BY variant_id")
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert!(
        confirmed().is_empty(),
        "a campaign without it confirms nothing"
    );
    // On the measured store, the campaign only confirms: the two fastest,
    // then any that took the place of one that dropped out.
    let out = run(true);
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        said.contains("0 measured, 4 already stored, 0 failed, "),
        "{said}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("confirmed"), "{stderr}");
    let first = confirmed();
    // Three variants: after two passes at most every one is confirmed,
    // so the top two are whatever the timings.
    assert!((2..=3).contains(&first.len()), "{first:?}");
    assert!(
        said.contains(&format!(", {} confirmed;", first.len())),
        "{said}"
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    // The two fastest by the stored timings are confirmed, with three
    // samples each (the rounds), and the campaign's timing in the detail.
    let mut st = conn
        .prepare(
            "SELECT m.variant_id, m.detail, (SELECT COUNT(*) FROM samples s WHERE s.measurement_id = m.id)
             FROM measurements m JOIN variants v ON v.id = m.variant_id
             WHERE v.original = 0 AND m.status = 'ok' ORDER BY m.baseline / m.median DESC LIMIT 2",
        )
        .unwrap();
    let top: Vec<(i64, String, i64)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(top.len(), 2);
    for (_, detail, samples) in &top {
        assert!(
            detail.starts_with(
                "confirmed: 3 rounds interleaved with the original; the campaign's median"
            ),
            "{detail}"
        );
        assert_eq!(*samples, 3);
    }
    drop(st);
    drop(conn);
    // Resuming confirms nothing again.
    let out = run(true);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("confirmed"));
    assert!(String::from_utf8_lossy(&out.stdout).contains(", 0 confirmed;"));
    assert_eq!(confirmed(), first);
}

/// `collect` of one small kernel with learning on (the variable the
/// project's cargo runs set cleared), its cache in `cache`: (exit
/// status, stdout, stderr).
fn collect_learning(
    cache: &std::path::Path,
    db: &std::path::Path,
    args: &[&str],
) -> (bool, String, String) {
    let out = collect_atax(&[], db, "2")
        .arg("--json")
        .args(args)
        .env("POLYTUNE_CACHE_DIR", cache)
        .env_remove("POLYTUNE_NO_LEARN")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Learning on the user's machine from campaigns (issue 38): each
/// kernel's verified measurements are appended to the store of this
/// machine's runs with the variant's features, as the learned `optimize`
/// appends its own; `models status` shows them; the campaign's own store
/// holds its measurements only.
#[test]
fn collect_appends_what_it_measured_to_the_store_of_this_machines_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let store = dir.path().join("mine.sqlite");
    let (ok, stdout, stderr) =
        collect_learning(dir.path(), &db, &["--store", store.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["measured"], 3, "{v}");
    assert_eq!(v["failed"], 0, "{v}");
    // The original and its two variants, verified and timed.
    assert_eq!(v["learned"]["rows"], 3, "{v}");
    assert_eq!(v["learned"]["store"], store.to_str().unwrap());
    let conn = rusqlite::Connection::open(&store).unwrap();
    let rows: Vec<(bool, String, f64, f64, String, String)> = conn
        .prepare(
            "SELECT v.original, k.name, m.median, m.baseline, f.names, f.x
             FROM measurements m JOIN variants v ON v.id = m.variant_id
             JOIN kernels k ON k.id = v.kernel_id
             JOIN variant_features f ON f.variant_id = v.id AND f.machine_id = m.machine_id
             WHERE m.status = 'ok' AND m.size = 'mini' ORDER BY v.id",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    let names = polytune::app::variants::variant_feature_names();
    assert_eq!(rows.iter().filter(|r| r.0).count(), 1, "one original");
    for (_, kernel, median, baseline, stored_names, x) in &rows {
        assert_eq!(
            kernel, "atax.c",
            "known by its file's name, as optimize knows it"
        );
        assert!(*median > 0.0 && *baseline > 0.0);
        assert_eq!(stored_names, &names.join(","));
        let x: Vec<f64> = serde_json::from_str(x).unwrap();
        assert_eq!(x.len(), names.len());
        assert!(x.iter().all(|v| v.is_finite()), "{x:?}");
    }
    // What `optimize` learns from: the store as `models status` reads it.
    let status = polytune()
        .args(["models", "status", "--json", "--store"])
        .arg(&store)
        .env("POLYTUNE_CACHE_DIR", dir.path())
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(
        (
            status["rows"].as_u64(),
            status["programs"].as_u64(),
            status["this_machine"].as_u64()
        ),
        (Some(3), Some(1), Some(3)),
        "{status}"
    );
    assert_eq!(status["programs_ranked"][0]["program"], "atax.c");
    // The campaign's store holds its measurements, no feature of a variant.
    let campaign = rusqlite::Connection::open(&db).unwrap();
    let count = |sql: &str| -> i64 { campaign.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT COUNT(*) FROM measurements"), 3);
    assert_eq!(count("SELECT COUNT(*) FROM variant_features"), 0);
    drop(campaign);
    // Resumed, nothing is measured, so nothing is appended.
    let (ok, stdout, stderr) =
        collect_learning(dir.path(), &db, &["--store", store.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (v["measured"].as_u64(), v["learned"]["rows"].as_u64()),
        (Some(0), Some(0))
    );
    let count: i64 = conn
        .query_row("SELECT COUNT(*) FROM measurements", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 3);
}

/// `--no-learn`, or POLYTUNE_NO_LEARN, appends nothing: no store is made,
/// not even in the cache directory.
#[test]
fn collect_with_no_learn_appends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let store = dir.path().join("mine.sqlite");
    let (ok, stdout, stderr) = collect_learning(
        &cache,
        &dir.path().join("runs.sqlite"),
        &["--no-learn", "--store", store.to_str().unwrap()],
    );
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["measured"], 3);
    assert!(v["learned"].is_null(), "{v}");
    assert!(!store.exists());
    // The variable, without the option, and the default store.
    let out = collect_atax(&[], &dir.path().join("runs2.sqlite"), "1")
        .env("POLYTUNE_CACHE_DIR", &cache)
        .env("POLYTUNE_NO_LEARN", "1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!said.contains("appended"), "{said}");
    assert!(!cache.join("learned.sqlite").exists());
}

/// A store of this machine's runs that is no store (garbage bytes) is a
/// warning, said once: the campaign measures everything into its own
/// store, and the file is left as it was.
#[test]
fn collect_with_a_damaged_store_warns_once_and_measures_all_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.sqlite");
    let store = dir.path().join("mine.sqlite");
    let garbage = b"\x00\x01not an SQLite database\xff\xfe, only bytes".to_vec();
    std::fs::write(&store, &garbage).unwrap();
    let out = collect_atax(&[], &db, "1")
        .args(["--compiler", "gcc,clang"])
        .arg("--store")
        .arg(&store)
        .env("POLYTUNE_CACHE_DIR", dir.path())
        .env_remove("POLYTUNE_NO_LEARN")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("4 measured, 0 already stored, 0 failed"),
        "{said}"
    );
    assert!(!said.contains("appended"), "{said}");
    let warning = format!(
        "warning: the store of what this machine measured, {}",
        store.display()
    );
    assert_eq!(stderr.matches(&warning).count(), 1, "once: {stderr}");
    assert!(
        stderr.contains("not a polytune store")
            && stderr
                .contains("the campaign goes on without appending to it (--db is not affected)"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&store).unwrap(), garbage, "left as it was");
    assert_eq!(
        Store::open_read_only(&db)
            .unwrap()
            .count("measurements")
            .unwrap(),
        4
    );
}
