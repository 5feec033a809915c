//! agentv assertions as criteria and graders: an `assert` list (its strings one
//! `llm-rubric` grader, `assert-set` groups, each deterministic assertion a grader of its
//! own), the checks they become, and the graders the criteria are scored in.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::entry::{read_entry, settle_gates};
use super::walk::{Found, GraderSpec, Walk, entries};
use crate::formats::fields::Ctx;
use crate::formats::node::{Node, NodeValue};
use crate::model::{CheckSpec, Criterion, Grader, Method, slugify};

/// The current generation's `assert` list, `assert-set` groups included. The list's
/// strings are one `llm-rubric` grader weighing as many as there are strings (agentv
/// gathers them so); every other assertion is a grader of its own, and an `assert-set`
/// one grader over its members (`set`).
pub(super) fn asserts<'n>(
    w: &mut Walk<'_>,
    list: &'n Node,
    path: &str,
    section: Option<&str>,
    set: Option<&GraderSpec>,
    out: &mut Vec<Found<'n>>,
) {
    let Some(items) = list.as_seq() else {
        w.ctx.wrong_type(list, "`assert`", "a list of assertions");
        return;
    };
    let strings = items
        .iter()
        .filter(|a| a.as_str().is_some_and(|t| !t.trim().is_empty()))
        .count();
    let gathered = set.cloned().unwrap_or_else(|| {
        GraderSpec::plain(format!("{path}#strings"), "llm-rubric", strings as f64)
    });
    for (i, a) in items.iter().enumerate() {
        let here = format!("{path}[{i}]");
        if let Some(text) = a.as_str() {
            if text.trim().is_empty() {
                // agentv skips an empty string here, with a warning (and numbers the rest).
                w.note(
                    a,
                    "assert:empty-string",
                    "an empty string in an `assert` list is skipped, as agentv skips it".into(),
                );
            } else {
                entries(w, Some(a), &here, section, &gathered, out);
            }
            continue;
        }
        let ty = a.get("type").and_then(Node::as_str).unwrap_or("");
        let metric = a.get("metric").and_then(Node::as_str).or(section);
        let grader = set
            .cloned()
            .unwrap_or_else(|| GraderSpec::of(&mut w.ctx, a, here.clone(), ty));
        match ty {
            "llm-rubric" | "rubrics" | "rubric" => {
                let list = a.get("value").or_else(|| a.get("criteria"));
                if list.is_none() {
                    // A grader that is its own prompt (`prompt: file://grader.md`) has no
                    // criteria to grade here.
                    w.note(a, "assert:llm-rubric-prompt", format!(
                        "agentv '{ty}' assertion without criteria (its own grader `prompt`) is not graded by rubricate; left out of the test's mean"
                    ));
                }
                entries(w, list, &format!("{here}.value"), metric, &grader, out);
            }
            "assert-set" => {
                if a.get("threshold").is_some() {
                    w.note(a, "assert-set-threshold", "agentv assert-set `threshold` decides only the set's own verdict, which agentv's test verdict does not read; not kept".into());
                }
                if let Some(inner) = a.get("assert") {
                    asserts(
                        w,
                        inner,
                        &format!("{here}.assert"),
                        metric,
                        Some(&grader),
                        out,
                    );
                }
            }
            _ => {
                // A trajectory grader agentv skips is noted by its reader.
                let check = if super::tools::is_trajectory(ty) {
                    super::tools::trajectory(w, a, out.len() + 1)
                } else {
                    let c = deterministic(w, a, ty, out.len() + 1);
                    if c.is_none() {
                        w.note(a, &format!("assert:{ty}"), format!(
                            "agentv assertion type '{ty}' is not run by rubricate (it needs agentv's runtime); the test's score is the mean of the graders rubricate runs"
                        ));
                    }
                    c
                };
                if let Some(mut c) = check {
                    // Within a set, a member weighs its own weight in the set's mean.
                    if set.is_some() {
                        c.weight = a
                            .get("weight")
                            .and_then(Node::as_f64)
                            .filter(|x| x.is_finite() && *x >= 0.0)
                            .unwrap_or(1.0);
                    }
                    out.push(Found {
                        node: a,
                        path: here,
                        section: metric.map(str::to_owned),
                        check: Some(c),
                        grader,
                    });
                }
            }
        }
    }
}

