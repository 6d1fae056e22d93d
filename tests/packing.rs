//! Packed operands and the vector micro-kernel of register blocking
//! (`rb=MRxNR,pack=1`, beyond the paper's space): every contraction kernel
//! of the corpus under a few shapes and cache tiles, compiled by gcc and
//! clang for three targets (AVX-512, AVX without AVX-512, neither: each
//! takes its own branch of the micro-kernel) and run at SMALL (sizes that
//! are not multiples of the shapes: leftover rows and columns run), must
//! dump what the original dumps; the nests whose operands cannot be packed
//! keep the scalar micro-kernel and say why.

mod common;

use common::{
    compile_variant, compilers, matches_reference, on_two_threads, root, run_dump_threads,
};
use polytune::config::Config;
use polytune::frontend::{self, Options};
use std::collections::HashSet;

/// Contraction kernels, and whether their operands are packed (all: syrk
/// and syr2k's columns' operands `A[j][k]`, not contiguous along the
/// columns, are packed too, in a triangular nest).
const KERNELS: [(&str, bool); 7] = [
    ("linear-algebra/gemm.c", true),
    ("linear-algebra/2mm.c", true),
    ("linear-algebra/3mm.c", true),
    ("linear-algebra/syrk.c", true),
    ("linear-algebra/syr2k.c", true),
    ("datamining/covariance.c", true),
    ("datamining/correlation.c", true),
];

/// The AVX2-era shapes and the targets' own (`VectorTarget::packed_tiles`:
/// 6x32 and 8x24 for AVX-512, 4x12 for AVX2), each run on all three
/// targets' branches.
const SHAPES: [&str; 6] = ["4x8", "8x16", "2x6", "6x32", "8x24", "4x12"];
/// The third: the refinement's tall tiles, each thread's share of the
/// rows at SMALL in one tile (and a row count no shape's rows divide).
const BASES: [&str; 3] = [
    "fuse=no,tile=32x32x32,omp=1,prevec=1",
    "fuse=no,tile=16x64x8,omp=1",
    "fuse=no,tile=30x128x64,omp=1,prevec=1",
];
/// Flags after `-march=native` that select each branch of the kernel.
const TARGETS: [&[&str]; 3] = [&[], &["-mno-avx512f"], &["-mno-avx"]];

