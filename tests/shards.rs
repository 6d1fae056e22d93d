//! Campaigns in shards (issue 21): a MINI campaign of three kernels run as
//! three shards and merged holds exactly what the same campaign run whole
//! holds (variants, statuses, features; timings aside); merging a shard
//! again adds nothing; conflicting stores are refused.

mod common;

use common::root;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn polytune() -> Command {
    Command::new(env!("CARGO_BIN_EXE_polytune"))
}

fn kernels() -> Vec<PathBuf> {
    ["atax", "bicg", "mvt"]
        .iter()
        .map(|k| root().join(format!("polybench/linear-algebra/{k}.c")))
        .collect()
}

/// `collect` of the three kernels into `db`, with `extra` arguments.
fn collect(db: &Path, extra: &[&str]) -> Output {
    polytune()
        .args([
            "-q",
            "collect",
            "--size",
            "mini",
            "--max-variants",
            "3",
            "--compiler",
            "gcc",
        ])
        .args(extra)
        .arg("--db")
        .arg(db)
        .args(kernels())
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What a store holds, by value and not by id, timings left out: every
/// variant with its configurations, every measurement's program,
/// compiler, machine, size, threads and status (sorted lines), and every
/// feature (sorted by kernel and name).
pub fn content(db: &Path) -> (Vec<String>, Vec<(String, f64)>) {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let mut lines = Vec::new();
    for sql in [
        "SELECT 'variant', k.name, k.source_hash, v.code_hash, v.original,
                (SELECT group_concat(config) FROM (SELECT config FROM variant_configs WHERE variant_id = v.id ORDER BY config))
         FROM variants v JOIN kernels k ON k.id = v.kernel_id",
        "SELECT 'measurement', k.name, v.code_hash, c.name, c.version, c.flags, ma.cpu, ma.cores, m.size, m.threads, m.status
         FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN kernels k ON k.id = v.kernel_id
         JOIN compilers c ON c.id = m.compiler_id JOIN machines ma ON ma.id = m.machine_id",
    ] {
        let mut stmt = c.prepare(sql).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                Ok((0..n)
                    .map(|i| match r.get::<_, rusqlite::types::Value>(i).unwrap() {
                        rusqlite::types::Value::Text(t) => t,
                        v => format!("{v:?}"),
                    })
                    .collect::<Vec<_>>()
                    .join("|"))
            })
            .unwrap();
        lines.extend(rows.map(Result::unwrap));
    }
    lines.sort();
    let mut stmt = c
        .prepare(
            "SELECT k.name || '|' || f.backend || '|' || f.size || '|' || f.name, f.value
             FROM features f JOIN kernels k ON k.id = f.kernel_id ORDER BY 1",
        )
        .unwrap();
    let features = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    (lines, features)
}

/// Two stores hold the same (`content`). The simulated counters of a
/// program depend a little on its process environment (the stack's
/// placement moves a few data accesses to other cache lines: a Slurm
/// task's environment is not the test's), so features agree within 1e-3
/// relative; everything else exactly.
fn assert_same(a: &Path, b: &Path) {
    let (la, fa) = content(a);
    let (lb, fb) = content(b);
    assert_eq!(la, lb);
    assert_eq!(fa.len(), fb.len(), "{fa:?}\n{fb:?}");
    for ((ka, va), (kb, vb)) in fa.iter().zip(&fb) {
        assert_eq!(ka, kb);
        assert!(
            (va - vb).abs() <= 1e-3 * va.abs().max(vb.abs()),
            "{ka}: {va} vs {vb}"
        );
    }
}

