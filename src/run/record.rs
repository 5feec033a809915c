//! A run recorded in the workspace: its manifest (rubric snapshot and hash, dataset and its
//! hash, typed settings, totals) and its journal. Creating one, opening one again (checked
//! against its hashes), and replaying its journal into evaluations — the one place a saved
//! run is read back, for `runs show|compare|resume`, the TUI and the totals.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{CellSet, Error, RunSettings, Summary};
use crate::core::hash::sha256_hex;
use crate::engine::executor::{build_evaluation, holistic_evaluation};
use crate::engine::judge::{HOLISTIC_ID, HolisticOutcome};
use crate::formats::dataset::open_dataset;
use crate::formats::{LoadedRubric, parse_rubric_text};
use crate::model::{Evaluation, Item, Rubric};
use crate::store::runs::{
    Cell, CellStream, Cells, DatasetRef, Manifest, RunDir, RunWriter, file_hash, new_run_id,
};

/// Where runs are recorded: the workspace's `runs/` and its root (datasets inside it are
/// recorded relative to it, so the workspace can move).
#[derive(Debug, Clone)]
pub struct RunsHome {
    pub runs_dir: PathBuf,
    pub root: PathBuf,
}

impl RunsHome {
    pub fn of(ws: &crate::store::Workspace) -> Self {
        Self {
            runs_dir: ws.runs_dir(),
            root: ws.root.clone(),
        }
    }
}

/// A saved run: its folder and manifest.
#[derive(Debug, Clone)]
pub struct Recording {
    pub run: RunDir,
    pub manifest: Manifest,
}

impl Recording {
    /// Writes a new run's manifest and starts its journal.
    pub fn create(
        home: &RunsHome,
        name: Option<&str>,
        rubric: Option<&LoadedRubric>,
        dataset: &Path,
        settings: &RunSettings,
    ) -> Result<(Self, RunWriter), Error> {
        let snapshot = rubric.map_or(serde_json::Value::Null, |r| {
            crate::formats::native::rubric_to_json(&r.rubric)
        });
        let abs = std::fs::canonicalize(dataset).unwrap_or_else(|_| dataset.to_path_buf());
        let root = std::fs::canonicalize(&home.root).unwrap_or_else(|_| home.root.clone());
        let recorded = abs
            .strip_prefix(&root)
            .map_or_else(|_| abs.clone(), Path::to_path_buf);
        // Names are unique, so a name works wherever an id does (`runs show NAME`).
        if let Some(name) = name {
            RunDir::check_new_name(&home.runs_dir, name)?;
        }
        // Folders of runs killed before their manifest was written.
        crate::store::runs::sweep_abandoned(&home.runs_dir);
        let id = new_run_id();
        let manifest = Manifest {
            id: id.clone(),
            name: name.map(str::to_owned),
            rubric_id: rubric
                .map_or_else(|| "(each item's own)".to_owned(), |r| r.rubric.id.clone()),
            rubric_version: rubric.map(|r| r.rubric.version.clone()).unwrap_or_default(),
            rubric_hash: sha256_hex(snapshot.to_string()),
            rubric: snapshot,
            dataset: DatasetRef {
                path: recorded.display().to_string(),
                hash: file_hash(&abs)?,
            },
            settings: settings.to_value(),
            started_at: jiff::Timestamp::now().to_string(),
            finished_at: None,
            totals: None,
            batches: Vec::new(),
        };
        let run = RunDir::new(&home.runs_dir, &id);
        run.write_manifest(&manifest)?;
        let writer = RunWriter::create(&run, &manifest)?;
        Ok((Self { run, manifest }, writer))
    }

    /// A saved run by id, name, or a unique prefix of its id.
    pub fn open(runs_dir: &Path, id: &str) -> Result<Self, Error> {
        let run = RunDir::find(runs_dir, id)?;
        let manifest = run.read_manifest()?;
        Ok(Self { run, manifest })
    }

    pub fn id(&self) -> &str {
        &self.manifest.id
    }

