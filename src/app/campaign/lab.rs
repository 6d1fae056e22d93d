//! How a campaign measures one kernel with one compiler: through the
//! corpus' protocol or through polytune's instrumentation ([`Lab`]), and
//! the recipe of a program outside the corpus style.

use super::{Campaign, CollectError};
use crate::lab::build::Recipe;
use crate::lab::dump::Dump;
use crate::lab::harness::{Harness, OriginalError, Reference};
use crate::lab::verify::{Bench, Measurement, Status};
use std::path::{Path, PathBuf};

/// A variant built (its program and compile seconds), or the verdict of
/// its failed build.
pub(super) type Built = Result<(PathBuf, f64), Measurement>;

/// The recipe of a kernel outside the corpus style, with the driver of
/// a bare kernel written into `work`.
pub(super) fn recipe_for(
    c: &Campaign,
    path: &Path,
    src: &crate::frontend::SourceFile,
    work: &Path,
    name: &str,
) -> Result<Recipe, CollectError> {
    let compiler = c.compilers.first().expect("at least one compiler").clone();
    let mut r = Recipe::new(compiler, path);
    r.include = c.include.clone();
    r.extra = c.program.extra.clone();
    r.run_args = c.program.run_args.clone();
    r.build = c.program.build.clone();
    r.run = c.program.run.clone();
    if !crate::engine::driver::has_main(&src.text) && r.build.is_none() {
        let d = crate::engine::driver::generate_with(
            src,
            &c.program.params,
            c.program.size_from_footprint,
        )
        .map_err(|e| CollectError::Driver {
            path: path.display().to_string(),
            message: format!("the file has no `main`, and polytune cannot write one: {e}"),
        })?;
        let file = work.join(format!("{name}-driver.c"));
        std::fs::write(&file, &d.text)?;
        r.extra.push(file.display().to_string());
        r.extra
            .extend(d.defines.iter().map(|(n, v)| format!("-D{n}={v}")));
    }
    Ok(r)
}

/// How one kernel is measured with one compiler: through the corpus'
/// protocol, or through polytune's instrumentation.
pub(super) enum Lab {
    Corpus {
        bench: Bench,
        reference: Option<Dump>,
    },
    Instrumented {
        harness: Harness,
        reference: Box<Option<Reference>>,
    },
}

impl Lab {
    /// Measures the original (`instrumented`: its instrumented build) and
    /// keeps its reference; the detail says why it failed.
    pub(super) fn original(
        &mut self,
        path: &Path,
        instrumented: Option<&Path>,
    ) -> (Measurement, String) {
        match self {
            Lab::Corpus { bench, reference } => {
                let (m, r) = bench.reference(path, true);
                *reference = r;
                let detail = m.detail.clone();
                (m, detail)
            }
            Lab::Instrumented { harness, reference } => {
                match harness.reference(instrumented.unwrap_or(path), true) {
                    Ok((m, r)) => {
                        **reference = Some(r);
                        (m, String::new())
                    }
                    Err(e) => {
                        let status = match e {
                            OriginalError::Build { .. } => Status::CompileError,
                            OriginalError::Nondeterministic { .. } => Status::WrongOutput,
                            _ => Status::Crash,
                        };
                        let detail = e.to_string();
                        (
                            Measurement {
                                status,
                                detail: detail.clone(),
                                compile_seconds: 0.0,
                                timing: None,
                            },
                            detail,
                        )
                    }
                }
            }
        }
    }

    /// The parameters' values the original's measured runs recorded
    /// (through the instrumentation only: the corpus' protocol records
    /// none).
    pub(super) fn recorded_params(&self) -> Option<crate::engine::features::ParamValues> {
        match self {
            Lab::Corpus { .. } => None,
            Lab::Instrumented { reference, .. } => reference.as_ref().as_ref().map(|r| {
                r.side
                    .params
                    .iter()
                    .map(|(_, name, value)| (name.clone(), *value))
                    .collect()
            }),
        }
    }

