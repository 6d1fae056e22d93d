//! Transfer from other programs' measured landscapes: the campaign
//! measured every variant of every corpus kernel, and a configuration
//! means the same transformations on any program, so each training
//! program's landscape (−ln speedup per configuration) is a guess at a
//! new program's. Which guesses to trust is told by the runs: a program
//! whose landscape, shifted by a constant, agrees with what has been
//! measured on the new program so far is weighted up (the ranking-
//! weighted ensemble of per-task models of Feurer, Letham and Bakshy's
//! RGPE, here with the squared error of the shifted landscape in place
//! of the ranking loss: with a handful of runs, ranks tie too often).
//! Bayesian optimization mixes the matched landscape into its prior
//! mean ([`super::bo`]).
//!
//! `train` ships the landscapes beside the models
//! (`landscapes.json`), so `optimize` transfers from the same programs
//! the models learned from; `simulate` builds them per fold, without the
//! held-out kernel.

use crate::config::Config;
use crate::learn::LearnError;
use crate::learn::dataset::Dataset;
use crate::learn::linalg::ridge_free_intercept;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// The file `train` writes beside the models.
pub const FILE: &str = "landscapes.json";

/// One measured program: per variant, its speedup and every
/// configuration that produces it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Program {
    pub name: String,
    pub variants: Vec<Measured>,
}

/// One measured variant.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measured {
    pub speedup: f64,
    #[serde(with = "texts")]
    pub configs: Vec<Config>,
}

/// Other programs' landscapes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Landscapes {
    /// The dataset they come from: machine, compiler.
    pub machine: String,
    pub compiler: String,
    pub programs: Vec<Program>,
}

impl Landscapes {
    /// Every kernel of the dataset but `except` (the held-out one).
    pub fn of_dataset(d: &Dataset, except: Option<usize>) -> Landscapes {
        Landscapes::of_kernels(d, &|k| Some(k) != except)
    }

    /// The landscapes of the dataset's kernels that `keep` accepts.
    pub(crate) fn of_kernels(d: &Dataset, keep: &dyn Fn(usize) -> bool) -> Landscapes {
        let programs = d
            .rows_by_kernel()
            .iter()
            .enumerate()
            .filter(|&(k, rows)| keep(k) && !rows.is_empty())
            .map(|(k, rows)| Program {
                name: d.kernels[k].name.clone(),
                variants: rows
                    .iter()
                    .map(|&i| {
                        let r = &d.rows[i];
                        Measured {
                            speedup: r.speedup,
                            configs: r.producing_configs(),
                        }
                    })
                    .collect(),
            })
            .collect();
        Landscapes {
            machine: d.machine.clone(),
            compiler: d.compiler.clone(),
            programs,
        }
    }

    /// Per program, per variant of a new program's space (given by the
    /// configurations that produce each), the search's target there:
    /// −ln of the speedup the program measured, averaged over those
    /// configurations it measured; `None` where it measured none of
    /// them (a configuration beyond the space it was measured in).
    ///
    /// A program that was measured beyond the paper's space (a sampled
    /// campaign's draws) has, at a configuration it did not measure, the
    /// guess of its field effects instead ([`Effects`]): a sampled
    /// campaign draws each program's configurations apart, so no other
    /// program measured a new program's draws, and without the guess the
    /// transfer knew nothing of the register tiles and free tile sizes
    /// that win there.
    pub fn project(&self, variants: &[Vec<Config>]) -> Vec<Vec<Option<Known>>> {
        self.programs
            .iter()
            .map(|p| {
                let mut at: HashMap<&Config, f64> = HashMap::new();
                for m in &p.variants {
                    if m.speedup > 0.0 {
                        for c in &m.configs {
                            at.insert(c, -m.speedup.ln());
                        }
                    }
                }
                let effects = p
                    .variants
                    .iter()
                    .any(|m| m.configs.iter().any(|c| !c.is_paper()))
                    .then(|| Effects::fit(&at));
                variants
                    .iter()
                    .map(|cs| {
                        let ys: Vec<f64> = cs.iter().filter_map(|c| at.get(c).copied()).collect();
                        if !ys.is_empty() {
                            return Some(Known::measured(ys.iter().sum::<f64>() / ys.len() as f64));
                        }
                        let e = effects.as_ref()?.as_ref()?;
                        Some(Known {
                            value: cs.iter().map(|c| e.predict(c)).sum::<f64>()
                                / cs.len().max(1) as f64,
                            guessed: true,
                        })
                    })
                    .collect()
            })
            .collect()
    }

    pub fn save(&self, path: &Path) -> Result<(), LearnError> {
        // Atomic, as the models are: a failed write leaves the previous
        // file (or none), never a partial one.
        crate::lab::store::atomic::write(path, serde_json::to_string(self)?.as_bytes())?;
        Ok(())
    }

