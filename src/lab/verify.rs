//! A measured program's verdict: every variant is compiled, run once with
//! `--dump` and compared with the original's output before it is timed.
//! A variant that fails in any way is recorded with its status and never
//! selected.

use super::compiler::{Compilation, Compiler};
use super::confine;
use super::dump::{Dump, Tolerance};
use super::runner::{self, Exit, Protocol, Run, Timing};
use super::size::Size;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What happened to a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Ok,
    CompileError,
    Crash,
    Timeout,
    WrongOutput,
}

/// A status name that is none of [`Status::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown status `{0}` (expected ok, compile-error, crash, timeout or wrong-output)")]
pub struct UnknownStatus(pub String);

impl Status {
    pub(crate) const ALL: [Status; 5] = [
        Status::Ok,
        Status::CompileError,
        Status::Crash,
        Status::Timeout,
        Status::WrongOutput,
    ];

    /// The name in the store and in JSON, e.g. `wrong-output`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::CompileError => "compile-error",
            Status::Crash => "crash",
            Status::Timeout => "timeout",
            Status::WrongOutput => "wrong-output",
        }
    }
}

super::named_by_as_str!(Status, UnknownStatus);

/// The outcome of measuring one program.
#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    pub status: Status,
    /// Why it failed (compiler message, signal, first differing value).
    pub detail: String,
    pub compile_seconds: f64,
    /// Present when the status is ok and timing was asked for.
    pub timing: Option<Timing>,
}

impl Measurement {
    /// The executable `exe` and its compile time when the compilation `c`
    /// succeeded, or the measurement of a program that did not compile.
    pub(crate) fn built(c: Compilation, exe: PathBuf) -> Result<(PathBuf, f64), Measurement> {
        if c.ok {
            Ok((exe, c.seconds))
        } else {
            Err(Measurement {
                status: Status::CompileError,
                detail: c.stderr,
                compile_seconds: c.seconds,
                timing: None,
            })
        }
    }
}

/// Where and how programs are built and run.
#[derive(Debug, Clone)]
pub struct Bench {
    pub compiler: Compiler,
    pub size: Size,
    pub include: Vec<PathBuf>,
    pub protocol: Protocol,
    pub workdir: PathBuf,
}

fn failed(run: &Run) -> (Status, String) {
    match run.exit {
        Exit::Timeout => (Status::Timeout, "timed out".into()),
        Exit::Signal(s) => (Status::Crash, format!("killed by signal {s}")),
        _ if run.strays > 0 => (
            Status::Crash,
            format!(
                "it left {} process(es) running after it exited (polytune killed them)",
                run.strays
            ),
        ),
        _ if !run.output_complete => (
            Status::Crash,
            "its output stayed open after it exited: a process it started, out of polytune's reach, holds it".into(),
        ),
        Exit::Code(0) => (
            Status::WrongOutput,
            "no `polytune-time:` line on stderr".into(),
        ),
        Exit::Code(c) => (
            Status::Crash,
            format!("exit code {c}: {}", run.stderr.trim()),
        ),
    }
}

/// How much of a dump is kept at a dataset size: about twice the largest
/// dump of the corpus at that size (gauss-filter's, 600 MB at MEDIUM and
/// 1.35 GB at LARGE), so that a flood of output costs bounded memory.
pub(crate) fn dump_cap(size: Size) -> usize {
    match size {
        Size::Mini | Size::Small => 64 << 20,
        Size::Medium => 1 << 30,
        Size::Large => 3 << 30,
    }
}

impl Bench {
    /// Builds `src` as `name` in the work directory.
    pub fn build(
        &self,
        src: &Path,
        name: &str,
        openmp: bool,
    ) -> Result<(PathBuf, f64), Measurement> {
        let exe = self.workdir.join(name);
        let c = self
            .compiler
            .compile(src, &exe, self.size, &self.include, openmp);
        Measurement::built(c, exe)
    }

    /// Builds and runs the original; its dump is the reference.
    pub fn reference(&self, src: &Path, time: bool) -> (Measurement, Option<Dump>) {
        self.measure(src, "original", None, false, time)
    }

    /// Builds `src`, verifies its dump against `reference` (when given)
    /// and times it (when asked and correct).
    pub fn measure(
        &self,
        src: &Path,
        name: &str,
        reference: Option<&Dump>,
        openmp: bool,
        time: bool,
    ) -> (Measurement, Option<Dump>) {
        self.measure_built(self.build(src, name, openmp), reference, time)
    }

    /// [`Bench::measure`] of a program [`Bench::build`] built.
    pub fn measure_built(
        &self,
        built: Result<(PathBuf, f64), Measurement>,
        reference: Option<&Dump>,
        time: bool,
    ) -> (Measurement, Option<Dump>) {
        let (exe, compile_seconds) = match built {
            Ok(x) => x,
            Err(m) => return (m, None),
        };
        let verdict = |status, detail| Measurement {
            status,
            detail,
            compile_seconds,
            timing: None,
        };
        let limits = confine::Limits {
            stdout_cap: dump_cap(self.size),
            ..self.protocol.limits()
        };
        let run = match runner::run(&exe, &["--dump"], self.protocol.threads, &limits) {
            Ok(r) => r,
            Err(e) => return (verdict(Status::Crash, e.to_string()), None),
        };
        if !run.ok() {
            let (s, d) = failed(&run);
            return (verdict(s, d), None);
        }
        if run.stdout_truncated {
            return (
                verdict(
                    Status::WrongOutput,
                    format!(
                        "its output is longer than the {} polytune keeps of a {} dataset's dump (or than the memory left): it cannot be verified",
                        confine::show_bytes(limits.stdout_cap as u64),
                        self.size
                    ),
                ),
                None,
            );
        }
        let dump = match Dump::parse(&run.stdout) {
            Ok(d) if !d.is_empty() => d,
            Ok(_) => {
                return (
                    verdict(Status::WrongOutput, "the program dumped nothing".into()),
                    None,
                );
            }
            Err(e) => return (verdict(Status::WrongOutput, e.to_string()), None),
        };
        if let Some(r) = reference
            && let Err(m) = r.compare(&dump, Tolerance::default())
        {
            return (verdict(Status::WrongOutput, m.to_string()), Some(dump));
        }
        let mut m = verdict(Status::Ok, String::new());
        if time {
            let mut protocol = self.protocol;
            if let (Some(cut), Some(s)) = (protocol.slow_cutoff, run.kernel_seconds)
                && s > cut
            {
                protocol.warmup = 0;
                protocol.min_runs = protocol.slow_runs.max(1);
                protocol.max_runs = protocol.min_runs;
            }
            let first = if protocol.verification_is_sample {
                run.kernel_seconds
            } else {
                None
            };
            match runner::time_after(&exe, &protocol, first) {
                Ok(t) => m.timing = Some(t),
                Err(run) => {
                    let (s, d) = failed(&run);
                    m.status = s;
                    m.detail = d;
                }
            }
        }
        (m, Some(dump))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_through_their_names() {
        for s in Status::ALL {
            assert_eq!(s.as_str().parse::<Status>(), Ok(s));
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
        }
        assert_eq!(Status::WrongOutput.to_string(), "wrong-output");
        assert!("fine".parse::<Status>().is_err());
    }
}
