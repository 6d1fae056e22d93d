//! The user's store as the ranker learns from it: its runs read as rows
//! of the shipped table's features ([`local`]), and a learned selection's
//! runs appended to it ([`append`]).

use super::{LOCAL_WEIGHT, RankerError};
use crate::app::variants::{VariantRow, variant_feature_names};
use crate::config::Config;
use crate::lab::compiler::{Compiler, Family};
use crate::lab::size::Size;
use crate::lab::store::{Machine, Store, StoreError};
use crate::lab::verify::Measurement;
use std::path::Path;

/// What this user measured, as the ranker learns from it.
pub struct Local {
    /// One kernel per stored kernel (name and source); the rows' `kernel`
    /// indexes them.
    pub kernels: Vec<String>,
    pub rows: Vec<VariantRow>,
    /// Per row: [`LOCAL_WEIGHT`] for this machine's, 1 for another's.
    pub weight: Vec<f64>,
    /// Rows measured on this machine.
    pub this_machine: usize,
}

impl Local {
    /// `other`'s kernels and runs after these (another store's).
    pub fn extend(&mut self, other: Local) {
        let offset = self.kernels.len();
        self.kernels.extend(other.kernels);
        self.rows.extend(other.rows.into_iter().map(|mut r| {
            r.kernel += offset;
            r
        }));
        self.weight.extend(other.weight);
        self.this_machine += other.this_machine;
    }

    /// Its runs as rows the leave-one-kernel-out folds also learn from
    /// (`evaluate`/`simulate --ranking variant --store`), weighted as in
    /// [`super::fit`].
    pub fn also(&self) -> crate::app::variants::Also<'_> {
        crate::app::variants::Also {
            kernels: &self.kernels,
            rows: &self.rows,
            weight: &self.weight,
        }
    }
}

/// How long appending to the user's store waits for another process's
/// write (another `optimize` appending, a `collect` into the same file):
/// learning is optional, and a run is not held up for it longer.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The measured variants of `family` in the store at `path` (`None` when
/// there is no such file), as a table of the shipped one's features.
pub fn local(path: &Path, family: Family) -> Result<Option<Local>, RankerError> {
    if !path.exists() {
        return Ok(None);
    }
    let err = |source| RankerError::Store {
        path: path.to_path_buf(),
        source,
    };
    let store = Store::open_read_only(path).map_err(err)?;
    let names = variant_feature_names();
    let rows = store.featured(family, &names).map_err(err)?;
    let cpu = Machine::this().cpu;
    let mut kernels: Vec<(i64, String)> = Vec::new();
    let mut table_rows = Vec::new();
    let mut weight = Vec::new();
    for r in rows {
        if r.x.len() != names.len() || !(r.speedup.is_finite() && r.speedup > 0.0) {
            continue;
        }
        let k = match kernels.iter().position(|(id, _)| *id == r.kernel_id) {
            Some(k) => k,
            None => {
                kernels.push((r.kernel_id, r.kernel.clone()));
                kernels.len() - 1
            }
        };
        weight.push(if r.cpu == cpu { LOCAL_WEIGHT } else { 1.0 });
        table_rows.push(VariantRow {
            kernel: k,
            config: r.config,
            speedup: r.speedup,
            x: r.x,
        });
    }
    let this_machine = weight.iter().filter(|&&w| w == LOCAL_WEIGHT).count();
    Ok(Some(Local {
        kernels: kernels.into_iter().map(|(_, n)| n).collect(),
        rows: table_rows,
        weight,
        this_machine,
    }))
}

/// One run of a program to add to the store.
pub struct Measured<'a> {
    /// The code's hash and configurations ([`crate::engine::space::Variant`]);
    /// the original's configurations are empty.
    pub code_hash: &'a str,
    pub configs: &'a [Config],
    pub x: &'a [f64],
    pub measurement: &'a Measurement,
}

/// What one learned selection measured of one program.
pub struct Record<'a> {
    /// The program's file name and the hash of its source.
    pub kernel: &'a str,
    pub source_hash: &'a str,
    pub compiler: &'a Compiler,
    pub size: Size,
    pub threads: usize,
    /// The original's median seconds in the batch the variants were
    /// timed in.
    pub baseline: f64,
    /// The original first, then the candidates.
    pub runs: Vec<Measured<'a>>,
}

/// Appends `r` to the store at `path` (created with its directory when
/// missing): the rows measured, each with its features. Returns how many
/// were written.
pub fn append(path: &Path, r: &Record<'_>) -> Result<usize, RankerError> {
    let err = |source: StoreError| RankerError::Store {
        path: path.to_path_buf(),
        source: source.locked_after(path, LOCK_WAIT),
    };
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir).map_err(|e| err(StoreError::Io(e.to_string())))?;
    }
    let mut store = Store::open_waiting(path, LOCK_WAIT).map_err(err)?;
    let names = variant_feature_names();
    let machine = store.machine_id(&Machine::this()).map_err(err)?;
    let compiler = store.compiler_id(r.compiler).map_err(err)?;
    let kernel = store.kernel_id(r.kernel, r.source_hash).map_err(err)?;
    let mut written = 0;
    for run in &r.runs {
        let variant = if run.configs.is_empty() {
            store.original_id(kernel, run.code_hash)
        } else {
            store.variant_id(kernel, run.code_hash, run.configs)
        }
        .map_err(err)?;
        let key = crate::lab::store::Key {
            variant,
            machine,
            compiler,
            size: r.size,
            threads: r.threads as i64,
        };
        store
            .record_against(&key, run.measurement, Some(r.baseline))
            .map_err(err)?;
        store
            .record_variant_features(variant, machine, r.size, r.threads as i64, &names, run.x)
            .map_err(err)?;
        written += 1;
    }
    Ok(written)
}
