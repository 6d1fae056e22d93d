//! The engine: one configuration applied to the SCoPs of a C file. Pure:
//! it starts no process and prints nothing.

pub mod codegen;
pub mod driver;
pub mod extended;
pub mod features;
pub mod instrument;
pub mod model;
pub mod pipeline;
pub mod space;
pub mod transform;
