//! Prints how long each engine stage takes on one file (a profiling aid):
//! `cargo run --release --example stage_times -- FILE [CONFIG]`.
use polytune::config::Config;
use polytune::engine::model::Model;
use polytune::frontend::{self, Options};
use polytune::isl::Ctx;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = std::path::Path::new(&args[1]);
    let config: Config = args.get(2).map(|s| s.parse().unwrap()).unwrap_or_else(|| {
        "fuse=smart,tile=32x32x32,wave=1,omp=1,prevec=1,simd=1,uj=4"
            .parse()
            .unwrap()
    });
    let t = Instant::now();
    let src = frontend::parse_file(path, &Options::default()).unwrap();
    println!("parse        {:>8.2} ms", t.elapsed().as_secs_f64() * 1e3);
    for scop in &src.scops {
        let ctx = Ctx::new();
        let t = Instant::now();
        let model = Model::new(&ctx, scop, None).unwrap();
        println!("model+deps   {:>8.2} ms", t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let ok = model.respects(&model.original).unwrap();
        println!(
            "respects     {:>8.2} ms ({ok})",
            t.elapsed().as_secs_f64() * 1e3
        );
        let t = Instant::now();
        let s = polytune::engine::transform::schedule(&model, scop.index, &config).unwrap();
        println!("schedule     {:>8.2} ms", t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let l = polytune::engine::codegen::lower(&model, scop.index, &s).unwrap();
        println!("AST+facts    {:>8.2} ms", t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let c = polytune::engine::codegen::emit(scop, &l, &config, "  ");
        println!(
            "emit         {:>8.2} ms ({} bytes)",
            t.elapsed().as_secs_f64() * 1e3,
            c.text.len()
        );
    }
}
