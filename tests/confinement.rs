//! The programs polytune runs cannot hang it, outlive it, flood its
//! memory or leave files behind: the reproducers of the robustness
//! findings (tests/fixtures/robustness), each run through the CLI with a
//! fresh TMPDIR, which must be empty afterwards, and with no process left
//! whose command line names it.

mod common;

use common::root;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/robustness").join(name)
}

/// Processes whose command line mentions `dir`.
fn processes_naming(dir: &Path) -> Vec<String> {
    let needle = dir.to_str().unwrap().as_bytes().to_vec();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if e.file_name()
            .to_str()
            .is_none_or(|n| n.parse::<u32>().is_err())
        {
            continue;
        }
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline"))
            && cmd.windows(needle.len()).any(|w| w == needle.as_slice())
        {
            found.push(format!(
                "{}: {}",
                e.file_name().to_string_lossy(),
                String::from_utf8_lossy(&cmd).replace('\0', " ")
            ));
        }
    }
    found
}

/// A fresh temporary directory for one polytune run.
struct Sandbox {
    tmp: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        Sandbox {
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    fn command(&self, prefix: &[&str], args: &[&str]) -> Command {
        let bin = env!("CARGO_BIN_EXE_polytune");
        let mut c = match prefix.split_first() {
            Some((p, rest)) => {
                let mut c = Command::new(p);
                c.args(rest).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        c.args(args)
            .env("TMPDIR", self.tmp.path())
            .current_dir(root())
            .stdin(Stdio::null());
        c
    }

    /// Runs polytune (behind `prefix`, e.g. prlimit) and checks that it
    /// finished within `within`, failed, and left nothing behind.
    fn fails(&self, prefix: &[&str], args: &[&str], within: Duration) -> String {
        let start = Instant::now();
        let out: Output = self.command(prefix, args).output().unwrap();
        let took = start.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(took < within, "took {took:?} (limit {within:?}): {stderr}");
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        self.is_clean();
        stderr
    }

    fn is_clean(&self) {
        let left: Vec<_> = std::fs::read_dir(self.tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "left in TMPDIR: {left:?}");
        let procs = processes_naming(self.tmp.path());
        assert!(procs.is_empty(), "left running: {procs:#?}");
    }
}

fn measure(file: &str, timeout: &str) -> Vec<String> {
    let f = fixture(file);
    [
        "measure",
        f.to_str().unwrap(),
        "--size",
        "mini",
        "--timeout",
        timeout,
    ]
    .map(String::from)
    .to_vec()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn a_child_that_keeps_the_pipe_open_does_not_hang_measure() {
    let s = Sandbox::new();
    let args = measure("r2_fork_child_keeps_pipe.c", "5");
    let err = s.fails(&[], &strs(&args), Duration::from_secs(12));
    assert!(
        err.contains("left 1 process(es) running after it exited"),
        "{err}"
    );
}

#[test]
fn children_with_closed_descriptors_are_killed() {
    let s = Sandbox::new();
    let args = measure("r2b_fork_child_detached_fds.c", "5");
    let err = s.fails(&[], &strs(&args), Duration::from_secs(12));
    assert!(err.contains("left 1 process(es) running"), "{err}");
}

#[test]
fn a_setsid_child_does_not_survive_the_timeout() {
    let s = Sandbox::new();
    let args = measure("r2c_setsid_child_then_hang.c", "3");
    let err = s.fails(&[], &strs(&args), Duration::from_secs(10));
    assert!(err.contains("timed out"), "{err}");
}

/// Under a 1 GiB address-space limit polytune must end normally (an
/// unbounded buffer aborts on a failed allocation, exit 134).
fn flood_costs_bounded_memory(fixture: &str) {
    let s = Sandbox::new();
    // The fixture floods when it has an argument.
    let mut args = measure(fixture, "3");
    args.extend(["--run-args".into(), "flood".into()]);
    let err = s.fails(
        &["prlimit", "--as=1073741824", "--"],
        &strs(&args),
        Duration::from_secs(12),
    );
    assert!(err.contains("timed out"), "{err}");
}

#[test]
fn a_stdout_flood_costs_bounded_memory() {
    flood_costs_bounded_memory("r3_flood_stdout.c");
}

#[test]
fn a_stderr_flood_costs_bounded_memory() {
    flood_costs_bounded_memory("r3b_flood_stderr.c");
}

#[test]
fn characterize_has_a_deadline() {
    let s = Sandbox::new();
    // (A program that hangs after its kernel is characterized: the
    // simulated run stops after the kernel.)
    let f = fixture("hang_before_kernel.c");
    let err = s.fails(
        &[],
        &[
            "characterize",
            f.to_str().unwrap(),
            "--size",
            "mini",
            "--timeout",
            "3",
        ],
        Duration::from_secs(10),
    );
    assert!(
        err.contains("reached none of its SCoP regions within 3 s under valgrind")
            && err.contains("help: raise the time limit")
            && err.contains("the time limit is --timeout"),
        "{err}"
    );
}

#[test]
fn optimize_no_run_has_a_deadline() {
    let s = Sandbox::new();
    let f = fixture("hang_before_kernel.c");
    let err = s.fails(
        &[],
        &[
            "optimize",
            f.to_str().unwrap(),
            "--no-run",
            "--timeout",
            "3",
        ],
        Duration::from_secs(10),
    );
    assert!(
        err.contains("characterizing") && err.contains("within 3 s"),
        "{err}"
    );
}

#[test]
fn collect_passes_a_hanging_kernel() {
    let s = Sandbox::new();
    let kernels = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("r1_hang.c"), kernels.path().join("r1_hang.c")).unwrap();
    let db = kernels.path().join("runs.sqlite");
    let start = Instant::now();
    let out = s
        .command(
            &[],
            &[
                "collect",
                kernels.path().to_str().unwrap(),
                "--db",
                db.to_str().unwrap(),
                "--size",
                "mini",
                "--timeout",
                "3",
            ],
        )
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(start.elapsed() < Duration::from_secs(15), "{err}");
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("no features") && err.contains("within 3 s"),
        "{err}"
    );
    assert!(err.contains("(timeout)"), "{err}");
    s.is_clean();
}

#[test]
fn a_terminated_collect_removes_its_scratch_directory() {
    use std::os::unix::process::ExitStatusExt;
    let s = Sandbox::new();
    let kernels = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("r1_hang.c"), kernels.path().join("r1_hang.c")).unwrap();
    let db = kernels.path().join("runs.sqlite");
    let mut child = s
        .command(
            &[],
            &[
                "collect",
                kernels.path().to_str().unwrap(),
                "--db",
                db.to_str().unwrap(),
                "--size",
                "mini",
                "--timeout",
                "60",
            ],
        )
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the valgrind run in the scratch directory.
    let start = Instant::now();
    while processes_naming(s.tmp.path()).is_empty() {
        assert!(start.elapsed() < Duration::from_secs(10), "nothing started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(15), "{status}");
    s.is_clean();
}

#[test]
fn the_memory_limit_applies_to_the_measured_program() {
    let s = Sandbox::new();
    let mut args = measure("allocates_256m.c", "10");
    args.extend(["--memory-limit".into(), "128M".into()]);
    let err = s.fails(&[], &strs(&args), Duration::from_secs(12));
    assert!(
        err.contains("exit code 3: cannot allocate 256 MiB"),
        "{err}"
    );
    let bad = s
        .command(&[], &["measure", "x.c", "--memory-limit", "lots"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a memory size"));
}

#[test]
fn an_output_longer_than_the_cap_is_not_verified() {
    use polytune::lab::compiler::Compiler;
    use polytune::lab::runner::Protocol;
    use polytune::lab::verify::{Bench, Status};
    let dir = tempfile::tempdir().unwrap();
    let b = Bench {
        compiler: Compiler::detect(
            polytune::lab::compiler::Family::Gcc,
            Some(vec!["-O1".into()]),
        )
        .unwrap(),
        size: polytune::lab::size::Size::Mini,
        include: vec![common::include_dir()],
        protocol: Protocol {
            timeout: Duration::from_secs(10),
            ..Protocol::default()
        },
        workdir: dir.path().to_path_buf(),
    };
    let (m, dump) = b.reference(&fixture("dump_then_flood.c"), false);
    assert_eq!(m.status, Status::WrongOutput, "{}", m.detail);
    assert!(m.detail.contains("cannot be verified"), "{}", m.detail);
    assert!(dump.is_none());
}

#[test]
fn failing_measure_and_characterize_leave_no_directory() {
    let s = Sandbox::new();
    let f = root().join("tests/fixtures/broken/compile_error_scop.c");
    let f = f.to_str().unwrap();
    let err = s.fails(
        &[],
        &["measure", f, "--size", "mini"],
        Duration::from_secs(10),
    );
    assert!(err.contains("does not build"), "{err}");
    let err = s.fails(
        &[],
        &["characterize", f, "--size", "mini"],
        Duration::from_secs(10),
    );
    assert!(err.contains("compiling"), "{err}");
}
