//! Which system a rubric or dataset file belongs to, told from its shape alone (no file
//! name rules): the keys each system uses and the others do not. `--from` overrides.

use std::fmt;

use super::node::{Node, NodeValue};

mod other_files;
pub use other_files::{not_a_rubric, not_an_item};

/// The file formats rubricate reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// rubricate's own format (SCORING.md fields).
    Native,
    /// rubric (The LLM Data Company): `[{weight, requirement}]`.
    RubricLib,
    /// autorubric: criteria with `name`, default weight 10, options with NA; datasets.
    Autorubric,
    /// agentv eval YAML: eval cases with rubrics, `score_ranges`.
    Agentv,
    /// `agentic_v2_eval`: scoring rubrics (levels, thresholds, hard gates) and judge rubrics.
    Agentic,
    /// dataknobs: rubric config dicts with levels and `scoring_method`.
    Dataknobs,
}

impl Format {
    /// Every format, in the order detection tries them.
    pub const ALL: [Format; 6] = [
        Format::Native,
        Format::RubricLib,
        Format::Autorubric,
        Format::Agentv,
        Format::Agentic,
        Format::Dataknobs,
    ];

    /// The name used on the command line (`--from`, `--to`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Native => "native",
            Format::RubricLib => "rubric-lib",
            Format::Autorubric => "autorubric",
            Format::Agentv => "agentv",
            Format::Agentic => "agentic",
            Format::Dataknobs => "dataknobs",
        }
    }

    /// The system's own name ("`agentic_v2_eval`", "rubricate's own format").
    pub fn system(self) -> &'static str {
        match self {
            Format::Native => "rubricate's own format",
            Format::RubricLib => "rubric (The LLM Data Company)",
            Format::Autorubric => "autorubric",
            Format::Agentv => "agentv",
            Format::Agentic => "agentic_v2_eval",
            Format::Dataknobs => "dataknobs",
        }
    }

    /// Parses a command-line name; `_` and `-` are interchangeable.
    pub fn parse(name: &str) -> Result<Format, UnknownFormat> {
        let wanted = name.trim().to_ascii_lowercase().replace('_', "-");
        let alias = match wanted.as_str() {
            "rubric" | "rubriclib" | "llm-data-company" => "rubric-lib",
            "agentic-v2-eval" | "agentic-v2" => "agentic",
            "rubricate" => "native",
            other => other,
        };
        Format::ALL
            .into_iter()
            .find(|f| f.name() == alias)
            .ok_or_else(|| UnknownFormat(name.to_owned()))
    }
}

/// A format name rubricate does not know; the message lists those it does.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format '{0}'; use one of {names}", names = Format::ALL.map(Format::name).join(", "))]
pub struct UnknownFormat(pub String);

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Keys only rubricate's own format writes at the top of a rubric.
const NATIVE_ONLY: &[&str] = &[
    "$schema",
    "id",
    "version",
    "pass_threshold",
    "scoring",
    "judge",
];

/// Criterion fields only rubricate's own format has (`agentic_v2_eval`'s criteria have
/// `name`, `weight`, `description`, `min_value`, `max_value`, `levels`, `hard_gate` and
/// `minimum`): one of them makes `levels: {0: text, 1: text}` rubricate's map levels.
const NATIVE_CRITERION_ONLY: &[&str] = &[
    "id",
    "requirement",
    "expected_outcome",
    "outcome",
    "kind",
    "method",
    "required",
    "min_score",
    "options",
    "scale",
    "scale_type",
    "tags",
];

/// The format a document was read as, and which of its fields decided it (for a refusal to
/// say: "read as `agentic_v2_eval` because …").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    /// The format it was read as.
    pub format: Format,
    /// Which fields decided it, for messages.
    pub because: String,
}

fn found(format: Format, because: impl Into<String>) -> Detected {
    Detected {
        format,
        because: because.into(),
    }
}

