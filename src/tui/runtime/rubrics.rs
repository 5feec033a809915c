//! The runtime's work on rubric files for the Rubrics pane: read and lint a rubric (or its
//! draft), make the draft an editor works on, write an edit to the draft, save a draft as a
//! new registry version, make a new rubric, and diff versions.

use crate::tui::msg::FailureKind;
use std::path::{Path, PathBuf};

use super::{Runtime, Topic, failed, misrouted, typed};
use crate::store::registry::Registry;
use crate::store::{FileError, Workspace};
use crate::tui::effect::Effect;
use crate::tui::msg::Msg;
use crate::tui::msg::RubricView;

/// Why a rubric effect failed, worded once for the Rubrics pane.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("no new rubric: {0}")]
    Create(FileError),
    #[error("no criterion added: {0}")]
    AddCriterion(FileError),
    #[error("not saved: {0}")]
    Save(FileError),
    #[error("the edit was NOT written to {draft}: {error}")]
    WriteDraft {
        draft: String,
        error: std::io::Error,
    },
}

impl super::Failed for Failure {
    fn kind(&self) -> FailureKind {
        match self {
            // The draft and the versions hold the person's edits.
            Failure::AddCriterion(_) | Failure::Save(_) | Failure::WriteDraft { .. } => {
                FailureKind::Unwritten
            }
            Failure::Create(e) => e
                .io_kind()
                .map_or(FailureKind::Refused, |_| FailureKind::Disk),
        }
    }
}

impl Runtime {
    /// Carries out a rubric effect (`Topic::Rubrics`).
    pub(super) fn handle_rubrics(&self, effect: Effect) -> Option<Msg> {
        let ws = &self.ws;
        Some(match effect {
            Effect::NewRubric { from } => match create(ws, from.as_deref()) {
                Ok(path) => Msg::RubricCreated(path),
                Err(e) => failed(&Failure::Create(e)),
            },
            Effect::AddFirstCriterion { path, seq } => {
                let (draft, message, failed) = match add_first_criterion(ws, &path) {
                    Ok(draft) => (
                        Some(draft),
                        Some(
                            "a first criterion, in the draft: edit it in place (r n w …)"
                                .to_owned(),
                        ),
                        None,
                    ),
                    Err(e) => (None, None, Some(typed(&Failure::AddCriterion(e)))),
                };
                Msg::RubricLoaded {
                    view: load(ws, &path, draft.as_deref()),
                    message,
                    failed,
                    draft: Some(seq),
                }
            }
            Effect::LoadRubric { path, draft } => Msg::RubricLoaded {
                view: load(ws, &path, draft.as_deref()),
                message: None,
                failed: None,
                draft: None,
            },
            Effect::SaveRubric {
                path,
                draft,
                note,
                version,
            } => save(ws, &path, &draft, &note, &version),
            Effect::DiffRubric { id, back } => diff(ws, &id, back),
            Effect::WriteDraft { path, rubric, seq } => write_draft(ws, &path, &rubric, seq),
            // The event loop hands the terminal to the editor itself (`rubric_draft`).
            Effect::EditRubric { .. } => return None,
            other => misrouted(Topic::Rubrics, &other),
        })
    }

    /// The draft of the rubric file `path` for `$EDITOR`, made from the file when there is
    /// none yet.
    pub fn rubric_draft(&self, path: &Path) -> Result<PathBuf, FileError> {
        ensure_draft(&self.ws, path)
    }
}

/// Where the draft of a rubric file lives (kept until it is saved: an edit survives a crash).
fn draft_path(ws: &Workspace, file: &Path) -> PathBuf {
    let name = file.file_name().map_or_else(
        || "rubric.yaml".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    ws.path(".rubricate/drafts").join(name)
}

/// The draft for `file`, made from the file when there is none yet.
fn ensure_draft(ws: &Workspace, file: &Path) -> Result<PathBuf, FileError> {
    let draft = draft_path(ws, file);
    if !draft.exists() {
        if let Some(parent) = draft.parent() {
            std::fs::create_dir_all(parent).map_err(FileError::at(parent))?;
        }
        let text = std::fs::read(file).map_err(FileError::at(file))?;
        crate::store::AtomicFile::write_whole(&draft, &text).map_err(FileError::at(&draft))?;
    }
    Ok(draft)
}

/// Reads (the draft of) a rubric and lints it.
fn load(ws: &Workspace, path: &Path, draft: Option<&Path>) -> RubricView {
    let draft = draft
        .map(Path::to_path_buf)
        .or_else(|| Some(draft_path(ws, path)).filter(|d| d.exists()));
    let source = draft.clone().unwrap_or_else(|| path.to_path_buf());
    let mut view = RubricView {
        path: path.to_path_buf(),
        draft,
        ..RubricView::default()
    };
    match crate::formats::load_rubric(&source.display().to_string()) {
        Ok(loaded) => {
            if let Ok(handle) = tokio::runtime::Handle::try_current()
                && let Ok(report) = handle.block_on(crate::engine::lint::lint(&loaded))
            {
                view.score = report.meta.score;
                view.findings = report
                    .findings
                    .iter()
                    .map(|f| {
                        (
                            criterion_of(&f.path),
                            format!("{:?}: {}", f.severity, f.message),
                        )
                    })
                    .collect();
            }
            // What `rubricate validate` refuses (a pattern or schema that does not compile,
            // a template with a syntax error) shows with its location, like a load error.
            if let Err(d) = crate::engine::compile(&loaded) {
                view.problems = d.0.iter().map(ToString::to_string).collect();
            }
            view.base_version = base_version(ws, path, &loaded.rubric.id);
            view.rubric = Some(loaded.rubric);
        }
        Err(d) => view.problems = d.0.iter().map(ToString::to_string).collect(),
    }
    view
}

/// What a new version must go above: the registry's highest saved version of `id`, else the
/// rubric file's own version.
fn base_version(ws: &Workspace, path: &Path, id: &str) -> Option<String> {
    let saved = Registry::new(&ws.root).versions(id).ok().and_then(|v| {
        v.into_iter()
            .filter_map(|s| {
                crate::store::registry::Version::parse(&s)
                    .ok()
                    .map(|v| (v, s))
            })
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, s)| s)
    });
    saved.or_else(|| {
        crate::formats::load_rubric(&path.display().to_string())
            .ok()
            .map(|r| r.rubric.version.clone())
    })
}

