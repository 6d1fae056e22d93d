//! A program of several files given by its compile line: the kernel's
//! file has no `main`, another source of the compile line does. Learned
//! `optimize` builds the whole program as the user's line says (before,
//! it looked for `main` in the kernel's file only, and asked for
//! `--param` to write a driver).

mod common;

const KERNEL: &str = "void smooth(int n, double *restrict out, const double *restrict in) {
  for (int i = 1; i < n - 1; i++)
    out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0;
}
";

const MAIN: &str = r#"#include <stdio.h>
#include <stdlib.h>
void smooth(int n, double *restrict out, const double *restrict in);
int main(void) {
  int n = 100000;
  double *a = malloc(n * sizeof *a), *b = calloc(n, sizeof *b);
  for (int i = 0; i < n; i++) a[i] = (i % 17) * 0.5;
  for (int r = 0; r < 5; r++) smooth(n, b, a);
  double s = 0;
  for (int i = 0; i < n; i++) s += b[i] * (i % 3);
  printf("%.3f\n", s);
  return 0;
}
"#;

#[test]
fn main_is_found_in_another_source_of_the_compile_line() {
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("kernel.c");
    let main = dir.path().join("main.c");
    std::fs::write(&kernel, KERNEL).unwrap();
    std::fs::write(&main, MAIN).unwrap();
    let out = dir.path().join("out.c");
    let report = common::learned(
        &kernel,
        &out,
        &["--detect", "--budget", "1", "--", main.to_str().unwrap()],
    );
    assert_eq!(report["original"]["status"], "ok", "{report}");
    assert!(
        report["built_as"].as_str().unwrap().contains("main.c"),
        "{report}"
    );
    // The kernel file written builds with main.c into the same program.
    common::same_output(&kernel, &out, &[&main]);
}
