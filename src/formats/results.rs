//! The stable per-item JSON shape of results (JSON/JSONL output, `runs show --format
//! jsonl`, the evaluations an artifact review stores).

use std::fmt::Write as _;

use serde::Serialize;

use crate::model::{Evaluation, Failure, Verdict};

/// The stable per-item JSON shape of JSON/JSONL output, serialised without building an
/// intermediate JSON tree (this is on the hot path of every batch run).
#[derive(Serialize)]
pub struct ItemOut<'a> {
    item: &'a str,
    rubric: &'a str,
    rubric_version: &'a str,
    score: Option<f64>,
    raw: Option<f64>,
    passed: bool,
    incomplete: bool,
    /// The criteria whose cells are still to come (a saved run read before it finished).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pending: &'a [String],
    criteria: Vec<CriterionOut<'a>>,
    /// Each grader's score and verdict, for rubrics scored by graders (agentv).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    graders: &'a [crate::model::GraderScore],
    /// The score per criterion tag.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    tags: &'a std::collections::BTreeMap<String, f64>,
    feedback: &'a str,
}

#[derive(Serialize)]
struct CriterionOut<'a> {
    id: &'a str,
    verdict: Option<PlainVerdict<'a>>,
    value: Option<f64>,
    reason: &'a str,
    evidence: &'a [String],
    failure: Option<&'a Failure>,
    /// The LLM call behind a judged result.
    #[serde(skip_serializing_if = "Option::is_none")]
    invocation: Option<&'a crate::model::Invocation>,
    /// The votes behind an ensemble's (or several samples') verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    ensemble: Option<EnsembleOut<'a>>,
    /// A criterion judged turn by turn: each assistant turn's verdict.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    turns: Vec<TurnOut<'a>>,
}

/// One assistant turn's verdict, written as a criterion's is.
#[derive(Serialize)]
struct TurnOut<'a> {
    turn: usize,
    verdict: Option<PlainVerdict<'a>>,
    value: Option<f64>,
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'a Failure>,
}

#[derive(Serialize)]
struct EnsembleOut<'a> {
    rule: &'a str,
    agreement: Option<f64>,
    votes: Vec<VoteOut<'a>>,
}

#[derive(Serialize)]
struct VoteOut<'a> {
    judge: &'a str,
    sample: u32,
    verdict: Option<PlainVerdict<'a>>,
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'a Failure>,
}

fn ensemble_out(e: &crate::model::Ensemble) -> EnsembleOut<'_> {
    EnsembleOut {
        rule: &e.rule,
        agreement: e.agreement,
        votes: e
            .votes
            .iter()
            .map(|v| VoteOut {
                judge: &v.judge,
                sample: v.sample,
                verdict: v.verdict.as_ref().map(PlainVerdict),
                reason: &v.reason,
                failure: v.failure.as_ref(),
            })
            .collect(),
    }
}

/// A verdict as a plain string, or a number for scales.
struct PlainVerdict<'a>(&'a Verdict);

impl Serialize for PlainVerdict<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Verdict::Score(x) => s.serialize_f64(*x),
            Verdict::Level(t) | Verdict::Choice(t) => s.serialize_str(t),
            other => s.collect_str(other),
        }
    }
}

/// An evaluation as a results line (JSON) or document entry writes it.
pub fn item_json(e: &Evaluation) -> ItemOut<'_> {
    ItemOut {
        item: &e.target_id,
        rubric: &e.rubric_id,
        rubric_version: &e.rubric_version,
        score: e.score,
        raw: e.raw,
        passed: e.passed,
        incomplete: e.incomplete,
        pending: &e.pending,
        criteria: e
            .results
            .iter()
            .map(|r| CriterionOut {
                id: &r.criterion_id,
                verdict: r.verdict.as_ref().map(PlainVerdict),
                value: r.value,
                reason: &r.reason,
                evidence: &r.evidence,
                failure: r.failure.as_ref(),
                invocation: r.invocation.as_deref(),
                ensemble: r.ensemble.as_deref().map(ensemble_out),
                turns: r
                    .turns
                    .iter()
                    .map(|t| TurnOut {
                        turn: t.turn,
                        verdict: t.verdict.as_ref().map(PlainVerdict),
                        value: t.value,
                        reason: &t.reason,
                        failure: t.failure.as_ref(),
                    })
                    .collect(),
            })
            .collect(),
        graders: &e.graders,
        tags: &e.tags,
        feedback: &e.feedback,
    }
}