/// `criteria[2].requirement` → 2.
fn criterion_of(path: &str) -> Option<usize> {
    path.strip_prefix("criteria[")?
        .split(']')
        .next()?
        .parse()
        .ok()
}

/// Saves the draft as `version` (written into it first) in the registry and over the
/// rubric file, then drops the draft. A rubric never saved before has its file, as it was
/// before the edits, recorded first as its own version, so the original is never lost.
fn save(ws: &Workspace, path: &Path, draft: &Path, note: &str, version: &str) -> Msg {
    let message = (|| -> Result<String, FileError> {
        let text = std::fs::read_to_string(draft).map_err(FileError::at(draft))?;
        let text = with_version(&text, version);
        crate::store::AtomicFile::write_whole(draft, text.as_bytes())
            .map_err(FileError::at(draft))?;
        let loaded =
            crate::formats::load_rubric(&draft.display().to_string()).map_err(|e| e.to_string())?;
        // Never register a version `rubricate validate` would refuse.
        crate::engine::compile(&loaded).map_err(|e| e.to_string())?;
        let registry = Registry::new(&ws.root);
        let mut said = String::new();
        if registry
            .versions(&loaded.rubric.id)
            .map_or(true, |v| v.is_empty())
            && let Ok(original) = crate::formats::load_rubric(&path.display().to_string())
            && original.rubric.id == loaded.rubric.id
            && crate::engine::compile(&original).is_ok()
        {
            let first = registry
                .save(&original.rubric, "as it was before its first edit here")
                .map_err(|e| format!("the original could not be recorded first: {e}"))?;
            said = format!("; the original was recorded first as {}", first.version);
        }
        let event = registry
            .save(&loaded.rubric, note)
            .map_err(|e| e.to_string())?;
        crate::store::AtomicFile::write_whole(path, text.as_bytes())
            .map_err(FileError::at(path))?;
        let _ = std::fs::remove_file(draft);
        Ok(format!(
            "saved {} {} ({note}){said}",
            event.id, event.version
        ))
    })();
    let view = load(ws, path, None);
    let (message, failed) = match message {
        Ok(said) => (Some(said), None),
        Err(e) => (None, Some(typed(&Failure::Save(e)))),
    };
    Msg::RubricLoaded {
        view,
        message,
        failed,
        draft: None,
    }
}

/// A new rubric in `rubrics/`: blank (`new-rubric.yaml`, one binary criterion) or a copy
/// of a built-in (`<name>.yaml`, its id the file's name), `-2`, `-3` … added where the
/// name is taken (an existing file is never replaced). Valid as it stands.
fn create(ws: &Workspace, from: Option<&str>) -> Result<PathBuf, FileError> {
    let dir = ws.path("rubrics");
    std::fs::create_dir_all(&dir).map_err(FileError::at(&dir))?;
    let base = from.map_or_else(|| "new-rubric".to_owned(), |n| n.replace('_', "-"));
    let (id, path) = (1..1000)
        .map(|k| {
            let id = if k == 1 {
                base.clone()
            } else {
                format!("{base}-{k}")
            };
            let path = dir.join(format!("{id}.yaml"));
            (id, path)
        })
        .find(|(_, p)| !p.exists())
        .ok_or_else(|| format!("rubrics/ already holds {base} … {base}-999"))?;
    let text = match from {
        None => format!(
            "{RUBRIC_SCHEMA_LINE}# Started in the terminal UI: edit it in place, or with ctrl-e.\nid: {id}\nname: New rubric\nversion: 0.1.0\npass_threshold: 0.7\ncriteria:\n{FIRST_CRITERION}"
        ),
        Some(name) => {
            let text = crate::formats::library::builtin(name)
                .ok_or_else(|| format!("no built-in rubric named '{name}'"))?;
            let copied = format!(
                "{RUBRIC_SCHEMA_LINE}# Copied from the built-in '{name}' in the terminal UI.\n{text}"
            );
            with_top_level(&with_top_level(&copied, "id", &id), "version", "0.1.0")
        }
    };
    crate::store::AtomicFile::write_whole(&path, text.as_bytes()).map_err(FileError::at(&path))?;
    Ok(path)
}

