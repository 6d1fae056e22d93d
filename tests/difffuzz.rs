//! The differential fuzzer end to end: a short deterministic campaign
//! (random legal SCoPs, random configurations, gcc and clang, two thread
//! counts) must find nothing, and a deliberately broken variant must be
//! found; so in the alias mode (kernels whose arrays are pointer
//! parameters, detected and versioned on a run-time alias check, called
//! with overlapping arrays), where dropping the check must be found. The
//! long run is scripts/difffuzz.sh.

use polytune::app::fuzz::{self, GenOptions, Options, Program};
use polytune::lab::compiler::Family;
use std::process::Command;

fn options(out: &std::path::Path) -> Options {
    Options {
        out: out.to_path_buf(),
        ..Options::new(polytune::cli::optimize_args)
    }
}

/// Runs the campaign and says what it found on stderr: its summary line
/// and every finding with its reproduction script.
fn run(opts: &Options) -> fuzz::Summary {
    let s = fuzz::run(opts).expect("the fuzzer runs");
    eprintln!("{}", s.line());
    for f in &s.findings {
        eprintln!(
            "{} {} {}\n{}",
            f.kind,
            f.detail,
            f.dir.display(),
            std::fs::read_to_string(f.dir.join("repro.sh")).unwrap_or_default()
        );
    }
    s
}

/// The whole generator: signed and unsigned types, parameters 0, 1 and
/// negative (outside the default context, where the run-time check must
/// send them to the original code).
#[test]
fn a_short_campaign_finds_no_wrong_program() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        seed: 2026,
        programs: 8,
        configs: 3,
        params: 2,
        compilers: vec![Family::Gcc, Family::Clang],
        threads: vec![1, 2],
        generator: GenOptions::default(),
        polytune: Some(env!("CARGO_BIN_EXE_polytune").into()),
        ..options(dir.path())
    };
    let s = run(&opts);
    let c = &s.counts;
    assert_eq!(c.programs, 8);
    assert_eq!(c.pairs, 24);
    assert_eq!(c.gave_up, 0);
    assert!(
        c.transformed > 0,
        "no variant was transformed: {}",
        s.line()
    );
    assert!(c.runs > 0);
    assert_eq!(c.findings(), 0, "{}", s.line());
}

/// The same with configurations drawn from the extended space (free tile
/// sizes, separate unroll factors, reductions, register tiles with and
/// without packed operands).
#[test]
fn a_short_campaign_over_the_extended_space_finds_no_wrong_program() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        seed: 2027,
        programs: 5,
        configs: 3,
        extended: true,
        params: 2,
        polytune: Some(env!("CARGO_BIN_EXE_polytune").into()),
        ..options(dir.path())
    };
    let s = run(&opts);
    let c = &s.counts;
    assert_eq!(c.pairs, 15);
    assert!(c.transformed > 0, "{}", s.line());
    assert_eq!(c.findings(), 0, "{}", s.line());
}

/// Adds 1 to the first element of the first array at the end of the SCoP.
fn break_variant(p: &Program, text: &str) -> String {
    let a = &p.arrays[0];
    let zeros: String = (0..a.rank).map(|_| "[0]").collect();
    text.replacen(
        "#pragma endscop",
        &format!("  {}{zeros} += 1;\n#pragma endscop", a.name),
        1,
    )
}

#[test]
fn a_broken_variant_is_reported_with_a_reproducer() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        seed: 5,
        programs: 4,
        configs: 2,
        params: 2,
        compilers: vec![Family::Gcc],
        threads: vec![1],
        tamper: Some(break_variant),
        generator: GenOptions {
            unsigned: false,
            nonpositive: false,
        },
        ..options(dir.path())
    };
    let s = run(&opts);
    let c = &s.counts;
    assert!(c.transformed > 0, "{}", s.line());
    assert_eq!(c.wrong, c.transformed, "{}", s.line());
    assert_eq!(c.oracle, 0, "{}", s.line());
    let f = s
        .findings
        .iter()
        .find(|f| f.kind == "wrong")
        .expect("a wrong finding");
    for file in [
        "prog.c",
        "variant.c",
        "repro.sh",
        "info.txt",
        "expected.txt",
        "actual.txt",
    ] {
        assert!(
            f.dir.join(file).is_file(),
            "{} lacks {file}",
            f.dir.display()
        );
    }
    let repro = std::fs::read_to_string(f.dir.join("repro.sh")).unwrap();
    assert!(repro.contains("optimize prog.c --config "), "{repro}");
    assert!(repro.contains("-fopenmp prog.c -o orig"), "{repro}");
    let expected = std::fs::read_to_string(f.dir.join("expected.txt")).unwrap();
    let actual = std::fs::read_to_string(f.dir.join("actual.txt")).unwrap();
    assert!(fuzz::compare_outputs(&expected, &actual).is_err());
    assert!(s.line().contains(&format!("{} wrong", c.wrong)));
}

