//! Recording: machines, compilers, kernels, variants with the
//! configurations that produce them, measurements with their samples, and
//! features. Each write is its own transaction.

use super::{Key, Machine, Store, StoreError};
use crate::config::Config;
use crate::lab::characterize::Backend;
use crate::lab::compiler::Compiler;
use crate::lab::size::Size;
use crate::lab::verify::Measurement;
use rusqlite::{OptionalExtension, ToSql, params};

/// What `variant_configs` holds for an original program in place of a
/// configuration.
pub(super) const ORIGINAL: &str = "original";

impl Store {
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
            params![c.family, c.version, flags],
        )?;
        Ok(self.conn.query_row(
            "SELECT id FROM compilers WHERE name = ?1 AND version = ?2 AND flags = ?3",
            params![c.family, c.version, flags],
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

    /// Registers a kernel's original program.
    pub fn original_id(&mut self, kernel: i64, code_hash: &str) -> Result<i64, StoreError> {
        self.insert_variant(kernel, code_hash, true, &[ORIGINAL])
    }

    /// Registers a variant and the configurations that produce it.
    pub fn variant_id(
        &mut self,
        kernel: i64,
        code_hash: &str,
        configs: &[Config],
    ) -> Result<i64, StoreError> {
        self.insert_variant(kernel, code_hash, false, configs)
    }

    fn insert_variant<C: ToSql>(
        &mut self,
        kernel: i64,
        code_hash: &str,
        original: bool,
        configs: &[C],
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

    /// Writes one measurement and its samples atomically.
    pub fn record(&mut self, k: &Key, m: &Measurement) -> Result<(), StoreError> {
        self.record_against(k, m, None)
    }

    /// Writes a variant's measurement with the median of the original
    /// timed in the same batch, which its speedup is relative to.
    pub fn record_against(
        &mut self,
        k: &Key,
        m: &Measurement,
        baseline: Option<f64>,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        // A measurement replaced takes its samples with it (they refer to
        // it: the replacement would break the reference).
        tx.execute(
            "DELETE FROM samples WHERE measurement_id IN (SELECT id FROM measurements WHERE variant_id = ?1 AND machine_id = ?2 AND compiler_id = ?3 AND size = ?4 AND threads = ?5)",
            params![k.variant, k.machine, k.compiler, k.size, k.threads],
        )?;
        tx.execute(
            "INSERT OR REPLACE INTO measurements (variant_id, machine_id, compiler_id, size, threads, status, detail, compile_seconds, median, spread, baseline)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                k.variant,
                k.machine,
                k.compiler,
                k.size,
                k.threads,
                m.status,
                m.detail.chars().take(4000).collect::<String>(),
                m.compile_seconds,
                m.timing.as_ref().map(|t| t.median),
                m.timing.as_ref().map(|t| t.spread),
                baseline,
            ],
        )?;
        let id = tx.last_insert_rowid();
        if let Some(t) = &m.timing {
            insert_samples(&tx, id, &t.samples)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Replaces a stored variant's timing with one confirmed in `rounds`
    /// rounds interleaved with its original (`baseline`: the original's
    /// median in those rounds); the campaign's median and baseline stay
    /// in the measurement's detail, its samples are replaced.
    pub fn record_confirmation(
        &mut self,
        k: &Key,
        t: &crate::lab::runner::Timing,
        baseline: f64,
        rounds: usize,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        let (id, median, before): (i64, Option<f64>, Option<f64>) = tx.query_row(
            "SELECT id, median, baseline FROM measurements WHERE variant_id = ?1 AND machine_id = ?2 AND compiler_id = ?3 AND size = ?4 AND threads = ?5",
            params![k.variant, k.machine, k.compiler, k.size, k.threads],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let shown = |x: Option<f64>| x.map_or("none".to_string(), |x| format!("{x:.6}"));
        let detail = format!(
            "{} {rounds} rounds interleaved with the original; the campaign's median {} s against a baseline of {} s",
            super::CONFIRMED,
            shown(median),
            shown(before)
        );
        tx.execute(
            "UPDATE measurements SET median = ?2, spread = ?3, baseline = ?4, detail = ?5, measured_at = datetime('now') WHERE id = ?1",
            params![id, t.median, t.spread, baseline, detail],
        )?;
        tx.execute("DELETE FROM samples WHERE measurement_id = ?1", params![id])?;
        insert_samples(&tx, id, &t.samples)?;
        tx.commit()?;
        Ok(())
    }

    /// Stores a variant's features (`names`, comma-separated in the
    /// table, and their values) as computed on machine `machine` at
    /// `size` for `threads` threads, replacing any before.
    pub fn record_variant_features(
        &mut self,
        variant: i64,
        machine: i64,
        size: Size,
        threads: i64,
        names: &[String],
        x: &[f64],
    ) -> Result<(), StoreError> {
        let x = serde_json::to_string(x).map_err(|e| StoreError::Io(e.to_string()))?;
        self.conn.execute(
            "INSERT OR REPLACE INTO variant_features (variant_id, machine_id, size, threads, names, x) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![variant, machine, size, threads, names.join(","), x],
        )?;
        Ok(())
    }

    /// Sets a value of the `meta` table.
    pub fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
            params![key, value],
        )?;
        Ok(())
    }

    /// Stores a kernel's feature vector atomically.
    pub fn record_features(
        &mut self,
        kernel: i64,
        backend: Backend,
        size: Size,
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
}

/// A measurement's samples, in order.
fn insert_samples(
    tx: &rusqlite::Transaction<'_>,
    id: i64,
    samples: &[f64],
) -> Result<(), StoreError> {
    for (i, s) in samples.iter().enumerate() {
        tx.execute(
            "INSERT INTO samples (measurement_id, k, seconds) VALUES (?1, ?2, ?3)",
            params![id, i as i64, s],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::compiler::Family;
    use crate::lab::verify::Status;
    use rusqlite::Connection;

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
    fn a_variant_measured_again_is_replaced_with_its_samples_and_features() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("f.sqlite")).unwrap();
        let machine = s.machine_id(&Machine::this()).unwrap();
        let k = s.kernel_id("mvt.c", "abc").unwrap();
        let gcc = Compiler::detect(Family::Gcc, None).unwrap();
        let compiler = s.compiler_id(&gcc).unwrap();
        let original = s.original_id(k, "o").unwrap();
        let config: Config = "fuse=max,tile=32x32x32".parse().unwrap();
        let variant = s.variant_id(k, "v", &[config]).unwrap();
        let names = vec!["a".to_string(), "b".to_string()];
        let timed = |median: f64| Measurement {
            status: Status::Ok,
            detail: String::new(),
            compile_seconds: 0.1,
            timing: Some(crate::lab::runner::Timing {
                samples: vec![median, median],
                median,
                spread: 0.0,
            }),
        };
        for (baseline, v_median) in [(2.0, 1.0), (3.0, 0.5)] {
            for (id, median, x) in [
                (original, baseline, [1.0, 2.0]),
                (variant, v_median, [3.0, 4.0]),
            ] {
                let key = Key {
                    variant: id,
                    machine,
                    compiler,
                    size: Size::Mini,
                    threads: 2,
                };
                s.record_against(&key, &timed(median), Some(baseline))
                    .unwrap();
                s.record_variant_features(id, machine, Size::Mini, 2, &names, &x)
                    .unwrap();
            }
        }
        assert_eq!(s.count("measurements").unwrap(), 2);
        assert_eq!(s.count("samples").unwrap(), 4);
        let rows = s.featured(Family::Gcc, &names).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].config, Config::default());
        assert_eq!((rows[0].speedup, rows[0].x.clone()), (1.0, vec![1.0, 2.0]));
        assert_eq!(rows[1].config, config);
        assert_eq!((rows[1].speedup, rows[1].x.clone()), (6.0, vec![3.0, 4.0]));
        // Other features' names, or another compiler's runs: none.
        assert!(s.featured(Family::Gcc, &names[..1]).unwrap().is_empty());
        assert!(s.featured(Family::Clang, &names).unwrap().is_empty());
    }

    #[test]
    fn confirmation_replaces_a_timing_and_marks_it_in_the_ranking() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("c.sqlite")).unwrap();
        let machine = s.machine_id(&Machine::this()).unwrap();
        let k = s.kernel_id("gemm", "abc").unwrap();
        let gcc = Compiler::detect(Family::Gcc, None).unwrap();
        let compiler = s.compiler_id(&gcc).unwrap();
        let key = |variant| Key {
            variant,
            machine,
            compiler,
            size: Size::Mini,
            threads: 2,
        };
        let timed = |median: f64| Measurement {
            status: Status::Ok,
            detail: String::new(),
            compile_seconds: 0.1,
            timing: Some(crate::lab::runner::Timing {
                samples: vec![median; 3],
                median,
                spread: 0.0,
            }),
        };
        let original = s.original_id(k, "abc").unwrap();
        s.record(&key(original), &timed(1.0)).unwrap();
        let bits = ["010000000000", "110000000000", "000000100000"];
        let mut ids = Vec::new();
        for (i, (b, median)) in bits.iter().zip([0.5, 0.25, 0.4]).enumerate() {
            let v = s
                .variant_id(k, &format!("h{i}"), &[Config::from_bits(b).unwrap()])
                .unwrap();
            // The first is timed against a baseline of its own; the
            // others have none stored and are ranked against the
            // original's median.
            let base = (i == 0).then_some(2.0);
            s.record_against(&key(v), &timed(median), base).unwrap();
            ids.push(v);
        }
        let failed = s.variant_id(k, "bad", &[Config::default()]).unwrap();
        let wrong = Measurement {
            status: Status::WrongOutput,
            ..timed(0.01)
        };
        s.record(&key(failed), &wrong).unwrap();
        let r = s.ranked(k, &key(original)).unwrap();
        let order: Vec<(i64, f64, bool)> = r
            .iter()
            .map(|r| (r.variant, r.speedup, r.confirmed))
            .collect();
        assert_eq!(
            order,
            vec![
                (ids[0], 4.0, false),
                (ids[1], 4.0, false),
                (ids[2], 2.5, false)
            ],
            "fastest first, ties by id; the failed variant is not ranked"
        );
        let t = crate::lab::runner::Timing {
            samples: vec![0.9, 1.0, 1.1],
            median: 1.0,
            spread: 0.2,
        };
        s.record_confirmation(&key(ids[0]), &t, 1.5, 3).unwrap();
        let r = s.ranked(k, &key(original)).unwrap();
        assert_eq!(
            (r[0].variant, r[0].speedup, r[0].confirmed),
            (ids[1], 4.0, false)
        );
        assert_eq!(
            (r[2].variant, r[2].speedup, r[2].confirmed),
            (ids[0], 1.5, true)
        );
        let (detail, n): (String, i64) = s
            .conn
            .query_row(
                "SELECT detail, (SELECT COUNT(*) FROM samples WHERE measurement_id = m.id) FROM measurements m WHERE variant_id = ?1",
                [ids[0]],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(n, 3, "the confirmed samples replace the campaign's");
        assert!(
            detail.starts_with("confirmed: 3 rounds")
                && detail.contains("median 0.500000 s against a baseline of 2.000000 s"),
            "{detail}"
        );
        let learned: Vec<_> = s
            .measured()
            .unwrap()
            .into_iter()
            .filter(|m| m.variant_id == ids[0])
            .map(|m| (m.median, m.baseline))
            .collect();
        assert_eq!(
            learned,
            vec![(Some(1.0), Some(1.5))],
            "learning sees the confirmed timing"
        );
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
                &[
                    Config::from_bits("010000000000").unwrap(),
                    Config::from_bits("110000000000").unwrap(),
                ],
            )
            .unwrap();
        assert_eq!(v, s.variant_id(k, "h1", &[]).unwrap());
        let gcc = Compiler::detect(Family::Gcc, None).unwrap();
        let key = Key {
            variant: v,
            machine: m,
            compiler: s.compiler_id(&gcc).unwrap(),
            size: Size::Mini,
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
