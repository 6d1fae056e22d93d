//! The optimization space (paper Table 1): a configuration `T` of the
//! high-level primitives, its fixed-length bit encoding (thermometer code
//! for ordinal choices) and a readable form; both round-trip.
//!
//! Why one file: the configuration, its bits, its readable form and its
//! parser must round-trip and read best together; its code is about 510
//! lines, its tests the rest.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

mod regblock;
mod unroll;
pub use regblock::{RegisterTile, VectorTarget, parse_regblock};
pub use unroll::{UnrollJam, parse_unroll};

/// Fusion / distribution structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Fusion {
    /// Distribute maximally: every strongly connected component alone.
    No,
    /// Fuse where no parallelism or tilable depth is lost.
    Smart,
    /// Fuse as much as legal.
    Max,
}

/// How reductions may run (`red=`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Reductions {
    /// `red=0`: as written.
    #[default]
    Off,
    /// `red=1`: the code generator runs a loop whose only carried
    /// dependences are reductions' own as a reduction.
    Loops,
    /// `red=2`: also the scheduler sets the reductions' own dependences
    /// aside when it looks for parallel loops, so that a reduction loop
    /// may stay outermost, fused with the statements around it (atax's
    /// `y[j] += A[i][j] * tmp[i]` in the loop over `i` that computes
    /// `tmp[i]`: one pass over `A`).
    Scheduled,
}

impl Reductions {
    /// Whether loops run as reductions at all.
    pub fn on(self) -> bool {
        self != Reductions::Off
    }
}

impl FromStr for Reductions {
    type Err = String;

    /// `0`, `1` or `2`.
    fn from_str(v: &str) -> Result<Reductions, String> {
        match v.trim() {
            "0" => Ok(Reductions::Off),
            "1" => Ok(Reductions::Loops),
            "2" => Ok(Reductions::Scheduled),
            _ => Err(format!("red must be 0, 1 or 2, not `{}`", clip(v))),
        }
    }
}

impl fmt::Display for Reductions {
    /// `0`, `1` or `2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reductions::Off => "0",
            Reductions::Loops => "1",
            Reductions::Scheduled => "2",
        })
    }
}

/// What a SCoP's privatization covers (`priv=`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Privatize {
    /// `priv=0`: nothing.
    #[default]
    Off,
    /// `priv=1`: the scalars it writes.
    Scalars,
    /// `priv=2`: also the arrays whose every read takes a value written
    /// before in the SCoP (temporaries, doitgen's `sum[p]`): a parallel
    /// loop gives each iteration a copy of its own, the iteration that
    /// leaves the values for the code after the SCoP writes the array
    /// itself.
    Arrays,
}

impl Privatize {
    /// Whether anything is privatized.
    pub fn on(self) -> bool {
        self != Privatize::Off
    }
}

impl FromStr for Privatize {
    type Err = String;

    /// `0`, `1` or `2` (`on` and `off` as 1 and 0).
    fn from_str(v: &str) -> Result<Privatize, String> {
        match v.trim() {
            "2" => Ok(Privatize::Arrays),
            "1" | "on" | "true" | "yes" => Ok(Privatize::Scalars),
            "0" | "off" | "false" | "no" => Ok(Privatize::Off),
            _ => Err(format!("`priv` must be 0, 1 or 2, not `{}`", clip(v))),
        }
    }
}

impl fmt::Display for Privatize {
    /// `0`, `1` or `2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Privatize::Off => "0",
            Privatize::Scalars => "1",
            Privatize::Arrays => "2",
        })
    }
}

