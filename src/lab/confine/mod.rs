//! Every program polytune runs — compilers, valgrind, the measured
//! programs — runs confined:
//!
//! - in its own process group, with a deadline: at the deadline the group
//!   is killed; when the program ends, whatever it left running is killed
//!   too and counted (a measured program must not leave work behind);
//! - polytune is a child subreaper, so a descendant that escaped the group
//!   (`setsid`, double fork) is re-parented to polytune instead of init;
//!   every confined program carries a token in its environment, by which
//!   polytune finds such orphans in /proc, kills and reaps them;
//! - it dies with polytune: `setpriv --pdeathsig KILL` (util-linux) kills
//!   it when the polytune thread that started it ends, and
//!   [`clean_up_on_signals`] kills every confined program (and removes the
//!   scratch directories) when polytune is interrupted or terminated;
//! - its address space is limited (`prlimit --as`, util-linux), by default
//!   to half the machine's memory;
//! - when given cores, it runs on those only (`taskset --cpu-list`,
//!   util-linux, which sets them before the program starts: threads it
//!   creates later inherit them);
//! - what it prints is drained continuously but kept only up to a cap
//!   (the head, and the last [`TAIL`] bytes), so a program that floods its
//!   output costs no memory; the outcome says how much was dropped;
//! - reading its output never outlasts the deadline by more than a short
//!   grace period, even when an unknown process holds the pipe.
//!
//! Without `setpriv` and `prlimit` on the PATH the memory limit is applied
//! right after the program started (a window of a few microseconds) and
//! the program does not die with a SIGKILLed polytune.
//!
//! `limits.rs` holds the limits, `cores.rs` sets of cores, `captured.rs`
//! the capped output and `sweep.rs` the search for orphans in /proc.

mod captured;
mod cores;
mod limits;
mod sweep;
mod watch;

pub(crate) use captured::Captured;
pub use cores::Cores;
pub use limits::{Limits, MemoryLimit, default_memory_limit, show_bytes};
use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use sweep::sweep;

use rustix::process::{Pid, Resource, Rlimit};

/// Bytes of standard output kept by default (a dump is kept up to a
/// bound that depends on the dataset size: `verify::dump_cap`).
pub(crate) const STDOUT_CAP: usize = 64 << 20;
/// Bytes of standard error kept from its beginning.
pub(crate) const STDERR_CAP: usize = 1 << 20;
/// Bytes kept from the end of an output that exceeded its cap.
pub(crate) const TAIL: usize = 64 << 10;
/// Time a compiler or another tool may take.
pub(crate) const TOOL_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the output may take to close once the program was cleaned up.
const GRACE: Duration = Duration::from_secs(2);
/// The environment variable that marks a confined program and everything
/// it starts.
const TOKEN_VAR: &str = "POLYTUNE_CONFINED";

/// How a confined program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Code(i32),
    Signal(i32),
    /// Killed at the deadline.
    Timeout,
    /// Killed because the caller's watch said so ([`run_watched`]).
    Stopped,
}

/// The outcome of one confined run.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub ending: Ending,
    pub stdout: Captured,
    pub stderr: Captured,
    /// Processes the program left running when it ended (polytune killed
    /// them). Not counted after a timeout.
    pub strays: usize,
    /// False when the output pipes were still open after the program and
    /// everything it started were killed: some process polytune cannot
    /// identify holds them (what was read is lost).
    pub output_complete: bool,
    pub seconds: f64,
}

/// Finds `program` (a path, or a name looked up on the PATH).
pub(crate) fn resolve(program: &Path) -> std::io::Result<PathBuf> {
    let runnable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.components().count() > 1 || program.is_absolute() {
        return if runnable(program) {
            Ok(program.to_path_buf())
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{}: no such executable", program.display()),
            ))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| runnable(p))
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{}: not found on the PATH", program.display()),
            )
        })
}

/// util-linux's `setpriv` and `prlimit`, when installed.
fn helpers() -> &'static (Option<PathBuf>, Option<PathBuf>) {
    static H: OnceLock<(Option<PathBuf>, Option<PathBuf>)> = OnceLock::new();
    H.get_or_init(|| {
        // Each is used only if it works here (an old setpriv has no
        // --pdeathsig; a sandbox may forbid the calls).
        let works = |tool: &Path, args: &[&str]| {
            let t = resolve(Path::new("true")).ok()?;
            Command::new(tool)
                .args(args)
                .arg(t)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .ok()
                .filter(|s| s.success())
        };
        let setpriv = resolve(Path::new("setpriv"))
            .ok()
            .filter(|p| works(p, &["--pdeathsig", "KILL"]).is_some());
        let prlimit = resolve(Path::new("prlimit")).ok().filter(|p| {
            // polytune's own limit can always be set again.
            let hard = rustix::process::getrlimit(Resource::As).maximum;
            let as_ = format!(
                "--as={}",
                hard.map_or("unlimited".into(), |m| m.to_string())
            );
            works(p, &[&as_, "--"]).is_some()
        });
        (setpriv, prlimit)
    })
}

