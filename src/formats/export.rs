//! Writing a rubric in another system's format. Each format holds less than rubricate's
//! model; what it cannot hold is listed (never dropped silently) so `convert` can say so.

use serde_json::Value;
use std::fmt::Write as _;

use super::detect::Format;
use crate::model::{Kind, Method, Rubric, Scoring};

/// The text of a converted file and everything the target format could not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// The converted file.
    pub text: String,
    /// What the format could not hold, one line each.
    pub lost: Vec<String>,
    /// What `text` is written in (agentv and agentic files are always YAML).
    pub syntax: Syntax,
}

/// YAML or JSON, for formats that read both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// YAML.
    Yaml,
    /// JSON.
    Json,
}

impl Syntax {
    /// JSON for a `.json` path, else YAML.
    pub fn for_path(path: &std::path::Path) -> Syntax {
        let json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if json { Syntax::Json } else { Syntax::Yaml }
    }

    /// The document's text; an error (never an empty document) when it cannot be written.
    pub fn render(self, value: &Value) -> Result<String, RenderError> {
        match self {
            Syntax::Json => serde_json::to_string_pretty(value)
                .map(|mut s| {
                    s.push('\n');
                    s
                })
                .map_err(|e| RenderError {
                    syntax: "JSON",
                    message: e.to_string(),
                }),
            Syntax::Yaml => Ok(super::yaml_write::to_yaml(value)),
        }
    }
}

/// A document that could not be written as text (nothing is written in its place).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not write it as {syntax}: {message}")]
pub struct RenderError {
    syntax: &'static str,
    message: String,
}

/// Why a format cannot hold a rubric at all (what it can hold in part is listed as lost).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    #[error("{format} scoring rubrics need positive weights; this rubric has none")]
    /// The format scores with positive weights only, and the rubric has none.
    NoPositiveWeights {
        /// The format's name.
        format: &'static str,
    },
    /// The document could not be written.
    #[error(transparent)]
    Render(#[from] RenderError),
}

/// Writes one rubric in `to`'s format; an error says why the format cannot hold it at all.
pub fn export_rubric(rubric: &Rubric, to: Format, syntax: Syntax) -> Result<Exported, ExportError> {
    let (value, lost) = match to {
        Format::Native => (super::native::rubric_to_json(rubric), Vec::new()),
        Format::RubricLib => super::rubric_lib::write(rubric),
        Format::Autorubric => super::autorubric::write(rubric),
        Format::Agentv => super::agentv::write(rubric, &[]),
        Format::Agentic => super::agentic::write(rubric)?,
        Format::Dataknobs => super::dataknobs::write(std::slice::from_ref(rubric)),
    };
    // agentv and agentic files are YAML in their home systems.
    let syntax = if matches!(to, Format::Agentv | Format::Agentic) {
        Syntax::Yaml
    } else {
        syntax
    };
    Ok(Exported {
        text: syntax.render(&value)?,
        lost,
        syntax,
    })
}

/// The written criteria (one value per criterion, in order) laid out as the rubric groups
/// them: `("criteria", [..])`, or `("sections", [{name, criteria}, ..])` when the rubric has
/// sections — criteria without one first, in a section named `loose` (unnamed if `None`).
pub(crate) fn criteria_layout(
    rubric: &Rubric,
    written: Vec<Value>,
    loose: Option<&str>,
) -> (&'static str, Value) {
    let names = rubric.section_names();
    if names.is_empty() {
        return ("criteria", Value::Array(written));
    }
    let pick = |want: Option<&str>| -> Vec<Value> {
        rubric
            .criteria
            .iter()
            .zip(&written)
            .filter(|(c, _)| c.section.as_deref() == want)
            .map(|(_, v)| v.clone())
            .collect()
    };
    let mut out = Vec::new();
    let unsectioned = pick(None);
    if !unsectioned.is_empty() {
        out.push(match loose {
            Some(name) => serde_json::json!({"name": name, "criteria": unsectioned}),
            None => serde_json::json!({"criteria": unsectioned}),
        });
    }
    for name in names {
        out.push(serde_json::json!({"name": name, "criteria": pick(Some(name))}));
    }
    ("sections", Value::Array(out))
}

