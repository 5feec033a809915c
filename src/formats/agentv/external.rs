//! agentv eval cases kept in other files: `tests: ./cases.yaml` (a YAML list of cases, or a
//! file with its own `tests`), `tests: ./cases.jsonl` (one case per line), `tests: ./cases/`
//! (a folder of case files, `*/case.yaml` named by their folder), or a `tests:` list
//! mixing such references (`file://cases/accuracy.yaml`) with cases written inline. Paths
//! are relative to the eval file. A missing file is a located error.

use std::path::{Path, PathBuf};

use crate::core::diag::{Diagnostic, Diagnostics, Pos};
use crate::formats::node::{Key, Node, NodeValue};

/// The most case files one folder reference reads.
const MAX_FILES: usize = 10_000;

/// What a `tests:` string names: the cases it holds, each node with positions in the file
/// it came from (read standalone first, so problems name that file).
pub struct Loaded {
    pub file: String,
    pub cases: Vec<Node>,
}

/// Whether a JSONL or CSV file holds agentv cases (read as an eval of them): JSONL whose
/// first line has an `id` and what a case asserts or feeds, and no submission; CSV with
/// promptfoo's `__expected` or `vars.` columns.
pub fn is_case_file(path: &Path) -> bool {
    use std::io::BufRead;
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if !matches!(ext.as_str(), "jsonl" | "csv") {
        return false;
    }
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let first = std::io::BufReader::new(std::io::Read::take(f, 1 << 20))
        .lines()
        .map_while(Result::ok)
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    if ext == "csv" {
        return first
            .split(',')
            .any(|h| h.trim() == "__expected" || h.trim().starts_with("vars."));
    }
    let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(&first) else {
        return false;
    };
    m.contains_key("id")
        && [
            "assert",
            "assertions",
            "criteria",
            "vars",
            "expected_output",
            "expected_outcome",
            "input_messages",
        ]
        .iter()
        .any(|k| m.contains_key(*k))
        && !crate::formats::dataset::SUBMISSION_KEYS
            .iter()
            .any(|k| m.contains_key(*k))
}

/// A JSONL or CSV case file as an eval: `{tests: [its cases]}`.
pub fn case_file_root(path: &Path) -> Result<Node, Diagnostics> {
    let loaded = load_file(path, None)?;
    let pos = Pos::new(1, 1);
    Ok(Node::new(
        NodeValue::Map(vec![(
            Key {
                text: "tests".into(),
                pos,
            },
            Node::new(NodeValue::Seq(loaded.cases), pos),
        )]),
        pos,
    ))
}

/// Loads the cases a reference (at `at` in the eval file) names.
pub fn load(eval_file: &str, reference: &str, at: Pos) -> Result<Vec<Loaded>, Diagnostics> {
    let dir = Path::new(eval_file).parent().unwrap_or(Path::new("."));
    let path = crate::formats::nearby(dir, reference).map_err(|why| {
        Diagnostics::one(Diagnostic::at(
            eval_file,
            at,
            format!(
                "the eval cases in '{}' {why}: case files are read from the eval file's folder and the one above it",
                reference.trim()
            ),
        ))
    })?;
    if path.is_dir() {
        return load_folder(eval_file, &path, at);
    }
    if !path.is_file() {
        return Err(Diagnostics::one(Diagnostic::at(
            eval_file,
            at,
            format!(
                "the eval cases in '{}' are not there ({}); agentv reads it relative to the eval file",
                reference.trim(),
                path.display()
            ),
        )));
    }
    Ok(vec![load_file(&path, None)?])
}

fn load_folder(eval_file: &str, dir: &Path, at: Pos) -> Result<Vec<Loaded>, Diagnostics> {
    let mut files: Vec<(PathBuf, Option<String>)> = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| {
        Diagnostics::one(Diagnostic::at(
            eval_file,
            at,
            format!("cannot read the case folder {}: {e}", dir.display()),
        ))
    })?;
    for entry in entries.flatten().take(MAX_FILES) {
        let p = entry.path();
        if p.is_dir() {
            // `cases/<name>/case.yaml`: a case named by its folder.
            for name in ["case.yaml", "case.yml"] {
                let f = p.join(name);
                if f.is_file() {
                    let id = p.file_name().map(|n| n.to_string_lossy().into_owned());
                    files.push((f, id));
                    break;
                }
            }
        } else if is_case_extension(&p) {
            files.push((p, None));
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|(f, id)| load_file(&f, id.as_deref()))
        .collect()
}

fn is_case_extension(p: &Path) -> bool {
    p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        matches!(
            e.to_ascii_lowercase().as_str(),
            "yaml" | "yml" | "jsonl" | "csv"
        )
    })
}

