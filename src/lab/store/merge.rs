//! Merging stores (`polytune store merge`): the shards of a campaign, or
//! campaigns of several machines, into one new store.
//!
//! The result is the union of the inputs' machines, compilers, kernels,
//! variants (with every configuration that produces them), measurements
//! (with their samples) and features. Rows are matched by what they are,
//! never by their ids: a machine by its processor model and core count (as
//! a campaign matches one), a compiler by name, version and flags, a
//! kernel by name and source hash, a variant by its kernel and code hash,
//! a measurement by its variant, machine, compiler, size and threads. A
//! measurement already merged is kept once, as the first input has it.
//!
//! Refused before anything is written: inputs of different tables
//! (schema version 1 with a later one; versions 2 and 3 differ only in
//! the configurations they may hold, and merge), a kernel whose source
//! differs between inputs (two campaigns of different sources must not be
//! mixed), a program that is an original in one input and a variant in
//! another, a configuration no build writes, and an output that exists.
//! The output is built beside its final name and renamed into place once
//! complete.

use super::{SCHEMA_VERSION, Store, StoreError, atomic};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// What a merge wrote.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MergeReport {
    pub output: PathBuf,
    pub inputs: usize,
    pub machines: i64,
    pub kernels: i64,
    pub variants: i64,
    pub measurements: i64,
    /// Measurements found in more than one input (kept once).
    pub duplicates: usize,
    /// Features found in more than one input with different values (the
    /// first input's kept).
    pub differing_features: usize,
}

/// Merges `inputs` into the new store `out`.
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<MergeReport, StoreError> {
    if std::fs::symlink_metadata(out).is_ok() {
        return Err(StoreError::Merge(format!(
            "{} exists; a merge writes a new store\n  help: name another -o, or remove it first",
            out.display()
        )));
    }
    let stores: Vec<(String, Store)> = inputs
        .iter()
        .map(|p| Ok((p.display().to_string(), Store::open_read_only(p)?)))
        .collect::<Result<_, StoreError>>()?;
    check(&stores)?;
    let mut report = MergeReport {
        output: out.to_path_buf(),
        inputs: inputs.len(),
        ..MergeReport::default()
    };
    atomic::replace_with(out, |tmp, _| {
        let mut dst = Store::open(tmp).map_err(std::io::Error::other)?;
        let copied = (|| {
            for (_, src) in &stores {
                copy(src, &mut dst, &mut report)?;
            }
            report.machines = dst.count("machines")?;
            report.kernels = dst.count("kernels")?;
            report.variants = dst.count("variants")?;
            report.measurements = dst.count("measurements")?;
            dst.conn
                .pragma_update(None, "journal_mode", "DELETE")
                .map_err(StoreError::from)
        })();
        drop(dst);
        for side in ["-wal", "-shm", "-journal"] {
            let mut p = tmp.as_os_str().to_owned();
            p.push(side);
            let _ = std::fs::remove_file(PathBuf::from(p));
        }
        copied.map_err(std::io::Error::other)
    })
    .map_err(|e| StoreError::Io(e.to_string()))?;
    Ok(report)
}

