//! Campaigns on a Slurm cluster (`collect --slurm N`): a job array of N
//! tasks, each measuring one shard of the campaign on a whole node
//! (`--exclusive`: nothing else runs beside a timed program), and a job
//! that merges the shards' stores once every task has succeeded.
//!
//! Everything lives in a job directory beside the store, `DB.slurm/`
//! (on a file system the nodes share): `stage/` holds a copy of the
//! polytune binary and of the corpus, which each task copies to its
//! node's local scratch before it runs (a rebuild of polytune or an edit
//! of a kernel does not change a running campaign); `shard-K.sqlite` is
//! task K's store, `logs/` their output, `task.sh` and `merge.sh` the job
//! scripts, `jobs.json` the submitted job ids. Submitting again (after a
//! task died) resubmits both jobs: every shard resumes from its store,
//! nothing measured is measured twice.
//!
//! [`status`] reads the jobs' states from `scontrol` and each shard's
//! progress from its store.

use crate::lab::store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to submit.
#[derive(Debug, Clone)]
pub struct Submission {
    /// The store the shards are merged into (must not exist).
    pub db: PathBuf,
    pub shards: usize,
    /// The polytune binary to stage.
    pub binary: PathBuf,
    /// Files and directories copied into the staged corpus: (from, to
    /// relative to the staged corpus; see [`staged`]).
    pub stage: Vec<(PathBuf, PathBuf)>,
    /// `collect`'s arguments for every task, paths already as staged
    /// (relative to the staged corpus, the tasks' working directory);
    /// [`Self::task_options`] are added per task.
    pub collect_args: Vec<String>,
    /// The options that give a task its shard and its store, from the
    /// shell words of these (`"$SLURM_ARRAY_TASK_ID/N"`, the shard's
    /// store): the command line's words, written into the task's script
    /// as they are (not quoted again).
    pub task_options: fn(shard: &str, db: &str) -> Vec<String>,
    /// Extra `sbatch` options for both jobs.
    pub sbatch: Vec<String>,
}

/// The ids of a submitted campaign (`jobs.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Submitted {
    pub dir: PathBuf,
    pub db: PathBuf,
    pub shards: usize,
    pub array: String,
    pub merge: String,
}

/// One task of the array, as `collect --status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Task {
    pub shard: usize,
    /// Slurm's state (PENDING, RUNNING, COMPLETED, FAILED, ...), or
    /// `unknown` once Slurm has forgotten the job.
    pub state: String,
    /// Measurements in the shard's store.
    pub measured: i64,
    /// Programs the shard plans to go through, once it has started.
    pub planned: Option<i64>,
}

/// The progress of a submitted campaign.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub submitted: Submitted,
    pub tasks: Vec<Task>,
    pub merge_state: String,
    /// Whether the merged store exists.
    pub merged: bool,
    /// Shards whose task ended without success (failed, cancelled, out
    /// of time, its node lost): submitting again resumes them.
    pub failed: Vec<usize>,
}

/// Why a submission or status failed.
#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    #[error(
        "Slurm is not installed here (no `{0}` on PATH)\n  help: run this on the cluster's login node (on Debian, `scripts/setup.sh` installs it; `scripts/slurm-local.sh start` runs a one-node cluster)"
    )]
    NotInstalled(String),
    #[error("`{command}` failed: {message}\n  help: is Slurm answering? (`sinfo`)")]
    Failed { command: String, message: String },
    #[error("no campaign was submitted to Slurm for {db} (no {jobs})")]
    NotSubmitted { db: String, jobs: String },
    #[error("a campaign on Slurm needs at least one shard")]
    NoShards,
    #[error(
        "{db} exists: the shards of a campaign on Slurm are merged into a new store\n  help: name another store"
    )]
    Exists { db: String },
    #[error(
        "the campaign of {db} is still running (jobs {array} and {merge})\n  help: follow its status, or `scancel {array} {merge}` first"
    )]
    Running {
        db: String,
        array: String,
        merge: String,
    },
    #[error(
        "{dir} holds a campaign of {submitted} shards, not {asked}\n  help: submit it again with {submitted} shards, or name another store"
    )]
    OtherShards {
        dir: String,
        submitted: usize,
        asked: usize,
    },
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error(transparent)]
    Store(#[from] crate::lab::store::StoreError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SlurmError + '_ {
    move |error| SlurmError::Io {
        path: path.display().to_string(),
        error,
    }
}

