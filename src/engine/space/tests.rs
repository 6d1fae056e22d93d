//! Unit tests of the enumeration.

use super::*;
use crate::frontend::{Options, parse_file};

#[test]
fn every_fusion_is_shared_out_in_runs_of_its_own_keys() {
    let (keys, key_of) = keys_of(&Config::all());
    assert_eq!(keys.len(), 96);
    assert_eq!(key_of.len(), Config::all().len());
    for pieces in [1, 2, 5] {
        let s = shares(&keys, pieces);
        assert_eq!(s.len(), 3 * pieces);
        assert_eq!(s.iter().map(|r| r.len()).sum::<usize>(), 96);
        for r in &s {
            assert!(
                keys[r.clone()]
                    .iter()
                    .all(|k| k.fusion == keys[r.start].fusion)
            );
        }
        assert!(s.windows(2).all(|w| w[0].end == w[1].start));
    }
}

/// One worker (one share per fusion, nothing replayed) and the
/// default pool (fusions split, first keys replayed) find the same
/// variants with the same configurations and notes.
#[test]
fn the_space_does_not_depend_on_the_threads() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("polybench/stencils/jacobi-1d-imper.c");
    let src = parse_file(&path, &Options::default()).unwrap();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| distinct_variants(&src, None).unwrap());
    let four = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap()
        .install(|| distinct_variants(&src, None).unwrap());
    assert!(one.0.len() > 1);
    let view = |(v, s): &(Vec<Variant>, Vec<String>)| {
        let v: Vec<(String, Vec<Config>)> = v
            .iter()
            .map(|v| (v.hash.clone(), v.configs.clone()))
            .collect();
        (v, s.clone())
    };
    assert_eq!(view(&one), view(&four));
    // The progress counts every schedule of every SCoP once.
    let seen = std::sync::Mutex::new(Vec::new());
    let with = distinct_variants_with(&src, None, &|e| seen.lock().unwrap().push(e)).unwrap();
    assert_eq!(view(&with), view(&one));
    let mut seen = seen.into_inner().unwrap();
    seen.sort_by_key(|e| e.done);
    let total = src.scops.len() * 96;
    assert_eq!(seen.len(), total);
    assert!(
        seen.iter()
            .enumerate()
            .all(|(i, e)| e.done == i + 1 && e.total == total)
    );
}

/// With `priv=1` the enumeration writes, configuration by
/// configuration, what the pipeline writes (the privatized model, or
/// its fallback), and finds programs the paper's space does not have.
#[test]
fn privatized_configurations_are_the_pipelines_programs() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/privatize/rowscale.c");
    let src = parse_file(&path, &Options::default()).unwrap();
    let configs: Vec<Config> = Config::all()
        .into_iter()
        .filter(|c| c.unroll == crate::config::UnrollJam::NONE && !c.prevector && !c.wavefront)
        .map(|c| Config {
            privatize: crate::config::Privatize::Scalars,
            ..c
        })
        .collect();
    let (variants, skipped) = distinct_variants_of(&src, None, &configs, &|_| {}).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    let paper = distinct_variants(&src, None).unwrap().0;
    let known: std::collections::HashSet<&str> = paper.iter().map(|v| v.hash.as_str()).collect();
    assert!(variants.iter().any(|v| !known.contains(v.hash.as_str())));
    for v in &variants {
        let c = v.configs[0];
        let text = crate::engine::pipeline::optimize(&src, &c, None)
            .unwrap()
            .text;
        assert_eq!(code_hash(&text), v.hash, "{c}");
    }
}
