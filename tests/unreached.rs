//! Learned `optimize` on a program with a SCoP region it never runs (an
//! uncalled helper): that region is left as written, with a note, and
//! the regions that run are tuned and verified; before, the whole run
//! aborted ("never reached SCoP region(s) 0").

mod common;

const PROGRAM: &str = r#"#include <stdio.h>
#define N 120
static double a[N][N], b[N][N], c[N][N];

void clear(int n) {
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      c[i][j] = 0.0;
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

int main(int argc, char **argv) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      a[i][j] = (i + 2 * j) % 9;
      b[i][j] = (3 * i + j) % 7;
    }
  if (argc > 5)
    clear(N);
  product(N);
  double s = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      s += c[i][j] * (i + 1);
  printf("%.1f\n", s);
  return 0;
}
"#;

#[test]
fn a_region_never_run_is_left_as_written_and_the_others_are_tuned() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("dead.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let out = dir.path().join("out.c");
    let report = common::learned(&src, &out, &["--budget", "2"]);
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w
            .as_str()
            .unwrap()
            .contains(":6: SCoP 0 left unchanged: the program never ran it")),
        "{warnings:?}"
    );
    // The candidates ran and were verified: the hot region was tuned.
    let candidates = report["candidates"].as_array().unwrap();
    assert!(!candidates.is_empty(), "{report}");
    let text = std::fs::read_to_string(&out).unwrap();
    // The uncalled helper's region is the user's text.
    let clear =
        &PROGRAM[PROGRAM.find("void clear").unwrap()..PROGRAM.find("void product").unwrap()];
    assert!(text.contains(clear), "{text}");
    common::same_output(&src, &out, &[]);
}
