//! Learning which transformations pay off (paper section 4): six speedup
//! predictors over (features of the original program, bits of T), the
//! dataset they learn from, and their leave-one-benchmark-out evaluation.
//!
//! Every model is ours (no crate has K*, M5P or a regression MLP, and the
//! SVM needs the normalized polynomial kernel) and implements
//! [`Regressor`]; [`Model`] is the closed set that can be saved and loaded.

pub mod scale;

/// Why learning or prediction failed.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    #[error("cannot learn: {0}")]
    Data(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
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
pub fn check_shape(x: &[Vec<f64>], y: &[f64]) -> Result<usize, LearnError> {
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
    if let Some(i) = x
        .iter()
        .flatten()
        .chain(y)
        .position(|v| !v.is_finite())
    {
        return Err(LearnError::Data(format!(
            "value {i} (row-major, targets last) is not finite"
        )));
    }
    Ok(d)
}
