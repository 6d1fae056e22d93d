//! polytune: a polyhedral source-to-source optimizer for C that learns
//! which loop transformations to apply.
//!
//! The crate is organized by pipeline stage: [`frontend`] finds and parses
//! the static control parts of a C file, [`scop`] is the polyhedral
//! description handed to the engine, [`isl`] is the only door to isl.

pub mod cli;
pub mod codegen;
pub mod collect;
#[cfg(feature = "detect")]
pub mod detect;
pub mod frontend;
pub mod fuzz;
pub mod isl;
pub mod learn;
pub mod measure;
pub mod model;
pub mod optimize;
pub mod scop;
pub mod space;
pub mod store;
pub mod transform;

/// isl allocates and frees small objects at a high rate; mimalloc (which,
/// built with `override`, also serves isl's C `malloc`) makes the engine
/// faster.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
