//! The shape of a register tile (`rb=MRxNR`, with `pack=1`), beyond the
//! paper's space.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The shape of a register tile: `mr` × `nr` accumulators kept in local
/// scalars while the reduction loop runs innermost around them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct RegisterTile {
    /// Unrolled iterations of the outer register loop (rows).
    pub mr: u8,
    /// Unrolled iterations of the inner register loop (columns).
    pub nr: u8,
    /// `pack=1`: the rows' operands (the factors that do not move with the
    /// columns, `alpha * A[i][k]`) are computed once per block of rows into
    /// a contiguous buffer in micro-panel order (and the columns' operands
    /// that are not contiguous along the columns likewise), and the
    /// micro-kernel runs on vectors of the target's width over the columns.
    pub pack: bool,
}

/// The register tile sizes accepted: a side of 1 to 16, at most 128
/// accumulators (the 32 registers of AVX-512 hold 256 doubles, the 16 of
/// AVX2 64: more than the registers hold spills).
pub(crate) const MAX_REGISTER_SIDE: u8 = 16;
pub(crate) const MAX_ACCUMULATORS: u16 = 128;

impl fmt::Display for RegisterTile {
    /// `4x8`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.mr, self.nr)
    }
}

impl FromStr for RegisterTile {
    type Err = String;

    /// `MRxNR`, e.g. `4x8`.
    fn from_str(v: &str) -> Result<RegisterTile, String> {
        let bad = || {
            format!(
                "rb must be MRxNR (each 1 to {MAX_REGISTER_SIDE}, at most {MAX_ACCUMULATORS} \
                 accumulators, e.g. 4x8) or 0 for none, not `{v}`"
            )
        };
        let (a, b) = v.trim().split_once('x').ok_or_else(bad)?;
        let side = |t: &str| {
            t.trim()
                .parse::<u8>()
                .ok()
                .filter(|&n| (1..=MAX_REGISTER_SIDE).contains(&n))
        };
        let (mr, nr) = (side(a).ok_or_else(bad)?, side(b).ok_or_else(bad)?);
        if mr as u16 * nr as u16 > MAX_ACCUMULATORS || mr as u16 * nr as u16 == 1 {
            return Err(bad());
        }
        Ok(RegisterTile {
            mr,
            nr,
            pack: false,
        })
    }
}

/// `rb=` of the readable form: `0`, `none` or `off` for none, else a shape.
pub fn parse_regblock(v: &str) -> Result<Option<RegisterTile>, String> {
    match v.trim() {
        "0" | "none" | "off" | "1x1" => Ok(None),
        t => t.parse().map(Some),
    }
}