/// Tells the format from a parsed document.
pub fn detect(root: &Node) -> Format {
    detect_why(root).format
}

/// Tells the format from a parsed document, and why.
pub fn detect_why(root: &Node) -> Detected {
    match &root.value {
        NodeValue::Seq(items) => detect_list(items),
        NodeValue::Map(_) => detect_map(root),
        _ => found(Format::Native, "it is neither a mapping nor a list"),
    }
}

fn detect_list(items: &[Node]) -> Detected {
    if !items.is_empty() && items.iter().all(|i| i.get("test_id").is_some()) {
        return found(Format::Agentv, "every entry has `test_id` (agentv results)");
    }
    // agentv scenario files: config rows crossed with tests.
    if !items.is_empty()
        && items
            .iter()
            .all(|i| i.get("config").is_some() && i.get("tests").is_some())
    {
        return found(
            Format::Agentv,
            "every entry has `config` and `tests` (agentv scenarios)",
        );
    }
    // agentv case files: a list of cases, each with an id and what it asserts or feeds.
    let case_keys = [
        "assert",
        "assertions",
        "vars",
        "input",
        "expected_output",
        "rubrics",
        "criteria",
    ];
    if !items.is_empty()
        && items
            .iter()
            .all(|i| i.get("id").is_some() && case_keys.iter().any(|k| i.get(k).is_some()))
    {
        return found(
            Format::Agentv,
            "every entry has `id` and what an agentv case asserts or feeds (`assert`, `vars`, `input`, `rubrics`, `criteria`…)",
        );
    }
    entries_format(items).unwrap_or_else(|| {
        found(
            Format::Native,
            "it is a list of criteria that no other system's fields mark",
        )
    })
}

/// A list of criteria that may hold sections (`{criteria: […]}` items, as autorubric and
/// `rubric_lib` read any list): the format its criteria tell, where its sections carry only
/// what a `rubric_lib` section may (`name`, `title`, `id`).
fn entries_format(items: &[Node]) -> Option<Detected> {
    let mut criteria: Vec<&Node> = Vec::new();
    let mut plain_sections = true;
    for item in items {
        match item.get("criteria").and_then(Node::as_seq) {
            Some(inner) => {
                criteria.extend(inner);
                plain_sections &= item.as_map().is_some_and(|m| {
                    m.iter().all(|(k, _)| {
                        matches!(k.text.as_str(), "criteria" | "name" | "title" | "id")
                    })
                });
            }
            None => criteria.push(item),
        }
    }
    Some(match criteria_format(&criteria)? {
        Format::RubricLib if !plain_sections => found(
            Format::Autorubric,
            "its criteria are `{weight, requirement}` in sections with more than a name",
        ),
        Format::RubricLib => found(
            Format::RubricLib,
            "every criterion is exactly `{weight, requirement}`",
        ),
        f => found(f, AUTORUBRIC_WORDS),
    })
}

const AUTORUBRIC_WORDS: &str = "its criteria use autorubric's fields (`name` without `id`, `scale_type`, options with `value` or `na`, or a requirement without a weight)";

