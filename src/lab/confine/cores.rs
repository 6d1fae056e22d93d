//! Sets of CPU cores, named as `taskset --cpu-list` names them (`0`,
//! `2-3`, `0,4-7`): the cores the timed runs of a campaign are confined
//! to (`collect --timing-cores`), and the others, which its compilers get.

use std::fmt;
use std::str::FromStr;

/// The largest core number plus one that a set can hold (Linux's
/// `CPU_SETSIZE`).
pub(crate) const MAX_CORES: usize = 1024;

/// A set of CPU cores.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cores {
    bits: [u64; MAX_CORES / 64],
}

/// A core list that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid core list `{text}`: {reason}\n  help: name cores as taskset does, e.g. `1`, `2-3` or `0,4-7` (see `nproc`, or `taskset -pc $$` for the cores you may use)"
)]
pub struct CoresError {
    pub text: String,
    pub reason: String,
}

impl Cores {
    /// No core.
    pub const fn none() -> Cores {
        Cores {
            bits: [0; MAX_CORES / 64],
        }
    }

    pub fn insert(&mut self, core: usize) {
        self.bits[core / 64] |= 1 << (core % 64);
    }

    pub(crate) fn contains(&self, core: usize) -> bool {
        core < MAX_CORES && self.bits[core / 64] & (1 << (core % 64)) != 0
    }

    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The cores, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..MAX_CORES).filter(|&c| self.contains(c))
    }

    /// The cores of `self` that are not in `other`.
    pub fn without(&self, other: &Cores) -> Cores {
        let mut out = *self;
        for (w, o) in out.bits.iter_mut().zip(&other.bits) {
            *w &= !o;
        }
        out
    }

    /// Whether every core of `self` is in `other`.
    #[cfg(test)]
    pub(crate) fn is_subset(&self, other: &Cores) -> bool {
        self.without(other).is_empty()
    }

    /// The cores polytune may run on (its affinity).
    pub fn allowed() -> std::io::Result<Cores> {
        let set = rustix::thread::sched_getaffinity(None)?;
        let mut out = Cores::none();
        for c in 0..MAX_CORES.min(rustix::thread::CpuSet::MAX_CPU) {
            if set.is_set(c) {
                out.insert(c);
            }
        }
        Ok(out)
    }

    /// Confines the calling thread, and every program it starts from now
    /// on (a child inherits the affinity of the thread that forks it), to
    /// these cores.
    pub fn pin_this_thread(&self) -> std::io::Result<()> {
        let mut set = rustix::thread::CpuSet::new();
        for c in self.iter() {
            set.set(c);
        }
        rustix::thread::sched_setaffinity(None, &set)?;
        Ok(())
    }
}

impl fmt::Debug for Cores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cores({self})")
    }
}

impl fmt::Display for Cores {
    /// The list form, ranges joined: `0,2-3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let all: Vec<usize> = self.iter().collect();
        let mut parts = Vec::new();
        let mut k = 0;
        while k < all.len() {
            let mut end = k;
            while end + 1 < all.len() && all[end + 1] == all[end] + 1 {
                end += 1;
            }
            parts.push(if end == k {
                all[k].to_string()
            } else {
                format!("{}-{}", all[k], all[end])
            });
            k = end + 1;
        }
        f.write_str(&parts.join(","))
    }
}

impl FromStr for Cores {
    type Err = CoresError;

    fn from_str(text: &str) -> Result<Cores, CoresError> {
        let bad = |reason: String| CoresError {
            text: text.to_string(),
            reason,
        };
        let core = |s: &str| -> Result<usize, CoresError> {
            let n: usize = s
                .trim()
                .parse()
                .map_err(|_| bad(format!("`{}` is not a core number", s.trim())))?;
            if n >= MAX_CORES {
                return Err(bad(format!("core {n} is beyond {}", MAX_CORES - 1)));
            }
            Ok(n)
        };
        let mut out = Cores::none();
        for part in text.split(',') {
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (core(a)?, core(b)?);
                    if a > b {
                        return Err(bad(format!("the range `{}` is empty", part.trim())));
                    }
                    (a..=b).for_each(|c| out.insert(c));
                }
                None => out.insert(core(part)?),
            }
        }
        if out.is_empty() {
            return Err(bad("no core".into()));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_and_print_as_taskset_names_them() {
        let c: Cores = "0,2-3, 7".parse().unwrap();
        assert_eq!(c.iter().collect::<Vec<_>>(), [0, 2, 3, 7]);
        assert_eq!(c.to_string(), "0,2-3,7");
        assert_eq!(c.len(), 4);
        assert_eq!("5".parse::<Cores>().unwrap().to_string(), "5");
        for bad in ["", "x", "3-1", "1,,2", "-1", "1024", "0-"] {
            let e = bad.parse::<Cores>().unwrap_err();
            assert!(e.to_string().contains("invalid core list"), "{bad}: {e}");
        }
    }

    #[test]
    fn sets_subtract_and_compare() {
        let all: Cores = "0-3".parse().unwrap();
        let timing: Cores = "1".parse().unwrap();
        let rest = all.without(&timing);
        assert_eq!(rest.to_string(), "0,2-3");
        assert!(timing.is_subset(&all));
        assert!(!all.is_subset(&timing));
        assert!(timing.without(&all).is_empty());
    }

    #[test]
    fn this_process_may_run_somewhere() {
        let allowed = Cores::allowed().unwrap();
        // std's count is the affinity's, or less under a CPU quota.
        assert!(allowed.len() >= std::thread::available_parallelism().unwrap().get());
    }

    #[test]
    fn a_pinned_thread_runs_and_starts_programs_on_its_cores() {
        let allowed = Cores::allowed().unwrap();
        let one = allowed.iter().last().unwrap();
        let mut only = Cores::none();
        only.insert(one);
        // In a thread of its own: the test's thread keeps its affinity.
        let seen = std::thread::spawn(move || {
            only.pin_this_thread().unwrap();
            let mine = Cores::allowed().unwrap();
            let child = std::process::Command::new("sh")
                .args(["-c", "grep Cpus_allowed_list /proc/self/status"])
                .output()
                .unwrap();
            (mine, String::from_utf8_lossy(&child.stdout).into_owned())
        })
        .join()
        .unwrap();
        assert_eq!(seen.0, only);
        assert!(
            seen.1.trim().ends_with(&format!("\t{one}")),
            "the child's affinity: {}",
            seen.1
        );
    }
}
