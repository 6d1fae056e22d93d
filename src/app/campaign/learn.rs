//! What a campaign measured, appended to the user's store of this
//! machine's runs ([`crate::app::ranker`]) as each kernel is done with a
//! compiler: its original and every variant verified and timed, each with
//! its features at the parameter values the kernel runs with, as the
//! learned `optimize` appends its own runs — so that it learns from
//! campaigns too. A kernel interrupted in the middle appends nothing; the
//! kernels before it stay appended.
//!
//! Learning is optional: a store that cannot be written (damaged, locked,
//! not a store) is said once and the campaign goes on without it; its own
//! store is never touched here.

use super::lab::Lab;
use super::stages::Prepared;
use super::{Campaign, Event};
use crate::app::ranker::{Measured, RankerError, Record, Where, append, features_here};
use crate::app::variants::{VariantsError, corpus_parameters};
use crate::config::Config;
use crate::engine::features::ParamValues;
use crate::engine::space::{Variant, code_hash};
use crate::lab::compiler::Compiler;
use crate::lab::verify::{Measurement, Status};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What a campaign appended to the user's store (`collect --json`'s
/// `learned`).
#[derive(Debug, Clone, Serialize)]
pub struct Learned {
    pub store: PathBuf,
    /// Measurements appended, each with its features.
    pub rows: usize,
}

/// Why a kernel's measurements were not appended.
#[derive(Debug, thiserror::Error)]
pub enum NotLearned {
    #[error("its parameter values could not be recorded: {0}")]
    Parameters(VariantsError),
    #[error("the engine could compute the features of none of its measured programs")]
    NoFeatures,
    #[error(transparent)]
    Ranker(#[from] RankerError),
}

impl NotLearned {
    /// Whether no later kernel could be appended either (the store, or
    /// this machine's peaks): learning stops.
    pub fn stops(&self) -> bool {
        matches!(
            self,
            NotLearned::Ranker(RankerError::Store { .. } | RankerError::Machine(_))
        )
    }
}

/// Appending to the user's store, over a campaign.
pub(super) struct Learning {
    store: PathBuf,
    rows: usize,
    /// The store failed (said once): nothing more is appended.
    stopped: bool,
    /// The last kernel's parameter values, shared by its compilers.
    params: Option<(PathBuf, ParamValues)>,
}

/// One kernel's verified measurements with one compiler.
pub(super) struct Kernel<'a> {
    pub prepared: &'a Prepared,
    pub path: &'a Path,
    pub src: &'a crate::frontend::SourceFile,
    pub compiler: &'a Compiler,
    /// The original as timed in this batch, and its median.
    pub original: &'a Measurement,
    pub baseline: f64,
    /// The variants verified and timed against it.
    pub variants: &'a [(&'a Variant, Measurement)],
}

impl Learning {
    pub(super) fn new(store: PathBuf) -> Learning {
        Learning {
            store,
            rows: 0,
            stopped: false,
            params: None,
        }
    }

    /// What was appended, unless the store failed before anything was.
    pub(super) fn learned(&self) -> Option<Learned> {
        (!self.stopped || self.rows > 0).then(|| Learned {
            store: self.store.clone(),
            rows: self.rows,
        })
    }

    /// Appends `k`'s measurements (`lab` measured them; `work` is the
    /// campaign's scratch directory); a failure is reported through
    /// `progress`, and one of the store stops learning.
    pub(super) fn kernel(
        &mut self,
        c: &Campaign,
        k: &Kernel<'_>,
        lab: &Lab,
        work: &Path,
        progress: &mut dyn FnMut(Event),
    ) {
        if self.stopped {
            return;
        }
        match self.append(c, k, lab, work) {
            Ok(rows) => self.rows += rows,
            Err(e) => {
                self.stopped = e.stops();
                progress(Event::NotLearned {
                    name: &k.prepared.name,
                    compiler: k.compiler.family,
                    error: &e.to_string(),
                    stops: self.stopped,
                });
            }
        }
    }

    fn append(
        &mut self,
        c: &Campaign,
        k: &Kernel<'_>,
        lab: &Lab,
        work: &Path,
    ) -> Result<usize, NotLearned> {
        if k.original.status != Status::Ok || k.original.timing.is_none() || k.baseline <= 0.0 {
            return Ok(0);
        }
        let params = self.params(c, k, lab)?;
        // The original by the plain schedule's features (its code
        // regenerated), as `optimize` records it; each variant by the
        // configuration it is known by.
        let configs: Vec<Config> = std::iter::once(Config::default())
            .chain(
                k.variants
                    .iter()
                    .map(|(v, _)| crate::learn::dataset::known_by(&v.configs)),
            )
            .collect();
        let cache = crate::lab::machine::cache_dir().unwrap_or_else(|| work.to_path_buf());
        let rows = features_here(
            k.src,
            None,
            &configs,
            &Where {
                params: &params,
                compiler: k.compiler,
                threads: c.protocol.threads,
                cache: &cache,
            },
        )?;
        let source_hash = code_hash(&k.src.text);
        let mut runs = Vec::new();
        if let Some(x) = &rows[0] {
            runs.push(Measured {
                code_hash: &source_hash,
                configs: &[],
                x,
                measurement: k.original,
            });
        }
        for ((v, m), x) in k.variants.iter().zip(&rows[1..]) {
            if let Some(x) = x {
                runs.push(Measured {
                    code_hash: &v.hash,
                    configs: &v.configs,
                    x,
                    measurement: m,
                });
            }
        }
        if runs.is_empty() {
            return Err(NotLearned::NoFeatures);
        }
        // Known by its file's name, as `optimize` knows a program: the
        // same file tuned and collected is one program of the store.
        let name = k
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| k.prepared.name.clone());
        Ok(append(
            &self.store,
            &Record {
                kernel: &name,
                source_hash: &source_hash,
                compiler: k.compiler,
                size: c.size,
                threads: c.protocol.threads,
                baseline: k.baseline,
                runs,
            },
        )?)
    }

    /// The parameter values the kernel runs with: recorded by the
    /// instrumented original's runs, or, for a corpus-style kernel, by
    /// one run of its instrumented original (once per kernel).
    fn params(
        &mut self,
        c: &Campaign,
        k: &Kernel<'_>,
        lab: &Lab,
    ) -> Result<ParamValues, NotLearned> {
        if let Some(p) = lab.recorded_params() {
            return Ok(p);
        }
        if let Some((path, p)) = &self.params
            && path == k.path
        {
            return Ok(p.clone());
        }
        let p = corpus_parameters(
            k.src,
            k.path,
            k.compiler,
            c.size,
            k.prepared.include.clone(),
            c.protocol.threads,
        )
        .map_err(NotLearned::Parameters)?;
        self.params = Some((k.path.to_path_buf(), p.clone()));
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::store::StoreError;

    #[test]
    fn only_the_store_or_the_machine_stops_learning() {
        let store = NotLearned::Ranker(RankerError::Store {
            path: PathBuf::from("mine.sqlite"),
            source: StoreError::Io("damaged".into()),
        });
        assert!(store.stops());
        assert!(
            store
                .to_string()
                .starts_with("the store of what this machine measured, mine.sqlite: "),
            "{store}"
        );
        assert!(!NotLearned::NoFeatures.stops());
        let params = NotLearned::Parameters(VariantsError::Source(
            PathBuf::from("k.c"),
            "no scop".into(),
        ));
        assert!(!params.stops(), "another kernel may still be appended");
    }
}
