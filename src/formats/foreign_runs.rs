//! Other systems' results, read so they can be kept as runs (`rubricate runs import`):
//! agentv's results and baseline JSONL (`{test_id, score, scores: [{name, type, score,
//! verdict, assertions: [{text, passed}]}], assertions}`, and the older `evaluator_results`
//! with `hits`/`misses`), its oldest YAML results (`.agentevo/results/*.yaml`, one
//! `---` document per test), and autorubric's experiment folders (`manifest.json` and
//! `items.jsonl` of `{item_idx, error, report: {criterion_reports: [...]}}`).
//!
//! Each becomes per item the verdicts of its rubric's criteria; `run::import` matches them
//! to a dataset's items and their rubrics.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::core::diag::{Diagnostic, Diagnostics};
use crate::model::Verdict;

/// Which item a result is for.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemKey {
    /// The dataset item's id (agentv's `test_id`).
    Id(String),
    /// Its position in the dataset (autorubric's `item_idx`).
    Position(usize),
}

/// Which criterion a verdict is for.
#[derive(Debug, Clone, PartialEq)]
pub enum CriterionKey {
    /// The criterion's id (agentv's `[id]` prefix).
    Id(String),
    /// Its requirement text (agentv assertions without an id).
    Text(String),
    /// Its position in the rubric (autorubric reports list every criterion in order).
    Position(usize),
}

/// One criterion's verdict as the other system recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignVerdict {
    /// Which criterion it is for.
    pub criterion: CriterionKey,
    /// `None` with a `failure`: the system could not grade it.
    pub verdict: Option<Verdict>,
    /// The other system's reason.
    pub reason: String,
    /// Why it could not be graded, when it could not.
    pub failure: Option<String>,
}

/// One item's verdicts as the other system recorded them.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignItem {
    /// Which item it is.
    pub key: ItemKey,
    /// Its verdicts, per criterion.
    pub verdicts: Vec<ForeignVerdict>,
    /// Why the whole item could not be graded there, if it could not.
    pub error: Option<String>,
}

/// A results file of another system, read.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignRun {
    /// `agentv` or `autorubric`.
    pub system: &'static str,
    /// A name for the run (the experiment's, or the file's).
    pub name: String,
    /// The dataset the results were graded on, when the results say (autorubric).
    pub dataset: Option<PathBuf>,
    /// Every item graded.
    pub items: Vec<ForeignItem>,
}

/// What another system's results file is, when `path` is one: read by its first line (or
/// its manifest), so a results file is named for what it is instead of refused as a bad
/// dataset.
pub fn sniff(path: &Path) -> Option<&'static str> {
    let manifest = if path.is_dir() {
        path.join("manifest.json")
    } else {
        path.to_path_buf()
    };
    if manifest.file_name().is_some_and(|n| n == "manifest.json") {
        let text = std::fs::read_to_string(&manifest).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        return v
            .get("experiment_name")
            .is_some()
            .then_some("an autorubric experiment");
    }
    if is_yaml(path) {
        return agentv_yaml_documents(path)
            .ok()?
            .first()
            .is_some_and(|(_, v)| is_agentv_result(v))
            .then_some("agentv results (YAML)");
    }
    if graded_records(path) {
        return Some("an autorubric ensemble's graded records");
    }
    // Results are JSONL; only a first line of bounded length is looked at.
    let v = crate::formats::dataset::first_jsonl_object(path)?;
    let has = |k: &str| v.contains_key(k);
    // `test_id`; older lines `eval_id`, the camelCase run index `testId`.
    if is_agentv_result(&Value::Object(v.clone())) {
        Some("agentv results")
    } else if has("item_idx") && has("report") {
        Some("an autorubric experiment's items")
    } else {
        None
    }
}

/// Reads agentv results JSONL, or an autorubric experiment (its folder or its
/// `manifest.json`).
pub fn read_foreign_run(path: &Path) -> Result<ForeignRun, Diagnostics> {
    let file = path.display().to_string();
    let whole = |m: String| Diagnostics::one(Diagnostic::whole(&file, m));
    let dir = if path.is_dir() {
        Some(path.to_path_buf())
    } else if path.file_name().is_some_and(|n| n == "manifest.json") {
        path.parent().map(Path::to_path_buf)
    } else {
        None
    };
    if let Some(dir) = dir {
        return read_autorubric(&dir);
    }
    if is_yaml(path) {
        return read_agentv_yaml(&file, path);
    }
    if graded_records(path) {
        return read_graded_records(&file, path);
    }
    let open = || {
        std::fs::File::open(path)
            .map(std::io::BufReader::new)
            .map_err(|e| whole(format!("cannot read: {e}")))
    };
    let first = open()?
        .lines()
        .map_while(Result::ok)
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    match serde_json::from_str::<Value>(&first) {
        Ok(v) if ["test_id", "eval_id", "testId"].iter().any(|k| v.get(*k).is_some()) => {
            read_agentv(&file, path, open()?)
        }
        Ok(v) if v.get("item_idx").is_some() => Err(whole(
            "this is an autorubric experiment's items.jsonl; import its folder (or its manifest.json), which names the run"
                .into(),
        )),
        _ => Err(whole(
            "not a results file rubricate imports: give agentv results JSONL (lines with `test_id`) or an autorubric experiment folder (`manifest.json` + `items.jsonl`)".into(),
        )),
    }
}

