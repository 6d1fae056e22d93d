//! What stopped detection in real application code (issue 40): loop
//! nests in a bare block `{ ... }` (what is left of `#pragma omp parallel`),
//! scalars declared in loop bodies (OpenMP's private variables), messages
//! citing the lines of the marked copy instead of the user's file, and
//! loop iterators read after a nest (a nest the rewrite would change the
//! meaning of). Each fixture is detected as expected, and transformed under
//! several configurations (tiled, with OpenMP) it compiles with gcc and
//! clang and prints what the original prints, on two threads.
#![cfg(feature = "detect")]

mod common;

use common::root;
use polytune::frontend::detect::{DetectOptions, Detection, detect_file};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/detect").join(name)
}

fn detect(name: &str) -> Detection {
    detect_file(&fixture(name), &DetectOptions::default()).unwrap()
}

/// (function, first line, last line) of the detected regions.
fn regions(d: &Detection) -> Vec<(&str, usize, usize)> {
    d.regions
        .iter()
        .map(|r| (r.function.as_str(), r.first_line, r.last_line))
        .collect()
}

/// (function, first line, last line, line, column) of the rejected nests
/// of `function`.
fn rejected<'d>(d: &'d Detection, function: &str) -> Vec<(usize, usize, usize, usize, &'d str)> {
    d.rejected
        .iter()
        .filter(|r| r.function == function)
        .map(|r| {
            (
                r.first_line,
                r.last_line,
                r.line,
                r.column,
                r.reason.as_str(),
            )
        })
        .collect()
}

/// The configurations each fixture runs under: tiled, parallel, fused,
/// wavefront.
const CONFIGS: [&str; 3] = [
    "fuse=no,tile=1x1x1,wave=0,omp=1,prevec=1,simd=0,uj=1",
    "fuse=max,tile=32x32x1,wave=0,omp=1,prevec=0,simd=1,uj=2",
    "fuse=smart,tile=32x32x1,wave=1,omp=1,prevec=0,simd=0,uj=1",
];

