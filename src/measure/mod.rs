//! Measurement: compiling, running and verifying programs. For now the
//! output-dump format shared by every corpus kernel and its comparison.

pub mod dump;
