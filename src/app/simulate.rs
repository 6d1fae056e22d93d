//! `simulate`: search strategies replayed over a campaign's measured
//! space, as one typed report that the command line prints as Markdown,
//! CSV or JSON.

use crate::app::variants::VariantTable;
use crate::learn::dataset::Dataset;
use crate::learn::evaluate;
use crate::learn::rank::RankerParams;
use crate::learn::search::simulate::{self, Options, Simulation};
use crate::learn::{Kind, LearnError};
use serde::Serialize;
use std::path::Path;
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
    /// With the variant ranker's predictions: its leave-one-out figures
    /// and the dataset's variants its table lacks.
    pub ranker: Option<RankerFigures>,
}

/// How the variant ranker ranked the dataset's variants, leave one
/// kernel out.
#[derive(Debug, Clone, Serialize)]
pub struct RankerFigures {
    /// Per kernel and on average.
    pub evaluation: crate::app::variants::Evaluation,
    /// Variants of the dataset the table lacks (given their kernel's
    /// least prediction).
    pub unmatched: usize,
}

/// Where the models' leave-one-out predictions come from.
#[derive(Debug, Clone, Copy)]
pub enum Predictions<'a> {
    /// The text of a file `evaluate --predictions` wrote for the same
    /// dataset and models.
    Written(&'a str),
    /// The leave-one-out folds, trained again.
    Folds,
    /// The variant ranker's, from this table of the dataset's variants'
    /// features (the shipped `variants.json`), each kernel ranked by the
    /// ranker fitted to the others ([`VariantTable::leave_one_out_speedups`]):
    /// the one model the strategies see, as `optimize` follows it; each
    /// fold also learns from what `Besides` gives: the other programs'
    /// runs of the stores (`--store`), the labels of a confirmed copy
    /// (`--labels`).
    Ranker(&'a VariantTable, crate::app::variants::Besides<'a>),
}

/// The stages whose progress is shown: the leave-one-out folds (when
/// the predictions are not written), then the simulated runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Folds,
    Runs,
}

/// How far the work is.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// A stage begins.
    Begins(Stage),
    /// `done` of the stage's `total` are through.
    Through {
        stage: Stage,
        done: usize,
        total: usize,
    },
}

/// The strategies of `opts` replayed over `d` with the models' (those
/// of `eo`) leave-one-out predicted speedups, read or trained as `from`
/// says.
pub fn simulate(
    d: &Dataset,
    eo: &evaluate::Options,
    from: Predictions,
    opts: &Options,
    progress: &(dyn Fn(Event) + Sync),
) -> Result<Report, LearnError> {
    let since = Instant::now();
    let mut kinds = eo.models.clone();
    let mut ranker = None;
    let predicted = match from {
        Predictions::Written(text) => simulate::read_predictions(d, &eo.models, text)?,
        Predictions::Folds => {
            progress(Event::Begins(Stage::Folds));
            evaluate::predictions_with(d, eo, &through(Stage::Folds, progress))?
        }
        Predictions::Ranker(t, besides) => {
            progress(Event::Begins(Stage::Folds));
            let masks = training_masks(d, eo.train_kernels, eo.seed);
            let folds = crate::app::variants::Folds::new(masks.as_deref(), besides);
            let l = t.leave_one_out_speedups(d, &RankerParams::default(), folds)?;
            ranker = Some(RankerFigures {
                evaluation: l.evaluation,
                unmatched: l.unmatched,
            });
            kinds = vec![Kind::Ranker];
            vec![l.speedups]
        }
    };
    progress(Event::Begins(Stage::Runs));
    let simulation =
        simulate::simulate(d, &kinds, &predicted, opts, &through(Stage::Runs, progress))?;
    Ok(Report {
        compiler: d.compiler.clone(),
        flags: d.flags.clone(),
        kernels: d.kernels.len(),
        machine: d.machine.clone(),
        seconds: since.elapsed().as_secs_f64(),
        simulation,
        variants: d.rows.len(),
        ranker,
    })
}

/// Per held-out kernel, the kernels its fold learns from when only `n`
/// of the others are drawn (as `evaluate`'s and `simulate`'s folds draw
/// them for `seed`); `None`: all the others.
pub(crate) fn training_masks(d: &Dataset, n: Option<usize>, seed: u64) -> Option<Vec<Vec<bool>>> {
    n.map(|n| {
        (0..d.kernels.len())
            .map(|h| evaluate::training_kernels(d, h, Some(n), seed))
            .collect()
    })
}

/// `progress` as a lower layer's `(done, total)` callback within `stage`.
fn through(stage: Stage, progress: &(dyn Fn(Event) + Sync)) -> impl Fn(usize, usize) + Sync + '_ {
    move |done, total| progress(Event::Through { stage, done, total })
}

/// Every strategy's mean curve, drawn into `path` (SVG).
pub fn plot(d: &Dataset, s: &Simulation, path: &Path) -> Result<(), LearnError> {
    let series: Vec<(String, Vec<f64>)> = s
        .strategies
        .iter()
        .map(|c| (c.strategy.clone(), c.mean.clone()))
        .collect();
    crate::learn::plot::curves(
        &format!(
            "{}: best so far, mean % of Opt over {} kernels",
            d.selection.compiler,
            s.landscapes.len()
        ),
        "% of Opt",
        &series,
        path,
    )
}
