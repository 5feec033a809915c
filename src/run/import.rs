//! Another system's results kept as a saved run (`rubricate runs import`), so `runs
//! compare`, `metrics` and the Results pane work across systems: "my agentv baseline
//! against rubricate's run of the same eval file".
//!
//! The results are matched to a dataset's items — agentv by test id, autorubric by
//! position — and each verdict to a criterion of the item's rubric (by id, else by
//! requirement text, else by position); the run journals them as cells, exactly as a
//! graded run would, and its scores are the rubric's arithmetic over them.

use std::collections::HashMap;
use std::path::Path;

use super::{Error, Recording, RunSettings, RunsHome};
use crate::formats::LoadedRubric;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::formats::foreign_runs::{
    CriterionKey, ForeignItem, ForeignRun, ForeignVerdict, ItemKey,
};
use crate::model::{CriterionResult, Failure, Rubric};

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    pub run_id: String,
    /// Items of the dataset with results.
    pub items: usize,
    pub cells: usize,
    /// Results for items the dataset does not have (by id or position).
    pub unmatched_items: Vec<String>,
    /// Verdicts naming no criterion of their item's rubric (another grader's checks).
    pub unmatched_verdicts: usize,
    /// Verdicts that do not fit their criterion (recorded as failures).
    pub misfits: usize,
}

/// Records `results` as a run of `dataset` in `home`, scored by `rubric` when given (as
/// `grade --rubric` overrides the items' own), else by the dataset's and items' rubrics.
pub fn import(
    home: &RunsHome,
    results: &ForeignRun,
    dataset: &Path,
    name: Option<&str>,
    rubric: Option<&LoadedRubric>,
) -> Result<Imported, Error> {
    let ds = open_dataset(dataset, ReadOptions::default())?;
    let overridden = rubric.is_some();
    let shared: Option<LoadedRubric> = rubric.cloned().or_else(|| ds.header.rubric.clone());
    let mut by_id: HashMap<&str, &ForeignItem> = HashMap::new();
    let mut by_position: HashMap<usize, &ForeignItem> = HashMap::new();
    for item in &results.items {
        match &item.key {
            ItemKey::Id(id) => by_id.insert(id.as_str(), item),
            ItemKey::Position(p) => by_position.insert(*p, item),
        };
    }
    let settings = RunSettings {
        // Items bring their own rubrics (agentv cases) unless the dataset has one.
        override_rubric: shared.is_some(),
        ..RunSettings::default()
    };
    let label = name.map_or_else(
        || {
            let base = format!("{} import: {}", results.system, results.name);
            crate::store::runs::RunDir::unused_name(&home.runs_dir, &base)
        },
        str::to_owned,
    );
    let (mut rec, mut writer) =
        Recording::create(home, Some(&label), shared.as_ref(), dataset, &settings)?;
    let mut out = Imported {
        run_id: rec.manifest.id.clone(),
        ..Imported::default()
    };
    let mut seen_ids = std::collections::HashSet::new();
    let mut seen_positions = std::collections::HashSet::new();
    for (position, item) in ds.items.enumerate() {
        let item = item?;
        let found = by_id
            .get(item.id.as_str())
            .inspect(|_| {
                seen_ids.insert(item.id.clone());
            })
            .or_else(|| {
                by_position.get(&position).inspect(|_| {
                    seen_positions.insert(position);
                })
            });
        let Some(found) = found else {
            continue;
        };
        let own = item.rubric.as_deref().filter(|_| !overridden);
        let rubric = own.or_else(|| shared.as_ref().map(|r| &*r.rubric));
        let Some(rubric) = rubric else {
            return Err(Error::input(format!(
                "{}: item '{}' has no rubric to match the imported verdicts to; give the dataset its rubric",
                dataset.display(),
                item.id
            )));
        };
        let cells = cells_of(rubric, found, &mut out);
        if cells.is_empty() {
            continue;
        }
        out.items += 1;
        out.cells += cells.len();
        writer.append(position, &item.id, &cells)?;
    }
    writer.finish()?;
    if out.items == 0 {
        // Nothing of this dataset: no run is kept for it.
        let _ = std::fs::remove_dir_all(&rec.run.dir);
        let matched = seen_ids.len() + seen_positions.len();
        return Err(Error::input(if matched > 0 {
            format!(
                "{matched} results are for items of {}, but none of their {} verdicts names a criterion of the items' rubrics (a grader's own aspects, as agentv's default judge writes, or a script's checks, are not criteria); nothing to keep",
                dataset.display(),
                out.unmatched_verdicts
            )
        } else {
            format!(
                "no result matched an item of {}; is it the dataset these results graded?",
                dataset.display()
            )
        }));
    }
    for item in &results.items {
        match &item.key {
            ItemKey::Id(id) if !seen_ids.contains(id) => out.unmatched_items.push(id.clone()),
            ItemKey::Position(p) if !seen_positions.contains(p) => {
                out.unmatched_items.push(format!("#{p}"));
            }
            _ => {}
        }
    }
    let replay = rec.replay(|_, _| {})?;
    rec.manifest.totals = Some(replay.summary.totals(0, 0, 0.0));
    rec.manifest.finished_at = Some(jiff::Timestamp::now().to_string());
    rec.run.write_manifest(&rec.manifest)?;
    Ok(out)
}

/// One item's imported verdicts as cells of its rubric's criteria (one cell per criterion;
/// a later verdict for the same criterion wins, as a later journal line does).
fn cells_of(rubric: &Rubric, item: &ForeignItem, out: &mut Imported) -> Vec<CriterionResult> {
    let positions = rubric.positions();
    let mut cells: Vec<CriterionResult> = Vec::new();
    for v in &item.verdicts {
        let Some(index) = criterion_of(rubric, &positions, v) else {
            out.unmatched_verdicts += 1;
            continue;
        };
        let c = &rubric.criteria[index];
        let mut cell = CriterionResult {
            criterion_id: c.id.clone(),
            verdict: None,
            value: None,
            reason: v.reason.clone(),
            evidence: Vec::new(),
            method: c.method.kind(),
            failure: v
                .failure
                .as_ref()
                .map(|f| Failure::error("imported", f.clone())),
            invocation: None,
            ensemble: None,
            turns: Vec::new(),
        };
        if let Some(verdict) = &v.verdict {
            match c.value_of(verdict) {
                Ok(value) => {
                    cell.verdict = Some(verdict.clone());
                    cell.value = value;
                }
                Err(e) => {
                    out.misfits += 1;
                    cell.failure = Some(Failure::error("imported", e.to_string()));
                }
            }
        }
        cells.retain(|x| x.criterion_id != cell.criterion_id);
        cells.push(cell);
    }
    cells
}

fn criterion_of(
    rubric: &Rubric,
    positions: &HashMap<&str, usize>,
    v: &ForeignVerdict,
) -> Option<usize> {
    match &v.criterion {
        CriterionKey::Id(id) => positions.get(id.as_str()).copied(),
        CriterionKey::Position(i) => (*i < rubric.criteria.len()).then_some(*i),
        CriterionKey::Text(text) => rubric
            .criteria
            .iter()
            .position(|c| c.requirement.trim() == text.trim()),
    }
}
