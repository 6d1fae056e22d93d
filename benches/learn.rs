//! Leave-one-benchmark-out evaluation of all six models on a synthetic
//! dataset shaped like a campaign (30 kernels × 240 variants, 15
//! features + 12 bits), timed as whole runs: median of 3 (release build).
//!
//!     cargo bench --bench learn [-- --kernels 30 --variants 240 --runs 3
//!                                   --models LR,SVM,IBk,K*,M5P,MLP --oracles]
//!
//! `--oracles` also times linfa's SVR and k-d tree on the same fold (the
//! figures behind keeping our SVR and IBk; see their files).

use polytune::lab::runner::median;
use polytune::learn::dataset::Dataset;
use polytune::learn::evaluate::{Options, predictions};
use polytune::learn::{Kind, Regressor};
use std::time::Instant;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The models of `--models` (names as `evaluate --models` takes them),
/// all six by default.
fn models() -> Vec<Kind> {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--models") {
        Some(i) => args[i + 1]
            .split(',')
            .map(|m| Kind::parse(m).expect("a model name"))
            .collect(),
        None => Kind::ALL.to_vec(),
    }
}

fn main() {
    let kernels = arg("--kernels", 30);
    let variants = arg("--variants", 240);
    let runs = arg("--runs", 3);
    let opts = Options {
        models: models(),
        ..Options::default()
    };
    let d = Dataset::synthetic(kernels, variants, 15, 42);
    println!(
        "dataset: {} kernels, {} rows, {} attributes; {} threads",
        d.kernels.len(),
        d.rows.len(),
        d.attribute_names().len(),
        opts.threads
    );
    // Each model's share: one fold (train on all kernels but one).
    let x: Vec<Vec<f64>> = d
        .rows
        .iter()
        .filter(|r| r.kernel != 0)
        .map(|r| d.row_attributes(r))
        .collect();
    let y: Vec<f64> = d
        .rows
        .iter()
        .filter(|r| r.kernel != 0)
        .map(|r| r.speedup)
        .collect();
    for &kind in &opts.models {
        let t = Instant::now();
        let mut m = kind.model().expect("one of the six models");
        m.fit(&x, &y).expect("fit");
        let fit = t.elapsed().as_secs_f64();
        let t = Instant::now();
        for r in d.rows.iter().filter(|r| r.kernel == 0) {
            std::hint::black_box(m.predict(&d.row_attributes(r)));
        }
        println!(
            "  {:4} one fold: fit {:.3} s, predict {} rows {:.4} s",
            kind.name(),
            fit,
            variants,
            t.elapsed().as_secs_f64()
        );
    }
    if std::env::args().any(|a| a == "--oracles") {
        oracles(&x, &y, &d, variants);
    }
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        predictions(&d, &opts).expect("evaluation");
        times.push(t.elapsed().as_secs_f64());
    }
    // The lab's median (of two middle values, their mean); none of no run.
    let mid = if times.is_empty() {
        f64::NAN
    } else {
        median(&times)
    };
    println!(
        "whole leave-one-out, {} model(s): median {mid:.1} s over {runs} runs ({:?})",
        opts.models.len(),
        times.iter().map(|t| format!("{t:.1}")).collect::<Vec<_>>()
    );
}

/// linfa's ε-SVR (polynomial kernel on unit-length rows scaled to [0, 1],
/// what our normalized kernel computes) and linfa-nn's k-d tree (5
/// neighbours of every held-out row) on one fold.
fn oracles(x: &[Vec<f64>], y: &[f64], d: &Dataset, variants: usize) {
    use linfa::prelude::*;
    use linfa_nn::distance::L2Dist;
    use linfa_nn::{KdTree, NearestNeighbour};
    use polytune::learn::scale::{Range, TargetScale};
    let range = Range::fit(x, 0.0, 1.0);
    let target = TargetScale::fit(y, 0.0, 1.0);
    let unit = |r: &[f64]| {
        let q = range.row(r);
        let n = q.iter().map(|v| v * v).sum::<f64>().sqrt().max(1e-300);
        q.into_iter().map(|v| v / n).collect::<Vec<f64>>()
    };
    let cols = x[0].len();
    let rows: Vec<Vec<f64>> = x.iter().map(|r| unit(r)).collect();
    let a = ndarray::Array2::from_shape_fn((rows.len(), cols), |(i, j)| rows[i][j]);
    let z = ndarray::Array1::from_iter(y.iter().map(|&v| target.scale(v)));
    let t = Instant::now();
    let svr = linfa_svm::Svm::<f64, f64>::params()
        .c_svr(1.0, Some(1e-3))
        .polynomial_kernel(0.0, 8.0)
        .eps(1e-2)
        .fit(&DatasetBase::new(a, z))
        .expect("linfa fit");
    println!(
        "  linfa SVR one fold: fit {:.3} s",
        t.elapsed().as_secs_f64()
    );
    let held: Vec<Vec<f64>> = d
        .rows
        .iter()
        .filter(|r| r.kernel == 0)
        .map(|r| d.row_attributes(r))
        .collect();
    for r in &held {
        std::hint::black_box(svr.predict(ndarray::Array1::from(unit(r)).view()));
    }
    let scaled = range.rows(x);
    let b = ndarray::Array2::from_shape_fn((scaled.len(), cols), |(i, j)| scaled[i][j]);
    let t = Instant::now();
    let index = KdTree::new().from_batch(&b, L2Dist).expect("k-d tree");
    for r in &held {
        let q = ndarray::Array1::from(range.row(r));
        std::hint::black_box(index.k_nearest(q.view(), 5).expect("query"));
    }
    println!(
        "  linfa-nn k-d tree one fold: build and {} queries {:.4} s",
        variants,
        t.elapsed().as_secs_f64()
    );
}
