//! Reading back the results `grade --format jsonl` writes (a baseline committed to a
//! repository) as a run of another system: each line's verdicts by criterion id, so it can
//! be kept (or compared) as a run. What a comparison needs is the verdicts; scores are the
//! rubric's arithmetic over them, as for any run.

use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::core::diag::{Diagnostic, Diagnostics, Pos};
use crate::formats::foreign_runs::{
    CriterionKey, ForeignItem, ForeignRun, ForeignVerdict, ItemKey,
};
use crate::model::{Failure, Kind, Rubric, Verdict};

/// A results line as written (other fields, and fields later versions add, are ignored).
#[derive(Deserialize)]
struct Line {
    item: String,
    #[serde(default)]
    criteria: Vec<LineCriterion>,
}

#[derive(Deserialize)]
struct LineCriterion {
    id: String,
    verdict: Option<Value>,
    #[serde(default)]
    reason: String,
    failure: Option<Failure>,
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

/// The results file at `path` as a run of another system, matched to a dataset's items by
/// id. `rubric` (the main one) tells a level from an option, which the file writes alike.
pub fn results_as_run(path: &Path, rubric: Option<&Rubric>) -> Result<ForeignRun, Diagnostics> {
    let file = path.display().to_string();
    let reader = std::fs::File::open(path)
        .map(std::io::BufReader::new)
        .map_err(|e| Diagnostics::one(Diagnostic::whole(&file, format!("cannot read: {e}"))))?;
    let mut items = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let at = |m: String| Diagnostics::one(Diagnostic::at(&file, Pos::new(n + 1, 1), m));
        let line = line.map_err(|e| at(format!("cannot read: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let l: Line = serde_json::from_str(&line).map_err(|e| {
            at(format!(
                "not a results line of `rubricate grade --format jsonl` ({e}); a baseline is the JSONL grade writes"
            ))
        })?;
        let verdicts = l
            .criteria
            .into_iter()
            .map(|c| {
                let kind = rubric.and_then(|r| r.criterion(&c.id)).map(|x| &x.kind);
                ForeignVerdict {
                    verdict: c.verdict.and_then(|v| verdict(v, kind)),
                    reason: c.reason,
                    failure: c.failure.map(|f| f.message),
                    criterion: CriterionKey::Id(c.id),
                }
            })
            .collect();
        items.push(ForeignItem {
            key: ItemKey::Id(l.item),
            verdicts,
            error: None,
        });
    }
    if items.is_empty() {
        return Err(Diagnostics::one(Diagnostic::whole(
            &file,
            "holds no results; a baseline is the JSONL `rubricate grade --format jsonl` writes",
        )));
    }
    Ok(ForeignRun {
        system: "rubricate",
        name: path
            .file_name()
            .map_or_else(|| file.clone(), |n| n.to_string_lossy().into_owned()),
        dataset: None,
        items,
    })
}
