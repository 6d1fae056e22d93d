//! SCoP detection: finds the static control parts of an ordinary C file
//! (no `#pragma scop` needed), like Polly's SCoP detection.
//!
//! libclang parses the whole translation unit with the preprocessor (so
//! macros and includes are seen as the compiler sees them); [`clang`]
//! copies each function body into an owned tree. In every block, the
//! maximal runs of consecutive statements that qualify and contain at
//! least one loop become candidate regions. Their text is marked with
//! `#pragma scop` / `#pragma endscop` in a copy of the file, which is
//! handed to the existing front end: it does the exact affine checks, and
//! a region it rejects is reported with its message and dropped.
//!
//! Conservative by construction. A statement does not qualify if it
//! contains `goto`, `break`, `continue`, `return`, `while`, `do`,
//! `switch`, labels, declarations (but of scalars at the head of a block
//! of their own, whose `if`s may then read memory), inline assembly, pointer dereferences,
//! address-of, struct members, a call to a function not known to be pure,
//! a loop bound or `if` condition that reads memory or calls a function,
//! or a subscript that reads memory or divides by a variable (a product
//! of variables may be a linearized subscript, which the front end
//! delinearizes or rejects); the
//! reads of integers from memory the region provably leaves alone
//! (`grid_points[0]`, `Mat->mrows`) are the exception, see
//! `invariant.rs`. A region is also rejected when a variable of a loop
//! bound is written in it. Operators from the expansion of a pure
//! function-like macro of the file (`max_score(a, b)`) are accepted: the
//! front end reads the call as a pure call.
//!
//! A bare block is searched like a function body; when the front end
//! rejects a region that holds one whole, the runs inside it are tried in
//! its place (`confirm.rs`). A region whose loop iterator may be read
//! after it is not taken: the rewritten loops run on iterators of their
//! own (`live.rs`).
//!
//! The aliasing rule: every array accessed in a region is named by a
//! variable. Array objects (local and global variables of array type)
//! are distinct objects. A parameter is never an array object: in C,
//! `double x[]`, `double x[N]` and `double A[N][M]` (the PolyBench
//! style) declare pointers, exactly like `double *x`. A pointer used as
//! an array (a parameter in either spelling, `double (*p)[M]`, a local or
//! global pointer) that is not `restrict`-qualified may overlap any other
//! array or pointer of a compatible element type (same element type, or
//! `char`/`void`) that is not `restrict` either, so a region is rejected
//! when it accesses such a pointer and such an array and writes either
//! one, and the message names the `restrict` declaration that fixes it.
//! Exceptions: read-only pairs are fine; so is anything paired with a
//! `restrict` pointer (C's guarantee: what is modified through it is
//! reached only through it); a parameter the function never assigns
//! cannot point into a local (automatic) array of its own function, which
//! did not exist when it was called; and no pointer can point into a
//! local array whose address is never taken (used only as `r1[i]`, all
//! dimensions subscripted). `--assume-no-alias`
//! ([`DetectOptions::assume_no_alias`]) skips the rule: the user vouches
//! that no two arrays overlap.
//!
//! The user's pragmas: a loop nest is never taken when a pragma polytune
//! does not own (OpenMP, `GCC ivdep`, `clang loop`, ... see
//! [`crate::frontend::pragmas`]) lies inside it, in front of one of its
//! statements, or in front of a statement that encloses it: polytune
//! does not re-derive what the pragma promises, and a rewritten nest
//! would carry the promise onto loops it does not hold for.

mod alias;
mod clang;
mod confirm;
mod directives;
mod finder;
mod invariant;
mod live;
mod pure;
mod why;

use crate::frontend::pragmas::{self, Pragma};
use crate::frontend::{self, FrontendError, Options, PURE_FUNCTIONS, SourceFile, is_scop_pragma};
use alias::{escapes, reassigned};
use clang::{Kind, Node};
use confirm::confirmed;
use finder::Finder;
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

/// Why detection could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}:{column}: error: {message} (libclang; pass include paths and -D flags after `--`)", path.display())]
    Clang {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: error: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error("{}:{line}:1: error: the file already has `#pragma scop` regions; optimize its marked regions without detection", path.display())]
    AlreadyMarked { path: PathBuf, line: usize },
}

/// Detection settings.
#[derive(Debug, Clone, Default)]
pub struct DetectOptions {
    /// Arguments for clang: include paths, `-D` flags, `-std=...`.
    pub clang_args: Vec<String>,
    /// Functions the user vouches are pure (`--pure NAME`).
    pub pure_functions: Vec<String>,
    /// The user vouches that no two arrays or pointers of a region
    /// overlap (`--assume-no-alias`): the aliasing rule is not applied.
    /// A wrong promise gives a wrong program.
    pub assume_no_alias: bool,
}

