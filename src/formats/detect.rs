//! Which system a rubric or dataset file belongs to, told from its shape alone (no file
//! name rules): the keys each system uses and the others do not. `--from` overrides.

use std::fmt;

use super::node::{Node, NodeValue};

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

/// What a document is when it is no rubric, eval or dataset but its shape says what it is
/// (a file from the same projects: configs, results), so it is named instead of refused as
/// a rubric without criteria.
pub fn not_a_rubric(root: &Node) -> Option<&'static str> {
    if let Some(items) = root.as_seq() {
        let all = |f: &dyn Fn(&Node) -> bool| !items.is_empty() && items.iter().all(f);
        return if all(&|i| i.get("role").is_some() && i.get("content").is_some()) {
            Some(
                "a chat prompt (messages with roles, as agentv's `prompts` files hold), not a rubric",
            )
        } else if all(&|i| i.get("provider").is_some() && i.get("criteria").is_none()) {
            Some(
                "a list of agentv targets (the models that answer or grade, and their providers), not a rubric",
            )
        } else {
            None
        };
    }
    let has = |k: &str| root.get(k).is_some();
    // A report that names its rubric (a string) beside the scores of its ways of judging.
    if root.get("rubric").is_some_and(|r| r.as_str().is_some())
        && (has("standalone") || has("in_context"))
    {
        return Some(
            "an autorubric meta-rubric report (a rubric's scores by the meta-rubric), not a rubric",
        );
    }
    if has("criteria") || has("sections") || has("rubric") {
        return None;
    }
    if let Some(named) = autorubric_files(root) {
        return Some(named);
    }
    let is = if has("trace") && (has("text") || has("schema_version") || has("eval")) {
        "an agentv execution trace (a recorded run's messages and tool calls), not a rubric"
    } else if has("suites") && (has("repeat") || has("target")) {
        "an agentv experiment (which suites run, how often), not a rubric: inspect the eval files it names"
    } else if has("eval_files") {
        "an agentv optimizer configuration, not a rubric: inspect the eval files it names"
    } else if has("dataset") && has("evaluator") {
        "an agentv sidecar (defaults for the JSONL cases beside it), not a rubric: inspect the JSONL file"
    } else if has("grader") && has("fixtures") {
        "an agentv grader-conformance fixture set, not a rubric"
    } else if root
        .get("options")
        .is_some_and(|o| o.get("rubric_prompt").is_some())
    {
        "agentv default test options (a grader prompt), not a rubric"
    } else if has("criterion_results") && has("weighted_score") {
        "a dataknobs evaluation result (a RubricEvaluation), not a rubric"
    } else if (has("ensemble") || has("single")) && has("submission") {
        "autorubric item results (an experiment checkpoint), not a rubric: import an experiment folder with `rubricate runs import`"
    } else if has("test_id") && (has("score") || has("hits")) {
        "an agentv result (YAML), not a rubric: keep it as a run with `rubricate runs import FILE --dataset EVAL_FILE`"
    } else if root
        .as_map()
        .is_some_and(|m| !m.is_empty() && m.iter().all(|(_, v)| v.as_f64().is_some()))
    {
        "scores by criterion name (agentic_v2_eval's Scorer input), not a rubric"
    } else {
        return None;
    };
    Some(is)
}

/// autorubric's files that are not rubrics: its experiments' reports, test fixtures and
/// configuration.
fn autorubric_files(root: &Node) -> Option<&'static str> {
    let has = |k: &str| root.get(k).is_some();
    let is = if has("iterations") && (has("v1_skill") || has("gold_skill")) {
        "an autorubric skill-improvement result (a skill's iterations and their scores), not a rubric"
    } else if has("n_seeds") && has("results") {
        "an autorubric comparison report (scores across seeds and judges), not a rubric"
    } else if has("meta_judge") {
        "a file of recorded meta-judge prompts (an autorubric golden test fixture; the rubric is quoted inside each prompt), not a rubric"
    } else if has("graded_records") {
        "an autorubric ensemble's graded records (each item's report and votes), not a rubric; `rubricate runs import FILE --dataset DATASET` reads it as a run"
    } else if has("pickle_b64") {
        "a pickled Python object (an autorubric test fixture), not a rubric"
    } else if has("configurations") && has("system_prompts") {
        "a file of recorded judge prompts (an autorubric test fixture), not a rubric"
    } else if has("about") && (has("answers") || (has("judges") && has("datasets"))) {
        "an autorubric test fixture (recorded judge exchanges and their expected results), not a rubric"
    } else if has("model") && (has("cache_enabled") || has("max_retries") || has("timeout")) {
        "an LLM configuration (the judge model and its settings, as autorubric's LLMConfig), not a rubric"
    } else if root
        .as_map()
        .is_some_and(|m| !m.is_empty() && m.iter().all(|(_, v)| v.get("source_sha256").is_some()))
    {
        "a table of dataset file hashes (an autorubric test fixture), not a rubric"
    } else {
        return None;
    };
    Some(is)
}