/// What a format can hold, for the losses every writer shares.
pub(crate) struct Holds {
    pub format: &'static str,
    pub ids: bool,
    pub threshold: bool,
    pub guidelines: bool,
    pub sections: bool,
    pub gates: bool,
    pub levels: bool,
    pub options: bool,
    pub scale: bool,
    pub checks: bool,
    pub schema: bool,
    pub templates: bool,
    /// The scoring knobs the format always uses.
    pub scoring: Scoring,
}

/// Collects what `rubric` says that `holds` cannot; format writers add their own.
pub(crate) fn losses(rubric: &Rubric, holds: &Holds) -> Vec<String> {
    let f = holds.format;
    let mut lost = Vec::new();
    let mut say = |s: String| lost.push(s);
    if !holds.threshold && (rubric.pass_threshold - Rubric::DEFAULT_PASS_THRESHOLD).abs() > 1e-12 {
        say(format!(
            "pass_threshold {} ({f} has no pass threshold)",
            rubric.pass_threshold
        ));
    }
    if !holds.guidelines && rubric.guidelines.is_some() {
        say(format!("guidelines ({f} has no place for them)"));
    }
    if !holds.sections && !rubric.section_names().is_empty() {
        say(format!(
            "section names (criteria are written as one list in {f})"
        ));
    }
    // Which Python's `sum()` totals a rubric is the reader's setting, not the format's.
    let scoring = Scoring {
        summation: holds.scoring.summation,
        ..rubric.scoring
    };
    if scoring != holds.scoring {
        say(format!(
            "scoring knobs {} ({f} always scores {})",
            describe_scoring(&rubric.scoring),
            describe_scoring(&holds.scoring)
        ));
    }
    if rubric.judge.is_some() {
        say(format!(
            "judge settings ({f} configures its judge outside the rubric)"
        ));
    }
    if !rubric.graders.is_empty() {
        say(format!(
            "graders ({f} scores the criteria as one rubric; the graders' weights and required flags are not written)"
        ));
    }
    for c in &rubric.criteria {
        let who = format!("criterion '{}'", c.id);
        if !holds.ids && c.id != c.name {
            say(format!("{who}: its id and name ({f} criteria have no ids)"));
        }
        if !holds.gates && c.required {
            say(format!(
                "{who}: required gate ({f} has no required criteria)"
            ));
        }
        match &c.kind {
            Kind::Levels(_) if !holds.levels => {
                say(format!(
                    "{who}: its levels ({f} criteria are binary; written as binary)"
                ));
            }
            Kind::Options { .. } if !holds.options => {
                say(format!(
                    "{who}: its options ({f} has no multiple choice; written as binary)"
                ));
            }
            Kind::Scale(_) if !holds.scale => {
                say(format!(
                    "{who}: its scale ({f} has no numeric scale; written as binary)"
                ));
            }
            _ => {}
        }
        match &c.method {
            Method::Check(spec) if !holds.checks => {
                say(format!(
                    "{who}: check '{}' ({f} judges every criterion with an LLM)",
                    spec.name
                ));
            }
            Method::Schema(_) if !holds.schema => {
                say(format!(
                    "{who}: JSON Schema method ({f} judges every criterion with an LLM)"
                ));
            }
            Method::Judge(j) if !holds.templates && (j.template.is_some() || j.model.is_some()) => {
                say(format!(
                    "{who}: its judge template or model ({f} has none per criterion)"
                ));
            }
            _ => {}
        }
    }
    lost
}

/// The scoring knobs in a few words; those at their default after the first three are
/// left out.
pub fn describe_scoring(s: &Scoring) -> String {
    let d = Scoring::default();
    let mut out = format!(
        "aggregate {}, abstain {}, errors {}",
        knob(&s.aggregate),
        knob(&s.abstain),
        knob(&s.errors),
    );
    if !s.normalize {
        out.push_str(", not normalised");
    }
    if s.threshold != d.threshold {
        let _ = write!(out, ", threshold {}", knob(&s.threshold));
    }
    if s.gates != d.gates {
        let _ = write!(out, ", gates {}", knob(&s.gates));
    }
    if s.feedback != d.feedback {
        let _ = write!(out, ", feedback {}", knob(&s.feedback));
    }
    out
}

/// A scoring knob's name as written in files (`skip`, `points`).
pub fn knob<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}
