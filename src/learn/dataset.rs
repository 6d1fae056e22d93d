//! The learning dataset (paper section 4.2): one row per measured,
//! verified variant of a kernel — the features F of the kernel's original
//! program, the bits of a configuration T that produces the variant, and
//! the measured speedup of the variant over the original.
//!
//! Several configurations often produce the same code (a tile size where
//! nothing can be tiled, say). A variant is represented by its *least*
//! configuration (fewest bits set, then the smallest bit string): the
//! transformations that actually took effect.
//!
//! The attributes are the paper's bits, then the typed attributes of what
//! the bits do not say ([`Config::extended_attributes`]: free tile sizes,
//! the inner unroll factor, reductions, privatization, expansion,
//! register tiles; `collect --space extended`), each 0 in the paper's
//! space. Only those that vary over the rows are kept
//! ([`Dataset::extended_names`]), so the models of a store of the
//! paper's space alone are exactly the models of its bits, as before
//! the extended space. A variant that a configuration of the paper's
//! space produces is represented by one of those; a variant measured
//! only beyond it by its least configuration there, and counted in
//! [`Dataset::beyond_paper`].
//!
//! Why one file: its code is about 500 lines, the dataset with the feature
//! schema its rows are built on; its tests make up the rest.

use super::LearnError;
use crate::config::{Config, EXTENDED, EXTENDED_ATTRIBUTES};
use crate::lab::characterize::Backend;
use crate::lab::compiler::Family;
use crate::lab::size::Size;
use crate::lab::store::{Measured, Store};
use crate::lab::verify::Status;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Number of bits in a configuration's canonical form.
pub const CONFIG_BITS: usize = crate::config::BITS;

/// Which measurements make up a dataset.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Selection {
    pub compiler: Family,
    pub size: Size,
    pub threads: i64,
    /// Feature back end and the size the features were counted at.
    pub feature_backend: Backend,
    pub feature_size: Size,
    /// Only the measurements of machines whose description contains this
    /// text (a store holds several machine types' campaigns: a dataset
    /// is one machine's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            compiler: Family::Gcc,
            size: Size::Medium,
            threads: 2,
            feature_backend: Backend::Cachegrind,
            feature_size: Size::Small,
            machine: None,
        }
    }
}

/// One kernel: its features and the baseline it is measured against.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kernel {
    pub name: String,
    pub features: Vec<f64>,
    pub baseline_seconds: f64,
}

/// One variant of one kernel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// Index into [`Dataset::kernels`].
    pub kernel: usize,
    pub variant_id: i64,
    /// The representative configuration (its bit string when serialized,
    /// its readable form beyond the paper's space).
    #[serde(with = "crate::config::as_text")]
    pub config: Config,
    /// How many configurations produce this variant (its weight when
    /// configurations are drawn at random): of the paper's space, or
    /// for a variant beyond it, of those drawn.
    pub configs: usize,
    pub speedup: f64,
    /// Every configuration known to produce this variant (the
    /// representative among them): how another program's space finds
    /// this measurement by configuration (the transfer prior of
    /// [`crate::learn::search::transfer`]). Not serialized.
    #[serde(skip)]
    pub all_configs: Vec<Config>,
}

impl Row {
    /// The configurations known to produce this variant: all of them
    /// when the store said, else the representative alone.
    pub(crate) fn producing_configs(&self) -> Vec<Config> {
        if self.all_configs.is_empty() {
            vec![self.config]
        } else {
            self.all_configs.clone()
        }
    }
}

/// Everything the models learn from and are evaluated on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Dataset {
    pub selection: Selection,
    pub machine: String,
    pub compiler: String,
    pub flags: String,
    pub feature_names: Vec<String>,
    pub kernels: Vec<Kernel>,
    pub rows: Vec<Row>,
    /// The typed attributes beyond the paper's bits that the models see
    /// (those of [`EXTENDED_ATTRIBUTES`] that vary over the rows; none
    /// for a dataset of the paper's space).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extended_names: Vec<String>,
    /// Rows whose variant no configuration of the paper's space produces
    /// (measured with `collect --space extended`). Not serialized: files
    /// written from a dataset stay as they were.
    #[serde(skip)]
    pub beyond_paper: usize,
}

