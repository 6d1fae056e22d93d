//! Unit tests of the variant table and the ranker's leave-one-out runs.

use super::*;

fn row(kernel: usize, config: &str, speedup: f64) -> VariantRow {
    VariantRow {
        kernel,
        config: config.parse().unwrap(),
        speedup,
        x: vec![speedup],
    }
}

#[test]
fn rows_where_keeps_the_rows_it_is_asked_for() {
    let t = VariantTable {
        names: vec!["f".into()],
        kernels: vec!["gemm".into(), "atax".into()],
        rows: vec![
            row(0, "000000000000", 1.0),
            row(0, "tile=64x1x1", 2.0),
            row(1, "000000000001", 3.0),
            row(1, "uj=4x2", 4.0),
        ],
        skipped: 5,
        caches: Caches::default(),
        peaks: Peaks::unit(),
    };
    let paper = t.rows_where(|r| r.config.is_paper());
    let speedups: Vec<f64> = paper.rows.iter().map(|r| r.speedup).collect();
    assert_eq!(speedups, [1.0, 3.0]);
    assert_eq!(paper.rows[1].kernel, 1);
    assert_eq!(
        (paper.names, paper.kernels),
        (t.names.clone(), t.kernels.clone())
    );
    assert_eq!(paper.skipped, 5);
    assert!(t.rows_where(|_| false).rows.is_empty());
    assert_eq!(t.rows_where(|_| true).rows.len(), 4);
}

/// A dataset of `kernels` kernels, each of the first `n` paper
/// configurations, kernel k's variant v at speedup
/// exp((v mod 7) · (k + 1) / 10), and its table: the feature `good`
/// is the log speedup scaled by the kernel (so the rankers of other
/// kernels order it rightly), `noise` a kernel-wide offset.
fn synthetic(kernels: usize, n: usize) -> (Dataset, VariantTable) {
    let configs: Vec<Config> = Config::all().into_iter().take(n).collect();
    let names: Vec<String> = (0..kernels).map(|k| format!("k{k}")).collect();
    let mut rows = Vec::new();
    let mut table = Vec::new();
    for k in 0..kernels {
        for (v, c) in configs.iter().enumerate() {
            let log = (v % 7) as f64 * (k + 1) as f64 / 10.0;
            rows.push(crate::learn::dataset::Row {
                kernel: k,
                variant_id: (k * n + v) as i64,
                config: *c,
                configs: 1,
                speedup: log.exp(),
                all_configs: Vec::new(),
            });
            table.push(VariantRow {
                kernel: k,
                config: *c,
                // Labels of another campaign: relabelled by `d`.
                speedup: 1.0,
                x: vec![log / (k + 1) as f64, k as f64],
            });
        }
    }
    let d = Dataset {
        selection: crate::learn::dataset::Selection::default(),
        machine: "m".into(),
        compiler: "cc".into(),
        flags: String::new(),
        feature_names: Vec::new(),
        kernels: names
            .iter()
            .map(|name| crate::learn::dataset::Kernel {
                name: name.clone(),
                features: Vec::new(),
                baseline_seconds: 1.0,
            })
            .collect(),
        rows,
        extended_names: Vec::new(),
        beyond_paper: 0,
    };
    let t = VariantTable {
        names: vec!["good".into(), "noise".into()],
        kernels: names,
        rows: table,
        skipped: 0,
        caches: Caches::default(),
        peaks: Peaks::unit(),
    };
    (d, t)
}

/// A table in the shipped form (no `orig_` counters) keeps its
/// features when relabelled; one with counters takes the dataset's.
#[test]
fn relabelling_swaps_the_counters_only_where_the_table_has_them() {
    let (mut d, t) = synthetic(2, 5);
    let r = t.relabelled(&d);
    assert_eq!(r.rows.len(), 10);
    assert_eq!(r.rows[3].x, t.rows[3].x);
    assert_eq!(r.rows[3].speedup, d.rows[3].speedup);
    let mut with = t.clone();
    with.names.push("orig_ipc".into());
    for row in &mut with.rows {
        row.x.push(9.0);
    }
    for k in &mut d.kernels {
        k.features = vec![0.5];
    }
    let r = with.relabelled(&d);
    assert_eq!(r.rows[3].x, [t.rows[3].x.clone(), vec![0.5]].concat());
}

