//! Statement shapes of real code (issue 18): blocks that declare scalars
//! of their own (one polyhedral statement whose variables are private to
//! each execution), also when they hold loops and conditions (a compound
//! statement whose inner accesses are over-approximated, the image
//! filters of `filters.c`), and chained assignments (`a = b = c;`). Lowered,
//! rejected where that is not sound, transformed under several
//! configurations (with and without `--detect`), compiled with gcc and
//! clang and run on two threads: the output is the original's.

mod common;

use common::{compilers, root};
use polytune::frontend::{Options, parse_source};
use std::path::Path;
use std::process::Command;

fn fixture() -> std::path::PathBuf {
    root().join("tests/fixtures/local/block_scalars.c")
}

fn fixture_named(name: &str) -> std::path::PathBuf {
    root().join("tests/fixtures/local").join(name)
}

#[test]
fn a_block_with_its_own_scalars_is_one_statement() {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let src = parse_source(Path::new("b.c"), text, &Options::default()).unwrap();
    let scop = &src.scops[0];
    assert_eq!(scop.statements.len(), 1);
    let s = &scop.statements[0];
    let mut written: Vec<&str> = s.writes.iter().map(|w| w.array.as_str()).collect();
    written.sort();
    assert_eq!(written, ["B", "C"]);
    // `t` and `u` are neither read nor written as far as the model knows.
    assert!(
        s.reads.iter().all(|r| r.array == "A" || r.array == "C"),
        "{:?}",
        s.reads
    );
    assert_eq!(scop.local_names(), ["t", "u"]);
}

