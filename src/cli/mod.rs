//! The command-line edge: argument parsing, output formats and exit codes.
//! `main.rs` only calls [`main`].
//!
//! One file per command (its clap arguments and what it does), the
//! argument groups several commands share in [`args`], every text and
//! JSON rendering in [`render`], and the exit status chosen in one place,
//! [`ExitStatus::of`].

mod args;
mod characterize;
mod collect;
mod compare;
mod config_args;
mod docs;
mod driver;
mod evaluate;
mod export;
mod fuzz;
mod help;
mod measure;
mod models;
mod optimize;
mod progress;
mod render;
mod scop;
mod simulate;
mod source;
mod space;
mod store;
mod train;

pub use fuzz::optimize_args;
pub use source::{ASSUME_NO_ALIAS_WARNING, DETECT_MISSING};

use crate::config::ConfigError;
use crate::engine::model::EngineError;
use crate::frontend::FrontendError;
use crate::isl::IslError;
use clap::{Parser, Subcommand};
use std::io::Write;

/// The exit status of a polytune run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExitStatus {
    /// Success.
    Ok = 0,
    /// Input rejected: bad C, not a SCoP, a failing program, I/O.
    Rejected = 1,
    /// A malformed command line or configuration.
    Usage = 2,
    /// A bug of polytune (or isl): please report it.
    Internal = 3,
}

impl ExitStatus {
    /// The status an error ends the run with: the first cause in the
    /// chain that names one decides; anything else is rejected input.
    pub(crate) fn of(e: &anyhow::Error) -> ExitStatus {
        for cause in e.chain() {
            if let Some(r) = cause.downcast_ref::<Reported>() {
                return r.0;
            }
            if cause.is::<Usage>() || cause.is::<ConfigError>() {
                return ExitStatus::Usage;
            }
            if cause.is::<IslError>() {
                return ExitStatus::Internal;
            }
            match cause.downcast_ref::<EngineError>() {
                Some(EngineError::Internal { .. } | EngineError::Isl(_)) => {
                    return ExitStatus::Internal;
                }
                // `--context` is part of the command line.
                Some(EngineError::Context { .. }) => return ExitStatus::Usage,
                Some(_) => return ExitStatus::Rejected,
                None => {}
            }
            if cause.is::<FrontendError>() {
                return ExitStatus::Rejected;
            }
        }
        ExitStatus::Rejected
    }
}

/// A usage error found after parsing (clap reports its own with exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Usage(pub String);

/// The command already said what went wrong; end with this status.
#[derive(Debug, thiserror::Error)]
#[error("exit status {0:?}")]
pub(crate) struct Reported(pub ExitStatus);

/// Ends a command whose output is written but whose engine caught bugs of
/// its own (those SCoPs were left unchanged): exit status 3.
pub(crate) fn internal_errors(lines: &[String]) -> anyhow::Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    for s in lines {
        eprintln!("error: {s} (please report)");
    }
    Err(Reported(ExitStatus::Internal).into())
}

/// An application error as this module classifies and prints it: a lower
/// layer's error (which `app::Error` carries whole) becomes that error
/// itself, so its exit status and its located message stay its own.
pub(crate) fn app_error(e: crate::app::Error) -> anyhow::Error {
    use crate::app::Error;
    match e {
        Error::Frontend(e) => e.into(),
        Error::Engine(e) => e.into(),
        Error::Isl(e) => e.into(),
        Error::Original(e) => e.into(),
        Error::Characterize(e) => e.into(),
        Error::Io(e) => e.into(),
        #[cfg(feature = "detect")]
        Error::Detect(e) => e.into(),
        e => e.into(),
    }
}

/// Standard output was closed by the reader (`polytune ... | head`): end
/// quietly, as a Unix tool killed by SIGPIPE would.
#[derive(Debug, thiserror::Error)]
#[error("standard output is closed")]
struct StdoutClosed;

/// How much the CLI says on standard error besides its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Verbosity {
    /// Errors only (`-q`).
    Quiet,
    /// Errors, warnings and notes.
    Normal,
    /// Also the details (`-v`).
    Verbose,
}

/// What the commands print on standard error, by verbosity.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ui {
    pub verbosity: Verbosity,
}

impl Ui {
    /// A warning (hidden by `-q`).
    pub(crate) fn warn(&self, msg: impl std::fmt::Display) {
        if self.verbosity >= Verbosity::Normal {
            eprintln!("polytune: warning: {msg}");
        }
    }

    /// A note (hidden by `-q`).
    pub(crate) fn note(&self, msg: impl std::fmt::Display) {
        if self.verbosity >= Verbosity::Normal {
            eprintln!("polytune: {msg}");
        }
    }

    /// A detail (shown with `-v`).
    pub(crate) fn detail(&self, msg: impl std::fmt::Display) {
        if self.verbosity >= Verbosity::Verbose {
            eprintln!("polytune: {msg}");
        }
    }
}

