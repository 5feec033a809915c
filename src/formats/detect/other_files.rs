//! Files of the same projects that are no rubric, eval or dataset (configs, results,
//! transcripts), named from their shape so they are not refused as a rubric without
//! criteria or an item without a submission.

use crate::formats::node::Node;

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
    } else if root.get("cases").and_then(Node::as_seq).is_some_and(|cs| {
        cs.iter().any(|c| {
            c.get("id").is_some()
                && (c.get("input").is_some()
                    || c.get("criteria").is_some()
                    || c.get("assert").is_some())
        })
    }) {
        "agentv's older eval layout (`cases:`, which agentv renamed `tests:` in its #240 and no longer reads), not a rubric: rename `cases` to `tests` (and a case's text `criteria` is its expected outcome) to load it"
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
