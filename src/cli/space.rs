//! `polytune space`: the distinct programs of a file's space, and with
//! `--verify` every one of them built, run and checked against the
//! original.

use super::args::{BuildArgs, OutputArgs, RunArgs, same_file};
use super::progress::{Progress, counting};
use super::render::{json_text, space_text, verification_text};
use super::{ExitStatus, Reported, Ui};
use crate::app::space;
use crate::app::verify_space::{self, Event};
use crate::config::Reductions;
use crate::frontend::{self, Options};
use anyhow::{Context, Result};
use std::path::PathBuf;

/// List the distinct programs of a file's optimization space.
///
/// List the distinct programs of a file's optimization space (seconds to
/// a minute per SCoP: every configuration is generated, nothing is
/// compiled); with --verify, also build and run every one (minutes to an
/// hour: one build and run per variant and compiler).
///
/// Enumerates all 1536 configurations, generates each, and groups them
/// by the hash of the generated code. --verify builds every distinct
/// variant with each --compiler (OpenMP on), runs it once with `--dump`
/// on --threads threads at --size (default mini) and compares its output
/// with the original's; it exits 1 when any variant fails.
#[derive(clap::Args)]
#[command(
    mut_arg("size", |a| a.default_value("mini")),
    group(
        clap::ArgGroup::new("verifying")
            .args(["compiler", "cflags", "size", "threads", "timeout", "memory_limit", "jobs"])
            .multiple(true)
            .requires("verify")
    ),
    group(
        clap::ArgGroup::new("added")
            .args(["privatize", "expand", "diamond", "reduce", "cyclic", "outer", "distribute"])
            .multiple(true)
    )
)]
pub(crate) struct Args {
    /// C source file.
    file: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
    /// Write each distinct variant to DIR/<name>.v<k>.c.
    #[arg(long, value_name = "DIR")]
    emit: Option<PathBuf>,
    /// Parameter context in isl notation (default: every parameter >= 1).
    #[arg(long)]
    context: Option<String>,
    /// Treat NAME as a pure function inside SCoPs (repeatable).
    #[arg(long = "pure", value_name = "NAME")]
    pure: Vec<String>,
    /// Build and run every distinct variant, and compare its output with the
    /// original's.
    ///
    /// Built with each compiler of --compiler (e.g. --compiler gcc,clang).
    #[arg(long)]
    verify: bool,
    /// Every configuration with privatization added (priv=1, or with =2 priv=2).
    ///
    /// priv=1 privatizes the scalars, priv=2 the temporary arrays too. Beyond
    /// the paper's space: the space it opens.
    #[arg(long = "priv", value_name = "1|2", num_args = 0..=1, require_equals = true, default_missing_value = "1")]
    privatize: Option<crate::config::Privatize>,
    /// Every configuration with scalar expansion added (exp=1).
    ///
    /// Beyond the paper's space; with --priv, both.
    #[arg(long = "exp")]
    expand: bool,
    /// Every configuration with diamond tiling of time loops added
    /// (tt=diamond).
    ///
    /// Beyond the paper's space; combines with --priv and --exp.
    #[arg(long = "tt")]
    diamond: bool,
    /// Every configuration with loops run as reductions added (red=1 or red=2).
    ///
    /// With red=2 the scheduler is also free to keep them outermost. Beyond
    /// the paper's space; combines with --priv, --exp and --tt.
    #[arg(long = "red", value_name = "1|2")]
    reduce: Option<Reductions>,
    /// Every configuration with uneven parallel loops dealt in turn (cyc=1).
    ///
    /// Their iterations go to the threads in turn, schedule(static, 1).
    /// Beyond the paper's space; combines with the flags above.
    #[arg(long = "cyc")]
    cyclic: bool,
    /// Every configuration with the outermost loop kept (outer=1).
    ///
    /// The original's outermost loop stays outermost and in order; the
    /// statements inside it are scheduled anew (fused in groups that keep
    /// their parallel loops with fuse=smart). Beyond the paper's space;
    /// combines with the flags above.
    #[arg(long = "outer")]
    outer: bool,
    /// Every configuration with the innermost loop distributed (dist=1).
    ///
    /// The outermost band's innermost loop split per statement (per cycle
    /// of statements that depend on each other). Beyond the paper's
    /// space; combines with the flags above.
    #[arg(long = "dist")]
    distribute: bool,
    /// Only the variants that the added fields change.
    ///
    /// With --priv, --exp, --tt, --red, --cyc, --outer or --dist. Leaves
    /// out every distinct program that the paper's space generates too (it
    /// is verified with the paper's space): with --verify, the fields' own
    /// verification. The paper's space is enumerated as well.
    #[arg(long, requires = "added")]
    changed: bool,
    /// Builds and runs at once with --verify [default: the cores].
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    #[command(flatten)]
    build: BuildArgs,
    #[command(flatten)]
    run: RunArgs,
}

pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    let file = &a.file;
    let src = frontend::parse_file(
        file,
        &Options {
            pure_functions: a.pure.clone(),
            max_statements: Some(crate::engine::pipeline::MAX_STATEMENTS),
        },
    )?;
    for note in src.kept_notes() {
        ui.warn(note);
    }
    let (variants, skipped) = counting(ui, "schedules computed and emitted", |progress| {
        let added = space::Added {
            privatize: a.privatize.unwrap_or_default(),
            expand: a.expand,
            diamond: a.diamond,
            reduce: a.reduce.unwrap_or_default(),
            cyclic: a.cyclic,
            outer: a.outer,
            distribute: a.distribute,
        };
        space::enumerate(&src, a.context.as_deref(), added, &|e| {
            progress(e.done, e.total)
        })
    })?;
    let (variants, unchanged) = if a.changed {
        let (changed, unchanged) = counting(ui, "the paper's space, to leave out", |progress| {
            space::changed_by_added(&src, a.context.as_deref(), variants, &|e| {
                progress(e.done, e.total)
            })
        })?;
        (changed, Some(unchanged))
    } else {
        (variants, None)
    };
    for s in &skipped {
        ui.warn(s);
    }
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("variant")
        .to_string();
    if let Some(dir) = &a.emit {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for (k, v) in variants.iter().enumerate() {
            let p = dir.join(format!("{stem}.v{k}.c"));
            if same_file(&p, file) {
                anyhow::bail!(
                    "refusing to overwrite the input {} with a variant; choose another --emit directory",
                    file.display()
                );
            }
            crate::lab::store::atomic::write(&p, v.text.as_bytes())?;
        }
        ui.detail(format!(
            "{} variants written to {}",
            variants.len(),
            dir.display()
        ));
    }
    let mut r = space::report(file, &variants, &skipped);
    r.unchanged = unchanged;
    if !a.verify {
        return super::out(&if a.output.json {
            json_text(&serde_json::to_value(&r)?)?
        } else {
            space_text(&r)
        });
    }
    let setup = verify_space::Setup {
        compilers: a.build.compilers()?,
        size: a.run.size,
        include: a.build.include_for(file),
        protocol: a.run.protocol(),
        jobs: a.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        }),
    };
    let mut p = Progress::new(ui);
    p.doing("building and running the originals");
    let report = verify_space::verify(file, &variants, &setup, &mut |e| match e {
        Event::Original { compiler, status } => p.note(format_args!(
            "original with {compiler}: {}",
            status.as_str()
        )),
        Event::Planned { builds } => p.set(0, builds, "starting", None, false),
        Event::Checked {
            done,
            total,
            variant,
            compiler,
            status,
        } => p.set(
            done,
            total,
            &format!("variant {variant} with {compiler}: {}", status.as_str()),
            None,
            status != crate::lab::verify::Status::Ok,
        ),
    })?;
    p.finish();
    let all_ok = report.all_ok();
    let text = verification_text(&report);
    r.verification = Some(report);
    super::out(&if a.output.json {
        json_text(&serde_json::to_value(&r)?)?
    } else {
        text
    })?;
    if all_ok {
        Ok(())
    } else {
        Err(Reported(ExitStatus::Rejected).into())
    }
}
