//! The errors of the commands whose work is one run of the layers below
//! (`measure`, `characterize`, `scop`): each layer's own error, kept whole
//! (transparent) so the command line still tells them apart, and the
//! refusals of the commands themselves.

use crate::engine::model::EngineError;
use crate::frontend::FrontendError;
use crate::isl::IslError;
use crate::lab::characterize::CharacterizeError;
use crate::lab::harness::OriginalError;
use std::path::PathBuf;

/// Why a command's work stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Frontend(#[from] FrontendError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Isl(#[from] IslError),
    #[error(transparent)]
    Original(#[from] OriginalError),
    #[error(transparent)]
    Characterize(#[from] CharacterizeError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[cfg(feature = "detect")]
    #[error(transparent)]
    Detect(#[from] crate::frontend::detect::DetectError),
    /// The file has no `#pragma scop` region, which the command needs.
    #[error(
        "{}: no `#pragma scop` region to {verb} (polytune {why})",
        file.display()
    )]
    NoScop {
        file: PathBuf,
        /// What the command would have done with one: `measure`.
        verb: &'static str,
        /// Why it needs one: `times and verifies the SCoP regions`.
        why: &'static str,
    },
    /// isl refused a set or relation the front end wrote.
    #[error("isl rejected the {what} `{text}`")]
    Notation {
        /// `domain` or `relation`.
        what: &'static str,
        text: String,
        source: IslError,
    },
    /// `measure --head-to-head` with a variant that was not timed.
    #[error("the variant did not build or verify: there is nothing to hold against the original")]
    NothingToHold,
    /// A run of `measure --head-to-head` failed.
    #[error("a head-to-head run failed: {stderr}")]
    HeadToHead { stderr: String },
}