/// One point of the space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Config {
    pub fusion: Fusion,
    /// Tile sizes of the first three dimensions of each permutable band:
    /// 1 (untiled) or 32 in the paper's space, any size from 1 to
    /// [`MAX_TILE_SIZE`] beyond it (`tile=64x256x8`).
    pub tile: [u16; 3],
    pub wavefront: bool,
    pub omp: bool,
    pub prevector: bool,
    pub simd: bool,
    /// Unroll-and-jam of the two innermost loops: the paper's one factor
    /// (1, 2, 4 or 8, `uj=4`), or beyond its space the outer and inner
    /// loops' factors separately (`uj=4x2`).
    pub unroll: UnrollJam,
    /// Run loops whose only carried dependences are reductions' own
    /// (`X += e`) as reductions: `omp simd reduction` on innermost loops,
    /// `omp parallel for reduction` on outermost ones with `omp` (`red=1`),
    /// and also let the scheduler count such loops as parallel (`red=2`).
    /// It reassociates floating-point sums (verified with a tolerance).
    /// Beyond the paper's space: no bit string has it.
    pub reduce: Reductions,
    /// Register blocking of contractions (`rb=MRxNR`): beyond the paper's
    /// space, so outside the 12-bit encoding; `None` in every
    /// configuration the bit strings describe.
    pub regblock: Option<RegisterTile>,
    /// Scalar privatization (`priv=1`): a scalar the SCoP writes loses
    /// its memory-based (anti and output) dependences, so that the
    /// schedule may reorder its live ranges as long as they do not
    /// overlap; a loop that writes it runs in parallel with a private
    /// copy per iteration (`priv=2`: also arrays, [`Privatize::Arrays`]).
    /// Beyond the paper's space: no bit string has it.
    pub privatize: Privatize,
    /// Scalar expansion (`exp=1`): a scalar whose values each live
    /// within one iteration of the loops around all its accesses becomes
    /// an array with an element per iteration, freeing the schedule of
    /// its memory-based dependences between iterations. Beyond the
    /// paper's space: no bit string has it.
    pub expand: bool,
    /// Diamond tiling of time-iterated loops (`tt=diamond`): the
    /// outermost permutable band whose first loop carries dependences
    /// (a time loop) is tiled along two hyperplanes that meet in a
    /// diamond, so that a whole row of tiles starts at once (concurrent
    /// start) and runs in parallel with `omp`, the points of a tile in
    /// the band's own order. Its first two tile sizes are the diamond's
    /// sides. Beyond the paper's space: no bit string has it.
    pub diamond: bool,
    /// Parallel loops' iterations dealt to the threads in turn
    /// (`cyc=1`: OpenMP's `schedule(static, 1)`) rather than in one block
    /// each: iterations of unequal work (a triangle's rows) then balance.
    /// Beyond the paper's space: no bit string has it.
    pub cyclic: bool,
    /// The original's outermost loop kept outermost and in its order
    /// (`outer=1`), the statements inside one of its iterations scheduled
    /// anew; with `fuse=smart` they are fused in groups that keep their
    /// parallel loops. Beyond the paper's space: no bit string has it.
    pub outer: bool,
    /// The innermost loop of the outermost band distributed (`dist=1`):
    /// each statement (each group of statements that depend on each other
    /// in a cycle) gets a loop of its own inside the loops the band keeps
    /// fused. Beyond the paper's space: no bit string has it.
    pub distribute: bool,
}

/// Number of typed attributes beyond the paper's bits
/// ([`Config::extended_attributes`]).
pub const EXTENDED: usize = 11;

/// The names of [`Config::extended_attributes`], in order (model files
/// name the ones a model uses).
pub const EXTENDED_ATTRIBUTES: [&str; EXTENDED] = [
    "tile1-log2/32",
    "tile2-log2/32",
    "tile3-log2/32",
    "uj-outer-log2-rest",
    "uj-inner-log2",
    "red",
    "priv",
    "exp",
    "rb-mr-log2",
    "rb-nr-log2",
    "pack",
];

/// The tile size of a tiled dimension in the paper's space.
pub(crate) const TILE_SIZE: i64 = 32;

/// The largest tile size accepted beyond the paper's space.
pub(crate) const MAX_TILE_SIZE: u16 = 4096;

/// Number of bits of the encoding.
pub const BITS: usize = 12;

impl Default for Config {
    /// The all-zero bit string `000000000000`: maximal distribution and
    /// nothing else. A readable form or a set of flags that omits a field
    /// takes it from here, so every spelling agrees on what "not given"
    /// means.
    fn default() -> Self {
        Config {
            fusion: Fusion::No,
            tile: [1; 3],
            wavefront: false,
            omp: false,
            prevector: false,
            simd: false,
            unroll: UnrollJam::NONE,
            regblock: None,
            reduce: Reductions::Off,
            privatize: Privatize::Off,
            expand: false,
            diamond: false,
            cyclic: false,
            outer: false,
            distribute: false,
        }
    }
}

/// A configuration text that is neither form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid configuration `{text}`: {reason}\n  help: the accepted forms are a {BITS}-bit string such as `011100111011` \
     (fuse:2 thermometer, tile:3, wave, omp, prevec, simd, unroll:3 thermometer) or \
     `fuse=no|smart|max,tile=AxBxC (each 1 or 32),wave=0|1,omp=0|1,prevec=0|1,simd=0|1,uj=1|2|4|8` \
     (an omitted key means what its bits mean at 0: fuse=no, tile=1x1x1, wave=0, omp=0, prevec=0, simd=0, uj=1); \
     beyond the paper's space, with no bit string, the readable form also takes tile sizes other than \
     1 and 32 (up to 4096, e.g. tile=64x256x8), unroll-and-jam factors of the outer and inner \
     loop separately (`uj=OxI`, each 1 to 16, e.g. uj=4x2), `red=1` (loops run as reductions, \
     reassociating floating point; `red=2`: the scheduler also free to keep them outermost), `priv=1` (scalars privatized: their live ranges reordered, \
     private in parallel loops; `priv=2`: also arrays every read of which reads a value written in the SCoP), `exp=1` (scalars expanded into arrays, an element per \
     iteration), `rb=MRxNR` (register blocking of contractions, e.g. rb=4x8) and, with it, `pack=1` (row operands packed, a vector micro-kernel), \
     `tt=diamond` (time-iterated loops tiled in diamonds: concurrent start), `cyc=1` (parallel \
     loops' iterations dealt to the threads in turn), `outer=1` (the outermost loop kept, \
     the statements inside it scheduled anew) and `dist=1` (the innermost loop of the outermost band \
     distributed)"
)]
pub struct ConfigError {
    pub text: String,
    pub reason: String,
}

