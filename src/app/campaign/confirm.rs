//! `collect --confirm-top K`: a kernel's K fastest variants timed again,
//! interleaved with its original, once all its variants are measured.
//!
//! A campaign times each variant in a few runs right after its original;
//! on a shared machine a lucky batch makes a variant look faster than it
//! is, and the fastest of a few hundred noisy measurements is the one
//! most likely to be lucky (the winner's curse). Labels that wrong at the
//! top mislead the models where it matters, and inflate the Opt every
//! search is measured against. Confirmation times the top variants and
//! the original in alternation — one run of each per round, so that load
//! hits them alike — and stores the medians of those rounds (the
//! campaign's in the measurement's detail). A variant that drops out of
//! the top lets the next one in, which is confirmed in the next pass,
//! until the K fastest are all confirmed (at most [`PASSES`] passes).
//! A variant that fails its verification again is stored as failed.
//!
//! Measured on the shipped dataset (AMD EPYC guest, MEDIUM, 2 threads):
//! see `models/README.md`.

use super::lab::{Built, Lab};
use super::{Campaign, CollectError, Event, not_interrupted, wait_while_paused};
use crate::engine::space::Variant;
use crate::lab::compiler::Family;
use crate::lab::runner::{Run, Timing, interleaved_by, median};
use crate::lab::store::{Key, Store};
use crate::lab::verify::Status;
use std::path::{Path, PathBuf};

/// What `--confirm-top` and `--confirm-rounds` ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Confirm {
    /// The fastest variants of each kernel to confirm.
    pub top: usize,
    /// Interleaved rounds (one run of each program per round), after one
    /// round of warm-up.
    pub rounds: usize,
}

/// Passes over a kernel's top at most: a variant that drops out of the
/// top lets an unconfirmed one in, confirmed in the next pass.
pub(crate) const PASSES: usize = 3;

/// One kernel with one compiler, as the campaign has it when its
/// variants are all measured.
pub(super) struct Kernel<'a> {
    pub name: &'a str,
    pub compiler: Family,
    pub path: &'a Path,
    pub instrumented: Option<&'a Path>,
    pub src: &'a crate::frontend::SourceFile,
    pub variants: &'a [&'a Variant],
    pub kernel: i64,
    /// The key of the kernel's original: its machine, compiler, size and
    /// threads are those of every measurement confirmed.
    pub original: Key,
    pub work: &'a Path,
}

/// Confirms the kernel's top variants; the count confirmed.
pub(super) fn top(
    c: &Campaign,
    conf: Confirm,
    k: &Kernel<'_>,
    lab: &mut Lab,
    store: &mut Store,
    progress: &mut dyn FnMut(Event),
) -> Result<usize, CollectError> {
    let mut confirmed = 0;
    for pass in 1..=PASSES {
        // Only variants of today's space can be built again.
        let todo: Vec<(&Variant, i64, f64)> = store
            .ranked(k.kernel, &k.original)?
            .into_iter()
            .filter_map(|r| {
                k.variants
                    .iter()
                    .find(|v| v.hash == r.code_hash)
                    .map(|v| (*v, r))
            })
            .take(conf.top)
            .filter(|(_, r)| !r.confirmed)
            .map(|(v, r)| (v, r.variant, r.speedup))
            .collect();
        if todo.is_empty() {
            break;
        }
        wait_while_paused(c.pause_file.as_deref(), progress)?;
        progress(Event::Confirming {
            name: k.name,
            compiler: k.compiler,
            pass,
            variants: todo.len(),
        });
        if !lab.has_reference() {
            let (m, detail) = lab.original(k.path, k.instrumented);
            if m.status != Status::Ok {
                progress(Event::OriginalFailed {
                    name: k.name,
                    compiler: k.compiler,
                    status: m.status,
                    detail: &detail,
                });
                return Ok(confirmed);
            }
        }
        let dir = k.work.join(format!("{}-confirm", k.name));
        crate::lab::scratch::subdir(&dir)?;
        let result = pass_once(conf, k, &todo, &dir, lab, store, progress);
        let _ = std::fs::remove_dir_all(&dir);
        match result? {
            Some(n) => confirmed += n,
            None => break,
        }
    }
    Ok(confirmed)
}

