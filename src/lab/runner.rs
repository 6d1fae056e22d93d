//! Running programs: confined (see [`confine`]: a deadline, a memory
//! limit, bounded output, nothing left running), with an explicit thread
//! count, and the timing protocol: warm-up, at least five timed runs, more
//! while the spread is high, the median reported with its spread.

use super::confine::{self, Cores, Ending, Limits};
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

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
    /// Standard output; empty when it was longer than
    /// [`confine::STDOUT_CAP`] bytes.
    pub stdout: String,
    /// Standard error: its head and, when it was longer than
    /// [`confine::STDERR_CAP`], its end.
    pub stderr: String,
    /// The program's own `polytune-time:` line, when it printed one.
    pub kernel_seconds: Option<f64>,
    /// Standard output was longer than the cap: `stdout` is incomplete.
    pub stdout_truncated: bool,
    /// Processes the program left running when it exited (killed since).
    pub strays: usize,
    /// False when its output stayed open after it and everything it
    /// started were killed.
    pub output_complete: bool,
    /// Seconds from its start to its end, as the whole program's time
    /// (process start-up and everything it printed included).
    pub wall_seconds: f64,
}

impl Run {
    /// It exited with 0, leaving nothing behind.
    pub fn ok(&self) -> bool {
        self.exit == Exit::Code(0) && self.strays == 0 && self.output_complete
    }

    /// A run that could not be started.
    pub(crate) fn not_started(e: std::io::Error) -> Run {
        Run {
            exit: Exit::Code(-1),
            stdout: String::new(),
            stderr: e.to_string(),
            kernel_seconds: None,
            stdout_truncated: false,
            strays: 0,
            output_complete: true,
            wall_seconds: 0.0,
        }
    }
}

/// Runs `exe args` confined (see [`confine`]) with
/// `OMP_NUM_THREADS=threads`.
pub fn run(exe: &Path, args: &[&str], threads: usize, limits: &Limits) -> std::io::Result<Run> {
    run_with(exe, args, threads, limits, &[])
}

/// `run` with more environment variables (an OpenMP wait policy, say).
pub(crate) fn run_with(
    exe: &Path,
    args: &[&str],
    threads: usize,
    limits: &Limits,
    env: &[(&str, &str)],
) -> std::io::Result<Run> {
    let threads = threads.to_string();
    let mut vars = vec![("OMP_NUM_THREADS", threads.as_str())];
    vars.extend(env.iter().copied());
    let started = std::time::Instant::now();
    let o = confine::run(exe, args, &vars, limits)?;
    let wall_seconds = started.elapsed().as_secs_f64();
    let exit = match o.ending {
        Ending::Code(c) => Exit::Code(c),
        Ending::Signal(s) => Exit::Signal(s),
        Ending::Timeout => Exit::Timeout,
        // Programs timed are never watched: killed, as by the deadline.
        Ending::Stopped => Exit::Signal(9),
    };
    // A truncated output cannot be verified: it is not kept at all.
    let stdout_truncated = o.stdout.truncated();
    let stdout = if stdout_truncated {
        drop(o.stdout);
        String::new()
    } else {
        o.stdout.into_text()
    };
    let stderr = o.stderr.into_text();
    let kernel_seconds = stderr
        .lines()
        .find_map(|l| l.strip_prefix("polytune-time:"))
        .and_then(|v| v.trim().parse().ok());
    Ok(Run {
        exit,
        stdout,
        stderr,
        kernel_seconds,
        stdout_truncated,
        strays: o.strays,
        output_complete: o.output_complete,
        wall_seconds,
    })
}

