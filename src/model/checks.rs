//! The check-name registry: the names of the built-in deterministic checks, and how the
//! names other systems give them (`module:function`, `check_…`, aliases) resolve to ours.
//! Readers of foreign formats and the engine's check compiler share it.

/// The built-in check names, for help and error messages.
pub const NAMES: &[&str] = &[
    "contains",
    "not_contains",
    "regex",
    "equals",
    "starts_with",
    "ends_with",
    "length",
    "word_count",
    "max_sentences",
    "count",
    "is_json",
    "json_path",
    "similarity",
    "map_levels",
    "command",
    "rubric_coverage",
    "rubric_independence",
    "rubric_weights",
    "rubric_threshold",
    "rubric_level_order",
    "unscorable",
    "tool_called",
    "tool_not_called",
    "tool_args",
    "tool_trajectory",
];

/// Resolves `module:function` and `module.function` references to a built-in name.
pub fn canonical_name(name: &str) -> String {
    let short = name.rsplit([':', '.']).next().unwrap_or(name).trim();
    let short = short.strip_prefix("check_").map_or(short, |s| s);
    match short {
        "criteria_coverage" | "coverage" => "rubric_coverage",
        "criteria_independence" | "independence" => "rubric_independence",
        "weight_distribution" => "rubric_weights",
        "threshold" => "rubric_threshold",
        "level_ordering" => "rubric_level_order",
        "level_map" | "levels" => "map_levels",
        "levenshtein" => "similarity",
        "json_valid" | "valid_json" => "is_json",
        other => other,
    }
    .to_owned()
}
