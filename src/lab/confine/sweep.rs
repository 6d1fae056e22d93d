//! Orphans found and killed: every process whose environment carries a
//! confined program's token, found in /proc.

use super::TOKEN_VAR;
use rustix::process::{Pid, Signal, WaitOptions};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// One line of /proc/PID/stat: state, parent, process group.
struct ProcStat {
    pid: i32,
    state: u8,
    ppid: i32,
    pgrp: i32,
}

fn processes() -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        // The command name may contain anything; the fields follow its
        // last parenthesis.
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut f = rest.split_whitespace();
        let state = f.next()?.bytes().next()?;
        let ppid = f.next()?.parse().ok()?;
        let pgrp = f.next()?.parse().ok()?;
        Some(ProcStat {
            pid,
            state,
            ppid,
            pgrp,
        })
    })
    .collect()
}

/// Whether the environment of `pid` has the token variable starting with
/// `prefix`.
fn has_token(pid: i32, prefix: &str) -> bool {
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let want = format!("{TOKEN_VAR}={prefix}");
    env.split(|&b| b == 0)
        .any(|v| v.starts_with(want.as_bytes()))
}

/// Kills and reaps every process of the groups `pgids` and every orphan
/// re-parented to polytune whose token starts with `token`, until none is
/// left (or two seconds passed: a process in uninterruptible sleep).
/// Returns how many distinct processes were found alive.
pub(super) fn sweep(pgids: &[i32], token: &str) -> usize {
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let mut alive = HashSet::new();
    let start = Instant::now();
    loop {
        let mut pending = false;
        for p in processes() {
            let ours = pgids.contains(&p.pgrp) || (p.ppid == me && has_token(p.pid, token));
            if !ours || p.pid == me {
                continue;
            }
            pending = true;
            let Some(pid) = Pid::from_raw(p.pid) else {
                continue;
            };
            if p.state != b'Z' {
                alive.insert(p.pid);
                let _ = rustix::process::kill_process(pid, Signal::KILL);
            }
            if p.ppid == me {
                let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
            }
        }
        for &g in pgids {
            if let Some(g) = Pid::from_raw(g) {
                let _ = rustix::process::kill_process_group(g, Signal::KILL);
            }
        }
        if !pending || start.elapsed() > Duration::from_secs(2) {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    alive.len()
}
