//! `red=2` end to end: the command line writes atax in one pass over `A`
//! with `y` reduced as an array section, the program compiles with gcc
//! and clang and computes what the original computes at SMALL (the
//! section is reduced in parallel) and, past the section's size check, in
//! order; the enumeration writes what the pipeline writes.

mod common;

use common::{compile_variant, compilers, corpus, polytune, root, run_dump_threads};
use polytune::config::{Config, Reductions};
use polytune::lab::dump::Tolerance;

fn optimized(config: &str, out: &std::path::Path) -> String {
    let atax = corpus("linear-algebra/atax.c");
    let o = polytune(&[
        "-q",
        "optimize",
        &atax,
        "--config",
        config,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn atax_with_a_reduced_section_computes_what_the_original_does() {
    let dir = tempfile::tempdir().unwrap();
    let text = optimized("fuse=max,omp=1,red=2", &dir.path().join("atax.c"));
    assert!(
        text.contains("#pragma omp parallel for reduction(+:y[0:n])"),
        "{text}"
    );
    // The same program but a section check no section passes: the loop
    // as written.
    let serial = text.replace("<= 1048576", "<= 0");
    let path = root().join("polybench/linear-algebra/atax.c");
    let original = dir.path().join("orig");
    compile_variant("gcc", &path, &original, "small").unwrap();
    let reference = run_dump_threads(&original).unwrap();
    for (name, program) in [("parallel", &text), ("serial", &serial)] {
        let file = dir.path().join(format!("{name}.c"));
        std::fs::write(&file, program).unwrap();
        for cc in compilers() {
            let exe = dir.path().join(format!("{name}_{cc}"));
            compile_variant(cc, &file, &exe, "small").unwrap();
            let dump = run_dump_threads(&exe).unwrap();
            reference
                .compare(&dump, Tolerance::default())
                .unwrap_or_else(|m| panic!("{name} with {cc}: {m}"));
        }
    }
}

#[test]
fn the_enumeration_writes_red_2_as_the_pipeline_does() {
    use polytune::engine::space::{code_hash, distinct_variants_of};
    let path = root().join("polybench/linear-algebra/atax.c");
    let src = polytune::frontend::parse_file(&path, &Default::default()).unwrap();
    let configs: Vec<Config> = [
        "fuse=max,omp=1",
        "fuse=max,omp=1,red=2",
        "fuse=max,omp=1,red=1",
        "fuse=max,tile=32x32x1,omp=1,red=2",
    ]
    .iter()
    .map(|t| t.parse().unwrap())
    .collect();
    let (variants, skipped) = distinct_variants_of(&src, None, &configs, &|_| {}).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    for v in &variants {
        for c in &v.configs {
            let direct = polytune::engine::pipeline::optimize(&src, c, None).unwrap();
            assert_eq!(code_hash(&direct.text), v.hash, "{c}");
        }
    }
    // red=2 is a program of its own: one pass, y reduced.
    let fused: Vec<_> = variants
        .iter()
        .filter(|v| v.text.contains("reduction(+:y[0:n])"))
        .collect();
    assert_eq!(fused.len(), 2, "{}", variants.len());
    assert!(
        fused
            .iter()
            .all(|v| v.configs.iter().all(|c| c.reduce == Reductions::Scheduled))
    );
}
