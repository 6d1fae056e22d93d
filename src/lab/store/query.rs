//! Reading: whether a measurement is stored, every measurement with what
//! learning needs, features, and the exports (CSV, the compact dataset).
//!
//! Why one file: its code is about 420 lines, every reader of the one
//! schema; its tests make up the rest.

use super::{Featured, Key, Measured, Store, StoreError, UnitCost, atomic};
use crate::config::Config;
use crate::lab::characterize::Backend;
use crate::lab::compiler::Family;
use crate::lab::size::Size;
use crate::lab::verify::Status;
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;

impl Store {
    /// Whether this measurement is already stored (resume).
    pub fn has_measurement(&self, k: &Key) -> Result<bool, StoreError> {
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

    /// The code hashes of the variants of `kernel` (originals excepted)
    /// measured under `k`'s machine, compiler, size and threads
    /// (`k.variant` is not read): what a campaign may find already done.
    pub fn measured_hashes(
        &self,
        kernel: i64,
        k: &Key,
    ) -> Result<std::collections::HashSet<String>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT v.code_hash FROM measurements m JOIN variants v ON v.id = m.variant_id
             WHERE v.kernel_id = ?1 AND v.original = 0 AND m.machine_id = ?2
               AND m.compiler_id = ?3 AND m.size = ?4 AND m.threads = ?5",
        )?;
        let rows = stmt.query_map(
            params![kernel, k.machine, k.compiler, k.size, k.threads],
            |r| r.get::<_, String>(0),
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The verified variants of `kernel` measured under `k`'s machine,
    /// compiler, size and threads (`k.variant` is not read), fastest
    /// first by their speedup over the baseline each was timed with (the
    /// original's stored median where a measurement has none).
    pub fn ranked(&self, kernel: i64, k: &Key) -> Result<Vec<super::Ranked>, StoreError> {
        let baseline = if self.has_baseline {
            "m.baseline"
        } else {
            "NULL"
        };
        let mut stmt = self.conn.prepare(&format!(
            "SELECT v.id, v.code_hash, m.median,
                    COALESCE({baseline}, (SELECT o.median FROM measurements o JOIN variants ov ON ov.id = o.variant_id
                        WHERE ov.kernel_id = v.kernel_id AND ov.original = 1 AND o.machine_id = m.machine_id
                          AND o.compiler_id = m.compiler_id AND o.size = m.size AND o.threads = m.threads AND o.status = 'ok')),
                    m.detail LIKE '{}%'
             FROM measurements m JOIN variants v ON v.id = m.variant_id
             WHERE v.kernel_id = ?1 AND v.original = 0 AND m.status = 'ok' AND m.median > 0
               AND m.machine_id = ?2 AND m.compiler_id = ?3 AND m.size = ?4 AND m.threads = ?5",
            super::CONFIRMED
        ))?;
        let rows = stmt.query_map(
            params![kernel, k.machine, k.compiler, k.size, k.threads],
            |r| {
                let median: f64 = r.get(2)?;
                let base: Option<f64> = r.get(3)?;
                let (variant, code_hash, confirmed) = (r.get(0)?, r.get(1)?, r.get(4)?);
                Ok(base.filter(|b| *b > 0.0).map(|b| super::Ranked {
                    variant,
                    code_hash,
                    speedup: b / median,
                    confirmed,
                }))
            },
        )?;
        let mut out: Vec<super::Ranked> = rows
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .flatten()
            .collect();
        out.sort_by(|a, b| {
            b.speedup
                .total_cmp(&a.speedup)
                .then(a.variant.cmp(&b.variant))
        });
        Ok(out)
    }

    /// The stored median of a measurement that succeeded.
    pub fn median(&self, k: &Key) -> Result<Option<f64>, StoreError> {
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

    pub fn has_features(
        &self,
        kernel: i64,
        backend: Backend,
        size: Size,
    ) -> Result<bool, StoreError> {
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

    /// (measurement id, variant id, median) of every measurement, by id.
    pub fn measurement_rows(&self) -> Result<Vec<(i64, i64, Option<f64>)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, variant_id, median FROM measurements ORDER BY id")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every measured variant of compiler `family` with stored features
    /// named `names` (others are left out) and a speedup over the
    /// original timed in the same batch: what the ranker of the variant
    /// learns from, by kernel.
    pub fn featured(&self, family: Family, names: &[String]) -> Result<Vec<Featured>, StoreError> {
        // A campaign's exported dataset keeps no features of variants:
        // nothing to learn from, not a broken store.
        let has_features: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'variant_features')",
            [],
            |r| r.get(0),
        )?;
        if !has_features {
            return Ok(Vec::new());
        }
        let mut stmt = self.conn.prepare(
            "SELECT k.id, k.name, ma.cpu, m.size, m.threads, m.median, m.baseline, f.x,
                    (SELECT MIN(config) FROM variant_configs WHERE variant_id = v.id)
             FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN kernels k ON k.id = v.kernel_id
             JOIN compilers c ON c.id = m.compiler_id JOIN machines ma ON ma.id = m.machine_id
             JOIN variant_features f ON f.variant_id = v.id AND f.machine_id = m.machine_id
                  AND f.size = m.size AND f.threads = m.threads
             WHERE c.name = ?1 AND f.names = ?2 AND m.status = ?3
                   AND m.median > 0 AND m.baseline > 0
             ORDER BY k.id, v.id",
        )?;
        let rows = stmt.query_map(
            rusqlite::params![family, names.join(","), Status::Ok],
            |r| {
                let x: String = r.get(7)?;
                let config: Option<String> = r.get(8)?;
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, f64>(5)?,
                    r.get::<_, f64>(6)?,
                    x,
                    config,
                ))
            },
        )?;
        let mut out = Vec::new();
        for row in rows {
            let (kernel_id, kernel, cpu, median, baseline, x, config) = row?;
            let x: Vec<f64> = serde_json::from_str(&x)
                .map_err(|e| StoreError::Io(format!("variant_features: {e}")))?;
            let config = match config.as_deref() {
                None | Some(super::write::ORIGINAL) => Config::default(),
                Some(c) => super::sql::stored_config(c)
                    .map_err(|e| StoreError::Io(format!("variant_configs: {e}")))?,
            };
            out.push(Featured {
                kernel_id,
                kernel,
                cpu,
                config,
                speedup: baseline / median,
                x,
            });
        }
        Ok(out)
    }

    /// Every measurement, with what learning needs to know about it.
    pub fn measured(&self) -> Result<Vec<Measured>, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT k.id, k.name, v.id, v.original, c.name, c.version, c.flags, ma.cpu, ma.cores, ma.os,
                    m.size, m.threads, m.status, m.median, {},
                    COALESCE((SELECT group_concat(config, char(10)) FROM (SELECT config FROM variant_configs WHERE variant_id = v.id ORDER BY config)), '')
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
            let original = r.get::<_, i64>(3)? != 0;
            // An original's "configuration" is the marker `original`. One
            // per line: a readable form has commas.
            let configs = if original {
                Vec::new()
            } else {
                let text: String = r.get(15)?;
                text.split('\n')
                    .filter(|c| !c.is_empty())
                    .map(|c| {
                        super::sql::stored_config(c).map_err(|e| {
                            rusqlite::Error::FromSqlConversionFailure(
                                15,
                                rusqlite::types::Type::Text,
                                Box::new(e),
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?
            };
            Ok(Measured {
                kernel_id: r.get(0)?,
                kernel: r.get(1)?,
                variant_id: r.get(2)?,
                original,
                compiler: {
                    let (name, version): (String, String) = (r.get(4)?, r.get(5)?);
                    if version.starts_with(&name) {
                        version
                    } else {
                        format!("{name} {version}")
                    }
                },
                family: r.get(4)?,
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
                configs,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// What each stored measurement cost, at `size` when the store has
    /// measurements at that size, else at any size: compile seconds plus
    /// the stored samples (a compact store keeps none: the median five
    /// times).
    pub fn unit_costs(&self, size: Size) -> Result<Vec<UnitCost>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT k.name, v.code_hash, c.name, v.original, m.size,
                    m.compile_seconds + COALESCE((SELECT SUM(seconds) FROM samples WHERE measurement_id = m.id), m.median * 5, 0)
             FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN kernels k ON k.id = v.kernel_id
             JOIN compilers c ON c.id = m.compiler_id ORDER BY m.id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                UnitCost {
                    kernel: r.get(0)?,
                    code_hash: r.get(1)?,
                    family: r.get(2)?,
                    original: r.get::<_, i64>(3)? != 0,
                    seconds: r.get(5)?,
                },
                r.get::<_, Size>(4)?,
            ))
        })?;
        let all: Vec<(UnitCost, Size)> = rows.collect::<Result<_, _>>()?;
        let at_size = all.iter().any(|(_, s)| *s == size);
        Ok(all
            .into_iter()
            .filter(|(_, s)| !at_size || *s == size)
            .map(|(u, _)| u)
            .collect())
    }

    /// The database's file (none for an in-memory one).
    pub fn path(&self) -> Option<String> {
        self.conn
            .path()
            .filter(|p| !p.is_empty())
            .map(str::to_string)
    }

    /// A value of the `meta` table.
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    /// The stored features of a kernel for one back end and size.
    pub fn features(
        &self,
        kernel: i64,
        backend: Backend,
        size: Size,
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
    /// With `machine`, only the measurements of the machines whose
    /// description (`CPU, N cores, OS`, as [`Measured::machine`]) contains
    /// it are kept (none matching is an error, and nothing is written).
    /// Returns the number of measurements in it.
    pub fn compact_copy(&self, out: &Path, machine: Option<&str>) -> Result<i64, StoreError> {
        if let Some(m) = machine {
            let matching: i64 = self.conn.query_row(
                "SELECT COUNT(*) FROM machines WHERE instr(cpu || ', ' || cores || ' cores, ' || os, ?1) > 0",
                params![m],
                |r| r.get(0),
            )?;
            if matching == 0 {
                return Err(StoreError::Io(format!(
                    "no machine of the store matches `{m}`"
                )));
            }
        }
        // Built in a temporary file beside `out` and renamed over it only
        // when complete: a full disk leaves no partial dataset. VACUUM INTO
        // accepts the empty temporary file.
        let mut n = 0;
        atomic::replace_with(out, |tmp, _| {
            let copy = || -> Result<i64, rusqlite::Error> {
                self.conn
                    .execute("VACUUM INTO ?1", params![tmp.to_string_lossy()])?;
                let copy = Connection::open(tmp)?;
                copy.execute_batch("DELETE FROM samples;")?;
                if let Some(m) = machine {
                    let other = "SELECT id FROM machines WHERE instr(cpu || ', ' || cores || ' cores, ' || os, ?1) = 0";
                    copy.execute(
                        &format!("DELETE FROM measurements WHERE machine_id IN ({other})"),
                        params![m],
                    )?;
                    copy.execute(
                        &format!("DELETE FROM machines WHERE id IN ({other})"),
                        params![m],
                    )?;
                }
                copy.execute_batch("PRAGMA journal_mode = DELETE; VACUUM;")?;
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
    /// and compiler, as CSV (through the `csv` crate: a field is quoted
    /// only when it must be). A failure to write keeps its kind (a full
    /// disk stays one).
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
        // The csv crate wraps the writer's errors; unwrapped, an I/O
        // error keeps its kind.
        fn io(e: csv::Error) -> Box<dyn std::error::Error + Send + Sync> {
            match e.into_kind() {
                csv::ErrorKind::Io(io) => Box::new(io),
                // Not met: every line is the header's 13 fields of text.
                other => format!("{other:?}").into(),
            }
        }
        let mut stmt = self.conn.prepare(
            "SELECT k.name, v.code_hash, v.original, COALESCE((SELECT MIN(config) FROM variant_configs WHERE variant_id = v.id), ''),
                    (SELECT COUNT(*) FROM variant_configs WHERE variant_id = v.id),
                    c.name, c.version, m.size, m.threads, m.status, m.compile_seconds, m.median, m.spread
             FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN kernels k ON k.id = v.kernel_id
             JOIN compilers c ON c.id = m.compiler_id ORDER BY k.name, v.id, c.name",
        )?;
        let mut w = csv::Writer::from_writer(out);
        w.write_record([
            "kernel",
            "code_hash",
            "original",
            "config",
            "configs",
            "compiler",
            "compiler_version",
            "size",
            "threads",
            "status",
            "compile_seconds",
            "median",
            "spread",
        ])
        .map_err(io)?;
        let mut n = 0;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
            w.write_record([
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?.to_string(),
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?.to_string(),
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, String>(7)?,
                r.get::<_, i64>(8)?.to_string(),
                r.get::<_, String>(9)?,
                r.get::<_, f64>(10)?.to_string(),
                opt(r.get(11)?),
                opt(r.get(12)?),
            ])
            .map_err(io)?;
            n += 1;
        }
        w.flush()?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Machine;
    use super::*;
    use crate::config::Config;
    use crate::lab::compiler::{Compiler, Family};
    use crate::lab::verify::{Measurement, Status};

    /// Typed rows go in and come out typed, and the columns hold the text
    /// they always held (existing stores stay readable, new ones stay
    /// readable by older builds).
    #[test]
    fn typed_rows_round_trip_with_the_same_text_columns() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("t.sqlite")).unwrap();
        let machine = s.machine_id(&Machine::this()).unwrap();
        let kernel = s.kernel_id("gemm", "src").unwrap();
        let original = s.original_id(kernel, "o").unwrap();
        let configs = [
            Config::from_bits("110000100011").unwrap(),
            Config::from_bits("000000100000").unwrap(),
        ];
        let variant = s.variant_id(kernel, "v", &configs).unwrap();
        let clang = Compiler {
            family: Family::Clang,
            program: "clang-19".into(),
            version: "Debian clang version 19.1.7".into(),
            flags: vec!["-O3".into()],
        };
        let compiler = s.compiler_id(&clang).unwrap();
        let key = |variant| Key {
            variant,
            machine,
            compiler,
            size: Size::Small,
            threads: 2,
        };
        let ran = |status| Measurement {
            status,
            detail: String::new(),
            compile_seconds: 0.1,
            timing: None,
        };
        s.record(&key(original), &ran(Status::Ok)).unwrap();
        s.record_against(&key(variant), &ran(Status::WrongOutput), Some(0.5))
            .unwrap();
        s.record_features(
            kernel,
            Backend::Cachegrind,
            Size::Mini,
            &[("Ir".into(), 7.0)],
        )
        .unwrap();
        assert!(s.has_measurement(&key(variant)).unwrap());
        assert!(
            !s.has_measurement(&Key {
                size: Size::Medium,
                ..key(variant)
            })
            .unwrap()
        );
        let rows = s.measured().unwrap();
        assert_eq!(rows.len(), 2);
        let (o, v) = (&rows[0], &rows[1]);
        assert!(o.original && o.configs.is_empty());
        assert_eq!(
            (o.family, o.size, o.status),
            (Family::Clang, Size::Small, Status::Ok)
        );
        assert_eq!(o.compiler, "clang Debian clang version 19.1.7");
        assert_eq!(v.status, Status::WrongOutput);
        // In the order of their bit strings.
        assert_eq!(v.configs, [configs[1], configs[0]]);
        assert!(
            s.has_features(kernel, Backend::Cachegrind, Size::Mini)
                .unwrap()
        );
        assert!(
            !s.has_features(kernel, Backend::Cachegrind, Size::Small)
                .unwrap()
        );
        assert_eq!(
            s.features(kernel, Backend::Cachegrind, Size::Mini).unwrap(),
            [("Ir".to_string(), 7.0)]
        );
        let text = |sql: &str| -> Vec<String> {
            let mut stmt = s.conn.prepare(sql).unwrap();
            stmt.query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        assert_eq!(
            text("SELECT config FROM variant_configs ORDER BY config"),
            ["000000100000", "110000100011", "original"]
        );
        assert_eq!(
            text("SELECT size || ' ' || status FROM measurements ORDER BY id"),
            ["small ok", "small wrong-output"]
        );
        assert_eq!(text("SELECT name FROM compilers"), ["clang"]);
        assert_eq!(text("SELECT size FROM features"), ["mini"]);
    }

    /// Configurations beyond the paper's space are stored in readable
    /// form beside the bit strings of the paper's, and read back typed;
    /// the export names them (quoted: the readable form has commas).
    #[test]
    fn configurations_beyond_the_paper_round_trip_in_readable_form() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("x.sqlite")).unwrap();
        let machine = s.machine_id(&Machine::this()).unwrap();
        let kernel = s.kernel_id("gemm", "src").unwrap();
        let paper = Config::from_bits("011100000000").unwrap();
        let free: Config = "fuse=smart,tile=64x256x8,omp=1".parse().unwrap();
        let blocked: Config = "fuse=max,tile=32x32x32,red=1,rb=4x16".parse().unwrap();
        let mixed = s.variant_id(kernel, "v1", &[free, paper]).unwrap();
        let beyond = s.variant_id(kernel, "v2", &[blocked]).unwrap();
        let compiler = s
            .compiler_id(&Compiler {
                family: Family::Gcc,
                program: "gcc".into(),
                version: "12".into(),
                flags: Vec::new(),
            })
            .unwrap();
        for v in [mixed, beyond] {
            let key = Key {
                variant: v,
                machine,
                compiler,
                size: Size::Mini,
                threads: 1,
            };
            let m = Measurement {
                status: Status::Ok,
                detail: String::new(),
                compile_seconds: 0.0,
                timing: None,
            };
            s.record(&key, &m).unwrap();
        }
        let rows = s.measured().unwrap();
        assert_eq!(rows[0].configs, [paper, free]);
        assert_eq!(rows[1].configs, [blocked]);
        let text: Vec<String> = {
            let mut stmt = s
                .conn
                .prepare("SELECT config FROM variant_configs ORDER BY config")
                .unwrap();
            stmt.query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        assert_eq!(
            text,
            [
                "011100000000",
                "fuse=max,tile=32x32x32,wave=0,omp=0,prevec=0,simd=0,uj=1,red=1,rb=4x16",
                "fuse=smart,tile=64x256x8,wave=0,omp=1,prevec=0,simd=0,uj=1",
            ]
        );
        // Registering a configuration again adds no row.
        s.variant_id(kernel, "v2", &[blocked]).unwrap();
        assert_eq!(s.count("variant_configs").unwrap(), 3);
        let mut csv = Vec::new();
        assert_eq!(s.export_csv(&mut csv).unwrap(), 2);
        let csv = String::from_utf8(csv).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert!(
            lines[1].starts_with("gemm,v1,0,011100000000,2,gcc"),
            "{csv}"
        );
        assert!(
            lines[2].starts_with(
                "gemm,v2,0,\"fuse=max,tile=32x32x32,wave=0,omp=0,prevec=0,simd=0,uj=1,red=1,rb=4x16\",1,gcc"
            ),
            "{csv}"
        );
    }

    /// A store whose text is not what this build writes is refused with
    /// the column's error, not misread.
    #[test]
    fn a_foreign_value_in_a_typed_column_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("f.sqlite")).unwrap();
        let machine = s.machine_id(&Machine::this()).unwrap();
        let kernel = s.kernel_id("k", "h").unwrap();
        let variant = s.variant_id(kernel, "v", &[Config::default()]).unwrap();
        let compiler = s
            .compiler_id(&Compiler {
                family: Family::Gcc,
                program: "gcc".into(),
                version: "12".into(),
                flags: Vec::new(),
            })
            .unwrap();
        let key = Key {
            variant,
            machine,
            compiler,
            size: Size::Mini,
            threads: 1,
        };
        let m = Measurement {
            status: Status::Ok,
            detail: String::new(),
            compile_seconds: 0.0,
            timing: None,
        };
        s.record(&key, &m).unwrap();
        assert_eq!(s.measured().unwrap()[0].configs, [Config::default()]);
        for (sql, what) in [
            ("UPDATE measurements SET size = 'huge'", "huge"),
            (
                "UPDATE measurements SET size = 'mini', status = 'fine'",
                "fine",
            ),
            (
                "UPDATE measurements SET status = 'ok'; UPDATE compilers SET name = 'icc'",
                "icc",
            ),
            // A paper configuration in readable form is not a second
            // spelling of its bit string.
            (
                "UPDATE compilers SET name = 'gcc'; UPDATE variant_configs SET config = 'omp=1'",
                "stored as its bit string (000000100000)",
            ),
            (
                "UPDATE variant_configs SET config = 'fuse=no,tile=64,speed=9'",
                "unknown key `speed`",
            ),
            ("UPDATE variant_configs SET config = '0101'", "0101"),
        ] {
            s.conn.execute_batch(sql).unwrap();
            let e = s.measured().unwrap_err().to_string();
            assert!(e.contains(what), "{sql}: {e}");
        }
    }

    /// The shipped dataset reads as typed rows, unchanged.
    #[test]
    fn the_shipped_dataset_reads_typed() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/dataset.sqlite");
        let before = std::fs::read(&path).unwrap();
        let s = Store::open_read_only(&path).unwrap();
        let rows = s.measured().unwrap();
        assert!(rows.len() > 10_000, "{}", rows.len());
        assert!(rows.iter().all(|m| m.size == Size::Medium));
        assert!(rows.iter().any(|m| m.family == Family::Clang));
        assert!(rows.iter().all(|m| m.original == m.configs.is_empty()));
        drop(s);
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
}
