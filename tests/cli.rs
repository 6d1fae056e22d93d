//! The `polytune scop` command end to end: output on real files, and every
//! kind of bad input rejected with file:line:col and a non-zero exit.

mod common;

use common::root;
use std::path::Path;
use std::process::{Command, Output};

fn polytune(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args(args)
        .output()
        .expect("run polytune")
}

const PROLOGUE: &str =
    "void f(int n, int m, double A[10][10], int B[10], double s)\n{\n  int i, j;\n#pragma scop\n";
const EPILOGUE: &str = "#pragma endscop\n}\n";

/// Writes `body` as the SCoP of a small file and runs `polytune scop`.
fn scop_of(body: &str, extra: &[&str]) -> (Output, std::path::PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.c");
    std::fs::write(&path, format!("{PROLOGUE}{body}{EPILOGUE}")).unwrap();
    let mut args = vec!["scop", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    (polytune(&args), path, dir)
}

/// The SCoP body starts at line 5 of the generated file.
fn expect_error(body: &str, line: usize, col: usize, needle: &str) {
    let (out, path, _dir) = scop_of(body, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    let prefix = format!("{}:{line}:{col}: error: ", path.display());
    assert!(
        stderr.starts_with(&prefix),
        "expected `{prefix}`, got:\n{stderr}"
    );
    assert!(stderr.contains(needle), "expected `{needle}` in:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn non_affine_subscript() {
    expect_error(
        "  for (i = 0; i < n; i++)\n    A[i * i][0] = 1;\n",
        6,
        7,
        "non-affine subscript: product of two",
    );
}

#[test]
fn indirect_subscript() {
    expect_error(
        "  for (i = 0; i < n; i++)\n    A[B[i]][0] = 1;\n",
        6,
        7,
        "non-affine subscript: it reads array `B`",
    );
}

#[test]
fn non_affine_bound() {
    expect_error(
        "  for (i = 0; i < n * m; i++)\n    A[i][0] = 1;\n",
        5,
        19,
        "non-affine loop bound",
    );
}

/// A condition that reads an element makes the `if` one compound
/// statement: it reads what its condition reads, and may write what its
/// branches write.
#[test]
fn data_dependent_condition_is_a_compound_statement() {
    let (out, _path, _dir) = scop_of(
        "  for (i = 0; i < n; i++)\n    if (A[i][0] > 0)\n      A[i][1] = 1;\n",
        &[],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("reads:    [n] -> { S0[i] -> A[o0 = i, o1 = 0] }")
            && stdout.contains("may write: [n] -> { S0[i] -> A[o0 = i, o1 = 1] }"),
        "{stdout}"
    );
}

#[test]
fn non_affine_condition() {
    expect_error(
        "  for (i = 0; i < n; i++)\n    if (i * i > n)\n      A[i][1] = 1;\n",
        6,
        9,
        "non-affine condition: product of two non-constant expressions",
    );
}

#[test]
fn modulo_in_subscript() {
    expect_error(
        "  for (i = 0; i < n; i++)\n    A[i % 2][0] = 1;\n",
        6,
        7,
        "`%` is not supported",
    );
}

#[test]
fn unsupported_statements() {
    expect_error(
        "  while (n > 0)\n    A[0][0] = 1;\n",
        5,
        3,
        "`while` statement is not supported",
    );
    expect_error(
        "  double t = 1.0;\n",
        5,
        3,
        "a declaration outside a block is not supported",
    );
    expect_error(
        "  n++;\n",
        5,
        3,
        "increment or decrement outside a loop header",
    );
    expect_error(
        "  printf(\"%d\", n);\n",
        5,
        3,
        "call to `printf` as a statement",
    );
    expect_error("  A[0][0] = *B;\n", 5, 13, "pointer dereference");
}

#[test]
fn impure_call_needs_pure_flag() {
    let body = "  for (i = 0; i < n; i++)\n    A[i][0] = foo(s, i);\n";
    expect_error(body, 6, 15, "--pure foo");
    let (out, _, _dir) = scop_of(body, &["--pure", "foo"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn written_parameter_is_not_static() {
    expect_error(
        "  n = 3;\n  for (i = 0; i < n; i++)\n    A[i][0] = 1;\n",
        6,
        19,
        "`n` is assigned inside the SCoP",
    );
}

#[test]
fn iterator_outside_its_loop() {
    expect_error(
        "  for (i = 0; i < n; i++)\n    A[i][0] = 1;\n  A[0][1] = i;\n",
        7,
        13,
        "used outside its loop",
    );
}

#[test]
fn loop_condition_must_bound_the_iterator() {
    expect_error(
        "  for (i = 0; i > n; i++)\n    A[i][0] = 1;\n",
        5,
        15,
        "not a plain upper bound",
    );
    expect_error(
        "  for (i = 0; n > 0; i++)\n    A[i][0] = 1;\n",
        5,
        15,
        "does not bound `i`",
    );
}

#[test]
fn rank_mismatch() {
    expect_error(
        "  for (i = 0; i < n; i++)\n    A[i][0] = A[i];\n",
        6,
        15,
        "used as an array with 1 subscript",
    );
}

#[test]
fn syntax_error_points_at_the_token() {
    expect_error(
        "  for (i = 0; i < n; i++)\n    A[i][0] = @;\n",
        6,
        15,
        "syntax error",
    );
}

#[test]
fn files_without_scops_or_with_unbalanced_pragmas() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("int main(void) { return 0; }\n", "1:1", "no SCoP found"),
        (
            "int x;\n#pragma endscop\n",
            "2:1",
            "without a matching `#pragma scop`",
        ),
        ("int x;\n  #pragma scop\nx = 1;\n", "2:1", "never closed"),
        (
            "#pragma scop\n#pragma scop\n#pragma endscop\n",
            "2:1",
            "inside an open SCoP",
        ),
        (
            "print('hello')\n#pragma scop\ndef f(): pass\n#pragma endscop\n",
            "3:5",
            "syntax error",
        ),
    ];
    for (k, (text, pos, needle)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("c{k}.c"));
        std::fs::write(&p, text).unwrap();
        let out = polytune(&["scop", p.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.starts_with(&format!("{}:{pos}: error: ", p.display())),
            "{stderr}"
        );
        assert!(stderr.contains(needle), "{needle} not in {stderr}");
    }
    let bin = dir.path().join("bin.c");
    std::fs::write(&bin, [0x7fu8, b'E', b'L', b'F', 0xff, 0xfe, 0]).unwrap();
    let out = polytune(&["scop", bin.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid UTF-8"));
    let out = polytune(&["scop", dir.path().join("missing.c").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
    assert_eq!(polytune(&["scop"]).status.code(), Some(2));
}

#[test]
fn gemm_in_isl_notation() {
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let out = polytune(&["scop", gemm.to_str().unwrap(), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let scop = &v["scops"][0];
    assert_eq!(scop["parameters"], serde_json::json!(["ni", "nj", "nk"]));
    let s1 = &scop["statements"][1];
    assert_eq!(s1["text"], "C[i][j] += alpha * A[i][k] * B[k][j];");
    assert_eq!(
        s1["domain"],
        "[ni, nj, nk] -> { S1[i, k, j] : 0 <= i < ni and 0 <= k < nk and 0 <= j < nj }"
    );
    assert_eq!(
        s1["schedule"],
        "[ni, nj, nk] -> { S1[i, k, j] -> [0, i, 1, k, 0, j, 0] }"
    );
    assert_eq!(s1["writes"], "[ni, nj, nk] -> { S1[i, k, j] -> C[i, j] }");
    let reads = s1["reads"].as_str().unwrap();
    for r in ["C[i, j]", "A[i, k]", "B[k, j]", "alpha[]"] {
        assert!(reads.contains(r), "{r} not in {reads}");
    }
    // The text view shows the same, plus the regenerated C on request.
    let out = polytune(&["scop", gemm.to_str().unwrap(), "--c"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("S0 at "), "{text}");
    assert!(text.contains("C[i][j] += alpha * A[i][k] * B[k][j];"));
}

#[test]
fn polybench4_style_file_as_is() {
    let f = root().join("tests/fixtures/pb4_style.c");
    let out = polytune(&["scop", f.to_str().unwrap(), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let scop = &v["scops"][0];
    assert_eq!(scop["parameters"], serde_json::json!(["_PB_N", "m"]));
    let stmts = scop["statements"].as_array().unwrap();
    assert_eq!(stmts.len(), 8);
    // The backward loop runs downward: its schedule dimension is negated.
    assert_eq!(
        stmts[4]["schedule"],
        "[_PB_N, m] -> { S4[i] -> [1, -i, 0] }"
    );
    // Scalars written in the SCoP are zero-dimensional arrays.
    assert!(stmts[4]["writes"].as_str().unwrap().contains("w[]"));
    // Stride 2, max/min bounds, `||` and `!` in the guard.
    let d = stmts[7]["domain"].as_str().unwrap();
    assert!(d.contains("mod 2") || d.contains("2e"), "{d}");
    assert!(d.contains(" or "), "{d}");
}

#[test]
fn regenerate_writes_elsewhere_and_never_touches_the_input() {
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let before = std::fs::read(&gemm).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("gemm.regen.c");
    let out = polytune(&[
        "scop",
        gemm.to_str().unwrap(),
        "--regenerate",
        "-o",
        out_path.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert_eq!(std::fs::read(&gemm).unwrap(), before);
    let regen = std::fs::read_to_string(&out_path).unwrap();
    let orig = String::from_utf8(before).unwrap();
    // Everything outside the SCoP is byte-identical.
    let head = orig.split("#pragma scop").next().unwrap();
    let tail = orig.split("#pragma endscop").nth(1).unwrap();
    assert!(regen.starts_with(head));
    assert!(regen.ends_with(tail));
    assert!(Path::new(&out_path).exists());
}

#[test]
fn optimize_writes_a_variant_and_refuses_bad_configs() {
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("gemm.opt.c");
    let out = polytune(&[
        "optimize",
        gemm.to_str().unwrap(),
        "--fuse",
        "no",
        "--tile",
        "32,32,1",
        "--omp",
        "--simd",
        "--unroll-jam",
        "2",
        "-o",
        out_path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert!(
        text.contains("/* polytune: fuse=no,tile=32x32x1,wave=0,omp=1,prevec=0,simd=1,uj=2 */"),
        "{text}"
    );
    assert!(text.contains("#pragma omp parallel for"));

    // The same configuration as a bit string gives the same program.
    let bits = polytune(&[
        "optimize",
        gemm.to_str().unwrap(),
        "--config",
        "001100101001",
    ]);
    assert!(bits.status.success());

    for bad in ["0101", "fuse=most", "tile=0x16"] {
        let out = polytune(&["optimize", gemm.to_str().unwrap(), "--config", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("help: the accepted forms are"));
    }
    // Without a configuration the learned selection needs models.
    let out = polytune(&[
        "optimize",
        gemm.to_str().unwrap(),
        "--model",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("polytune train") && err.contains("--config T"),
        "{err}"
    );

    // Never overwrite the input by accident.
    let copy = dir.path().join("k.c");
    std::fs::copy(&gemm, &copy).unwrap();
    let out = polytune(&[
        "optimize",
        copy.to_str().unwrap(),
        "--omp",
        "-o",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--in-place"));
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&gemm).unwrap());
}

#[test]
fn optimize_leaves_unprovable_scops_alone_and_says_why() {
    // C truncates `(i - 1) / 2` at i = 0 where the model would floor.
    let body = "  for (i = 0; i < n; i++)\n    B[(i - 1) / 2] = 1;\n";
    let (_, path, _dir) = scop_of(body, &[]);
    let out = polytune(&["optimize", path.to_str().unwrap(), "--omp"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("left unchanged") && stderr.contains("can be negative"),
        "{stderr}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        std::fs::read_to_string(&path).unwrap()
    );
    // With a context that rules the bad case out it is transformed.
    let body = "  for (i = m; i < n; i++)\n    B[(i - 1) / 2] = 1;\n";
    let (_, path, _dir) = scop_of(body, &[]);
    let out = polytune(&[
        "optimize",
        path.to_str().unwrap(),
        "--omp",
        "--context",
        "[n, m] -> { : m >= 1 }",
    ]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("polytune: fuse"));
    let out = polytune(&[
        "optimize",
        path.to_str().unwrap(),
        "--omp",
        "--context",
        "[n -> {",
    ]);
    // A malformed command line: a usage error (exit 2).
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the parameter context `[n -> {` is not valid") && err.contains("help:"),
        "{err}"
    );
}

/// A context must speak of the SCoP's parameters: a name that is not one
/// is a usage error (the guard would read whatever the name holds where
/// the SCoP starts, or not compile), and a context that names some of
/// the parameters constrains those and leaves the others free.
#[test]
fn a_context_names_only_the_scops_parameters() {
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let gemm = gemm.to_str().unwrap();
    let out = polytune(&[
        "optimize",
        gemm,
        "--config",
        "tile=32x32x1",
        "--context",
        "[foo] -> { : foo > 3 }",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`foo` is not a parameter of SCoP 0 (its parameters: ni, nj, nk)"),
        "{err}"
    );
    let out = polytune(&[
        "optimize",
        gemm,
        "--config",
        "tile=32x32x1",
        "--context",
        "[ni] -> { : ni > 3 }",
    ]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("left unchanged"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("if ((long)(ni) >= 4) {"), "{text}");
}

#[test]
fn space_lists_distinct_variants() {
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let out = polytune(&["space", gemm.to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["configurations"], 1536);
    let variants = v["variants"].as_array().unwrap();
    let n: usize = variants
        .iter()
        .map(|x| x["configs"].as_array().unwrap().len())
        .sum();
    assert_eq!(n, 1536, "every configuration is in exactly one variant");
    assert!(
        variants.len() > 50 && variants.len() < 1536,
        "{}",
        variants.len()
    );
    let hashes: std::collections::HashSet<&str> = variants
        .iter()
        .map(|x| x["hash"].as_str().unwrap())
        .collect();
    assert_eq!(hashes.len(), variants.len());
}

#[test]
fn space_changed_lists_only_what_the_field_changes() {
    let file = root().join("polybench/linear-algebra/syrk.c");
    let f = file.to_str().unwrap();
    let hashes = |v: &serde_json::Value| -> std::collections::BTreeSet<String> {
        v["variants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["hash"].as_str().unwrap().to_string())
            .collect()
    };
    let run = |args: &[&str]| -> serde_json::Value {
        let out = polytune(args);
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let papers = hashes(&run(&["space", f, "--json"]));
    let with = hashes(&run(&["space", f, "--cyc", "--json"]));
    let changed = run(&["space", f, "--cyc", "--changed", "--json"]);
    let expected: std::collections::BTreeSet<String> = with.difference(&papers).cloned().collect();
    assert!(
        !expected.is_empty(),
        "cyc=1 changes some of syrk's variants"
    );
    assert_eq!(hashes(&changed), expected);
    assert_eq!(changed["distinct"], expected.len());
    assert_eq!(changed["unchanged"], with.len() - expected.len());

    // Without a field added there is nothing to leave out: a usage error.
    let out = polytune(&["space", f, "--changed"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// Runs polytune with a file size limit of `kib` KiB (SIGXFSZ ignored, so
/// a write past it fails with EFBIG as on a full file system).
fn polytune_size_limited(kib: u32, args: &[&str]) -> Output {
    Command::new("bash")
        .arg("-c")
        .arg(format!("trap '' XFSZ; ulimit -f {kib}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_polytune"))
        .args(args)
        .output()
        .expect("run bash")
}

/// Names of the files in a directory, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

const GEMM_CONFIG: &str = "fuse=smart,tile=32x32x32,wave=0,omp=0,prevec=1,simd=0,uj=1";

#[test]
fn in_place_on_a_full_disk_leaves_the_input_whole() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("gemm.c");
    std::fs::copy(root().join("polybench/linear-algebra/gemm.c"), &k).unwrap();
    std::fs::set_permissions(&k, std::fs::Permissions::from_mode(0o640)).unwrap();
    let before = std::fs::read(&k).unwrap();
    let ks = k.to_str().unwrap();
    // The new text is longer than the 1 KiB the limit lets through.
    let out = polytune_size_limited(
        1,
        &[
            "optimize",
            ks,
            "--config",
            GEMM_CONFIG,
            "-o",
            ks,
            "--in-place",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("cannot write {ks}")), "{err}");
    assert_eq!(std::fs::read(&k).unwrap(), before, "the input changed");
    assert_eq!(listing(dir.path()), ["gemm.c"], "a temporary file was left");

    // Without the limit it is rewritten, keeping its permissions.
    let out = polytune(&[
        "optimize",
        ks,
        "--config",
        GEMM_CONFIG,
        "-o",
        ks,
        "--in-place",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(&k)
            .unwrap()
            .contains("/* polytune: fuse=smart")
    );
    let mode = std::fs::metadata(&k).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    assert_eq!(listing(dir.path()), ["gemm.c"]);
}

#[cfg(feature = "detect")]
#[test]
fn mark_in_place_on_a_full_disk_leaves_the_input_whole() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.c");
    // Over 1 KiB, so that the marked text does not fit under the limit.
    let text = format!(
        "/*{}*/\nvoid f(int n, double A[100])\n{{\n  int i;\n  for (i = 0; i < n; i++)\n    A[i] = A[i] * 2.0;\n}}\n",
        " padding ".repeat(200)
    );
    std::fs::write(&k, &text).unwrap();
    let ks = k.to_str().unwrap();
    let out = polytune_size_limited(1, &["scop", ks, "--detect", "--mark", "--in-place"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("cannot write {ks}")), "{err}");
    assert_eq!(std::fs::read_to_string(&k).unwrap(), text);
    assert_eq!(listing(dir.path()), ["k.c"]);
    let out = polytune(&["scop", ks, "--detect", "--mark", "--in-place"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(&k)
            .unwrap()
            .contains("#pragma scop")
    );
}

#[test]
fn output_naming_a_link_of_the_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("gemm.c");
    std::fs::copy(root().join("polybench/linear-algebra/gemm.c"), &k).unwrap();
    let before = std::fs::read(&k).unwrap();
    let hard = dir.path().join("hard.c");
    std::fs::hard_link(&k, &hard).unwrap();
    let sym = dir.path().join("sym.c");
    std::os::unix::fs::symlink("gemm.c", &sym).unwrap();
    let ks = k.to_str().unwrap();
    for alias in [&hard, &sym] {
        let a = alias.to_str().unwrap();
        for args in [
            vec!["optimize", ks, "--config", GEMM_CONFIG, "-o", a],
            vec!["scop", ks, "--regenerate", "-o", a],
        ] {
            let out = polytune(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(
                err.contains(&format!(
                    "refusing to overwrite the input {ks}: {a} is the same file"
                )),
                "{err}"
            );
            assert_eq!(std::fs::read(&k).unwrap(), before);
        }
    }
    // Standard output redirected to the input is the input too.
    let out = Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args(["optimize", ks, "--config", GEMM_CONFIG, "-o", "/dev/stdout"])
        .stdout(std::fs::OpenOptions::new().append(true).open(&k).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read(&k).unwrap(), before);
    // Through the symbolic link with --in-place: the link stays a link.
    let out = polytune(&[
        "optimize",
        ks,
        "--config",
        GEMM_CONFIG,
        "-o",
        sym.to_str().unwrap(),
        "--in-place",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::symlink_metadata(&sym)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&k)
            .unwrap()
            .contains("/* polytune: fuse=smart")
    );
}

#[test]
fn write_errors_name_the_file_and_leave_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let g = gemm.to_str().unwrap();
    let out = polytune(&["optimize", g, "--config", GEMM_CONFIG, "-o", "/dev/full"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write /dev/full"), "{err}");

    // space --emit: the first variant does not fit.
    let emit = dir.path().join("variants");
    let out = polytune_size_limited(1, &["space", g, "--emit", emit.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let v0 = emit.join("gemm.v0.c");
    assert!(
        err.contains(&format!("cannot write {}", v0.display())),
        "{err}"
    );
    assert!(listing(&emit).is_empty(), "{:?}", listing(&emit));
}

/// Shell completions and man pages come from the command line's own
/// definitions: they name every command and option `--help` does.
#[test]
fn completions_and_man_pages_come_from_the_command_line() {
    let out = polytune(&["completions", "bash"]);
    assert!(out.status.success());
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(
        script.contains("optimize") && script.contains("--time-budget"),
        "{}",
        &script[..script.len().min(500)]
    );
    let out = polytune(&["completions", "tcsh"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man1");
    let out = polytune(&["man", man.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(man.join("polytune-optimize.1")).unwrap();
    assert!(
        page.contains(".TH") && page.contains("time\\-budget"),
        "{page}"
    );
    assert!(man.join("polytune.1").exists());
    assert!(man.join("polytune-characterize.1").exists());
}

/// A closed standard output is an error, not a program lost with exit 0;
/// /dev/null as the user's redirection is not.
#[test]
fn a_closed_standard_output_is_an_error() {
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let run = |redirect: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "\"$0\" optimize \"$1\" --config tile=32x32x1 {redirect}"
            ))
            .arg(env!("CARGO_BIN_EXE_polytune"))
            .arg(&gemm)
            .output()
            .unwrap()
    };
    let closed = run(">&-");
    assert_eq!(closed.status.code(), Some(1), "{closed:?}");
    assert!(
        String::from_utf8_lossy(&closed.stderr).contains("standard output: it is closed"),
        "{closed:?}"
    );
    let null = run(">/dev/null");
    assert!(null.status.success(), "{null:?}");
}

/// A usage error quotes a long value clipped, with its length.
#[test]
fn a_usage_error_never_echoes_a_long_value_in_full() {
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let long = "x".repeat(100_000);
    let out = polytune(&["optimize", gemm.to_str().unwrap(), "--config", &long]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.len() < 4000, "{} bytes", err.len());
    assert!(err.contains("… (100000 characters)"), "{err}");
}

/// An endless input is refused at the size cap, at once, not read until
/// memory runs out.
#[test]
fn an_endless_input_is_refused_at_the_size_cap() {
    let start = std::time::Instant::now();
    let out = polytune(&["optimize", "/dev/zero", "--config", "tile=32x32x1"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/dev/zero: cannot read: larger than 32 MiB"),
        "{err}"
    );
    assert!(start.elapsed().as_secs() < 30);
}
