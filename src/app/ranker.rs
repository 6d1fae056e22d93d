//! The ranker of the variant as `optimize` uses it (issue 38): trained on
//! the shipped table of measured variants (`variants.json` beside a
//! compiler's models: every variant of the shipped dataset with its
//! features, [`crate::app::variants::VariantTable::shipped`]), it ranks a
//! program's distinct variants from their own features, computed at the
//! parameter values the program runs with, on this machine's caches and
//! measured peaks.
//!
//! Stages: load the table → add this user's measured variants (the local
//! store, below) → fit the ranker (about 2 s on one core; cached by what
//! it learned from) → the features of each variant (in parallel) → score
//! → calibrate the scores as predicted speedups (standardized, scaled by
//! the training kernels' spread of log speedups, as `simulate` was given
//! them).
//!
//! **Learning on the user's machine.** Every learned `optimize` appends
//! what it measured — each run variant's features, configuration, time
//! and baseline, status, machine and compiler — to a store of the
//! campaign's schema in the user's cache directory ([`default_store`]),
//! and so does every campaign (`collect`: each kernel's verified
//! measurements, as its kernel is done); the next `optimize` fits the
//! ranker to the shipped table plus those rows, this machine's weighing
//! [`LOCAL_WEIGHT`] times a shipped row.

use crate::app::variants::VariantRow;
use crate::app::variants::{VariantTable, feature_rows, machine_caches, variant_feature_names};
use crate::config::Config;
use crate::engine::features::ParamValues;
use crate::frontend::SourceFile;
use crate::lab::compiler::{Compiler, Family};
use crate::lab::machine::{Caches, MachineError, Peaks};
use crate::lab::store::StoreError;
use crate::learn::LearnError;
use crate::learn::rank::{Ranker, RankerParams, calibrated, group_spread};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

mod held_out;
mod local;
pub use held_out::{HeldOut, held_out};
pub use local::{Local, Measured, Record, append, local};

/// How much one of this machine's measured variants weighs in the fit
/// against one of the shipped table's. Not tuned: a local kernel has a
/// few measured variants where a shipped one has hundreds, and its
/// measurements are of the machine the ranking is for.
pub const LOCAL_WEIGHT: f64 = 3.0;

/// The user's store unless told otherwise: `learned.sqlite` in the
/// cache directory ([`crate::lab::machine::cache_dir`]).
pub fn default_store() -> Option<PathBuf> {
    crate::lab::machine::cache_dir().map(|d| d.join("learned.sqlite"))
}

/// The shipped table's file name in a compiler's models directory.
pub const FILE: &str = "variants.json";

/// The ranker fitted to the shipped table alone, beside it: read instead
/// of fitted when nothing local is added (its digest says which rows it
/// learned from; a stale one is ignored).
pub const FITTED: &str = "ranker.json";

/// The shipped table and, when it is there and current, the ranker
/// fitted to it.
pub struct Shipped {
    pub table: VariantTable,
    pub fitted: Option<Fitted>,
}

impl std::fmt::Debug for Shipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shipped")
            .field("rows", &self.table.rows.len())
            .field("fitted", &self.fitted.is_some())
            .finish()
    }
}

