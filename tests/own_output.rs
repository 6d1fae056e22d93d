//! polytune given its own output (issue 39): a region it wrote (its body
//! starts with `/* polytune: CONFIG */`) is left as written, with a
//! warning naming its place and configuration, and the other regions are
//! tuned. Before, a second run failed on the helper macros' `#define`
//! lines, which stood inside the region.

mod common;

use std::path::Path;
use std::process::Output;

/// A configuration whose code uses the helper macros (tiles: `min`,
/// `floord`) and writes directives (OpenMP, SIMD).
const CONFIG: &str = "fuse=smart,tile=32x32x32,wave=0,omp=1,prevec=1,simd=1,uj=4";

const PROGRAM: &str = r#"#include <stdio.h>
#define N 100
static double a[N][N], b[N][N], c[N][N];

void fill(int n) {
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      c[i][j] = 0.5 * (i - j);
#pragma endscop
}

void product(int n) {
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        c[i][j] += a[i][k] * b[k][j];
#pragma endscop
}

int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      a[i][j] = (i + 2 * j) % 9;
      b[i][j] = (3 * i + j) % 7;
    }
  fill(N);
  product(N);
  double s = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      s += c[i][j] * (i + 1);
  printf("%.1f\n", s);
  return 0;
}
"#;

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

fn succeeded(out: &Output) -> String {
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stderr)
}

/// `optimize --config CONFIG file -o out`: its standard error.
fn optimize(file: &Path, out: &Path) -> String {
    succeeded(&common::polytune(&[
        "optimize",
        file.to_str().unwrap(),
        "--config",
        CONFIG,
        "-o",
        out.to_str().unwrap(),
    ]))
}

/// The 1-based line of the `n`th `#pragma scop` of `text`.
fn scop_line(text: &str, n: usize) -> usize {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == "#pragma scop")
        .nth(n)
        .unwrap()
        .0
        + 1
}

/// What polytune says of a region it wrote, at `file`:`line`.
fn note(file: &Path, line: usize) -> String {
    format!(
        "polytune: warning: the SCoP at {}:{line} was written by polytune (configuration {CONFIG}); left as written: give polytune the original program to tune it again",
        file.display()
    )
}

#[test]
fn a_corpus_kernel_optimized_twice_is_left_as_the_first_run_wrote_it() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("gemm1.c");
    let second = dir.path().join("gemm2.c");
    optimize(Path::new(&common::corpus("linear-algebra/gemm.c")), &first);
    let once = std::fs::read_to_string(&first).unwrap();
    // No directive inside the region: the helpers are defined around it.
    let region = &once[once.find("#pragma scop").unwrap()..once.find("#pragma endscop").unwrap()];
    assert!(!region.contains("#define") && !region.contains("#undef"));
    assert!(once.contains("#define polytune_min"), "{once}");
    let err = optimize(&first, &second);
    assert!(err.contains(&note(&first, scop_line(&once, 0))), "{err}");
    assert_eq!(std::fs::read_to_string(&second).unwrap(), once);
    // `scop` lists it, and succeeds.
    let listing = text(&common::polytune(&["scop", first.to_str().unwrap()]).stdout);
    assert!(
        listing.contains(&format!("written by polytune (configuration {CONFIG})")),
        "{listing}"
    );
    // The second run's program computes what the original does.
    let reference = dir.path().join("reference");
    let exe = dir.path().join("twice");
    common::compile(
        "gcc",
        Path::new(&common::corpus("linear-algebra/gemm.c")),
        &reference,
        "mini",
    );
    let expected = common::run_dump(&reference);
    common::matches_reference("gcc", &second, &exe, "mini", &[], &expected).unwrap();
}

#[test]
fn the_regions_polytune_did_not_write_are_tuned() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("two.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let first = dir.path().join("first.c");
    optimize(&src, &first);
    let once = std::fs::read_to_string(&first).unwrap();
    // `fill` as polytune wrote it, `product` as the user did.
    let at = |t: &str| t.find("void product").unwrap();
    let mixed_text = format!("{}{}", &once[..at(&once)], &PROGRAM[at(PROGRAM)..]);
    let mixed = dir.path().join("mixed.c");
    std::fs::write(&mixed, &mixed_text).unwrap();
    let fill_line = scop_line(&mixed_text, 0);
    // With a configuration.
    let out = dir.path().join("config.c");
    let err = optimize(&mixed, &out);
    assert!(err.contains(&note(&mixed, fill_line)), "{err}");
    let again = std::fs::read_to_string(&out).unwrap();
    assert_eq!(again, once);
    common::same_output(&src, &out, &[]);
    // Learned, with a small budget: `product` is tuned and verified.
    let out = dir.path().join("learned.c");
    let all = [
        "optimize",
        mixed.to_str().unwrap(),
        "--budget",
        "1",
        "--refine",
        "0",
        "--json",
        "-o",
        out.to_str().unwrap(),
    ];
    let run = common::polytune(&all);
    assert!(
        text(&run.stderr).contains(&note(&mixed, fill_line)),
        "{}",
        text(&run.stderr)
    );
    let report = common::json_of_success(&run);
    // Its candidate built, ran and verified (instrumented from its text).
    assert_eq!(report["candidates"][0]["run"]["status"], "ok", "{report}");
    let learned = std::fs::read_to_string(&out).unwrap();
    assert!(learned.contains(&once[..at(&once)]), "{learned}");
    common::same_output(&src, &out, &[]);
    // Every region polytune's: the file as it is, in both modes.
    for args in [&["--config", CONFIG][..], &["--budget", "1"][..]] {
        let out = dir.path().join("unchanged.c");
        let mut all = vec!["optimize", first.to_str().unwrap(), "-o"];
        all.push(out.to_str().unwrap());
        all.extend(args);
        let err = succeeded(&common::polytune(&all));
        assert!(err.contains(&note(&first, fill_line)), "{args:?}: {err}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), once, "{args:?}");
    }
}
