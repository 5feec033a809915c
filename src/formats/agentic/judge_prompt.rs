//! `agentic_v2_eval`'s evaluator rubrics, `{judge_prompt, patterns?}`: one prompt that asks
//! a judge for every dimension at once, its dimensions written inside it (`"clarity":
//! <0-10>` in the reply schema, `- clarity: …` or `**POI** - Phase Ordering Integrity: …
//! (HARD GATE ≥4)` in the text). Scored as its evaluators score them:
//! - `prompt_standard.yaml` (`evaluators/standard.py`): each dimension 0–10, weighing the
//!   same, a missing one 0; passed when their mean is ≥ 7 (0.7 here);
//! - `prompt_pattern.yaml` (`evaluators/pattern.py`): per pattern (`patterns: {react: …}`),
//!   the universal 0–5 dimensions and the pattern's own are summed; robustness (0–1) is
//!   not; passed when every hard gate holds (POI, PC, CA ≥ 4, PR ≥ 0.75) — one rubric per
//!   pattern.

use std::sync::Arc;

use crate::core::diag::{Diagnostic, Diagnostics};
use crate::formats::node::Node;
use crate::formats::source::SourceMap;
use crate::model::{AbstainPolicy, Criterion, Kind, Rubric, Scale, Scoring, slugify};

/// One dimension named in a judge prompt.
#[derive(Debug, Clone, PartialEq)]
struct Dimension {
    key: String,
    min: f64,
    max: f64,
    about: String,
    gate: Option<f64>,
}

/// The rubrics of a file, each with where its parts are written.
pub type Rubrics = Vec<(Rubric, SourceMap)>;

/// Reads an evaluator rubric: one rubric, or one per pattern.
pub fn read(
    file: &str,
    root: &Node,
    stem: &str,
) -> Result<(Rubrics, Vec<Diagnostic>), Diagnostics> {
    let err = |n: &Node, m: String| Diagnostics::one(Diagnostic::at(file, n.pos, m));
    let Some(prompt_node) = root.get("judge_prompt") else {
        return Err(err(
            root,
            "an agentic evaluator rubric needs `judge_prompt`".into(),
        ));
    };
    let Some(prompt) = prompt_node.as_str() else {
        return Err(err(prompt_node, "`judge_prompt` must be text".into()));
    };
    let universal = dimensions(prompt, prompt);
    if universal.is_empty() {
        return Err(err(
            prompt_node,
            "the judge_prompt names no dimension (`\"name\": <0-10>` in its reply schema)".into(),
        ));
    }
    let doc = Arc::new(root.clone());
    let notes = vec![Diagnostic::at(
        file,
        prompt_node.pos,
        "the judge_prompt asks for every dimension in one call; rubricate judges each with its own prompt (`--strategy one-shot` asks in one call too)",
    )];
    let map = |n: usize| SourceMap::new(Arc::clone(&doc), vec!["judge_prompt".to_owned(); n]);
    let Some(patterns) = root.get("patterns").and_then(Node::as_map) else {
        // standard.py: the mean of the dimensions, passed at 7 of 10.
        let criteria: Vec<Criterion> = universal.iter().map(|d| criterion(d, 1.0)).collect();
        let mut r = rubric(stem, stem, criteria);
        r.pass_threshold = 0.7;
        let n = r.criteria.len();
        return Ok((vec![(r, map(n))], notes));
    };
    let mut out = Vec::new();
    for (name, p) in patterns {
        let fields = p.get("score_fields").and_then(Node::as_str).unwrap_or("");
        let about = p.get("instructions").and_then(Node::as_str).unwrap_or("");
        let own = dimensions(fields, about);
        // pattern.py sums the 0–5 dimensions; a 0–1 one (robustness) only gates.
        let criteria: Vec<Criterion> = universal
            .iter()
            .chain(&own)
            .map(|d| criterion(d, if d.max <= 1.0 { 0.0 } else { 1.0 }))
            .collect();
        let mut r = rubric(
            &format!("{stem}-{}", name.text),
            &format!("{stem} ({})", name.text),
            criteria,
        );
        // Passed on the hard gates alone.
        r.pass_threshold = 0.0;
        let n = r.criteria.len();
        out.push((r, map(n)));
    }
    Ok((out, notes))
}

fn rubric(id: &str, name: &str, criteria: Vec<Criterion>) -> Rubric {
    let mut r = Rubric::new(slugify(id), criteria);
    name.clone_into(&mut r.name);
    r.scoring = Scoring {
        // A dimension the judge leaves out counts 0 (`.get(dim, 0)`).
        abstain: AbstainPolicy::Zero,
        ..Scoring::default()
    };
    r.metadata
        .insert("format".into(), serde_json::json!("agentic_v2_eval"));
    r
}

