//! What this machine offers a loop nest: its caches (read from the
//! system) and its peak floating-point rate and memory bandwidth
//! (measured once by a short microbenchmark, built with the user's
//! compiler and flags, and cached in polytune's cache directory).
//!
//! The figures feed the analytic (roofline) estimate of a variant's time:
//! a variant's features say how many operations it performs and how many
//! bytes it moves through each level; the machine says how fast each can
//! go. They are characteristics of the machine *as the compiler targets
//! it*: peak compute comes from the vector width the flags enable
//! (`-march=native` on an AVX-512 machine, plain SSE2 without it).

use super::build::Recipe;
use super::compiler::Compiler;
use super::confine::Limits;
use super::runner;
use super::scratch::Scratch;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why the machine's figures could not be had.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    #[error("the machine's microbenchmark did not build: {0}")]
    Build(String),
    #[error("the machine's microbenchmark failed: {0}")]
    Run(String),
    #[error("the machine's microbenchmark printed no figures: {0:?}")]
    Output(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The data caches a core sees, in bytes (0: the level does not exist or
/// is not reported).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Caches {
    pub l1: u64,
    pub l2: u64,
    pub l3: u64,
    /// The cache line.
    pub line: u64,
}

impl Default for Caches {
    /// A common x86 core's (32 KiB, 512 KiB, 16 MiB, 64-byte lines): what
    /// is assumed where the system does not say.
    fn default() -> Caches {
        Caches {
            l1: 32 << 10,
            l2: 512 << 10,
            l3: 16 << 20,
            line: 64,
        }
    }
}

impl Caches {
    /// This machine's, from `/sys/devices/system/cpu/cpu0/cache`; the
    /// defaults for the levels it does not report.
    pub fn this() -> Caches {
        Caches::read(Path::new("/sys/devices/system/cpu/cpu0/cache"))
    }

    /// The caches described under `dir` (`index*/{level,type,size,
    /// coherency_line_size}`, as Linux lays them out).
    pub(crate) fn read(dir: &Path) -> Caches {
        let mut found = Caches {
            l1: 0,
            l2: 0,
            l3: 0,
            line: 0,
        };
        let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
        for e in entries {
            let p = e.path();
            let field = |name: &str| {
                std::fs::read_to_string(p.join(name))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_default()
            };
            if field("type") == "Instruction" {
                continue;
            }
            let Some(size) = parse_size(&field("size")) else {
                continue;
            };
            match field("level").as_str() {
                "1" => found.l1 = size,
                "2" => found.l2 = size,
                "3" => found.l3 = size,
                _ => {}
            }
            if let Ok(line) = field("coherency_line_size").parse::<u64>() {
                found.line = found.line.max(line);
            }
        }
        let d = Caches::default();
        Caches {
            l1: if found.l1 > 0 { found.l1 } else { d.l1 },
            l2: if found.l2 > 0 { found.l2 } else { d.l2 },
            l3: if found.l3 > 0 { found.l3 } else { d.l3 },
            line: if found.line > 0 { found.line } else { d.line },
        }
    }
}

/// A size as sysfs writes it: `32K`, `512K`, `16384K`, `32M`, or bytes.
fn parse_size(s: &str) -> Option<u64> {
    let (digits, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let scale = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    Some(n * scale)
}

/// The machine's measured peaks, for `threads` threads of code built by
/// one compiler with its flags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Peaks {
    /// Double-precision floating-point operations per second (fused
    /// multiply-adds count two).
    pub flops: f64,
    /// Bytes per second a streaming loop moves to and from memory (read
    /// plus written, as STREAM's triad counts them).
    pub bandwidth: f64,
    pub threads: usize,
    /// What the figures were measured for: CPU, compiler version, flags.
    pub cpu: String,
    pub compiler: String,
    pub flags: Vec<String>,
}

impl Peaks {
    /// 1 GFLOP/s and 1 GB/s on 2 threads of a CPU `cpu` built by `cc`:
    /// the peaks of the tests' made-up tables.
    #[cfg(test)]
    pub(crate) fn unit() -> Peaks {
        Peaks {
            flops: 1e9,
            bandwidth: 1e9,
            threads: 2,
            cpu: "cpu".into(),
            compiler: "cc".into(),
            flags: Vec::new(),
        }
    }

    /// The figures cached under `cache` for this CPU, compiler, flags and
    /// thread count, or measured now (about a second) and cached. A cache
    /// that cannot be written is not an error: the figures are returned.
    pub fn measured_or_cached(
        compiler: &Compiler,
        threads: usize,
        cache: &Path,
    ) -> Result<Peaks, MachineError> {
        let cpu = super::store::Machine::this().cpu;
        let file = cache.join(cache_name(&cpu, compiler, threads));
        if let Some(p) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| serde_json::from_str::<Peaks>(&t).ok())
            .filter(|p| p.flops > 0.0 && p.bandwidth > 0.0)
        {
            return Ok(p);
        }
        let (flops, bandwidth) = measure(compiler, threads)?;
        let peaks = Peaks {
            flops,
            bandwidth,
            threads,
            cpu,
            compiler: compiler.version.clone(),
            flags: compiler.flags.clone(),
        };
        if std::fs::create_dir_all(cache).is_ok()
            && let Ok(text) = serde_json::to_string_pretty(&peaks)
        {
            // Written aside, then renamed: a concurrent reader sees the
            // old file or the whole new one.
            let tmp = file.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, &file).is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
        }
        Ok(peaks)
    }
}

