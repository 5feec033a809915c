use super::prompts::{safe_prompt_id, stable_id};
use super::scenarios::wildcard;
use super::*;

#[test]
fn wildcards_match_file_names() {
    assert!(wildcard("*.yaml", "french.yaml"));
    assert!(!wildcard("*.yaml", "french.yml"));
    assert!(wildcard("f?ench.*", "french.yaml"));
    assert!(wildcard("*", "x"));
}

#[test]
fn prompt_ids_are_agentvs() {
    assert_eq!(
        safe_prompt_id("./prompts/support-chat.json"),
        ".-prompts-support-chat.json"
    );
    assert_eq!(safe_prompt_id("terse"), "terse");
    // JSON.stringify("{{ input }}") hashed with SHA-256.
    let id = stable_id(&Value::String("{{ input }}".into()));
    assert_eq!(id.len(), 12);
}

#[test]
fn a_whole_variable_keeps_its_type() {
    assert_eq!(
        whole_var(" {{ vars.expected.answer }} "),
        Some("vars.expected.answer")
    );
    assert_eq!(whole_var("Hello {{ x }}"), None);
    let vars: Map<String, Value> =
        serde_json::from_str(r#"{"expected": {"answer": "Paris"}}"#).unwrap();
    assert_eq!(
        lookup(&vars, "vars.expected.answer"),
        Some(Value::from("Paris"))
    );
}
