//! Human labels: per dataset and annotator, an append-only journal of label events
//! (`labels/<dataset>/<annotator>.jsonl`). A label is acknowledged only after its line is
//! synced to disk; the current labels are the journal folded; undo is a new event;
//! compaction rewrites the journal atomically with only what is current.

use crate::store::StoreError;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::core::atomic::AtomicFile;

/// One line of a journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// 1, 2, 3… in the order written.
    pub seq: u64,
    /// What the event does.
    #[serde(flatten)]
    pub op: Op,
    /// Who labelled.
    pub annotator: String,
    /// RFC 3339.
    pub time: String,
}

/// What a journal event does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// A label for one criterion of one item: a verdict word, an option label, a level id
    /// (strings) or a number for a scale; `null` clears it.
    Set {
        /// The item's id.
        item: String,
        /// The criterion's id.
        criterion: String,
        /// The label.
        verdict: serde_json::Value,
        /// The annotator's note.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        note: String,
        /// The rubric labelled against.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        rubric: String,
        /// Its version.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        rubric_version: String,
    },
    /// Takes back event `undoes` (the label returns to what it was before).
    Undo {
        /// The sequence number of the event taken back.
        undoes: u64,
    },
}

/// A current label.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Label {
    /// The label (`null`: cleared).
    pub verdict: serde_json::Value,
    /// The annotator's note.
    pub note: String,
    /// When it was set (RFC 3339).
    pub time: String,
    /// The rubric version it was set against.
    pub rubric_version: String,
    /// The event that set it.
    pub seq: u64,
}

/// A name that becomes a file name (an annotator, a dataset): `store::names`' one rule.
pub fn check_name(what: &str, name: &str) -> Result<(), StoreError> {
    super::names::check(what, name).map_err(|e| StoreError::Refused(e.to_string()))
}

/// The journal of adjudicated labels: the reference settled where annotators differ
/// (`metrics --reference adjudicated`), written in the Label pane's adjudication mode.
pub const ADJUDICATED: &str = "adjudicated";

/// The key of a dataset in `labels/`: its file name without extension.
pub fn dataset_key(dataset: &Path) -> String {
    dataset
        .file_stem()
        .map_or_else(|| "dataset".into(), |s| s.to_string_lossy().into_owned())
}

/// The journal of `annotator`'s labels of `dataset`.
pub fn journal_path(labels_dir: &Path, dataset: &str, annotator: &str) -> PathBuf {
    labels_dir.join(dataset).join(format!("{annotator}.jsonl"))
}

/// The annotators with a journal for a dataset.
pub fn annotators(labels_dir: &Path, dataset: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(labels_dir.join(dataset)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let p = e.path();
            (p.extension().is_some_and(|x| x == "jsonl"))
                .then(|| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .flatten()
        })
        .collect();
    names.sort();
    names
}

/// Reads a journal; a torn last line (a crash mid-append, never acknowledged) is ignored.
/// Returns the events and the byte length of the valid part.
pub fn read(path: &Path) -> Result<(Vec<Event>, u64), StoreError> {
    let mut events = Vec::new();
    let valid = read_each(path, |e| events.push(e))?;
    Ok((events, valid))
}

/// The current labels of a journal, folded as it is read: no event is kept once applied,
/// so memory follows the labels, not the journal's history.
pub fn current(path: &Path) -> Result<BTreeMap<(String, String), Label>, StoreError> {
    current_kept(path, |label| label)
}

/// The current verdicts of a journal, by (item id, criterion id): [`current`] without the
/// notes, times and versions, for readers that only measure (a third of the memory).
pub fn current_verdicts(
    path: &Path,
) -> Result<BTreeMap<(String, String), serde_json::Value>, StoreError> {
    current_kept(path, |label| label.verdict)
}

/// The current labels of a journal, each as `keep` makes it: [`current`] keeping only
/// what a reader needs.
pub fn current_kept<T>(
    path: &Path,
    keep: impl Fn(Label) -> T,
) -> Result<BTreeMap<(String, String), T>, StoreError> {
    let mut folder = Folder::default();
    read_each(path, |e| folder.apply(e, &keep))?;
    Ok(folder.finish())
}

/// Hands each whole event of a journal to `each`, in order; returns the byte length of the
/// valid part (see [`read`]).
fn read_each(path: &Path, mut each: impl FnMut(Event)) -> Result<u64, StoreError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(StoreError::io(path, e)),
    };
    let mut reader = BufReader::new(file);
    let mut valid = 0u64;
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| StoreError::io(path, e))?;
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        number += 1;
        let event: Event = serde_json::from_slice(&line).map_err(|e| {
            StoreError::Refused(format!(
                "{}:{number}: not a label event ({e}); the journal is damaged — nothing was changed",
                path.display()
            ))
        })?;
        each(event);
        valid += n as u64;
    }
    Ok(valid)
}

/// The current labels: events applied in order; an undo takes its event back.
pub fn fold(events: &[Event]) -> BTreeMap<(String, String), Label> {
    let mut folder = Folder::default();
    for e in events {
        folder.apply(e.clone(), |label| label);
    }
    folder.finish()
}

