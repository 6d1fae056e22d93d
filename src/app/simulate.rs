//! `simulate`: search strategies replayed over a campaign's measured
//! space, as one typed report that the command line prints as Markdown,
//! CSV or JSON.

use crate::learn::dataset::Dataset;
use crate::learn::search::simulate::{self, Options, Simulation};
use crate::learn::{Kind, LearnError};
use serde::Serialize;
use std::time::Instant;

/// The simulation and the dataset it ran on (JSON: keys in alphabetical
/// order, as the command line writes them through `serde_json::Value`).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The dataset's compiler, its flags and its machine.
    pub compiler: String,
    pub flags: String,
    /// Kernels of the dataset.
    pub kernels: usize,
    pub machine: String,
    /// Seconds from the leave-one-out predictions to the end of the
    /// simulation.
    pub seconds: f64,
    pub simulation: Simulation,
    /// Verified variants of the dataset.
    pub variants: usize,
}

/// The strategies of `opts` replayed over `d` with the models'
/// leave-one-out `predicted` speedups; `since` is when the work began
/// (before the predictions), for the report's time.
pub fn simulate(
    d: &Dataset,
    models: &[Kind],
    predicted: &[Vec<f64>],
    opts: &Options,
    since: Instant,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Report, LearnError> {
    let simulation = simulate::simulate(d, models, predicted, opts, progress)?;
    Ok(Report {
        compiler: d.compiler.clone(),
        flags: d.flags.clone(),
        kernels: d.kernels.len(),
        machine: d.machine.clone(),
        seconds: since.elapsed().as_secs_f64(),
        simulation,
        variants: d.rows.len(),
    })
}
