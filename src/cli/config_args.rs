//! `--config` and the named transformation flags (`optimize`, `measure`):
//! one configuration of the space.

use crate::config::{Config, Fusion};

/// One configuration of the space: `--config` and the named flags.
#[derive(clap::Args, Clone, Debug, Default)]
#[group(id = "configuration", multiple = true)]
pub(crate) struct ConfigArgs {
    /// Configuration T: a 12-bit string or its readable form; the named flags
    /// override it.
    ///
    /// A 12-bit string (e.g. 011100111011) or the readable form
    /// fuse=smart,tile=32x32x1,wave=0,omp=1,prevec=1,simd=1,uj=4. A key left
    /// out means what its bits mean at 0 (fuse=no, tile=1x1x1, wave=0, omp=0,
    /// prevec=0, simd=0, uj=1).
    #[arg(long, value_name = "T")]
    pub config: Option<Config>,
    /// Fusion structure (fuse=).
    #[arg(long, value_name = "no|smart|max")]
    pub fuse: Option<Fusion>,
    /// Tile sizes of the first three band dimensions (tile=), e.g. 64x256x8 or
    /// 64,256,8.
    ///
    /// Each 1 or 32 in the paper's space, any size up to 4096 beyond it (no bit
    /// string).
    #[arg(long, value_name = "AxBxC", value_parser = crate::config::parse_tile)]
    pub tile: Option<[u16; 3]>,
    /// Wavefront the tile loops (wave=1).
    #[arg(long, alias = "wavefront")]
    pub wave: bool,
    /// OpenMP on the outermost parallel loops (omp=1).
    #[arg(long)]
    pub omp: bool,
    /// Sink a parallel dimension innermost before tiling (prevec=1).
    #[arg(long, alias = "prevector")]
    pub prevec: bool,
    /// Mark vectorizable innermost loops for the compiler (simd=1).
    #[arg(long)]
    pub simd: bool,
    /// Unroll-and-jam of the two innermost loops (uj=), e.g. 4, or 4x2 for
    /// outer x inner.
    ///
    /// 1, 2, 4 or 8 in the paper's space; beyond it (no bit string) the outer
    /// and inner loop's factors separately, each 1 to 16, e.g. 4x2 or 4,2.
    #[arg(long, alias = "unroll-jam", value_name = "N|OxI", value_parser = crate::config::parse_unroll)]
    pub uj: Option<crate::config::UnrollJam>,
    /// Register blocking of contractions, MRxNR accumulators (rb=), e.g. 4x8.
    ///
    /// Beyond the paper's space: no bit string.
    #[arg(long, value_name = "MRxNR")]
    pub rb: Option<crate::config::RegisterTile>,
    /// With --rb: pack the register tile's operands per block of rows (pack=1).
    ///
    /// The micro-kernel then runs on vectors.
    #[arg(long, requires = "rb")]
    pub pack: bool,
    /// Privatize the scalars the SCoP writes (priv=1), or with =2 also its
    /// temporary arrays (priv=2).
    ///
    /// Beyond the paper's space: no bit string. Their live ranges may be
    /// reordered, and a parallel loop gets a private copy of each (of an
    /// array: one whose every read takes a value written before in the
    /// SCoP).
    #[arg(long = "priv", alias = "privatize", value_name = "1|2", num_args = 0..=1, require_equals = true, default_missing_value = "1")]
    pub privatize: Option<crate::config::Privatize>,
    /// Expand into arrays the scalars whose values live within one iteration
    /// (exp=1).
    ///
    /// The scalars whose values each live within one iteration of the loops
    /// around them. Beyond the paper's space: no bit string.
    #[arg(long = "exp", alias = "expand")]
    pub expand: bool,
}

impl ConfigArgs {
    /// The configuration given, if any: `--config` (else the all-zero
    /// one) with the named flags applied over it.
    pub(crate) fn config(&self) -> Option<Config> {
        let given = self.config.is_some()
            || self.fuse.is_some()
            || self.tile.is_some()
            || self.wave
            || self.omp
            || self.prevec
            || self.simd
            || self.uj.is_some()
            || self.rb.is_some()
            || self.privatize.is_some()
            || self.expand;
        if !given {
            return None;
        }
        let mut c = self.config.unwrap_or_default();
        if let Some(f) = self.fuse {
            c.fusion = f;
        }
        if let Some(t) = self.tile {
            c.tile = t;
        }
        c.wavefront |= self.wave;
        c.omp |= self.omp;
        c.prevector |= self.prevec;
        c.simd |= self.simd;
        if let Some(u) = self.uj {
            c.unroll = u;
        }
        if let Some(rb) = self.rb {
            c.regblock = Some(crate::config::RegisterTile {
                pack: self.pack,
                ..rb
            });
        }
        if let Some(p) = self.privatize {
            c.privatize = p;
        }
        c.expand |= self.expand;
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_flags_apply_over_the_all_zero_configuration() {
        assert_eq!(ConfigArgs::default().config(), None);
        let a = ConfigArgs {
            omp: true,
            ..Default::default()
        };
        assert_eq!(a.config().unwrap().bits(), "000000100000");
        let a = ConfigArgs {
            config: Some("fuse=max,uj=8".parse().unwrap()),
            fuse: Some(Fusion::Smart),
            tile: Some([32, 32, 1]),
            ..Default::default()
        };
        assert_eq!(
            a.config().unwrap().to_string(),
            "fuse=smart,tile=32x32x1,wave=0,omp=0,prevec=0,simd=0,uj=8"
        );
    }
}
