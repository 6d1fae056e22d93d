//! Front-end speed: parsing and lowering the whole corpus (issue: "well
//! under a second" in a release build).

use criterion::{Criterion, criterion_group, criterion_main};
use polytune::frontend::{self, Options};
use std::path::{Path, PathBuf};

fn corpus() -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("polybench");
    polytune::app::campaign::kernel_files(&[dir])
        .unwrap()
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect()
}

fn parse_corpus(c: &mut Criterion) {
    let files = corpus();
    let options = Options::default();
    c.bench_function(&format!("parse corpus ({} files)", files.len()), |b| {
        b.iter(|| {
            for (path, text) in &files {
                let src = frontend::parse_source(path, text.clone(), &options).unwrap();
                std::hint::black_box(src);
            }
        })
    });
}

criterion_group!(benches, parse_corpus);
criterion_main!(benches);
