//! Scratch directories: one per command that builds programs, with an
//! unpredictable name, private to the user (mode 0700), created without
//! following a planted link, and removed when dropped — on success, on
//! every error path, and (through `confine::clean_up_on_signals`) when
//! polytune is interrupted or terminated.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
    /// Creates `polytune-PURPOSE-XXXXXX` in the temporary directory
    /// (`$TMPDIR`, else /tmp).
    pub fn new(purpose: &str) -> std::io::Result<Scratch> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix(&format!("polytune-{purpose}-"))
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
        let mut l = live();
        if l.1 {
            drop(l);
            drop(dir);
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "polytune is ending",
            ));
        }
        l.0.push(dir.path().to_path_buf());
        Ok(Scratch { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        live().0.retain(|p| p != self.dir.path());
        // The TempDir field removes the directory after this.
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
        // A file being written meanwhile can make one attempt fail.
        for _ in 0..3 {
            if std::fs::remove_dir_all(&p).is_ok() || !p.exists() {
                break;
            }
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
}
