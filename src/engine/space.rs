//! The distinct programs of a kernel's space. Many configurations yield
//! the same code (nothing to tile, no parallel loop, ...); the space of a
//! kernel is the set of distinct generated programs, found by hashing the
//! code. Schedules depend only on fusion, pre-vectorization, tiling and
//! wavefront (96 combinations), so each is computed and lowered once and
//! the 16 post-pass combinations are emitted from it.

use crate::config::{Config, Privatize, Reductions};
use crate::engine::codegen;
use crate::engine::model::{EngineError, Model};
use crate::engine::pipeline::bounded;
use crate::engine::transform;
use crate::frontend::SourceFile;
use crate::frontend::scop::Scop;
use crate::isl::Ctx;
use crate::isl::Schedule;
use rayon::iter::{IndexedParallelIterator, IntoParallelRefIterator, ParallelIterator};
use sha2::{Digest, Sha256};
use std::collections::HashMap;

mod stages;

/// One distinct program and every configuration that produces it.
#[derive(Debug, Clone)]
pub struct Variant {
    /// SHA-256 of the generated code (configuration comments excluded).
    pub hash: String,
    /// In enumeration order; the first is the canonical one.
    pub configs: Vec<Config>,
    /// The whole file for the canonical configuration.
    pub text: String,
    /// Whether a SCoP's new code has an OpenMP directive.
    pub openmp: bool,
}

/// Hash of a program, ignoring polytune's configuration comments.
pub fn code_hash(text: &str) -> String {
    let mut h = Sha256::new();
    for line in text.lines() {
        if !line.trim_start().starts_with("/* polytune:") {
            h.update(line.as_bytes());
            h.update(b"\n");
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Key of the schedule a configuration needs: configurations with one key
/// differ only in the marks put on the same generated loops.
pub(crate) fn schedule_key(c: &Config) -> Config {
    Config {
        omp: false,
        simd: false,
        unroll: crate::config::UnrollJam::NONE,
        regblock: None,
        // `red=2` changes the schedule; `red=1` only the code.
        reduce: match c.reduce {
            Reductions::Scheduled => Reductions::Scheduled,
            _ => Reductions::Off,
        },
        cyclic: false,
        ..*c
    }
}

/// One configuration's body of a SCoP, or why the SCoP stays unchanged.
type Body = Result<codegen::Emitted, String>;

/// What one worker made of a run of consecutive schedule keys of one
/// fusion: per key (its position), the body of every configuration that
/// uses it, by configuration index; and the first key, if any, that
/// exhausted isl's work limit, with the message.
struct Part {
    bodies: Vec<(usize, Body)>,
    exhausted: Option<(usize, String)>,
}

/// The schedule keys in order of first use in `configs`, and per
/// configuration the position of its key.
fn keys_of(configs: &[Config]) -> (Vec<Config>, Vec<usize>) {
    let mut keys: Vec<Config> = Vec::new();
    let mut at: HashMap<Config, usize> = HashMap::new();
    let of = configs
        .iter()
        .map(|c| {
            let key = schedule_key(c);
            *at.entry(key).or_insert_with(|| {
                keys.push(key);
                keys.len() - 1
            })
        })
        .collect();
    (keys, of)
}

/// The configurations (their positions in `configs`) grouped by the
/// schedule they share, in order of first use.
pub(crate) fn schedule_groups(configs: &[Config]) -> Vec<Vec<usize>> {
    let (keys, of) = keys_of(configs);
    let mut groups = vec![Vec::new(); keys.len()];
    for (k, &p) in of.iter().enumerate() {
        groups[p].push(k);
    }
    groups
}

/// Splits the key positions into runs of consecutive keys with the same
/// fusion, each fusion into `pieces` runs: the workers' shares.
fn shares(keys: &[Config], pieces: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < keys.len() {
        let end = (start..keys.len())
            .find(|&p| keys[p].fusion != keys[start].fusion)
            .unwrap_or(keys.len());
        let n = end - start;
        let pieces = pieces.clamp(1, n);
        for i in 0..pieces {
            out.push(start + n * i / pieces..start + n * (i + 1) / pieces);
        }
        start = end;
    }
    out
}

/// A fusion's hyperplanes, once computed: for the model, the one with
/// its scalars privatized (`priv=1` keys) and the one with its arrays
/// too (`priv=2`), each without and with time bands (`tt=diamond` keys:
/// [`transform::hyperplanes`]); the second three with the reductions set
/// aside (`red=2` keys).
type Cached<'c> = [Slots<'c>; 6];

/// The models a share's keys may use: privatized (scalars, then arrays
/// too), when the SCoP has something to privatize.
type PrivateModels<'c> = [Option<Model<'c>>; 2];

/// One model's hyperplanes without and with time bands, and those
/// inside the outermost loop (`outer=1`: [`transform::outer_hyperplanes`]).
type Slots<'c> = [Option<Result<Schedule<'c>, EngineError>>; 3];

