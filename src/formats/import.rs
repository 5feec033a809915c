//! Loading any supported file: detect (or take `--from`) the format, run that format's
//! reader, and hand back every rubric, item and note it holds.

use crate::formats::Node;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::agentv::Expectation;
use super::dataset::{ReadOptions, open_dataset};
use super::detect::{Detected, Format, detect_why};
use super::source::SourceMap;
use super::{
    LoadedRubric, MAX_RUBRIC_BYTES, agentic, agentv, autorubric, dataknobs, native, parse_document,
    read_text, rubric_lib,
};
use crate::core::diag::{Diagnostic, Diagnostics};
use crate::model::{Item, Rubric};

/// Everything one file holds, read through its format.
#[derive(Debug)]
pub struct Imported {
    /// The file's name in messages.
    pub file: String,
    /// The format it was read as.
    pub format: Format,
    /// True when the format was detected, false when `--from` named it.
    pub detected: bool,
    /// The rubrics it holds.
    pub rubrics: Vec<LoadedRubric>,
    /// Dataset items (autorubric datasets, agentv eval cases), each with its own rubric
    /// where the file gives one.
    pub items: Vec<Item>,
    /// agentv grader-score expectations.
    pub expectations: Vec<Expectation>,
    /// Things read but without use in rubricate (never failures).
    pub notes: Vec<Diagnostic>,
}