/// The refusals that come before anything is written.
fn check(stores: &[(String, Store)]) -> Result<(), StoreError> {
    // Versions 2 and 3 have the same tables (3 only widened what a
    // configuration's text may be): they merge, into version 3.
    let layout = |v: i64| v.min(2);
    let mut versions: BTreeMap<i64, &str> = BTreeMap::new();
    for (path, s) in stores {
        let v = s
            .meta("schema_version")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(SCHEMA_VERSION);
        versions.entry(v).or_insert(path);
    }
    if versions
        .keys()
        .map(|&v| layout(v))
        .collect::<BTreeSet<_>>()
        .len()
        > 1
    {
        let list: Vec<String> = versions
            .iter()
            .map(|(v, p)| format!("{p} has schema version {v}"))
            .collect();
        return Err(StoreError::Merge(format!(
            "the stores have different schema versions: {}\n  help: open each older one once with this polytune (`polytune collect` upgrades it), then merge",
            list.join(", ")
        )));
    }
    // Kernel name -> (the first input that has it, its source hashes).
    let mut kernels: HashMap<String, (&str, BTreeSet<String>)> = HashMap::new();
    // (kernel name, source hash, code hash) -> (input, original?).
    let mut programs: HashMap<(String, String, String), (&str, bool)> = HashMap::new();
    for (path, s) in stores {
        let mut here: HashMap<String, BTreeSet<String>> = HashMap::new();
        let mut stmt = s.conn.prepare(
            "SELECT k.name, k.source_hash, v.code_hash, v.original FROM kernels k LEFT JOIN variants v ON v.kernel_id = k.id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let (name, hash): (String, String) = (r.get(0)?, r.get(1)?);
            here.entry(name.clone()).or_default().insert(hash.clone());
            if let Some(code) = r.get::<_, Option<String>>(2)? {
                let original = r.get::<_, i64>(3)? != 0;
                let (first, was) = *programs
                    .entry((name.clone(), hash, code.clone()))
                    .or_insert((path, original));
                if was != original {
                    return Err(StoreError::Merge(format!(
                        "program {code} of kernel `{name}` is {} in {first} but {} in {path}; nothing was written",
                        if was { "the original" } else { "a variant" },
                        if original {
                            "the original"
                        } else {
                            "a variant"
                        },
                    )));
                }
            }
        }
        for (name, hashes) in here {
            match kernels.get(&name) {
                Some((first, theirs)) if *theirs != hashes => {
                    let show = |h: &BTreeSet<String>| {
                        h.iter()
                            .map(|x| x.chars().take(12).collect::<String>())
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    return Err(StoreError::Merge(format!(
                        "kernel `{name}` has source hash {} in {first} but {} in {path}: these stores measured different sources; nothing was written\n  help: merge only stores of the same campaign (the same kernel files)",
                        show(theirs),
                        show(&hashes)
                    )));
                }
                Some(_) => {}
                None => {
                    kernels.insert(name, (path, hashes));
                }
            }
        }
    }
    Ok(())
}

/// Copies every row of `src` that `dst` lacks, in one transaction.
fn copy(src: &Store, dst: &mut Store, report: &mut MergeReport) -> Result<(), StoreError> {
    let tx = dst.conn.transaction()?;
    let machines = copy_machines(src, &tx)?;
    let compilers = copy_by_value(
        src,
        &tx,
        "SELECT id, name, version, flags FROM compilers",
        "INSERT OR IGNORE INTO compilers (name, version, flags) VALUES (?1, ?2, ?3)",
        "SELECT id FROM compilers WHERE name = ?1 AND version = ?2 AND flags = ?3",
    )?;
    let kernels = copy_by_value(
        src,
        &tx,
        "SELECT id, name, source_hash FROM kernels",
        "INSERT OR IGNORE INTO kernels (name, source_hash) VALUES (?1, ?2)",
        "SELECT id FROM kernels WHERE name = ?1 AND source_hash = ?2",
    )?;
    let variants = copy_variants(src, &tx, &kernels)?;
    copy_measurements(src, &tx, [&variants, &machines, &compilers], report)?;
    copy_features(src, &tx, &kernels, report)?;
    tx.commit()?;
    Ok(())
}

/// The machines, matched by CPU and cores: `src`'s ids to `dst`'s.
fn copy_machines(src: &Store, tx: &rusqlite::Connection) -> Result<HashMap<i64, i64>, StoreError> {
    let mut machines = HashMap::new();
    let mut stmt = src
        .conn
        .prepare("SELECT id, cpu, cores, os FROM machines")?;
    let rows: Vec<(i64, String, i64, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<Result<_, _>>()?;
    for (id, cpu, cores, os) in rows {
        let found: Option<i64> = tx
            .query_row(
                "SELECT id FROM machines WHERE cpu = ?1 AND cores = ?2 ORDER BY id LIMIT 1",
                params![cpu, cores],
                |r| r.get(0),
            )
            .optional()?;
        let to = match found {
            Some(to) => to,
            None => {
                tx.execute(
                    "INSERT INTO machines (cpu, cores, os) VALUES (?1, ?2, ?3)",
                    params![cpu, cores, os],
                )?;
                tx.last_insert_rowid()
            }
        };
        machines.insert(id, to);
    }
    Ok(machines)
}

/// Rows identified by text columns: inserted unless present, then their
/// id in `dst` looked up; `src`'s ids to `dst`'s.
fn copy_by_value(
    src: &Store,
    tx: &rusqlite::Connection,
    select: &str,
    insert: &str,
    lookup: &str,
) -> Result<HashMap<i64, i64>, StoreError> {
    let mut stmt = src.conn.prepare(select)?;
    let n = stmt.column_count();
    let rows: Vec<(i64, Vec<rusqlite::types::Value>)> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                (1..n).map(|i| r.get(i)).collect::<Result<_, _>>()?,
            ))
        })?
        .collect::<Result<_, _>>()?;
    let mut map = HashMap::new();
    for (id, values) in rows {
        tx.execute(insert, rusqlite::params_from_iter(&values))?;
        let to: i64 = tx.query_row(lookup, rusqlite::params_from_iter(&values), |r| r.get(0))?;
        map.insert(id, to);
    }
    Ok(map)
}