/// Why the ranker cannot rank.
#[derive(Debug, thiserror::Error)]
pub enum RankerError {
    #[error("{path}: {why}")]
    Table { path: PathBuf, why: String },
    #[error(
        "the ranker's table has features {given:?}, but this polytune computes {expected:?}: it was made by another version (remake it with `cargo test --release --test variant_rank -- --ignored`)"
    )]
    Features {
        given: Vec<String>,
        expected: Vec<String>,
    },
    #[error(transparent)]
    Learn(#[from] LearnError),
    #[error(transparent)]
    Machine(#[from] MachineError),
    #[error("the store of what this machine measured, {path}: {source}")]
    Store { path: PathBuf, source: StoreError },
}

/// The table in `dir` (a compiler's models directory) with the ranker
/// fitted to it when that is there, or `None` when it has no table.
pub fn load(dir: &Path) -> Result<Option<Shipped>, RankerError> {
    let Some(table) = load_table(dir)? else {
        return Ok(None);
    };
    let fitted = std::fs::read_to_string(dir.join(FITTED))
        .ok()
        .and_then(|t| serde_json::from_str::<Fitted>(&t).ok())
        .filter(|f| f.digest == Training::of(&table, None).digest(&RankerParams::default()));
    Ok(Some(Shipped { table, fitted }))
}

/// Writes the ranker fitted to `table` alone beside it in `dir` (what
/// [`load`] reads).
pub fn ship_fitted(dir: &Path, table: &VariantTable) -> Result<(), RankerError> {
    let shipped = Shipped {
        table: table.clone(),
        fitted: None,
    };
    let f = fit(&shipped, None, None)?;
    let text = serde_json::to_string(&f).map_err(|e| RankerError::Table {
        path: dir.join(FITTED),
        why: e.to_string(),
    })?;
    std::fs::write(dir.join(FITTED), text).map_err(|e| RankerError::Table {
        path: dir.join(FITTED),
        why: e.to_string(),
    })?;
    Ok(())
}

/// The table in `dir`, or `None` when it has none.
fn load_table(dir: &Path) -> Result<Option<VariantTable>, RankerError> {
    let path = dir.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(RankerError::Table {
                path,
                why: e.to_string(),
            });
        }
    };
    let t: VariantTable = serde_json::from_str(&text).map_err(|e| RankerError::Table {
        path: path.clone(),
        why: e.to_string(),
    })?;
    let expected = variant_feature_names();
    if t.names != expected {
        return Err(RankerError::Features {
            given: t.names,
            expected,
        });
    }
    Ok(Some(t))
}

/// A ranker fitted to a table, with the scale of its predictions.
#[derive(Clone, Serialize, Deserialize)]
pub struct Fitted {
    ranker: Ranker,
    /// The training kernels' mean spread of log speedups.
    scale: f64,
    /// Rows and kernels it learned from, and of them the local ones.
    pub rows: usize,
    pub kernels: usize,
    pub local_rows: usize,
    pub local_kernels: usize,
    /// What it learned from ([`Training::digest`]).
    digest: String,
}

impl Fitted {
    /// The ranker's scores of feature rows (higher: faster).
    pub fn scores(&self, x: &[Vec<f64>]) -> Vec<f64> {
        self.ranker.scores(x)
    }
}

/// The training rows: the shipped table's, then the local ones (their
/// kernels numbered after the shipped), with their weights.
struct Training {
    x: Vec<Vec<f64>>,
    groups: Vec<usize>,
    label: Vec<f64>,
    weight: Vec<f64>,
}

impl Training {
    fn of(shipped: &VariantTable, local: Option<&Local>) -> Training {
        let mut t = Training {
            x: Vec::new(),
            groups: Vec::new(),
            label: Vec::new(),
            weight: Vec::new(),
        };
        let mut add = |rows: &[VariantRow], offset: usize, w: &dyn Fn(usize) -> f64| {
            for (i, r) in rows.iter().enumerate() {
                t.x.push(r.x.clone());
                t.groups.push(offset + r.kernel);
                t.label.push(r.speedup.ln());
                t.weight.push(w(i));
            }
        };
        add(&shipped.rows, 0, &|_| 1.0);
        if let Some(l) = local {
            add(&l.rows, shipped.kernels.len(), &|i| l.weight[i]);
        }
        t
    }