#[test]
fn a_hand_written_wrong_program_is_told_apart() {
    // Two programs that differ in one statement order, compiled and run:
    // the comparison the fuzzer uses must tell them apart.
    let dir = tempfile::tempdir().unwrap();
    let prog = |first: &str, second: &str| {
        format!(
            "#include <stdio.h>\nstatic long A[4];\nint main(void)\n{{\n  for (long i = 1; i < 4; i++) {{\n    {first}\n    {second}\n  }}\n  printf(\"begin A 4\\n\");\n  for (int i = 0; i < 4; i++) printf(\"%ld\\n\", A[i]);\n  printf(\"end A\\n\");\n  return 0;\n}}\n"
        )
    };
    let run = |name: &str, text: String| {
        let src = dir.path().join(format!("{name}.c"));
        let exe = dir.path().join(name);
        std::fs::write(&src, text).unwrap();
        let ok = Command::new("gcc")
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        String::from_utf8(Command::new(&exe).output().unwrap().stdout).unwrap()
    };
    let a = run("a", prog("A[i] = A[i - 1] + 1;", "A[i - 1] = 7;"));
    let b = run("b", prog("A[i - 1] = 7;", "A[i] = A[i - 1] + 1;"));
    assert!(fuzz::compare_outputs(&a, &a).is_ok());
    let e = fuzz::compare_outputs(&a, &b).unwrap_err();
    assert!(e.contains("A["), "{e}");
}

#[test]
fn the_cli_runs_a_campaign_and_prints_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args([
            "fuzz",
            "--seed",
            "3",
            "--programs",
            "2",
            "--configs",
            "1",
            "--params",
            "1",
            "--compilers",
            "gcc",
            "--threads",
            "2",
            "--signed-only",
            "--positive-params",
            "--json",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("fuzz: 2 program×configuration pairs"),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["counts"]["programs"], 2);
    assert_eq!(v["seed"], 3);
}

/// The alias mode: arrays as pointer parameters, no pragmas, the kernel
/// called with its arrays apart and then overlapping (the same storage,
/// then shifted). Detection must find and version regions, and every
/// call must print what the original prints.
#[cfg(feature = "detect")]
#[test]
fn a_short_alias_campaign_versions_regions_and_finds_no_wrong_program() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        seed: 2028,
        programs: 8,
        configs: 2,
        params: 2,
        compilers: vec![Family::Gcc, Family::Clang],
        threads: vec![1, 2],
        alias: true,
        polytune: Some(env!("CARGO_BIN_EXE_polytune").into()),
        ..options(dir.path())
    };
    let s = run(&opts);
    let c = &s.counts;
    assert_eq!(c.programs, 8);
    assert_eq!(c.pairs, 16);
    assert_eq!(c.gave_up, 0);
    assert!(c.overlap_calls >= 8, "{}", s.line());
    assert!(c.detected > 0 && c.regions >= c.detected, "{}", s.line());
    assert!(c.versioned > 0, "no region was versioned: {}", s.line());
    assert!(c.transformed > 0, "{}", s.line());
    assert!(c.runs > 0);
    assert_eq!(c.findings(), 0, "{}", s.line());
    assert!(s.line().contains("versioned on aliasing"), "{}", s.line());
}

