//! Seeded synthetic data for the models' tests and benchmarks.

use super::Regressor;
pub(crate) use crate::lab::rng::Lcg;

pub(crate) type Rows = (Vec<Vec<f64>>, Vec<f64>);

/// y = sin(3 x0) x1 + x2² + 2 x3 on uniform [0,1)⁴ plus one irrelevant
/// attribute: (train, test).
pub(crate) fn nonlinear(seed: u64, n_train: usize, n_test: usize) -> (Rows, Rows) {
    let mut r = Lcg::new(seed);
    let mut make = |n: usize| -> Rows {
        let x: Vec<Vec<f64>> = (0..n)
            .map(|_| (0..5).map(|_| r.uniform()).collect())
            .collect();
        let y = x
            .iter()
            .map(|v| (3.0 * v[0]).sin() * v[1] + v[2] * v[2] + 2.0 * v[3])
            .collect();
        (x, y)
    };
    let train = make(n_train);
    let test = make(n_test);
    (train, test)
}

/// The model's test RMSE divided by the RMSE of predicting the training
/// mean: below 1 means the model learned something.
pub(crate) fn rmse_vs_mean(m: &dyn Regressor, train: &Rows, test: &Rows) -> f64 {
    let mean = train.1.iter().sum::<f64>() / train.1.len() as f64;
    let mut model = 0.0;
    let mut base = 0.0;
    for (x, &y) in test.0.iter().zip(&test.1) {
        model += (m.predict(x) - y).powi(2);
        base += (mean - y).powi(2);
    }
    (model / base).sqrt()
}
