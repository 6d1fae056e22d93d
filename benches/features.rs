//! A variant's features (issue 38) beside its transformation, on two
//! corpus kernels: computing them must add at most a few milliseconds per
//! variant. Run with `cargo bench --bench features`.

use criterion::{Criterion, criterion_group, criterion_main};
use polytune::config::Config;
use polytune::engine::features::{
    MachineCaches, ParamValues, variant_features, variant_features_each,
};
use polytune::frontend::{self, Options};
use std::path::Path;
use std::time::Duration;

fn features(c: &mut Criterion) {
    let machine = MachineCaches {
        l1: 32 << 10,
        l2: 512 << 10,
        l3: 32 << 20,
        line: 64,
        threads: 2,
    };
    let mut group = c.benchmark_group("features");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300));
    for kernel in ["linear-algebra/gemm.c", "stencils/jacobi-2d-imper.c"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("polybench")
            .join(kernel);
        let src = frontend::parse_file(&path, &Options::default()).unwrap();
        // The LARGE dataset's order of magnitude for every parameter.
        let params: ParamValues = src
            .scops
            .iter()
            .flat_map(|s| s.parameters.iter())
            .map(|p| (p.clone(), if p.starts_with('t') { 500 } else { 2000 }))
            .collect();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        for config in [
            "fuse=smart,tile=32x32x32,wave=0,omp=1,prevec=1,simd=1,uj=4",
            "fuse=max,tile=1x1x1,wave=0,omp=1,prevec=0,simd=1,uj=1",
        ] {
            let config: Config = config.parse().unwrap();
            let tiled = if config.tile.iter().any(|&t| t > 1) {
                "tiled"
            } else {
                "untiled"
            };
            group.bench_function(format!("{name} {tiled} transformation"), |b| {
                b.iter(|| {
                    let out = polytune::engine::pipeline::optimize(&src, &config, None).unwrap();
                    std::hint::black_box(out);
                })
            });
            group.bench_function(format!("{name} {tiled} features"), |b| {
                b.iter(|| {
                    let f = variant_features(&src, &config, None, &params, &machine).unwrap();
                    std::hint::black_box(f);
                })
            });
        }
    }
    // A ranking's share of the paper's space: every configuration of one
    // fusion with tiles of 32 (4 schedules, 64 configurations), one by
    // one and grouped by schedule (`variant_features_each`).
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("polybench/linear-algebra/gemm.c");
    let src = frontend::parse_file(&path, &Options::default()).unwrap();
    let params: ParamValues = src
        .scops
        .iter()
        .flat_map(|s| s.parameters.iter())
        .map(|p| (p.clone(), 2000))
        .collect();
    let configs: Vec<Config> = Config::all()
        .into_iter()
        .filter(|c| c.fusion == polytune::config::Fusion::Smart && c.tile == [32, 32, 32])
        .collect();
    group.bench_function(
        format!("gemm {} configurations one by one", configs.len()),
        |b| {
            b.iter(|| {
                for c in &configs {
                    std::hint::black_box(variant_features(&src, c, None, &params, &machine).ok());
                }
            })
        },
    );
    group.bench_function(
        format!("gemm {} configurations by schedule", configs.len()),
        |b| {
            b.iter(|| {
                std::hint::black_box(variant_features_each(
                    &src, &configs, None, &params, &machine,
                ));
            })
        },
    );
    group.finish();
}

criterion_group!(benches, features);
criterion_main!(benches);
