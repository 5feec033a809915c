//! Judge templates: syntax checks, the variables a template may use and rendering one with
//! an item, in the ground floor's safe environment (`core::template`).

pub use crate::core::template::{MAX_RENDERED_BYTES, TemplateError, environment};

/// Variables every template is rendered with (missing ones are empty, never undefined).
pub const VARIABLES: &[&str] = &[
    "submission",
    "output",
    "prompt",
    "input",
    "query",
    "reference",
    "context",
    "description",
    "metadata",
    "id",
    // agentic_v2_eval judge templates call the submission `completion` and the reference
    // `expected`.
    "completion",
    "expected",
    // A conversation's: its transcript, the last assistant message, how many assistant
    // turns it has and the names of the tools it called (empty for other items).
    "transcript",
    "last_assistant",
    "turns",
    "tool_calls",
];

/// Compiles a template; an error says what and on which line of the template.
pub fn check_syntax(source: &str) -> Result<(), TemplateError> {
    let env = environment();
    env.template_from_str(source)?;
    Ok(())
}

/// Names the template uses that rubricate does not provide.
pub fn unknown_variables(source: &str) -> Vec<String> {
    let env = environment();
    let Ok(t) = env.template_from_str(source) else {
        return Vec::new();
    };
    let mut names: Vec<String> = t
        .undeclared_variables(false)
        .into_iter()
        .filter(|v| !VARIABLES.contains(&v.as_str()))
        .collect();
    names.sort();
    names
}

/// Renders a judge template with an item: every name in [`VARIABLES`] is defined (missing
/// values are empty). Item text is passed as values, never as template source.
pub fn render(source: &str, item: &crate::model::Item) -> Result<String, TemplateError> {
    let env = environment();
    let template = env.template_from_str(source)?;
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let context = item
        .metadata
        .get("context")
        .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned))
        .unwrap_or_default();
    // A JSON-object submission also gives its fields as variables (dataknobs renders decode
    // prompts "with the target content as context": `{% for q in questions %}`); the
    // names above win over a field of the same name.
    let mut ctx: std::collections::BTreeMap<String, minijinja::Value> =
        std::collections::BTreeMap::new();
    if item.submission.trim_start().starts_with('{')
        && let Ok(serde_json::Value::Object(fields)) =
            serde_json::from_str::<serde_json::Value>(&item.submission)
    {
        for (k, v) in fields {
            ctx.insert(k, minijinja::Value::from(minijinja::value::Serde(&v)));
        }
    }
    let standard = [
        ("submission", item.submission.clone()),
        ("output", item.submission.clone()),
        ("completion", item.submission.clone()),
        ("prompt", text(&item.prompt)),
        ("input", text(&item.prompt)),
        ("query", text(&item.prompt)),
        ("reference", text(&item.reference)),
        ("expected", text(&item.reference)),
        ("context", context),
        ("description", text(&item.description)),
        ("id", item.id.clone()),
    ];
    for (k, v) in standard {
        ctx.insert(k.to_owned(), minijinja::Value::from(v));
    }
    for (k, v) in crate::model::conversation_fields(item.conversation.as_deref()) {
        ctx.insert(k, minijinja::Value::from(minijinja::value::Serde(&v)));
    }
    ctx.insert(
        "metadata".to_owned(),
        minijinja::Value::from(minijinja::value::Serde(&item.metadata)),
    );
    let out = template.render(ctx)?;
    if out.len() > MAX_RENDERED_BYTES {
        return Err(TemplateError::TooLong { bytes: out.len() });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_widths_and_huge_renders_are_clear_errors_not_aborts() {
        let item = crate::model::Item {
            id: "a".into(),
            submission: "x".into(),
            ..crate::model::Item::default()
        };
        let err = render(r#"{{ "%999999999999s" | format("a") }}"#, &item)
            .unwrap_err()
            .to_string();
        assert!(err.contains("pads to at most 10000"), "{err}");
        let err = render(r#"{{ "%.99999999999999999999999f" | format(1.5) }}"#, &item)
            .unwrap_err()
            .to_string();
        assert!(err.contains("pads to at most 10000"), "{err}");
        assert_eq!(
            render(r#"{{ "%5s|" | format("a") }}"#, &item).unwrap(),
            "    a|"
        );
        let err = render(r#"{{ "ab" * 50000000 }}"#, &item)
            .unwrap_err()
            .to_string();
        assert!(err.contains("renders 100.0 MB; at most 8 MiB"), "{err}");
    }

    #[test]
    fn a_json_submission_gives_its_fields() {
        let item = crate::model::Item {
            id: "q1".into(),
            submission: r#"{"questions": ["Why?", "How?"], "id": "shadowed"}"#.into(),
            prompt: Some("Write questions".into()),
            ..crate::model::Item::default()
        };
        let out = render(
            "{% for q in questions %}- {{ q }}\n{% endfor %}{{ id }} {{ prompt }}",
            &item,
        )
        .unwrap();
        assert_eq!(out, "- Why?\n- How?\nq1 Write questions");
    }

    #[test]
    fn a_conversation_gives_its_transcript_turns_and_tools() {
        let conversation = crate::model::Conversation::from_value(&serde_json::json!([
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "search", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "1", "content": "found"},
            {"role": "assistant", "content": "Found it."}
        ]))
        .unwrap();
        let item = crate::model::Item {
            submission: conversation.transcript(),
            conversation: Some(std::sync::Arc::new(conversation)),
            ..crate::model::Item::default()
        };
        let out = render(
            "{{ turns }} turns; tools: {{ tool_calls | join(', ') }}; last: {{ last_assistant }}\n{{ transcript }}",
            &item,
        )
        .unwrap();
        assert_eq!(
            out,
            "2 turns; tools: search; last: Found it.\n[user]\nHi\n\n[assistant]\n→ search({})\n← found\n\n[assistant]\nFound it."
        );
        let plain = crate::model::Item::default();
        assert_eq!(
            render(
                "[{{ turns }}|{{ transcript }}|{{ tool_calls | length }}]",
                &plain
            )
            .unwrap(),
            "[0||0]"
        );
    }

    #[test]
    fn syntax_and_variables() {
        assert!(
            check_syntax("Rate {{ submission }} {% if reference %}vs {{ reference }}{% endif %}")
                .is_ok()
        );
        let e = check_syntax("line one\n{% if x %}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("template line 2"), "{e}");
        assert_eq!(
            unknown_variables(
                "{{ submission }} {{ answr }} {% for q in questions %}{{ q }}{% endfor %}"
            ),
            vec!["answr", "questions"]
        );
    }
}