/// The variants and their configurations (read and written as this build
/// writes them): `src`'s ids to `dst`'s.
fn copy_variants(
    src: &Store,
    tx: &rusqlite::Connection,
    kernels: &HashMap<i64, i64>,
) -> Result<HashMap<i64, i64>, StoreError> {
    let mut variants = HashMap::new();
    let mut stmt = src
        .conn
        .prepare("SELECT id, kernel_id, code_hash, original FROM variants")?;
    let rows: Vec<(i64, i64, String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<Result<_, _>>()?;
    for (id, kernel, code, original) in rows {
        let kernel = kernels[&kernel];
        tx.execute(
            "INSERT OR IGNORE INTO variants (kernel_id, code_hash, original) VALUES (?1, ?2, ?3)",
            params![kernel, code, original],
        )?;
        let to: i64 = tx.query_row(
            "SELECT id FROM variants WHERE kernel_id = ?1 AND code_hash = ?2",
            params![kernel, code],
            |r| r.get(0),
        )?;
        variants.insert(id, to);
    }
    let mut stmt = src
        .conn
        .prepare("SELECT variant_id, config FROM variant_configs")?;
    let rows: Vec<(i64, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (v, text) in rows {
        // Read as configurations and written as this build writes
        // them: a text no configuration has stops the merge (nothing
        // is written), and a readable form another build spelled
        // differently becomes this build's one row.
        let config = if text == super::write::ORIGINAL {
            text
        } else {
            let c = super::sql::stored_config(&text).map_err(|e| {
                StoreError::Merge(format!(
                    "variant {v} of {}: {e}; nothing was written",
                    src.path().unwrap_or_else(|| "a store".into())
                ))
            })?;
            super::sql::stored_text(&c)
        };
        tx.execute(
            "INSERT OR IGNORE INTO variant_configs (variant_id, config) VALUES (?1, ?2)",
            params![variants[&v], config],
        )?;
    }
    Ok(variants)
}

/// The measurements `dst` lacks, with their samples (the others counted
/// as duplicates), by `dst`'s ids of variants, machines and compilers.
fn copy_measurements(
    src: &Store,
    tx: &rusqlite::Connection,
    [variants, machines, compilers]: [&HashMap<i64, i64>; 3],
    report: &mut MergeReport,
) -> Result<(), StoreError> {
    let mut stmt = src.conn.prepare(&format!(
        "SELECT id, variant_id, machine_id, compiler_id, size, threads, status, detail, compile_seconds, median, spread, measured_at, {}
         FROM measurements ORDER BY id",
        if src.has_baseline { "baseline" } else { "NULL" }
    ))?;
    let mut samples = src
        .conn
        .prepare("SELECT k, seconds FROM samples WHERE measurement_id = ?1 ORDER BY k")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let inserted = tx.execute(
            "INSERT OR IGNORE INTO measurements (variant_id, machine_id, compiler_id, size, threads, status, detail, compile_seconds, median, spread, measured_at, baseline)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                variants[&r.get::<_, i64>(1)?],
                machines[&r.get::<_, i64>(2)?],
                compilers[&r.get::<_, i64>(3)?],
                r.get::<_, String>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, String>(7)?,
                r.get::<_, f64>(8)?,
                r.get::<_, Option<f64>>(9)?,
                r.get::<_, Option<f64>>(10)?,
                r.get::<_, String>(11)?,
                r.get::<_, Option<f64>>(12)?,
            ],
        )?;
        if inserted == 0 {
            report.duplicates += 1;
            continue;
        }
        let to = tx.last_insert_rowid();
        let runs: Vec<(i64, f64)> = samples
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (k, s) in runs {
            tx.execute(
                "INSERT INTO samples (measurement_id, k, seconds) VALUES (?1, ?2, ?3)",
                params![to, k, s],
            )?;
        }
    }
    Ok(())
}

