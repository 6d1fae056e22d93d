use super::evaluate::leave_one_kernel_out;
use super::metrics::{ndcg_at, rank_correlation, top1_share};
use super::*;
use crate::learn::dataset::Dataset;

/// Rows, group ids and labels of `groups` groups of `per` rows from
/// group `first` on: within a group the label rises with attribute 0
/// (monotone, not linear), but each group's offset falls with where its
/// attribute-0 values lie — by far more than the rise within it — and no
/// attribute tells the offset. Attributes 1 and 2 are noise.
fn simpson(first: usize, groups: usize, per: usize) -> (Vec<Vec<f64>>, Vec<usize>, Vec<f64>) {
    let mut rng = SplitMix64::new(first as u64 + 77);
    let (mut x, mut g, mut y) = (Vec::new(), Vec::new(), Vec::new());
    for k in first..first + groups {
        let c = 3.0 * rng.unit();
        for _ in 0..per {
            let u = rng.unit();
            x.push(vec![c + u, rng.unit(), rng.unit()]);
            g.push(k);
            y.push(-10.0 * c + u + u * u / 2.0);
        }
    }
    (x, g, y)
}

/// Per group of `g`: Spearman's ρ of the model's scores with the labels.
fn rhos(m: &Ranker, x: &[Vec<f64>], g: &[usize], y: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    let mut ids: Vec<usize> = g.to_vec();
    ids.dedup();
    for k in ids {
        let rows: Vec<usize> = (0..g.len()).filter(|&i| g[i] == k).collect();
        let s: Vec<f64> = rows.iter().map(|&i| m.score(&x[i])).collect();
        let l: Vec<f64> = rows.iter().map(|&i| y[i]).collect();
        out.push(rank_correlation(&s, &l).unwrap_or(0.0));
    }
    out
}

fn median(v: &[f64]) -> f64 {
    crate::lab::runner::median(v)
}

fn quick() -> RankerParams {
    RankerParams {
        trees: 100,
        depth: 3,
        learning_rate: 0.3,
        ..RankerParams::default()
    }
}

/// The known answer: on held-out groups the ranker orders rows by
/// attribute 0 (ρ ≈ 1), where a regressor of the raw label on the same
/// trees learns the groups' offsets and ranks them backwards.
#[test]
fn the_ranker_learns_the_order_within_groups_that_offsets_hide() {
    let (x, g, y) = simpson(0, 40, 20);
    let (tx, tg, ty) = simpson(1000, 15, 20);
    let mut medians = Vec::new();
    for objective in [
        Objective::LambdaRank,
        Objective::Pairwise,
        Objective::SquaredError,
    ] {
        let p = RankerParams {
            objective,
            ..quick()
        };
        let m = Ranker::fit(&p, &x, &g, &y, None).unwrap();
        assert_eq!(m.trees(), 100);
        let r = rhos(&m, &tx, &tg, &ty);
        medians.push(median(&r));
        if objective != Objective::SquaredError {
            assert!(median(&r) > 0.93, "{objective:?}: {r:?}");
            assert!(r.iter().all(|&v| v > 0.7), "{objective:?}: {r:?}");
        }
    }
    // LambdaRank, pairwise, squared error (scripts/lambdarank_oracle.py
    // gives LightGBM's on the same data).
    assert!(medians[2] < 0.0, "{medians:?}");
}

/// With a ranking loss, a constant added to a group's labels changes
/// nothing (only the order and spread within a group count).
#[test]
fn group_offsets_do_not_change_the_ranking_fit() {
    let (x, g, y) = simpson(0, 10, 15);
    let shifted: Vec<f64> = y
        .iter()
        .zip(&g)
        .map(|(v, &k)| v + 100.0 * k as f64)
        .collect();
    let a = Ranker::fit(&quick(), &x, &g, &y, None).unwrap();
    let b = Ranker::fit(&quick(), &x, &g, &shifted, None).unwrap();
    // Equal up to the rounding of the shifted labels.
    for r in &x {
        assert!((a.score(r) - b.score(r)).abs() < 1e-9);
    }
}

#[test]
fn a_seed_fixes_the_fit_and_another_seed_changes_it() {
    let (x, g, y) = simpson(0, 20, 15);
    let p = RankerParams {
        subsample: 0.6,
        colsample: 0.7,
        ..quick()
    };
    let a = Ranker::fit(&p, &x, &g, &y, None).unwrap();
    let b = Ranker::fit(&p, &x, &g, &y, None).unwrap();
    assert_eq!(a, b);
    let bits = |m: &Ranker| x.iter().map(|r| m.score(r).to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a), bits(&b));
    let c = Ranker::fit(&RankerParams { seed: 2, ..p }, &x, &g, &y, None).unwrap();
    assert_ne!(bits(&a), bits(&c));
}