/// One timed run's seconds: its SCoP regions' (the instrumentation's
/// clock, summed over their executions) and the whole program's (from
/// its start to its end).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    pub regions: f64,
    pub program: f64,
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
    /// Address-space limit of every run, in bytes (`None`: unlimited).
    pub memory_limit: Option<u64>,
    /// A variant whose verification run already took longer than this many
    /// seconds is timed with `slow_runs` runs only: it is far slower than
    /// its baseline, never a candidate, and its exact ratio matters little.
    pub slow_cutoff: Option<f64>,
    pub slow_runs: usize,
    /// Count the verification run's kernel time as the first sample (the
    /// kernel is timed inside the program, before it dumps anything), so
    /// a campaign spends one run less per variant.
    pub verification_is_sample: bool,
    /// The cores every run goes on (`collect --timing-cores`); `None`:
    /// wherever polytune may run.
    pub cores: Option<Cores>,
    /// Repetition by the region's length (issue 36); `None`: the fixed
    /// counts above (campaigns, whose dataset was measured so).
    pub adaptive: Option<Adaptive>,
}

/// Repetition by the region's length: a short region gets more runs,
/// until its samples add up to `enough_seconds` (or `max_runs` of them);
/// a long one fewer, down to one run of `long_seconds` or more.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adaptive {
    pub enough_seconds: f64,
    pub long_seconds: f64,
    pub max_runs: usize,
}

impl Default for Adaptive {
    fn default() -> Adaptive {
        Adaptive {
            enough_seconds: 0.2,
            long_seconds: 2.0,
            max_runs: 30,
        }
    }
}

impl Adaptive {
    /// Whether `samples` (seconds) are enough under `p`'s spread target.
    fn enough(&self, p: &Protocol, samples: &[f64], spread: f64) -> bool {
        let n = samples.len();
        let sum: f64 = samples.iter().sum();
        let t = median(samples).max(1e-9);
        // A long region needs fewer runs: one of `long_seconds` or more.
        let lower = ((self.long_seconds / t).ceil() as usize).clamp(1, p.min_runs.max(1));
        let timed_enough = sum >= self.enough_seconds || n >= self.max_runs;
        // Past the spread target, at most `max_runs`, and no more than
        // five long runs' worth of time.
        let settled =
            spread <= p.target_spread || n >= self.max_runs || sum >= 5.0 * self.long_seconds;
        n >= lower && timed_enough && settled
    }
}

impl Protocol {
    /// The limits of one run.
    pub fn limits(&self) -> Limits {
        Limits {
            cores: self.cores,
            ..Limits::new(self.timeout, self.memory_limit)
        }
    }
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
            memory_limit: Some(confine::default_memory_limit()),
            slow_cutoff: None,
            slow_runs: 2,
            verification_is_sample: false,
            cores: None,
            adaptive: None,
        }
    }
}

/// Median of a non-empty slice (of an even count, the mean of the two
/// middle values): the crate's one median.
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
fn timed_run(exe: &Path, threads: usize, limits: &Limits) -> Result<f64, Run> {
    timed_run_with(exe, threads, limits, &[])
}

/// One run's kernel seconds with more environment variables.
pub fn timed_run_with(
    exe: &Path,
    threads: usize,
    limits: &Limits,
    env: &[(&str, &str)],
) -> Result<f64, Run> {
    let r = run_with(exe, &[], threads, limits, env).map_err(Run::not_started)?;
    match (r.ok(), r.kernel_seconds) {
        (true, Some(s)) => Ok(s),
        _ => Err(r),
    }
}

/// Times a program whose first sample, when given, was already taken.
pub(crate) fn time_after(exe: &Path, p: &Protocol, first: Option<f64>) -> Result<Timing, Run> {
    let limits = p.limits();
    time_by(p, first, &mut || timed_run(exe, p.threads, &limits))
}

