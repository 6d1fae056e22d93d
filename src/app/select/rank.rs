//! The models' predictions of a program's distinct variants, and the
//! space the search strategies see in them.

use super::Strategy;
use crate::config::Config;
use crate::engine::space::Variant;
use crate::learn::dataset::known_by;
use crate::learn::saved::SavedModel;
use crate::learn::search::Space;
use crate::learn::search::transfer::Landscapes;
use crate::learn::{Kind, LearnError};

/// Predictions of every model for every variant.
pub(crate) struct Ranking {
    pub kinds: Vec<Kind>,
    /// The representative configuration of each variant.
    pub configs: Vec<Config>,
    /// `predicted[m][v]`: model m's predicted speedup of variant v.
    pub predicted: Vec<Vec<f64>>,
    /// Other programs' measured landscapes at each variant
    /// ([`Space::transfer`]); empty without them.
    pub transfer: Vec<Vec<Option<crate::learn::search::transfer::Known>>>,
    /// The model the search follows alone (an index into `kinds`): the
    /// variant ranker when it ranked ([`Ranking::follow`]); `None`: all
    /// the models together.
    pub leader: Option<usize>,
}

/// Predicts every variant with every model.
pub(crate) fn rank(
    models: &[SavedModel],
    landscapes: Option<&Landscapes>,
    features: &[(String, f64)],
    variants: &[Variant],
) -> Result<Ranking, LearnError> {
    // A variant that only draws beyond the paper's space produce
    // (`--sample`) is known by its least such configuration.
    let configs: Vec<Config> = variants.iter().map(|v| known_by(&v.configs)).collect();
    let mut predicted = Vec::new();
    for m in models {
        predicted.push(
            configs
                .iter()
                .map(|c| m.predict(features, c))
                .collect::<Result<Vec<f64>, _>>()?,
        );
    }
    let transfer = landscapes.map_or_else(Vec::new, |l| {
        l.project(
            &variants
                .iter()
                .map(|v| v.configs.clone())
                .collect::<Vec<_>>(),
        )
    });
    Ok(Ranking {
        kinds: models.iter().map(|m| m.kind).collect(),
        configs,
        predicted,
        transfer,
        leader: None,
    })
}

impl Ranking {
    /// Adds `model`'s predicted speedups of every variant and lets the
    /// search follow it alone (the other models' predictions stay in the
    /// report).
    pub fn follow(&mut self, model: Kind, speedups: Vec<f64>) {
        self.kinds.push(model);
        self.predicted.push(speedups);
        self.leader = Some(self.kinds.len() - 1);
    }

    /// The place (from 1) of each variant in the leading model's order,
    /// when one leads.
    pub fn places(&self) -> Option<Vec<usize>> {
        let m = self.leader?;
        let p = &self.predicted[m];
        let mut order: Vec<usize> = (0..p.len()).collect();
        order.sort_by(|&a, &b| p[b].total_cmp(&p[a]).then(a.cmp(&b)));
        let mut place = vec![0; p.len()];
        for (k, &v) in order.iter().enumerate() {
            place[v] = k + 1;
        }
        Some(place)
    }

    /// The space as the search strategies see it: every model, or the
    /// leading one alone.
    pub(crate) fn space(&self) -> Space<'_> {
        let models = match self.leader {
            Some(m) => m..m + 1,
            None => 0..self.kinds.len(),
        };
        Space {
            kinds: &self.kinds[models.clone()],
            configs: &self.configs,
            predicted: &self.predicted[models],
            transfer: &self.transfer,
        }
    }

    /// The variant with the least sum of ranks over all models.
    pub(crate) fn consensus(&self) -> Option<usize> {
        self.space().consensus()
    }

    /// Up to `shots` distinct variants (indices) to run, best guess first,
    /// each with the models that chose it.
    pub(crate) fn candidates(
        &self,
        strategy: Strategy,
        shots: usize,
        seed: u64,
    ) -> Vec<(usize, String)> {
        self.space().plan(strategy, shots, seed)
    }
}
