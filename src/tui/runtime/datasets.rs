//! The runtime's work on datasets for the UI, off its loop: datasets that appeared since it
//! started, one added by path (and the path prompt's completion), each JSONL/CSV file's line
//! index (built once, kept), a window of items, and a search through every item that a
//! newer search stops.

use crate::tui::msg::FailureKind;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::reads;
use super::{Runtime, Topic, failed, misrouted};
use crate::formats::dataset::index::LineIndex;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::tui::data::DatasetInfo;
use crate::tui::effect::{Effect, RunScan};
use crate::tui::msg::Msg;
use crate::tui::path_prompt;

/// Why a dataset effect failed, worded once for the UI.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("not opened: {0}")]
    Add(String),
    /// A window's own words (they name the file).
    #[error("{0}")]
    Window(String),
    #[error("run {run_id}: {error}")]
    RunFilter {
        run_id: String,
        error: crate::run::Error,
    },
    #[error("{0}")]
    Read(crate::formats::Diagnostics),
}

impl super::Failed for Failure {
    fn kind(&self) -> FailureKind {
        match self {
            Failure::Add(_) | Failure::Read(_) => FailureKind::Refused,
            Failure::RunFilter { error, .. } => FailureKind::of_run(error),
            Failure::Window(_) => FailureKind::Other,
        }
    }
}

impl Runtime {
    /// Carries out a dataset effect (`Topic::Datasets`).
    pub(super) fn handle_datasets(&self, effect: Effect) -> Option<Msg> {
        match effect {
            Effect::FindDatasets => {
                let fresh = self.new_datasets();
                (!fresh.is_empty()).then_some(Msg::DatasetsFound(fresh))
            }
            Effect::AddDataset(typed) => Some(match self.add_dataset(&typed) {
                Ok(info) => Msg::DatasetAdded(info),
                Err(e) => failed(&Failure::Add(e)),
            }),
            Effect::CompletePath(typed) => {
                let (text, candidates) = path_prompt::complete(&typed, &self.ws.root);
                Some(Msg::PathCompleted {
                    typed,
                    text,
                    candidates,
                })
            }
            Effect::LoadWindow {
                tag,
                dataset,
                start,
                count,
            } => Some(
                self.window(tag, dataset, start, count)
                    .unwrap_or_else(|e| failed(&Failure::Window(e))),
            ),
            Effect::Scan {
                tag,
                dataset,
                query,
                run,
            } => self.scan(tag, dataset, &query, run.as_ref()),
            other => Some(misrouted(Topic::Datasets, &other)),
        }
    }

    /// Datasets that appeared since the UI started (a file put in `datasets/`, one added
    /// with `rubricate datasets add`), appended so every known position stays the same.
    fn new_datasets(&self) -> Vec<DatasetInfo> {
        let now = reads::datasets(&self.ws);
        let Ok(mut known) = self.datasets.write() else {
            return Vec::new();
        };
        let fresh: Vec<DatasetInfo> = now
            .into_iter()
            .filter(|d| !known.iter().any(|k| k.path == d.path))
            .collect();
        known.extend(fresh.iter().cloned());
        fresh
    }

    /// Registers the dataset file at a typed path (under its file name, `-2` … when that
    /// name is another file's) and lists it; a file already listed is that entry.
    fn add_dataset(&self, typed: &str) -> Result<DatasetInfo, String> {
        let path = path_prompt::resolve(typed, &self.ws.root);
        if !path.is_file() {
            return Err(format!(
                "{}: no such file (tab completes a path; relative paths start at the workspace)",
                path.display()
            ));
        }
        // An agentv eval (YAML) is a dataset of its cases, as `datasets add` reads it.
        let eval_yaml = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"));
        if !eval_yaml && !crate::formats::dataset::is_dataset_file(&path) {
            return Err(format!(
                "{}: not a dataset file (JSONL, CSV, a JSON array or object of items, or an agentv eval)",
                path.display()
            ));
        }
        let path = std::fs::canonicalize(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some(known) = self.datasets.read().ok().and_then(|list| {
            list.iter()
                .find(|d| std::fs::canonicalize(&d.path).is_ok_and(|p| p == path))
                .cloned()
        }) {
            return Ok(known);
        }
        let registry = crate::store::datasets::Datasets::new(&self.ws.root);
        let taken: Vec<String> = registry
            .list()
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|d| d.name)
            .collect();
        let stem = crate::store::labels::dataset_key(&path);
        let name = (1..1000)
            .map(|k| {
                if k == 1 {
                    stem.clone()
                } else {
                    format!("{stem}-{k}")
                }
            })
            .find(|n| !taken.contains(n))
            .ok_or_else(|| format!("every name from {stem} to {stem}-999 is taken"))?;
        let entry = registry.register(&name, &path).map_err(|e| e.to_string())?;
        let info = DatasetInfo {
            key: crate::store::labels::dataset_key(std::path::Path::new(&entry.path)),
            path: registry.resolve(&entry),
            index: registry.index_path(&entry.name),
            items: entry.items,
            name: entry.name,
        };
        if let Ok(mut list) = self.datasets.write() {
            list.push(info.clone());
        }
        Ok(info)
    }

