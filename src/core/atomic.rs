//! Replace a file atomically: write a temporary file beside it, fsync, rename over the
//! target. A crash leaves either the old file or the new one, never half of one.
//!
//! Only a regular file (or a path where nothing is yet) is replaced that way. Anything else
//! at the path — a device such as `/dev/null`, a FIFO, a socket, `/dev/stdout` — is written
//! in place: renaming over it would destroy it (as root, `--out /dev/null` would leave a
//! regular file where every program expects the null device). A symlink is followed: the
//! file it points to is replaced and the link stays; a link to nothing is refused.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Where the bytes go until `commit`.
enum Target {
    /// A temporary file beside `path` (random name, created exclusively, removed if
    /// abandoned), renamed over it on commit.
    Replace {
        path: PathBuf,
        temp: BufWriter<tempfile::NamedTempFile>,
    },
    /// The node itself, opened for writing.
    InPlace(BufWriter<File>),
}

/// A file written in full before it replaces the one at its path: a crash leaves the old
/// content or the new, never a part (through a symbolic link, the file it points to).
pub struct AtomicFile {
    target: Option<Target>,
}

impl AtomicFile {
    /// Starts writing the replacement of `target`; nothing changes there until it is committed.
    pub fn create(target: &Path) -> io::Result<Self> {
        let link = std::fs::symlink_metadata(target).ok();
        let followed = std::fs::metadata(target);
        let path = match (&link, &followed) {
            (Some(l), Err(_)) if l.file_type().is_symlink() => {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{} is a symbolic link to nothing", target.display()),
                ));
            }
            (_, Ok(m)) if m.is_dir() => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("{} is a folder", target.display()),
                ));
            }
            (_, Ok(m)) if !m.is_file() => {
                let file = OpenOptions::new().write(true).open(target)?;
                return Ok(Self {
                    target: Some(Target::InPlace(BufWriter::with_capacity(256 * 1024, file))),
                });
            }
            (Some(l), Ok(_)) if l.file_type().is_symlink() => std::fs::canonicalize(target)?,
            _ => target.to_path_buf(),
        };
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
        sweep_once(&dir, &path, &name);
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(&dir)?;
        Ok(Self {
            target: Some(Target::Replace {
                path,
                temp: BufWriter::with_capacity(256 * 1024, temp),
            }),
        })
    }

    /// Replaces `target` with `bytes` in one step.
    pub fn write_whole(target: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut f = Self::create(target)?;
        f.write_all(bytes)?;
        f.commit()
    }

    /// Flushes, syncs and renames over the target (a node written in place is flushed).
    pub fn commit(mut self) -> io::Result<()> {
        match self.target.take() {
            None => Ok(()),
            Some(Target::InPlace(mut w)) => w.flush(),
            Some(Target::Replace { path, temp }) => {
                let temp = temp.into_inner().map_err(io::IntoInnerError::into_error)?;
                temp.as_file().sync_all()?;
                temp.persist(&path).map_err(|e| e.error)?;
                sync_dir(path.parent());
                Ok(())
            }
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.target.as_mut() {
            Some(Target::Replace { temp, .. }) => temp.write(buf),
            Some(Target::InPlace(w)) => w.write(buf),
            None => Err(io::Error::other("file already committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.target.as_mut() {
            Some(Target::Replace { temp, .. }) => temp.flush(),
            Some(Target::InPlace(w)) => w.flush(),
            None => Ok(()),
        }
    }
}

/// Removes the temporary files of `path` that a killed writer left (old ones only) — the
/// first time this process writes it, not on every write (a draft is written at every edit).
fn sweep_once(dir: &Path, path: &Path, name: &str) {
    static SWEPT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let first = SWEPT.lock().is_ok_and(|mut swept| {
        let new = !swept.iter().any(|p| p == path);
        if new {
            swept.push(path.to_path_buf());
        }
        new
    });
    if first {
        let prefix = format!(".{name}.");
        crate::core::stale::remove_stale_temps(dir, |n| crate::core::stale::is_temp(n, &prefix));
    }
}

/// Opens a file rubricate appends to or creates in place (a journal, a lock) — never
/// through a symbolic link: one planted in its place would send the writes, or a new file,
/// anywhere on the machine.
pub fn open_no_follow(path: &Path, options: &OpenOptions) -> io::Result<File> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a symbolic link; rubricate never writes its files through one (put the real file there)",
                path.display()
            ),
        ));
    }
    options.open(path)
}

/// Makes a folder's new, renamed or removed entries durable (a rename is only kept across a
/// crash once its folder is synced). Best effort: not every platform lets a folder be opened.
pub fn sync_dir(dir: Option<&Path>) {
    if let Some(d) = dir.filter(|d| !d.as_os_str().is_empty())
        && let Ok(f) = File::open(d)
    {
        let _ = f.sync_all();
    }
}

// An uncommitted file is abandoned when dropped: the temporary file is removed (by
// `NamedTempFile`) and the target keeps its old contents.

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_replaces_and_drop_abandons() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let target = dir.path().join("out.txt");
        std::fs::write(&target, "old")?;
        let mut f = AtomicFile::create(&target)?;
        f.write_all(b"half")?;
        drop(f);
        assert_eq!(std::fs::read_to_string(&target)?, "old");
        let mut f = AtomicFile::create(&target)?;
        f.write_all(b"new")?;
        f.commit()?;
        assert_eq!(std::fs::read_to_string(&target)?, "new");
        assert_eq!(
            std::fs::read_dir(dir.path())?.count(),
            1,
            "no temp file left behind"
        );
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_keeps_pointing_at_the_replaced_file_and_a_dangling_one_is_refused()
    -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let real = dir.path().join("real.txt");
        let link = dir.path().join("link.txt");
        std::fs::write(&real, "old")?;
        std::os::unix::fs::symlink(&real, &link)?;
        AtomicFile::write_whole(&link, b"new")?;
        assert!(std::fs::symlink_metadata(&link)?.file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&real)?, "new");
        let dangling = dir.path().join("dangling.txt");
        std::os::unix::fs::symlink(dir.path().join("nowhere/x"), &dangling)?;
        let err = AtomicFile::write_whole(&dangling, b"x").unwrap_err();
        assert!(
            err.to_string().contains("symbolic link to nothing"),
            "{err}"
        );
        assert!(!dir.path().join("nowhere").exists());
        Ok(())
    }
}
