//! The `agentic_v2_eval` project's own conventions for its rubric files, which its `Scorer`
//! does not need: weights summing to 1 and a description for every criterion (only the
//! project's test of its shipped rubrics checks them). A file that breaks them loads and
//! scores as the Scorer scores it; `lint` says what the convention is.

use crate::model::Rubric;

/// One convention a rubric breaks: the criterion (`None`: the rubric), the field, and why.
pub struct Convention {
    /// The criterion's index in the rubric; `None`: the rubric itself.
    pub criterion: Option<usize>,
    /// The field the convention is about.
    pub field: &'static str,
    /// What the convention asks, and how the rubric differs.
    pub message: String,
}

/// The conventions an `agentic_v2_eval` scoring rubric breaks; none for any other rubric.
pub fn broken(rubric: &Rubric) -> Vec<Convention> {
    let agentic = rubric
        .metadata
        .get("format")
        .and_then(|f| f.as_str())
        .is_some_and(|f| f == "agentic_v2_eval");
    if !agentic {
        return Vec::new();
    }
    let mut out = Vec::new();
    let sum: f64 = rubric.criteria.iter().map(|c| c.weight).sum();
    if (sum - 1.0).abs() > 0.01 + 1e-12 {
        out.push(Convention {
            criterion: None,
            field: "criteria",
            message: format!(
                "agentic_v2_eval's own rubrics keep weights summing to 1 (±0.01); these sum to {} — its Scorer divides by the sum, so the score is the same either way",
                (sum * 10_000.0).round() / 10_000.0
            ),
        });
    }
    for (i, c) in rubric.criteria.iter().enumerate() {
        // The reader puts the name where a description is missing.
        if c.requirement == c.name {
            out.push(Convention {
                criterion: Some(i),
                field: "name",
                message: format!(
                    "criterion '{}' has no description beyond its name, so a judge is shown the name alone; agentic_v2_eval's own rubrics describe every criterion",
                    c.name
                ),
            });
        }
    }
    out
}