    /// A name for what the fit learns from, for its cache.
    fn digest(&self, params: &RankerParams) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(serde_json::to_vec(params).unwrap_or_default());
        for (((x, g), l), w) in self
            .x
            .iter()
            .zip(&self.groups)
            .zip(&self.label)
            .zip(&self.weight)
        {
            for v in x {
                h.update(v.to_le_bytes());
            }
            h.update(g.to_le_bytes());
            h.update(l.to_le_bytes());
            h.update(w.to_le_bytes());
        }
        h.finalize()[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// Fits the ranker (the settings of the leave-one-out figures) to every
/// row of `shipped` and of `local`; a fit of the same rows before is read
/// from `cache` instead (a cache that cannot be read or written is not an
/// error).
pub fn fit(
    shipped: &Shipped,
    local: Option<&Local>,
    cache: Option<&Path>,
) -> Result<Fitted, LearnError> {
    let local = local.filter(|l| !l.rows.is_empty());
    if let (Some(f), None) = (&shipped.fitted, local) {
        return Ok(f.clone());
    }
    let shipped = &shipped.table;
    let params = RankerParams::default();
    let t = Training::of(shipped, local);
    let digest = t.digest(&params);
    let file = cache.map(|c| c.join(format!("ranker-{digest}.json")));
    if let Some(f) = file
        .as_ref()
        .and_then(|f| std::fs::read_to_string(f).ok())
        .and_then(|text| serde_json::from_str::<Fitted>(&text).ok())
    {
        return Ok(f);
    }
    let ranker = Ranker::fit(&params, &t.x, &t.groups, &t.label, Some(&t.weight))?;
    let mut kernels = t.groups.clone();
    kernels.sort_unstable();
    kernels.dedup();
    let fitted = Fitted {
        ranker,
        // The shipped kernels' spread: a local kernel's few runs say
        // little of how far its variants lie apart.
        scale: group_spread(
            &t.groups[..shipped.rows.len()],
            &t.label[..shipped.rows.len()],
        ),
        rows: t.x.len(),
        kernels: kernels.len(),
        local_rows: local.map_or(0, |l| l.rows.len()),
        local_kernels: local.map_or(0, |l| l.kernels.len()),
        digest,
    };
    if let (Some(file), Some(dir)) = (&file, cache)
        && std::fs::create_dir_all(dir).is_ok()
        && let Ok(text) = serde_json::to_string(&fitted)
    {
        // Written aside, then renamed: a concurrent reader sees no half.
        let tmp = file.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, file).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    Ok(fitted)
}

/// What ranking needs of the machine and the program's run.
pub struct Where<'a> {
    pub params: &'a ParamValues,
    pub compiler: &'a Compiler,
    pub threads: usize,
    /// Where the machine's peaks are cached.
    pub cache: &'a Path,
}

/// The ranker's predictions of a program's variants.
pub struct Predicted {
    /// Per variant, its predicted speedup (calibrated); the variants whose
    /// features the engine could not compute get the least.
    pub speedups: Vec<f64>,
    /// Variants without features.
    pub unfeatured: usize,
    /// Per variant, its feature row (what the store keeps of a run).
    pub rows: Vec<Option<Vec<f64>>>,
}

/// The feature row of each of `configs` (what the ranker ranks and the
/// store keeps of a run), at the program's parameter values on this
/// machine's caches and measured peaks; `None` where the engine does not
/// transform under the configuration. The plain schedule's row,
/// `Config::default()`'s, is the original's.
pub fn features_here(
    src: &SourceFile,
    context: Option<&str>,
    configs: &[Config],
    at: &Where<'_>,
) -> Result<Vec<Option<Vec<f64>>>, RankerError> {
    let peaks = Peaks::measured_or_cached(at.compiler, at.threads, at.cache)?;
    let machine = machine_caches(&Caches::this(), at.threads);
    Ok(feature_rows(
        src, context, configs, at.params, &machine, &peaks,
    ))
}

/// Ranks the variants whose representative configurations are `configs`.
pub fn predict(
    fitted: &Fitted,
    src: &SourceFile,
    context: Option<&str>,
    configs: &[Config],
    at: &Where<'_>,
) -> Result<Predicted, RankerError> {
    let rows = features_here(src, context, configs, at)?;
    let featured: Vec<Vec<f64>> = rows.iter().flatten().cloned().collect();
    let scored = fitted.scores(&featured);
    let log = calibrated(&scored, fitted.scale);
    let least = log.iter().copied().fold(0.0, f64::min);
    let mut it = log.into_iter();
    let speedups = rows
        .iter()
        .map(|x| match x {
            Some(_) => it.next().unwrap_or(least).exp(),
            None => least.exp(),
        })
        .collect();
    Ok(Predicted {
        speedups,
        unfeatured: rows.iter().filter(|x| x.is_none()).count(),
        rows,
    })
}

/// What the user's store holds for one compiler, and how the shipped
/// ranker ranks it (`polytune models status`).
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub store: PathBuf,
    /// Whether the file exists (nothing learned yet when not).
    pub exists: bool,
    pub compiler: Family,
    /// Measured variants with their features, of how many programs, and of
    /// them this machine's.
    pub rows: usize,
    pub programs: usize,
    pub this_machine: usize,
    /// The shipped table: rows, kernels, and whether its fitted ranker is
    /// current (else the first ranking fits one, and caches it).
    pub shipped_rows: usize,
    pub shipped_kernels: usize,
    pub shipped_fitted: bool,
    /// Per program of the store with 3 measured variants or more, how the
    /// ranker of the shipped variants alone orders them.
    pub programs_ranked: Vec<ProgramRanked>,
    /// The median of their rank correlations.
    pub median_rank_correlation: Option<f64>,
    /// With `--held-out`: each program ranked new to both rankers
    /// ([`held_out`]), and the medians of their ρ (shipped alone, refit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_out: Option<Vec<HeldOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_out_median: Option<(Option<f64>, Option<f64>)>,
}

