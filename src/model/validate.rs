//! Structural rules every rubric must satisfy, whatever file it came from.

use std::collections::HashSet;

use super::{Kind, Rubric};

/// One broken rule. `criterion` is the index in `Rubric::criteria`; `field` is a path
/// relative to that criterion (or to the rubric when `criterion` is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The criterion's index in `Rubric::criteria`; `None`: the rubric itself.
    pub criterion: Option<usize>,
    /// The field, relative to the criterion or the rubric.
    pub field: String,
    /// What is wrong, and what would be right.
    pub message: String,
}

impl Problem {
    pub(super) fn rubric(field: &str, message: String) -> Self {
        Self {
            criterion: None,
            field: field.to_owned(),
            message,
        }
    }
    pub(super) fn criterion(index: usize, field: impl Into<String>, message: String) -> Self {
        Self {
            criterion: Some(index),
            field: field.into(),
            message,
        }
    }
}

/// The longest id (of a rubric or a criterion) in characters: ids name files, columns and
/// journal entries.
pub const MAX_ID_CHARS: usize = 200;
/// The longest rubric or criterion name in characters.
pub const MAX_NAME_CHARS: usize = 1_000;

/// Every structural problem of `rubric`, in document order. Empty means valid.
pub fn validate_rubric(rubric: &Rubric) -> Vec<Problem> {
    let mut out = Vec::new();
    let too_long = |what: &str, text: &str, max: usize| {
        let n = text.chars().count();
        (n > max).then(|| format!("{what} is {n} characters long; at most {max} are allowed"))
    };
    if let Some(why) = too_long("the rubric id", &rubric.id, MAX_ID_CHARS) {
        out.push(Problem::rubric("id", why));
    }
    if let Some(why) = too_long("the rubric name", &rubric.name, MAX_NAME_CHARS) {
        out.push(Problem::rubric("name", why));
    }
    if rubric.id.trim().is_empty() {
        out.push(Problem::rubric(
            "id",
            "rubric id is empty; give the rubric an `id` or a `name`".into(),
        ));
    }
    if !is_semver(&rubric.version) {
        out.push(Problem::rubric(
            "version",
            format!(
                "version '{}' is not a semantic version like 1.0.0",
                rubric.version
            ),
        ));
    }
    let t = rubric.pass_threshold;
    if !t.is_finite() {
        out.push(Problem::rubric(
            "pass_threshold",
            format!("pass_threshold {t} is not a finite number"),
        ));
    } else if rubric.scoring.normalize && !(0.0..=1.0).contains(&t) {
        out.push(Problem::rubric(
            "pass_threshold",
            format!("pass_threshold {t} is outside 0..1; normalized scores are between 0 and 1"),
        ));
    }
    let pc = rubric.scoring.partial_credit;
    if !(pc.is_finite() && (0.0..=1.0).contains(&pc)) {
        out.push(Problem::rubric(
            "scoring.partial_credit",
            format!("partial_credit {pc} must be between 0 and 1"),
        ));
    }
    if let Some(temp) = rubric.judge.as_ref().and_then(|j| j.temperature)
        && !(temp.is_finite() && temp >= 0.0)
    {
        out.push(Problem::rubric(
            "judge.temperature",
            format!("temperature {temp} must be a number ≥ 0"),
        ));
    }
    if rubric.criteria.is_empty() {
        out.push(Problem::rubric(
            "criteria",
            "the rubric has no criteria; add at least one".into(),
        ));
    }
    let mut ids = HashSet::new();
    for (i, c) in rubric.criteria.iter().enumerate() {
        if let Some(why) = too_long("the criterion id", &c.id, MAX_ID_CHARS) {
            out.push(Problem::criterion(i, "id", why));
            continue;
        }
        if let Some(why) = too_long("the criterion name", &c.name, MAX_NAME_CHARS) {
            out.push(Problem::criterion(i, "name", why));
        }
        if c.id.trim().is_empty() {
            out.push(Problem::criterion(i, "id", "criterion id is empty".into()));
        } else if !ids.insert(c.id.as_str()) {
            out.push(Problem::criterion(
                i,
                "id",
                format!(
                    "duplicate criterion id '{}'; ids must be unique within a rubric",
                    c.id
                ),
            ));
        }
        if c.requirement.trim().is_empty() {
            out.push(Problem::criterion(
                i,
                "requirement",
                format!(
                    "criterion '{}' has an empty requirement; say what is checked",
                    c.id
                ),
            ));
        }
        if !c.weight.is_finite() {
            out.push(Problem::criterion(
                i,
                "weight",
                format!(
                    "criterion '{}' has weight {}, which is not a finite number",
                    c.id, c.weight
                ),
            ));
        }
        if let Some(why) = c.min_score.and_then(min_score_problem) {
            out.push(Problem::criterion(i, "min_score", why));
        }
        validate_kind(i, &c.kind, &mut out);
    }
    validate_graders(rubric, &mut out);
    out.extend(super::pair::problems(rubric));
    out
}

