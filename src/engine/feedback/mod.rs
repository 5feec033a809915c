//! The deterministic feedback of SCORING.md: a summary of an evaluation and one line per
//! criterion; rubrics read from dataknobs files get dataknobs' own text (`dataknobs`).

mod dataknobs;

use std::fmt::Write as _;

use super::aggregate::Aggregate;
use crate::model::{Criterion, CriterionResult, FeedbackStyle, Kind, Rubric, Verdict};

/// One line for one criterion, written onto `out`: `Clarity: excellent (score: 1.00)`.
fn write_criterion_feedback(out: &mut String, c: &Criterion, r: Option<&CriterionResult>) {
    out.push_str(&c.name);
    match r.map(|r| (&r.failure, &r.verdict, r.value)) {
        None | Some((None, None, _)) => out.push_str(": not evaluated"),
        Some((Some(f), ..)) => {
            let _ = write!(out, ": {f}");
        }
        Some((None, Some(v), Some(x))) => {
            let _ = write!(out, ": {v} (score: ");
            push_two_decimals(out, x);
            out.push(')');
        }
        Some((None, Some(v), None)) => {
            let _ = write!(out, ": {v} (not scored)");
        }
    }
}

/// `x` as `{:.0}` writes it: a whole number directly, anything else by `{:.0}`.
fn push_whole(out: &mut String, x: f64) {
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
        if x.is_sign_negative() {
            out.push('-');
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        // checked: a whole number below 1e15, its sign written apart
        let n = x.abs() as u64;
        let _ = write!(out, "{n}");
    } else {
        let _ = write!(out, "{x:.0}");
    }
}

/// `x` as `{:.2}` writes it. Quarters (every binary verdict's 0 and 1) are written
/// directly — their two decimals are exact, so nothing is rounded — the rest by `{:.2}`.
fn push_two_decimals(out: &mut String, x: f64) {
    let quarters = x * 4.0;
    if x.is_finite() && quarters.fract() == 0.0 && quarters.abs() < 1e12 {
        #[allow(clippy::cast_possible_truncation)] // checked: a whole number below 1e12
        let q = quarters as i64;
        if x.is_sign_negative() {
            out.push('-');
        }
        let q = q.unsigned_abs();
        let _ = write!(
            out,
            "{}.{}",
            q / 4,
            ["00", "25", "50", "75"][(q % 4) as usize]
        );
    } else {
        let _ = write!(out, "{x:.2}");
    }
}

/// The summary: verdict, overall score, one line per criterion, then suggestions.
pub fn summary(rubric: &Rubric, results: &[CriterionResult], agg: &Aggregate) -> String {
    if rubric.scoring.feedback == FeedbackStyle::Dataknobs {
        return dataknobs::summary(rubric, results, agg);
    }
    // Sized for a few lines a criterion: grown once at most.
    let mut out = String::with_capacity(128 + 96 * rubric.criteria.len());
    out.push_str(if agg.passed {
        "Evaluation PASSED for rubric '"
    } else {
        "Evaluation FAILED for rubric '"
    });
    out.push_str(&rubric.name);
    out.push_str("'.\n");
    match agg.score {
        None => out.push_str("Overall score: n/a (nothing could be scored)\n"),
        Some(s) if rubric.scoring.normalize => {
            out.push_str("Overall score: ");
            push_whole(&mut out, s * 100.0);
            out.push_str("%\n");
        }
        Some(s) => {
            let _ = writeln!(out, "Overall score: {} (raw)", trim_number(s));
        }
    }
    if !agg.graders.is_empty() {
        let each: Vec<String> = agg
            .graders
            .iter()
            .zip(&rubric.graders)
            .map(|(g, spec)| {
                let score = g
                    .score
                    .map_or_else(|| "n/a".to_owned(), |s| format!("{:.0}%", s * 100.0));
                let verdict = if g.passed { "pass" } else { "fail" };
                let gate = if spec.required { ", required" } else { "" };
                format!("{} {score} ({verdict}{gate})", g.id)
            })
            .collect();
        let _ = writeln!(out, "Graders: {}", each.join(", "));
    }
    if !agg.gates_failed.is_empty() && !agg.graders.is_empty() {
        let below: Vec<&str> = rubric
            .graders
            .iter()
            .filter(|g| {
                g.required
                    && g.criteria.iter().any(|id| {
                        agg.gates_failed
                            .iter()
                            .any(|i| rubric.criteria.get(*i).is_some_and(|c| c.id == *id))
                    })
            })
            .map(|g| g.id.as_str())
            .collect();
        let _ = writeln!(
            out,
            "Required graders below their minimum: {}",
            below.join(", ")
        );
    } else if !agg.gates_failed.is_empty() {
        let names: Vec<&str> = agg
            .gates_failed
            .iter()
            .filter_map(|i| rubric.criteria.get(*i))
            .map(|c| c.name.as_str())
            .collect();
        let _ = writeln!(out, "Required criteria not met: {}", names.join(", "));
    }
    if agg.failures > 0 {
        let _ = writeln!(
            out,
            "Incomplete: {} of {} criteria could not be scored",
            agg.failures,
            rubric.criteria.len()
        );
    }
    out.push('\n');
    let find = |i: usize, c: &Criterion| crate::model::result_of(results, i, &c.id);
    for (i, c) in rubric.criteria.iter().enumerate() {
        out.push_str("- ");
        write_criterion_feedback(&mut out, c, find(i, c));
        out.push('\n');
    }
    let mut heading = false;
    for (i, c) in rubric.criteria.iter().enumerate() {
        let Some(s) = find(i, c)
            .filter(|r| r.failure.is_none())
            .and_then(|r| suggestion(c, r.verdict.as_ref()?))
        else {
            continue;
        };
        if !heading {
            out.push_str("\nSuggestions for improvement:\n");
            heading = true;
        }
        out.push_str("  - ");
        out.push_str(&c.name);
        out.push_str(": ");
        out.push_str(&s);
        out.push('\n');
    }
    while out.ends_with('\n') {
        out.pop();
    }
    out
}