    /// The landscapes in `dir` (`train`'s output), `None` when there are
    /// none (models trained before they were shipped).
    pub fn load(dir: &Path) -> Result<Option<Landscapes>, LearnError> {
        let path = dir.join(FILE);
        if !path.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path)?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| LearnError::Data(format!("{}: {e}", path.display())))
    }
}

/// What another program tells of a variant: the search's target there
/// (−ln speedup), measured or, beyond what it measured, guessed from its
/// field effects ([`Effects`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Known {
    pub value: f64,
    pub guessed: bool,
}

impl Known {
    pub(crate) fn measured(value: f64) -> Known {
        Known {
            value,
            guessed: false,
        }
    }
}

/// A program's landscape as additive effects of a configuration's
/// fields: −ln speedup ≈ a + Σ w_j x_j over the twelve bits, the typed
/// attributes beyond them ([`Config::extended_attributes`]) and whether
/// it has a register tile, fitted by ridge regression ([`EFFECTS_RIDGE`])
/// over every configuration the program measured. What it guesses at a
/// configuration the program did not measure is what that program's
/// measurements say of each field apart: with a register tile and
/// packing, say, such a program's variants ran that much faster.
struct Effects {
    w: Vec<f64>,
}

/// The ridge penalty of [`Effects`] (intercept free).
const EFFECTS_RIDGE: f64 = 1.0;

impl Effects {
    fn x(c: &Config) -> Vec<f64> {
        std::iter::once(1.0)
            .chain(c.features())
            .chain(c.extended_attributes())
            .chain(std::iter::once(if c.regblock.is_some() {
                1.0
            } else {
                0.0
            }))
            .collect()
    }

    fn fit(at: &HashMap<&Config, f64>) -> Option<Effects> {
        let k = 1 + crate::config::BITS + crate::config::EXTENDED + 1;
        let rows = at.iter().map(|(c, &y)| (Effects::x(c), y));
        ridge_free_intercept(rows, k, EFFECTS_RIDGE, 0.0).map(|w| Effects { w })
    }

    fn predict(&self, c: &Config) -> f64 {
        Effects::x(c).iter().zip(&self.w).map(|(x, w)| x * w).sum()
    }
}

/// Configurations in the file as the store writes them: the bit string
/// in the paper's space (the file is a fifth of the readable form's
/// size), the readable form beyond it.
mod texts {
    use crate::config::Config;
    use serde::{Deserialize, Deserializer, Serializer, ser::SerializeSeq};

    pub(crate) fn serialize<S: Serializer>(cs: &[Config], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(cs.len()))?;
        for c in cs {
            seq.serialize_element(&c.text())?;
        }
        seq.end()
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Config>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|t| t.parse::<Config>().map_err(serde::de::Error::custom))
            .collect()
    }
}

