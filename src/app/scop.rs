//! `scop`: a file's static control parts in isl's notation (domains,
//! schedules and accesses, simplified by isl), and `scop --detect`'s
//! regions and rejections, as typed reports that the command line prints
//! as text or JSON.

use super::error::Error;
use crate::frontend::SourceFile;
use crate::frontend::scop::{Array, InvariantLoad, Scop, Statement};
use crate::isl;
use serde::Serialize;
use std::path::PathBuf;

/// The SCoPs of a file (JSON: keys in alphabetical order, as the command
/// line writes them through `serde_json::Value`).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    #[serde(serialize_with = "super::serial::path")]
    pub file: PathBuf,
    pub scops: Vec<ScopReport>,
    /// The regions polytune wrote (a program it transformed), left as
    /// written; absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub written_by_polytune: Vec<WrittenReport>,
}

/// A `#pragma scop` region polytune wrote, which is not a SCoP to it.
#[derive(Debug, Clone, Serialize)]
pub struct WrittenReport {
    /// The lines of its `#pragma scop` and `#pragma endscop`.
    pub first_line: usize,
    pub last_line: usize,
    /// The configuration that wrote it, from its header comment.
    pub configuration: String,
}

/// One SCoP: its sets and relations over all its statements, then each
/// statement's.
#[derive(Debug, Clone, Serialize)]
pub struct ScopReport {
    /// Its number in the file, from 0.
    pub index: usize,
    /// The lines of its `#pragma scop` and `#pragma endscop`.
    pub first_line: usize,
    pub last_line: usize,
    /// Its parameters (symbolic constants).
    pub parameters: Vec<String>,
    /// The scalars and arrays it touches.
    pub arrays: Vec<Array>,
    /// Parameters read from memory once before it (text only).
    #[serde(skip)]
    pub invariant_loads: Vec<InvariantLoad>,
    /// One-dimensional arrays of the C code seen with more dimensions,
    /// their row lengths checked at run time; absent when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delinearized: Option<Vec<Delinearized>>,
    /// Why its notation is as built, not simplified by isl: the SCoP is
    /// beyond the engine's limits (text only).
    #[serde(skip)]
    pub not_simplified: Option<String>,
    /// The union of its statements' iteration domains.
    pub domain: String,
    /// Its original schedule.
    pub schedule: String,
    /// Its read and write access relations.
    pub reads: String,
    pub writes: String,
    /// The writes that may not happen (compound statements); absent when
    /// there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub may_writes: Option<String>,
    pub statements: Vec<StatementReport>,
    /// Dividends of C divisions, assumed never negative (C truncates,
    /// the model floors).
    pub division_dividends: Vec<String>,
    /// The condition the transformed code checks at run time; `None`
    /// when it needs none, when not simplified, or when not transformable.
    pub run_time_check: Option<String>,
    /// The run-time check that the arrays which may overlap (pointers
    /// `--detect` cannot prove apart) do not, in C: the transformed code
    /// runs only where it holds. `None` when there are no such arrays.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias_check: Option<String>,
    /// The user's OpenMP loop directives on its loops, and whether the
    /// engine proves them; empty when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub directives: Vec<DirectiveReport>,
    /// The user's `omp parallel` region around it, when its loop is a
    /// work-shared one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
    /// Why the engine cannot transform it (text only).
    #[serde(skip)]
    pub not_transformable: Option<String>,
    /// Its C, regenerated from the parsed form.
    pub c: String,
}

/// A delinearized array: its name and the sizes of its dimensions but
/// the outermost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delinearized {
    pub array: String,
    pub sizes: Vec<String>,
}

/// One statement of a SCoP.
#[derive(Debug, Clone, Serialize)]
pub struct StatementReport {
    /// `S0`, `S1`, ...
    pub name: String,
    /// Where it starts in the file.
    pub line: usize,
    pub column: usize,
    /// Its C text, white space collapsed.
    pub text: String,
    /// Its surrounding loops' iterators, outer first.
    pub iterators: Vec<String>,
    pub domain: String,
    pub schedule: String,
    pub reads: String,
    pub writes: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub may_writes: Option<String>,
}

/// The SCoPs of a parsed file, described through isl.
pub fn report(src: &SourceFile) -> Result<Report, Error> {
    let ctx = isl::Ctx::new();
    let scops = src
        .scops
        .iter()
        .map(|s| scop(&ctx, src, s))
        .collect::<Result<_, _>>()?;
    let written_by_polytune = src
        .kept
        .iter()
        .filter_map(|w| match &w.why {
            crate::frontend::Why::Polytune { config } => Some(WrittenReport {
                first_line: src.line_col(w.region.open.start).0,
                last_line: src.line_col(w.region.close.start).0,
                configuration: config.clone(),
            }),
            crate::frontend::Why::Statements { .. } => None,
        })
        .collect();
    Ok(Report {
        file: src.path.clone(),
        scops,
        written_by_polytune,
    })
}

