//! What the terminal UI reads from the workspace at start and when a dataset opens: the
//! datasets (registered ones and files in `datasets/`), each with the rubric of its latest
//! run, that run's results by item, and the annotator's current labels. Plain functions,
//! run by the runtime (never in `update`); what they read into is `tui::data`'s.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::model::Rubric;
use crate::store::Workspace;
use crate::store::datasets::Datasets;
use crate::store::labels::{self, dataset_key};
use crate::store::runs::{Manifest, same_file};
use crate::tui::data::{DatasetInfo, Labels, RunData};
use crate::tui::run_data::{ItemDetail, RunBuilder};

/// The datasets the UI lists: the registered ones, then the dataset files in `datasets/`
/// that are not among them.
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
    for path in registry.in_folder() {
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
    out
}

/// Every run over `dataset` (by its file), oldest first.
pub fn runs_of(ws: &Workspace, dataset: &Path) -> Vec<Manifest> {
    crate::store::runs::runs_over(&ws.runs_dir(), &ws.root, dataset)
}

/// The latest run over `dataset`, if any, with its results.
pub fn latest_run(ws: &Workspace, dataset: &Path) -> Option<RunData> {
    let m = runs_of(ws, dataset).pop()?;
    load_run(&ws.runs_dir(), m)
}

/// The run `back` places before the latest over `dataset` (1: the one before it).
pub fn earlier_run(ws: &Workspace, dataset: &Path, back: usize) -> Option<RunData> {
    let mut runs = runs_of(ws, dataset);
    let i = runs.len().checked_sub(1 + back)?;
    let m = runs.swap_remove(i);
    load_run(&ws.runs_dir(), m)
}

/// A saved run's figures, from one pass over its journal replayed by the run engine (the
/// run's rubric, or each item's own): nothing per item is kept. A run of items' own rubrics
/// shows their criteria by id, in the order they first appear.
pub fn load_run(runs_dir: &Path, m: Manifest) -> Option<RunData> {
    let rec = crate::run::record::Recording::open(runs_dir, &m.id).ok()?;
    let mut evaluations = rec.evaluations().ok()?;
    let rubric_id = m.rubric_id.clone();
    let mut builder = RunBuilder::new(m, Arc::new(Rubric::new(rubric_id.clone(), Vec::new())));
    let mut first: Option<Arc<Rubric>> = None;
    let mut union: Vec<crate::model::Criterion> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut shared = true;
    while let Some(next) = evaluations.next() {
        let (position, e) = next.ok()?;
        if let Some(r) = evaluations.last_rubric() {
            builder.graded_with(r);
            match &first {
                Some(f) if Arc::ptr_eq(f, r) => {}
                Some(_) => shared = false,
                None => first = Some(Arc::clone(r)),
            }
            if !shared || union.is_empty() {
                for c in &r.criteria {
                    if seen.insert(c.id.clone()) {
                        union.push(c.clone());
                    }
                }
            }
        }
        builder.add(position, &e);
    }
    builder.set_rubric(match first {
        Some(r) if shared => r,
        _ => Arc::new(Rubric::new(rubric_id, union)),
    });
    Some(builder.finish())
}

/// The items of a run at `positions` (the few on screen), read from its journal: by
/// position, the item as the UI shows it.
pub fn run_details(
    runs_dir: &Path,
    run_id: &str,
    positions: &[usize],
) -> Result<HashMap<usize, ItemDetail>, crate::run::Error> {
    let wanted: std::collections::HashSet<usize> = positions.iter().copied().collect();
    let rec = crate::run::record::Recording::open(runs_dir, run_id)?;
    let mut out = HashMap::new();
    let last = positions.iter().copied().max().unwrap_or(0);
    for next in rec.evaluations()? {
        let (position, e) = next?;
        if wanted.contains(&position) {
            out.insert(position, ItemDetail::of(e));
        }
        // Items come in dataset order: past the last one asked for, nothing is wanted.
        if position >= last {
            break;
        }
    }
    Ok(out)
}

/// The annotator's current labels of a dataset (folded as the journal is read).
pub fn labels(ws: &Workspace, key: &str, annotator: &str) -> Labels {
    let path = labels::journal_path(&ws.labels_dir(), key, annotator);
    labels::current_verdicts(&path).unwrap_or_default()
}

/// The annotator's current labels of a dataset and the notes on them, by (item,
/// criterion), from one read of the journal folded as it is read.
pub fn labels_and_notes(
    ws: &Workspace,
    key: &str,
    annotator: &str,
) -> (Labels, BTreeMap<(String, String), String>) {
    let path = labels::journal_path(&ws.labels_dir(), key, annotator);
    let both = labels::current_kept(&path, |l| (l.verdict, l.note)).unwrap_or_default();
    let mut notes = BTreeMap::new();
    let labels = both
        .into_iter()
        .map(|(cell, (verdict, note))| {
            if !note.is_empty() {
                notes.insert(cell.clone(), note);
            }
            (cell, verdict)
        })
        .collect();
    (labels, notes)
}

/// The rubric to label a dataset with: its latest run's (a pairwise run's written
/// criteria), else the dataset's own (an
/// autorubric file's, as `grade` would grade it), else the first in `rubrics/`. (An item
/// that brings a rubric of its own is labelled with that: `App::item_rubric`.)
pub fn labelling_rubric(
    ws: &Workspace,
    d: &DatasetInfo,
    run: Option<&RunData>,
) -> Option<Arc<Rubric>> {
    if let Some(r) = run {
        // A pairwise run's cells are its criteria in both orders; people label each
        // written criterion once (a preference).
        if !r.rubric.systems.is_empty() {
            return Some(Arc::new(crate::model::pair::written(&r.rubric)));
        }
        return Some(Arc::clone(&r.rubric));
    }
    let opened = crate::formats::dataset::open_dataset(
        &d.path,
        crate::formats::dataset::ReadOptions::default(),
    )
    .ok();
    if let Some(own) = opened
        .as_ref()
        .and_then(|ds| crate::run::effective_rubric(None, ds))
    {
        return Some(own.rubric);
    }
    // Pairs are labelled with a pairwise rubric, single answers with another: the first
    // of the right mode, else the first at all.
    let pairs = opened
        .and_then(|mut ds| ds.items.next())
        .and_then(Result::ok)
        .is_some_and(|item| !item.candidates.is_empty());
    let mut files: Vec<PathBuf> = std::fs::read_dir(ws.path("rubrics"))
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    files.sort();
    let rubrics: Vec<Arc<Rubric>> = files
        .iter()
        .filter_map(|f| crate::formats::load_rubric(&f.display().to_string()).ok())
        .map(|l| l.rubric)
        .collect();
    rubrics
        .iter()
        .find(|r| r.mode.is_pairwise() == pairs)
        .or_else(|| rubrics.first())
        .cloned()
}
