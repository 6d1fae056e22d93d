//! The stages of [`super::run`]: plan every kernel's variants, claim the
//! shard and count the work, then per kernel prepare it and count its
//! features, and per compiler measure its original and its variants.

use super::lab::{Lab, recipe_for};
use super::*;
use crate::lab::verify::Measurement;

/// Stage 1: every kernel parsed, its distinct variants picked (and, in
/// the extended space, its draws added), what is skipped reported.
pub(super) fn plan(
    c: &Campaign,
    progress: &mut dyn FnMut(Event),
) -> Result<Vec<Plan>, CollectError> {
    let mut plans = Vec::new();
    for path in &c.kernels {
        let src = frontend::parse_file(path, &Options::default())?;
        let (variants, skipped) = distinct_variants(&src, None)?;
        for s in skipped {
            progress(Event::Skipped {
                kernel: path,
                reason: &s,
            });
        }
        let mut picked = pick(&variants, c.max_variants);
        if let Space::Extended {
            space,
            sample,
            seed,
        } = &c.space
        {
            let name = kernel_name(path);
            let drawn = draws(space, *sample, *seed, &name)?;
            let (new, skipped) = sample::add_draws(&src, None, &drawn, &mut picked)?;
            for s in skipped {
                progress(Event::Skipped {
                    kernel: path,
                    reason: &s,
                });
            }
            progress(Event::Sampled {
                name: &name,
                drawn: drawn.len(),
                new,
            });
        }
        plans.push((path.clone(), src, picked));
    }
    Ok(plans)
}

/// Stage 2: the store claimed for this shard (a store holds one shard's
/// measurements), and the number of programs to measure recorded and
/// reported.
pub(super) fn claim(
    c: &Campaign,
    store: &mut Store,
    mine: &[Mine<'_>],
    progress: &mut dyn FnMut(Event),
) -> Result<usize, CollectError> {
    let total: usize = mine
        .iter()
        .flat_map(|(_, per)| per.iter().flatten())
        .map(|v| v.len() + 1)
        .sum();
    if let Some(s) = c.shard {
        let asked = s.to_string();
        match store.meta("shard")? {
            Some(stored) if stored != asked => {
                return Err(CollectError::OtherShard {
                    db: store_path(store),
                    stored,
                    asked,
                });
            }
            _ => store.set_meta("shard", &asked)?,
        }
    }
    store.set_meta("planned", &total.to_string())?;
    progress(Event::Planned { total });
    Ok(total)
}

/// What this campaign measures of one kernel (`shard::select`): whether
/// it characterizes it, and per compiler the variants it measures.
pub(super) type Mine<'p> = (bool, Vec<Option<Vec<&'p Variant>>>);

/// A kernel ready to measure: its ids in the store and how its programs
/// are built.
pub(super) struct Prepared {
    pub name: String,
    pub kernel: i64,
    /// The original's variant id.
    pub original: i64,
    pub include: Vec<PathBuf>,
    /// Outside the corpus style: the instrumented original…
    pub instrumented: Option<PathBuf>,
    /// … and the program's recipe (its driver for a bare kernel).
    pub recipe: Option<Recipe>,
}

/// Counts of the campaign so far, and the time its measurements took
/// (for the ETA).
struct Tally {
    summary: Summary,
    done: usize,
    total: usize,
    /// Seconds spent measuring variants, builds included as if in line.
    spent: f64,
    measured: usize,
}

impl Tally {
    /// Seconds per measurement so far.
    fn each(&self) -> f64 {
        rate(self.spent, self.measured)
    }

    /// The seconds left at that rate (some of what is left may turn out
    /// to be stored already).
    fn eta(&self) -> f64 {
        self.each() * (self.total - self.done) as f64
    }
}

/// A campaign under way: the stages of one kernel at a time.
pub(super) struct Collecting<'a> {
    c: &'a Campaign,
    store: &'a mut Store,
    progress: &'a mut dyn FnMut(Event),
    work: PathBuf,
    machine: i64,
    mode: ahead::Mode,
    tally: Tally,
    /// Appending to the user's store, when the campaign does.
    learning: Option<super::learn::Learning>,
}

impl<'a> Collecting<'a> {
    pub(crate) fn new(
        c: &'a Campaign,
        store: &'a mut Store,
        progress: &'a mut dyn FnMut(Event),
        work: PathBuf,
        machine: i64,
        mode: ahead::Mode,
        total: usize,
    ) -> Self {
        Collecting {
            c,
            store,
            progress,
            work,
            machine,
            mode,
            tally: Tally {
                summary: Summary::default(),
                done: 0,
                total,
                spent: 0.0,
                measured: 0,
            },
            learning: c.learn.clone().map(super::learn::Learning::new),
        }
    }