/// How the shipped ranker orders one program's measured variants.
#[derive(Debug, Clone, Serialize)]
pub struct ProgramRanked {
    pub program: String,
    pub variants: usize,
    /// Spearman's ρ between its scores and the measured speedups (`None`:
    /// one of them constant).
    pub rank_correlation: Option<f64>,
    /// The measured speedup of its top-ranked variant over the best
    /// measured.
    pub top1: Option<f64>,
}

/// The status of the store at `path` for `family`, against `shipped`;
/// with `held_out`, also [`held_out`]'s leave-one-program-out figures.
pub fn status(
    shipped: &Shipped,
    path: &Path,
    family: Family,
    held_out: bool,
) -> Result<Status, RankerError> {
    use crate::learn::rank::metrics::{rank_correlation, top1_share};
    let local = local(path, family)?;
    let fitted = fit(shipped, None, crate::lab::machine::cache_dir().as_deref())?;
    let mut programs_ranked = Vec::new();
    if let Some(l) = &local {
        for (k, name) in l.kernels.iter().enumerate() {
            let rows: Vec<&VariantRow> = l.rows.iter().filter(|r| r.kernel == k).collect();
            if rows.len() < 3 {
                continue;
            }
            let x: Vec<Vec<f64>> = rows.iter().map(|r| r.x.clone()).collect();
            let scores = fitted.scores(&x);
            let label: Vec<f64> = rows.iter().map(|r| r.speedup.ln()).collect();
            programs_ranked.push(ProgramRanked {
                program: name.clone(),
                variants: rows.len(),
                rank_correlation: rank_correlation(&scores, &label),
                top1: top1_share(&scores, &label),
            });
        }
    }
    let rhos: Vec<f64> = programs_ranked
        .iter()
        .filter_map(|p| p.rank_correlation)
        .collect();
    let held = match (&local, held_out) {
        (Some(l), true) => Some(self::held_out(shipped, l)?),
        _ => None,
    };
    let median = |v: Vec<f64>| (!v.is_empty()).then(|| crate::lab::runner::median(&v));
    let held_out_median = held.as_ref().map(|h| {
        (
            median(h.iter().filter_map(|p| p.shipped).collect()),
            median(h.iter().filter_map(|p| p.refit).collect()),
        )
    });
    Ok(Status {
        held_out: held,
        held_out_median,
        store: path.to_path_buf(),
        exists: path.exists(),
        compiler: family,
        rows: local.as_ref().map_or(0, |l| l.rows.len()),
        programs: local.as_ref().map_or(0, |l| l.kernels.len()),
        this_machine: local.as_ref().map_or(0, |l| l.this_machine),
        shipped_rows: shipped.table.rows.len(),
        shipped_kernels: shipped.table.kernels.len(),
        shipped_fitted: shipped.fitted.is_some(),
        median_rank_correlation: (!rhos.is_empty()).then(|| crate::lab::runner::median(&rhos)),
        programs_ranked,
    })
}
