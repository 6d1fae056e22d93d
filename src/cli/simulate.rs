//! `polytune simulate`: search strategies replayed over a campaign's
//! measured space, running nothing; its text, CSV and JSON renderings.

use super::Ui;
use super::args::{DataArgs, RankingBy, models_to_read};
use super::progress::Progress;
use super::render::json_text;
use crate::app::simulate::{self as app, Predictions};
use crate::app::variants::VariantTable;
use crate::learn::csv_text::CsvText;
use crate::learn::dataset::Dataset;
use crate::learn::evaluate;
use crate::learn::search::Strategy;
use crate::learn::search::bo::BoDesign;
use crate::learn::search::drive::DEFAULT_MIN_EI;
use crate::learn::search::simulate::{self, Simulation};
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

/// The strategies simulated without --strategies.
const DEFAULT: &str = "multi-model,diverse,random,local,bo-plain,bo";

/// Replay search strategies over a campaign's measurements (no runs).
///
/// Replays search strategies over a campaign's measured space, running
/// nothing: each kernel held out in turn (the models trained without it,
/// as `evaluate` does), each strategy proposing unique variants up to a
/// budget, answered from the measurements; randomized strategies over
/// several seeds. Reports best-so-far % of Opt against evaluations, the
/// evaluations needed to reach 90/95/99/100% of Opt, and how peaked each
/// kernel's landscape is.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Results database of a campaign.
    #[arg(long)]
    db: PathBuf,
    #[command(flatten)]
    data: DataArgs,
    /// Comma-separated strategies: multi-model, diverse, model:NAME, random,
    /// local, bo, bo-plain.
    ///
    /// bo is Bayesian optimization with the learned prior, bo-plain without it.
    #[arg(long, value_delimiter = ',', default_value = DEFAULT)]
    strategies: Vec<Strategy>,
    /// Unique evaluations per run.
    #[arg(long, default_value_t = 30)]
    budget: usize,
    /// Runs (seeds) of each randomized strategy per kernel.
    #[arg(long, default_value_t = 30)]
    seeds: usize,
    /// Output format.
    #[arg(long, default_value = "md", value_parser = ["md", "csv", "json"])]
    format: String,
    /// Which model's leave-one-out predictions the strategies follow.
    /// [default: models]
    ///
    /// models: the paper's six (--models), trained again per fold or read
    /// with --predictions. variant: the variant ranker, as `optimize` ranks
    /// by default: its table of the variants' features (variants.json in
    /// the models directory, which matches the shipped dataset), each
    /// kernel ranked by the ranker fitted to the other kernels; bo then
    /// takes the `ranker` design unless --bo-design says otherwise.
    #[arg(long, value_enum, conflicts_with_all = ["predictions", "models"])]
    ranking: Option<RankingBy>,
    /// Read the leave-one-out predictions from FILE instead of training the
    /// folds again.
    ///
    /// As `evaluate --predictions FILE` wrote them for the same dataset and
    /// models.
    #[arg(long, value_name = "FILE")]
    predictions: Option<PathBuf>,
    /// bo, bo-plain: a run also stops when its next proposal's expected
    /// improvement falls below this share.
    ///
    /// The expected improvement of its next proposal over the fastest of the
    /// original and the variants measured (0.01: 1% faster), as `optimize
    /// --min-ei` does; 0 never stops early.
    #[arg(long, value_name = "SHARE", default_value_t = DEFAULT_MIN_EI, value_parser = super::optimize::non_negative)]
    min_ei: f64,
    /// Search the variants of the paper's space only, against the whole
    /// dataset's Opt.
    ///
    /// Measured against the Opt of every variant of the dataset (beyond the
    /// paper's too, from `collect --space extended`): beside a run without it,
    /// what searching beyond the paper's space gains at each budget.
    #[arg(long)]
    paper_only: bool,
    /// bo: without the other kernels' measured landscapes in its prior mean.
    ///
    /// The models' predictions alone, as before they were added.
    #[arg(long)]
    no_transfer: bool,
    /// bo: the design for its prior's quality, `models` or `ranker`.
    /// [default: ranker with --ranking variant, else models]
    ///
    /// `models`, the initial design and prior weighting tuned for the six
    /// models' predictions, which rank a kernel's variants poorly; `ranker`,
    /// those tuned for predictions that rank them well, such as the variant
    /// ranker's.
    #[arg(long, value_name = "DESIGN")]
    bo_design: Option<BoDesign>,
    /// Also show what each strategy proposed for this kernel, in order (md and
    /// json).
    ///
    /// Its first seed's run: every variant's configuration, speedup, share of
    /// Opt and the models' prediction, with the kernel's five fastest variants
    /// beside.
    #[arg(long, value_name = "KERNEL")]
    trace: Option<String>,
    /// Draw every strategy's mean curve into FILE (SVG).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// A counterfactual: move every model's log prediction this share of the
    /// way to the measured speedup.
    ///
    /// To ask how good the models would have to be: every model's log
    /// prediction is moved this share (0 to 1) of the way to the measured
    /// speedup before the strategies run (1: the models know the answer). The
    /// report says so; no real search can run this way.
    #[arg(long, value_name = "SHARE", value_parser = unit_share)]
    prior_blend: Option<f64>,
    /// Train each leave-one-out fold on N of the other kernels only.
    ///
    /// The N are drawn at random per held-out kernel (the same draw in
    /// `evaluate` and `simulate`; give `evaluate --predictions` the same): how
    /// the models' quality grows with the kernels they learn from.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    train_kernels: Option<u64>,
    /// With --ranking variant: each fold also learns from the runs in this
    /// store (read only; repeatable).
    ///
    /// A store `collect --store` or the learned `optimize` wrote: its
    /// verified runs with the compiler, as other programs every fold learns
    /// from besides the table's kernels (this machine's weighing 3), never
    /// ranked themselves; a kernel's namesakes in it are left out of its own
    /// fold. What runs of new programs add to the ranking of the dataset's.
    #[arg(long, value_name = "FILE", requires = "ranking")]
    store: Vec<PathBuf>,
    /// With --ranking variant: the folds learn the variants' speedups from DB.
    ///
    /// DB holds the same kernels' variants timed again:
    /// models/dataset-confirmed.sqlite is the shipped dataset with each
    /// kernel's fastest variants confirmed; a variant it lacks keeps --db's
    /// speedup. Searches are still replayed, and scored, against --db's
    /// measurements.
    #[arg(long, value_name = "DB")]
    labels: Option<PathBuf>,
}

