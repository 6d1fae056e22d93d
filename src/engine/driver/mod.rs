//! A driver for a bare kernel: a C file that holds the function of a SCoP
//! but no `main`. [`generate`] writes a second translation unit whose
//! `main` calls every function that contains a SCoP of the file once,
//! with arrays it allocates and fills itself.
//!
//! # Contract
//!
//! `generate(src, params)` returns the C text of the driver, the
//! functions it calls (in the file's order), the arrays it allocates and
//! the symbols the kernel file must be compiled with (`-DNAME=VALUE`).
//! The caller compiles the kernel file and the driver together; the
//! driver only calls: timing and dumps are the instrumentation's, in the
//! kernel file. Pure: no process, no file.
//!
//! - **Values.** `params` gives integers by name. A name is a parameter of
//!   a kernel function (its signature's spelling) or a symbol of a SCoP
//!   that is not one (a macro such as `N`): such a value is returned in
//!   [`Driver::defines`], for the kernel's compile line, and is refused
//!   when the file `#define`s the name to another value other than under
//!   `#ifndef NAME` or `#if !defined(NAME)` (the compile line could not
//!   change it). A SCoP symbol without
//!   a `--param` takes the value of the file's `#define NAME number` when
//!   it has one. A name that is none of these is refused (a typo).
//! - **Scalars.** Integer parameters (`int`, `long`, `unsigned`, `size_t`,
//!   `int64_t`, ...) must be given; floating ones (`float`, `double`) get
//!   1.5, 1.2, 1.5, ... in signature order.
//! - **Arrays.** Each array parameter is allocated on the heap. An extent
//!   the signature declares (`double A[1000][1000]`, the C99 `double
//!   C[n][n]`, `A[N]` with a macro) is used at the given values; the
//!   first extent of `double x[]`, `double (*x)[m]` or `double *x` is
//!   taken from the SCoP's access footprint (the largest index read or
//!   written, plus one), but only when the function names `x` nowhere
//!   outside its SCoPs: elsewhere polytune cannot see how far it reaches,
//!   and the parameter is refused. The footprint (isl: every element the
//!   SCoPs touch at these values) must lie inside the declared extents,
//!   and no index may be negative; otherwise the call would be out of
//!   bounds and `generate` says so.
//! - **Contents.** A fixed-seed generator fills floating elements with
//!   values in (0, 1] (multiples of 1/1024) and integer elements with
//!   1 to 9: deterministic, finite, no zero divisor, and products of
//!   elements stay at most 1.
//! - **Refused,** with the parameter named and what to write instead:
//!   structs, unions, enums, pointers to pointers, arrays of pointers,
//!   types polytune does not know, `static` or plain `inline` functions
//!   (not callable from another file), return types it cannot spell, a
//!   SCoP symbol without a value, a parameter of the SCoP's bounds the
//!   function may modify outside its SCoPs (assigned, incremented, its
//!   address taken), and a SCoP symbol that is a variable of the file
//!   (the driver cannot set it).
//! - Integers are checked against their type's range on LP64 (`int` 32
//!   bits, `long` 64).
//!
//! [`has_main`] tells whether a file defines `main` (comments, strings
//! and directives ignored), for the caller to decide whether a driver is
//! needed.

mod emit;
mod extent;
mod footprint;
mod signature;
mod stages;

use crate::frontend::SourceFile;
use crate::frontend::error::Diagnostic;
use footprint::footprints;
use signature::FileScan;
use stages::{Kernel, Stages, given_values};
use std::collections::BTreeSet;

/// A driver program for a kernel file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Driver {
    /// The C text of the driver's translation unit.
    pub text: String,
    /// The functions `main` calls, in order.
    pub functions: Vec<String>,
    /// Values given for SCoP symbols that are not function parameters:
    /// the kernel file must be compiled with `-DNAME=VALUE`.
    pub defines: Vec<(String, i64)>,
    /// Every array the driver allocates.
    pub arrays: Vec<DrivenArray>,
}

/// One array parameter as the driver allocates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrivenArray {
    pub function: String,
    pub parameter: String,
    /// Element type, as C spells it.
    pub element: String,
    pub extents: Vec<i64>,
    /// The first extent came from the access footprint.
    pub from_footprint: bool,
}

/// Why no driver can be made.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The file, as written, cannot be driven: where, why, what to do,
    /// and the values that would let it be, if values would.
    #[error("{0}")]
    Source(Box<Diagnostic>, Option<Needs>),
    /// A given parameter value that names nothing, or names something
    /// twice.
    #[error("the value of {name}: {message}")]
    Param { name: String, message: String },
    /// A bug of polytune or isl.
    #[error("internal error while sizing the arrays of the driver: {0}")]
    Internal(String),
}

/// What the user can give to have a file driven (the command line says
/// how to give it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Needs {
    /// The value of this parameter or symbol.
    Value(String),
    /// Other parameter values than the given ones.
    OtherValues,
    /// Leave to the driver the sizing of pointers of unknown extent
    /// from the elements the kernel touches (`Options::size_from_footprint`).
    FootprintSizes,
}

/// Whether `text` defines a function `main`.
pub fn has_main(text: &str) -> bool {
    signature::has_main(text)
}