/// The least configuration: fewest bits set, then the smallest bit
/// string; of the paper's space only (none when no configuration is).
pub fn representative(configs: &[Config]) -> Option<&Config> {
    configs
        .iter()
        .filter(|c| c.is_paper())
        .min_by_key(|c| (c.ones(), c.bits()))
}

/// The configuration a variant of `configs` is known by (the one its
/// features are computed and its predictions made for): its
/// [`representative`], else, for a variant only draws beyond the paper's
/// space produce, its least such configuration, as the dataset knows it.
pub fn known_by(configs: &[Config]) -> Config {
    representative(configs)
        .or_else(|| representative_beyond(configs))
        .copied()
        .unwrap_or_default()
}

/// The least configuration of a variant measured only beyond the paper's
/// space: fewest bits set, then fewest typed attributes away from the
/// paper's space, then the smallest readable form.
pub fn representative_beyond(configs: &[Config]) -> Option<&Config> {
    configs.iter().min_by_key(|c| {
        let away = c
            .extended_attributes()
            .iter()
            .filter(|&&x| x != 0.0)
            .count();
        (c.ones(), away, c.to_string())
    })
}

/// Indices into [`EXTENDED_ATTRIBUTES`] of the given names (a model file's
/// or a dataset's); an unknown name is an error.
pub(crate) fn extended_indices(names: &[String]) -> Result<Vec<usize>, LearnError> {
    names
        .iter()
        .map(|n| {
            EXTENDED_ATTRIBUTES
                .iter()
                .position(|e| e == n)
                .ok_or_else(|| {
                    LearnError::Data(format!(
                        "unknown configuration attribute `{n}` (this polytune knows {})",
                        EXTENDED_ATTRIBUTES.join(", ")
                    ))
                })
        })
        .collect()
}

/// Features as the models see them: ratios as stored, the instruction
/// count on a log scale (it spans orders of magnitude between kernels).
pub(crate) fn feature_value(name: &str, v: f64) -> f64 {
    if name == "PAPI_TOT_INS" {
        v.max(1.0).log10()
    } else {
        v
    }
}

impl Dataset {
    /// Reads the dataset of one compiler (and size, threads) from a store.
    /// Only variants that were verified correct and timed are rows;
    /// kernels without features or without a timed original are left out.
    pub fn from_store(store: &Store, sel: &Selection) -> Result<Dataset, LearnError> {
        let all: Vec<Measured> = store
            .measured()?
            .into_iter()
            .filter(|m| m.family == sel.compiler && m.size == sel.size && m.threads == sel.threads)
            .filter(|m| {
                sel.machine
                    .as_ref()
                    .is_none_or(|t| m.machine.contains(t.as_str()))
            })
            .collect();
        if all.is_empty() {
            return Err(LearnError::Data(format!(
                "the store has no measurements for {} at size {} with {} threads{}",
                sel.compiler,
                sel.size,
                sel.threads,
                sel.machine
                    .as_ref()
                    .map(|t| format!(" on a machine matching `{t}`"))
                    .unwrap_or_default()
            )));
        }
        let machines: std::collections::BTreeSet<&str> =
            all.iter().map(|m| m.machine.as_str()).collect();
        if machines.len() > 1 {
            return Err(LearnError::Machines(
                machines.into_iter().map(str::to_string).collect(),
            ));
        }
        let mut by_kernel: BTreeMap<(String, i64), Vec<&Measured>> = BTreeMap::new();
        for m in &all {
            by_kernel
                .entry((m.kernel.clone(), m.kernel_id))
                .or_default()
                .push(m);
        }
        let mut names: Option<Vec<String>> = None;
        let mut kernels = Vec::new();
        let mut rows = Vec::new();
        let mut beyond_paper = 0;
        for ((name, kid), ms) in &by_kernel {
            let Some(base) = ms
                .iter()
                .find(|m| m.original && m.status == Status::Ok)
                .and_then(|m| m.median)
            else {
                continue;
            };
            let feats = store.features(*kid, sel.feature_backend, sel.feature_size)?;
            if feats.is_empty() {
                continue;
            }
            let these: Vec<String> = feats.iter().map(|f| f.0.clone()).collect();
            match &names {
                None => names = Some(these),
                Some(n) if *n != these => {
                    return Err(LearnError::Data(format!(
                        "kernel {name} has features {these:?}, others {n:?}"
                    )));
                }
                _ => {}
            }
            let k = kernels.len();
            kernels.push(Kernel {
                name: name.clone(),
                features: feats.iter().map(|(n, v)| feature_value(n, *v)).collect(),
                baseline_seconds: base,
            });
            for m in ms.iter().filter(|m| !m.original && m.status == Status::Ok) {
                let Some(t) = m.median else { continue };
                let (cfg, weight) = match representative(&m.configs) {
                    Some(c) => (c, m.configs.iter().filter(|c| c.is_paper()).count()),
                    None => match representative_beyond(&m.configs) {
                        Some(c) => {
                            beyond_paper += 1;
                            (c, m.configs.len())
                        }
                        None => continue,
                    },
                };
                // Relative to the original timed in the same batch when the
                // store knows it (a campaign resumed in another session
                // re-times the original), else to the stored original.
                let b = m.baseline.filter(|b| *b > 0.0).unwrap_or(base);
                if t > 0.0 {
                    rows.push(Row {
                        kernel: k,
                        variant_id: m.variant_id,
                        config: *cfg,
                        configs: weight,
                        speedup: b / t,
                        all_configs: m.configs.clone(),
                    });
                }
            }
        }
        let first = &all[0];
        let mut d = Dataset {
            selection: sel.clone(),
            machine: first.machine.clone(),
            compiler: first.compiler.clone(),
            flags: first.flags.clone(),
            feature_names: names.unwrap_or_default(),
            kernels,
            rows,
            extended_names: Vec::new(),
            beyond_paper,
        };
        d.drop_constant_features();
        d.keep_varying_extended();
        if d.rows.is_empty() {
            return Err(LearnError::Data(
                "no kernel has both features and verified, timed variants".into(),
            ));
        }
        Ok(d)
    }

