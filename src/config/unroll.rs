//! Unroll-and-jam of the two innermost loops: the paper's one factor and,
//! beyond its space, the outer and inner loops' factors separately.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// Unroll-and-jam of the two innermost loops of a nest (`uj=OxI`): the
/// outer loop unrolled `outer` times with its copies jammed into the
/// inner loop, and the innermost loop itself unrolled `inner` times. The
/// paper's factor `uj=N` is `N`×1; its space has `N` of 1, 2, 4 or 8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct UnrollJam {
    /// Copies of the outer loop's body jammed into the inner loop.
    pub outer: u8,
    /// Copies of the innermost loop's body per iteration.
    pub inner: u8,
}

/// The largest factor accepted for either loop beyond the paper's space:
/// 16 copies already outnumber the 16 vector registers of AVX2 for one
/// value live per copy, so a larger factor only grows the code (up to
/// 16 × 16 = 256 copies of the innermost body).
pub(crate) const MAX_UNROLL: u8 = 16;

impl UnrollJam {
    /// No unrolling (`uj=1`).
    pub const NONE: UnrollJam = UnrollJam { outer: 1, inner: 1 };

    /// The paper's unroll-and-jam by `factor`: the outer loop only.
    pub const fn jam(factor: u8) -> UnrollJam {
        UnrollJam {
            outer: factor,
            inner: 1,
        }
    }

    /// Whether the paper's space has it: the outer factor 1, 2, 4 or 8
    /// and the innermost loop not unrolled.
    pub fn is_paper(&self) -> bool {
        self.inner == 1 && matches!(self.outer, 1 | 2 | 4 | 8)
    }

    /// Whether it asks for any unrolling.
    pub fn is_some(&self) -> bool {
        self.outer > 1 || self.inner > 1
    }
}

impl Default for UnrollJam {
    fn default() -> Self {
        UnrollJam::NONE
    }
}

impl fmt::Display for UnrollJam {
    /// `4` for the outer factor alone (the paper's form), else `4x2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.inner {
            1 => write!(f, "{}", self.outer),
            i => write!(f, "{}x{i}", self.outer),
        }
    }
}

impl FromStr for UnrollJam {
    type Err = String;

    /// `N` (the outer factor, the inner 1) or `OxI` / `O,I`.
    fn from_str(v: &str) -> Result<UnrollJam, String> {
        parse_unroll(v)
    }
}

/// Unroll-and-jam factors: `N` (the paper's one factor, of the outer
/// loop) or `OxI` / `O,I` (the outer and the inner loop's), each 1 to
/// [`MAX_UNROLL`].
pub fn parse_unroll(v: &str) -> Result<UnrollJam, String> {
    let bad = || {
        format!(
            "uj must be 1, 2, 4 or 8 (the paper's space) or, beyond it, OxI (the outer and \
             inner loop's factors, each 1 to {MAX_UNROLL}, e.g. 4x2), not `{v}`"
        )
    };
    let factor = |t: &str| {
        t.trim()
            .parse::<u8>()
            .ok()
            .filter(|n| (1..=MAX_UNROLL).contains(n))
            .ok_or_else(bad)
    };
    match v.trim().split_once(['x', ',']) {
        Some((o, i)) => Ok(UnrollJam {
            outer: factor(o)?,
            inner: factor(i)?,
        }),
        None => factor(v).map(UnrollJam::jam),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn separate_unroll_factors_are_readable_only() {
        let c: Config = "fuse=smart,tile=32x32x1,omp=1,uj=4x2".parse().unwrap();
        assert_eq!(c.unroll, UnrollJam { outer: 4, inner: 2 });
        assert!(!c.is_paper());
        assert_eq!(
            c.to_string(),
            "fuse=smart,tile=32x32x1,wave=0,omp=1,prevec=0,simd=0,uj=4x2"
        );
        assert_eq!(c.to_string().parse::<Config>().unwrap(), c);
        // The paper's factors keep their form and their bits, in both
        // spellings.
        for (text, n) in [("uj=1", 1), ("uj=2x1", 2), ("uj=4", 4), ("uj=8x1", 8)] {
            let p: Config = text.parse().unwrap();
            assert_eq!(p.unroll, UnrollJam::jam(n), "{text}");
            assert!(p.is_paper(), "{text}");
            assert_eq!(
                p.to_string(),
                format!("{}", Config::from_bits(&p.bits()).unwrap())
            );
            assert!(p.to_string().ends_with(&format!(",uj={n}")), "{p}");
        }
        // Any other factor is beyond the paper's space.
        for text in ["uj=3", "uj=16", "uj=1x2", "uj=16x16", "uj=2x8"] {
            let p: Config = text.parse().unwrap();
            assert!(!p.is_paper(), "{text}");
            assert_eq!(p.to_string().parse::<Config>().unwrap(), p, "{text}");
        }
        assert_eq!(parse_unroll("4,2"), Ok(UnrollJam { outer: 4, inner: 2 }));
        assert_eq!(" 3 ".parse::<UnrollJam>(), Ok(UnrollJam::jam(3)));
        let e = "uj=4x17".parse::<Config>().unwrap_err().to_string();
        assert!(e.contains("each 1 to 16"), "{e}");
        assert!(Config::all().iter().all(|c| c.unroll.inner == 1));
    }
}
