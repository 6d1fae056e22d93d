//! The back-end compilers: part of the target machine (paper section 2.1),
//! so every measurement names the compiler, its version and its flags.

use super::confine::{self, Ending, Limits, TOOL_TIMEOUT};
use super::size::Size;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

/// Which compiler (pragmas and OpenMP flags differ), named as users name
/// it: `gcc` or `clang`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Gcc,
    Clang,
}

impl Family {
    pub const ALL: [Family; 2] = [Family::Gcc, Family::Clang];

    /// `gcc` or `clang`.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Gcc => "gcc",
            Family::Clang => "clang",
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Family {
    type Err = CompilerError;

    fn from_str(s: &str) -> Result<Family, CompilerError> {
        Family::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| CompilerError {
                name: s.to_string(),
                reason: "unknown compiler (expected gcc or clang)".into(),
            })
    }
}

/// A compiler found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiler {
    pub family: Family,
    pub program: PathBuf,
    /// First line of `--version`.
    pub version: String,
    /// Optimization flags (default `-O3 -march=native`).
    pub flags: Vec<String>,
}

impl Serialize for Compiler {
    /// The JSON of `measure`: `name` (`gcc`), `family` (`Gcc`),
    /// `program`, `version` and `flags`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Shown<'a> {
            name: &'a str,
            family: &'a str,
            program: &'a Path,
            version: &'a str,
            flags: &'a [String],
        }
        Shown {
            name: self.name(),
            family: match self.family {
                Family::Gcc => "Gcc",
                Family::Clang => "Clang",
            },
            program: &self.program,
            version: &self.version,
            flags: &self.flags,
        }
        .serialize(s)
    }
}

/// A compiler that is missing or does not work.
#[derive(Debug, thiserror::Error)]
#[error(
    "compiler `{name}` is not usable: {reason}\n  help: run scripts/setup.sh, or pick another compiler"
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
pub(crate) fn default_flags() -> Vec<String> {
    vec!["-O3".into(), "-march=native".into()]
}

impl Compiler {
    /// `gcc` or `clang`, as users name it.
    pub fn name(&self) -> &'static str {
        self.family.as_str()
    }

    /// Finds `gcc` or `clang` (for clang, the newest versioned binary
    /// first, since Debian installs `clang-19` without `clang`).
    pub fn detect(family: Family, flags: Option<Vec<String>>) -> Result<Compiler, CompilerError> {
        let candidates: &[&str] = match family {
            Family::Gcc => &["gcc"],
            Family::Clang => &["clang-19", "clang-18", "clang-17", "clang"],
        };
        let limits = Limits {
            timeout: Duration::from_secs(60),
            ..Limits::tool()
        };
        for &c in candidates {
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
                    family,
                    program: PathBuf::from(c),
                    version,
                    flags: flags.unwrap_or_else(default_flags),
                });
            }
        }
        Err(CompilerError {
            name: family.to_string(),
            reason: "not found on PATH".into(),
        })
    }

    /// Compiles a corpus-style program at a dataset size; `openmp` adds
    /// `-fopenmp`.
    pub fn compile(
        &self,
        src: &Path,
        exe: &Path,
        size: Size,
        include: &[PathBuf],
        openmp: bool,
    ) -> Compilation {
        self.compile_with(src, exe, size, include, openmp, &[])
    }

    /// [`Compiler::compile`] with extra arguments after the source (`-D`s,
    /// libraries).
    pub(crate) fn compile_with(
        &self,
        src: &Path,
        exe: &Path,
        size: Size,
        include: &[PathBuf],
        openmp: bool,
        extra: &[&str],
    ) -> Compilation {
        let mut args: Vec<OsString> = self.flags.iter().map(OsString::from).collect();
        args.push(size.define().into());
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
    pub(crate) fn invoke(&self, args: &[OsString], exe: &Path) -> Compilation {
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
                    Ending::Code(_) | Ending::Stopped => false,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compilers_are_named_as_users_name_them() {
        for f in Family::ALL {
            assert_eq!(f.as_str().parse::<Family>().unwrap(), f);
            assert_eq!(serde_json::to_string(&f).unwrap(), format!("\"{f}\""));
        }
        let e = "icc".parse::<Family>().unwrap_err().to_string();
        assert!(
            e.contains("`icc`") && e.contains("expected gcc or clang"),
            "{e}"
        );
    }
}