    /// Keeps the typed attributes beyond the paper's bits that vary over
    /// the rows (all are 0 in the paper's space: none is kept there).
    pub(crate) fn keep_varying_extended(&mut self) {
        let first = self.rows.first().map(|r| r.config.extended_attributes());
        self.extended_names = (0..EXTENDED)
            .filter(|&j| {
                self.rows
                    .iter()
                    .any(|r| Some(r.config.extended_attributes()[j]) != first.map(|f| f[j]))
            })
            .map(|j| EXTENDED_ATTRIBUTES[j].to_string())
            .collect();
    }

    /// Features equal for every kernel carry no information; dropping them
    /// keeps the models' inputs (and the reports) to what matters.
    pub(crate) fn drop_constant_features(&mut self) {
        let keep: Vec<usize> = (0..self.feature_names.len())
            .filter(|&j| {
                let v0 = self.kernels.first().map(|k| k.features[j]);
                self.kernels.iter().any(|k| Some(k.features[j]) != v0)
            })
            .collect();
        self.feature_names = keep
            .iter()
            .map(|&j| self.feature_names[j].clone())
            .collect();
        for k in &mut self.kernels {
            k.features = keep.iter().map(|&j| k.features[j]).collect();
        }
    }

    /// The model's attributes: features, then the configuration's bits,
    /// then the typed attributes beyond them that the dataset keeps.
    pub fn attribute_names(&self) -> Vec<String> {
        let mut n = self.feature_names.clone();
        n.extend((0..CONFIG_BITS).map(|b| format!("T{b}")));
        n.extend(self.extended_names.iter().cloned());
        n
    }

    /// The attribute vector of a kernel's features with a configuration,
    /// with the typed attributes at `extended` (indices into
    /// [`EXTENDED_ATTRIBUTES`]).
    pub(crate) fn attributes(features: &[f64], config: &Config, extended: &[usize]) -> Vec<f64> {
        let mut a = features.to_vec();
        a.extend(config.features());
        if !extended.is_empty() {
            let x = config.extended_attributes();
            a.extend(extended.iter().map(|&j| x[j]));
        }
        a
    }

    /// Indices of the typed attributes the dataset keeps.
    pub(crate) fn extended(&self) -> Vec<usize> {
        extended_indices(&self.extended_names).expect("a dataset keeps only known attribute names")
    }