/// The keys that share hyperplanes: one fusion, with or without time
/// bands, with or without the reductions set aside, inside the outermost
/// loop or not.
fn group(key: &Config) -> (crate::config::Fusion, bool, bool, bool) {
    (key.fusion, key.diamond, scheduled(key), key.outer)
}

/// Whether a key's hyperplanes set the reductions aside (`red=2`).
fn scheduled(key: &Config) -> bool {
    key.reduce == Reductions::Scheduled
}

/// The code of key `p` (on the worker's context). Once one key hits the
/// work limit, the later ones are not tried: each would run into it
/// again. A `priv=1` (`priv=2`) key uses `private[0]` (`[1]`: the model
/// with its scalars, and arrays, privatized, if it has any) and falls
/// back to `model` where no schedule keeps their live ranges apart, as
/// the pipeline does.
#[allow(clippy::too_many_arguments)]
fn lower<'m, 'c>(
    ctx: &'c Ctx,
    model: &'m Model<'c>,
    private: &'m PrivateModels<'c>,
    scop: &Scop,
    keys: &[Config],
    p: usize,
    hyperplanes: &mut Cached<'c>,
    exhausted: &mut Option<(usize, String)>,
) -> Result<codegen::Lowered<'m, 'c>, String> {
    if let Some((_, e)) = exhausted {
        return Err(e.clone());
    }
    let key = keys[p];
    // The message, and whether isl failed (rather than the schedule).
    let failed = |e: EngineError| (matches!(e, EngineError::Isl(_)), e.to_string());
    // The schedule as `transform::schedule` makes it, on the cached
    // hyperplanes.
    let with = |m: &'m Model<'c>, slots: &mut Slots<'c>| {
        let mut bases = CachedBases {
            model: m,
            scop_index: scop.index,
            key: &key,
            slots,
        };
        transform::schedule_on(m, scop.index, &key, &mut bases)
            .and_then(|s| codegen::lower(m, scop.index, &s))
            .map_err(failed)
    };
    // Each key gets the whole work limit (the model's work was bounded
    // before).
    let l = bounded(ctx, scop, || {
        let [plain, scalars, arrays, plain_s, scalars_s, arrays_s] = hyperplanes;
        let (plain, privatized) = match (scheduled(&key), key.privatize) {
            (false, Privatize::Arrays) => (plain, Some((&private[1], arrays))),
            (false, Privatize::Scalars) => (plain, Some((&private[0], scalars))),
            (false, Privatize::Off) => (plain, None),
            (true, Privatize::Arrays) => (plain_s, Some((&private[1], arrays_s))),
            (true, Privatize::Scalars) => (plain_s, Some((&private[0], scalars_s))),
            (true, Privatize::Off) => (plain_s, None),
        };
        if let Some((Some(pm), slots)) = privatized {
            match with(pm, slots) {
                Err((true, e)) => return Err(e),
                Err((false, _)) => {}
                Ok(l) => return Ok(l),
            }
        }
        with(model, plain).map_err(|(_, e)| e)
    });
    l.unwrap_or_else(|e| {
        *exhausted = Some((p, e.to_string()));
        // A schedule cached while isl refused work is not trusted either.
        *hyperplanes = Default::default();
        Err(e.to_string())
    })
}

/// One key's hyperplanes from the share's cache, computed into it the
/// first time a group's key asks.
struct CachedBases<'a, 'c> {
    model: &'a Model<'c>,
    scop_index: usize,
    key: &'a Config,
    slots: &'a mut Slots<'c>,
}