/// A new rubric file's first line: editors with the YAML language server complete and check
/// it against the schema `init` writes into `.rubricate/`.
const RUBRIC_SCHEMA_LINE: &str =
    "# yaml-language-server: $schema=../.rubricate/rubric.schema.json\n";

/// The criterion a blank rubric starts with (an item of the `criteria:` list).
const FIRST_CRITERION: &str = "  - id: first\n    name: First criterion\n    requirement: Describe what the submission must do\n    weight: 1\n";

/// Writes a first criterion into the draft of a rubric that has none (`criteria: []`, or no
/// `criteria:` at all); anything else is left for the user to fix. Returns the draft.
fn add_first_criterion(ws: &Workspace, file: &Path) -> Result<PathBuf, FileError> {
    let draft = ensure_draft(ws, file)?;
    let text = std::fs::read_to_string(&draft).map_err(FileError::at(&draft))?;
    let mut out: Vec<String> = Vec::new();
    let mut done = false;
    for l in text.lines() {
        let code = l.split(" #").next().unwrap_or(l).trim_end();
        let empty_list = code
            .strip_prefix("criteria:")
            .is_some_and(|rest| rest.replace(' ', "") == "[]");
        if !done && empty_list {
            out.push("criteria:".to_owned());
            out.extend(FIRST_CRITERION.lines().map(str::to_owned));
            done = true;
        } else {
            if l.starts_with("criteria:") {
                return Err(FileError::Refused(format!(
                    "{}: its criteria are not an empty list; fix it with ctrl-e",
                    draft.display()
                )));
            }
            out.push(l.to_owned());
        }
    }
    if !done {
        out.push("criteria:".to_owned());
        out.extend(FIRST_CRITERION.lines().map(str::to_owned));
    }
    let mut joined = out.join("\n");
    joined.push('\n');
    crate::store::AtomicFile::write_whole(&draft, joined.as_bytes())
        .map_err(FileError::at(&draft))?;
    Ok(draft)
}

/// The rubric text with its top-level `version:` set (added after `id:` when missing),
/// everything else — comments, order — kept.
fn with_version(text: &str, version: &str) -> String {
    with_top_level(text, "version", version)
}

/// The text with the top-level `key:` set to `value` (added after `id:`, or first, when
/// missing), everything else — comments, order — kept.
fn with_top_level(text: &str, key: &str, value: &str) -> String {
    let prefix = format!("{key}:");
    let line = format!("{key}: {value}");
    let mut out: Vec<String> = Vec::new();
    let mut done = false;
    for l in text.lines() {
        if !done && l.starts_with(&prefix) {
            out.push(line.clone());
            done = true;
        } else {
            out.push(l.to_owned());
        }
    }
    if !done {
        let at = out
            .iter()
            .position(|l| l.starts_with("id:"))
            .map_or(0, |i| i + 1);
        out.insert(at, line);
    }
    let mut joined = out.join("\n");
    joined.push('\n');
    joined
}

/// The unified diff from the version `back` places before the registry's last version of
/// `id` to the last (the oldest one when `back` goes past it).
fn diff(ws: &Workspace, id: &str, back: usize) -> Msg {
    let registry = Registry::new(&ws.root);
    let result = registry
        .versions(id)
        .map_err(|e| e.to_string())
        .and_then(|v| {
            let Some(last) = v.last() else {
                return Err(format!("'{id}' has no saved version; save one first (s)"));
            };
            if v.len() < 2 {
                return Err(format!(
                    "'{id}' has fewer than two saved versions; save a change first"
                ));
            }
            let back = back.clamp(1, v.len() - 1);
            let base = &v[v.len() - 1 - back];
            registry
                .diff(id, base, last)
                .map(|d| (d, back))
                .map_err(|e| e.to_string())
        });
    Msg::Diff(result)
}

/// Writes an edited rubric to the draft of `path` (native YAML; atomically), then reads it
/// back and lints it. Every edit is on disk at once: nothing is lost to a crash.
fn write_draft(ws: &Workspace, path: &Path, rubric: &crate::model::Rubric, seq: u64) -> Msg {
    let draft = draft_path(ws, path);
    let written = crate::formats::native::rubric_to_yaml(rubric)
        .map_err(|e| std::io::Error::other(e.to_string()))
        .and_then(|text| {
            draft
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| crate::store::AtomicFile::write_whole(&draft, text.as_bytes()))
        });
    let view = load(ws, path, Some(&draft));
    Msg::RubricLoaded {
        view,
        message: None,
        failed: written.err().map(|error| {
            typed(&Failure::WriteDraft {
                draft: draft.display().to_string(),
                error,
            })
        }),
        draft: Some(seq),
    }
}
