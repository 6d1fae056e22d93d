//! Finds the `#pragma scop` ... `#pragma endscop` regions of a C file.
//! The front end's light C scanner (`lex.rs`) skips comments, strings and
//! character literals so that a pragma in a comment is not taken for one;
//! everything outside the regions is never touched.

use super::error::SpanError;
use super::lex::{Tok, directive_words, tokens};
use super::omp;
use super::pragmas;
use crate::frontend::scop::Region;
use crate::frontend::scop::ast::Span;
use serde::Serialize;

/// What kind of preprocessor line was found.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Directive {
    Scop,
    EndScop,
    /// Any other pragma: the user's, with its text on one line.
    Pragma(String),
    /// An OpenMP loop directive (`omp::parse`), or its text and why
    /// polytune cannot check it.
    Omp(Result<omp::Directive, (String, String)>),
    Other,
}

/// The header comment polytune writes as the first line of every SCoP
/// body it generates (`/* polytune: CONFIG */`).
pub(crate) const HEADER: &str = "/* polytune:";

/// A `#pragma scop` region that is no SCoP to polytune: plain code to
/// every later stage, left as written, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kept {
    pub region: Region,
    pub why: Why,
}

/// Why a region is left as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Why {
    /// Polytune wrote its body (it starts with [`HEADER`]): a program
    /// polytune transformed (the original is what polytune tunes, not its
    /// own output). `config` is the configuration its header names.
    Polytune { config: String },
    /// It has at least `at_least` statements, more than the `limit` the
    /// caller asked for (`Options::max_statements`): it is not parsed.
    Statements { at_least: usize, limit: usize },
}

/// The `#pragma scop` regions of a file, in order: the SCoPs, and the
/// regions polytune wrote.
#[derive(Debug, Clone, Default)]
pub(crate) struct Regions {
    pub scops: Vec<Region>,
    pub written: Vec<Kept>,
    /// The user's OpenMP loop directives inside the SCoPs, in order.
    pub directives: Vec<Found>,
    /// The SCoPs inside a user's `#pragma omp parallel` region around a
    /// work-shared loop.
    pub teams: Vec<TeamAround>,
}

/// A SCoP (its index into [`Regions::scops`]) inside a user's `#pragma
/// omp parallel` region: the byte range of the region's statement, and
/// what the directive says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TeamAround {
    pub scop: usize,
    pub statement: (usize, usize),
    pub team: omp::Team,
}

/// A user's OpenMP loop directive inside a SCoP: its line (with its
/// newline) and what it says. The engine must prove it (see `omp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub span: Span,
    pub directive: omp::Directive,
}

/// The configuration named by polytune's header comment when the region
/// body starting at `body` begins with one (after white space).
fn written_by_polytune(text: &str, body: usize) -> Option<String> {
    let rest = text[body..].trim_start().strip_prefix(HEADER)?;
    let end = rest.find("*/")?;
    let config = rest[..end].trim();
    (!config.contains('\n')).then(|| config.to_string())
}

