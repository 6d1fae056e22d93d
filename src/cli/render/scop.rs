//! How SCoPs are shown: `scop`'s text (domains, schedules and accesses
//! through isl, the statements' C) and `--detect`'s regions and
//! rejections; their JSON is the app layer's reports themselves.

use crate::app::scop::Report;
use std::fmt::Write as _;
#[cfg(feature = "detect")]
use std::path::Path;

/// A loop nest `--detect` did not take, and why.
#[cfg(feature = "detect")]
pub(crate) fn rejection(path: &Path, r: &crate::frontend::detect::Rejection) -> String {
    use crate::frontend::detect::Vouch;
    // The front end words what the user may vouch for; its option is
    // named here, in place of those words where the reason has them.
    const NO_ALIAS: &str = "vouch that no arrays alias";
    let mut reason = r.reason.clone();
    let vouch = match &r.vouch {
        Some(Vouch::Pure(f)) => format!(" (--pure {f} vouches that `{f}` has none)"),
        Some(Vouch::NoAlias) if reason.contains(NO_ALIAS) => {
            reason = reason.replace(NO_ALIAS, "pass --assume-no-alias");
            String::new()
        }
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
        reason
    )
}

/// What a detected region's note adds when its arrays may overlap (pairs
/// as the user spells them, [`crate::frontend::scop::Scop::spelled`]):
/// the transformed code is versioned on a run-time check of them.
#[cfg(feature = "detect")]
pub(crate) fn versioned_on_aliasing(pairs: &[crate::frontend::scop::AliasPair]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let names: Vec<String> = pairs
        .iter()
        .map(|p| format!("`{}` and `{}`", p.first, p.second))
        .collect();
    format!(
        "; versioned on aliasing: the transformed code runs where a run-time check finds that {} do not overlap, the original elsewhere (--assume-no-alias drops the check)",
        names.join(", ")
    )
}

/// The regions `scop --detect` found and the nests it rejected.
#[cfg(feature = "detect")]
pub(crate) fn detection_text(d: &crate::app::scop::Detected) -> String {
    let file = &d.file;
    let mut o = format!(
        "{}: {} region(s) detected\n",
        file.display(),
        d.regions.len()
    );
    for (k, r) in d.regions.iter().enumerate() {
        let (alias, region) = (&r.alias_check, &r.region);
        o += &format!(
            "  region {k}: {} lines {}-{}{}\n",
            region.function,
            region.first_line,
            region.last_line,
            versioned_on_aliasing(&r.may_alias)
        );
        if let Some(check) = alias {
            o += &format!("    run-time alias check: {check}\n");
        }
        for d in &r.directives {
            o += &format!(
                "    user's directive at line {}: `{}`: {}\n",
                d.line,
                d.text,
                d.not_proven.as_deref().unwrap_or("proven")
            );
        }
    }
    for r in &d.rejected {
        o += &format!("  {}\n", rejection(file, r));
    }
    o
}

/// The SCoPs of a file in isl's notation, for people; with `with_c`, each
/// SCoP's C too.
pub(crate) fn scop_text(r: &Report, with_c: bool) -> String {
    let mut o = String::new();
    let name = r.file.display();
    for s in &r.scops {
        let _ = writeln!(
            o,
            "SCoP {} at {name}:{}-{}",
            s.index, s.first_line, s.last_line
        );
        let _ = writeln!(o, "  parameters: [{}]", s.parameters.join(", "));
        for l in &s.invariant_loads {
            let _ = writeln!(o, "  loaded once: {} = {} ({})", l.name, l.expr, l.ty);
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
        let _ = writeln!(o, "  arrays: {}", arrays.join(", "));
        if let Some(d) = &s.delinearized {
            let d: Vec<String> = d
                .iter()
                .map(|d| format!("{}[][{}]", d.array, d.sizes.join("][")))
                .collect();
            let _ = writeln!(
                o,
                "  delinearized (one-dimensional in C, row lengths checked at run time): {}",
                d.join(", ")
            );
        }
        if let Some(e) = &s.not_simplified {
            let _ = writeln!(
                o,
                "  note: isl notation as built, not simplified by isl: {e}"
            );
        }
        for st in &s.statements {
            let _ = writeln!(
                o,
                "  {} at {name}:{}:{}: {}",
                st.name, st.line, st.column, st.text
            );
            let _ = writeln!(o, "    domain:   {}", st.domain);
            let _ = writeln!(o, "    schedule: {}", st.schedule);
            let _ = writeln!(o, "    reads:    {}", st.reads);
            let _ = writeln!(o, "    writes:   {}", st.writes);
            if let Some(m) = &st.may_writes {
                let _ = writeln!(o, "    may write: {m}");
            }
        }
        if !s.division_dividends.is_empty() {
            let _ = writeln!(
                o,
                "  note: C division truncates; the model floors, assuming these are never negative: {}",
                s.division_dividends.join(", ")
            );
        }
        if let Some(check) = &s.run_time_check {
            let _ = writeln!(o, "  run-time check: {check}");
        }
        if let Some(check) = &s.alias_check {
            let _ = writeln!(
                o,
                "  run-time alias check (the original runs where it fails): {check}"
            );
        }
        if let Some(team) = &s.team {
            let _ = writeln!(
                o,
                "  a work-shared loop of the user's `{team}`: every thread of the team runs the SCoP"
            );
        }
        for d in &s.directives {
            let _ = writeln!(
                o,
                "  user's directive at line {}: `{}`: {}",
                d.line,
                d.text,
                d.not_proven.as_deref().unwrap_or("proven")
            );
        }
        if let Some(e) = &s.not_transformable {
            let _ = writeln!(o, "  not transformable: {e}");
        }
        if with_c {
            let _ = writeln!(o, "  C:");
            o.push_str(&indented(&s.c, "    "));
        }
    }
    for w in &r.written_by_polytune {
        let _ = writeln!(
            o,
            "region at {name}:{}-{}: written by polytune (configuration {}), not a SCoP: give polytune the original program to tune it again",
            w.first_line, w.last_line, w.configuration
        );
    }
    o
}

/// Every line of `text` but the empty ones after `indent`.
fn indented(text: &str, indent: &str) -> String {
    text.split_inclusive('\n')
        .map(|l| {
            if l.trim_end_matches('\n').is_empty() {
                l.to_string()
            } else {
                format!("{indent}{l}")
            }
        })
        .collect()
}
