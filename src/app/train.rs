//! `train`: the six speedup models (and the landscapes of the programs
//! they learned from) fitted on a campaign's dataset and written to a
//! directory. [`train`] prints nothing: it reports progress as [`Event`]s
//! and returns a [`Report`].

use crate::learn::dataset::Dataset;
use crate::learn::saved::SavedModel;
use crate::learn::search::transfer::{FILE as LANDSCAPES, Landscapes};
use crate::learn::{Kind, LearnError, Target};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One model written.
#[derive(Debug, Clone, Serialize)]
pub struct Trained {
    /// The model's name (`LR`, `SVM`, ...).
    pub model: &'static str,
    pub file: PathBuf,
    pub seconds: f64,
}

/// What `train` did: on which data, and the files it wrote.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub db: PathBuf,
    pub output: PathBuf,
    pub compiler: String,
    pub flags: String,
    pub machine: String,
    pub size: crate::lab::size::Size,
    pub measured_threads: i64,
    pub target: &'static str,
    pub kernels: Vec<String>,
    pub excluded: Vec<String>,
    pub variants: usize,
    pub models: Vec<Trained>,
    /// Bayesian optimization's transfer prior in `optimize`: the
    /// programs the models learned from, as measured.
    pub landscapes: PathBuf,
}

/// Progress of a training.
#[derive(Debug)]
pub enum Event<'a> {
    Training {
        variants: usize,
        kernels: usize,
        compiler: &'a str,
        machine: &'a str,
    },
    Trained(&'a Trained),
    Landscapes {
        kernels: usize,
        file: &'a Path,
    },
}

/// What to train and where to write it.
pub struct Training<'a> {
    /// The store the dataset came from (for the report).
    pub db: &'a Path,
    pub dataset: &'a Dataset,
    pub kinds: &'a [Kind],
    pub target: Target,
    pub output: &'a Path,
    /// Kernels left out of the dataset (for the report).
    pub excluded: &'a [String],
}

/// Fits each model on the dataset and writes it, then the landscapes.
pub fn train(t: &Training, progress: &mut dyn FnMut(Event)) -> Result<Report, LearnError> {
    let d = t.dataset;
    progress(Event::Training {
        variants: d.rows.len(),
        kernels: d.kernels.len(),
        compiler: &d.compiler,
        machine: &d.machine,
    });
    let mut models = Vec::new();
    for &kind in t.kinds {
        let started = Instant::now();
        let m = SavedModel::train(kind, d, t.target)?;
        let file = m.save(t.output)?;
        let written = Trained {
            model: kind.name(),
            file,
            seconds: started.elapsed().as_secs_f64(),
        };
        progress(Event::Trained(&written));
        models.push(written);
    }
    let landscapes = t.output.join(LANDSCAPES);
    Landscapes::of_dataset(d, None).save(&landscapes)?;
    progress(Event::Landscapes {
        kernels: d.kernels.len(),
        file: &landscapes,
    });
    Ok(Report {
        db: t.db.to_path_buf(),
        output: t.output.to_path_buf(),
        compiler: d.compiler.clone(),
        flags: d.flags.clone(),
        machine: d.machine.clone(),
        size: d.selection.size,
        measured_threads: d.selection.threads,
        target: t.target.name(),
        kernels: d.kernels.iter().map(|k| k.name.clone()).collect(),
        excluded: t.excluded.to_vec(),
        variants: d.rows.len(),
        models,
        landscapes,
    })
}
