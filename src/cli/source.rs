//! Reading the input C file: its `#pragma scop` regions, or (`--detect`)
//! the regions libclang finds.

use super::Ui;
use super::args::{CompileLine, corpus_include};
use crate::frontend::{self, Options, SourceFile};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// What `--detect` says without the `detect` feature.
pub const DETECT_MISSING: &str = "--detect needs libclang, and this polytune was built without the `detect` feature: rebuild it with `cargo build --release --features detect` (Debian/Ubuntu: apt install libclang-dev)";

/// What `--assume-no-alias` prints on standard error.
pub const ASSUME_NO_ALIAS_WARNING: &str = "polytune: warning: --assume-no-alias: polytune assumes that the arrays and pointers of the detected regions never overlap (pointer and array parameters included) and checks nothing at run time; if any of them do, the optimized program computes a wrong result";

/// How the SCoPs of the input are found (`optimize`, `scop`).
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct SourceArgs {
    /// Treat NAME as a pure function inside SCoPs (repeatable).
    #[arg(long = "pure", value_name = "NAME")]
    pub pure: Vec<String>,
    /// Find the SCoPs without pragmas (libclang; clang arguments after `--`).
    #[arg(long)]
    pub detect: bool,
    /// With --detect: assume that no two arrays or pointers of a region overlap
    /// (unsafe if they do).
    ///
    /// Pointer and array parameters are otherwise taken to possibly alias: a
    /// region is versioned on a run-time check that the ranges it reaches in
    /// them are disjoint (the original runs where they are not), or rejected
    /// when no such check covers them (`double **a`). This drops the checks
    /// and takes those regions; if the arrays do overlap, the result is wrong.
    #[arg(long, requires = "detect")]
    pub assume_no_alias: bool,
    #[command(flatten)]
    pub compile_line: CompileLine,
}

impl SourceArgs {
    /// The file's SCoPs, marked by pragmas or detected; `include` goes to
    /// clang as `-I` when detecting. A region polytune wrote, or one with
    /// more than `max_statements` statements, is left as written, with a
    /// warning.
    pub(crate) fn load(
        &self,
        file: &Path,
        include: &[PathBuf],
        max_statements: Option<usize>,
        ui: &Ui,
    ) -> Result<SourceFile> {
        if self.detect {
            detected_source(file, self, include, ui)
        } else {
            let src = frontend::parse_file(
                file,
                &Options {
                    pure_functions: self.pure.clone(),
                    max_statements,
                },
            )?;
            for note in src.kept_notes() {
                ui.warn(note);
            }
            Ok(src)
        }
    }
}

/// The clang arguments of `--detect`: the user's, the `-I` directories,
/// then the corpus header's directory as a fallback. With
/// `--assume-no-alias`, warns that the result is only right if no arrays
/// overlap.
#[cfg(feature = "detect")]
pub(crate) fn detect_options(
    a: &SourceArgs,
    include: &[PathBuf],
    ui: &Ui,
) -> crate::frontend::detect::DetectOptions {
    let mut args = preprocessor_flags(&a.compile_line.words);
    args.extend(include.iter().map(|d| format!("-I{}", d.display())));
    args.push(format!("-I{}", corpus_include().display()));
    if a.assume_no_alias && ui.verbosity >= super::Verbosity::Normal {
        eprintln!("{ASSUME_NO_ALIAS_WARNING}");
    }
    crate::frontend::detect::DetectOptions {
        clang_args: args,
        pure_functions: a.pure.clone(),
        assume_no_alias: a.assume_no_alias,
    }
}

/// The words of a compile line that tell the preprocessor something
/// (what libclang needs to parse the file): `-I`, `-D`, `-U`, `-std=`,
/// `-include`, `-isystem`, `-iquote`, with their values.
#[cfg(feature = "detect")]
pub(crate) fn preprocessor_flags(line: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut words = line.iter();
    while let Some(w) = words.next() {
        if matches!(
            w.as_str(),
            "-I" | "-D" | "-U" | "-include" | "-isystem" | "-iquote"
        ) {
            out.push(w.clone());
            out.extend(words.next().cloned());
        } else if ["-I", "-D", "-U", "-std="].iter().any(|p| w.starts_with(p)) {
            out.push(w.clone());
        }
    }
    out
}

/// The detected SCoPs of `file`, ready for the engine.
#[cfg(feature = "detect")]
fn detected_source(
    file: &Path,
    a: &SourceArgs,
    include: &[PathBuf],
    ui: &Ui,
) -> Result<SourceFile> {
    let d = crate::frontend::detect::detect_file(file, &detect_options(a, include, ui))?;
    for r in &d.rejected {
        ui.note(format!("note: {}", super::render::rejection(&d.path, r)));
    }
    if !d.inferred_pure.is_empty() {
        let names: Vec<String> = d.inferred_pure.iter().map(|f| format!("`{f}`")).collect();
        let (is, them) = match names.len() {
            1 => ("is", "it"),
            _ => ("are", "them"),
        };
        ui.note(format!(
            "note: {}: {} {is} pure by inspection (a body that returns an expression of its scalar parameters): calls to {them} are taken as pure",
            file.display(),
            names.join(", ")
        ));
    }
    match d.source {
        Some(src) => {
            for (r, scop) in d.regions.iter().zip(&src.scops) {
                ui.note(format!(
                    "detected a SCoP in {} at {}:{}-{}{}",
                    r.function,
                    file.display(),
                    r.first_line,
                    r.last_line,
                    super::render::versioned_on_aliasing(&scop.spelled_alias_checks())
                ));
            }
            Ok(src)
        }
        None => anyhow::bail!(
            "{}: no static control part detected (see the notes above for the loop nests that were rejected)",
            file.display()
        ),
    }
}

#[cfg(not(feature = "detect"))]
fn detected_source(
    _file: &Path,
    _a: &SourceArgs,
    _include: &[PathBuf],
    _ui: &Ui,
) -> Result<SourceFile> {
    let _ = corpus_include;
    anyhow::bail!(DETECT_MISSING)
}

#[cfg(all(test, not(feature = "detect")))]
mod tests {
    #[test]
    fn detect_without_the_feature_says_how_to_get_it() {
        let a = super::SourceArgs {
            pure: vec![],
            detect: true,
            assume_no_alias: false,
            compile_line: Default::default(),
        };
        let ui = super::Ui {
            verbosity: super::super::Verbosity::Normal,
        };
        let e = a
            .load(std::path::Path::new("x.c"), &[], None, &ui)
            .unwrap_err();
        assert!(e.to_string().contains("--features detect"), "{e}");
    }
}
