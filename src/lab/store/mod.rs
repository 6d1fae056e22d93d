//! The results store: one SQLite database per campaign. Every measurement
//! is written in its own transaction as soon as it is known (WAL mode), so
//! a campaign killed at any point loses nothing and, when resumed, skips
//! what is already there.

pub mod atomic;

use crate::lab::compiler::Compiler;
use crate::lab::verify::Measurement;
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;

/// The schema this build reads and writes.
pub const SCHEMA_VERSION: i64 = 2;

/// Why the store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error(
        "{path} has schema version {found}, newer than this polytune understands ({SCHEMA_VERSION})\n  help: use a newer polytune, or another --db"
    )]
    NewerSchema { path: String, found: i64 },
    #[error("{0}")]
    Io(String),
    #[error(
        "{path} is not a polytune store ({reason})\n  help: name a database written by `polytune collect` (--db)"
    )]
    NotAStore { path: String, reason: String },
    #[error(
        "{path} is damaged: SQLite's integrity check reports {detail}\n  help: restore it from a copy (e.g. `git checkout` for a committed dataset), or `sqlite3 {path} .recover` into a new file and check the result"
    )]
    Damaged { path: String, detail: String },
    #[error(
        "another campaign{holder} holds {path} (its lock: {lock}); nothing was measured\n  help: wait for it to finish, or give this one another --db"
    )]
    Busy {
        path: String,
        holder: String,
        lock: String,
    },
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
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split(':').nth(1))
                    .map(|s| s.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let cores = std::thread::available_parallelism()
            .map(|n| n.get() as i64)
            .unwrap_or(1);
        let os = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| format!("Linux {}", s.trim()))
            .unwrap_or_else(|_| std::env::consts::OS.to_string());
        Machine { cpu, cores, os }
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
    pub compiler_name: String,
    pub flags: String,
    pub machine: String,
    pub size: String,
    pub threads: i64,
    pub status: String,
    pub median: Option<f64>,
    /// The original's median in the same batch (schema 2 on).
    pub baseline: Option<f64>,
    /// Every configuration (bit form) that produces the variant, sorted.
    pub configs: Vec<String>,
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

/// The tables of a polytune store, the one a foreign database most surely
/// lacks first.
const TABLES: [&str; 9] = [
    "measurements",
    "variants",
    "kernels",
    "compilers",
    "machines",
    "variant_configs",
    "samples",
    "features",
    "meta",
];

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS machines (
  id INTEGER PRIMARY KEY, cpu TEXT NOT NULL, cores INTEGER NOT NULL, os TEXT NOT NULL,
  UNIQUE (cpu, cores, os));
CREATE TABLE IF NOT EXISTS compilers (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL, flags TEXT NOT NULL,
  UNIQUE (name, version, flags));
CREATE TABLE IF NOT EXISTS kernels (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, source_hash TEXT NOT NULL,
  UNIQUE (name, source_hash));
CREATE TABLE IF NOT EXISTS variants (
  id INTEGER PRIMARY KEY, kernel_id INTEGER NOT NULL REFERENCES kernels(id),
  code_hash TEXT NOT NULL, original INTEGER NOT NULL,
  UNIQUE (kernel_id, code_hash));
CREATE TABLE IF NOT EXISTS variant_configs (
  variant_id INTEGER NOT NULL REFERENCES variants(id), config TEXT NOT NULL,
  UNIQUE (variant_id, config));
CREATE TABLE IF NOT EXISTS measurements (
  id INTEGER PRIMARY KEY, variant_id INTEGER NOT NULL REFERENCES variants(id),
  machine_id INTEGER NOT NULL REFERENCES machines(id), compiler_id INTEGER NOT NULL REFERENCES compilers(id),
  size TEXT NOT NULL, threads INTEGER NOT NULL, status TEXT NOT NULL, detail TEXT NOT NULL,
  compile_seconds REAL NOT NULL, median REAL, spread REAL, measured_at TEXT NOT NULL DEFAULT (datetime('now')),
  baseline REAL,
  UNIQUE (variant_id, machine_id, compiler_id, size, threads));