/// Applies events one at a time: per cell, the stack of labels that set it, as the event
/// that set each and what of the label is kept (`None`: the label cleared the cell); an
/// undo removes one from its stack; the top is current.
struct Folder<T> {
    stacks: BTreeMap<(String, String), Vec<Kept<T>>>,
}

/// A label on a cell's stack: the event that set it, and what of it is kept (`None`: it
/// cleared the cell).
type Kept<T> = (u64, Option<T>);

impl<T> Default for Folder<T> {
    fn default() -> Self {
        Self {
            stacks: BTreeMap::new(),
        }
    }
}

impl<T> Folder<T> {
    /// Applies `e`, keeping `keep` of the label it sets.
    fn apply(&mut self, e: Event, keep: impl FnOnce(Label) -> T) {
        match e.op {
            Op::Set {
                item,
                criterion,
                verdict,
                note,
                rubric_version,
                ..
            } => {
                let kept = (!verdict.is_null()).then(|| {
                    keep(Label {
                        verdict,
                        note,
                        time: e.time,
                        rubric_version,
                        seq: e.seq,
                    })
                });
                self.stacks
                    .entry((item, criterion))
                    // Most cells are set once: room for one (a default Vec reserves four).
                    .or_insert_with(|| Vec::with_capacity(1))
                    .push((e.seq, kept));
            }
            // Rare: the cell it took back is looked for rather than indexed for every event.
            Op::Undo { undoes } => {
                if let Some(stack) = self
                    .stacks
                    .values_mut()
                    .find(|s| s.iter().any(|(seq, _)| *seq == undoes))
                {
                    stack.retain(|(seq, _)| *seq != undoes);
                }
            }
        }
    }

    fn finish(self) -> BTreeMap<(String, String), T> {
        self.stacks
            .into_iter()
            .filter_map(|(key, mut stack)| Some((key, stack.pop()?.1?)))
            .collect()
    }
}

/// An open journal for appending. Holds the file's lock: one writer per journal.
pub struct Journal {
    file: File,
    path: PathBuf,
    annotator: String,
    next_seq: u64,
    /// Events written since the last sync.
    unsynced: bool,
}