/// A user's OpenMP loop directive of a SCoP.
#[derive(Debug, Clone, Serialize)]
pub struct DirectiveReport {
    pub line: usize,
    pub text: String,
    /// Why the engine does not prove it (the SCoP is then left as
    /// written); absent when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_proven: Option<String>,
}

/// Each directive of `s` and its proof (the first one that fails, and
/// the rest unproven as well: the SCoP is left as written).
fn directives(src: &SourceFile, s: &Scop) -> Vec<DirectiveReport> {
    let proof = crate::engine::pipeline::prove_directives(src, s, None);
    s.directives
        .iter()
        .map(|d| DirectiveReport {
            line: src.line_col(d.span.start).0,
            text: d.directive.text.clone(),
            not_proven: match &proof {
                Ok(()) => None,
                Err((Some(at), why)) if *at == d.span => {
                    let prefix = format!("the user's `{}` is not proven: ", d.directive.text);
                    Some(format!(
                        "not proven: {}",
                        why.strip_prefix(&prefix).unwrap_or(why)
                    ))
                }
                Err((_, why)) => Some(format!("the SCoP is left as written: {why}")),
            },
        })
        .collect()
}

fn scop(ctx: &isl::Ctx, src: &SourceFile, s: &Scop) -> Result<ScopReport, Error> {
    let limits = crate::engine::pipeline::check_limits(s).err();
    let isl = IslView {
        ctx,
        simplify: limits.is_none(),
    };
    let statements = s
        .statements
        .iter()
        .map(|st| statement(&isl, src, s, st))
        .collect::<Result<_, _>>()?;
    let (run_time_check, not_transformable) = if isl.simplify {
        match crate::engine::model::run_time_check(s, None) {
            Ok(check) => (check, None),
            Err(e) => (None, Some(e.to_string())),
        }
    } else {
        (None, None)
    };
    let (alias_check, not_transformable) = match (isl.simplify, not_transformable) {
        (true, None) => match crate::engine::codegen::alias_check_c(s) {
            Ok(check) => (check, None),
            Err(e) => (None, Some(e.to_string())),
        },
        (_, not) => (None, not),
    };
    Ok(ScopReport {
        index: s.index,
        first_line: src.line_col(s.region.open.start).0,
        last_line: src.line_col(s.region.close.start).0,
        parameters: s.parameters.clone(),
        arrays: s.arrays.clone(),
        invariant_loads: s.invariant_loads.clone(),
        delinearized: (!s.delinearized.is_empty()).then(|| {
            s.delinearized
                .iter()
                .map(|d| Delinearized {
                    array: d.array.clone(),
                    sizes: d.sizes.clone(),
                })
                .collect()
        }),
        not_simplified: limits.map(|e| e.to_string()),
        domain: isl.set(&s.domains())?,
        schedule: isl.map(&s.schedules())?,
        reads: isl.map(&s.reads())?,
        writes: isl.map(&s.writes())?,
        may_writes: match s.has_may_writes() {
            true => Some(isl.map(&s.may_writes())?),
            false => None,
        },
        statements,
        division_dividends: s
            .division_checks
            .iter()
            .map(|c| isl::unmangle_text(&c.dividend.to_string()))
            .collect(),
        run_time_check,
        alias_check,
        directives: directives(src, s),
        team: s.team.as_ref().map(|t| t.text.clone()),
        not_transformable,
        c: s.to_c(""),
    })
}

fn statement(
    isl: &IslView,
    src: &SourceFile,
    s: &Scop,
    st: &Statement,
) -> Result<StatementReport, Error> {
    let (line, column) = src.line_col(st.span.start);
    Ok(StatementReport {
        name: st.name(),
        line,
        column,
        text: src.text[st.span.start..st.span.end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
        iterators: st.iterators.clone(),
        domain: isl.set(&s.domain_of(st))?,
        schedule: isl.map(&s.schedule_of(st))?,
        reads: isl.map(&s.reads_of(st))?,
        writes: isl.map(&s.writes_of(st))?,
        may_writes: match st.may_writes.is_empty() {
            true => None,
            false => Some(isl.map(&s.may_writes_of(st))?),
        },
    })
}

/// How a SCoP's sets and relations are written: simplified by isl, or,
/// for a SCoP beyond the engine's limits (where isl would take minutes:
/// 26 s for a 600-deep nest; 0.3 ms per statement), as built.
struct IslView<'a> {
    ctx: &'a isl::Ctx,
    simplify: bool,
}

