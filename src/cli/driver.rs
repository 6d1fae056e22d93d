//! `polytune driver`: the `main` polytune writes for a bare kernel.

use super::Ui;
use super::args::write_output;
use anyhow::Result;
use std::path::PathBuf;

/// Print the `main` polytune generates for a bare kernel.
///
/// Print the driver polytune generates for a bare kernel (a file with the
/// SCoP's function and no `main`): the `main` that `measure`,
/// `characterize` and `optimize` build with it when given --param. It
/// allocates every array parameter (sized from the declared extents or
/// the kernel's access footprint), fills it deterministically and calls
/// the kernel once. Build it with the kernel: `cc kernel.c driver.c`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The kernel's C file (with `#pragma scop` regions, or found with
    /// --detect).
    file: PathBuf,
    #[command(flatten)]
    source: super::source::SourceArgs,
    /// Extra include directory (repeatable), for clang with --detect.
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// Values of the integer parameters, e.g. --param N=2000,M=1800.
    #[arg(long, value_name = "NAME=V,...", value_delimiter = ',', value_parser = super::args::parse_param)]
    param: Vec<(String, i64)>,
    /// Size a pointer parameter of unknown extent from the elements the
    /// kernel touches.
    #[arg(long)]
    size_from_footprint: bool,
    /// Output file (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

pub(crate) fn run(a: Args, ui: &Ui) -> Result<()> {
    let src = a.source.load(&a.file, &a.include, None, ui)?;
    let d = crate::engine::driver::generate_with(&src, &a.param, a.size_from_footprint)?;
    if !d.defines.is_empty() {
        ui.warn(format!(
            "build the kernel with {}",
            d.defines
                .iter()
                .map(|(n, v)| format!("-D{n}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    write_output(a.output.as_deref(), &d.text)
}
