//! The feature back end: which counters characterization reads.

use serde::{Deserialize, Serialize};

/// Which counters to read; named `cachegrind` or `papi` on the command
/// line, in the store's `features.backend` column, in the models' JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// Simulated by valgrind's cachegrind (deterministic).
    Cachegrind,
    /// Hardware counters through PAPI.
    Papi,
}

/// A back-end name that is neither.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown feature back end `{0}` (expected cachegrind or papi)")]
pub struct UnknownBackend(pub String);

impl Backend {
    pub const ALL: [Backend; 2] = [Backend::Cachegrind, Backend::Papi];

    /// `cachegrind` or `papi`.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Cachegrind => "cachegrind",
            Backend::Papi => "papi",
        }
    }
}

crate::lab::named_by_as_str!(Backend, UnknownBackend);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_ends_have_one_name_on_the_command_line_in_the_store_and_in_json() {
        for b in Backend::ALL {
            assert_eq!(b.as_str().parse::<Backend>(), Ok(b));
            assert_eq!(
                serde_json::to_value(b).unwrap(),
                serde_json::json!(b.as_str())
            );
        }
        assert_eq!(Backend::Cachegrind.to_string(), "cachegrind");
        assert_eq!(
            "perf".parse::<Backend>(),
            Err(UnknownBackend("perf".into()))
        );
    }
}
