//! The built-in rubric library (`rubrics/` at the repository root), embedded at build time
//! and loadable by bare name: `--rubric code`.

/// Names of the built-in rubrics, in the order `rubricate` lists them.
pub const NAMES: &[&str] = &[
    "default",
    "code",
    "agent",
    "pattern",
    "coding_standards",
    "quality",
    "prompt_pattern",
    "prompt_standard",
    "meta",
];

/// The YAML text of a built-in rubric.
pub fn builtin(name: &str) -> Option<&'static str> {
    Some(match name {
        "default" => include_str!("../../rubrics/default.yaml"),
        "code" => include_str!("../../rubrics/code.yaml"),
        "agent" => include_str!("../../rubrics/agent.yaml"),
        "pattern" => include_str!("../../rubrics/pattern.yaml"),
        "coding_standards" => include_str!("../../rubrics/coding_standards.yaml"),
        "quality" => include_str!("../../rubrics/quality.yaml"),
        "prompt_pattern" => include_str!("../../rubrics/prompt_pattern.yaml"),
        "prompt_standard" => include_str!("../../rubrics/prompt_standard.yaml"),
        "meta" => include_str!("../../rubrics/meta.yaml"),
        _ => return None,
    })
}
