//! The variant ranker in learned `optimize` (issue 38), on a corpus
//! kernel, compiled and run: it ranks (each candidate with its place and
//! the ranker's prediction), appends what it measured to the user's store
//! and learns from it the next time; `--no-learn` and `--ranking models`
//! turn that off; a damaged or a locked store is a warning, and the
//! program is still optimized.

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
        assert_eq!(c["ranked_by"], "variant ranker");
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
    // What the store holds, and how the shipped ranker orders it.
    let status = common::json_of_success(
        &Command::new(env!("CARGO_BIN_EXE_polytune"))
            .args([
                "models",
                "status",
                "--json",
                "--store",
                store.to_str().unwrap(),
            ])
            .env("POLYTUNE_CACHE_DIR", cache.path())
            .output()
            .unwrap(),
    );
    assert_eq!(status["rows"], learned);
    assert_eq!(
        (status["programs"].as_u64(), status["this_machine"].as_u64()),
        (Some(1), Some(learned))
    );
    assert_eq!(
        status["programs_ranked"][0]["program"], "atax.c",
        "{status}"
    );
    assert!(status["shipped_fitted"].as_bool().unwrap());
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
        assert_eq!(c["ranked_by"], "the 6 models together");
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

#[test]
fn a_locked_store_is_a_warning_and_the_program_is_still_optimized() {
    let cache = tempfile::tempdir().unwrap();
    let store = cache.path().join("mine.sqlite");
    drop(polytune::lab::store::Store::open(&store).unwrap());
    // Another process in the middle of a write: it holds the store's write
    // lock for as long as the run takes.
    let holder = rusqlite::Connection::open(&store).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let (r, stderr) = optimize(cache.path(), &["--store", store.to_str().unwrap()]);
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    assert!(r["learned"].is_null(), "{r}");
    assert!(r["ranker"].is_object(), "the shipped variants still rank");
    assert!(
        stderr.contains(&format!(
            "{} is locked by another process writing it (waited 5 s)",
            store.display()
        )) && stderr.contains("nothing was learned from this run"),
        "{stderr}"
    );
    let rows: i64 = rusqlite::Connection::open(&store)
        .unwrap()
        .query_row("SELECT count(*) FROM variant_features", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 0, "nothing written");
}

/// The check of learning on the user's machine: the shipped
/// variants split so that half the kernels play "this machine" (five of
/// them held out to rank, the others the local store as it grows) and
/// half the shipped table; the ranker refitted with the local rows
/// weighted ranks the held-out kernels better as the store grows. Every
/// fourth variant of each kernel, so that the fits take seconds. Three
/// folds (each five of the fifteen "this machine" kernels held out, the
/// other ten the store), the median ρ of a fold's five averaged: one
/// fold's median of five moves by 0.07 with a kernel.
#[test]
fn ranking_of_new_kernels_improves_as_the_local_store_grows() {
    use polytune::app::ranker::{LOCAL_WEIGHT, Local, Shipped, fit, load};
    use polytune::app::variants::{VariantRow, VariantTable};
    use polytune::learn::rank::metrics::rank_correlation;
    let all = load(&common::root().join("models/gcc"))
        .unwrap()
        .unwrap()
        .table;
    let n = all.kernels.len();
    let thinned: Vec<&VariantRow> = all.rows.iter().step_by(4).collect();
    let of = |k: usize| -> Vec<VariantRow> {
        thinned
            .iter()
            .filter(|r| r.kernel == k)
            .map(|r| (*r).clone())
            .collect()
    };
    let shipped_kernels: Vec<usize> = (0..n).step_by(2).collect();
    let machine: Vec<usize> = (1..n).step_by(2).collect();
    let shipped = Shipped {
        table: VariantTable {
            rows: shipped_kernels.iter().flat_map(|&k| of(k)).collect(),
            ..all.clone()
        },
        fitted: None,
    };
    let median_rho = |held: &[usize], local_kernels: &[usize]| -> f64 {
        let rows: Vec<VariantRow> = local_kernels.iter().flat_map(|&k| of(k)).collect();
        let local = Local {
            kernels: all.kernels.clone(),
            weight: vec![LOCAL_WEIGHT; rows.len()],
            this_machine: rows.len(),
            rows,
        };
        let f = fit(&shipped, Some(&local), None).unwrap();
        let mut rhos: Vec<f64> = held
            .iter()
            .filter_map(|&k| {
                let rows = of(k);
                let x: Vec<Vec<f64>> = rows.iter().map(|r| r.x.clone()).collect();
                let label: Vec<f64> = rows.iter().map(|r| r.speedup.ln()).collect();
                rank_correlation(&f.scores(&x), &label)
            })
            .collect();
        rhos.sort_by(f64::total_cmp);
        rhos[rhos.len() / 2]
    };
    let folds: Vec<(Vec<usize>, Vec<usize>)> = (0..3)
        .map(|f| {
            let held: Vec<usize> = machine.iter().copied().skip(5 * f).take(5).collect();
            let pool: Vec<usize> = machine
                .iter()
                .copied()
                .filter(|k| !held.contains(k))
                .collect();
            (held, pool)
        })
        .collect();
    let grown: Vec<f64> = [0, 5, 10]
        .iter()
        .map(|&m| {
            folds
                .iter()
                .map(|(held, pool)| median_rho(held, &pool[..m]))
                .sum::<f64>()
                / folds.len() as f64
        })
        .collect();
    println!("median rho on the held-out kernels as the store grows (0, 5, 10 kernels): {grown:?}");
    assert!(grown[2] > grown[0], "{grown:?}");
    assert!(grown[1] >= grown[0] - 0.05, "{grown:?}");
}