/// Every SCoP region of `text`, in order, and those polytune wrote. A
/// region polytune wrote may hold the directives it writes (OpenMP,
/// vectorization, its helper macros): it is not read further.
pub(crate) fn regions(text: &str) -> Result<Regions, SpanError> {
    let mut out = Vec::new();
    let mut written = Vec::new();
    let mut found = Vec::new();
    // The open region, and the configuration when polytune wrote it.
    let mut open: Option<(Span, Option<String>)> = None;
    for (span, directive) in directives(text) {
        match (directive, &open) {
            (Directive::Scop, None) => open = Some((span, written_by_polytune(text, span.end))),
            (Directive::Scop, Some(_)) => {
                return Err(
                    SpanError::new(span, "`#pragma scop` inside an open SCoP").help(
                        "close the previous region with `#pragma endscop` first; SCoPs do not nest",
                    ),
                );
            }
            (Directive::EndScop, Some((o, by))) => {
                let region = Region {
                    open: *o,
                    body: Span {
                        start: o.end,
                        end: span.start,
                    },
                    close: span,
                };
                match by {
                    Some(config) => written.push(Kept {
                        region,
                        why: Why::Polytune {
                            config: config.clone(),
                        },
                    }),
                    None => out.push(region),
                }
                open = None;
            }
            (Directive::EndScop, None) => {
                return Err(SpanError::new(
                    span,
                    "`#pragma endscop` without a matching `#pragma scop`",
                )
                .help("add `#pragma scop` before the loop nest, or remove this line"));
            }
            (Directive::Pragma(_) | Directive::Omp(_) | Directive::Other, Some((_, Some(_)))) => {}
            (Directive::Omp(Ok(directive)), Some(_)) => found.push(Found { span, directive }),
            (Directive::Omp(Err((p, why))), Some(_)) => {
                return Err(SpanError::new(
                    span,
                    format!("the user's `{p}` inside this SCoP: {why}, so polytune cannot prove it and does not transform the SCoP"),
                )
                .help(PRAGMA_HELP));
            }
            (Directive::Pragma(p), Some(_)) => {
                return Err(SpanError::new(
                    span,
                    format!("the user's `{p}` inside this SCoP: {NOT_REDERIVED}"),
                )
                .help(PRAGMA_HELP));
            }
            (Directive::Other, Some(_)) => {
                return Err(SpanError::new(
                    span,
                    "preprocessor directive inside a SCoP is not supported",
                )
                .help("move it outside the `#pragma scop` ... `#pragma endscop` region"));
            }
            (Directive::Pragma(_) | Directive::Omp(_) | Directive::Other, None) => {}
        }
    }
    if let Some((o, _)) = open {
        return Err(SpanError::new(o, "`#pragma scop` is never closed")
            .help("add `#pragma endscop` after the loop nest"));
    }
    let teams = foreign_pragmas(text, &out, &found)?;
    if out.is_empty() && written.is_empty() {
        return Err(SpanError::new(
            Span { start: 0, end: 0 },
            "no SCoP found: the file has no `#pragma scop` ... `#pragma endscop` region",
        )
        .help("mark the loop nest to optimize with `#pragma scop` before it and `#pragma endscop` after it"));
    }
    Ok(Regions {
        scops: out,
        written,
        directives: found,
        teams,
    })
}

/// The user's pragmas that bear on the SCoPs `out` (in front of one, of a
/// statement that encloses it, or inside it), bar the OpenMP loop
/// directives `found` inside them: an error for the first, unless it is a
/// `#pragma omp parallel` region around a SCoP whose loop is work-shared
/// (`omp::Team`), which is returned with the SCoP's index and the
/// region's statement.
fn foreign_pragmas(
    text: &str,
    out: &[Region],
    found: &[Found],
) -> Result<Vec<TeamAround>, SpanError> {
    let mut foreign = pragmas::foreign(text);
    foreign.retain(|p| {
        !found
            .iter()
            .any(|f| f.span.start <= p.start && p.start < f.span.end)
    });
    let mut teams = Vec::new();
    for (k, r) in out.iter().enumerate() {
        let bearing = pragmas::bearing(&foreign, r.body.start, r.body.end);
        // A `#pragma omp parallel` region around a work-shared loop: the
        // engine proves the loop's `#pragma omp for` (`omp::Team`).
        let team = bearing.first().and_then(|p| {
            let (t0, t1) = p.target?;
            let words = directive_words(&text[p.start..p.end])?;
            let team = omp::parse_team(words.get(1..)?)?.ok()?;
            let works = found.iter().any(|f| {
                r.body.start <= f.span.start
                    && f.span.start < r.body.end
                    && f.directive.construct == omp::Construct::For
            });
            (bearing.len() == 1 && works && t0 < r.open.start && r.close.end <= t1).then_some(
                TeamAround {
                    scop: k,
                    statement: (t0, t1),
                    team,
                },
            )
        });
        if let Some(t) = team {
            teams.push(t);
            continue;
        }
        if let Some(p) = bearing.first() {
            let inside = r.body.start <= p.start && p.start < r.body.end;
            let (span, where_) = if inside {
                (
                    Span {
                        start: p.start,
                        end: p.end,
                    },
                    "inside this SCoP".to_string(),
                )
            } else {
                (r.open, format!("at line {} applies to this SCoP", p.line))
            };
            return Err(SpanError::new(
                span,
                format!("the user's `{}` {where_}: {NOT_REDERIVED}", p.text),
            )
            .help(PRAGMA_HELP));
        }
    }
    Ok(teams)
}

