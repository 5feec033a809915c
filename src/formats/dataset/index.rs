//! A line index for JSONL and CSV datasets: where each item (a JSONL line, a CSV record)
//! starts, built once by one pass over the file and kept on disk, so any window of items is
//! read without loading the file. 12 bytes per item (offset and line number).
//! An index is valid only for the exact file it was built from (length, modification time
//! and a hash of the first and last 64 KiB); anything else is rebuilt.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use sha2::{Digest, Sha256};

use super::jsonl::LineParser;
use crate::core::diag::Diagnostic;
use crate::model::Item;

const MAGIC_JSONL: &[u8; 8] = b"RBIDX001";
const MAGIC_CSV: &[u8; 8] = b"RBIDXCSV";
const PROBE: u64 = 64 * 1024;

/// The start of every non-blank line, and its 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LineIndex {
    offsets: Vec<u64>,
    lines: Vec<u32>,
    csv: bool,
    /// Identifies the indexed file.
    stamp: [u8; 32],
}

impl LineIndex {
    /// Items in the dataset.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// The dataset has no items.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// Bytes held in memory per item.
    pub const BYTES_PER_ITEM: usize = 12;

    /// One pass over the file. `progress` gets the bytes read so far.
    pub fn build(path: &Path, mut progress: impl FnMut(u64)) -> std::io::Result<Self> {
        let stamp = stamp(path)?;
        let mut f = File::open(path)?;
        let mut buf = vec![0u8; 1 << 20];
        let mut offsets = Vec::new();
        let mut lines = Vec::new();
        let mut pos = 0u64;
        let mut line_no = 1u32;
        let mut line_start = 0u64;
        let mut blank = true;
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                break;
            }
            for (i, &b) in buf[..n].iter().enumerate() {
                match b {
                    b'\n' => {
                        if !blank {
                            offsets.push(line_start);
                            lines.push(line_no);
                        }
                        line_no = line_no.saturating_add(1);
                        line_start = pos + i as u64 + 1;
                        blank = true;
                    }
                    b' ' | b'\t' | b'\r' => {}
                    _ => blank = false,
                }
            }
            pos += n as u64;
            progress(pos);
        }
        if !blank {
            offsets.push(line_start);
            lines.push(line_no);
        }
        Ok(Self {
            offsets,
            lines,
            csv: false,
            stamp,
        })
    }

    /// One pass over a CSV file with a header row: where each record starts (records may
    /// span lines inside quotes).
    pub fn build_csv(path: &Path) -> std::io::Result<Self> {
        let stamp = stamp(path)?;
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .from_reader(BufReader::with_capacity(1 << 20, File::open(path)?));
        let mut record = csv::ByteRecord::new();
        let mut offsets = Vec::new();
        let mut lines = Vec::new();
        while reader
            .read_byte_record(&mut record)
            .map_err(std::io::Error::other)?
        {
            if let Some(p) = record.position() {
                offsets.push(p.byte());
                lines.push(u32::try_from(p.line()).unwrap_or(u32::MAX));
            }
        }
        Ok(Self {
            offsets,
            lines,
            csv: true,
            stamp,
        })
    }

    /// The index saved at `index_path` if it was built from `data` as it is now.
    pub fn load(index_path: &Path, data: &Path) -> Option<Self> {
        let bytes = std::fs::read(index_path).ok()?;
        let (head, rest) = bytes.split_at_checked(8 + 32 + 8)?;
        let csv = match &head[..8] {
            m if m == MAGIC_JSONL => false,
            m if m == MAGIC_CSV => true,
            _ => return None,
        };
        if head[8..40] != stamp(data).ok()? {
            return None;
        }
        let n = usize::try_from(u64::from_le_bytes(head[40..48].try_into().ok()?)).ok()?;
        if rest.len() != n.checked_mul(12)? {
            return None;
        }
        let (offs, nums) = rest.split_at(n * 8);
        let offsets = offs
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        let lines = nums
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        let mut stamp = [0u8; 32];
        stamp.copy_from_slice(&head[8..40]);
        Some(Self {
            offsets,
            lines,
            csv,
            stamp,
        })
    }

    /// Saves the index (atomically).
    pub fn save(&self, index_path: &Path) -> std::io::Result<()> {
        let mut out = Vec::with_capacity(48 + self.offsets.len() * 12);
        out.extend_from_slice(if self.csv { MAGIC_CSV } else { MAGIC_JSONL });
        out.extend_from_slice(&self.stamp);
        out.extend_from_slice(&(self.offsets.len() as u64).to_le_bytes());
        for o in &self.offsets {
            out.extend_from_slice(&o.to_le_bytes());
        }
        for l in &self.lines {
            out.extend_from_slice(&l.to_le_bytes());
        }
        if let Some(parent) = index_path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        crate::core::atomic::AtomicFile::write_whole(index_path, &out)
    }

    /// The saved index if valid, else a fresh one (saved for next time).
    pub fn open_or_build(index_path: &Path, data: &Path) -> std::io::Result<Self> {
        if let Some(ix) = Self::load(index_path, data) {
            return Ok(ix);
        }
        let is_csv = data
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        let ix = if is_csv {
            Self::build_csv(data)?
        } else {
            Self::build(data, |_| {})?
        };
        // An index that cannot be saved is rebuilt next time; reading goes on.
        let _ = ix.save(index_path);
        Ok(ix)
    }

    /// Items `start..start + count` (clamped to the dataset), each parsed as the streaming
    /// reader would, with its line number as the default id.
    pub fn window(
        &self,
        data: &Path,
        file: &str,
        start: usize,
        count: usize,
    ) -> std::io::Result<Vec<Result<Item, Diagnostic>>> {
        let end = start.saturating_add(count).min(self.len());
        if start >= end {
            return Ok(Vec::new());
        }
        if self.csv {
            return self.csv_window(data, file, start, end);
        }
        let mut f = BufReader::new(File::open(data)?);
        f.seek(SeekFrom::Start(self.offsets[start]))?;
        let mut out = Vec::with_capacity(end - start);
        let mut line = Vec::new();
        for i in start..end {
            line.clear();
            // Lines between indexed ones are blank: skip to this item's line.
            let skip = self.offsets[i] - f.stream_position()?;
            if skip > 0 {
                f.seek_relative(i64::try_from(skip).unwrap_or(i64::MAX))?;
            }
            std::io::BufRead::read_until(&mut f, b'\n', &mut line)?;
            let complete = line.last() == Some(&b'\n');
            let text = String::from_utf8_lossy(&line);
            let text = text
                .trim_end_matches(['\n', '\r'])
                .trim_start_matches('\u{feff}');
            let parser = LineParser {
                file,
                line_no: self.lines[i] as usize,
            };
            out.push(parser.item(text, complete));
        }
        Ok(out)
    }
}

