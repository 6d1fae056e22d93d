//! Measurement: compiling, running, timing and verifying programs.

pub mod characterize;
pub mod compiler;
pub mod confine;
pub mod dump;
pub mod runner;
pub mod scratch;
pub mod verify;