/// Writes text to standard output; a closed pipe ends the run quietly.
/// Standard output was closed when polytune started (see [`main`]).
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether standard output was closed when polytune started. Rust's
/// runtime opens /dev/null (read-write) in place of a closed standard
/// descriptor before `main`, so what polytune writes would be lost with
/// exit 0: descriptor 1 on /dev/null opened read-write is taken for a
/// closed one (a shell's `>/dev/null` opens it write-only).
fn stdout_was_closed() -> bool {
    use rustix::fs::{FileType, OFlags, fcntl_getfl, fstat, stat};
    let out = std::io::stdout();
    let (Ok(mine), Ok(null), Ok(flags)) = (fstat(&out), stat("/dev/null"), fcntl_getfl(&out))
    else {
        return false;
    };
    FileType::from_raw_mode(mine.st_mode) == FileType::CharacterDevice
        && mine.st_rdev == null.st_rdev
        && flags & OFlags::RWMODE == OFlags::RDWR
}

pub(crate) fn out(text: &str) -> anyhow::Result<()> {
    if STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
        anyhow::bail!(
            "cannot write to standard output: it is closed\n  help: redirect it to a file, or write with --output"
        );
    }
    let mut o = std::io::stdout().lock();
    match o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        r => Ok(r.map_err(|e| anyhow::anyhow!("cannot write to standard output: {e}"))?),
    }
}

#[derive(Parser)]
#[command(
    name = "polytune",
    version,
    about = "Polyhedral source-to-source optimizer for C with learned transformation selection",
    after_help = "Exit codes: 0 success, 1 input rejected (with file:line:col), 2 usage error, 3 internal error."
)]
struct Cli {
    /// Print only errors.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Print more detail on standard error.
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Optimize(optimize::Args),
    Fuzz(fuzz::Args),
    Measure(measure::Args),
    Collect(collect::Args),
    Train(train::Args),
    Evaluate(evaluate::Args),
    Simulate(simulate::Args),
    Characterize(characterize::Args),
    Driver(driver::Args),
    Export(export::Args),
    Store(store::Args),
    Models(models::Args),
    Space(space::Args),
    Compare(compare::Args),
    Scop(scop::Args),
    Completions(docs::CompletionsArgs),
    Man(docs::ManArgs),
}

/// Runs the CLI; returns the process exit code.
pub fn main() -> i32 {
    if stdout_was_closed() {
        STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    // Programs polytune runs die with it, and its scratch directories go.
    if let Err(e) = crate::lab::confine::clean_up_on_signals() {
        eprintln!("polytune: warning: cannot handle signals: {e}");
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and version go to standard output, exit 0.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            eprint!("{}", clip_values(&e.render().to_string()));
            return ExitStatus::Usage as i32;
        }
    };
    let ui = Ui {
        verbosity: match (cli.quiet, cli.verbose) {
            (true, _) => Verbosity::Quiet,
            (false, true) => Verbosity::Verbose,
            (false, false) => Verbosity::Normal,
        },
    };
    // What polytune processes killed outright (SIGKILL) left behind.
    let stale = crate::lab::scratch::remove_stale();
    if stale > 0 {
        ui.note(format_args!(
            "removed {stale} scratch director{} of polytune processes that were killed",
            if stale == 1 { "y" } else { "ies" }
        ));
    }
    let status = match run(cli.command, &ui) {
        Ok(()) => ExitStatus::Ok,
        Err(e) if e.is::<StdoutClosed>() => ExitStatus::Ok,
        Err(e) => {
            let status = ExitStatus::of(&e);
            report(&e, status);
            status
        }
    };
    crate::lab::confine::let_signal_clean_up_finish();
    status as i32
}

/// A usage error as clap words it, with the value it quotes (`invalid
/// value '…' for '--opt'`) clipped: an error never echoes a value of any
/// size in full.
fn clip_values(text: &str) -> String {
    const OPEN: &str = "invalid value '";
    const CLOSE: &str = "' for '";
    let Some(start) = text.find(OPEN).map(|i| i + OPEN.len()) else {
        return text.to_string();
    };
    let Some(end) = text[start..].find(CLOSE).map(|i| i + start) else {
        return text.to_string();
    };
    format!(
        "{}{}{}",
        &text[..start],
        crate::config::clip(&text[start..end]),
        &text[end..]
    )
}

/// Prints the error that ends the run.
fn report(e: &anyhow::Error, status: ExitStatus) {
    if e.is::<Reported>() {
        return;
    }
    eprintln!("{}", error_text(e, status));
}

/// The error and its causes, `what: why: …`, each cause once: an error
/// whose message already quotes its cause (`database: {0}` of a SQLite
/// error) is not followed by that cause again.
fn chain_text(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let m = cause.to_string();
        if !text.contains(&m) {
            text.push_str(": ");
            text.push_str(&m);
        }
    }
    text
}

/// An error in the one style of every error polytune prints, as clap
/// prints usage errors: `error: what` (`file:line:col: error: what` where
/// the input has a place), then `  help: …` lines.
fn error_text(e: &anyhow::Error, status: ExitStatus) -> String {
    let mut text = match e.downcast_ref::<FrontendError>() {
        Some(fe) => fe.to_string(),
        None => chain_text(e),
    };
    for h in help::option_help(e) {
        text.push_str(&format!("\n  help: {h}"));
    }
    if located(&text) {
        return text;
    }
    if status == ExitStatus::Internal {
        let prefix = if text.contains("internal error") {
            ""
        } else {
            "internal error: "
        };
        return format!("error: {prefix}{text} (please report)");
    }
    format!("error: {text}")
}