/// polytune's cache directory: `$POLYTUNE_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/polytune`, else `~/.cache/polytune`; `None` without
/// a home.
pub fn cache_dir() -> Option<PathBuf> {
    let var = |n: &str| std::env::var_os(n).filter(|v| !v.is_empty());
    if let Some(d) = var("POLYTUNE_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("polytune"));
    }
    var("HOME").map(|h| PathBuf::from(h).join(".cache").join("polytune"))
}

/// The cache file of one (CPU, compiler, flags, threads).
fn cache_name(cpu: &str, compiler: &Compiler, threads: usize) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in [cpu, compiler.version.as_str(), &compiler.flags.join(" ")] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.update(threads.to_le_bytes());
    let d = h.finalize();
    let hex: String = d[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("machine-{hex}.json")
}

/// The microbenchmark: a compute loop of ten independent fused
/// multiply-add chains (more than a core's FMA latency times its FMA
/// pipes) on vectors as wide as the target's (GCC's and Clang's vector
/// extension: 8 doubles with AVX-512, 4 with AVX, else 2 — one wider
/// than the target's registers, GCC lowers through memory at a tenth of
/// the rate), named variables so that they stay in registers, and a
/// streaming triad over arrays far larger than any
/// cache; each timed in every thread at once, the best of several
/// repetitions. Prints `flops F` and `bandwidth B`.
const MICROBENCHMARK: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

#if defined(__AVX512F__)
#define WIDTH 8
#elif defined(__AVX__)
#define WIDTH 4
#else
#define WIDTH 2
#endif
typedef double vec __attribute__((vector_size(WIDTH * 8)));
#define CHAINS 10

static double compute(long reps, double seed) {
  double sum = 0;
#pragma omp parallel reduction(+ : sum)
  {
    vec ramp;
    for (int k = 0; k < WIDTH; k++) ramp[k] = k;
    vec b = 1.0 - 1e-9 * ramp, c = seed * 1e-7 + 0 * ramp;
    vec a0 = seed + ramp, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4;
    vec a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7, a8 = a0 + 8, a9 = a0 + 9;
    for (long r = 0; r < reps; r++) {
      a0 = a0 * b + c; a1 = a1 * b + c; a2 = a2 * b + c; a3 = a3 * b + c;
      a4 = a4 * b + c; a5 = a5 * b + c; a6 = a6 * b + c; a7 = a7 * b + c;
      a8 = a8 * b + c; a9 = a9 * b + c;
    }
    vec t = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;
    for (int k = 0; k < WIDTH; k++) sum += t[k];
  }
  return sum;
}

static void triad(double *a, const double *b, const double *c, long n, double s) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1L << 23;
  int threads = omp_get_max_threads();
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  if (!a || !b || !c) return 2;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) { a[i] = 0; b[i] = i * 1e-6; c[i] = 1.0 / (i + 1); }
  long reps = 1L << 16;
  double t = 0;
  while (reps < (1L << 34)) {
    double start = omp_get_wtime();
    volatile double keep = compute(reps, 0.5);
    (void)keep;
    t = omp_get_wtime() - start;
    if (t > 0.05) break;
    reps *= 4;
  }
  double best = t;
  for (int rep = 0; rep < 3; rep++) {
    double start = omp_get_wtime();
    volatile double keep = compute(reps, 0.25 + rep);
    (void)keep;
    double e = omp_get_wtime() - start;
    if (e < best) best = e;
  }
  double flops = 2.0 * WIDTH * CHAINS * (double)reps * threads / best;
  double bw = 0;
  for (int rep = 0; rep < 5; rep++) {
    double start = omp_get_wtime();
    triad(a, b, c, n, 1.5 + rep);
    double e = omp_get_wtime() - start;
    double r = 3.0 * sizeof(double) * n / e;
    if (r > bw) bw = r;
  }
  printf("flops %.6e\nbandwidth %.6e\ncheck %g\n", flops, bw, a[n / 2]);
  return 0;
}
"#;