/// Whether a `.c` source among the words of a compile line defines
/// `main` (the kernel's file is one of several: `optimize kernel.c --
/// main.c io.c -lm`): the program is then whole and needs no driver.
pub fn sources_define_main(compile_line: &[String]) -> bool {
    compile_line
        .iter()
        .filter(|w| w.ends_with(".c") && !w.starts_with('-'))
        .filter_map(|w| std::fs::read_to_string(w).ok())
        .any(|text| has_main(&text))
}

/// The values the floating scalars get, in turn.
const FLOAT_VALUES: [&str; 2] = ["1.5", "1.2"];

/// The driver for the kernel file `src` at the integer values `params`.
pub fn generate(src: &SourceFile, params: &[(String, i64)]) -> Result<Driver, DriverError> {
    generate_with(src, params, true)
}

/// [`generate`], with pointer parameters of unknown extent (`double *x`,
/// `double x[]`) sized from the footprint only when `from_footprint`;
/// otherwise they are refused (the user says what they hold).
///
/// Reads as its stages (`stages.rs`), in the order of the checks: each
/// stage returns the first refusal it finds.
pub fn generate_with(
    src: &SourceFile,
    params: &[(String, i64)],
    from_footprint: bool,
) -> Result<Driver, DriverError> {
    let scan = FileScan::new(&src.text);
    let given = given_values(params)?;
    let stages = Stages::new(src, scan, given, from_footprint);
    let functions = stages.kernel_functions()?;
    // The names a SCoP or a signature took a value for: a given name
    // neither among them nor a parameter names nothing.
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut calls = Vec::new();
    let mut arrays = Vec::new();
    for (f, scops) in &functions {
        let returns = stages.callable(f)?;
        let kernel = Kernel::new(f, scops);
        stages.check_symbols(&kernel, &mut used)?;
        let footprints = footprints(scops, &|n| stages.value(n))?;
        let (args, driven) = stages.arguments(&kernel, &footprints, &mut used)?;
        arrays.extend(driven);
        calls.push(emit::Call {
            name: f.name.clone(),
            returns,
            args,
        });
    }
    let defines = stages.kernel_defines(params, &functions, &used)?;
    Ok(stages.driver(params, calls, defines, arrays))
}

/// How an array parameter of the function around a SCoP lies in memory,
/// as its declaration says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArrayLayout {
    /// Bytes of one element.
    pub element_bytes: u64,
    /// Each extent at the given values (`None`: not declared, or a name
    /// without a value).
    pub extents: Vec<Option<i64>>,
}

/// The layout of each array parameter of the function around `scop`, by
/// name, with its extents evaluated at `value` (or else the file's
/// `#define` of a name); empty when the SCoP is in no function this
/// scan reads.
pub(crate) fn array_layouts(
    src: &SourceFile,
    scop: &crate::frontend::scop::Scop,
    value: &dyn Fn(&str) -> Option<i64>,
) -> std::collections::HashMap<String, ArrayLayout> {
    let scan = FileScan::new(&src.text);
    let defines = scan.defines();
    let env = |n: &str| {
        value(n).or_else(|| match defines.get(n) {
            Some((values, _)) if values.iter().all(|v| *v == values[0]) => values.first().copied(),
            _ => None,
        })
    };
    let Some(f) = scan.function_at(scop.region.open.start) else {
        return Default::default();
    };
    f.params
        .iter()
        .filter_map(|p| match &p.kind {
            signature::Kind::Array {
                element, extents, ..
            } => Some((
                p.name.clone(),
                ArrayLayout {
                    element_bytes: scalar_bytes(element),
                    extents: extents
                        .iter()
                        .map(|e| e.as_ref().and_then(|e| e.eval(&env).ok().flatten()))
                        .collect(),
                },
            )),
            _ => None,
        })
        .collect()
}

/// Bytes of a scalar type on x86-64 and AArch64 Linux.
fn scalar_bytes(s: &signature::Scalar) -> u64 {
    match s {
        signature::Scalar::Float(t) if t.contains("long") => 16,
        signature::Scalar::Float(t) if t.contains("double") => 8,
        signature::Scalar::Float(_) => 4,
        signature::Scalar::Int { spelling, .. } => {
            let bits = int_bits(spelling);
            u64::from(bits.max(8) / 8)
        }
    }
}

/// Bits of the integer type `spelling` (as on x86-64 and AArch64 Linux:
/// `int` 32 bits, `long` 64).
fn int_bits(spelling: &str) -> u32 {
    if spelling == "_Bool" {
        1
    } else if spelling.contains("char") || spelling.contains("int8") {
        8
    } else if spelling.contains("short") || spelling.contains("int16") {
        16
    } else if spelling.contains("long")
        || spelling.contains("64")
        || spelling.contains("ptr")
        || spelling == "size_t"
    {
        64
    } else {
        32
    }
}

/// Whether `v` is a value of the integer type `spelling` (as on x86-64
/// and AArch64 Linux: `int` 32 bits, `long` 64).
fn fits(spelling: &str, unsigned: bool, v: i64) -> bool {
    let bits = int_bits(spelling);
    let (lo, hi) = match (unsigned, bits) {
        (true, 64) => (0, i64::MAX),
        (true, b) => (0, (1i64 << b) - 1),
        (false, 1) => (0, 1),
        (false, 64) => (i64::MIN, i64::MAX),
        (false, b) => (-(1i64 << (b - 1)), (1i64 << (b - 1)) - 1),
    };
    (lo..=hi).contains(&v)
}

#[cfg(test)]
mod tests;