/// Why a SCoP under the user's pragma is not transformed.
const NOT_REDERIVED: &str =
    "polytune does not re-derive what the pragma promises, so it cannot transform the SCoP";

const PRAGMA_HELP: &str = "remove the pragma to let polytune transform the loop nest (it adds OpenMP and vectorization pragmas itself where it proves them legal, when asked to), or move the SCoP out of the statement the pragma applies to";

/// Preprocessor lines outside comments and literals, with their spans
/// (from the start of their line, including the final newline, if any).
fn directives(text: &str) -> Vec<(Span, Directive)> {
    let b = text.as_bytes();
    tokens(text)
        .into_iter()
        .filter(|t| t.kind == Tok::Directive)
        .map(|t| {
            let start = line_start(b, t.start);
            let end = text[t.end..].find('\n').map_or(b.len(), |k| t.end + k + 1);
            (Span { start, end }, classify(&text[t.start..t.end]))
        })
        .collect()
}

fn line_start(b: &[u8], mut i: usize) -> usize {
    while i > 0 && b[i - 1] != b'\n' {
        i -= 1;
    }
    i
}

fn classify(line: &str) -> Directive {
    let words = directive_words(line).unwrap_or_default();
    match words.as_slice() {
        [p, s] if p == "pragma" && s == "scop" => Directive::Scop,
        [p, s] if p == "pragma" && s == "endscop" => Directive::EndScop,
        [p, rest @ ..] if p == "pragma" => match omp::parse(rest) {
            Some(Ok(d)) => Directive::Omp(Ok(d)),
            Some(Err(why)) => Directive::Omp(Err((format!("#{}", words.join(" ")), why))),
            None => Directive::Pragma(format!("#{}", words.join(" "))),
        },
        _ => Directive::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_regions_and_ignores_comments() {
        let text = "int x;\n/* #pragma scop */\n#pragma scop\na[0] = 1;\n  #  pragma   endscop // end\nint y;\n";
        let r = regions(text).unwrap().scops;
        assert_eq!(r.len(), 1);
        assert_eq!(&text[r[0].body.start..r[0].body.end], "a[0] = 1;\n");
        assert_eq!(&text[r[0].open.start..r[0].open.end], "#pragma scop\n");
        assert!(text[r[0].close.start..r[0].close.end].contains("endscop"));
    }

    #[test]
    fn reports_unbalanced_pragmas() {
        assert!(
            regions("#pragma endscop\n")
                .unwrap_err()
                .message
                .contains("without a matching")
        );
        assert!(
            regions("#pragma scop\nx=1;\n")
                .unwrap_err()
                .message
                .contains("never closed")
        );
        assert!(
            regions("#pragma scop\n#pragma scop\n#pragma endscop\n")
                .unwrap_err()
                .message
                .contains("inside an open SCoP")
        );
        assert!(
            regions("int main(){}\n")
                .unwrap_err()
                .message
                .contains("no SCoP")
        );
        assert!(
            regions("#pragma scop\n#define X 1\n#pragma endscop\n")
                .unwrap_err()
                .message
                .contains("preprocessor")
        );
    }

    #[test]
    fn string_with_pragma_text_is_not_a_pragma() {
        let text = "char *s = \"\\n#pragma scop\";\n#pragma scop\nx = 1;\n#pragma endscop";
        let r = regions(text).unwrap().scops;
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].close.end, text.len());
    }

    #[test]
    fn the_users_pragmas_block_the_scop() {
        let inside = "void f() {\n#pragma scop\nfor (i = 0; i < n; i++)\n#pragma GCC \\\n  ivdep\n  a[i] = 0;\n#pragma endscop\n}\n";
        let e = regions(inside).unwrap_err();
        assert!(
            e.message.starts_with(
                "the user's `#pragma GCC ivdep` inside this SCoP: polytune does not re-derive"
            ),
            "{}",
            e.message
        );
        assert_eq!(&inside[e.span.start..e.span.start + 11], "#pragma GCC");
        // An OpenMP loop directive is read for the engine to prove, and
        // one with a clause polytune does not check is refused by name.
        let simd = inside.replace("GCC \\\n  ivdep", "omp \\\n  simd");
        let r = regions(&simd).unwrap();
        assert_eq!(r.directives.len(), 1);
        assert_eq!(r.directives[0].directive.construct, omp::Construct::Simd);
        assert_eq!(
            &simd[r.directives[0].span.start..r.directives[0].span.start + 11],
            "#pragma omp"
        );
        let aligned = inside.replace("GCC \\\n  ivdep", "omp simd aligned(a:32)");
        let e = regions(&aligned).unwrap_err();
        assert!(
            e.message
                .contains("its clause `aligned` makes a promise polytune does not check"),
            "{}",
            e.message
        );
        let in_front = "void f() {\n#pragma omp parallel for\n#pragma scop\nfor (i = 0; i < n; i++)\n  a[i] = 0;\n#pragma endscop\n}\n";
        let e = regions(in_front).unwrap_err();
        assert_eq!(
            e.message,
            format!(
                "the user's `#pragma omp parallel for` at line 2 applies to this SCoP: {NOT_REDERIVED}"
            )
        );
        assert_eq!(&in_front[e.span.start..e.span.end], "#pragma scop\n");
        let around = "void f() {\n#pragma omp parallel\n  {\n#pragma scop\nfor (i = 0; i < n; i++)\n  a[i] = 0;\n#pragma endscop\n  }\n}\n";
        assert!(
            regions(around)
                .unwrap_err()
                .message
                .contains("`#pragma omp parallel` at line 2")
        );
        let operator = "void f() {\n#pragma scop\n_Pragma(\"GCC ivdep\") for (i = 0; i < n; i++)\n  a[i] = 0;\n#pragma endscop\n}\n";
        assert!(
            regions(operator)
                .unwrap_err()
                .message
                .contains("`_Pragma(\"GCC ivdep\")` inside")
        );
        // Pragmas before and after, on other statements: fine.
        let apart = "void f() {\n#pragma omp parallel for\nfor (i = 0; i < n; i++) b[i] = 1;\n#pragma scop\nfor (i = 0; i < n; i++)\n  a[i] = 0;\n#pragma endscop\n#pragma GCC ivdep\nfor (i = 0; i < n; i++) b[i] = 1;\n}\n";
        assert_eq!(regions(apart).unwrap().scops.len(), 1);
    }

    #[test]
    fn regions_polytune_wrote_are_told_apart_and_not_read() {
        let text = "void f() {\n#pragma scop\n  /* polytune: tile=32x32x1,omp=1 */\n#pragma omp parallel for\n  for (c0 = 0; c0 < n; c0++) a[c0] = 0;\n#pragma endscop\n#pragma scop\n  for (i = 0; i < n; i++) b[i] = 0;\n#pragma endscop\n}\n";
        let r = regions(text).unwrap();
        assert_eq!(r.scops.len(), 1);
        assert!(text[r.scops[0].body.start..].starts_with("  for (i = 0"));
        assert_eq!(r.written.len(), 1);
        assert_eq!(
            r.written[0].why,
            Why::Polytune {
                config: "tile=32x32x1,omp=1".into()
            }
        );
        assert!(text[r.written[0].region.body.start..].starts_with("  /* polytune:"));
        // Only the first line counts, and every region may be polytune's.
        let only = "#pragma scop\n/* polytune: uj=4 */\n#define X 1\nx = X;\n#pragma endscop\n";
        let r = regions(only).unwrap();
        assert!(r.scops.is_empty());
        assert_eq!(r.written.len(), 1);
        let later = "#pragma scop\nx = 1;\n/* polytune: uj=4 */\n#pragma endscop\n";
        assert_eq!(regions(later).unwrap().scops.len(), 1);
    }
}
