//! `space`: the distinct programs of a file's space, as one typed report
//! that the command line prints as a table or JSON (with `--verify`, the
//! verification of `verify_space` inside it).

use crate::config::{Config, Privatize, Reductions};
use crate::engine::model::EngineError;
use crate::engine::space::{Enumerated, Variant};
use crate::frontend::SourceFile;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A file's space (JSON: keys in alphabetical order, as the command line
/// writes them through `serde_json::Value`).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Configurations of the paper's space.
    pub configurations: usize,
    /// Distinct programs among them.
    pub distinct: usize,
    #[serde(serialize_with = "super::serial::path")]
    pub file: PathBuf,
    /// The SCoPs the engine left unchanged, and why.
    pub skipped: Vec<String>,
    pub variants: Vec<Row>,
    /// With `--changed`: the distinct programs of the space with the
    /// added fields that the paper's space generates too, left out of
    /// `variants` (and of `distinct`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unchanged: Option<usize>,
    /// With `--verify`: every variant built, run and compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<super::verify_space::Report>,
}

/// One distinct program.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The configurations' bit strings, in enumeration order.
    pub bits: Vec<String>,
    /// The configurations that generate it, the canonical one first.
    pub configs: Vec<String>,
    /// SHA-256 of its code.
    pub hash: String,
    /// Its number, from 0, in order of first appearance.
    pub index: usize,
}

/// Fields beyond the paper's space added to every configuration of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Added {
    /// `priv=1` or `priv=2` (`Off`: as in the paper's space).
    pub privatize: Privatize,
    /// `exp=1`.
    pub expand: bool,
    /// `tt=diamond`.
    pub diamond: bool,
    /// `red=1` or `red=2` (`Off`: as in the paper's space).
    pub reduce: Reductions,
    /// `cyc=1`.
    pub cyclic: bool,
    /// `outer=1`.
    pub outer: bool,
    /// `dist=1`.
    pub distribute: bool,
}

/// The distinct programs of every configuration of the paper's space,
/// with the fields of `added` set, and the SCoPs skipped.
pub fn enumerate(
    src: &SourceFile,
    context: Option<&str>,
    added: Added,
    progress: &(dyn Fn(Enumerated) + Sync),
) -> Result<(Vec<Variant>, Vec<String>), EngineError> {
    let mut configs = Config::all();
    for c in &mut configs {
        if added.privatize.on() {
            c.privatize = added.privatize;
        }
        c.expand |= added.expand;
        c.diamond |= added.diamond;
        c.cyclic |= added.cyclic;
        c.outer |= added.outer;
        c.distribute |= added.distribute;
        if added.reduce.on() {
            c.reduce = added.reduce;
        }
    }
    crate::engine::space::distinct_variants_of(src, context, &configs, progress)
}

/// The variants the added fields change: those of `variants` (a space
/// with fields added) whose code no configuration of the paper's space
/// generates, and how many others there were. A program the paper's space
/// has too was verified with it; the fields' own verification needs only
/// these.
pub fn changed_by_added(
    src: &SourceFile,
    context: Option<&str>,
    variants: Vec<Variant>,
    progress: &(dyn Fn(Enumerated) + Sync),
) -> Result<(Vec<Variant>, usize), EngineError> {
    let (papers, _) = enumerate(src, context, Added::default(), progress)?;
    let seen: std::collections::HashSet<&str> = papers.iter().map(|v| v.hash.as_str()).collect();
    let (changed, unchanged): (Vec<Variant>, Vec<Variant>) = variants
        .into_iter()
        .partition(|v| !seen.contains(v.hash.as_str()));
    Ok((changed, unchanged.len()))
}

/// The report of a file's variants (without a verification).
pub fn report(file: &Path, variants: &[Variant], skipped: &[String]) -> Report {
    Report {
        configurations: Config::all().len(),
        distinct: variants.len(),
        file: file.to_path_buf(),
        skipped: skipped.to_vec(),
        variants: variants
            .iter()
            .enumerate()
            .map(|(index, v)| Row {
                bits: v.configs.iter().map(|c| c.bits()).collect(),
                configs: v.configs.iter().map(|c| c.to_string()).collect(),
                hash: v.hash.clone(),
                index,
            })
            .collect(),
        unchanged: None,
        verification: None,
    }
}