/// `optimize --detect` under [`CONFIGS`] on a copy of the fixture: every
/// detected region transformed (nothing left unchanged), and the program
/// prints what the original prints. The text of each configuration.
fn runs_like_the_original(name: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join(name);
    std::fs::copy(fixture(name), &src).unwrap();
    let original = std::fs::read_to_string(&src).unwrap();
    let mut texts = Vec::new();
    for (k, config) in CONFIGS.iter().enumerate() {
        let out = common::polytune(&[
            "optimize",
            src.to_str().unwrap(),
            "--detect",
            "--config",
            config,
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{config}: {stderr}");
        assert!(!stderr.contains("left unchanged"), "{config}: {stderr}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert_ne!(text, original, "{config}: nothing transformed");
        let variant = dir.path().join(format!("v{k}.c"));
        std::fs::write(&variant, &text).unwrap();
        for cc in common::compilers() {
            let want = common::build_and_run(cc, &src, &dir.path().join("orig"));
            let got = common::build_and_run(cc, &variant, &dir.path().join(format!("v{k}")));
            assert_eq!(got, want, "{cc} {config}");
        }
        texts.push(text);
    }
    texts
}

/// A bare block is searched like a function body: `braced` gives the
/// regions `unbraced` gives (the whole block was rejected at the first
/// statement the front end refused, and nothing inside it was tried),
/// each rejection at its own statement; in `nested` a call in the block
/// no longer hides the nest before it.
#[test]
fn bare_blocks_are_searched_like_function_bodies() {
    let d = detect("bare_block.c");
    let found = regions(&d);
    assert!(found.contains(&("braced", 14, 15)), "{found:?}");
    assert!(found.contains(&("unbraced", 27, 28)), "{found:?}");
    assert!(found.contains(&("nested", 40, 41)), "{found:?}");
    assert!(found.contains(&("nested", 43, 46)), "{found:?}");
    let lines =
        |f: &str| -> Vec<(usize, usize)> { rejected(&d, f).iter().map(|r| (r.0, r.1)).collect() };
    assert_eq!(lines("braced"), [(16, 16), (17, 18), (19, 20)]);
    assert_eq!(lines("unbraced"), [(29, 29), (30, 31), (32, 33)]);
    assert!(rejected(&d, "nested").is_empty(), "{:?}", d.rejected);
    let texts = runs_like_the_original("bare_block.c");
    // The nest inside `braced`'s block is rewritten (tiled by 32).
    assert!(
        texts[1].contains("for (long c0 = 0; c0 <= (N - 1) / 32; c0++)"),
        "{}",
        texts[1]
    );
}

/// OpenMP code's private scalars: declared in the loop body and assigned
/// once, declared with their value, or the inner loop's iterator. Each
/// nest is one SCoP with the subscripts the scalars stand for; a scalar
/// assigned twice is refused with the reason.
#[test]
fn scalars_declared_in_loop_bodies_are_read_as_their_values() {
    let d = detect("loop_body_scalars.c");
    assert_eq!(
        regions(&d),
        [
            ("assigned_once", 12, 18),
            ("initialized", 24, 28),
            ("inner_iterator", 34, 38)
        ],
        "{:?}",
        d.rejected
    );
    let refused = rejected(&d, "reassigned");
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!((refused[0].0, refused[0].1, refused[0].2), (44, 49, 48));
    assert!(
        refused[0].4.contains(
            "`c` is declared in a block inside the SCoP and does not keep one value there (it is assigned more than once, or in a loop or condition of the block)"
        ),
        "{refused:?}"
    );
    let src = d.source.as_ref().unwrap();
    // `a[c] = 0.5f * a[w] + b[c]` with `c = x + y * n`, `w = c - n`: the
    // dependence along `y` is seen.
    let assigned = &src.scops[0];
    assert_eq!(assigned.statements.len(), 1);
    assert_eq!(
        assigned.reads(),
        "[n] -> { S0[y, x] -> a[y - 1, x]; S0[y, x] -> b[y, x] }"
    );
    assert_eq!(assigned.writes(), "[n] -> { S0[y, x] -> a[y, x] }");
    // `int x2;` at the head of the body: a plain nest over `y` and `x2`.
    let inner = &src.scops[2];
    assert_eq!(inner.statements[0].iterators, ["y", "x2"]);
    assert!(inner.statements[0].private.is_empty());
    runs_like_the_original("loop_body_scalars.c");
}

/// Every line polytune cites in detect mode is the user's: the warnings
/// of `optimize` (each earlier region used to add its two pragma lines,
/// three when it starts mid-line), a rejection after regions, the regions
/// `scop --detect` lists.
#[test]
fn messages_cite_the_lines_of_the_users_file() {
    let path = fixture("region_lines.c");
    let f = path.to_str().unwrap();
    let out = common::polytune(&[
        "optimize",
        f,
        "--detect",
        "--config",
        "fuse=no,priv=1",
        "-o",
        "/dev/null",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for (line, k) in [(6, 0), (8, 1), (9, 2)] {
        let want = format!(
            "polytune: warning: {f}:{line}: SCoP {k}: priv=1 left out: the SCoP writes no scalar polytune can privatize"
        );
        assert!(stderr.contains(&want), "{want}\n{stderr}");
    }
    assert!(
        stderr.contains(&format!(
            "rejected loop nest in f (lines 14-15): {f}:14:15: rejected by the front end: the loop condition is not a plain upper bound on `i`"
        )),
        "{stderr}"
    );
    let d = detect("region_lines.c");
    assert_eq!(regions(&d), [("f", 6, 6), ("f", 8, 8), ("f", 9, 12)]);
    // The SCoPs' own lines (what `scop` on the marked text reports).
    let src = d.source.as_ref().unwrap();
    let lines: Vec<(usize, usize)> = src
        .scops
        .iter()
        .map(|s| {
            (
                src.line_col(s.region.open.start).0,
                src.line_col(s.region.close.start).0,
            )
        })
        .collect();
    assert_eq!(lines, [(6, 6), (8, 8), (9, 12)]);
    // Statements too, the one after a region's start mid-line among them.
    let at = |k: usize| src.line_col(src.scops[2].statements[k].span.start);
    assert_eq!((at(0), at(1)), ((9, 40), (12, 7)));
    runs_like_the_original("region_lines.c");
}

/// The rewritten loops run on iterators of their own: a nest whose
/// iterator may be read after it (a global, a returned local, one set
/// again only under a condition) is left as written, with the reason; one
/// set again by a later loop before any read, or read first by the next
/// iteration of a loop around the nest, is taken. (Taken, the first two
/// printed `0 0` for `100 100`.)
#[test]
fn iterators_read_after_a_nest_keep_it_unchanged() {
    let d = detect("live_iterators.c");
    assert_eq!(
        regions(&d),
        [
            ("set_again", 28, 29),
            ("set_again", 31, 32),
            ("in_a_time_loop", 40, 41),
            ("main", 61, 62),
            ("main", 68, 69)
        ],
        "{:?}",
        d.rejected
    );
    for (function, line, name) in [
        ("global_iterator", 12, "g"),
        ("returned", 19, "i"),
        ("conditionally_set", 49, "i"),
    ] {
        let r = rejected(&d, function);
        assert_eq!((r[0].2, r[0].3), (line, 3), "{r:?}");
        assert!(
            r[0].4.starts_with(&format!(
                "the loop's iterator `{name}` may be read after the nest, and the rewritten loops would not leave its final value in it"
            )),
            "{r:?}"
        );
    }
    runs_like_the_original("live_iterators.c");
}

/// Struct members as arrays (`g->u[i][j]`, `c[i].real`) are refused with
/// what to write instead; a small pure function of the file (`sq`, and
/// `norm2` calling it) is taken as pure without `--pure`, one that reads
/// a global (`bump`) is not.
#[test]
fn struct_members_are_refused_and_small_pure_helpers_taken() {
    let name = "members_and_helpers.c";
    let d = detect(name);
    assert_eq!(regions(&d), [("squares", 38, 40)], "{:?}", d.rejected);
    assert_eq!(d.inferred_pure, ["sq", "norm2"]);
    let reason = |f: &str| rejected(&d, f)[0].4.to_string();
    assert_eq!(
        reason("relax"),
        "struct member access `g->u`: polytune models arrays named by variables (before the nest, point a local pointer at it, as in `double (*u)[M] = g->u;`, and index that)"
    );
    assert_eq!(
        reason("magnitude"),
        "struct member access `c[i].real`: an array of structs is no array polytune models (keep each field in an array of its own)"
    );
    assert_eq!(
        reason("shifted"),
        "call to `bump`, which may have side effects"
    );
    let out = common::polytune(&[
        "optimize",
        fixture(name).to_str().unwrap(),
        "--detect",
        "--config",
        CONFIGS[1],
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "`sq`, `norm2` are pure by inspection (a body that returns an expression of its scalar parameters)"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let texts = runs_like_the_original(name);
    assert!(texts.iter().all(|t| t.contains("norm2(")));
}