/// A detected static control part.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Region {
    pub function: String,
    pub first_line: usize,
    pub last_line: usize,
    /// Byte range in the original text (start of the first statement to
    /// the end of the last, its `;` included).
    #[serde(skip)]
    pub start: usize,
    #[serde(skip)]
    pub end: usize,
    /// The top-level statements: (start, end, first line, last line,
    /// contains a loop), so that a region the front end rejects can be
    /// split around the offending statement.
    #[serde(skip)]
    stmts: Vec<Stmt>,
    /// The loop statements around the region (byte ranges, outermost
    /// first): their next iterations run after it.
    #[serde(skip)]
    loops: Vec<(usize, usize)>,
    /// Pairs of its arrays that may overlap, one of them written: the
    /// transformed code checks at run time that the ranges the region
    /// reaches in them are disjoint (a region split from it keeps them,
    /// and the front end's SCoP those of its arrays).
    #[serde(skip)]
    may_alias: alias::Checked,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Stmt {
    start: usize,
    end: usize,
    first_line: usize,
    last_line: usize,
    has_loop: bool,
    /// For a block, the regions found inside it on their own: what is
    /// tried when the front end rejects the block as a whole.
    inside: Inside,
}

/// The regions of a block's own statements, and the loop nests rejected
/// among them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Inside {
    regions: Vec<Region>,
    rejected: Vec<Rejection>,
}

impl Region {
    fn of(
        function: &str,
        stmts: Vec<Stmt>,
        loops: Vec<(usize, usize)>,
        may_alias: alias::Checked,
    ) -> Option<Region> {
        if !stmts.iter().any(|s| s.has_loop) {
            return None;
        }
        let (first, last) = (&stmts[0], &stmts[stmts.len() - 1]);
        Some(Region {
            function: function.to_string(),
            first_line: first.first_line,
            last_line: last.last_line,
            start: first.start,
            end: last.end,
            stmts,
            loops,
            may_alias,
        })
    }
}

/// A loop nest that was not taken, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rejection {
    pub function: String,
    pub first_line: usize,
    pub last_line: usize,
    /// Where the offending construct is.
    pub line: usize,
    pub column: usize,
    pub reason: String,
    /// What the user can vouch for to have the nest taken, if anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vouch: Option<Vouch>,
}

/// A promise the user can make about their program that lifts a
/// rejection (the command line says how to make it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Vouch {
    /// The function of this name has no side effects
    /// ([`DetectOptions::pure_functions`]).
    Pure(String),
    /// No two arrays or pointers of a region overlap
    /// ([`DetectOptions::assume_no_alias`]).
    NoAlias,
}

/// The outcome of detection on one file.
#[derive(Debug, Clone)]
pub struct Detection {
    pub path: PathBuf,
    /// The original text.
    pub text: String,
    pub regions: Vec<Region>,
    pub rejected: Vec<Rejection>,
    /// The text with the regions marked by `#pragma scop` lines.
    pub marked: String,
    /// The marked text parsed by the front end (`None` without regions).
    pub source: Option<SourceFile>,
    /// The file's functions found pure by inspection (`pure.rs`): calls
    /// to them are taken as if named by `--pure`.
    pub inferred_pure: Vec<String>,
}

/// Detects the SCoPs of a C file.
pub fn detect_file(path: &Path, options: &DetectOptions) -> Result<Detection, DetectError> {
    let text = unmarked(path)?;
    let Candidates {
        regions,
        rejected,
        inferred,
    } = candidates(path, &text, options)?;
    // The front end reads calls to the inferred pure functions as pure.
    let mut options = options.clone();
    options.pure_functions.extend(inferred.iter().cloned());
    let mut d = confirmed(path, text, regions, rejected, &options);
    d.inferred_pure = inferred;
    Ok(d)
}