/// Deterministic agentv assertions that map onto built-in checks: a criterion of weight 1
/// scoring 1 or 0, the one criterion of its grader (agentv averages it with the others).
/// `negate: true` (agentv flips the grader's verdict) turns `contains` into `not-contains`
/// and back, and a regex into its negation; an assertion rubricate cannot negate is left
/// out with a note, never graded the wrong way round.
pub(super) fn deterministic(
    w: &mut Walk<'_>,
    a: &Node,
    ty: &str,
    number: usize,
) -> Option<Criterion> {
    let value = a.get("value");
    let text = value.and_then(Node::as_str).map(str::to_owned);
    let negate = a
        .get("negate")
        .is_some_and(|n| matches!(n.value, NodeValue::Bool(true)));
    if LIST_TYPES.contains(&ty) {
        return contains_list(w, a, ty, negate, number);
    }
    let ty = match (ty, negate) {
        ("contains", true) => "not-contains",
        ("not-contains", true) => "contains",
        ("icontains", true) => "not-icontains",
        (t, _) => t,
    };
    let (name, mut args, says) = match (ty, text) {
        ("contains", Some(t)) => (
            "contains",
            json!({"text": t, "case_sensitive": true}),
            format!("Contains \"{t}\""),
        ),
        ("icontains", Some(t)) => (
            "contains",
            json!({"text": t}),
            format!("Contains \"{t}\" (any case)"),
        ),
        ("not-contains", Some(t)) => (
            "not_contains",
            json!({"text": t, "case_sensitive": true}),
            format!("Does not contain \"{t}\""),
        ),
        ("not-icontains", Some(t)) => (
            "not_contains",
            json!({"text": t}),
            format!("Does not contain \"{t}\" (any case)"),
        ),
        ("equals", Some(t)) => ("equals", json!({"value": t}), format!("Equals \"{t}\"")),
        ("regex", Some(t)) => ("regex", json!({"pattern": t}), format!("Matches /{t}/")),
        ("starts-with", Some(t)) => (
            "starts_with",
            json!({"text": t}),
            format!("Starts with \"{t}\""),
        ),
        ("ends-with", Some(t)) => (
            "ends_with",
            json!({"text": t}),
            format!("Ends with \"{t}\""),
        ),
        ("is-json", _) => ("is_json", json!({}), "Is valid JSON".to_owned()),
        _ => return None,
    };
    let negated = matches!(ty, "not-contains" | "not-icontains" | "contains") && negate;
    if negate && !negated {
        if name == "regex" {
            args["negate"] = json!(true);
        } else {
            // The same kind as the caller's note for what is not run, so it says this once.
            w.note(
                a,
                &format!("assert:{ty}"),
                format!("agentv '{ty}' assertion with `negate: true` is not graded by rubricate (it cannot negate it); left out"),
            );
            return None;
        }
    }
    let says = if name == "regex" && negate {
        says.replace("Matches", "Does not match")
    } else {
        says
    };
    if value.is_some_and(|v| v.as_str().is_none()) && ty != "is-json" {
        w.ctx
            .wrong_type(a, &format!("the value of a '{ty}' assertion"), "a string");
    }
    let mut c = Criterion::binary(format!("{}-{number}", name.replace('_', "-")), says, 1.0);
    let Value::Object(args) = args else {
        return None;
    };
    c.method = Method::Check(CheckSpec {
        name: name.to_owned(),
        args,
    });
    Some(c)
}

/// agentv's assertions that look for a list of texts.
const LIST_TYPES: &[&str] = &[
    "contains-any",
    "contains-all",
    "icontains-any",
    "icontains-all",
];