impl<'c> transform::Bases<'c> for CachedBases<'_, 'c> {
    fn get(&mut self, base: transform::Base) -> Result<&Schedule<'c>, EngineError> {
        self.slots[base.slot()]
            .get_or_insert_with(|| base.compute(self.model, self.scop_index, self.key))
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// The bodies of the configurations whose keys lie in `share`, computed
/// on a context and model of the worker's own (isl's contexts cannot
/// cross threads) exactly as one pass over all keys would: the same
/// work limit per key, the fusion's hyperplanes computed within the
/// limit of its first key (replayed when that key is another worker's).
#[allow(clippy::too_many_arguments)]
fn part(
    scop: &Scop,
    dead: &[String],
    context: Option<&str>,
    keys: &[Config],
    users: &[Vec<usize>],
    configs: &[Config],
    share: std::ops::Range<usize>,
    indent: &str,
    tick: &(dyn Fn() + Sync),
) -> Part {
    let mut bodies = Vec::new();
    let ctx = Ctx::new();
    let model = match bounded(&ctx, scop, || Model::new(&ctx, scop, context)) {
        Ok(Ok(m)) => m,
        // The model was built once already; only its time limit can fail
        // it here.
        Ok(Err(e)) | Err(e) => {
            for p in share {
                bodies.extend(users[p].iter().map(|&k| (k, Err(e.to_string()))));
                tick();
            }
            return Part {
                bodies,
                exhausted: None,
            };
        }
    };
    // The first key of each group of the share's keys that lies before
    // the share: each computed its group's hyperplanes.
    let mut firsts: Vec<usize> = share
        .clone()
        .filter_map(|p| keys.iter().position(|k| group(k) == group(&keys[p])))
        .filter(|&f| f < share.start)
        .collect();
    firsts.sort_unstable();
    firsts.dedup();
    // With `priv=1` (`priv=2`) keys: the model with the scalars (and
    // arrays) privatized (none when it has none, or isl refused the work:
    // those keys then fall back to the model, as the pipeline does).
    let privatized = |kind: Privatize| {
        if share.clone().any(|p| keys[p].privatize == kind) {
            bounded(&ctx, scop, || {
                model.privatized(scop, dead, kind == Privatize::Arrays)
            })
            .ok()
            .and_then(Result::ok)
            .flatten()
        } else {
            None
        }
    };
    let private: PrivateModels = [
        privatized(Privatize::Scalars),
        privatized(Privatize::Arrays),
    ];
    let mut hyperplanes: Cached = Default::default();
    let mut exhausted: Option<(usize, String)> = None;
    for first in firsts {
        // The group's first key computes its hyperplanes within its own
        // limit; only its effect on the cache and the limit matter here.
        drop(lower(
            &ctx,
            &model,
            &private,
            scop,
            keys,
            first,
            &mut hyperplanes,
            &mut exhausted,
        ));
    }
    for p in share {
        let l = lower(
            &ctx,
            &model,
            &private,
            scop,
            keys,
            p,
            &mut hyperplanes,
            &mut exhausted,
        );
        for &k in &users[p] {
            let body = match &l {
                Ok(l) => Ok(codegen::emit(scop, l, &configs[k], indent)),
                Err(e) => Err(e.clone()),
            };
            bodies.push((k, body));
        }
        tick();
    }
    Part { bodies, exhausted }
}

/// Every distinct program of the file's space, in order of first
/// appearance in [`Config::all`]. A SCoP the engine cannot handle stays
/// unchanged in every variant (its reason is in the second result).
///
/// The schedule keys are shared out among rayon's threads, each fusion
/// in two runs of keys per two threads; every worker builds its own isl
/// context and model (isl's contexts cannot cross threads; the model is
/// a few percent of a SCoP's time) and the runs are merged in key order,
/// so the result is the one a single pass gives (`scripts/space_hashes.sh`
/// prints the same lines). Measured on this 2-core machine while a fuzz
/// run shared it (autogroup scheduling left this process about half the
/// machine): six kernels' spaces (reg_detect, fdtd-apml, adi, 3mm,
/// correlation, gemm) as one whole run, three of each interleaved, median
/// wall 92.4 s against 98.5 s single-threaded, CPU 36.8 s against 35.1 s
/// (+5%: the models and replayed first keys). The busiest worker does
/// 54-60% of the CPU work, so on two free cores the space takes ~0.6 of
/// the single-threaded time.
pub fn distinct_variants(
    src: &SourceFile,
    context: Option<&str>,
) -> Result<(Vec<Variant>, Vec<String>), EngineError> {
    distinct_variants_with(src, context, &|_| {})
}

/// How far an enumeration is: `done` of `total` schedules (96 per SCoP
/// in the paper's space) computed and emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Enumerated {
    pub done: usize,
    pub total: usize,
}

/// [`distinct_variants`], reporting its progress to `progress` (from the
/// worker threads, in no particular order of calls but with `done`
/// counting up): the space of a large kernel takes minutes.
pub(crate) fn distinct_variants_with(
    src: &SourceFile,
    context: Option<&str>,
    progress: &(dyn Fn(Enumerated) + Sync),
) -> Result<(Vec<Variant>, Vec<String>), EngineError> {
    distinct_variants_of(src, context, &Config::all(), progress)
}

/// The distinct programs of the given configurations (e.g. a sample of
/// the extended space, `extended.rs`, or the paper's with `priv=1`), in order of first appearance in
/// `configs`, as [`distinct_variants_with`] finds them for the paper's
/// space. Configurations sharing a schedule (same fusion, tiles,
/// pre-vectorization, wavefront) share its computation; listing those of
/// one fusion together keeps the workers' shares few (see [`shares`]).
pub fn distinct_variants_of(
    src: &SourceFile,
    context: Option<&str>,
    configs: &[Config],
    progress: &(dyn Fn(Enumerated) + Sync),
) -> Result<(Vec<Variant>, Vec<String>), EngineError> {
    if configs.iter().any(|c| c.expand) {
        return with_expansion(src, context, configs, progress);
    }
    enumerate(src, context, configs, progress)
}