/// What to aim for when a criterion is not at its best: the next level up.
fn suggestion(criterion: &Criterion, verdict: &Verdict) -> Option<String> {
    let c = criterion;
    // A comparison of two answers has nothing to aim for: which is better is the result.
    if crate::model::pair::pair_order(c).is_some() {
        return None;
    }
    let aim = |label: &str, why: &str| {
        if why.trim().is_empty() {
            format!("aim for '{label}'")
        } else {
            format!("aim for '{label}' — {}", why.trim())
        }
    };
    match (&c.kind, verdict) {
        (Kind::Binary, Verdict::Unmet) if c.weight >= 0.0 => Some(aim("MET", &c.requirement)),
        (Kind::Binary, Verdict::Met) if c.weight < 0.0 => {
            Some(aim("UNMET", &format!("avoid: {}", c.requirement)))
        }
        (Kind::Levels(levels), Verdict::Level(id)) => {
            let current = levels.iter().find(|l| l.id == *id)?;
            let next = levels
                .iter()
                .filter(|l| l.score > current.score)
                .min_by(|a, b| a.score.total_cmp(&b.score))?;
            Some(aim(&next.label, &next.description))
        }
        (Kind::Options { options, .. }, Verdict::Choice(label)) => {
            let current = crate::model::find_option(options, label)?;
            let next = options
                .iter()
                .filter(|o| !o.na && o.value > current.value)
                .min_by(|a, b| a.value.total_cmp(&b.value))?;
            Some(aim(&next.label, ""))
        }
        (Kind::Scale(scale), Verdict::Score(score)) => {
            if *score >= scale.max {
                return None;
            }
            match scale.anchors.iter().find(|anchor| anchor.value > *score) {
                Some(anchor) => Some(aim(&trim_number(anchor.value), &anchor.text)),
                None => Some(aim(&trim_number(scale.max), "")),
            }
        }
        // CANNOT_ASSESS, and verdicts already at their best.
        _ => None,
    }
}

fn trim_number(x: f64) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::aggregate::aggregate_results;
    use crate::model::{Level, MethodKind};

    fn level(id: &str, label: &str, desc: &str, score: f64) -> Level {
        Level {
            id: id.into(),
            label: label.into(),
            description: desc.into(),
            score,
            indicators: vec![],
        }
    }

    #[test]
    fn the_documented_summary_exactly() {
        let levels = vec![
            level("fail", "Fail", "Misses the point", 0.0),
            level("pass", "Pass", "Covers the basics", 0.7),
            level(
                "excellent",
                "Excellent",
                "Covers all required topics with depth",
                1.0,
            ),
        ];
        let mut clarity = Criterion::binary("clarity", "Clear", 0.5);
        clarity.name = "Clarity".into();
        clarity.kind = Kind::Levels(levels.clone());
        let mut completeness = Criterion::binary("completeness", "Complete", 0.5);
        completeness.name = "Completeness".into();
        completeness.kind = Kind::Levels(levels);
        let mut rubric = Rubric::new("content_quality", vec![clarity, completeness]);
        rubric.name = "Content Quality".into();
        let result = |id: &str, level: &str, v: f64| CriterionResult {
            criterion_id: id.into(),
            verdict: Some(Verdict::Level(level.into())),
            value: Some(v),
            reason: String::new(),
            evidence: vec![],
            method: MethodKind::Check,
            failure: None,
            invocation: None,
            ensemble: None,
            turns: Vec::new(),
        };
        let results = vec![
            result("clarity", "excellent", 1.0),
            result("completeness", "pass", 0.7),
        ];
        let agg = aggregate_results(&rubric, &results);
        assert_eq!(
            summary(&rubric, &results, &agg),
            "Evaluation PASSED for rubric 'Content Quality'.\nOverall score: 85%\n\n- Clarity: excellent (score: 1.00)\n- Completeness: pass (score: 0.70)\n\nSuggestions for improvement:\n  - Completeness: aim for 'Excellent' — Covers all required topics with depth"
        );
    }
}

#[cfg(test)]
mod two_decimals {
    #[test]
    fn quarters_are_written_as_format_writes_them() {
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            0.25,
            0.5,
            0.75,
            -0.25,
            2.5,
            1e9,
            0.125,
            0.29,
            1.0 / 3.0,
            -1.5,
        ];
        values.extend((0..=400).map(|k| f64::from(k) / 4.0 - 50.0));
        for x in values {
            let mut out = String::new();
            super::push_two_decimals(&mut out, x);
            assert_eq!(out, format!("{x:.2}"), "{x}");
            let mut out = String::new();
            super::push_whole(&mut out, x * 100.0);
            assert_eq!(out, format!("{:.0}", x * 100.0), "{x}");
        }
    }
}
