//! `polytune compare`: polytune beside the other polyhedral optimizers
//! on the same kernels, machine and run. Each kernel is built with gcc
//! (the baseline), GCC's Graphite (alone and with its parallelizer),
//! Clang's Polly (alone and parallel) and, from the learned selection's
//! program, polytune; every build's output is compared with the
//! baseline's, then the correct ones are timed in alternation (one run of
//! each per round, so that load on a shared machine hits them alike) and
//! compared by their medians.
//!
//! [`compare`] prints nothing: it reports progress as [`Event`]s and
//! returns a [`Report`].

use crate::app::select::{self, select};
use crate::frontend::{self, Options};
use crate::lab::compiler::{Compiler, Family};
use crate::lab::dump::Dump;
use crate::lab::runner::{Protocol, interleaved, median};
use crate::lab::scratch::Scratch;
use crate::lab::verify::{Bench, Status};
use crate::learn::dataset::Dataset;
use crate::learn::saved::SavedModel;
use crate::learn::search::transfer::Landscapes;
use crate::learn::{Kind, Target};
use std::path::{Path, PathBuf};

mod report;
pub use report::*;

/// Where polytune's models come from.
pub enum Models {
    /// Trained models, the same for every kernel, and the landscapes
    /// shipped beside them (Bayesian optimization's transfer prior).
    Fixed(Vec<SavedModel>, Option<Landscapes>),
    /// Trained for each kernel on the dataset without it, so that every
    /// kernel is a new program to the models that choose for it.
    LeaveOneOut {
        dataset: Box<Dataset>,
        kinds: Vec<Kind>,
        target: Target,
    },
}

/// How the contenders are built, run and timed.
pub struct Setup {
    /// The baseline: gcc with the user's flags (`-O3 -march=native`).
    pub gcc: Compiler,
    /// Clang, for Polly (`Err`: why there is none).
    pub clang: Result<Compiler, String>,
    /// polytune's learned selection; its compiler also builds the program
    /// it chooses.
    pub select: select::Setup,
    pub models: Models,
    pub size: crate::lab::size::Size,
    pub include: Vec<PathBuf>,
    pub protocol: Protocol,
    /// Alternating rounds of the timing.
    pub rounds: usize,
}

/// The build of one contender.
struct Plan {
    info: Contender,
    compiler: Option<Compiler>,
    /// polytune: built from the selection's program, not the kernel.
    learned: bool,
}

fn with_flags(c: &Compiler, extra: &[&str]) -> Compiler {
    let mut c = c.clone();
    c.flags.extend(extra.iter().map(|s| s.to_string()));
    c
}

/// Whether `c` builds a trivial program with its flags: Graphite needs a
/// gcc built with isl, Polly a clang built with it.
fn probe(c: &Compiler, openmp: bool, dir: &Path) -> Result<(), String> {
    let src = dir.join("probe.c");
    std::fs::write(
        &src,
        "int main(void) { static double a[64]; for (int i = 1; i < 64; i++) a[i] = a[i - 1] + 1; return a[63] > 0 ? 0 : 1; }\n",
    )
    .map_err(|e| e.to_string())?;
    let exe = dir.join("probe");
    let r = c.compile(&src, &exe, crate::lab::size::Size::Mini, &[], openmp);
    let _ = std::fs::remove_file(&exe);
    if r.ok {
        Ok(())
    } else {
        Err(r
            .stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("it does not build a trivial program")
            .trim()
            .to_string())
    }
}

