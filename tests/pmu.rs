//! Issue 36: hardware counters (the PMU, through PAPI) where the machine
//! has them, and a clear refusal or fallback where it has not. These KVM
//! guests have no PMU, so what runs here is the error path; on a machine
//! with one the same tests check the counted path. Which one applies is
//! decided by the same probe polytune runs, not assumed.

mod common;

use common::{polytune, root};
use polytune::lab::characterize::pmu_available;
use polytune::lab::compiler::{Compiler, Family};
use polytune::lab::confine::Limits;
use std::process::Command;

fn gemm() -> String {
    common::corpus("linear-algebra/gemm.c")
}

fn include() -> String {
    format!("-I{}", root().join("polybench/include").display())
}

/// Whether this machine's counters can be read, by polytune's own probe.
fn has_pmu() -> bool {
    let dir = tempfile::tempdir().unwrap();
    let gcc = Compiler::detect(Family::Gcc, None).unwrap();
    pmu_available(&gcc, dir.path(), &Limits::tool()).is_ok()
}

#[test]
fn papi_counts_natively_or_says_there_is_no_pmu() {
    let f = gemm();
    let inc = include();
    let out = polytune(&[
        "characterize",
        &f,
        "--backend",
        "papi",
        "--json",
        "--",
        &inc,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    if has_pmu() {
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["backend"], "papi", "{v}");
        assert_eq!(v["counted"]["part"], "whole", "{v}");
        assert!(v["features"]["PAPI_TOT_INS"].as_f64().unwrap() > 0.0, "{v}");
    } else {
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(out.stdout.is_empty());
        let first = err.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("error: PAPI cannot count on this machine: "),
            "{err}"
        );
        assert!(
            err.contains("help: count with the simulator instead")
                && err.contains("`characterize --backend cachegrind`"),
            "{err}"
        );
    }
}

#[test]
fn auto_falls_back_to_the_simulator_where_there_is_no_pmu() {
    let f = gemm();
    let inc = include();
    let out = polytune(&[
        "characterize",
        &f,
        "--backend",
        "auto",
        "--json",
        "--",
        &inc,
    ]);
    let v = common::json_of_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    if has_pmu() {
        assert_eq!(v["backend"], "papi", "{v}");
        assert!(!err.contains("no PMU here"), "{err}");
    } else {
        assert_eq!(v["backend"], "cachegrind", "{v}");
        assert!(
            err.contains("polytune: no PMU here (PAPI: ")
                && err.contains("), falling back to the simulator (cachegrind)"),
            "{err}"
        );
        assert!(err.contains("by cachegrind"), "{err}");
        assert!(v["features"]["PAPI_L1_DCM"].as_f64().is_some(), "{v}");
    }
}

/// The instrumented runtime's PMU build (`-DPOLYTUNE_RT_PAPI -lpapi`)
/// compiles, runs the program unchanged, and writes its counter file: the
/// instructions counted inside the region, or PAPI's reason why not.
#[test]
fn the_runtimes_pmu_build_counts_inside_the_region_or_gives_papis_reason() {
    let path = root().join("polybench/linear-algebra/gemm.c");
    let src = polytune::frontend::parse_file(&path, &Default::default()).unwrap();
    let text = polytune::engine::pipeline::instrumented(&src, None, None)
        .unwrap()
        .text;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gemm.c");
    std::fs::write(&file, text).unwrap();
    let build = |exe: &str, extra: &[&str]| {
        let out = Command::new("gcc")
            .args(["-O2", "-DMINI_DATASET", &include()])
            .args(extra)
            .arg(&file)
            .arg("-o")
            .arg(dir.path().join(exe))
            .args(["-lpapi", "-lm"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    build("plain", &[]);
    build("counted", &["-DPOLYTUNE_RT_PAPI"]);
    let counters = dir.path().join("counters.txt");
    let run = |exe: &str| {
        Command::new(dir.path().join(exe))
            .env("POLYTUNE_COUNTERS", &counters)
            .output()
            .unwrap()
    };
    let plain = run("plain");
    assert!(!counters.exists(), "only the PMU build writes counters");
    let counted = run("counted");
    assert!(counted.status.success());
    assert_eq!(
        plain.stdout, counted.stdout,
        "the program's output unchanged"
    );
    let text = std::fs::read_to_string(&counters).unwrap();
    assert_eq!(text.lines().last(), Some("done"), "{text}");
    let instructions = text.lines().find_map(|l| {
        l.strip_prefix("counter PAPI_TOT_INS ")
            .map(|n| n.parse::<u64>().unwrap())
    });
    if has_pmu() {
        assert!(instructions.unwrap() > 0, "{text}");
    } else {
        assert!(
            instructions.is_none()
                && text
                    .lines()
                    .any(|l| l.starts_with("skipped PAPI_TOT_INS ") || l.starts_with("error ")),
            "{text}"
        );
    }
}

/// Models trained on hardware counters are tuned with hardware counters:
/// `optimize` counts by the back end its models learned from, and where
/// there is no PMU it refuses before building anything, writing nothing.
#[test]
fn models_of_the_pmu_count_by_the_pmu_or_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models/gcc");
    std::fs::create_dir_all(&models).unwrap();
    for e in std::fs::read_dir(root().join("models/gcc")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&p).unwrap().replace(
                "\"feature_backend\":\"cachegrind\"",
                "\"feature_backend\":\"papi\"",
            );
            std::fs::write(models.join(p.file_name().unwrap()), text).unwrap();
        }
    }
    let out_c = dir.path().join("out.c");
    let out = Command::new(env!("CARGO_BIN_EXE_polytune"))
        .current_dir(dir.path())
        .args(["optimize", &gemm(), "-o"])
        .arg(&out_c)
        .args(["--time-budget", "10", "--json", "--", &include()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if has_pmu() {
        let v = common::json_of_success(&out);
        assert_eq!(v["counted"]["part"], "whole", "{v}");
    } else {
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.starts_with("error: characterizing ")
                && err.contains(": PAPI cannot count on this machine: "),
            "{err}"
        );
        assert!(!out_c.exists());
    }
}
