//! Running programs: a timeout that kills the whole process group (a hung
//! OpenMP variant and all its threads), an explicit thread count, and the
//! timing protocol: warm-up, at least five timed runs, more while the
//! spread is high, the median reported with its spread.

use serde::Serialize;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    Timeout,
}

/// One run of a program.
#[derive(Debug, Clone)]
pub struct Run {
    pub exit: Exit,
    pub stdout: String,
    pub stderr: String,
    /// The program's own `polytune-time:` line, when it printed one.
    pub kernel_seconds: Option<f64>,
}

impl Run {
    pub fn ok(&self) -> bool {
        self.exit == Exit::Code(0)
    }
}

unsafe extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}

const SIGKILL: i32 = 9;

/// Runs `exe args` with `OMP_NUM_THREADS=threads`, killing the process
/// group after `timeout`.
pub fn run(exe: &Path, args: &[&str], threads: usize, timeout: Duration) -> std::io::Result<Run> {
    run_with(exe, args, threads, timeout, &[])
}

/// `run` with more environment variables (an OpenMP wait policy, say).
pub fn run_with(
    exe: &Path,
    args: &[&str],
    threads: usize,
    timeout: Duration,
    env: &[(&str, &str)],
) -> std::io::Result<Run> {
    let mut child = Command::new(exe)
        .args(args)
        .env("OMP_NUM_THREADS", threads.to_string())
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let pid = child.id() as i32;
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let reader_out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let reader_err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break st;
        }
        if start.elapsed() >= timeout {
            // SAFETY: signalling our own child's process group.
            unsafe {
                kill(-pid, SIGKILL);
            }
            timed_out = true;
            break child.wait()?;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stdout = String::from_utf8_lossy(&reader_out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&reader_err.join().unwrap_or_default()).into_owned();
    use std::os::unix::process::ExitStatusExt;
    let exit = if timed_out {
        Exit::Timeout
    } else if let Some(code) = status.code() {
        Exit::Code(code)
    } else {
        Exit::Signal(status.signal().unwrap_or(0))
    };
    let kernel_seconds = stderr
        .lines()
        .find_map(|l| l.strip_prefix("polytune-time:"))
        .and_then(|v| v.trim().parse().ok());
    Ok(Run {
        exit,
        stdout,
        stderr,
        kernel_seconds,
    })
}

/// Repeated timings of one program.
#[derive(Debug, Clone, Serialize)]
pub struct Timing {
    /// Kernel seconds of every timed run, in order.
    pub samples: Vec<f64>,
    pub median: f64,
    /// (max - min) / median over the samples.
    pub spread: f64,
}

/// The timing protocol's knobs.
#[derive(Debug, Clone, Copy)]
pub struct Protocol {
    pub warmup: usize,
    pub min_runs: usize,
    pub max_runs: usize,
    /// Keep running (up to `max_runs`) while the spread exceeds this.
    pub target_spread: f64,
    pub threads: usize,
    pub timeout: Duration,
    /// A variant whose verification run already took longer than this many
    /// seconds is timed with `slow_runs` runs only: it is far slower than
    /// its baseline, never a candidate, and its exact ratio matters little.
    pub slow_cutoff: Option<f64>,
    pub slow_runs: usize,
    /// Count the verification run's kernel time as the first sample (the
    /// kernel is timed inside the program, before it dumps anything), so
    /// a campaign spends one run less per variant.
    pub verification_is_sample: bool,
}

impl Default for Protocol {
    fn default() -> Self {
        Protocol {
            warmup: 1,
            min_runs: 5,
            max_runs: 15,
            target_spread: 0.10,
            threads: 2,
            timeout: Duration::from_secs(60),
            slow_cutoff: None,
            slow_runs: 2,
            verification_is_sample: false,
        }
    }
}

/// Median of a non-empty slice.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// One run's kernel seconds; the error is the run when it failed or
/// printed no `polytune-time:` line.
fn timed_run(exe: &Path, threads: usize, timeout: Duration) -> Result<f64, Run> {
    timed_run_with(exe, threads, timeout, &[])
}