fn plans(setup: &Setup, dir: &Path) -> Vec<Plan> {
    let threads = setup.protocol.threads.to_string();
    let par = format!("-ftree-parallelize-loops={threads}");
    let gcc = &setup.gcc;
    let mut out: Vec<(String, Result<Compiler, String>, bool)> = vec![
        ("gcc -O3".into(), Ok(gcc.clone()), false),
        (
            "graphite".into(),
            Ok(with_flags(gcc, &["-floop-nest-optimize"])),
            false,
        ),
        (
            "graphite-par".into(),
            Ok(with_flags(
                gcc,
                &["-floop-nest-optimize", "-floop-parallelize-all", &par],
            )),
            false,
        ),
        (
            "polly".into(),
            setup
                .clang
                .as_ref()
                .map(|c| with_flags(c, &["-mllvm", "-polly"]))
                .map_err(Clone::clone),
            false,
        ),
        (
            "polly-par".into(),
            setup
                .clang
                .as_ref()
                .map(|c| with_flags(c, &["-mllvm", "-polly", "-mllvm", "-polly-parallel"]))
                .map_err(Clone::clone),
            true,
        ),
    ];
    let mine = &setup.select.compiler;
    if mine.family == Family::Clang {
        out.push(("clang -O3".into(), Ok(mine.clone()), false));
    }
    let mut plans: Vec<Plan> = out
        .into_iter()
        .map(|(name, c, openmp)| {
            let c = c.and_then(|c| probe(&c, openmp, dir).map(|()| c));
            Plan {
                info: Contender {
                    name,
                    compiler: c.as_ref().map(|c| c.name().to_string()).unwrap_or_default(),
                    version: c.as_ref().map(|c| c.version.clone()).unwrap_or_default(),
                    flags: c.as_ref().map(|c| c.flags.clone()).unwrap_or_default(),
                    openmp,
                    available: c.is_ok(),
                    detail: c.as_ref().err().cloned().unwrap_or_default(),
                },
                compiler: c.ok(),
                learned: false,
            }
        })
        .collect();
    plans.push(Plan {
        info: Contender {
            name: if mine.family == Family::Gcc {
                "polytune".into()
            } else {
                format!("polytune-{}", mine.name())
            },
            compiler: mine.name().to_string(),
            version: mine.version.clone(),
            flags: mine.flags.clone(),
            openmp: true,
            available: true,
            detail: format!(
                "learned selection: strategy {}, budget {}",
                setup.select.strategy.name(),
                setup.select.shots
            ),
        },
        compiler: Some(mine.clone()),
        learned: true,
    });
    plans
}

fn first_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

/// The models that choose for `kernel`, and the other programs'
/// landscapes (with `--db`, the dataset's without the kernel, as its
/// models are trained).
fn models_for(
    models: &Models,
    kernel: &str,
) -> Result<(Vec<SavedModel>, Option<Landscapes>), String> {
    match models {
        Models::Fixed(m, l) => Ok((m.clone(), l.clone())),
        Models::LeaveOneOut {
            dataset,
            kinds,
            target,
        } => {
            let d = if dataset.kernels.iter().any(|k| k.name == kernel) {
                std::borrow::Cow::Owned(
                    dataset
                        .without_kernels(&[kernel.to_string()])
                        .map_err(|e| e.to_string())?,
                )
            } else {
                std::borrow::Cow::Borrowed(dataset.as_ref())
            };
            let trained = kinds
                .iter()
                .map(|&k| SavedModel::train(k, &d, *target).map_err(|e| e.to_string()))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((trained, Some(Landscapes::of_dataset(&d, None))))
        }
    }
}

/// The variant ranker for `kernel`: as given with fixed models; with
/// `leave_out` (the models trained without the kernel), without the
/// kernel's own measured variants (its shipped fit, of every kernel, is
/// then dropped and the ranker refitted).
fn ranker_for(
    leave_out: bool,
    ranker: Option<std::sync::Arc<crate::app::ranker::Shipped>>,
    kernel: &str,
) -> Option<std::sync::Arc<crate::app::ranker::Shipped>> {
    let shipped = ranker?;
    if !leave_out {
        return Some(shipped);
    }
    let Some(k) = shipped.table.kernels.iter().position(|n| n == kernel) else {
        return Some(shipped);
    };
    Some(std::sync::Arc::new(crate::app::ranker::Shipped {
        table: shipped.table.rows_where(|r| r.kernel != k),
        fitted: None,
    }))
}

