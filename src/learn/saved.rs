//! Model files: a trained model with everything needed to use it safely
//! on a new program — the feature schema it was trained with, and the
//! machine and compiler its speedups were measured on.

use super::dataset::{Dataset, Selection};
use super::{Kind, LearnError, Regressor, SpeedupModel};
use crate::config::Config;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Bumped whenever the file layout or a model's fields change.
pub(crate) const FORMAT: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedModel {
    pub format: u32,
    pub kind: Kind,
    pub selection: Selection,
    /// The features, in attribute order (then the configuration bits).
    pub feature_names: Vec<String>,
    /// The typed attributes beyond the bits, in attribute order after
    /// them ([`crate::config::EXTENDED_ATTRIBUTES`]; none for a model of
    /// the paper's space, whose files stay as they were).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extended: Vec<String>,
    pub machine: String,
    pub compiler: String,
    pub flags: String,
    /// The kernels it learned from, and the number of rows.
    pub kernels: Vec<String>,
    pub rows: usize,
    /// What the model predicts (older files: the speedup).
    #[serde(default)]
    pub target: super::Target,
    pub model: SpeedupModel,
}

impl SavedModel {
    /// Trains a model of `kind` on the whole dataset.
    pub fn train(kind: Kind, d: &Dataset, target: super::Target) -> Result<SavedModel, LearnError> {
        let x = d.all_row_attributes();
        let y = target.encode(d);
        let mut model = kind.model()?;
        model.fit(&x, &y)?;
        Ok(SavedModel {
            format: FORMAT,
            kind,
            selection: d.selection.clone(),
            feature_names: d.feature_names.clone(),
            extended: d.extended_names.clone(),
            machine: d.machine.clone(),
            compiler: d.compiler.clone(),
            flags: d.flags.clone(),
            kernels: d.kernels.iter().map(|k| k.name.clone()).collect(),
            rows: d.rows.len(),
            target,
            model,
        })
    }

    /// The file of a model kind in a model directory.
    pub(crate) fn path(dir: &Path, kind: Kind) -> PathBuf {
        dir.join(format!("{}.json", kind.slug()))
    }

