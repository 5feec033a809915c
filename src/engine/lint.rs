//! `rubricate lint`: the built-in meta-rubric's five structural checks, plus what no seed
//! checks (duplicated or double-barrelled requirements, unreachable thresholds once the
//! required gates count, unknown template variables, required penalties).

use serde::Serialize;
use tokio::sync::mpsc;

use super::aggregate::{Input, Outcome, aggregate_rubric, reaches};
use super::executor::{ExecOptions, evaluate_item};
use super::{compile, template};
use crate::formats::{Diagnostics, LoadedRubric, load_rubric};
use crate::model::{Evaluation, Item, Kind, Method, Rubric};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The rubric will not grade as meant: fix it.
    Error,
    /// Likely a mistake.
    Warning,
    /// Worth knowing.
    Info,
}

/// One lint finding, located in the rubric file.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// How much it matters.
    pub severity: Severity,
    /// `file:line:column` (or `file` when the place is unknown).
    pub location: String,
    /// The field's document path, e.g. `criteria[2].requirement`.
    pub path: String,
    /// What is wrong, and what to do.
    pub message: String,
}

/// A rubric's lint: the meta-rubric's verdict and each finding.
#[derive(Debug, Clone)]
pub struct LintReport {
    /// The meta-rubric's evaluation of the rubric's structure.
    pub meta: Evaluation,
    /// Every finding, in document order.
    pub findings: Vec<Finding>,
}

impl LintReport {
    /// The meta-rubric passed the rubric.
    pub fn passed(&self) -> bool {
        self.meta.passed
    }
}

/// Lints a loaded rubric.
pub async fn lint(loaded: &LoadedRubric) -> Result<LintReport, Diagnostics> {
    let meta = compile(&load_rubric("meta")?)?;
    let item = Item {
        id: loaded.rubric.id.clone(),
        submission: crate::formats::native::rubric_to_json(&loaded.rubric).to_string(),
        origin: loaded.file.clone(),
        ..Item::default()
    };
    let (tx, _rx) = mpsc::channel(64);
    let opts = ExecOptions {
        cell_events: false,
        ..ExecOptions::default()
    };
    // Meta checks emit one event per criterion; the channel holds them all.
    let evaluation = evaluate_item(Some(&meta), &item, 0, &opts, &tx).await;
    let mut findings = findings(&loaded.rubric);
    let conventions = crate::formats::agentic::conventions::broken(&loaded.rubric);
    // An agentic_v2_eval rubric's weight convention already says what the sum means.
    let weights_said = conventions.iter().any(|c| c.criterion.is_none());
    findings.extend(
        conventions
            .into_iter()
            .map(|c| raw_finding(Severity::Warning, c.criterion, c.field, c.message)),
    );
    if !weights_said
        && evaluation
            .results
            .iter()
            .any(|r| r.criterion_id == "weight_distribution" && r.value == Some(0.0))
    {
        let sum: f64 = loaded.rubric.criteria.iter().map(|c| c.weight).sum();
        let field = if loaded.rubric.section_names().is_empty() {
            "criteria"
        } else {
            "sections"
        };
        findings.push(raw_finding(
            Severity::Info,
            None,
            field,
            format!(
                "weights sum to {}, not 1: rubricate normalises weights, so scores are unaffected; only the meta-rubric's weight-distribution criterion asks for 1",
                (sum * 10_000.0).round() / 10_000.0
            ),
        ));
    }
    let located = findings
        .into_iter()
        .map(|f| {
            let d = loaded.diagnostic(f.criterion, &f.field, "");
            let location = match d.pos {
                Some(p) => format!("{}:{}:{}", d.file, p.line, p.col),
                None => d.file.clone(),
            };
            Finding {
                severity: f.severity,
                location,
                path: loaded.source.path(f.criterion, &f.field),
                message: f.message,
            }
        })
        .collect();
    Ok(LintReport {
        meta: evaluation,
        findings: located,
    })
}

struct RawFinding {
    severity: Severity,
    criterion: Option<usize>,
    field: String,
    message: String,
}

fn raw_finding(
    severity: Severity,
    criterion: Option<usize>,
    field: &str,
    message: String,
) -> RawFinding {
    RawFinding {
        severity,
        criterion,
        field: field.to_owned(),
        message,
    }
}

