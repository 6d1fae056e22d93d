//! The candidates confirmed: marked with `#pragma scop` lines in a copy
//! of the file and handed to the front end; a region it rejects, or one
//! whose loop iterators may be read after it (`live.rs`), is dropped and
//! split around the offending statement (a block's own runs tried in its
//! place) until every region left is a SCoP. Positions are the user's
//! ([`crate::frontend::origin`]).

use super::*;
use crate::frontend::error::LineIndex;
use crate::frontend::lex::{Token, tokens};
use crate::frontend::origin::{Marking, Origin};

/// The detection: the candidates marked and handed to the front end, each
/// region it rejects dropped (split around the offending statement) until
/// it accepts them all.
pub(super) fn confirmed(
    path: &Path,
    text: String,
    mut regions: Vec<Region>,
    mut rejected: Vec<Rejection>,
    options: &DetectOptions,
) -> Detection {
    let front = Options {
        pure_functions: options.pure_functions.clone(),
        ..Options::default()
    };
    let toks = tokens(&text);
    // Hand the marked text to the front end; drop each region it rejects.
    loop {
        if regions.is_empty() {
            rejected.sort_by_key(|r| (r.first_line, r.line));
            return Detection {
                path: path.to_path_buf(),
                marked: text.clone(),
                text,
                regions,
                rejected,
                source: None,
                inferred_pure: Vec::new(),
            };
        }
        let (marked, origin) = mark(&text, &regions);
        match frontend::parse_marked(path, marked.clone(), origin, &front) {
            Ok(source) if live_iterator(&source, (&text, &toks), &mut regions, &mut rejected) => {}
            Ok(mut source) => {
                if let Some((k, reason)) = versioned(&mut source, &regions) {
                    let at = (regions[k].first_line, 1);
                    split_rejected(&mut regions, k, at, reason, &mut rejected);
                    continue;
                }
                rejected.sort_by_key(|r| (r.first_line, r.line));
                return Detection {
                    path: path.to_path_buf(),
                    text,
                    regions,
                    rejected,
                    marked,
                    source: Some(source),
                    inferred_pure: Vec::new(),
                };
            }
            Err(e) => drop_rejected(&e, &text, &mut regions, &mut rejected),
        }
    }
}

/// Each SCoP given the pairs of its region's arrays that may overlap and
/// that it accesses (a region split from a larger one holds the larger
/// one's pairs), and of the written arrays that may overlap a value it
/// loads once (the load's parameter in its place): the engine checks them
/// at run time. A value the front end did not make one of its loads, so
/// that no check can name it, is the region's rejection: its index and
/// the reason.
fn versioned(source: &mut SourceFile, regions: &[Region]) -> Option<(usize, String)> {
    let squeeze = |t: &str| t.split_whitespace().collect::<String>();
    for (k, (scop, r)) in source.scops.iter_mut().zip(regions).enumerate() {
        // A scalar the SCoP only reads may be one of its parameters.
        let has = |name: &str| {
            scop.arrays.iter().any(|a| a.name == name) || scop.parameters.iter().any(|p| p == name)
        };
        // A loop iterator is no memory a check can name: a pointer that
        // may point at it (a global iterator) is the region's rejection.
        let iterator = |name: &str| {
            scop.statements
                .iter()
                .any(|s| s.iterators.iter().any(|i| i == name))
        };
        if let Some((a, b)) = r
            .may_alias
            .arrays
            .iter()
            .find(|(a, b)| (iterator(a) && has(b)) || (iterator(b) && has(a)))
        {
            let (it, other) = if iterator(a) { (a, b) } else { (b, a) };
            return Some((
                k,
                format!(
                    "`{other}` may point at the loop iterator `{it}`, a variable a pointer can reach, and no run-time check can compare them (declare the iterator in the loop, `for (int {it} = ...)`, or `{other}` `restrict`-qualified)"
                ),
            ));
        }
        let mut pairs: Vec<crate::frontend::scop::AliasPair> = r
            .may_alias
            .arrays
            .iter()
            .filter(|(a, b)| has(a) && has(b))
            .map(|(a, b)| crate::frontend::scop::AliasPair {
                first: a.clone(),
                second: b.clone(),
            })
            .collect();
        for (array, value) in &r.may_alias.loads {
            if !has(array) {
                continue;
            }
            let Some(load) = scop
                .invariant_loads
                .iter()
                .find(|l| squeeze(&l.expr) == squeeze(value))
            else {
                return Some((
                    k,
                    format!(
                        "`{array}` may overlap the value `{value}` the nest reads once, and no run-time check can name that value (if they never overlap, declare them `restrict`, or vouch that no arrays alias)"
                    ),
                ));
            };
            let pair = crate::frontend::scop::AliasPair {
                first: array.clone(),
                second: load.name.clone(),
            };
            if !pairs.contains(&pair) {
                pairs.push(pair);
            }
        }
        scop.alias_checks = pairs;
    }
    None
}

