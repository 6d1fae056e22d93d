//! One program checked: transformed under each configuration, compiled by
//! each compiler, run at each parameter set and thread count, and its
//! output compared with the original's; a finding is saved with what
//! reproduces it.

use super::generate::{Generated, generate, pick_configs, uses_unsigned};
use super::program::Program;
use super::{Counts, Finding, Options, compare_outputs};
use crate::config::Config;
use crate::frontend;
use crate::lab::compiler::Compiler;
use crate::lab::confine;
use crate::lab::runner::{self, Exit};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

mod save;

/// A run's limits: its deadline and the default memory limit.
fn limits(timeout: Duration) -> confine::Limits {
    confine::Limits::new(timeout, Some(confine::default_memory_limit()))
}

pub(super) fn suspects(p: &Program, set: Option<usize>) -> Vec<String> {
    let mut v = Vec::new();
    if uses_unsigned(p) {
        v.push("unsigned".to_string());
    }
    if let Some(s) = set
        && p.param_sets[s].iter().any(|&x| x <= 0)
    {
        v.push("parameter<=0".to_string());
    }
    v
}

pub(super) struct Ctx<'a> {
    pub(super) opts: &'a Options,
    pub(super) compilers: Vec<Compiler>,
}

#[derive(Default)]
pub(super) struct ProgramResult {
    pub(super) counts: Counts,
    pub(super) unchanged: BTreeMap<String, usize>,
    /// The alias mode: why detection left the kernel's nests out (each
    /// reason once).
    pub(super) rejected_nests: Vec<String>,
    pub(super) findings: Vec<Finding>,
}

/// What detection said of the kernel (the alias mode), read from the
/// child's notes: the regions it found there, how many of them are
/// versioned on a run-time alias check, and why it took no nest it left.
#[derive(Debug, Default, PartialEq)]
struct Detection {
    regions: usize,
    versioned: usize,
    rejected: Vec<String>,
    /// The kernel's regions' first and last lines.
    lines: Vec<(usize, usize)>,
}

/// The words of the command line's notes that [`Detection`] reads.
const DETECTED_IN_KERNEL: &str = "detected a SCoP in kernel at ";
const VERSIONED: &str = "; versioned on aliasing";
const REJECTED_IN_KERNEL: &str = "rejected loop nest in kernel ";
const NOTHING_DETECTED: &str = "no static control part detected";
/// Why a pair is unchanged when detection found no region in the kernel.
const NO_KERNEL_REGION: &str = "detection found no region in the kernel";

/// The line of a note `path:line[:col]: ...` whose message starts with
/// `what`.
fn note_line(note: &str, what: &str) -> Option<usize> {
    let head = &note[..note.find(what)?];
    let mut parts = head.trim_end_matches(": ").rsplit(':');
    let (last, before) = (parts.next()?, parts.next()?);
    before.parse().or_else(|_| last.parse()).ok()
}

impl Detection {
    fn read(stderr: &str) -> Detection {
        let mut d = Detection::default();
        for line in stderr.lines() {
            if let Some((_, at)) = line.split_once(DETECTED_IN_KERNEL) {
                d.regions += 1;
                d.versioned += line.contains(VERSIONED) as usize;
                // `path:first-last[; versioned ...]`
                let span = at.split(';').next().unwrap_or(at);
                let span = span.rsplit(':').next().unwrap_or(span);
                if let Some((a, b)) = span.split_once('-')
                    && let (Ok(a), Ok(b)) = (a.trim().parse(), b.trim().parse())
                {
                    d.lines.push((a, b));
                }
            } else if let Some((_, rest)) = line.split_once(REJECTED_IN_KERNEL) {
                // `(lines a-b): file:l:c: reason`: the reason, by class.
                let why = rest.splitn(3, ": ").nth(2).unwrap_or(rest);
                let class = reason_class(why);
                if !d.rejected.contains(&class) {
                    d.rejected.push(class);
                }
            }
        }
        d
    }

