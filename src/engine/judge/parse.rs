//! Reading a judge's reply: strict JSON first, then tolerant (a fenced block, the first
//! object in the text, a bare verdict word or number). What cannot be read says why, for
//! the repair request.

use serde_json::Value;

use crate::model::parse_verdict_text;
use crate::model::{Criterion, Kind, Verdict, VerdictError, find_option};

/// Why a judge's reply could not be read; the repair request quotes it back to the judge.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplyError {
    /// A verdict was expected and is missing.
    #[error("the JSON has no \"verdict\"")]
    NoVerdict,
    /// The reply is not JSON of the expected form.
    #[error("the reply is not JSON of the form {{\"reason\": …, \"verdict\": …}}")]
    NotJson,
    /// A score was expected and is missing.
    #[error("the JSON has no \"score\"")]
    NoScore,
    /// The score is not a number.
    #[error("the score {0} is not a number")]
    ScoreNotNumber(String),
    /// The verdict does not fit the criterion.
    #[error(transparent)]
    Verdict(#[from] VerdictError),
}

/// The most characters of an unreadable reply a repair request quotes back.
pub const QUOTE_CHARS: usize = 2_000;
/// The most characters of a problem shown in a repair request or a failure.
const PROBLEM_CHARS: usize = 300;

/// An unreadable reply as a repair request quotes it back: its first [`QUOTE_CHARS`]
/// characters, with a note when the rest was cut.
pub fn quote_reply(text: &str) -> String {
    match text.char_indices().nth(QUOTE_CHARS) {
        None => text.to_owned(),
        Some((cut, _)) => format!(
            "{}\n[… cut here: the reply went on for {} characters in all]",
            &text[..cut],
            text.chars().count()
        ),
    }
}

/// A problem as messages show it: one that quotes a huge value is cut short.
pub fn short(problem: &str) -> String {
    match problem.char_indices().nth(PROBLEM_CHARS) {
        None => problem.to_owned(),
        Some((cut, _)) => format!("{}…", &problem[..cut]),
    }
}

/// The judge's reason and verdict, already checked against the criterion.
pub fn read_reply(c: &Criterion, text: &str) -> Result<(String, Verdict), ReplyError> {
    if let Some(v) = json_object(text) {
        let reason = v
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_owned();
        // dataknobs' decode prompts ask for `level_id`.
        let Some(raw) = v.get("verdict").or_else(|| v.get("level_id")) else {
            return Err(ReplyError::NoVerdict);
        };
        return Ok((reason, verdict_of(c, raw)?));
    }
    // No JSON: a reply that is only a verdict (or ends with one on its own line).
    let last = text
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let word = last.trim_matches(|ch: char| ch == '"' || ch == '*' || ch == '`' || ch == '.');
    verdict_of(c, &Value::String(word.to_owned()))
        .map(|v| (String::new(), v))
        .map_err(|_| ReplyError::NotJson)
}

/// The whole text as JSON, else a fenced `json` code block, else the first balanced `{…}`.
fn json_object(text: &str) -> Option<Value> {
    let t = text.trim();
    if let Ok(v @ Value::Object(_)) = serde_json::from_str(t) {
        return Some(v);
    }
    if let Some(start) = t.find("```") {
        let rest = &t[start + 3..];
        let rest = rest.strip_prefix("json").unwrap_or(rest);
        if let Some(end) = rest.find("```")
            && let Ok(v @ Value::Object(_)) = serde_json::from_str(rest[..end].trim())
        {
            return Some(v);
        }
    }
    let start = t.find('{')?;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, ch) in t[start..].char_indices() {
        match ch {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '{' if !in_string => depth += 1,
            '}' if !in_string => {
                depth -= 1;
                if depth == 0 {
                    return serde_json::from_str(&t[start..=start + i]).ok();
                }
            }
            _ => {}
        }
    }
    None
}

