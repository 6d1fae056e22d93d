//! Training time of the ranker (`learn::rank`) on rows shaped like a
//! campaign with variant features: groups (kernels) of variants, a few
//! dozen attributes, the label a log speedup. Median of `--runs` whole
//! fits (release build).
//!
//!     cargo bench --bench rank [-- --rows 10000 --attributes 60
//!                                  --groups 40 --runs 3 --trees 200]
//!
//! The shipped dataset's shape: `-- --rows 7700 --attributes 35 --groups
//! 30`; on one core: `taskset -c 0` before the bench's executable.

use polytune::lab::rng::SplitMix64;
use polytune::lab::runner::median;
use polytune::learn::rank::{Objective, Ranker, RankerParams};
use std::time::Instant;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let (n, d, groups, runs) = (
        arg("--rows", 10_000),
        arg("--attributes", 60),
        arg("--groups", 40),
        arg("--runs", 3),
    );
    let mut rng = SplitMix64::new(7);
    let x: Vec<Vec<f64>> = (0..n)
        .map(|_| (0..d).map(|_| rng.unit()).collect())
        .collect();
    let g: Vec<usize> = (0..n).map(|i| i * groups / n).collect();
    // A few attributes and an interaction decide the order, plus noise.
    let y: Vec<f64> = x
        .iter()
        .map(|r| r[0] - 0.5 * r[1] + r[2] * r[3] + 0.2 * (rng.unit() - 0.5))
        .collect();
    println!(
        "{n} rows x {d} attributes in {groups} groups (~{} rows each)",
        n / groups.max(1)
    );
    for objective in [
        Objective::LambdaRank,
        Objective::Pairwise,
        Objective::SquaredError,
    ] {
        let p = RankerParams {
            objective,
            trees: arg("--trees", 200),
            ..RankerParams::default()
        };
        let mut secs = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            let m = Ranker::fit(&p, &x, &g, &y, None).expect("a fit");
            secs.push(t.elapsed().as_secs_f64());
            std::hint::black_box(m.score(&x[0]));
        }
        println!(
            "{objective:?}, {} trees of depth {}: median {:.2} s (min {:.2} s)",
            p.trees,
            p.depth,
            median(&secs),
            secs.iter().copied().fold(f64::INFINITY, f64::min)
        );
    }
}
