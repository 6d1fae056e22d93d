//! The stages of a selection that run programs: build, time the
//! original, search, refine, pick, confirm, and the file to write.

use super::*;
use crate::lab::side::Side;

impl Selection<'_> {
    /// How candidates are built, run and verified, in the scratch
    /// directory.
    pub(crate) fn harness(&self) -> Harness {
        Harness {
            recipe: self.setup.recipe.clone(),
            protocol: self.setup.protocol,
            tolerance: self.setup.tolerance,
            workdir: self.sources.work.path().to_path_buf(),
        }
    }

    /// Stage 0: one native run of the instrumented original: the SCoP
    /// regions it never runs, and its parameters' values (what the
    /// variant ranker's features are computed at).
    pub(crate) fn reach(&mut self) -> Result<Side, SelectionError> {
        let text = crate::engine::pipeline::instrumented(self.src, None, self.context)?.text;
        let path = self.sources.write("reach-src", &text)?;
        self.harness()
            .plain_run(&path)
            .map_err(|why| SelectionError::Unmeasurable {
                path: self.file.display().to_string(),
                why,
            })
    }

    /// Stage 3: a planned strategy's candidates, all compiled at once
    /// before the original is timed. On this 2-core machine a compiler
    /// beside a timed run would disturb the timing, so nothing compiles
    /// while anything is timed (an adaptive strategy's next candidate
    /// depends on the last timing: built one at a time, none here).
    /// The whole `optimize gemm.c -o /dev/null --shots 3 --size small -q`,
    /// medians of 5 alternating runs, one build at a time against built
    /// at once: 3.78 s against 3.93 s with one of the two cores busy with
    /// other work (load 2.5), 7.05 s against 6.51 s under load 9 to 12:
    /// within the noise, never a quiet machine; three small compilations
    /// take a fraction of a second of the run.
    pub(crate) fn build(
        &mut self,
        harness: &Harness,
        ranked: &Ranked,
        report: &mut Report,
    ) -> Result<Prebuilt, SelectionError> {
        // At most the budget; fewer when the plan or the space is shorter.
        let candidates = if self.setup.strategy.adaptive() {
            ranked.budget.min(ranked.variants.len())
        } else {
            ranked.picks.len()
        };
        (self.progress)(Event::Started {
            candidates,
            refinements: self.setup.refine,
        });
        if self.setup.strategy.adaptive() {
            return Ok(Vec::new());
        }
        let mut jobs = Vec::new();
        for (i, (v, _)) in ranked.picks.iter().enumerate() {
            let exe = format!("candidate-{i}");
            let text = self
                .sources
                .instrumented(&ranked.variants[*v].text, &ranked.config(*v))?;
            let path = self.sources.write(&format!("{exe}-src"), &text)?;
            jobs.push((path, exe, ranked.variants[*v].openmp));
        }
        let t = Instant::now();
        let prebuilt = harness.build_all(&jobs).into_iter().map(Some).collect();
        report.phases.builds += t.elapsed().as_secs_f64();
        Ok(prebuilt)
    }

    /// Stage 4: the original, built, run, recorded and timed: the
    /// reference every candidate is verified against and timed after.
    pub(crate) fn original(
        &mut self,
        harness: &Harness,
        counted: &Counted,
        report: &mut Report,
    ) -> Result<Baseline, SelectionError> {
        let t = Instant::now();
        let (orig, reference) = harness.reference(&counted.original, true).map_err(|why| {
            SelectionError::Unmeasurable {
                path: self.file.display().to_string(),
                why,
            }
        })?;
        report.phases.original = t.elapsed().as_secs_f64();
        (self.progress)(Event::Baseline {
            status: orig.status,
        });
        let base = orig.timing.as_ref().map(|t| t.median).unwrap_or(0.0);
        report.original = Some(Run::of(&orig, base));
        Ok(Baseline { reference, base })
    }

    /// Stage 5: the strategy's candidates, each built (unless prebuilt),
    /// verified and timed, within the budget of candidates, seconds and
    /// expected improvement.
    pub(crate) fn search(
        &mut self,
        harness: &Harness,
        ranked: &Ranked,
        baseline: &Baseline,
        mut prebuilt: Prebuilt,
        report: &mut Report,
    ) -> Result<Trials, SelectionError> {
        let setup = self.setup;
        let limits = Limits {
            budget: ranked.budget,
            seconds: setup.time_budget,
            min_ei: setup.min_ei,
        };
        let n = if setup.strategy.adaptive() {
            ranked.budget.min(ranked.variants.len())
        } else {
            ranked.picks.len()
        };
        let mut trials = Trials {
            ran: Vec::new(),
            seen: HashSet::new(),
            evaluated: 0,
            started: Instant::now(),
            builds: 0.0,
        };
        let started = trials.started;
        report.candidates.clear();
        let mut searcher = ranked.searcher(setup.strategy);
        let Outcome {
            history,
            stop,
            final_ei,
        } = drive(
            &mut *searcher,
            &limits,
            &mut || started.elapsed().as_secs_f64(),
            &mut |p| -> Result<Option<f64>, SelectionError> {
                let (i, v) = (p.k - 1, p.variant);
                let exe = format!("candidate-{i}");
                let variant = &ranked.variants[v];
                // Built at once above when planned (the plan's i-th is the
                // search's i-th: a planned searcher hands out its plan).
                let m = match prebuilt.get_mut(i).and_then(Option::take) {
                    Some(built) if ranked.picks.get(i).is_some_and(|(w, _)| *w == v) => {
                        harness.measure_built(built, &baseline.reference, true)
                    }
                    _ => {
                        let text = self
                            .sources
                            .instrumented(&variant.text, &ranked.config(v))?;
                        let path = self.sources.write(&format!("{exe}-src"), &text)?;
                        let m =
                            harness.measure(&path, &exe, &baseline.reference, variant.openmp, true);
                        trials.builds += m.compile_seconds;
                        m
                    }
                };
                let run = Run::of(&m, baseline.base);
                (self.progress)(Event::Candidate {
                    k: p.k,
                    n,
                    status: m.status,
                });
                let speedup = run.speedup;
                trials.seen.insert(variant.hash.clone());
                if let Some(speedup) = speedup {
                    trials.ran.push(Ran {
                        config: ranked.config(v),
                        text: variant.text.clone(),
                        speedup,
                        exe,
                        omp: variant.openmp,
                    });
                }
                let mut c = ranked.candidate(v, p.why.clone().unwrap_or_default());
                c.expected_improvement = p.expected_improvement;
                c.run = Some(run);
                report.candidates.push(c);
                Ok(speedup)
            },
        )?;
        trials.evaluated = history.len();
        report.search = Some(Search {
            strategy: setup.strategy.name(),
            budget: ranked.budget,
            time_budget: setup.time_budget,
            min_ei: setup.min_ei.filter(|_| setup.strategy.adaptive()),
            evaluated: history.len(),
            seconds: started.elapsed().as_secs_f64(),
            stop,
            final_ei,
            transfer_from: matches!(setup.strategy, Strategy::Bo { prior: true })
                .then_some(ranked.ranking.transfer.len()),
        });
        Ok(trials)
    }

    /// Stage 6: beyond the paper's space, steps from the fastest
    /// candidate ([`refine::refine`]), within what is left of the time
    /// budget.
    pub(crate) fn refine(
        &mut self,
        harness: &Harness,
        baseline: &Baseline,
        trials: &mut Trials,
        params: Option<&ParamValues>,
        report: &mut Report,
    ) -> Result<(), SelectionError> {
        let setup = self.setup;
        let start = trials
            .ran
            .iter()
            .max_by(|a, b| a.speedup.total_cmp(&b.speedup))
            .map(|b| (b.config, b.speedup));
        let Some((start, speedup)) = start.filter(|_| setup.refine > 0) else {
            return Ok(());
        };
        let started = trials.started;
        let (src, context) = (self.src, self.context);
        let mut k = 0;
        let target = self.vector_target();
        let rows = params.and_then(|p| refine::rows_per_thread(src, p, setup.protocol.threads));
        refine::refine(
            start,
            target,
            rows,
            speedup,
            setup.refine,
            &mut trials.seen,
            &mut |c| {
                let out = crate::engine::pipeline::optimize(src, c, context).ok()?;
                Some(refine::Written {
                    hash: crate::engine::space::code_hash(&out.text),
                    text: out.text,
                    openmp: out.openmp,
                })
            },
            &mut |c, step, from, written| -> Result<Option<f64>, SelectionError> {
                k += 1;
                let exe = format!("refined-{k}");
                let (text, omp) = (written.text, written.openmp);
                let instrumented = self.sources.instrumented(&text, &c)?;
                let path = self.sources.write(&format!("{exe}-src"), &instrumented)?;
                let m = harness.measure(&path, &exe, &baseline.reference, omp, true);
                trials.builds += m.compile_seconds;
                let run = Run::of(&m, baseline.base);
                (self.progress)(Event::Refined {
                    k,
                    n: setup.refine,
                    status: m.status,
                });
                let speedup = run.speedup;
                report.refinement.push(Refined {
                    config: c,
                    from,
                    step,
                    run,
                });
                if let Some(speedup) = speedup {
                    trials.ran.push(Ran {
                        config: c,
                        text,
                        speedup,
                        exe,
                        omp,
                    });
                }
                Ok(speedup)
            },
            &mut || {
                setup
                    .time_budget
                    .is_some_and(|t| started.elapsed().as_secs_f64() >= t)
            },
        )?;
        Ok(())
    }

    /// Stage 7: the fastest program that beat the original, unless it is
    /// threaded and loses to the original once its threads sleep at
    /// barriers instead of spinning (as they do on a loaded machine): a
    /// speedup that rests on fine-grained parallel loops swings with the
    /// machine's load, and the next run could be slower than the input.
    /// Then the next fastest.
    pub(crate) fn pick(
        &self,
        harness: &Harness,
        baseline: &Baseline,
        mut ran: Vec<Ran>,
        report: &mut Report,
    ) -> Option<Ran> {
        let t = Instant::now();
        ran.retain(|r| r.speedup > 1.0);
        ran.sort_by(|a, b| b.speedup.total_cmp(&a.speedup));
        let mut best = None;
        for r in ran {
            if r.omp {
                let passive = passive_seconds(
                    harness,
                    &self.sources.work.path().join(&r.exe),
                    baseline.base,
                    &self.setup.protocol,
                );
                let holds = holds_when_passive(baseline.base, &passive);
                report.passive.push(PassiveCheck {
                    config: r.config,
                    seconds: passive,
                    holds,
                });
                if !holds {
                    continue;
                }
            }
            best = Some(r);
            break;
        }
        report.phases.passive = t.elapsed().as_secs_f64();
        best
    }

    /// Stage 8: the winner must beat the original again, head to head
    /// (`lab::decide`): a lucky timing above does not make the output
    /// slower than the input. The regions' seconds decide when the
    /// original's can be timed, the whole program's otherwise; both are
    /// measured in the same interleaved rounds. The winner with its
    /// confirmed speedups, or none.
    pub(crate) fn confirm(
        &mut self,
        harness: &Harness,
        baseline: &Baseline,
        best: Option<Ran>,
        report: &mut Report,
    ) -> Option<Confirmed> {
        let t = Instant::now();
        let mut confirmed = None;
        if let Some(winner) = best {
            (self.progress)(Event::HeadToHead {
                rule: self.setup.decision,
            });
            let candidate = self.sources.work.path().join(&winner.exe);
            let h = head_to_head(
                harness,
                &baseline.reference.exe,
                &candidate,
                winner.config,
                &self.setup.decision,
                Basis::for_original(baseline.base),
            );
            if let (Some(_), Some(program)) = (h.confirmed, h.program_speedup) {
                confirmed = Some(Confirmed {
                    ran: winner,
                    program,
                    regions: h.regions_speedup,
                });
            }
            report.head_to_head = Some(h);
        }
        report.phases.confirm = t.elapsed().as_secs_f64();
        confirmed
    }

    /// Stage 10: what was measured, appended to the user's store with
    /// each run's features (when the variant ranker ranked and a store is
    /// named): the original and the candidates of the search that it
    /// ranked. A store that fails is a warning; the selection stands.
    pub fn learn(&mut self, ranked: &Ranked, baseline: &Baseline, report: &mut Report) {
        let Some(path) = self.setup.store.clone() else {
            return;
        };
        if self.feature_rows.is_empty() || baseline.base <= 0.0 {
            return;
        }
        let measurement = |run: &super::Run| crate::lab::verify::Measurement {
            status: run.status,
            detail: run.detail.clone(),
            compile_seconds: 0.0,
            timing: run.seconds.map(|t| crate::lab::runner::Timing {
                samples: vec![t],
                median: t,
                spread: 0.0,
            }),
        };
        let original_run = super::Run {
            status: crate::lab::verify::Status::Ok,
            detail: String::new(),
            seconds: Some(baseline.base),
            speedup: Some(1.0),
        };
        let variant_of = |c: &Config| ranked.ranking.configs.iter().position(|x| x == c);
        // The original by the plain schedule's features (its code
        // regenerated), which the table's originals are too.
        let plain = ranked
            .variants
            .iter()
            .position(|v| v.configs.contains(&Config::default()));
        let original_hash = crate::engine::space::code_hash(&self.src.text);
        let mut measured: Vec<(
            String,
            Vec<Config>,
            Vec<f64>,
            crate::lab::verify::Measurement,
        )> = Vec::new();
        if let Some(Some(x)) = plain.map(|v| &self.feature_rows[v]) {
            measured.push((
                original_hash.clone(),
                Vec::new(),
                x.clone(),
                measurement(&original_run),
            ));
        }
        for c in &report.candidates {
            let (Some(run), Some(v)) = (&c.run, variant_of(&c.config)) else {
                continue;
            };
            if let Some(x) = &self.feature_rows[v] {
                let variant = &ranked.variants[v];
                measured.push((
                    variant.hash.clone(),
                    variant.configs.clone(),
                    x.clone(),
                    measurement(run),
                ));
            }
        }
        let name = self.sources.file_name.to_string_lossy().into_owned();
        let record = crate::app::ranker::Record {
            kernel: &name,
            source_hash: &original_hash,
            compiler: &self.setup.compiler,
            size: self.setup.size,
            threads: self.setup.protocol.threads,
            baseline: baseline.base,
            runs: measured
                .iter()
                .map(|(hash, configs, x, m)| crate::app::ranker::Measured {
                    code_hash: hash,
                    configs,
                    x,
                    measurement: m,
                })
                .collect(),
        };
        match crate::app::ranker::append(&path, &record) {
            Ok(runs) => report.learned = Some(super::Learned { store: path, runs }),
            Err(e) => report
                .warnings
                .push(format!("{e}; nothing was learned from this run")),
        }
    }

    /// Stage 9: the file to write, with a header saying what was chosen
    /// and how it was measured — the original, unchanged, when no
    /// candidate was confirmed faster.
    pub(crate) fn write(
        &mut self,
        best: Option<Confirmed>,
        trials: &Trials,
        mut report: Report,
    ) -> Report {
        let setup = self.setup;
        report.phases.total = self.begun.elapsed().as_secs_f64();
        (self.progress)(Event::Done);
        let how = format!(
            "{} {}, {}, {} threads",
            setup.compiler.name(),
            setup.compiler.flags.join(" "),
            match &setup.recipe.size {
                Some(size) => format!("{size} size"),
                None => "input as built and run below".to_string(),
            },
            setup.protocol.threads
        );
        match best {
            Some(Confirmed {
                ran: w,
                program,
                regions,
            }) => {
                let regions_said = match regions {
                    Some(r) => format!("its SCoP regions {r:.2}x"),
                    None => "its SCoP regions too short to time".to_string(),
                };
                let whole = match program >= 1.0 {
                    true => format!(
                        "measured {program:.2}x faster than the original as a whole program"
                    ),
                    false => format!(
                        "measured at {program:.2}x the original's speed as a whole program (no faster as a whole)"
                    ),
                };
                report.text = chosen(&w.config, format!("{whole}, {regions_said} ({how})"))
                    + &measured_as(&setup.recipe, self.file, w.omp)
                    + &w.text;
                report.choice = Choice {
                    config: Some(w.config),
                    bits: w.config.is_paper().then(|| w.config.bits()),
                    reason: Reason::Measured,
                    chosen_by: None,
                    speedup: Some(program),
                    regions_speedup: regions,
                };
            }
            None => {
                report.text = header(format!(
                    "no candidate of {} ran faster than this original program ({how}); kept unchanged",
                    trials.evaluated + report.refinement.len()
                )) + &measured_as(&setup.recipe, self.file, false)
                    + &self.src.text;
                report.choice.speedup = Some(1.0);
                report.choice.regions_speedup = Some(1.0);
            }
        }
        report
    }
}