/// One run's kernel seconds with more environment variables.
pub fn timed_run_with(
    exe: &Path,
    threads: usize,
    timeout: Duration,
    env: &[(&str, &str)],
) -> Result<f64, Run> {
    let r = run_with(exe, &[], threads, timeout, env).map_err(|e| Run {
        exit: Exit::Code(-1),
        stdout: String::new(),
        stderr: e.to_string(),
        kernel_seconds: None,
    })?;
    match (r.ok(), r.kernel_seconds) {
        (true, Some(s)) => Ok(s),
        _ => Err(r),
    }
}

/// Times a program; the error is the first run that did not succeed.
pub fn time(exe: &Path, p: &Protocol) -> Result<Timing, Run> {
    time_after(exe, p, None)
}

/// Times a program whose first sample, when given, was already taken.
pub fn time_after(exe: &Path, p: &Protocol, first: Option<f64>) -> Result<Timing, Run> {
    let once = || timed_run(exe, p.threads, p.timeout);
    for _ in 0..p.warmup {
        once()?;
    }
    let mut samples: Vec<f64> = first.into_iter().collect();
    loop {
        if samples.len() >= p.min_runs.max(1) {
            let m = median(&samples);
            let (lo, hi) = samples
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
            let spread = if m > 0.0 { (hi - lo) / m } else { 0.0 };
            if spread <= p.target_spread || samples.len() >= p.max_runs {
                return Ok(Timing {
                    median: m,
                    spread,
                    samples,
                });
            }
        }
        samples.push(once()?);
    }
}

/// Times several programs in alternation — one run of each per round —
/// so that load on a shared machine hits them alike: the fair way to
/// decide between two close contenders. Returns each program's samples.
pub fn interleaved(
    exes: &[&Path],
    rounds: usize,
    threads: usize,
    timeout: Duration,
) -> Result<Vec<Vec<f64>>, Run> {
    let mut out = vec![Vec::with_capacity(rounds); exes.len()];
    for _ in 0..rounds {
        for (i, exe) in exes.iter().enumerate() {
            out[i].push(timed_run(exe, threads, timeout)?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_kills_the_process_group() {
        let start = Instant::now();
        let r = run(
            Path::new("/bin/sh"),
            &["-c", "sleep 30 & sleep 30"],
            1,
            Duration::from_millis(200),
        )
        .unwrap();
        assert_eq!(r.exit, Exit::Timeout);
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn exit_codes_signals_and_time_lines() {
        let r = run(
            Path::new("/bin/sh"),
            &["-c", "echo 'polytune-time: 0.25' >&2; exit 3"],
            1,
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(r.exit, Exit::Code(3));
        assert_eq!(r.kernel_seconds, Some(0.25));
        let r = run_with(
            Path::new("/bin/sh"),
            &["-c", "echo \"polytune-time: $OMP_WAIT_POLICY\" >&2"],
            1,
            Duration::from_secs(5),
            &[("OMP_WAIT_POLICY", "7.5")],
        )
        .unwrap();
        assert_eq!(r.kernel_seconds, Some(7.5));
        let r = run(
            Path::new("/bin/sh"),
            &["-c", "kill -SEGV $$"],
            1,
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(r.exit, Exit::Signal(11));
        let r = run(
            Path::new("/bin/sh"),
            &["-c", "echo $OMP_NUM_THREADS"],
            7,
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(r.stdout.trim(), "7");
    }

    #[test]
    fn a_given_first_sample_saves_a_run() {
        let dir = tempfile::tempdir().unwrap();
        let count = dir.path().join("runs");
        let exe = dir.path().join("prog");
        std::fs::write(
            &exe,
            format!(
                "#!/bin/sh\necho x >> {}\necho 'polytune-time: 0.5' >&2\n",
                count.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let p = Protocol {
            warmup: 0,
            min_runs: 3,
            max_runs: 5,
            ..Default::default()
        };
        let t = time_after(&exe, &p, Some(0.5)).unwrap();
        assert_eq!(t.samples.len(), 3);
        let runs = std::fs::read_to_string(&count).unwrap().lines().count();
        assert_eq!(runs, 2);
        let t = time(&exe, &p).unwrap();
        assert_eq!((t.samples.len(), t.median), (3, 0.5));
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
