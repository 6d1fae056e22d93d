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
pub mod omp;
pub(crate) mod origin;
mod parse;
pub mod pragmas;
pub mod scop;
mod size;

pub use error::{Diagnostic, FrontendError};
pub use extract::{Kept, Why};
pub(crate) use lower::PURE_FUNCTIONS;
pub use parse::MAX_NESTING;

use crate::frontend::scop::{Region, Scop};
use error::{LineIndex, Lines, SpanError};
use origin::Origin;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

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
    /// A region with more statements than this (counted before it is
    /// parsed, at least) is not parsed: it is left as written, with the
    /// reason. `None`: every region is parsed (as `scop` lists them).
    pub max_statements: Option<usize>,
}

/// A C file and its SCoPs.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
    pub scops: Vec<Scop>,
    /// The `#pragma scop` regions that are no SCoPs (polytune wrote them,
    /// or they are too large to parse): plain code to every later stage,
    /// left as written.
    pub kept: Vec<Kept>,
    /// Line starts of `text`, made on first use by [`SourceFile::line_col`].
    lines: OnceLock<Lines>,
    /// The user's file, when `text` is a copy polytune marked
    /// (`--detect`): positions are reported in it.
    origin: Option<Arc<Origin>>,
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
    parse_with_origin(path, text, None, options)
}

/// Parses a text polytune marked from the user's file (`--detect`): the
/// positions of its messages, and those the [`SourceFile`] gives, are the
/// user's (see [`origin`]).
#[cfg(feature = "detect")]
pub(crate) fn parse_marked(
    path: &Path,
    marked: String,
    origin: Origin,
    options: &Options,
) -> Result<SourceFile, FrontendError> {
    parse_with_origin(path, marked, Some(Arc::new(origin)), options)
}

fn parse_with_origin(
    path: &Path,
    text: String,
    origin: Option<Arc<Origin>>,
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
    let (scops, kept) = match (result, &origin) {
        (Ok(Err(e)), Some(o)) => {
            let at = o.line_col(e.span.start);
            return Err(index.diagnostic_at(path, e, at));
        }
        (Ok(r), _) => r.map_err(|e| index.diagnostic(path, e))?,
        (Err(panic), _) => std::panic::resume_unwind(panic),
    };
    Ok(SourceFile {
        path: path.to_path_buf(),
        text,
        scops,
        kept,
        lines: OnceLock::new(),
        origin,
    })
}

/// The SCoPs of `text`, and the regions left as written.
fn scops_of(text: &str, options: &Options) -> Result<(Vec<Scop>, Vec<Kept>), SpanError> {
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
    let regions = extract::regions(text)?;
    let mut kept = regions.written;
    for (ri, region) in regions.scops.into_iter().enumerate() {
        // The user's OpenMP directives are read apart (`omp::attach`):
        // the parser sees blanks in their place.
        let blanked;
        let mut body_text = &text[region.body.start..region.body.end];
        let inside = |f: &&extract::Found| {
            region.body.start <= f.span.start && f.span.start < region.body.end
        };
        if regions.directives.iter().any(|f| inside(&f)) {
            let mut b = body_text.as_bytes().to_vec();
            for f in regions.directives.iter().filter(inside) {
                for k in f.span.start..f.span.end.min(region.body.end) {
                    let c = &mut b[k - region.body.start];
                    if *c != b'\n' {
                        *c = b' ';
                    }
                }
            }
            blanked = String::from_utf8(b).expect("blanks keep the text UTF-8");
            body_text = &blanked;
        }
        // A region far beyond the caller's limit is not parsed.
        if let Some(limit) = options.max_statements {
            let at_least = size::statements_at_least(body_text);
            if at_least > limit {
                kept.push(Kept {
                    region,
                    why: Why::Statements { at_least, limit },
                });
                continue;
            }
        }
        let k = out.len();
        let first_id = next_id;
        let mut body =
            parse::parse_body_with(body_text, region.body.start, &mut next_id, &element_names)?;
        access_macros::expand(&mut body, &elements)?;
        let types = types.get_or_insert_with(|| lower::TypeScan::new(text));
        // Statement ids restart at 0 in every SCoP.
        let body = renumber(body, first_id);
        next_id = 0;
        let visible = types.visible_at(region.open.start);
        let mut scop = lower::lower(k, region, body, &pure, &expansions, text, visible)?;
        // Inside a user's `omp parallel` region, what the region's code
        // declares before the SCoP is each thread's own.
        let team = regions.teams.iter().find(|t| t.scop == ri).map(|t| {
            let mut team = t.team.clone();
            team.private.extend(liveness::declared_in(
                text,
                t.statement.0,
                region.open.start,
            ));
            team
        });
        scop.directives = omp::attach(&scop, &regions.directives, text, team.as_ref())?;
        scop.team = team;
        out.push(scop);
    }
    kept.sort_by_key(|r| r.region.open.start);
    Ok((out, kept))
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

/// What takes a SCoP region's place in a file written from it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Replacement {
    /// Lines put before the region's `#pragma scop` line.
    pub before: String,
    /// The new body, between the pragma lines.
    pub body: String,
    /// Lines put after the region's `#pragma endscop` line.
    pub after: String,
}