/// The most of one results line read (a line is one item's verdicts and reasons).
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The lines of a results file, streamed, each with its 1-based number; a line past
/// [`MAX_LINE_BYTES`] or unreadable is a located problem.
fn lines(
    file: &str,
    mut reader: impl BufRead,
) -> impl Iterator<Item = (usize, Result<String, Diagnostic>)> {
    let mut n = 0;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        n += 1;
        let at = |m: String| Diagnostic::at(file, crate::core::diag::Pos::new(n, 1), m);
        // Never more than a line's bound in memory, however long the line.
        let mut buf = Vec::new();
        let read =
            std::io::Read::take(&mut reader, MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut buf);
        match read {
            Ok(0) => None,
            Ok(_) if buf.len() > MAX_LINE_BYTES => {
                done = true;
                Some((
                    n,
                    Err(at(format!(
                        "a line longer than {} MiB; at most that is read",
                        MAX_LINE_BYTES >> 20
                    ))),
                ))
            }
            Ok(_) => {
                while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                    buf.pop();
                }
                Some((
                    n,
                    String::from_utf8(buf).map_err(|_| at("the line is not UTF-8".into())),
                ))
            }
            Err(e) => {
                done = true;
                Some((n, Err(at(format!("cannot read: {e}")))))
            }
        }
    })
}

fn read_agentv(file: &str, path: &Path, reader: impl BufRead) -> Result<ForeignRun, Diagnostics> {
    let mut items = Vec::new();
    let mut problems = Vec::new();
    for (n, line) in lines(file, reader) {
        let line = match line {
            Ok(l) => l,
            Err(d) => {
                problems.push(d);
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let at = |m: String| Diagnostic::at(file, crate::core::diag::Pos::new(n, 1), m);
        let v: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                problems.push(at(format!("not JSON: {e}")));
                continue;
            }
        };
        match agentv_item(&v) {
            Some(item) => items.push(item),
            None => problems.push(at("a result line needs `test_id`".into())),
        }
    }
    agentv_run(path, items, problems)
}

/// One agentv result (a JSONL line or a YAML document) as an item's verdicts; `None`
/// without a test id.
fn agentv_item(v: &Value) -> Option<ForeignItem> {
    let id = ["test_id", "eval_id", "testId"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))?;
    let mut verdicts = Vec::new();
    // The newer shape: graders under `scores`, each with its assertions; the older:
    // `evaluator_results` with hits and misses; a result with neither (one default
    // grader) has them at the top.
    let graders = v
        .get("scores")
        .or_else(|| v.get("evaluator_results"))
        .and_then(Value::as_array);
    match graders {
        Some(graders) => {
            for g in graders {
                assertions_of(g, &mut verdicts);
            }
        }
        None => assertions_of(v, &mut verdicts),
    }
    Some(ForeignItem {
        key: ItemKey::Id(id.to_owned()),
        verdicts,
        error: v.get("error").and_then(Value::as_str).map(str::to_owned),
    })
}

fn is_agentv_result(v: &Value) -> bool {
    let has = |k: &str| v.get(k).is_some();
    (has("test_id") || has("eval_id") || has("testId"))
        && ["score", "scores", "evaluator_results", "hits"]
            .iter()
            .any(|k| has(k))
}

