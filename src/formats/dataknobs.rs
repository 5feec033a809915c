//! dataknobs rubric config dicts: `{rubrics: [rubric…]}` or one rubric dict, JSON or YAML.
//! A rubric is `{id, name, description, version, target_type, criteria, pass_threshold,
//! metadata}`, a criterion `{id, name, description, weight, levels, scoring_method,
//! required}`, a scoring method `{type: deterministic|schema|llm_decode, function_ref,
//! schema, schema_ref, decode_prompt, decode_output_schema}`.
//!
//! Each rubric is rewritten into the native shape (positions kept, so every later problem
//! still points into the file) and read by the native reader. Aggregation is Σ w·v / Σ w
//! with failures counted as 0 (`errors: zero`).

use serde_json::{Map, Value, json};

use super::export::{Holds, losses};
use super::fields::{Ctx, Fields};
use super::native::{Dialect, read_rubric};
use super::node::{Key, Node, NodeValue};
use super::source::SourceMap;
use crate::core::diag::{Diagnostic, Diagnostics, Pos};
use crate::model::checks::{NAMES, canonical_name};
use crate::model::{
    AbstainPolicy, AggregateMode, Criterion, ErrorPolicy, FeedbackStyle, GateRule, Kind, Level,
    Method, Rubric, SchemaSource, Scoring, ThresholdRule,
};

const RUBRIC_FIELDS: &[&str] = &[
    "id",
    "name",
    "description",
    "version",
    "target_type",
    "criteria",
    "pass_threshold",
    "metadata",
];
const CRITERION_FIELDS: &[&str] = &[
    "id",
    "name",
    "description",
    "weight",
    "levels",
    "scoring_method",
    "required",
];
const LEVEL_FIELDS: &[&str] = &["id", "label", "description", "score", "indicators"];
const METHOD_FIELDS: &[&str] = &[
    "type",
    "function_ref",
    "schema",
    "schema_ref",
    "decode_prompt",
    "decode_output_schema",
];

/// The scoring knobs that reproduce dataknobs' `RubricExecutor`: Σ w·v / Σ w over every
/// criterion with signed weights and no clamping (`_compute_weighted_score`), a criterion
/// not scored (a failure, or no level chosen: dataknobs has no "cannot assess") counting 0,
/// `passed` by an exact `>=`, `required` read but never enforced, and its feedback text.
pub fn scoring() -> Scoring {
    Scoring {
        aggregate: AggregateMode::WeightedMean,
        errors: ErrorPolicy::Zero,
        abstain: AbstainPolicy::Zero,
        threshold: ThresholdRule::Exact,
        gates: GateRule::Off,
        feedback: FeedbackStyle::Dataknobs,
        ..Scoring::default()
    }
}

/// Things read but without use, said once each.
pub type Notes = Vec<Diagnostic>;