/// [`distinct_variants_of`] for configurations some of which expand
/// scalars (`exp=1`): those are enumerated on the file with each SCoP
/// replaced by its expanded form (as the pipeline transforms it; the
/// SCoPs that cannot be expanded stay), the others on the file, and the
/// two merged in order of first appearance in `configs`.
fn with_expansion(
    src: &SourceFile,
    context: Option<&str>,
    configs: &[Config],
    progress: &(dyn Fn(Enumerated) + Sync),
) -> Result<(Vec<Variant>, Vec<String>), EngineError> {
    let (expand, keep): (Vec<usize>, Vec<usize>) =
        (0..configs.len()).partition(|&k| configs[k].expand);
    let mut rewritten = src.clone();
    for scop in &mut rewritten.scops {
        if crate::engine::pipeline::check_limits(scop).is_err() {
            continue;
        }
        let ctx = Ctx::new();
        let made = bounded(&ctx, scop, || {
            let model = Model::new(&ctx, scop, context)?;
            crate::engine::pipeline::expanded(src, scop, &model, &configs[expand[0]])
        });
        // The SCoPs that cannot be expanded (or modelled) stay: the
        // enumeration says why.
        if let Ok(Ok(Some(Ok(s)))) = made {
            *scop = s;
        }
    }
    let pick = |ks: &[usize]| ks.iter().map(|&k| configs[k]).collect::<Vec<_>>();
    let mut merged: Vec<(usize, Variant)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut skipped = Vec::new();
    for (file, ks) in [(src, &keep), (&rewritten, &expand)] {
        if ks.is_empty() {
            continue;
        }
        let (variants, notes) = enumerate(file, context, &pick(ks), progress)?;
        // A configuration's place in `configs`.
        let place = |c: &Config| ks.iter().copied().find(|&k| configs[k] == *c);
        for v in variants {
            let first = v
                .configs
                .iter()
                .filter_map(place)
                .min()
                .unwrap_or(usize::MAX);
            match at.get(&v.hash) {
                Some(&i) => {
                    let (f, w) = &mut merged[i];
                    *f = (*f).min(first);
                    w.configs.extend(v.configs);
                }
                None => {
                    at.insert(v.hash.clone(), merged.len());
                    merged.push((first, v));
                }
            }
        }
        for n in notes {
            if !skipped.contains(&n) {
                skipped.push(n);
            }
        }
    }
    merged.sort_by_key(|(first, _)| *first);
    let order = |c: &Config| configs.iter().position(|x| x == c).unwrap_or(usize::MAX);
    Ok((
        merged
            .into_iter()
            .map(|(_, mut v)| {
                v.configs.sort_by_key(order);
                v
            })
            .collect(),
        skipped,
    ))
}

/// [`distinct_variants_of`] for configurations that expand no scalar.
fn enumerate(
    src: &SourceFile,
    context: Option<&str>,
    configs: &[Config],
    progress: &(dyn Fn(Enumerated) + Sync),
) -> Result<(Vec<Variant>, Vec<String>), EngineError> {
    let (keys, key_of) = keys_of(configs);
    let users = schedule_groups(configs);
    let pieces = (2 * rayon::current_num_threads()).div_ceil(3);
    let shares = shares(&keys, pieces);
    let mut made = stages::Bodies::new(src, configs.len());
    let total = src.scops.len() * keys.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let tick = || {
        let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        progress(Enumerated { done: d, total });
    };
    let skip_scop = || {
        let d = done.fetch_add(keys.len(), std::sync::atomic::Ordering::Relaxed) + keys.len();
        progress(Enumerated { done: d, total });
    };
    for scop in &src.scops {
        if let Some(note) = stages::refusal(scop, context)? {
            made.skipped.push(note);
            made.unchanged();
            skip_scop();
            continue;
        }
        let indent = src.indent_of(scop);
        let dead = if configs.iter().any(|c| c.privatize.on()) {
            crate::frontend::liveness::dead_scalars(src, scop)
        } else {
            Vec::new()
        };
        let parts: Vec<Part> = shares
            .par_iter()
            .with_max_len(1)
            .map(|share| {
                part(
                    scop,
                    &dead,
                    context,
                    &keys,
                    &users,
                    configs,
                    share.clone(),
                    &indent,
                    &tick,
                )
            })
            .collect();
        made.gather(scop, parts, &keys, &key_of);
    }
    Ok((made.distinct(src, configs), made.skipped))
}

#[cfg(test)]
mod tests;
