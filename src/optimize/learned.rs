//! The learned selection (paper section 5): rank a program's distinct
//! variants with trained speedup models, then prove the best guesses by
//! running them — verified against the original, timed in the same batch
//! — and keep the fastest correct one. The original is always a
//! candidate, so the result is never slower than the input as measured.

use crate::learn::dataset::representative;
use crate::learn::evaluate::{ranking, round_robin};
use crate::learn::rng::Lcg;
use crate::learn::saved::SavedModel;
use crate::learn::{Kind, LearnError};
use crate::space::enumerate::Variant;

/// How candidates are picked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Strategy {
    /// Each model's best guess in turn, then each model's second, … (the
    /// paper's multi-model).
    MultiModel,
    /// One model's top N.
    Model(Kind),
    /// N variants drawn at random (a baseline).
    Random,
}

impl std::str::FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Strategy, String> {
        match s {
            "multi-model" => Ok(Strategy::MultiModel),
            "random" => Ok(Strategy::Random),
            _ => match s.strip_prefix("model:") {
                Some(name) => Kind::parse(name).map(Strategy::Model),
                None => Err(format!(
                    "unknown strategy `{s}`: expected multi-model, model:NAME (NAME one of {}) or random",
                    Kind::ALL.map(Kind::name).join(", ")
                )),
            },
        }
    }
}

/// Predictions of every model for every variant.
pub struct Ranking {
    pub kinds: Vec<Kind>,
    /// The representative configuration (bit form) of each variant.
    pub configs: Vec<String>,
    /// `predicted[m][v]`: model m's predicted speedup of variant v.
    pub predicted: Vec<Vec<f64>>,
}

/// Predicts every variant with every model.
pub fn rank(
    models: &[SavedModel],
    features: &[(String, f64)],
    variants: &[Variant],
) -> Result<Ranking, LearnError> {
    let configs: Vec<String> = variants
        .iter()
        .map(|v| {
            let bits: Vec<String> = v.configs.iter().map(|c| c.bits()).collect();
            representative(&bits).cloned().unwrap_or_default()
        })
        .collect();
    let mut predicted = Vec::new();
    for m in models {
        predicted.push(
            configs
                .iter()
                .map(|c| m.predict(features, c))
                .collect::<Result<Vec<f64>, _>>()?,
        );
    }
    Ok(Ranking {
        kinds: models.iter().map(|m| m.kind).collect(),
        configs,
        predicted,
    })
}

impl Ranking {
    /// Up to `shots` distinct variants (indices) to run, best guess first,
    /// each with the models that chose it.
    pub fn candidates(&self, strategy: Strategy, shots: usize, seed: u64) -> Vec<(usize, String)> {
        let all: Vec<usize> = (0..self.configs.len()).collect();
        let mut out: Vec<(usize, String)> = Vec::new();
        let add = |v: usize, why: String, out: &mut Vec<(usize, String)>| {
            if let Some(c) = out.iter_mut().find(|c| c.0 == v) {
                c.1 = format!("{}, {why}", c.1);
            } else {
                out.push((v, why));
            }
        };
        match strategy {
            Strategy::MultiModel => {
                let ranks: Vec<Vec<usize>> =
                    self.predicted.iter().map(|p| ranking(&all, p)).collect();
                // Agreement between models costs no extra run.
                for (v, by) in round_robin(&ranks, shots) {
                    let why: Vec<String> = by
                        .iter()
                        .map(|&(m, depth)| format!("{} #{}", self.kinds[m].name(), depth + 1))
                        .collect();
                    out.push((v, why.join(", ")));
                }
            }
            Strategy::Model(kind) => {
                if let Some(m) = self.kinds.iter().position(|&k| k == kind) {
                    for (i, v) in ranking(&all, &self.predicted[m])
                        .into_iter()
                        .take(shots)
                        .enumerate()
                    {
                        add(v, format!("{} #{}", kind.name(), i + 1), &mut out);
                    }
                }
            }
            Strategy::Random => {
                let mut rng = Lcg::new(seed);
                let mut pool = all.clone();
                while out.len() < shots && !pool.is_empty() {
                    let i = ((rng.uniform() * pool.len() as f64) as usize).min(pool.len() - 1);
                    let v = pool.swap_remove(i);
                    add(v, "random".into(), &mut out);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranking_of(p: Vec<Vec<f64>>) -> Ranking {
        let n = p[0].len();
        Ranking {
            kinds: Kind::ALL[..p.len()].to_vec(),
            configs: (0..n).map(|i| format!("{i:012b}")).collect(),
            predicted: p,
        }
    }

    #[test]
    fn multi_model_takes_each_models_best_then_goes_deeper() {
        let r = ranking_of(vec![vec![3.0, 2.0, 1.0, 0.0], vec![3.0, 0.0, 1.0, 2.0]]);
        let c = r.candidates(Strategy::MultiModel, 2, 0);
        // Both models agree on variant 0; the second run is LR's #2.
        assert_eq!(c.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(c[0].1, "LR #1, SVM #1");
        let c = r.candidates(Strategy::MultiModel, 3, 0);
        assert_eq!(c.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1, 3]);
        let one = r.candidates(Strategy::Model(Kind::Svm), 2, 0);
        assert_eq!(one.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 3]);
        let rnd = r.candidates(Strategy::Random, 10, 5);
        assert_eq!(rnd.len(), 4, "never more than the variants");
    }

    #[test]
    fn strategies_parse_with_helpful_errors() {
        assert_eq!("multi-model".parse(), Ok(Strategy::MultiModel));
        assert_eq!("model:k*".parse(), Ok(Strategy::Model(Kind::KStar)));
        assert_eq!("model:M5P".parse(), Ok(Strategy::Model(Kind::M5p)));
        let e = "best".parse::<Strategy>().unwrap_err();
        assert!(e.contains("multi-model, model:NAME"), "{e}");
    }
}
