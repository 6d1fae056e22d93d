//! The extended space (issue 20): the paper's primitives and the choices
//! beyond them — free tile sizes per band dimension, loops run as
//! reductions, register tiles — as typed lists of choices, one list per
//! field of [`Config`]. A configuration of the space is one choice per
//! field; the space is their product, numbered in mixed radix, so that a
//! uniformly drawn number is a uniform, independent draw of every field.
//! `collect --space extended --sample N` measures such draws.
//!
//! A field added to [`Config`] gets a list here (and its place in
//! [`Extended::config`] and [`Extended::index`]); the store needs nothing:
//! it keeps configurations beyond the paper's space by their readable
//! form.

use crate::config::{Config, Fusion, Privatize, Reductions, RegisterTile, UnrollJam, VectorTarget};

/// The choices of each field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extended {
    pub fusion: Vec<Fusion>,
    /// Sizes of each of the three tiled dimensions, drawn independently
    /// (1: the dimension is not tiled).
    pub tile: Vec<u16>,
    pub wavefront: Vec<bool>,
    pub omp: Vec<bool>,
    pub prevector: Vec<bool>,
    pub simd: Vec<bool>,
    pub unroll: Vec<UnrollJam>,
    pub reduce: Vec<Reductions>,
    pub privatize: Vec<Privatize>,
    pub expand: Vec<bool>,
    /// Diamond tiling of time loops (`tt=diamond`): the least significant
    /// digit, so that a draw's other fields are the draw of the space
    /// without it.
    pub diamond: Vec<bool>,
    pub regblock: Vec<Option<RegisterTile>>,
    /// `cyc=1`: only `false` in the drawn space (only the refinement
    /// tries it), both in the fuzzer's; the last digit, of one choice in
    /// the drawn space, so that its numbering is the one before it
    /// existed.
    pub cyclic: Vec<bool>,
    /// `outer=1`: like `cyc`, only `false` in the drawn space (the
    /// refinement tries it), both in the fuzzer's; the last digit.
    pub outer: Vec<bool>,
    /// `dist=1`: likewise; the last digit.
    pub distribute: Vec<bool>,
}

impl Default for Extended {
    /// Tile sizes 1 to 256 in powers of two from 8 (the set),
    /// unroll-and-jam factors 1, 2, 4 or 8 with the innermost loop
    /// unrolled 1 or 2 times, reductions on or off, and register tiles of
    /// 4×8, 8×4, 4×16 and 8×16 doubles (AVX2's 16 registers hold 64
    /// doubles: the larger two spill there, and fit AVX-512's 32), the
    /// last two also with packed operands (`pack=1`), or none; the
    /// paper's choices for the rest.
    fn default() -> Self {
        let rb = |mr, nr, pack| Some(RegisterTile { mr, nr, pack });
        Extended {
            fusion: vec![Fusion::No, Fusion::Smart, Fusion::Max],
            tile: vec![1, 8, 16, 32, 64, 128, 256],
            wavefront: vec![false, true],
            omp: vec![false, true],
            prevector: vec![false, true],
            simd: vec![false, true],
            unroll: [1, 2]
                .into_iter()
                .flat_map(|inner| [1, 2, 4, 8].map(|outer| UnrollJam { outer, inner }))
                .collect(),
            reduce: vec![Reductions::Off, Reductions::Loops],
            privatize: vec![Privatize::Off, Privatize::Scalars],
            expand: vec![false, true],
            diamond: vec![false, true],
            regblock: vec![
                None,
                rb(4, 8, false),
                rb(8, 4, false),
                rb(4, 16, false),
                rb(8, 16, false),
                rb(4, 16, true),
                rb(8, 16, true),
            ],
            cyclic: vec![false],
            outer: vec![false],
            distribute: vec![false],
        }
    }
}

impl Extended {
    /// The space with the packed register tiles shaped for `target`: its
    /// two best shapes ([`VectorTarget::packed_tiles`]) in place of the
    /// AVX2-era 4×16 and 8×16, so that every other digit of a draw keeps
    /// its meaning.
    pub fn for_target(target: VectorTarget) -> Extended {
        let mut e = Extended::default();
        e.regblock.retain(|r| !r.is_some_and(|r| r.pack));
        e.regblock
            .extend(target.packed_tiles().into_iter().take(2).map(Some));
        e
    }