    pub fn settings(&self) -> Result<RunSettings, Error> {
        RunSettings::of(&self.manifest).map_err(|e| {
            // Where: the manifest's file, at its `settings` (it is written pretty, one
            // field a line).
            let path = self.run.manifest_path();
            let line = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| {
                    t.lines()
                        .position(|l| l.trim_start().starts_with("\"settings\""))
                })
                .map(|n| format!(":{}", n + 1))
                .unwrap_or_default();
            Error::input(format!("{}{line}: {e}", path.display()))
        })
    }

    /// The run's rubric snapshot, checked against its hash (`None`: items' own rubrics).
    pub fn rubric(&self) -> Result<Option<LoadedRubric>, Error> {
        let m = &self.manifest;
        if m.rubric.is_null() {
            return Ok(None);
        }
        let text = m.rubric.to_string();
        if sha256_hex(&text) != m.rubric_hash {
            return Err(Error::input(format!(
                "{}: the rubric snapshot does not match its hash; the manifest was edited or damaged",
                self.run.manifest_path().display()
            )));
        }
        let file = format!("{}#rubric", self.run.manifest_path().display());
        Ok(Some(parse_rubric_text(
            &file,
            &text,
            &m.rubric_id,
            &self.run.dir,
            None,
        )?))
    }

    /// The run's dataset: a relative path is inside the workspace (`runs/<id>/../..`).
    pub fn dataset_path(&self) -> PathBuf {
        let p = Path::new(&self.manifest.dataset.path);
        match self.run.dir.parent().and_then(Path::parent) {
            Some(root) if p.is_relative() => root.join(p),
            _ => p.to_path_buf(),
        }
    }

    /// Refuses to go on when the dataset changed since the run started.
    pub fn check_dataset(&self) -> Result<PathBuf, Error> {
        let path = self.dataset_path();
        if file_hash(&path)? != self.manifest.dataset.hash {
            return Err(Error::input(format!(
                "{}: the dataset changed since run {} started; continuing would mix two datasets (start a new run)",
                path.display(),
                self.manifest.id
            )));
        }
        Ok(path)
    }

    /// The journal's cells (a later line for a cell wins) and the length of its valid part.
    /// Holds them all: whole runs are read with [`Recording::evaluations`].
    pub fn cells(&self) -> Result<(Cells, u64), Error> {
        Ok(self.run.read_cells(&self.manifest)?)
    }

    /// The journal item by item, in dataset order, each with its winning cells.
    pub fn stream(&self) -> Result<CellStream, Error> {
        Ok(self.run.stream_cells(&self.manifest)?)
    }

    /// Which cells the journal holds, and the length of its valid part.
    fn done_cells(&self) -> Result<(CellSet, u64), Error> {
        let mut stream = self.stream()?;
        let mut done = CellSet::new();
        for group in &mut stream {
            let group = group?;
            for c in &group.cells {
                done.insert(group.item, &c.result.criterion_id);
            }
        }
        Ok((done, stream.valid_len()))
    }

    /// Reopens the journal for more cells (its torn tail cut), with the cells it holds.
    pub fn reopen(&self) -> Result<(CellSet, RunWriter), Error> {
        let (done, valid) = self.done_cells()?;
        let writer = RunWriter::reopen(&self.run, &self.manifest, valid)?;
        Ok((done, writer))
    }

    /// Every item's evaluation rebuilt from the journal, one at a time in dataset order
    /// (memory does not grow with the run). The run's rubric snapshot scores them; items
    /// with their own rubric (no snapshot, or not overridden) take it from the dataset,
    /// read alongside.
    pub fn evaluations(&self) -> Result<Evaluations, Error> {
        let rubric = self.rubric()?;
        let settings = self.settings()?;
        let cells = self.stream()?;
        let own = if rubric.is_none() || !settings.override_rubric {
            open_dataset(&self.dataset_path(), settings.read_options())
                .ok()
                .map(|d| OwnRubrics {
                    items: d.items.fuse(),
                    next: 0,
                })
        } else {
            None
        };
        Ok(Evaluations {
            cells,
            rubric: rubric.map(|r| r.rubric),
            last: None,
            own,
            replay: Replay::default(),
        })
    }

    /// Rebuilds every item's evaluation from the journal, in dataset order, handing each to
    /// `each` (see [`Recording::evaluations`]; none is kept).
    pub fn replay(&self, mut each: impl FnMut(usize, &Evaluation)) -> Result<Replay, Error> {
        let mut all = self.evaluations()?;
        for next in &mut all {
            let (index, e) = next?;
            each(index, &e);
        }
        Ok(all.finish())
    }
}