/// The job directory of a store: `DB.slurm` beside it.
pub(crate) fn job_dir(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".slurm");
    PathBuf::from(name)
}

/// Runs a Slurm command; its standard output.
fn slurm(program: &str, args: &[String]) -> Result<String, SlurmError> {
    let out = Command::new(program).args(args).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            SlurmError::NotInstalled(program.into())
        } else {
            SlurmError::Failed {
                command: program.into(),
                message: e.to_string(),
            }
        }
    })?;
    if !out.status.success() {
        return Err(SlurmError::Failed {
            command: format!("{program} {}", shell_words::join(args)),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Where a path given on the command line is staged, relative to the
/// staged corpus: a relative path where it is, any other below `abs/`
/// by its absolute path.
pub fn staged(path: &Path) -> PathBuf {
    use std::path::Component;
    if path
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return path.to_path_buf();
    }
    let full = std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf());
    Path::new("abs").join(full.strip_prefix("/").unwrap_or(&full))
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), SlurmError> {
    if from.is_dir() {
        std::fs::create_dir_all(to).map_err(io(to))?;
        for e in std::fs::read_dir(from).map_err(io(from))? {
            let e = e.map_err(io(from))?;
            copy_tree(&e.path(), &to.join(e.file_name()))?;
        }
    } else {
        if let Some(p) = to.parent() {
            std::fs::create_dir_all(p).map_err(io(p))?;
        }
        std::fs::copy(from, to).map_err(io(from))?;
    }
    Ok(())
}

/// Stages the binary and corpus, writes the job scripts and submits
/// them: the array, then the merge job that waits for it.
pub fn submit(s: &Submission) -> Result<Submitted, SlurmError> {
    refuse(s)?;
    // Slurm answers before anything is staged.
    slurm("sbatch", &["--version".to_string()])?;
    let db = absolute(&s.db)?;
    let dir = job_dir(&db);
    check_previous(s, &dir)?;
    let stage = stage(s, &dir)?;
    let (task, merge) = scripts(s, &dir, &stage, &db);
    for (name, text) in [("task.sh", &task), ("merge.sh", &merge)] {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(io(&p))?;
    }
    sbatch_all(s, dir, db)
}

/// An error when there is no shard, or the store exists already.
fn refuse(s: &Submission) -> Result<(), SlurmError> {
    if s.shards == 0 {
        return Err(SlurmError::NoShards);
    }
    if s.db.exists() {
        return Err(SlurmError::Exists {
            db: s.db.display().to_string(),
        });
    }
    Ok(())
}

/// The campaign submitted before in `dir`, if any: an error while it is
/// still running or when it had another number of shards; its merge job
/// cancelled when a task failed.
fn check_previous(s: &Submission, dir: &Path) -> Result<(), SlurmError> {
    if let Ok(old) = read_submitted(dir) {
        let running = |st: &str| ["PENDING", "RUNNING", "CONFIGURING", "COMPLETING"].contains(&st);
        let live = states(&old.array)?.iter().any(|(_, st)| running(st));
        let merge_waits = states(&old.merge)?.iter().any(|(_, st)| running(st));
        if !live && merge_waits {
            // A task failed: the merge job waits for a dependency that
            // can no longer be satisfied. It goes; the new one replaces it.
            slurm("scancel", std::slice::from_ref(&old.merge))?;
        }
        if live {
            return Err(SlurmError::Running {
                db: s.db.display().to_string(),
                array: old.array,
                merge: old.merge,
            });
        }
        if old.shards != s.shards {
            return Err(SlurmError::OtherShards {
                dir: dir.display().to_string(),
                submitted: old.shards,
                asked: s.shards,
            });
        }
    }
    Ok(())
}

/// The binary and corpus, copied afresh to `dir/stage` (its path); the
/// logs' directory made.
fn stage(s: &Submission, dir: &Path) -> Result<PathBuf, SlurmError> {
    let stage = dir.join("stage");
    if stage.exists() {
        std::fs::remove_dir_all(&stage).map_err(io(&stage))?;
    }
    std::fs::create_dir_all(dir.join("logs")).map_err(io(dir))?;
    std::fs::create_dir_all(stage.join("corpus")).map_err(io(&stage))?;
    std::fs::copy(&s.binary, stage.join("polytune")).map_err(io(&s.binary))?;
    for (from, to) in &s.stage {
        copy_tree(from, &stage.join("corpus").join(to))?;
    }
    Ok(stage)
}

/// The job scripts: the array's task, and the merge of its shards.
fn scripts(s: &Submission, dir: &Path, stage: &Path, db: &Path) -> (String, String) {
    let q = |p: &Path| shell_words::quote(&p.to_string_lossy()).into_owned();
    let n = s.shards;
    let task = format!(
        "#!/bin/bash
# A shard of a polytune campaign (written by polytune for a campaign on Slurm).
#SBATCH --job-name=polytune-collect
#SBATCH --array=1-{n}
#SBATCH --exclusive
#SBATCH --output={logs}/task-%a-job%A.out
#SBATCH --error={logs}/task-%a-job%A.err
set -euo pipefail
dir={dir}
# The binary and corpus, copied to this node's local scratch.
local=$(mktemp -d \"${{TMPDIR:-/tmp}}/polytune-stage.XXXXXX\")
trap 'rm -rf \"$local\"' EXIT
cp -r \"$dir/stage/.\" \"$local/\"
cd \"$local/corpus\"
\"$local/polytune\" collect {args} {task}
",
        logs = q(&dir.join("logs")),
        dir = q(dir),
        args = shell_words::join(&s.collect_args),
        task = (s.task_options)(
            &format!("\"$SLURM_ARRAY_TASK_ID/{n}\""),
            "\"$dir/shard-$SLURM_ARRAY_TASK_ID.sqlite\"",
        )
        .join(" "),
    );
    let shards: Vec<String> = (1..=n)
        .map(|k| q(&dir.join(format!("shard-{k}.sqlite"))))
        .collect();
    let merge = format!(
        "#!/bin/bash
# Merges the shards of a polytune campaign (written by polytune for a campaign on Slurm).
#SBATCH --job-name=polytune-merge
#SBATCH --output={logs}/merge-job%j.out
#SBATCH --error={logs}/merge-job%j.err
set -euo pipefail
{bin} store merge {shards} -o {db}
",
        logs = q(&dir.join("logs")),
        bin = q(&stage.join("polytune")),
        shards = shards.join(" "),
        db = q(db),
    );
    (task, merge)
}

/// Submits the array, then the merge job that waits for it, and records
/// them in `dir/jobs.json`.
fn sbatch_all(s: &Submission, dir: PathBuf, db: PathBuf) -> Result<Submitted, SlurmError> {
    let n = s.shards;
    let sbatch = |extra: &[String], script: &str| -> Result<String, SlurmError> {
        let mut args = vec!["--parsable".to_string()];
        args.extend(s.sbatch.iter().cloned());
        args.extend(extra.iter().cloned());
        args.push(dir.join(script).display().to_string());
        let out = slurm("sbatch", &args)?;
        // `--parsable`: the id, then `;cluster` on a federation.
        Ok(out.trim().split(';').next().unwrap_or("").to_string())
    };
    let array = sbatch(&[], "task.sh")?;
    let merge = sbatch(&[format!("--dependency=afterok:{array}")], "merge.sh")?;
    let submitted = Submitted {
        dir: dir.clone(),
        db,
        shards: n,
        array,
        merge,
    };
    let p = dir.join("jobs.json");
    std::fs::write(
        &p,
        serde_json::to_string_pretty(&submitted).expect("plain data"),
    )
    .map_err(io(&p))?;
    Ok(submitted)
}

fn absolute(p: &Path) -> Result<PathBuf, SlurmError> {
    std::path::absolute(p).map_err(io(p))
}

fn read_submitted(dir: &Path) -> Result<Submitted, SlurmError> {
    let p = dir.join("jobs.json");
    let text = std::fs::read_to_string(&p).map_err(io(&p))?;
    serde_json::from_str(&text).map_err(|e| SlurmError::Io {
        path: p.display().to_string(),
        error: std::io::Error::other(e),
    })
}

/// (array task id or none, state) of every job of `id` Slurm still knows.
fn states(id: &str) -> Result<Vec<(Option<usize>, String)>, SlurmError> {
    let out = match slurm(
        "scontrol",
        &["-o".into(), "show".into(), "job".into(), id.into()],
    ) {
        Ok(o) => o,
        // Forgotten (past MinJobAge): no state to tell.
        Err(SlurmError::Failed { message, .. }) if message.contains("Invalid job id") => {
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    Ok(out
        .lines()
        .filter_map(|line| {
            let field = |name: &str| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
            };
            let state = field("JobState")?.to_string();
            // A pending array's remaining tasks are one line: 1-3 or 2,3.
            let tasks: Vec<Option<usize>> = match field("ArrayTaskId") {
                None => vec![None],
                Some(t) => expand(t).into_iter().map(Some).collect(),
            };
            Some(tasks.into_iter().map(move |t| (t, state.clone())))
        })
        .flatten()
        .collect())
}

/// `1-3,5` (with an optional `%limit`) as its numbers.
fn expand(spec: &str) -> Vec<usize> {
    let spec = spec.split('%').next().unwrap_or("");
    spec.split(',')
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                (Ok(a), Ok(b)) => (a..=b).collect(),
                _ => Vec::new(),
            },
            None => part.parse().ok().into_iter().collect(),
        })
        .collect()
}

