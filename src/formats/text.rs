//! Reading whole text files with a size cap and a located UTF-8 check.

use std::io::Read;
use std::path::Path;

use crate::core::diag::{Diagnostic, Diagnostics, LineIndex};

/// Rubric and config files larger than this are refused (they are not rubrics).
pub const MAX_RUBRIC_BYTES: u64 = 16 * 1024 * 1024;

/// Whether a file another file names (`reference`, relative to `dir`, the naming file's
/// folder) may be read: not by an absolute path, and inside `dir` or the folder above it
/// (unless that is the filesystem's root or a top-level folder). A downloaded file cannot
/// make rubricate read — and send to a judge — a file elsewhere on the machine. The error
/// says why not.
pub fn nearby(dir: &Path, reference: &str) -> Result<std::path::PathBuf, &'static str> {
    let rel = reference.trim().trim_start_matches("file://");
    if Path::new(rel).is_absolute() || rel.starts_with('~') {
        return Err("is named by an absolute path");
    }
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let target = dir.join(rel);
    let (Ok(home), Ok(resolved)) = (std::fs::canonicalize(dir), std::fs::canonicalize(&target))
    else {
        // Not there: the reader says so, with the path it looked for.
        return Ok(target);
    };
    let root = match home.parent() {
        Some(up) if up.components().count() > 2 => up.to_path_buf(),
        _ => home,
    };
    if resolved.starts_with(&root) {
        Ok(target)
    } else {
        Err("is outside the folder of the file that names it and the one above")
    }
}

/// Reads `path` as UTF-8 text of at most `max` bytes. `what` names the file's role in messages.
pub fn read_text(path: &Path, max: u64, what: &str) -> Result<String, Diagnostics> {
    let file = path.display().to_string();
    let io = |e: std::io::Error| {
        Diagnostics::one(Diagnostic::whole(
            &file,
            format!("cannot read {what} file: {e}"),
        ))
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    if len > max {
        return Err(Diagnostics::one(Diagnostic::whole(
            &file,
            format!(
                "{what} file is {:.1} MB; {what} files over {} MiB are refused (is this the right file?)",
                len as f64 / 1e6,
                max / (1024 * 1024)
            ),
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    f.take(max + 1).read_to_end(&mut bytes).map_err(io)?;
    utf8(&file, bytes)
}

/// Converts bytes to text, or says where the first invalid byte is.
pub fn utf8(file: &str, bytes: Vec<u8>) -> Result<String, Diagnostics> {
    String::from_utf8(bytes).map_err(|e| {
        let bad = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let prefix = std::str::from_utf8(&bytes[..bad]).unwrap_or("");
        let pos = LineIndex::new(prefix).pos(bad);
        Diagnostics::one(Diagnostic::at(
            file,
            pos,
            format!(
                "the file is not valid UTF-8 (byte 0x{:02X}); save it as UTF-8",
                bytes[bad]
            ),
        ))
    })
}

#[cfg(test)]
mod nearby_tests {
    use super::nearby;

    #[test]
    fn files_a_file_names_stay_in_its_neighbourhood() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("a/project");
        std::fs::create_dir_all(project.join("evals")).unwrap();
        std::fs::create_dir_all(project.join("fixtures")).unwrap();
        std::fs::write(project.join("fixtures/s.json"), "{}").unwrap();
        std::fs::write(dir.path().join("a/secret.json"), "{}").unwrap();
        let evals = project.join("evals");
        assert!(nearby(&evals, "../fixtures/s.json").is_ok());
        assert!(nearby(&evals, "file://../fixtures/s.json").is_ok());
        assert_eq!(
            nearby(&evals, "../../secret.json"),
            Err("is outside the folder of the file that names it and the one above")
        );
        assert_eq!(
            nearby(&evals, "/etc/passwd"),
            Err("is named by an absolute path")
        );
        // A file that is not there is the reader's to report.
        assert!(nearby(&evals, "missing.json").is_ok());
    }
}