    pub(crate) fn summary(&self) -> Summary {
        self.tally.summary
    }

    /// What the campaign appended to the user's store.
    pub(crate) fn learned(&self) -> Option<super::learn::Learned> {
        self.learning.as_ref().and_then(|l| l.learned())
    }

    /// Stage 3: the kernel's ids in the store; outside the corpus style,
    /// its instrumented original and its recipe.
    pub(crate) fn prepare(
        &mut self,
        path: &Path,
        src: &crate::frontend::SourceFile,
    ) -> Result<Prepared, CollectError> {
        let c = self.c;
        let name = kernel_name(path);
        let kernel = self.store.kernel_id(&name, &code_hash(&src.text))?;
        let original = self.store.original_id(kernel, &code_hash(&src.text))?;
        let mut include = c.include.clone();
        include.push(path.parent().map(Path::to_path_buf).unwrap_or_default());
        let (instrumented, recipe) = if corpus_style(&src.text) {
            (None, None)
        } else {
            let d = self.work.join(format!("{name}-original"));
            crate::lab::scratch::subdir(&d)?;
            let file = d.join(path.file_name().unwrap_or_default());
            std::fs::write(
                &file,
                crate::engine::pipeline::instrumented(src, None, None)?.text,
            )?;
            let recipe = recipe_for(c, path, src, &self.work, &name)?;
            (Some(file), Some(recipe))
        };
        Ok(Prepared {
            name,
            kernel,
            original,
            include,
            instrumented,
            recipe,
        })
    }

    /// Stage 4: the kernel's features (the simulator's, with the first
    /// compiler), unless stored; a kernel that cannot be characterized is
    /// reported and measured all the same.
    pub(crate) fn features(
        &mut self,
        k: &Prepared,
        path: &Path,
        src: &crate::frontend::SourceFile,
    ) -> Result<(), CollectError> {
        let c = self.c;
        if self
            .store
            .has_features(k.kernel, Backend::Cachegrind, c.feature_size)?
        {
            return Ok(());
        }
        let compiler = c.compilers.first().expect("at least one compiler");
        let features = match (&k.instrumented, &k.recipe) {
            (Some(file), Some(recipe)) => characterize_instrumented(
                file,
                &Recipe {
                    compiler: compiler.clone(),
                    ..recipe.clone()
                },
                src.scops.len(),
                &self.work,
                &c.protocol.limits(),
                &crate::lab::characterize::Bound::default(),
                &mut |_| {},
            ),
            _ => characterize(
                path,
                compiler,
                c.feature_size,
                &k.include,
                Backend::Cachegrind,
                &self.work,
                &c.protocol.limits(),
            ),
        };
        match features {
            Ok(f) => self.store.record_features(
                k.kernel,
                Backend::Cachegrind,
                c.feature_size,
                &f.values,
            )?,
            Err(e) => (self.progress)(Event::NoFeatures {
                name: &k.name,
                error: &e.to_string(),
            }),
        }
        Ok(())
    }

    /// How `compiler` builds and measures the kernel's programs.
    fn lab(&self, k: &Prepared, compiler: &Compiler) -> Lab {
        let c = self.c;
        match &k.recipe {
            None => Lab::Corpus {
                bench: Bench {
                    compiler: compiler.clone(),
                    size: c.size,
                    include: k.include.clone(),
                    protocol: c.protocol,
                    workdir: self.work.clone(),
                },
                reference: None,
            },
            Some(recipe) => Lab::Instrumented {
                harness: Harness {
                    recipe: Recipe {
                        compiler: compiler.clone(),
                        ..recipe.clone()
                    },
                    protocol: c.protocol,
                    tolerance: c.program.tolerance,
                    workdir: self.work.clone(),
                },
                reference: Box::new(None),
            },
        }
    }

