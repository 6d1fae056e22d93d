//! The results store: one SQLite database per campaign. Every measurement
//! is written in its own transaction as soon as it is known (WAL mode), so
//! a campaign killed at any point loses nothing and, when resumed, skips
//! what is already there.
//!
//! `schema.rs` opens a store (the tables, upgrades, read-only and
//! exclusive opens), `write.rs` records, `query.rs` reads and exports,
//! `merge.rs` joins stores (a campaign's shards) into a new one,
//! and `sql.rs` converts the typed values (configuration, size,
//! compiler, status) to and from their text columns: above this module
//! they are never strings.

pub mod atomic;
pub mod merge;
mod query;
mod schema;
mod sql;
mod write;

use crate::config::Config;
use crate::lab::compiler::Family;
use crate::lab::size::Size;
use crate::lab::verify::Status;
use rusqlite::Connection;
use std::path::Path;

/// The schema this build reads and writes. Version 2 added each
/// measurement's baseline; version 3 stores configurations beyond the
/// paper's space (in readable form, in the same column as the bit
/// strings, see `sql.rs`), which builds before it would fail to read:
/// they refuse a version 3 store instead. A version 2 store is version 3
/// unchanged, and is upgraded by writing the version alone. The table
/// `variant_features` (each measured variant's features, for the ranker
/// of the variant) came within version 3: a table more, which builds
/// before it neither read nor mind.
pub(crate) const SCHEMA_VERSION: i64 = 3;

/// Why the store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error(
        "{path} has schema version {found}, newer than this polytune understands ({SCHEMA_VERSION})\n  help: use a newer polytune, or another store"
    )]
    NewerSchema { path: String, found: i64 },
    #[error("{0}")]
    Io(String),
    #[error(
        "{path} is not a polytune store ({reason})\n  help: name a database written by `polytune collect`"
    )]
    NotAStore { path: String, reason: String },
    #[error(
        "{path} is damaged: SQLite's integrity check reports {detail}\n  help: restore it from a copy (e.g. `git checkout` for a committed dataset), or `sqlite3 {path} .recover` into a new file and check the result"
    )]
    Damaged { path: String, detail: String },
    #[error(
        "another campaign{holder} holds {path} (its lock: {lock}); nothing was measured\n  help: wait for it to finish, or give this one another store"
    )]
    Busy {
        path: String,
        holder: String,
        lock: String,
    },
    /// Another process held a write past the time waited.
    #[error(
        "{path} is locked by another process writing it (waited {waited:.0} s)\n  help: let it finish, or name another store"
    )]
    Locked { path: String, waited: f64 },
    /// A merge refused (see `merge.rs`): nothing was written.
    #[error("{0}")]
    Merge(String),
}

/// A measured variant with its stored features ([`Store::featured`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Featured {
    pub kernel_id: i64,
    pub kernel: String,
    /// The machine's CPU.
    pub cpu: String,
    /// Its least configuration (the original's: the default one).
    pub config: Config,
    /// Over the original timed in the same batch.
    pub speedup: f64,
    pub x: Vec<f64>,
}

/// The machine measurements were taken on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    pub cpu: String,
    pub cores: i64,
    pub os: String,
}

impl Machine {
    /// This machine, from /proc and uname.
    pub fn this() -> Machine {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpu_key(&info);
        let cores = std::thread::available_parallelism()
            .map(|n| n.get() as i64)
            .unwrap_or(1);
        let os = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| format!("Linux {}", s.trim()))
            .unwrap_or_else(|_| std::env::consts::OS.to_string());
        Machine { cpu, cores, os }
    }
}