fn merge(inputs: &[&Path], out: &Path) -> Output {
    polytune()
        .args(["store", "merge"])
        .args(inputs)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn three_shards_merged_hold_what_the_whole_campaign_holds() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.sqlite");
    ok(&collect(&whole, &[]));
    let (expected, features) = content(&whole);
    // 3 variants + the original of 3 kernels, 15 features each.
    assert_eq!(
        expected
            .iter()
            .filter(|l| l.starts_with("measurement|"))
            .count(),
        12
    );
    assert_eq!(features.len(), 45);
    // The shards, cut by the whole campaign's costs.
    let shards: Vec<PathBuf> = (1..=3)
        .map(|k| dir.path().join(format!("shard{k}.sqlite")))
        .collect();
    let mut measured = 0;
    for (k, db) in shards.iter().enumerate() {
        let spec = format!("{}/3", k + 1);
        let costs = whole.to_str().unwrap();
        let out = ok(&collect(db, &["--shard", &spec, "--costs", costs]));
        measured += out
            .split(": ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap();
        if k == 0 {
            // A resumed shard measures the same units: nothing more.
            let again = ok(&collect(db, &["--shard", &spec, "--costs", costs]));
            assert!(again.contains(": 0 measured"), "{again}");
        }
    }
    // Every variant once, and each kernel's original in every shard that
    // measures its variants (at least once).
    assert!((12..=9 + 3 * 3).contains(&measured), "{measured}");
    // A shard's store is not another shard's.
    let other = collect(&shards[0], &["--shard", "2/3"]);
    assert_eq!(other.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&other.stderr).contains("holds shard 1/3 of a campaign, not 2/3"),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );

    let merged = dir.path().join("merged.sqlite");
    let refs: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    let out = ok(&merge(&refs, &merged));
    assert!(out.contains("3 stores merged"), "{out}");
    assert_same(&merged, &whole);

    // Merging a shard again adds nothing.
    let twice = dir.path().join("twice.sqlite");
    let out = ok(&merge(&[&merged, &shards[1], &shards[1]], &twice));
    assert!(out.contains("12 measurements"), "{out}");
    assert_eq!(content(&twice), content(&merged));

    // Into an existing file: refused, the file untouched.
    let before = std::fs::read(&twice).unwrap();
    let e = merge(&[&shards[0]], &twice);
    assert_eq!(e.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&e.stderr).contains("exists"));
    assert_eq!(std::fs::read(&twice).unwrap(), before);

    // A kernel of another source: refused, nothing written.
    let other = dir.path().join("other.sqlite");
    std::fs::copy(&merged, &other).unwrap();
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute(
            "UPDATE kernels SET source_hash = 'edited' WHERE name = 'bicg'",
            [],
        )
        .unwrap();
    let out = dir.path().join("never.sqlite");
    let e = merge(&[&merged, &other], &out);
    assert_eq!(e.status.code(), Some(1));
    let msg = String::from_utf8_lossy(&e.stderr);
    assert!(
        msg.contains("kernel `bicg` has source hash") && msg.contains("different sources"),
        "{msg}"
    );
    assert!(!out.exists());

    // Another schema version: refused.
    let old = dir.path().join("old.sqlite");
    std::fs::copy(&merged, &old).unwrap();
    rusqlite::Connection::open(&old)
        .unwrap()
        .execute(
            "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
            [],
        )
        .unwrap();
    let e = merge(&[&merged, &old], &out);
    assert_eq!(e.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&e.stderr).contains("different schema versions"),
        "{}",
        String::from_utf8_lossy(&e.stderr)
    );
    assert!(!out.exists());
}

