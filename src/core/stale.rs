//! Temporary files a killed process left behind (a write is replaced by rename, so a kill
//! between the two leaves the temporary file): the writer that owns a folder removes them
//! when it starts. Only those old enough that no live writer can still be filling them.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// How old a temporary file must be before it counts as abandoned: far longer than any
/// single write takes.
pub const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// Whether `name` is one of rubricate's temporary files: it starts with `prefix` (a `.`
/// and the target's name) and ends in `.tmp`, as rubricate writes it.
pub fn is_temp(name: &str, prefix: &str) -> bool {
    name.starts_with(prefix) && Path::new(name).extension().is_some_and(|e| e == "tmp")
}

/// Removes the files in `dir` (not below it) that `is_temp` recognises by name and that
/// were last written more than [`STALE_AFTER`] ago. Returns how many went; a file that
/// cannot be removed is left (it is someone else's, or the disk is read-only).
pub fn remove_stale_temps(dir: &Path, is_temp: impl Fn(&str) -> bool) -> usize {
    remove_temps_older_than(dir, is_temp, STALE_AFTER)
}

/// The same, for files older than `age` (zero: all of them — for a caller that holds the
/// lock every writer of these files takes, so none of them is being written).
pub fn remove_temps_older_than(dir: &Path, is_temp: impl Fn(&str) -> bool, age: Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if !is_temp(name) {
            continue;
        }
        let old = e
            .metadata()
            .ok()
            .filter(std::fs::Metadata::is_file)
            .is_some_and(|m| {
                age.is_zero()
                    || m.modified()
                        .ok()
                        .and_then(|t| now.duration_since(t).ok())
                        .is_some_and(|old| old > age)
            });
        if old && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_old_temporary_files_go() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join(".a.1.tmp");
        let fresh = dir.path().join(".b.2.tmp");
        let kept = dir.path().join("a.json");
        for p in [&old, &fresh, &kept] {
            std::fs::write(p, "x").unwrap();
        }
        let long_ago = SystemTime::now() - STALE_AFTER - Duration::from_secs(60);
        for p in [&old, &kept] {
            std::fs::File::options()
                .write(true)
                .open(p)
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        }
        let n = remove_stale_temps(dir.path(), |n| is_temp(n, "."));
        assert_eq!(n, 1);
        assert!(!old.exists() && fresh.exists() && kept.exists());
    }
}