CREATE TABLE IF NOT EXISTS samples (
  measurement_id INTEGER NOT NULL REFERENCES measurements(id), k INTEGER NOT NULL, seconds REAL NOT NULL,
  UNIQUE (measurement_id, k));
CREATE TABLE IF NOT EXISTS features (
  kernel_id INTEGER NOT NULL REFERENCES kernels(id), backend TEXT NOT NULL, size TEXT NOT NULL,
  name TEXT NOT NULL, value REAL NOT NULL,
  UNIQUE (kernel_id, backend, size, name));
";

/// Where one measurement belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key<'a> {
    pub variant: i64,
    pub machine: i64,
    pub compiler: i64,
    pub size: &'a str,
    pub threads: i64,
}

impl Store {
    /// Opens (creating if needed) a database; refuses newer schemas.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path)?;
        // Another program's database is not made a store of: its tables
        // are not ours to add to.
        let tables: Vec<String> = match conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        {
            Ok(t) => t,
            Err(rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::NotADatabase =>
            {
                return Err(StoreError::NotAStore {
                    path: path.display().to_string(),
                    reason: "not an SQLite database".into(),
                });
            }
            Err(e) => return Err(e.into()),
        };
        if !tables.is_empty() && !tables.iter().any(|t| t == "meta") {
            return Err(StoreError::NotAStore {
                path: path.display().to_string(),
                reason: "it has tables of another program, and no table `meta`".into(),
            });
        }
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        conn.execute_batch(SCHEMA)?;
        let found: Option<String> = conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        match found.and_then(|v| v.parse::<i64>().ok()) {
            Some(v) if v > SCHEMA_VERSION => {
                return Err(StoreError::NewerSchema {
                    path: path.display().to_string(),
                    found: v,
                });
            }
            _ => {
                // Version 2 added each measurement's baseline: the median of
                // its original timed in the same batch.
                let has_baseline: bool = conn
                    .prepare(
                        "SELECT 1 FROM pragma_table_info('measurements') WHERE name = 'baseline'",
                    )?
                    .exists([])?;
                if !has_baseline {
                    conn.execute("ALTER TABLE measurements ADD COLUMN baseline REAL", [])?;
                }
                conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?1)",
                    params![SCHEMA_VERSION.to_string()],
                )?;
            }
        }
        Ok(Store {
            conn,
            has_baseline: true,
            _lock: None,
        })
    }

    /// Opens (creating if needed) a database for a campaign, which holds it
    /// alone until the store is dropped: an advisory lock on `DB.lock`
    /// beside it. A second campaign on the same database fails at once
    /// with [`StoreError::Busy`], before measuring anything (two campaigns
    /// would interleave their rows). Readers (`export`, `train`) are not
    /// locked out.
    pub fn open_exclusive(path: &Path) -> Result<Store, StoreError> {
        use std::io::Write;
        let mut name = path.as_os_str().to_owned();
        name.push(".lock");
        let lock_path = std::path::PathBuf::from(name);
        let io =
            |e: std::io::Error| StoreError::Io(format!("cannot lock {}: {e}", lock_path.display()));
        let mut lock = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(io)?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let pid = std::fs::read_to_string(&lock_path).unwrap_or_default();
                let pid = pid.trim();
                return Err(StoreError::Busy {
                    path: path.display().to_string(),
                    holder: if pid.is_empty() {
                        String::new()
                    } else {
                        format!(" (process {pid})")
                    },
                    lock: lock_path.display().to_string(),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        lock.set_len(0).map_err(io)?;
        writeln!(lock, "{}", std::process::id()).map_err(io)?;
        let mut s = Store::open(path)?;
        s._lock = Some(lock);
        Ok(s)
    }

    /// Opens an existing store for reading only: the file stays byte for
    /// byte as it was (no table is created, no schema upgraded, no switch
    /// to WAL mode). Refuses a file that is not a polytune store, one of a
    /// newer schema, and one that fails SQLite's integrity check. A
    /// store in WAL mode on read-only storage (where SQLite cannot create
    /// its shared-memory file) is opened as immutable.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let shown = path.display().to_string();
        let not_a_store = |reason: &str| StoreError::NotAStore {
            path: shown.clone(),
            reason: reason.into(),
        };
        let conn = match Store::read_only_connection(path, false) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::CannotOpen && path.is_file() =>
            {
                let mut wal = path.as_os_str().to_owned();
                wal.push("-wal");
                let wal = std::path::PathBuf::from(wal);
                if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
                    return Err(StoreError::Io(format!(
                        "cannot open {shown} read-only: its write-ahead log {} holds changes that only a writable open can apply\n  help: copy both files to writable storage",
                        wal.display()
                    )));
                }
                Store::read_only_connection(path, true)
            }
            other => other,
        }
        .map_err(|e| match e {
            rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::NotADatabase => {
                not_a_store("not an SQLite database")
            }
            e => StoreError::Sql(e),
        })?;
        let present: Vec<String> = {
            let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
            stmt.query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        };
        if let Some(t) = TABLES.iter().find(|t| !present.iter().any(|p| p == *t)) {
            return Err(not_a_store(&if present.is_empty() {
                "it has no tables".to_string()
            } else {
                format!("no table `{t}`")
            }));
        }
        let found: Option<String> = conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(v) = found.as_deref().and_then(|v| v.parse::<i64>().ok())
            && v > SCHEMA_VERSION
        {
            return Err(StoreError::NewerSchema {
                path: shown,
                found: v,
            });
        }
        let problems: Vec<String> = {
            let mut stmt = conn.prepare("PRAGMA integrity_check(3)")?;
            stmt.query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        };
        if problems != ["ok"] {
            let lines: Vec<&str> = problems
                .iter()
                .flat_map(|p| p.lines())
                .filter(|l| !l.starts_with("***") && !l.trim().is_empty())
                .take(3)
                .collect();
            return Err(StoreError::Damaged {
                path: shown,
                detail: lines.join("; "),
            });
        }
        let has_baseline = conn
            .prepare("SELECT 1 FROM pragma_table_info('measurements') WHERE name = 'baseline'")?
            .exists([])?;
        Ok(Store {
            conn,
            has_baseline,
            _lock: None,
        })
    }

    /// A read-only connection that has read the schema (SQLite opens
    /// lazily: an unreadable file fails here, not later). `immutable`: no
    /// locking and no shared memory, for read-only storage.
    fn read_only_connection(path: &Path, immutable: bool) -> Result<Connection, rusqlite::Error> {
        use rusqlite::OpenFlags;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = if immutable {
            Connection::open_with_flags(
                format!("file:{}?immutable=1", uri_path(path)),
                flags | OpenFlags::SQLITE_OPEN_URI,
            )?
        } else {
            Connection::open_with_flags(path, flags)?
        };
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        // Sorting and joins in memory: a reader needs no temporary files
        // (which a full disk would fail).
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
            r.get::<_, i64>(0)
        })?;
        Ok(conn)
    }

    /// A machine is its processor model and core count: sessions on the
    /// same machine type resume one campaign even when the kernel release
    /// differs (the release of the first session is the one recorded).
    pub fn machine_id(&self, m: &Machine) -> Result<i64, StoreError> {
        if let Some(id) = self
            .conn
            .query_row(
                "SELECT id FROM machines WHERE cpu = ?1 AND cores = ?2 ORDER BY id LIMIT 1",
                params![m.cpu, m.cores],
                |r| r.get(0),
            )
            .optional()?
        {
            return Ok(id);
        }
        self.conn.execute(
            "INSERT OR IGNORE INTO machines (cpu, cores, os) VALUES (?1, ?2, ?3)",
            params![m.cpu, m.cores, m.os],
        )?;
        Ok(self.conn.query_row(
            "SELECT id FROM machines WHERE cpu = ?1 AND cores = ?2 AND os = ?3",
            params![m.cpu, m.cores, m.os],
            |r| r.get(0),
        )?)
    }

    pub fn compiler_id(&self, c: &Compiler) -> Result<i64, StoreError> {
        let flags = c.flags.join(" ");
        self.conn.execute(
            "INSERT OR IGNORE INTO compilers (name, version, flags) VALUES (?1, ?2, ?3)",
            params![c.name, c.version, flags],
        )?;
        Ok(self.conn.query_row(
            "SELECT id FROM compilers WHERE name = ?1 AND version = ?2 AND flags = ?3",
            params![c.name, c.version, flags],
            |r| r.get(0),
        )?)
    }

    pub fn kernel_id(&self, name: &str, source_hash: &str) -> Result<i64, StoreError> {
        self.conn.execute(
            "INSERT OR IGNORE INTO kernels (name, source_hash) VALUES (?1, ?2)",
            params![name, source_hash],
        )?;
        Ok(self.conn.query_row(
            "SELECT id FROM kernels WHERE name = ?1 AND source_hash = ?2",
            params![name, source_hash],
            |r| r.get(0),
        )?)
    }

    /// Registers a variant and the configurations that produce it.
    pub fn variant_id(
        &mut self,
        kernel: i64,
        code_hash: &str,
        original: bool,
        configs: &[String],
    ) -> Result<i64, StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT OR IGNORE INTO variants (kernel_id, code_hash, original) VALUES (?1, ?2, ?3)",
            params![kernel, code_hash, original as i64],
        )?;
        let id: i64 = tx.query_row(
            "SELECT id FROM variants WHERE kernel_id = ?1 AND code_hash = ?2",
            params![kernel, code_hash],
            |r| r.get(0),
        )?;
        for c in configs {
            tx.execute(
                "INSERT OR IGNORE INTO variant_configs (variant_id, config) VALUES (?1, ?2)",
                params![id, c],
            )?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// Whether this measurement is already stored (resume).
    pub fn has_measurement(&self, k: &Key<'_>) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT 1 FROM measurements WHERE variant_id = ?1 AND machine_id = ?2 AND compiler_id = ?3 AND size = ?4 AND threads = ?5",
                params![k.variant, k.machine, k.compiler, k.size, k.threads],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// The stored median of a measurement that succeeded.
    pub fn median(&self, k: &Key<'_>) -> Result<Option<f64>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT median FROM measurements WHERE variant_id = ?1 AND machine_id = ?2 AND compiler_id = ?3 AND size = ?4 AND threads = ?5 AND status = 'ok'",
                params![k.variant, k.machine, k.compiler, k.size, k.threads],
                |r| r.get::<_, Option<f64>>(0),
            )
            .optional()?
            .flatten())
    }

    /// Writes one measurement and its samples atomically.
    pub fn record(&mut self, k: &Key<'_>, m: &Measurement) -> Result<(), StoreError> {
        self.record_against(k, m, None)
    }

    /// Writes a variant's measurement with the median of the original
    /// timed in the same batch, which its speedup is relative to.
    pub fn record_against(
        &mut self,
        k: &Key<'_>,
        m: &Measurement,
        baseline: Option<f64>,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT OR REPLACE INTO measurements (variant_id, machine_id, compiler_id, size, threads, status, detail, compile_seconds, median, spread, baseline)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                k.variant,
                k.machine,
                k.compiler,
                k.size,
                k.threads,
                m.status.as_str(),
                m.detail.chars().take(4000).collect::<String>(),
                m.compile_seconds,
                m.timing.as_ref().map(|t| t.median),
                m.timing.as_ref().map(|t| t.spread),
                baseline,
            ],
        )?;
        let id = tx.last_insert_rowid();
        if let Some(t) = &m.timing {
            for (i, s) in t.samples.iter().enumerate() {
                tx.execute(
                    "INSERT INTO samples (measurement_id, k, seconds) VALUES (?1, ?2, ?3)",
                    params![id, i as i64, s],
                )?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    pub fn has_features(&self, kernel: i64, backend: &str, size: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT 1 FROM features WHERE kernel_id = ?1 AND backend = ?2 AND size = ?3 LIMIT 1",
                params![kernel, backend, size],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// Stores a kernel's feature vector atomically.
    pub fn record_features(
        &mut self,
        kernel: i64,
        backend: &str,
        size: &str,
        values: &[(String, f64)],
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        for (name, v) in values {
            tx.execute(
                "INSERT OR REPLACE INTO features (kernel_id, backend, size, name, value) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![kernel, backend, size, name, v],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// (measurement id, variant id, median) of every measurement, by id.
    pub fn measurement_rows(&self) -> Result<Vec<(i64, i64, Option<f64>)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, variant_id, median FROM measurements ORDER BY id")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every measurement, with what learning needs to know about it.
    pub fn measured(&self) -> Result<Vec<Measured>, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT k.id, k.name, v.id, v.original, c.name, c.version, c.flags, ma.cpu, ma.cores, ma.os,
                    m.size, m.threads, m.status, m.median, {},
                    COALESCE((SELECT group_concat(config, ',') FROM (SELECT config FROM variant_configs WHERE variant_id = v.id ORDER BY config)), '')
             FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN kernels k ON k.id = v.kernel_id
             JOIN compilers c ON c.id = m.compiler_id JOIN machines ma ON ma.id = m.machine_id
             ORDER BY k.name, k.id, v.id, c.name",
            if self.has_baseline {
                "m.baseline"
            } else {
                "NULL"
            }
        ))?;
        let rows = stmt.query_map([], |r| {
            let configs: String = r.get(15)?;
            Ok(Measured {
                kernel_id: r.get(0)?,
                kernel: r.get(1)?,
                variant_id: r.get(2)?,
                original: r.get::<_, i64>(3)? != 0,
                compiler: {
                    let (name, version): (String, String) = (r.get(4)?, r.get(5)?);
                    if version.starts_with(&name) {
                        version
                    } else {
                        format!("{name} {version}")
                    }
                },
                compiler_name: r.get(4)?,
                flags: r.get(6)?,
                machine: format!(
                    "{}, {} cores, {}",
                    r.get::<_, String>(7)?,
                    r.get::<_, i64>(8)?,
                    r.get::<_, String>(9)?
                ),
                size: r.get(10)?,
                threads: r.get(11)?,
                status: r.get(12)?,
                median: r.get(13)?,
                baseline: r.get(14)?,
                configs: configs
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect(),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The stored features of a kernel for one back end and size.
    pub fn features(
        &self,
        kernel: i64,
        backend: &str,
        size: &str,
    ) -> Result<Vec<(String, f64)>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT name, value FROM features WHERE kernel_id = ?1 AND backend = ?2 AND size = ?3 ORDER BY name",
        )?;
        let rows = stmt.query_map(params![kernel, backend, size], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Writes a copy of the database without the per-run samples (the
    /// medians and spreads stay), compacted: the shippable dataset.
    /// Returns the number of measurements in it.
    pub fn compact_copy(&self, out: &Path) -> Result<i64, StoreError> {
        // Built in a temporary file beside `out` and renamed over it only
        // when complete: a full disk leaves no partial dataset. VACUUM INTO
        // accepts the empty temporary file.
        let mut n = 0;
        atomic::replace_with(out, |tmp, _| {
            let copy = || -> Result<i64, rusqlite::Error> {
                self.conn
                    .execute("VACUUM INTO ?1", params![tmp.to_string_lossy()])?;
                let copy = Connection::open(tmp)?;
                copy.execute_batch("DELETE FROM samples; PRAGMA journal_mode = DELETE; VACUUM;")?;
                let n = copy.query_row("SELECT COUNT(*) FROM measurements", [], |r| r.get(0))?;
                copy.close().map_err(|(_, e)| e)?;
                Ok(n)
            };
            let result = copy();
            // SQLite's side files of the copy (a failed VACUUM INTO leaves
            // its journal behind).
            for side in ["-journal", "-wal", "-shm"] {
                let mut p = tmp.as_os_str().to_owned();
                p.push(side);
                let _ = std::fs::remove_file(std::path::PathBuf::from(p));
            }
            n = result.map_err(std::io::Error::other)?;
            Ok(())
        })
        .map_err(|e| StoreError::Io(e.to_string()))?;
        Ok(n)
    }

    /// Number of rows of a table (for reports and tests).
    pub fn count(&self, table: &str) -> Result<i64, StoreError> {
        let allowed = [
            "machines",
            "compilers",
            "kernels",
            "variants",
            "variant_configs",
            "measurements",
            "samples",
            "features",
        ];
        assert!(allowed.contains(&table), "unknown table {table}");
        Ok(self
            .conn
            .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))?)
    }

    /// Every measurement joined with its kernel, variant configuration(s)
    /// and compiler, as CSV.
    /// A failure to write keeps its kind (a full disk stays one).
    pub fn export_csv(&self, out: &mut dyn std::io::Write) -> std::io::Result<usize> {
        self.write_csv(out)
            .map_err(|e| match e.downcast::<std::io::Error>() {
                Ok(io) => *io,
                Err(other) => std::io::Error::other(other),
            })
    }

    fn write_csv(
        &self,
        out: &mut dyn std::io::Write,
    ) -> Result<usize, Box<dyn std::error::Error + Send + Sync>> {
        let mut stmt = self.conn.prepare(
            "SELECT k.name, v.code_hash, v.original, COALESCE((SELECT MIN(config) FROM variant_configs WHERE variant_id = v.id), ''),
                    (SELECT COUNT(*) FROM variant_configs WHERE variant_id = v.id),
                    c.name, c.version, m.size, m.threads, m.status, m.compile_seconds, m.median, m.spread
             FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN kernels k ON k.id = v.kernel_id
             JOIN compilers c ON c.id = m.compiler_id ORDER BY k.name, v.id, c.name",
        )?;
        writeln!(
            out,
            "kernel,code_hash,original,config,configs,compiler,compiler_version,size,threads,status,compile_seconds,median,spread"
        )?;
        let mut n = 0;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let field = |s: String| {
                if s.contains([',', '"', '\n']) {
                    format!("\"{}\"", s.replace('"', "\"\""))
                } else {
                    s
                }
            };
            let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
            writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{},{}",
                field(r.get(0)?),
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                field(r.get(3)?),
                r.get::<_, i64>(4)?,
                field(r.get(5)?),
                field(r.get(6)?),
                r.get::<_, String>(7)?,
                r.get::<_, i64>(8)?,
                r.get::<_, String>(9)?,
                r.get::<_, f64>(10)?,
                opt(r.get(11)?),
                opt(r.get(12)?),
            )?;
            n += 1;
        }
        Ok(n)
    }
}

/// A path as the path part of an SQLite `file:` URI.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::verify::Status;

    #[test]
    fn a_version_1_store_gains_the_baseline_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.sqlite");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(&SCHEMA.replace("  baseline REAL,\n", ""))
                .unwrap();
            c.execute(
                "INSERT INTO meta (key, value) VALUES ('schema_version', '1')",
                [],
            )
            .unwrap();
        }
        let mut s = Store::open(&path).unwrap();
        let m = s.machine_id(&Machine::this()).unwrap();
        let k = s.kernel_id("k", "h").unwrap();
        let v = s
            .variant_id(k, "v", false, &["000000000000".into()])
            .unwrap();
        let c = s
            .compiler_id(&crate::lab::compiler::Compiler::detect("gcc", None).unwrap())
            .unwrap();
        let key = Key {
            variant: v,
            machine: m,
            compiler: c,
            size: "mini",
            threads: 1,
        };
        let meas = Measurement {
            status: Status::Ok,
            detail: String::new(),
            compile_seconds: 0.1,
            timing: None,
        };
        s.record_against(&key, &meas, Some(0.5)).unwrap();
        let rows = s.measured().unwrap();
        assert_eq!(rows[0].baseline, Some(0.5));
        drop(s);
        // Opening again is a no-op.
        let s = Store::open(&path).unwrap();
        let v: String = s
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(v, "2");
    }

    #[test]
    fn a_new_kernel_release_is_the_same_machine() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("m.sqlite")).unwrap();
        let a = Machine {
            cpu: "AMD EPYC".into(),
            cores: 2,
            os: "Linux 6.1".into(),
        };
        let b = Machine {
            os: "Linux 6.18".into(),
            ..a.clone()
        };
        let c = Machine {
            cores: 4,
            ..a.clone()
        };
        let ia = s.machine_id(&a).unwrap();
        assert_eq!(s.machine_id(&b).unwrap(), ia);
        assert_ne!(s.machine_id(&c).unwrap(), ia);
        assert_eq!(s.count("machines").unwrap(), 2);
    }

    #[test]
    fn a_read_only_open_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("w.sqlite")).unwrap();
        s.kernel_id("gemm", "abc").unwrap();
        let shipped = dir.path().join("shipped.sqlite");
        s.compact_copy(&shipped).unwrap();
        let before = std::fs::read(&shipped).unwrap();
        let r = Store::open_read_only(&shipped).unwrap();
        assert_eq!(r.count("kernels").unwrap(), 1);
        assert!(r.kernel_id("lu", "def").is_err(), "a read-only store wrote");
        drop(r);
        assert_eq!(std::fs::read(&shipped).unwrap(), before);
        assert!(!dir.path().join("shipped.sqlite-wal").exists());
    }

    #[test]
    fn a_foreign_or_empty_file_is_not_a_store_and_stays_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.sqlite");
        std::fs::write(&empty, "").unwrap();
        let other = dir.path().join("other.sqlite");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        let text = dir.path().join("text.sqlite");
        std::fs::write(
            &text,
            "not a database at all, but longer than a header\n".repeat(4),
        )
        .unwrap();
        for (p, why) in [
            (&empty, "it has no tables"),
            (&other, "no table `measurements`"),
            (&text, "not an SQLite database"),
        ] {
            let before = std::fs::read(p).unwrap();
            let e = Store::open_read_only(p)
                .err()
                .expect("opened a foreign file");
            assert!(matches!(e, StoreError::NotAStore { .. }), "{e}");
            let msg = e.to_string();
            assert!(
                msg.contains(&format!("{} is not a polytune store ({why})", p.display())),
                "{msg}"
            );
            assert_eq!(std::fs::read(p).unwrap(), before, "{}", p.display());
        }
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 3, "side files appeared: {names:?}");
        // Nor does a campaign make a store of them (an empty file is a new
        // store).
        for p in [&other, &text] {
            let before = std::fs::read(p).unwrap();
            let e = Store::open_exclusive(p)
                .err()
                .expect("opened a foreign file");
            assert!(matches!(e, StoreError::NotAStore { .. }), "{e}");
            assert_eq!(std::fs::read(p).unwrap(), before, "{}", p.display());
        }
        Store::open(&empty).unwrap();
    }

    #[test]
    fn a_version_1_store_is_read_without_an_upgrade() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.sqlite");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(&SCHEMA.replace("  baseline REAL,\n", ""))
                .unwrap();
            c.execute_batch(
                "INSERT INTO meta VALUES ('schema_version', '1');
                 INSERT INTO machines VALUES (1, 'cpu', 2, 'Linux');
                 INSERT INTO compilers VALUES (1, 'gcc', '12', '-O3');
                 INSERT INTO kernels VALUES (1, 'gemm', 'h');
                 INSERT INTO variants VALUES (1, 1, 'v', 1);
                 INSERT INTO measurements (id, variant_id, machine_id, compiler_id, size, threads, status, detail, compile_seconds, median)
                   VALUES (1, 1, 1, 1, 'mini', 1, 'ok', '', 0.1, 0.5);",
            )
            .unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        let s = Store::open_read_only(&path).unwrap();
        let rows = s.measured().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].median, rows[0].baseline), (Some(0.5), None));
        drop(s);
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn one_campaign_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.sqlite");
        let first = Store::open_exclusive(&path).unwrap();
        let e = Store::open_exclusive(&path).err().expect("two campaigns");
        let msg = e.to_string();
        assert!(
            msg.contains(&format!(
                "another campaign (process {}) holds {}",
                std::process::id(),
                path.display()
            )),
            "{msg}"
        );
        // Readers are not locked out.
        assert_eq!(
            Store::open_read_only(&path)
                .unwrap()
                .count("kernels")
                .unwrap(),
            0
        );
        drop(first);
        Store::open_exclusive(&path).unwrap();
    }

    #[test]
    fn a_damaged_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.sqlite");
        {
            let s = Store::open(&path).unwrap();
            for k in 0..2000 {
                s.kernel_id(&format!("kernel-{k:05}"), "some source hash")
                    .unwrap();
            }
            s.conn
                .execute_batch("PRAGMA journal_mode = DELETE;")
                .unwrap();
        }
        // Scribble over the middle of a page well past the schema.
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() / 2 / 4096 * 4096 + 8;
        bytes[at..at + 64].fill(0xff);
        std::fs::write(&path, &bytes).unwrap();
        let e = Store::open_read_only(&path)
            .err()
            .expect("opened a damaged store");
        assert!(matches!(e, StoreError::Damaged { .. }), "{e}");
        assert!(e.to_string().contains("is damaged"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }

    #[test]
    fn records_once_and_refuses_newer_schemas() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        let mut s = Store::open(&path).unwrap();
        let m = s.machine_id(&Machine::this()).unwrap();
        assert_eq!(m, s.machine_id(&Machine::this()).unwrap());
        let k = s.kernel_id("gemm", "abc").unwrap();
        let v = s
            .variant_id(
                k,
                "h1",
                false,
                &["010000000000".into(), "110000000000".into()],
            )
            .unwrap();
        assert_eq!(v, s.variant_id(k, "h1", false, &[]).unwrap());
        let gcc = Compiler::detect("gcc", None).unwrap();
        let key = Key {
            variant: v,
            machine: m,
            compiler: s.compiler_id(&gcc).unwrap(),
            size: "mini",
            threads: 2,
        };
        assert!(!s.has_measurement(&key).unwrap());
        let meas = Measurement {
            status: Status::Ok,
            detail: String::new(),
            compile_seconds: 0.1,
            timing: None,
        };
        s.record(&key, &meas).unwrap();
        assert!(s.has_measurement(&key).unwrap());
        assert_eq!(s.count("measurements").unwrap(), 1);
        assert_eq!(s.count("variant_configs").unwrap(), 2);
        drop(s);
        let conn = Connection::open(&path).unwrap();
        conn.execute(
            "UPDATE meta SET value = '99' WHERE key = 'schema_version'",
            [],
        )
        .unwrap();
        drop(conn);
        assert!(matches!(
            Store::open(&path),
            Err(StoreError::NewerSchema { found: 99, .. })
        ));
    }
}