    /// What a pair left unchanged, as the alias mode counts it: nothing
    /// when some region of the kernel was transformed (the variant is
    /// checked; what detection found elsewhere, in `init` say, does not
    /// count), else why the kernel's regions were not.
    fn kernel_skips(&self, skipped: &[String]) -> Vec<String> {
        if self.regions == 0 {
            return vec![NO_KERNEL_REGION.to_string()];
        }
        let in_kernel: Vec<String> = skipped
            .iter()
            .filter(|s| {
                note_line(s, ": SCoP ")
                    .is_some_and(|l| self.lines.iter().any(|&(a, b)| a <= l && l <= b))
            })
            .cloned()
            .collect();
        if in_kernel.len() < self.regions {
            Vec::new()
        } else {
            in_kernel
        }
    }
}

pub(super) fn compile(
    c: &Compiler,
    flags: &[String],
    src: &Path,
    exe: &Path,
) -> Result<(), String> {
    let out = Command::new(&c.program)
        .args(flags)
        .arg("-fopenmp")
        .arg(src)
        .arg("-o")
        .arg(exe)
        .arg("-lm")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", c.program.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// What a failing variant run looked like.
struct Failure {
    kind: &'static str,
    set: usize,
    threads: usize,
    detail: String,
    actual: String,
}

impl Ctx<'_> {
    fn note(&self, msg: &str) {
        if let Some(p) = &self.opts.progress {
            p(super::Event::Finding(msg.to_string()));
        }
    }

    pub(super) fn program(&self, index: usize) -> ProgramResult {
        let opts = self.opts;
        let mut res = ProgramResult::default();
        res.counts.programs = 1;
        let Some((generated, mut rng)) =
            generate(opts.seed, index, opts.params, opts.generator, opts.alias)
        else {
            res.counts.gave_up = 1;
            return res;
        };
        let work = opts.out.join("work").join(format!("p{index:05}"));
        if std::fs::create_dir_all(&work).is_err() {
            res.counts.original_failed = 1;
            return res;
        }
        let prog = work.join("prog.c");
        let _ = std::fs::write(&prog, &generated.text);
        let subject = Subject {
            index,
            generated: &generated,
            work: &work,
            prog: &prog,
        };
        res.counts.overlap_calls = generated.overlaps.len();
        // The alias mode's SCoPs are detected by the child that transforms.
        let src = match opts.alias {
            true => Ok(None),
            false => {
                frontend::parse_source(&prog, generated.text.clone(), &frontend::Options::default())
                    .map(Some)
            }
        };
        let src = match src {
            Ok(s) => s,
            Err(e) => {
                res.counts.rejected = 1;
                res.findings.extend(self.save(
                    "frontend-rejected",
                    index,
                    &generated,
                    None,
                    None,
                    &e.to_string(),
                    None,
                ));
                self.cleanup(&work);
                return res;
            }
        };
        let configs = pick_configs(&mut rng, opts.configs, opts.extended);
        res.counts.pairs = configs.len();
        let variants = self.transform(&subject, src.as_ref(), &configs, &mut res);
        let mut verdicts = Verdicts::new(configs.len());
        for comp in &self.compilers {
            let orig_exe = work.join(format!("orig-{}", comp.name()));
            if let Err(e) = compile(comp, &opts.cflags, &prog, &orig_exe) {
                verdicts.original_failed = true;
                res.findings
                    .extend(self.original_failed(&subject, comp, &e));
                continue;
            }
            let reference = self.reference(&subject, comp, &orig_exe, &mut verdicts, &mut res);
            for (k, cfg) in configs.iter().enumerate() {
                let Some(text) = &variants[k] else { continue };
                let variant = Variant { k, cfg, text };
                self.check_variant(
                    &subject,
                    comp,
                    &variant,
                    &reference,
                    &mut verdicts,
                    &mut res,
                );
            }
        }
        res.counts.wrong = verdicts.wrong.iter().filter(|&&x| x).count();
        res.counts.crashed = verdicts
            .crashed
            .iter()
            .zip(&verdicts.wrong)
            .filter(|&(&c, &w)| c && !w)
            .count();
        res.counts.compile_errors = verdicts.broken.iter().filter(|&&x| x).count();
        res.counts.oracle = verdicts.oracle as usize;
        res.counts.original_failed = verdicts.original_failed as usize;
        self.cleanup(&work);
        res
    }

    /// The program transformed under each configuration: `Some(text)`
    /// when transformed; an engine's error or panic is a finding.
    fn transform(
        &self,
        subject: &Subject<'_>,
        src: Option<&frontend::SourceFile>,
        configs: &[Config],
        res: &mut ProgramResult,
    ) -> Vec<Option<String>> {
        let (opts, index, generated) = (self.opts, subject.index, subject.generated);
        let mut variants: Vec<Option<String>> = Vec::new();
        let mut detection: Option<Detection> = None;
        for (k, cfg) in configs.iter().enumerate() {
            let r = match (&opts.polytune, src) {
                (None, None) => Ok(Err((
                    "engine-error",
                    "the alias mode needs the polytune binary".to_string(),
                ))),
                (None, Some(src)) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    crate::engine::pipeline::optimize(src, cfg, None)
                }))
                .map(|r| r.map_err(|e| ("engine-error", e.to_string())))
                .map_err(|panic| {
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default()
                }),
                (Some(bin), _) => Ok(self
                    .optimize_with(
                        bin,
                        subject.prog,
                        &subject.work.join(format!("v{k}.c")),
                        cfg,
                    )
                    .map(|(mut outcome, d)| {
                        if let Some(d) = &d {
                            outcome.skipped = d.kernel_skips(&outcome.skipped);
                        }
                        // Detection does not depend on the configuration:
                        // the first run's is the program's.
                        if detection.is_none() {
                            detection = d;
                        }
                        outcome
                    })),
            };
            // An internal error is a finding, whether seen in-process or as
            // the child's exit code 3.
            let r = r.map(|o| {
                o.and_then(|o| match o.internal.is_empty() {
                    true => Ok(o),
                    false => Err(("engine-error", o.internal.join("\n"))),
                })
            });
            match r {
                Ok(Ok(outcome)) if outcome.skipped.is_empty() => {
                    res.counts.transformed += 1;
                    let text = match opts.tamper {
                        Some(t) => t(&generated.program, &outcome.text),
                        None => outcome.text,
                    };
                    variants.push(Some(text));
                }
                Ok(Ok(outcome)) => {
                    res.counts.unchanged += 1;
                    for s in &outcome.skipped {
                        let why = s
                            .split_once("left unchanged: ")
                            .map(|(_, w)| w)
                            .unwrap_or(s);
                        *res.unchanged.entry(reason_class(why)).or_default() += 1;
                    }
                    variants.push(None);
                }
                Ok(Err((kind, e))) => {
                    res.counts.engine_errors += 1;
                    res.findings.extend(self.save(
                        kind,
                        index,
                        generated,
                        Some((cfg, "")),
                        None,
                        &e,
                        None,
                    ));
                    variants.push(None);
                }
                Err(msg) => {
                    res.counts.engine_errors += 1;
                    res.findings.extend(self.save(
                        "engine-panic",
                        index,
                        generated,
                        Some((cfg, "")),
                        None,
                        &msg,
                        None,
                    ));
                    variants.push(None);
                }
            }
        }
        if let Some(d) = detection {
            res.counts.detected = (d.regions > 0) as usize;
            res.counts.regions = d.regions;
            res.counts.versioned = d.versioned;
            res.rejected_nests = d.rejected;
        }
        variants
    }

    /// A finding against the original program built by `comp`.
    fn original_failed(
        &self,
        subject: &Subject<'_>,
        comp: &Compiler,
        what: &str,
    ) -> Option<Finding> {
        self.save(
            "original-failed",
            subject.index,
            subject.generated,
            None,
            Some(comp),
            what,
            None,
        )
    }

    /// The reference output of the original built by `comp` at each
    /// parameter set (`None` where it failed), checked against the
    /// interpreter's (the oracle).
    fn reference(
        &self,
        subject: &Subject<'_>,
        comp: &Compiler,
        orig_exe: &Path,
        verdicts: &mut Verdicts,
        res: &mut ProgramResult,
    ) -> Vec<Option<String>> {
        let (opts, generated) = (self.opts, subject.generated);
        let mut reference = Vec::new();
        for (s, expected) in generated.expected.iter().enumerate() {
            let args = generated.program.args(s);
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            match runner::run(orig_exe, &argv, opts.threads[0], &limits(opts.timeout)) {
                Ok(r) if r.ok() => {
                    if let Err(m) = compare_outputs(expected, &r.stdout) {
                        verdicts.oracle = true;
                        let f = Failure {
                            kind: "oracle",
                            set: s,
                            threads: opts.threads[0],
                            detail: m.clone(),
                            actual: r.stdout.clone(),
                        };
                        res.findings.extend(self.save(
                            "oracle",
                            subject.index,
                            generated,
                            None,
                            Some(comp),
                            &format!("interpreter vs compiled original: {m}"),
                            Some((&f, expected)),
                        ));
                    }
                    reference.push(Some(r.stdout));
                }
                other => {
                    verdicts.original_failed = true;
                    let what = match other {
                        Ok(r) => format!("{:?}: {}", r.exit, r.stderr),
                        Err(e) => e.to_string(),
                    };
                    res.findings
                        .extend(self.original_failed(subject, comp, &what));
                    reference.push(None);
                }
            }
        }
        reference
    }

    /// One variant built by `comp` and run at each parameter set and
    /// thread count against the reference; its first failure is a finding.
    fn check_variant(
        &self,
        subject: &Subject<'_>,
        comp: &Compiler,
        variant: &Variant<'_>,
        reference: &[Option<String>],
        verdicts: &mut Verdicts,
        res: &mut ProgramResult,
    ) {
        let (opts, index, generated) = (self.opts, subject.index, subject.generated);
        let Variant { k, cfg, text } = *variant;
        let vsrc = subject.work.join(format!("v{k}.c"));
        let vexe = subject.work.join(format!("v{k}-{}", comp.name()));
        let _ = std::fs::write(&vsrc, text);
        if let Err(e) = compile(comp, &opts.cflags, &vsrc, &vexe) {
            verdicts.broken[k] = true;
            res.findings.extend(self.save(
                "compile-error",
                index,
                generated,
                Some((cfg, text)),
                Some(comp),
                &e,
                None,
            ));
            return;
        }
        let mut first: Option<(Failure, String)> = None;
        let mut failures = 0;
        for (s, refer) in reference.iter().enumerate() {
            let Some(refer) = refer else { continue };
            let args = generated.program.args(s);
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            for &t in &opts.threads {
                res.counts.runs += 1;
                let Some(f) = run_variant(&vexe, &argv, (s, t), refer, opts.timeout) else {
                    continue;
                };
                failures += 1;
                if f.kind == "wrong" {
                    verdicts.wrong[k] = true;
                    res.counts.wrong_runs += 1;
                    res.counts.wrong_overlap_runs += in_overlap(&f.detail) as usize;
                } else {
                    verdicts.crashed[k] = true;
                }
                if first.is_none() {
                    first = Some((f, refer.clone()));
                }
            }
        }
        if let Some((f, expected)) = first {
            let detail = format!(
                "{} at {} with {} thread(s) ({failures} failing run(s) of this build)",
                f.detail,
                generated.program.describe_params(f.set),
                f.threads
            );
            let finding = self.save(
                f.kind,
                index,
                generated,
                Some((cfg, text)),
                Some(comp),
                &detail,
                Some((&f, &expected)),
            );
            res.findings.extend(finding.map(|mut x| {
                if in_overlap(&f.detail) {
                    x.suspects.push("overlapping call".to_string());
                }
                x
            }));
        }
    }

    /// polytune optimizing `prog` with `cfg` into `out`, as a child
    /// process; in the alias mode, with what its detection said.
    fn optimize_with(
        &self,
        bin: &Path,
        prog: &Path,
        out: &Path,
        cfg: &Config,
    ) -> Result<(crate::engine::pipeline::Outcome, Option<Detection>), (&'static str, String)> {
        let (p, o, c) = (
            prog.to_string_lossy().into_owned(),
            out.to_string_lossy().into_owned(),
            cfg.to_string(),
        );
        let alias = self.opts.alias;
        let args = (self.opts.optimize_args)(&p, &c, &o, alias);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let unchanged = |text: String, why: &str| crate::engine::pipeline::Outcome {
            text,
            skipped: vec![why.to_string()],
            internal: Vec::new(),
            openmp: false,
            notes: Vec::new(),
        };
        let detection = |stderr: &str| alias.then(|| Detection::read(stderr));
        match runner::run(bin, &args, 1, &limits(self.opts.engine_timeout)) {
            // Nothing detected in the whole file: the program unchanged.
            Ok(r) if alias && r.exit == Exit::Code(1) && r.stderr.contains(NOTHING_DETECTED) => {
                let text =
                    std::fs::read_to_string(prog).map_err(|e| ("engine-error", e.to_string()))?;
                Ok((unchanged(text, NOTHING_DETECTED), detection(&r.stderr)))
            }
            Ok(r) if r.ok() => {
                let text =
                    std::fs::read_to_string(out).map_err(|e| ("engine-error", e.to_string()))?;
                let skipped = r
                    .stderr
                    .lines()
                    .filter(|l| l.contains("left unchanged"))
                    .map(|l| l.trim_start_matches("polytune: warning: ").to_string())
                    .collect();
                let outcome = crate::engine::pipeline::Outcome {
                    text,
                    skipped,
                    internal: Vec::new(),
                    // The child does not say; the configuration asked for
                    // it (the fuzzer builds every program with OpenMP).
                    openmp: cfg.omp,
                    notes: Vec::new(),
                };
                Ok((outcome, detection(&r.stderr)))
            }
            Ok(r) if r.exit == Exit::Timeout => Err((
                "engine-timeout",
                format!(
                    "optimize took more than {} s",
                    self.opts.engine_timeout.as_secs()
                ),
            )),
            Ok(r) if r.exit == Exit::Code(101) || matches!(r.exit, Exit::Signal(_)) => {
                Err(("engine-panic", format!("{:?}: {}", r.exit, r.stderr.trim())))
            }
            Ok(r) => Err(("engine-error", format!("{:?}: {}", r.exit, r.stderr.trim()))),
            Err(e) => Err(("engine-error", format!("cannot run {}: {e}", bin.display()))),
        }
    }

    fn cleanup(&self, work: &Path) {
        if !self.opts.keep_work {
            let _ = std::fs::remove_dir_all(work);
        }
    }
}