/// Why a `min_score` cannot be one: it is a share of full marks.
fn min_score_problem(m: f64) -> Option<String> {
    (!(m.is_finite() && (0.0..=1.0).contains(&m)))
        .then(|| format!("min_score {m} must be between 0 and 1"))
}

/// Graders, when a rubric has them: each names criteria that exist, every criterion is in
/// exactly one, weights are finite and not negative, `min_score` is between 0 and 1.
fn validate_graders(rubric: &Rubric, out: &mut Vec<Problem>) {
    if rubric.graders.is_empty() {
        return;
    }
    let positions = rubric.positions();
    let mut owner: Vec<Option<&str>> = vec![None; rubric.criteria.len()];
    let mut ids = HashSet::new();
    for (g, grader) in rubric.graders.iter().enumerate() {
        let field = |f: &str| format!("graders[{g}].{f}");
        if !ids.insert(grader.id.as_str()) {
            out.push(Problem::rubric(
                &field("id"),
                format!("duplicate grader id '{}'", grader.id),
            ));
        }
        if !(grader.weight.is_finite() && grader.weight >= 0.0) {
            out.push(Problem::rubric(
                &field("weight"),
                format!(
                    "grader '{}' has weight {}; a grader's weight is a number ≥ 0",
                    grader.id, grader.weight
                ),
            ));
        }
        if let Some(why) = grader.min_score.and_then(min_score_problem) {
            out.push(Problem::rubric(&field("min_score"), why));
        }
        if grader.criteria.is_empty() {
            out.push(Problem::rubric(
                &field("criteria"),
                format!("grader '{}' has no criteria", grader.id),
            ));
        }
        for id in &grader.criteria {
            match positions.get(id.as_str()) {
                None => out.push(Problem::rubric(
                    &field("criteria"),
                    format!(
                        "grader '{}' names criterion '{id}', which the rubric does not have",
                        grader.id
                    ),
                )),
                Some(&i) => match owner[i] {
                    Some(first) => out.push(Problem::criterion(
                        i,
                        "id",
                        format!(
                            "criterion '{id}' is in grader '{first}' and grader '{}'; put it in one",
                            grader.id
                        ),
                    )),
                    None => owner[i] = Some(grader.id.as_str()),
                },
            }
        }
    }
    for (i, c) in rubric.criteria.iter().enumerate() {
        if owner[i].is_none() {
            out.push(Problem::criterion(
                i,
                "id",
                format!(
                    "criterion '{}' is in no grader; with `graders` every criterion belongs to one",
                    c.id
                ),
            ));
        }
    }
}

