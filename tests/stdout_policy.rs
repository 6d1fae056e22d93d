//! Which lines of standard output a variant must reproduce
//! (`--stdout strict|stable|ignore`). A program that prints how long its
//! kernel took prints the same rounded time on two plain runs, so strict
//! compares the line (and a faster variant "fails" on it); stable slows
//! the original's regions down in its second run, the line changes and
//! is left out; ignore leaves every line out.

mod common;

const TIMED: &str = r#"#include <stdio.h>
#include <time.h>
#define N 40
static double a[N][N], b[N][N];
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(void) {
  int i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      a[i][j] = (i * 3 + j) % 11;
  double t0 = now();
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      b[i][j] = 2.0 * a[i][j] + 1.0;
#pragma endscop
  double t1 = now();
  double s = 0;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      s += b[i][j];
  printf("checksum %.1f\n", s);
  printf("Time in seconds = %.2f\n", t1 - t0);
  return 0;
}
"#;

fn masked(policy: &str) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("timed.c");
    std::fs::write(&src, TIMED).unwrap();
    let o = common::polytune(&[
        "measure",
        src.to_str().unwrap(),
        "--stdout",
        policy,
        "--json",
    ]);
    let report = common::json_of_success(&o);
    report["stdout_lines_masked"].as_u64().unwrap()
}

#[test]
fn a_printed_time_is_compared_only_under_strict() {
    // Two plain runs print `Time in seconds = 0.00` alike: compared.
    assert_eq!(masked("strict"), 0);
    // Slowed down by 20 ms, the original prints 0.02: left out.
    assert_eq!(masked("stable"), 1);
    assert_eq!(masked("ignore"), 2);
}
