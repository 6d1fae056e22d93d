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

fn compile_command(c: &Compiler, flags: &[String], src: &str, exe: &str) -> String {
    format!(
        "{} {} -fopenmp {src} -o {exe} -lm",
        c.program.display(),
        flags.join(" ")
    )
}

fn shell_args(args: &[String]) -> String {
    args.join(" ")
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

    #[allow(clippy::too_many_arguments)]
    fn save(
        &self,
        kind: &str,
        index: usize,
        generated: &Generated,
        config: Option<(&Config, &str)>,
        compiler: Option<&Compiler>,
        detail: &str,
        run: Option<(&Failure, &str)>,
    ) -> Option<Finding> {
        // A signal is ending polytune and killed what ran: no finding.
        if crate::lab::confine::ending() {
            return None;
        }
        let mut name = format!("{kind}-p{index:05}");
        if let Some(c) = compiler {
            name.push_str(&format!("-{}", c.name()));
        }
        if let Some((cfg, _)) = config {
            name.push_str(&format!("-{}", cfg.bits()));
        }
        let dir = self.opts.out.join("findings").join(&name);
        let suspects = suspects(&generated.program, run.map(|(f, _)| f.set));
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join("prog.c"), &generated.text);
        let mut sh = format!(
            "#!/bin/sh\n# polytune fuzz finding: {kind}\n# seed {} program {index}\n# {}\n",
            self.opts.seed,
            detail.lines().next().unwrap_or("")
        );
        sh.push_str("set -x\ncd \"$(dirname \"$0\")\"\nP=${POLYTUNE:-polytune}\n");
        if let Some((cfg, variant)) = config {
            let _ = std::fs::write(dir.join("variant.c"), variant);
            let args = (self.opts.optimize_args)("prog.c", &cfg.to_string(), "variant.c");
            sh.push_str(&format!("\"$P\" {}\n", shell_words::join(&args)));
        }
        if let Some(c) = compiler {
            sh.push_str(&compile_command(c, &self.opts.cflags, "prog.c", "orig"));
            sh.push('\n');
            if config.is_some() {
                sh.push_str(&compile_command(
                    c,
                    &self.opts.cflags,
                    "variant.c",
                    "variant",
                ));
                sh.push('\n');
            }
        }
        let (set, threads) = run.map(|(f, _)| (f.set, f.threads)).unwrap_or((0, 1));
        let args = shell_args(&generated.program.args(set));
        sh.push_str(&format!(
            "# parameters: {}\n./orig {args} > expected.txt\n",
            generated.program.describe_params(set)
        ));
        if config.is_some() && compiler.is_some() {
            sh.push_str(&format!(
                "OMP_NUM_THREADS={threads} ./variant {args} > actual.txt\ncmp expected.txt actual.txt && echo same\n"
            ));
        }
        let _ = std::fs::write(dir.join("repro.sh"), sh);
        if let Some((f, expected)) = run {
            let _ = std::fs::write(dir.join("expected.txt"), expected);
            let _ = std::fs::write(dir.join("actual.txt"), &f.actual);
        }
        let mut info = format!("kind: {kind}\nseed: {}\nprogram: {index}\n", self.opts.seed);
        if let Some((cfg, _)) = config {
            info.push_str(&format!("config: {cfg} ({})\n", cfg.bits()));
        }
        if let Some(c) = compiler {
            info.push_str(&format!(
                "compiler: {} ({}) {}\n",
                c.name(),
                c.version,
                self.opts.cflags.join(" ")
            ));
        }
        for s in 0..generated.program.param_sets.len() {
            info.push_str(&format!(
                "parameter set {s}: {}\n",
                generated.program.describe_params(s)
            ));
        }
        info.push_str(&format!(
            "detail: {detail}\nsuspects: {}\n",
            suspects.join(", ")
        ));
        let _ = std::fs::write(dir.join("info.txt"), info);
        self.note(&format!(
            "fuzz: {kind}: program {index}{}{}: {} -> {}",
            compiler
                .map(|c| format!(" {}", c.name()))
                .unwrap_or_default(),
            config.map(|(c, _)| format!(" {c}")).unwrap_or_default(),
            detail.lines().next().unwrap_or(""),
            dir.display()
        ));
        Some(Finding {
            kind: kind.to_string(),
            program: index,
            config: config.map(|(c, _)| c.to_string()),
            compiler: compiler.map(|c| c.family),
            detail: detail.to_string(),
            suspects,
            dir,
        })
    }

    pub(super) fn program(&self, index: usize) -> ProgramResult {
        let opts = self.opts;
        let mut res = ProgramResult::default();
        res.counts.programs = 1;
        let Some((generated, mut rng)) = generate(opts.seed, index, opts.params, opts.generator)
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
        let src = match frontend::parse_source(
            &prog,
            generated.text.clone(),
            &frontend::Options::default(),
        ) {
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
        // The variants: Some(text) when transformed.
        let mut variants: Vec<Option<String>> = Vec::new();
        for (k, cfg) in configs.iter().enumerate() {
            let r = match &opts.polytune {
                None => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    crate::engine::pipeline::optimize(&src, cfg, None)
                }))
                .map(|r| r.map_err(|e| ("engine-error", e.to_string())))
                .map_err(|panic| {
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default()
                }),
                Some(bin) => Ok(self.optimize_with(bin, &prog, &work.join(format!("v{k}.c")), cfg)),
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
                        &generated,
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
                        &generated,
                        Some((cfg, "")),
                        None,
                        &msg,
                        None,
                    ));
                    variants.push(None);
                }
            }
        }
        let mut wrong = vec![false; configs.len()];
        let mut crashed = vec![false; configs.len()];
        let mut broken = vec![false; configs.len()];
        let mut oracle = false;
        let mut original_failed = false;
        // A finding against the original program built by `comp`.
        let original = |comp: &Compiler, what: &str| {
            self.save(
                "original-failed",
                index,
                &generated,
                None,
                Some(comp),
                what,
                None,
            )
        };
        for comp in &self.compilers {
            let orig_exe = work.join(format!("orig-{}", comp.name()));
            if let Err(e) = compile(comp, &opts.cflags, &prog, &orig_exe) {
                original_failed = true;
                res.findings.extend(original(comp, &e));
                continue;
            }
            // The reference output at each parameter set.
            let mut reference = Vec::new();
            for (s, expected) in generated.expected.iter().enumerate() {
                let args = generated.program.args(s);
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                match runner::run(&orig_exe, &argv, opts.threads[0], &limits(opts.timeout)) {
                    Ok(r) if r.ok() => {
                        if let Err(m) = compare_outputs(expected, &r.stdout) {
                            oracle = true;
                            let f = Failure {
                                kind: "oracle",
                                set: s,
                                threads: opts.threads[0],
                                detail: m.clone(),
                                actual: r.stdout.clone(),
                            };
                            res.findings.extend(self.save(
                                "oracle",
                                index,
                                &generated,
                                None,
                                Some(comp),
                                &format!("interpreter vs compiled original: {m}"),
                                Some((&f, expected)),
                            ));
                        }
                        reference.push(Some(r.stdout));
                    }
                    other => {
                        original_failed = true;
                        let what = match other {
                            Ok(r) => format!("{:?}: {}", r.exit, r.stderr),
                            Err(e) => e.to_string(),
                        };
                        res.findings.extend(original(comp, &what));
                        reference.push(None);
                    }
                }
            }
            for (k, cfg) in configs.iter().enumerate() {
                let Some(text) = &variants[k] else { continue };
                let vsrc = work.join(format!("v{k}.c"));
                let vexe = work.join(format!("v{k}-{}", comp.name()));
                let _ = std::fs::write(&vsrc, text);
                if let Err(e) = compile(comp, &opts.cflags, &vsrc, &vexe) {
                    broken[k] = true;
                    res.findings.extend(self.save(
                        "compile-error",
                        index,
                        &generated,
                        Some((cfg, text)),
                        Some(comp),
                        &e,
                        None,
                    ));
                    continue;
                }
                let mut first: Option<(Failure, String)> = None;
                let mut failures = 0;
                for (s, refer) in reference.iter().enumerate() {
                    let Some(refer) = refer else { continue };
                    let args = generated.program.args(s);
                    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                    for &t in &opts.threads {
                        res.counts.runs += 1;
                        let fail = match runner::run(&vexe, &argv, t, &limits(opts.timeout)) {
                            Ok(r) if r.ok() => match compare_outputs(refer, &r.stdout) {
                                Ok(()) => None,
                                Err(m) => Some(Failure {
                                    kind: "wrong",
                                    set: s,
                                    threads: t,
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
                                set: s,
                                threads: t,
                                detail: format!("{:?} {}", r.exit, r.stderr.trim()),
                                actual: r.stdout,
                            }),
                            Err(e) => Some(Failure {
                                kind: "crash",
                                set: s,
                                threads: t,
                                detail: format!("cannot run: {e}"),
                                actual: String::new(),
                            }),
                        };
                        if let Some(f) = fail {
                            failures += 1;
                            if f.kind == "wrong" {
                                wrong[k] = true;
                                res.counts.wrong_runs += 1;
                            } else {
                                crashed[k] = true;
                            }
                            if first.is_none() {
                                first = Some((f, refer.clone()));
                            }
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
                    res.findings.extend(self.save(
                        f.kind,
                        index,
                        &generated,
                        Some((cfg, text)),
                        Some(comp),
                        &detail,
                        Some((&f, &expected)),
                    ));
                }
            }
        }
        res.counts.wrong = wrong.iter().filter(|&&x| x).count();
        res.counts.crashed = crashed
            .iter()
            .zip(&wrong)
            .filter(|&(&c, &w)| c && !w)
            .count();
        res.counts.compile_errors = broken.iter().filter(|&&x| x).count();
        res.counts.oracle = oracle as usize;
        res.counts.original_failed = original_failed as usize;
        self.cleanup(&work);
        res
    }

    /// polytune optimizing `prog` with `cfg` into `out`, as a child
    /// process.
    fn optimize_with(
        &self,
        bin: &Path,
        prog: &Path,
        out: &Path,
        cfg: &Config,
    ) -> Result<crate::engine::pipeline::Outcome, (&'static str, String)> {
        let (p, o, c) = (
            prog.to_string_lossy().into_owned(),
            out.to_string_lossy().into_owned(),
            cfg.to_string(),
        );
        let args = (self.opts.optimize_args)(&p, &c, &o);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match runner::run(bin, &args, 1, &limits(self.opts.engine_timeout)) {
            Ok(r) if r.ok() => {
                let text =
                    std::fs::read_to_string(out).map_err(|e| ("engine-error", e.to_string()))?;
                let skipped = r
                    .stderr
                    .lines()
                    .filter(|l| l.contains("left unchanged"))
                    .map(|l| l.trim_start_matches("polytune: warning: ").to_string())
                    .collect();
                Ok(crate::engine::pipeline::Outcome {
                    text,
                    skipped,
                    internal: Vec::new(),
                    // The child does not say; the configuration asked for
                    // it (the fuzzer builds every program with OpenMP).
                    openmp: cfg.omp,
                    notes: Vec::new(),
                })
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

/// A skip reason without its numbers and names, to group them.
fn reason_class(why: &str) -> String {
    let s: String = why
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect();
    s.lines().next().unwrap_or("").chars().take(100).collect()
}