fn thermometer(level: usize, width: usize) -> String {
    (0..width)
        .map(|k| if width - k <= level { '1' } else { '0' })
        .collect()
}

fn from_thermometer(bits: &str) -> Option<usize> {
    let level = bits.chars().filter(|&c| c == '1').count();
    (thermometer(level, bits.len()) == bits).then_some(level)
}

impl Config {
    /// Every encodable configuration (1536), in bit-string order.
    pub fn all() -> Vec<Config> {
        let mut out = Vec::new();
        for fusion in [Fusion::No, Fusion::Smart, Fusion::Max] {
            for t in 0..8u8 {
                for wavefront in [false, true] {
                    for omp in [false, true] {
                        for prevector in [false, true] {
                            for simd in [false, true] {
                                for unroll in [1, 2, 4, 8] {
                                    out.push(Config {
                                        fusion,
                                        tile: [t & 4, t & 2, t & 1]
                                            .map(|b| if b != 0 { TILE_SIZE as u16 } else { 1 }),
                                        wavefront,
                                        omp,
                                        prevector,
                                        simd,
                                        unroll: UnrollJam::jam(unroll),
                                        regblock: None,
                                        reduce: Reductions::Off,
                                        privatize: Privatize::Off,
                                        expand: false,
                                        diamond: false,
                                        cyclic: false,
                                        outer: false,
                                        distribute: false,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// Whether the configuration lies in the paper's space (the one the
    /// bit strings encode): no primitive beyond it is asked for.
    pub fn is_paper(&self) -> bool {
        self.regblock.is_none()
            && !self.reduce.on()
            && self.unroll.is_paper()
            && !self.privatize.on()
            && !self.expand
            && !self.diamond
            && !self.cyclic
            && !self.outer
            && !self.distribute
            && self
                .tile
                .iter()
                .all(|&t| t == 1 || i64::from(t) == TILE_SIZE)
    }

    /// How a configuration is written where one string names it (the
    /// store, CSV, JSON): its bit string in the paper's space, else its
    /// readable form.
    pub fn text(&self) -> String {
        if self.is_paper() {
            self.bits()
        } else {
            self.to_string()
        }
    }

    /// The canonical bit vector T of the paper's primitives; a field
    /// beyond the paper's space (`reduce`, `privatize`, `regblock`, a tile
    /// size other than 1 and 32, an inner unroll factor; an outer one other
    /// than 1, 2, 4 and 8 gets the bits of the power of two below it) has no
    /// bits: check
    /// [`Config::is_paper`] where the bits must name the whole
    /// configuration.
    pub fn bits(&self) -> String {
        let fuse = match self.fusion {
            Fusion::No => 0,
            Fusion::Smart => 1,
            Fusion::Max => 2,
        };
        let unroll = match self.unroll.outer {
            0..=1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            _ => 3,
        };
        let b = |x: bool| if x { '1' } else { '0' };
        let mut s = thermometer(fuse, 2);
        s.extend(self.tile.iter().map(|&t| b(t > 1)));
        s.push(b(self.wavefront));
        s.push(b(self.omp));
        s.push(b(self.prevector));
        s.push(b(self.simd));
        s.push_str(&thermometer(unroll, 3));
        s
    }

    /// The bit vector as numbers, for the learning models.
    pub fn features(&self) -> Vec<f64> {
        self.bits()
            .chars()
            .map(|c| if c == '1' { 1.0 } else { 0.0 })
            .collect()
    }

    /// The typed attributes of what the bit string does not say, in
    /// [`EXTENDED_ATTRIBUTES`] order, each 0 for every configuration of
    /// the paper's space: a tile size relative to the paper's 32 (log2,
    /// 0 when untiled: 64 is 1, 8 is −2), the outer unroll factor beyond
    /// the power of two its bits give (log2), the inner unroll factor
    /// (log2), `red`, `priv` and `exp` (0 or 1), the register tile's
    /// sides (log2, 0 without one) and `pack` (0 or 1). With the bits
    /// they name the whole configuration to a model; a model learning
    /// from the paper's space alone, where they are constant, drops them
    /// and is the model of the bits.
    pub fn extended_attributes(&self) -> [f64; EXTENDED] {
        let log2 = |x: u8| f64::from(x.max(1)).log2();
        let tile = |t: u16| {
            if t > 1 {
                (f64::from(t) / TILE_SIZE as f64).log2()
            } else {
                0.0
            }
        };
        let b = |x: bool| if x { 1.0 } else { 0.0 };
        // The bits' unroll level: 1, 2, 4 or 8 (the power of two below).
        let level = match self.unroll.outer {
            0..=1 => 0.0,
            2..=3 => 1.0,
            4..=7 => 2.0,
            _ => 3.0,
        };
        let (mr, nr, pack) = match self.regblock {
            Some(r) => (log2(r.mr), log2(r.nr), b(r.pack)),
            None => (0.0, 0.0, 0.0),
        };
        [
            tile(self.tile[0]),
            tile(self.tile[1]),
            tile(self.tile[2]),
            log2(self.unroll.outer) - level,
            log2(self.unroll.inner),
            b(self.reduce.on()),
            b(self.privatize.on()),
            b(self.expand),
            mr,
            nr,
            pack,
        ]
    }

    /// Tile sizes for the first three band members.
    pub fn tile_sizes(&self) -> [i64; 3] {
        self.tile.map(i64::from)
    }

    /// The configuration of a bit string, and only of a bit string (the
    /// form model files and the learning dataset keep, and the store for
    /// the paper's space).
    pub fn from_bits(text: &str) -> Result<Config, ConfigError> {
        let error = |reason: &str| ConfigError {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        if text.len() != BITS || !text.chars().all(|c| c == '0' || c == '1') {
            return Err(error("not a bit string"));
        }
        Config::decode_bits(text).map_err(|r| error(&r))
    }

    /// The number of bits set: how many of the primitives (and how far)
    /// a configuration asks for.
    pub fn ones(&self) -> usize {
        self.bits().bytes().filter(|&b| b == b'1').count()
    }

    fn decode_bits(text: &str) -> Result<Config, String> {
        let fuse = from_thermometer(&text[0..2]).ok_or("fuse bits must be 00, 01 or 11")?;
        let unroll =
            from_thermometer(&text[9..12]).ok_or("unroll bits must be 000, 001, 011 or 111")?;
        let bit = |k: usize| text.as_bytes()[k] == b'1';
        Ok(Config {
            fusion: [Fusion::No, Fusion::Smart, Fusion::Max][fuse],
            tile: [bit(2), bit(3), bit(4)].map(|b| if b { TILE_SIZE as u16 } else { 1 }),
            wavefront: bit(5),
            omp: bit(6),
            prevector: bit(7),
            simd: bit(8),
            unroll: UnrollJam::jam([1, 2, 4, 8][unroll]),
            regblock: None,
            reduce: Reductions::Off,
            privatize: Privatize::Off,
            expand: false,
            diamond: false,
            cyclic: false,
            outer: false,
            distribute: false,
        })
    }

    fn from_readable(text: &str) -> Result<Config, String> {
        let mut c = Config::default();
        let mut pack = false;
        let mut given: Vec<&str> = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("`{}` is not key=value", clip(part)))?;
            let (k, v) = (k.trim(), v.trim());
            let flag = |v: &str| match v {
                "0" | "off" | "false" | "no" => Ok(false),
                "1" | "on" | "true" | "yes" => Ok(true),
                _ => Err(format!("`{}` must be 0 or 1, not `{}`", clip(k), clip(v))),
            };
            // A key given twice (under either of its names) is a mistake
            // whichever value was meant: neither is taken.
            let canonical = canonical_key(k);
            if let Some(key) = canonical {
                if given.contains(&key) {
                    return Err(format!("`{key}` is given twice"));
                }
                given.push(key);
            }
            match k {
                "fuse" | "fusion" => c.fusion = v.parse()?,
                "tile" => c.tile = parse_tile(v)?,
                "wave" | "wavefront" => c.wavefront = flag(v)?,
                "omp" => c.omp = flag(v)?,
                "prevec" | "prevector" => c.prevector = flag(v)?,
                "simd" => c.simd = flag(v)?,
                "uj" | "unroll" => c.unroll = parse_unroll(v)?,
                "rb" | "regblock" => c.regblock = parse_regblock(v)?,
                "red" | "reduce" => {
                    c.reduce = match (v, flag(v)) {
                        ("2", _) => Reductions::Scheduled,
                        (_, Ok(true)) => Reductions::Loops,
                        (_, Ok(false)) => Reductions::Off,
                        (_, Err(_)) => {
                            return Err(format!(
                                "`{}` must be 0, 1 or 2, not `{}`",
                                clip(k),
                                clip(v)
                            ));
                        }
                    }
                }
                "pack" => pack = flag(v)?,
                "priv" | "privatize" => c.privatize = v.parse()?,
                "exp" | "expand" => c.expand = flag(v)?,
                "tt" | "time-tiling" => c.diamond = parse_time_tiling(v)?,
                "cyc" | "cyclic" => c.cyclic = flag(v)?,
                "outer" => c.outer = flag(v)?,
                "dist" | "distribute" => c.distribute = flag(v)?,
                other => return Err(format!("unknown key `{}`", clip(other))),
            }
        }
        match (&mut c.regblock, pack) {
            (Some(rb), _) => rb.pack = pack,
            (None, true) => {
                return Err("pack=1 packs a register tile's operands: it needs rb=MRxNR".into());
            }
            (None, false) => {}
        }
        Ok(c)
    }
}

impl FromStr for Fusion {
    type Err = String;

    /// `no`, `smart` or `max` (also `nofuse`, `smartfuse`, `maxfuse`).
    fn from_str(v: &str) -> Result<Fusion, String> {
        match v.trim() {
            "no" | "nofuse" => Ok(Fusion::No),
            "smart" | "smartfuse" => Ok(Fusion::Smart),
            "max" | "maxfuse" => Ok(Fusion::Max),
            _ => Err(format!("fuse must be no, smart or max, not `{v}`")),
        }
    }
}

/// `32x32x1`, `32,1,32` or `32x32` (missing dimensions are 1).
pub fn parse_tile(v: &str) -> Result<[u16; 3], String> {
    let parts: Vec<&str> = v.split(['x', ',']).map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("tile must have one to three sizes, not `{v}`"));
    }
    let mut t = [1; 3];
    for (k, p) in parts.iter().enumerate() {
        t[k] = p
            .parse::<u16>()
            .ok()
            .filter(|n| (1..=MAX_TILE_SIZE).contains(n))
            .ok_or_else(|| {
                format!(
                    "tile sizes must be 1 or {TILE_SIZE} (the paper's space) or any size up to {MAX_TILE_SIZE} beyond it, not `{p}`"
                )
            })?;
    }
    Ok(t)
}

/// `tt=`: `diamond` (also `1`) or `0` (also `no`, `none`).
fn parse_time_tiling(v: &str) -> Result<bool, String> {
    match v {
        "diamond" | "1" => Ok(true),
        "0" | "no" | "none" => Ok(false),
        _ => Err(format!("tt must be diamond or 0, not `{}`", clip(v))),
    }
}

/// The one name of a key of the readable form (`fusion` is `fuse`).
fn canonical_key(k: &str) -> Option<&'static str> {
    Some(match k {
        "fuse" | "fusion" => "fuse",
        "tile" => "tile",
        "wave" | "wavefront" => "wave",
        "omp" => "omp",
        "prevec" | "prevector" => "prevec",
        "simd" => "simd",
        "uj" | "unroll" => "uj",
        "rb" | "regblock" => "rb",
        "red" | "reduce" => "red",
        "pack" => "pack",
        "priv" | "privatize" => "priv",
        "exp" | "expand" => "exp",
        "tt" | "time-tiling" => "tt",
        "cyc" | "cyclic" => "cyc",
        "outer" => "outer",
        "dist" | "distribute" => "dist",
        _ => return None,
    })
}

/// `text` as an error message may quote it: whole up to 60 characters,
/// else its beginning and its length (an error never echoes a value of
/// any size in full).
pub fn clip(text: &str) -> std::borrow::Cow<'_, str> {
    const SHOWN: usize = 60;
    match text.char_indices().nth(SHOWN) {
        None => std::borrow::Cow::Borrowed(text),
        Some((end, _)) => std::borrow::Cow::Owned(format!(
            "{}… ({} characters)",
            &text[..end],
            text.chars().count()
        )),
    }
}

/// `reason` with every `quoted` part [`clip`]ped.
fn clip_quoted(reason: &str) -> String {
    reason
        .split('`')
        .enumerate()
        .map(|(k, part)| if k % 2 == 1 { clip(part) } else { part.into() })
        .collect::<Vec<_>>()
        .join("`")
}

impl FromStr for Config {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Config, ConfigError> {
        let t = text.trim();
        let r = if t.len() == BITS && t.chars().all(|c| c == '0' || c == '1') {
            Config::decode_bits(t)
        } else if t.contains('=') || t.is_empty() {
            Config::from_readable(t)
        } else {
            Err("neither a bit string nor key=value pairs".to_string())
        };
        r.map_err(|reason| ConfigError {
            text: clip(text).into_owned(),
            reason: clip_quoted(&reason),
        })
    }
}

impl fmt::Display for Fusion {
    /// The readable form: `no`, `smart` or `max`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fusion::No => "no",
            Fusion::Smart => "smart",
            Fusion::Max => "max",
        })
    }
}

impl fmt::Display for Config {
    /// The readable form, e.g. `fuse=smart,tile=32x32x1,wave=0,omp=1,prevec=1,simd=1,uj=4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fuse = self.fusion;
        let [a, b, c] = self.tile_sizes();
        write!(
            f,
            "fuse={fuse},tile={a}x{b}x{c},wave={},omp={},prevec={},simd={},uj={}",
            self.wavefront as u8,
            self.omp as u8,
            self.prevector as u8,
            self.simd as u8,
            self.unroll
        )?;
        // Only when asked: the paper's configurations keep their text
        // (it is in every generated file's header).
        if self.reduce.on() {
            write!(f, ",red={}", self.reduce)?;
        }
        if self.privatize.on() {
            write!(f, ",priv={}", self.privatize)?;
        }
        if self.expand {
            f.write_str(",exp=1")?;
        }
        if self.diamond {
            f.write_str(",tt=diamond")?;
        }
        if self.cyclic {
            f.write_str(",cyc=1")?;
        }
        if self.outer {
            f.write_str(",outer=1")?;
        }
        if self.distribute {
            f.write_str(",dist=1")?;
        }
        match self.regblock {
            Some(rb) if rb.pack => write!(f, ",rb={rb},pack=1"),
            Some(rb) => write!(f, ",rb={rb}"),
            None => Ok(()),
        }
    }
}

/// Serde as text: a configuration of the paper's space as its bit
/// string, one beyond it in its readable form; either form is read back.
pub mod as_text {
    use super::Config;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(c: &Config, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&c.text())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Config, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_refused_under_either_name() {
        for text in [
            "tile=32x32x1,tile=1x1x1",
            "fuse=smart,fusion=no",
            "uj=2,unroll=2",
        ] {
            let e = text.parse::<Config>().unwrap_err();
            assert!(e.reason.contains("is given twice"), "{text}: {e}");
        }
        assert!("tile=32x32x1,omp=1".parse::<Config>().is_ok());
    }

