//! What a campaign measures beyond the paper's space (`collect --space
//! extended --sample N --seed S`): per kernel, N distinct configurations
//! drawn uniformly from the extended space ([`Extended`]), enumerated as
//! the paper's space is and deduplicated by generated code, against each
//! other and against the paper's variants: a draw whose code is a paper
//! variant's joins that variant's configurations (stored, not measured
//! again); one that is new is a variant of its own.
//!
//! The draws depend on the seed and the kernel's name only, so a resumed
//! campaign draws the same ones (and skips what is stored), and a larger
//! N draws the smaller one's first: raising N extends a campaign.
//!
//! The search issue's Bayesian optimization (`learn/search/bo.rs`) could
//! choose the draws instead: its Gaussian process over typed fields
//! (`fields.rs`, extended with the tile sizes on a log scale, the
//! reduction switch and the register tile's sides) would propose, per
//! kernel, the unmeasured configuration of greatest expected improvement
//! among a large uniform sample of [`Extended`], measure it, and repeat;
//! that makes the campaign sequential per kernel and compiler (each draw
//! waits for the previous measurement), where uniform draws are planned,
//! sharded and built ahead like the paper's space.

use crate::config::Config;
use crate::engine::extended::{Extended, SampleError};
use crate::engine::space::{Variant, distinct_variants_of};
use crate::frontend::SourceFile;
use crate::lab::rng::Lcg;
use sha2::{Digest, Sha256};

/// Which configurations a campaign measures.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Space {
    /// Every distinct variant of the paper's space.
    #[default]
    Paper,
    /// The paper's space, and per kernel `sample` configurations drawn
    /// from `space` beyond it.
    Extended {
        space: Box<Extended>,
        sample: usize,
        seed: u64,
    },
}

/// A kernel's draws: the generator is seeded with the campaign's seed and
/// the kernel's name.
pub(crate) fn draws(
    space: &Extended,
    sample: usize,
    seed: u64,
    kernel: &str,
) -> Result<Vec<Config>, SampleError> {
    let name: [u8; 8] = Sha256::digest(kernel.as_bytes())[..8]
        .try_into()
        .expect("eight bytes");
    let mut rng = Lcg::new(seed ^ u64::from_le_bytes(name));
    space.sample(sample, &mut || rng.uniform())
}

/// The variants of the draws that `variants` lacks, after adding to
/// `variants` the draws that produce one of them; and the SCoPs left
/// unchanged for some draw, with why.
pub(crate) fn add_draws(
    src: &SourceFile,
    context: Option<&str>,
    draws: &[Config],
    variants: &mut Vec<Variant>,
) -> Result<(usize, Vec<String>), crate::engine::model::EngineError> {
    let (drawn, skipped) = distinct_variants_of(src, context, draws, &|_| {})?;
    let before = variants.len();
    for d in drawn {
        match variants.iter_mut().find(|v| v.hash == d.hash) {
            Some(v) => v.configs.extend(d.configs),
            None => variants.push(d),
        }
    }
    Ok((variants.len() - before, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::{Options, parse_file};

    #[test]
    fn draws_depend_on_the_seed_and_the_kernel() {
        let e = Extended::default();
        let a = draws(&e, 5, 1, "gemm").unwrap();
        assert_eq!(a, draws(&e, 5, 1, "gemm").unwrap());
        assert_ne!(a, draws(&e, 5, 2, "gemm").unwrap());
        assert_ne!(a, draws(&e, 5, 1, "atax").unwrap());
        assert!(
            draws(&e, 3, 1, "gemm")
                .unwrap()
                .iter()
                .all(|c| a.contains(c))
        );
    }

    /// A draw whose code is a paper variant's joins it; the others are
    /// new variants whose code no paper configuration produces.
    #[test]
    fn draws_join_the_paper_variants_of_the_same_code() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("polybench/stencils/jacobi-1d-imper.c");
        let src = parse_file(&path, &Options::default()).unwrap();
        let paper = Config::default();
        let (mut variants, _) = distinct_variants_of(&src, None, &[paper], &|_| {}).unwrap();
        assert_eq!(variants.len(), 1);
        // Register blocking where the stencil has no contraction to
        // block: the same code as the paper's configuration.
        let same: Config = "rb=4x8".parse().unwrap();
        let other: Config = "tile=64x8x1,omp=1".parse().unwrap();
        let (new, _) = add_draws(&src, None, &[same, other], &mut variants).unwrap();
        assert_eq!(new, 1);
        assert_eq!(variants[0].configs, [paper, same]);
        assert_eq!(variants[1].configs, [other]);
        assert_ne!(variants[0].hash, variants[1].hash);
    }
}
