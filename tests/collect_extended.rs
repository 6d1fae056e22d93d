//! A sampled campaign of the extended space end to end: `collect --space
//! extended --sample 3` on one small kernel at MINI size with gcc stores
//! the drawn configurations beyond the paper's space (in readable form),
//! verifies and times their variants, resumes as a no-op, and `export`
//! reads them back.

mod common;

use common::root;
use polytune::lab::store::Store;
use polytune::lab::verify::Status;
use std::process::Command;

fn polytune() -> Command {
    Command::new(env!("CARGO_BIN_EXE_polytune"))
}

#[test]
fn a_sample_of_the_extended_space_is_measured_stored_and_exported() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.sqlite");
    let kernel = root().join("polybench/linear-algebra/gemm.c");
    let run = || {
        polytune()
            .args([
                "collect",
                "--size",
                "mini",
                "--compiler",
                "gcc",
                "--max-variants",
                "1",
                "--runs",
                "1",
                "--space",
                "extended",
                "--sample",
                "3",
                "--seed",
                "7",
                "--db",
            ])
            .arg(&db)
            .arg(&kernel)
            .output()
            .unwrap()
    };
    let out = run();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("gemm: 3 configurations drawn from the extended space"),
        "{stderr}"
    );
    let store = Store::open_read_only(&db).unwrap();
    assert_eq!(store.meta("schema_version").unwrap().as_deref(), Some("3"));
    let rows = store.measured().unwrap();
    let beyond: Vec<_> = rows
        .iter()
        .filter(|m| m.configs.iter().any(|c| !c.is_paper()))
        .collect();
    let drawn: usize = beyond
        .iter()
        .map(|m| m.configs.iter().filter(|c| !c.is_paper()).count())
        .sum();
    // Every draw is stored with a variant, and those only draws produce
    // are measured: verified against the original, and timed.
    assert_eq!(drawn, 3, "{rows:#?}");
    let only_beyond: Vec<_> = beyond
        .iter()
        .filter(|m| m.configs.iter().all(|c| !c.is_paper()))
        .collect();
    assert!(!only_beyond.is_empty(), "{rows:#?}");
    for m in &only_beyond {
        assert_eq!(m.status, Status::Ok, "{m:?}");
        assert!(m.median.is_some() && m.baseline.is_some(), "{m:?}");
    }
    let measured = rows.len();
    drop(store);
    // Resumed: the same draws, nothing measured again.
    let again = run();
    assert!(again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stdout)
            .contains(&format!("0 measured, {measured} already stored")),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
    // The export names the configurations beyond the paper's space in
    // readable form (quoted: it has commas).
    let csv = polytune()
        .args(["export", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(csv.status.success());
    let text = String::from_utf8_lossy(&csv.stdout);
    assert_eq!(text.lines().count(), measured + 1, "{text}");
    let readable: Vec<&str> = text.lines().filter(|l| l.contains(",\"fuse=")).collect();
    assert_eq!(readable.len(), only_beyond.len(), "{text}");
    for l in readable {
        let config = l.split('"').nth(1).unwrap();
        let c: polytune::config::Config = config.parse().unwrap();
        assert!(!c.is_paper(), "{l}");
        assert!(l.contains(",ok,"), "{l}");
    }
}

/// The flags go together: a sample needs the extended space, and the
/// extended space a sample size.
#[test]
fn space_and_sample_go_together() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.sqlite");
    let kernel = root().join("polybench/linear-algebra/gemm.c");
    for (args, says) in [
        (&["--sample", "3"][..], "give --space extended with it"),
        (&["--space", "extended"][..], "give its size, --sample N"),
        (
            &["--space", "extended", "--sample", "999999999"][..],
            "beyond the paper's",
        ),
    ] {
        let out = polytune()
            .arg("collect")
            .args(args)
            .arg("--db")
            .arg(&db)
            .arg(&kernel)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert!(!db.exists(), "nothing was created");
}

/// The models learn what a sampled campaign measured beyond the paper's
/// space: its variants are rows with the typed attributes of their
/// fields, the model files name those attributes, and the leave-one-out
/// predictions (their configurations quoted in readable form) are read
/// back by `simulate`.
#[test]
fn models_learn_the_extended_sample_through_typed_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.sqlite");
    let k = |p: &str| root().join(p);
    let out = polytune()
        .args([
            "collect",
            "--size",
            "mini",
            "--compiler",
            "gcc",
            "--max-variants",
            "3",
            "--runs",
            "1",
            "--space",
            "extended",
            "--sample",
            "4",
            "--db",
        ])
        .arg(&db)
        .arg(k("polybench/linear-algebra/gemm.c"))
        .arg(k("polybench/linear-algebra/atax.c"))
        .arg(k("polybench/stencils/jacobi-1d-imper.c"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let models = dir.path().join("models");
    let train = polytune()
        .args(["train", "--size", "mini", "--models", "LR,IBk,M5P", "--db"])
        .arg(&db)
        .arg("-o")
        .arg(&models)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&train.stderr);
    assert!(train.status.success(), "{stderr}");
    assert!(stderr.contains("beyond the paper's space"), "{stderr}");
    let lr: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(models.join("lr.json")).unwrap()).unwrap();
    let ext: Vec<&str> = lr["extended"]
        .as_array()
        .expect("the model names its typed attributes")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(!ext.is_empty());
    for name in &ext {
        assert!(
            polytune::config::EXTENDED_ATTRIBUTES.contains(name),
            "{name}"
        );
    }
    let csv = dir.path().join("p.csv");
    let eval = polytune()
        .args([
            "evaluate", "--size", "mini", "--models", "LR,IBk", "--format", "json", "--db",
        ])
        .arg(&db)
        .arg("--predictions")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        eval.status.success(),
        "{}",
        String::from_utf8_lossy(&eval.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let beyond = text.lines().filter(|l| l.contains(",\"fuse=")).count();
    assert!(beyond > 0, "{text}");
    let sim = polytune()
        .args([
            "simulate",
            "--size",
            "mini",
            "--models",
            "LR,IBk",
            "--strategies",
            "multi-model,bo",
            "--budget",
            "4",
            "--seeds",
            "2",
            "--db",
        ])
        .arg(&db)
        .arg("--predictions")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        sim.status.success(),
        "{}",
        String::from_utf8_lossy(&sim.stderr)
    );
    assert!(String::from_utf8_lossy(&sim.stdout).contains("| bo |"));

    // `optimize --sample 4` ranks gemm's paper variants and the same four
    // draws the campaign measured (seed 1, the kernel's name) with these
    // models, and runs its candidates among all of them.
    let out_c = dir.path().join("gemm.opt.c");
    let opt = polytune()
        .args([
            "optimize",
            "--size",
            "mini",
            "--compiler",
            "gcc",
            "--sample",
            "4",
            "--budget",
            "3",
            "--refine",
            "0",
            "--json",
            "--model",
        ])
        .arg(&models)
        .arg(k("polybench/linear-algebra/gemm.c"))
        .arg("-o")
        .arg(&out_c)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&opt.stderr);
    assert!(opt.status.success(), "{stderr}");
    assert!(
        stderr.contains("4 configurations drawn beyond the paper's space"),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_slice(&opt.stdout).unwrap();
    let beyond = report["beyond_paper"].as_u64().unwrap();
    assert!(beyond >= 1, "{report}");
    let store = Store::open_read_only(&db).unwrap();
    let measured_beyond = store
        .measured()
        .unwrap()
        .iter()
        .filter(|m| m.kernel == "gemm" && m.configs.iter().all(|c| !c.is_paper()))
        .count() as u64;
    // The campaign compared its draws with the three paper variants it
    // picked, `optimize` with all of them: a draw that joins a paper
    // variant here may have been new there.
    assert!(beyond <= measured_beyond, "the campaign's draws: {report}");
    for c in report["candidates"].as_array().unwrap() {
        let config: polytune::config::Config = c["config"].as_str().unwrap().parse().unwrap();
        assert_eq!(c["bits"].is_null(), !config.is_paper(), "{c}");
        assert_eq!(c["run"]["status"], "ok", "{c}");
    }
    assert!(
        std::fs::read_to_string(&out_c)
            .unwrap()
            .contains("polytune")
    );

    // Without --sample, models that know the extended space rank the
    // extended campaign's 30 draws; --sample 0 the paper's space only.
    let ranked = |extra: &[&str]| {
        let out = polytune()
            .args([
                "optimize",
                "--size",
                "mini",
                "--compiler",
                "gcc",
                "--no-run",
            ])
            .args(extra)
            .arg("--model")
            .arg(&models)
            .arg(k("polybench/linear-algebra/gemm.c"))
            .arg("-o")
            .arg(dir.path().join("gemm.top.c"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        stderr
    };
    let stderr = ranked(&[]);
    assert!(
        stderr.contains("30 configurations drawn beyond the paper's space"),
        "{stderr}"
    );
    let stderr = ranked(&["--sample", "0"]);
    assert!(
        !stderr.contains("drawn beyond the paper's space"),
        "{stderr}"
    );
}

/// Models of the paper's space cannot rank draws beyond it: `--sample`
/// with them is refused before anything runs, and so is a sample larger
/// than the space beyond the paper's.
#[test]
fn optimize_sample_needs_models_of_the_extended_space() {
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    // Models of the paper's space (the shipped ones are refreshed with
    // campaigns of the extended space).
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("paper");
    let train = polytune()
        .args(["train", "--compiler", "gcc", "--models", "LR", "--db"])
        .arg(root().join("models/dataset-paper.sqlite"))
        .arg("-o")
        .arg(&models)
        .output()
        .unwrap();
    assert!(
        train.status.success(),
        "{}",
        String::from_utf8_lossy(&train.stderr)
    );
    let out = polytune()
        .args(["optimize", "--compiler", "gcc", "--sample", "4", "--model"])
        .arg(&models)
        .arg(&gemm)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("were trained on the paper's space only"),
        "{stderr}"
    );
    assert!(stderr.contains("collect --space extended"), "{stderr}");
    let out = polytune()
        .args(["compare", "--size", "medium", "--sample", "4", "--db"])
        .arg(root().join("models/dataset-paper.sqlite"))
        .arg(&gemm)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("know the paper's space only"), "{stderr}");
    let out = polytune()
        .args(["optimize", "--seed", "3"])
        .arg(&gemm)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--sample"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