/// Builds, verifies and times every contender on every kernel.
pub fn compare(
    files: &[PathBuf],
    setup: &Setup,
    progress: &mut dyn FnMut(Event),
) -> std::io::Result<Report> {
    let work = Scratch::new("compare")?;
    let plans = plans(setup, work.path());
    let rounds = setup.rounds.max(1);
    let mut kernels = Vec::new();
    for (n, file) in files.iter().enumerate() {
        let name = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("kernel")
            .to_string();
        progress(Event::Kernel {
            k: n + 1,
            n: files.len(),
            name: name.clone(),
            steps: plans.len() + rounds,
        });
        let dir = work.path().join(format!("k{n}"));
        crate::lab::scratch::subdir(&dir)?;
        kernels.push(one_kernel(file, &name, &dir, &plans, setup, progress)?);
        // The executables of a kernel are not needed any more.
        let _ = std::fs::remove_dir_all(&dir);
    }
    let geomean = plans
        .iter()
        .enumerate()
        .map(|(i, p)| Mean {
            contender: p.info.name.clone(),
            speedup: p.info.available.then(|| geomean(&kernels, i)).flatten(),
        })
        .collect();
    Ok(Report {
        size: setup.size,
        threads: setup.protocol.threads,
        rounds,
        contenders: plans.into_iter().map(|p| p.info).collect(),
        kernels,
        geomean,
    })
}

