//! The distinct programs of a kernel's space. Many configurations yield
//! the same code (nothing to tile, no parallel loop, ...); the space of a
//! kernel is the set of distinct generated programs, found by hashing the
//! code. Schedules depend only on fusion, pre-vectorization, tiling and
//! wavefront (96 combinations), so each is computed and lowered once and
//! the 16 post-pass combinations are emitted from it.

use crate::config::{Config, Fusion};
use crate::engine::codegen;
use crate::engine::model::{EngineError, Model};
use crate::engine::pipeline::bounded;
use crate::engine::transform;
use crate::frontend::SourceFile;
use crate::isl::Ctx;
use crate::isl::Schedule;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// One distinct program and every configuration that produces it.
#[derive(Debug, Clone)]
pub struct Variant {
    /// SHA-256 of the generated code (configuration comments excluded).
    pub hash: String,
    /// In enumeration order; the first is the canonical one.
    pub configs: Vec<Config>,
    /// The whole file for the canonical configuration.
    pub text: String,
}

/// Hash of a program, ignoring polytune's configuration comments.
pub fn code_hash(text: &str) -> String {
    let mut h = Sha256::new();
    for line in text.lines() {
        if !line.trim_start().starts_with("/* polytune:") {
            h.update(line.as_bytes());
            h.update(b"\n");
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Key of the schedule a configuration needs.
fn schedule_key(c: &Config) -> Config {
    Config {
        omp: false,
        simd: false,
        unroll: 1,
        ..*c
    }
}

/// Every distinct program of the file's space, in order of first
/// appearance in [`Config::all`]. A SCoP the engine cannot handle stays
/// unchanged in every variant (its reason is in the second result).
pub fn distinct_variants(
    src: &SourceFile,
    context: Option<&str>,
) -> Result<(Vec<Variant>, Vec<String>), EngineError> {
    let configs = Config::all();
    let mut bodies: Vec<Vec<String>> = vec![Vec::with_capacity(src.scops.len()); configs.len()];
    let mut skipped = Vec::new();
    for scop in &src.scops {
        let original = src.text[scop.region.body.start..scop.region.body.end].to_string();
        let unchanged = |bodies: &mut Vec<Vec<String>>| {
            bodies.iter_mut().for_each(|b| b.push(original.clone()));
        };
        if let Err(e) = crate::engine::pipeline::check_limits(scop) {
            skipped.push(format!("SCoP {} left unchanged: {e}", scop.index));
            unchanged(&mut bodies);
            continue;
        }
        let ctx = Ctx::new();
        let model = match bounded(&ctx, scop, || Model::new(&ctx, scop, context)) {
            Ok(Ok(m)) => m,
            Ok(Err(e @ EngineError::Context { .. })) => return Err(e),
            Ok(Err(e)) | Err(e) => {
                skipped.push(format!("SCoP {} left unchanged: {e}", scop.index));
                unchanged(&mut bodies);
                continue;
            }
        };
        let indent = src.indent_of(scop);
        let mut hyperplanes: HashMap<Fusion, Result<Schedule, String>> = HashMap::new();
        let mut lowered: HashMap<Config, Result<codegen::Lowered, String>> = HashMap::new();
        // Once one configuration hits the work limit, the others of this
        // SCoP are not tried: each would run into it again.
        let mut exhausted: Option<String> = None;
        for (k, c) in configs.iter().enumerate() {
            let key = schedule_key(c);
            let l = lowered.entry(key).or_insert_with(|| {
                if let Some(e) = &exhausted {
                    return Err(e.clone());
                }
                // Each configuration gets the whole work limit (the model's
                // work was bounded above).
                let l = bounded(&ctx, scop, || {
                    let base = hyperplanes.entry(key.fusion).or_insert_with(|| {
                        transform::hyperplanes(&model, scop.index, key.fusion)
                            .map_err(|e| e.to_string())
                    });
                    match base {
                        Ok(base) => transform::refine(&model, scop.index, base, &key)
                            .and_then(|s| codegen::lower(&model, scop.index, &s))
                            .map_err(|e| e.to_string()),
                        Err(e) => Err(e.clone()),
                    }
                });
                l.unwrap_or_else(|e| {
                    exhausted = Some(e.to_string());
                    // A schedule cached while isl refused work is not
                    // trusted either.
                    hyperplanes.remove(&key.fusion);
                    Err(e.to_string())
                })
            });
            match l {
                Ok(l) => bodies[k].push(codegen::emit(scop, l, c, &indent)),
                Err(e) => {
                    let note = format!("SCoP {} left unchanged for {}: {e}", scop.index, key);
                    if !skipped.contains(&note) {
                        skipped.push(note);
                    }
                    bodies[k].push(original.clone());
                }
            }
        }
    }
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut variants: Vec<Variant> = Vec::new();
    for (c, b) in configs.iter().zip(bodies) {
        let text = src.splice(&b);
        let hash = code_hash(&text);
        match index.get(&hash) {
            Some(&k) => variants[k].configs.push(*c),
            None => {
                index.insert(hash.clone(), variants.len());
                variants.push(Variant {
                    hash,
                    configs: vec![*c],
                    text,
                });
            }
        }
    }
    Ok((variants, skipped))
}