/// A verdict value from a reply, checked against the criterion.
fn verdict_of(c: &Criterion, raw: &Value) -> Result<Verdict, VerdictError> {
    let verdict = match (raw, &c.kind) {
        (Value::Number(n), Kind::Scale(_)) => Verdict::Score(n.as_f64().unwrap_or(f64::NAN)),
        (Value::Bool(b), Kind::Binary) => {
            if *b {
                Verdict::Met
            } else {
                Verdict::Unmet
            }
        }
        (Value::String(s), Kind::Options { options, .. }) => {
            if Verdict::parse_binary(s) == Some(Verdict::CannotAssess) {
                Verdict::CannotAssess
            } else if let Some(o) = find_option(options, s) {
                Verdict::Choice(o.label.clone())
            } else {
                let labels: Vec<String> =
                    options.iter().map(|o| format!("\"{}\"", o.label)).collect();
                return Err(VerdictError::NotAnOption {
                    given: s.clone(),
                    expected: labels.join(", "),
                });
            }
        }
        (Value::String(s), _) => parse_verdict_text(c, s)?,
        (other, kind) => {
            return Err(VerdictError::WrongKind {
                verdict: other.to_string(),
                kind: kind.name(),
            });
        }
    };
    c.value_of(&verdict)?;
    Ok(verdict)
}

/// A judge's reason and verdict.
pub type Answer = (String, Verdict);

/// A one-shot reply: each criterion's `(reason, verdict)` where it could be read, and
/// what is wrong with the others (missing, or an unreadable verdict).
pub fn read_one_shot(
    criteria: &[&Criterion],
    text: &str,
) -> (Vec<Option<Answer>>, Vec<(usize, String)>) {
    let mut found = vec![None; criteria.len()];
    let mut problems = Vec::new();
    let Some(v) = json_object(text) else {
        for i in 0..criteria.len() {
            problems.push((i, "the reply is not a JSON object".to_owned()));
        }
        return (found, problems);
    };
    // Entries keyed by id, or (tolerated) a list of {"id", "reason", "verdict"}.
    let entries = v
        .get("criteria")
        .filter(|c| c.is_array() || c.is_object())
        .unwrap_or(&v);
    let lookup = |id: &str| -> Option<&Value> {
        match entries {
            Value::Object(map) => map.get(id).or_else(|| {
                map.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(id))
                    .map(|(_, v)| v)
            }),
            Value::Array(list) => list.iter().find(|e| {
                e.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|k| k.eq_ignore_ascii_case(id))
            }),
            _ => None,
        }
    };
    for (i, c) in criteria.iter().enumerate() {
        let Some(entry) = lookup(&c.id) else {
            problems.push((i, format!("criterion \"{}\" is missing", c.id)));
            continue;
        };
        let (reason, raw) = match entry {
            Value::Object(o) => (
                o.get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .trim()
                    .to_owned(),
                o.get("verdict"),
            ),
            bare => (String::new(), Some(bare)),
        };
        let Some(raw) = raw else {
            problems.push((i, format!("criterion \"{}\" has no \"verdict\"", c.id)));
            continue;
        };
        match verdict_of(c, raw) {
            Ok(verdict) => found[i] = Some((reason, verdict)),
            Err(e) => problems.push((i, format!("criterion \"{}\": {e}", c.id))),
        }
    }
    (found, problems)
}

