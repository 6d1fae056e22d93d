//! The user's pragmas on a statement the walk meets (`finder.rs`): which
//! keep it as written, and which the engine may prove (issue 40: OpenMP
//! loop directives on the nest's loops, the work-shared loops of a
//! user's `omp parallel` region; `frontend/omp.rs` reads them).

use super::finder::{Finder, Why};
use super::*;
use crate::frontend::{lex, omp};

impl Finder<'_> {
    /// A statement the user's pragma bears on does not qualify: the
    /// pragma is inside it, in front of it, or in front of a statement
    /// that encloses it.
    pub(super) fn pragma(&self, s: &Node) -> Result<(), Why> {
        let end = self.stmt_end(s);
        // The user's OpenMP loop directives on loops of the nest are
        // taken: the engine proves them or leaves the nest as written.
        let bearing = pragmas::bearing(self.pragmas, s.start, end);
        // Inside the user's `omp parallel` region, only a loop under its
        // own `omp for` may be taken.
        let work = bearing.iter().any(|p| {
            p.target.is_some_and(|(t, _)| t == s.start)
                && matches!(self.directive(p), Some(Ok(d)) if d.construct == omp::Construct::For)
        });
        let Some(p) = bearing
            .into_iter()
            .find(|p| !(self.provable(p, s.start, end) || (work && self.team(p, s.start, end))))
        else {
            return Ok(());
        };
        // An OpenMP loop directive polytune cannot check says why.
        if let Some(Err(why)) = self.directive(p) {
            return Err(Why {
                line: p.line,
                column: p.column,
                reason: format!(
                    "left unchanged: the user's `{}` at {}:{}: {why}",
                    p.text,
                    self.path.display(),
                    p.line
                ),
                pragma: true,
                vouch: None,
            });
        }
        // Inside the user's team, only work-shared loops are taken.
        if self.team(p, s.start, end) {
            return Err(Why {
                line: p.line,
                column: p.column,
                reason: format!(
                    "left unchanged: every thread of the user's `{}` at {}:{} runs this loop nest; polytune takes the region's work-shared loops (under `#pragma omp for`) only",
                    p.text,
                    self.path.display(),
                    p.line
                ),
                pragma: true,
                vouch: None,
            });
        }
        let relation = if s.start <= p.start && p.start < end {
            "is inside this loop nest"
        } else if p.target.is_some_and(|(t, _)| t == s.start) {
            "applies to this loop nest"
        } else {
            "applies to a statement that encloses this loop nest"
        };
        Err(Why {
            line: p.line,
            column: p.column,
            reason: format!(
                "left unchanged: the user's `{}` at {}:{} {relation}; polytune does not re-derive what it promises (remove the pragma to let polytune transform the nest)",
                p.text,
                self.path.display(),
                p.line
            ),
            pragma: true,
            vouch: None,
        })
    }

    /// Whether `p`, which bears on the statement `[start, end)`, is an
    /// OpenMP loop directive polytune can try to prove (`omp.rs`): in
    /// front of a `for` loop inside the statement or of the statement
    /// itself, and no work-sharing `for` (whose team's region is not in
    /// the nest).
    pub(super) fn provable(&self, p: &Pragma, start: usize, end: usize) -> bool {
        let Some((t, _)) = p.target else { return false };
        let ok = matches!(
            self.directive(p),
            Some(Ok(d)) if d.construct != omp::Construct::For
                || (t == start && self.team_around_range(start, end))
        );
        ok && start <= t
            && t < end
            && (start <= p.start || t == start)
            && self.text[t..].starts_with("for")
    }

    /// What the user's pragma `p` says as an OpenMP loop directive.
    pub(super) fn directive(&self, p: &Pragma) -> Option<Result<omp::Directive, String>> {
        let words = lex::directive_words(&self.text[p.start..p.end])?;
        omp::parse(words.get(1..)?)
    }

    /// Whether `p` is a user's `omp parallel` region whose statement
    /// strictly encloses `[start, end)`.
    pub(super) fn team(&self, p: &Pragma, start: usize, end: usize) -> bool {
        let Some((t0, t1)) = p.target else {
            return false;
        };
        t0 < start
            && end <= t1
            && lex::directive_words(&self.text[p.start..p.end])
                .is_some_and(|w| matches!(w.get(1..).and_then(omp::parse_team), Some(Ok(_))))
    }

    /// Whether the statement `s` lies inside a user's `omp parallel`
    /// region.
    pub(super) fn team_around(&self, s: &Node) -> bool {
        self.team_around_range(s.start, self.stmt_end(s))
    }

    pub(super) fn team_around_range(&self, start: usize, end: usize) -> bool {
        pragmas::bearing(self.pragmas, start, end)
            .iter()
            .any(|p| self.team(p, start, end))
    }

    /// Whether `s` is the statement of a user's `omp parallel` region.
    pub(super) fn team_on(&self, s: &Node) -> bool {
        pragmas::bearing(self.pragmas, s.start, self.stmt_end(s))
            .iter()
            .any(|p| {
                p.target.is_some_and(|(t, _)| t == s.start)
                    && lex::directive_words(&self.text[p.start..p.end]).is_some_and(|w| {
                        matches!(w.get(1..).and_then(omp::parse_team), Some(Ok(_)))
                    })
            })
    }

    /// Where the statement `s` starts once the user's directive in front
    /// of it (a provable one, see [`Finder::provable`]) is counted in.
    pub(super) fn start_with_directive(&self, s: &Node) -> usize {
        let end = self.stmt_end(s);
        pragmas::bearing(self.pragmas, s.start, end)
            .into_iter()
            .filter(|p| p.start < s.start && p.target.is_some_and(|(t, _)| t == s.start))
            .map(|p| p.start)
            .min()
            .unwrap_or(s.start)
    }
}