    /// Stage 5: one compiler's share of the kernel: the original first,
    /// in the same batch as its variants (its dump is the reference),
    /// then every variant not stored yet, then what was verified and
    /// timed appended to the user's store (when the campaign learns),
    /// then the confirmation of the top ones when asked. When resuming
    /// with variants still to measure, the original is timed again for
    /// this batch (stored once; each variant records the baseline it was
    /// timed with).
    pub(crate) fn compiler(
        &mut self,
        k: &Prepared,
        path: &Path,
        src: &crate::frontend::SourceFile,
        compiler: &Compiler,
        variants: &[&Variant],
    ) -> Result<(), CollectError> {
        let c = self.c;
        let mut lab = self.lab(k, compiler);
        let cid = self.store.compiler_id(compiler)?;
        let key = self.key(cid);
        let original = key(k.original);
        let stored = self.store.has_measurement(&original)?;
        let pending = self.pending(k, compiler, variants, &key)?;
        let work = self.work.clone();
        let confirmation = confirm::Kernel {
            name: &k.name,
            compiler: compiler.family,
            path,
            instrumented: k.instrumented.as_deref(),
            src,
            variants,
            kernel: k.kernel,
            original,
            work: &work,
        };
        if stored && pending == 0 {
            // Nothing left here: not even the original is rebuilt
            // (unless top variants are still to be confirmed).
            self.tally.summary.skipped += 1 + variants.len();
            self.tally.done += 1 + variants.len();
            return self.confirm(&confirmation, &mut lab);
        }
        wait_while_paused(c.pause_file.as_deref(), self.progress)?;
        (self.progress)(Event::Kernel {
            name: &k.name,
            compiler: compiler.family,
        });
        let Some((baseline, measured)) =
            self.original(k, path, compiler, &mut lab, &original, stored)?
        else {
            self.tally.done += variants.len();
            return Ok(());
        };
        let todo = self.stored_variants(k, compiler, variants, &key)?;
        let verified = self.variants(k, src, compiler, &lab, &todo, &key, baseline)?;
        if let (Some(learning), Some(baseline)) = (&mut self.learning, baseline) {
            let verified: Vec<(&Variant, Measurement)> =
                verified.into_iter().map(|(i, m)| (todo[i].0, m)).collect();
            learning.kernel(
                c,
                &super::learn::Kernel {
                    prepared: k,
                    path,
                    src,
                    compiler,
                    original: &measured,
                    baseline,
                    variants: &verified,
                },
                &lab,
                &self.work,
                &mut *self.progress,
            );
        }
        self.confirm(&confirmation, &mut lab)
    }

    /// The store key of a measurement of `variant` by compiler `cid` on
    /// this machine, at the campaign's size and threads.
    fn key(&self, cid: i64) -> impl Fn(i64) -> Key + use<> {
        let (machine, size, threads) = (self.machine, self.c.size, self.c.protocol.threads as i64);
        move |variant| Key {
            variant,
            machine,
            compiler: cid,
            size,
            threads,
        }
    }

    /// The variants still to measure; measurements of variants the kernel
    /// no longer has (its code changed) are reported as stale.
    fn pending(
        &mut self,
        k: &Prepared,
        compiler: &Compiler,
        variants: &[&Variant],
        key: &impl Fn(i64) -> Key,
    ) -> Result<usize, CollectError> {
        let mut pending = 0;
        for v in variants {
            let vid = self.store.variant_id(k.kernel, &v.hash, &v.configs)?;
            if !self.store.has_measurement(&key(vid))? {
                pending += 1;
            }
        }
        let current: std::collections::HashSet<&str> =
            variants.iter().map(|v| v.hash.as_str()).collect();
        let stale = self
            .store
            .measured_hashes(k.kernel, &key(k.original))?
            .iter()
            .filter(|h| !current.contains(h.as_str()))
            .count();
        if stale > 0 {
            (self.progress)(Event::Stale {
                name: &k.name,
                compiler: compiler.family,
                stale,
                pending,
            });
        }
        Ok(pending)
    }

    /// The original measured (stored unless it already was) and the slow
    /// cutoff set from it: its median seconds (with this measurement of
    /// it), or `None` when it failed (reported; its variants are not
    /// measured).
    fn original(
        &mut self,
        k: &Prepared,
        path: &Path,
        compiler: &Compiler,
        lab: &mut Lab,
        key: &Key,
        stored: bool,
    ) -> Result<Option<(Option<f64>, Measurement)>, CollectError> {
        let (m, detail) = lab.original(path, k.instrumented.as_deref());
        if !stored {
            not_interrupted()?;
            self.store.record(key, &m)?;
            self.tally.summary.measured += 1;
        } else {
            self.tally.summary.skipped += 1;
        }
        let baseline = match &m.timing {
            Some(t) => Some(t.median),
            None => self.store.median(key)?,
        };
        lab.set_slow_cutoff(self.c.slow_factor.zip(baseline).map(|(f, b)| f * b));
        self.tally.done += 1;
        if m.status != Status::Ok {
            (self.progress)(Event::OriginalFailed {
                name: &k.name,
                compiler: compiler.family,
                status: m.status,
                detail: &detail,
            });
            self.tally.summary.failed += 1;
            return Ok(None);
        }
        Ok(Some((baseline, m)))
    }

