//! The text and JSON the commands print: SCoPs, measurements,
//! evaluations, spaces, fuzzing summaries and counters. Pure functions of
//! their data, so every command prints the same thing the same way.

use crate::app::select::Report as SelectionReport;
use crate::app::select::{Basis, TIMEABLE_SECONDS};
use crate::lab::verify::Measurement;
use crate::learn::evaluate::Evaluation;
use anyhow::Result;
use std::fmt::Write as _;

mod scop;
pub(crate) use scop::*;

/// Pretty JSON with a final newline.
pub(crate) fn json_text(v: &impl serde::Serialize) -> Result<String> {
    Ok(serde_json::to_string_pretty(v)? + "\n")
}

/// One measurement in a line: status and timing, or why it failed.
pub(crate) fn measurement(m: &Measurement) -> String {
    match &m.timing {
        Some(t) => format!(
            "{} median {:.6} s over {} runs, spread {:.1}%",
            m.status.as_str(),
            t.median,
            t.samples.len(),
            100.0 * t.spread
        ),
        None => format!(
            "{}: {}",
            m.status.as_str(),
            m.detail.lines().next().unwrap_or("")
        ),
    }
}

/// `measure`'s report as text: the program, the original, the variant
/// and its speedup, each head-to-head trial.
pub(crate) fn measure_text(r: &crate::app::measure::Report) -> String {
    let mut o = format!(
        "{} with {} ({}), {}, {} thread(s)\n  original: {}\n",
        r.file.display(),
        r.compiler.name(),
        r.compiler.version,
        r.size,
        r.threads,
        measurement(&r.original)
    );
    if let Some(v) = &r.variant {
        let _ = writeln!(o, "  {}: {}", v.config, measurement(&v.variant));
        if let Some(s) = v.speedup {
            let _ = writeln!(o, "  speedup: {s:.2}x");
        }
    }
    let Some(h) = &r.head_to_head else {
        return o;
    };
    let candidate = if r.variant.is_some() {
        "variant"
    } else {
        "original again"
    };
    for d in &h.head_to_head {
        let t = d.last();
        let _ = writeln!(
            o,
            "  head to head: {} rounds, {} look(s): original {:.6} s, {candidate} {:.6} s (medians), ratio {:.3}, p = {:.2e}: {}",
            d.original.len(),
            d.looks.len(),
            t.original,
            t.candidate,
            t.median_ratio,
            t.p_value,
            if t.faster {
                "faster"
            } else {
                "not a clear win"
            }
        );
    }
    if h.head_to_head.len() > 1 {
        let _ = writeln!(
            o,
            "  faster in {} of {} trials",
            h.faster_in,
            h.head_to_head.len()
        );
    }
    o
}

/// Averages over kernels per model: the paper's summary rows.
pub(crate) fn summary_md(e: &Evaluation) -> String {
    let mut s = format!(
        "\n| model | 1-shot speedup | 1-shot % of Opt | {n}-shot speedup | {n}-shot % of Opt |\n|---|---:|---:|---:|---:|\n",
        n = e.shots
    );
    for (name, s1, p1, sn, pn) in e.summary() {
        let f = |v: f64, d: usize| {
            if v.is_nan() {
                "–".to_string()
            } else {
                format!("{v:.*}", d)
            }
        };
        s += &format!(
            "| {name} | {} | {} | {} | {} |\n",
            f(s1, 2),
            f(p1, 0),
            f(sn, 2),
            f(pn, 0)
        );
    }
    s
}

/// The distinct variants of a file's space, as a table.
pub(crate) fn space_text(r: &crate::app::space::Report) -> String {
    let mut o = format!(
        "{}: {} distinct variants of {} configurations\n",
        r.file.display(),
        r.distinct,
        r.configurations
    );
    if let Some(n) = r.unchanged {
        o += &format!("({n} more that the paper's space generates too, left out)\n");
    }
    o += &format!(
        "{:>5}  {:<12}  {:>7}  canonical configuration\n",
        "#", "hash", "configs"
    );
    for v in &r.variants {
        o += &format!(
            "{:>5}  {:<12}  {:>7}  {}\n",
            v.index,
            &v.hash[..12],
            v.configs.len(),
            v.configs[0]
        );
    }
    o
}

