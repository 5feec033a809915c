//! `rubricate pairs RUN_A RUN_B`: two saved runs' answers joined by item id into a pair
//! dataset (JSONL, one item per id both runs graded, `candidates` named after the runs),
//! written atomically. The first run's items stream through; the second run's answers are
//! held by id (one text per item) to be looked up.

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::Path;

use serde_json::json;

use super::{Error, Recording};
use crate::core::atomic::AtomicFile;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::model::Item;

/// What a join made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Joined {
    /// The candidates' ids: the runs' names (else their ids), in order.
    pub systems: [String; 2],
    /// Items written (graded by both runs).
    pub pairs: usize,
    /// Item ids only the first run graded, in its order.
    pub only_a: Vec<String>,
    /// Item ids only the second run graded, in its order.
    pub only_b: Vec<String>,
}

/// Joins runs `a` and `b` (ids or names in `runs_dir`) into the pair dataset `out`.
pub fn join(runs_dir: &Path, a: &str, b: &str, out: &Path) -> Result<Joined, Error> {
    let (run_a, run_b) = (Recording::open(runs_dir, a)?, Recording::open(runs_dir, b)?);
    let name = |r: &Recording| r.manifest.name.clone().unwrap_or_else(|| r.id().to_owned());
    let systems = [name(&run_a), name(&run_b)];
    if systems[0] == systems[1] {
        return Err(Error::input(format!(
            "both runs are '{}'; compare two different runs",
            systems[0]
        )));
    }
    let mut answers: HashMap<String, String> = HashMap::new();
    let mut order_b = Vec::new();
    graded_items(&run_b, |item| {
        order_b.push(item.id.clone());
        answers.insert(item.id, item.submission);
    })?;
    let io = |e: std::io::Error| Error::input(format!("{}: cannot write: {e}", out.display()));
    let mut file = AtomicFile::create(out).map_err(io)?;
    let mut joined = Joined {
        systems,
        pairs: 0,
        only_a: Vec::new(),
        only_b: Vec::new(),
    };
    let mut matched = HashSet::new();
    let mut failed = None;
    graded_items(&run_a, |item| {
        let Some(theirs) = answers.get(&item.id) else {
            joined.only_a.push(item.id);
            return;
        };
        let mut line = json!({
            "id": item.id,
            "candidates": [
                {"id": joined.systems[0], "submission": item.submission},
                {"id": joined.systems[1], "submission": theirs},
            ],
        });
        if let Some(p) = &item.prompt {
            line["prompt"] = json!(p);
        }
        if let Some(r) = &item.reference {
            line["reference"] = json!(r);
        }
        if failed.is_none()
            && let Err(e) = writeln!(file, "{line}")
        {
            failed = Some(e);
        }
        matched.insert(item.id);
        joined.pairs += 1;
    })?;
    if let Some(e) = failed {
        return Err(io(e));
    }
    file.commit().map_err(io)?;
    joined.only_b = order_b
        .into_iter()
        .filter(|id| !matched.contains(id))
        .collect();
    Ok(joined)
}

/// Hands `each` the items of `run`'s dataset that the run graded (a run of a subset
/// covers only it), refusing a dataset changed since the run or with an id twice.
fn graded_items(run: &Recording, mut each: impl FnMut(Item)) -> Result<(), Error> {
    let path = run.check_dataset()?;
    let mut graded = HashSet::new();
    for group in run.stream()? {
        graded.insert(group?.item);
    }
    let mut seen = HashSet::new();
    let dataset = open_dataset(&path, ReadOptions::default())?;
    for (index, item) in dataset.items.enumerate() {
        let item = item.map_err(|d| Error::Diagnostics(crate::core::diag::Diagnostics::one(d)))?;
        if !graded.contains(&index) {
            continue;
        }
        if !item.candidates.is_empty() {
            return Err(Error::input(format!(
                "{}: run {} graded pairs already; `pairs` joins two runs of single answers",
                item.origin,
                run.id()
            )));
        }
        if !seen.insert(item.id.clone()) {
            return Err(Error::input(format!(
                "{}: item id '{}' appears twice in run {}'s dataset; ids must be unique to join two runs",
                item.origin,
                item.id,
                run.id()
            )));
        }
        each(item);
    }
    Ok(())
}