/// `contains-any`, `contains-all` and their any-case `icontains-` forms (a list of texts,
/// as agentv's runContainsAnyAssertion and the like: plain substrings, any case by
/// lowering both), negated as agentv negates them: none of them, or not all. `None` when
/// the value is not a list of text.
pub(super) fn contains_list(
    w: &mut Walk<'_>,
    a: &Node,
    ty: &str,
    negate: bool,
    number: usize,
) -> Option<Criterion> {
    let any = ty.ends_with("-any");
    let any_case = ty.starts_with('i');
    let texts: Option<Vec<String>> = a.get("value").and_then(Node::as_seq).and_then(|items| {
        items
            .iter()
            .map(|n| n.as_str().map(str::to_owned))
            .collect()
    });
    let Some(texts) = texts.filter(|t| !t.is_empty()) else {
        w.ctx.wrong_type(
            a,
            &format!("the value of a '{ty}' assertion"),
            "a list of text",
        );
        return None;
    };
    let quoted: Vec<String> = texts.iter().map(|t| format!("\"{t}\"")).collect();
    let how = match (any, negate) {
        (true, false) => "Contains any of",
        (false, false) => "Contains all of",
        (true, true) => "Contains none of",
        (false, true) => "Does not contain all of",
    };
    let case = if any_case { " (any case)" } else { "" };
    let name = if negate { "not_contains" } else { "contains" };
    let mut args = serde_json::Map::new();
    args.insert((if any { "any" } else { "all" }).into(), json!(texts));
    args.insert("case_sensitive".into(), json!(!any_case));
    let mut c = Criterion::binary(
        format!("{}-{number}", name.replace('_', "-")),
        format!("{how} {}{case}", quoted.join(", ")),
        1.0,
    );
    c.method = Method::Check(CheckSpec {
        name: name.to_owned(),
        args,
    });
    Some(c)
}

/// Reads found entries into criteria, each with its grader. An entry without an id is
/// `rubric-N`, N its place in its own grader's list, as agentv numbers it (the `assert`
/// list's strings among themselves, whatever assertions stand between them); a case's
/// `rubrics` joining the file's rubric grader are numbered after its `offset` entries.
pub(super) fn criteria_of(
    ctx: &mut Ctx<'_>,
    found: &[Found<'_>],
    offset: usize,
    outcome: Option<&str>,
) -> Vec<(Criterion, GraderSpec)> {
    let mut out = Vec::new();
    let mut placed: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for f in found {
        let start = if f.grader.key == super::walk::KEY_SHARED {
            offset
        } else {
            0
        };
        let seen = placed.entry(f.grader.key.as_str()).or_insert(start);
        *seen += 1;
        let number = *seen;
        let c = match &f.check {
            Some(c) => Some(c.clone()),
            None => read_entry(ctx, f.node, number, outcome),
        };
        if let Some(mut c) = c {
            c.section.clone_from(&f.section);
            out.push((c, f.grader.clone()));
        }
    }
    out
}

/// A case's criteria and the graders they form (in the order graders first appear),
/// gates settled per grader as agentv's rubric grader settles them.
pub(super) fn with_graders(
    mut found: Vec<(Criterion, GraderSpec)>,
) -> (Vec<Criterion>, Vec<Grader>) {
    // The suite's graders are numbered apart from the case's: a second `contains-1`
    // takes its place's number (or the next free one).
    let mut seen = BTreeSet::new();
    for (i, (c, _)) in found.iter_mut().enumerate() {
        if seen.contains(&c.id) {
            let base =
                c.id.rsplit_once('-')
                    .filter(|(_, n)| n.parse::<usize>().is_ok())
                    .map_or_else(|| c.id.clone(), |(b, _)| b.to_owned());
            let mut k = i + 1;
            while seen.contains(&format!("{base}-{k}")) {
                k += 1;
            }
            c.id = format!("{base}-{k}");
        }
        seen.insert(c.id.clone());
    }
    let mut keys: Vec<String> = Vec::new();
    let mut graders: Vec<Grader> = Vec::new();
    let mut groups: Vec<Vec<Criterion>> = Vec::new();
    let mut order: Vec<(usize, usize)> = Vec::new();
    for (c, spec) in found {
        let g = if let Some(g) = keys.iter().position(|k| *k == spec.key) {
            g
        } else {
            keys.push(spec.key.clone());
            let taken = |id: &str| graders.iter().any(|g: &Grader| g.id == id);
            let mut id = slugify(&spec.name);
            let mut n = 2;
            while id.is_empty() || taken(&id) {
                id = format!("{}-{n}", slugify(&spec.name));
                n += 1;
            }
            graders.push(Grader {
                id,
                weight: spec.weight,
                required: spec.required,
                min_score: spec.min_score,
                criteria: Vec::new(),
            });
            groups.push(Vec::new());
            graders.len() - 1
        };
        order.push((g, groups[g].len()));
        graders[g].criteria.push(c.id.clone());
        groups[g].push(c);
    }
    for group in &mut groups {
        settle_gates(group);
    }
    let criteria = order
        .into_iter()
        .map(|(g, i)| groups[g][i].clone())
        .collect();
    (criteria, graders)
}