/// What a results CSV has columns for: the main rubric's criteria and its criteria's tags.
#[derive(Debug, Clone, Default)]
pub struct CsvColumns {
    /// The main rubric's criterion ids, in order.
    pub criteria: Vec<String>,
    /// Their tags, each once.
    pub tags: Vec<String>,
}

impl CsvColumns {
    /// The columns for results graded against `rubric` (none without one).
    pub fn of(rubric: Option<&crate::model::Rubric>) -> Self {
        let Some(r) = rubric else {
            return Self::default();
        };
        let mut tags: Vec<String> = r.criteria.iter().flat_map(|c| c.tags.clone()).collect();
        tags.sort();
        tags.dedup();
        Self {
            criteria: r.criteria.iter().map(|c| c.id.clone()).collect(),
            tags,
        }
    }
}

/// The CSV columns of results: the item's figures, then a verdict and a value per criterion
/// of the main rubric, a score per tag, then the feedback.
pub fn csv_header(columns: &CsvColumns) -> Vec<String> {
    let criteria = &columns.criteria;
    let mut cols: Vec<String> = [
        "item",
        "rubric",
        "rubric_version",
        "score",
        "raw",
        "passed",
        "incomplete",
        "failures",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    for c in criteria {
        cols.push(format!("verdict:{c}"));
        cols.push(format!("value:{c}"));
    }
    for t in &columns.tags {
        cols.push(format!("tag:{t}"));
    }
    cols.push("feedback".into());
    cols
}

/// One evaluation as a CSV row under [`csv_header`].
pub fn csv_row(e: &Evaluation, columns: &CsvColumns) -> Vec<String> {
    let criteria = &columns.criteria;
    let mut row = vec![
        e.target_id.clone(),
        e.rubric_id.clone(),
        e.rubric_version.clone(),
        e.score.map(|s| s.to_string()).unwrap_or_default(),
        e.raw.map(|s| s.to_string()).unwrap_or_default(),
        e.passed.to_string(),
        e.incomplete.to_string(),
        e.failures.to_string(),
    ];
    let by_id = crate::model::results_by_id(&e.results);
    for c in criteria {
        let r = by_id.get(c.as_str()).copied();
        row.push(
            r.and_then(|r| r.verdict.as_ref())
                .map(ToString::to_string)
                .unwrap_or_default(),
        );
        row.push(
            r.and_then(|r| r.value)
                .map(|v| v.to_string())
                .unwrap_or_default(),
        );
    }
    for t in &columns.tags {
        row.push(e.tags.get(t).map(ToString::to_string).unwrap_or_default());
    }
    row.push(e.feedback.clone());
    row
}

/// Writes one CSV record (RFC 4180 quoting).
pub fn write_csv_row(w: &mut impl std::io::Write, cells: &[String]) -> std::io::Result<()> {
    // The csv crate quotes what needs quoting (a comma, a quote, a line break) as RFC 4180
    // says; one row at a time, so a run of millions streams.
    let mut row = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .buffer_capacity(4096)
        .from_writer(w);
    row.write_record(cells)?;
    row.flush()
}

/// A Markdown table's header: item, score, result, then a verdict per criterion.
pub fn markdown_header(criteria: &[String]) -> String {
    let mut head = String::from("| item | score | result |");
    let mut rule = String::from("|---|---:|---|");
    for c in criteria {
        let _ = write!(head, " {} |", markdown_cell(c));
        rule.push_str("---|");
    }
    format!("{head}\n{rule}\n")
}

/// One evaluation as a Markdown table row under [`markdown_header`].
pub fn markdown_row(e: &Evaluation, criteria: &[String]) -> String {
    let score = e
        .score
        .map_or_else(|| "n/a".into(), |s| format!("{:.1}%", s * 100.0));
    let result = if e.incomplete {
        "incomplete"
    } else if e.passed {
        "pass"
    } else {
        "fail"
    };
    let mut row = format!("| {} | {score} | {result} |", markdown_cell(&e.target_id));
    let by_id = crate::model::results_by_id(&e.results);
    for c in criteria {
        let r = by_id.get(c.as_str()).copied();
        let cell = match r {
            Some(r) if r.failure.is_some() => "failed".to_owned(),
            Some(r) => r
                .verdict
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            None => String::new(),
        };
        let _ = write!(row, " {} |", markdown_cell(&cell));
    }
    row.push('\n');
    row
}

/// Text safe in a Markdown table cell (pipes escaped, lines joined).
fn markdown_cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}