/// Text as people read it: case and runs of spaces do not matter.
fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The extra checks, in criterion order.
fn findings(rubric: &Rubric) -> Vec<RawFinding> {
    let mut out = Vec::new();
    // Each requirement (and name) against the first criterion that had it (one pass).
    let mut first_with: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut first_named: std::collections::HashMap<String, usize> =
        std::collections::HashMap::new();
    for (i, c) in rubric.criteria.iter().enumerate() {
        if c.requirement.trim().is_empty() {
            out.push(raw_finding(
                Severity::Error,
                Some(i),
                "requirement",
                format!("criterion '{}' has an empty requirement", c.id),
            ));
        }
        // The meta-rubric compares names exactly (as dataknobs does); names that differ only
        // in case or spacing read the same to a person, and to a judge.
        let name = normalize(&c.name);
        match first_named.get(&name) {
            Some(&j) if rubric.criteria[j].name != c.name => out.push(raw_finding(
                Severity::Warning,
                Some(i),
                "name",
                format!(
                    "criterion '{}' is named like '{}' but for case or spacing ('{}' and '{}'); give each criterion its own name",
                    c.id, rubric.criteria[j].id, c.name, rubric.criteria[j].name
                ),
            )),
            Some(_) => {}
            None => {
                first_named.insert(name, i);
            }
        }
        let requirement = normalize(&c.requirement);
        if let Some(&j) = first_with.get(&requirement) {
            out.push(raw_finding(
                Severity::Warning,
                Some(i),
                "requirement",
                format!("criterion '{}' repeats the requirement of '{}'; merge them or make each check one distinct thing", c.id, rubric.criteria[j].id),
            ));
        } else {
            first_with.insert(requirement, i);
        }
        if let Some((a, b)) = double_barrelled(&c.requirement) {
            out.push(raw_finding(
                Severity::Warning,
                Some(i),
                "requirement",
                format!("criterion '{}' may check two things (\"{a}\" and \"{b}\"); a verdict on both at once hides which failed — consider two criteria", c.id),
            ));
        }
        if let Method::Judge(j) = &c.method
            && let Some(t) = &j.template
        {
            let unknown = template::unknown_variables(t);
            if !unknown.is_empty() {
                out.push(raw_finding(
                    Severity::Warning,
                    Some(i),
                    "method.judge.template",
                    format!(
                        "template of '{}' uses {} that rubricate does not provide (unless each submission is a JSON object with that field); available: {}",
                        c.id,
                        unknown
                            .iter()
                            .map(|v| format!("`{v}`"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        template::VARIABLES.join(", ")
                    ),
                ));
            }
        }
        if let Kind::Options { options, .. } = &c.kind
            && !options.iter().any(|o| !o.na)
        {
            out.push(raw_finding(
                Severity::Error,
                Some(i),
                "options",
                format!("criterion '{}' has no option that is not NA", c.id),
            ));
        }
        if c.required && c.weight < 0.0 {
            out.push(raw_finding(
                Severity::Warning,
                Some(i),
                "required",
                format!("'{}' is a penalty (negative weight) and required, so the bad thing must be present to pass — is that intended?", c.id),
            ));
        }
        if c.required && !c.possible_values().iter().any(|v| c.gate().admits(*v)) {
            out.push(raw_finding(
                Severity::Error,
                Some(i),
                "min_score",
                format!("required criterion '{}' can never reach its min_score; every evaluation will fail", c.id),
            ));
        }
    }
    if let Some(best) = best_with_gates(rubric)
        && !reaches(best, rubric.pass_threshold)
    {
        out.push(raw_finding(
                Severity::Warning,
                None,
                "pass_threshold",
                format!(
                    "pass_threshold {} cannot be reached: with every required criterion at its min_score the best score is {:.4}",
                    rubric.pass_threshold, best
                ),
            ));
    }
    out
}

/// The best score achievable while every required gate is met.
fn best_with_gates(rubric: &Rubric) -> Option<f64> {
    let inputs: Option<Vec<Input>> = rubric
        .criteria
        .iter()
        .map(|c| {
            let mut values = c.possible_values();
            if c.required {
                values.retain(|v| c.gate().admits(*v));
            }
            let pick = if c.weight < 0.0 {
                values.into_iter().min_by(f64::total_cmp)
            } else {
                values.into_iter().max_by(f64::total_cmp)
            }?;
            Some(Input {
                weight: c.weight,
                outcome: Outcome::Value(pick),
                gate: None,
                worst: None,
            })
        })
        .collect();
    aggregate_rubric(rubric, &inputs?).score
}

/// Splits "X and Y" where both sides look like separate checks (three words or more each).
fn double_barrelled(requirement: &str) -> Option<(String, String)> {
    let lower = requirement.to_lowercase();
    for joiner in [" and also ", " as well as ", " and "] {
        if let Some(at) = lower.find(joiner) {
            let (a, b) = (
                requirement[..at].trim(),
                requirement[at + joiner.len()..].trim(),
            );
            let words = |s: &str| s.split_whitespace().count();
            if words(a) >= 3 && words(b) >= 3 {
                let clip = |s: &str| s.split_whitespace().take(6).collect::<Vec<_>>().join(" ");
                return Some((clip(a), clip(b)));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::double_barrelled;

    #[test]
    fn double_barrelled_needs_two_real_clauses() {
        assert!(
            double_barrelled("States the capital of France and explains why it matters").is_some()
        );
        assert!(double_barrelled("Mentions salt and pepper").is_none());
        assert!(double_barrelled("Clear").is_none());
    }
}
