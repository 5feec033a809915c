//! `agentic_v2_eval` judge rubrics: `definitions: {dimension: {system_prompt,
//! prompt_template, choices_type}}`. Each dimension becomes a 1–5 scale criterion judged
//! with its own template (minijinja renders it with the item: `{{input}}`,
//! `{{completion}}`, `{{context}}`, `{{expected}}`). Dimensions weigh the same, so the
//! score is their mean, each mapped (x − 1)/4.

use serde_json::{Map, Value, json};

use crate::core::diag::{Diagnostic, Diagnostics};
use crate::formats::fields::{Ctx, Fields};
use crate::formats::node::{Node, NodeValue};
use crate::formats::source::{SourceMap, read_validated};
use crate::model::{Anchor, Criterion, JudgeMethod, Kind, Method, Rubric, Scale, slugify};

const DIMENSION_FIELDS: &[&str] = &["system_prompt", "prompt_template", "choices_type"];
const ROOT_FIELDS: &[&str] = &["definitions", "name", "description", "version", "metadata"];

/// Reads a judge rubric; `stem` (the file name) becomes its id.
pub fn read(
    file: &str,
    root: &Node,
    stem: &str,
) -> Result<(Rubric, SourceMap, Vec<Diagnostic>), Diagnostics> {
    let mut notes = Vec::new();
    let (rubric, map) = read_validated(file, root, |ctx, paths| {
        read_root(ctx, root, stem, paths, &mut notes)
    })?;
    Ok((rubric, map, notes))
}

fn read_root(
    ctx: &mut Ctx<'_>,
    root: &Node,
    stem: &str,
    paths: &mut Vec<String>,
    notes: &mut Vec<Diagnostic>,
) -> Option<Rubric> {
    let mut f = Fields::of(ctx, root, "an agentic judge rubric")?;
    let defs = f.take("definitions");
    let name = f.string(ctx, "name");
    let description = f.string(ctx, "description");
    let version = f.string(ctx, "version");
    let metadata = f.take("metadata").map(Node::to_json);
    f.finish(ctx, ROOT_FIELDS);
    let Some(defs) = defs else {
        ctx.err(
            root.pos,
            "an agentic judge rubric needs `definitions`: {dimension: {prompt_template, …}}",
        );
        return None;
    };
    let NodeValue::Map(entries) = &defs.value else {
        ctx.wrong_type(
            defs,
            "`definitions`",
            "a mapping of dimension names to {system_prompt, prompt_template, choices_type}",
        );
        return None;
    };
    if entries.is_empty() {
        ctx.err(
            defs.pos,
            "`definitions` is empty; give at least one dimension",
        );
    }
    let mut criteria = Vec::new();
    let mut system_prompts = Map::new();
    for (k, node) in entries {
        let Some(mut df) = Fields::of(ctx, node, &format!("dimension '{}'", k.text)) else {
            continue;
        };
        let system = df.string(ctx, "system_prompt");
        let template = df.string(ctx, "prompt_template");
        let choices = df.take("choices_type");
        df.finish(ctx, DIMENSION_FIELDS);
        let Some(template) = template.filter(|t| !t.trim().is_empty()) else {
            ctx.err(
                node.pos,
                format!("dimension '{}' needs a non-empty `prompt_template`", k.text),
            );
            continue;
        };
        let top = match choices {
            None => 5.0,
            Some(c) => {
                if let Some(n) = c.as_str().and_then(points_of) {
                    n
                } else {
                    ctx.err(c.pos, format!(
                        "unknown choices_type {}; agentic judges use standard_5_point (or standard_N_point, N from 2 to 10)",
                        c.to_json()
                    ));
                    5.0
                }
            }
        };
        if choices.is_none() {
            notes.push(Diagnostic::at(
                ctx.file,
                node.pos,
                format!(
                    "dimension '{}' has no choices_type; read as standard_5_point (1–5)",
                    k.text
                ),
            ));
        }
        let id = slugify(&k.text);
        let requirement = definition(&template)
            .or_else(|| system.clone())
            .unwrap_or_else(|| format!("Rate the {} of the response", k.text));
        let mut c = Criterion::binary(
            if id.is_empty() {
                format!("c{}", criteria.len() + 1)
            } else {
                id
            },
            requirement,
            1.0,
        );
        c.name.clone_from(&k.text);
        c.kind = Kind::Scale(Scale {
            min: 1.0,
            max: top,
            anchors: anchors(&template, top),
        });
        c.method = Method::Judge(JudgeMethod {
            template: Some(template),
            model: None,
            pair: None,
        });
        if let Some(s) = system {
            system_prompts.insert(c.id.clone(), json!(s));
        }
        paths.push(format!("definitions.{}", k.text));
        criteria.push(c);
    }
    let mut r = Rubric::new(slugify(name.as_deref().unwrap_or(stem)), criteria);
    r.name = name.unwrap_or_else(|| stem.to_owned());
    r.description = description.unwrap_or_default();
    if let Some(v) = version {
        r.version = v;
    }
    if let Some(Value::Object(m)) = metadata {
        r.metadata = m;
    }
    if !system_prompts.is_empty() {
        r.metadata
            .insert("system_prompts".into(), Value::Object(system_prompts));
    }
    r.metadata.insert("format".into(), json!("agentic_v2_eval"));
    Some(r)
}