/// Reads every rubric of a dataknobs file, with notes on what was read but has no use.
pub fn read(
    file: &str,
    root: &Node,
    stem: &str,
) -> Result<(Vec<(Rubric, SourceMap)>, Notes), Diagnostics> {
    let mut ctx = Ctx::new(file);
    let mut notes = Vec::new();
    let rubric_nodes: Vec<&Node> = match root.get("rubrics") {
        Some(list) => {
            if let Some(m) = root.as_map() {
                for (k, _) in m.iter().filter(|(k, _)| k.text != "rubrics") {
                    notes.push(Diagnostic::at(
                        file,
                        k.pos,
                        format!(
                            "`{}` is not part of a dataknobs rubric config; ignored",
                            k.text
                        ),
                    ));
                }
            }
            match list.as_seq() {
                Some(items) if !items.is_empty() => items.iter().collect(),
                Some(_) => {
                    ctx.err(
                        list.pos,
                        "`rubrics` is empty; a dataknobs config needs at least one rubric",
                    );
                    Vec::new()
                }
                None => {
                    ctx.wrong_type(list, "`rubrics`", "a list of rubric dicts");
                    Vec::new()
                }
            }
        }
        None => vec![root],
    };
    let native: Vec<Node> = rubric_nodes
        .iter()
        .filter_map(|n| desugar_rubric(&mut ctx, &mut notes, n))
        .collect();
    if !ctx.diags.is_empty() {
        return Err(Diagnostics(ctx.diags).sorted());
    }
    let several = native.len() > 1;
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, node) in native.iter().enumerate() {
        let fallback = if several {
            format!("{stem}-{}", i + 1)
        } else {
            stem.to_owned()
        };
        match read_rubric(file, node, &fallback, Dialect::NATIVE) {
            Ok((mut r, map)) => {
                r.scoring = scoring();
                // `_compute_weighted_score` totals the weights with Python's `sum()`.
                match super::python::summation() {
                    Ok(s) => r.scoring.summation = s,
                    Err(m) => errors.push(Diagnostic::whole(file, m.to_string())),
                }
                r.metadata.insert("format".into(), json!("dataknobs"));
                out.push((r, map));
            }
            Err(d) => errors.extend(d.0),
        }
    }
    if errors.is_empty() {
        Ok((out, notes))
    } else {
        Err(Diagnostics(errors).sorted())
    }
}

fn key(text: &str, pos: Pos) -> Key {
    Key {
        text: text.to_owned(),
        pos,
    }
}

fn desugar_rubric(ctx: &mut Ctx<'_>, notes: &mut Vec<Diagnostic>, node: &Node) -> Option<Node> {
    let mut f = Fields::of(ctx, node, "a dataknobs rubric")?;
    let mut entries = Vec::new();
    for k in RUBRIC_FIELDS.iter().filter(|k| **k != "criteria") {
        if let Some(v) = f.take(k) {
            entries.push((key(k, node.key_pos(k).unwrap_or(v.pos)), v.clone()));
        }
    }
    match f.take("criteria") {
        Some(list) => match list.as_seq() {
            Some(items) => {
                let cs = items
                    .iter()
                    .filter_map(|c| desugar_criterion(ctx, notes, c))
                    .collect();
                entries.push((
                    key("criteria", node.key_pos("criteria").unwrap_or(list.pos)),
                    Node::new(NodeValue::Seq(cs), list.pos),
                ));
            }
            None => ctx.wrong_type(list, "`criteria`", "a list of criteria"),
        },
        None => ctx.err(node.pos, "a dataknobs rubric needs `criteria`"),
    }
    f.finish(ctx, RUBRIC_FIELDS);
    Some(Node::new(NodeValue::Map(entries), node.pos))
}

fn desugar_criterion(ctx: &mut Ctx<'_>, notes: &mut Vec<Diagnostic>, node: &Node) -> Option<Node> {
    let mut f = Fields::of(ctx, node, "a dataknobs criterion")?;
    let mut entries = Vec::new();
    for (from, to) in [
        ("id", "id"),
        ("name", "name"),
        ("description", "requirement"),
        ("weight", "weight"),
        ("required", "required"),
    ] {
        if let Some(v) = f.take(from) {
            entries.push((key(to, node.key_pos(from).unwrap_or(v.pos)), v.clone()));
        }
    }
    if let Some(levels) = f.take("levels") {
        if let Some(items) = levels.as_seq() {
            for l in items {
                if let Some(mut lf) = Fields::of(ctx, l, "a dataknobs level") {
                    for k in LEVEL_FIELDS {
                        lf.take(k);
                    }
                    lf.finish(ctx, LEVEL_FIELDS);
                }
            }
        }
        if !is_met_unmet(levels) {
            entries.push((
                key("levels", node.key_pos("levels").unwrap_or(levels.pos)),
                levels.clone(),
            ));
        }
    }
    if let Some(m) = f.take("scoring_method")
        && let Some(method) = desugar_method(ctx, notes, m)
    {
        entries.push((
            key("method", node.key_pos("scoring_method").unwrap_or(m.pos)),
            method,
        ));
    }
    f.finish(ctx, CRITERION_FIELDS);
    Some(Node::new(NodeValue::Map(entries), node.pos))
}