impl IslView<'_> {
    fn set(&self, text: &str) -> Result<String, Error> {
        if !self.simplify {
            return Ok(isl::unmangle_text(text));
        }
        isl::normalize_set(self.ctx, text).map_err(|source| Error::Notation {
            what: "domain",
            text: text.to_string(),
            source,
        })
    }

    fn map(&self, text: &str) -> Result<String, Error> {
        if !self.simplify {
            return Ok(isl::unmangle_text(text));
        }
        isl::normalize_map(self.ctx, text).map_err(|source| Error::Notation {
            what: "relation",
            text: text.to_string(),
            source,
        })
    }
}

/// The regions `scop --detect` found and the loop nests it rejected.
#[cfg(feature = "detect")]
#[derive(Debug, Clone, Serialize)]
pub struct Detected {
    #[serde(serialize_with = "super::serial::path")]
    pub file: PathBuf,
    pub regions: Vec<DetectedRegion>,
    pub rejected: Vec<crate::frontend::detect::Rejection>,
    /// The file with `#pragma scop` / `#pragma endscop` around the
    /// regions (for `--mark`; not in the report's JSON).
    #[serde(skip)]
    pub marked: String,
}

/// A region `scop --detect` found, with the run-time alias check its
/// transformed code makes.
#[cfg(feature = "detect")]
#[derive(Debug, Clone, Serialize)]
pub struct DetectedRegion {
    #[serde(flatten)]
    pub region: crate::frontend::detect::Region,
    /// The pairs of its arrays that may overlap, one of them written (a
    /// value loaded once named by its expression).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub may_alias: Vec<crate::frontend::scop::AliasPair>,
    /// The check of them (C), or why there is none (the engine cannot
    /// transform the region).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias_check: Option<String>,
    /// The user's OpenMP loop directives in it, and whether the engine
    /// proves them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub directives: Vec<DirectiveReport>,
}

/// `scop --detect`: the file's regions found without pragmas.
#[cfg(feature = "detect")]
pub fn detect(
    file: &std::path::Path,
    options: &crate::frontend::detect::DetectOptions,
) -> Result<Detected, Error> {
    let d = crate::frontend::detect::detect_file(file, options)?;
    let scops = d.source.as_ref().map(|s| s.scops.as_slice()).unwrap_or(&[]);
    let regions = d
        .regions
        .into_iter()
        .zip(scops)
        .map(|(region, scop)| DetectedRegion {
            directives: d
                .source
                .as_ref()
                .map(|src| directives(src, scop))
                .unwrap_or_default(),
            region,
            may_alias: scop.spelled_alias_checks(),
            alias_check: match crate::engine::codegen::alias_check_c(scop) {
                Ok(check) => check,
                Err(e) => (!scop.alias_checks.is_empty())
                    .then(|| format!("none: the region is not transformed ({e})")),
            },
        })
        .collect();
    Ok(Detected {
        file: file.to_path_buf(),
        regions,
        rejected: d.rejected,
        marked: d.marked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON keys of a SCoP and of a statement, in the order the
    /// command line prints them (sorted), and the optional ones absent
    /// when there is nothing to say.
    #[test]
    fn json_keys_of_a_scop() {
        let text = "void f(int n, double a[n]) {\n#pragma scop\n  for (int i = 0; i < n; i++)\n    a[i] = a[i] + 1.0;\n#pragma endscop\n}\n";
        let src = crate::frontend::parse_source(
            std::path::Path::new("f.c"),
            text.to_string(),
            &crate::frontend::Options::default(),
        )
        .expect("a SCoP");
        let r = report(&src).expect("isl takes it");
        let v = serde_json::to_value(&r).expect("serializable");
        let keys = |v: &serde_json::Value| -> Vec<String> {
            v.as_object().expect("an object").keys().cloned().collect()
        };
        assert_eq!(keys(&v), ["file", "scops"]);
        assert_eq!(v["file"], "f.c");
        let scop = &v["scops"][0];
        assert_eq!(
            keys(scop),
            [
                "arrays",
                "c",
                "division_dividends",
                "domain",
                "first_line",
                "index",
                "last_line",
                "parameters",
                "reads",
                "run_time_check",
                "schedule",
                "statements",
                "writes"
            ]
        );
        assert_eq!(scop["first_line"], 2);
        assert_eq!(scop["last_line"], 5);
        let st = &scop["statements"][0];
        assert_eq!(
            keys(st),
            [
                "column",
                "domain",
                "iterators",
                "line",
                "name",
                "reads",
                "schedule",
                "text",
                "writes"
            ]
        );
        assert_eq!(st["text"], "a[i] = a[i] + 1.0;");
        assert_eq!(st["iterators"], serde_json::json!(["i"]));
    }
}
