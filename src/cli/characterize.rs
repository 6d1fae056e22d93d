//! `polytune characterize`: a program's (simulated) hardware counters.

use super::Ui;
use super::args::{BuildArgs, OutputArgs, memory_limit};
use super::render::{counters_json, counters_text, json_text};
use crate::lab::characterize::{Backend, characterize};
use crate::lab::scratch::Scratch;
use anyhow::Result;
use std::path::PathBuf;

/// Characterize a program by its (simulated) hardware counters,
/// normalized by its instruction count (paper section 4.1). Seconds to
/// minutes: cachegrind runs the program about 50 times slower than native.
#[derive(clap::Args)]
pub struct Args {
    /// C source file in the corpus style.
    file: PathBuf,
    /// Counter back end: cachegrind (simulated, deterministic) or papi.
    #[arg(long, default_value = "cachegrind", value_parser = ["cachegrind", "papi"])]
    backend: String,
    /// Dataset size (cachegrind runs about 50 times slower than native).
    #[arg(long, value_enum, default_value = "small")]
    size: crate::lab::size::Size,
    #[command(flatten)]
    build: BuildArgs,
    /// Time limit of the (simulated) run in seconds.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// Address-space limit of the program, e.g. 4G or 512M, or `none`
    /// [default: half of this machine's memory].
    #[arg(long, value_name = "SIZE")]
    memory_limit: Option<crate::lab::confine::MemoryLimit>,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(a: Args, _ui: &Ui) -> Result<()> {
    let compiler = a.build.compiler()?;
    let dir = Scratch::new("characterize")?;
    let backend = if a.backend == "papi" {
        Backend::Papi
    } else {
        Backend::Cachegrind
    };
    let limits = crate::lab::confine::Limits::new(
        std::time::Duration::from_secs(a.timeout),
        memory_limit(a.memory_limit),
    );
    let f = characterize(
        &a.file,
        &compiler,
        a.size,
        &a.build.include_for(&a.file),
        backend,
        dir.path(),
        &limits,
    );
    drop(dir);
    let f = f?;
    super::out(&if a.output.json {
        json_text(&counters_json(&a.file, a.size, &f))?
    } else {
        counters_text(&f)
    })
}