    #[test]
    fn errors_never_echo_a_long_value_in_full() {
        let long = "x".repeat(5000);
        for text in [
            long.clone(),
            format!("tile={long}"),
            format!("omp={long}"),
            format!("{long}=1"),
            format!("fuse={long}"),
        ] {
            let e = text.parse::<Config>().unwrap_err().to_string();
            assert!(e.len() < 3000, "{} bytes: {}", e.len(), &e[..200]);
            assert!(e.contains("characters)"), "{e}");
        }
    }

    #[test]
    fn both_forms_round_trip_for_the_whole_space() {
        let all = Config::all();
        assert_eq!(all.len(), 1536);
        let mut seen = std::collections::HashSet::new();
        for c in &all {
            let bits = c.bits();
            assert_eq!(bits.len(), BITS);
            assert!(seen.insert(bits.clone()), "duplicate encoding {bits}");
            assert_eq!(bits.parse::<Config>().unwrap(), *c);
            assert_eq!(c.to_string().parse::<Config>().unwrap(), *c);
        }
    }

    #[test]
    fn extended_attributes_are_zero_in_the_papers_space_and_name_the_rest() {
        for c in Config::all() {
            assert_eq!(c.extended_attributes(), [0.0; EXTENDED], "{c}");
        }
        let c: Config = "fuse=smart,tile=64x8x1,omp=1,uj=4x2,red=1,rb=8x16,pack=1,exp=1"
            .parse()
            .unwrap();
        assert_eq!(
            c.extended_attributes(),
            [1.0, -2.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 3.0, 4.0, 1.0]
        );
        let c: Config = "uj=16".parse().unwrap();
        assert_eq!(c.bits(), Config::from_str("uj=8").unwrap().bits());
        assert_eq!(c.extended_attributes()[3], 1.0);
        // Distinct configurations of the extended space are told apart.
        let mut seen = std::collections::HashSet::new();
        for t in [1u16, 8, 16, 32, 64, 128, 256] {
            let c = Config {
                tile: [t, 1, 1],
                ..Config::default()
            };
            let key: Vec<u64> = c
                .features()
                .into_iter()
                .chain(c.extended_attributes())
                .map(f64::to_bits)
                .collect();
            assert!(seen.insert(key), "{c}");
        }
    }