/// Two levels `unmet` ("Unmet", 0) and `met` ("Met", 1) with no description are how a
/// binary criterion is written (see `write`); anything more is kept as levels, so nothing
/// the file says (a label, a description dataknobs' feedback quotes) is lost.
fn is_met_unmet(levels: &Node) -> bool {
    let Some(items) = levels.as_seq() else {
        return false;
    };
    let text = |l: &Node, k: &str| {
        l.get(k)
            .and_then(Node::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let is = |l: &Node, id: &str, label: &str, score: f64| {
        text(l, "id") == id
            && text(l, "label") == label
            && text(l, "description").is_empty()
            && l.get("score").and_then(Node::as_f64) == Some(score)
            && l.get("indicators")
                .is_none_or(|i| i.as_seq().is_some_and(<[Node]>::is_empty))
    };
    items.len() == 2 && is(&items[0], "unmet", "Unmet", 0.0) && is(&items[1], "met", "Met", 1.0)
}

fn desugar_method(ctx: &mut Ctx<'_>, notes: &mut Vec<Diagnostic>, node: &Node) -> Option<Node> {
    let mut f = Fields::of(ctx, node, "a dataknobs scoring_method")?;
    let ty = f.string(ctx, "type");
    let function_ref = f.take("function_ref");
    let schema = f.take("schema");
    let schema_ref = f.take("schema_ref");
    let decode_prompt = f.take("decode_prompt");
    let decode_schema = f.take("decode_output_schema");
    f.finish(ctx, METHOD_FIELDS);
    let pos = node.pos;
    let map = |k: &str, v: Node| Node::new(NodeValue::Map(vec![(key(k, pos), v)]), pos);
    // dataknobs reads `type` as written (`ScoringType(value)`): lowercase only.
    match ty.as_deref() {
        Some("deterministic") => {
            let Some(r) = function_ref else {
                return Some(unscorable(
                    (ctx.file, notes, pos),
                    pos,
                    "a deterministic scoring_method without `function_ref`".into(),
                    "name the function as \"module:function\"",
                ));
            };
            let Some(text) = r.as_str() else {
                ctx.wrong_type(r, "`function_ref`", "a \"module:function\" string");
                return None;
            };
            if !text.contains(':') {
                ctx.err(
                    r.pos,
                    format!("function_ref '{text}' is not in \"module:function\" form (e.g. 'scoring:{text}')"),
                );
                return None;
            }
            let Some(function) = builtin_function(text) else {
                // The application's own Python: rubricate cannot call it, so the criterion
                // is judged on its levels instead, and says so (the file still loads). A
                // built-in check of the same name is not that function.
                let (_, name) = text.rsplit_once(':').unwrap_or(("", text));
                let same_name = NAMES.contains(&canonical_name(name).as_str())
                    && canonical_name(name) != "command";
                notes.push(Diagnostic::at(
                    ctx.file,
                    r.pos,
                    format!(
                        "function_ref '{text}' is the application's own code, which rubricate does not run: this criterion is judged by an LLM on its levels instead{} (name a built-in check as '{RUBRICATE_MODULE}:NAME', or use a native `command` check)",
                        if same_name {
                            format!("; rubricate's check '{name}' has the same name but is not that function, so it is not used")
                        } else {
                            String::new()
                        }
                    ),
                ));
                return None;
            };
            Some(map("check", Node::new(NodeValue::Str(function), r.pos)))
        }
        Some("schema") => match (schema, schema_ref) {
            (Some(s), _) => Some(map("schema", s.clone())),
            // dataknobs' executor reads only `schema`: `schema_ref` is stored, never loaded.
            (None, Some(r)) => Some(unscorable(
                (ctx.file, notes, pos),
                r.pos,
                format!(
                    "schema_ref {} is never read by dataknobs (its executor checks `schema` only)",
                    r.as_str()
                        .map_or_else(|| "(not text)".to_owned(), |t| format!("'{t}'"))
                ),
                "to have the schema checked, write it inline as `schema`",
            )),
            (None, None) => Some(unscorable(
                (ctx.file, notes, pos),
                pos,
                "a schema scoring_method without `schema`".into(),
                "write the JSON Schema inline as `schema`",
            )),
        },
        Some("llm_decode") => {
            if let Some(d) = decode_schema {
                notes.push(Diagnostic::at(
                    ctx.file,
                    d.pos,
                    "`decode_output_schema` is not needed: rubricate asks the judge for a level id itself",
                ));
            }
            let Some(p) = decode_prompt else {
                return Some(unscorable(
                    (ctx.file, notes, pos),
                    pos,
                    "an llm_decode scoring_method without `decode_prompt`".into(),
                    "give the Jinja2 prompt that asks the judge for a level",
                ));
            };
            Some(map("judge", map("template", p.clone())))
        }
        Some(other) => {
            let at = node.get("type").map_or(pos, |n| n.pos);
            let lower = other.to_ascii_lowercase();
            if matches!(lower.as_str(), "deterministic" | "schema" | "llm_decode") {
                ctx.err(at, format!("scoring_method type '{other}' is refused by dataknobs, which reads the type as written (lowercase only); write '{lower}'"));
            } else {
                ctx.err(at, format!("unknown scoring_method type '{other}'; dataknobs uses deterministic, schema or llm_decode"));
            }
            None
        }
        None => {
            ctx.err(
                pos,
                "a dataknobs scoring_method needs a `type`: deterministic, schema or llm_decode",
            );
            None
        }
    }
}

/// A method without the field it needs: it loads in dataknobs, and that criterion errors
/// on every evaluation (score 0). The same here — an `unscorable` check — with a note.
fn unscorable(
    (file, notes, pos): (&str, &mut Vec<Diagnostic>, Pos),
    at: Pos,
    reason: String,
    advice: &str,
) -> Node {
    notes.push(Diagnostic::at(
        file,
        at,
        format!(
            "{reason}: this criterion errors on every item and scores 0, as in dataknobs; {advice}"
        ),
    ));
    let text = |t: String| Node::new(NodeValue::Str(t), pos);
    let args = Node::new(
        NodeValue::Map(vec![(key("reason", pos), text(reason))]),
        pos,
    );
    Node::new(
        NodeValue::Map(vec![
            (key("check", pos), text("unscorable".into())),
            (key("args", pos), args),
        ]),
        pos,
    )
}

/// The module `convert` writes rubricate's built-in checks under (`rubricate.checks:is_json`).
const RUBRICATE_MODULE: &str = "rubricate.checks";
/// The module of dataknobs' own meta-rubric functions, which rubricate's meta checks reproduce.
const DATAKNOBS_META_MODULE: &str = "dataknobs_bots.rubrics.meta";

/// The built-in check a `function_ref` names, if it names one: dataknobs imports
/// `module:function`, so only rubricate's own module and dataknobs' meta-rubric functions
/// are rubricate's to run; any other module is the application's code, whatever the
/// function is called.
fn builtin_function(function_ref: &str) -> Option<String> {
    let (module, function) = function_ref.split_once(':')?;
    let name = canonical_name(function);
    let known = match module.trim() {
        RUBRICATE_MODULE => NAMES.contains(&name.as_str()) && name != "command",
        DATAKNOBS_META_MODULE => {
            name.starts_with("rubric_") && function.trim().starts_with("check_")
        }
        _ => false,
    };
    known.then_some(name)
}

/// The rubrics as a dataknobs config (one rubric dict, or `{rubrics: […]}` for several).
pub fn write(rubrics: &[Rubric]) -> (Value, Vec<String>) {
    let mut lost = Vec::new();
    let values: Vec<Value> = rubrics
        .iter()
        .map(|r| {
            let holds = Holds {
                format: "dataknobs",
                ids: true,
                threshold: true,
                guidelines: false,
                sections: false,
                gates: true,
                levels: true,
                options: false,
                scale: false,
                checks: true,
                schema: true,
                templates: true,
                scoring: scoring(),
            };
            lost.extend(losses(r, &holds));
            rubric(r, &mut lost)
        })
        .collect();
    let value = match <[Value; 1]>::try_from(values) {
        Ok([one]) => one,
        Err(many) => json!({ "rubrics": many }),
    };
    (value, lost)
}

fn rubric(r: &Rubric, lost: &mut Vec<String>) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(r.id));
    m.insert("name".into(), json!(r.name));
    m.insert("description".into(), json!(r.description));
    m.insert("version".into(), json!(r.version));
    m.insert("target_type".into(), json!(r.target_type));
    m.insert("pass_threshold".into(), json!(r.pass_threshold));
    m.insert(
        "criteria".into(),
        Value::Array(r.criteria.iter().map(|c| criterion(c, lost)).collect()),
    );
    let mut meta = r.metadata.clone();
    meta.remove("format");
    if !meta.is_empty() {
        m.insert("metadata".into(), Value::Object(meta));
    }
    Value::Object(m)
}

