//! Learning which transformations pay off (paper section 4): six speedup
//! predictors over (features of the original program, bits of T), the
//! dataset they learn from, and their leave-one-benchmark-out evaluation.
//!
//! Every model is ours (no crate has K*, M5P or a regression MLP; linfa's
//! SVR and k-d tree, the tests' oracles for our SVM and IBk, are slower:
//! see svr.rs and ibk.rs) and implements [`Regressor`]; [`SpeedupModel`] is the
//! closed set that can be saved and loaded.

// The numeric kernels index several arrays with one loop variable; the
// index form is the clearer one there.
#![allow(clippy::needless_range_loop)]

pub mod csv_text;
pub mod dataset;
pub mod evaluate;
pub mod ibk;
pub mod kstar;
pub mod linalg;
pub mod linear;
pub mod m5p;
pub mod mlp;
pub mod plot;
pub mod rank;
pub mod saved;
pub mod scale;
pub mod search;
pub mod svr;

use serde::{Deserialize, Serialize};
#[cfg(test)]
pub(crate) mod testdata;

/// Why learning or prediction failed.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    #[error("cannot learn: {0}")]
    Data(String),
    /// The store holds measurements of several machines (their
    /// descriptions): one must be chosen, by a part of its description.
    #[error("cannot learn: the store mixes machines ({}); choose one by a part of its description", .0.join("; "))]
    Machines(Vec<String>),
    #[error(transparent)]
    Store(#[from] crate::lab::store::StoreError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("model file: {0}")]
    Json(#[from] serde_json::Error),
}

/// A regression model: learns y from rows of attributes.
///
/// Rows are plain slices so that every model sees the same data; each
/// model scales attributes (and the target) itself, as the paper's Weka
/// models did.
pub trait Regressor {
    /// Learns from `x` (one row per instance, all rows the same length)
    /// and `y`. Fails on empty or ragged data.
    fn fit(&mut self, x: &[Vec<f64>], y: &[f64]) -> Result<(), LearnError>;
    /// The prediction for one row (of the length seen by `fit`).
    fn predict(&self, row: &[f64]) -> f64;
}

/// Checks the shape every model needs; returns the number of attributes.
pub(crate) fn check_shape(x: &[Vec<f64>], y: &[f64]) -> Result<usize, LearnError> {
    if x.is_empty() {
        return Err(LearnError::Data("no training rows".into()));
    }
    if x.len() != y.len() {
        return Err(LearnError::Data(format!(
            "{} rows but {} targets",
            x.len(),
            y.len()
        )));
    }
    let d = x[0].len();
    if let Some(r) = x.iter().position(|r| r.len() != d) {
        return Err(LearnError::Data(format!(
            "row {r} has {} attributes, row 0 has {d}",
            x[r].len()
        )));
    }
    if let Some(i) = x.iter().flatten().chain(y).position(|v| !v.is_finite()) {
        return Err(LearnError::Data(format!(
            "value {i} (row-major, targets last) is not finite"
        )));
    }
    Ok(d)
}

/// What the models are trained to predict. The paper's models learn the
/// speedup itself; its logarithm weighs a 2x loss like a 2x gain, so
/// the few variants that are tens of times faster or slower do not
/// dominate the fit. Predictions are turned back into speedups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    #[default]
    Speedup,
    LogSpeedup,
    /// The logarithm of the speedup over the kernel's typical variant (the
    /// geometric mean of its measured variants): only the ranking within
    /// a kernel matters, and this leaves the models nothing to explain
    /// but what each transformation does relative to the others.
    Relative,
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Speedup => "speedup",
            Target::LogSpeedup => "log",
            Target::Relative => "relative",
        }
    }

    /// What the models learn, in words (for reports).
    pub fn describe(self) -> &'static str {
        match self {
            Target::Speedup => "speedup",
            Target::LogSpeedup => "logarithm of the speedup",
            Target::Relative => "logarithm of the speedup over the kernel's typical variant",
        }
    }

    pub fn parse(s: &str) -> Result<Target, String> {
        match s {
            "speedup" => Ok(Target::Speedup),
            "log" | "log-speedup" => Ok(Target::LogSpeedup),
            "relative" => Ok(Target::Relative),
            _ => Err(format!("unknown target `{s}` (speedup, log or relative)")),
        }
    }

    /// The training targets of a dataset's rows.
    pub(crate) fn encode(self, d: &dataset::Dataset) -> Vec<f64> {
        let mut center = vec![0.0; d.kernels.len()];
        if self == Target::Relative {
            let mut n = vec![0usize; d.kernels.len()];
            for r in &d.rows {
                center[r.kernel] += r.speedup.ln();
                n[r.kernel] += 1;
            }
            for (c, n) in center.iter_mut().zip(n) {
                *c /= n.max(1) as f64;
            }
        }
        d.rows
            .iter()
            .map(|r| match self {
                Target::Speedup => r.speedup,
                Target::LogSpeedup => r.speedup.ln(),
                Target::Relative => r.speedup.ln() - center[r.kernel],
            })
            .collect()
    }

    /// A model's output as a predicted speedup (for [`Target::Relative`],
    /// over the kernel's typical variant).
    pub(crate) fn decode(self, y: f64) -> f64 {
        match self {
            Target::Speedup => y,
            Target::LogSpeedup | Target::Relative => y.exp(),
        }
    }
}