/// A share from 0 to 1.
fn unit_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("`{s}` is not a share from 0 to 1")),
    }
}

/// `polytune simulate`: its stages, from the dataset to the printed report.
pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    let d = a.data.dataset(&a.db, ui)?;
    let eo = evaluate::Options {
        models: a.data.kinds(),
        target: a.data.target,
        train_kernels: a.train_kernels.map(|n| n as usize),
        ..Default::default()
    };
    check_usage(&a, &d, &eo)?;
    if a.paper_only && d.beyond_paper == 0 {
        ui.warn(
            "--paper-only: the dataset has no variant beyond the paper's space, so this is the whole space",
        );
    }
    let written = (a.predictions.as_ref())
        .map(|f| std::fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display())))
        .transpose()?;
    let table = variant_table(&a, ui)?;
    let also = super::evaluate::also_learned(&a.store, a.data.compiler)?;
    let labels = super::evaluate::learned_labels(a.labels.as_deref(), &a.data, &d)?;
    let besides = crate::app::variants::Besides {
        also: also.as_ref().map(|l| l.also()),
        labels: labels.as_ref(),
    };
    let from = match (&table, written.as_deref()) {
        (Some(t), _) => Predictions::Ranker(t, besides),
        (None, Some(text)) => Predictions::Written(text),
        (None, None) => Predictions::Folds,
    };
    let opts = options(&a, &eo);
    let stage: Mutex<Option<Progress>> = Mutex::new(None);
    let r = app::simulate(&d, &eo, from, &opts, &|e| shown_progress(ui, &stage, e));
    drop(stage);
    let r = r?;
    ui.detail(format!("simulated in {:.1} s", r.seconds));
    if let Some(path) = &a.plot {
        app::plot(&d, &r.simulation, path)?;
    }
    let text = match a.format.as_str() {
        "csv" => csv(&r.simulation),
        "json" => json_text(&serde_json::to_value(&r)?)?,
        _ => header(&r) + &markdown(&r.simulation),
    };
    super::out(&text)
}

/// The variant ranker's table when --ranking variant asks for it (a
/// usage error when the models directory has none).
fn variant_table(a: &Args, ui: &Ui) -> Result<Option<VariantTable>> {
    if a.ranking != Some(RankingBy::Variant) {
        return Ok(None);
    }
    let dir = models_to_read(a.data.compiler);
    match crate::app::ranker::load(&dir)? {
        Some(s) => {
            ui.detail(format!(
                "the variant ranker's table: {} variants of {} kernels ({})",
                s.table.rows.len(),
                s.table.kernels.len(),
                dir.join(crate::app::ranker::FILE).display()
            ));
            Ok(Some(s.table))
        }
        None => Err(super::Usage(format!(
            "--ranking variant: no variant table in {} (the shipped models directory has one per compiler: models/<compiler>/{})",
            dir.display(),
            crate::app::ranker::FILE
        ))
        .into()),
    }
}

