//! Reading back the results `grade --format jsonl` writes (a baseline committed to a
//! repository): each line an [`Evaluation`] with the figures a comparison needs — scores,
//! passes, and each criterion's verdict, value and reason. What the line does not carry
//! (the judge's invocation, votes, time stamps) is left empty.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::core::diag::{Diagnostic, Diagnostics, Pos};
use crate::formats::foreign_runs::ForeignRun;
use crate::model::{CriterionResult, Evaluation, Failure, Kind, MethodKind, Rubric, Verdict};

/// A results line as written (unknown fields are ignored: later versions may add some).
#[derive(Deserialize)]
struct Line {
    item: String,
    #[serde(default)]
    rubric: String,
    #[serde(default)]
    rubric_version: String,
    score: Option<f64>,
    raw: Option<f64>,
    passed: bool,
    #[serde(default)]
    incomplete: bool,
    #[serde(default)]
    pending: Vec<String>,
    #[serde(default)]
    criteria: Vec<LineCriterion>,
    #[serde(default)]
    tags: BTreeMap<String, f64>,
    #[serde(default)]
    feedback: String,
}

#[derive(Deserialize)]
struct LineCriterion {
    id: String,
    verdict: Option<Value>,
    value: Option<f64>,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    evidence: Vec<String>,
    failure: Option<Failure>,
}

/// The results file at `path`, line by line: `(position, evaluation)` with positions
/// counted over the lines that hold a result. `rubric` (the main one) tells a level from an
/// option, which the file writes alike.
pub fn read_results<'r>(
    path: &Path,
    rubric: Option<&'r Rubric>,
) -> Result<impl Iterator<Item = Result<(usize, Evaluation), Diagnostics>> + 'r, Diagnostics> {
    let file = path.display().to_string();
    let reader = std::fs::File::open(path)
        .map(std::io::BufReader::new)
        .map_err(|e| Diagnostics::one(Diagnostic::whole(&file, format!("cannot read: {e}"))))?;
    let mut position = 0usize;
    Ok(reader
        .lines()
        .enumerate()
        .filter_map(move |(n, line)| {
            let at = |m: String| Diagnostics::one(Diagnostic::at(&file, Pos::new(n + 1, 1), m));
            let line = match line {
                Ok(l) if l.trim().is_empty() => return None,
                Ok(l) => l,
                Err(e) => return Some(Err(at(format!("cannot read: {e}")))),
            };
            let parsed = serde_json::from_str::<Line>(&line).map_err(|e| {
                at(format!(
                    "not a results line of `rubricate grade --format jsonl` ({e}); a baseline is the JSONL grade writes"
                ))
            });
            let out = parsed.map(|l| (position, evaluation(l, rubric)));
            position += 1;
            Some(out)
        }))
}

fn evaluation(l: Line, rubric: Option<&Rubric>) -> Evaluation {
    let failures = l.criteria.iter().filter(|c| c.failure.is_some()).count();
    let results = l
        .criteria
        .into_iter()
        .map(|c| {
            let criterion = rubric.and_then(|r| r.criterion(&c.id));
            CriterionResult {
                verdict: c
                    .verdict
                    .and_then(|v| verdict(v, criterion.map(|c| &c.kind))),
                value: c.value,
                reason: c.reason,
                evidence: c.evidence,
                method: criterion.map_or(MethodKind::Check, |c| c.method.kind()),
                failure: c.failure,
                invocation: None,
                ensemble: None,
                criterion_id: c.id,
            }
        })
        .collect();
    Evaluation {
        id: String::new(),
        rubric_id: l.rubric,
        rubric_version: l.rubric_version,
        target_id: l.item,
        target_type: String::new(),
        results,
        score: l.score,
        raw: l.raw,
        passed: l.passed,
        incomplete: l.incomplete,
        pending: l.pending,
        failures,
        feedback: l.feedback,
        evaluated_at: String::new(),
        evaluated_by: String::new(),
        graders: Vec::new(),
        tags: l.tags,
    }
}

/// A verdict as a results line writes it: a number for a scale, else text — the binary
/// words, or a level or option (the criterion's kind says which).
fn verdict(v: Value, kind: Option<&Kind>) -> Option<Verdict> {
    match v {
        Value::Number(n) => n.as_f64().map(Verdict::Score),
        Value::String(s) => Some(match (Verdict::parse_binary(&s), kind) {
            (_, Some(Kind::Levels(_))) => Verdict::Level(s),
            (Some(binary), None | Some(Kind::Binary | Kind::Scale(_))) => binary,
            _ => Verdict::Choice(s),
        }),
        _ => None,
    }
}

/// A results file as a run of another system, so it can be kept (or compared) as a run:
/// each line's verdicts by criterion id, matched to the dataset's items by id.
pub fn results_as_run(path: &Path, rubric: Option<&Rubric>) -> Result<ForeignRun, Diagnostics> {
    use crate::formats::foreign_runs::{CriterionKey, ForeignItem, ForeignVerdict, ItemKey};
    let mut items = Vec::new();
    for line in read_results(path, rubric)? {
        let (_, e) = line?;
        items.push(ForeignItem {
            key: ItemKey::Id(e.target_id),
            verdicts: e
                .results
                .into_iter()
                .map(|r| ForeignVerdict {
                    criterion: CriterionKey::Id(r.criterion_id),
                    verdict: r.verdict,
                    reason: r.reason,
                    failure: r.failure.map(|f| f.message),
                })
                .collect(),
            error: None,
        });
    }
    if items.is_empty() {
        return Err(Diagnostics::one(Diagnostic::whole(
            &path.display().to_string(),
            "holds no results; a baseline is the JSONL `rubricate grade --format jsonl` writes",
        )));
    }
    Ok(ForeignRun {
        system: "rubricate",
        name: path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        dataset: None,
        items,
    })
}
