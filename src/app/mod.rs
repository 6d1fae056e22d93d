//! The application layer: the work the commands do, built from the
//! engine, the lab and learning. It returns report structs and never
//! formats for the terminal.

pub mod campaign;
pub mod compare;
pub mod evaluate;
pub mod fuzz;
pub mod select;
pub mod slurm;
pub mod train;
pub mod verify_space;
