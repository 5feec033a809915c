//! Pair items: two or more candidate answers to compare, written as `a` and `b` or as
//! `candidates: [{id, submission}]`.

use serde_json::{Map, Value};

use super::fields::{SUBMISSION_KEYS, kind};
use crate::model::Candidate;
use crate::model::pair::MAX_CANDIDATES;

/// Takes an item's candidates out of `obj`: `Ok(None)` for an item of one answer. An item
/// with a `submission` keeps any `a`/`b` fields as metadata (they meant something else).
pub fn take_candidates(
    obj: &mut Map<String, Value>,
    id: &str,
) -> Result<Option<Vec<Candidate>>, String> {
    let has_submission = SUBMISSION_KEYS
        .iter()
        .any(|k| obj.get(*k).is_some_and(|v| !v.is_null()));
    if let Some(list) = obj.remove("candidates").filter(|v| !v.is_null()) {
        if has_submission {
            return Err(format!(
                "item '{id}' has both a submission and `candidates`; give one answer or several, not both"
            ));
        }
        return from_list(list, id).map(Some);
    }
    if has_submission {
        return Ok(None);
    }
    match (obj.remove("a"), obj.remove("b")) {
        (None, None) => Ok(None),
        (Some(a), Some(b)) => Ok(Some(vec![
            Candidate {
                id: "a".into(),
                submission: answer(a, id, "a")?,
            },
            Candidate {
                id: "b".into(),
                submission: answer(b, id, "b")?,
            },
        ])),
        (Some(_), None) => Err(format!(
            "item '{id}' has an answer `a` but no `b`; a pair item needs both (or a `submission`)"
        )),
        (None, Some(_)) => Err(format!(
            "item '{id}' has an answer `b` but no `a`; a pair item needs both (or a `submission`)"
        )),
    }
}

fn from_list(list: Value, id: &str) -> Result<Vec<Candidate>, String> {
    let Value::Array(entries) = list else {
        return Err(format!(
            "item '{id}': `candidates` must be a list of {{id, submission}}, found {}",
            kind(&list)
        ));
    };
    if !(2..=MAX_CANDIDATES).contains(&entries.len()) {
        return Err(format!(
            "item '{id}': `candidates` has {} entries; give between 2 and {MAX_CANDIDATES} (every pair is judged in both orders)",
            entries.len()
        ));
    }
    let mut out: Vec<Candidate> = Vec::with_capacity(entries.len());
    for (n, entry) in entries.into_iter().enumerate() {
        let field = format!("candidates[{n}]");
        let Value::Object(mut m) = entry else {
            return Err(format!(
                "item '{id}': `{field}` must be an object {{id, submission}}, found {}",
                kind(&entry)
            ));
        };
        let cid = match m.remove("id") {
            Some(Value::String(s)) if !s.trim().is_empty() => s,
            Some(Value::Number(x)) => x.to_string(),
            Some(other) => {
                return Err(format!(
                    "item '{id}': `{field}.id` must be a non-empty text, found {}",
                    kind(&other)
                ));
            }
            None => {
                return Err(format!(
                    "item '{id}': `{field}` has no `id`; name each candidate (the system that wrote it)"
                ));
            }
        };
        if out.iter().any(|c| c.id == cid) {
            return Err(format!(
                "item '{id}': `{field}.id` '{cid}' is given twice; candidates' ids must differ"
            ));
        }
        let text = SUBMISSION_KEYS
            .iter()
            .find_map(|k| m.remove(*k).filter(|v| !v.is_null()))
            .ok_or_else(|| format!("item '{id}': `{field}` has no `submission`"))?;
        out.push(Candidate {
            submission: answer(text, id, &format!("{field}.submission"))?,
            id: cid,
        });
    }
    Ok(out)
}

/// An answer as text; structured answers are compared as their JSON text.
fn answer(v: Value, id: &str, field: &str) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s),
        Value::Null => Err(format!("item '{id}': `{field}` is empty")),
        other => Ok(other.to_string()),
    }
}

/// A pair item's answers one after another, for people reading the item.
pub fn shown(candidates: &[Candidate]) -> String {
    candidates
        .iter()
        .map(|c| format!("[{}]\n{}", c.id, c.submission))
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(v: Value) -> Result<Option<Vec<Candidate>>, String> {
        let Value::Object(mut m) = v else {
            unreachable!()
        };
        take_candidates(&mut m, "q1")
    }

    #[test]
    fn a_and_b_make_a_pair_unless_there_is_a_submission() {
        let pair = take(serde_json::json!({"a": "one", "b": "two"}))
            .unwrap()
            .unwrap();
        assert_eq!(pair[1].id, "b");
        assert_eq!(pair[1].submission, "two");
        assert_eq!(
            take(serde_json::json!({"submission": "x", "a": 1, "b": 2})).unwrap(),
            None
        );
        let e = take(serde_json::json!({"a": "one"})).unwrap_err();
        assert!(e.contains("item 'q1' has an answer `a` but no `b`"), "{e}");
    }

    #[test]
    fn bad_candidate_lists_name_the_entry_and_field() {
        let e =
            take(serde_json::json!({"candidates": [{"id": "x", "submission": "1"}]})).unwrap_err();
        assert!(e.contains("`candidates` has 1 entries"), "{e}");
        let e = take(serde_json::json!({"candidates": [
            {"id": "x", "submission": "1"}, {"id": "x", "submission": "2"}]}))
        .unwrap_err();
        assert!(e.contains("`candidates[1].id` 'x' is given twice"), "{e}");
        let e = take(serde_json::json!({"candidates": [
            {"id": "x", "submission": "1"}, {"id": "y"}]}))
        .unwrap_err();
        assert!(e.contains("`candidates[1]` has no `submission`"), "{e}");
        let e = take(serde_json::json!({"submission": "s", "candidates": []})).unwrap_err();
        assert!(e.contains("both a submission and `candidates`"), "{e}");
    }
}