impl Replacement {
    /// A new body alone.
    pub fn body(body: String) -> Replacement {
        Replacement {
            body,
            ..Replacement::default()
        }
    }
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
            kept: self.kept.clone(),
            lines: OnceLock::new(),
            origin: self.origin.clone(),
        }
    }

    /// One line per region left as written: where, and why.
    pub fn kept_notes(&self) -> Vec<String> {
        self.kept
            .iter()
            .map(|w| {
                let (line, _) = self.line_col(w.region.open.start);
                let path = self.path.display();
                match &w.why {
                    Why::Polytune { config } => format!(
                        "the SCoP at {path}:{line} was written by polytune (configuration {config}); left as written: give polytune the original program to tune it again"
                    ),
                    Why::Statements { at_least, limit } => format!(
                        "{path}:{line}: SCoP left unchanged: at least {at_least} statements, more than the {limit} polytune transforms in one SCoP (split it into several SCoPs)"
                    ),
                }
            })
            .collect()
    }

    /// The bodies that `variant`, a program written from this file (its
    /// `#pragma scop` regions in this file's order), put in place of this
    /// file's SCoPs; `None` when its regions do not match this file's.
    pub fn scop_bodies(&self, variant: &str) -> Option<Vec<String>> {
        let found = extract::regions(variant).ok()?;
        let mut all: Vec<Region> = found.scops;
        all.extend(found.written.into_iter().map(|w| w.region));
        all.sort_by_key(|r| r.open.start);
        // Which of this file's regions, in order, are SCoPs.
        let mut mine: Vec<(usize, bool)> = self
            .scops
            .iter()
            .map(|s| (s.region.open.start, true))
            .collect();
        mine.extend(self.kept.iter().map(|w| (w.region.open.start, false)));
        mine.sort_by_key(|&(at, _)| at);
        if all.len() != mine.len() {
            return None;
        }
        Some(
            all.iter()
                .zip(&mine)
                .filter(|(_, (_, scop))| *scop)
                .map(|(r, _)| variant[r.body.start..r.body.end].to_string())
                .collect(),
        )
    }

    /// The file with the body of SCoP `k` replaced by `replacements[k]`
    /// (pragma lines and everything outside the SCoPs unchanged).
    pub fn splice(&self, replacements: &[String]) -> String {
        let framed: Vec<Replacement> = replacements
            .iter()
            .map(|b| Replacement::body(b.clone()))
            .collect();
        self.splice_framed(&framed)
    }

    /// The file with SCoP `k`'s body replaced by `replacements[k].body`,
    /// its `before` lines put in front of the `#pragma scop` line and its
    /// `after` lines after the `#pragma endscop` line (everything else
    /// unchanged).
    pub fn splice_framed(&self, replacements: &[Replacement]) -> String {
        assert_eq!(
            replacements.len(),
            self.scops.len(),
            "one replacement per SCoP"
        );
        let mut out = String::with_capacity(self.text.len());
        let mut at = 0;
        for (scop, new) in self.scops.iter().zip(replacements) {
            let r = &scop.region;
            out.push_str(&self.text[at..r.open.start]);
            out.push_str(&new.before);
            out.push_str(&self.text[r.open.start..r.body.start]);
            out.push_str(&new.body);
            out.push_str(&self.text[r.body.end..r.close.end]);
            if !new.after.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&new.after);
            at = r.close.end;
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

    /// 1-based (line, column) of a byte offset, in the user's file: a
    /// text polytune marked (`--detect`) has lines the user's does not.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        if let Some(o) = &self.origin {
            return o.line_col(offset);
        }
        self.lines
            .get_or_init(|| Lines::new(&self.text))
            .line_col(&self.text, offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variants_scop_bodies_skip_the_regions_polytune_wrote_before() {
        let written = "#pragma scop\n/* polytune: uj=4 */\nx = 1;\n#pragma endscop\n";
        let scop = "#pragma scop\nfor (i = 0; i < n; i++) a[i] = 0;\n#pragma endscop\n";
        let text = format!("void f(int n, double a[9]) {{ int i; double x;\n{written}{scop}}}\n");
        let src = parse_source(Path::new("t.c"), text, &Options::default()).unwrap();
        assert_eq!((src.scops.len(), src.kept.len()), (1, 1));
        assert_eq!(src.kept_notes().len(), 1);
        assert!(
            src.kept_notes()[0]
                .starts_with("the SCoP at t.c:2 was written by polytune (configuration uj=4)")
        );
        let new = "#pragma scop\n/* polytune: tile=1 */\nnew;\n#pragma endscop\n";
        let variant = format!("#define H\n{written}{new}#undef H\n");
        assert_eq!(
            src.scop_bodies(&variant).unwrap(),
            ["/* polytune: tile=1 */\nnew;\n"]
        );
        assert!(src.scop_bodies(new).is_none());
        // Lines around a region go outside its pragmas.
        let framed = src.splice_framed(&[Replacement {
            before: "#define H\n".into(),
            body: "new;\n".into(),
            after: "#undef H\n".into(),
        }]);
        assert!(
            framed.ends_with("#define H\n#pragma scop\nnew;\n#pragma endscop\n#undef H\n}\n"),
            "{framed}"
        );
    }
}