    #[test]
    fn cyclic_reads_and_writes_as_cyc_and_leaves_the_papers_space() {
        let c: Config = "fuse=no,omp=1,cyc=1".parse().unwrap();
        assert!(c.cyclic && !c.is_paper());
        assert_eq!(
            c.to_string(),
            "fuse=no,tile=1x1x1,wave=0,omp=1,prevec=0,simd=0,uj=1,cyc=1"
        );
        assert_eq!(c.text().parse::<Config>().unwrap(), c);
        assert_eq!("omp=1,cyclic=on".parse::<Config>().unwrap(), c);
        assert!(!"omp=1,cyc=0".parse::<Config>().unwrap().cyclic);
        let e = "cyc=1,cyclic=1".parse::<Config>().unwrap_err();
        assert!(e.reason.contains("given twice"), "{e}");
        let e = "cyc=2".parse::<Config>().unwrap_err();
        assert!(e.reason.contains("must be 0 or 1"), "{e}");
    }

    #[test]
    fn outer_reads_and_writes_as_outer_and_leaves_the_papers_space() {
        let c: Config = "fuse=smart,omp=1,cyc=1,outer=1".parse().unwrap();
        assert!(c.outer && c.cyclic && !c.is_paper());
        assert_eq!(
            c.to_string(),
            "fuse=smart,tile=1x1x1,wave=0,omp=1,prevec=0,simd=0,uj=1,cyc=1,outer=1"
        );
        assert_eq!(c.text().parse::<Config>().unwrap(), c);
        assert!(!"outer=0".parse::<Config>().unwrap().outer);
        let e = "outer=1,outer=0".parse::<Config>().unwrap_err();
        assert!(e.reason.contains("given twice"), "{e}");
        let e = "outer=yes please".parse::<Config>().unwrap_err();
        assert!(e.reason.contains("must be 0 or 1"), "{e}");
    }