impl Journal {
    /// Opens (or starts) `annotator`'s journal of `dataset` for writing: one writer at a time,
    /// and a torn last line from a crash is cut.
    pub fn open(labels_dir: &Path, dataset: &str, annotator: &str) -> Result<Self, StoreError> {
        check_name("dataset", dataset)?;
        check_name("annotator", annotator)?;
        let path = journal_path(labels_dir, dataset, annotator);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| StoreError::io(parent, e))?;
        }
        let mut file = crate::core::atomic::open_no_follow(
            &path,
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true),
        )
        .map_err(|e| StoreError::io(&path, e))?;
        file.try_lock().map_err(|_| {
            StoreError::Refused(format!(
                "{} is open in another rubricate; one writer per annotator and dataset",
                path.display()
            ))
        })?;
        let (events, valid) = read(&path)?;
        // Cut a torn tail so the next line starts clean.
        file.set_len(valid).map_err(|e| StoreError::io(&path, e))?;
        file.seek(SeekFrom::End(0))
            .map_err(|e| StoreError::io(&path, e))?;
        Ok(Self {
            file,
            path,
            annotator: annotator.to_owned(),
            next_seq: events.last().map_or(1, |e| e.seq + 1),
            unsynced: false,
        })
    }

    /// Where the journal is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends an event and syncs it; returns its sequence number once it is on disk.
    pub fn append(&mut self, op: Op) -> Result<u64, StoreError> {
        let seq = self.write(op)?;
        self.sync()?;
        Ok(seq)
    }

    /// Appends an event without syncing it: it is on disk only after the next
    /// [`sync`](Self::sync) (group commit: many events, one sync). Its sequence number.
    pub fn write(&mut self, op: Op) -> Result<u64, StoreError> {
        let event = Event {
            seq: self.next_seq,
            op,
            annotator: self.annotator.clone(),
            time: jiff::Timestamp::now().to_string(),
        };
        let mut line =
            serde_json::to_string(&event).map_err(|e| StoreError::Refused(e.to_string()))?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.next_seq += 1;
        self.unsynced = true;
        Ok(event.seq)
    }

    /// Makes every event written so far durable.
    pub fn sync(&mut self) -> Result<(), StoreError> {
        if self.unsynced {
            self.file
                .sync_data()
                .map_err(|e| StoreError::io(&self.path, e))?;
            self.unsynced = false;
        }
        Ok(())
    }

    /// Rewrites the journal with one event per current label (atomically; sequence numbers
    /// are kept, so later undos of current labels still work).
    pub fn compact(&mut self) -> Result<usize, StoreError> {
        let (events, _) = read(&self.path)?;
        let current = fold(&events);
        let keep: std::collections::BTreeSet<u64> = current.values().map(|l| l.seq).collect();
        let mut out = String::new();
        for e in events.iter().filter(|e| keep.contains(&e.seq)) {
            out.push_str(
                &serde_json::to_string(e).map_err(|x| StoreError::Refused(x.to_string()))?,
            );
            out.push('\n');
        }
        AtomicFile::write_whole(&self.path, out.as_bytes())
            .map_err(|e| StoreError::io(&self.path, e))?;
        // The old handle points at the replaced file: reopen the new one (lock included).
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(|e| StoreError::io(&self.path, e))?;
        file.try_lock().map_err(|_| {
            StoreError::Refused(format!(
                "{} was taken by another writer",
                self.path.display()
            ))
        })?;
        file.seek(SeekFrom::End(0))
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.file = file;
        Ok(keep.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_error_keeps_its_cause() {
        let dir = tempfile::tempdir().unwrap();
        // The labels folder is a file: the journal's folder cannot be made.
        let blocked = dir.path().join("labels");
        std::fs::write(&blocked, "not a folder").unwrap();
        let Err(err) = Journal::open(&blocked, "d", "pat") else {
            panic!("opened a journal under a file")
        };
        let source = std::error::Error::source(&err).expect("the cause is kept");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("an io::Error");
        assert_ne!(io.kind(), std::io::ErrorKind::Other, "{io}");
        // The OS's own error code travels with it, not only its kind and text.
        #[cfg(unix)]
        assert!(io.raw_os_error().is_some(), "{io:?}");
        assert_eq!(err.io_kind(), Some(io.kind()));
        assert!(
            err.to_string().starts_with(&blocked.display().to_string()),
            "{err}"
        );
    }
    use serde_json::json;

    fn set(item: &str, criterion: &str, verdict: serde_json::Value) -> Op {
        Op::Set {
            item: item.into(),
            criterion: criterion.into(),
            verdict,
            note: String::new(),
            rubric: "r".into(),
            rubric_version: "1.0.0".into(),
        }
    }

    #[test]
    fn append_fold_undo_and_compact() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::open(dir.path(), "answers", "alice").unwrap();
        assert_eq!(j.append(set("q1", "c", json!("MET"))).unwrap(), 1);
        assert_eq!(j.append(set("q1", "c", json!("UNMET"))).unwrap(), 2);
        assert_eq!(j.append(set("q2", "c", json!(4))).unwrap(), 3);
        assert_eq!(j.append(Op::Undo { undoes: 2 }).unwrap(), 4);
        assert_eq!(j.append(set("q3", "c", json!("MET"))).unwrap(), 5);
        assert_eq!(
            j.append(set("q3", "c", serde_json::Value::Null)).unwrap(),
            6
        );
        let (events, _) = read(j.path()).unwrap();
        let labels = fold(&events);
        assert_eq!(labels.len(), 2);
        assert_eq!(labels[&("q1".into(), "c".into())].verdict, json!("MET"));
        assert_eq!(labels[&("q2".into(), "c".into())].verdict, json!(4));
        assert_eq!(j.compact().unwrap(), 2);
        let (events, _) = read(j.path()).unwrap();
        assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(fold(&events), labels);
        assert_eq!(j.append(Op::Undo { undoes: 1 }).unwrap(), 7);
        let (events, _) = read(j.path()).unwrap();
        assert_eq!(fold(&events).len(), 1);
        // Taking back a label below the current one leaves the current one.
        assert_eq!(j.append(set("q4", "c", json!("MET"))).unwrap(), 8);
        assert_eq!(j.append(set("q4", "c", json!("UNMET"))).unwrap(), 9);
        assert_eq!(j.append(Op::Undo { undoes: 8 }).unwrap(), 10);
        let now = current(j.path()).unwrap();
        assert_eq!(now[&("q4".into(), "c".into())].verdict, json!("UNMET"));
        assert_eq!(current_verdicts(j.path()).unwrap().len(), 2);
    }

    #[test]
    fn a_torn_tail_is_dropped_and_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut j = Journal::open(dir.path(), "answers", "bob").unwrap();
            j.append(set("q1", "c", json!("MET"))).unwrap();
        }
        let path = journal_path(dir.path(), "answers", "bob");
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"seq\": 2, \"op\": \"se").unwrap();
        drop(f);
        let mut j = Journal::open(dir.path(), "answers", "bob").unwrap();
        assert_eq!(j.append(set("q2", "c", json!("UNMET"))).unwrap(), 2);
        let (events, _) = read(&path).unwrap();
        assert_eq!(events.len(), 2);
        drop(j);
        std::fs::write(&path, "{\"seq\": 1}\nnot json\n").unwrap();
        let e = Journal::open(dir.path(), "answers", "bob")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("bob.jsonl:1: not a label event"), "{e}");
        assert!(check_name("annotator", "../x").is_err());
    }

    #[test]
    fn one_writer_per_journal() {
        let dir = tempfile::tempdir().unwrap();
        let _a = Journal::open(dir.path(), "answers", "alice").unwrap();
        let e = Journal::open(dir.path(), "answers", "alice")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("is open in another rubricate"), "{e}");
    }
}