    /// The space with the packed register tiles of every target added
    /// (AVX-512's, AVX2's and SSE2's): the fuzzer's, so that every shape
    /// any machine draws is checked on every machine (each shape's
    /// micro-kernel has a branch per lane count, chosen when compiled),
    /// and `red=2` and `priv=2`, which only the refinement tries.
    pub fn every_target() -> Extended {
        let mut e = Extended::default();
        e.reduce.push(Reductions::Scheduled);
        e.privatize.push(Privatize::Arrays);
        e.cyclic.push(true);
        e.outer.push(true);
        e.distribute.push(true);
        for t in [VectorTarget::AVX512, VectorTarget::AVX2, VectorTarget::SSE2] {
            for r in t.packed_tiles().into_iter().take(2) {
                if !e.regblock.contains(&Some(r)) {
                    e.regblock.push(Some(r));
                }
            }
        }
        e
    }
}

/// Why a sample cannot be drawn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SampleError {
    #[error(
        "the extended space has {beyond} configurations beyond the paper's space: a sample of {asked} cannot be distinct"
    )]
    TooMany { asked: usize, beyond: u64 },
}

impl Extended {
    /// The number of choices of each field, in numbering order (the
    /// three tile dimensions separately, the first most significant).
    fn radices(&self) -> [u64; 17] {
        let t = self.tile.len() as u64;
        [
            self.fusion.len() as u64,
            t,
            t,
            t,
            self.wavefront.len() as u64,
            self.omp.len() as u64,
            self.prevector.len() as u64,
            self.simd.len() as u64,
            self.unroll.len() as u64,
            self.reduce.len() as u64,
            self.regblock.len() as u64,
            self.privatize.len() as u64,
            self.expand.len() as u64,
            self.diamond.len() as u64,
            self.cyclic.len() as u64,
            self.outer.len() as u64,
            self.distribute.len() as u64,
        ]
    }

    /// The number of configurations.
    pub fn len(&self) -> u64 {
        self.radices().iter().product()
    }

    /// Whether some field has no choice.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Configuration number `index` (below [`Extended::len`]).
    pub fn config(&self, index: u64) -> Config {
        let mut digits = [0usize; 17];
        let mut rest = index;
        for (d, r) in digits.iter_mut().zip(self.radices()).rev() {
            *d = (rest % r) as usize;
            rest /= r;
        }
        Config {
            fusion: self.fusion[digits[0]],
            tile: [
                self.tile[digits[1]],
                self.tile[digits[2]],
                self.tile[digits[3]],
            ],
            wavefront: self.wavefront[digits[4]],
            omp: self.omp[digits[5]],
            prevector: self.prevector[digits[6]],
            simd: self.simd[digits[7]],
            unroll: self.unroll[digits[8]],
            reduce: self.reduce[digits[9]],
            regblock: self.regblock[digits[10]],
            privatize: self.privatize[digits[11]],
            expand: self.expand[digits[12]],
            diamond: self.diamond[digits[13]],
            cyclic: self.cyclic[digits[14]],
            outer: self.outer[digits[15]],
            distribute: self.distribute[digits[16]],
        }
    }

    /// The number of a configuration, if it lies in the space.
    pub(crate) fn index(&self, c: &Config) -> Option<u64> {
        fn at<T: PartialEq>(list: &[T], v: &T) -> Option<u64> {
            list.iter().position(|x| x == v).map(|p| p as u64)
        }
        let digits = [
            at(&self.fusion, &c.fusion)?,
            at(&self.tile, &c.tile[0])?,
            at(&self.tile, &c.tile[1])?,
            at(&self.tile, &c.tile[2])?,
            at(&self.wavefront, &c.wavefront)?,
            at(&self.omp, &c.omp)?,
            at(&self.prevector, &c.prevector)?,
            at(&self.simd, &c.simd)?,
            at(&self.unroll, &c.unroll)?,
            at(&self.reduce, &c.reduce)?,
            at(&self.regblock, &c.regblock)?,
            at(&self.privatize, &c.privatize)?,
            at(&self.expand, &c.expand)?,
            at(&self.diamond, &c.diamond)?,
            at(&self.cyclic, &c.cyclic)?,
            at(&self.outer, &c.outer)?,
            at(&self.distribute, &c.distribute)?,
        ];
        Some(
            digits
                .iter()
                .zip(self.radices())
                .fold(0, |acc, (d, r)| acc * r + d),
        )
    }

    /// How many configurations of the space lie beyond the paper's.
    pub fn beyond_paper(&self) -> u64 {
        let paper = Config::all()
            .iter()
            .filter(|c| self.index(c).is_some())
            .count() as u64;
        self.len() - paper
    }

