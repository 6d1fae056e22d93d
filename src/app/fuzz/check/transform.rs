//! The stage of one program that transforms it under each configuration
//! (in this process, or through the polytune binary, whose notes say
//! what detection found in the alias mode), with the directive mode's
//! judgment of a SCoP taken under a wrong directive.

use super::*;

/// What detection said of the kernel (the alias mode), read from the
/// child's notes: the regions it found there, how many of them are
/// versioned on a run-time alias check, and why it took no nest it left.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Detection {
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

impl Ctx<'_> {
    /// The program transformed under each configuration: `Some(text)`
    /// when transformed; an engine's error or panic is a finding.
    pub(super) fn transform(
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
                    self.judge_directive(subject, cfg, res);
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

    /// The directive mode's judgment of a pair that transformed the SCoP:
    /// a wrong directive taken where the transformed code runs (its
    /// context holds at a parameter set where the loop does not commute)
    /// is a finding; a right one is counted.
    fn judge_directive(&self, subject: &Subject<'_>, cfg: &Config, res: &mut ProgramResult) {
        let Some(d) = subject.directive else { return };
        let generated = subject.generated;
        let at = crate::app::fuzz::directive::transformed_at(
            &generated.program,
            &generated.text,
            &d.racy_sets,
        );
        match at.filter(|v| !v.is_empty()) {
            Some(sets) => {
                res.counts.wrong_directive_taken += 1;
                res.findings.extend(self.save(
                    "wrong-directive-taken",
                    subject.index,
                    generated,
                    Some((cfg, "")),
                    None,
                    &format!(
                        "the SCoP was transformed under the user's `{}`, which does not hold: run in reverse, its loop (the {}th of the SCoP, from 0) prints otherwise at parameter sets {sets:?}, where the transformed code runs",
                        d.text, d.loop_index
                    ),
                    None,
                ));
            }
            None => res.counts.directive_taken += 1,
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
}
