//! The ranking model of the variant on the shipped dataset (issue 38):
//! the features of every measured variant computed by the engine at its
//! kernel's parameter values, then leave-one-kernel-out with the ranker,
//! trained and evaluated on the same rows: over the paper's space (the
//! rows whose configuration is in it) and over the extended space (every
//! row: the paper's and the draws beyond it), by feature set, both
//! compilers; a table of the figures at the end. Minutes (release):
//!
//!     cargo test --release --test variant_rank -- --ignored --nocapture
//!
//! The table is kept in target/variant-table-gcc.json between runs
//! (delete it to compute it again); POLYTUNE_ABLATIONS=1 adds the
//! ablations by feature group.

mod common;

use polytune::app::variants::{
    Evaluation, Setup, VariantTable, feature_group, leave_one_kernel_out, table,
};
use polytune::lab::compiler::{Compiler, Family};
use polytune::lab::store::Store;
use polytune::learn::dataset::{Dataset, Selection};
use polytune::learn::rank::RankerParams;

/// Writes the tables `optimize` ranks with (models/<compiler>/variants.json,
/// [`VariantTable::shipped`]) from the table the test below keeps in
/// target/ (run it first).
#[test]
#[ignore = "writes the shipped tables from target/variant-table-gcc.json, which the test below makes in minutes"]
fn ship_the_ranker_tables() {
    let root = common::root();
    let store = Store::open_read_only(&root.join("models/dataset.sqlite")).unwrap();
    let text = std::fs::read_to_string(root.join("target/variant-table-gcc.json"))
        .expect("run the_variant_ranker_on_the_shipped_dataset first");
    let gcc: VariantTable = serde_json::from_str(&text).unwrap();
    let clang_d = Dataset::from_store(
        &store,
        &Selection {
            compiler: Family::Clang,
            ..Selection::default()
        },
    )
    .unwrap();
    for (name, t) in [("gcc", gcc.clone()), ("clang", gcc.relabelled(&clang_d))] {
        let path = root
            .join("models")
            .join(name)
            .join(polytune::app::ranker::FILE);
        std::fs::write(&path, serde_json::to_string(&t.shipped()).unwrap()).unwrap();
        polytune::app::ranker::ship_fitted(path.parent().unwrap(), &t.shipped()).unwrap();
        let back = polytune::app::ranker::load(path.parent().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(back.table.rows.len(), t.rows.len());
        assert!(back.fitted.is_some(), "the fitted ranker is current");
    }
}

#[test]
#[ignore = "minutes in release: computes 8,000 variants' features and 30 folds per feature set"]
fn the_variant_ranker_on_the_shipped_dataset() {
    let root = common::root();
    let store = Store::open_read_only(&root.join("models/dataset.sqlite")).unwrap();
    let dataset = |compiler| {
        Dataset::from_store(
            &store,
            &Selection {
                compiler,
                ..Selection::default()
            },
        )
        .unwrap()
    };
    let gcc_d = dataset(Family::Gcc);
    let cached = root.join("target/variant-table-gcc.json");
    let gcc: VariantTable = match std::fs::read_to_string(&cached) {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(_) => {
            // The dataset's machine (the Zen 3 guest), as the shipped
            // table records it: its caches and peaks, whatever this one's.
            let shipped = polytune::app::ranker::load(&root.join("models/gcc"))
                .unwrap()
                .expect("the shipped table")
                .table;
            let compiler = Compiler::detect(Family::Gcc, None).unwrap();
            let cache = tempfile::tempdir().unwrap();
            let corpus = root.join("polybench");
            let t0 = std::time::Instant::now();
            let t = table(
                &gcc_d,
                &Setup {
                    corpus: &corpus,
                    compiler: &compiler,
                    threads: 2,
                    cache: cache.path(),
                    measured_on: Some((shipped.caches, shipped.peaks.clone())),
                },
            )
            .unwrap();
            println!(
                "table: {} rows ({} skipped) x {} features in {:.0} s; peaks {:.1} GFLOP/s, {:.1} GB/s",
                t.rows.len(),
                t.skipped,
                t.names.len(),
                t0.elapsed().as_secs_f64(),
                t.peaks.flops / 1e9,
                t.peaks.bandwidth / 1e9
            );
            std::fs::write(&cached, serde_json::to_string(&t).unwrap()).unwrap();
            t
        }
    };
    let clang_d = dataset(Family::Clang);
    let clang = gcc.relabelled(&clang_d);
    let params = RankerParams::default();
    let mut results = Vec::new();
    for (name, t, d) in [("gcc", &gcc, &gcc_d), ("clang", &clang, &clang_d)] {
        let paper = t.rows_where(|r| r.config.is_paper());
        for (space, t) in [("paper", &paper), ("extended", t)] {
            for (set, keep) in [
                ("variant + roofline", t.select(|n| !n.starts_with("orig_"))),
                ("variant + roofline + counters", t.select(|_| true)),
            ] {
                let t0 = std::time::Instant::now();
                let e = leave_one_kernel_out(t, &params, &keep).unwrap();
                // The searches replay the shipped dataset (both spaces).
                if space == "extended" && set.ends_with("counters") {
                    search_with_the_ranker(
                        name,
                        t,
                        d,
                        &e.scores,
                        &["--strategies", "bo,diverse,multi-model"],
                    );
                }
                let r = Figures {
                    compiler: name,
                    space,
                    set,
                    rows: t.rows.len(),
                    features: keep.len(),
                    e,
                };
                println!("{} ({:.0} s)", r.markdown(), t0.elapsed().as_secs_f64());
                results.push(r);
            }
        }
    }
    println!("\n{}", Figures::HEADER);
    for r in &results {
        println!("{}", r.markdown());
    }
    // The ablations by feature group (5 more minutes) on request.
    if std::env::var_os("POLYTUNE_ABLATIONS").is_none() {
        assert!(gcc.rows.len() > 7000);
        return;
    }
    let groups: std::collections::BTreeSet<&str> =
        gcc.names.iter().map(|n| feature_group(n)).collect();
    for g in groups {
        let keep = gcc.select(|n| feature_group(n) != g);
        let e = leave_one_kernel_out(&gcc, &params, &keep).unwrap();
        println!(
            "gcc without {g}: median rho {:.3}, best-of-6 {:.3}",
            e.median_rank_correlation.unwrap_or(f64::NAN),
            e.mean_best_of_6
        );
    }
    assert!(gcc.rows.len() > 7000);
}

/// One leave-one-kernel-out evaluation: of which compiler's labels, over
/// which space's rows, with which features.
struct Figures {
    compiler: &'static str,
    space: &'static str,
    set: &'static str,
    rows: usize,
    features: usize,
    e: Evaluation,
}

impl Figures {
    const HEADER: &str = "| space | features | compiler | rows | median ρ | mean ρ | NDCG@6 | top-1 | best of 6 | best of 12 |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|";

    /// A row of the table under [`Figures::HEADER`].
    fn markdown(&self) -> String {
        format!(
            "| {} | {} ({}) | {} | {} | {}",
            self.space,
            self.set,
            self.features,
            self.compiler,
            self.rows,
            cells(&self.e)
        )
    }
}

/// An evaluation's figures as markdown cells: median and mean ρ, NDCG@6,
/// top-1, best of 6, best of 12.
fn cells(e: &Evaluation) -> String {
    format!(
        "{:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |",
        e.median_rank_correlation.unwrap_or(f64::NAN),
        e.mean_rank_correlation.unwrap_or(f64::NAN),
        e.median_ndcg6.unwrap_or(f64::NAN),
        e.mean_top1,
        e.mean_best_of_6,
        e.mean_best_of_12,
    )
}

/// The leave-one-out scores as the predictions of every model of
/// `simulate` (per kernel, the scores standardized and scaled by the
/// spread of the other kernels' log speedups, as predicted speedups),
/// then `simulate` of bo, diverse and multi-model with them.
fn search_with_the_ranker(
    name: &str,
    t: &VariantTable,
    d: &Dataset,
    scores: &[f64],
    strategies: &[&str],
) {
    use polytune::learn::Kind;
    let by: std::collections::HashMap<(String, String), usize> = t
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| ((t.kernels[r.kernel].clone(), r.config.to_string()), i))
        .collect();
    let mut per_kernel: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (i, r) in t.rows.iter().enumerate() {
        per_kernel.entry(r.kernel).or_default().push(i);
    }
    let spread = |rows: &[usize], f: &dyn Fn(usize) -> f64| {
        mean_sd(&rows.iter().map(|&i| f(i)).collect::<Vec<_>>())
    };
    let mut predicted_log = vec![0.0; t.rows.len()];
    for (&k, rows) in &per_kernel {
        // The scale: the other kernels' spread of log speedups.
        let others: Vec<f64> = per_kernel
            .iter()
            .filter(|(o, _)| **o != k)
            .map(|(_, r)| spread(r, &|i| t.rows[i].speedup.ln()).1)
            .collect();
        let scale = others.iter().sum::<f64>() / others.len() as f64;
        let (m, s) = spread(rows, &|i| scores[i]);
        for &i in rows {
            predicted_log[i] = if s > 0.0 {
                (scores[i] - m) / s * scale
            } else {
                0.0
            };
        }
    }
    let column: Vec<f64> = d
        .rows
        .iter()
        .map(|r| {
            let i = by[&(d.kernels[r.kernel].name.clone(), r.config.to_string())];
            predicted_log[i].exp()
        })
        .collect();
    let kinds = Kind::ALL.to_vec();
    let predicted = vec![column; kinds.len()];
    let file = common::root().join(format!("target/variant-predictions-{name}.csv"));
    std::fs::write(
        &file,
        polytune::learn::evaluate::predictions_csv(d, &kinds, &predicted),
    )
    .unwrap();
    let db = common::root().join("models/dataset.sqlite");
    let mut args = vec![
        "simulate",
        "--db",
        db.to_str().unwrap(),
        "--compiler",
        name,
        "--predictions",
        file.to_str().unwrap(),
        "--min-ei",
        "0",
        "-q",
    ];
    args.extend(strategies);
    let out = common::polytune(&args);
    assert!(out.status.success(), "{out:?}");
    println!(
        "{name}: simulate with the ranker's scores as every model's prediction:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The ranker's settings compared on the shipped tables (the features
/// `optimize` ranks with, models/<compiler>/variants.json; nothing
/// computed), leave one kernel out, both compilers: the figures of each
/// setting and, for the first, each kernel's share of Opt in 6 picks.
/// A minute or two per setting (release):
///
///     cargo test --release --test variant_rank ranker_settings -- --ignored --nocapture
///
/// `POLYTUNE_SETTINGS=A,B` runs some settings; `POLYTUNE_TABLES=DIR` a
/// trial table; `POLYTUNE_SEARCH=1` replays `bo` with the first one's
/// scores; `POLYTUNE_BLEND=NAME:W` blends a log-time column into the
/// scores instead of learning from it; `POLYTUNE_SHOW=KERNEL` lists a
/// kernel's picks; `POLYTUNE_LABELS=DB` has the folds learn DB's
/// speedups (`--labels`); `POLYTUNE_UCB=K1,K2` replays `bo` with the
/// settings run taken as draws, scored by their mean plus K times their
/// spread ([`optimistic`]).
#[test]
#[ignore = "minutes in release: 30 folds per setting and compiler"]
fn ranker_settings_on_the_shipped_tables() {
    let root = common::root();
    let base = RankerParams::default();
    let settings: Vec<(&str, RankerParams)> = vec![
        ("default", base.clone()),
        (
            "truncation 12",
            RankerParams {
                truncation: Some(12),
                ..base.clone()
            },
        ),
        (
            "relevance 10",
            RankerParams {
                relevance_levels: 10.0,
                ..base.clone()
            },
        ),
        (
            "relevance 31",
            RankerParams {
                relevance_levels: 31.0,
                ..base.clone()
            },
        ),
        (
            "colsample 0.5",
            RankerParams {
                colsample: 0.5,
                ..base.clone()
            },
        ),
        (
            "subsample 0.8",
            RankerParams {
                subsample: 0.8,
                ..base.clone()
            },
        ),
        (
            "400 trees lr 0.05",
            RankerParams {
                trees: 400,
                learning_rate: 0.05,
                ..base.clone()
            },
        ),
        (
            "depth 4",
            RankerParams {
                depth: 4,
                ..base.clone()
            },
        ),
        (
            "depth 8 min_leaf 20",
            RankerParams {
                depth: 8,
                min_leaf: 20,
                ..base.clone()
            },
        ),
        (
            "l2 1",
            RankerParams {
                l2: 1.0,
                ..base.clone()
            },
        ),
        (
            "bags 5 subsample 0.8",
            RankerParams {
                bags: 5,
                subsample: 0.8,
                ..base.clone()
            },
        ),
        (
            "bags 5 subsample 0.8 colsample 0.7",
            RankerParams {
                bags: 5,
                subsample: 0.8,
                colsample: 0.7,
                ..base.clone()
            },
        ),
        (
            "bags 10 subsample 0.7 colsample 0.7 100 trees",
            RankerParams {
                bags: 10,
                trees: 100,
                subsample: 0.7,
                colsample: 0.7,
                ..base.clone()
            },
        ),
    ];
    // The spread of a fit's figures from its draws alone: one chain on
    // 80% of the kernels per tree, ten seeds (`subsample 0.8` is seed 1).
    let settings: Vec<(String, RankerParams)> = settings
        .into_iter()
        .map(|(n, p)| (n.to_string(), p))
        .chain((2..=10).map(|seed| {
            (
                format!("subsample 0.8 seed {seed}"),
                RankerParams {
                    subsample: 0.8,
                    seed,
                    ..base.clone()
                },
            )
        }))
        .collect();
    let only: Option<Vec<String>> = std::env::var("POLYTUNE_SETTINGS")
        .ok()
        .map(|s| s.split(',').map(str::to_string).collect());
    // `POLYTUNE_TABLES=DIR` reads DIR/<compiler>/variants.json instead of
    // the shipped tables: a table with a feature added, for a trial (its
    // names are not this polytune's, so it is read as it is).
    let trial = std::env::var_os("POLYTUNE_TABLES").map(std::path::PathBuf::from);
    for compiler in ["gcc", "clang"] {
        let t: VariantTable = match &trial {
            Some(dir) => serde_json::from_str(
                &std::fs::read_to_string(dir.join(compiler).join(polytune::app::ranker::FILE))
                    .unwrap(),
            )
            .unwrap(),
            None => {
                polytune::app::ranker::load(&root.join("models").join(compiler))
                    .unwrap()
                    .unwrap()
                    .table
            }
        };
        // `POLYTUNE_BLEND=NAME:W`: the column NAME (a log time: lower is
        // faster) is not a feature; the scores become, per kernel, the
        // ranker's z-score minus W times the column's.
        let blend: Option<(usize, f64)> = std::env::var("POLYTUNE_BLEND").ok().map(|b| {
            let (name, w) = b.split_once(':').expect("NAME:W");
            let i = t.names.iter().position(|n| n == name).expect("a column");
            (i, w.parse().expect("a weight"))
        });
        let keep: Vec<usize> = (0..t.names.len())
            .filter(|&i| blend.is_none_or(|(b, _)| b != i))
            .collect();
        // `POLYTUNE_LABELS=DB`: the folds learn DB's speedups (`--labels`).
        let labels: Option<Dataset> = std::env::var_os("POLYTUNE_LABELS").map(|db| {
            let family = if compiler == "gcc" {
                Family::Gcc
            } else {
                Family::Clang
            };
            let selection = Selection {
                compiler: family,
                ..Selection::default()
            };
            Dataset::from_store(&Store::open_read_only(db.as_ref()).unwrap(), &selection).unwrap()
        });
        let chosen = settings
            .iter()
            .filter(|(name, _)| only.as_ref().is_none_or(|o| o.iter().any(|s| s == name)));
        let mut every: Vec<Vec<f64>> = Vec::new();
        for (k, (name, p)) in chosen.enumerate() {
            let t0 = std::time::Instant::now();
            let folds = polytune::app::variants::Folds {
                labels: labels.as_ref(),
                ..Default::default()
            };
            let mut e =
                polytune::app::variants::leave_one_kernel_out_from(&t, p, &keep, folds).unwrap();
            if let Some((col, w)) = blend {
                blended(&t, &mut e, col, w);
            }
            // | compiler | setting | median ρ | mean ρ | NDCG@6 | top-1 | best of 6 | best of 12 |
            println!(
                "| {compiler} | {name} | {} ({:.0} s)",
                cells(&e),
                t0.elapsed().as_secs_f64()
            );
            if let Ok(show) = std::env::var("POLYTUNE_SHOW") {
                for kernel in show.split(',') {
                    show_kernel(&t, &e.scores, kernel);
                }
            }
            // `POLYTUNE_SEARCH=1`: the first setting's (of those run) scores as
            // `optimize` sees them (the ranker the one model, `bo`'s
            // `ranker` design), replayed on the shipped dataset.
            if k == 0 && std::env::var_os("POLYTUNE_SEARCH").is_some() {
                replay_as_optimize(compiler, &t, &e.scores);
            }
            // `POLYTUNE_SCORES=FILE`: the first setting's scores, in the
            // table's row order, as JSON (for a search tried elsewhere).
            if let (0, Ok(f)) = (k, std::env::var("POLYTUNE_SCORES")) {
                std::fs::write(
                    f.replace("{compiler}", compiler),
                    serde_json::to_string(&e.scores).unwrap(),
                )
                .unwrap();
            }
            if k == 0 && std::env::var_os("POLYTUNE_RANKS").is_some() {
                places_of_the_fastest(&t, &e.scores);
            }
            if k == 0 {
                let mut ks: Vec<_> = e.kernels.iter().collect();
                ks.sort_by(|a, b| a.best_of_6.total_cmp(&b.best_of_6));
                for h in ks.iter().take(10) {
                    println!(
                        "    {:<16} n={:<4} rho {:>6.3} top1 {:.3} best6 {:.3} best12 {:.3}",
                        h.kernel,
                        h.variants,
                        h.rank_correlation.unwrap_or(f64::NAN),
                        h.top1,
                        h.best_of_6,
                        h.best_of_12
                    );
                }
            }
            assert!(e.median_rank_correlation.is_some());
            every.push(e.scores);
        }
        // `POLYTUNE_UCB=K1,K2`: the settings run as draws of one ranker;
        // per kernel each draw's scores standardized, then their mean plus
        // K times their spread across the draws (optimism where the draws
        // disagree), replayed as `optimize` would search with them.
        if let Ok(ks) = std::env::var("POLYTUNE_UCB") {
            for kappa in ks.split(',').map(|k| k.parse::<f64>().expect("a number")) {
                println!(
                    "{compiler}: mean + {kappa} x spread over {} draws",
                    every.len()
                );
                replay_as_optimize(compiler, &t, &optimistic(&t, &every, kappa));
            }
        }
    }
}

/// Per kernel, each draw's scores as z-scores; then the mean over the
/// draws plus `kappa` times their standard deviation, row by row.
fn optimistic(t: &VariantTable, draws: &[Vec<f64>], kappa: f64) -> Vec<f64> {
    let n = t.rows.len();
    let mut z = vec![vec![0.0; n]; draws.len()];
    for k in 0..t.kernels.len() {
        let rows: Vec<usize> = (0..n).filter(|&i| t.rows[i].kernel == k).collect();
        for (d, s) in draws.iter().enumerate() {
            let (m, sd) = mean_sd(&rows.iter().map(|&i| s[i]).collect::<Vec<_>>());
            for &i in &rows {
                z[d][i] = if sd > 0.0 { (s[i] - m) / sd } else { 0.0 };
            }
        }
    }
    (0..n)
        .map(|i| {
            let (m, sd) = mean_sd(&z.iter().map(|d| d[i]).collect::<Vec<_>>());
            m + kappa * sd
        })
        .collect()
}

/// The mean and the (population) standard deviation of `v`.
fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (
        m,
        (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n).sqrt(),
    )
}

/// A kernel's six best-scored variants against its six fastest, with the
/// features that differ most between the two sets (standardized).
fn show_kernel(t: &polytune::app::variants::VariantTable, scores: &[f64], kernel: &str) {
    let Some(k) = t.kernels.iter().position(|n| n == kernel) else {
        return;
    };
    let (rows, by_score, by_speed) = kernel_orders(t, scores, k);
    for (what, list) in [("scored", &by_score), ("fastest", &by_speed)] {
        println!("  {kernel}: {what} first");
        for &i in list.iter().take(6) {
            println!(
                "    {:>8.3} {:>7.2}x  {}",
                scores[i], t.rows[i].speedup, t.rows[i].config
            );
        }
    }
    let n = t.names.len();
    let mut diffs: Vec<(f64, usize)> = (0..n)
        .map(|f| {
            let v: Vec<f64> = rows.iter().map(|&i| t.rows[i].x[f]).collect();
            let m = v.iter().sum::<f64>() / v.len() as f64;
            let sd = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
            let mean = |l: &[usize]| l.iter().take(6).map(|&i| t.rows[i].x[f]).sum::<f64>() / 6.0;
            let d = if sd > 0.0 {
                (mean(&by_speed) - mean(&by_score)) / sd
            } else {
                0.0
            };
            (d, f)
        })
        .collect();
    diffs.sort_by(|a, b| b.0.abs().total_cmp(&a.0.abs()));
    for (d, f) in diffs.iter().take(12) {
        let mean = |l: &[usize]| l.iter().take(6).map(|&i| t.rows[i].x[*f]).sum::<f64>() / 6.0;
        println!(
            "    {:<36} fastest {:>12.4} scored {:>12.4} ({:+.2} sd)",
            t.names[*f],
            mean(&by_speed),
            mean(&by_score),
            d
        );
    }
}

/// The ranker of one compiler trained on both compilers' labels of the
/// other kernels (each kernel and compiler its own group, the other
/// compiler's rows weighing `POLYTUNE_OTHER_WEIGHT`, 0.5 unless set),
/// leave one kernel out (both compilers' rows of the held-out kernel
/// left out), and `bo` replayed with its scores as `optimize` runs it.
/// A minute or two per compiler (release):
///
///     cargo test --release --test variant_rank both_compilers -- --ignored --nocapture
#[test]
#[ignore = "minutes in release: 30 folds of twice the rows per compiler"]
fn both_compilers_labels_on_the_shipped_tables() {
    use polytune::learn::rank::Ranker;
    use polytune::learn::rank::metrics::rank_correlation;
    use rayon::prelude::*;
    let root = common::root();
    let w: f64 = std::env::var("POLYTUNE_OTHER_WEIGHT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.5);
    let load = |c: &str| {
        polytune::app::ranker::load(&root.join("models").join(c))
            .unwrap()
            .unwrap()
            .table
    };
    let params = RankerParams::default();
    for (this, other) in [("gcc", "clang"), ("clang", "gcc")] {
        let (t, o) = (load(this), load(other));
        assert_eq!(t.kernels, o.kernels, "both tables list the kernels alike");
        let k = t.kernels.len();
        // Rows: this compiler's, then the other's (groups k + kernel).
        let rows: Vec<(usize, &polytune::app::variants::VariantRow, f64)> = t
            .rows
            .iter()
            .map(|r| (r.kernel, r, 1.0))
            .chain(o.rows.iter().map(|r| (k + r.kernel, r, w)))
            .collect();
        let folds: Vec<Vec<(usize, f64)>> = (0..k)
            .into_par_iter()
            .map(|h| {
                let train: Vec<_> = rows.iter().filter(|(g, _, _)| g % k != h).collect();
                let x: Vec<Vec<f64>> = train.iter().map(|(_, r, _)| r.x.clone()).collect();
                let g: Vec<usize> = train.iter().map(|(g, _, _)| *g).collect();
                let l: Vec<f64> = train.iter().map(|(_, r, _)| r.speedup.ln()).collect();
                let wt: Vec<f64> = train.iter().map(|(_, _, w)| *w).collect();
                let m = Ranker::fit(&params, &x, &g, &l, Some(&wt)).unwrap();
                (0..t.rows.len())
                    .filter(|&i| t.rows[i].kernel == h)
                    .map(|i| (i, m.score(&t.rows[i].x)))
                    .collect()
            })
            .collect();
        let mut scores = vec![f64::NAN; t.rows.len()];
        for (i, s) in folds.into_iter().flatten() {
            scores[i] = s;
        }
        let mut rhos: Vec<f64> = (0..k)
            .filter_map(|h| {
                let rows: Vec<usize> = (0..t.rows.len())
                    .filter(|&i| t.rows[i].kernel == h)
                    .collect();
                let s: Vec<f64> = rows.iter().map(|&i| scores[i]).collect();
                let l: Vec<f64> = rows.iter().map(|&i| t.rows[i].speedup).collect();
                rank_correlation(&s, &l)
            })
            .collect();
        rhos.sort_by(f64::total_cmp);
        println!(
            "| {this} | other compiler weighing {w} | median ρ {:.3} |",
            rhos[rhos.len() / 2]
        );
        replay_as_optimize(this, &t, &scores);
        assert!(rhos.len() == k);
    }
}

/// Per kernel, the scores' z-score minus `w` times column `col`'s (a log
/// time), and the evaluation's figures of the result.
fn blended(t: &VariantTable, e: &mut Evaluation, col: usize, w: f64) {
    use polytune::learn::rank::metrics::{ndcg_at, rank_correlation};
    let z = |v: &[f64]| -> Vec<f64> {
        let n = v.len() as f64;
        let m = v.iter().sum::<f64>() / n;
        let sd = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n).sqrt();
        v.iter()
            .map(|x| if sd > 0.0 { (x - m) / sd } else { 0.0 })
            .collect()
    };
    let mut rhos = Vec::new();
    let mut ndcgs = Vec::new();
    let (mut top1, mut b6, mut b12) = (0.0, 0.0, 0.0);
    for h in e.kernels.iter_mut() {
        let k = t.kernels.iter().position(|n| *n == h.kernel).unwrap();
        let rows: Vec<usize> = (0..t.rows.len())
            .filter(|&i| t.rows[i].kernel == k)
            .collect();
        let s = z(&rows.iter().map(|&i| e.scores[i]).collect::<Vec<_>>());
        let a = z(&rows.iter().map(|&i| t.rows[i].x[col]).collect::<Vec<_>>());
        let mixed: Vec<f64> = s.iter().zip(&a).map(|(s, a)| s - w * a).collect();
        for (&i, &v) in rows.iter().zip(&mixed) {
            e.scores[i] = v;
        }
        let l: Vec<f64> = rows.iter().map(|&i| t.rows[i].speedup.ln()).collect();
        let share = |n: usize| {
            let mut o: Vec<usize> = (0..l.len()).collect();
            o.sort_by(|&x, &y| mixed[y].total_cmp(&mixed[x]));
            let best = l.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (o.iter()
                .take(n)
                .map(|&i| l[i])
                .fold(f64::NEG_INFINITY, f64::max)
                - best)
                .exp()
        };
        h.rank_correlation = rank_correlation(&mixed, &l);
        h.top1 = share(1);
        h.best_of_6 = share(6);
        h.best_of_12 = share(12);
        rhos.extend(h.rank_correlation);
        ndcgs.extend(ndcg_at(&mixed, &l, 6, 5.0));
        top1 += h.top1;
        b6 += h.best_of_6;
        b12 += h.best_of_12;
    }
    let n = e.kernels.len() as f64;
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    e.mean_rank_correlation = Some(rhos.iter().sum::<f64>() / rhos.len() as f64);
    e.median_rank_correlation = median(&mut rhos);
    e.median_ndcg6 = median(&mut ndcgs);
    e.mean_top1 = top1 / n;
    e.mean_best_of_6 = b6 / n;
    e.mean_best_of_12 = b12 / n;
}

/// Per kernel: the places, in the order of `scores`, of its three
/// fastest variants, and how many variants it has.
fn places_of_the_fastest(t: &VariantTable, scores: &[f64]) {
    for (k, name) in t.kernels.iter().enumerate() {
        let (rows, by_score, by_speed) = kernel_orders(t, scores, k);
        let best = t.rows[by_speed[0]].speedup;
        let places: Vec<String> = by_speed
            .iter()
            .take(3)
            .map(|i| {
                format!(
                    "{} ({:.0}%)",
                    by_score.iter().position(|j| j == i).unwrap() + 1,
                    100.0 * t.rows[*i].speedup / best
                )
            })
            .collect();
        println!(
            "    {name:<16} n={:<4} fastest at {}",
            rows.len(),
            places.join(", ")
        );
    }
}

/// `bo` and `diverse` replayed on the shipped dataset of `compiler` with
/// `scores` (of `t`'s rows) as `optimize` sees them: the ranker the one
/// model, `bo`'s `ranker` design.
fn replay_as_optimize(compiler: &str, t: &VariantTable, scores: &[f64]) {
    let store = Store::open_read_only(&common::root().join("models/dataset.sqlite")).unwrap();
    let family = if compiler == "gcc" {
        Family::Gcc
    } else {
        Family::Clang
    };
    let d = Dataset::from_store(
        &store,
        &Selection {
            compiler: family,
            ..Selection::default()
        },
    )
    .unwrap();
    search_with_the_ranker(
        compiler,
        t,
        &d,
        scores,
        &[
            "--models",
            "m5p",
            "--strategies",
            "bo,diverse",
            "--bo-design",
            "ranker",
        ],
    );
}

/// Kernel `k`'s rows of `t`: in table order, best-scored first, fastest
/// first.
fn kernel_orders(
    t: &VariantTable,
    scores: &[f64],
    k: usize,
) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let rows: Vec<usize> = (0..t.rows.len())
        .filter(|&i| t.rows[i].kernel == k)
        .collect();
    let mut by_score = rows.clone();
    by_score.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let mut by_speed = rows.clone();
    by_speed.sort_by(|&a, &b| t.rows[b].speedup.total_cmp(&t.rows[a].speedup));
    (rows, by_score, by_speed)
}