/// The six model kinds of the paper, in its order ([`Kind::ALL`]), and
/// the ranker of the variant's own features ([`rank`], issue 38), which
/// ranks a program's variants from what the engine knows of each rather
/// than predicting a speedup from the original's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kind {
    Lr,
    Svm,
    Ibk,
    KStar,
    M5p,
    Mlp,
    Ranker,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Lr,
        Kind::Svm,
        Kind::Ibk,
        Kind::KStar,
        Kind::M5p,
        Kind::Mlp,
    ];

    /// The paper's name of the model.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Lr => "LR",
            Kind::Svm => "SVM",
            Kind::Ibk => "IBk",
            Kind::KStar => "K*",
            Kind::M5p => "M5P",
            Kind::Mlp => "MLP",
            Kind::Ranker => "variant ranker",
        }
    }

    /// A file-name-safe name.
    pub(crate) fn slug(self) -> &'static str {
        match self {
            Kind::Lr => "lr",
            Kind::Svm => "svm",
            Kind::Ibk => "ibk",
            Kind::KStar => "kstar",
            Kind::M5p => "m5p",
            Kind::Mlp => "mlp",
            Kind::Ranker => "ranker",
        }
    }

    /// Accepts the paper's name or the slug, in any case.
    pub fn parse(s: &str) -> Result<Kind, String> {
        let t = s.trim().to_ascii_lowercase();
        Kind::ALL
            .into_iter()
            .find(|k| k.slug() == t || k.name().to_ascii_lowercase() == t)
            .ok_or_else(|| {
                format!(
                    "unknown model `{s}`: expected one of {}",
                    Kind::ALL.map(Kind::name).join(", ")
                )
            })
    }

    /// A fresh model of this kind with the paper's settings; the ranker
    /// learns from another table ([`rank::Ranker::fit`]), not from the
    /// paper's rows.
    pub fn model(self) -> Result<SpeedupModel, LearnError> {
        Ok(match self {
            Kind::Lr => SpeedupModel::Lr(linear::Linear::new()),
            Kind::Svm => SpeedupModel::Svm(svr::Svr::default()),
            Kind::Ibk => SpeedupModel::Ibk(ibk::Ibk::default()),
            Kind::KStar => SpeedupModel::KStar(kstar::KStar::default()),
            Kind::M5p => SpeedupModel::M5p(m5p::M5p::default()),
            Kind::Mlp => SpeedupModel::Mlp(mlp::Mlp::default()),
            Kind::Ranker => {
                return Err(LearnError::Data(
                    "the variant ranker learns from the variants' features, not from the paper's attributes".into(),
                ));
            }
        })
    }
}

/// Any of the six models of the speedup (in its [`Target`] form): the
/// closed set that can be saved and loaded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum SpeedupModel {
    Lr(linear::Linear),
    Svm(svr::Svr),
    Ibk(ibk::Ibk),
    KStar(kstar::KStar),
    M5p(m5p::M5p),
    Mlp(mlp::Mlp),
}

/// `$body` with `$m` bound to the model inside whichever variant `$model`
/// is.
macro_rules! each_model {
    ($model:expr, $m:ident => $body:expr) => {
        match $model {
            SpeedupModel::Lr($m) => $body,
            SpeedupModel::Svm($m) => $body,
            SpeedupModel::Ibk($m) => $body,
            SpeedupModel::KStar($m) => $body,
            SpeedupModel::M5p($m) => $body,
            SpeedupModel::Mlp($m) => $body,
        }
    };
}

impl SpeedupModel {
    fn inner(&self) -> &dyn Regressor {
        each_model!(self, m => m)
    }

    fn inner_mut(&mut self) -> &mut dyn Regressor {
        each_model!(self, m => m)
    }
}

impl Regressor for SpeedupModel {
    fn fit(&mut self, x: &[Vec<f64>], y: &[f64]) -> Result<(), LearnError> {
        self.inner_mut().fit(x, y)
    }

    fn predict(&self, row: &[f64]) -> f64 {
        self.inner().predict(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_targets_are_centered_per_kernel_and_keep_each_kernels_order() {
        let d = dataset::Dataset::synthetic(3, 10, 4, 7);
        let log = Target::LogSpeedup.encode(&d);
        let rel = Target::Relative.encode(&d);
        for (k, rows) in d.rows_by_kernel().iter().enumerate() {
            let mean: f64 = rows.iter().map(|&i| rel[i]).sum::<f64>() / rows.len() as f64;
            assert!(mean.abs() < 1e-12, "kernel {k}: mean {mean}");
            // A constant shift per kernel: differences within it are kept.
            for w in rows.windows(2) {
                let (a, b) = (w[0], w[1]);
                assert!(((rel[a] - rel[b]) - (log[a] - log[b])).abs() < 1e-12);
            }
        }
        assert_eq!(Target::parse("relative"), Ok(Target::Relative));
        assert!((Target::Relative.decode(2f64.ln()) - 2.0).abs() < 1e-12);
        assert_eq!(Target::Speedup.encode(&d)[3], d.rows[3].speedup);
    }
}
