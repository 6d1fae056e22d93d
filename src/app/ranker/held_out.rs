//! Leave one program out on this machine's runs (`models status
//! --held-out`): whether what the store learned of this machine ranks
//! new programs better than the shipped variants alone.

use super::{LOCAL_WEIGHT, Local, RankerError, Shipped, fit};
use crate::app::variants::{VariantRow, VariantTable};
use serde::Serialize;

/// How a program of the store is ranked when it is new to both rankers:
/// its own runs and the shipped variants of the program of the same name
/// left out of both fits.
#[derive(Debug, Clone, Serialize)]
pub struct HeldOut {
    pub program: String,
    /// This machine's measured variants of it.
    pub variants: usize,
    /// Spearman's ρ of the ranker fitted to the shipped variants alone.
    pub shipped: Option<f64>,
    /// ... and of the ranker refitted with the store's other programs,
    /// this machine's weighing [`LOCAL_WEIGHT`].
    pub refit: Option<f64>,
    /// The measured speedup of each ranker's first choice over the best.
    pub top1_shipped: Option<f64>,
    pub top1_refit: Option<f64>,
}

/// Leave one program out on this machine's runs (`models status
/// --held-out`): for each program of the store with 3 of this machine's
/// measured variants or more, the ranker fitted without it — to the
/// shipped variants alone, and to them plus the store's other programs —
/// ranks its variants. The shipped table's rows of a kernel of the same
/// name (the corpus' `gemm` for a store's `gemm.c`) are left out too, so
/// that the program is new to both: what tells whether learning this
/// machine helps on the programs a user brings. Two fits per program
/// (about 2 s each on one core).
pub fn held_out(shipped: &Shipped, local: &Local) -> Result<Vec<HeldOut>, RankerError> {
    use crate::learn::rank::metrics::{rank_correlation, top1_share};
    let mut out = Vec::new();
    for (k, name) in local.kernels.iter().enumerate() {
        let mine: Vec<&VariantRow> = local
            .rows
            .iter()
            .zip(&local.weight)
            .filter(|(r, w)| r.kernel == k && **w == LOCAL_WEIGHT)
            .map(|(r, _)| r)
            .collect();
        if mine.len() < 3 {
            continue;
        }
        let same: Vec<usize> = (0..shipped.table.kernels.len())
            .filter(|&s| crate::app::variants::same_program(&shipped.table.kernels[s], name))
            .collect();
        let without = Shipped {
            table: VariantTable {
                rows: shipped
                    .table
                    .rows
                    .iter()
                    .filter(|r| !same.contains(&r.kernel))
                    .cloned()
                    .collect(),
                ..shipped.table.clone()
            },
            fitted: None,
        };
        let (rows, weight): (Vec<VariantRow>, Vec<f64>) = local
            .rows
            .iter()
            .zip(&local.weight)
            .filter(|(r, _)| r.kernel != k)
            .map(|(r, w)| (r.clone(), *w))
            .unzip();
        let others = Local {
            kernels: local.kernels.clone(),
            this_machine: weight.iter().filter(|&&w| w == LOCAL_WEIGHT).count(),
            rows,
            weight,
        };
        let x: Vec<Vec<f64>> = mine.iter().map(|r| r.x.clone()).collect();
        let label: Vec<f64> = mine.iter().map(|r| r.speedup.ln()).collect();
        let alone = fit(&without, None, None)?.scores(&x);
        let refit = fit(&without, Some(&others), None)?.scores(&x);
        out.push(HeldOut {
            program: name.clone(),
            variants: mine.len(),
            shipped: rank_correlation(&alone, &label),
            refit: rank_correlation(&refit, &label),
            top1_shipped: top1_share(&alone, &label),
            top1_refit: top1_share(&refit, &label),
        });
    }
    Ok(out)
}