/// `standard_5_point` → 5.
fn points_of(s: &str) -> Option<f64> {
    let n: u32 = s
        .strip_prefix("standard_")?
        .strip_suffix("_point")?
        .parse()
        .ok()?;
    (2..=10).contains(&n).then_some(f64::from(n))
}

/// The paragraph under `# Definition`, joined into one line.
pub(super) fn definition(template: &str) -> Option<String> {
    let mut lines = template
        .lines()
        .skip_while(|l| !l.trim().eq_ignore_ascii_case("# definition"));
    lines.next()?;
    let text: Vec<&str> = lines
        .take_while(|l| !l.trim_start().starts_with('#'))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    (!text.is_empty()).then(|| text.join(" "))
}

/// Lines such as `3 - **Somewhat Coherent**: …` (continuation lines joined) as anchors.
fn anchors(template: &str, top: f64) -> Vec<Anchor> {
    let mut out: Vec<Anchor> = Vec::new();
    let mut in_rubric = false;
    for line in template.lines() {
        let t = line.trim();
        if t.starts_with('#') {
            in_rubric = t.to_ascii_lowercase().contains("rubric");
            continue;
        }
        if !in_rubric || t.is_empty() {
            continue;
        }
        let head: String = t.chars().take_while(char::is_ascii_digit).collect();
        let rest = t[head.len()..].trim_start();
        match head.parse::<f64>() {
            Ok(v) if (1.0..=top).contains(&v) && rest.starts_with(['-', ':', '.', ')']) => {
                let text = rest[1..].trim().replace("**", "");
                out.push(Anchor { value: v, text });
            }
            _ => {
                if let Some(last) = out.last_mut() {
                    last.text.push(' ');
                    last.text.push_str(t);
                }
            }
        }
    }
    out.sort_by(|a, b| a.value.total_cmp(&b.value));
    out.dedup_by(|a, b| a.value == b.value);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::yaml;

    #[test]
    fn dimensions_become_judged_scales_with_anchors_from_the_template() {
        let text = "definitions:\n  coherence:\n    system_prompt: You are an expert.\n    prompt_template: |\n      # Definition\n      Coherence is logical flow.\n\n      # Scoring Rubric\n      1 - **Incoherent**: no structure,\n          none at all.\n      5 - **Coherent**: clear.\n\n      # Data\n      QUERY: {{input}}\n      RESPONSE: {{completion}}\n    choices_type: standard_5_point\n";
        let root = yaml::parse("quality.yaml", text).unwrap();
        let (r, _, notes) = read("quality.yaml", &root, "quality").unwrap();
        assert!(notes.is_empty());
        let c = &r.criteria[0];
        assert_eq!(c.id, "coherence");
        assert_eq!(c.requirement, "Coherence is logical flow.");
        let Kind::Scale(s) = &c.kind else {
            panic!("not a scale")
        };
        assert_eq!((s.min, s.max), (1.0, 5.0));
        assert_eq!(s.anchors[0].text, "Incoherent: no structure, none at all.");
        assert_eq!(
            r.metadata["system_prompts"]["coherence"],
            "You are an expert."
        );
    }
}