fn detect_map(root: &Node) -> Detected {
    let has = |k: &str| root.get(k).is_some();
    let agentv_keys = ["evalcases", "testcases", "eval_cases", "tests", "scenarios"];
    if let Some(k) = agentv_keys.iter().find(|k| has(k)) {
        return found(
            Format::Agentv,
            format!("it has `{k}` (agentv's eval cases)"),
        );
    }
    if has("skill_name") && has("evals") {
        return found(
            Format::Agentv,
            "it has `skill_name` and `evals` (an agentv skill eval)",
        );
    }
    if has("assert") && (has("input") || has("vars")) {
        return found(
            Format::Agentv,
            "it has `assert` beside `input` or `vars` (an agentv case)",
        );
    }
    if root
        .get("execution")
        .and_then(|e| e.get("evaluators"))
        .is_some()
    {
        return found(Format::Agentv, "it has `execution.evaluators` (agentv)");
    }
    if let Some(k) = ["definitions", "judge_prompt"].iter().find(|k| has(k)) {
        return found(
            Format::Agentic,
            format!("it has `{k}` (agentic_v2_eval's judge rubrics)"),
        );
    }
    if let Some(why) = agentic_scoring(root) {
        return found(Format::Agentic, why);
    }
    if root.get("rubrics").and_then(Node::as_seq).is_some() {
        return found(
            Format::Dataknobs,
            "it has a `rubrics` list (a dataknobs config)",
        );
    }
    let criteria = all_criteria(root);
    if criteria.iter().any(|c| c.get("scoring_method").is_some()) {
        return found(
            Format::Dataknobs,
            "a criterion has `scoring_method` (dataknobs)",
        );
    }
    if has("items") {
        return found(
            Format::Autorubric,
            "it has `items` (a dataset with its rubric, as autorubric writes one)",
        );
    }
    if let Some(k) = NATIVE_ONLY.iter().find(|k| has(k)) {
        return found(
            Format::Native,
            format!("it has `{k}` at the top, which only rubricate's own format has"),
        );
    }
    if let Some(inner) = root.get("rubric") {
        let alone = root.as_map().is_some_and(|m| m.len() == 1);
        let d = detect_why(inner);
        return match d.format {
            Format::RubricLib if !alone => found(
                Format::Autorubric,
                "its `rubric` is a `{weight, requirement}` list beside other fields (autorubric)",
            ),
            Format::Native if !alone && inner.as_seq().is_some() => found(
                Format::Autorubric,
                "its `rubric` is a list beside other fields (autorubric)",
            ),
            f => found(f, format!("its `rubric` tells: {}", d.because)),
        };
    }
    if has("guidelines") {
        return found(Format::Autorubric, "it has `guidelines` (autorubric)");
    }
    if let Some(list) = root.get("criteria").and_then(Node::as_seq)
        && entries_format(list).is_some_and(|d| d.format == Format::Autorubric)
    {
        return found(Format::Autorubric, AUTORUBRIC_WORDS);
    }
    if let Some(sections) = root.get("sections").and_then(Node::as_seq) {
        let keys_only = sections.iter().all(|s| {
            s.as_map().is_some_and(|m| {
                m.iter()
                    .all(|(k, _)| matches!(k.text.as_str(), "criteria" | "name" | "title" | "id"))
            })
        });
        return match criteria_format(&criteria) {
            Some(Format::RubricLib) if keys_only => found(
                Format::RubricLib,
                "its sections hold only `{weight, requirement}` criteria",
            ),
            Some(_) if criteria.iter().any(|c| c.get("id").is_none()) => {
                found(Format::Autorubric, AUTORUBRIC_WORDS)
            }
            _ => found(
                Format::Native,
                "it has `sections` whose criteria no other system's fields mark",
            ),
        };
    }
    found(
        Format::Native,
        "no other system's fields are in it (agentv's cases, agentic_v2_eval's `min_value`/`max_value`/levels `{score: text}` without rubricate's criterion fields, dataknobs' `scoring_method`, autorubric's `name` without `id`…)",
    )
}

