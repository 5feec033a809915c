//! Re-grading only what changed: the cells of an earlier run of the same rubric on the
//! same (unchanged) dataset whose criterion — text, weight, kind, method, template — is
//! unchanged, judged by the same judge with the same guidelines, need no new call; they are
//! copied into the new run's journal and only the rest is graded.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{Error, JudgeSettings, Recording};
use crate::formats::LoadedRubric;
use crate::store::runs::{Cell, Manifest, file_hash};

/// The earlier run's id and its cells that can be reused by a run of `rubric` judged with
/// `judge` over the dataset at `dataset`.
pub fn unchanged_cells(
    runs_dir: &std::path::Path,
    earlier: &Manifest,
    dataset: &std::path::Path,
    rubric: &LoadedRubric,
    judge: &JudgeSettings,
) -> Result<(String, Vec<Cell>), Error> {
    if file_hash(dataset)? != earlier.dataset.hash {
        return Err(Error::input(
            "the dataset changed since the last run: grade it all (enter)",
        ));
    }
    let snapshot = crate::formats::native::rubric_to_json(&rubric.rubric);
    let same = |k: &str| snapshot.get(k) == earlier.rubric.get(k);
    let earlier_judge = super::RunSettings::of(earlier)
        .map(|s| s.judge.judge)
        .unwrap_or_default();
    let same_judge = earlier_judge == judge.judge;
    let by_id = |v: &Value| -> HashMap<String, Value> {
        v.get("criteria")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| Some((c.get("id")?.as_str()?.to_owned(), c.clone())))
            .collect()
    };
    let (old, new) = (by_id(&earlier.rubric), by_id(&snapshot));
    let unchanged: HashSet<&String> = if same("guidelines") && same("judge") && same_judge {
        new.iter()
            .filter(|(k, v)| old.get(*k) == Some(*v))
            .map(|(k, _)| k)
            .collect()
    } else {
        HashSet::new()
    };
    let rec = Recording::open(runs_dir, &earlier.id)?;
    // Read item by item: only the cells kept are held.
    let mut keep = Vec::new();
    for group in rec.stream()? {
        keep.extend(
            group?.cells.into_iter().filter(|c| {
                c.result.failure.is_none() && unchanged.contains(&c.result.criterion_id)
            }),
        );
    }
    Ok((earlier.id.clone(), keep))
}
