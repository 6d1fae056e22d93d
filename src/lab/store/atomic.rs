//! Writing output files so that a failure never leaves a half-written
//! file: the new contents go to a temporary file beside the target, are
//! flushed to disk, and only then renamed over it. A full file system, a
//! file size limit or a kill part way through leave the target as it was
//! (the input itself, with `--in-place`).
//!
//! Every error names the file it is about.

use std::fs::{self, File, Permissions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// An error about `path`, keeping the kind of `e`.
fn about(path: &Path, what: &str, e: impl std::fmt::Display + Into<io::Error>) -> io::Error {
    let text = format!("cannot {what} {}: {e}", path.display());
    io::Error::new(e.into().kind(), text)
}

/// Whether two paths name the same file (device and inode, so hard links,
/// symbolic links and aliases such as `/dev/stdout` are seen through).
/// False when either does not exist.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Writes `bytes` to `path` atomically (see [`write_with`]).
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

/// Writes what `fill` produces to `path`: to a temporary file in the same
/// directory, synced, then renamed over `path`, which keeps the
/// permissions (and, when allowed, the owner) of the file it replaces.
/// On any failure the temporary file is removed and `path` is untouched.
/// A symbolic link is written through (the link stays). A target that is
/// not a regular file (a terminal, a pipe, `/dev/null`), or a stream named
/// by `/dev/stdout`, `/dev/fd/N` or `/proc` (redirected to a file), is
/// appended to directly, as a stream is: there is nothing to replace.
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let stream = ["/dev/stdout", "/dev/stderr", "/dev/fd", "/proc"]
        .iter()
        .any(|s| path.starts_with(s));
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(about(
            path,
            "write",
            io::Error::new(io::ErrorKind::IsADirectory, "it is a directory"),
        )),
        Ok(m) if !m.is_file() || stream => {
            let mut f = fs::OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(|e| about(path, "open", e))?;
            let mut w = BufWriter::new(&mut f);
            fill(&mut w)
                .and_then(|()| w.flush())
                .map_err(|e| about(path, "write", e))
        }
        _ => replace_with(path, |_, file| {
            let mut w = BufWriter::new(file);
            fill(&mut w)?;
            w.flush()
        }),
    }
}

/// The regular file a path stands for: symbolic links are followed (also
/// dangling ones, to the file they would create).
fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        "too many levels of symbolic links",
    ))
}

/// Replaces the regular file `path` (or creates it) with a file that
/// `fill` writes: `fill` gets the temporary file's path and an open handle
/// to it. Used directly when another library writes the file by name
/// (SQLite's `VACUUM INTO`).
pub(crate) fn replace_with(
    path: &Path,
    fill: impl FnOnce(&Path, &mut File) -> io::Result<()>,
) -> io::Result<()> {
    let target = resolve(path).map_err(|e| about(path, "write", e))?;
    let old = match fs::metadata(&target) {
        Ok(m) if m.is_file() => Some(m),
        Ok(_) => {
            return Err(about(
                path,
                "replace",
                io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"),
            ));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(about(path, "write", e)),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    // New files get the usual 0666 less the umask, as `fs::write` would.
    let mode = old.as_ref().map_or(0o666, |m| m.mode() & 0o7777);
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(Permissions::from_mode(mode))
        .tempfile_in(&dir)
        .map_err(|e| about(path, "write", e))?;
    let tmp_path = tmp.path().to_path_buf();
    let result = (|| {
        if let Some(m) = &old {
            // Exactly the old mode (the umask narrowed the one above), and
            // its owner when we may (as root); otherwise we own the copy.
            tmp.as_file()
                .set_permissions(Permissions::from_mode(mode))?;
            let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(m.uid()), Some(m.gid()));
        }
        fill(&tmp_path, tmp.as_file_mut())?;
        tmp.as_file().sync_all()
    })();
    result.map_err(|e| about(path, "write", e))?;
    tmp.persist(&target)
        .map_err(|e| about(path, "write", e.error))?;
    // The rename itself is durable once the directory is synced.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.c");
        fs::write(&p, "old contents\n").unwrap();
        fs::set_permissions(&p, Permissions::from_mode(0o751)).unwrap();
        let e = write_with(&p, |w| {
            w.write_all(&[b'x'; 100_000])?;
            Err(io::Error::new(
                io::ErrorKind::StorageFull,
                "No space left on device",
            ))
        })
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        let text = e.to_string();
        assert!(text.contains(&p.display().to_string()), "{text}");
        assert_eq!(fs::read_to_string(&p).unwrap(), "old contents\n");
        assert!(
            leftovers(dir.path()).is_empty(),
            "{:?}",
            leftovers(dir.path())
        );
        // A successful write keeps the permissions.
        write(&p, b"new\n").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new\n");
        assert_eq!(fs::metadata(&p).unwrap().mode() & 0o7777, 0o751);
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_new_file_gets_the_usual_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new.c");
        write(&p, b"x").unwrap();
        let mode = fs::metadata(&p).unwrap().mode() & 0o777;
        let reference = dir.path().join("reference");
        fs::write(&reference, "x").unwrap();
        assert_eq!(mode, fs::metadata(&reference).unwrap().mode() & 0o777);
    }

    #[test]
    fn links_are_written_through_and_compared_by_inode() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.c");
        fs::write(&real, "a").unwrap();
        let sym = dir.path().join("sym.c");
        std::os::unix::fs::symlink("real.c", &sym).unwrap();
        let hard = dir.path().join("hard.c");
        fs::hard_link(&real, &hard).unwrap();
        assert!(same_file(&real, &sym));
        assert!(same_file(&real, &hard));
        assert!(!same_file(&real, &dir.path().join("missing.c")));
        write(&sym, b"b").unwrap();
        assert!(fs::symlink_metadata(&sym).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "b");
        // A dangling link creates the file it points to.
        let dangling = dir.path().join("dangling.c");
        std::os::unix::fs::symlink("created.c", &dangling).unwrap();
        write(&dangling, b"c").unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("created.c")).unwrap(),
            "c"
        );
    }

    #[test]
    fn special_files_are_written_directly_and_errors_name_them() {
        write(Path::new("/dev/null"), b"nothing").unwrap();
        // Standard output redirected to a file is appended to, as a stream.
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        fs::write(&log, "before\n").unwrap();
        let fd = File::options().append(true).open(&log).unwrap();
        use std::os::fd::AsRawFd;
        let alias = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
        write(&alias, b"after\n").unwrap();
        assert_eq!(fs::read_to_string(&log).unwrap(), "before\nafter\n");
        drop(fd);
        let e = write(Path::new("/dev/full"), &[0; 10_000]).unwrap_err();
        assert!(e.to_string().contains("/dev/full"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = write(dir.path(), b"x").unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        let e = write(&dir.path().join("no/such/dir/f.c"), b"x").unwrap_err();
        assert!(e.to_string().contains("no/such/dir/f.c"), "{e}");
    }
}
