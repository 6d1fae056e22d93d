//! The stages of [`super::enumerate`]: whether a SCoP is handled at all,
//! the workers' bodies gathered per configuration, and the programs they
//! make, told apart by their hash.

use super::{Part, Variant, code_hash};
use crate::config::Config;
use crate::engine::model::{EngineError, Model};
use crate::engine::pipeline::bounded;
use crate::frontend::scop::Scop;
use crate::frontend::{Replacement, SourceFile};
use crate::isl::Ctx;
use std::collections::HashMap;

/// Why a SCoP is left unchanged for every configuration (over the limits,
/// or no model), if it is; an error in the context is the caller's.
pub(super) fn refusal(scop: &Scop, context: Option<&str>) -> Result<Option<String>, EngineError> {
    if let Err(e) = crate::engine::pipeline::check_limits(scop) {
        return Ok(Some(format!("SCoP {} left unchanged: {e}", scop.index)));
    }
    // Whether the SCoP has a model at all, once, before the workers
    // build theirs.
    let ctx = Ctx::new();
    match bounded(&ctx, scop, || Model::new(&ctx, scop, context)) {
        Ok(Ok(_)) => Ok(None),
        Ok(Err(e @ EngineError::Context { .. })) => Err(e),
        Ok(Err(e)) | Err(e) => Ok(Some(format!("SCoP {} left unchanged: {e}", scop.index))),
    }
}

/// Per configuration, the bodies of the SCoPs so far (`None`: the
/// original, not copied: a SCoP of megabytes left unchanged by every
/// configuration took gigabytes) and whether one has OpenMP; and the notes
/// of what was left unchanged.
pub(super) struct Bodies {
    text: Vec<Vec<Option<Replacement>>>,
    openmp: Vec<bool>,
    pub(super) skipped: Vec<String>,
}

impl Bodies {
    /// None yet, for `n` configurations of `src`.
    pub(super) fn new(src: &SourceFile, n: usize) -> Bodies {
        Bodies {
            text: vec![Vec::with_capacity(src.scops.len()); n],
            openmp: vec![false; n],
            skipped: Vec::new(),
        }
    }

    /// The SCoP's original body, for every configuration.
    pub(super) fn unchanged(&mut self) {
        self.text.iter_mut().for_each(|b| b.push(None));
    }

    /// The workers' parts for one SCoP, per configuration: its body, or
    /// the original with a note (every key after the first that exhausted
    /// the work limit gets that one's message).
    pub(super) fn gather(
        &mut self,
        scop: &Scop,
        parts: Vec<Part>,
        keys: &[Config],
        key_of: &[usize],
    ) {
        let exhausted = parts
            .iter()
            .filter_map(|p| p.exhausted.clone())
            .min_by_key(|(p, _)| *p);
        let mut of: Vec<Option<super::Body>> = vec![None; key_of.len()];
        for (k, body) in parts.into_iter().flat_map(|p| p.bodies) {
            of[k] = Some(body);
        }
        for (k, body) in of.into_iter().enumerate() {
            let body = match &exhausted {
                Some((p, e)) if key_of[k] > *p => Err(e.clone()),
                _ => body.expect("every key has a share"),
            };
            match body {
                Ok(b) => {
                    self.openmp[k] |= b.openmp;
                    self.text[k].push(Some(b.replacement()));
                }
                Err(e) => {
                    let note = format!(
                        "SCoP {} left unchanged for {}: {e}",
                        scop.index, keys[key_of[k]]
                    );
                    if !self.skipped.contains(&note) {
                        self.skipped.push(note);
                    }
                    self.text[k].push(None);
                }
            }
        }
    }

    /// The distinct programs, in order of first configuration, each with
    /// every configuration that makes it. Configurations with the same
    /// bodies make one program, written and hashed once.
    pub(super) fn distinct(&mut self, src: &SourceFile, configs: &[Config]) -> Vec<Variant> {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut made: HashMap<Vec<Option<Replacement>>, usize> = HashMap::new();
        let mut variants: Vec<Variant> = Vec::new();
        let bodies = std::mem::take(&mut self.text);
        let openmp = std::mem::take(&mut self.openmp);
        for ((c, b), openmp) in configs.iter().zip(bodies).zip(openmp) {
            if let Some(&k) = made.get(&b) {
                variants[k].configs.push(*c);
                continue;
            }
            let whole: Vec<Replacement> = src
                .scops
                .iter()
                .zip(&b)
                .map(|(s, r)| {
                    r.clone().unwrap_or_else(|| {
                        Replacement::body(src.text[s.region.body.start..s.region.body.end].into())
                    })
                })
                .collect();
            let text = src.splice_framed(&whole);
            let hash = code_hash(&text);
            let k = match index.get(&hash) {
                Some(&k) => {
                    variants[k].configs.push(*c);
                    k
                }
                None => {
                    index.insert(hash.clone(), variants.len());
                    variants.push(Variant {
                        hash,
                        configs: vec![*c],
                        text,
                        openmp,
                    });
                    variants.len() - 1
                }
            };
            made.insert(b, k);
        }
        variants
    }
}
