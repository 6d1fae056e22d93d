//! Building a batch's variants ahead of their timed runs (`collect --jobs
//! N`, issue 21): compilers run N at a time, while the programs they
//! built are verified and timed one at a time, in the batch's order, on
//! the calling thread.
//!
//! Two ways, because a compiler beside a timed run takes a core from it:
//! - [`Mode::Batches`]: N variants are built at once, then timed one by
//!   one, then the next N; nothing compiles while anything is timed (on
//!   a machine with few cores, or when nothing says which cores to time
//!   on). With N = 1 this is the campaign as it always was.
//! - [`Mode::Overlap`]: the timed runs have cores of their own
//!   (`--timing-cores`), so the builders run beside them, pinned to the
//!   other cores, up to `2 N` variants ahead of the one being timed.
//!
//! A pause (`--pause-file`) stops new builds; the campaign acknowledges it
//! only once the builds under way have finished.

use crate::lab::confine::Cores;
use std::collections::BTreeMap;
use std::path::Path;

/// How builds and timed runs share the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Batches,
    /// Builders pinned to `compile` (when given) run beside the timing.
    Overlap {
        compile: Option<Cores>,
    },
}

/// What the calling thread is asked to do.
pub(crate) enum Step<B> {
    /// The pause file exists and no build is under way: return when the
    /// pause is over.
    Wait,
    /// Verify and time the `i`-th, built.
    Measure(usize, B),
}

