//! The application layer: the work the commands do, built from the
//! engine, the lab and learning. It returns report structs and never
//! formats for the terminal.

pub mod campaign;
pub mod characterize;
pub mod compare;
pub mod error;
pub mod evaluate;
pub mod fuzz;
pub mod measure;
pub mod ranker;
pub mod scop;
pub mod select;
mod serial;
pub mod simulate;
pub mod slurm;
pub mod space;
pub mod train;
pub mod variants;
pub mod verify_space;

pub use error::Error;

/// A file parsed, refused when it has no `#pragma scop` region: the
/// commands that build it instrumented work inside its regions.
fn with_regions(
    file: &std::path::Path,
    verb: &'static str,
    why: &'static str,
) -> Result<crate::frontend::SourceFile, Error> {
    let src = crate::frontend::parse_file(file, &crate::frontend::Options::default())?;
    if src.scops.is_empty() {
        return Err(Error::NoScop {
            file: file.to_path_buf(),
            verb,
            why,
        });
    }
    Ok(src)
}
