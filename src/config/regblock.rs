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

/// The register tile sizes accepted: a side of 1 to 32, at most 256
/// accumulators (the 32 registers of AVX-512 hold 256 doubles, the 16 of
/// AVX2 64: more than the registers hold spills; a side of 24 or 32 is
/// three or four AVX-512 vectors of columns).
pub(crate) const MAX_REGISTER_SIDE: u8 = 32;
pub(crate) const MAX_ACCUMULATORS: u16 = 256;

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

/// The vector registers of a compile target, as they shape a packed
/// micro-kernel: doubles per vector and vector registers. Read from the
/// compiler's predefined macros under the build's flags (the lab's
/// `Recipe::vector_target`), so `-march=native` on an AVX-512 machine and
/// `-mno-avx512f` on the same machine are two targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct VectorTarget {
    /// Doubles per vector register: 8 (AVX-512), 4 (AVX, AVX2), 2 (SSE2,
    /// NEON) — the lane counts the micro-kernel is emitted for.
    pub lanes: u8,
    /// Vector registers: 32 with AVX-512 (and on AArch64), 16 otherwise.
    pub registers: u8,
}

impl VectorTarget {
    /// x86-64 with AVX-512F: 32 registers of 8 doubles.
    pub const AVX512: VectorTarget = VectorTarget {
        lanes: 8,
        registers: 32,
    };
    /// x86-64 with AVX or AVX2: 16 registers of 4 doubles.
    pub const AVX2: VectorTarget = VectorTarget {
        lanes: 4,
        registers: 16,
    };
    /// x86-64 without AVX (SSE2): 16 registers of 2 doubles; the scalar
    /// fallback of the micro-kernel.
    pub const SSE2: VectorTarget = VectorTarget {
        lanes: 2,
        registers: 16,
    };

    /// The target of the compiler's predefined macros (`-dM -E`):
    /// AVX-512F, AVX, AArch64 (32 registers of 2 doubles), else SSE2.
    pub fn from_macros(macros: &str) -> VectorTarget {
        let defined = |m: &str| {
            macros
                .lines()
                .any(|l| l.split_whitespace().nth(1) == Some(m))
        };
        if defined("__AVX512F__") {
            VectorTarget::AVX512
        } else if defined("__AVX__") {
            VectorTarget::AVX2
        } else if defined("__aarch64__") {
            VectorTarget {
                lanes: 2,
                registers: 32,
            }
        } else {
            VectorTarget::SSE2
        }
    }

    /// The packed register tiles that fit this target's registers, best
    /// first. Each row of the tile is `k` vectors of columns (`nr = k ×
    /// lanes`, k from 2 to 4) and takes `k` accumulators; the kernel also
    /// holds the `k` column vectors of one step and one broadcast row
    /// value, so `mr × k + k + 1` registers at most, with `mr` even (tile
    /// sizes are powers of two) and at most 16. Ordered by the work per
    /// loaded value, `mr·k / (mr + k)` multiply-adds per load: on AVX-512
    /// 6x32, 8x24 (24 accumulators each) and 14x16 (28); on AVX2 4x12,
    /// 6x8 and 2x16; on SSE2 4x6, 6x4 and 2x8.
    /// Measured on gemm LARGE, gcc 12, 2 threads, a Zen 5 guest
    /// (2026-11-29, `scripts/bench_gemm.py`, 3 interleaved runs, best
    /// tiles of a short sweep): 8x24 165 GFLOP/s, 6x32 159, 14x16 154,
    /// against 140 for the AVX2-era 8x16.
    pub fn packed_tiles(&self) -> Vec<RegisterTile> {
        let lanes = self.lanes.max(1) as u16;
        let registers = self.registers as u16;
        let mut tiles: Vec<(RegisterTile, u16, u16)> = (2..=4u16)
            .filter_map(|k| {
                let nr = k * lanes;
                let mr = (registers.checked_sub(k + 1)? / k).min(16) & !1;
                (mr >= 2 && nr <= MAX_REGISTER_SIDE as u16).then_some((
                    RegisterTile {
                        mr: mr as u8,
                        nr: nr as u8,
                        pack: true,
                    },
                    // Whole vectors of columns: the fewer loads per
                    // multiply-add, the better, measured in 1/100.
                    mr * k * 100 / (mr + k),
                    k,
                ))
            })
            .collect();
        // The most work per load first; AVX-512's 8x24 (2.18) and 6x32
        // (2.40) ran within noise of each other, 14x16 (1.75) behind.
        tiles.sort_by_key(|&(t, work, _)| (std::cmp::Reverse(work), t));
        tiles.into_iter().map(|(t, _, _)| t).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shapes(t: VectorTarget) -> Vec<String> {
        t.packed_tiles().iter().map(|r| r.to_string()).collect()
    }

    #[test]
    fn packed_tiles_fit_each_targets_registers() {
        assert_eq!(shapes(VectorTarget::AVX512), ["6x32", "8x24", "14x16"]);
        assert_eq!(shapes(VectorTarget::AVX2), ["4x12", "6x8", "2x16"]);
        assert_eq!(shapes(VectorTarget::SSE2), ["4x6", "6x4", "2x8"]);
        for t in [VectorTarget::AVX512, VectorTarget::AVX2, VectorTarget::SSE2] {
            for r in t.packed_tiles() {
                let k = r.nr / t.lanes;
                assert_eq!(r.nr % t.lanes, 0, "{r}: whole vectors");
                assert!(r.mr * k + k < t.registers, "{r} spills on {t:?}");
                // The readable form accepts it.
                assert_eq!(
                    r.to_string().parse::<RegisterTile>().map(|p| (p.mr, p.nr)),
                    Ok((r.mr, r.nr))
                );
            }
        }
    }

    #[test]
    fn targets_come_from_predefined_macros() {
        let avx512 = "#define __AVX__ 1\n#define __AVX512F__ 1\n#define __SSE2__ 1\n";
        assert_eq!(VectorTarget::from_macros(avx512), VectorTarget::AVX512);
        assert_eq!(
            VectorTarget::from_macros("#define __AVX2__ 1\n#define __AVX__ 1\n"),
            VectorTarget::AVX2
        );
        // A macro's name must match whole, not as a prefix.
        assert_eq!(
            VectorTarget::from_macros("#define __AVX512F__X 1\n#define __SSE2__ 1\n"),
            VectorTarget::SSE2
        );
        assert_eq!(
            VectorTarget::from_macros("#define __aarch64__ 1\n").registers,
            32
        );
    }
}
