//! A transformed SCoP never runs under parameter values its proof did not
//! cover: the generated code checks the assumed context at run time and
//! falls back to the original text. Programs from the robustness findings
//! (an empty loop with `m = 0`, an unsigned comparison, size_t loops) are
//! transformed under several configurations, compiled with gcc and clang,
//! run with two threads at parameter values inside and outside the
//! default context, and must print what the original prints.

mod common;

use common::compilers;
use polytune::frontend::{self, Options};
use polytune::isl::RESERVED;
use std::path::{Path, PathBuf};
use std::process::Command;

const CONFIGS: &[&str] = &[
    "fuse=max,tile=1x1x1,wave=0,omp=0,prevec=1,simd=0,uj=1",
    "fuse=max,tile=32x32x1,wave=1,omp=1,prevec=1,simd=1,uj=1",
    "fuse=smart,tile=1x1x1,wave=0,omp=1,prevec=0,simd=1,uj=4",
    "fuse=no,tile=32x32x32,wave=0,omp=1,prevec=1,simd=0,uj=2",
];

/// (n, m): inside and outside the default context, zero and negatives.
const PARAMS: &[(i64, i64)] = &[
    (5, 0),
    (5, 1),
    (0, 3),
    (1, 1),
    (-3, 2),
    (3, -2),
    (0, 0),
    (-1, -1),
    (1, 0),
    (40, 30),
];

fn fixture(name: &str) -> PathBuf {
    common::root().join("tests/fixtures/engine").join(name)
}

fn polytune(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args(args)
        .output()
        .unwrap()
}

fn build(cc: &str, src: &Path, exe: &Path) {
    let dir = fixture("");
    common::build_openmp(cc, src, exe, &["-std=gnu99", "-I", dir.to_str().unwrap()]);
}

fn run(exe: &Path, (n, m): (i64, i64)) -> String {
    let out = Command::new(exe)
        .args([n.to_string(), m.to_string()])
        .env("OMP_NUM_THREADS", "2")
        .output()
        .unwrap();
    assert!(out.status.success(), "{} {n} {m} failed", exe.display());
    String::from_utf8(out.stdout).unwrap()
}

/// Every configuration (with an optional `--context`) gives the original's
/// output at every parameter value, with both compilers; returns the
/// generated files' texts.
fn same_output_everywhere(name: &str, context: Option<&str>) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture(name);
    let mut texts = Vec::new();
    for cc in compilers() {
        let orig = dir.path().join(format!("orig_{cc}"));
        build(cc, &src, &orig);
        let expect: Vec<String> = PARAMS.iter().map(|&p| run(&orig, p)).collect();
        for (k, config) in CONFIGS.iter().enumerate() {
            let out_c = dir.path().join(format!("v{k}.c"));
            let mut args = vec!["optimize", src.to_str().unwrap(), "--config", config];
            if let Some(c) = context {
                args.extend(["--context", c]);
            }
            args.extend(["-o", out_c.to_str().unwrap()]);
            let o = polytune(&args);
            assert!(
                o.status.success(),
                "{config}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let text = std::fs::read_to_string(&out_c).unwrap();
            let exe = dir.path().join(format!("v{k}_{cc}"));
            build(cc, &out_c, &exe);
            for (&p, want) in PARAMS.iter().zip(&expect) {
                assert_eq!(
                    &run(&exe, p),
                    want,
                    "{name} {config} with {cc} at (n, m) = {p:?}:\n{text}"
                );
            }
            texts.push(text);
        }
    }
    texts
}

#[test]
fn an_empty_loop_outside_the_default_context_runs_the_original() {
    let texts = same_output_everywhere("min_m0.c", None);
    // Transformed, and guarded by the default context.
    for t in &texts {
        assert!(t.contains("if ((long)(n) >= 1 && (long)(m) >= 1) {"), "{t}");
    }
    // A user context: the guard is that context.
    let texts = same_output_everywhere("min_m0.c", Some("[n, m] -> { : n >= 0 and m >= 2 }"));
    assert!(texts[0].contains("(long)(m) >= 2"), "{}", texts[0]);
}

