//! Generated variants compute what the original computes: for every corpus
//! kernel, a fixed sample of the space (its extremes among them) is
//! generated, compiled with OpenMP by gcc and clang, run on two threads at
//! MINI size, and its dump compared with the original's.

mod common;

use common::{compile_variant, compilers, corpus_files, root, run_dump_threads};
use polytune::config::{Config, Fusion, UnrollJam};
use polytune::frontend::{self, Options};
use polytune::lab::dump::Tolerance;

/// The extremes of the space plus a deterministic spread of the rest.
fn sample() -> Vec<Config> {
    let mut out = vec![Config::default()];
    for fusion in [Fusion::No, Fusion::Smart, Fusion::Max] {
        out.push(Config {
            fusion,
            tile: [32; 3],
            wavefront: true,
            omp: true,
            prevector: true,
            simd: true,
            unroll: UnrollJam::jam(8),
            regblock: None,
            reduce: polytune::config::Reductions::Off,
            privatize: polytune::config::Privatize::Off,
            expand: false,
            diamond: false,
            cyclic: false,
            outer: false,
            distribute: false,
        });
        out.push(Config {
            fusion,
            tile: [32, 32, 1],
            omp: true,
            simd: true,
            unroll: UnrollJam::jam(4),
            ..Config::default()
        });
    }
    // Beyond the paper's space: loops run as reductions (reassociated,
    // so verified with the default tolerance), alone, with OpenMP and
    // SIMD marks, and with tiles and unroll-and-jam around them; tile
    // sizes other than 1 and 32; separate unroll-and-jam factors;
    // privatized and expanded scalars.
    for text in [
        "fuse=no,red=1",
        "fuse=smart,omp=1,simd=1,red=1",
        "fuse=max,tile=32x32x1,uj=2,red=1",
        // Free tile sizes (issue 20), beyond the paper's 1 and 32.
        "fuse=smart,tile=64x8x16,omp=1",
        "fuse=max,tile=16x128x256,wave=1,simd=1,uj=2",
        // Register blocking with packed operands and the vector
        // micro-kernel (contractions only; elsewhere a note).
        "fuse=no,tile=32x32x32,omp=1,prevec=1,rb=4x8,pack=1",
        // Separate unroll-and-jam factors (issue 20): odd ones for the
        // remainders, one beside reductions, the inner factor alone.
        "fuse=smart,tile=32x32x1,omp=1,simd=1,uj=4x2",
        "fuse=no,prevec=1,uj=3x5",
        "fuse=max,tile=8x8x8,wave=1,omp=1,uj=16x3,red=1",
        "fuse=smart,simd=1,uj=1x4",
        // Privatized scalars (issue 20): parallel and vector loops with
        // copies of their own, tiles and unroll-and-jam around them.
        "fuse=smart,tile=32x32x1,omp=1,simd=1,priv=1",
        "fuse=no,omp=1,prevec=1,simd=1,uj=2,priv=1",
        // Expanded scalars (issue 20): arrays over the loops around
        // them, alone and with privatization, reductions and tiles.
        "fuse=no,exp=1",
        "fuse=max,tile=32x32x1,omp=1,simd=1,priv=1,exp=1",
        "fuse=smart,omp=1,red=1,exp=1",
        // Reductions the scheduler may keep outermost (red=2): parallel
        // loops over array sections (atax's y), with tiles around them.
        "fuse=max,omp=1,red=2",
        "fuse=smart,tile=32x64x1,omp=1,simd=1,uj=2,red=2",
        // Privatized arrays (priv=2): temporaries with a copy per
        // iteration of a parallel loop (doitgen's sum), in tiles and
        // unroll-and-jammed.
        "fuse=no,omp=1,priv=2",
        "fuse=smart,tile=32x32x1,omp=1,simd=1,uj=2,priv=2",
        // Parallel loops' iterations dealt in turn (cyc=1), with tiles,
        // reductions and privatized arrays.
        "fuse=smart,tile=32x32x1,omp=1,simd=1,uj=2,cyc=1",
        "fuse=no,omp=1,red=1,priv=2,cyc=1",
        // The outermost loop kept (outer=1), the statements inside it
        // grouped (fuse=smart) or as isl schedules them, with tiles.
        "fuse=smart,tile=32x32x1,omp=1,simd=1,uj=2,cyc=1,outer=1",
        "fuse=no,omp=1,prevec=1,outer=1",
        // The outermost band's innermost loop distributed (dist=1), with
        // tiles and vector marks.
        "fuse=max,omp=1,simd=1,dist=1",
        "fuse=smart,tile=32x32x32,omp=1,prevec=1,simd=1,uj=2,dist=1",
    ] {
        out.push(text.parse().unwrap());
    }
    let all = Config::all();
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for _ in 0..5 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.push(all[(x >> 33) as usize % all.len()]);
    }
    out
}

