//! The back-end compilers: part of the target machine (paper section 2.1),
//! so every measurement names the compiler, its version and its flags.

use super::confine::{self, Ending, Limits, TOOL_TIMEOUT};
use serde::Serialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Which compiler family (pragmas and OpenMP flags differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Family {
    Gcc,
    Clang,
}

/// A compiler found on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Compiler {
    /// `gcc` or `clang`, as users name it.
    pub name: String,
    pub family: Family,
    pub program: PathBuf,
    /// First line of `--version`.
    pub version: String,
    /// Optimization flags (default `-O3 -march=native`).
    pub flags: Vec<String>,
}

/// A compiler that is missing or does not work.
#[derive(Debug, thiserror::Error)]
#[error(
    "compiler `{name}` is not usable: {reason}\n  help: run scripts/setup.sh, or pick another with --compiler"
)]
pub struct CompilerError {
    pub name: String,
    pub reason: String,
}

/// What one compilation did.
#[derive(Debug, Clone)]
pub struct Compilation {
    pub ok: bool,
    pub seconds: f64,
    pub stderr: String,
}

/// The default optimization flags.
pub fn default_flags() -> Vec<String> {
    vec!["-O3".into(), "-march=native".into()]
}

impl Compiler {
    /// Finds `gcc` or `clang` (for clang, the newest versioned binary
    /// first, since Debian installs `clang-19` without `clang`).
    pub fn detect(name: &str, flags: Option<Vec<String>>) -> Result<Compiler, CompilerError> {
        let (family, candidates): (Family, Vec<&str>) = match name {
            "gcc" => (Family::Gcc, vec!["gcc"]),
            "clang" => (
                Family::Clang,
                vec!["clang-19", "clang-18", "clang-17", "clang"],
            ),
            other => {
                return Err(CompilerError {
                    name: other.to_string(),
                    reason: "unknown compiler (expected gcc or clang)".into(),
                });
            }
        };
        let limits = Limits {
            timeout: Duration::from_secs(60),
            ..Limits::tool()
        };
        for c in candidates {
            if let Ok(out) = confine::run(Path::new(c), ["--version"], &[], &limits)
                && out.ending == Ending::Code(0)
            {
                let version = out
                    .stdout
                    .into_text()
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string();
                return Ok(Compiler {
                    name: name.to_string(),
                    family,
                    program: PathBuf::from(c),
                    version,
                    flags: flags.unwrap_or_else(default_flags),
                });
            }
        }
        Err(CompilerError {
            name: name.to_string(),
            reason: "not found on PATH".into(),
        })
    }

    /// Compiles a corpus-style program at a dataset size; `openmp` adds
    /// `-fopenmp`.
    pub fn compile(
        &self,
        src: &Path,
        exe: &Path,
        size: &str,
        include: &[PathBuf],
        openmp: bool,
    ) -> Compilation {
        self.compile_with(src, exe, size, include, openmp, &[])
    }

    /// [`Compiler::compile`] with extra arguments after the source (`-D`s,
    /// libraries).
    pub fn compile_with(
        &self,
        src: &Path,
        exe: &Path,
        size: &str,
        include: &[PathBuf],
        openmp: bool,
        extra: &[&str],
    ) -> Compilation {
        let mut args: Vec<OsString> = self.flags.iter().map(OsString::from).collect();
        args.push(format!("-D{}_DATASET", size.to_uppercase()).into());
        if openmp {
            args.push("-fopenmp".into());
        }
        for i in include {
            args.push("-I".into());
            args.push(i.into());
        }
        args.extend([src.into(), "-o".into(), exe.into()]);
        args.extend(extra.iter().map(OsString::from));
        args.push("-lm".into());
        self.invoke(&args, exe)
    }

    /// Runs the compiler with `args` (its flags are not added), confined;
    /// `exe` is the output, beside which the compiler's temporary files go.
    pub fn invoke(&self, args: &[OsString], exe: &Path) -> Compilation {
        // The compiler's own temporary files go beside the executable (a
        // scratch directory): a compiler killed at the deadline or with
        // polytune leaves none in the system's temporary directory.
        let tmp = exe
            .parent()
            .filter(|d| d.is_dir())
            .and_then(|d| d.to_str())
            .map(|d| ("TMPDIR", d));
        let start = Instant::now();
        let out = confine::run(&self.program, args, tmp.as_slice(), &Limits::tool());
        let seconds = start.elapsed().as_secs_f64();
        match out {
            Ok(o) => {
                let mut stderr = o.stderr.into_text();
                let ok = match o.ending {
                    Ending::Code(0) => true,
                    Ending::Timeout => {
                        stderr.push_str(&format!(
                            "polytune: {} did not finish within {} s\n",
                            self.program.display(),
                            TOOL_TIMEOUT.as_secs()
                        ));
                        false
                    }
                    Ending::Signal(s) => {
                        stderr.push_str(&format!(
                            "polytune: {} was killed by signal {s}\n",
                            self.program.display()
                        ));
                        false
                    }
                    Ending::Code(_) => false,
                };
                Compilation {
                    ok,
                    seconds: o.seconds,
                    stderr,
                }
            }
            Err(e) => Compilation {
                ok: false,
                seconds,
                stderr: format!("cannot run {}: {e}", self.program.display()),
            },
        }
    }
}
