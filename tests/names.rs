//! A program's own names never clash with the names of the code polytune
//! writes: variables called like isl's loop counters (`c0`, `c1`, ...:
//! region-of-interest bounds in image code) keep their meaning in the
//! loop bounds, and the transformed program compiles and computes what
//! the original does.

mod common;

use std::path::Path;

/// A sum over a region of interest whose column bounds are `c1` and `c2`.
const ROI: &str = r#"#include <stdio.h>
static double img[80 * 90];
int main(void) {
  long y, x;
  int r1 = 3, r2 = 70, c1 = 5, c2 = 60, w = 80;
  double total = 0, v;
  for (y = 0; y < 80 * 90; y++) img[y] = (y * 7) % 13;
#pragma scop
  for (y = r1; y <= r2; y++)
    for (x = c1; x <= c2; x++) {
      v = img[y + w * x];
      total += v * v;
    }
#pragma endscop
  printf("%.1f\n", total);
  return 0;
}
"#;

#[test]
fn a_programs_c1_and_c2_stay_its_own_in_the_generated_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("roi.c");
    std::fs::write(&src, ROI).unwrap();
    let reference = build_and_run(&src, dir.path(), "original");
    for config in [
        "fuse=no",
        "tile=32x32x1",
        "fuse=smart,tile=32x32x1,omp=1,uj=4",
    ] {
        let out = dir.path().join("out.c");
        let o = common::polytune(&[
            "optimize",
            src.to_str().unwrap(),
            "--config",
            config,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{config}: {o:?}");
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(!text.contains("polytune_c1;"), "{config}: {text}");
        assert_eq!(
            build_and_run(&out, dir.path(), "variant"),
            reference,
            "{config}: {text}"
        );
    }
}

fn build_and_run(src: &Path, dir: &Path, name: &str) -> String {
    let exe = dir.join(name);
    common::build_openmp("gcc", src, &exe, &[]);
    common::run_two_threads(&exe, &[])
}