fn check(rel: &str) {
    let path = root().join("polybench").join(rel);
    let src = frontend::parse_file(&path, &Options::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let name = path.file_stem().unwrap().to_str().unwrap().to_string();
    let orig_exe = dir.path().join("orig");
    compile_variant("gcc", &path, &orig_exe, "mini").unwrap();
    let reference = run_dump_threads(&orig_exe).unwrap();
    let mut failures = Vec::new();
    for (k, config) in sample().iter().enumerate() {
        let outcome = polytune::engine::pipeline::optimize(&src, config, None).unwrap();
        assert!(
            outcome.skipped.is_empty(),
            "{rel} {config}: {:?}",
            outcome.skipped
        );
        let file = dir.path().join(format!("{name}_{k}.c"));
        std::fs::write(&file, &outcome.text).unwrap();
        for cc in compilers() {
            let exe = dir.path().join(format!("{name}_{k}_{cc}"));
            let result = compile_variant(cc, &file, &exe, "mini")
                .map_err(|e| format!("compile error: {e}"))
                .and_then(|()| run_dump_threads(&exe))
                .and_then(|d| {
                    reference
                        .compare(&d, Tolerance::default())
                        .map_err(|m| format!("wrong output: {m}"))
                });
            if let Err(e) = result {
                let keep = std::env::temp_dir().join(format!("polytune-failed-{name}-{k}.c"));
                let _ = std::fs::write(&keep, &outcome.text);
                failures.push(format!(
                    "{config} with {cc}: {e} (variant kept at {})",
                    keep.display()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{rel}:\n{}", failures.join("\n"));
}

#[test]
fn every_kernel_sample() {
    // One test per kernel would be nicer in the report, but the list of
    // kernels is the corpus itself; failures name the kernel.
    let files = corpus_files();
    assert!(!files.is_empty());
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(files.len().div_ceil(2))
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|f| {
                            std::panic::catch_unwind(|| check(f))
                                .err()
                                .map(|e| panic_text(f, e))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn panic_text(f: &str, e: Box<dyn std::any::Any + Send>) -> String {
    let msg = e
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    format!("{f}: {msg}")
}

/// Every distinct variant of the test programs (stencils with skewing,
/// wavefronts and triangular tiles), with both compilers.
#[test]
fn fixture_programs_whole_space() {
    let dir = root().join("tests/fixtures/programs");
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "c") {
            continue;
        }
        let src = frontend::parse_file(&path, &Options::default()).unwrap();
        let (variants, skipped) = polytune::engine::space::distinct_variants(&src, None).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        let tmp = tempfile::tempdir().unwrap();
        let orig = tmp.path().join("orig");
        compile_variant("gcc", &path, &orig, "mini").unwrap();
        let reference = run_dump_threads(&orig).unwrap();
        let results: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = variants
                .chunks(variants.len().div_ceil(2))
                .enumerate()
                .map(|(part, chunk)| {
                    let tmp = tmp.path();
                    let reference = &reference;
                    let path = &path;
                    s.spawn(move || {
                        let mut bad = Vec::new();
                        for (k, v) in chunk.iter().enumerate() {
                            let file = tmp.join(format!("v{part}_{k}.c"));
                            std::fs::write(&file, &v.text).unwrap();
                            for cc in compilers() {
                                let exe = tmp.join(format!("v{part}_{k}_{cc}"));
                                let r = compile_variant(cc, &file, &exe, "mini")
                                    .and_then(|()| run_dump_threads(&exe))
                                    .and_then(|d| {
                                        reference
                                            .compare(&d, Tolerance::default())
                                            .map_err(|m| m.to_string())
                                    });
                                if let Err(e) = r {
                                    bad.push(format!(
                                        "{} {} with {cc}: {e}",
                                        path.display(),
                                        v.configs[0]
                                    ));
                                }
                            }
                        }
                        bad
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        failures.extend(results);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
