//! The ranker's baseline before variant features (issue 38):
//! leave-one-kernel-out on the shipped dataset, both compilers, the
//! attributes the six models see (the original's counters and the
//! configuration). Today's six-model ensemble ranks at a median ρ of
//! 0.25 with either compiler (`simulate`).
//!
//!     cargo test --release --test rank -- --ignored --nocapture

use polytune::lab::compiler::Family;
use polytune::lab::store::Store;
use polytune::learn::dataset::{Dataset, Selection};
use polytune::learn::rank::RankerParams;
use polytune::learn::rank::evaluate::leave_one_kernel_out;
use std::path::Path;

#[test]
#[ignore]
fn shipped_dataset_leave_one_kernel_out() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/dataset.sqlite");
    let store = Store::open_read_only(&path).unwrap();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    for compiler in [Family::Gcc, Family::Clang] {
        let sel = Selection {
            compiler,
            ..Selection::default()
        };
        let d = Dataset::from_store(&store, &sel).unwrap();
        let p = RankerParams::default();
        let t = std::time::Instant::now();
        let e = leave_one_kernel_out(&d, &p, 10, threads).unwrap();
        println!(
            "{} {:?}: {} rows x {} attributes, {} folds in {:.1} s: median rho {:.3}, median NDCG@10 {:.3}, top-1 share mean {:.3} geomean {:.3}",
            compiler.as_str(),
            p.objective,
            d.rows.len(),
            d.attribute_names().len(),
            e.kernels.len(),
            t.elapsed().as_secs_f64(),
            e.median_rank_correlation.unwrap_or(f64::NAN),
            e.median_ndcg.unwrap_or(f64::NAN),
            e.mean_top1,
            e.geomean_top1
        );
        assert_eq!(e.kernels.len(), 30);
        assert!(e.kernels.iter().all(|k| k.top1 > 0.0 && k.top1 <= 1.0));
        assert!(e.median_rank_correlation.is_some());
    }
}