/// The features `dst` lacks (those it has with another value counted).
fn copy_features(
    src: &Store,
    tx: &rusqlite::Connection,
    kernels: &HashMap<i64, i64>,
    report: &mut MergeReport,
) -> Result<(), StoreError> {
    let mut stmt = src
        .conn
        .prepare("SELECT kernel_id, backend, size, name, value FROM features")?;
    let rows: Vec<(i64, String, String, String, f64)> = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?
        .collect::<Result<_, _>>()?;
    for (kernel, backend, size, name, value) in rows {
        let kernel = kernels[&kernel];
        let have: Option<f64> = tx
            .query_row(
                "SELECT value FROM features WHERE kernel_id = ?1 AND backend = ?2 AND size = ?3 AND name = ?4",
                params![kernel, backend, size, name],
                |r| r.get(0),
            )
            .optional()?;
        match have {
            Some(v) if v != value => report.differing_features += 1,
            Some(_) => {}
            None => {
                tx.execute(
                    "INSERT INTO features (kernel_id, backend, size, name, value) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![kernel, backend, size, name, value],
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{Key, Machine};
    use super::*;
    use crate::config::Config;
    use crate::lab::compiler::{Compiler, Family};
    use crate::lab::runner::Timing;
    use crate::lab::size::Size;
    use crate::lab::verify::{Measurement, Status};

    /// A store with one variant of `gemm` measured on `machine`.
    fn one(path: &Path, machine: &Machine, median: f64) {
        let mut s = Store::open(path).unwrap();
        let m = s.machine_id(machine).unwrap();
        let k = s.kernel_id("gemm", "src").unwrap();
        let v = s.variant_id(k, "v", &[Config::default()]).unwrap();
        let c = s
            .compiler_id(&Compiler {
                family: Family::Gcc,
                program: "gcc".into(),
                version: "12".into(),
                flags: vec!["-O3".into()],
            })
            .unwrap();
        let key = Key {
            variant: v,
            machine: m,
            compiler: c,
            size: Size::Mini,
            threads: 2,
        };
        let timing = Timing {
            samples: vec![median; 3],
            median,
            spread: 0.0,
        };
        let meas = Measurement {
            status: Status::Ok,
            detail: String::new(),
            compile_seconds: 0.1,
            timing: Some(timing),
        };
        s.record_against(&key, &meas, Some(1.0)).unwrap();
        s.record_features(
            k,
            crate::lab::characterize::Backend::Cachegrind,
            Size::Small,
            &[("Ir".into(), median)],
        )
        .unwrap();
    }

    #[test]
    fn machines_stay_apart_and_a_duplicate_is_kept_once() {
        let dir = tempfile::tempdir().unwrap();
        let a = Machine {
            cpu: "EPYC".into(),
            cores: 2,
            os: "Linux 6.1".into(),
        };
        let b = Machine {
            cores: 16,
            ..a.clone()
        };
        let (pa, pb, pa2) = (
            dir.path().join("a.sqlite"),
            dir.path().join("b.sqlite"),
            dir.path().join("a2.sqlite"),
        );
        one(&pa, &a, 0.5);
        one(&pb, &b, 0.25);
        // The same measurement again, timed differently.
        one(&pa2, &a, 0.75);
        let out = dir.path().join("m.sqlite");
        let r = merge(&[pa.clone(), pb, pa2], &out).unwrap();
        assert_eq!((r.machines, r.kernels, r.variants), (2, 1, 1));
        assert_eq!((r.measurements, r.duplicates), (2, 1));
        assert_eq!(r.differing_features, 2);
        let s = Store::open_read_only(&out).unwrap();
        let mut medians: Vec<f64> = s
            .measured()
            .unwrap()
            .iter()
            .map(|m| m.median.unwrap())
            .collect();
        medians.sort_by(f64::total_cmp);
        assert_eq!(medians, [0.25, 0.5], "the first input's row is kept");
        assert_eq!(s.count("samples").unwrap(), 6);
        assert_eq!(s.count("features").unwrap(), 1);
        assert!(
            s.measured()
                .unwrap()
                .iter()
                .all(|m| m.baseline == Some(1.0))
        );
        drop(s);
        // The output exists now: refused.
        let e = merge(&[pa], &out).unwrap_err().to_string();
        assert!(e.contains("exists"), "{e}");
    }

    /// A store of schema version 2 (bit strings only) and one of this
    /// build's with configurations beyond the paper's space merge: a
    /// variant keeps every configuration of either, in the form this
    /// build writes. A version 1 store does not merge with them, and a
    /// configuration no build writes stops the merge.
    #[test]
    fn configurations_beyond_the_paper_merge_with_an_older_store() {
        let dir = tempfile::tempdir().unwrap();
        let a = Machine {
            cpu: "EPYC".into(),
            cores: 2,
            os: "Linux".into(),
        };
        let (old, new) = (dir.path().join("old.sqlite"), dir.path().join("new.sqlite"));
        one(&old, &a, 0.5);
        one(&new, &a, 0.5);
        let beyond: Config = "tile=64x64x8,red=1".parse().unwrap();
        {
            let mut s = Store::open(&new).unwrap();
            let k = s.kernel_id("gemm", "src").unwrap();
            s.variant_id(k, "v", &[beyond]).unwrap();
            s.variant_id(
                k,
                "w",
                &[beyond, Config::from_bits("000000100000").unwrap()],
            )
            .unwrap();
            let o = rusqlite::Connection::open(&old).unwrap();
            o.execute(
                "UPDATE meta SET value = '2' WHERE key = 'schema_version'",
                [],
            )
            .unwrap();
        }
        let out = dir.path().join("m.sqlite");
        let r = merge(&[old.clone(), new.clone()], &out).unwrap();
        assert_eq!((r.variants, r.measurements, r.duplicates), (2, 1, 1));
        let s = Store::open_read_only(&out).unwrap();
        assert_eq!(s.meta("schema_version").unwrap().as_deref(), Some("3"));
        assert_eq!(s.count("variant_configs").unwrap(), 4);
        assert_eq!(
            s.measured().unwrap()[0].configs,
            [Config::default(), beyond]
        );
        drop(s);
        // Version 1 lacks the baselines: not merged with later ones.
        let v1 = dir.path().join("v1.sqlite");
        std::fs::copy(&old, &v1).unwrap();
        rusqlite::Connection::open(&v1)
            .unwrap()
            .execute(
                "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
                [],
            )
            .unwrap();
        let e = merge(&[v1, new.clone()], &dir.path().join("m1.sqlite"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("different schema versions"), "{e}");
        // A foreign configuration text: refused, nothing written.
        rusqlite::Connection::open(&new)
            .unwrap()
            .execute(
                "UPDATE variant_configs SET config = 'tile=64,speed=1' WHERE config LIKE 'fuse=%'",
                [],
            )
            .unwrap();
        let bad = dir.path().join("m2.sqlite");
        let e = merge(&[old, new], &bad).unwrap_err().to_string();
        assert!(e.contains("unknown key `speed`"), "{e}");
        assert!(!bad.exists());
    }
}