fn error_of(body: &str) -> String {
    let text = format!(
        "#define N 9\ndouble A[N][N], B[N][N];\nvoid k(int n) {{\n  int i, j;\n#pragma scop\n  {body}\n#pragma endscop\n}}\n"
    );
    match parse_source(Path::new("neg.c"), text, &Options::default()) {
        Ok(_) => panic!("accepted: {body}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unsound_local_blocks_are_rejected_with_their_reason() {
    let cases = [
        (
            "for (i = 0; i < n; i++) { double t = A[i][0]; B[i][0] = t; } for (i = 0; i < n; i++) B[i][1] = t;",
            "`t` is used outside the block that declares it",
        ),
        (
            "for (i = 0; i < n; i++) { int t = i; t = t + 1; B[i][t] = 1.0; }",
            "`t` is declared in a block inside the SCoP and does not keep one value there (it is assigned more than once, or in a loop or condition of the block), so its value is not static",
        ),
        (
            "for (i = 0; i < n; i++) { int t; B[i][t] = 1.0; t = i; }",
            "`t` is declared in a block inside the SCoP and read before the block sets it",
        ),
        (
            "for (i = 0; i < n; i++) { short t = i; B[i][t] = 1.0; }",
            "`t` is declared in a block inside the SCoP and it has type `short`: polytune reads a block's scalar as its value only when it is `int` or `long`",
        ),
        (
            "for (i = 0; i < n; i++) { int t = i * i; B[i][t] = 1.0; }",
            "`t` is declared in a block inside the SCoP with the value `i * i`: non-affine subscript: product of two non-constant expressions",
        ),
        (
            "for (i = 0; i < n; i++) { int t = (long)i * n; B[i][t] = 1.0; }",
            "`t` is declared in a block inside the SCoP and its value `(long)i * n` has a type whose values may not fit its type `int`, so its value is not static",
        ),
        (
            "for (i = 0; i < n; i++) { int t = i; if (i > 2) t = 0; B[i][t] = 1.0; }",
            "`t` is declared in a block inside the SCoP and does not keep one value there",
        ),
        (
            "for (i = 0; i < n; i++) { double A = 1.0; B[i][0] = A; } for (i = 0; i < n; i++) B[i][1] = A[i][0];",
            "`A` is used outside the block that declares it",
        ),
        (
            "for (i = 0; i < n; i++) { static double t = 0; t = t + 1; B[i][0] = t; }",
            "`t` is `static`",
        ),
        (
            "for (i = 0; i < n; i++) { double *p = &A[i][0]; B[i][0] = 1; }",
            "`p` is a pointer",
        ),
        (
            "for (i = 0; i < n; i++) { double i = 1.0; B[i][0] = i; }",
            "`i` is a loop iterator and is also assigned",
        ),
    ];
    for (body, want) in cases {
        let e = error_of(body);
        assert!(e.contains(want), "{body}\n  gave: {e}\n  want: {want}");
        assert!(e.starts_with("neg.c:6:"), "{e}");
    }
}

fn scop_of(body: &str) -> polytune::frontend::scop::Scop {
    let text = format!(
        "#define N 9\ndouble A[N][N], B[N][N];\nvoid k(int n) {{\n  int i, j;\n#pragma scop\n  {body}\n#pragma endscop\n}}\n"
    );
    parse_source(Path::new("b.c"), text, &Options::default())
        .unwrap_or_else(|e| panic!("{body}: {e}"))
        .scops
        .remove(0)
}

/// A block scalar that takes one value per execution (initialized, or
/// assigned once at the block's level) reads as that value where a
/// subscript or bound reads it; an iterator declared at the head of a
/// loop body is the inner loop's own.
#[test]
fn scalars_of_one_value_read_as_that_value() {
    let s = scop_of("for (i = 0; i < n - 1; i++) { int t = i + 1; B[i][t] = 1.0; }");
    assert_eq!(s.writes(), "[n] -> { S0[i] -> B[i, i + 1] }");
    let s =
        scop_of("for (i = 0; i < n - 1; i++) { int c, w; c = i; w = c + 1; B[c][w] = A[w][c]; }");
    assert_eq!(s.writes(), "[n] -> { S0[i] -> B[i, i + 1] }");
    assert_eq!(s.reads(), "[n] -> { S0[i] -> A[i + 1, i] }");
    // A bound of a compound statement's loop.
    let s = scop_of(
        "for (i = 0; i < n; i++) { int m = i + 1; double t = 0; for (j = 0; j < m; j++) t += A[i][j]; B[i][0] = t; }",
    );
    assert_eq!(
        s.reads(),
        "[n] -> { S0[i] -> A[o0_pt, o1_pt] : exists (j : o0_pt = i and o1_pt = j and (j >= 0 and i - j >= 0)) }"
    );
    // `int j;` at the head of the body declares the inner loop's iterator:
    // a plain nest of two loops.
    let s =
        scop_of("for (i = 0; i < n; i++) { int j; for (j = 0; j < n; j++) B[i][j] = A[j][i]; }");
    assert_eq!(s.statements.len(), 1);
    assert_eq!(s.statements[0].iterators, ["i", "j"]);
    assert!(s.statements[0].private.is_empty());
    assert_eq!(
        s.to_c(""),
        "for (i = 0; i < n; i++) {\n  for (int j = 0; j < n; j++)\n    B[i][j] = A[j][i];\n}\n"
    );
}

#[test]
fn local_blocks_run_like_the_original() {
    runs_like_the_original("block_scalars.c");
}

#[test]
fn chained_assignments_run_like_the_original() {
    let text = std::fs::read_to_string(fixture_named("chained.c")).unwrap();
    let src = parse_source(Path::new("c.c"), text, &Options::default()).unwrap();
    // `A = B = e` is two statements, `B = e` first; `P[i] = P[i-1] += i`
    // too, `P[i-1] += i` first.
    assert_eq!(src.scops[0].statements.len(), 4);
    assert_eq!(src.scops[0].statements[0].writes[0].array, "B");
    assert_eq!(src.scops[0].statements[1].writes[0].array, "A");
    runs_like_the_original("chained.c");
}

/// `real d;` (a typedef) and `ACC_T w = ...;` (a macro) declare block
/// scalars: two names in a row can only be a declaration.
#[test]
fn scalars_of_the_programs_own_types_are_block_scalars() {
    let text = std::fs::read_to_string(fixture_named("typedef_scalars.c")).unwrap();
    let src = parse_source(Path::new("t.c"), text, &Options::default()).unwrap();
    let scop = &src.scops[0];
    assert_eq!(scop.statements.len(), 1);
    assert_eq!(scop.local_names(), ["d", "w"]);
    runs_like_the_original("typedef_scalars.c");
}

/// An `if` whose condition reads an element is one compound statement:
/// its branches' writes may happen, so the loop that carries a value
/// written under a condition keeps its order (and the clip that carries
/// nothing runs in parallel).
#[test]
fn conditions_that_read_elements_are_compound_statements() {
    let text = std::fs::read_to_string(fixture_named("data_conditions.c")).unwrap();
    let src = parse_source(Path::new("d.c"), text, &Options::default()).unwrap();
    let scop = &src.scops[0];
    assert_eq!(scop.statements.len(), 3);
    runs_like_the_original("data_conditions.c");
}

fn runs_like_the_original(name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let marked = fixture_named(name);
    // The same program without its pragmas, for --detect.
    let text = std::fs::read_to_string(&marked).unwrap();
    let unmarked = dir.path().join("unmarked.c");
    std::fs::write(
        &unmarked,
        text.lines()
            .filter(|l| !l.starts_with("#pragma"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let configs = [
        "fuse=smart,tile=32x32x1,wave=1,omp=1,prevec=1,simd=1,uj=4",
        "fuse=no,tile=1x1x1,wave=0,omp=1,prevec=1,simd=0,uj=2",
        "fuse=max,tile=32x32x1,wave=0,omp=1,prevec=0,simd=1,uj=8",
    ];
    for cc in compilers() {
        let want = common::build_and_run(cc, &marked, &dir.path().join("orig"));
        for (k, config) in configs.iter().enumerate() {
            for (src, detect) in [(&marked, false), (&unmarked, true)] {
                let variant = dir.path().join(format!("v{k}{detect}.c"));
                let mut cmd = Command::new(env!("CARGO_BIN_EXE_polytune"));
                cmd.args(["optimize", src.to_str().unwrap(), "--config", config, "-o"])
                    .arg(&variant);
                if detect {
                    cmd.arg("--detect");
                }
                let out = cmd.output().unwrap();
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(out.status.success(), "{config}: {stderr}");
                assert!(!stderr.contains("left unchanged"), "{config}: {stderr}");
                let got = common::build_and_run(cc, &variant, &dir.path().join(format!("v{k}")));
                assert_eq!(got, want, "{cc} {config} detect={detect}");
            }
        }
    }
}

#[test]
fn a_block_with_loops_is_one_compound_statement() {
    let text = std::fs::read_to_string(fixture_named("filters.c")).unwrap();
    let src = parse_source(Path::new("f.c"), text, &Options::default()).unwrap();
    for scop in &src.scops {
        assert_eq!(scop.statements.len(), 1);
        let s = &scop.statements[0];
        assert_eq!(s.iterators.len(), 2, "the loops over the pixels");
        // The pixel's write is exact; the window's reads range over it.
        assert_eq!(s.writes.len(), 1);
        assert!(s.writes[0].inner.is_none());
        assert!(s.may_writes.is_empty());
        assert!(s.reads.iter().any(|r| r.inner.is_some()));
    }
    // `dy` and `dx` are declared before the SCoP: the generated block
    // declares its own; `k` and `l` are declared by their loops.
    let conv = &src.scops[0].statements[0];
    assert_eq!(
        conv.private,
        [
            ("dy".to_string(), "int".to_string()),
            ("dx".into(), "int".into())
        ]
    );
    assert!(src.scops[1].statements[0].private.is_empty());
    // The blur's one-dimensional images are delinearized around the window.
    assert!(src.scops[2].delinearized("in").is_some());
    let reads = src.scops[0].reads();
    assert!(reads.contains("exists (dy, dx :"), "{reads}");

    let text = std::fs::read_to_string(fixture_named("row_buffer.c")).unwrap();
    let src = parse_source(Path::new("r.c"), text, &Options::default()).unwrap();
    let s = &src.scops[0].statements[0];
    assert_eq!(s.writes.len(), 1, "B[i]");
    assert_eq!(s.may_writes.len(), 1, "tmp[j]");
    assert_eq!(s.may_writes[0].array, "tmp");
    assert!(s.private.is_empty(), "`int j;` is the block's own");
}

#[test]
fn unsound_compound_blocks_are_rejected_with_their_reason() {
    let cases = [
        (
            "for (i = 0; i < n; i++) { double t = 0; for (j = 0; j < n; j++) { if (A[i][j] < 0) break; t += A[i][j]; } B[i][0] = t; }",
            "`break` statement is not supported",
        ),
        (
            "for (i = 0; i < n; i++) { double t = 0; for (j = 0; j < n; j++) t += f(A[i][j]); B[i][0] = t; }",
            "call to `f`, which polytune does not know to be pure",
        ),
        (
            "for (i = 0; i < n; i++) { double t = 0; for (i = 0; i < n; i++) t += A[i][0]; B[i][0] = t; }",
            "shadows an enclosing loop's iterator",
        ),
        (
            "for (i = 0; i < n; i++) { double t = 0; for (j = 0; j < n; j++) t += A[i][j]; B[i][j] = t; }",
            "loop iterator `j` is used outside its loop",
        ),
        (
            "for (i = 0; i < n; i++) { int m = i + 1; double t = 0; for (j = 0; j < m; j++) { t += A[i][j]; m = m - 1; } B[i][0] = t; }",
            "`m` is declared in a block inside the SCoP and does not keep one value there",
        ),
        (
            "for (i = 0; i < n; i++) { int j; int m = j; double t = 0; for (j = 0; j < m; j++) t += A[i][j]; B[i][0] = t; }",
            "`m` is declared in a block inside the SCoP and its value `j` reads `j`, a variable of the block, which may change, so its value is not static",
        ),
        (
            "for (i = 0; i < n; i++) { double t = 0; j = 0; while (j < n) { t += A[i][j]; j = j + 1; } B[i][0] = t; }",
            "`while` statement is not supported",
        ),
        (
            "for (i = 0; i < n; i++) { double t = 0; for (j = 0; j < n; j++) *p = t; B[i][0] = t; }",
            "assignment target must be an array element or a scalar variable",
        ),
        (
            "for (i = 0; i < n; i++) { double t = 0; for (j = 0; j < n; j++) { t += A[i][j]; return; } B[i][0] = t; }",
            "`return` statement is not supported",
        ),
    ];
    for (body, want) in cases {
        let e = error_of(body);
        assert!(e.contains(want), "{body}\n  gave: {e}\n  want: {want}");
    }
    // At the statement's own position.
    let e = error_of("for (i = 0; i < n; i++) { double t = 0; break; }");
    assert!(e.starts_with("neg.c:6:43: error: `break` statement"), "{e}");
}

#[test]
fn compound_blocks_run_like_the_original() {
    runs_like_the_original("filters.c");
    runs_like_the_original("row_buffer.c");
}

/// The rows of `row_buffer.c` share `tmp`: written (maybe) by each row's
/// inner loop and read by the next row, the row loop is not parallel.
/// The pixels of `filters.c` are.
#[test]
fn may_writes_keep_the_loops_they_order() {
    let dir = tempfile::tempdir().unwrap();
    let config = "fuse=smart,tile=32x32x1,wave=0,omp=1,prevec=1,simd=1,uj=1";
    for (name, parallel) in [("row_buffer.c", false), ("filters.c", true)] {
        let out = dir.path().join(name);
        let run = Command::new(env!("CARGO_BIN_EXE_polytune"))
            .args(["optimize", fixture_named(name).to_str().unwrap()])
            .args(["--config", config, "-o"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let code = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            code.contains("#pragma omp parallel for"),
            parallel,
            "{code}"
        );
        if parallel {
            // The loops' own iterators, private to each thread.
            assert!(code.contains("int dy;\n"), "{code}");
        }
    }
}

/// Inner iterators named like the generated loops (`c0`, `c1`): the
/// generated loops take other names, the block declares its own copies.
#[test]
fn inner_iterators_do_not_clash_with_generated_loops() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("clash.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#define N 40\nfloat in[N][N], out[N][N];\nint main(void)\n{\n  int y, x, c0, c1;\n  for (y = 0; y < N; y++)\n    for (x = 0; x < N; x++)\n      in[y][x] = (float)((y * 7 + x) % 9);\n#pragma scop\n  for (y = 1; y < N - 1; y++)\n    for (x = 1; x < N - 1; x++) {\n      float m = 0.0f;\n      for (c0 = -1; c0 <= 1; c0++)\n        for (c1 = -1; c1 <= 1; c1++)\n          m = m > in[y + c0][x + c1] ? m : in[y + c0][x + c1];\n      out[y][x] = m;\n    }\n#pragma endscop\n  double s = 0;\n  for (y = 0; y < N; y++)\n    for (x = 0; x < N; x++)\n      s += out[y][x] * (y + 2 * x);\n  printf(\"%.3f\\n\", s);\n  return 0;\n}\n",
    )
    .unwrap();
    let variant = dir.path().join("v.c");
    let out = Command::new(env!("CARGO_BIN_EXE_polytune"))
        .arg("optimize")
        .arg(&src)
        .args([
            "--config",
            "fuse=smart,tile=32x32x1,wave=0,omp=1,prevec=1,simd=1,uj=2",
            "-o",
        ])
        .arg(&variant)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let code = std::fs::read_to_string(&variant).unwrap();
    assert!(code.contains("for (long polytune_c0 = "), "{code}");
    assert!(code.contains("int c0;"), "{code}");
    for cc in compilers() {
        let want = common::build_and_run(cc, &src, &dir.path().join("orig"));
        let got = common::build_and_run(cc, &variant, &dir.path().join("var"));
        assert_eq!(got, want, "{cc}");
    }
}

/// Detection takes a block with declarations and loops, but not one that
/// leaves through `break`; it says why.
#[test]
fn detection_refuses_a_block_left_by_break() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("brk.c");
    std::fs::write(
        &src,
        "double A[50][50], B[50];\nvoid k(int n)\n{\n  int i, j;\n  for (i = 0; i < n; i++) {\n    double s = 0.0;\n    for (j = 0; j < n; j++) {\n      if (A[i][j] < 0.0)\n        break;\n      s += A[i][j];\n    }\n    B[i] = s;\n  }\n  for (i = 0; i < n; i++) {\n    double s = 0.0;\n    for (j = 0; j < n; j++)\n      if (A[i][j] > 0.0)\n        s += A[i][j];\n    B[i] += s;\n  }\n}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_polytune"))
        .args(["scop", "--detect"])
        .arg(&src)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("region 0: k lines 14-20"), "{text}");
    assert!(text.contains("brk.c:9:9: `break`"), "{text}");
    assert!(!text.contains("region 1"), "{text}");
}
