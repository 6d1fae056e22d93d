//! A region that writes pointer-valued elements (row pointers set up
//! from a block: `rows[i] = rows[i - 1] + m`) can be measured: its
//! instrumented build compiles (a pointer element is recorded as a
//! placeholder, what is read through it is compared), and learned
//! `optimize` runs end to end.

mod common;

const PROGRAM: &str = r#"#include <stdio.h>
#include <stdlib.h>
static double total(double **rows, int n, int m) {
  int i, j;
  double s = 0;
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      s += rows[i][j] * (j + 1);
  return s;
}
int main(void) {
  int n = 200, m = 150, i;
  double **rows = malloc(n * sizeof(double *));
  rows[0] = malloc(n * m * sizeof(double));
  for (i = 1; i < n; i++)
    rows[i] = rows[i - 1] + m;
  for (i = 0; i < n * m; i++)
    rows[0][i] = (i % 13) * 0.25;
  printf("%.2f\n", total(rows, n, m));
  free(rows[0]);
  free(rows);
  return 0;
}
"#;

#[test]
fn a_region_writing_pointer_elements_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("rows.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let out = dir.path().join("out.c");
    let report = common::learned(&src, &out, &["--detect", "--budget", "1"]);
    assert_eq!(report["original"]["status"], "ok", "{report}");
    common::same_output(&src, &out, &[]);
}