/// The region of `regions` the front end's error `e` falls in (its
/// position is in the user's `text`), removed and reported; the
/// statements before and after the offending one put back as regions of
/// their own.
fn drop_rejected(
    e: &FrontendError,
    text: &str,
    regions: &mut Vec<Region>,
    rejected: &mut Vec<Rejection>,
) {
    let d = e.diagnostic().cloned();
    let k = d
        .as_ref()
        .and_then(|d| region_at(text, regions, (d.line, d.column)))
        .unwrap_or(0);
    let (line, column, message) = match d {
        Some(d) => (d.line, d.column, d.message),
        None => (regions[k].first_line, 1, e.to_string()),
    };
    let reason = format!("rejected by the front end: {message}");
    split_rejected(regions, k, (line, column), reason, rejected);
}

/// The first SCoP of `source` with a loop iterator whose value may be read
/// after it (the rewritten loops would not leave it there, see
/// `live.rs`), its region split and reported; `false` when there is none.
/// `toks` are the tokens of the user's `text`.
fn live_iterator(
    source: &SourceFile,
    (text, toks): (&str, &[Token]),
    regions: &mut Vec<Region>,
    rejected: &mut Vec<Rejection>,
) -> bool {
    for (k, scop) in source.scops.iter().enumerate() {
        let r = &regions[k];
        let place = live::Place {
            start: r.start,
            end: r.end,
            loops: &r.loops,
        };
        let live = live::undeclared_iterators(scop)
            .into_iter()
            .find(|(name, _)| !live::dead_after(text, toks, &place, name));
        if let Some((name, span)) = live {
            let at = source.line_col(span.start);
            let reason = format!(
                "the loop's iterator `{name}` may be read after the nest, and the rewritten loops would not leave its final value in it (if no later code reads it, declare it in the loop: `for (int {name} = ...)`, or set it again before it is read)"
            );
            split_rejected(regions, k, at, reason, rejected);
            return true;
        }
    }
    false
}

/// Region `k` removed and reported as rejected at `(line, column)` for
/// `reason`; the statements before and after the offending one put back
/// as regions of their own, and when it is a block, the runs inside it.
fn split_rejected(
    regions: &mut Vec<Region>,
    k: usize,
    (line, column): (usize, usize),
    reason: String,
    rejected: &mut Vec<Rejection>,
) {
    let r = regions.remove(k);
    // Split the region around the offending statement; the
    // statements before and after it may still be SCoPs, and so may the
    // runs inside it when it is a block.
    let bad = r
        .stmts
        .iter()
        .position(|s| s.first_line <= line && line <= s.last_line);
    let (first_line, last_line) = match bad {
        Some(b) => (r.stmts[b].first_line, r.stmts[b].last_line),
        None => (r.first_line, r.last_line),
    };
    let mut reported = true;
    if let Some(b) = bad {
        let part = |stmts: &[Stmt]| {
            Region::of(
                &r.function,
                stmts.to_vec(),
                r.loops.clone(),
                r.may_alias.clone(),
            )
        };
        let (before, after) = (part(&r.stmts[..b]), part(&r.stmts[b + 1..]));
        let inside = &r.stmts[b].inside;
        // Tried again, a run inside the block says what is wrong with
        // it at its own lines.
        reported = !inside
            .regions
            .iter()
            .any(|i| i.first_line <= line && line <= i.last_line);
        rejected.extend(inside.rejected.iter().cloned());
        let parts: Vec<Region> = before
            .into_iter()
            .chain(inside.regions.iter().cloned())
            .chain(after)
            .collect();
        regions.splice(k..k, parts);
    }
    if reported {
        rejected.push(Rejection {
            function: r.function,
            first_line,
            last_line,
            line,
            column,
            reason,
            vouch: None,
        });
    }
}

/// The region `at` (a line and column of the user's `text`) falls in:
/// between its first and last byte, else on one of its lines.
fn region_at(text: &str, regions: &[Region], at: (usize, usize)) -> Option<usize> {
    let index = LineIndex::new(text);
    regions
        .iter()
        .position(|r| {
            index.line_col(r.start) <= at && at <= index.line_col(r.end.saturating_sub(1))
        })
        .or_else(|| {
            regions
                .iter()
                .position(|r| r.first_line <= at.0 && at.0 <= r.last_line)
        })
}

/// The text with each region between pragma lines, and where each of its
/// bytes comes from in `text` (the pragma lines stand for the region's
/// first and last lines).
fn mark(text: &str, regions: &[Region]) -> (String, Origin) {
    let mut m = Marking::new(text);
    let mut at = 0;
    for r in regions {
        let line_start = text[..r.start].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let indent: String = text[line_start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let own_line = text[line_start..r.start].trim().is_empty();
        let open_at = if own_line { line_start } else { r.start };
        m.copy(at, open_at);
        if !own_line {
            m.insert("\n", r.start);
        }
        m.insert(&format!("{indent}#pragma scop\n"), r.start);
        // The close pragma goes after the end of the last statement's line
        // when only blanks follow it there.
        let line_end = text[r.end..]
            .find('\n')
            .map(|i| r.end + i + 1)
            .unwrap_or(text.len());
        let last = r.end.saturating_sub(1);
        if text[r.end..line_end].trim().is_empty() {
            m.copy(open_at, line_end);
            if !m.out().ends_with('\n') {
                m.insert("\n", last);
            }
            at = line_end;
        } else {
            if !own_line {
                m.insert(&indent, r.start);
            }
            m.copy(r.start.max(open_at), r.end);
            m.insert("\n", last);
            at = r.end;
        }
        m.insert(&format!("{indent}#pragma endscop\n"), last);
    }
    m.copy(at, text.len());
    m.finish()
}