/// A holistic reply: the reason and the score out of 100 (JSON, else a number at the end of
/// the last line).
pub fn read_holistic(text: &str) -> Result<(String, f64), ReplyError> {
    let (reason, raw) = if let Some(v) = json_object(text) {
        (
            v.get("reason")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim()
                .to_owned(),
            v.get("score").cloned().ok_or(ReplyError::NoScore)?,
        )
    } else {
        let last = text
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        let word = last.trim_matches(|ch: char| !ch.is_ascii_digit() && ch != '.');
        (String::new(), Value::String(word.to_owned()))
    };
    let score = match &raw {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().trim_end_matches('%').parse().ok(),
        _ => None,
    }
    .filter(|x: &f64| x.is_finite())
    .ok_or_else(|| ReplyError::ScoreNotNumber(raw.to_string()))?;
    // Out-of-range scores are clamped when aggregated (SCORING.md: 120 → 1.0).
    Ok((reason, score))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Level, Scale};

    #[test]
    fn strict_then_tolerant() {
        let c = Criterion::binary("a", "req", 1.0);
        assert_eq!(
            read_reply(&c, r#"{"reason": "ok", "verdict": "MET"}"#).unwrap(),
            ("ok".into(), Verdict::Met)
        );
        let fenced = "Sure.\n```json\n{\"reason\": \"no\", \"verdict\": \"UNMET\"}\n```";
        assert_eq!(read_reply(&c, fenced).unwrap().1, Verdict::Unmet);
        let inline = "Thinking... {\"reason\": \"a {brace} in text\", \"verdict\": \"met\"} done";
        assert_eq!(read_reply(&c, inline).unwrap().1, Verdict::Met);
        assert_eq!(
            read_reply(&c, "The answer is fine.\nMET").unwrap().1,
            Verdict::Met
        );
        assert!(read_reply(&c, "I think it is good").unwrap_err() == ReplyError::NotJson);
        assert!(read_reply(&c, r#"{"reason": "x", "verdict": "MAYBE"}"#).is_err());
    }

    #[test]
    fn one_shot_keeps_what_it_can_read() {
        let a = Criterion::binary("a", "req", 1.0);
        let b = Criterion::binary("b", "req", 1.0);
        let c = Criterion::binary("c", "req", 1.0);
        let (found, problems) = read_one_shot(
            &[&a, &b, &c],
            r#"{"a": {"reason": "yes", "verdict": "MET"}, "B": {"verdict": "MAYBE"}}"#,
        );
        assert_eq!(found[0], Some(("yes".into(), Verdict::Met)));
        assert_eq!(found[1], None);
        assert_eq!(problems.len(), 2);
        assert!(problems[0].1.contains("\"b\": \"MAYBE\""), "{problems:?}");
        assert_eq!(problems[1], (2, "criterion \"c\" is missing".into()));
        let (found, problems) = read_one_shot(
            &[&a],
            r#"{"criteria": [{"id": "a", "reason": "", "verdict": "UNMET"}]}"#,
        );
        assert!(problems.is_empty());
        assert_eq!(found[0].as_ref().unwrap().1, Verdict::Unmet);
    }

    #[test]
    fn a_long_reply_is_quoted_in_part_and_a_long_problem_cut() {
        assert_eq!(quote_reply("short"), "short");
        let long = "é".repeat(10_000);
        let quoted = quote_reply(&long);
        assert!(quoted.starts_with(&"é".repeat(QUOTE_CHARS)));
        assert!(
            quoted.ends_with("[… cut here: the reply went on for 10000 characters in all]"),
            "{quoted}"
        );
        assert!(quoted.chars().count() < QUOTE_CHARS + 100);
        let c = Criterion::binary("a", "req", 1.0);
        let problem =
            read_reply(&c, &format!("{{\"verdict\": \"{}\"}}", "x".repeat(5_000))).unwrap_err();
        assert!(short(&problem.to_string()).chars().count() <= PROBLEM_CHARS + 1);
    }

    #[test]
    fn holistic_scores() {
        assert_eq!(
            read_holistic(r#"{"reason": "ok", "score": 85}"#).unwrap(),
            ("ok".into(), 85.0)
        );
        assert_eq!(read_holistic("Mostly right.\nScore: 70").unwrap().1, 70.0);
        assert_eq!(
            read_holistic(r#"{"reason": "", "score": 120}"#).unwrap().1,
            120.0
        );
        assert!(read_holistic("great").is_err());
    }

    #[test]
    fn graded_kinds() {
        let mut s = Criterion::binary("s", "req", 1.0);
        s.kind = Kind::Scale(Scale {
            min: 1.0,
            max: 5.0,
            anchors: Vec::new(),
        });
        assert_eq!(
            read_reply(&s, r#"{"reason": "", "verdict": 4}"#).unwrap().1,
            Verdict::Score(4.0)
        );
        assert_eq!(
            read_reply(&s, "Step by step...\n4").unwrap().1,
            Verdict::Score(4.0)
        );
        let mut l = Criterion::binary("l", "req", 1.0);
        l.kind = Kind::Levels(vec![
            Level {
                id: "poor".into(),
                label: "Poor".into(),
                description: String::new(),
                score: 0.0,
                indicators: vec![],
            },
            Level {
                id: "good".into(),
                label: "Good".into(),
                description: String::new(),
                score: 1.0,
                indicators: vec![],
            },
        ]);
        assert_eq!(
            read_reply(&l, r#"{"reason": "", "verdict": "Good"}"#)
                .unwrap()
                .1,
            Verdict::Level("good".into())
        );
    }
}
