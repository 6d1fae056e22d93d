//! polytune: a polyhedral source-to-source optimizer for C that learns
//! which loop transformations to apply.
//!
//! The crate is layered; a layer uses only the layers below it (see
//! ARCHITECTURE.md):
//! - [`cli`]: the command line, the only place that formats text and
//!   chooses exit codes;
//! - [`app`]: what the commands do (campaigns, learned selection, fuzzing);
//! - [`learn`]: the speedup models, the dataset, leave-one-out evaluation,
//!   the search strategies and their simulation;
//! - [`lab`]: compiling, running, verifying, timing, storing;
//! - [`engine`]: one configuration applied to a file's SCoPs (model,
//!   dependences, transformations, code generation, the space);
//! - [`frontend`]: C text to SCoPs (parser, libclang detection);
//! - [`config`]: the vocabulary of the space; [`isl`]: the only door to isl.

pub mod app;
pub mod cli;
pub mod config;
pub mod engine;
pub mod frontend;
pub mod isl;
pub mod lab;
pub mod learn;

/// isl allocates and frees small objects at a high rate; mimalloc (which,
/// built with `override`, also serves isl's C `malloc`) makes the engine
/// faster.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