/// `models status --held-out`'s evaluation: each program of the store
/// ranked new to both rankers. Three corpus kernels play this machine's
/// store (named as files, `gemm.c`); each is left out of the store's rows
/// and, by name, of the shipped table, so the figure equals that of fits
/// made by hand without it (every eighth variant, so that the fits take
/// seconds).
#[test]
fn held_out_programs_are_new_to_both_rankers() {
    use polytune::app::ranker::{LOCAL_WEIGHT, Local, Shipped, fit, held_out, load};
    use polytune::app::variants::{VariantRow, VariantTable};
    use polytune::learn::rank::metrics::rank_correlation;
    let all = load(&common::root().join("models/gcc"))
        .unwrap()
        .unwrap()
        .table;
    let table = VariantTable {
        rows: all.rows.iter().step_by(8).cloned().collect(),
        ..all.clone()
    };
    let mine = [1usize, 4, 7];
    let rows: Vec<VariantRow> = table
        .rows
        .iter()
        .filter_map(|r| {
            let k = mine.iter().position(|&m| m == r.kernel)?;
            Some(VariantRow {
                kernel: k,
                ..r.clone()
            })
        })
        .collect();
    let local = Local {
        kernels: mine
            .iter()
            .map(|&k| format!("{}.c", all.kernels[k]))
            .collect(),
        weight: vec![LOCAL_WEIGHT; rows.len()],
        this_machine: rows.len(),
        rows,
    };
    let shipped = Shipped {
        table: table.clone(),
        fitted: None,
    };
    let held = held_out(&shipped, &local).unwrap();
    assert_eq!(held.len(), 3);
    for (h, &k) in held.iter().zip(&mine) {
        let (x, label): (Vec<Vec<f64>>, Vec<f64>) = table
            .rows
            .iter()
            .filter(|r| r.kernel == k)
            .map(|r| (r.x.clone(), r.speedup.ln()))
            .unzip();
        assert_eq!(h.variants, x.len());
        let without = Shipped {
            table: VariantTable {
                rows: table
                    .rows
                    .iter()
                    .filter(|r| r.kernel != k)
                    .cloned()
                    .collect(),
                ..table.clone()
            },
            fitted: None,
        };
        let alone = rank_correlation(&fit(&without, None, None).unwrap().scores(&x), &label);
        assert_eq!(h.shipped, alone, "{}", h.program);
        assert!(h.refit.is_some(), "{}", h.program);
        // Not the fit that has seen the kernel's own rows.
        let seen = rank_correlation(&fit(&shipped, None, None).unwrap().scores(&x), &label);
        assert_ne!(h.shipped, seen, "{}", h.program);
    }
}