fn validate_kind(i: usize, kind: &Kind, out: &mut Vec<Problem>) {
    match kind {
        Kind::Binary => {}
        Kind::Levels(levels) => {
            if levels.is_empty() {
                out.push(Problem::criterion(
                    i,
                    "levels",
                    "levels criterion has no levels".into(),
                ));
            }
            let mut seen = HashSet::new();
            let mut prev: Option<f64> = None;
            for (j, l) in levels.iter().enumerate() {
                let field = format!("levels[{j}]");
                if l.id.trim().is_empty() {
                    out.push(Problem::criterion(
                        i,
                        format!("{field}.id"),
                        "level id is empty".into(),
                    ));
                } else if !seen.insert(l.id.as_str()) {
                    out.push(Problem::criterion(
                        i,
                        format!("{field}.id"),
                        format!("duplicate level id '{}'", l.id),
                    ));
                }
                if !(l.score.is_finite() && (0.0..=1.0).contains(&l.score)) {
                    out.push(Problem::criterion(
                        i,
                        format!("{field}.score"),
                        format!(
                            "level '{}' has score {}; scores are between 0 and 1",
                            l.id, l.score
                        ),
                    ));
                } else if let Some(p) = prev.filter(|p| l.score < *p) {
                    out.push(Problem::criterion(
                        i,
                        format!("{field}.score"),
                        format!(
                            "levels out of order: '{}' scores {} after a level scoring {p}; list levels from lowest to highest score",
                            l.id, l.score
                        ),
                    ));
                }
                if l.score.is_finite() {
                    prev = Some(l.score);
                }
            }
        }
        Kind::Options { options, .. } => {
            if !options.iter().any(|o| !o.na) {
                out.push(Problem::criterion(
                    i,
                    "options",
                    "options criterion has no choice that is not NA; add at least one scored option".into(),
                ));
            }
            let mut seen = HashSet::new();
            for (j, o) in options.iter().enumerate() {
                let key = o.label.trim().to_lowercase();
                if key.is_empty() {
                    out.push(Problem::criterion(
                        i,
                        format!("options[{j}].label"),
                        "option label is empty".into(),
                    ));
                } else if !seen.insert(key) {
                    out.push(Problem::criterion(
                        i,
                        format!("options[{j}].label"),
                        format!(
                            "duplicate option label '{}' (labels match case-insensitively)",
                            o.label
                        ),
                    ));
                }
                if !(o.value.is_finite() && (0.0..=1.0).contains(&o.value)) {
                    out.push(Problem::criterion(
                        i,
                        format!("options[{j}].value"),
                        format!(
                            "option '{}' has value {}; values are between 0 and 1",
                            o.label, o.value
                        ),
                    ));
                }
            }
        }
        Kind::Scale(s) => {
            if !(s.min.is_finite() && s.max.is_finite() && s.min < s.max) {
                out.push(Problem::criterion(
                    i,
                    "scale",
                    format!("scale min {} must be a number below max {}", s.min, s.max),
                ));
            }
            for (j, a) in s.anchors.iter().enumerate() {
                if !(a.value >= s.min && a.value <= s.max) {
                    out.push(Problem::criterion(
                        i,
                        format!("scale.anchors[{j}]"),
                        format!(
                            "anchor {} is outside the scale {}..{}",
                            a.value, s.min, s.max
                        ),
                    ));
                }
            }
        }
    }
}

/// `MAJOR.MINOR.PATCH` with an optional `-pre` or `+build` suffix.
pub fn is_semver(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Criterion, Level};

    #[test]
    fn reports_duplicates_empty_requirements_and_bad_weights() {
        let mut r = Rubric::new(
            "r",
            vec![
                Criterion::binary("a", "x", 1.0),
                Criterion::binary("a", " ", f64::NAN),
            ],
        );
        r.version = "one".into();
        let p = validate_rubric(&r);
        let msgs: Vec<&str> = p.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(p.len(), 4, "{msgs:?}");
        assert!(msgs[0].contains("semantic version"));
        assert!(msgs[1].contains("duplicate criterion id 'a'"));
        assert!(msgs[2].contains("empty requirement"));
        assert!(msgs[3].contains("not a finite number"));
    }

    #[test]
    fn levels_must_ascend() {
        let mut c = Criterion::binary("c", "x", 1.0);
        c.kind = Kind::Levels(vec![
            Level {
                id: "hi".into(),
                label: "Hi".into(),
                description: String::new(),
                score: 1.0,
                indicators: vec![],
            },
            Level {
                id: "lo".into(),
                label: "Lo".into(),
                description: String::new(),
                score: 0.0,
                indicators: vec![],
            },
        ]);
        let p = validate_rubric(&Rubric::new("r", vec![c]));
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].field, "levels[1].score");
        assert!(p[0].message.contains("out of order"));
    }

    #[test]
    fn semver_shapes() {
        assert!(is_semver("1.0.0"));
        assert!(is_semver("10.2.3-beta.1"));
        assert!(!is_semver("1.0"));
        assert!(!is_semver("v1.0.0"));
    }
}