    #[test]
    fn distribute_reads_and_writes_as_dist_and_leaves_the_papers_space() {
        let c: Config = "fuse=max,omp=1,distribute=1".parse().unwrap();
        assert!(c.distribute && !c.is_paper());
        assert_eq!(
            c.to_string(),
            "fuse=max,tile=1x1x1,wave=0,omp=1,prevec=0,simd=0,uj=1,dist=1"
        );
        assert_eq!(c.text().parse::<Config>().unwrap(), c);
        let e = "dist=1,distribute=0".parse::<Config>().unwrap_err();
        assert!(e.reason.contains("given twice"), "{e}");
    }

    #[test]
    fn reductions_read_and_write_as_red_0_1_2() {
        for (text, r) in [
            ("red=0", Reductions::Off),
            ("red=1", Reductions::Loops),
            ("red=on", Reductions::Loops),
            ("red=2", Reductions::Scheduled),
        ] {
            let c: Config = format!("fuse=max,omp=1,{text}").parse().unwrap();
            assert_eq!(c.reduce, r, "{text}");
            assert_eq!(c.to_string().parse::<Config>().unwrap(), c);
            assert_eq!(c.is_paper(), r == Reductions::Off);
        }
        let c: Config = "red=2".parse().unwrap();
        assert!(c.to_string().ends_with(",red=2"), "{c}");
        // Like red=1 to the models: the same attribute.
        assert_eq!(
            c.extended_attributes(),
            "red=1".parse::<Config>().unwrap().extended_attributes()
        );
        let e = "red=3".parse::<Config>().unwrap_err();
        assert!(e.reason.contains("`red` must be 0, 1 or 2, not `3`"), "{e}");
        assert_eq!("2".parse::<Reductions>(), Ok(Reductions::Scheduled));
        assert!("x".parse::<Reductions>().is_err());
    }

