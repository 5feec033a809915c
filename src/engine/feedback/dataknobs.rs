//! dataknobs' deterministic feedback summary, word for word (`generate_deterministic_summary`
//! in dataknobs-bots' `rubrics/feedback.py`), for rubrics read from dataknobs files: a
//! user comparing the two systems sees the same text.
//!
//! Its rules differ from rubricate's on purpose: each criterion shows its level id (`met`,
//! `unmet` for a binary one, `error` for a failure, `unable_to_evaluate` for an
//! abstention); a suggestion is made when the criterion's score is below the pass
//! threshold, for the next level in score order (a stable sort, so an equal score counts
//! as the next one); descriptions are quoted as written, even empty.

use std::fmt::Write as _;

use crate::engine::aggregate::Aggregate;
use crate::model::{Criterion, CriterionResult, Kind, Level, Rubric, Verdict};

/// How dataknobs names a result, its score, and the note after it.
struct Shown {
    level_id: String,
    score: f64,
    note: Option<String>,
}

fn shown(c: &Criterion, r: &CriterionResult) -> Shown {
    if let Some(f) = &r.failure {
        return Shown {
            level_id: "error".into(),
            score: 0.0,
            note: Some(format!("Evaluation error: {f}")),
        };
    }
    let level_id = match (&c.kind, &r.verdict) {
        (Kind::Binary, Some(Verdict::Met)) => "met".to_owned(),
        (Kind::Binary, Some(Verdict::Unmet)) => "unmet".to_owned(),
        (_, Some(Verdict::CannotAssess) | None) => "unable_to_evaluate".to_owned(),
        (_, Some(v)) => v.to_string(),
    };
    let note = (level_id == "unable_to_evaluate").then(|| "LLM evaluation inconclusive".into());
    Shown {
        level_id,
        score: r.value.unwrap_or(0.0),
        note,
    }
}

/// The levels as the dataknobs file wrote them; a binary criterion is the `unmet`/`met`
/// pair the reader turned into one.
fn levels(c: &Criterion) -> Vec<Level> {
    let level = |id: &str, label: &str, score: f64| Level {
        id: id.into(),
        label: label.into(),
        description: String::new(),
        score,
        indicators: Vec::new(),
    };
    match &c.kind {
        Kind::Levels(levels) => levels.clone(),
        _ => vec![level("unmet", "Unmet", 0.0), level("met", "Met", 1.0)],
    }
}

pub fn summary(rubric: &Rubric, results: &[CriterionResult], agg: &Aggregate) -> String {
    let status = if agg.passed { "PASSED" } else { "FAILED" };
    let mut out = format!("Evaluation {status} for rubric '{}'.\n", rubric.name);
    // dataknobs' score is a number even when nothing was scored.
    let score = agg.score.unwrap_or(0.0);
    let _ = writeln!(out, "Overall score: {:.0}%", score * 100.0);
    out.push('\n');
    let by_id = crate::model::results_by_id(results);
    let mut issues = Vec::new();
    for c in &rubric.criteria {
        let Some(r) = by_id.get(c.id.as_str()) else {
            continue;
        };
        let s = shown(c, r);
        let _ = write!(out, "- {}: {} (score: {:.2})", c.name, s.level_id, s.score);
        if let Some(note) = &s.note {
            let _ = write!(out, " [{note}]");
        }
        out.push('\n');
        if s.score < rubric.pass_threshold && s.level_id != "error" {
            let mut sorted = levels(c);
            // A stable sort, as Python's `sorted`.
            sorted.sort_by(|a, b| a.score.total_cmp(&b.score));
            match sorted.iter().position(|l| l.id == s.level_id) {
                Some(i) if i + 1 < sorted.len() => issues.push(format!(
                    "{}: aim for '{}' — {}",
                    c.name,
                    sorted[i + 1].label,
                    sorted[i + 1].description
                )),
                None if s.level_id == "unable_to_evaluate" => {
                    issues.push(format!("{}: could not be evaluated by LLM", c.name));
                }
                // The best level already, or a level id the criterion does not list.
                _ => {}
            }
        }
    }
    if !issues.is_empty() {
        out.push_str("\nSuggestions for improvement:\n");
        for issue in issues {
            let _ = writeln!(out, "  - {issue}");
        }
    }
    // dataknobs joins its lines with "\n": no newline at the end.
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::aggregate::aggregate_results;
    use crate::model::MethodKind;

    #[test]
    fn dataknobs_words_and_rules() {
        let lv = |id: &str, label: &str, desc: &str, score: f64| Level {
            id: id.into(),
            label: label.into(),
            description: desc.into(),
            score,
            indicators: vec![],
        };
        let mut depth = Criterion::binary("depth", "Deep", 2.0);
        depth.name = "Depth".into();
        depth.kind = Kind::Levels(vec![
            lv("poor", "Poor", "  padded text  ", 0.2),
            lv("weak", "Weak", "", 0.2),
            lv("good", "Good", "Uses sources", 0.9),
        ]);
        let mut tone = Criterion::binary("tone", "Polite", -1.0);
        tone.name = "Tone".into();
        let mut rubric = crate::model::Rubric::new("r", vec![depth, tone]);
        rubric.name = "Rubric 1".into();
        rubric.pass_threshold = 0.5;
        rubric.scoring = crate::formats::dataknobs::scoring();
        let result = |id: &str, v: Verdict, x: f64| CriterionResult {
            criterion_id: id.into(),
            verdict: Some(v),
            value: Some(x),
            reason: String::new(),
            evidence: vec![],
            method: MethodKind::Check,
            failure: None,
            invocation: None,
            ensemble: None,
            turns: Vec::new(),
        };
        let results = vec![
            result("depth", Verdict::Level("poor".into()), 0.2),
            result("tone", Verdict::Unmet, 0.0),
        ];
        let agg = aggregate_results(&rubric, &results);
        // (2·0.2 − 1·0) / (2 − 1) = 0.4: unclamped over signed weights.
        assert!((agg.score.unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(
            summary(&rubric, &results, &agg),
            "Evaluation FAILED for rubric 'Rubric 1'.\nOverall score: 40%\n\n- Depth: poor (score: 0.20)\n- Tone: unmet (score: 0.00)\n\nSuggestions for improvement:\n  - Depth: aim for 'Weak' — \n  - Tone: aim for 'Met' — "
        );
    }
}
