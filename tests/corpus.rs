//! Every corpus kernel: it parses, isl accepts its polyhedral description,
//! the pretty-printed SCoP spliced back into the file compiles without
//! warnings and reproduces the original's dump, and gcc and clang agree;
//! the same of the programs of new kinds beside it (`more-kernels/`).

mod common;

use common::{compile, compilers, root, run_dump};
use polytune::frontend::{self, Options};
use polytune::isl;
use polytune::lab::dump::Tolerance;

fn check_kernel(rel: &str) {
    check_file(&root().join("polybench").join(rel), rel);
}

fn check_file(path: &std::path::Path, rel: &str) {
    let path = path.to_path_buf();
    let src = frontend::parse_file(&path, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(!src.scops.is_empty());
    let ctx = isl::Ctx::new();
    for s in &src.scops {
        assert!(!s.statements.is_empty());
        isl::normalize_set(&ctx, &s.domains()).unwrap();
        isl::normalize_map(&ctx, &s.schedules()).unwrap();
        isl::normalize_map(&ctx, &s.reads()).unwrap();
        isl::normalize_map(&ctx, &s.writes()).unwrap();
    }

    let dir = tempfile::tempdir().unwrap();
    let name = path.file_stem().unwrap().to_str().unwrap();
    let regenerated = dir.path().join(format!("{name}.c"));
    std::fs::write(&regenerated, src.regenerated()).unwrap();

    // The regenerated file describes the same SCoPs.
    let again = frontend::parse_file(&regenerated, &Options::default()).unwrap();
    assert_eq!(again.scops.len(), src.scops.len());
    for (a, b) in src.scops.iter().zip(&again.scops) {
        let (text_a, text_b) = (a.domains(), b.domains());
        let sa = isl::UnionSet::parse(&ctx, &text_a).unwrap();
        let sb = isl::UnionSet::parse(&ctx, &text_b).unwrap();
        assert!(sa.is_equal(&sb).unwrap(), "{text_a}\n{text_b}");
        for (text_a, text_b) in [
            (a.schedules(), b.schedules()),
            (a.reads(), b.reads()),
            (a.writes(), b.writes()),
        ] {
            let ma = isl::UnionMap::parse(&ctx, &text_a).unwrap();
            let mb = isl::UnionMap::parse(&ctx, &text_b).unwrap();
            assert!(ma.is_equal(&mb).unwrap(), "{text_a}\n{text_b}");
        }
    }

    let tol = Tolerance::default();
    let mut reference = None;
    for cc in compilers() {
        let exe = dir.path().join(format!("{name}.{cc}.orig"));
        compile(cc, &path, &exe, "mini");
        let dump = run_dump(&exe);
        assert!(!dump.is_empty(), "{rel}: empty dump");
        let exe2 = dir.path().join(format!("{name}.{cc}.regen"));
        compile(cc, &regenerated, &exe2, "mini");
        let dump2 = run_dump(&exe2);
        if let Err(m) = dump.compare(&dump2, tol) {
            panic!("{rel} with {cc}: regenerated SCoP changes the output: {m}");
        }
        match &reference {
            None => reference = Some(dump),
            Some(r) => {
                if let Err(m) = r.compare(&dump, tol) {
                    panic!("{rel}: gcc and {cc} disagree: {m}");
                }
            }
        }
    }
}

macro_rules! corpus {
    ($($test:ident => $path:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                check_kernel($path);
            }
        )*

        /// The corpus is exactly the paper's 30 kernels.
        #[test]
        fn corpus_is_complete() {
            let listed: Vec<&str> = vec![$($path),*];
            assert_eq!(listed.len(), 30);
            let found = common::corpus_files();
            let mut listed: Vec<String> = listed.iter().map(|s| s.to_string()).collect();
            listed.sort();
            assert_eq!(found, listed);
        }
    };
}

corpus! {
    k_2mm => "linear-algebra/2mm.c",
    k_3mm => "linear-algebra/3mm.c",
    atax => "linear-algebra/atax.c",
    bicg => "linear-algebra/bicg.c",
    doitgen => "linear-algebra/doitgen.c",
    gemm => "linear-algebra/gemm.c",
    gemver => "linear-algebra/gemver.c",
    gesummv => "linear-algebra/gesummv.c",
    mvt => "linear-algebra/mvt.c",
    symm => "linear-algebra/symm.c",
    syr2k => "linear-algebra/syr2k.c",
    syrk => "linear-algebra/syrk.c",
    trisolv => "linear-algebra/trisolv.c",
    trmm => "linear-algebra/trmm.c",
    cholesky => "solvers/cholesky.c",
    durbin => "solvers/durbin.c",
    gramschmidt => "solvers/gramschmidt.c",
    lu => "solvers/lu.c",
    ludcmp => "solvers/ludcmp.c",
    correlation => "datamining/correlation.c",
    covariance => "datamining/covariance.c",
    adi => "stencils/adi.c",
    fdtd_2d => "stencils/fdtd-2d.c",
    fdtd_apml => "stencils/fdtd-apml.c",
    jacobi_1d_imper => "stencils/jacobi-1d-imper.c",
    jacobi_2d_imper => "stencils/jacobi-2d-imper.c",
    seidel => "stencils/seidel.c",
    dynprog => "medley/dynprog.c",
    reg_detect => "medley/reg_detect.c",
    gauss_filter => "medley/gauss-filter.c",
}

/// The programs of other kinds beside the corpus (`more-kernels/`, which
/// the ranker's "more kernels" campaign measured): exactly these ten,
/// each passing the corpus' checks.
#[test]
fn more_kernels_pass_the_corpus_checks() {
    let dir = root().join("more-kernels");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".c"))
        .collect();
    found.sort();
    let listed = [
        "conv2d.c",
        "fir-bank.c",
        "floyd-warshall.c",
        "gemm-tn.c",
        "heat-3d.c",
        "iir-rows.c",
        "rank-updates.c",
        "transpose-avg.c",
        "ttm.c",
        "ttv.c",
    ];
    assert_eq!(found, listed);
    for f in listed {
        check_file(&dir.join(f), f);
    }
}
