//! Unit tests of the comparison's report and its ranker per kernel.

use super::*;

fn kernel(base: Option<f64>, speedups: &[Option<f64>]) -> Kernel {
    Kernel {
        kernel: "k".into(),
        file: PathBuf::from("k.c"),
        baseline_seconds: base,
        choice: None,
        selection: None,
        entries: speedups
            .iter()
            .map(|&s| Entry {
                contender: "c".into(),
                verdict: if s.is_some() {
                    Verdict::Ok
                } else {
                    Verdict::WrongOutput
                },
                detail: String::new(),
                samples: Vec::new(),
                seconds: s.map(|s| 1.0 / s),
                speedup: s,
            })
            .collect(),
    }
}

#[test]
fn a_failed_build_counts_as_the_baseline_in_the_mean() {
    let ks = [
        kernel(Some(1.0), &[Some(1.0), Some(4.0)]),
        kernel(Some(1.0), &[Some(1.0), None]),
        // Left out: its baseline did not run.
        kernel(None, &[None, Some(100.0)]),
    ];
    assert_eq!(geomean(&ks, 0), Some(1.0));
    assert!((geomean(&ks, 1).unwrap() - 2.0).abs() < 1e-12);
    assert_eq!(geomean(&ks[2..], 1), None);
}

/// Without clang, or with flags a compiler refuses, a contender is
/// "not available" with the reason, and the others stay.
#[test]
fn a_contender_this_machine_cannot_build_is_not_available() {
    let Ok(gcc) = Compiler::detect(crate::lab::compiler::Family::Gcc, None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut setup = Setup {
        gcc: gcc.clone(),
        clang: Err("not found on PATH".into()),
        select: select::Setup {
            recipe: crate::lab::build::Recipe::new(gcc.clone(), std::path::Path::new("k.c")),
            tolerance: crate::lab::dump::Tolerance::default(),
            compiler: gcc.clone(),
            size: crate::lab::size::Size::Mini,
            protocol: Protocol::default(),
            strategy: select::Strategy::MultiModel,
            shots: 1,
            refine: 0,
            time_budget: None,
            min_ei: None,
            draws: None,
            no_run: false,
            decision: crate::lab::decide::Rule::default(),
            bound: crate::lab::characterize::Bound::default(),
            ranker: None,
            store: None,
        },
        models: Models::Fixed(Vec::new(), None),
        size: crate::lab::size::Size::Mini,
        include: Vec::new(),
        protocol: Protocol::default(),
        rounds: 1,
    };
    let p = plans(&setup, dir.path());
    let names: Vec<&str> = p.iter().map(|p| p.info.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "gcc -O3",
            "graphite",
            "graphite-par",
            "polly",
            "polly-par",
            "polytune"
        ]
    );
    for p in &p[3..5] {
        assert!(!p.info.available && p.compiler.is_none());
        assert_eq!(p.info.detail, "not found on PATH");
    }
    assert!(p[0].info.available && p[5].info.available && p[5].learned);
    setup.gcc.flags.push("-fno-such-option-anywhere".into());
    let p = plans(&setup, dir.path());
    assert!(!p[0].info.available);
    assert!(
        p[0].info.detail.contains("no-such-option"),
        "{}",
        p[0].info.detail
    );
}

#[test]
fn verdicts_read_as_in_the_json() {
    assert_eq!(Verdict::of(Status::WrongOutput).as_str(), "wrong-output");
    assert_eq!(
        serde_json::to_value(Verdict::NotAvailable).unwrap(),
        "not-available"
    );
}

#[test]
fn the_variant_ranker_leaves_the_kernel_out_with_the_models() {
    use crate::app::ranker::Shipped;
    use crate::app::variants::{VariantRow, VariantTable};
    let row = |kernel, speedup| VariantRow {
        kernel,
        config: Default::default(),
        speedup,
        x: vec![speedup],
    };
    let shipped = std::sync::Arc::new(Shipped {
        table: VariantTable {
            names: vec!["f".into()],
            kernels: vec!["gemm".into(), "atax".into()],
            rows: vec![row(0, 1.0), row(1, 2.0), row(1, 3.0)],
            skipped: 0,
            caches: Default::default(),
            peaks: crate::lab::machine::Peaks::unit(),
        },
        fitted: None,
    });
    // Fixed models: the ranker as shipped.
    let same = ranker_for(false, Some(shipped.clone()), "atax").unwrap();
    assert!(std::sync::Arc::ptr_eq(&same, &shipped));
    // Models trained without atax: the ranker too.
    let without = ranker_for(true, Some(shipped.clone()), "atax").unwrap();
    let speedups: Vec<f64> = without.table.rows.iter().map(|r| r.speedup).collect();
    assert_eq!(speedups, [1.0]);
    assert!(without.fitted.is_none(), "refitted, not the shipped fit");
    // A kernel the table does not have: as shipped.
    let other = ranker_for(true, Some(shipped.clone()), "mvt").unwrap();
    assert!(std::sync::Arc::ptr_eq(&other, &shipped));
    assert!(ranker_for(true, None, "atax").is_none());
}
