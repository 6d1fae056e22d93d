//! Programs in the style of the PolyBench/C 4.x distribution with their
//! pragmas stripped (issue 18): `--detect` finds each kernel through its
//! `_PB_` bound macros and `POLYBENCH_2D` parameters (with
//! `--assume-no-alias`: the arrays are pointer parameters), and the
//! transformed program dumps the same arrays as the original, built with
//! gcc and clang as the distribution builds them.
#![cfg(feature = "detect")]

mod common;

use std::path::Path;
use std::process::Command;

const KERNELS: [(&str, &str, &str); 3] = [
    ("linear-algebra/kernels/2mm", "2mm", "kernel_2mm"),
    ("linear-algebra/kernels/atax", "atax", "kernel_atax"),
    ("stencils/jacobi-2d", "jacobi-2d", "kernel_jacobi_2d"),
];

/// Builds `src` with the distribution's utilities at MINI size and runs
/// it on two threads: the arrays it dumps (stderr).
fn dumped(cc: &str, pb4: &Path, src: &Path, exe: &Path) -> String {
    let utilities = pb4.join("utilities");
    let built = Command::new(cc)
        .args([
            "-O2",
            "-fopenmp",
            "-w",
            "-DMINI_DATASET",
            "-DPOLYBENCH_DUMP_ARRAYS",
        ])
        .arg("-I")
        .arg(&utilities)
        .arg("-I")
        .arg(src.parent().unwrap())
        .arg(src)
        .arg(utilities.join("polybench.c"))
        .arg("-o")
        .arg(exe)
        .arg("-lm")
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{cc} {}: {}",
        src.display(),
        String::from_utf8_lossy(&built.stderr)
    );
    let run = Command::new("timeout")
        .arg("60")
        .arg(exe)
        .env("OMP_NUM_THREADS", "2")
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", exe.display());
    let dump = String::from_utf8(run.stderr).unwrap();
    assert!(dump.contains("--- array"), "{dump}");
    dump
}

#[test]
fn polybench4_kernels_are_found_through_their_macros_and_verified() {
    let pb4 = common::root().join("tests/fixtures/real/polybench4");
    let dir = tempfile::tempdir().unwrap();
    for (sub, name, kernel) in KERNELS {
        let from = pb4.join(sub);
        let src = dir.path().join(format!("{name}.c"));
        let text = std::fs::read_to_string(from.join(format!("{name}.c"))).unwrap();
        let stripped: String = text
            .lines()
            .filter(|l| {
                !l.trim_start().starts_with("#pragma scop")
                    && !l.trim_start().starts_with("#pragma endscop")
            })
            .map(|l| format!("{l}\n"))
            .collect();
        assert_ne!(stripped, text, "{name}: no pragmas to strip");
        std::fs::write(&src, &stripped).unwrap();
        std::fs::copy(
            from.join(format!("{name}.h")),
            dir.path().join(format!("{name}.h")),
        )
        .unwrap();
        let utilities = format!("-I{}", pb4.join("utilities").display());
        let polytune = |args: &[&str]| {
            Command::new(env!("CARGO_BIN_EXE_polytune"))
                .args(args)
                .output()
                .unwrap()
        };
        let s = src.to_str().unwrap();
        let out = polytune(&["scop", s, "--detect", "--assume-no-alias", "--", &utilities]);
        let listing = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            listing
                .lines()
                .any(|l| l.contains("region") && l.contains(kernel)),
            "{name}: {kernel} not found\n{listing}"
        );
        let variant = dir.path().join(format!("{name}.opt.c"));
        let out = polytune(&[
            "optimize",
            s,
            "--detect",
            "--assume-no-alias",
            "--config",
            "fuse=smart,tile=32x32x1,wave=0,omp=1,prevec=1,simd=0,uj=1",
            "-o",
            variant.to_str().unwrap(),
            "--",
            &utilities,
        ]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let opt = std::fs::read_to_string(&variant).unwrap();
        assert!(
            opt.contains("#pragma omp parallel for"),
            "{name}: not transformed\n{opt}"
        );
        assert!(
            opt.contains("_PB_"),
            "{name}: the user's spelling is kept in the fallback"
        );
        for cc in common::compilers() {
            let want = dumped(cc, &pb4, &src, &dir.path().join("orig"));
            let got = dumped(cc, &pb4, &variant, &dir.path().join("opt"));
            assert_eq!(got, want, "{cc} {name}");
        }
    }
}