/// The known answer of bagging: a fit of 3 chains scores the mean of 3
/// one-chain fits with the chains' seeds (the first is `seed` itself),
/// has their trees, and keeps ranking within groups.
#[test]
fn bags_average_chains_of_their_own_seeds() {
    let (x, g, y) = simpson(0, 20, 15);
    let p = RankerParams {
        subsample: 0.7,
        colsample: 0.7,
        ..quick()
    };
    let bagged = Ranker::fit(
        &RankerParams {
            bags: 3,
            ..p.clone()
        },
        &x,
        &g,
        &y,
        None,
    )
    .unwrap();
    assert_eq!(bagged.trees(), 300);
    let chains: Vec<Ranker> = (0..3u64)
        .map(|b| {
            let seed = p.seed.wrapping_add(b.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            Ranker::fit(&RankerParams { seed, ..p.clone() }, &x, &g, &y, None).unwrap()
        })
        .collect();
    assert_ne!(
        chains[0].scores(&x),
        chains[1].scores(&x),
        "the chains differ"
    );
    for r in &x {
        let mean = chains.iter().map(|c| c.score(r)).sum::<f64>() / 3.0;
        assert!((bagged.score(r) - mean).abs() < 1e-9 * mean.abs().max(1.0));
    }
    let (tx, tg, ty) = simpson(1000, 15, 20);
    let single = median(&rhos(&chains[0], &tx, &tg, &ty));
    let bag = median(&rhos(&bagged, &tx, &tg, &ty));
    assert!(
        bag > 0.7 && bag >= single - 0.02,
        "{bag} against one chain's {single}"
    );
    assert!(Ranker::fit(&RankerParams { bags: 0, ..p }, &x, &g, &y, None).is_err());
}

/// Groups and histograms are shared out among threads: one thread or
/// three learn the same trees, on enough rows and attributes for the
/// histograms to be built in parallel.
#[test]
fn the_fit_does_not_depend_on_the_threads() {
    let (x, g, y) = simpson(0, 30, 80);
    let mut rng = SplitMix64::new(5);
    let x: Vec<Vec<f64>> = x
        .into_iter()
        .map(|mut r| {
            r.extend((0..30).map(|_| rng.unit()));
            r
        })
        .collect();
    let p = RankerParams {
        trees: 8,
        subsample: 0.8,
        ..quick()
    };
    let fit = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| Ranker::fit(&p, &x, &g, &y, None).unwrap())
    };
    let one = fit(1);
    assert!(one.trees() == 8 && one.scores(&x).iter().any(|&s| s != 0.0));
    assert_eq!(one, fit(3));
}

/// Groups of two sources disagree: in the "shipped" ones the label rises
/// with attribute 0, in the "local" ones it falls. The more the local
/// rows weigh, the more the learned order follows them (LambdaRank less
/// sharply: the two sources' tops are at opposite ends of attribute 0,
/// and it fits each top first).
#[test]
fn weights_pull_the_fit_toward_the_heavier_rows() {
    let mut rng = SplitMix64::new(5);
    let (mut x, mut g, mut y, mut local) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for k in 0..30 {
        for _ in 0..12 {
            let u = rng.unit();
            x.push(vec![u, rng.unit()]);
            g.push(k);
            y.push(if k % 2 == 0 { u } else { -u });
            local.push(k % 2 == 1);
        }
    }
    let grid: Vec<Vec<f64>> = (0..50).map(|i| vec![i as f64 / 50.0, 0.5]).collect();
    let along = |objective, w_local: f64| {
        let w: Vec<f64> = local
            .iter()
            .map(|&l| if l { w_local } else { 1.0 })
            .collect();
        let p = RankerParams {
            objective,
            ..quick()
        };
        let m = Ranker::fit(&p, &x, &g, &y, Some(&w)).unwrap();
        let s = m.scores(&grid);
        rank_correlation(&s, &grid.iter().map(|r| r[0]).collect::<Vec<_>>()).unwrap()
    };
    for objective in [Objective::LambdaRank, Objective::Pairwise] {
        let rho: Vec<f64> = [0.0, 0.1, 1.0, 10.0, 100.0]
            .iter()
            .map(|&w| along(objective, w))
            .collect();
        // Rows of weight 0 are not learned from; the more the local rows
        // weigh, the more the fit follows them.
        assert!(rho[0] > 0.95, "{objective:?}: {rho:?}");
        assert!(
            rho.windows(2).all(|p| p[1] < p[0]),
            "{objective:?}: {rho:?}"
        );
        assert!(rho[4] < -0.5, "{objective:?}: {rho:?}");
    }
}

