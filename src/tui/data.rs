//! What the terminal UI reads from the workspace at start and when a dataset opens: the
//! datasets (registered ones and files in `datasets/`), each with the rubric of its latest
//! run, that run's results by item, and the annotator's current labels. Plain functions,
//! run by the effect runtime (never in `update`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::executor::build_evaluation;
use crate::model::{CriterionResult, Item, Rubric};
use crate::store::Workspace;
use crate::store::datasets::Datasets;
use crate::store::labels::{self, dataset_key, fold};
use crate::store::runs::{Manifest, RunDir, list_runs};

/// A dataset as the UI lists it.
#[derive(Debug, Clone)]
pub struct DatasetInfo {
    pub name: String,
    pub path: PathBuf,
    /// The key of its label journals.
    pub key: String,
    pub index: PathBuf,
    pub items: Option<usize>,
}

/// A run's results for the UI: by item id, the evaluation rebuilt from the journal.
#[derive(Debug, Clone)]
pub struct RunData {
    pub manifest: Manifest,
    pub rubric: Arc<Rubric>,
    pub by_item: HashMap<String, ItemResult>,
    /// Item ids in dataset order.
    pub order: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct ItemResult {
    /// The item's position in the dataset.
    pub position: usize,
    pub score: Option<f64>,
    pub passed: bool,
    pub incomplete: bool,
    pub results: Vec<CriterionResult>,
}

/// Labels by (item id, criterion id) → verdict text or number.
pub type Labels = BTreeMap<(String, String), serde_json::Value>;

pub fn datasets(ws: &Workspace) -> Vec<DatasetInfo> {
    let registry = Datasets::new(&ws.root);
    let mut out: Vec<DatasetInfo> = registry
        .list()
        .unwrap_or_default()
        .into_iter()
        .map(|d| DatasetInfo {
            key: dataset_key(Path::new(&d.path)),
            path: registry.resolve(&d),
            index: registry.index_path(&d.name),
            items: d.items,
            name: d.name,
        })
        .collect();
    if let Ok(entries) = std::fs::read_dir(ws.path("datasets")) {
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| crate::formats::dataset::is_dataset_file(p))
            .collect();
        files.sort();
        for path in files {
            if out.iter().any(|d| same_file(&d.path, &path)) {
                continue;
            }
            let name = dataset_key(&path);
            out.push(DatasetInfo {
                key: name.clone(),
                index: registry.index_path(&name),
                items: None,
                name,
                path,
            });
        }
    }
    out
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// Every run over `dataset` (by its file), oldest first.
pub fn runs_of(ws: &Workspace, dataset: &Path) -> Vec<Manifest> {
    list_runs(&ws.runs_dir())
        .into_iter()
        .filter_map(Result::ok)
        .filter(|m| {
            let p = Path::new(&m.dataset.path);
            let p = if p.is_relative() {
                ws.root.join(p)
            } else {
                p.to_path_buf()
            };
            same_file(&p, dataset)
        })
        .collect()
}

/// The latest run over `dataset`, if any, with its results.
pub fn latest_run(ws: &Workspace, dataset: &Path) -> Option<RunData> {
    let m = runs_of(ws, dataset).pop()?;
    load_run(&RunDir::new(&ws.runs_dir(), &m.id), m)
}

/// The run `back` places before the latest over `dataset` (1: the one before it).
pub fn earlier_run(ws: &Workspace, dataset: &Path, back: usize) -> Option<RunData> {
    let mut runs = runs_of(ws, dataset);
    let i = runs.len().checked_sub(1 + back)?;
    let m = runs.swap_remove(i);
    load_run(&RunDir::new(&ws.runs_dir(), &m.id), m)
}

pub fn load_run(run: &RunDir, m: Manifest) -> Option<RunData> {
    if m.rubric.is_null() {
        return None;
    }
    let text = m.rubric.to_string();
    let file = format!("{}#rubric", run.manifest_path().display());
    let loaded =
        crate::formats::parse_rubric_text(&file, &text, &m.rubric_id, &run.dir, None).ok()?;
    let rubric = Arc::clone(&loaded.rubric);
    let mut by_item = HashMap::new();
    let mut order = Vec::new();
    // Read item by item (in dataset order); only the evaluations are kept.
    for group in run.stream_cells(&m).ok()? {
        let group = group.ok()?;
        let (id, position) = group
            .cells
            .first()
            .map(|c| (c.item_id.clone(), c.item))
            .unwrap_or_default();
        let mut results: Vec<CriterionResult> = group.cells.into_iter().map(|c| c.result).collect();
        results.sort_by_key(|r| rubric.criteria.iter().position(|c| c.id == r.criterion_id));
        let stub = Item {
            id: id.clone(),
            ..Item::default()
        };
        let e = build_evaluation(&rubric, &stub, results, "rubricate");
        order.push(id.clone());
        by_item.insert(
            id,
            ItemResult {
                position,
                score: e.score,
                passed: e.passed,
                incomplete: e.incomplete,
                results: e.results,
            },
        );
    }
    Some(RunData {
        manifest: m,
        rubric,
        by_item,
        order,
    })
}

/// The annotator's current labels of a dataset.
pub fn labels(ws: &Workspace, key: &str, annotator: &str) -> Labels {
    let path = labels::journal_path(&ws.labels_dir(), key, annotator);
    let Ok((events, _)) = labels::read(&path) else {
        return Labels::new();
    };
    fold(&events)
        .into_iter()
        .map(|(k, l)| (k, l.verdict))
        .collect()
}

/// The notes on an annotator's current labels of a dataset, by (item, criterion).
pub fn notes(ws: &Workspace, key: &str, annotator: &str) -> BTreeMap<(String, String), String> {
    let path = labels::journal_path(&ws.labels_dir(), key, annotator);
    let Ok((events, _)) = labels::read(&path) else {
        return BTreeMap::new();
    };
    fold(&events)
        .into_iter()
        .filter(|(_, l)| !l.note.is_empty())
        .map(|(k, l)| (k, l.note))
        .collect()
}

/// The rubric to label a dataset with: its latest run's, else the first in `rubrics/`.
pub fn labelling_rubric(ws: &Workspace, run: Option<&RunData>) -> Option<Arc<Rubric>> {
    if let Some(r) = run {
        return Some(Arc::clone(&r.rubric));
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(ws.path("rubrics"))
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    files.sort();
    files
        .iter()
        .find_map(|f| crate::formats::load_rubric(&f.display().to_string()).ok())
        .map(|l| l.rubric)
}
