//! How SCoPs are shown: `scop`'s text and JSON (domains, schedules and
//! accesses through isl, the statements' C) and `--detect`'s regions and
//! rejections.

#[cfg(feature = "detect")]
use super::json_text;
use crate::frontend::SourceFile;
use crate::frontend::scop::{Scop, Statement};
use crate::isl;
use anyhow::{Context, Result};
use serde_json::{Value, json};
use std::fmt::Write as _;
#[cfg(feature = "detect")]
use std::path::Path;

/// A loop nest `--detect` did not take, and why.
#[cfg(feature = "detect")]
pub fn rejection(path: &Path, r: &crate::frontend::detect::Rejection) -> String {
    use crate::frontend::detect::Vouch;
    let vouch = match &r.vouch {
        Some(Vouch::Pure(f)) => format!(" (--pure {f} vouches that `{f}` has none)"),
        Some(Vouch::NoAlias) => " (--assume-no-alias vouches that no arrays alias)".into(),
        None => String::new(),
    };
    format!(
        "rejected loop nest in {} (lines {}-{}): {}:{}:{}: {}{vouch}",
        r.function,
        r.first_line,
        r.last_line,
        path.display(),
        r.line,
        r.column,
        r.reason
    )
}

/// The regions `scop --detect` found and the nests it rejected.
#[cfg(feature = "detect")]
pub fn detection(
    file: &Path,
    d: &crate::frontend::detect::Detection,
    as_json: bool,
) -> Result<String> {
    if as_json {
        return json_text(&json!({
            "file": file.display().to_string(),
            "regions": d.regions,
            "rejected": d.rejected,
        }));
    }
    let mut o = format!(
        "{}: {} region(s) detected\n",
        file.display(),
        d.regions.len()
    );
    for (k, r) in d.regions.iter().enumerate() {
        o += &format!(
            "  region {k}: {} lines {}-{}\n",
            r.function, r.first_line, r.last_line
        );
    }
    for r in &d.rejected {
        o += &format!("  {}\n", rejection(file, r));
    }
    Ok(o)
}

/// isl's normal form of a set or a map written by the front end.
fn set(ctx: &isl::Ctx, text: &str) -> Result<String> {
    isl::normalize_set(ctx, text).with_context(|| format!("isl rejected the domain `{text}`"))
}

fn map(ctx: &isl::Ctx, text: &str) -> Result<String> {
    isl::normalize_map(ctx, text).with_context(|| format!("isl rejected the relation `{text}`"))
}

fn scop_lines(src: &SourceFile, s: &Scop) -> (usize, usize) {
    (
        src.line_col(s.region.open.start).0,
        src.line_col(s.region.close.start).0,
    )
}

