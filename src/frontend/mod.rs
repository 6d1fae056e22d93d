//! The C front end: finds the static control parts of a file, parses them
//! with the pest grammar in `grammar/scop.pest`, and lowers them to
//! [`Scop`]s. Everything outside the SCoP regions is kept byte for byte.

mod access_macros;
#[cfg(feature = "detect")]
pub mod detect;
pub mod error;
mod extract;
pub(crate) mod lex;
pub mod liveness;
mod lower;
mod macros;
mod parse;
pub mod pragmas;
pub mod scop;

pub use error::{Diagnostic, FrontendError};
pub(crate) use lower::PURE_FUNCTIONS;
pub use parse::MAX_NESTING;

use crate::frontend::scop::Scop;
use error::{LineIndex, Lines, SpanError};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Stack for the parser thread. The parser's recursion follows the nesting
/// of brackets and statements, which `parse` bounds before parsing (a few
/// thousand levels), and the tree it builds is at most
/// [`parse::MAX_NESTING`] deep; this leaves ample room for both and for
/// the lowering. (pest also stops by itself, with an error, when less
/// than 64 KiB of stack are left.)
const PARSER_STACK: usize = 512 << 20;

/// Front-end settings.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Extra functions the user vouches are pure (`--pure NAME`).
    pub pure_functions: Vec<String>,
}

/// A C file and its SCoPs.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
    pub scops: Vec<Scop>,
    /// Line starts of `text`, made on first use by [`SourceFile::line_col`].
    lines: OnceLock<Lines>,
}

/// The largest source file polytune reads (bytes): far above any C file
/// a person writes (the largest in the corpus is 8 KB; a whole-library
/// amalgamation is under 10 MB), far below what would exhaust memory
/// (`/dev/zero` is endless).
pub(crate) const MAX_SOURCE: u64 = 32 << 20;

/// The file's bytes, refused past [`MAX_SOURCE`] before more is read.
fn read_capped(path: &Path) -> Result<Vec<u8>, FrontendError> {
    use std::io::Read;
    let io = |source| FrontendError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SOURCE + 1).read_to_end(&mut bytes))
        .map_err(io)?;
    if bytes.len() as u64 > MAX_SOURCE {
        return Err(io(std::io::Error::other(format!(
            "larger than {} MiB, the largest C source polytune reads",
            MAX_SOURCE >> 20
        ))));
    }
    Ok(bytes)
}

/// Reads and parses a C file.
pub fn parse_file(path: &Path, options: &Options) -> Result<SourceFile, FrontendError> {
    let bytes = read_capped(path)?;
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let prefix = String::from_utf8_lossy(&e.as_bytes()[..at]).into_owned();
            let (line, column) = LineIndex::new(&prefix).line_col(at);
            return Err(FrontendError::Source(Diagnostic {
                path: path.to_path_buf(),
                line,
                column,
                message: "not a C source file: invalid UTF-8".into(),
                help: Some("polytune reads UTF-8 (or ASCII) C source".into()),
                pure: None,
            }));
        }
    };
    parse_source(path, text, options)
}

/// Parses C source text; `path` is used in messages only.
pub fn parse_source(
    path: &Path,
    text: String,
    options: &Options,
) -> Result<SourceFile, FrontendError> {
    let index = LineIndex::new(&text);
    let result = std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("polytune-parser".into())
            .stack_size(PARSER_STACK)
            .spawn_scoped(s, || scops_of(&text, options))
            .expect("cannot start the parser thread")
            .join()
    });
    let scops = match result {
        Ok(r) => r.map_err(|e| index.diagnostic(path, e))?,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    Ok(SourceFile {
        path: path.to_path_buf(),
        text,
        scops,
        lines: OnceLock::new(),
    })
}

fn scops_of(text: &str, options: &Options) -> Result<Vec<Scop>, SpanError> {
    let mut pure: HashSet<String> = PURE_FUNCTIONS.iter().map(|s| s.to_string()).collect();
    pure.extend(options.pure_functions.iter().cloned());
    // Function-like macros of the file that expand to pure expressions.
    let macros = macros::pure_macros(text, &pure);
    // Their expansions, for affine places (`a[IDX(i, j, n)]`).
    let expansions = macros::expansions(text, &macros);
    // Macros that name an array element (`#define A(i, j) a[(i) + (j) * lda]`).
    let elements = macros::access_macros(text);
    let element_names: HashSet<String> = elements.keys().cloned().collect();
    pure.extend(macros);
    let mut next_id = 0;
    let mut out = Vec::new();
    // The file's declarations, scanned once a region has parsed (a
    // hopeless region, such as a 10-million-term chain, is refused first
    // without the scan's second pass over the whole text).
    let mut types: Option<lower::TypeScan> = None;
    for (k, region) in extract::regions(text)?.into_iter().enumerate() {
        let body_text = &text[region.body.start..region.body.end];
        let first_id = next_id;
        let mut body =
            parse::parse_body_with(body_text, region.body.start, &mut next_id, &element_names)?;
        access_macros::expand(&mut body, &elements)?;
        let types = types.get_or_insert_with(|| lower::TypeScan::new(text));
        // Statement ids restart at 0 in every SCoP.
        let body = renumber(body, first_id);
        next_id = 0;
        let visible = types.visible_at(region.open.start);
        out.push(lower::lower(
            k,
            region,
            body,
            &pure,
            &expansions,
            text,
            visible,
        )?);
    }
    Ok(out)
}

