//! Reading whole text files with a size cap and a located UTF-8 check.

use std::io::Read;
use std::path::Path;

use super::diag::{Diagnostic, Diagnostics, LineIndex};

/// Rubric and config files larger than this are refused (they are not rubrics).
pub const MAX_RUBRIC_BYTES: u64 = 16 * 1024 * 1024;

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
