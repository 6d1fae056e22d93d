//! Scratch directories: one per command that builds programs, with an
//! unpredictable name, private to the user (mode 0700), created without
//! following a planted link, and removed when dropped — on success, on
//! every error path, and (through `confine::clean_up_on_signals`) when
//! polytune is interrupted or terminated.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The scratch directories alive now, for removal on a signal; once
/// polytune is ending (true), no new one is kept.
static LIVE: Mutex<(Vec<PathBuf>, bool)> = Mutex::new((Vec::new(), false));

fn live() -> std::sync::MutexGuard<'static, (Vec<PathBuf>, bool)> {
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A private temporary directory, removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// Creates `polytune-PURPOSE-PID-XXXXXX` in the temporary directory
    /// (`$TMPDIR`, else /tmp); PID is polytune's process, by which
    /// [`remove_stale`] knows a directory whose owner was killed.
    pub fn new(purpose: &str) -> std::io::Result<Scratch> {
        use std::os::unix::fs::PermissionsExt;
        // Created and registered under the lock: a signal's clean-up
        // either waits for the registration or comes first and refuses
        // the directory, never one created but not yet known (it would
        // outlive polytune, which the clean-up ends at once).
        let mut l = live();
        if l.1 {
            return Err(ending());
        }
        let dir = tempfile::Builder::new()
            .prefix(&format!("polytune-{purpose}-{}-", std::process::id()))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!(
                        "cannot create a scratch directory in {}: {e}",
                        std::env::temp_dir().display()
                    ),
                )
            })?;
        l.0.push(dir.path().to_path_buf());
        Ok(Scratch { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Removed while still registered, then forgotten: a signal's
        // clean-up that comes meanwhile removes it too and ends polytune
        // only once it is gone. Forgotten first, the clean-up would not
        // know it and could end the process in the middle of this removal
        // (seen under load: a terminated campaign left a half-removed
        // scratch directory behind). The TempDir field finds it gone.
        let _ = std::fs::remove_dir_all(self.dir.path());
        live().0.retain(|p| p != self.dir.path());
    }
}

/// Removes the scratch directories that polytune processes killed
/// without a chance to clean up (SIGKILL, a power cut) left in the
/// temporary directory: those of this user whose process no longer
/// exists. Returns how many were removed. A directory whose process id
/// was reused by a live process is kept (it goes once that one ends).
pub fn remove_stale() -> usize {
    remove_stale_in(&std::env::temp_dir())
}

fn remove_stale_in(tmp: &Path) -> usize {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::getuid().as_raw();
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(owner_pid) else {
            continue;
        };
        // Not a link, a directory of this user's.
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != me || alive(pid) {
            continue;
        }
        if std::fs::remove_dir_all(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The process id in a scratch directory's name
/// (`polytune-PURPOSE-PID-XXXXXX`).
fn owner_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix("polytune-")?;
    let mut parts = rest.rsplitn(3, '-');
    let _random = parts.next()?;
    let pid = parts.next()?.parse::<i32>().ok()?;
    let _purpose = parts.next()?;
    (pid > 0).then_some(pid)
}

/// Whether process `pid` exists (a process of another user counts).
fn alive(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e != rustix::io::Errno::SRCH,
    }
}

fn ending() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::Interrupted, "polytune is ending")
}

/// Creates directory `dir` inside a scratch directory (nothing if it is
/// there). Never its parents: once a signal's clean-up removed the
/// scratch directory, a thread still building must fail here, not
/// create the scratch directory again after the clean-up (it would be
/// left behind when polytune ends).
pub fn subdir(dir: &Path) -> std::io::Result<()> {
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && live().1 => Err(ending()),
        r => r,
    }
}

/// Removes every live scratch directory (polytune is about to end).
pub(crate) fn remove_all() {
    let dirs = {
        let mut l = live();
        l.1 = true;
        l.0.clone()
    };
    for p in dirs {
        // A file written meanwhile by a thread still building (or the
        // command's own drop of its scratch directory, removing the same
        // tree) can make an attempt fail; the writer cannot create
        // directories any more once this one is gone (`subdir`), so the
        // removal soon wins. Bounded in time, not attempts: a loaded
        // machine's slow disk makes each attempt long.
        let until = Instant::now() + Duration::from_secs(5);
        while std::fs::remove_dir_all(&p).is_err() && p.exists() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn private_unpredictable_and_removed() {
        let a = Scratch::new("test").unwrap();
        let b = Scratch::new("test").unwrap();
        assert_ne!(a.path(), b.path());
        let name = a.path().file_name().unwrap().to_str().unwrap().to_string();
        assert!(name.starts_with("polytune-test-") && name.len() > "polytune-test-".len() + 4);
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::write(a.path().join("f"), "x").unwrap();
        let p = a.path().to_path_buf();
        assert!(live().0.contains(&p));
        drop(a);
        assert!(!p.exists());
        assert!(!live().0.contains(&p));
    }

    #[test]
    fn the_directories_of_dead_processes_are_removed_and_no_other() {
        assert_eq!(owner_pid("polytune-select-4242-AbC123"), Some(4242));
        assert_eq!(owner_pid("polytune-a-b-17-xyz"), Some(17));
        assert_eq!(owner_pid("polytune-select-AbC123"), None);
        assert_eq!(owner_pid("other-select-12-AbC123"), None);
        let tmp = tempfile::tempdir().unwrap();
        // A child that has exited and been waited for: its id is free.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let mine = std::process::id();
        let stale = tmp.path().join(format!("polytune-select-{dead}-Qx1"));
        let live = tmp.path().join(format!("polytune-select-{mine}-Qx2"));
        let foreign = tmp.path().join(format!("keep-select-{dead}-Qx3"));
        for d in [&stale, &live, &foreign] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("f.c"), "x").unwrap();
        }
        // A link named like a scratch directory is never followed.
        let target = tmp.path().join("target");
        std::fs::create_dir(&target).unwrap();
        let link = tmp.path().join(format!("polytune-x-{dead}-Qx4"));
        std::os::unix::fs::symlink(&target, &link).unwrap();
        if alive(dead as i32) {
            // The id was reused at once (rare): nothing to check.
            return;
        }
        assert_eq!(remove_stale_in(tmp.path()), 1);
        assert!(!stale.exists());
        assert!(live.exists() && foreign.exists() && target.exists());
    }

    #[test]
    fn subdir_never_creates_parents() {
        let a = Scratch::new("test").unwrap();
        let d = a.path().join("x");
        subdir(&d).unwrap();
        subdir(&d).unwrap();
        assert!(d.is_dir());
        let gone = a.path().join("gone").join("y");
        assert!(subdir(&gone).is_err());
        assert!(!a.path().join("gone").exists());
    }
}
