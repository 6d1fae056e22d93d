//! The measurement lab: compiling, running, timing and verifying programs,
//! characterizing them, and storing the results. It knows neither the
//! engine nor learning.

/// `Display` and `FromStr` of an enum that users, the store and JSON all
/// name by its `as_str` names: `$unknown` is the error (a tuple struct of
/// the name) of a name that none of `ALL` has.
macro_rules! named_by_as_str {
    ($t:ty, $unknown:ident) => {
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $t {
            type Err = $unknown;

            fn from_str(s: &str) -> Result<$t, $unknown> {
                <$t>::ALL
                    .into_iter()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| $unknown(s.to_string()))
            }
        }
    };
}
pub(crate) use named_by_as_str;

pub mod build;
pub mod characterize;
pub mod compiler;
pub mod confine;
pub mod decide;
pub mod dump;
pub mod harness;
pub mod head_to_head;
pub mod machine;
pub mod rng;
pub mod runner;
pub mod scratch;
pub mod side;
pub mod size;
pub mod store;
pub mod verify;