    /// `n` distinct configurations beyond the paper's space, each drawn
    /// uniformly over the space's numbers with `uniform` (values in
    /// [0, 1)); draws in the paper's space or drawn before are drawn
    /// again. The draws of a smaller `n` from the same generator are the
    /// first of a larger one's. Sorted (fusion first), so that an
    /// enumeration shares its schedules out in few runs.
    pub fn sample(
        &self,
        n: usize,
        uniform: &mut dyn FnMut() -> f64,
    ) -> Result<Vec<Config>, SampleError> {
        let beyond = self.beyond_paper();
        if n as u64 > beyond {
            return Err(SampleError::TooMany { asked: n, beyond });
        }
        let len = self.len();
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let i = ((uniform() * len as f64) as u64).min(len - 1);
            let c = self.config(i);
            if !c.is_paper() && seen.insert(i) {
                out.push(c);
            }
        }
        out.sort();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_configurations_correspond() {
        let e = Extended::default();
        assert_eq!(
            e.len(),
            3 * 7 * 7 * 7 * 2 * 2 * 2 * 2 * 8 * 2 * 7 * 2 * 2 * 2
        );
        assert_eq!(e.config(0), Config::default());
        assert_eq!(e.index(&Config::default()), Some(0));
        for i in (0..e.len()).step_by(997).chain([e.len() - 1]) {
            let c = e.config(i);
            assert_eq!(e.index(&c), Some(i), "{c}");
            // Every configuration reads back from its text.
            assert_eq!(c.to_string().parse::<Config>().unwrap(), c);
        }
        let last = e.config(e.len() - 1);
        assert_eq!(
            last.to_string(),
            "fuse=max,tile=256x256x256,wave=1,omp=1,prevec=1,simd=1,uj=8x2,red=1,priv=1,exp=1,tt=diamond,rb=8x16,pack=1"
        );
        // The paper's space lies inside it.
        assert!(Config::all().iter().all(|c| e.index(c).is_some()));
        assert_eq!(e.beyond_paper(), e.len() - 1536);
        let outside: Config = "tile=12".parse().unwrap();
        assert_eq!(e.index(&outside), None);
    }

    #[test]
    fn a_targets_space_draws_its_packed_shapes_and_keeps_the_other_digits() {
        let (e, t) = (
            Extended::default(),
            Extended::for_target(VectorTarget::AVX512),
        );
        assert_eq!(t.len(), e.len());
        let last = t.config(t.len() - 1);
        assert!(
            last.to_string().ends_with("tt=diamond,rb=8x24,pack=1"),
            "{last}"
        );
        for i in (0..e.len()).step_by(7919) {
            let (a, b) = (e.config(i), t.config(i));
            assert_eq!(
                Config {
                    regblock: None,
                    ..a
                },
                Config {
                    regblock: None,
                    ..b
                }
            );
            if !a.regblock.is_some_and(|r| r.pack) {
                assert_eq!(a, b);
            }
        }
        let shapes: Vec<String> = Extended::for_target(VectorTarget::AVX2)
            .regblock
            .iter()
            .flatten()
            .filter(|r| r.pack)
            .map(|r| r.to_string())
            .collect();
        assert_eq!(shapes, ["4x12", "6x8"]);
    }

    #[test]
    fn a_sample_is_distinct_beyond_the_paper_and_repeatable() {
        let e = Extended::default();
        let lcg = |seed: u64| {
            let mut x = seed;
            move || {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 11) as f64 / (1u64 << 53) as f64
            }
        };
        let a = e.sample(40, &mut lcg(7)).unwrap();
        assert_eq!(a.len(), 40);
        assert!(a.iter().all(|c| !c.is_paper()));
        assert!(a.windows(2).all(|w| w[0] < w[1]), "sorted and distinct");
        assert_eq!(a, e.sample(40, &mut lcg(7)).unwrap());
        assert_ne!(a, e.sample(40, &mut lcg(8)).unwrap());
        // A smaller sample is part of a larger one.
        let small = e.sample(10, &mut lcg(7)).unwrap();
        assert!(small.iter().all(|c| a.contains(c)));
        // Every field varies across a sample of this size.
        let fields = |f: &dyn Fn(&Config) -> String| {
            a.iter()
                .map(f)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        };
        assert!(fields(&|c| c.fusion.to_string()) > 1);
        assert!(fields(&|c| c.tile[0].to_string()) > 3);
        assert!(fields(&|c| c.reduce.to_string()) > 1);
        assert!(fields(&|c| format!("{:?}", c.regblock)) > 2);
        assert!(fields(&|c| c.diamond.to_string()) > 1);
        // A space with nothing beyond the paper's refuses a sample.
        let paper = Extended {
            tile: vec![1, 32],
            unroll: [1, 2, 4, 8].map(UnrollJam::jam).to_vec(),
            reduce: vec![Reductions::Off],
            privatize: vec![Privatize::Off],
            expand: vec![false],
            diamond: vec![false],
            regblock: vec![None],
            ..Extended::default()
        };
        assert_eq!(paper.len(), 1536);
        assert_eq!(
            paper.sample(1, &mut lcg(1)),
            Err(SampleError::TooMany {
                asked: 1,
                beyond: 0
            })
        );
    }
}