/// A space's verification: per compiler the counts, then each failure.
pub(crate) fn verification_text(r: &crate::app::verify_space::Report) -> String {
    let mut o = format!(
        "{}: {} distinct variants, {} builds verified at {} size on {} thread(s) in {:.0} s: {}\n",
        r.file.display(),
        r.variants,
        r.builds,
        r.size,
        r.threads,
        r.seconds,
        if r.all_ok() { "all correct" } else { "FAILED" }
    );
    for c in &r.compilers {
        let n = &c.counts;
        if c.original != crate::lab::verify::Status::Ok {
            o += &format!(
                "  {} ({}): the original fails ({}: {}); its variants were not checked\n",
                c.compiler,
                c.version,
                c.original.as_str(),
                c.original_detail
            );
            continue;
        }
        o += &format!(
            "  {} {} ({}): {} ok, {} wrong output, {} compile errors, {} crashes, {} timeouts\n",
            c.compiler,
            c.flags.join(" "),
            c.version,
            n.ok,
            n.wrong_output,
            n.compile_error,
            n.crash,
            n.timeout
        );
    }
    for f in &r.failures {
        o += &format!(
            "  {} variant {} ({}) with {}: {}\n",
            f.status.as_str(),
            f.variant,
            f.config,
            f.compiler,
            f.detail.lines().next().unwrap_or("")
        );
    }
    if !r.failures.is_empty() {
        o += "  (`polytune optimize FILE --config CONFIG` writes a failing variant; `space --emit DIR` writes them all)\n";
    }
    o
}

/// A comparison as a table of speedups over the baseline, per kernel
/// and their geometric means, then what failed.
pub(crate) fn compare_text(r: &crate::app::compare::Report) -> String {
    use crate::app::compare::Verdict;
    let names: Vec<&str> = r.contenders.iter().map(|c| c.name.as_str()).collect();
    let w = r
        .kernels
        .iter()
        .map(|k| k.kernel.len())
        .chain(["kernel".len(), "geomean".len()])
        .max()
        .unwrap_or(0);
    let cols: Vec<usize> = names.iter().map(|n| n.len().max(6)).collect();
    let mut o = format!(
        "speedups over {} ({} size, {} thread(s), medians of {} alternating rounds)\n{:<w$} {:>10}",
        names[0], r.size, r.threads, r.rounds, "kernel", "base (s)"
    );
    for (n, c) in names.iter().zip(&cols) {
        o += &format!("  {n:>c$}");
    }
    o += "\n";
    for k in &r.kernels {
        o += &format!("{:<w$} ", k.kernel);
        o += &match k.baseline_seconds {
            Some(b) => format!("{b:>10.6}"),
            None => format!("{:>10}", "-"),
        };
        for (e, c) in k.entries.iter().zip(&cols) {
            let cell = match (e.verdict, e.speedup) {
                (Verdict::Ok, Some(s)) => format!("{s:.2}"),
                (Verdict::NotAvailable, _) => "n/a".to_string(),
                (Verdict::WrongOutput, _) => "WRONG".to_string(),
                _ => "fail".to_string(),
            };
            o += &format!("  {cell:>c$}");
        }
        o += "\n";
    }
    o += &format!("{:<w$} {:>10}", "geomean", "");
    for (m, c) in r.geomean.iter().zip(&cols) {
        let cell = m.speedup.map_or("n/a".to_string(), |s| format!("{s:.2}"));
        o += &format!("  {cell:>c$}");
    }
    o += "\n";
    for c in r.contenders.iter().filter(|c| !c.available) {
        o += &format!("{}: not available: {}\n", c.name, c.detail);
    }
    for k in &r.kernels {
        match k.choice.as_ref().map(|c| c.config) {
            Some(Some(c)) => o += &format!("{}: polytune chose {c}\n", k.kernel),
            Some(None) => o += &format!("{}: polytune kept the original\n", k.kernel),
            None => {}
        }
        for e in &k.entries {
            if !matches!(e.verdict, Verdict::Ok | Verdict::NotAvailable)
                || (e.verdict == Verdict::NotAvailable
                    && r.contenders
                        .iter()
                        .any(|c| c.name == e.contender && c.available))
            {
                o += &format!(
                    "{}: {}: {}{}{}\n",
                    k.kernel,
                    e.contender,
                    e.verdict.as_str(),
                    if e.detail.is_empty() { "" } else { ": " },
                    e.detail
                );
            }
        }
    }
    o
}

/// A fuzzing run's findings and unchanged pairs, grouped.
pub(crate) fn fuzz_text(summary: &crate::app::fuzz::Summary) -> String {
    let mut o = String::new();
    for (why, n) in &summary.unchanged_reasons {
        o += &format!("unchanged x{n}: {why}\n");
    }
    for (why, n) in &summary.rejected_nests {
        o += &format!("a kernel's nest not detected, in {n} program(s): {why}\n");
    }
    for (label, n, dir) in summary.classes() {
        o += &format!("{label}: {n} finding(s), e.g. {}\n", dir.display());
    }
    o
}

/// A program's counters, one per line.
pub(crate) fn counters_text(r: &crate::app::characterize::Report) -> String {
    r.features
        .iter()
        .map(|(k, v)| format!("{k:<14} {v:.6e}\n"))
        .collect()
}

