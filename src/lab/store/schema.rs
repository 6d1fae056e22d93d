//! Opening a store: its tables, the upgrade of older schemas, and the
//! three ways to open one (a campaign alone, any writer, a reader that
//! leaves the file as it was).
//!
//! Why one file: its code is about 300 lines; its tests, which build
//! stores of earlier schema versions, damaged and foreign files, make up
//! the rest.

use super::{SCHEMA_VERSION, Store, StoreError};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;

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
CREATE TABLE IF NOT EXISTS variant_features (
  variant_id INTEGER NOT NULL REFERENCES variants(id), machine_id INTEGER NOT NULL REFERENCES machines(id),
  size TEXT NOT NULL, threads INTEGER NOT NULL, names TEXT NOT NULL, x TEXT NOT NULL,
  UNIQUE (variant_id, machine_id, size, threads));
";

impl Store {
    /// Opens (creating if needed) a database; refuses newer schemas. A
    /// write another process holds is waited for up to 30 s.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_waiting(path, std::time::Duration::from_secs(30))
    }

    /// [`Store::open`] waiting up to `wait` for another process's write;
    /// past it, the write that waited fails with [`StoreError::Locked`].
    pub fn open_waiting(path: &Path, wait: std::time::Duration) -> Result<Store, StoreError> {
        Store::open_with(path, wait).map_err(|e| e.locked_after(path, wait))
    }

    fn open_with(path: &Path, wait: std::time::Duration) -> Result<Store, StoreError> {
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
        conn.busy_timeout(wait)?;
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
                // Version 3 changed what `variant_configs.config` may
                // hold (readable forms beyond the paper's space), not
                // the tables: the version alone is written.
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
    use super::super::{Key, Machine};
    use super::*;
    use crate::lab::compiler::{Compiler, Family};
    use crate::lab::size::Size;
    use crate::lab::verify::{Measurement, Status};

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
            .variant_id(k, "v", &[crate::config::Config::default()])
            .unwrap();
        let c = s
            .compiler_id(&Compiler::detect(Family::Gcc, None).unwrap())
            .unwrap();
        let key = Key {
            variant: v,
            machine: m,
            compiler: c,
            size: Size::Mini,
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
        assert_eq!(v, SCHEMA_VERSION.to_string());
    }

    #[test]
    fn a_read_only_open_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("w.sqlite")).unwrap();
        s.kernel_id("gemm", "abc").unwrap();
        let shipped = dir.path().join("shipped.sqlite");
        s.compact_copy(&shipped, None).unwrap();
        let before = std::fs::read(&shipped).unwrap();
        let r = Store::open_read_only(&shipped).unwrap();
        assert_eq!(r.count("kernels").unwrap(), 1);
        assert!(r.kernel_id("lu", "def").is_err(), "a read-only store wrote");
        drop(r);
        assert_eq!(std::fs::read(&shipped).unwrap(), before);
        assert!(!dir.path().join("shipped.sqlite-wal").exists());
    }

    /// A store holding two machine types' campaigns ships one of them.
    #[test]
    fn a_compact_copy_keeps_one_machines_measurements() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("two.sqlite")).unwrap();
        let k = s.kernel_id("gemm", "abc").unwrap();
        let v = s.original_id(k, "o").unwrap();
        let compiler = s
            .compiler_id(&Compiler {
                family: Family::Gcc,
                program: "gcc".into(),
                version: "12".into(),
                flags: Vec::new(),
            })
            .unwrap();
        for cpu in ["AMD EPYC", "Intel(R) Xeon(R) Processor"] {
            let machine = s
                .machine_id(&Machine {
                    cpu: cpu.into(),
                    cores: 2,
                    os: "Linux".into(),
                })
                .unwrap();
            let key = Key {
                variant: v,
                machine,
                compiler,
                size: Size::Mini,
                threads: 2,
            };
            let m = Measurement {
                status: Status::Ok,
                detail: String::new(),
                compile_seconds: 0.0,
                timing: None,
            };
            s.record(&key, &m).unwrap();
        }
        let out = dir.path().join("intel.sqlite");
        assert_eq!(s.compact_copy(&out, Some("Xeon")).unwrap(), 1);
        let c = Store::open_read_only(&out).unwrap();
        assert_eq!(c.count("machines").unwrap(), 1);
        let ms = c.measured().unwrap();
        assert_eq!(ms.len(), 1);
        assert!(ms[0].machine.starts_with("Intel"), "{}", ms[0].machine);
        assert_eq!(c.count("kernels").unwrap(), 1);
        let none = dir.path().join("none.sqlite");
        let err = s.compact_copy(&none, Some("ARM")).unwrap_err().to_string();
        assert!(
            err.contains("no machine of the store matches `ARM`"),
            "{err}"
        );
        assert!(!none.exists());
        assert_eq!(s.compact_copy(&none, None).unwrap(), 2);
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

    /// A version 2 store (bit strings only) reads as it is, and opened
    /// for writing is version 3 with its rows unchanged, where
    /// configurations beyond the paper's space join them.
    #[test]
    fn a_version_2_store_reads_and_takes_configurations_beyond_the_paper() {
        use crate::config::Config;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.sqlite");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(SCHEMA).unwrap();
            c.execute_batch(
                "INSERT INTO meta VALUES ('schema_version', '2');
                 INSERT INTO machines VALUES (1, 'cpu', 2, 'Linux');
                 INSERT INTO compilers VALUES (1, 'gcc', '12', '-O3');
                 INSERT INTO kernels VALUES (1, 'gemm', 'h');
                 INSERT INTO variants VALUES (1, 1, 'v', 0);
                 INSERT INTO variant_configs VALUES (1, '011100000000');
                 INSERT INTO variant_configs VALUES (1, '111100000000');
                 INSERT INTO measurements (id, variant_id, machine_id, compiler_id, size, threads, status, detail, compile_seconds, median, baseline)
                   VALUES (1, 1, 1, 1, 'mini', 1, 'ok', '', 0.1, 0.5, 1.0);",
            )
            .unwrap();
        }
        let paper = ["011100000000", "111100000000"].map(|b| Config::from_bits(b).unwrap());
        let before = std::fs::read(&path).unwrap();
        let r = Store::open_read_only(&path).unwrap();
        assert_eq!(r.measured().unwrap()[0].configs, paper);
        assert_eq!(r.meta("schema_version").unwrap().as_deref(), Some("2"));
        drop(r);
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let mut s = Store::open(&path).unwrap();
        assert_eq!(s.meta("schema_version").unwrap().as_deref(), Some("3"));
        let beyond: Config = "fuse=max,tile=32x32x1,rb=8x4".parse().unwrap();
        let k = s.kernel_id("gemm", "h").unwrap();
        assert_eq!(s.variant_id(k, "v", &[beyond]).unwrap(), 1);
        let rows = s.measured().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].configs, [paper[0], paper[1], beyond]);
        assert_eq!(rows[0].baseline, Some(1.0));
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
}