/// The progress of the campaign submitted for `db`.
pub fn status(db: &Path) -> Result<Status, SlurmError> {
    let dir = job_dir(&absolute(db)?);
    let submitted = read_submitted(&dir).map_err(|_| SlurmError::NotSubmitted {
        db: db.display().to_string(),
        jobs: dir.join("jobs.json").display().to_string(),
    })?;
    let array = states(&submitted.array)?;
    let merge_state = states(&submitted.merge)?
        .into_iter()
        .next()
        .map_or_else(|| "unknown".to_string(), |(_, s)| s);
    let mut tasks = Vec::new();
    for k in 1..=submitted.shards {
        let state = array
            .iter()
            .find(|(t, _)| *t == Some(k))
            .map_or_else(|| "unknown".to_string(), |(_, s)| s.clone());
        let p = dir.join(format!("shard-{k}.sqlite"));
        // A shard's store that its task is still creating (the file is
        // there, its schema not yet) reads as nothing measured yet.
        let read = |p: &Path| -> Result<(i64, Option<i64>), StoreError> {
            let s = Store::open_read_only(p)?;
            Ok((
                s.count("measurements")?,
                s.meta("planned")?.and_then(|v| v.parse().ok()),
            ))
        };
        let (measured, planned) = if p.exists() {
            read(&p).unwrap_or((0, None))
        } else {
            (0, None)
        };
        tasks.push(Task {
            shard: k,
            state,
            measured,
            planned,
        });
    }
    Ok(Status {
        failed: tasks
            .iter()
            .filter(|t| {
                ![
                    "PENDING",
                    "RUNNING",
                    "CONFIGURING",
                    "COMPLETING",
                    "COMPLETED",
                    "unknown",
                ]
                .contains(&t.state.as_str())
            })
            .map(|t| t.shard)
            .collect(),
        merged: submitted.db.exists(),
        submitted,
        tasks,
        merge_state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_task_lists_expand() {
        assert_eq!(expand("1-3"), [1, 2, 3]);
        assert_eq!(expand("2,4-5%1"), [2, 4, 5]);
        assert_eq!(expand("7"), [7]);
        assert!(expand("x").is_empty());
    }

    #[test]
    fn absolute_paths_are_staged_below_abs() {
        assert_eq!(
            staged(Path::new("polybench/a.c")),
            Path::new("polybench/a.c")
        );
        assert_eq!(staged(Path::new("/src/k/a.c")), Path::new("abs/src/k/a.c"));
        assert_eq!(
            job_dir(Path::new("/x/runs.sqlite")),
            Path::new("/x/runs.sqlite.slurm")
        );
    }
}
