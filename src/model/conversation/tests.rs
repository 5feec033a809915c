//! Reading conversations in each shape, the transcript, and the errors that name a message.

use super::*;
use serde_json::json;

fn weather() -> Value {
    json!([
        {"role": "system", "content": "You help with weather."},
        {"role": "user", "content": [{"type": "text", "text": "Weather in"}, {"type": "text", "text": "Paris?"}]},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
            {"id": "c2", "type": "function", "function": {"name": "get_time", "arguments": "{not json"}}
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "18°C\nsunny"},
        {"role": "tool", "tool_call_id": "c2", "content": "14:00"},
        {"role": "assistant", "content": "It is 18°C and sunny."}
    ])
}

#[test]
fn reads_calls_results_and_parts() {
    let c = Conversation::from_value(&weather()).unwrap();
    assert_eq!(c.messages.len(), 6);
    assert_eq!(c.messages[1].content, "Weather in\nParis?");
    let calls: Vec<_> = c.tool_calls().collect();
    assert_eq!(calls[0].name, "get_weather");
    assert_eq!(calls[0].arguments, Some(json!({"city": "Paris"})));
    assert_eq!(calls[1].arguments_raw, "{not json");
    assert_eq!(calls[1].arguments, None);
    assert_eq!(c.turns(), 2);
    assert_eq!(c.assistant_turns(), vec![2, 5]);
    assert_eq!(c.last_assistant(), "It is 18°C and sunny.");
    // A turn is judged with the results of its own calls.
    assert_eq!(c.up_to(2).messages.len(), 5);
    let first = c.at_turn(0).unwrap();
    assert_eq!(first.judged_turn, Some((1, 2)));
    assert_eq!(first.calls_in_scope().len(), 2);
    let second = c.at_turn(1).unwrap();
    assert_eq!(second.messages.len(), 6);
    assert!(second.calls_in_scope().is_empty());
    assert_eq!(second.tool_calls().count(), 2);
    assert!(c.at_turn(2).is_none());
}

#[test]
fn the_transcript_sets_roles_apart_and_attaches_results_to_calls() {
    let c = Conversation::from_value(&weather()).unwrap();
    assert_eq!(
        c.transcript(),
        "[system]\nYou help with weather.\n\n[user]\nWeather in\nParis?\n\n[assistant]\n\
         → get_weather({\"city\": \"Paris\"})\n← 18°C\n  sunny\n→ get_time({not json)\n← 14:00\n\n\
         [assistant]\nIt is 18°C and sunny."
    );
    let orphan = Conversation::from_value(&json!([
        {"role": "tool", "tool_call_id": "zz", "name": "search", "content": "nothing"}
    ]))
    .unwrap();
    assert_eq!(orphan.transcript(), "[tool search]\nnothing");
}

#[test]
fn reads_inspect_calls() {
    let c = Conversation::from_value(&json!([
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "function": "bash", "arguments": {"cmd": "ls"}, "type": "function"}]},
        {"role": "tool", "tool_call_id": "a", "function": "bash", "content": "x.txt"}
    ]))
    .unwrap();
    let call = c.tool_calls().next().unwrap();
    assert_eq!(call.name, "bash");
    assert_eq!(call.arguments, Some(json!({"cmd": "ls"})));
    assert_eq!(
        c.transcript(),
        "[assistant]\n→ bash({\"cmd\":\"ls\"})\n← x.txt"
    );
}

#[test]
fn reads_agentv_calls_with_their_outputs() {
    let c = Conversation::from_value(&json!([
        {"role": "assistant", "content": "Looking.", "toolCalls": [
            {"tool": "search", "input": {"q": "rust"}, "output": {"hits": 2}},
            {"tool": "open", "input": "README.md", "id": "o1", "output": "text"}]}
    ]))
    .unwrap();
    let calls: Vec<_> = c.tool_calls().collect();
    assert_eq!(calls[0].arguments, Some(json!({"q": "rust"})));
    assert_eq!(calls[1].arguments_raw, "README.md");
    assert_eq!(
        c.transcript(),
        "[assistant]\nLooking.\n→ search({\"q\":\"rust\"})\n← {\"hits\":2}\n→ open(README.md)\n← text"
    );
    assert_eq!(c.messages.len(), 3);
}

#[test]
fn bad_shapes_name_the_message_and_field() {
    let err = |v: Value| Conversation::from_value(&v).unwrap_err().to_string();
    assert_eq!(
        err(json!([{"role": "user", "content": "hi"}, {"role": "robot"}])),
        "message 2: `role` is 'robot'; expected system, user, assistant or tool"
    );
    assert_eq!(
        err(json!([{"content": "hi"}])),
        "message 1: `role` is missing; give system, user, assistant or tool"
    );
    assert_eq!(
        err(json!([{"role": "assistant", "tool_calls": [{"id": "1", "function": {"name": 3}}]}])),
        "message 1: `tool_calls[0].function.name` must be text, found a number"
    );
    assert_eq!(
        err(
            json!([{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": [1]}}]}])
        ),
        "message 1: `tool_calls[0].function.arguments` must be a JSON string or an object, found a list"
    );
    assert_eq!(
        err(json!([{"role": "user", "content": 5}])),
        "message 1: `content` must be text or a list of parts, found a number"
    );
    assert_eq!(
        err(json!({"role": "user"})),
        "must be a list of messages {role, content}, found an object"
    );
}