    fn index(&self, dataset: usize) -> Result<Arc<LineIndex>, String> {
        if let Some(ix) = self
            .indexes
            .lock()
            .ok()
            .and_then(|m| m.get(&dataset).cloned())
        {
            return Ok(ix);
        }
        let d = &self.dataset(dataset).ok_or("no such dataset")?;
        let ix = LineIndex::open_or_build(&d.index, &d.path)
            .map_err(|e| format!("{}: {e}", d.path.display()))?;
        let ix = Arc::new(ix);
        if let Ok(mut m) = self.indexes.lock() {
            m.insert(dataset, Arc::clone(&ix));
        }
        Ok(ix)
    }

    fn window(&self, tag: u64, dataset: usize, start: usize, count: usize) -> Result<Msg, String> {
        let d = &self.dataset(dataset).ok_or("no such dataset")?;
        let file = d.path.display().to_string();
        let indexable = d
            .path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("csv"));
        if indexable {
            let ix = self.index(dataset)?;
            let items = ix
                .window(&d.path, &file, start, count)
                .map_err(|e| format!("{file}: {e}"))?;
            let items = items
                .into_iter()
                .enumerate()
                .filter_map(|(i, r)| r.ok().map(|item| (start + i, item)))
                .collect();
            return Ok(Msg::Window {
                tag,
                total: ix.len(),
                items,
            });
        }
        // A JSON document is streamed: read it through, keep the window.
        let dataset_items = open_dataset(&d.path, ReadOptions::default())
            .map_err(|e| e.to_string())?
            .items;
        let mut total = 0;
        let mut items = Vec::new();
        for (i, item) in dataset_items.enumerate() {
            total = i + 1;
            if (start..start + count).contains(&i)
                && let Ok(item) = item
            {
                items.push((i, item));
            }
        }
        Ok(Msg::Window { tag, total, items })
    }

    /// Reads every item once: its id, and whether its submission holds `query` — and, with
    /// a filter on the run, whether the run's pass (done first, positions only) kept it.
    fn scan(&self, tag: u64, dataset: usize, query: &str, run: Option<&RunScan>) -> Option<Msg> {
        let d = &self.dataset(dataset)?;
        let needle = query.to_lowercase();
        let kept = match run {
            Some(r) => match crate::tui::run_scan::filter_run(
                &self.ws.runs_dir(),
                &r.run_id,
                &r.filter,
                &r.labels,
            ) {
                Ok(kept) => Some(kept),
                Err(error) => {
                    return Some(failed(&Failure::RunFilter {
                        run_id: r.run_id.clone(),
                        error,
                    }));
                }
            },
            None => None,
        };
        // A filter on the run alone: its positions are the list, no item is read (nor
        // every item's id kept).
        let kept = match kept {
            Some(matches) if needle.is_empty() => {
                return Some(Msg::Scanned {
                    tag,
                    matches,
                    ids: Vec::new(),
                });
            }
            kept => kept,
        };
        let items = match open_dataset(&d.path, ReadOptions::default()) {
            Ok(ds) => ds.items,
            Err(e) => return Some(failed(&Failure::Read(e))),
        };
        let mut ids = Vec::new();
        let mut matches = Vec::new();
        let ui = self.ui();
        for (i, item) in items.enumerate() {
            if i % 4096 == 0 && self.latest_scan.load(Ordering::SeqCst) > tag {
                return None; // superseded: a newer search is running
            }
            // Progress a few times a second on a large dataset (dropped when the UI is busy).
            if i % 65_536 == 0
                && i > 0
                && let Some(ui) = &ui
            {
                let _ = ui.try_send(Msg::ScanProgress {
                    tag,
                    read: i,
                    total: d.items,
                });
            }
            let Ok(item) = item else {
                ids.push(String::new());
                continue;
            };
            let in_run = kept.as_ref().is_none_or(|k| k.binary_search(&i).is_ok());
            if in_run && (needle.is_empty() || item.submission.to_lowercase().contains(&needle)) {
                matches.push(i);
            }
            ids.push(item.id);
        }
        Some(Msg::Scanned { tag, matches, ids })
    }
}
