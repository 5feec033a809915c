//! Replace a file atomically: write a temporary file beside it, fsync, rename over the
//! target. A crash leaves either the old file or the new one, never half of one.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

pub struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    pub fn create(target: &Path) -> io::Result<Self> {
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
        let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        let file = File::create(&temp)?;
        Ok(Self {
            target: target.to_path_buf(),
            temp,
            writer: Some(BufWriter::with_capacity(256 * 1024, file)),
        })
    }

    /// Replaces `target` with `bytes` in one step.
    pub fn write_whole(target: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut f = Self::create(target)?;
        f.write_all(bytes)?;
        f.commit()
    }

    /// Flushes, syncs and renames over the target.
    pub fn commit(mut self) -> io::Result<()> {
        let Some(writer) = self.writer.take() else {
            return Ok(());
        };
        let file = writer
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.temp, &self.target)?;
        if let Some(dir) = self.target.parent().filter(|p| !p.as_os_str().is_empty()) {
            // Persist the rename itself; not every platform lets a directory be opened.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.writer.as_mut() {
            Some(w) => w.write(buf),
            None => Err(io::Error::other("file already committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.as_mut().map_or(Ok(()), Write::flush)
    }
}

impl Drop for AtomicFile {
    /// An uncommitted file is abandoned: the target keeps its old contents.
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

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
}