    #[test]
    fn only_bit_strings_are_bits() {
        let c = Config::from_bits("111100101011").unwrap();
        assert_eq!(
            c.to_string(),
            "fuse=max,tile=32x32x1,wave=0,omp=1,prevec=0,simd=1,uj=4"
        );
        assert_eq!(c.ones(), 8);
        for bad in ["fuse=max", "original", "", "10", "100000000000"] {
            assert!(Config::from_bits(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn examples() {
        let c: Config = "fuse=max,tile=32x32,omp=1,simd=1,uj=4".parse().unwrap();
        assert_eq!(c.bits(), "111100101011");
        assert_eq!(
            c.to_string(),
            "fuse=max,tile=32x32x1,wave=0,omp=1,prevec=0,simd=1,uj=4"
        );
        assert_eq!("".parse::<Config>().unwrap(), Config::default());
        assert_eq!(Config::default().bits(), "000000000000");
    }

    #[test]
    fn an_omitted_key_means_its_bits_at_zero() {
        let zero: Config = "000000000000".parse().unwrap();
        assert_eq!("".parse::<Config>().unwrap(), zero);
        assert_eq!(Config::default(), zero);
        // Each key alone sets its own bits and leaves the others at 0.
        for (readable, bits) in [
            ("fuse=no", "000000000000"),
            ("fuse=smart", "010000000000"),
            ("fuse=max", "110000000000"),
            ("tile=32", "001000000000"),
            ("tile=1x1x32", "000010000000"),
            ("wave=1", "000001000000"),
            ("omp=1", "000000100000"),
            ("prevec=1", "000000010000"),
            ("simd=1", "000000001000"),
            ("uj=2", "000000000001"),
            ("uj=8", "000000000111"),
        ] {
            let c: Config = readable.parse().unwrap();
            assert_eq!(c.bits(), bits, "{readable}");
        }
    }

    #[test]
    fn register_blocking_is_readable_only() {
        let c: Config = "fuse=smart,tile=32x32x32,omp=1,rb=4x8".parse().unwrap();
        assert_eq!(
            c.regblock,
            Some(RegisterTile {
                mr: 4,
                nr: 8,
                pack: false
            })
        );
        assert!(!c.is_paper());
        assert_eq!(
            c.to_string(),
            "fuse=smart,tile=32x32x32,wave=0,omp=1,prevec=0,simd=0,uj=1,rb=4x8"
        );
        assert_eq!(c.to_string().parse::<Config>().unwrap(), c);
        // The bits are the paper part's; the register tile has none.
        assert_eq!(c.bits(), "011110100000");
        assert_eq!(
            Config::from_bits(&c.bits()).unwrap(),
            Config {
                regblock: None,
                ..c
            }
        );
        for none in ["rb=0", "rb=none", "rb=1x1"] {
            assert!(none.parse::<Config>().unwrap().is_paper(), "{none}");
        }
        assert!(Config::all().iter().all(Config::is_paper));
        for bad in ["rb=4", "rb=0x4", "rb=33x2", "rb=16x17", "rb=axb"] {
            let e = bad.parse::<Config>().unwrap_err().to_string();
            assert!(e.contains("rb must be MRxNR"), "{e}");
            assert!(e.contains("no bit string"), "{e}");
        }
    }

    #[test]
    fn privatization_is_readable_only() {
        let c: Config = "fuse=smart,omp=1,priv=1".parse().unwrap();
        let text = "fuse=smart,tile=1x1x1,wave=0,omp=1,prevec=0,simd=0,uj=1,priv=1";
        assert!(c.privatize == Privatize::Scalars && !c.is_paper() && c.to_string() == text);
        assert_eq!(text.parse::<Config>().unwrap(), c);
        assert!("priv=0".parse::<Config>().unwrap().is_paper());
        let arrays: Config = "omp=1,priv=2".parse().unwrap();
        assert_eq!(arrays.privatize, Privatize::Arrays);
        assert!(arrays.to_string().ends_with(",priv=2"), "{arrays}");
        assert_eq!(arrays.to_string().parse::<Config>().unwrap(), arrays);
        // Like priv=1 to the models: the same attribute.
        assert_eq!(
            arrays.extended_attributes(),
            "omp=1,priv=1"
                .parse::<Config>()
                .unwrap()
                .extended_attributes()
        );
        let e = "priv=3".parse::<Config>().unwrap_err();
        assert!(
            e.reason.contains("`priv` must be 0, 1 or 2, not `3`"),
            "{e}"
        );
    }

    #[test]
    fn free_tile_sizes_are_readable_only() {
        let c: Config = "fuse=no,tile=64x256x8,omp=1".parse().unwrap();
        assert_eq!(c.tile_sizes(), [64, 256, 8]);
        assert_eq!(
            c.to_string(),
            "fuse=no,tile=64x256x8,wave=0,omp=1,prevec=0,simd=0,uj=1"
        );
        assert_eq!(c.to_string().parse::<Config>().unwrap(), c);
        assert!(!c.is_paper());
        // 1 and 32 stay the paper's: the same configuration as the bits.
        let p: Config = "tile=32x1x32".parse().unwrap();
        assert!(p.is_paper());
        assert_eq!(Config::from_bits(&p.bits()).unwrap(), p);
    }

    #[test]
    fn malformed_configs_explain_the_accepted_forms() {
        for bad in [
            "10",
            "100000000000",
            "fuse=some",
            "tile=0",
            "tile=5000",
            "tile=32x32x32x32",
            "uj=0",
            "uj=17",
            "uj=4x0",
            "uj=4x2x2",
            "omp=2",
            "speed=1",
            "hello",
        ] {
            let e = bad.parse::<Config>().unwrap_err();
            assert!(
                e.to_string().contains("help: the accepted forms are"),
                "{e}"
            );
        }
    }
}
