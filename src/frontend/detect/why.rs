//! Why a construct disqualifies its statement (`finder.rs`, `alias.rs`,
//! `invariant.rs`), and what the user can vouch for to lift it.

use super::Vouch;
use super::clang::Node;

/// Why a construct disqualifies its statement, and where it is.
pub(super) struct Why {
    pub(super) line: usize,
    pub(super) column: usize,
    pub(super) reason: String,
    /// A user's pragma: reported once for the outermost nest it blocks,
    /// not again for each nest inside.
    pub(super) pragma: bool,
    /// What the user can vouch for to have the nest taken.
    pub(super) vouch: Option<Vouch>,
}

impl Why {
    pub(super) fn at(n: &Node, reason: impl Into<String>) -> Why {
        Why {
            line: n.line,
            column: n.column,
            reason: reason.into(),
            pragma: false,
            vouch: None,
        }
    }

    /// The reason, with what the user can vouch for to lift it.
    pub(super) fn unless(mut self, vouch: Vouch) -> Why {
        self.vouch = Some(vouch);
        self
    }
}