    /// Stored variants counted as found (and reported); the others, with
    /// their ids, to measure.
    fn stored_variants<'v>(
        &mut self,
        k: &Prepared,
        compiler: &Compiler,
        variants: &[&'v Variant],
        key: &impl Fn(i64) -> Key,
    ) -> Result<Vec<(&'v Variant, i64)>, CollectError> {
        let mut todo = Vec::new();
        for v in variants {
            let vid = self.store.variant_id(k.kernel, &v.hash, &v.configs)?;
            if self.store.has_measurement(&key(vid))? {
                let t = &mut self.tally;
                t.summary.skipped += 1;
                t.done += 1;
                (self.progress)(Event::Variant {
                    done: t.done,
                    total: t.total,
                    name: &k.name,
                    compiler: compiler.family,
                    status: None,
                    so_far: t.summary,
                    each: t.each(),
                    eta: t.eta(),
                });
            } else {
                todo.push((*v, vid));
            }
        }
        Ok(todo)
    }

    /// The variants to measure, built ahead (`--jobs`) and measured in
    /// order against `baseline`, each stored as it arrives; those
    /// verified and timed, by their place in `todo`.
    #[allow(clippy::too_many_arguments)] // the stage's inputs, each of another kind
    fn variants(
        &mut self,
        k: &Prepared,
        src: &crate::frontend::SourceFile,
        compiler: &Compiler,
        lab: &Lab,
        todo: &[(&Variant, i64)],
        key: &impl Fn(i64) -> Key,
        baseline: Option<f64>,
    ) -> Result<Vec<(usize, Measurement)>, CollectError> {
        let c = self.c;
        let jobs = if lab.parallel_builds() { c.jobs } else { 1 };
        let (work, name) = (&self.work, k.name.as_str());
        let build = |i: usize| {
            let t = Instant::now();
            let dir = work.join(format!("{name}-b{i}"));
            let built = lab.build(src, todo[i].0, &dir, name);
            (built, dir, t.elapsed().as_secs_f64())
        };
        let (store, progress, tally) = (&mut *self.store, &mut *self.progress, &mut self.tally);
        let mut verified = Vec::new();
        let mut step = |s: ahead::Step<(Result<lab::Built, CollectError>, PathBuf, f64)>| {
            let (i, (built, dir, build_seconds)) = match s {
                ahead::Step::Wait => {
                    return Ok(wait_while_paused(c.pause_file.as_deref(), progress)?);
                }
                ahead::Step::Measure(i, b) => (i, b),
            };
            let t = Instant::now();
            let m = lab.measure_built(built?);
            let _ = std::fs::remove_dir_all(&dir);
            // The build counts in the rate as if it ran in line: with
            // several jobs the ETA is pessimistic, never optimistic.
            tally.spent += t.elapsed().as_secs_f64() + build_seconds / jobs as f64;
            if m.status != Status::Ok {
                tally.summary.failed += 1;
            }
            not_interrupted()?;
            store.record_against(&key(todo[i].1), &m, baseline)?;
            tally.summary.measured += 1;
            tally.measured += 1;
            tally.done += 1;
            progress(Event::Variant {
                done: tally.done,
                total: tally.total,
                name,
                compiler: compiler.family,
                status: Some(m.status),
                so_far: tally.summary,
                each: tally.each(),
                eta: tally.eta(),
            });
            if m.status == Status::Ok && m.timing.is_some() {
                verified.push((i, m));
            }
            Ok::<(), CollectError>(())
        };
        ahead::in_order(
            todo.len(),
            jobs,
            self.mode,
            c.pause_file.as_deref(),
            &build,
            &mut step,
        )?;
        Ok(verified)
    }

    /// The top variants confirmed when the campaign asks for it.
    fn confirm(&mut self, k: &confirm::Kernel<'_>, lab: &mut Lab) -> Result<(), CollectError> {
        if let Some(conf) = self.c.confirm {
            self.tally.summary.confirmed +=
                confirm::top(self.c, conf, k, lab, self.store, self.progress)?;
        }
        Ok(())
    }
}
