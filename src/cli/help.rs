//! The options of the command line in the help of the errors of the
//! layers below it. Those say what they want (the time limit, the
//! program's arguments, a parameter's value) and never an option's name:
//! options are this layer's words (tests/tidy.rs holds it). Here their
//! typed errors are mapped to the options that give what they want.

use crate::app::select::SelectionError;
use crate::app::slurm::SlurmError;
use crate::engine::driver::{DriverError, Needs};
use crate::lab::characterize::CharacterizeError;
use crate::lab::compiler::CompilerError;
use crate::lab::harness::OriginalError;
use crate::learn::LearnError;

/// The help lines (without `  help: `) that name the options giving what
/// an error in `e`'s chain wants; empty when none does.
pub(super) fn option_help(e: &anyhow::Error) -> Vec<String> {
    first(e, characterize)
        .or_else(|| first(e, original))
        .or_else(|| first(e, driver))
        .or_else(|| first(e, slurm))
        .or_else(|| first(e, selection))
        .or_else(|| first(e, learn))
        .or_else(|| first(e, frontend))
        .or_else(|| {
            first(e, |_: &CompilerError| {
                Some("--compiler picks another".into())
            })
        })
        .into_iter()
        .flatten()
        .collect()
}

/// A call the user may declare pure.
fn frontend(e: &crate::frontend::FrontendError) -> Option<String> {
    match e {
        crate::frontend::FrontendError::Source(d) => d
            .pure
            .as_ref()
            .map(|f| format!("declare it with --pure {f}")),
        _ => None,
    }
}

/// The help `f` gives for the first error of type `E` in `e`'s chain.
fn first<E: std::error::Error + Send + Sync + 'static>(
    e: &anyhow::Error,
    f: impl Fn(&E) -> Option<String>,
) -> Option<Option<String>> {
    e.chain().find_map(|c| c.downcast_ref::<E>()).map(f)
}

fn characterize(e: &CharacterizeError) -> Option<String> {
    Some(match e {
        CharacterizeError::Timeout { .. } => "the time limit is --timeout".into(),
        CharacterizeError::NoRegion { .. } => {
            "the time limit is --timeout, the program's arguments --run-args".into()
        }
        CharacterizeError::Slow { .. } => {
            "the time limit is --timeout, the bound of `characterize` --bound".into()
        }
        CharacterizeError::NeverRan => "the program's arguments are --run-args".into(),
        CharacterizeError::Papi(_) => {
            "`characterize --backend cachegrind` counts with the simulator".into()
        }
        _ => return None,
    })
}

fn original(e: &OriginalError) -> Option<String> {
    match e {
        OriginalError::Run { .. } => Some(
            "--run-args gives its arguments, --run its command, --timeout its time limit".into(),
        ),
        OriginalError::Unreached { .. } => Some("--run-args gives its arguments".into()),
        _ => None,
    }
}

fn driver(e: &DriverError) -> Option<String> {
    match e {
        DriverError::Source(_, Some(Needs::Value(p))) => {
            Some(format!("--param {p}=VALUE gives it"))
        }
        DriverError::Source(_, Some(Needs::OtherValues)) | DriverError::Param { .. } => {
            Some("--param NAME=VALUE gives the values".into())
        }
        DriverError::Source(_, Some(Needs::FootprintSizes)) => {
            Some("--size-from-footprint sizes it from the elements the kernel touches".into())
        }
        _ => None,
    }
}

fn slurm(e: &SlurmError) -> Option<String> {
    match e {
        SlurmError::NoShards => Some("--slurm N gives the number of shards".into()),
        SlurmError::Exists { .. } => Some("--db names the store".into()),
        SlurmError::Running { db, .. } => Some(format!(
            "`polytune collect --status --db {db}` shows its status"
        )),
        SlurmError::OtherShards { submitted, .. } => Some(format!(
            "--slurm {submitted} submits it again; --db names another store"
        )),
        _ => None,
    }
}

fn selection(e: &SelectionError) -> Option<String> {
    match e {
        SelectionError::PaperModels => Some(
            "drop --sample, or train on a store measured with `polytune collect --space extended --sample N`".into(),
        ),
        SelectionError::Backend { given, .. } => {
            Some(format!("the back end is `characterize --backend {given}`"))
        }
        _ => None,
    }
}

fn learn(e: &LearnError) -> Option<String> {
    match e {
        LearnError::Machines(_) => {
            Some("--machine TEXT chooses one (a part of its description)".into())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_errors_below_get_the_options_that_give_what_they_want() {
        let e = anyhow::Error::from(CharacterizeError::NoRegion { seconds: 5 });
        let h = option_help(&e.context("characterizing k.c"));
        assert_eq!(
            h,
            ["the time limit is --timeout, the program's arguments --run-args"]
        );
        let e = anyhow::Error::from(LearnError::Machines(vec!["a".into(), "b".into()]));
        assert!(option_help(&e)[0].starts_with("--machine TEXT"));
        let e = anyhow::Error::from(SlurmError::NoShards);
        assert_eq!(option_help(&e), ["--slurm N gives the number of shards"]);
        // An error that wants nothing the options give.
        assert!(option_help(&anyhow::anyhow!("cannot read x.c")).is_empty());
        assert!(option_help(&anyhow::Error::from(CharacterizeError::NeverRan)).len() == 1);
    }
}
