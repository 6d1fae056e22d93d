//! `polytune models`: what the learned selection ranks with, and what it
//! has learned on this machine (`status`).

use super::Ui;
use super::args::{OutputArgs, models_to_read};
use crate::lab::compiler::Family;
use anyhow::{Result, bail};
use std::fmt::Write;
use std::path::PathBuf;

/// The models the learned selection ranks with.
#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    Status(StatusArgs),
}

/// What the store of this machine's runs holds, and how the ranker does on it.
///
/// The store the learned `optimize` and `collect` append their runs to
/// (each run variant with its features) and the learned `optimize` fits
/// the variant ranker to, beside the shipped
/// variants: how many variants of how many programs it holds, how many of
/// this machine, and how the ranker of the shipped variants alone orders
/// each program's measured variants (Spearman's rank correlation with the
/// measured speedups, and the share of the best speedup its first choice
/// has).
#[derive(clap::Args)]
struct StatusArgs {
    /// The store [default: learned.sqlite in polytune's cache directory].
    #[arg(long, value_name = "FILE")]
    store: Option<PathBuf>,
    /// Back-end compiler whose runs and ranker to show.
    #[arg(long, value_enum, default_value = "gcc")]
    compiler: Family,
    /// Directory of trained models [default: models/<compiler> here, else the
    /// shipped models].
    #[arg(long, value_name = "DIR")]
    model: Option<PathBuf>,
    /// Also rank each program of the store as a program new to the ranker.
    ///
    /// It is left out of two fits, to the shipped variants alone and with the
    /// store's other programs. Leave one program out on this machine's runs: the shipped variants of
    /// a corpus kernel of the same name are left out too. Tells whether what
    /// the store learned of this machine ranks new programs better (two fits
    /// per program, seconds each).
    #[arg(long)]
    held_out: bool,
    #[command(flatten)]
    json: OutputArgs,
}

pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    match a.command {
        Command::Status(s) => status(s, ui),
    }
}

fn status(a: StatusArgs, _ui: &Ui) -> Result<()> {
    let dir = a.model.unwrap_or_else(|| models_to_read(a.compiler));
    let Some(shipped) = crate::app::ranker::load(&dir)? else {
        bail!(
            "{} has no {} (the variant ranker's table of measured variants): pass the shipped models' directory with --model",
            dir.display(),
            crate::app::ranker::FILE
        );
    };
    let Some(store) = a.store.or_else(crate::app::ranker::default_store) else {
        bail!(
            "no cache directory (neither POLYTUNE_CACHE_DIR, XDG_CACHE_HOME nor HOME is set): name the store with --store"
        );
    };
    let s = crate::app::ranker::status(&shipped, &store, a.compiler, a.held_out)?;
    super::out(&if a.json.json {
        super::render::json_text(&s)?
    } else {
        status_text(&s)
    })
}

/// The status as the user reads it.
fn status_text(s: &crate::app::ranker::Status) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "variant ranker ({}): {} shipped variants of {} kernels{}",
        s.compiler.as_str(),
        s.shipped_rows,
        s.shipped_kernels,
        if s.shipped_fitted {
            ", fitted ranker shipped"
        } else {
            ", fitted at the first ranking (then cached)"
        }
    );
    if !s.exists {
        let _ = writeln!(
            t,
            "store {}: none yet (a learned `optimize` creates it)",
            s.store.display()
        );
        return t;
    }
    let _ = writeln!(
        t,
        "store {}: {} measured variants of {} programs, {} of this machine (each weighs {} shipped variants)",
        s.store.display(),
        s.rows,
        s.programs,
        s.this_machine,
        crate::app::ranker::LOCAL_WEIGHT
    );
    if s.programs_ranked.is_empty() {
        let _ = writeln!(
            t,
            "no program of the store has 3 measured variants yet: nothing to rank"
        );
        return t;
    }
    let _ = writeln!(
        t,
        "how the ranker of the shipped variants alone orders them (rank correlation with the measured speedups; its first choice's share of the best):"
    );
    for p in &s.programs_ranked {
        let _ = writeln!(
            t,
            "  {:<24} {:>3} variants  rho {:>6}  first choice {:>4}",
            p.program,
            p.variants,
            p.rank_correlation
                .map_or("-".to_string(), |r| format!("{r:.2}")),
            p.top1
                .map_or("-".to_string(), |x| format!("{:.0}%", 100.0 * x))
        );
    }
    if let Some(m) = s.median_rank_correlation {
        let _ = writeln!(t, "median rho {m:.2}");
    }
    if let Some(held) = &s.held_out {
        let f = |x: Option<f64>| x.map_or("-".to_string(), |r| format!("{r:.2}"));
        let pc = |x: Option<f64>| x.map_or("-".to_string(), |r| format!("{:.0}%", 100.0 * r));
        let _ = writeln!(
            t,
            "each program new to both rankers (its runs and the shipped kernel of its name left out): rho and first choice, shipped alone -> refit with this store's other programs:"
        );
        for p in held {
            let _ = writeln!(
                t,
                "  {:<24} {:>3} variants  rho {:>5} -> {:>5}  first choice {:>4} -> {:>4}",
                p.program,
                p.variants,
                f(p.shipped),
                f(p.refit),
                pc(p.top1_shipped),
                pc(p.top1_refit)
            );
        }
        if let Some((a, b)) = s.held_out_median {
            let _ = writeln!(t, "median rho held out: {} -> {}", f(a), f(b));
        }
    }
    t
}