fn criterion(c: &Criterion, lost: &mut Vec<String>) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(c.id));
    m.insert("name".into(), json!(c.name));
    m.insert("description".into(), json!(c.requirement));
    m.insert("weight".into(), json!(c.weight));
    if c.required {
        m.insert("required".into(), json!(true));
    }
    if c.min_score.is_some() {
        lost.push(format!(
            "criterion '{}': min_score (dataknobs gates require any score above 0)",
            c.id
        ));
    }
    let levels: Vec<Level> = match &c.kind {
        Kind::Levels(levels) => levels.clone(),
        _ => vec![level("unmet", "Unmet", 0.0), level("met", "Met", 1.0)],
    };
    m.insert(
        "levels".into(),
        serde_json::to_value(levels).unwrap_or(Value::Null),
    );
    // dataknobs asks its judge with a decode prompt; a criterion without a template of
    // its own gets a plain one.
    let plain = || {
        json!({"type": "llm_decode", "decode_prompt": format!(
            "Decide which level the submission reaches for: {}\n\nSubmission:\n{{{{ submission }}}}\n", c.requirement
        )})
    };
    let method = match &c.method {
        Method::Judge(j) => {
            if let Some(t) = &j.template {
                json!({"type": "llm_decode", "decode_prompt": t})
            } else {
                lost.push(format!("criterion '{}': no judge template of its own (dataknobs needs a decode_prompt; a plain one is written)", c.id));
                plain()
            }
        }
        // dataknobs functions take no arguments: a check that needs some is judged instead.
        Method::Check(spec) if !spec.args.is_empty() => {
            lost.push(format!(
                "criterion '{}': check '{}' with its arguments (dataknobs functions take none; written as an LLM-judged criterion)",
                c.id, spec.name
            ));
            plain()
        }
        Method::Check(spec) => {
            json!({"type": "deterministic", "function_ref": format!("{RUBRICATE_MODULE}:{}", spec.name)})
        }
        Method::Schema(SchemaSource::Inline(s)) => json!({"type": "schema", "schema": s}),
        Method::Schema(SchemaSource::File(p)) => json!({"type": "schema", "schema_ref": p}),
    };
    m.insert("scoring_method".into(), method);
    Value::Object(m)
}

fn level(id: &str, label: &str, score: f64) -> Level {
    Level {
        id: id.into(),
        label: label.into(),
        description: String::new(),
        score,
        indicators: Vec::new(),
    }
}