/// The known answer: a feature that orders every kernel's variants
/// makes each held-out kernel's predictions follow its speedups; the
/// predictions' spread is the other kernels'; a variant the table
/// lacks gets its kernel's least prediction.
#[test]
fn leave_one_out_speedups_rank_each_kernel_as_the_others_teach() {
    let (mut d, mut t) = synthetic(4, 21);
    // Kernel 3's first variant is not in the table.
    let gone = t.rows.iter().position(|r| r.kernel == 3).unwrap();
    t.rows.remove(gone);
    let p = crate::learn::rank::RankerParams {
        trees: 40,
        depth: 3,
        min_leaf: 2,
        ..Default::default()
    };
    let l = t.leave_one_out_speedups(&d, &p, Folds::default()).unwrap();
    assert_eq!(l.unmatched, 1);
    assert_eq!(l.speedups.len(), d.rows.len());
    let rho = l.evaluation.median_rank_correlation.unwrap();
    assert!(rho > 0.95, "{rho}");
    for k in 0..4 {
        let rows: Vec<usize> = (0..d.rows.len())
            .filter(|&i| d.rows[i].kernel == k)
            .collect();
        let logs: Vec<f64> = rows.iter().map(|&i| l.speedups[i].ln()).collect();
        if k == 3 {
            let least = logs[1..].iter().copied().fold(0.0, f64::min);
            assert_eq!(logs[0], least);
            continue;
        }
        // The spread of the other kernels' log speedups, over the
        // table's rows (kernel 3 without its first variant).
        let sd = |k: usize| {
            let v: Vec<f64> = (0..21)
                .filter(|&j| k != 3 || j != 0)
                .map(|j| (j % 7) as f64 * (k + 1) as f64 / 10.0)
                .collect();
            let n = v.len() as f64;
            let m = v.iter().sum::<f64>() / n;
            (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n).sqrt()
        };
        let others = (0..4).filter(|&o| o != k).map(sd).sum::<f64>() / 3.0;
        let m = logs.iter().sum::<f64>() / logs.len() as f64;
        let got = (logs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / logs.len() as f64).sqrt();
        assert!(
            (got - others).abs() < 1e-9,
            "kernel {k}: {got} against {others}"
        );
    }
    // Nothing in common: a clear error.
    d.rows.iter_mut().for_each(|r| r.kernel = 0);
    d.kernels.truncate(1);
    d.kernels[0].name = "other".into();
    let e = t
        .leave_one_out_speedups(&d, &p, Folds::default())
        .unwrap_err();
    assert!(e.to_string().contains("none of the dataset's"), "{e}");
}

/// [`Folds::also`]: another program's runs teach every fold (enough of
/// them outweigh a misleading kernel of the table), except the fold of
/// the kernel they are namesakes of (`k0.c` a store's name of `k0`).
#[test]
fn other_programs_runs_teach_every_fold_but_their_namesakes() {
    let (d, mut t) = synthetic(2, 21);
    // Kernel k1 teaches the wrong direction: its faster variants have
    // the smaller `good` (over the same range, 0 to 0.6); `noise` is 0
    // everywhere, so that only `good` tells the kernels' rows apart.
    for r in t.rows.iter_mut().filter(|r| r.kernel == 1) {
        r.x = vec![0.6 - r.x[0], 0.0];
    }
    let p = crate::learn::rank::RankerParams {
        trees: 40,
        depth: 3,
        min_leaf: 2,
        ..Default::default()
    };
    let rho_of_k0 = |folds: Folds<'_>| {
        let l = t.leave_one_out_speedups(&d, &p, folds).unwrap();
        let e = l.evaluation;
        (
            e.kernels[0].rank_correlation.unwrap(),
            e.also_kernels,
            e.also_rows,
        )
    };
    let (alone, ..) = rho_of_k0(Folds::default());
    assert!(alone < -0.9, "{alone}");
    // A program of 13 runs whose `good` orders them rightly, each
    // weighing 100 of the table's.
    let rows: Vec<VariantRow> = (0..13)
        .map(|v| VariantRow {
            kernel: 0,
            config: Config::all()[v],
            speedup: (v as f64 / 5.0).exp(),
            x: vec![v as f64 / 20.0, 0.0],
        })
        .collect();
    let weight = vec![100.0; rows.len()];
    for (name, taught) in [("k9", true), ("k0", false), ("k0.c", false)] {
        let kernels = vec![name.to_string()];
        let also = Also {
            kernels: &kernels,
            rows: &rows,
            weight: &weight,
        };
        let (rho, k, n) = rho_of_k0(Folds {
            also: Some(also),
            ..Folds::default()
        });
        assert_eq!((k, n), (1, 13));
        if taught {
            assert!(rho > 0.8, "{name}: {rho}");
        } else {
            assert_eq!(rho, alone, "{name}");
        }
    }
}

/// [`Folds::labels`]: the folds learn each row's label from the
/// measurements given (where they have the row), and every held-out
/// kernel is still scored against the table's own labels.
#[test]
fn the_folds_learn_the_labels_given_and_are_scored_against_their_own() {
    let (d, t) = synthetic(3, 21);
    let p = crate::learn::rank::RankerParams {
        trees: 40,
        depth: 3,
        min_leaf: 2,
        ..Default::default()
    };
    let run = |labels: Option<&Dataset>| {
        let folds = Folds {
            labels,
            ..Folds::default()
        };
        t.leave_one_out_speedups(&d, &p, folds).unwrap().evaluation
    };
    let own = run(None);
    assert_eq!(own.relabelled, 0);
    let rho = |e: &Evaluation, k: usize| e.kernels[k].rank_correlation.unwrap();
    assert!(rho(&own, 0) > 0.9, "{}", rho(&own, 0));
    // The same measurements again: the same folds.
    let same = run(Some(&d));
    assert_eq!(same.relabelled, 63);
    assert_eq!(same.scores, own.scores);
    // Measured again the other way round: every fold learns that the
    // larger `good` is slower, and is scored against the rows' own
    // labels, which say the opposite.
    let mut inverted = d.clone();
    for r in &mut inverted.rows {
        r.speedup = 1.0 / r.speedup;
    }
    let learned = run(Some(&inverted));
    assert_eq!(learned.relabelled, 63);
    assert!(rho(&learned, 0) < -0.9, "{}", rho(&learned, 0));
    // A copy with only kernel k1's rows: the others keep their labels.
    inverted.rows.retain(|r| r.kernel == 1);
    assert_eq!(run(Some(&inverted)).relabelled, 21);
}
