//! A configuration as the typed fields a search reasons about (BaCO's
//! parameter types): fusion ordinal (no < smart < max), the three tile
//! switches, wavefront, OpenMP, pre-vectorization and SIMD on/off (their
//! difference is the Hamming distance), the unroll-and-jam factor ordinal
//! on a log scale (1, 2, 4, 8 → 0, 1, 2, 3). Each coordinate differs by at
//! most a few units, so one lengthscale per field weighs them.

use crate::config::{Config, Fusion};

/// The fields, in coordinate order.
pub const NAMES: [&str; FIELDS] = [
    "fuse", "tile1", "tile2", "tile3", "wave", "omp", "prevec", "simd", "uj",
];

/// Number of fields.
pub const FIELDS: usize = 9;

/// The coordinates of a configuration, one per field.
pub fn coordinates(c: &Config) -> [f64; FIELDS] {
    let b = |x: bool| if x { 1.0 } else { 0.0 };
    [
        match c.fusion {
            Fusion::No => 0.0,
            Fusion::Smart => 1.0,
            Fusion::Max => 2.0,
        },
        b(c.tile[0] > 1),
        b(c.tile[1] > 1),
        b(c.tile[2] > 1),
        b(c.wavefront),
        b(c.omp),
        b(c.prevector),
        b(c.simd),
        f64::from(c.unroll.outer.max(1)).log2(),
    ]
}

/// How many fields two configurations differ in.
pub fn differing(a: &[f64; FIELDS], b: &[f64; FIELDS]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_typed_coordinates() {
        let c = Config::from_bits("111010010111").unwrap();
        // fuse=max, tile=32x1x32, wave=0, omp=0, prevec=1, simd=0, uj=8.
        assert_eq!(
            coordinates(&c),
            [2.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 3.0]
        );
        assert_eq!(coordinates(&Config::default()), [0.0; FIELDS]);
        assert_eq!(differing(&coordinates(&c), &[0.0; FIELDS]), 5);
    }
}
