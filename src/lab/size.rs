//! The dataset size of a corpus-style program: which of the problem sizes
//! in its header (`polybench/include/polytune_bench.h` and the kernels'
//! own headers) it is built with.

use serde::{Deserialize, Serialize};

/// A dataset size, smallest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    Mini,
    Small,
    Medium,
    Large,
}

/// A size name that is none of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dataset size `{0}` (expected mini, small, medium or large)")]
pub struct UnknownSize(pub String);

impl Size {
    /// Every size, smallest first.
    pub const ALL: [Size; 4] = [Size::Mini, Size::Small, Size::Medium, Size::Large];

    /// The name users and the store use: `mini`, `small`, `medium`, `large`.
    pub fn as_str(self) -> &'static str {
        match self {
            Size::Mini => "mini",
            Size::Small => "small",
            Size::Medium => "medium",
            Size::Large => "large",
        }
    }

    /// The compiler flag that selects this size, e.g. `-DMEDIUM_DATASET`.
    pub(crate) fn define(self) -> String {
        format!("-D{}_DATASET", self.as_str().to_uppercase())
    }
}

super::named_by_as_str!(Size, UnknownSize);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_and_parse_as_users_and_the_store_name_them() {
        let names: Vec<String> = Size::ALL.iter().map(Size::to_string).collect();
        assert_eq!(names, ["mini", "small", "medium", "large"]);
        for s in Size::ALL {
            assert_eq!(s.as_str().parse::<Size>(), Ok(s));
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
            assert_eq!(
                serde_json::from_str::<Size>(&format!("\"{s}\"")).unwrap(),
                s
            );
        }
        assert_eq!(Size::Medium.define(), "-DMEDIUM_DATASET");
        assert_eq!(Size::Mini.define(), "-DMINI_DATASET");
        assert!(Size::Mini < Size::Large);
    }

    #[test]
    fn other_names_are_refused_with_the_accepted_ones() {
        for bad in ["", "MEDIUM", "huge", " small"] {
            let e = bad.parse::<Size>().unwrap_err();
            assert_eq!(e, UnknownSize(bad.to_string()));
            assert!(
                e.to_string().contains("mini, small, medium or large"),
                "{e}"
            );
        }
    }
}