/// Whether an error's first line starts with `file:line:col: error: `.
fn located(text: &str) -> bool {
    let first = text.lines().next().unwrap_or_default();
    let Some((place, _)) = first.split_once(": error: ") else {
        return false;
    };
    let mut parts = place.rsplitn(3, ':');
    let (col, line) = (parts.next(), parts.next());
    parts.next().is_some_and(|f| !f.is_empty())
        && [col, line]
            .iter()
            .all(|p| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())))
}

fn run(command: Command, ui: &Ui) -> anyhow::Result<()> {
    match command {
        Command::Optimize(a) => optimize::run(a, ui),
        Command::Fuzz(a) => fuzz::run(a, ui),
        Command::Measure(a) => measure::run(a, ui),
        Command::Collect(a) => collect::run(a, ui),
        Command::Train(a) => train::run(a, ui),
        Command::Evaluate(a) => evaluate::run(a, ui),
        Command::Simulate(a) => simulate::run(a, ui),
        Command::Characterize(a) => characterize::run(a, ui),
        Command::Driver(a) => driver::run(a, ui),
        Command::Export(a) => export::run(a, ui),
        Command::Store(a) => store::run(a, ui),
        Command::Models(a) => models::run(a, ui),
        Command::Space(a) => space::run(a, ui),
        Command::Compare(a) => compare::run(a, ui),
        Command::Scop(a) => scop::run(a, ui),
        Command::Completions(a) => docs::completions(a),
        Command::Man(a) => docs::man(a, ui),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_is_printed_in_one_style() {
        let located = anyhow::anyhow!("a.c:3:7: error: no SCoP found\n  help: mark it");
        assert_eq!(
            error_text(&located, ExitStatus::Rejected),
            "a.c:3:7: error: no SCoP found\n  help: mark it"
        );
        let plain = anyhow::anyhow!("the program hangs\n  help: raise --timeout");
        assert_eq!(
            error_text(&plain, ExitStatus::Rejected),
            "error: the program hangs\n  help: raise --timeout"
        );
        let bug = anyhow::anyhow!("isl said no");
        assert_eq!(
            error_text(&bug, ExitStatus::Internal),
            "error: internal error: isl said no (please report)"
        );
        // Each cause once: a store error that quotes SQLite's is not
        // followed by SQLite's again; a context is followed by its cause.
        let sql = rusqlite::Connection::open_in_memory()
            .unwrap()
            .execute("SELECT * FROM variant_features", [])
            .unwrap_err();
        let store = anyhow::Error::from(crate::lab::store::StoreError::Sql(sql))
            .context("reading s.sqlite");
        assert_eq!(
            error_text(&store, ExitStatus::Rejected),
            "error: reading s.sqlite: database: no such table: variant_features: Error code 1: SQL error or missing database"
        );
        for not_a_place in [
            "a.c: error: x",
            "a.c:x:1: error: y",
            ":1:2: error: z",
            "error: 1:2: error",
        ] {
            assert!(!super::located(not_a_place), "{not_a_place}");
        }
    }

    #[test]
    fn every_error_class_has_its_exit_status() {
        let internal = anyhow::Error::from(EngineError::Internal {
            scop: 0,
            reason: "the schedule violates a dependence".into(),
        });
        assert_eq!(ExitStatus::of(&internal), ExitStatus::Internal);
        let wrapped = internal.context("while optimizing f.c");
        assert_eq!(ExitStatus::of(&wrapped), ExitStatus::Internal);
        let unsupported = anyhow::Error::from(EngineError::Unsupported {
            scop: 0,
            reason: "no".into(),
        });
        assert_eq!(ExitStatus::of(&unsupported), ExitStatus::Rejected);
        let config = "0101".parse::<crate::config::Config>().unwrap_err();
        assert_eq!(
            ExitStatus::of(&anyhow::Error::from(config)),
            ExitStatus::Usage
        );
        assert_eq!(
            ExitStatus::of(&anyhow::Error::from(Usage("one compiler".into()))),
            ExitStatus::Usage
        );
        assert_eq!(
            ExitStatus::of(&anyhow::Error::from(Reported(ExitStatus::Internal))),
            ExitStatus::Internal
        );
        assert_eq!(
            ExitStatus::of(&anyhow::anyhow!("cannot read x.c")),
            ExitStatus::Rejected
        );
        let caught =
            internal_errors(&["k.c:4: SCoP 0 left unchanged: SCoP 0: internal error: x".into()])
                .unwrap_err();
        assert_eq!(ExitStatus::of(&caught), ExitStatus::Internal);
        assert!(internal_errors(&[]).is_ok());
        assert_eq!(ExitStatus::Internal as i32, 3);
        assert_eq!(ExitStatus::Usage as i32, 2);
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
