//! `characterize`: a program's (simulated) hardware counters inside its
//! SCoP regions, as one typed report that the command line prints as text
//! or JSON.

use super::error::Error;
use crate::frontend::SourceFile;
use crate::lab::build::Recipe;
use crate::lab::characterize::{
    Backend, Bound, CharacterizeError, Counted, characterize_instrumented,
    characterize_instrumented_by_pmu, pmu_available,
};
use crate::lab::compiler::Compiler;
use crate::lab::confine::Limits;
use crate::lab::size::Size;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What happened on the way.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `--backend auto` found no PMU here and falls back to cachegrind;
    /// the first line of PAPI's reason.
    NoPmu(String),
    /// Instructions counted in the regions so far, of the bound's.
    Counted { instructions: u64, bound: u64 },
}

/// A program's counters (JSON: keys in alphabetical order, as the
/// command line writes them through `serde_json::Value`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// What counted them.
    pub backend: Backend,
    /// What part of the run was counted.
    pub counted: Counted,
    /// Every counter normalized by the instruction count, in the lab's
    /// order (JSON: an object).
    #[serde(serialize_with = "super::serial::map")]
    pub features: Vec<(String, f64)>,
    /// The characterized program.
    #[serde(serialize_with = "super::serial::path")]
    pub file: PathBuf,
    /// The dataset size of a corpus-style program.
    pub size: Size,
}

/// The back end that counts: `wanted`, or with `None` (auto) PAPI where
/// the PMU can be read, else cachegrind, saying why.
pub fn backend(
    wanted: Option<Backend>,
    compiler: &Compiler,
    dir: &Path,
    limits: &Limits,
    on: &mut dyn FnMut(Event),
) -> Backend {
    if let Some(b) = wanted {
        return b;
    }
    match pmu_available(compiler, dir, limits) {
        Ok(()) => Backend::Papi,
        Err(e) => {
            let why = match e {
                CharacterizeError::Papi(why) => why,
                e => e.to_string(),
            };
            on(Event::NoPmu(
                why.lines().next().unwrap_or_default().to_string(),
            ));
            Backend::Cachegrind
        }
    }
}

/// The program parsed, refused when it has no SCoP region to count in.
pub fn source(file: &Path) -> Result<SourceFile, Error> {
    super::with_regions(file, "characterize", "counts inside the SCoP regions")
}

/// How to count.
pub struct Setup<'a> {
    pub backend: Backend,
    /// Builds the program (its compile line, a generated driver).
    pub recipe: &'a Recipe,
    /// The scratch directory.
    pub dir: &'a Path,
    pub limits: &'a Limits,
    /// cachegrind: the instructions counted before the run is stopped.
    pub bound: u64,
    pub size: Size,
}

/// The program instrumented and counted inside its regions.
pub fn characterize(
    src: &SourceFile,
    s: &Setup,
    on: &mut dyn FnMut(Event),
) -> Result<Report, Error> {
    let copy = s.dir.join(src.path.file_name().unwrap_or_default());
    std::fs::write(
        &copy,
        crate::engine::pipeline::instrumented(src, None, None)?.text,
    )?;
    let regions = src.scops.len();
    let f = match s.backend {
        Backend::Papi => {
            characterize_instrumented_by_pmu(&copy, s.recipe, regions, s.dir, s.limits)?
        }
        Backend::Cachegrind => {
            let bound = Bound {
                instructions: s.bound,
                ..Default::default()
            };
            characterize_instrumented(
                &copy,
                s.recipe,
                regions,
                s.dir,
                s.limits,
                &bound,
                &mut |n| {
                    on(Event::Counted {
                        instructions: n,
                        bound: bound.instructions,
                    })
                },
            )?
        }
    };
    Ok(Report {
        backend: f.backend,
        counted: f.counted,
        features: f.values,
        file: src.path.clone(),
        size: s.size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report's JSON: the keys `characterize --json` has always
    /// printed, in order, and the counters as an object.
    #[test]
    fn json_keys_and_counters_as_an_object() {
        let r = Report {
            backend: Backend::Cachegrind,
            counted: Counted::Whole { instructions: 100 },
            features: vec![("Ir".into(), 1.0), ("D1mr".into(), 0.25)],
            file: PathBuf::from("k.c"),
            size: Size::Mini,
        };
        let v = serde_json::to_value(&r).expect("serializable");
        let keys: Vec<&str> = v
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["backend", "counted", "features", "file", "size"]);
        assert_eq!(v["backend"], "cachegrind");
        assert_eq!(v["file"], "k.c");
        assert_eq!(v["features"]["D1mr"], 0.25);
        assert_eq!(v["features"]["Ir"], 1.0);
        assert_eq!(v["counted"]["instructions"], 100);
    }
}