/// One run of a variant at parameter set and thread count `(set,
/// threads)`: its failure, if it fails, against the reference output.
fn run_variant(
    exe: &Path,
    argv: &[&str],
    (set, threads): (usize, usize),
    reference: &str,
    timeout: Duration,
) -> Option<Failure> {
    match runner::run(exe, argv, threads, &limits(timeout)) {
        Ok(r) if r.ok() => match compare_outputs(reference, &r.stdout) {
            Ok(()) => None,
            Err(m) => Some(Failure {
                kind: "wrong",
                set,
                threads,
                detail: m,
                actual: r.stdout,
            }),
        },
        Ok(r) => Some(Failure {
            kind: if r.exit == Exit::Timeout {
                "timeout"
            } else {
                "crash"
            },
            set,
            threads,
            detail: format!("{:?} {}", r.exit, r.stderr.trim()),
            actual: r.stdout,
        }),
        Err(e) => Some(Failure {
            kind: "crash",
            set,
            threads,
            detail: format!("cannot run: {e}"),
            actual: String::new(),
        }),
    }
}

/// The program being checked, and where its files are.
struct Subject<'g> {
    index: usize,
    generated: &'g Generated,
    /// Its work directory and its source there.
    work: &'g Path,
    prog: &'g Path,
}

/// One transformed variant: its configuration's position and the
/// configuration, and its text.
#[derive(Clone, Copy)]
struct Variant<'v> {
    k: usize,
    cfg: &'v Config,
    text: &'v str,
}