impl LineIndex {
    fn csv_window(
        &self,
        data: &Path,
        file: &str,
        start: usize,
        end: usize,
    ) -> std::io::Result<Vec<Result<Item, Diagnostic>>> {
        let mut head = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(File::open(data)?);
        let headers = super::csv_file::headers_of(head.headers().map_err(std::io::Error::other)?);
        let mut f = File::open(data)?;
        f.seek(SeekFrom::Start(self.offsets[start]))?;
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(BufReader::new(f));
        let mut record = csv::StringRecord::new();
        let mut out = Vec::with_capacity(end - start);
        for i in start..end {
            let line = self.lines[i] as usize;
            match reader.read_record(&mut record) {
                Ok(true) => out.push(super::csv_file::record_item(
                    file,
                    &headers,
                    &record,
                    line,
                    usize::MAX,
                )),
                Ok(false) => break,
                Err(e) => out.push(Err(Diagnostic::at(
                    file,
                    crate::core::diag::Pos::new(line, 1),
                    format!("not valid CSV: {e}"),
                ))),
            }
        }
        Ok(out)
    }
}

/// Length, modification time, and the first and last 64 KiB of the file, hashed.
fn stamp(path: &Path) -> std::io::Result<[u8; 32]> {
    let mut f = File::open(path)?;
    let meta = f.metadata()?;
    let mut h = Sha256::new();
    h.update(meta.len().to_le_bytes());
    if let Ok(m) = meta.modified()
        && let Ok(d) = m.duration_since(std::time::UNIX_EPOCH)
    {
        h.update(d.as_nanos().to_le_bytes());
    }
    let mut buf = vec![0u8; usize::try_from(PROBE).unwrap_or(65_536)];
    let n = f.read(&mut buf)?;
    h.update(&buf[..n]);
    if meta.len() > PROBE {
        f.seek(SeekFrom::Start(meta.len() - PROBE))?;
        let n = f.read(&mut buf)?;
        h.update(&buf[..n]);
    }
    Ok(h.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    #[test]
    fn windows_match_the_streaming_reader() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("d.jsonl");
        let mut text = String::new();
        for i in 0..50 {
            if i % 7 == 3 {
                text.push_str("\n  \n");
            }
            let _ = writeln!(text, "{{\"submission\": \"answer {i}\"}}");
        }
        text.push_str("{\"id\": \"last\", \"submission\": \"no newline\"}");
        std::fs::write(&data, &text).unwrap();
        let streamed: Vec<Item> = crate::formats::dataset::open_dataset(
            &data,
            crate::formats::dataset::ReadOptions::default(),
        )
        .unwrap()
        .items
        .map(Result::unwrap)
        .collect();
        let ix_path = dir.path().join("d.idx");
        let ix = LineIndex::open_or_build(&ix_path, &data).unwrap();
        assert_eq!(ix.len(), 51);
        let file = data.display().to_string();
        let window: Vec<Item> = ix
            .window(&data, &file, 20, 100)
            .unwrap()
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(window.len(), 31);
        for (w, s) in window.iter().zip(&streamed[20..]) {
            assert_eq!(
                (&w.id, &w.submission, &w.origin),
                (&s.id, &s.submission, &s.origin)
            );
        }
        // Saved and reloaded; a changed file is not served by a stale index.
        assert_eq!(LineIndex::load(&ix_path, &data).unwrap(), ix);
        std::fs::write(&data, "{\"submission\": \"changed\"}\n").unwrap();
        assert!(LineIndex::load(&ix_path, &data).is_none());
        let ix = LineIndex::open_or_build(&ix_path, &data).unwrap();
        assert_eq!(ix.len(), 1);
        let bad = ix.window(&data, &file, 0, 1).unwrap();
        assert!(bad[0].is_ok());
    }

    #[test]
    fn csv_windows_match_the_streaming_reader() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("d.csv");
        let mut text = String::from("id,submission,prompt\n");
        for i in 0..30 {
            let _ = writeln!(
                text,
                "c{i},\"answer {i}, with a comma\nand a second line\",q{i}"
            );
        }
        std::fs::write(&data, &text).unwrap();
        let streamed: Vec<Item> = crate::formats::dataset::open_dataset(
            &data,
            crate::formats::dataset::ReadOptions::default(),
        )
        .unwrap()
        .items
        .map(Result::unwrap)
        .collect();
        let ix_path = dir.path().join("d.idx");
        let ix = LineIndex::open_or_build(&ix_path, &data).unwrap();
        assert_eq!(ix.len(), 30);
        let file = data.display().to_string();
        let window: Vec<Item> = ix
            .window(&data, &file, 25, 10)
            .unwrap()
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(window.len(), 5);
        for (w, s) in window.iter().zip(&streamed[25..]) {
            assert_eq!(
                (&w.id, &w.submission, &w.prompt, &w.origin),
                (&s.id, &s.submission, &s.prompt, &s.origin)
            );
        }
        assert_eq!(LineIndex::load(&ix_path, &data).unwrap(), ix);
    }
}
