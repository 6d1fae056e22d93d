//! `polytune characterize`: a program's (simulated) hardware counters.

use super::Ui;
use super::args::{BuildArgs, CompileLine, OutputArgs, ProgramArgs, memory_limit};
use super::progress::Progress;
use super::render::{counters_text, json_text};
use crate::app::characterize::{self, Event};
use crate::lab::characterize::Backend;
use crate::lab::scratch::Scratch;
use anyhow::Result;
use std::path::PathBuf;

/// Count a program's events inside its SCoP regions (seconds).
///
/// Characterize a program by its (simulated) hardware counters,
/// normalized by its instruction count (paper section 4.1), counted inside
/// its SCoP regions only, over a prefix of their execution (--bound
/// instructions; the run stops there). Seconds at any size: the simulator
/// runs only from the first region, which it warms first. Build it like a
/// compiler: after `--`, the program's compile line.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// C source file with `#pragma scop` regions.
    file: PathBuf,
    /// Counters: cachegrind (simulated, deterministic), papi (the hardware's)
    /// or auto.
    ///
    /// papi counts the hardware's natively and is refused where there is no
    /// PMU; auto is papi where the PMU can be read, else cachegrind, saying
    /// why.
    #[arg(long, value_enum, default_value = "cachegrind")]
    backend: Counters,
    /// Dataset size of corpus-style programs.
    ///
    /// Other programs take theirs from the compile line.
    #[arg(long, value_enum, default_value = "small")]
    size: crate::lab::size::Size,
    #[command(flatten)]
    build: BuildArgs,
    /// Instructions counted inside the regions before the run is stopped.
    ///
    /// A prefix of a long run: the features are rates per instruction.
    #[arg(long, value_name = "N", default_value_t = crate::lab::characterize::Bound::default().instructions)]
    bound: u64,
    /// Time limit of the (simulated) run in seconds.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// Address-space limit of the program, e.g. 4G or 512M, or `none`
    /// [default: half of this machine's memory].
    #[arg(long, value_name = "SIZE")]
    memory_limit: Option<crate::lab::confine::MemoryLimit>,
    #[command(flatten)]
    program: ProgramArgs,
    #[command(flatten)]
    compile_line: CompileLine,
    #[command(flatten)]
    output: OutputArgs,
}

/// Which counters `--backend` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Counters {
    Auto,
    Cachegrind,
    Papi,
}

/// `polytune characterize`: the back end chosen, the program counted by
/// the app layer, its report printed.
pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    let compiler = a.build.compiler()?;
    let dir = Scratch::new("characterize")?;
    let limits = crate::lab::confine::Limits::new(
        std::time::Duration::from_secs(a.timeout),
        memory_limit(a.memory_limit),
    );
    let wanted = match a.backend {
        Counters::Cachegrind => Some(Backend::Cachegrind),
        Counters::Papi => Some(Backend::Papi),
        Counters::Auto => None,
    };
    let backend = characterize::backend(wanted, &compiler, dir.path(), &limits, &mut |e| {
        if let Event::NoPmu(why) = e
            && ui.verbosity >= super::Verbosity::Normal
        {
            eprintln!(
                "polytune: no PMU here (PAPI: {why}), falling back to the simulator (cachegrind)"
            );
        }
    });
    // Counted inside the SCoP regions only, through polytune's
    // instrumentation: any program, whatever its functions' names.
    let src = characterize::source(&a.file).map_err(super::app_error)?;
    let recipe = a.program.recipe(
        compiler,
        &src,
        a.build.include_for(&a.file),
        a.size,
        &a.compile_line.words,
        dir.path(),
        ui,
    )?;
    let setup = characterize::Setup {
        backend,
        recipe: &recipe,
        dir: dir.path(),
        limits: &limits,
        bound: a.bound,
        size: a.size,
    };
    let mut progress = (backend == Backend::Cachegrind).then(|| Progress::new(ui));
    let m = |n: u64| n.div_ceil(1_000_000) as usize;
    let r = characterize::characterize(&src, &setup, &mut |e| {
        if let (
            Event::Counted {
                instructions,
                bound,
            },
            Some(p),
        ) = (e, progress.as_mut())
        {
            p.set(
                m(instructions).min(m(bound)),
                m(bound),
                "millions of instructions counted in the regions",
                None,
                false,
            )
        }
    });
    if let Some(p) = progress {
        p.finish();
    }
    drop(dir);
    let r = r.map_err(super::app_error)?;
    if ui.verbosity >= super::Verbosity::Normal {
        eprintln!("polytune: counted {} by {}", r.counted, r.backend);
    }
    super::out(&if a.output.json {
        json_text(&serde_json::to_value(&r)?)?
    } else {
        counters_text(&r)
    })
}