#[test]
fn an_unsigned_comparison_is_modelled_only_where_it_agrees_with_c() {
    // Default context (n >= 1): `i = -n` converts to a huge unsigned
    // value in `i < 5UL`; no parameter value allows the model, the SCoP
    // stays as it was and the warning says why and where.
    let src = fixture("ull.c");
    let o = polytune(&["optimize", src.to_str().unwrap(), "--config", CONFIGS[0]]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("ull.c:7:16: SCoP 0 left unchanged: unsigned comparison `i < 5UL`: polytune models integers as signed"),
        "{err}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("polytune:"), "{out}");
    // With every parameter value allowed, the model holds for n <= 0: the
    // SCoP is transformed behind that check.
    let texts = same_output_everywhere("ull.c", Some("[n] -> { : }"));
    for t in &texts {
        assert!(t.contains("(long)(n) <= 0"), "{t}");
    }
    same_output_everywhere("ull.c", None);
}

#[test]
fn size_t_loops_stay_accepted_and_keep_their_meaning() {
    let texts = same_output_everywhere("size_t_loops.c", None);
    for t in &texts {
        assert!(t.contains("if ((long)(n) >= 1 && (long)(m) >= 1) {"), "{t}");
        // Unsigned values keep their type in statements.
        assert!(t.contains("(double)(((__typeof__(i))("), "{t}");
    }
}

/// Every word isl's parser reserves, as a parameter and as an iterator:
/// the SCoP is modelled and transformed, and the output shows the user's
/// names only.
#[test]
fn isl_keywords_are_ordinary_c_names() {
    let mut words: Vec<String> = RESERVED.iter().map(|w| w.to_string()).collect();
    words.extend(RESERVED.iter().map(|w| w.to_uppercase()));
    words.extend(["NaN", "x_pt", "max_pt"].map(String::from));
    for w in &words {
        let text = format!(
            "void f(long {w}, long n, double B[100][100]) {{\n  long i, j;\n#pragma scop\n  for (i = 0; i < {w}; i++)\n    for (j = 0; j < n; j++)\n      B[i][j] = B[i][j] + 1.0;\n#pragma endscop\n}}\n\
             void g(long n, double B[100], double {w}_a[10]) {{\n  long {w};\n#pragma scop\n  for ({w} = 0; {w} < n; {w}++)\n    B[{w}] = B[{w}] + 1.0;\n#pragma endscop\n}}\n"
        );
        let src = frontend::parse_source(Path::new("k.c"), text, &Options::default()).unwrap();
        let config = "fuse=smart,tile=32x32x1,omp=1".parse().unwrap();
        let out = polytune::engine::pipeline::optimize(&src, &config, None).unwrap();
        assert!(out.skipped.is_empty(), "{w}: {:?}", out.skipped);
        assert!(
            out.text.contains(&format!("(long)({w}) >= 1")),
            "{w}:\n{}",
            out.text
        );
        assert!(
            out.text.contains(&format!("c0 <= ({w} - 1) / 32")),
            "{w}:\n{}",
            out.text
        );
        let mangled = format!("{w}_pt");
        assert!(!out.text.contains(&mangled), "{w}:\n{}", out.text);
    }
}

#[test]
fn scop_shows_the_users_names() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("k.c");
    std::fs::write(
        &f,
        "void f(long max, double B[100]) {\n  long mod;\n#pragma scop\n  for (mod = 0; mod < max; mod++)\n    B[mod] = 1.0;\n#pragma endscop\n}\n",
    )
    .unwrap();
    let o = polytune(&["scop", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("domain:   [max] -> { S0[mod] : 0 <= mod < max }"),
        "{out}"
    );
    assert!(!out.contains("_pt"), "{out}");
}

/// Unsigned and narrow types, one SCoP per construct: each is either
/// transformed behind its check or left unchanged with the reason, and the
/// program prints what the original prints.
#[test]
fn mixed_unsigned_and_narrow_types() {
    let src = fixture("mixed_types.c");
    let o = polytune(&["optimize", src.to_str().unwrap(), "--config", CONFIGS[1]]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("mixed_types.c:19:9: SCoP 1 left unchanged: `j + OFF` may be unsigned: polytune does not see the declaration of `OFF`"),
        "{err}"
    );
    assert!(
        err.contains("mixed_types.c:32:9: SCoP 4 left unchanged: unsigned comparison `j - 3 < ul`"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "{err}");
    let texts = same_output_everywhere("mixed_types.c", None);
    for t in &texts {
        // A short iterator must fit a short; `50UL - k` must not wrap.
        assert!(t.contains("(long)(m) <= 32767"), "{t}");
        assert!(t.contains("(long)(n) <= 51"), "{t}");
    }
}

/// `scop` tells what the generated code will check, or why no parameter
/// value allows a transformation.
#[test]
fn scop_shows_the_run_time_check() {
    let o = polytune(&["scop", fixture("min_m0.c").to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("run-time check: [n, m] -> {  : n > 0 and m > 0 }"),
        "{out}"
    );
    let o = polytune(&["scop", fixture("ull.c").to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["scops"][0]["run_time_check"], serde_json::Value::Null);
    let o = polytune(&["scop", fixture("ull.c").to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("not transformable: SCoP 0: unsigned comparison `i < 5UL`"),
        "{out}"
    );
}