/// The directive mode (issue 40): every program carries a user's OpenMP
/// directive on one loop of its SCoP, right or wrong. The interpreter
/// shows some wrong (the loop run in reverse prints otherwise); polytune
/// must take none of those where its code runs, and the correct ones it
/// takes must print what the original prints.
#[test]
fn a_short_directive_campaign_takes_no_wrong_directive() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        seed: 3,
        programs: 16,
        configs: 2,
        params: 3,
        compilers: vec![Family::Gcc, Family::Clang],
        threads: vec![1, 2],
        directives: true,
        ..options(dir.path())
    };
    let s = run(&opts);
    let c = &s.counts;
    assert_eq!(c.programs, 16);
    assert!(c.directives >= 10, "{}", s.line());
    assert!(
        c.wrong_directives > 0,
        "no wrong directive drawn: {}",
        s.line()
    );
    assert!(c.directive_taken > 0, "no directive taken: {}", s.line());
    assert_eq!(c.wrong_directive_taken, 0, "{}", s.line());
    assert_eq!(c.findings(), 0, "{}", s.line());
}

/// The first bug the alias mode found (seed 1, program 72, 2026-11-28):
/// the transformed code ran under `context && alias check` joined
/// without parentheses, and a context that is a disjunction (`n >= 3 &&
/// ... || n >= 1 && n <= 2 && ...`) left the alias check guarding its
/// last disjunct only: at n=8 the kernel called with two of its arrays
/// in one buffer ran the transformed code, and went wrong, with gcc and
/// clang.
#[cfg(feature = "detect")]
#[test]
fn a_disjunctive_context_keeps_its_alias_check() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        seed: 1,
        first: 72,
        programs: 1,
        configs: 4,
        params: 3,
        compilers: vec![Family::Gcc],
        threads: vec![1],
        alias: true,
        polytune: Some(env!("CARGO_BIN_EXE_polytune").into()),
        ..options(dir.path())
    };
    let s = run(&opts);
    let c = &s.counts;
    assert_eq!(c.versioned, 1, "{}", s.line());
    assert!(c.overlap_calls > 0 && c.transformed > 0, "{}", s.line());
    assert_eq!(c.findings(), 0, "{}", s.line());
}

/// `optimize --detect --assume-no-alias`: the transformed code runs
/// whatever the arrays, which is wrong where they overlap.
#[cfg(feature = "detect")]
fn optimize_assuming_no_alias(prog: &str, config: &str, out: &str, detect: bool) -> Vec<String> {
    let mut v = polytune::cli::optimize_args(prog, config, out, detect);
    v.push("--assume-no-alias".to_string());
    v
}

/// The alias mode catches a variant without its run-time alias check:
/// the calls with the arrays apart stay right, some overlapping call
/// goes wrong, and the finding's script has the flag that dropped it.
#[cfg(feature = "detect")]
#[test]
fn the_alias_mode_finds_a_variant_without_its_alias_check() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        seed: 2028,
        programs: 6,
        configs: 2,
        params: 2,
        compilers: vec![Family::Gcc],
        threads: vec![1],
        alias: true,
        polytune: Some(env!("CARGO_BIN_EXE_polytune").into()),
        optimize_args: optimize_assuming_no_alias,
        ..options(dir.path())
    };
    let s = run(&opts);
    let c = &s.counts;
    assert_eq!(c.versioned, 0, "--assume-no-alias versions nothing");
    assert!(c.regions > 0, "{}", s.line());
    assert!(c.wrong > 0, "{}", s.line());
    assert_eq!(c.wrong_runs, c.wrong_overlap_runs, "{}", s.line());
    assert_eq!(c.oracle + c.original_failed, 0, "{}", s.line());
    let f = s
        .findings
        .iter()
        .find(|f| f.kind == "wrong")
        .expect("a wrong finding");
    assert!(f.detail.starts_with("overlap"), "{}", f.detail);
    assert!(f.suspects.contains(&"overlapping call".to_string()));
    let repro = std::fs::read_to_string(f.dir.join("repro.sh")).unwrap();
    assert!(
        repro.contains("optimize prog.c --detect --config ") && repro.contains("--assume-no-alias"),
        "{repro}"
    );
    let expected = std::fs::read_to_string(f.dir.join("expected.txt")).unwrap();
    let actual = std::fs::read_to_string(f.dir.join("actual.txt")).unwrap();
    assert!(fuzz::compare_outputs(&expected, &actual).is_err());
}