/// Why a mapping is an `agentic_v2_eval` scoring rubric, when it is one: `thresholds` or
/// `hard_gates` beside `criteria`, or criteria with its `min_value`/`max_value` or levels
/// `{score: text}` — unless a criterion has a field only rubricate's own format has (then
/// `levels: {0: text}` is rubricate's map levels) — or its smallest shape.
fn agentic_scoring(root: &Node) -> Option<String> {
    if let Some(k) = ["thresholds", "hard_gates"]
        .iter()
        .find(|k| root.get(k).is_some())
    {
        return root
            .get("criteria")
            .is_some()
            .then(|| format!("it has `{k}` beside `criteria` (agentic_v2_eval)"));
    }
    let criteria = root.get("criteria").and_then(Node::as_seq)?;
    // The Scorer reads a `version` too: it marks rubricate's own format only when it is
    // semantic ("1.0.0"; the Scorer documents "1.0"), and never beside `min_value` or
    // `max_value`, which rubricate's own format does not have.
    let native = criteria
        .iter()
        .any(|c| NATIVE_CRITERION_ONLY.iter().any(|k| c.get(k).is_some()))
        || NATIVE_ONLY
            .iter()
            .any(|k| *k != "version" && root.get(k).is_some());
    let semver = root
        .get("version")
        .and_then(Node::as_str)
        .is_some_and(crate::model::is_semver);
    if !native {
        for (i, c) in criteria.iter().enumerate() {
            let field = ["min_value", "max_value"]
                .into_iter()
                .find(|k| c.get(k).is_some())
                .map(|k| format!("`{k}`"))
                .or_else(|| {
                    (!semver
                        && c.get("levels")
                            .is_some_and(|l| matches!(l.value, NodeValue::Map(_))))
                    .then(|| "`levels` as a map {score: text}".to_owned())
                });
            if let Some(field) = field {
                return Some(format!(
                    "criterion {} (line {}) has {field} and no criterion has a field only rubricate's own format has ({})",
                    i + 1,
                    c.pos.line,
                    NATIVE_CRITERION_ONLY.join(", ")
                ));
            }
        }
    }
    looks_like_plain_agentic(root).then(|| {
        "its criteria have only `name`, `weight` and `description` (agentic_v2_eval's Scorer schema)".to_owned()
    })
}

/// A list of criteria: `rubric_lib` when every one is exactly `{weight, requirement}`,
/// autorubric when they use its vocabulary (`name` without `id`, options, `scale_type`,
/// a missing weight), `None` when nothing tells.
fn criteria_format(items: &[&Node]) -> Option<Format> {
    let maps: Vec<&Node> = items
        .iter()
        .copied()
        .filter(|c| c.as_map().is_some())
        .collect();
    if maps.is_empty() {
        return None;
    }
    let only_weight_requirement = maps.iter().all(|c| {
        c.as_map().is_some_and(|m| {
            m.iter()
                .all(|(k, _)| k.text == "weight" || k.text == "requirement")
                && m.iter().any(|(k, _)| k.text == "weight")
        })
    });
    if only_weight_requirement {
        return Some(Format::RubricLib);
    }
    let autorubric = maps.iter().any(|c| {
        (c.get("name").is_some() && c.get("id").is_none())
            || c.get("scale_type").is_some()
            || c.get("options").and_then(Node::as_seq).is_some_and(|o| {
                o.iter()
                    .any(|x| x.get("na").is_some() || x.get("value").is_some())
            })
            || (c.get("weight").is_none()
                && c.get("requirement").is_some()
                && c.get("id").is_none())
    });
    autorubric.then_some(Format::Autorubric)
}

/// Named `criteria` of `name`/`weight`/`description` alone (beside the Scorer's `name` and
/// `version`): the Scorer's documented schema and the smallest agentic scoring rubric (its
/// `default.yaml`), which has no levels to tell it by. Rubricate's own format names what a
/// criterion checks `requirement` (and gives it an `id`); autorubric needs a `requirement`.
fn looks_like_plain_agentic(root: &Node) -> bool {
    let Some(map) = root.as_map() else {
        return false;
    };
    if map.iter().any(|(k, _)| {
        !matches!(
            k.text.as_str(),
            "criteria" | "metadata" | "name" | "version"
        )
    }) {
        return false;
    }
    let Some(cs) = root.get("criteria").and_then(Node::as_seq) else {
        return false;
    };
    !cs.is_empty()
        && cs.iter().all(|c| {
            c.as_map().is_some_and(|m| {
                m.iter()
                    .all(|(k, _)| matches!(k.text.as_str(), "name" | "weight" | "description"))
            }) && c.get("name").is_some()
        })
}