/// The learned selection as the user reads it on standard error: the
/// ranking, the table of candidates run, the checks of the winner and the
/// choice.
/// How an adaptive search went and why it stopped; `None` for a planned
/// strategy that ran its plan (its table says it all).
fn search_line(x: &crate::app::select::Search, ranker: bool) -> Option<String> {
    use crate::app::select::Stop;
    let adaptive = x.min_ei.is_some();
    let why = match x.stop {
        Stop::Budget if adaptive => "the budget was spent".to_string(),
        Stop::Exhausted if adaptive => "every variant was run".to_string(),
        Stop::Budget | Stop::Exhausted => return None,
        Stop::Time => format!(
            "the time budget of {} s was spent",
            x.time_budget.unwrap_or(0.0)
        ),
        Stop::ExpectedImprovement => format!(
            "the next candidate's expected improvement, {:.2}%, is below {}%",
            100.0 * x.final_ei.unwrap_or(0.0),
            100.0 * x.min_ei.unwrap_or(0.0)
        ),
    };
    let by = if ranker {
        "the variant ranker"
    } else {
        "the models"
    };
    let prior = match x.transfer_from {
        Some(0) => format!(" (its prior: {by} alone; the models have no landscapes.json)"),
        Some(n) => format!(" (its prior: {by} and {n} measured programs' landscapes)"),
        None => String::new(),
    };
    Some(format!(
        "polytune: {}{prior} ran {} of at most {} candidates in {:.1} s; it stopped because {why}",
        x.strategy, x.evaluated, x.budget, x.seconds
    ))
}

/// The learned selection's report: its warnings, the candidates' table,
/// the search, the sleeping-threads checks, the head to head, the phases'
/// times and the choice.
pub(crate) fn selection_text(r: &SelectionReport) -> String {
    use crate::app::select::Reason;
    let mut s = selection_heading(r);
    if r.choice.reason == Reason::Predicted {
        let _ = writeln!(
            s,
            "polytune: chose {} ({}), not run (--no-run)",
            r.choice.config.map(|c| c.to_string()).unwrap_or_default(),
            r.choice.chosen_by.as_deref().unwrap_or("")
        );
        return s;
    }
    s += &candidates_table(r);
    if let Some(line) = r
        .search
        .as_ref()
        .and_then(|x| search_line(x, r.ranker.is_some()))
    {
        let _ = writeln!(s, "{line}");
    }
    s += &passive_lines(r);
    s += &head_to_head_lines(r);
    s += &phases_and_choice(r);
    if let Some(l) = &r.learned {
        let _ = writeln!(
            s,
            "polytune: learned from {} runs (appended to {})",
            l.runs,
            l.store.display()
        );
    }
    s
}

/// The selection's warnings and what ranked the variants.
fn selection_heading(r: &SelectionReport) -> String {
    let mut s = String::new();
    for w in &r.warnings {
        let _ = writeln!(s, "polytune: warning: {w}");
    }
    let _ = match &r.ranker {
        Some(k) => writeln!(
            s,
            "polytune: {} distinct variants, ranked by the variant ranker (fitted to {} measured variants of {} kernels{} in {:.1} s; features and scores in {:.1} s)",
            r.variants,
            k.rows,
            k.kernels,
            match k.local_rows {
                0 => String::new(),
                n => format!(
                    ", {n} of them of {} programs this user ran",
                    k.local_kernels
                ),
            },
            k.fit_seconds,
            k.seconds - k.fit_seconds
        ),
        None => writeln!(
            s,
            "polytune: {} distinct variants, ranked by {} models trained on {} ({})",
            r.variants, r.models, r.trained_compiler, r.trained_machine
        ),
    };
    s
}

/// The table of the programs run: the original, the candidates, then the
/// refinement's programs, with who chose each.
fn candidates_table(r: &SelectionReport) -> String {
    let mut s = String::new();
    // The candidates, then the refinement's programs, with who chose each.
    let rows: Vec<(String, &crate::app::select::Run, String)> = r
        .candidates
        .iter()
        .filter_map(|c| c.run.as_ref().map(|run| (c, run)))
        .map(|(c, run)| (c.config.to_string(), run, c.chosen_by.clone()))
        .chain(r.refinement.iter().map(|x| {
            (
                x.config.to_string(),
                &x.run,
                format!("refinement: {} from {}", x.step, x.from),
            )
        }))
        .collect();
    // The widest configuration sets the first column, so the table lines up.
    let w = rows
        .iter()
        .map(|(name, _, _)| name.len())
        .max()
        .unwrap_or(0)
        .max("candidate".len());
    let _ = writeln!(
        s,
        "  {:<w$} {:>10} {:>8}  chosen by",
        "candidate", "seconds", "speedup"
    );
    if let Some(base) = r.original.as_ref().and_then(|o| o.seconds) {
        let _ = writeln!(
            s,
            "  {:<w$} {base:>10.4} {:>8.2}  baseline",
            "original", 1.0
        );
    }
    for (name, run, why) in &rows {
        let _ = match (run.seconds, run.speedup) {
            (Some(t), Some(x)) => writeln!(s, "  {name:<w$} {t:>10.4} {x:>8.2}  {why}"),
            _ => {
                let what = if run.detail.is_empty() {
                    run.status.as_str().to_string()
                } else {
                    format!("{}: {}", run.status.as_str(), run.detail)
                };
                writeln!(s, "  {name:<w$} {:>10} {:>8}  {why}: {what}", "-", "-")
            }
        };
    }
    s
}