/// Makes polytune the reaper of its orphaned descendants (once).
fn become_subreaper() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        // Without it (kernels before 3.4) escaped descendants go to init
        // and only the process group is killed.
        let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
    });
}

/// The confined programs now running, for [`clean_up_on_signals`].
struct Active {
    groups: Vec<i32>,
    /// polytune is ending: start nothing more.
    ending: bool,
}

static ACTIVE: Mutex<Active> = Mutex::new(Active {
    groups: Vec::new(),
    ending: false,
});

fn active() -> std::sync::MutexGuard<'static, Active> {
    ACTIVE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether polytune is ending on a signal: the programs it ran were
/// killed, so what they reported since is no measurement.
pub fn ending() -> bool {
    active().ending
}

fn token_prefix() -> String {
    format!("{:010}.", rustix::process::getpid().as_raw_nonzero())
}

/// A fixed-width token: every run's environment has the same size.
fn new_token() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}{:010}",
        token_prefix(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Cleans up a started program's group however `run` ends.
struct Group {
    pgid: i32,
    token: String,
    swept: bool,
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.swept {
            sweep(&[self.pgid], &self.token);
        }
        active().groups.retain(|&g| g != self.pgid);
    }
}

/// Runs `program args` confined (see the module documentation), with
/// `env` added to polytune's environment, standard input empty.
pub fn run<I, S>(
    program: &Path,
    args: I,
    env: &[(&str, &str)],
    limits: &Limits,
) -> std::io::Result<Outcome>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_watched(program, args, env, limits, &mut || false)
}

/// How often [`run_watched`] asks its watch.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// [`run`], asking `watch` every tenth of a second whether to stop the
/// program now (it is then killed like one at its deadline, and ends
/// [`Ending::Stopped`]).
pub(crate) fn run_watched<I, S>(
    program: &Path,
    args: I,
    env: &[(&str, &str)],
    limits: &Limits,
    watch: &mut dyn FnMut() -> bool,
) -> std::io::Result<Outcome>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let program = resolve(program)?;
    become_subreaper();
    let (argv, memory) = watch::command_line(program, args, limits)?;
    let (_, prlimit) = helpers();
    let token = new_token();
    let start = Instant::now();
    // Started and registered under the lock: a signal's clean-up sees
    // every program, or stops this one from starting.
    let mut running = active();
    if running.ending {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "polytune is ending",
        ));
    }
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .envs(env.iter().copied())
        .env(TOKEN_VAR, &token)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let pid = child.id() as i32;
    running.groups.push(pid);
    drop(running);
    let mut group = Group {
        pgid: pid,
        token,
        swept: false,
    };
    if let (Some(m), None) = (memory, prlimit) {
        let lim = Rlimit {
            current: Some(m),
            maximum: Some(m),
        };
        let _ = rustix::process::prlimit(Pid::from_raw(pid), Resource::As, lim);
    }
    let rx = watch::capture(&mut child, limits)?;
    let (status, stopped) = watch::wait(&mut child, pid, start, limits.timeout, watch)?;
    let seconds = start.elapsed().as_secs_f64();
    let strays = sweep(&[group.pgid], &group.token);
    group.swept = true;
    let ([stdout, stderr], output_complete) = watch::collected(&rx);
    use std::os::unix::process::ExitStatusExt;
    let ending = match status {
        None if stopped => Ending::Stopped,
        None => Ending::Timeout,
        Some(st) => match st.code() {
            Some(c) => Ending::Code(c),
            None => Ending::Signal(st.signal().unwrap_or(0)),
        },
    };
    Ok(Outcome {
        ending,
        stdout,
        stderr,
        strays: if matches!(ending, Ending::Timeout | Ending::Stopped) {
            0
        } else {
            strays
        },
        output_complete,
        seconds,
    })
}

/// Kills every confined program (and what it started) and removes every
/// live scratch directory when polytune gets SIGINT, SIGTERM or SIGHUP,
/// then ends polytune by that signal. For the CLI: a library leaves signals
/// to its caller.
pub fn clean_up_on_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("polytune-signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let groups = {
                    let mut a = active();
                    a.ending = true;
                    a.groups.clone()
                };
                sweep(&groups, &token_prefix());
                super::scratch::remove_all();
                let _ = signal_hook::low_level::emulate_default_handler(sig);
                std::process::exit(128 + sig);
            }
        })?;
    Ok(())
}

