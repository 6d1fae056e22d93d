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
mod transform;

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
        let Some((mut generated, mut rng)) =
            generate(opts.seed, index, opts.params, opts.generator, opts.alias)
        else {
            res.counts.gave_up = 1;
            return res;
        };
        // The directive's draws have their own stream: the program and
        // its configurations are those of the mode without directives.
        let drawn = match opts.directives {
            true => {
                let mut own = crate::lab::rng::SplitMix64::new(
                    super::program_seed(opts.seed, index) ^ 0x0D1E_C71F_E5EE_D5A1,
                );
                super::directive::add(&mut generated, &mut own)
            }
            false => None,
        };
        res.counts.directives = drawn.is_some() as usize;
        res.counts.wrong_directives = drawn.as_ref().is_some_and(|d| d.racy == Some(true)) as usize;
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
            directive: drawn.as_ref(),
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
        let mut configs = pick_configs(&mut rng, opts.configs, opts.extended);
        for c in &mut configs {
            c.diamond |= opts.diamond;
        }
        res.counts.pairs = configs.len();
        let variants = self.transform(&subject, src.as_ref(), &configs, &mut res);
        let mut verdicts = Verdicts::new(configs.len());
        for comp in &self.compilers {
            let orig_exe = work.join(format!("orig-{}", comp.name()));
            // The directive mode's original is built without its directive
            // (`directive::Drawn::plain`).
            let original = match &drawn {
                Some(d) => {
                    let plain = work.join("plain.c");
                    let _ = std::fs::write(&plain, &d.plain);
                    plain
                }
                None => prog.clone(),
            };
            if let Err(e) = compile(comp, &opts.cflags, &original, &orig_exe) {
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
            // A directive that may not hold races in the original the
            // transformed code falls back to: one thread only (whether
            // polytune took it is `wrong-directive-taken`'s matter).
            let sure = subject.directive.is_none_or(|d| d.racy == Some(false));
            for &t in opts.threads.iter().filter(|&&t| sure || t == 1) {
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
    /// The directive mode: the program's directive.
    directive: Option<&'g super::directive::Drawn>,
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
mod tests;
