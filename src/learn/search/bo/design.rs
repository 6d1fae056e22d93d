//! `bo`'s designs: the settings of its initial design and prior, one
//! per quality of prior the caller says it has ([`BoDesign`]).

use super::{
    BEYOND_GUESSED, BEYOND_MODELS, DECAY, INITIAL_BITS, INITIAL_PRIOR, RIDGE, TRANSFER,
    TRANSFER_TEMPERATURE,
};

/// Which of `bo`'s designs a search runs with, by how good its prior is:
/// the settings above were tuned for the six models' ensemble, a poor
/// ranking of a program's variants (median ρ about 0.25 on the shipped
/// dataset); the variant ranker's leave-one-out scores rank them far
/// better (ρ about 0.7) and want another design ([`Settings::RANKER`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoDesign {
    /// For the six models' prior: [`Settings::MODELS`] (the constants
    /// above; `bo`'s behaviour before the designs were told apart).
    #[default]
    Models,
    /// For the variant ranker's prior: [`Settings::RANKER`].
    Ranker,
}

impl BoDesign {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            BoDesign::Models => "models",
            BoDesign::Ranker => "ranker",
        }
    }

    /// Its settings.
    pub fn settings(self) -> Settings {
        match self {
            BoDesign::Models => Settings::MODELS,
            BoDesign::Ranker => Settings::RANKER,
        }
    }
}

impl std::str::FromStr for BoDesign {
    type Err = String;
    fn from_str(s: &str) -> Result<BoDesign, String> {
        match s {
            "models" => Ok(BoDesign::Models),
            "ranker" => Ok(BoDesign::Ranker),
            _ => Err(format!(
                "unknown bo design `{s}`: expected models or ranker"
            )),
        }
    }
}

/// The settings of a design with the learned prior (without it, `bo-plain`
/// has one design: [`super::INITIAL_RANDOM`] random points).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Picks of the initial design ([`INITIAL_PRIOR`]).
    pub initial: usize,
    /// How far apart they are, in configuration bits ([`INITIAL_BITS`]).
    pub bits: usize,
    /// [`RIDGE`].
    pub ridge: f64,
    /// [`DECAY`].
    pub decay: f64,
    /// [`TRANSFER`].
    pub transfer: f64,
    /// [`TRANSFER_TEMPERATURE`].
    pub transfer_temperature: f64,
    /// [`BEYOND_GUESSED`].
    pub beyond_guessed: usize,
    /// [`BEYOND_MODELS`].
    pub beyond_models: usize,
    /// The process's standard deviation is multiplied by this in the
    /// expected improvement: below 1, the search trusts the prior mean
    /// more and explores less (1 in the six models' design).
    pub explore: f64,
}

impl Settings {
    /// For the six models' prior: the constants above.
    pub const MODELS: Settings = Settings {
        initial: INITIAL_PRIOR,
        bits: INITIAL_BITS,
        ridge: RIDGE,
        decay: DECAY,
        transfer: TRANSFER,
        transfer_temperature: TRANSFER_TEMPERATURE,
        beyond_guessed: BEYOND_GUESSED,
        beyond_models: BEYOND_MODELS,
        explore: 1.0,
    };

    /// For the variant ranker's prior: the ranker's four best picks 3
    /// bits apart, all among its best (none reserved beyond the paper's
    /// space: it ranks those variants too), then the process with the
    /// prior as its mean, not decayed — a good ranking stays worth
    /// trusting — and the other kernels' landscapes mixed in as before.
    /// Chosen on both compilers' data of the shipped dataset with the
    /// ranker's leave-one-kernel-out scores as every model's prediction
    /// (`simulate --predictions target/variant-predictions-{gcc,clang}.csv
    /// --strategies bo --min-ei 0`, mean % of Opt at 6 / 12 evaluations,
    /// gcc then clang); the six models' design there: 84.0 / 90.9, 78.1 /
    /// 90.9. Without the picks beyond the paper's space reserved, 6 picks
    /// 3 bits apart are `diverse`'s (86.2 / 91.6, 83.4 / 91.0; with 1 +
    /// 2 reserved 83.3 / 90.4, 79.3 / 90.4). Then, with no decay: 2
    /// picks 83.2 / 92.8, 86.0 / 93.8; 3 → 80.7 / 92.8, 83.4 / 92.5;
    /// **4 → 84.0 / 92.0, 86.3 / 93.5**; 5 → 84.0 / 91.5, 83.9 / 92.5.
    /// At 4 picks: 2 bits apart 83.8 / 91.0, 84.6 / 91.3, 4 bits 84.6 /
    /// 90.8, 87.2 / 93.3; a decay of 0.85 82.7 / 91.5, 86.2 / 92.4; a
    /// share of the landscapes of 0 → 85.3 / 91.7, 84.4 / 89.9, 0.5 →
    /// 84.0 / 92.2, 84.5 / 93.3, 1 → 81.7 / 91.8, 85.5 / 91.1; a ridge of
    /// 0.03 82.3 / 92.2, 86.5 / 92.3, 3 → 83.5 / 90.5, 85.7 / 93.1; the
    /// process's deviation in the expected improvement times 0.25 or 0.5
    /// (exploit) 83.7–84.0 / 91.7, 86.0 / 93.6, times 2 83.4 / 91.6,
    /// 86.2 / 93.5 (at 2 picks, times 2: 84.9 / 91.9, 86.9 / 93.5). A
    /// plateau about a point wide: the rest of the gap to Opt is kernels
    /// whose fastest variant is a needle the ranking puts low (syrk with
    /// clang: one variant at 7.4×, the next at 4.2×, the ranker's first).
    pub const RANKER: Settings = Settings {
        initial: 4,
        bits: 3,
        ridge: RIDGE,
        decay: 1.0,
        transfer: TRANSFER,
        transfer_temperature: TRANSFER_TEMPERATURE,
        beyond_guessed: 0,
        beyond_models: 0,
        explore: 1.0,
    };
}