/// What the checks found, per configuration and for the program.
struct Verdicts {
    /// Per configuration: a wrong output, another failing run, a build
    /// that failed.
    wrong: Vec<bool>,
    crashed: Vec<bool>,
    broken: Vec<bool>,
    /// The interpreter and a compiled original disagreed.
    oracle: bool,
    /// The original failed to build or run.
    original_failed: bool,
}

impl Verdicts {
    fn new(configs: usize) -> Verdicts {
        Verdicts {
            wrong: vec![false; configs],
            crashed: vec![false; configs],
            broken: vec![false; configs],
            oracle: false,
            original_failed: false,
        }
    }
}

/// A comparison's message names an array of an overlapping call (the
/// alias mode's `overlap1_A_B`) first.
fn in_overlap(detail: &str) -> bool {
    detail.starts_with("overlap")
}

/// A skip reason without its numbers and names, to group them.
fn reason_class(why: &str) -> String {
    let s: String = why
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect();
    s.lines().next().unwrap_or("").chars().take(100).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STDERR: &str = "polytune: note: rejected loop nest in kernel (lines 27-47): /w/prog.c:42:11: data-dependent `if` condition: `A[i1]` reads memory that changes with the loop iterator `i1`
polytune: note: rejected loop nest in dump_long (lines 75-75): /w/prog.c:75:41: call to `printf`, which may have side effects
polytune: detected a SCoP in init at /w/prog.c:52-52
polytune: detected a SCoP in kernel at /w/prog.c:30-34
polytune: detected a SCoP in kernel at /w/prog.c:39-41; versioned on aliasing: the transformed code runs where a run-time check finds that `A` and `B` do not overlap, the original elsewhere (--assume-no-alias drops the check)
";

    #[test]
    fn detection_is_read_from_the_notes_of_the_kernel_only() {
        let d = Detection::read(STDERR);
        assert_eq!(d.regions, 2);
        assert_eq!(d.versioned, 1);
        assert_eq!(d.lines, vec![(30, 34), (39, 41)]);
        assert_eq!(
            d.rejected,
            vec![
                "data-dependent `if` condition: `A[i#]` reads memory that changes with the loop iterator `i#`"
                    .to_string()
            ]
        );
        assert_eq!(
            Detection::read("polytune: detected a SCoP in init at x.c:1-2\n").regions,
            0
        );
    }

    #[test]
    fn a_pair_is_unchanged_only_when_every_region_of_the_kernel_is() {
        let d = Detection::read(STDERR);
        let skip = |line: usize| format!("/w/prog.c:{line}:3: SCoP 1 left unchanged: why {line}");
        // A region of init left unchanged: the kernel's were transformed.
        assert!(d.kernel_skips(&[skip(52)]).is_empty());
        // One of the kernel's two: the other was transformed.
        assert!(d.kernel_skips(&[skip(31)]).is_empty());
        let both = [skip(31), skip(40), skip(52)];
        assert_eq!(d.kernel_skips(&both), both[..2].to_vec());
        // No column in the note.
        assert_eq!(
            note_line("/w/p.c:40: SCoP 2 left unchanged: x", ": SCoP "),
            Some(40)
        );
        assert_eq!(
            Detection::default().kernel_skips(&[]),
            vec![NO_KERNEL_REGION.to_string()]
        );
    }

    #[test]
    fn a_difference_in_an_overlapping_call_is_told_apart() {
        assert!(in_overlap(
            "overlap2_A_B[3]: expected 1, got 2 (1 value(s) differ)"
        ));
        assert!(!in_overlap("A[3]: expected 1, got 2 (1 value(s) differ)"));
    }
}