/// The timing protocol over `once`, one run's seconds (or the run that
/// failed).
pub(crate) fn time_by(
    p: &Protocol,
    first: Option<f64>,
    once: &mut dyn FnMut() -> Result<f64, Run>,
) -> Result<Timing, Run> {
    let mut samples: Vec<f64> = first.into_iter().collect();
    for _ in 0..p.warmup {
        let t = once()?;
        // A long region is warm after one run: that run counts.
        if let Some(a) = &p.adaptive
            && t >= a.long_seconds
        {
            samples.push(t);
            break;
        }
    }
    loop {
        if !samples.is_empty() {
            let m = median(&samples);
            let (lo, hi) = samples
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
            let spread = if m > 0.0 { (hi - lo) / m } else { 0.0 };
            let done = match &p.adaptive {
                Some(a) => a.enough(p, &samples, spread),
                None => {
                    samples.len() >= p.min_runs.max(1)
                        && (spread <= p.target_spread || samples.len() >= p.max_runs)
                }
            };
            if done {
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
    limits: &Limits,
) -> Result<Vec<Vec<f64>>, Run> {
    let mut runs: Vec<Box<dyn FnMut() -> Result<f64, Run> + '_>> = exes
        .iter()
        .map(|exe| Box::new(move || timed_run(exe, threads, limits)) as Box<dyn FnMut() -> _>)
        .collect();
    interleaved_by(&mut runs, rounds)
}

/// [`interleaved`] over any way of timing one run of each program.
pub fn interleaved_by(
    runs: &mut [Box<dyn FnMut() -> Result<f64, Run> + '_>],
    rounds: usize,
) -> Result<Vec<Vec<f64>>, Run> {
    let mut out = vec![Vec::with_capacity(rounds); runs.len()];
    for _ in 0..rounds {
        for (i, once) in runs.iter_mut().enumerate() {
            out[i].push(once()?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn timeout_kills_the_process_group() {
        let start = Instant::now();
        let r = run(
            Path::new("/bin/sh"),
            &["-c", "sleep 30 & sleep 30"],
            1,
            &Limits::new(Duration::from_millis(200), None),
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
            &Limits::new(Duration::from_secs(5), None),
        )
        .unwrap();
        assert_eq!(r.exit, Exit::Code(3));
        assert_eq!(r.kernel_seconds, Some(0.25));
        let r = run_with(
            Path::new("/bin/sh"),
            &["-c", "echo \"polytune-time: $OMP_WAIT_POLICY\" >&2"],
            1,
            &Limits::new(Duration::from_secs(5), None),
            &[("OMP_WAIT_POLICY", "7.5")],
        )
        .unwrap();
        assert_eq!(r.kernel_seconds, Some(7.5));
        let r = run(
            Path::new("/bin/sh"),
            &["-c", "kill -SEGV $$"],
            1,
            &Limits::new(Duration::from_secs(5), None),
        )
        .unwrap();
        assert_eq!(r.exit, Exit::Signal(11));
        let r = run(
            Path::new("/bin/sh"),
            &["-c", "echo $OMP_NUM_THREADS"],
            7,
            &Limits::new(Duration::from_secs(5), None),
        )
        .unwrap();
        assert_eq!(r.stdout.trim(), "7");
    }

    #[test]
    fn a_process_left_behind_fails_the_run() {
        let r = run(
            Path::new("/bin/sh"),
            &["-c", "sleep 30 & echo 'polytune-time: 0.5' >&2"],
            1,
            &Limits::new(Duration::from_secs(10), None),
        )
        .unwrap();
        assert_eq!((r.exit.clone(), r.strays), (Exit::Code(0), 1));
        assert!(!r.ok());
    }

    /// Adaptive repetition: a 1 ms region runs 30 times, a 50 ms one five
    /// times when its spread is small, a 10 s one once (its warm-up run
    /// counts).
    #[test]
    fn repetition_follows_the_region_length() {
        let p = Protocol {
            adaptive: Some(Adaptive::default()),
            ..Default::default()
        };
        let count = |t: f64, jitter: f64| {
            let mut k = 0;
            let timing = time_by(&p, None, &mut || {
                k += 1;
                Ok(t * (1.0 + jitter * ((k % 3) as f64 - 1.0)))
            })
            .unwrap();
            (k, timing.samples.len())
        };
        assert_eq!(count(0.001, 0.0), (31, 30));
        assert_eq!(count(0.05, 0.01), (6, 5));
        assert_eq!(count(10.0, 0.0), (1, 1));
        // A 1 s region: two runs besides the warm-up.
        assert_eq!(count(1.0, 0.01), (3, 2));
        // A noisy 0.5 s region stops at five long runs' worth of time.
        assert_eq!(count(0.5, 0.3).1, 20);
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
        let t = time_after(&exe, &p, None).unwrap();
        assert_eq!((t.samples.len(), t.median), (3, 0.5));
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