/// A saved run's evaluations, item by item in dataset order: see
/// [`Recording::evaluations`]. Items whose rubric cannot be found are passed over (and
/// counted).
pub struct Evaluations {
    cells: CellStream,
    rubric: Option<Arc<Rubric>>,
    /// The rubric that scored the last evaluation handed out.
    last: Option<Arc<Rubric>>,
    /// The dataset, read alongside for items' own rubrics.
    own: Option<OwnRubrics>,
    replay: Replay,
}

impl Evaluations {
    /// What the items so far added up to (all of them, once the iterator is spent).
    pub fn finish(self) -> Replay {
        self.replay
    }

    /// The rubric that scored the evaluation last handed out: the run's, or the item's own.
    pub fn last_rubric(&self) -> Option<&Arc<Rubric>> {
        self.last.as_ref()
    }
}

impl Iterator for Evaluations {
    type Item = Result<(usize, Evaluation), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let group = match self.cells.next()? {
                Ok(g) => g,
                Err(e) => return Some(Err(e.into())),
            };
            let Some(r) = self
                .own
                .as_mut()
                .and_then(|o| o.of(group.item))
                .or_else(|| self.rubric.clone())
            else {
                self.replay.without_rubric += 1;
                continue;
            };
            let e = evaluation_of(&r, group.cells);
            if !e.pending.is_empty() {
                self.replay.partial_items += 1;
            }
            self.replay.summary.add(&e);
            self.last = Some(r);
            return Some(Ok((group.item, e)));
        }
    }
}

/// A dataset's items read forward, for the rubric an item brings.
struct OwnRubrics {
    items:
        std::iter::Fuse<Box<dyn Iterator<Item = Result<Item, crate::formats::Diagnostic>> + Send>>,
    /// The position of the item read next.
    next: usize,
}

impl OwnRubrics {
    /// The own rubric of the item at `index` (positions asked for only ever grow).
    fn of(&mut self, index: usize) -> Option<Arc<Rubric>> {
        while self.next < index {
            let _ = self.items.next()?;
            self.next += 1;
        }
        if self.next != index {
            return None;
        }
        self.next += 1;
        match self.items.next()? {
            Ok(Item {
                rubric: Some(r), ..
            }) => Some(r),
            _ => None,
        }
    }
}

/// What replaying a journal found.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// Over every item with at least one cell.
    pub summary: Summary,
    /// Items with some of their cells missing.
    pub partial_items: usize,
    /// Items whose rubric could not be found (their own, in a dataset that changed).
    pub without_rubric: usize,
}

/// An item's evaluation from its journalled cells: the one place that decides an item of
/// a saved run is still waiting for cells. A criterion of the rubric with no cell in the
/// journal is pending (its request is in a batch at the provider, or the run stopped
/// before it): the item is incomplete and not passed, whatever the cells present score.
pub(crate) fn evaluation_of(r: &Rubric, cells: Vec<Cell>) -> Evaluation {
    let item = Item {
        id: cells.first().map(|c| c.item_id.clone()).unwrap_or_default(),
        ..Item::default()
    };
    let mut results: Vec<_> = cells.into_iter().map(|c| c.result).collect();
    if results.len() == 1 && results[0].criterion_id == HOLISTIC_ID {
        let result = results.remove(0);
        let score = match &result.verdict {
            Some(crate::model::Verdict::Score(x)) => Some(*x),
            _ => None,
        };
        // One holistic cell stands for every criterion: nothing is left to come.
        return holistic_evaluation(r, &item, HolisticOutcome { score, result }, "rubricate");
    }
    // Journal order is by criterion id; the rubric's order reads better.
    let positions = r.positions();
    results.sort_by_key(|res| positions.get(res.criterion_id.as_str()).copied());
    let mut e = build_evaluation(r, &item, results, "rubricate");
    e.pending = r
        .criteria
        .iter()
        .filter(|c| !e.results.iter().any(|res| res.criterion_id == c.id))
        .map(|c| c.id.clone())
        .collect();
    if !e.pending.is_empty() {
        e.incomplete = true;
        e.passed = false;
        // A tag with a criterion still to come has no score yet (its cell is not a 0).
        let waiting: Vec<&str> = r
            .criteria
            .iter()
            .filter(|c| e.pending.contains(&c.id))
            .flat_map(|c| c.tags.iter().map(String::as_str))
            .collect();
        e.tags.retain(|tag, _| !waiting.contains(&tag.as_str()));
    }
    e
}