/// Builds `0..n` with `build` on `jobs` threads and hands each result to
/// `step` in order on the calling thread, with a [`Step::Wait`] before
/// any build or measurement while the pause file exists. The first error
/// of `step` stops it (builds under way finish first; nothing more
/// starts).
pub(crate) fn in_order<B, E>(
    n: usize,
    jobs: usize,
    mode: Mode,
    pause: Option<&Path>,
    build: &(dyn Fn(usize) -> B + Sync),
    step: &mut dyn FnMut(Step<B>) -> Result<(), E>,
) -> Result<(), E>
where
    B: Send,
{
    let paused = || pause.is_some_and(Path::exists);
    let wait = |step: &mut dyn FnMut(Step<B>) -> Result<(), E>| {
        if paused() { step(Step::Wait) } else { Ok(()) }
    };
    let jobs = jobs.max(1);
    if n == 0 {
        return Ok(());
    }
    if jobs == 1 && mode == Mode::Batches {
        // The campaign as it always was: no thread of its own.
        for i in 0..n {
            wait(step)?;
            let b = build(i);
            step(Step::Measure(i, b))?;
        }
        return Ok(());
    }
    let compile = match mode {
        Mode::Overlap { compile } => compile,
        Mode::Batches => None,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|k| format!("polytune-build-{k}"))
        .start_handler(move |_| {
            if let Some(c) = compile {
                // Best effort: a builder left unpinned only costs noise.
                let _ = c.pin_this_thread();
            }
        })
        .build()
        .expect("a thread pool of a few threads");
    match mode {
        Mode::Batches => {
            let mut start = 0;
            while start < n {
                let end = (start + jobs).min(n);
                wait(step)?;
                let built: Vec<B> = pool.install(|| {
                    use rayon::prelude::*;
                    (start..end).into_par_iter().map(build).collect()
                });
                for (k, b) in built.into_iter().enumerate() {
                    wait(step)?;
                    step(Step::Measure(start + k, b))?;
                }
                start = end;
            }
            Ok(())
        }
        Mode::Overlap { .. } => {
            let ahead = 2 * jobs;
            let (tx, rx) = std::sync::mpsc::channel::<(usize, B)>();
            pool.in_place_scope(|s| {
                let mut spawned = 0usize;
                let mut received = 0usize;
                let mut ready: BTreeMap<usize, B> = BTreeMap::new();
                let receive = |ready: &mut BTreeMap<usize, B>, received: &mut usize| {
                    let (i, b) = rx.recv().expect("a builder sends before it ends");
                    ready.insert(i, b);
                    *received += 1;
                };
                for i in 0..n {
                    if !paused() {
                        while spawned < n && spawned <= i + ahead {
                            let tx = tx.clone();
                            let k = spawned;
                            s.spawn(move |_| {
                                let _ = tx.send((k, build(k)));
                            });
                            spawned += 1;
                        }
                    }
                    if paused() {
                        // Quiet first: the builds under way finish.
                        while received < spawned {
                            receive(&mut ready, &mut received);
                        }
                        wait(step)?;
                        while spawned <= i {
                            let tx = tx.clone();
                            let k = spawned;
                            s.spawn(move |_| {
                                let _ = tx.send((k, build(k)));
                            });
                            spawned += 1;
                        }
                    }
                    while !ready.contains_key(&i) {
                        receive(&mut ready, &mut received);
                    }
                    let b = ready.remove(&i).expect("just received");
                    step(Step::Measure(i, b))?;
                }
                Ok(())
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    /// Records, for every build, how many builds and timed runs were
    /// under way when it started.
    struct Trace {
        building: AtomicUsize,
        timing: AtomicUsize,
        most_builds: AtomicUsize,
        built_while_timing: AtomicUsize,
    }

    fn trace() -> Trace {
        Trace {
            building: AtomicUsize::new(0),
            timing: AtomicUsize::new(0),
            most_builds: AtomicUsize::new(0),
            built_while_timing: AtomicUsize::new(0),
        }
    }

    fn run(mode: Mode, jobs: usize, n: usize, t: &Trace) -> Vec<usize> {
        let build = |i: usize| {
            let now = t.building.fetch_add(1, Ordering::SeqCst) + 1;
            t.most_builds.fetch_max(now, Ordering::SeqCst);
            if t.timing.load(Ordering::SeqCst) > 0 {
                t.built_while_timing.fetch_add(1, Ordering::SeqCst);
            }
            std::thread::sleep(Duration::from_millis(30));
            t.building.fetch_sub(1, Ordering::SeqCst);
            i * 10
        };
        let mut order = Vec::new();
        in_order::<usize, ()>(n, jobs, mode, None, &build, &mut |s| {
            let Step::Measure(i, b) = s else {
                panic!("no pause file")
            };
            assert_eq!(b, i * 10);
            t.timing.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(30));
            t.timing.fetch_sub(1, Ordering::SeqCst);
            order.push(i);
            Ok(())
        })
        .unwrap();
        order
    }

    #[test]
    fn batches_build_together_and_never_beside_a_timed_run() {
        let t = trace();
        assert_eq!(run(Mode::Batches, 3, 7, &t), (0..7).collect::<Vec<_>>());
        assert_eq!(t.most_builds.load(Ordering::SeqCst), 3);
        assert_eq!(t.built_while_timing.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn one_job_builds_one_at_a_time() {
        let t = trace();
        assert_eq!(run(Mode::Batches, 1, 4, &t), [0, 1, 2, 3]);
        assert_eq!(t.most_builds.load(Ordering::SeqCst), 1);
        assert_eq!(t.built_while_timing.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn overlapping_builds_run_ahead_of_the_timing_in_order() {
        let t = trace();
        let start = Instant::now();
        assert_eq!(
            run(Mode::Overlap { compile: None }, 2, 12, &t),
            (0..12).collect::<Vec<_>>()
        );
        assert!(t.most_builds.load(Ordering::SeqCst) <= 2);
        assert!(t.built_while_timing.load(Ordering::SeqCst) > 0);
        // 12 × 30 ms of timing, the builds hidden behind it (serially:
        // 12 × 60 ms).
        assert!(
            start.elapsed() < Duration::from_millis(12 * 60),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn an_error_stops_it_and_builds_under_way_finish() {
        let built = Mutex::new(Vec::new());
        let build = |i: usize| {
            std::thread::sleep(Duration::from_millis(10));
            built.lock().unwrap().push(i);
            i
        };
        for mode in [Mode::Batches, Mode::Overlap { compile: None }] {
            built.lock().unwrap().clear();
            let r = in_order(50, 2, mode, None, &build, &mut |s| match s {
                Step::Measure(3, _) => Err(3),
                _ => Ok(()),
            });
            assert_eq!(r, Err(3));
            let n = built.lock().unwrap().len();
            assert!((4..=9).contains(&n), "{mode:?}: {n} built");
        }
    }

    #[test]
    fn a_pause_waits_for_the_builds_under_way() {
        let dir = tempfile::tempdir().unwrap();
        let pause = dir.path().join("pause");
        let building = AtomicUsize::new(0);
        let build = |i: usize| {
            building.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(20));
            building.fetch_sub(1, Ordering::SeqCst);
            i
        };
        let mut waits = 0;
        let mut seen_building = Vec::new();
        in_order::<usize, ()>(
            10,
            2,
            Mode::Overlap { compile: None },
            Some(&pause),
            &build,
            &mut |s| {
                match s {
                    Step::Wait => {
                        waits += 1;
                        seen_building.push(building.load(Ordering::SeqCst));
                        std::fs::remove_file(&pause).unwrap();
                    }
                    Step::Measure(4, _) => std::fs::write(&pause, "").unwrap(),
                    Step::Measure(..) => {}
                }
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(waits, 1);
        assert_eq!(seen_building, [0], "no build runs while paused");
    }

    #[test]
    fn pinned_builders_run_on_their_cores() {
        let last = Cores::allowed().unwrap().iter().last().unwrap();
        let mut one = Cores::none();
        one.insert(last);
        let seen = Mutex::new(Vec::new());
        let build = |_| seen.lock().unwrap().push(Cores::allowed().unwrap());
        in_order::<(), ()>(
            4,
            2,
            Mode::Overlap { compile: Some(one) },
            None,
            &build,
            &mut |_| Ok(()),
        )
        .unwrap();
        assert!(seen.lock().unwrap().iter().all(|c| *c == one));
        if Cores::allowed().unwrap().len() > 1 {
            assert_ne!(Cores::allowed().unwrap(), one, "the caller keeps its cores");
        }
    }
}