    pub fn save(&self, dir: &Path) -> Result<PathBuf, LearnError> {
        std::fs::create_dir_all(dir).map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot create {}: {e}", dir.display()))
        })?;
        let p = SavedModel::path(dir, self.kind);
        // Atomic: a failed write leaves the previous model (or none), never
        // a partial file.
        crate::lab::store::atomic::write(&p, serde_json::to_string(self)?.as_bytes())?;
        Ok(p)
    }

    pub(crate) fn load(path: &Path) -> Result<SavedModel, LearnError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| LearnError::Data(format!("cannot read {}: {e}", path.display())))?;
        let v: serde_json::Value = serde_json::from_str(&text)?;
        let format = v.get("format").and_then(|f| f.as_u64()).unwrap_or(0);
        if format != FORMAT as u64 {
            return Err(LearnError::Data(format!(
                "{} is a model file of format {format}; this polytune reads format {FORMAT} (retrain with `polytune train`)",
                path.display()
            )));
        }
        let m: SavedModel = serde_json::from_value(v)?;
        super::dataset::extended_indices(&m.extended)
            .map_err(|e| LearnError::Data(format!("{}: {e}", path.display())))?;
        Ok(m)
    }

    /// Every model file in a directory, in the paper's model order.
    pub fn load_dir(dir: &Path) -> Result<Vec<SavedModel>, LearnError> {
        let mut out = Vec::new();
        for kind in Kind::ALL {
            let p = SavedModel::path(dir, kind);
            if p.exists() {
                out.push(SavedModel::load(&p)?);
            }
        }
        if out.is_empty() {
            return Err(LearnError::Data(format!(
                "no model files (lr.json, svm.json, …) in {}",
                dir.display()
            )));
        }
        Ok(out)
    }

    /// The predicted speedup of a configuration for a program with the
    /// given features (by name; every trained feature must be present).
    pub fn predict(&self, features: &[(String, f64)], config: &Config) -> Result<f64, LearnError> {
        let f = self.features(features)?;
        let ext = super::dataset::extended_indices(&self.extended)?;
        Ok(self
            .target
            .decode(self.model.predict(&Dataset::attributes(&f, config, &ext))))
    }

    /// The trained features picked out of a characterization.
    pub(crate) fn features(&self, features: &[(String, f64)]) -> Result<Vec<f64>, LearnError> {
        self.feature_names
            .iter()
            .map(|n| {
                features
                    .iter()
                    .find(|(m, _)| m == n)
                    .map(|(_, v)| super::dataset::feature_value(n, *v))
                    .ok_or_else(|| {
                        LearnError::Data(format!(
                            "the model needs feature {n}, which the characterization lacks"
                        ))
                    })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first kernel's features, named, as a characterization gives them.
    fn first_kernel_features(d: &Dataset) -> Vec<(String, f64)> {
        d.feature_names
            .iter()
            .cloned()
            .zip(d.kernels[0].features.iter().copied())
            .collect()
    }

    /// The shipped model files load with typed selections (compiler,
    /// sizes) and are written back byte for byte as they are.
    #[test]
    fn the_shipped_models_load_and_are_written_back_unchanged() {
        use crate::lab::compiler::Family;
        use crate::lab::size::Size;
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
        for family in Family::ALL {
            let dir = root.join(family.as_str());
            for kind in Kind::ALL {
                let path = SavedModel::path(&dir, kind);
                let text = std::fs::read_to_string(&path).unwrap();
                let m = SavedModel::load(&path).unwrap();
                assert_eq!(m.selection.compiler, family);
                assert_eq!(
                    (m.selection.size, m.selection.feature_size),
                    (Size::Medium, Size::Small)
                );
                assert_eq!(
                    serde_json::to_string(&m).unwrap(),
                    text.trim_end(),
                    "{}",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn a_log_target_model_predicts_speedups() {
        let d = Dataset::synthetic(4, 30, 3, 5);
        let feats = first_kernel_features(&d);
        let m = SavedModel::train(Kind::Lr, &d, crate::learn::Target::LogSpeedup).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let back = SavedModel::load(&m.save(dir.path()).unwrap()).unwrap();
        assert_eq!(back.target, crate::learn::Target::LogSpeedup);
        for r in d.rows.iter().take(10) {
            let p = back.predict(&feats, &r.config).unwrap();
            assert!(p > 0.0 && p.is_finite(), "{p}");
            assert_eq!(p.to_bits(), m.predict(&feats, &r.config).unwrap().to_bits());
        }
        // Files written before the target existed learned the speedup.
        let json = std::fs::read_to_string(m.save(dir.path()).unwrap()).unwrap();
        let old = json.replace("\"target\":\"log-speedup\",", "");
        assert_ne!(old, json);
        let p = dir.path().join("old.json");
        std::fs::write(&p, old).unwrap();
        assert_eq!(
            SavedModel::load(&p).unwrap().target,
            crate::learn::Target::Speedup
        );
    }

    #[test]
    fn every_model_predicts_the_same_after_a_round_trip() {
        let d = Dataset::synthetic(5, 40, 4, 3);
        let dir = tempfile::tempdir().unwrap();
        let feats = first_kernel_features(&d);
        for kind in Kind::ALL {
            let mut m = SavedModel::train(kind, &d, crate::learn::Target::Speedup).unwrap();
            if let SpeedupModel::Mlp(mlp) = &mut m.model {
                // Keep the test quick; the file format is what is tested.
                mlp.epochs = 20;
                let x = d.all_row_attributes();
                let y: Vec<f64> = d.rows.iter().map(|r| r.speedup).collect();
                mlp.fit(&x, &y).unwrap();
            }
            let before: Vec<f64> = d
                .rows
                .iter()
                .take(30)
                .map(|r| m.predict(&feats, &r.config).unwrap())
                .collect();
            let p = m.save(dir.path()).unwrap();
            let back = SavedModel::load(&p).unwrap();
            let after: Vec<f64> = d
                .rows
                .iter()
                .take(30)
                .map(|r| back.predict(&feats, &r.config).unwrap())
                .collect();
            assert_eq!(
                before.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                after.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "{}",
                kind.name()
            );
            assert!(before.iter().all(|v| v.is_finite()), "{}", kind.name());
        }
        assert_eq!(SavedModel::load_dir(dir.path()).unwrap().len(), 6);
        let bad = dir.path().join("lr.json");
        std::fs::write(&bad, r#"{"format": 99}"#).unwrap();
        let e = SavedModel::load(&bad).unwrap_err().to_string();
        assert!(e.contains("format 99"), "{e}");
    }
}
