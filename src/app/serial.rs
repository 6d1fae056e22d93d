//! How the reports' typed fields are written in JSON where their own form
//! is not the one the commands have always printed.

use serde::Serializer;
use std::fmt::Display;
use std::path::Path;

/// A path as it is displayed (`Path::display`).
pub(crate) fn path<S: Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&p.display())
}

/// A value by its readable form (a configuration: `fuse=smart,...`).
pub(crate) fn display<T: Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// Named values, in their order, as a JSON object.
pub(crate) fn map<S: Serializer>(values: &[(String, f64)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(values.iter().map(|(k, v)| (k, v)))
}