/// The matched landscape given the feasible runs `ok` (variant, target)
/// of the new program and `projected` ([`Landscapes::project`] over its
/// variants): per variant, Σ w_p (ℓ_p(v) + o_p) / Σ w_p over the
/// programs p that know v, where o_p is the mean of y − ℓ_p over the
/// runs (the shift that best fits them), e_p the mean squared error
/// left, and w_p = exp(−(e_p − e_min) / `temperature`). A program that
/// knows fewer than two of the runs' variants takes no part. `None`
/// where no program does (the caller keeps its other prior there), and
/// all `None` until some program can be fitted. Guessed where every
/// program that takes part there guessed.
pub(crate) fn matched(
    ok: &[(usize, f64)],
    projected: &[Vec<Option<Known>>],
    temperature: f64,
) -> Vec<Option<Known>> {
    let n = projected.first().map_or(0, Vec::len);
    let fits: Vec<(usize, f64, f64)> = projected
        .iter()
        .enumerate()
        .filter_map(|(p, l)| {
            let d: Vec<f64> = ok
                .iter()
                .filter_map(|&(v, y)| l[v].map(|lv| y - lv.value))
                .collect();
            if d.len() < 2 {
                return None;
            }
            let o = d.iter().sum::<f64>() / d.len() as f64;
            let e = d.iter().map(|x| (x - o).powi(2)).sum::<f64>() / d.len() as f64;
            Some((p, o, e))
        })
        .collect();
    let Some(e_min) = fits.iter().map(|f| f.2).min_by(f64::total_cmp) else {
        return vec![None; n];
    };
    let t = temperature.max(1e-9);
    let w: Vec<(usize, f64, f64)> = fits
        .iter()
        .map(|&(p, o, e)| (p, o, (-(e - e_min) / t).exp()))
        .collect();
    (0..n)
        .map(|v| {
            let (mut num, mut den, mut guessed) = (0.0, 0.0, true);
            for &(p, o, wp) in &w {
                if let Some(l) = projected[p][v] {
                    num += wp * (l.value + o);
                    den += wp;
                    guessed &= l.guessed;
                }
            }
            (den > 0.0).then(|| Known {
                value: num / den,
                guessed,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_whose_shifted_landscape_fits_the_runs_leads() {
        // Two programs over four variants; the runs (variants 0 and 1)
        // fit the first shifted by +1 exactly, the second not at all.
        let k = |x: f64| Some(Known::measured(x));
        let projected = vec![
            vec![k(0.0), k(1.0), k(-2.0), k(0.5)],
            vec![k(1.0), k(0.0), k(3.0), k(-1.0)],
        ];
        let ok = [(0, 1.0), (1, 2.0)];
        let m = matched(&ok, &projected, 0.01);
        assert!((m[2].unwrap().value - -1.0).abs() < 1e-6, "{m:?}");
        assert!((m[3].unwrap().value - 1.5).abs() < 1e-6, "{m:?}");
        // A high temperature weighs both alike: the mean of the two
        // shifted guesses.
        let m = matched(&ok, &projected, 1e9);
        // Second: o = mean(1 - 1, 2 - 0) = 1; at 2: (−2 + 1 + 3 + 1) / 2.
        assert!((m[2].unwrap().value - 1.5).abs() < 1e-6, "{m:?}");
    }

    #[test]
    fn nothing_is_matched_before_two_runs_or_where_no_program_knows() {
        let k = |x: f64| Some(Known::measured(x));
        let projected = vec![vec![k(0.0), k(1.0), None]];
        assert_eq!(matched(&[(0, 1.0)], &projected, 0.1), vec![None; 3]);
        let m = matched(&[(0, 1.0), (1, 1.5)], &projected, 0.1);
        assert!(m[0].is_some() && m[2].is_none());
    }

    /// Beyond what a program measured, a program measured beyond the
    /// paper's space guesses from its field effects: a register tile
    /// that made its variants four times faster makes a new register-
    /// tiled configuration look faster than an untiled one; a program
    /// of the paper's space alone guesses nothing.
    #[test]
    fn beyond_its_measurements_a_program_guesses_from_field_effects() {
        let c = |t: &str| t.parse::<Config>().unwrap();
        let m = |speedup: f64, t: &str| Measured {
            speedup,
            configs: vec![c(t)],
        };
        let rb =
            |tile: &str| format!("fuse=no,tile={tile},wave=0,omp=0,prevec=0,simd=0,uj=1,rb=4x16");
        let plain = |tile: &str| format!("fuse=no,tile={tile},wave=0,omp=0,prevec=0,simd=0,uj=1");
        let program = Program {
            name: "p".into(),
            variants: vec![
                m(1.0, "000000000000"),
                m(1.0, &plain("64x16x1")),
                m(1.0, &plain("8x128x1")),
                m(4.0, &rb("64x16x1")),
                m(4.0, &rb("8x128x1")),
                m(4.0, &rb("16x64x1")),
            ],
        };
        let l = Landscapes {
            machine: "m".into(),
            compiler: "c".into(),
            programs: vec![program],
        };
        let new = [vec![c(&rb("256x8x1"))], vec![c(&plain("256x8x1"))]];
        let p = l.project(&new);
        let (tiled, untiled) = (p[0][0].unwrap(), p[0][1].unwrap());
        assert!(tiled.guessed && untiled.guessed);
        assert!(tiled.value < untiled.value - 0.5, "{tiled:?} {untiled:?}");
        // Measured configurations stay measured.
        let p = l.project(&[vec![c(&rb("64x16x1"))]]);
        assert_eq!(p[0][0], Some(Known::measured(-4f64.ln())));
        // The paper's space alone: no guess.
        let paper = Landscapes {
            programs: vec![Program {
                name: "q".into(),
                variants: vec![m(1.0, "000000000000"), m(2.0, "000000100000")],
            }],
            ..l
        };
        assert_eq!(paper.project(&new), vec![vec![None, None]]);
    }

    #[test]
    fn a_variant_is_found_by_any_configuration_that_produces_it() {
        let c = |b: &str| Config::from_bits(b).unwrap();
        let l = Landscapes {
            machine: "m".into(),
            compiler: "c".into(),
            programs: vec![Program {
                name: "p".into(),
                variants: vec![
                    Measured {
                        speedup: 2.0,
                        configs: vec![c("000000000000"), c("000001000000")],
                    },
                    Measured {
                        speedup: 4.0,
                        configs: vec![c("000000100000")],
                    },
                ],
            }],
        };
        let p = l.project(&[
            vec![c("000001000000")],
            vec![c("000000000000"), c("000000100000")],
            vec![c("111111111111")],
        ]);
        assert!((p[0][0].unwrap().value + 2f64.ln()).abs() < 1e-12);
        assert!((p[0][1].unwrap().value + 8f64.sqrt().ln()).abs() < 1e-12);
        assert_eq!(p[0][2], None);
        // The file's round trip.
        let dir = tempfile::tempdir().unwrap();
        l.save(&dir.path().join(FILE)).unwrap();
        let back = Landscapes::load(dir.path()).unwrap().unwrap();
        assert_eq!(
            back.project(&[vec![c("000000100000")]]),
            l.project(&[vec![c("000000100000")]])
        );
    }
}