impl Imported {
    fn new(file: &str, format: Format, detected: bool) -> Self {
        Self {
            file: file.to_owned(),
            format,
            detected,
            rubrics: Vec::new(),
            items: Vec::new(),
            expectations: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The one rubric the file holds, or the one `pick` names (`FILE#ID`).
    pub fn into_rubric(mut self, pick: Option<&str>) -> Result<LoadedRubric, Diagnostics> {
        let ids = || {
            self.rubrics
                .iter()
                .map(|r| r.rubric.id.clone())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if let Some(want) = pick {
            let wanted = crate::model::slugify(want);
            if let Some(i) = self
                .rubrics
                .iter()
                .position(|r| r.rubric.id == want || r.rubric.id == wanted)
            {
                return Ok(self.rubrics.swap_remove(i));
            }
            // An agentv case without rubrics of its own is graded with the file-level one.
            if let Some(own) = self
                .items
                .iter()
                .find(|x| x.id == want)
                .and_then(|x| x.rubric.clone())
                && let Some(r) = self
                    .rubrics
                    .iter()
                    .find(|r| std::sync::Arc::ptr_eq(&r.rubric, &own) || *r.rubric == *own)
            {
                return Ok(r.clone());
            }
            let items: Vec<&str> = self.items.iter().map(|x| x.id.as_str()).collect();
            return Err(self.whole(format!(
                "no rubric '{want}' in this {} file; it holds {}{}",
                self.format,
                if self.rubrics.is_empty() {
                    "none".to_owned()
                } else {
                    ids()
                },
                if items.is_empty() {
                    String::new()
                } else {
                    format!(" (cases: {})", items.join(", "))
                }
            )));
        }
        match self.rubrics.len() {
            1 => Ok(self.rubrics.swap_remove(0)),
            0 if !self.expectations.is_empty() => Err(self.whole(
                "this agentv file lists expected grader scores, not a rubric; grade the eval file it belongs to".to_owned(),
            )),
            0 => Err(self.whole(format!("this {} file holds no rubric", self.format))),
            n => Err(self.whole(format!(
                "this {} file holds {n} rubrics ({}); pick one with {}#ID",
                self.format,
                ids(),
                self.file
            ))),
        }
    }

    fn whole(&self, message: String) -> Diagnostics {
        Diagnostics::one(Diagnostic::whole(&self.file, message))
    }
}

/// Splits `FILE#ID` (a rubric inside a file holding several). A `#` that is part of an
/// existing file's name is left alone.
pub fn split_pick(spec: &str) -> (&str, Option<&str>) {
    match spec.rsplit_once('#') {
        Some((path, id))
            if !id.is_empty() && !id.contains(['/', '\\']) && !Path::new(spec).exists() =>
        {
            (path, Some(id))
        }
        _ => (spec, None),
    }
}

/// Reads a file in any supported format.
pub fn import_file(path: &Path, from: Option<Format>) -> Result<Imported, Diagnostics> {
    let file = path.display().to_string();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    // agentv cases kept as JSONL or CSV: an eval of those cases.
    if matches!(from, None | Some(Format::Agentv)) && super::agentv::is_case_file(path) {
        let root = super::agentv::case_file_root(path)?;
        let mut out = import_root(&file, &root, &stem, &base, Some(Format::Agentv))?;
        out.detected = from.is_none();
        return Ok(out);
    }
    if super::dataset::is_dataset_file(path) && !matches!(from, Some(f) if f != Format::Autorubric)
    {
        return import_dataset(path, &file, from.is_none());
    }
    let text = read_text(path, MAX_RUBRIC_BYTES, "rubric")?;
    import_text(&file, &text, &stem, &base, from)
}

/// A dataset file: its header rubric and items, read through the dataset readers.
fn import_dataset(path: &Path, file: &str, detected: bool) -> Result<Imported, Diagnostics> {
    let ds = open_dataset(path, ReadOptions::default())?;
    let format = match ds.format {
        super::dataset::DatasetFormat::Json => Format::Autorubric,
        _ => Format::Native,
    };
    let mut out = Imported::new(file, format, detected);
    out.rubrics.extend(ds.header.rubric);
    let mut problems = Vec::new();
    for item in ds.items {
        match item {
            Ok(i) => out.items.push(i),
            Err(d) => problems.push(d),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(Diagnostics(problems))
    }
}

/// A dataset written as YAML (or JSON small enough to parse whole): `{name?, prompt?,
/// rubric?, reference_submission?, items: […]}`.
fn dataset_from_tree(
    file: &str,
    root: &super::node::Node,
    base: &Path,
) -> Result<(Option<LoadedRubric>, Vec<Item>), Diagnostics> {
    use super::dataset::item_from_object;
    let text = |k: &str| {
        root.get(k)
            .and_then(super::node::Node::as_str)
            .map(str::to_owned)
    };
    let (prompt, reference) = (
        text("prompt"),
        text("reference_submission").or_else(|| text("reference")),
    );
    let read = |node: &super::node::Node, id: &str| {
        native::read_rubric(file, node, id, native::Dialect::AUTORUBRIC).map(|(r, source)| {
            LoadedRubric {
                rubric: Arc::new(r),
                source,
                file: file.to_owned(),
                base_dir: base.to_path_buf(),
            }
        })
    };
    let shared = match root.get("rubric") {
        Some(n) if n.value != super::node::NodeValue::Null => Some(read(n, "dataset-rubric")?),
        _ => None,
    };
    let Some(list) = root.get("items").and_then(super::node::Node::as_seq) else {
        return Err(Diagnostics::one(Diagnostic::whole(
            file,
            "`items` must be a list of items",
        )));
    };
    let mut items = Vec::with_capacity(list.len());
    let mut problems = Vec::new();
    for (i, node) in list.iter().enumerate() {
        let origin = format!("{file}:{}:{}", node.pos.line, node.pos.col);
        let serde_json::Value::Object(mut obj) = node.to_json() else {
            problems.push(Diagnostic::at(
                file,
                node.pos,
                format!("item {}: an item must be a mapping", i + 1),
            ));
            continue;
        };
        let own = match node.get("rubric") {
            Some(r) if r.value != super::node::NodeValue::Null => {
                match read(r, &format!("item-{}-rubric", i + 1)) {
                    Ok(l) => Some(l.rubric),
                    Err(d) => {
                        problems.extend(d.0);
                        continue;
                    }
                }
            }
            _ => None,
        };
        obj.remove("rubric");
        match item_from_object(obj, (i + 1).to_string(), origin) {
            Ok(mut item) => {
                item.rubric = own;
                super::dataset::inherit(&mut item, prompt.as_ref(), reference.as_ref());
                items.push(item);
            }
            Err(m) => problems.push(Diagnostic::at(
                file,
                node.pos,
                format!("item {}: {m}", i + 1),
            )),
        }
    }
    if problems.is_empty() {
        Ok((shared, items))
    } else {
        Err(Diagnostics(problems))
    }
}

/// Reads text in any supported format (`from` forces one).
pub fn import_text(
    file: &str,
    text: &str,
    stem: &str,
    base: &Path,
    from: Option<Format>,
) -> Result<Imported, Diagnostics> {
    let root = parse_document(file, text)?;
    import_root(file, &root, stem, base, from)
}

/// A parsed document, imported as `from` says or as its shape tells.
fn import_root(
    file: &str,
    root: &Node,
    stem: &str,
    base: &Path,
    from: Option<Format>,
) -> Result<Imported, Diagnostics> {
    let root = root.clone();
    let detected = match from {
        Some(format) => Detected {
            format,
            because: "--from says so".into(),
        },
        None => detect_why(&root),
    };
    let format = detected.format;
    if format == Format::Native
        && root.get("items").is_none()
        && let Some(what) = super::detect::not_a_rubric(&root)
    {
        return Err(Diagnostics::one(crate::core::diag::Diagnostic::whole(
            file,
            format!("this is {what}"),
        )));
    }
    // Every refusal says how the file was read and why, so a file read as the wrong
    // system's is recognised as such.
    read_as(file, &root, stem, base, format, from.is_none()).map_err(|mut d| {
        d.0.push(crate::core::diag::Diagnostic::whole(
            file,
            match from {
                Some(f) => format!("read as {}, as `--from {}` says", f.system(), f.name()),
                None => format!(
                    "read as {} (`--from {}`) because {}; if it is another system's file, `--from FORMAT` reads it as that ({})",
                    format.system(),
                    format.name(),
                    detected.because,
                    Format::ALL.map(Format::name).join(", ")
                ),
            },
        ));
        d
    })
}

/// Reads a document as `format`.
fn read_as(
    file: &str,
    root: &Node,
    stem: &str,
    base: &Path,
    format: Format,
    detected: bool,
) -> Result<Imported, Diagnostics> {
    let mut out = Imported::new(file, format, detected);
    let loaded = |(rubric, source): (Rubric, SourceMap)| LoadedRubric {
        rubric: Arc::new(rubric),
        source,
        file: file.to_owned(),
        base_dir: base.to_path_buf(),
    };
    match format {
        Format::Autorubric | Format::Native if root.get("items").is_some() => {
            let (rubric, items) = dataset_from_tree(file, root, base)?;
            out.rubrics.extend(rubric);
            out.items = items;
        }
        Format::Native => {
            out.rubrics.push(loaded(native::read_rubric(
                file,
                root,
                stem,
                native::Dialect::NATIVE,
            )?));
        }
        Format::RubricLib => out
            .rubrics
            .push(loaded(rubric_lib::read(file, root, stem)?)),
        Format::Autorubric => out
            .rubrics
            .push(loaded(autorubric::read(file, root, stem)?)),
        Format::Agentv => {
            let f = agentv::read(file, root, stem)?;
            out.rubrics.extend(f.rubrics.into_iter().map(loaded));
            out.items = f.items;
            out.expectations = f.expectations;
            out.notes = f.notes;
        }
        Format::Agentic => {
            if root.get("judge_prompt").is_some() {
                let (rubrics, notes) = agentic::read_evaluator_rubrics(file, root, stem)?;
                out.rubrics.extend(rubrics.into_iter().map(loaded));
                out.notes = notes;
            } else if root.get("definitions").is_some() {
                let (r, map, notes) = agentic::read_judge_rubric(file, root, stem)?;
                out.rubrics.push(loaded((r, map)));
                out.notes = notes;
            } else {
                let (r, map, notes) = agentic::read_scoring_rubric(file, root, stem)?;
                out.rubrics.push(loaded((r, map)));
                out.notes = notes;
            }
        }
        Format::Dataknobs => {
            let (rubrics, notes) = dataknobs::read(file, root, stem)?;
            out.rubrics.extend(rubrics.into_iter().map(loaded));
            out.notes = notes;
        }
    }
    out.notes.sort_by_key(|n| n.pos);
    Ok(out)
}
