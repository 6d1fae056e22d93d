//! The ranking model of the variant on the shipped dataset (issue 38):
//! the features of every measured variant computed by the engine at its
//! kernel's parameter values, then leave-one-kernel-out with the ranker,
//! by feature set, both compilers. Minutes (release):
//!
//!     cargo test --release --test variant_rank -- --ignored --nocapture
//!
//! The table is kept in target/variant-table-gcc.json between runs
//! (delete it to compute it again).

mod common;

use polytune::app::variants::{Setup, VariantTable, feature_group, leave_one_kernel_out, table};
use polytune::lab::compiler::{Compiler, Family};
use polytune::lab::store::Store;
use polytune::learn::dataset::{Dataset, Selection};
use polytune::learn::rank::RankerParams;

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
    let clang = gcc.relabelled(&dataset(Family::Clang));
    let params = RankerParams::default();
    for (name, t) in [("gcc", &gcc), ("clang", &clang)] {
        let sets: Vec<(&str, Vec<usize>)> = vec![
            ("all", t.select(|_| true)),
            ("variant only", t.select(|n| !n.starts_with("orig_"))),
        ];
        for (set, keep) in sets {
            let t0 = std::time::Instant::now();
            let e = leave_one_kernel_out(t, &params, &keep).unwrap();
            println!(
                "{name} {set}: {} features, median rho {:.3} (mean {:.3}), NDCG@6 {:.3}, share of Opt top-1 {:.3} best-of-6 {:.3} best-of-12 {:.3} ({:.0} s)",
                keep.len(),
                e.median_rank_correlation.unwrap_or(f64::NAN),
                e.mean_rank_correlation.unwrap_or(f64::NAN),
                e.median_ndcg6.unwrap_or(f64::NAN),
                e.mean_top1,
                e.mean_best_of_6,
                e.mean_best_of_12,
                t0.elapsed().as_secs_f64()
            );
        }
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
