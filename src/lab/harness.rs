//! Measuring any program through polytune's own instrumentation (issue
//! 17): the files given here are instrumented builds (`engine::instrument`
//! wraps each SCoP region), built by the user's [`Recipe`], run with the
//! user's command line. A run's verdict comes from the side channel
//! (`lab::side`: every execution of every region, what it wrote), its exit
//! status and its standard output; its time is the regions' time.
//!
//! The original is run twice with recording on: what differs between two
//! runs of the original (a time printed on stdout) cannot be held against
//! a variant and is masked; a record that differs is a nondeterministic
//! program, which cannot be verified at all.

use super::build::Recipe;
use super::confine::Limits;
use super::dump::{StdoutPolicy, Tolerance, floats_match};
use super::runner::{self, Exit, Protocol, Run, Timed, Timing};
use super::side::{Side, SideError};
use super::verify::{Measurement, Status};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Environment of the instrumented runs (names shared with the engine's
/// runtime, `engine::instrument`).
pub(crate) const SIDE_VARIABLE: &str = "POLYTUNE_SIDE";
pub(crate) const DUMP_VARIABLE: &str = "POLYTUNE_DUMP";
/// Slows each region down after it ran (see [`StdoutPolicy::Stable`]).
pub(crate) const PERTURB_VARIABLE: &str = "POLYTUNE_PERTURB";

/// Where and how instrumented programs are built, run and compared.
#[derive(Debug, Clone)]
pub struct Harness {
    pub recipe: Recipe,
    pub protocol: Protocol,
    pub tolerance: Tolerance,
    pub workdir: PathBuf,
}

/// What the original did: the reference every variant is held to.
#[derive(Debug, Clone)]
pub struct Reference {
    pub side: Side,
    pub exit: Exit,
    /// Standard output, line by line; `None` marks a line that differed
    /// between two runs of the original.
    pub stdout: Vec<Option<String>>,
    /// Lines of standard output that differed between two runs.
    pub masked: usize,
    pub exe: PathBuf,
}

/// Why the original program cannot be measured.
#[derive(Debug, thiserror::Error)]
pub enum OriginalError {
    #[error(
        "the program does not build:\n  {command}\n{stderr}\n  help: check the compile line after `--` (include paths, extra sources such as utilities/polybench.c, libraries such as -lm)"
    )]
    Build { command: String, stderr: String },
    #[error(
        "the program failed when run as\n  {command}\n  {why}\n  help: give its arguments, or the command that runs it"
    )]
    Run { command: String, why: String },
    #[error("run as\n  {command}\n  {0}", SideError::Concurrent)]
    Concurrent { command: String },
    #[error(
        "the program ran as\n  {command}\n  but never reached {what}\n  help: run it with arguments that reach the kernel"
    )]
    Unreached { command: String, what: String },
    #[error(
        "the program gives different results from one run to the next ({detail}): polytune cannot verify a variant against it\n  help: make its input deterministic (fixed seeds, no time-dependent data)"
    )]
    Nondeterministic { detail: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl Harness {
    pub(crate) fn limits(&self) -> Limits {
        self.protocol.limits()
    }

    /// Builds `src` as `name`.
    pub fn build(
        &self,
        src: &Path,
        name: &str,
        openmp: bool,
    ) -> Result<(PathBuf, f64), Measurement> {
        let exe = self.workdir.join(name);
        let c = self.recipe.build(src, &exe, openmp, &[]);
        Measurement::built(c, exe)
    }

    /// Builds every `(source, name, openmp)` of `jobs` as [`Harness::build`]
    /// does, in parallel (rayon), the results in the order of `jobs`.
    /// Call it before any timing starts: a compiler running beside a timed
    /// run takes a core from it (two on the development machines). A
    /// user's `--build` command builds one at a time: its build system may
    /// share intermediate files (make's objects) between builds.
    pub fn build_all(
        &self,
        jobs: &[(PathBuf, String, bool)],
    ) -> Vec<Result<(PathBuf, f64), Measurement>> {
        let one = |(src, name, openmp): &(PathBuf, String, bool)| self.build(src, name, *openmp);
        if self.recipe.build.is_some() {
            jobs.iter().map(one).collect()
        } else {
            jobs.par_iter().map(one).collect()
        }
    }

    /// One run of `exe`, its record read from the side file.
    fn run(&self, exe: &Path, record: bool) -> std::io::Result<(Run, Result<Side, SideError>)> {
        self.run_with(exe, record, &[], &self.limits())
    }

    fn run_with(
        &self,
        exe: &Path,
        record: bool,
        more_env: &[(&str, &str)],
        limits: &Limits,
    ) -> std::io::Result<(Run, Result<Side, SideError>)> {
        let side_file = exe.with_extension("side");
        let _ = std::fs::remove_file(&side_file);
        let side_path = side_file.to_string_lossy().into_owned();
        let mut env = vec![(SIDE_VARIABLE, side_path.as_str())];
        if record {
            env.push((DUMP_VARIABLE, "1"));
        }
        env.extend(more_env.iter().copied());
        let (program, args) = self.recipe.command(exe);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = runner::run_with(&program, &args, self.protocol.threads, limits, &env)?;
        let side = match std::fs::read_to_string(&side_file) {
            Ok(text) => Side::parse(&text),
            Err(_) => Err(SideError::Missing),
        };
        let _ = std::fs::remove_file(&side_file);
        Ok((run, side))
    }

    /// The command line of a run, for messages.
    fn shown(&self, exe: &Path) -> String {
        let (p, a) = self.recipe.command(exe);
        let mut w = vec![p.to_string_lossy().into_owned()];
        w.extend(a);
        shell_words::join(w)
    }

    /// One timed run: the regions' seconds.
    pub fn timed(&self, exe: &Path) -> Result<f64, Run> {
        self.timed_with(exe, &[], &self.limits())
    }

    /// [`Harness::timed`] with more environment variables and other limits.
    pub fn timed_with(
        &self,
        exe: &Path,
        env: &[(&str, &str)],
        limits: &Limits,
    ) -> Result<f64, Run> {
        self.timed_whole(exe, env, limits).map(|t| t.regions)
    }

    /// One timed run: the regions' seconds and the whole program's.
    pub fn timed_whole(
        &self,
        exe: &Path,
        env: &[(&str, &str)],
        limits: &Limits,
    ) -> Result<Timed, Run> {
        let (run, side) = self
            .run_with(exe, false, env, limits)
            .map_err(Run::not_started)?;
        if !matches!(run.exit, Exit::Code(_)) || run.strays > 0 || !run.output_complete {
            return Err(run);
        }
        match side {
            Ok(s) => Ok(Timed {
                regions: s.seconds(),
                program: run.wall_seconds,
            }),
            Err(e) => {
                let mut r = run;
                r.stderr = format!("{e}\n{}", r.stderr);
                r.exit = Exit::Code(-1);
                Err(r)
            }
        }
    }

    /// Builds and runs the original (twice, recording) and times it when
    /// asked.
    pub fn reference(
        &self,
        src: &Path,
        time: bool,
    ) -> Result<(Measurement, Reference), OriginalError> {
        let (exe, c) = self.build_original(src, "original")?;
        let command = self.shown(&exe);
        let (first, side1) = self.recording_run(&exe, &command, &[])?;
        // Under the stable policy the second run is slowed down: a line
        // that follows the regions' speed differs, and is masked.
        let perturb: &[(&str, &str)] = match self.tolerance.stdout {
            StdoutPolicy::Stable => &[(PERTURB_VARIABLE, "1")],
            StdoutPolicy::Strict | StdoutPolicy::Ignore => &[],
        };
        let (second, side2) = self.recording_run(&exe, &command, perturb)?;
        deterministic(&first, &side1, &second, &side2)?;
        let (stdout, masked) = match self.tolerance.stdout {
            StdoutPolicy::Ignore => (Vec::new(), first.stdout.lines().count()),
            StdoutPolicy::Strict | StdoutPolicy::Stable => stable_stdout(&first, &second),
        };
        let mut m = Measurement {
            status: Status::Ok,
            detail: String::new(),
            compile_seconds: c.seconds,
            timing: None,
        };
        if time {
            m.timing = Some(self.time_original(&exe, command)?);
        }
        Ok((
            m,
            Reference {
                side: side1,
                exit: first.exit,
                stdout,
                masked,
                exe,
            },
        ))
    }

    /// The SCoP regions that the original (built from `src`, its
    /// instrumented source) never executes in one run: `Ok(vec![])` when
    /// it reaches them all. One build and one run, not recording; every
    /// other failure of the original is the error it is in
    /// [`Harness::reference`].
    pub fn unreached(&self, src: &Path) -> Result<Vec<usize>, OriginalError> {
        Ok(self.plain_run(src)?.unreached())
    }

    /// The original built from `src` as `name`, or the build's failure.
    fn build_original(
        &self,
        src: &Path,
        name: &str,
    ) -> Result<(PathBuf, super::compiler::Compilation), OriginalError> {
        let exe = self.workdir.join(name);
        let c = self.recipe.build(src, &exe, false, &[]);
        if !c.ok {
            let (command, _) = self.recipe.describe(&src.display().to_string(), false);
            return Err(OriginalError::Build {
                command,
                stderr: c.stderr,
            });
        }
        Ok((exe, c))
    }

    /// The record of one plain run (not recording what the regions write)
    /// of the original built from `src`, its instrumented source: which
    /// regions ran, how often, for how long, and their parameters' values
    /// at their first execution ([`Side::params`]). Every failure of the
    /// original is the error it is in [`Harness::reference`].
    pub fn plain_run(&self, src: &Path) -> Result<Side, OriginalError> {
        let (exe, _) = self.build_original(src, "reach")?;
        let command = self.shown(&exe);
        let (_, side) = self.checked_run(&exe, &command, false, &[])?;
        let _ = std::fs::remove_file(&exe);
        Ok(side)
    }

    /// One recording run of the original, which must exit normally, leave
    /// no strays and reach every SCoP region.
    fn recording_run(
        &self,
        exe: &Path,
        command: &str,
        env: &[(&str, &str)],
    ) -> Result<(Run, Side), OriginalError> {
        let (run, side) = self.checked_run(exe, command, true, env)?;
        let unreached = side.unreached();
        if !unreached.is_empty() {
            return Err(OriginalError::Unreached {
                command: command.to_string(),
                what: format!(
                    "SCoP region(s) {} (executed zero times)",
                    unreached
                        .iter()
                        .map(|k| k.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        Ok((run, side))
    }

    /// One run of the original (recording what the regions write when
    /// `record`), which must exit normally, leave no strays and reach a
    /// SCoP region.
    fn checked_run(
        &self,
        exe: &Path,
        command: &str,
        record: bool,
        env: &[(&str, &str)],
    ) -> Result<(Run, Side), OriginalError> {
        let (run, side) = self.run_with(exe, record, env, &self.limits())?;
        if !matches!(run.exit, Exit::Code(_)) || run.strays > 0 || !run.output_complete {
            return Err(OriginalError::Run {
                command: command.to_string(),
                why: describe_failure(&run),
            });
        }
        let side = match side {
            Ok(s) => s,
            Err(SideError::Missing) if run.exit != Exit::Code(0) => {
                return Err(OriginalError::Run {
                    command: command.to_string(),
                    why: describe_failure(&run),
                });
            }
            Err(SideError::Concurrent) => {
                return Err(OriginalError::Concurrent {
                    command: command.to_string(),
                });
            }
            Err(SideError::Missing) => {
                return Err(OriginalError::Unreached {
                    command: command.to_string(),
                    what: "a SCoP region (it exited before the first one)".into(),
                });
            }
            Err(e) => {
                return Err(OriginalError::Run {
                    command: command.to_string(),
                    why: format!("{e} (exit {:?}): {}", run.exit, run.stderr.trim()),
                });
            }
        };
        Ok((run, side))
    }

    /// The original timed (the recording runs warmed the machine up).
    fn time_original(&self, exe: &Path, command: String) -> Result<Timing, OriginalError> {
        let protocol = Protocol {
            warmup: 0,
            ..self.protocol
        };
        self.time_with(exe, &protocol)
            .map_err(|run| OriginalError::Run {
                command,
                why: describe_failure(&run),
            })
    }

    fn time_with(&self, exe: &Path, protocol: &Protocol) -> Result<Timing, Run> {
        runner::time_by(protocol, None, &mut || self.timed(exe))
    }

    /// Builds `src` as `name`, verifies it against `reference` and times
    /// it (when asked and correct).
    pub fn measure(
        &self,
        src: &Path,
        name: &str,
        reference: &Reference,
        openmp: bool,
        time: bool,
    ) -> Measurement {
        self.measure_built(self.build(src, name, openmp), reference, time)
    }

    /// [`Harness::measure`] of a program [`Harness::build`] or
    /// [`Harness::build_all`] built.
    pub fn measure_built(
        &self,
        built: Result<(PathBuf, f64), Measurement>,
        reference: &Reference,
        time: bool,
    ) -> Measurement {
        let (exe, compile_seconds) = match built {
            Ok(x) => x,
            Err(m) => return m,
        };
        let verdict = |status, detail: String| Measurement {
            status,
            detail,
            compile_seconds,
            timing: None,
        };
        let (run, side) = match self.run(&exe, true) {
            Ok(x) => x,
            Err(e) => return verdict(Status::Crash, e.to_string()),
        };
        match run.exit {
            Exit::Timeout => return verdict(Status::Timeout, "timed out".into()),
            Exit::Signal(s) => return verdict(Status::Crash, format!("killed by signal {s}")),
            _ if run.strays > 0 || !run.output_complete => {
                return verdict(Status::Crash, describe_failure(&run));
            }
            e if e != reference.exit => {
                return verdict(
                    Status::Crash,
                    format!(
                        "exit {e:?}, the original's was {:?}: {}",
                        reference.exit,
                        run.stderr.trim()
                    ),
                );
            }
            _ => {}
        }
        let side = match side {
            Ok(s) => s,
            Err(e) => return verdict(Status::WrongOutput, e.to_string()),
        };
        if let Err(m) = reference.side.compare(&side, self.tolerance) {
            return verdict(Status::WrongOutput, m.to_string());
        }
        if let Err(why) = stdout_matches(&reference.stdout, &run.stdout, self.tolerance) {
            return verdict(Status::WrongOutput, why);
        }
        let mut m = verdict(Status::Ok, String::new());
        if time {
            // A variant whose recording run already took longer than the
            // cutoff is far slower than its baseline: a few runs do.
            let mut protocol = self.protocol;
            if let Some(cut) = protocol.slow_cutoff
                && side.seconds() > cut
            {
                protocol.warmup = 0;
                protocol.min_runs = protocol.slow_runs.max(1);
                protocol.max_runs = protocol.min_runs;
            }
            match self.time_with(&exe, &protocol) {
                Ok(t) => m.timing = Some(t),
                Err(run) => {
                    m.status = Status::Crash;
                    m.detail = describe_failure(&run);
                }
            }
        }
        m
    }
}

/// Standard output against the original's: line by line, numbers within
/// the tolerance, lines that varied between runs of the original skipped.
fn stdout_matches(expected: &[Option<String>], actual: &str, tol: Tolerance) -> Result<(), String> {
    if expected.is_empty() {
        return Ok(());
    }
    let lines: Vec<&str> = actual.lines().collect();
    if lines.len() != expected.len() {
        return Err(format!(
            "standard output has {} lines, the original's {}",
            lines.len(),
            expected.len()
        ));
    }
    for (k, (e, a)) in expected.iter().zip(&lines).enumerate() {
        let Some(e) = e else { continue };
        let ew: Vec<&str> = e.split_whitespace().collect();
        let aw: Vec<&str> = a.split_whitespace().collect();
        let same = ew.len() == aw.len()
            && ew.iter().zip(&aw).all(|(x, y)| {
                x == y
                    || matches!((x.parse::<f64>(), y.parse::<f64>()), (Ok(p), Ok(q)) if floats_match(p, q, tol))
            });
        if !same {
            return Err(format!(
                "standard output line {}: expected `{e}`, got `{a}`",
                k + 1
            ));
        }
    }
    Ok(())
}

fn describe_failure(run: &Run) -> String {
    let tail = run.stderr.trim();
    match run.exit {
        Exit::Timeout => "timed out (the time limit)".into(),
        Exit::Signal(s) => format!("killed by signal {s}: {tail}"),
        _ if run.strays > 0 => format!(
            "it left {} process(es) running after it exited (polytune killed them)",
            run.strays
        ),
        _ if !run.output_complete => "its output stayed open after it exited".into(),
        Exit::Code(c) => format!("exit code {c}: {tail}"),
    }
}

/// An error when the original's two recording runs differ: in what their
/// regions wrote, or in their exit.
fn deterministic(
    first: &Run,
    side1: &Side,
    second: &Run,
    side2: &Side,
) -> Result<(), OriginalError> {
    if let Err(m) = side1.compare(
        side2,
        Tolerance {
            rtol: 0.0,
            atol: 0.0,
            ..Tolerance::default()
        },
    ) {
        return Err(OriginalError::Nondeterministic {
            detail: m.to_string(),
        });
    }
    if first.exit != second.exit {
        return Err(OriginalError::Nondeterministic {
            detail: format!("exit {:?}, then {:?}", first.exit, second.exit),
        });
    }
    Ok(())
}

/// The original's standard output, line by line, `None` where two runs
/// differ (nothing when their line counts do), and how many lines are
/// masked.
fn stable_stdout(first: &Run, second: &Run) -> (Vec<Option<String>>, usize) {
    let a: Vec<&str> = first.stdout.lines().collect();
    let b: Vec<&str> = second.stdout.lines().collect();
    let stdout: Vec<Option<String>> = if a.len() == b.len() {
        a.iter()
            .zip(&b)
            .map(|(x, y)| (x == y).then(|| x.to_string()))
            .collect()
    } else {
        // Lines come and go from run to run: stdout says nothing.
        Vec::new()
    };
    let masked = stdout.iter().filter(|l| l.is_none()).count()
        + if a.len() == b.len() { 0 } else { a.len() };
    (stdout, masked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_built_at_once_come_back_in_order_with_their_failures() {
        let Ok(gcc) = super::super::compiler::Compiler::detect(
            super::super::compiler::Family::Gcc,
            Some(vec!["-O0".into()]),
        ) else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let mut jobs = Vec::new();
        for (k, text) in [
            "int main(void) { return 0; }",
            "int main(void) { return }",
            "int main(void) { return 1; }",
        ]
        .iter()
        .enumerate()
        {
            let src = dir.path().join(format!("p{k}.c"));
            std::fs::write(&src, text).unwrap();
            jobs.push((src, format!("p{k}"), false));
        }
        let mut h = Harness {
            recipe: Recipe::new(gcc, &jobs[0].0),
            protocol: Protocol::default(),
            tolerance: Tolerance::default(),
            workdir: dir.path().to_path_buf(),
        };
        let check = |built: Vec<Result<(PathBuf, f64), Measurement>>| {
            assert_eq!(built.len(), 3);
            assert_eq!(built[0].as_ref().unwrap().0, dir.path().join("p0"));
            assert_eq!(built[1].as_ref().unwrap_err().status, Status::CompileError);
            assert_eq!(built[2].as_ref().unwrap().0, dir.path().join("p2"));
            assert!(dir.path().join("p2").is_file());
        };
        check(h.build_all(&jobs));
        // A user's build command, one build at a time.
        h.recipe.build = Some("{cc} {src} -o {exe}".into());
        check(h.build_all(&jobs));
    }

    #[test]
    fn stdout_numbers_are_compared_within_the_tolerance() {
        let t = Tolerance::default();
        let e = vec![Some("checksum 1.000000000".to_string()), None];
        assert!(stdout_matches(&e, "checksum 1.0000000001\ntime 0.3\n", t).is_ok());
        assert!(stdout_matches(&e, "checksum 1.1\ntime 0.3\n", t).is_err());
        assert!(stdout_matches(&e, "checksum 1.0\n", t).is_err());
        assert!(stdout_matches(&[], "anything", t).is_ok());
    }
}
