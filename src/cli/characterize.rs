//! `polytune characterize`: a program's (simulated) hardware counters.

use super::Ui;
use super::args::{BuildArgs, CompileLine, OutputArgs, ProgramArgs, memory_limit};
use super::render::{counters_json, counters_text, json_text};
use crate::lab::characterize::{
    Backend, CharacterizeError, characterize_instrumented, characterize_instrumented_by_pmu,
    pmu_available,
};
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
pub struct Args {
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

pub fn run(a: Args, ui: &Ui) -> Result<()> {
    let compiler = a.build.compiler()?;
    let dir = Scratch::new("characterize")?;
    let limits = crate::lab::confine::Limits::new(
        std::time::Duration::from_secs(a.timeout),
        memory_limit(a.memory_limit),
    );
    let backend = match a.backend {
        Counters::Cachegrind => Backend::Cachegrind,
        Counters::Papi => Backend::Papi,
        Counters::Auto => match pmu_available(&compiler, dir.path(), &limits) {
            Ok(()) => Backend::Papi,
            Err(e) => {
                if ui.verbosity >= super::Verbosity::Normal {
                    let why = match e {
                        CharacterizeError::Papi(why) => why,
                        e => e.to_string(),
                    };
                    let why = why.lines().next().unwrap_or_default();
                    eprintln!(
                        "polytune: no PMU here (PAPI: {why}), falling back to the simulator (cachegrind)"
                    );
                }
                Backend::Cachegrind
            }
        },
    };
    // Counted inside the SCoP regions only, through polytune's
    // instrumentation: any program, whatever its functions' names.
    let src = crate::frontend::parse_file(&a.file, &crate::frontend::Options::default())?;
    if src.scops.is_empty() {
        anyhow::bail!(
            "{}: no `#pragma scop` region to characterize (polytune counts inside the SCoP regions)",
            a.file.display()
        );
    }
    let recipe = a.program.recipe(
        compiler,
        &src,
        a.build.include_for(&a.file),
        a.size,
        &a.compile_line.words,
        dir.path(),
        ui,
    )?;
    let copy = dir.path().join(a.file.file_name().unwrap_or_default());
    std::fs::write(
        &copy,
        crate::engine::pipeline::instrumented(&src, None, None)?.text,
    )?;
    let f = match backend {
        Backend::Papi => {
            characterize_instrumented_by_pmu(&copy, &recipe, src.scops.len(), dir.path(), &limits)
        }
        Backend::Cachegrind => {
            let bound = crate::lab::characterize::Bound {
                instructions: a.bound,
                ..Default::default()
            };
            let mut progress = super::progress::Progress::new(ui);
            let m = |n: u64| n.div_ceil(1_000_000) as usize;
            let f = characterize_instrumented(
                &copy,
                &recipe,
                src.scops.len(),
                dir.path(),
                &limits,
                &bound,
                &mut |n| {
                    progress.set(
                        m(n).min(m(bound.instructions)),
                        m(bound.instructions),
                        "millions of instructions counted in the regions",
                        None,
                        false,
                    )
                },
            );
            progress.finish();
            f
        }
    };
    drop(dir);
    let f = f?;
    if ui.verbosity >= super::Verbosity::Normal {
        eprintln!("polytune: counted {} by {}", f.counted, f.backend);
    }
    super::out(&if a.output.json {
        json_text(&counters_json(&a.file, a.size, &f))?
    } else {
        counters_text(&f)
    })
}