fn statement_text(src: &SourceFile, st: &Statement) -> String {
    src.text[st.span.start..st.span.end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// How `scop` prints a SCoP's sets and relations: simplified by isl, or,
/// for a SCoP beyond the engine's limits (where isl would take minutes:
/// 26 s for a 600-deep nest; 0.3 ms per statement), as built.
struct IslView<'a> {
    ctx: &'a isl::Ctx,
    simplify: bool,
}

impl<'a> IslView<'a> {
    fn new(ctx: &'a isl::Ctx, s: &Scop) -> IslView<'a> {
        IslView {
            ctx,
            simplify: crate::engine::pipeline::check_limits(s).is_ok(),
        }
    }

    fn set(&self, text: &str) -> Result<String> {
        if self.simplify {
            set(self.ctx, text)
        } else {
            Ok(isl::unmangle_text(text))
        }
    }

    fn map(&self, text: &str) -> Result<String> {
        if self.simplify {
            map(self.ctx, text)
        } else {
            Ok(isl::unmangle_text(text))
        }
    }
}

/// The SCoPs of a file in isl's notation, for people.
pub fn scop_text(ctx: &isl::Ctx, src: &SourceFile, with_c: bool) -> Result<String> {
    let mut o = String::new();
    let name = src.path.display();
    for s in &src.scops {
        let (first, last) = scop_lines(src, s);
        writeln!(o, "SCoP {} at {name}:{first}-{last}", s.index)?;
        writeln!(o, "  parameters: [{}]", s.parameters.join(", "))?;
        for l in &s.invariant_loads {
            writeln!(o, "  loaded once: {} = {} ({})", l.name, l.expr, l.ty)?;
        }
        let arrays: Vec<String> = s
            .arrays
            .iter()
            .map(|a| {
                let dims = if a.rank == 0 {
                    String::new()
                } else {
                    format!("[{}d]", a.rank)
                };
                let rw = if a.written { "" } else { " (read-only)" };
                format!("{}{dims}{rw}", a.name)
            })
            .collect();
        writeln!(o, "  arrays: {}", arrays.join(", "))?;
        if !s.delinearized.is_empty() {
            let d: Vec<String> = s
                .delinearized
                .iter()
                .map(|d| format!("{}[][{}]", d.array, d.sizes.join("][")))
                .collect();
            writeln!(
                o,
                "  delinearized (one-dimensional in C, row lengths checked at run time): {}",
                d.join(", ")
            )?;
        }
        let isl = IslView::new(ctx, s);
        if let Err(e) = crate::engine::pipeline::check_limits(s) {
            writeln!(
                o,
                "  note: isl notation as built, not simplified by isl: {e}"
            )?;
        }
        for st in &s.statements {
            let (l, c) = src.line_col(st.span.start);
            writeln!(
                o,
                "  {} at {name}:{l}:{c}: {}",
                st.name(),
                statement_text(src, st)
            )?;
            writeln!(o, "    domain:   {}", isl.set(&s.domain_of(st))?)?;
            writeln!(o, "    schedule: {}", isl.map(&s.schedule_of(st))?)?;
            writeln!(o, "    reads:    {}", isl.map(&s.reads_of(st))?)?;
            writeln!(o, "    writes:   {}", isl.map(&s.writes_of(st))?)?;
            if !st.may_writes.is_empty() {
                writeln!(o, "    may write: {}", isl.map(&s.may_writes_of(st))?)?;
            }
        }
        if !s.division_checks.is_empty() {
            let d: Vec<String> = s
                .division_checks
                .iter()
                .map(|c| isl::unmangle_text(&c.dividend.to_string()))
                .collect();
            writeln!(
                o,
                "  note: C division truncates; the model floors, assuming these are never negative: {}",
                d.join(", ")
            )?;
        }
        if isl.simplify {
            match crate::engine::model::run_time_check(s, None) {
                Ok(Some(check)) => writeln!(o, "  run-time check: {check}")?,
                Ok(None) => {}
                Err(e) => writeln!(o, "  not transformable: {e}")?,
            }
        }
        if with_c {
            writeln!(o, "  C:")?;
            o.push_str(&s.to_c("    "));
        }
    }
    Ok(o)
}

/// The SCoPs of a file in isl's notation, for programs.
pub fn scop_json(ctx: &isl::Ctx, src: &SourceFile) -> Result<Value> {
    let mut scops = Vec::new();
    for s in &src.scops {
        let (first, last) = scop_lines(src, s);
        let isl = IslView::new(ctx, s);
        let mut stmts = Vec::new();
        for st in &s.statements {
            let (l, c) = src.line_col(st.span.start);
            let mut one = json!({
                "name": st.name(),
                "line": l,
                "column": c,
                "text": statement_text(src, st),
                "iterators": st.iterators,
                "domain": isl.set(&s.domain_of(st))?,
                "schedule": isl.map(&s.schedule_of(st))?,
                "reads": isl.map(&s.reads_of(st))?,
                "writes": isl.map(&s.writes_of(st))?,
            });
            if !st.may_writes.is_empty() {
                one["may_writes"] = json!(isl.map(&s.may_writes_of(st))?);
            }
            stmts.push(one);
        }
        let mut scop = json!({
            "index": s.index,
            "first_line": first,
            "last_line": last,
            "parameters": s.parameters,
            "arrays": s.arrays,
            "domain": isl.set(&s.domains())?,
            "schedule": isl.map(&s.schedules())?,
            "reads": isl.map(&s.reads())?,
            "writes": isl.map(&s.writes())?,
            "division_dividends": s.division_checks.iter().map(|c| isl::unmangle_text(&c.dividend.to_string())).collect::<Vec<_>>(),
            "run_time_check": if isl.simplify { crate::engine::model::run_time_check(s, None).ok().flatten() } else { None },
            "statements": stmts,
            "c": s.to_c(""),
        });
        if s.has_may_writes() {
            scop["may_writes"] = json!(isl.map(&s.may_writes())?);
        }
        if !s.delinearized.is_empty() {
            // Array name and the sizes of its dimensions but the outermost.
            scop["delinearized"] = json!(
                s.delinearized
                    .iter()
                    .map(|d| json!({ "array": d.array, "sizes": d.sizes }))
                    .collect::<Vec<_>>()
            );
        }
        scops.push(scop);
    }
    Ok(json!({ "file": src.path.display().to_string(), "scops": scops }))
}