/// The checks with sleeping threads (OMP_WAIT_POLICY=passive).
fn passive_lines(r: &SelectionReport) -> String {
    let mut s = String::new();
    for p in &r.passive {
        let shown: Vec<String> = p
            .seconds
            .iter()
            .map(|t| t.map_or("timed out".into(), |t| format!("{t:.4} s")))
            .collect();
        let _ = writeln!(
            s,
            "polytune: {} with sleeping threads (OMP_WAIT_POLICY=passive): {}{}",
            p.config,
            shown.join(", "),
            if p.holds {
                ""
            } else {
                " — slower than the original: skipped"
            }
        );
    }
    s
}

/// The head to head with the original, when there was one.
fn head_to_head_lines(r: &SelectionReport) -> String {
    let mut s = String::new();
    if let Some(h) = &r.head_to_head {
        let rounds = h.rounds;
        match (&h.error, h.original_seconds, h.candidate_seconds) {
            (Some(e), _, _) => {
                let _ = writeln!(
                    s,
                    "polytune: the head-to-head runs failed ({e}); keeping the original"
                );
            }
            (None, Some(o), Some(c)) => {
                if h.basis == Basis::Program {
                    let _ = writeln!(
                        s,
                        "polytune: the SCoP regions run under {:.0} ms in all, too short to time: the whole program's seconds decide",
                        TIMEABLE_SECONDS * 1e3
                    );
                }
                let basis = match h.basis {
                    Basis::Regions => "the regions' seconds",
                    Basis::Program => "the whole program's seconds",
                };
                let _ = writeln!(
                    s,
                    "polytune: head to head, {rounds} alternating rounds on {basis}: original {o:.4} s, {} {c:.4} s (medians), ratio {:.2}, p = {:.2e}",
                    h.config,
                    h.speedup.unwrap_or(0.0),
                    h.p_value.unwrap_or(1.0),
                );
                if let (Basis::Regions, Some(po), Some(pc), Some(pr)) = (
                    h.basis,
                    h.program_original_seconds,
                    h.program_candidate_seconds,
                    h.program_speedup,
                ) {
                    let _ = writeln!(
                        s,
                        "polytune: the whole program in the same rounds: original {po:.4} s, candidate {pc:.4} s (medians), ratio {pr:.2}"
                    );
                }
                if h.confirmed.is_none() {
                    let _ = writeln!(
                        s,
                        "polytune: not a clear win (it must be {:.0}% faster with a one-sided p-value under {:.4}: the test of lab::decide)",
                        (h.min_speedup - 1.0) * 100.0,
                        h.level
                    );
                }
            }
            _ => {}
        }
    }
    s
}

/// The phases' times and the choice.
fn phases_and_choice(r: &SelectionReport) -> String {
    let mut s = String::new();
    let p = &r.phases;
    let _ = writeln!(
        s,
        "polytune: took {}: characterization {}, ranking {}, the original {}, builds {}, runs {}, sleeping-threads checks {}, head to head {}",
        super::progress::duration(p.total),
        super::progress::duration(p.characterize),
        super::progress::duration(p.rank),
        super::progress::duration(p.original),
        super::progress::duration(p.builds),
        super::progress::duration(p.runs),
        super::progress::duration(p.passive),
        super::progress::duration(p.confirm),
    );
    let _ = match (r.choice.config, r.choice.speedup) {
        (Some(c), Some(x)) => {
            let whole = match x >= 1.0 {
                true => format!("the whole program {x:.2}x faster than the original"),
                false => format!(
                    "the whole program at {x:.2}x the original's speed (no faster as a whole)"
                ),
            };
            match r.choice.regions_speedup {
                Some(y) => writeln!(s, "polytune: chose {c}: {whole}, its SCoP regions {y:.2}x"),
                None => writeln!(
                    s,
                    "polytune: chose {c}: {whole} (its SCoP regions run too short to time)"
                ),
            }
        }
        _ => writeln!(
            s,
            "polytune: no candidate beat the original; it is kept unchanged"
        ),
    };
    s
}
