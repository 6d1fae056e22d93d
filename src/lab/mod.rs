//! The measurement lab: compiling, running, timing and verifying programs,
//! characterizing them, and storing the results. It knows neither the
//! engine nor learning.

pub mod build;
pub mod characterize;
pub mod compiler;
pub mod confine;
pub mod dump;
pub mod harness;
pub mod runner;
pub mod scratch;
pub mod side;
pub mod size;
pub mod store;
pub mod verify;
