//! `space --verify`: every distinct variant of a file's space built with
//! each compiler (OpenMP on), run once with `--dump` and compared with the
//! original's output built by the same compiler. The exhaustive check
//! behind "never a wrong program", on one file.
//!
//! [`verify`] prints nothing: it reports progress as [`Event`]s and
//! returns a [`Report`].

use crate::engine::space::Variant;
use crate::lab::compiler::Compiler;
use crate::lab::dump::Dump;
use crate::lab::runner::Protocol;
use crate::lab::scratch::Scratch;
use crate::lab::verify::{Bench, Status};
use rayon::iter::{IntoParallelRefIterator, ParallelIterator};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// How the variants are built and run.
#[derive(Debug, Clone)]
pub struct Setup {
    pub compilers: Vec<Compiler>,
    pub size: crate::lab::size::Size,
    pub include: Vec<PathBuf>,
    /// Threads and limits of every run (nothing is timed).
    pub protocol: Protocol,
    /// Builds and runs at once.
    pub jobs: usize,
}

/// What the verification is doing, as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `builds` variant builds (variants × compilers) are to be checked.
    Planned { builds: usize },
    /// The original was built and run with `compiler`.
    Original { compiler: String, status: Status },
    /// `done` of `total` builds are checked, the last being `variant`
    /// with `compiler`.
    Checked {
        done: usize,
        total: usize,
        variant: usize,
        compiler: String,
        status: Status,
    },
}

/// The builds of one compiler, by outcome.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Counts {
    pub ok: usize,
    pub compile_error: usize,
    pub crash: usize,
    pub timeout: usize,
    pub wrong_output: usize,
}

impl Counts {
    fn add(&mut self, s: Status) {
        match s {
            Status::Ok => self.ok += 1,
            Status::CompileError => self.compile_error += 1,
            Status::Crash => self.crash += 1,
            Status::Timeout => self.timeout += 1,
            Status::WrongOutput => self.wrong_output += 1,
        }
    }
}

/// One compiler's verdicts.
#[derive(Debug, Clone, Serialize)]
pub struct PerCompiler {
    pub compiler: String,
    pub version: String,
    pub flags: Vec<String>,
    /// The original's own run (its output is the reference).
    pub original: Status,
    pub original_detail: String,
    pub counts: Counts,
}

/// A variant that failed with a compiler.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// Its index in the space (`space --emit` writes it as `<name>.v<k>.c`).
    pub variant: usize,
    /// Its canonical configuration, readable form.
    pub config: String,
    pub compiler: String,
    pub status: Status,
    /// The first lines of why (compiler message, signal, first differing value).
    pub detail: String,
}

/// The verification of a file's space.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub file: PathBuf,
    pub size: crate::lab::size::Size,
    pub threads: usize,
    pub variants: usize,
    /// Variant builds checked (variants × compilers whose original runs).
    pub builds: usize,
    pub ok: usize,
    pub compilers: Vec<PerCompiler>,
    pub failures: Vec<Failure>,
    pub seconds: f64,
}

impl Report {
    /// Every original ran and every variant matched it.
    pub fn all_ok(&self) -> bool {
        self.compilers.iter().all(|c| c.original == Status::Ok) && self.ok == self.builds
    }
}

/// At most this much of a failure's detail is kept.
const DETAIL: usize = 300;

fn short(detail: &str) -> String {
    let d = detail.trim();
    match d.char_indices().nth(DETAIL) {
        Some((i, _)) => format!("{}...", &d[..i]),
        None => d.to_string(),
    }
}

/// Builds every variant of `variants` (the space of `file`) with every
/// compiler and compares its output with the original's.
pub fn verify(
    file: &Path,
    variants: &[Variant],
    setup: &Setup,
    progress: &mut (dyn FnMut(Event) + Send),
) -> std::io::Result<Report> {
    let t = Instant::now();
    let work = Scratch::new("verify")?;
    let stem = "variant";
    for (k, v) in variants.iter().enumerate() {
        std::fs::write(work.path().join(format!("{stem}{k}.c")), &v.text)?;
    }
    let bench = |c: &Compiler| Bench {
        compiler: c.clone(),
        size: setup.size,
        include: setup.include.clone(),
        protocol: setup.protocol,
        workdir: work.path().to_path_buf(),
    };
    // The references, one per compiler.
    let mut per: Vec<PerCompiler> = Vec::new();
    let mut references: Vec<(usize, Dump)> = Vec::new();
    for (i, c) in setup.compilers.iter().enumerate() {
        let (m, dump) = bench(c).measure(file, &format!("original-{i}"), None, false, false);
        progress(Event::Original {
            compiler: c.name().to_string(),
            status: m.status,
        });
        per.push(PerCompiler {
            compiler: c.name().to_string(),
            version: c.version.clone(),
            flags: c.flags.clone(),
            original: m.status,
            original_detail: short(&m.detail),
            counts: Counts::default(),
        });
        if let (Status::Ok, Some(d)) = (m.status, dump) {
            references.push((i, d));
        }
    }
    let jobs: Vec<(usize, usize)> = references
        .iter()
        .enumerate()
        .flat_map(|(r, _)| (0..variants.len()).map(move |v| (r, v)))
        .collect();
    let total = jobs.len();
    progress(Event::Planned { builds: total });
    let shared = Mutex::new((0usize, progress));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(setup.jobs.max(1))
        .build()
        .map_err(std::io::Error::other)?;
    let results: Vec<(usize, usize, Status, String)> = pool.install(|| {
        jobs.par_iter()
            .map(|&(r, v)| {
                let (ci, reference) = &references[r];
                let c = &setup.compilers[*ci];
                let src = work.path().join(format!("{stem}{v}.c"));
                let exe = format!("{stem}{v}-{ci}");
                let (m, _) = bench(c).measure(&src, &exe, Some(reference), true, false);
                // The executables add up on a large space.
                let _ = std::fs::remove_file(work.path().join(&exe));
                let mut g = shared
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                g.0 += 1;
                let done = g.0;
                (g.1)(Event::Checked {
                    done,
                    total,
                    variant: v,
                    compiler: c.name().to_string(),
                    status: m.status,
                });
                (*ci, v, m.status, m.detail)
            })
            .collect()
    });
    let mut failures = Vec::new();
    for (ci, v, status, detail) in results {
        per[ci].counts.add(status);
        if status != Status::Ok {
            failures.push(Failure {
                variant: v,
                config: variants[v].configs[0].to_string(),
                compiler: setup.compilers[ci].name().to_string(),
                status,
                detail: short(&detail),
            });
        }
    }
    let ok = per.iter().map(|c| c.counts.ok).sum();
    Ok(Report {
        file: file.to_path_buf(),
        size: setup.size,
        threads: setup.protocol.threads,
        variants: variants.len(),
        builds: total,
        ok,
        compilers: per,
        failures,
        seconds: t.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_details() {
        let mut c = Counts::default();
        for s in [Status::Ok, Status::Ok, Status::WrongOutput, Status::Timeout] {
            c.add(s);
        }
        assert_eq!((c.ok, c.wrong_output, c.timeout, c.crash), (2, 1, 1, 0));
        assert_eq!(short("  a\n"), "a");
        let long = "é".repeat(DETAIL + 5);
        assert_eq!(short(&long).chars().count(), DETAIL + 3);
    }
}