/// An event on the counter of its stage (leave-one-out folds, simulated
/// runs), a new counter as each stage begins.
fn shown_progress(ui: &Ui, stage: &Mutex<Option<Progress>>, e: app::Event) {
    let what = |s| match s {
        app::Stage::Folds => "leave-one-out folds",
        app::Stage::Runs => "simulated runs",
    };
    let mut p = stage.lock().unwrap_or_else(PoisonError::into_inner);
    match e {
        app::Event::Begins(s) => {
            // The stage before, if any, is through: its counter goes first.
            *p = None;
            let new = Progress::new(ui);
            new.doing(what(s));
            *p = Some(new);
        }
        app::Event::Through { stage, done, total } => {
            if let Some(p) = p.as_mut() {
                p.set(done, total, what(stage), None, false);
            }
        }
    }
}

/// A usage error when a model strategy's model is not among --models or
/// --trace names no kernel of the dataset.
fn check_usage(a: &Args, d: &Dataset, eo: &evaluate::Options) -> Result<()> {
    if let Some(Strategy::Model(k)) = a
        .strategies
        .iter()
        .find(|s| matches!(s, Strategy::Model(k) if !eo.models.contains(k)))
    {
        return Err(super::Usage(format!(
            "strategy model:{} needs that model among --models",
            k.name()
        ))
        .into());
    }
    if let Some(t) = &a.trace
        && !d.kernels.iter().any(|k| &k.name == t)
    {
        let names: Vec<&str> = d.kernels.iter().map(|k| k.name.as_str()).collect();
        return Err(super::Usage(format!(
            "--trace {t}: no kernel of that name in {} (it has {})",
            a.db.display(),
            names.join(", ")
        ))
        .into());
    }
    if a.ranking != Some(RankingBy::Variant) {
        if !a.store.is_empty() {
            return Err(super::Usage("--store needs --ranking variant".into()).into());
        }
        if a.labels.is_some() {
            return Err(super::Usage("--labels needs --ranking variant".into()).into());
        }
    }
    Ok(())
}

/// The simulation's options, from the command's.
fn options(a: &Args, eo: &evaluate::Options) -> simulate::Options {
    simulate::Options {
        strategies: a.strategies.clone(),
        budget: a.budget,
        seeds: a.seeds,
        threads: eo.threads,
        min_ei: Some(a.min_ei).filter(|&e| e > 0.0),
        paper_only: a.paper_only,
        no_transfer: a.no_transfer,
        bo_design: a
            .bo_design
            .unwrap_or(if a.ranking == Some(RankingBy::Variant) {
                BoDesign::Ranker
            } else {
                BoDesign::Models
            }),
        trace: a.trace.clone(),
        prior_blend: a.prior_blend,
        train_kernels: eo.train_kernels,
        train_seed: eo.seed,
    }
}