/// Builds and runs the microbenchmark: (flops, bandwidth).
fn measure(compiler: &Compiler, threads: usize) -> Result<(f64, f64), MachineError> {
    let dir = Scratch::new("machine")?;
    let src = dir.path().join("peaks.c");
    let exe = dir.path().join("peaks");
    std::fs::write(&src, MICROBENCHMARK)?;
    let built = Recipe::new(compiler.clone(), &src).build(&src, &exe, true, &[]);
    if !built.ok {
        return Err(MachineError::Build(built.stderr));
    }
    // Arrays four times the last-level cache, at least 64 MiB each: the
    // triad streams from memory.
    let elements = (Caches::this().l3 * 4).max(64 << 20) / 8;
    let arg = elements.to_string();
    let limits = Limits::new(Duration::from_secs(60), None);
    let run = runner::run(&exe, &[&arg], threads, &limits)?;
    if !run.ok() {
        return Err(MachineError::Run(format!("{:?}: {}", run.exit, run.stderr)));
    }
    parse_figures(&run.stdout).ok_or(MachineError::Output(run.stdout))
}

/// `flops F` and `bandwidth B` from the microbenchmark's output.
fn parse_figures(out: &str) -> Option<(f64, f64)> {
    let value = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v > 0.0)
    };
    Some((value("flops ")?, value("bandwidth ")?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::compiler::Family;

    #[test]
    fn sizes_read_as_sysfs_writes_them() {
        assert_eq!(parse_size("32K"), Some(32 << 10));
        assert_eq!(parse_size("16384K"), Some(16 << 20));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("big"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn caches_are_read_from_a_sysfs_layout() {
        let dir = tempfile::tempdir().unwrap();
        let level = |i: usize, level: &str, kind: &str, size: &str| {
            let d = dir.path().join(format!("index{i}"));
            std::fs::create_dir(&d).unwrap();
            for (f, v) in [
                ("level", level),
                ("type", kind),
                ("size", size),
                ("coherency_line_size", "64"),
            ] {
                std::fs::write(d.join(f), format!("{v}\n")).unwrap();
            }
        };
        level(0, "1", "Data", "48K");
        level(1, "1", "Instruction", "32K");
        level(2, "2", "Unified", "1024K");
        let c = Caches::read(dir.path());
        assert_eq!(c.l1, 48 << 10, "the data cache, not the instruction one");
        assert_eq!(c.l2, 1 << 20);
        assert_eq!(
            c.l3,
            Caches::default().l3,
            "an unreported level: the default"
        );
        assert_eq!(c.line, 64);
        // This machine's: every level positive, ordered.
        let this = Caches::this();
        assert!(this.l1 > 0 && this.l1 <= this.l2 && this.l2 <= this.l3.max(this.l2));
    }

    #[test]
    fn figures_are_parsed_and_nonsense_refused() {
        assert_eq!(
            parse_figures("flops 1.5e10\nbandwidth 2.0e10\ncheck 3\n"),
            Some((1.5e10, 2.0e10))
        );
        assert_eq!(parse_figures("flops 1.5e10\n"), None);
        assert_eq!(parse_figures("flops nan\nbandwidth 1\n"), None);
        assert_eq!(parse_figures("flops -1\nbandwidth 1\n"), None);
    }

    /// The microbenchmark runs, gives figures in a plausible range for
    /// any machine polytune runs on, and the second call reads the cache.
    #[test]
    fn peaks_are_measured_then_cached() {
        let Ok(gcc) = Compiler::detect(Family::Gcc, None) else {
            panic!("gcc is needed (scripts/setup.sh installs it)");
        };
        let cache = tempfile::tempdir().unwrap();
        let p = Peaks::measured_or_cached(&gcc, 1, cache.path()).unwrap();
        // 1 GFLOP/s .. 1 TFLOP/s on one thread; 0.5 .. 1000 GB/s.
        assert!(p.flops > 1e9 && p.flops < 1e12, "{p:?}");
        assert!(p.bandwidth > 5e8 && p.bandwidth < 1e12, "{p:?}");
        let files: Vec<_> = std::fs::read_dir(cache.path()).unwrap().flatten().collect();
        assert_eq!(files.len(), 1, "one cache file, no temporary left");
        // A planted figure in the cache is what the next call returns:
        // the microbenchmark is not run again.
        let planted = Peaks {
            flops: 123.0,
            ..p.clone()
        };
        std::fs::write(files[0].path(), serde_json::to_string(&planted).unwrap()).unwrap();
        let again = Peaks::measured_or_cached(&gcc, 1, cache.path()).unwrap();
        assert_eq!(again.flops, 123.0);
    }
}