fn is_yaml(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// The `---` documents of a YAML results file, each with the line it starts on.
fn agentv_yaml_documents(path: &Path) -> Result<Vec<(usize, Value)>, Diagnostics> {
    let file = path.display().to_string();
    let text = super::read_text(path, super::MAX_RUBRIC_BYTES, "results")?;
    let mut docs: Vec<(usize, String)> = vec![(1, String::new())];
    for (i, line) in text.lines().enumerate() {
        if line.trim_end() == "---" {
            docs.push((i + 2, String::new()));
        } else if let Some((_, doc)) = docs.last_mut() {
            doc.push_str(line);
            doc.push('\n');
        }
    }
    let mut out = Vec::new();
    for (start, doc) in docs {
        if doc.trim().is_empty() {
            continue;
        }
        let root = super::parse_document(&file, &doc).map_err(|d| {
            Diagnostics(
                d.0.into_iter()
                    .map(|mut x| {
                        if let Some(p) = x.pos.as_mut() {
                            p.line += start - 1;
                        }
                        x
                    })
                    .collect(),
            )
        })?;
        out.push((start, root.to_json()));
    }
    Ok(out)
}

/// agentv results read, as a run named by its file; any problem refuses them all.
fn agentv_run(
    path: &Path,
    items: Vec<ForeignItem>,
    problems: Vec<Diagnostic>,
) -> Result<ForeignRun, Diagnostics> {
    if !problems.is_empty() {
        return Err(Diagnostics(problems));
    }
    Ok(ForeignRun {
        system: "agentv",
        name: path.file_name().map_or_else(
            || "agentv results".into(),
            |n| n.to_string_lossy().into_owned(),
        ),
        dataset: None,
        items,
    })
}

/// agentv's YAML results: one result per `---` document.
fn read_agentv_yaml(file: &str, path: &Path) -> Result<ForeignRun, Diagnostics> {
    let mut items = Vec::new();
    let mut problems = Vec::new();
    for (line, v) in agentv_yaml_documents(path)? {
        match agentv_item(&v) {
            Some(item) => items.push(item),
            None => problems.push(Diagnostic::at(
                file,
                crate::core::diag::Pos::new(line, 1),
                "a result needs `test_id`",
            )),
        }
    }
    agentv_run(path, items, problems)
}

/// A grader's (or a line's) assertions: `assertions: [{text, passed}]`, or `hits` (passed)
/// and `misses`.
fn assertions_of(g: &Value, out: &mut Vec<ForeignVerdict>) {
    if let Some(list) = g.get("assertions").and_then(Value::as_array) {
        for a in list {
            if let Some(text) = a.get("text").and_then(Value::as_str) {
                let passed = a.get("passed").and_then(Value::as_bool).unwrap_or(false);
                out.push(assertion(text, passed));
            }
        }
        return;
    }
    for (key, passed) in [("hits", true), ("misses", false)] {
        for text in g
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            out.push(assertion(text, passed));
        }
    }
}

/// `[id] outcome: reason`, `[id] outcome - Score: 7/10 (band): reason`, or a bare outcome.
fn assertion(text: &str, passed: bool) -> ForeignVerdict {
    let (criterion, rest) = match text.strip_prefix('[').and_then(|t| t.split_once("] ")) {
        Some((id, rest)) => (Some(id.to_owned()), rest),
        None => (None, text),
    };
    let score = rest.find(" - Score: ").and_then(|i| {
        let tail = &rest[i + " - Score: ".len()..];
        let (n, _) = tail.split_once("/10")?;
        n.trim().parse::<f64>().ok()
    });
    let reason = rest
        .split_once(": ")
        .map(|(_, r)| r.trim().to_owned())
        .unwrap_or_default();
    let verdict = match score {
        Some(x) => Verdict::Score(x),
        None if passed => Verdict::Met,
        None => Verdict::Unmet,
    };
    ForeignVerdict {
        criterion: match criterion {
            Some(id) => CriterionKey::Id(id),
            None => CriterionKey::Text(text.trim().to_owned()),
        },
        verdict: Some(verdict),
        reason,
        failure: None,
    }
}

fn read_autorubric(dir: &Path) -> Result<ForeignRun, Diagnostics> {
    let manifest_path = dir.join("manifest.json");
    let mfile = manifest_path.display().to_string();
    let whole = |f: &str, m: String| Diagnostics::one(Diagnostic::whole(f, m));
    let text = super::read_text(
        &manifest_path,
        super::MAX_RUBRIC_BYTES,
        "experiment manifest",
    )?;
    let manifest: Value =
        serde_json::from_str(&text).map_err(|e| whole(&mfile, format!("not JSON: {e}")))?;
    let name = manifest
        .get("experiment_name")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            whole(
                &mfile,
                "an autorubric manifest names its `experiment_name`".into(),
            )
        })?
        .to_owned();
    let dataset = manifest
        .get("dataset_path")
        .and_then(Value::as_str)
        .map(|p| dir.join(p));
    let items_path = dir.join("items.jsonl");
    let ifile = items_path.display().to_string();
    let f = std::fs::File::open(&items_path)
        .map_err(|e| whole(&ifile, format!("cannot read the experiment's items: {e}")))?;
    let mut items = Vec::new();
    let mut problems = Vec::new();
    for (n, line) in lines(&ifile, std::io::BufReader::new(f)) {
        let line = match line {
            Ok(l) => l,
            Err(d) => {
                problems.push(d);
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let at = |m: String| Diagnostic::at(&ifile, crate::core::diag::Pos::new(n, 1), m);
        let v: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                problems.push(at(format!("not JSON: {e}")));
                continue;
            }
        };
        match graded_item(&v) {
            Some(item) => items.push(item),
            None => problems.push(at("an item line needs `item_idx`".into())),
        }
    }
    if !problems.is_empty() {
        return Err(Diagnostics(problems));
    }
    Ok(ForeignRun {
        system: "autorubric",
        name,
        dataset,
        items,
    })
}