fn renumber(
    mut body: Vec<crate::frontend::scop::ast::Stmt>,
    first: usize,
) -> Vec<crate::frontend::scop::ast::Stmt> {
    use crate::frontend::scop::ast::StmtKind;
    fn walk(s: &mut crate::frontend::scop::ast::Stmt, first: usize) {
        match &mut s.kind {
            StmtKind::Assign { id, .. } | StmtKind::Local { id, .. } => *id -= first,
            StmtKind::For(l) => walk(&mut l.body, first),
            StmtKind::If { then, other, .. } => {
                walk(then, first);
                if let Some(o) = other {
                    walk(o, first);
                }
            }
            StmtKind::Block(v) => v.iter_mut().for_each(|x| walk(x, first)),
            _ => {}
        }
    }
    body.iter_mut().for_each(|s| walk(s, first));
    body
}

/// Whether a line is a `#pragma scop` or `#pragma endscop` directive.
pub(crate) fn is_scop_pragma(line: &str) -> bool {
    let t: Vec<&str> = line.split_whitespace().collect();
    matches!(
        t.as_slice(),
        ["#pragma", "scop" | "endscop", ..] | ["#", "pragma", "scop" | "endscop", ..]
    )
}

/// The bodies of the `#pragma scop` regions of `text`, in order (`None`
/// when its regions do not parse): what a program written from this file
/// put in each SCoP's place.
pub fn region_bodies(text: &str) -> Option<Vec<String>> {
    let regions = extract::regions(text).ok()?;
    Some(
        regions
            .iter()
            .map(|r| text[r.body.start..r.body.end].to_string())
            .collect(),
    )
}

/// The text without its `#pragma scop` / `#pragma endscop` lines.
pub fn strip_scop_pragmas(text: &str) -> String {
    text.split_inclusive('\n')
        .filter(|l| !is_scop_pragma(l))
        .collect()
}

impl SourceFile {
    /// The file without the SCoPs `dropped` (indices into `scops`): their
    /// text stays as it is, plain code to every later stage, and the
    /// others are numbered again from 0 in their order.
    pub fn without(&self, dropped: &[usize]) -> SourceFile {
        let scops = self
            .scops
            .iter()
            .filter(|s| !dropped.contains(&s.index))
            .enumerate()
            .map(|(k, s)| Scop {
                index: k,
                ..s.clone()
            })
            .collect();
        SourceFile {
            path: self.path.clone(),
            text: self.text.clone(),
            scops,
            lines: OnceLock::new(),
        }
    }

    /// The file with the body of SCoP `k` replaced by `replacements[k]`
    /// (pragma lines and everything outside the SCoPs unchanged).
    pub fn splice(&self, replacements: &[String]) -> String {
        assert_eq!(
            replacements.len(),
            self.scops.len(),
            "one replacement per SCoP"
        );
        let mut out = String::with_capacity(self.text.len());
        let mut at = 0;
        for (scop, new_body) in self.scops.iter().zip(replacements) {
            out.push_str(&self.text[at..scop.region.body.start]);
            out.push_str(new_body);
            at = scop.region.body.end;
        }
        out.push_str(&self.text[at..]);
        out
    }

    /// The file with every SCoP regenerated by the pretty-printer.
    pub fn regenerated(&self) -> String {
        let bodies: Vec<String> = self
            .scops
            .iter()
            .map(|s| s.to_c(&self.indent_of(s)))
            .collect();
        self.splice(&bodies)
    }

    /// Indentation of the first line of a SCoP's body, to keep the style.
    pub fn indent_of(&self, s: &Scop) -> String {
        let body = &self.text[s.region.body.start..s.region.body.end];
        body.lines()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.chars().take_while(|c| c.is_whitespace()).collect())
            .unwrap_or_default()
    }

    /// 1-based (line, column) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        self.lines
            .get_or_init(|| Lines::new(&self.text))
            .line_col(&self.text, offset)
    }
}
