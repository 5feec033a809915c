//! The reports `rubricate align` keeps as `aligns/<time>-<rubric>.json`, read back: the newest
//! one for a dataset or for a rubric, and adopting its winner as the rubric's next minor
//! version (the terminal UI's Align view shows and adopts them).
//!
//! The writer is `rubricate align` (src/cli/align.rs); the structs here mirror its JSON and
//! read only what the view and an adoption need.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::model::Rubric;
pub use crate::run::align::{Figures, Split, TestOutcome};
use crate::store::Workspace;
use crate::store::registry::Registry;

/// The folder of the reports, in the workspace.
pub const DIR: &str = "aligns";

/// One search's report.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct AlignReport {
    pub rubric: String,
    pub rubric_version: String,
    pub dataset: String,
    pub annotator: String,
    pub created_at: String,
    pub split: Split,
    pub weak_criteria: Vec<String>,
    /// Every candidate tried, criterion by criterion; round 0 is the original.
    pub candidates: Vec<Candidate>,
    /// The result: each criterion on the test items, before and after.
    pub test: Vec<TestOutcome>,
    pub changed: bool,
    /// Dollars the search spent.
    pub cost: f64,
    /// Why the search stopped early (the cost limit), when it did.
    pub stopped: Option<String>,
    /// `rubric@version` when the winner was adopted.
    pub adopted: Option<String>,
    /// The winning rubric, when it differs from the original.
    pub winner: Option<Rubric>,
}

/// One candidate for one criterion, as ranked on the dev items.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Candidate {
    pub criterion: String,
    pub round: usize,
    pub label: String,
    pub requirement: String,
    /// Examples the judge is shown for the criterion.
    pub examples: usize,
    pub run: String,
    pub dev: Figures,
    /// Its κ cannot be told from the best's.
    pub indistinguishable: bool,
}

impl AlignReport {
    /// The requirement `criterion` started from (round 0's), which candidates are diffed
    /// against.
    pub fn original_requirement(&self, criterion: &str) -> Option<&str> {
        self.candidates
            .iter()
            .find(|c| c.criterion == criterion && c.round == 0)
            .map(|c| c.requirement.as_str())
    }
}

/// Which report is wanted: the newest for a dataset (its label key) or for a rubric (its id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted<'a> {
    Dataset(&'a str),
    Rubric(&'a str),
}

impl Wanted<'_> {
    fn matches(&self, r: &AlignReport) -> bool {
        match self {
            Wanted::Dataset(key) => r.dataset == *key,
            Wanted::Rubric(id) => r.rubric == *id,
        }
    }

    /// How to make one, said when there is none.
    fn how_to_make_one(&self) -> String {
        match self {
            Wanted::Dataset(key) => format!(
                "no align report for dataset '{key}' yet: run `rubricate align --dataset {key} --rubric RUBRIC` (it keeps one in {DIR}/)"
            ),
            Wanted::Rubric(id) => format!(
                "no align report for rubric '{id}' yet: run `rubricate align --dataset DATASET --rubric {id}` (it keeps one in {DIR}/)"
            ),
        }
    }
}

/// The newest report wanted, where it is, and the newer files that could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub path: PathBuf,
    pub report: AlignReport,
    /// Files newer than it that are not reports rubricate can read, each with why.
    pub skipped: Vec<String>,
}

/// Reads one report; an error names the file, the line and the column.
pub fn read(path: &Path) -> Result<AlignReport, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: line {}, column {}: not an align report rubricate can read ({}); run `rubricate align` again, or remove the file",
            path.display(),
            e.line(),
            e.column(),
            what_went_wrong(&e)
        )
    })
}

/// `serde_json`'s message without its trailing "at line L column C" (said once, up front).
fn what_went_wrong(e: &serde_json::Error) -> String {
    let said = e.to_string();
    match said.rfind(" at line ") {
        Some(at) => said[..at].to_owned(),
        None => said,
    }
}

/// The newest report for `wanted` in the workspace's `aligns/`: newest by the time its
/// name starts with. A file for a rubric is told by its name; for a dataset every file is
/// read, newest first, until one is about it. Files that cannot be read are skipped and
/// said; with no report at all, the message says how to make one.
pub fn newest(ws: &Workspace, wanted: Wanted<'_>) -> Result<Found, String> {
    let dir = ws.path(DIR);
    let mut names: Vec<String> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| {
                Path::new(n)
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("json"))
            })
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("{}: cannot list: {e}", dir.display())),
    };
    if let Wanted::Rubric(id) = wanted {
        let slug = format!("{}.json", crate::model::slugify(id));
        // `<YYYYmmdd-HHMMSS>-<slug>.json`: the slug is what follows the time.
        names.retain(|n| n.get(16..) == Some(slug.as_str()));
    }
    // The names start with the time they were made, which sorts as text.
    names.sort_unstable_by(|a, b| b.cmp(a));
    let mut skipped = Vec::new();
    for name in names {
        let path = dir.join(&name);
        match read(&path) {
            Ok(report) if wanted.matches(&report) => {
                return Ok(Found {
                    path,
                    report,
                    skipped,
                });
            }
            Ok(_) => {}
            Err(e) => skipped.push(e),
        }
    }
    let mut said = wanted.how_to_make_one();
    if !skipped.is_empty() {
        said = said.replacen("no align report", "no readable align report", 1);
    }
    for e in &skipped {
        said.push_str("\n\n");
        said.push_str(e);
    }
    Err(said)
}

/// Adopts the winner of the report at `path` as its rubric's next minor version (through
/// the registry), and records that in the report; the version made, as `rubric@version`.
/// Refused when the report has no winner, was adopted already, or the rubric has had a
/// version saved since the search (adopting would throw that version's changes away).
pub fn adopt(ws: &Workspace, path: &Path) -> Result<String, String> {
    // Read again: the file is the truth, not what a view read a while ago.
    let report = read(path)?;
    if let Some(done) = &report.adopted {
        return Err(format!("adopted already, as {done}"));
    }
    let Some(winner) = &report.winner else {
        return Err(
            "the report has no winner: no candidate beat the original on dev, so there is nothing to adopt"
                .into(),
        );
    };
    let registry = Registry::new(&ws.root);
    if let Ok(current) = registry.get(&report.rubric, None)
        && current.rubric.version != report.rubric_version
    {
        return Err(format!(
            "{} is at version {} now, and the search improved {}: run `rubricate align` again on the current version",
            report.rubric, current.rubric.version, report.rubric_version
        ));
    }
    let version = registry
        .save_next_minor(
            winner,
            &crate::run::align::adoption_note(
                "align (adopted in the terminal UI)",
                &report.annotator,
                &report.dataset,
                &report.split,
                &report.test,
                report.cost,
            ),
        )
        .map_err(|e| e.to_string())?;
    let adopted = format!("{}@{version}", report.rubric);
    record_adopted(path, &adopted).map_err(|e| {
        format!(
            "adopted as {adopted}, but the report could not say so ({e}): do not adopt it again"
        )
    })?;
    Ok(adopted)
}

/// Writes `adopted` into the report at `path`, keeping every other field as it was;
/// replaced whole or not at all.
fn record_adopted(path: &Path, adopted: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let Some(fields) = doc.as_object_mut() else {
        return Err("not a JSON object".into());
    };
    fields.insert("adopted".into(), adopted.into());
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    crate::store::AtomicFile::write_whole(path, text.as_bytes()).map_err(|e| e.to_string())
}