/// The file's text: an error when it is marked with `#pragma scop` already.
fn unmarked(path: &Path) -> Result<String, DetectError> {
    let text = std::fs::read_to_string(path).map_err(|source| DetectError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if let Some(line) = text.lines().position(is_scop_pragma).map(|i| i + 1) {
        return Err(DetectError::AlreadyMarked {
            path: path.to_path_buf(),
            line,
        });
    }
    Ok(text)
}

/// What the walk over a file's functions finds.
struct Candidates {
    regions: Vec<Region>,
    /// The statements rejected on the way.
    rejected: Vec<Rejection>,
    /// The file's functions found pure by inspection.
    inferred: Vec<String>,
}

/// The candidate regions of every function of the file, as libclang
/// parses it.
fn candidates(path: &Path, text: &str, options: &DetectOptions) -> Result<Candidates, DetectError> {
    let unit = clang::functions(path, &options.clang_args)?;
    let functions = unit.functions;
    let mut pure: HashSet<String> = PURE_FUNCTIONS.iter().map(|s| s.to_string()).collect();
    pure.extend(options.pure_functions.iter().cloned());
    // Small functions of the file that are pure by inspection.
    let inferred = pure::inferred(&functions, &pure);
    pure.extend(inferred.iter().cloned());
    let macros = frontend::macros::pure_macros(text, &pure);
    pure.extend(macros);
    let plain_macros = frontend::macros::plain_object_macros(text, &pure);
    let element_macros: HashSet<String> =
        frontend::macros::access_macros(text).into_keys().collect();
    let foreign = pragmas::foreign_with(text, &unit.pragma_macros);
    let mut finder = Finder {
        path,
        text,
        pure: &pure,
        plain_macros: &plain_macros,
        element_macros: &element_macros,
        pragmas: &foreign,
        assume_no_alias: options.assume_no_alias,
        escaping: HashSet::new(),
        reassigned: HashSet::new(),
        addressed: HashSet::new(),
        regions: Vec::new(),
        rejected: Vec::new(),
        function: String::new(),
        loops: Vec::new(),
    };
    for f in &functions {
        finder.function = f.name.clone();
        finder.escaping = HashSet::new();
        escapes(&f.body, &mut finder.escaping);
        finder.reassigned = HashSet::new();
        reassigned(&f.body, &mut finder.reassigned);
        finder.addressed = HashSet::new();
        invariant::addressed(&f.body, &mut finder.addressed);
        finder.block(&f.body);
    }
    let Finder {
        regions, rejected, ..
    } = finder;
    Ok(Candidates {
        regions,
        rejected,
        inferred,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect_text(c: &str) -> Detection {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.c");
        std::fs::write(&p, c).unwrap();
        detect_file(&p, &DetectOptions::default()).unwrap()
    }

    #[test]
    fn finds_a_simple_nest_and_marks_it() {
        let d = detect_text(
            "void f(int n, double A[100][100]) {\n  int i, j;\n  for (i = 0; i < n; i++)\n    for (j = 0; j < n; j++)\n      A[i][j] = 0.0;\n}\n",
        );
        assert_eq!(d.regions.len(), 1, "{:?}", d.rejected);
        assert_eq!((d.regions[0].first_line, d.regions[0].last_line), (3, 5));
        assert!(d.marked.contains("  #pragma scop\n  for (i = 0;"));
        assert!(d.marked.contains("A[i][j] = 0.0;\n  #pragma endscop\n}"));
        assert_eq!(frontend::strip_scop_pragmas(&d.marked), d.text);
        assert_eq!(d.source.unwrap().scops.len(), 1);
    }

    /// Each SCoP's pairs of arrays checked at run time.
    fn checked(d: &Detection) -> Vec<Vec<(String, String)>> {
        d.source
            .as_ref()
            .map(|s| {
                s.scops
                    .iter()
                    .map(|scop| {
                        scop.alias_checks
                            .iter()
                            .map(|p| (p.first.clone(), p.second.clone()))
                            .collect()
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn pair(a: &str, b: &str) -> (String, String) {
        (a.to_string(), b.to_string())
    }

    #[test]
    fn pointer_parameters_that_may_alias_are_checked_at_run_time() {
        let d = detect_text(
            "void f(int n, double *a, double *b) {\n  int i;\n  for (i = 0; i < n; i++)\n    a[i] = b[i];\n}\n",
        );
        assert_eq!(d.regions.len(), 1, "{:?}", d.rejected);
        assert_eq!(checked(&d), [vec![pair("a", "b")]]);
        // Rows that are objects of their own: no range covers them.
        let d = detect_text(
            "void f(int n, double **a, double *b) {\n  int i;\n  for (i = 0; i < n; i++)\n    a[i][0] = b[i];\n}\n",
        );
        assert!(d.regions.is_empty(), "{:?}", d.regions);
        assert!(
            d.rejected[0]
                .reason
                .contains("`a` has rows that are objects of their own"),
            "{:?}",
            d.rejected
        );
        assert_eq!(d.rejected[0].vouch, Some(Vouch::NoAlias));
        // A global the pointer may reach: its bound, checked; its loop
        // iterator, which no check can name, refused.
        let d = detect_text(
            "int len;\nvoid f(int *p) {\n  int i;\n  for (i = 0; i < len; i++)\n    p[i] = 1;\n}\n",
        );
        assert_eq!(checked(&d), [vec![pair("len", "p")]]);
        let d = detect_text(
            "int k;\nvoid f(int n, int *p) {\n  for (k = 0; k < n; k++)\n    p[k] = 1;\n  k = 0;\n}\n",
        );
        assert!(
            d.rejected[0]
                .reason
                .starts_with("`p` may point at the loop iterator `k`"),
            "{:?}",
            d.rejected
        );
    }

    #[test]
    fn restrict_pointers_do_not_alias() {
        let d = detect_text(
            "void f(int n, double *restrict a, double *restrict b) {\n  int i;\n  for (i = 0; i < n; i++)\n    a[i] = b[i];\n}\n",
        );
        assert_eq!(d.regions.len(), 1, "{:?}", d.rejected);
    }

    #[test]
    fn consecutive_statements_merge() {
        let d = detect_text(
            "void f(int n, double x[restrict 10], double y[restrict 10]) {\n  int i;\n  double s;\n  s = 0.0;\n  for (i = 0; i < n; i++)\n    s += x[i];\n  for (i = 0; i < n; i++)\n    y[i] = s;\n  y[0] = 1.0;\n}\n",
        );
        assert_eq!(d.regions.len(), 1, "{:?}", d.rejected);
        assert_eq!((d.regions[0].first_line, d.regions[0].last_line), (4, 9));
    }

    #[test]
    fn array_parameters_are_pointers() {
        let d = detect_text(
            "void f(int n, double x[], double y[]) {\n  int i;\n  for (i = 0; i < n; i++)\n    y[i] = x[i] + 1.0;\n}\n",
        );
        assert_eq!(checked(&d), [vec![pair("x", "y")]]);
        let d = detect_text(
            "void f(int n, double A[restrict 10][10], double x[restrict]) {\n  int i;\n  for (i = 0; i < n; i++)\n    A[i][0] = x[i];\n}\n",
        );
        assert_eq!(d.regions.len(), 1, "{:?}", d.rejected);
        assert_eq!(checked(&d), [Vec::<(String, String)>::new()]);
    }

    #[test]
    fn a_parameter_never_points_into_a_local_array() {
        let src = "void f(int n, double *u) {\n  int i;\n  double r1[100];\n  for (i = 0; i < n; i++)\n    r1[i] = u[i];\n  for (i = 0; i < n; i++)\n    u[i] = r1[i] * 2.0;\n}\n";
        let d = detect_text(src);
        assert_eq!(d.regions.len(), 1, "{:?}", d.rejected);
        assert_eq!(checked(&d), [Vec::<(String, String)>::new()]);
        // A static local array can have escaped; a local pointer can
        // point into the local array: both checked at run time.
        let d = detect_text(&src.replace("double r1[100]", "static double r1[100]"));
        assert_eq!(checked(&d), [vec![pair("r1", "u")]]);
        let d = detect_text(
            "void f(int n) {\n  int i;\n  double r1[100];\n  double *w = r1;\n  for (i = 0; i < n; i++)\n    w[i] = r1[i] + 1.0;\n}\n",
        );
        assert_eq!(checked(&d), [vec![pair("r1", "w")]]);
        // The array's address escapes: the parameter still holds what it
        // was called with, unless it is assigned.
        let escaped = "void g(double *q);\nvoid f(int n, double *p) {\n  int i;\n  double r1[100];\n  g(r1);\n  for (i = 0; i < n; i++)\n    p[i] = r1[i] + 1.0;\n}\n";
        let d = detect_text(escaped);
        assert_eq!(checked(&d), [Vec::<(String, String)>::new()]);
        let d = detect_text(&escaped.replace("g(r1);", "g(r1);\n  p = r1 + 1;\n  g(p);"));
        assert_eq!(checked(&d), [vec![pair("p", "r1")]]);
    }

    #[test]
    fn assume_no_alias_skips_the_rule() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.c");
        std::fs::write(
            &p,
            "void f(int n, double *a, double *b) {\n  int i;\n  for (i = 0; i < n; i++)\n    a[i] = b[i];\n}\n",
        )
        .unwrap();
        let options = DetectOptions {
            assume_no_alias: true,
            ..DetectOptions::default()
        };
        let d = detect_file(&p, &options).unwrap();
        assert_eq!(d.regions.len(), 1);
        assert_eq!(checked(&d), [Vec::<(String, String)>::new()]);
    }
}
