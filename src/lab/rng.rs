//! The crate's seeded generators, so that every random draw is repeatable
//! on every machine. They live here, in the lowest layer that all their
//! users may import (the lab's own tests, `learn`, `app`).
//!
//! Why not a crate: the draws must never change under a dependency
//! upgrade (the fuzzer's recorded seeds, the trained models and the
//! shipped simulation files depend on them), and each generator is a few
//! lines.

/// SplitMix64 (Steele, Lea and Flood): the generator for new code. The
/// fuzzer's programs, configurations and parameters are drawn from it, so
/// its stream for a seed must not change.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in [0, 1) (the top 53 bits).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// A 64-bit linear congruential generator (Knuth's MMIX constants, top 53
/// bits). It is not replaced by [`SplitMix64`] because the models'
/// training (the MLP's initial weights, `evaluate`'s draws), the
/// campaign's sample of the extended space and the simulation's
/// randomized strategies are drawn from it: the shipped models,
/// evaluations and simulation files hold its stream.
#[derive(Debug, Clone)]
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407))
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streams are fixed: these values were drawn before the
    /// generators moved here (the fuzzer's `Rng`, `learn::rng::Lcg`).
    #[test]
    fn the_streams_do_not_change() {
        let mut s = SplitMix64::new(1);
        let first: Vec<u64> = (0..3).map(|_| s.next_u64()).collect();
        assert_eq!(first, FIXED_SPLITMIX);
        let mut l = Lcg::new(1);
        let first: Vec<u64> = (0..3).map(|_| l.uniform().to_bits()).collect();
        assert_eq!(first, FIXED_LCG);
    }

    const FIXED_SPLITMIX: [u64; 3] = [
        0x910a_2dec_8902_5cc1,
        0xbeeb_8da1_658e_ec67,
        0xf893_a2ee_fb32_555e,
    ];
    const FIXED_LCG: [u64; 3] = [
        0x3fe0_4d10_d670_c943,
        0x3fe4_bf5c_3324_12f5,
        0x3fd8_80d5_7344_64d4,
    ];
}
