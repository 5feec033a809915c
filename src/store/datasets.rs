//! Datasets registered in a workspace: read in place by path, content-hashed, listed in
//! `.rubricate/datasets.json`; JSONL datasets get a line index in `.rubricate/index/`.

use crate::store::StoreError;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::core::atomic::AtomicFile;

/// A dataset in the workspace's list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetEntry {
    /// The name it is known by (it names its index file).
    pub name: String,
    /// Relative to the workspace when inside it, else absolute.
    pub path: String,
    /// SHA-256 of the file when it was registered (or last refreshed).
    pub hash: String,
    /// Its size when registered.
    pub bytes: u64,
    /// Items counted, once known.
    pub items: Option<usize>,
    /// When it was added (RFC 3339).
    pub added_at: String,
}

/// The workspace's list of datasets.
#[derive(Debug, Clone)]
pub struct Datasets {
    root: PathBuf,
}

impl Datasets {
    /// The list of the workspace at `root`.
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
        }
    }

    fn file(&self) -> PathBuf {
        self.root.join(".rubricate").join("datasets.json")
    }

    /// Where the line index of a dataset lives.
    pub fn index_path(&self, name: &str) -> PathBuf {
        self.root
            .join(".rubricate")
            .join("index")
            .join(format!("{name}.idx"))
    }

    /// Every dataset in the list; none when there is no list yet.
    pub fn list(&self) -> Result<Vec<DatasetEntry>, StoreError> {
        let path = self.file();
        let all: Vec<DatasetEntry> = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                StoreError::Refused(format!(
                    "{}:{}:{}: the dataset list is damaged ({e})",
                    path.display(),
                    e.line(),
                    e.column()
                ))
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(&path, e)),
        };
        // A name read back names the index file: the same rule as when it was added.
        for d in &all {
            super::names::check("dataset name", &d.name).map_err(|e| {
                StoreError::Refused(format!("{}: {e}; remove that entry", path.display()))
            })?;
        }
        Ok(all)
    }

    /// The dataset named `name`; refused when there is none.
    pub fn get(&self, name: &str) -> Result<DatasetEntry, StoreError> {
        self.list()?
            .into_iter()
            .find(|d| d.name == name)
            .ok_or_else(|| {
                StoreError::Refused(format!(
                    "no dataset '{name}' in this workspace; `rubricate datasets list` shows them"
                ))
            })
    }

    /// The dataset files in the workspace's `datasets/` folder, sorted: the UI lists them,
    /// and commands find them by name, registered or not.
    pub fn in_folder(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.root.join("datasets")) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| crate::formats::dataset::is_dataset_file(p))
            .collect();
        files.sort();
        files
    }

    /// The file of the dataset called `name`: the registered one, else the file of that
    /// name in `datasets/` (as the UI lists it); refused when there is neither.
    pub fn find(&self, name: &str) -> Result<PathBuf, StoreError> {
        match self.get(name) {
            Ok(entry) => Ok(self.resolve(&entry)),
            Err(e) => self
                .in_folder()
                .into_iter()
                .find(|p| crate::store::labels::dataset_key(p) == name)
                .ok_or(e),
        }
    }

    /// The file of an entry.
    pub fn resolve(&self, entry: &DatasetEntry) -> PathBuf {
        let p = Path::new(&entry.path);
        if p.is_relative() {
            self.root.join(p)
        } else {
            p.to_path_buf()
        }
    }

    /// Registers a dataset file under `name`, or refreshes it: its hash, its item count and,
    /// for JSONL and CSV, its line index (JSON documents are counted by streaming them).
    /// What `rubricate datasets add` and the UI's "open a file" both do.
    pub fn register(&self, name: &str, file: &Path) -> Result<DatasetEntry, StoreError> {
        use crate::formats::dataset::index::LineIndex;
        crate::store::labels::check_name("dataset name", name)
            .map_err(|e| StoreError::Refused(e.to_string()))?;
        let located =
            |e: &dyn std::fmt::Display| StoreError::Refused(format!("{}: {e}", file.display()));
        let hash = crate::store::runs::file_hash(file).map_err(|e| located(&e))?;
        let items = if indexable(file) {
            let ix = if is_csv(file) {
                LineIndex::build_csv(file)
            } else {
                LineIndex::build(file, |_| {})
            }
            .map_err(|e| located(&e))?;
            ix.save(&self.index_path(name))
                .map_err(|e| StoreError::Refused(format!("cannot save the index: {e}")))?;
            ix.len()
        } else {
            let read = crate::formats::dataset::open_dataset(
                file,
                crate::formats::dataset::ReadOptions::default(),
            )
            .map_err(|d| StoreError::Refused(d.to_string()))?;
            let mut n = 0;
            for item in read.items {
                item.map_err(|d| StoreError::Refused(d.to_string()))?;
                n += 1;
            }
            n
        };
        self.add(name, file, hash, Some(items))
    }

    /// Adds (or refreshes) a dataset by path.
    pub fn add(
        &self,
        name: &str,
        file: &Path,
        hash: String,
        items: Option<usize>,
    ) -> Result<DatasetEntry, StoreError> {
        crate::store::labels::check_name("dataset name", name)
            .map_err(|e| StoreError::Refused(e.to_string()))?;
        let abs = std::fs::canonicalize(file).map_err(|e| StoreError::io(file, e))?;
        let root = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
        let recorded = abs
            .strip_prefix(&root)
            .map_or_else(|_| abs.clone(), Path::to_path_buf);
        let bytes = std::fs::metadata(&abs)
            .map_err(|e| StoreError::io(&abs, e))?
            .len();
        let entry = DatasetEntry {
            name: name.to_owned(),
            path: recorded.display().to_string(),
            hash,
            bytes,
            items,
            added_at: jiff::Timestamp::now().to_string(),
        };
        let mut all = self.list()?;
        all.retain(|d| d.name != name);
        all.push(entry.clone());
        all.sort_by(|a, b| a.name.cmp(&b.name));
        let path = self.file();
        let text =
            serde_json::to_string_pretty(&all).map_err(|e| StoreError::Refused(e.to_string()))?;
        AtomicFile::write_whole(&path, text.as_bytes()).map_err(|e| StoreError::io(&path, e))?;
        Ok(entry)
    }
}

/// JSONL and CSV datasets get a line index; JSON documents are streamed.
pub fn indexable(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("csv"))
}

fn is_csv(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
}