/// A promptfoo-style CSV of cases (agentv reads them): `id`, `vars.NAME` (`vars.input` is
/// the input), `__expected` (an assertion, `type:value` or a plain rubric sentence),
/// `__metric`, `__metadata:KEY`; other columns are vars.
fn csv_cases(file: &str, text: &str) -> Result<Vec<Node>, Diagnostics> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| Diagnostics::one(Diagnostic::whole(file, format!("not CSV: {e}"))))?
        .clone();
    let mut cases = Vec::new();
    for (n, row) in reader.records().enumerate() {
        let pos = Pos::new(n + 2, 1);
        let row =
            row.map_err(|e| Diagnostics::one(Diagnostic::at(file, pos, format!("not CSV: {e}"))))?;
        let s = |t: &str| Node::new(NodeValue::Str(t.to_owned()), pos);
        let key = |t: &str| Key {
            text: t.to_owned(),
            pos,
        };
        let mut case: Vec<(Key, Node)> = Vec::new();
        let mut vars: Vec<(Key, Node)> = Vec::new();
        let mut metadata: Vec<(Key, Node)> = Vec::new();
        let mut assertion: Option<Node> = None;
        let mut metric: Option<String> = None;
        for (h, v) in headers.iter().zip(row.iter()) {
            if v.is_empty() {
                continue;
            }
            match h {
                "id" => case.push((key("id"), s(v))),
                "__expected" => {
                    assertion = Some(match v.split_once(':') {
                        Some((ty, value))
                            if !ty.is_empty()
                                && ty.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') =>
                        {
                            Node::new(
                                NodeValue::Map(vec![
                                    (key("type"), s(ty.trim())),
                                    (key("value"), s(value.trim())),
                                ]),
                                pos,
                            )
                        }
                        _ => s(v),
                    });
                }
                "__metric" => metric = Some(v.to_owned()),
                "__threshold" => {}
                h if h.starts_with("__metadata:") => {
                    metadata.push((key(&h["__metadata:".len()..]), s(v)));
                }
                h => {
                    let name = h.strip_prefix("vars.").unwrap_or(h);
                    vars.push((key(name), s(v)));
                }
            }
        }
        if let Some(mut a) = assertion {
            if let (Some(m), NodeValue::Map(entries)) = (&metric, &mut a.value) {
                entries.push((key("metric"), s(m)));
            }
            case.push((key("assert"), Node::new(NodeValue::Seq(vec![a]), pos)));
        }
        if !vars.is_empty() {
            case.push((key("vars"), Node::new(NodeValue::Map(vars), pos)));
        }
        if !metadata.is_empty() {
            case.push((key("metadata"), Node::new(NodeValue::Map(metadata), pos)));
        }
        cases.push(Node::new(NodeValue::Map(case), pos));
    }
    Ok(cases)
}

/// A case file: YAML (a list of cases, a mapping with `tests`, or one case) or JSONL. A
/// case without an `id` takes `id_of_one` (its folder's name) when it is the only one.
fn load_file(path: &Path, id_of_one: Option<&str>) -> Result<Loaded, Diagnostics> {
    let file = path.display().to_string();
    let text = crate::formats::read_text(path, crate::formats::MAX_RUBRIC_BYTES, "case file")?;
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let mut cases = if ext == "csv" {
        csv_cases(&file, &text)?
    } else if ext == "jsonl" {
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let mut node = crate::formats::json::parse(&file, line).map_err(|d| {
                Diagnostics(
                    d.0.into_iter()
                        .map(|mut x| {
                            if let Some(p) = x.pos.as_mut() {
                                p.line = n + 1;
                            }
                            x
                        })
                        .collect(),
                )
            })?;
            on_line(&mut node, n + 1);
            out.push(node);
        }
        out
    } else {
        let root = crate::formats::parse_document(&file, &text)?;
        match root.value {
            NodeValue::Seq(items) => items,
            NodeValue::Map(_) if root.get("tests").is_some() || root.get("cases").is_some() => {
                match root
                    .get("tests")
                    .or_else(|| root.get("cases"))
                    .map(|n| n.value.clone())
                {
                    Some(NodeValue::Seq(items)) => items,
                    _ => {
                        return Err(Diagnostics::one(Diagnostic::at(
                            &file,
                            root.pos,
                            "`tests` in a case file must be a list of eval cases",
                        )));
                    }
                }
            }
            NodeValue::Map(_) => vec![root],
            _ => {
                return Err(Diagnostics::one(Diagnostic::at(
                    &file,
                    root.pos,
                    format!(
                        "a case file holds a list of eval cases (or one case), found {}",
                        root.type_name()
                    ),
                )));
            }
        }
    };
    if let ([one], Some(id)) = (cases.as_mut_slice(), id_of_one)
        && one.get("id").is_none()
        && let NodeValue::Map(entries) = &mut one.value
    {
        let pos = one.pos;
        entries.insert(
            0,
            (
                Key {
                    text: "id".into(),
                    pos,
                },
                Node::new(NodeValue::Str(id.to_owned()), pos),
            ),
        );
    }
    Ok(Loaded { file, cases })
}

/// Places a JSONL line's node on its line of the file.
fn on_line(node: &mut Node, line: usize) {
    node.pos.line = line;
    match &mut node.value {
        NodeValue::Seq(items) => items.iter_mut().for_each(|n| on_line(n, line)),
        NodeValue::Map(entries) => {
            for (k, v) in entries {
                k.pos.line = line;
                on_line(v, line);
            }
        }
        _ => {}
    }
}