#[cfg(test)]
mod tests {
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt as _, SeedableRng as _};

    use super::*;
    use crate::model::{CriterionResult, MethodKind, Verdict};

    const RUBRIC: &str = "
id: r
name: R
version: 1.0.0
criteria:
  - id: a
    requirement: A
    method: { check: contains, args: { text: x } }
  - id: b
    requirement: B
    weight: 2
    method: { check: contains, args: { text: y } }
";

    fn own(id: &str) -> Item {
        let loaded = parse_rubric_text("r.yaml", RUBRIC, "r", Path::new("."), None).unwrap();
        let mut r = (*loaded.rubric).clone();
        r.id = id.into();
        Item {
            id: id.into(),
            rubric: Some(Arc::new(r)),
            ..Item::default()
        }
    }

    fn met(id: &str) -> Cell {
        let mut r =
            CriterionResult::failed(id, MethodKind::Check, crate::model::Failure::error("", ""));
        r.failure = None;
        r.verdict = Some(Verdict::Met);
        r.value = Some(1.0);
        Cell {
            item: 0,
            item_id: "i0".into(),
            result: r,
        }
    }

    #[test]
    fn an_item_with_a_cell_still_to_come_is_incomplete_and_not_passed() {
        let loaded = parse_rubric_text("r.yaml", RUBRIC, "r", Path::new("."), None).unwrap();
        // `b` is still in a batch: `a` alone would score 1.0 and pass.
        let e = evaluation_of(&loaded.rubric, vec![met("a")]);
        assert_eq!(e.pending, vec!["b".to_owned()]);
        assert!(e.incomplete && !e.passed, "{e:?}");
        assert_eq!(e.score, Some(1.0), "scored over the cells present");
        // Every cell in: complete and passed.
        let e = evaluation_of(&loaded.rubric, vec![met("a"), met("b")]);
        assert!(e.pending.is_empty() && !e.incomplete && e.passed, "{e:?}");
    }

    #[test]
    fn a_tag_with_a_criterion_still_to_come_has_no_score_yet() {
        let tagged = "id: t\nname: T\nversion: 1.0.0\ncriteria:\n  - { id: a, requirement: A, tags: [style], method: { check: contains, args: { text: x } } }\n  - { id: b, requirement: B, tags: [facts], method: { check: contains, args: { text: y } } }\n  - { id: c, requirement: C, tags: [facts], method: { check: contains, args: { text: z } } }\n";
        let loaded = parse_rubric_text("t.yaml", tagged, "t", Path::new("."), None).unwrap();
        // `c` is still in a batch: `facts` would read 0.5 as if `c` had failed.
        let e = evaluation_of(&loaded.rubric, vec![met("a"), met("b")]);
        assert_eq!(e.tags.get("style"), Some(&1.0));
        assert_eq!(e.tags.get("facts"), None, "{:?}", e.tags);
        let e = evaluation_of(&loaded.rubric, vec![met("a"), met("b"), met("c")]);
        assert_eq!(e.tags.get("facts"), Some(&1.0));
    }

    #[test]
    fn own_rubrics_are_read_forward_to_the_item_asked_for() {
        let items: Vec<Result<Item, crate::formats::Diagnostic>> = vec![
            Ok(own("r0")),
            Ok(Item::default()),
            Err(crate::formats::Diagnostic::whole("d.jsonl", "bad")),
            Ok(own("r3")),
            Ok(own("r4")),
            Ok(own("r5")),
        ];
        let mut o = OwnRubrics {
            items: (Box::new(items.into_iter())
                as Box<dyn Iterator<Item = Result<Item, crate::formats::Diagnostic>> + Send>)
                .fuse(),
            next: 0,
        };
        let id = |r: Option<Arc<Rubric>>| r.map(|r| r.id.clone());
        assert_eq!(id(o.of(0)), Some("r0".into()));
        assert_eq!(id(o.of(1)), None, "no rubric of its own");
        assert_eq!(id(o.of(2)), None, "unreadable");
        assert_eq!(id(o.of(4)), Some("r4".into()), "3 passed over");
        assert_eq!(id(o.of(9)), None, "past the end");
        assert_eq!(id(o.of(10)), None);
    }

    #[test]
    fn replay_streams_what_the_whole_journal_gives() {
        let dir = tempfile::tempdir().unwrap();
        let home = RunsHome {
            runs_dir: dir.path().join("runs"),
            root: dir.path().to_path_buf(),
        };
        let dataset = dir.path().join("d.jsonl");
        std::fs::write(&dataset, "{\"id\": \"x\"}\n").unwrap();
        let rubric = parse_rubric_text("r.yaml", RUBRIC, "r", dir.path(), None).unwrap();
        for seed in 0..20 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (rec, mut w) = Recording::create(
                &home,
                None,
                Some(&rubric),
                &dataset,
                &RunSettings::default(),
            )
            .unwrap();
            // A run, then passes that resume and retry, out of order now and then.
            for _ in 0..rng.random_range(1..4) {
                for item in 0..40 {
                    if rng.random_range(0..3) == 0 {
                        continue;
                    }
                    let at = if rng.random_range(0..10) == 0 {
                        rng.random_range(0..40)
                    } else {
                        item
                    };
                    let results: Vec<CriterionResult> = ["b", "a"]
                        .iter()
                        .map(|c| (c, rng.random_range(0..4)))
                        .filter(|(_, v)| *v > 0)
                        .map(|(c, v)| {
                            let mut r = CriterionResult::failed(
                                c,
                                MethodKind::Check,
                                crate::model::Failure::error("x", "y"),
                            );
                            if v > 1 {
                                r.failure = None;
                                r.verdict =
                                    Some(if v == 2 { Verdict::Met } else { Verdict::Unmet });
                                r.value = Some(if v == 2 { 1.0 } else { 0.0 });
                            }
                            r
                        })
                        .collect();
                    w.append(at, &format!("i{at}"), &results).unwrap();
                }
            }
            w.finish().unwrap();
            // What replay gave when it read the whole journal into a map.
            let (cells, _) = rec.cells().unwrap();
            let mut by_item = std::collections::BTreeMap::<usize, Vec<Cell>>::new();
            for ((item, _), cell) in cells {
                by_item.entry(item).or_default().push(cell);
            }
            let mut expected = Replay::default();
            let mut want = Vec::new();
            for (index, cells) in by_item {
                let e = evaluation_of(&rubric.rubric, cells);
                if e.results.len() < rubric.rubric.criteria.len() {
                    expected.partial_items += 1;
                }
                expected.summary.add(&e);
                want.push((
                    index,
                    e.target_id,
                    e.score,
                    e.passed,
                    e.incomplete,
                    e.results,
                ));
            }
            let mut got = Vec::new();
            let replay = rec
                .replay(|index, e| {
                    got.push((
                        index,
                        e.target_id.clone(),
                        e.score,
                        e.passed,
                        e.incomplete,
                        e.results.clone(),
                    ));
                })
                .unwrap();
            assert_eq!(got, want, "seed {seed}");
            assert_eq!(replay.summary, expected.summary, "seed {seed}");
            assert_eq!(replay.partial_items, expected.partial_items, "seed {seed}");
        }
    }
}