/// What a dataset line without a submission is, when its shape says it is something else
/// from the same projects (a transcript, a session log), so it is named instead of refused
/// as an item without a submission.
pub fn not_an_item(obj: &serde_json::Map<String, serde_json::Value>) -> Option<&'static str> {
    let has = |k: &str| obj.contains_key(k);
    if has("role") && has("content") && (has("message_index") || has("test_id")) {
        Some(
            "an agentv transcript (one message of a recorded agent session a line), not a dataset: agentv replays it as a target's answers",
        )
    } else if has("type") && has("payload") && has("timestamp") {
        Some("an agent session log (codex events, one a line), not a dataset")
    } else if has("role") && has("content") {
        Some("a chat message, not a dataset item")
    } else {
        None
    }
}

/// Tells the format from a parsed document.
pub fn detect(root: &Node) -> Format {
    match &root.value {
        NodeValue::Seq(items) => detect_list(items),
        NodeValue::Map(_) => detect_map(root),
        _ => Format::Native,
    }
}

fn detect_list(items: &[Node]) -> Format {
    if !items.is_empty() && items.iter().all(|i| i.get("test_id").is_some()) {
        return Format::Agentv;
    }
    // agentv scenario files: config rows crossed with tests.
    if !items.is_empty()
        && items
            .iter()
            .all(|i| i.get("config").is_some() && i.get("tests").is_some())
    {
        return Format::Agentv;
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
        return Format::Agentv;
    }
    entries_format(items).unwrap_or(Format::Native)
}

/// A list of criteria that may hold sections (`{criteria: […]}` items, as autorubric and
/// `rubric_lib` read any list): the format its criteria tell, where its sections carry only
/// what a `rubric_lib` section may (`name`, `title`, `id`).
fn entries_format(items: &[Node]) -> Option<Format> {
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
    match criteria_format(&criteria) {
        Some(Format::RubricLib) if !plain_sections => Some(Format::Autorubric),
        f => f,
    }
}

fn detect_map(root: &Node) -> Format {
    let has = |k: &str| root.get(k).is_some();
    if has("evalcases")
        || has("testcases")
        || has("eval_cases")
        || has("tests")
        || has("scenarios")
        || (has("skill_name") && has("evals"))
        || (has("assert") && (has("input") || has("vars")))
    {
        return Format::Agentv;
    }
    if root
        .get("execution")
        .and_then(|e| e.get("evaluators"))
        .is_some()
    {
        return Format::Agentv;
    }
    if has("definitions") || has("judge_prompt") {
        return Format::Agentic;
    }
    if super::agentic::looks_like(root) || looks_like_plain_agentic(root) {
        return Format::Agentic;
    }
    if root.get("rubrics").and_then(Node::as_seq).is_some() {
        return Format::Dataknobs;
    }
    let criteria = all_criteria(root);
    if criteria.iter().any(|c| c.get("scoring_method").is_some()) {
        return Format::Dataknobs;
    }
    if has("items") {
        return Format::Autorubric;
    }
    if NATIVE_ONLY.iter().any(|k| has(k)) {
        return Format::Native;
    }
    if let Some(inner) = root.get("rubric") {
        let alone = root.as_map().is_some_and(|m| m.len() == 1);
        return match detect(inner) {
            Format::RubricLib if !alone => Format::Autorubric,
            Format::Native if !alone && inner.as_seq().is_some() => Format::Autorubric,
            f => f,
        };
    }
    if has("guidelines") {
        return Format::Autorubric;
    }
    if let Some(list) = root.get("criteria").and_then(Node::as_seq)
        && entries_format(list) == Some(Format::Autorubric)
    {
        return Format::Autorubric;
    }
    if let Some(sections) = root.get("sections").and_then(Node::as_seq) {
        let keys_only = sections.iter().all(|s| {
            s.as_map().is_some_and(|m| {
                m.iter()
                    .all(|(k, _)| matches!(k.text.as_str(), "criteria" | "name" | "title" | "id"))
            })
        });
        return match criteria_format(&criteria) {
            Some(Format::RubricLib) if keys_only => Format::RubricLib,
            Some(_) if criteria.iter().any(|c| c.get("id").is_none()) => Format::Autorubric,
            _ => Format::Native,
        };
    }
    Format::Native
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

/// `criteria` of `name`/`weight`/`description` alone, weights summing to 1: the smallest
/// agentic scoring rubric (its `default.yaml`), which has no levels to tell it by.
fn looks_like_plain_agentic(root: &Node) -> bool {
    let Some(map) = root.as_map() else {
        return false;
    };
    if map
        .iter()
        .any(|(k, _)| k.text != "criteria" && k.text != "metadata")
    {
        return false;
    }
    let Some(cs) = root.get("criteria").and_then(Node::as_seq) else {
        return false;
    };
    let shape = !cs.is_empty()
        && cs.iter().all(|c| {
            c.as_map().is_some_and(|m| {
                m.iter()
                    .all(|(k, _)| matches!(k.text.as_str(), "name" | "weight" | "description"))
            }) && c.get("description").is_some()
        });
    let sum: f64 = cs
        .iter()
        .filter_map(|c| c.get("weight").and_then(Node::as_f64))
        .sum();
    shape && (sum - 1.0).abs() <= 0.01 + 1e-12
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
