//! The stages of [`super::run_watched`] around the program's start: its
//! command line, the threads that capture its output, the wait for its
//! end (or its deadline, or the watch's stop) and the output collected.

use super::{Captured, GRACE, Limits, WATCH_EVERY};
use rustix::process::{Pid, Resource, Signal};
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What a capturing thread sends: the stream (0 stdout, 1 stderr) and
/// what it read.
pub(super) type Stream = (usize, Captured);

/// The command line that runs `program` with `args` under the helpers
/// (`setpriv`, `prlimit`, `taskset`) that confine it, and its memory
/// limit.
pub(super) fn command_line<I, S>(
    program: PathBuf,
    args: I,
    limits: &Limits,
) -> std::io::Result<(Vec<OsString>, Option<u64>)>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let memory = limits.memory.map(|m| {
        // A child cannot be given more than polytune's own hard limit.
        match rustix::process::getrlimit(Resource::As).maximum {
            Some(hard) => m.min(hard),
            None => m,
        }
    });
    let (setpriv, prlimit) = super::helpers();
    let mut argv: Vec<OsString> = Vec::new();
    if let Some(p) = setpriv {
        argv.extend([p.as_os_str().into(), "--pdeathsig".into(), "KILL".into()]);
    }
    if let (Some(m), Some(p)) = (memory, prlimit) {
        argv.extend([
            p.as_os_str().into(),
            format!("--as={m}").into(),
            "--".into(),
        ]);
    }
    if let Some(cores) = &limits.cores {
        let taskset = super::resolve(Path::new("taskset")).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("running on given cores needs taskset (util-linux): {e}"),
            )
        })?;
        argv.extend([
            taskset.into_os_string(),
            "--cpu-list".into(),
            cores.to_string().into(),
        ]);
    }
    argv.push(program.into_os_string());
    argv.extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
    Ok((argv, memory))
}

/// Threads that read the child's standard output and error up to their
/// caps; each sends what it read when its stream closes.
pub(super) fn capture(
    child: &mut Child,
    limits: &Limits,
) -> std::io::Result<mpsc::Receiver<Stream>> {
    let (tx, rx) = mpsc::channel();
    let streams: [(usize, Box<dyn Read + Send>, usize); 2] = [
        (
            0,
            Box::new(child.stdout.take().expect("piped stdout")),
            limits.stdout_cap,
        ),
        (
            1,
            Box::new(child.stderr.take().expect("piped stderr")),
            limits.stderr_cap,
        ),
    ];
    for (k, mut r, cap) in streams {
        let tx = tx.clone();
        std::thread::Builder::new()
            .name("polytune-output".into())
            .spawn(move || {
                let mut c = Captured::default();
                let mut buf = vec![0u8; 64 << 10];
                loop {
                    match r.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => c.push(&buf[..n], cap),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
                let _ = tx.send((k, c));
            })?;
    }
    drop(tx);
    Ok(rx)
}

/// Waits for the child, started at `start`, until `timeout` has passed or
/// the watch says stop (asked every [`WATCH_EVERY`]), then kills its
/// group: its status (`None` when killed) and whether the watch stopped it.
pub(super) fn wait(
    child: &mut Child,
    pid: i32,
    start: Instant,
    timeout: Duration,
    watch: &mut dyn FnMut() -> bool,
) -> std::io::Result<(Option<ExitStatus>, bool)> {
    let deadline = start + timeout;
    let mut next_watch = start + WATCH_EVERY;
    let mut stopped = false;
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break Some(st);
        }
        let now = Instant::now();
        if now >= next_watch {
            next_watch = now + WATCH_EVERY;
            stopped = watch();
        }
        if stopped || now >= deadline {
            // The group, and the program itself should it have left it.
            if let Some(p) = Pid::from_raw(pid) {
                let _ = rustix::process::kill_process_group(p, Signal::KILL);
                let _ = rustix::process::kill_process(p, Signal::KILL);
            }
            child.wait()?;
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    Ok((status, stopped))
}

/// The streams' captures, as many as arrive within [`GRACE`], and whether
/// both did.
pub(super) fn collected(rx: &mpsc::Receiver<Stream>) -> ([Captured; 2], bool) {
    let mut out = [None, None];
    let until = Instant::now() + GRACE;
    while out.iter().any(Option::is_none) {
        let left = until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((k, c)) => out[k] = Some(c),
            Err(_) => break,
        }
    }
    let output_complete = out.iter().all(Option::is_some);
    let [stdout, stderr] = out.map(Option::unwrap_or_default);
    ([stdout, stderr], output_complete)
}