/// The processor of `/proc/cpuinfo`'s text: its model name, with its
/// family and model numbers when the file gives them
/// (`AMD EPYC (family 26, model 2)`). A virtual machine's name may be the
/// same on machines of different generations (`AMD EPYC` on a Zen 3 and a
/// Zen 5 guest): the numbers tell them apart. `unknown` without a name.
pub(crate) fn cpu_key(cpuinfo: &str) -> String {
    let field = |name: &str| {
        cpuinfo
            .lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == name)
            .map(|(_, v)| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let Some(name) = field("model name") else {
        return "unknown".into();
    };
    match (field("cpu family"), field("model")) {
        (Some(family), Some(model)) => format!("{name} (family {family}, model {model})"),
        _ => name,
    }
}

/// One stored measurement, joined with its kernel, variant, compiler and
/// machine: the raw material of a learning dataset.
#[derive(Debug, Clone)]
pub struct Measured {
    pub kernel_id: i64,
    pub kernel: String,
    pub variant_id: i64,
    pub original: bool,
    /// Name and version, e.g. `gcc 12.2.0`.
    pub compiler: String,
    pub family: Family,
    pub flags: String,
    pub machine: String,
    pub size: Size,
    pub threads: i64,
    pub status: Status,
    pub median: Option<f64>,
    /// The original's median in the same batch (schema 2 on).
    pub baseline: Option<f64>,
    /// Every configuration that produces the variant: those of the
    /// paper's space in the order of their bit strings, then those beyond
    /// it (in the order of their readable forms); none for the original.
    pub configs: Vec<Config>,
}

/// What measuring one stored program cost: compiling it and its timed
/// runs (for the expected cost of a campaign's units, see `collect
/// --shard`).
#[derive(Debug, Clone)]
pub struct UnitCost {
    pub kernel: String,
    pub code_hash: String,
    pub family: Family,
    pub original: bool,
    pub seconds: f64,
}

impl StoreError {
    /// [`StoreError::Locked`] for SQLite's "database is locked" after a
    /// wait of `wait` on `path`; any other error as it is.
    pub fn locked_after(self, path: &Path, wait: std::time::Duration) -> StoreError {
        match self {
            StoreError::Sql(rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::DatabaseBusy =>
            {
                StoreError::Locked {
                    path: path.display().to_string(),
                    waited: wait.as_secs_f64(),
                }
            }
            e => e,
        }
    }
}

/// An open results database.
pub struct Store {
    conn: Connection,
    /// Whether `measurements` has the baseline column (schema 2; a
    /// version 1 store read without upgrading lacks it).
    has_baseline: bool,
    /// The campaign lock (see [`Store::open_exclusive`]), released after
    /// the connection is closed: fields drop in declaration order.
    _lock: Option<std::fs::File>,
}

/// A verified variant of a kernel as a campaign ranks it
/// ([`Store::ranked`]): its speedup over the original it was timed with,
/// and whether that was confirmed ([`Store::record_confirmation`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub variant: i64,
    pub code_hash: String,
    pub speedup: f64,
    pub confirmed: bool,
}

/// How a confirmed measurement's `detail` starts: the measurement was
/// timed again, interleaved with its original, and its median and
/// baseline replaced (the campaign's are kept in the rest of the detail).
pub(super) const CONFIRMED: &str = "confirmed:";

/// Where one measurement belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub variant: i64,
    pub machine: i64,
    pub compiler: i64,
    pub size: Size,
    pub threads: i64,
}

#[cfg(test)]
mod tests {
    use super::cpu_key;

    #[test]
    fn the_cpu_key_tells_generations_with_the_same_name_apart() {
        let zen = |family: u32, model: u32| {
            format!(
                "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: {family}\n\
                 model\t\t: {model}\nmodel name\t: AMD EPYC\nstepping\t: 0\n"
            )
        };
        assert_eq!(cpu_key(&zen(25, 1)), "AMD EPYC (family 25, model 1)");
        assert_eq!(cpu_key(&zen(26, 2)), "AMD EPYC (family 26, model 2)");
        // Without the numbers, the name; without a name, unknown.
        assert_eq!(cpu_key("model name\t: Some CPU\n"), "Some CPU");
        assert_eq!(cpu_key("processor\t: 0\nCPU part\t: 0xd0c\n"), "unknown");
        assert_eq!(cpu_key(""), "unknown");
    }
}
