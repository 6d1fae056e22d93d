//! Engine speed per corpus kernel: one configuration end to end (model,
//! dependences, schedule, AST, C) — target: median at most 30 ms.
//! Run with `cargo bench --bench engine`; filter with a kernel name.

use criterion::{Criterion, criterion_group, criterion_main};
use polytune::config::Config;
use polytune::frontend::{self, Options};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn corpus() -> Vec<PathBuf> {
    polytune::app::campaign::kernel_files(
        &[Path::new(env!("CARGO_MANIFEST_DIR")).join("polybench")],
    )
    .unwrap()
}

fn one_configuration(c: &mut Criterion) {
    let config: Config = "fuse=smart,tile=32x32x32,wave=1,omp=1,prevec=1,simd=1,uj=4"
        .parse()
        .unwrap();
    let mut group = c.benchmark_group("one configuration");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300));
    for path in corpus() {
        let src = frontend::parse_file(&path, &Options::default()).unwrap();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        group.bench_function(&name, |b| {
            b.iter(|| {
                let out = polytune::engine::pipeline::optimize(&src, &config, None).unwrap();
                std::hint::black_box(out);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, one_configuration);
criterion_main!(benches);