    /// The attribute vector of a row.
    pub fn row_attributes(&self, r: &Row) -> Vec<f64> {
        Dataset::attributes(
            &self.kernels[r.kernel].features,
            &r.config,
            &self.extended(),
        )
    }

    /// The attribute vector of every row, in row order.
    pub(crate) fn all_row_attributes(&self) -> Vec<Vec<f64>> {
        let ext = self.extended();
        self.rows
            .iter()
            .map(|r| Dataset::attributes(&self.kernels[r.kernel].features, &r.config, &ext))
            .collect()
    }

    /// Row indices of each kernel, in kernel order.
    pub fn rows_by_kernel(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); self.kernels.len()];
        for (i, r) in self.rows.iter().enumerate() {
            out[r.kernel].push(i);
        }
        out
    }

    /// The dataset without some kernels: a model trained on it has never
    /// seen them, so it can be tried on them as on a new program (the
    /// leave-one-out of [`super::evaluate`], from the command line).
    /// Every name must be a kernel of the dataset.
    pub fn without_kernels(&self, names: &[String]) -> Result<Dataset, LearnError> {
        if let Some(n) = names
            .iter()
            .find(|n| !self.kernels.iter().any(|k| &k.name == *n))
        {
            return Err(LearnError::Data(format!(
                "cannot exclude `{n}`: the dataset has no such kernel (it has {})",
                self.kernels
                    .iter()
                    .map(|k| k.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let mut new_index = vec![None; self.kernels.len()];
        let mut d = self.clone();
        d.kernels.clear();
        for (i, k) in self.kernels.iter().enumerate() {
            if !names.contains(&k.name) {
                new_index[i] = Some(d.kernels.len());
                d.kernels.push(k.clone());
            }
        }
        d.rows = self
            .rows
            .iter()
            .filter_map(|r| {
                new_index[r.kernel].map(|kernel| Row {
                    kernel,
                    ..r.clone()
                })
            })
            .collect();
        if d.rows.is_empty() {
            return Err(LearnError::Data(
                "no variants are left after excluding those kernels".into(),
            ));
        }
        Ok(d)
    }

    /// Keeps only the given features (by name), e.g. a selected subset.
    pub fn with_features(&self, keep: &[String]) -> Dataset {
        let idx: Vec<usize> = keep
            .iter()
            .filter_map(|n| self.feature_names.iter().position(|f| f == n))
            .collect();
        let mut d = self.clone();
        d.feature_names = idx.iter().map(|&j| self.feature_names[j].clone()).collect();
        for k in &mut d.kernels {
            k.features = idx.iter().map(|&j| k.features[j]).collect();
        }
        d
    }

    /// A synthetic dataset shaped like a real campaign (kernels × variants,
    /// counter-like features, speedups driven by interactions of features
    /// and bits, with noise): for tests and benchmarks of the learning
    /// side before or without measurements.
    pub fn synthetic(kernels: usize, variants: usize, features: usize, seed: u64) -> Dataset {
        let mut rng = crate::lab::rng::Lcg::new(seed);
        let mut ks = Vec::new();
        let mut rows = Vec::new();
        let all = crate::config::Config::all();
        for k in 0..kernels {
            let f: Vec<f64> = (0..features).map(|_| rng.uniform()).collect();
            ks.push(Kernel {
                name: format!("k{k:02}"),
                features: f.clone(),
                baseline_seconds: 0.1 + rng.uniform(),
            });
            let mut seen = std::collections::BTreeSet::new();
            while seen.len() < variants.min(all.len()) {
                let c = all[(rng.uniform() * all.len() as f64) as usize % all.len()];
                if !seen.insert(c.bits()) {
                    continue;
                }
                let t = c.features();
                let f = |j: usize| f.get(j).copied().unwrap_or(0.5);
                // Tiling pays with poor locality (f0), parallelism with
                // much work (f1), vectorization needs pre-vectorization.
                let mut s = 1.0 + 1.5 * t[2] * f(0) + 0.8 * t[6] * f(1) - 0.6 * t[8] * (1.0 - t[7])
                    + 0.5 * t[8] * t[7] * f(2)
                    - 0.3 * t[9] * f(3)
                    + 0.4 * (t[0] - t[1]) * (f(4) - 0.5);
                s *= 1.0 + 0.1 * (rng.uniform() - 0.5);
                rows.push(Row {
                    kernel: k,
                    variant_id: rows.len() as i64,
                    config: c,
                    configs: 1,
                    speedup: s.max(0.05),
                    all_configs: vec![c],
                });
            }
        }
        Dataset {
            selection: Selection::default(),
            machine: "synthetic".into(),
            compiler: "synthetic".into(),
            flags: String::new(),
            feature_names: (0..features).map(|j| format!("F{j}")).collect(),
            kernels: ks,
            rows,
            extended_names: Vec::new(),
            beyond_paper: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_representative_is_the_least_configuration() {
        let c: Vec<Config> = ["011000000000", "000100000000", "001000000000"]
            .iter()
            .map(|b| Config::from_bits(b).unwrap())
            .collect();
        assert_eq!(representative(&c).unwrap().bits(), "000100000000");
        assert!(representative(&[]).is_none());
    }

    /// Variants of the paper's space are rows as before (their weight
    /// counts the paper's configurations only); a variant only
    /// configurations beyond it produce is a row with typed attributes,
    /// and counted. A second machine's measurements are told apart.
    #[test]
    fn variants_beyond_the_paper_are_rows_with_typed_attributes() {
        // Why one function: one test walking one scenario: a store filled
        // with paper and beyond-paper variants on two machines, then the
        // dataset read back from it and checked.
        use crate::lab::compiler::Compiler;
        use crate::lab::runner::Timing;
        use crate::lab::store::{Key, Machine};
        use crate::lab::verify::Measurement;
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("d.sqlite")).unwrap();
        let machine = s.machine_id(&Machine::this()).unwrap();
        let compiler = s
            .compiler_id(&Compiler {
                family: Family::Gcc,
                program: "gcc".into(),
                version: "12".into(),
                flags: Vec::new(),
            })
            .unwrap();
        let sel = Selection::default();
        let kernel = s.kernel_id("gemm", "src").unwrap();
        s.record_features(
            kernel,
            sel.feature_backend,
            sel.feature_size,
            &[("Ir".into(), 1.0)],
        )
        .unwrap();
        let paper = Config::from_bits("000000100000").unwrap();
        let beyond: Config = "omp=1,tile=64x64x64".parse().unwrap();
        let blocked: Config = "omp=1,rb=4x8".parse().unwrap();
        let original = s.original_id(kernel, "o").unwrap();
        let mixed = s.variant_id(kernel, "a", &[paper, beyond]).unwrap();
        let only = s.variant_id(kernel, "b", &[blocked]).unwrap();
        for (v, t) in [(original, 1.0), (mixed, 0.5), (only, 0.25)] {
            let key = Key {
                variant: v,
                machine,
                compiler,
                size: sel.size,
                threads: sel.threads,
            };
            let m = Measurement {
                status: Status::Ok,
                detail: String::new(),
                compile_seconds: 0.0,
                timing: Some(Timing {
                    samples: vec![t],
                    median: t,
                    spread: 0.0,
                }),
            };
            s.record(&key, &m).unwrap();
        }
        let d = Dataset::from_store(&s, &sel).unwrap();
        assert_eq!(d.rows.len(), 2);
        // A variant of the paper's space is represented by its paper
        // configuration, whatever else produced it.
        assert_eq!(
            (d.rows[0].config, d.rows[0].configs, d.rows[0].speedup),
            (paper, 1, 2.0)
        );
        // One measured only beyond it is a row with its typed attributes.
        assert_eq!(
            (d.rows[1].config, d.rows[1].configs, d.rows[1].speedup),
            (blocked, 1, 4.0)
        );
        assert_eq!(d.beyond_paper, 1);
        assert_eq!(d.extended_names, ["rb-mr-log2", "rb-nr-log2"]);
        let x = d.all_row_attributes();
        assert_eq!(x[0].len(), CONFIG_BITS + 2);
        assert_eq!(&x[0][CONFIG_BITS..], [0.0, 0.0]);
        assert_eq!(&x[1][CONFIG_BITS..], [2.0, 3.0]);
        assert_eq!(d.attribute_names().len(), CONFIG_BITS + 2);
        assert!(representative(&[beyond, blocked]).is_none());
        assert_eq!(representative(&[beyond, paper]), Some(&paper));
        assert_eq!(representative_beyond(&[beyond, blocked]), Some(&blocked));
        // Rows of the paper's space alone keep no typed attribute: the
        // models are those of the bits.
        let paper_only = d.without_kernels(&[]).unwrap();
        let mut p = paper_only.clone();
        p.rows.truncate(1);
        p.keep_varying_extended();
        assert!(p.extended_names.is_empty());
        assert_eq!(p.all_row_attributes()[0].len(), CONFIG_BITS);
        // Serialized, a row beyond the paper's space keeps its readable
        // form and reads back.
        let json = serde_json::to_string(&d).unwrap();
        assert!(json.contains("omp=1"), "{json}");
        let back: Dataset = serde_json::from_str(&json).unwrap();
        assert_eq!(back.rows[1].config, blocked);
        assert_eq!(back.extended_names, d.extended_names);
        assert!(extended_indices(&["nope".into()]).is_err());

        // Another machine type's campaign in the same store: a dataset is
        // one machine's, chosen by a part of its description.
        let other = s
            .machine_id(&Machine {
                cpu: "Other CPU 9000".into(),
                cores: 2,
                os: "Linux".into(),
            })
            .unwrap();
        for (v, t) in [(original, 2.0), (mixed, 0.5)] {
            let key = Key {
                variant: v,
                machine: other,
                compiler,
                size: sel.size,
                threads: sel.threads,
            };
            let m = Measurement {
                status: Status::Ok,
                detail: String::new(),
                compile_seconds: 0.0,
                timing: Some(Timing {
                    samples: vec![t],
                    median: t,
                    spread: 0.0,
                }),
            };
            s.record(&key, &m).unwrap();
        }
        let err = Dataset::from_store(&s, &sel).unwrap_err();
        assert!(
            matches!(&err, LearnError::Machines(m) if m.len() == 2),
            "{err}"
        );
        assert!(err.to_string().contains("mixes machines"), "{err}");
        let pick = |t: &str| Selection {
            machine: Some(t.into()),
            ..sel.clone()
        };
        let o = Dataset::from_store(&s, &pick("Other CPU")).unwrap();
        assert_eq!(o.rows.len(), 1);
        assert_eq!(o.rows[0].speedup, 4.0);
        assert!(o.machine.contains("Other CPU"));
        let this = Dataset::from_store(&s, &pick(&Machine::this().cpu)).unwrap();
        assert_eq!(this.rows.len(), 2);
        let err = Dataset::from_store(&s, &pick("no such"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("on a machine matching `no such`"), "{err}");
    }

    #[test]
    fn synthetic_data_has_the_requested_shape() {
        let d = Dataset::synthetic(4, 20, 6, 1);
        assert_eq!(d.kernels.len(), 4);
        assert_eq!(d.rows.len(), 80);
        assert_eq!(d.attribute_names().len(), 6 + CONFIG_BITS);
        assert_eq!(d.all_row_attributes()[0].len(), 18);
        assert!(d.rows.iter().all(|r| r.speedup > 0.0));
    }

    #[test]
    fn excluding_a_kernel_drops_its_rows_and_keeps_the_others_intact() {
        let d = Dataset::synthetic(4, 20, 6, 1);
        let gone = d.kernels[1].name.clone();
        let e = d.without_kernels(std::slice::from_ref(&gone)).unwrap();
        assert_eq!(e.kernels.len(), 3);
        assert_eq!(e.rows.len(), 60);
        assert!(e.kernels.iter().all(|k| k.name != gone));
        // Every remaining row still points at its own kernel's features.
        let by_id = |ds: &Dataset, id: i64| {
            let i = ds.rows.iter().position(|r| r.variant_id == id).unwrap();
            let r = &ds.rows[i];
            (
                ds.kernels[r.kernel].name.clone(),
                ds.all_row_attributes()[i].clone(),
            )
        };
        for r in &e.rows {
            assert_eq!(by_id(&e, r.variant_id), by_id(&d, r.variant_id));
        }
        let err = d.without_kernels(&["nope".into()]).unwrap_err();
        assert!(err.to_string().contains("no such kernel"), "{err}");
        let all: Vec<String> = d.kernels.iter().map(|k| k.name.clone()).collect();
        assert!(d.without_kernels(&all).is_err());
    }
}