#[test]
fn bad_input_is_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.sqlite");
    for spec in ["0/3", "4/3", "x"] {
        let out = collect(&db, &["--shard", spec]);
        assert_eq!(out.status.code(), Some(2), "{spec}");
        let msg = String::from_utf8_lossy(&out.stderr);
        assert!(
            msg.contains(&format!("`{spec}` is not a shard")),
            "{spec}: {msg}"
        );
    }
    let out = collect(&db, &["--costs", "x.sqlite"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--costs cuts shards"));
    // No Slurm on the PATH: said so, nothing staged.
    let empty = dir.path().join("bin");
    std::fs::create_dir(&empty).unwrap();
    let mut c = polytune();
    c.env("PATH", &empty)
        .args(["collect", "--slurm", "2", "--db"])
        .arg(&db)
        .args(kernels());
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(
        msg.contains("Slurm is not installed here (no `sbatch` on PATH)"),
        "{msg}"
    );
    assert!(!db.exists(), "nothing was created");
    assert!(!dir.path().join("x.sqlite.slurm").exists());
}

/// The local cluster the test started in its own directory (state,
/// spool, logs: removed with it), or `None` when one was running.
struct Cluster {
    started: Option<tempfile::TempDir>,
}

impl Cluster {
    /// `scripts/slurm-local.sh ACTION` for the cluster in `dir`.
    fn script(action: &str, dir: &Path) -> Command {
        let mut c = Command::new(root().join("scripts/slurm-local.sh"));
        c.arg(action).env("POLYTUNE_SLURM_DIR", dir);
        c
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(dir) = &self.started {
            let _ = Cluster::script("stop", dir.path()).status();
        }
    }
}

#[test]
fn a_job_array_on_the_local_cluster_merges_to_the_whole_campaign() {
    let answers = || {
        Command::new("sinfo")
            .args(["-h", "-o", "%T"])
            .output()
            .map(|o| o.status.success())
    };
    let _cluster = match answers() {
        // Not a skip: a test that cannot check what it says must fail.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            panic!("Slurm is not installed here (no sinfo): scripts/setup.sh installs it")
        }
        Ok(true) => Cluster { started: None },
        _ => {
            let dir = tempfile::tempdir().unwrap();
            let out = Cluster::script("start", dir.path()).output().unwrap();
            assert!(
                out.status.success(),
                "the local cluster does not start: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            Cluster { started: Some(dir) }
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.sqlite");
    ok(&collect(&whole, &[]));
    let merged = dir.path().join("merged.sqlite");
    let out = ok(&collect(&merged, &["--slurm", "3"]));
    assert!(out.contains("submitted job array"), "{out}");
    // The campaign of a store already submitted and running is not
    // submitted twice, nor over a store that exists.
    let again = collect(&merged, &["--slurm", "3"]);
    assert_eq!(again.status.code(), Some(1));
    let status = || -> serde_json::Value {
        let out = polytune()
            .args(["collect", "--status", "--json", "--db"])
            .arg(&merged)
            .output()
            .unwrap();
        serde_json::from_str(&ok(&out)).unwrap()
    };
    let start = std::time::Instant::now();
    loop {
        let s = status();
        assert_eq!(s["tasks"].as_array().unwrap().len(), 3, "{s}");
        let states: Vec<&str> = s["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["state"].as_str().unwrap())
            .chain([s["merge_state"].as_str().unwrap()])
            .collect();
        assert!(
            !states
                .iter()
                .any(|s| ["FAILED", "CANCELLED", "TIMEOUT"].contains(s)),
            "{s}"
        );
        if s["merged"] == true && s["merge_state"] == "COMPLETED" {
            assert!(
                s["tasks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|t| t["state"] == "COMPLETED"
                        && t["measured"].as_i64() == t["planned"].as_i64()),
                "{s}"
            );
            break;
        }
        assert!(
            start.elapsed().as_secs() < 600,
            "the array did not finish in 10 minutes: {s}"
        );
        std::thread::sleep(std::time::Duration::from_secs(2));
    }
    assert_same(&merged, &whole);
    // Submitting again over the merged store is refused.
    let e = collect(&merged, &["--slurm", "3"]);
    assert_eq!(e.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&e.stderr).contains("exists"));
}

/// The cores this test may use, as taskset names them.
fn allowed_cores() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    let mut out = Vec::new();
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
            None => out.push(part.parse().unwrap()),
        }
    }
    out
}

/// `--jobs 2` (builds in pairs between timed runs) and `--jobs 2
/// --timing-cores C` (builds beside the timed runs, on the other cores)
/// store exactly what the campaign built one variant at a time stores;
/// impossible core lists are refused before anything is measured.
#[test]
fn parallel_builds_store_what_one_at_a_time_stores() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.sqlite");
    ok(&collect(&one, &["--threads", "1"]));
    let pairs = dir.path().join("pairs.sqlite");
    ok(&collect(&pairs, &["--threads", "1", "--jobs", "2"]));
    assert_same(&one, &pairs);
    let cores = allowed_cores();
    let last = cores.last().unwrap().to_string();
    let beside = dir.path().join("beside.sqlite");
    let out = collect(
        &beside,
        &["--threads", "1", "--jobs", "2", "--timing-cores", &last],
    );
    if cores.len() > 1 {
        ok(&out);
        assert_same(&one, &beside);
    } else {
        assert!(String::from_utf8_lossy(&out.stderr).contains("none is left for the compilers"));
    }
    // Refused: every core for timing, fewer cores than threads, a core
    // that is not there, no jobs.
    let bad = dir.path().join("bad.sqlite");
    let all = format!("{}-{}", cores[0], last);
    for (args, says, code) in [
        (
            vec!["--threads", "1", "--timing-cores", all.as_str()],
            "none is left for the compilers",
            1,
        ),
        (
            vec!["--threads", "2", "--timing-cores", last.as_str()],
            "threads would share a core",
            1,
        ),
        (
            vec!["--threads", "1", "--timing-cores", "1023"],
            "are not among the cores polytune may use",
            1,
        ),
        (vec!["--timing-cores", "2-1"], "invalid core list", 2),
        (vec!["--jobs", "0"], "--jobs", 2),
    ] {
        if cores.len() == 1 && says == "none is left for the compilers" {
            continue;
        }
        let out = collect(&bad, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let (rows, _) = if bad.exists() {
        content(&bad)
    } else {
        (Vec::new(), Vec::new())
    };
    assert!(
        !rows.iter().any(|r| r.starts_with("measurement")),
        "nothing measured: {rows:?}"
    );
}