    pub(super) fn set_slow_cutoff(&mut self, cutoff: Option<f64>) {
        match self {
            Lab::Corpus { bench, .. } => bench.protocol.slow_cutoff = cutoff,
            Lab::Instrumented { harness, .. } => harness.protocol.slow_cutoff = cutoff,
        }
    }

    /// Whether its programs may build several at once: a user's
    /// `--build` command may not (its build system may share intermediate
    /// files, make's objects, between builds).
    pub(super) fn parallel_builds(&self) -> bool {
        match self {
            Lab::Corpus { .. } => true,
            Lab::Instrumented { harness, .. } => harness.recipe.build.is_none(),
        }
    }

    /// Writes variant `v` into `dir` (its own directory, so that several
    /// build at once) and builds it there.
    pub(super) fn build(
        &self,
        src: &crate::frontend::SourceFile,
        v: &crate::engine::space::Variant,
        dir: &Path,
        name: &str,
    ) -> Result<Built, CollectError> {
        crate::lab::scratch::subdir(dir)?;
        let exe = dir.join("variant");
        Ok(match self {
            Lab::Corpus { bench, .. } => {
                let file = dir.join(format!("{name}.c"));
                std::fs::write(&file, &v.text)?;
                bench.build(&file, &exe.to_string_lossy(), v.openmp)
            }
            Lab::Instrumented { harness, .. } => {
                let file = dir.join(src.path.file_name().unwrap_or_default());
                let config = v.configs.first().copied().unwrap_or_default();
                std::fs::write(
                    &file,
                    crate::engine::pipeline::instrumented(src, Some(&config), None)?.text,
                )?;
                harness.build(&file, &exe.to_string_lossy(), v.openmp)
            }
        })
    }

    /// Whether the original was measured and its reference kept.
    pub(super) fn has_reference(&self) -> bool {
        match self {
            Lab::Corpus { reference, .. } => reference.is_some(),
            Lab::Instrumented { reference, .. } => reference.is_some(),
        }
    }

    /// Builds the original (`instrumented`: its instrumented source) into
    /// `dir`.
    pub(super) fn build_original(
        &self,
        path: &Path,
        instrumented: Option<&Path>,
        dir: &Path,
    ) -> Result<Built, CollectError> {
        crate::lab::scratch::subdir(dir)?;
        let exe = dir.join("original");
        Ok(match self {
            Lab::Corpus { bench, .. } => bench.build(path, &exe.to_string_lossy(), false),
            Lab::Instrumented { harness, .. } => {
                harness.build(instrumented.unwrap_or(path), &exe.to_string_lossy(), false)
            }
        })
    }

    /// Verifies a built variant against the original's reference without
    /// timing it.
    pub(super) fn verify_built(&self, built: Built) -> Measurement {
        self.check_built(built, false)
    }

    /// One timed run of a built program: its kernel seconds.
    pub(super) fn timed_once(&self, exe: &Path) -> Result<f64, crate::lab::runner::Run> {
        match self {
            Lab::Corpus { bench, .. } => crate::lab::runner::timed_run_with(
                exe,
                bench.protocol.threads,
                &bench.protocol.limits(),
                &[],
            ),
            Lab::Instrumented { harness, .. } => harness.timed(exe),
        }
    }

    /// Verifies a built variant against the original's reference and
    /// times it.
    pub(super) fn measure_built(&self, built: Built) -> Measurement {
        self.check_built(built, true)
    }

    /// Verifies a built variant, and times it when asked and correct.
    fn check_built(&self, built: Built, time: bool) -> Measurement {
        match self {
            Lab::Corpus { bench, reference } => {
                bench.measure_built(built, reference.as_ref(), time).0
            }
            Lab::Instrumented { harness, reference } => {
                let reference = reference
                    .as_ref()
                    .as_ref()
                    .expect("checked after its original");
                harness.measure_built(built, reference, time)
            }
        }
    }
}
