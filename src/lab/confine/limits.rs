//! What a confined program may use: its deadline, its memory and its
//! cores.

use super::{Cores, STDERR_CAP, STDOUT_CAP, TOOL_TIMEOUT};
use std::time::Duration;

/// What a confined program may use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub timeout: Duration,
    /// Address-space limit in bytes (`None`: only polytune's own limit).
    pub memory: Option<u64>,
    pub stdout_cap: usize,
    pub stderr_cap: usize,
    /// The cores it runs on (`taskset`); `None`: wherever polytune may.
    pub cores: Option<Cores>,
}

impl Limits {
    /// A deadline and a memory limit, with the default output caps.
    pub fn new(timeout: Duration, memory: Option<u64>) -> Limits {
        Limits {
            timeout,
            memory,
            stdout_cap: STDOUT_CAP,
            stderr_cap: STDERR_CAP,
            cores: None,
        }
    }

    /// Limits for compilers and other tools: [`TOOL_TIMEOUT`] and the
    /// default memory limit.
    pub fn tool() -> Limits {
        Limits::new(TOOL_TIMEOUT, Some(default_memory_limit()))
    }
}

/// Half of the machine's memory: the default address-space limit.
pub fn default_memory_limit() -> u64 {
    let s = rustix::system::sysinfo();
    let total = (s.totalram as u64).saturating_mul(u64::from(s.mem_unit.max(1)));
    (total / 2).max(256 << 20)
}

/// An address-space limit as given on the command line: `4G`, `512M`,
/// `1073741824`, or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimit(pub Option<u64>);

impl std::str::FromStr for MemoryLimit {
    type Err = String;
    fn from_str(s: &str) -> Result<MemoryLimit, String> {
        let t = s.trim();
        if matches!(t.to_ascii_lowercase().as_str(), "none" | "unlimited") {
            return Ok(MemoryLimit(None));
        }
        let bad = || format!("`{s}` is not a memory size (expected e.g. 4G, 512M, or none)");
        let lower = t.to_ascii_lowercase();
        let body = lower
            .strip_suffix("ib")
            .or_else(|| lower.strip_suffix('b'))
            .unwrap_or(&lower);
        let (digits, shift) = match body.chars().last() {
            Some('k') => (&body[..body.len() - 1], 10),
            Some('m') => (&body[..body.len() - 1], 20),
            Some('g') => (&body[..body.len() - 1], 30),
            Some('t') => (&body[..body.len() - 1], 40),
            _ => (body, 0),
        };
        let n: u64 = digits.trim().parse().map_err(|_| bad())?;
        let bytes = n.checked_mul(1u64 << shift).ok_or_else(bad)?;
        if bytes < (16 << 20) {
            return Err(format!(
                "a memory limit of {s} is too small to run a program (at least 16M)"
            ));
        }
        Ok(MemoryLimit(Some(bytes)))
    }
}

/// `1.5 GiB`, `512 MiB`.
pub fn show_bytes(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
    } else {
        format!("{} MiB", b >> 20)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_limits_parse() {
        let p = |s: &str| s.parse::<MemoryLimit>().map(|m| m.0);
        assert_eq!(p("4G"), Ok(Some(4 << 30)));
        assert_eq!(p("512MiB"), Ok(Some(512 << 20)));
        assert_eq!(p("1073741824"), Ok(Some(1 << 30)));
        assert_eq!(p("none"), Ok(None));
        assert!(p("lots").is_err());
        assert!(p("1k").is_err());
        assert!(default_memory_limit() >= 256 << 20);
    }
}
