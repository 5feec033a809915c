//! `history.jsonl`: one JSON line per registry event, appended and synced. A crash can tear
//! the last line; readers ignore it and the next append cuts it off first.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// What happened to a rubric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    /// The first version was saved.
    Registered,
    /// A higher version was saved.
    Updated,
    /// The rubric was deleted (its versions stay readable).
    Deleted,
}

impl EventKind {
    /// The name the history file and messages use.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Registered => "registered",
            EventKind::Updated => "updated",
            EventKind::Deleted => "deleted",
        }
    }
}

/// One line of `history.jsonl`. For `deleted`, `version` and `hash` name the version that
/// was current when the rubric was deleted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// What happened.
    pub event: EventKind,
    /// The rubric's id.
    pub id: String,
    /// The version it happened to.
    pub version: String,
    /// SHA-256 (hex) of the version's snapshot text.
    pub hash: String,
    /// When.
    pub time: jiff::Timestamp,
    /// The note given, if any.
    #[serde(default)]
    pub note: String,
}

/// A line that is not an event, with its 1-based number.
#[derive(Debug)]
pub enum ReadError {
    Io(io::Error),
    BadLine { line: usize, detail: String },
}

/// Every complete event in order; a missing file is an empty history. A last line without
/// its newline is a torn append and is ignored.
pub fn read(path: &Path) -> Result<Vec<Event>, ReadError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ReadError::Io(e)),
    };
    let complete = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(&bytes[..0], |i| &bytes[..=i]);
    let mut events = Vec::new();
    for (i, line) in complete.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let event = serde_json::from_slice(line).map_err(|e| ReadError::BadLine {
            line: i + 1,
            detail: e.to_string(),
        })?;
        events.push(event);
    }
    Ok(events)
}

/// Appends one event and syncs it to disk, first cutting off a torn last line.
pub fn append(path: &Path, event: &Event) -> io::Result<()> {
    let mut line = serde_json::to_string(event).map_err(io::Error::other)?;
    line.push('\n');
    let created = !path.exists();
    let mut f = crate::core::atomic::open_no_follow(
        path,
        OpenOptions::new().read(true).append(true).create(true),
    )?;
    cut_torn_tail(&mut f)?;
    f.write_all(line.as_bytes())?;
    f.sync_data()?;
    if created {
        crate::core::atomic::sync_dir(path.parent());
    }
    Ok(())
}

fn cut_torn_tail(f: &mut File) -> io::Result<()> {
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    let mut last = [0u8; 1];
    f.seek(SeekFrom::Start(len - 1))?;
    f.read_exact(&mut last)?;
    if last[0] == b'\n' {
        return Ok(());
    }
    let mut bytes = Vec::new();
    f.seek(SeekFrom::Start(0))?;
    f.read_to_end(&mut bytes)?;
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    f.set_len(keep as u64)?;
    f.sync_data()
}