#[test]
fn a_ranker_round_trips_through_json() {
    let (x, g, y) = simpson(0, 10, 12);
    let m = Ranker::fit(&quick(), &x, &g, &y, None).unwrap();
    let back: Ranker = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert_eq!(back, m);
    for r in &x {
        assert_eq!(back.score(r).to_bits(), m.score(r).to_bits());
    }
}

#[test]
fn bad_input_is_refused() {
    let (x, g, y) = simpson(0, 3, 5);
    let p = quick();
    let err = |r: Result<Ranker, LearnError>| r.unwrap_err().to_string();
    assert!(err(Ranker::fit(&p, &x, &g[1..], &y, None)).contains("group ids"));
    assert!(err(Ranker::fit(&p, &x, &g, &y, Some(&[1.0; 3]))).contains("weights"));
    let neg: Vec<f64> = (0..15).map(|i| if i == 4 { -1.0 } else { 1.0 }).collect();
    assert!(err(Ranker::fit(&p, &x, &g, &y, Some(&neg))).contains("non-negative"));
    assert!(err(Ranker::fit(&p, &x, &g, &y, Some(&[0.0; 15]))).contains("not all zero"));
    let d0 = RankerParams {
        depth: 0,
        ..quick()
    };
    assert!(err(Ranker::fit(&d0, &x, &g, &y, None)).contains("depth"));
    let s = RankerParams {
        subsample: 0.0,
        ..quick()
    };
    assert!(err(Ranker::fit(&s, &x, &g, &y, None)).contains("subsample"));
    let mut ragged = x.clone();
    ragged[3].pop();
    assert!(err(Ranker::fit(&p, &ragged, &g, &y, None)).contains("row 3"));
    assert!(err(Ranker::fit(&p, &[], &[], &[], None)).contains("no training rows"));
}

/// Leave-one-kernel-out on a synthetic campaign: every kernel scored,
/// the same whatever the threads, and better than chance.
#[test]
fn leave_one_kernel_out_scores_every_kernel() {
    let d = Dataset::synthetic(6, 40, 5, 3);
    let p = RankerParams {
        trees: 40,
        ..RankerParams::default()
    };
    let one = leave_one_kernel_out(&d, &p, 5, 1).unwrap();
    let two = leave_one_kernel_out(&d, &p, 5, 2).unwrap();
    assert_eq!(one.kernels, two.kernels);
    assert_eq!(one.kernels.len(), 6);
    assert!(
        one.kernels
            .iter()
            .all(|k| k.variants == 40 && k.top1 > 0.0 && k.top1 <= 1.0)
    );
    let rho = one.median_rank_correlation.unwrap();
    assert!(rho > 0.5, "{rho}");
    let ndcg = one.median_ndcg.unwrap();
    assert!(ndcg > 0.0 && ndcg <= 1.0, "{ndcg}");
    assert!(one.geomean_top1 <= one.mean_top1);
    let mut single = d.clone();
    single.rows.retain(|r| r.kernel == 0);
    assert!(leave_one_kernel_out(&single, &p, 5, 1).is_err());
}

#[test]
fn metrics_of_a_perfect_and_a_reversed_ranking() {
    let y = [0.1, 0.5, 0.2, 0.9];
    let rev: Vec<f64> = y.iter().map(|v| -v).collect();
    assert_eq!(ndcg_at(&y, &y, 4, 5.0), Some(1.0));
    assert!(ndcg_at(&rev, &y, 4, 5.0).unwrap() < 0.5);
    assert_eq!(top1_share(&y, &y), Some(1.0));
    assert!((top1_share(&rev, &y).unwrap() - (0.1f64 - 0.9).exp()).abs() < 1e-12);
}

#[test]
fn calibration_standardizes_a_group_to_the_training_spread() {
    // Groups 0 (labels 0, 2: sd 1) and 1 (labels 1, 1, 4, 4: sd 1.5).
    let spread = group_spread(&[0, 0, 1, 1, 1, 1], &[0.0, 2.0, 1.0, 1.0, 4.0, 4.0]);
    assert!((spread - 1.25).abs() < 1e-12, "{spread}");
    let c = calibrated(&[10.0, 20.0, 30.0], 2.0);
    let sd = (200.0f64 / 3.0).sqrt();
    assert!((c[0] + 10.0 / sd * 2.0).abs() < 1e-12 && c[1].abs() < 1e-12);
    assert!((c[2] - 10.0 / sd * 2.0).abs() < 1e-12);
    assert_eq!(calibrated(&[3.0, 3.0], 2.0), vec![0.0, 0.0]);
}
