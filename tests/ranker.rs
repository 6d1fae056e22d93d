//! The variant ranker in learned `optimize` (issue 38), on a corpus
//! kernel, compiled and run: it ranks (each candidate with its place and
//! the ranker's prediction), appends what it measured to the user's store
//! and learns from it the next time; `--no-learn` and `--ranking models`
//! turn that off; a damaged store is a warning, and the program is still
//! optimized.

mod common;

use std::path::Path;
use std::process::Command;

/// Learned `optimize` of a small corpus kernel with `args`, the cache
/// (and the store in it) in `cache`, learning on unless `args` says: its
/// JSON report, stderr.
fn optimize(cache: &Path, args: &[&str]) -> (serde_json::Value, String) {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("atax.c");
    let o = Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args([
            "optimize",
            &common::corpus("linear-algebra/atax.c"),
            "--size",
            "mini",
            "--budget",
            "2",
            "--refine",
            "0",
            "--json",
            "-o",
            out.to_str().unwrap(),
        ])
        .args(args)
        .env("POLYTUNE_CACHE_DIR", cache)
        .env_remove("POLYTUNE_NO_LEARN")
        .output()
        .unwrap();
    let report = common::json_of_success(&o);
    assert!(out.exists(), "the program is written");
    (report, String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn the_ranker_ranks_and_learns_from_what_it_measured() {
    let cache = tempfile::tempdir().unwrap();
    let (r, _) = optimize(cache.path(), &[]);
    let ranker = &r["ranker"];
    assert!(ranker.is_object(), "{r}");
    assert_eq!(ranker["local_rows"], 0);
    assert!(ranker["rows"].as_u64().unwrap() > 7000);
    let candidates = r["candidates"].as_array().unwrap();
    assert!(!candidates.is_empty());
    for c in candidates {
        assert!(c["place"].as_u64().unwrap() >= 1, "{c}");
        let models: Vec<&str> = c["predicted"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["model"].as_str().unwrap())
            .collect();
        assert!(models.contains(&"variant ranker"), "{models:?}");
        assert!(models.contains(&"M5P"), "the six models stay: {models:?}");
    }
    // The original and every candidate that ran, with their features.
    let store = cache.path().join("learned.sqlite");
    let learned = r["learned"]["runs"].as_u64().unwrap();
    assert!(learned >= 2, "{r}");
    assert_eq!(r["learned"]["store"], store.to_str().unwrap());
    let db = rusqlite::Connection::open(&store).unwrap();
    let count = |sql: &str| -> u64 { db.query_row(sql, [], |row| row.get(0)).unwrap() };
    assert_eq!(count("SELECT COUNT(*) FROM variant_features"), learned);
    assert_eq!(count("SELECT COUNT(*) FROM measurements"), learned);
    // The next run learns from them.
    let (again, stderr) = optimize(cache.path(), &[]);
    assert!(
        again["ranker"]["local_rows"].as_u64().unwrap() >= 1,
        "{}",
        again["ranker"]
    );
    assert!(stderr.contains("of 1 programs this user ran"), "{stderr}");
}

#[test]
fn no_learn_leaves_no_store_and_models_ranking_needs_no_ranker() {
    let cache = tempfile::tempdir().unwrap();
    let (r, _) = optimize(cache.path(), &["--no-learn"]);
    assert!(r["ranker"].is_object());
    assert!(r["learned"].is_null());
    assert!(!cache.path().join("learned.sqlite").exists());
    let (r, _) = optimize(cache.path(), &["--no-learn", "--ranking", "models"]);
    assert!(r["ranker"].is_null(), "{}", r["ranker"]);
    for c in r["candidates"].as_array().unwrap() {
        assert!(c["place"].is_null());
    }
}

#[test]
fn a_damaged_store_is_a_warning_and_the_program_is_still_optimized() {
    let cache = tempfile::tempdir().unwrap();
    let store = cache.path().join("mine.sqlite");
    std::fs::write(&store, b"this is not an SQLite database, only text").unwrap();
    let (r, stderr) = optimize(cache.path(), &["--store", store.to_str().unwrap()]);
    assert!(r["learned"].is_null());
    assert!(r["ranker"].is_object(), "the shipped variants still rank");
    assert!(
        stderr.contains(&format!(
            "warning: the store of what this machine measured, {}",
            store.display()
        )) && stderr.contains("not a polytune store"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&store).unwrap(),
        b"this is not an SQLite database, only text",
        "left as it was"
    );
}