/// Waits, when polytune is ending on a signal, for the clean-up of
/// [`clean_up_on_signals`] to end the process: the CLI calls it before it
/// returns, because a main thread that ends first (its work failed with
/// "polytune is ending") would end the process in the middle of the
/// clean-up and leave a half-removed scratch directory behind. Returns at
/// once otherwise; after ten seconds in any case.
pub fn let_signal_clean_up_finish() {
    if ending() {
        // The clean-up's `exit` ends this sleep with the process.
        std::thread::sleep(Duration::from_secs(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::process::{Signal, WaitOptions};

    fn sh(script: &str, limits: &Limits) -> Outcome {
        run(Path::new("/bin/sh"), ["-c", script], &[], limits).unwrap()
    }

    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s[s.rfind(')')? + 2..].bytes().next())
            .is_some_and(|state| state != b'Z')
    }

    #[test]
    fn a_program_given_cores_runs_on_them_only() {
        let last = Cores::allowed().unwrap().iter().last().unwrap();
        let mut one = Cores::none();
        one.insert(last);
        let limits = Limits {
            cores: Some(one),
            ..Limits::new(Duration::from_secs(20), None)
        };
        let o = sh("grep Cpus_allowed_list /proc/self/status", &limits);
        assert_eq!(o.ending, Ending::Code(0));
        let text = o.stdout.into_text();
        assert_eq!(
            text.split_whitespace().last(),
            Some(last.to_string().as_str()),
            "{text}"
        );
        let o = sh(
            "grep Cpus_allowed_list /proc/self/status",
            &Limits::new(Duration::from_secs(20), None),
        );
        assert_eq!(
            o.stdout.into_text().split_whitespace().last(),
            Some(Cores::allowed().unwrap().to_string().as_str()),
            "without cores: wherever polytune may"
        );
    }

    #[test]
    fn a_flood_is_drained_but_not_kept() {
        let limits = Limits {
            stdout_cap: 1 << 20,
            stderr_cap: 1 << 10,
            ..Limits::new(Duration::from_secs(20), None)
        };
        let o = sh(
            "head -c 20000000 /dev/zero; head -c 3000000 /dev/zero >&2; echo 'polytune-time: 1' >&2",
            &limits,
        );
        assert_eq!(o.ending, Ending::Code(0));
        assert_eq!(o.stdout.dropped, 20_000_000 - (1 << 20) - TAIL as u64);
        assert!(o.stderr.truncated());
        assert!(o.stderr.into_text().ends_with("polytune-time: 1\n"));
    }

    #[test]
    fn a_child_holding_the_pipe_is_killed_and_counted() {
        let start = Instant::now();
        // The background sleep keeps stdout open after the shell exits.
        let o = sh(
            "sleep 30 & echo $! > /dev/stderr; echo done",
            &Limits::new(Duration::from_secs(20), None),
        );
        assert!(start.elapsed() < Duration::from_secs(5));
        assert_eq!(o.ending, Ending::Code(0));
        assert_eq!(o.strays, 1);
        assert!(o.output_complete);
        let pid: i32 = o.stderr.into_text().trim().parse().unwrap();
        assert!(!alive(pid));
    }

    #[test]
    fn an_escaped_descendant_is_found_and_killed() {
        let start = Instant::now();
        // setsid leaves the group; its stdout is closed, so nothing
        // holds the pipe.
        let o = sh(
            "setsid sh -c 'echo $$ >&2; exec sleep 30' >/dev/null & sleep 0.5; exit 4",
            &Limits::new(Duration::from_secs(20), None),
        );
        assert!(start.elapsed() < Duration::from_secs(5));
        assert_eq!(o.ending, Ending::Code(4));
        let pid: i32 = o.stderr.into_text().trim().parse().unwrap();
        assert_eq!(o.strays, 1);
        assert!(!alive(pid));
    }

    #[test]
    fn an_unknown_holder_of_the_pipe_costs_the_grace_period_only() {
        // Out of the group and without the token: polytune cannot find
        // it, and stops reading after the grace period.
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!(
            "env -u {TOKEN_VAR} setsid sh -c 'echo $$ > {}; exec sleep 30' & sleep 0.3",
            pidfile.display()
        );
        let start = Instant::now();
        let o = sh(&script, &Limits::new(Duration::from_secs(20), None));
        assert!(start.elapsed() < Duration::from_secs(6));
        assert_eq!(o.ending, Ending::Code(0));
        assert!(!o.output_complete);
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let pid = Pid::from_raw(pid).unwrap();
        rustix::process::kill_process(pid, Signal::KILL).unwrap();
        let _ = rustix::process::waitpid(Some(pid), WaitOptions::empty());
    }

    #[test]
    fn the_deadline_kills_the_group() {
        let start = Instant::now();
        let o = sh(
            "sleep 30 & sleep 30",
            &Limits::new(Duration::from_millis(300), None),
        );
        assert_eq!(o.ending, Ending::Timeout);
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn the_memory_limit_applies() {
        let o = sh(
            "ulimit -v",
            &Limits::new(Duration::from_secs(20), Some(64 << 20)),
        );
        assert_eq!(o.stdout.into_text().trim(), (64 << 10).to_string());
        assert!(
            run(
                Path::new("no-such-program-polytune"),
                ["x"],
                &[],
                &Limits::tool()
            )
            .is_err()
        );
    }
}