/// The markdown report's heading and the paragraph that says what was
/// simulated (and, with the variant ranker, how it ranked).
fn header(r: &app::Report) -> String {
    let s = &r.simulation;
    let ranker = r.ranker.as_ref().map_or(String::new(), |r| {
        let n = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.3}"));
        let f = &r.evaluation;
        format!(
            "\nThe variant ranker{}, each kernel held out: median Spearman's ρ {} (mean {}), NDCG@6 {}, share of Opt of its top 1 {:.3}, best of its top 6 {:.3}, of its top 12 {:.3}{}.\n",
            if s.prior_blend.is_some() {
                " before the counterfactual blend (the blended ranking's ρ is the landscapes' below)"
            } else {
                ""
            },
            n(f.median_rank_correlation),
            n(f.mean_rank_correlation),
            n(f.median_ndcg6),
            f.mean_top1,
            f.mean_best_of_6,
            f.mean_best_of_12,
            if r.unmatched > 0 {
                format!(
                    "; {} of the dataset's variants are not in its table (each given its kernel's least prediction)",
                    r.unmatched
                )
            } else {
                String::new()
            } + &super::evaluate::also_learned_clause(Some(f))
        )
    });
    let head = format!(
        "## Simulated search: {} ({}), {}\n\n{} kernels, {} verified variants; each kernel held out in turn, the models ({}) trained without it; {} unique evaluations per run, {} seeds for randomized strategies{}; simulated in {:.1} s.\n",
        r.compiler,
        r.flags,
        r.machine,
        r.kernels,
        r.variants,
        s.models.join(", "),
        s.budget,
        s.seeds,
        s.min_ei.map_or(String::new(), |e| format!(
            "; bo and bo-plain stop when the next expected improvement is below {}%",
            100.0 * e
        )) + if s.paper_only {
            "; only the paper's variants searched, Opt the best of all"
        } else {
            ""
        } + if s.no_transfer {
            "; bo without the other kernels' landscapes"
        } else {
            ""
        } + &if s.bo_design == BoDesign::default() {
            String::new()
        } else {
            format!("; bo with the design for the {} prior (--bo-design)", s.bo_design.name())
        } + &s.train_kernels.map_or(String::new(), |n| format!(
            "; each fold's models and landscapes from {n} of the other kernels only (--train-kernels)"
        )) + &s.prior_blend.map_or(String::new(), |w| format!(
            "; **counterfactual**: every model's log prediction moved {:.0}% of the way to the measured speedup (--prior-blend), so the models rank variants better than they can",
            100.0 * w
        )),
        r.seconds
    );
    head + &ranker
}

/// The budgets shown in the summary table.
fn shown(budget: usize) -> Vec<usize> {
    let mut b: Vec<usize> = [1, 3, 6, 12, 20, 30]
        .into_iter()
        .filter(|&b| b <= budget)
        .collect();
    if b.last() != Some(&budget) {
        b.push(budget);
    }
    b
}

fn na(v: f64, budget: usize) -> String {
    if v > budget as f64 {
        format!(">{budget}")
    } else {
        format!("{v:.1}")
    }
}

/// The tables: summary, per kernel at 6 and 12 evaluations, evaluations
/// to reach each threshold, landscapes and the fields that matter.
pub(crate) fn markdown(s: &Simulation) -> String {
    let mut o = String::new();
    let bs = shown(s.budget);
    o += "\n### Mean % of Opt (arithmetic / geometric over kernels) after N evaluations\n\n| strategy | runs |";
    for b in &bs {
        let _ = write!(o, " {b} |");
    }
    o += "\n|---|---:|";
    o += &"---:|".repeat(bs.len());
    o += "\n";
    for c in &s.strategies {
        let _ = write!(o, "| {} | {} |", c.strategy, c.runs_per_kernel);
        for &b in &bs {
            let _ = write!(o, " {:.1} / {:.1} |", c.mean[b - 1], c.geomean[b - 1]);
        }
        o += "\n";
    }
    if let Some(floor) = s.min_ei {
        let _ = write!(
            o,
            "\n### Evaluations spent (mean over kernels and runs) with a budget of N: a run of bo or bo-plain stops early when its next proposal's expected improvement over the incumbent is below {}%\n\n| strategy |",
            100.0 * floor
        );
        for b in &bs {
            let _ = write!(o, " {b} |");
        }
        o += "\n|---|";
        o += &"---:|".repeat(bs.len());
        o += "\n";
        for c in &s.strategies {
            let _ = write!(o, "| {} |", c.strategy);
            for &b in &bs {
                let _ = write!(o, " {:.1} |", c.spent[b - 1]);
            }
            o += "\n";
        }
    }
    o += "\n### Evaluations to reach a share of Opt (mean over kernels and runs; a run that never does counts as budget + 1), and the share of runs that do\n\n| strategy |";
    for t in &s.thresholds {
        let _ = write!(o, " {t:.0}% | reached {t:.0}% |");
    }
    o += "\n|---|";
    o += &"---:|---:|".repeat(s.thresholds.len());
    o += "\n";
    for c in &s.strategies {
        let _ = write!(o, "| {} |", c.strategy);
        for (e, r) in c.evaluations_to.iter().zip(&c.reached) {
            let _ = write!(o, " {} | {:.0}% |", na(*e, s.budget), 100.0 * r);
        }
        o += "\n";
    }
    for b in [6, 12].into_iter().filter(|&b| b <= s.budget) {
        let _ = write!(
            o,
            "\n### % of Opt per kernel after {b} evaluations\n\n| kernel |"
        );
        for c in &s.strategies {
            let _ = write!(o, " {} |", c.strategy);
        }
        o += "\n|---|";
        o += &"---:|".repeat(s.strategies.len());
        o += "\n";
        for (k, l) in s.landscapes.iter().enumerate() {
            let _ = write!(o, "| {} |", l.kernel);
            for c in &s.strategies {
                let _ = write!(o, " {:.0} |", c.kernels[k].percent[b - 1]);
            }
            o += "\n";
        }
    }
    o += "\n### Landscapes: share of each kernel's variants within 5/10/20% of Opt, and how well the models rank them (Spearman's ρ of the ensemble's prediction and the measured speedup)\n\n| kernel | variants | Opt | ≤5% | ≤10% | ≤20% | models' ρ |\n|---|---:|---:|---:|---:|---:|---:|\n";
    for l in &s.landscapes {
        let _ = writeln!(
            o,
            "| {} | {} | {:.2} | {:.1}% | {:.1}% | {:.1}% | {} |",
            l.kernel,
            l.variants,
            l.opt,
            100.0 * l.within[0],
            100.0 * l.within[1],
            100.0 * l.within[2],
            l.rank_correlation
                .map_or("n/a".into(), |r| format!("{r:.2}"))
        );
    }
    if let Some(r) = s.median_rank_correlation {
        let _ = writeln!(o, "\nMedian ρ over kernels: {r:.2}.");
    }
    for c in &s.strategies {
        if c.kernels.iter().all(|k| k.lengthscales.is_none()) {
            continue;
        }
        let _ = write!(
            o,
            "\n### Fields that matter ({}): lengthscales of the last fit, shortest first\n\n| kernel | fields |\n|---|---|\n",
            c.strategy
        );
        for k in &c.kernels {
            let Some(l) = &k.lengthscales else { continue };
            let mut f: Vec<(usize, f64)> = l
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.map(|v| (i, v)))
                .collect();
            f.sort_by(|a, b| a.1.total_cmp(&b.1));
            let text: Vec<String> = f
                .iter()
                .take(4)
                .map(|(i, v)| format!("{} {v:.2}", s.fields[*i]))
                .collect();
            let _ = writeln!(o, "| {} | {} |", k.kernel, text.join(", "));
        }
    }
    o += &trace_markdown(s);
    o
}

