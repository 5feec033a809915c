//! What walking an agentv document carries: the rubric entries found (each with the grader
//! it is scored in), the walk's notes, and reading a list of entries.

use std::collections::BTreeSet;

use crate::core::diag::Diagnostic;
use crate::formats::fields::{Ctx, number_of};
use crate::formats::node::{Node, NodeValue};
use crate::model::Criterion;

/// A rubric entry found in the document, before it is read.
#[derive(Clone)]
pub(super) struct Found<'n> {
    pub(super) node: &'n Node,
    pub(super) path: String,
    /// The grader's `metric` name, kept as the criterion's section.
    pub(super) section: Option<String>,
    /// Set for deterministic assertions, each a grader of its own.
    pub(super) check: Option<Criterion>,
    /// The grader the entry is scored in.
    pub(super) grader: GraderSpec,
}

/// One agentv grader (an assertion, an evaluator, or the strings of an `assert` list
/// taken together as agentv does): its weight in the test's mean and its gate.
#[derive(Debug, Clone)]
pub(super) struct GraderSpec {
    /// Where it is in the file: what makes two entries the same grader.
    pub(super) key: String,
    pub(super) name: String,
    pub(super) weight: f64,
    pub(super) required: bool,
    pub(super) min_score: Option<f64>,
}

/// The key of a case's `rubrics`, which join the file's first rubric grader when it has one.
pub(super) const KEY_SHARED: &str = "#file-rubric";

impl GraderSpec {
    pub(super) fn plain(key: String, name: &str, weight: f64) -> Self {
        Self {
            key,
            name: name.to_owned(),
            weight,
            required: false,
            min_score: None,
        }
    }

    /// A grader written as an object: its `name` (or `metric`, or type), `weight` (≥ 0,
    /// default 1), `required: true` and `min_score` in (0, 1], as agentv reads them.
    pub(super) fn of(ctx: &mut Ctx<'_>, node: &Node, key: String, fallback: &str) -> Self {
        let name = ["name", "metric"]
            .iter()
            .find_map(|k| node.get(k).and_then(Node::as_str))
            .unwrap_or(fallback)
            .to_owned();
        let weight = match node.get("weight") {
            Some(n) => match number_of(ctx, n, "a grader's `weight`") {
                Some(x) if x.is_finite() && x >= 0.0 => x,
                Some(x) => {
                    ctx.err(
                        n.pos,
                        format!("a grader's weight is a number ≥ 0; found {x}"),
                    );
                    1.0
                }
                None => 1.0,
            },
            None => 1.0,
        };
        let required = node
            .get("required")
            .is_some_and(|n| matches!(n.value, NodeValue::Bool(true)));
        if let Some(n) = node.get("required")
            && matches!(n.value, NodeValue::Int(_) | NodeValue::Float(_))
        {
            ctx.err(
                n.pos,
                "a numeric `required` was removed from agentv; write `required: true` and `min_score`",
            );
        }
        // agentv reads a min_score only in (0, 1]; another value is not a gate.
        let min_score = node
            .get("min_score")
            .and_then(Node::as_f64)
            .filter(|m| *m > 0.0 && *m <= 1.0);
        Self {
            key,
            name,
            weight,
            required,
            min_score,
        }
    }
}

pub(super) struct Walk<'f> {
    pub(super) ctx: Ctx<'f>,
    pub(super) notes: Vec<Diagnostic>,
    pub(super) noted: BTreeSet<String>,
}

impl Walk<'_> {
    /// Notes something ignored, once per kind of thing per file.
    pub(super) fn note(&mut self, node: &Node, kind: &str, message: String) {
        if self.noted.insert(kind.to_owned()) {
            self.notes
                .push(Diagnostic::at(self.ctx.file, node.pos, message));
        }
    }
}

/// A list of rubric entries (strings or objects) at `path`, all scored in `grader`.
pub(super) fn entries<'n>(
    w: &mut Walk<'_>,
    list: Option<&'n Node>,
    path: &str,
    section: Option<&str>,
    grader: &GraderSpec,
    out: &mut Vec<Found<'n>>,
) {
    let Some(list) = list else {
        return;
    };
    let found = |node: &'n Node, path: String| Found {
        node,
        path,
        section: section.map(str::to_owned),
        check: None,
        grader: grader.clone(),
    };
    match &list.value {
        NodeValue::Seq(items) => {
            for (i, node) in items.iter().enumerate() {
                out.push(found(node, format!("{path}[{i}]")));
            }
        }
        // `value: "one criterion"`
        NodeValue::Str(_) => out.push(found(list, path.to_owned())),
        _ => w.ctx.wrong_type(
            list,
            "agentv rubrics",
            "a list of strings or {id, outcome, …}",
        ),
    }
}