fn criterion(d: &Dimension, weight: f64) -> Criterion {
    let mut c = Criterion::binary(slugify(&d.key), d.about.clone(), weight);
    c.name.clone_from(&d.key);
    c.kind = Kind::Scale(Scale {
        min: d.min,
        max: d.max,
        anchors: Vec::new(),
    });
    if let Some(g) = d.gate {
        c.required = true;
        c.min_score = Some(((g - d.min) / (d.max - d.min)).clamp(0.0, 1.0));
    }
    c
}

/// The dimensions a reply schema names (`"KEY": <lo-hi>`, `confidence` aside), described by
/// the line of `about` that names them, with the hard gate that line states.
fn dimensions(schema: &str, about: &str) -> Vec<Dimension> {
    let mut out: Vec<Dimension> = Vec::new();
    let mut rest = schema;
    while let Some(q) = rest.find('"') {
        let after = &rest[q + 1..];
        let Some(end) = after.find('"') else { break };
        let key = &after[..end];
        let tail = after[end + 1..].trim_start();
        rest = &after[end + 1..];
        let Some(range) = tail
            .strip_prefix(':')
            .map(str::trim_start)
            .and_then(|t| t.strip_prefix('<'))
        else {
            continue;
        };
        let Some((lo, hi)) = range.split_once('>').and_then(|(r, _)| r.split_once('-')) else {
            continue;
        };
        let (Ok(min), Ok(max)) = (lo.trim().parse::<f64>(), hi.trim().parse::<f64>()) else {
            continue;
        };
        if key.eq_ignore_ascii_case("confidence") || max <= min || out.iter().any(|d| d.key == key)
        {
            continue;
        }
        let (text, gate) = describe(about, key);
        out.push(Dimension {
            key: key.to_owned(),
            min,
            max,
            about: text.unwrap_or_else(|| key.to_owned()),
            gate,
        });
    }
    out
}

/// The line naming `key` (`- key: text`, `**KEY** - Name: text`, `- **KEY** (Name): text`)
/// and the gate it states (`HARD GATE ≥4`).
fn describe(about: &str, key: &str) -> (Option<String>, Option<f64>) {
    for line in about.lines() {
        let mut l = line.trim().trim_start_matches(['-', '*', ' ']);
        // `B. **POI** - …`: a lettered list.
        if let Some((head, tail)) = l.split_once(". ")
            && head.len() == 1
            && head.chars().all(|c| c.is_ascii_alphabetic())
        {
            l = tail;
        }
        let bare = l.replace("**", "");
        let bare = bare.trim_start_matches(['-', ' ']);
        let Some(rest) = bare.strip_prefix(key) else {
            continue;
        };
        if !rest.starts_with([':', ' ', '-']) {
            continue;
        }
        let text = rest.trim_start_matches([':', ' ', '-']).trim().to_owned();
        let gate = text
            .find("HARD GATE")
            .map(|i| &text[i + "HARD GATE".len()..])
            .and_then(|g| {
                let g = g.trim_start_matches([' ', '≥', '>', '=']);
                let n: String = g
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                n.parse::<f64>().ok()
            });
        return (Some(text), gate);
    }
    (None, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimensions_gates_and_descriptions_from_the_prompt() {
        let prompt = "Evaluate:\n  B. **POI** - Phase Ordering Integrity: Correct order? (HARD GATE ≥4)\n  F. **PR** - Pattern Robustness: % of runs (HARD GATE ≥0.75)\n- clarity: unambiguous\n{{\n  \"scores\": {{\n    \"clarity\": <0-10>,\n    \"POI\": <0-5>,\n    \"PR\": <0.0-1.0>\n  }},\n  \"confidence\": <0.0-1.0>\n}}";
        let d = dimensions(prompt, prompt);
        let keys: Vec<&str> = d.iter().map(|x| x.key.as_str()).collect();
        assert_eq!(keys, ["clarity", "POI", "PR"]);
        assert_eq!(d[0].about, "unambiguous");
        assert_eq!((d[0].min, d[0].max, d[0].gate), (0.0, 10.0, None));
        assert_eq!(
            d[1].about,
            "Phase Ordering Integrity: Correct order? (HARD GATE ≥4)"
        );
        assert_eq!(d[1].gate, Some(4.0));
        assert_eq!((d[2].max, d[2].gate), (1.0, Some(0.75)));
    }
}
