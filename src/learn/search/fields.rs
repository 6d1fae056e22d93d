//! A configuration as the typed fields a search reasons about (BaCO's
//! parameter types): fusion ordinal (no < smart < max), the three tile
//! switches, wavefront, OpenMP, pre-vectorization and SIMD on/off (their
//! difference is the Hamming distance), the unroll-and-jam factor ordinal
//! on a log scale (1, 2, 4, 8 → 0, 1, 2, 3). Each coordinate differs by at
//! most a few units, so one lengthscale per field weighs them.
//!
//! A space with variants beyond the paper's (a sampled campaign's) has
//! more fields: the typed attributes of [`Config::extended_attributes`]
//! that vary over its configurations (tile sizes relative to 32 and the
//! factors on a log scale, the switches 0 or 1). A space of the paper's
//! alone has the nine fields only, so its searches are what they were.

use crate::config::{Config, EXTENDED, EXTENDED_ATTRIBUTES, Fusion};

/// The paper's fields, in coordinate order.
pub(crate) const NAMES: [&str; FIELDS] = [
    "fuse", "tile1", "tile2", "tile3", "wave", "omp", "prevec", "simd", "uj",
];

/// Number of the paper's fields.
pub(crate) const FIELDS: usize = 9;

/// The most fields a space has: the paper's and every typed attribute
/// beyond them.
pub(crate) const MAX_FIELDS: usize = FIELDS + EXTENDED;

/// A configuration's coordinates: the paper's fields, then the space's
/// fields beyond them, then zeros.
pub(crate) type Point = [f64; MAX_FIELDS];

/// The coordinates of a configuration in the paper's fields.
pub(crate) fn coordinates(c: &Config) -> [f64; FIELDS] {
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

/// The fields of one space: the paper's, then the typed attributes
/// beyond them that vary over its configurations.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fields {
    /// Indices into [`EXTENDED_ATTRIBUTES`].
    extended: Vec<usize>,
}

impl Fields {
    pub(crate) fn of(configs: &[Config]) -> Fields {
        let first = configs.first().map(Config::extended_attributes);
        Fields {
            extended: (0..EXTENDED)
                .filter(|&j| {
                    configs
                        .iter()
                        .any(|c| Some(c.extended_attributes()[j]) != first.map(|f| f[j]))
                })
                .collect(),
        }
    }

    /// How many coordinates are in use.
    pub(crate) fn dims(&self) -> usize {
        FIELDS + self.extended.len()
    }

    /// The name of each coordinate in use.
    pub(crate) fn names(&self) -> Vec<&'static str> {
        let mut n = NAMES.to_vec();
        n.extend(self.extended.iter().map(|&j| EXTENDED_ATTRIBUTES[j]));
        n
    }

    /// The coordinates of a configuration (zeros past [`Fields::dims`]).
    pub(crate) fn point(&self, c: &Config) -> Point {
        let mut p = [0.0; MAX_FIELDS];
        p[..FIELDS].copy_from_slice(&coordinates(c));
        if !self.extended.is_empty() {
            let x = c.extended_attributes();
            for (k, &j) in self.extended.iter().enumerate() {
                p[FIELDS + k] = x[j];
            }
        }
        p
    }
}

/// How many fields two configurations differ in.
pub(crate) fn differing(a: &Point, b: &Point) -> usize {
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
        let f = Fields::of(&[c, Config::default()]);
        assert_eq!(f.dims(), FIELDS);
        assert_eq!(differing(&f.point(&c), &[0.0; MAX_FIELDS]), 5);
    }

    #[test]
    fn a_space_beyond_the_papers_has_the_fields_that_vary_in_it() {
        let a: Config = "fuse=smart,tile=64x32x1,omp=1".parse().unwrap();
        let b: Config = "fuse=smart,tile=32x32x1,omp=1,uj=2x2".parse().unwrap();
        let c: Config = "fuse=smart,tile=32x32x1,omp=1,uj=2x2,red=1"
            .parse()
            .unwrap();
        let f = Fields::of(&[a, b, c]);
        assert_eq!(f.dims(), FIELDS + 3);
        assert_eq!(
            &f.names()[FIELDS..],
            ["tile1-log2/32", "uj-inner-log2", "red"]
        );
        assert_eq!(&f.point(&a)[FIELDS..FIELDS + 3], [1.0, 0.0, 0.0]);
        assert_eq!(&f.point(&c)[FIELDS..FIELDS + 3], [0.0, 1.0, 1.0]);
        assert!(f.point(&c)[FIELDS + 3..].iter().all(|&x| x == 0.0));
        // 64 and 32 differ in a field now; in the paper's fields they
        // are both "tiled".
        assert_eq!(coordinates(&a)[1], coordinates(&b)[1]);
        assert_eq!(differing(&f.point(&a), &f.point(&b)), 3);
    }
}