fn check(rel: &str, packed: bool) -> Vec<String> {
    let path = root().join("polybench").join(rel);
    let src = frontend::parse_file(&path, &Options::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let orig = dir.path().join("orig");
    compile_variant("gcc", &path, &orig, "small").unwrap();
    let reference = run_dump_threads(&orig).unwrap();
    let mut failures = Vec::new();
    let mut seen = HashSet::new();
    for (k, (base, shape)) in BASES
        .iter()
        .flat_map(|b| SHAPES.iter().map(move |s| (b, s)))
        .enumerate()
    {
        let config: Config = format!("{base},rb={shape},pack=1").parse().unwrap();
        let outcome = polytune::engine::pipeline::optimize(&src, &config, None).unwrap();
        assert!(outcome.skipped.is_empty(), "{rel} {config}");
        let is_packed = outcome.text.contains("accpk0[");
        if is_packed != packed {
            failures.push(format!(
                "{rel} {config}: packed {is_packed}, expected {packed} ({:?})",
                outcome.notes
            ));
        }
        if !packed
            && !outcome
                .notes
                .iter()
                .any(|n| n.contains("operands not packed"))
        {
            failures.push(format!("{rel} {config}: not packed, no reason given"));
        }
        if !seen.insert(outcome.text.clone()) {
            continue;
        }
        let file = dir.path().join(format!("v{k}.c"));
        std::fs::write(&file, &outcome.text).unwrap();
        for cc in compilers() {
            for (t, flags) in TARGETS.iter().enumerate() {
                let exe = dir.path().join(format!("v{k}_{cc}_{t}"));
                let result = matches_reference(cc, &file, &exe, "small", flags, &reference);
                if let Err(e) = result {
                    let name = path.file_stem().unwrap().to_string_lossy();
                    let keep = std::env::temp_dir().join(format!("polytune-pack-{name}-{k}.c"));
                    let _ = std::fs::write(&keep, &outcome.text);
                    failures.push(format!(
                        "{rel} {config} with {cc} {flags:?}: {e} (kept at {})",
                        keep.display()
                    ));
                }
            }
        }
    }
    failures
}

#[test]
fn packed_kernels_compute_what_the_original_computes() {
    let failures = on_two_threads(&KERNELS, |(k, p)| check(k, *p));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn outcome(text: &str, config: &str) -> (String, Vec<String>) {
    let src = frontend::parse_source(
        std::path::Path::new("k.c"),
        text.to_string(),
        &Options::default(),
    )
    .unwrap();
    let out = polytune::engine::pipeline::optimize(&src, &config.parse().unwrap(), None).unwrap();
    assert!(out.skipped.is_empty(), "{:?}", out.skipped);
    (out.text, out.notes)
}

#[test]
fn operands_that_cannot_be_packed_keep_the_scalar_kernel_with_the_reason() {
    let kernel = |body: &str| {
        format!(
            "void f(int n, double A[99][99], double B[99][99], double C[99][99]) {{\n  int i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        )
    };
    let gemm = "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++) C[i][j] += A[i][k] * B[k][j];";
    let cases = [
        // No cache tiles: nothing bounds the buffers.
        (
            gemm,
            "fuse=no,rb=4x8,pack=1",
            "not the points of a cache tile",
        ),
        // Buffers too large for the stack.
        (
            gemm,
            "fuse=no,tile=32x32x4096,rb=8x8,pack=1",
            "more than 16384 on the stack",
        ),
        // An odd number of columns.
        (gemm, "fuse=no,tile=32x32x32,rb=4x3,pack=1", "3 columns"),
        // A column operand that moves with the rows too and is not
        // contiguous along the columns.
        (
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++) C[i][j] += A[i][k] * B[j][i];",
            "fuse=no,tile=32x32x32,rb=4x8,pack=1",
            "`B[j][i]` moves with the rows and the columns",
        ),
        // A column operand to pack, in a buffer too large for the stack.
        (
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++) C[i][j] += A[i][k] * B[j][k];",
            "fuse=no,tile=32x512x64,rb=4x8,pack=1",
            "a packed buffer of 512 x 64 elements",
        ),
        // A call on a column operand.
        (
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++) C[i][j] += A[i][k] * sqrt(B[k][j]);",
            "fuse=no,tile=32x32x32,rb=4x8,pack=1",
            "is not arithmetic on array elements",
        ),
    ];
    for (body, config, why) in cases {
        let (text, notes) = outcome(&kernel(body), config);
        assert!(!text.contains("accpk0["), "{config}: {text}");
        assert!(
            text.contains("acc0_0 +="),
            "{config}: scalar kernel expected\n{text}"
        );
        assert!(
            notes.len() == 1 && notes[0].contains("operands not packed") && notes[0].contains(why),
            "{config}: {notes:?}"
        );
    }
    // The packed kernel: the rows' operand is `A[i][k]` times nothing
    // else here; the columns' operand is loaded as vectors.
    let (text, notes) = outcome(&kernel(gemm), "fuse=no,tile=32x32x32,rb=4x8,pack=1");
    assert!(notes.is_empty(), "{notes:?}");
    assert!(text.contains("accpk0[4 * 32];"), "{text}");
    assert!(text.contains("#if defined(__AVX512F__)"), "{text}");
    assert!(
        text.contains("__builtin_memcpy(&accb0, &B[c5][c4], sizeof accb0);"),
        "{text}"
    );
    // Four columns: AVX-512 and AVX get the same 4 lanes, one branch.
    let (text, _) = outcome(&kernel(gemm), "fuse=no,tile=32x32x32,rb=4x4,pack=1");
    assert!(text.contains("#if defined(__AVX__)"), "{text}");
    assert!(!text.contains("__AVX512F__"), "{text}");
    assert!(text.contains("vector_size(2 * sizeof"), "{text}");
}

#[test]
fn the_cli_takes_pack_with_rb_only() {
    let bin = env!("CARGO_BIN_EXE_polytune");
    let gemm = root().join("polybench/linear-algebra/gemm.c");
    let out = std::process::Command::new(bin)
        .arg("optimize")
        .arg(&gemm)
        .args([
            "--config",
            "fuse=no,tile=32x32x32",
            "--rb",
            "8x16",
            "--pack",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("rb=8x16,pack=1 */"), "{text}");
    assert!(text.contains("accpk0["), "{text}");
    for args in [
        vec!["--config", "fuse=no,tile=32x32x32,pack=1"],
        vec!["--config", "fuse=no", "--pack"],
    ] {
        let out = std::process::Command::new(bin)
            .arg("optimize")
            .arg(&gemm)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("rb"), "{args:?}: {err}");
    }
}