/// One pass: builds the original and `todo`, verifies them, times them
/// interleaved and stores the confirmed timings; `None` when a timed run
/// failed (nothing of the pass is stored then).
fn pass_once(
    conf: Confirm,
    k: &Kernel<'_>,
    todo: &[(&Variant, i64, f64)],
    dir: &Path,
    lab: &Lab,
    store: &mut Store,
    progress: &mut dyn FnMut(Event),
) -> Result<Option<usize>, CollectError> {
    let key = |variant| Key {
        variant,
        ..k.original
    };
    let original = match lab.build_original(k.path, k.instrumented, &dir.join("original"))? {
        Ok((exe, _)) => exe,
        Err(m) => {
            not_interrupted()?;
            progress(Event::ConfirmFailed {
                name: k.name,
                compiler: k.compiler,
                detail: &format!("the original no longer builds: {}", m.detail),
            });
            return Ok(None);
        }
    };
    let mut exes: Vec<PathBuf> = vec![original];
    let mut timed: Vec<(i64, f64, String)> = Vec::new();
    for (i, (v, vid, before)) in todo.iter().enumerate() {
        let built: Built = lab.build(k.src, v, &dir.join(format!("v{i}")), k.name)?;
        let exe = built.as_ref().ok().map(|(e, _)| e.clone());
        let m = lab.verify_built(built);
        match (m.status, exe) {
            (Status::Ok, Some(exe)) => {
                exes.push(exe);
                let shown = v.configs.first().map(|c| c.to_string()).unwrap_or_default();
                timed.push((*vid, *before, shown));
            }
            _ => {
                // Verified in the campaign, not now: the variant is not
                // to be trusted, and its measurement says why.
                not_interrupted()?;
                store.record(&key(*vid), &m)?;
                progress(Event::ConfirmFailed {
                    name: k.name,
                    compiler: k.compiler,
                    detail: &format!(
                        "a variant verified in the campaign failed now ({}): stored as failed",
                        m.status.as_str()
                    ),
                });
            }
        }
    }
    if timed.is_empty() {
        return Ok(Some(0));
    }
    let mut runs: Vec<Box<dyn FnMut() -> Result<f64, Run> + '_>> = exes
        .iter()
        .map(|exe| Box::new(move || lab.timed_once(exe)) as Box<dyn FnMut() -> _>)
        .collect();
    let samples =
        interleaved_by(&mut runs, 1).and_then(|_| interleaved_by(&mut runs, conf.rounds.max(1)));
    let samples = match samples {
        Ok(s) => s,
        Err(run) => {
            // A signal ending polytune killed the run: stop, not go on.
            not_interrupted()?;
            progress(Event::ConfirmFailed {
                name: k.name,
                compiler: k.compiler,
                detail: &format!(
                    "a timed run failed ({:?}); nothing of this pass is stored",
                    run.exit
                ),
            });
            return Ok(None);
        }
    };
    let baseline = median(&samples[0]);
    for ((vid, before, shown), s) in timed.iter().zip(&samples[1..]) {
        let t = timing(s);
        not_interrupted()?;
        store.record_confirmation(&key(*vid), &t, baseline, conf.rounds.max(1))?;
        progress(Event::Confirmed {
            name: k.name,
            compiler: k.compiler,
            config: shown,
            before: *before,
            after: baseline / t.median,
        });
    }
    Ok(Some(timed.len()))
}

/// The timing of a program's interleaved samples.
fn timing(samples: &[f64]) -> Timing {
    let m = median(samples);
    let (lo, hi) = samples
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    Timing {
        samples: samples.to_vec(),
        median: m,
        spread: if m > 0.0 { (hi - lo) / m } else { 0.0 },
    }
}