/// One graded item as autorubric records it (`{item_idx, error, report: {criterion_reports}}`:
/// an experiment's `items.jsonl` line, or one of a panel's `graded_records`); `None`
/// without `item_idx`.
fn graded_item(v: &Value) -> Option<ForeignItem> {
    let idx = v.get("item_idx").and_then(Value::as_u64)?;
    let verdicts = v
        .get("report")
        .and_then(|r| r.get("criterion_reports"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, cr)| criterion_report(i, cr))
        .collect();
    Some(ForeignItem {
        key: ItemKey::Position(usize::try_from(idx).unwrap_or(usize::MAX)),
        verdicts,
        error: v.get("error").and_then(Value::as_str).map(str::to_owned),
    })
}

/// Whether `path` is a JSON file whose object starts with `graded_records` (autorubric's
/// serialized ensemble results): told from its first bytes, without reading it whole.
fn graded_records(path: &Path) -> bool {
    use std::io::Read as _;
    if !path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        return false;
    }
    let mut head = [0u8; 256];
    let Ok(n) = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)) else {
        return false;
    };
    let text = String::from_utf8_lossy(&head[..n]);
    text.trim_start()
        .strip_prefix('{')
        .is_some_and(|rest| rest.trim_start().starts_with("\"graded_records\""))
}

/// A panel of autorubric's graded records (`{graded_records: [{item_idx, report}, …]}`) as
/// a run named after the file; the dataset is given on import.
fn read_graded_records(file: &str, path: &Path) -> Result<ForeignRun, Diagnostics> {
    let whole = |m: String| Diagnostics::one(Diagnostic::whole(file, m));
    let text = super::read_text(path, MAX_RECORDS_BYTES, "graded records")?;
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        Diagnostics::one(Diagnostic::at(
            file,
            crate::core::diag::Pos::new(e.line(), e.column()),
            format!("not JSON: {e}"),
        ))
    })?;
    let records = v
        .get("graded_records")
        .and_then(Value::as_array)
        .ok_or_else(|| whole("`graded_records` is not a list".into()))?;
    let mut items = Vec::new();
    for (i, r) in records.iter().enumerate() {
        items.push(
            graded_item(r)
                .ok_or_else(|| whole(format!("graded record {} has no `item_idx`", i + 1)))?,
        );
    }
    Ok(ForeignRun {
        system: "autorubric",
        name: path.file_stem().map_or_else(
            || "graded records".into(),
            |s| s.to_string_lossy().into_owned(),
        ),
        dataset: None,
        items,
    })
}

/// The most a graded-records file may hold (it is read whole: one JSON document).
const MAX_RECORDS_BYTES: u64 = 256 * 1024 * 1024;

/// One of autorubric's criterion reports: a binary `verdict`, a `multi_choice_verdict`
/// (its `selected_label`), or an ensemble's `final_verdict`; `error` when the judge failed.
fn criterion_report(i: usize, cr: &Value) -> ForeignVerdict {
    let text = |k: &str| cr.get(k).and_then(Value::as_str);
    let choice = |k: &str| {
        cr.get(k)
            .and_then(|m| m.get("selected_label"))
            .and_then(Value::as_str)
            .map(|l| Verdict::Choice(l.to_owned()))
    };
    let verdict = text("verdict")
        .or_else(|| text("final_verdict"))
        .and_then(Verdict::parse_binary)
        .or_else(|| choice("multi_choice_verdict"))
        .or_else(|| choice("final_multi_choice_verdict"));
    let failure = text("error").map(str::to_owned);
    ForeignVerdict {
        criterion: CriterionKey::Position(i),
        // A verdict synthesized for a failed call is no judgment.
        verdict: if failure.is_some() { None } else { verdict },
        reason: text("reason")
            .or_else(|| text("final_reason"))
            .unwrap_or_default()
            .to_owned(),
        failure,
    }
}