/// The criteria of a rubric document, sections flattened.
fn all_criteria(root: &Node) -> Vec<&Node> {
    let mut out: Vec<&Node> = Vec::new();
    let target = root.get("rubric").unwrap_or(root);
    if let Some(list) = target.as_seq() {
        out.extend(list);
    }
    if let Some(list) = target.get("criteria").and_then(Node::as_seq) {
        out.extend(list);
    }
    for s in target
        .get("sections")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        if let Some(list) = s.get("criteria").and_then(Node::as_seq) {
            out.extend(list);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::yaml;

    fn of(text: &str) -> Format {
        detect(&yaml::parse("t.yaml", text).unwrap())
    }

    #[test]
    fn each_system_is_told_by_its_shape() {
        assert_eq!(
            of("- {weight: 3, requirement: a}\n- {weight: -1, requirement: b}\n"),
            Format::RubricLib
        );
        assert_eq!(
            of("rubric:\n  - {weight: 3, requirement: a}\n"),
            Format::RubricLib
        );
        assert_eq!(
            of("sections:\n  - criteria: [{weight: 1, requirement: a}]\n"),
            Format::RubricLib
        );
        assert_eq!(
            of("- {name: a, weight: 3, requirement: a}\n"),
            Format::Autorubric
        );
        assert_eq!(
            of("rubric: [{weight: 3, requirement: a}]\nguidelines: g\n"),
            Format::Autorubric
        );
        assert_eq!(
            of("- requirement: a\n  options: [{label: x, value: 1}]\n"),
            Format::Autorubric
        );
        assert_eq!(of("evalcases: []\n"), Format::Agentv);
        assert_eq!(of("tests: []\n"), Format::Agentv);
        assert_eq!(
            of("- {test_id: a, grader: rubrics, range: {min: 0.3}}\n"),
            Format::Agentv
        );
        assert_eq!(
            of("definitions: {coherence: {prompt_template: x}}\n"),
            Format::Agentic
        );
        assert_eq!(
            of(
                "criteria:\n  - {name: A, weight: 0.5, description: x}\n  - {name: B, weight: 0.5, description: y}\n"
            ),
            Format::Agentic
        );
        assert_eq!(of("rubrics: []\n"), Format::Dataknobs);
        assert_eq!(
            of(
                "id: x\ncriteria:\n  - {id: a, description: d, scoring_method: {type: llm_decode}}\n"
            ),
            Format::Dataknobs
        );
        assert_eq!(
            of("id: x\ncriteria:\n  - {id: a, requirement: r}\n"),
            Format::Native
        );
        assert_eq!(of("- just a string\n"), Format::Native);
    }

    #[test]
    fn map_levels_with_rubricates_own_criterion_fields_are_native() {
        let native = "criteria:\n  - {id: clear, requirement: Clear, levels: {0: no, 1: yes}}\n";
        assert_eq!(of(native), Format::Native);
        let agentic =
            "criteria:\n  - {name: Clear, weight: 1, description: d, levels: {0: no, 1: yes}}\n";
        let d = detect_why(&yaml::parse("t.yaml", agentic).unwrap());
        assert_eq!(d.format, Format::Agentic);
        assert!(
            d.because
                .starts_with("criterion 1 (line 2) has `levels` as a map {score: text}"),
            "{}",
            d.because
        );
    }

    #[test]
    fn names_parse_with_aliases() {
        assert_eq!(Format::parse("rubric_lib").unwrap(), Format::RubricLib);
        assert_eq!(Format::parse("agentic_v2_eval").unwrap(), Format::Agentic);
        assert!(
            Format::parse("nope")
                .unwrap_err()
                .to_string()
                .contains("use one of native, rubric-lib")
        );
    }
}