/// Contender `i`'s geometric mean over the kernels whose baseline ran; a
/// failed build counts as 1.0.
fn geomean(kernels: &[Kernel], i: usize) -> Option<f64> {
    let v: Vec<f64> = kernels
        .iter()
        .filter(|k| k.baseline_seconds.is_some())
        .map(|k| {
            k.entries[i]
                .speedup
                .filter(|s| s.is_finite() && *s > 0.0)
                .unwrap_or(1.0)
        })
        .collect();
    (!v.is_empty()).then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

fn one_kernel(
    file: &Path,
    name: &str,
    dir: &Path,
    plans: &[Plan],
    setup: &Setup,
    progress: &mut dyn FnMut(Event),
) -> std::io::Result<Kernel> {
    let bench = |c: &Compiler| Bench {
        compiler: c.clone(),
        size: setup.size,
        include: setup.include.clone(),
        protocol: setup.protocol,
        workdir: dir.to_path_buf(),
    };
    let mut entries: Vec<Entry> = Vec::new();
    let mut exes: Vec<Option<PathBuf>> = Vec::new();
    let mut reference: Option<Dump> = None;
    let mut choice = None;
    let mut selection = None;
    for (i, p) in plans.iter().enumerate() {
        let label = p.info.name.as_str();
        let exe = dir.join(format!("c{i}"));
        let mut built = None;
        let entry = match &p.compiler {
            None => Entry::new(label, Verdict::NotAvailable, p.info.detail.clone()),
            Some(_) if i > 0 && reference.is_none() => Entry::new(
                label,
                Verdict::NotAvailable,
                "the baseline did not run".into(),
            ),
            Some(c) => {
                let source = if p.learned {
                    learned(file, name, dir, setup, progress).map(|(path, s)| {
                        choice = Some(s.choice.clone());
                        selection = Some(Selection::of(s));
                        path
                    })
                } else {
                    Ok(file.to_path_buf())
                };
                match source {
                    Err(e) => Entry::new(label, Verdict::SelectionFailed, e),
                    Ok(src) => {
                        let (m, dump) = bench(c).measure(
                            &src,
                            &format!("c{i}"),
                            reference.as_ref(),
                            p.info.openmp,
                            false,
                        );
                        if i == 0 {
                            reference = dump.filter(|_| m.status == Status::Ok);
                        }
                        if m.status == Status::Ok {
                            built = Some(exe);
                            Entry::new(label, Verdict::Ok, String::new())
                        } else {
                            Entry::new(label, Verdict::of(m.status), first_line(&m.detail))
                        }
                    }
                }
            }
        };
        progress(Event::Built {
            contender: label.to_string(),
            verdict: entry.verdict,
        });
        entries.push(entry);
        exes.push(built);
    }
    time(&mut entries, &exes, setup, progress);
    let baseline_seconds = entries[0].seconds;
    for e in &mut entries {
        e.speedup = match (baseline_seconds, e.seconds) {
            (Some(b), Some(s)) if s > 0.0 => Some(b / s),
            _ => None,
        };
    }
    Ok(Kernel {
        kernel: name.to_string(),
        file: file.to_path_buf(),
        baseline_seconds,
        choice,
        selection,
        entries,
    })
}

/// polytune's program for the kernel: its path and the selection's
/// report.
fn learned(
    file: &Path,
    name: &str,
    dir: &Path,
    setup: &Setup,
    progress: &mut dyn FnMut(Event),
) -> Result<(PathBuf, select::Report), String> {
    let (models, landscapes) = models_for(&setup.models, name)?;
    let src = frontend::parse_file(file, &Options::default()).map_err(|e| e.to_string())?;
    // The kernel's own directory for its `#include "..."`.
    let mut own = setup.select.clone();
    own.recipe.source_dir = crate::lab::build::source_dir(file);
    let leave_out = matches!(setup.models, Models::LeaveOneOut { .. });
    own.ranker = ranker_for(leave_out, own.ranker.take(), name);
    let report = select(
        file,
        &src,
        &models,
        landscapes.as_ref(),
        &own,
        None,
        &mut |e| progress(Event::Selecting(e)),
    )
    .map_err(|e| first_line(&e.to_string()))?;
    // Its includes are found through the include path, which has the
    // kernel's own directory.
    let path = dir.join(format!("{name}.polytune.c"));
    std::fs::write(&path, &report.text).map_err(|e| e.to_string())?;
    Ok((path, report))
}

/// Times the built contenders in alternation. A contender whose timed run
/// fails is dropped (`timing-failed`) and the rounds start again without
/// it, so that every median comes from the same rounds.
fn time(
    entries: &mut [Entry],
    exes: &[Option<PathBuf>],
    setup: &Setup,
    progress: &mut dyn FnMut(Event),
) {
    let rounds = setup.rounds.max(1);
    let limits = setup.protocol.limits();
    let threads = setup.protocol.threads;
    let mut live: Vec<usize> = (0..exes.len()).filter(|&i| exes[i].is_some()).collect();
    while !live.is_empty() {
        let paths: Vec<&Path> = live.iter().filter_map(|&i| exes[i].as_deref()).collect();
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); live.len()];
        let mut broken = None;
        for round in 1..=rounds {
            match interleaved(&paths, 1, threads, &limits) {
                Ok(t) => {
                    for (s, t) in samples.iter_mut().zip(t) {
                        s.extend(t);
                    }
                    progress(Event::Round { round, rounds });
                }
                Err(run) => {
                    broken = Some(run);
                    break;
                }
            }
        }
        if broken.is_none() {
            for (k, &i) in live.iter().enumerate() {
                entries[i].seconds = Some(median(&samples[k]));
                entries[i].samples = std::mem::take(&mut samples[k]);
            }
            return;
        }
        // Which one failed: each alone, once.
        let before = live.len();
        live.retain(|&i| {
            let path = exes[i].as_deref().expect("live contenders are built");
            match interleaved(&[path], 1, threads, &limits) {
                Ok(_) => true,
                Err(run) => {
                    entries[i].verdict = Verdict::TimingFailed;
                    entries[i].detail = first_line(&format!("{:?}: {}", run.exit, run.stderr));
                    false
                }
            }
        });
        if live.len() == before {
            // A failure that did not repeat: give up on every contender
            // rather than time them forever.
            for &i in &live {
                entries[i].verdict = Verdict::TimingFailed;
                entries[i].detail = "a timed run failed once and not again".into();
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests;