/// `--trace`: each strategy's proposals on the kernel, then its fastest.
fn trace_markdown(s: &Simulation) -> String {
    use crate::learn::search::simulate::Step;
    let mut o = String::new();
    let row = |o: &mut String, n: &str, st: &Step| {
        let _ = writeln!(
            o,
            "| {n} | {} | {} | {} | {:.0} | {:.2} |",
            st.config.text(),
            st.speedup.map_or("failed".into(), |v| format!("{v:.2}")),
            st.percent.map_or("–".into(), |v| format!("{v:.0}")),
            st.best,
            st.predicted
        );
    };
    const HEAD: &str = "| # | configuration | speedup | % of Opt | best so far % | predicted |\n|---:|---|---:|---:|---:|---:|\n";
    for t in &s.traces {
        let _ = write!(
            o,
            "\n### Trace: {} on {} (first seed)\n\n{HEAD}",
            t.strategy, t.kernel
        );
        for (i, st) in t.steps.iter().enumerate() {
            row(&mut o, &(i + 1).to_string(), st);
        }
    }
    if let Some(k) = s.traces.first().map(|t| &t.kernel) {
        let _ = write!(o, "\n### The five fastest variants of {k}\n\n{HEAD}");
        for (i, st) in s.fastest.iter().enumerate() {
            row(&mut o, &(i + 1).to_string(), st);
        }
    }
    o
}

/// One line per strategy, kernel (or mean, geomean) and budget.
pub(crate) fn csv(s: &Simulation) -> String {
    let mut t = CsvText::new([
        "strategy",
        "kernel",
        "evaluations",
        "percent_of_opt",
        "spent",
    ]);
    for c in &s.strategies {
        for k in &c.kernels {
            for (b, p) in k.percent.iter().enumerate() {
                t.row([
                    c.strategy.clone(),
                    k.kernel.clone(),
                    (b + 1).to_string(),
                    format!("{p:.4}"),
                    format!("{:.4}", k.spent[b]),
                ]);
            }
        }
        for (name, v) in [("mean", &c.mean), ("geomean", &c.geomean)] {
            for (b, p) in v.iter().enumerate() {
                t.row([
                    c.strategy.clone(),
                    name.to_string(),
                    (b + 1).to_string(),
                    format!("{p:.4}"),
                    format!("{:.4}", c.spent[b]),
                ]);
            }
        }
    }
    t.finish()
}
