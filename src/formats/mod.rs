//! Reading and writing files: rubricate's native rubric format, datasets, and (later) the
//! seed systems' formats. Every loader reports problems as `file:line:column: message`.

pub mod agentic;
pub mod dataset;
pub mod diag;
pub mod fields;
pub mod json;
pub mod library;
pub mod native;
pub mod node;
pub mod source;
mod text;
pub mod yaml;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use diag::{Diagnostic, Diagnostics, Pos};
pub use source::SourceMap;
pub use text::{MAX_RUBRIC_BYTES, read_text};

use crate::model::Rubric;
use native::Dialect;
use node::Node;

/// A rubric with where it came from, for locating later problems and resolving
/// relative paths (schema files).
#[derive(Debug, Clone)]
pub struct LoadedRubric {
    pub rubric: Arc<Rubric>,
    pub source: SourceMap,
    /// The name used in messages: a path, or `builtin:NAME`.
    pub file: String,
    /// The folder relative paths in the rubric resolve against.
    pub base_dir: PathBuf,
}

impl LoadedRubric {
    /// A rubric built in code, with no positions.
    pub fn detached(rubric: Rubric, file: &str) -> Self {
        Self {
            rubric: Arc::new(rubric),
            source: SourceMap::empty(),
            file: file.to_owned(),
            base_dir: PathBuf::from("."),
        }
    }

    pub fn diagnostic(&self, criterion: Option<usize>, field: &str, message: &str) -> Diagnostic {
        self.source
            .diagnostic(&self.file, criterion, field, message)
    }
}

/// Loads a rubric by bare library name (`code`) or by path (anything with a path
/// separator or an extension).
pub fn load_rubric(spec: &str) -> Result<LoadedRubric, Diagnostics> {
    if is_bare_name(spec) {
        let Some(text) = library::builtin(spec) else {
            return Err(Diagnostics::one(Diagnostic::whole(
                spec,
                format!(
                    "no built-in rubric named '{spec}'; built-ins are {}. To load a file, give a path such as ./{spec}.yaml",
                    library::NAMES.join(", ")
                ),
            )));
        };
        let file = format!("builtin:{spec}");
        return parse_rubric_text(&file, text, spec, Path::new("."));
    }
    load_rubric_file(Path::new(spec))
}

pub fn load_rubric_file(path: &Path) -> Result<LoadedRubric, Diagnostics> {
    let file = path.display().to_string();
    let text = read_text(path, MAX_RUBRIC_BYTES, "rubric")?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    parse_rubric_text(&file, &text, &stem, &base)
}

/// Parses rubric text (YAML or JSON) in the native format.
pub fn parse_rubric_text(
    file: &str,
    text: &str,
    fallback_id: &str,
    base_dir: &Path,
) -> Result<LoadedRubric, Diagnostics> {
    let root = parse_document(file, text)?;
    let (rubric, source) = if agentic::looks_like(&root) {
        agentic::read_scoring_rubric(file, &root, fallback_id)?
    } else {
        native::read_rubric(file, &root, fallback_id, Dialect::NATIVE)?
    };
    Ok(LoadedRubric {
        rubric: Arc::new(rubric),
        source,
        file: file.to_owned(),
        base_dir: base_dir.to_path_buf(),
    })
}

/// A bare name has no path separator and no extension.
pub fn is_bare_name(spec: &str) -> bool {
    !spec.is_empty() && !spec.contains(['/', '\\']) && !spec.contains('.')
}

/// Parses YAML or JSON by extension, sniffing when the extension says neither.
pub fn parse_document(file: &str, text: &str) -> Result<Node, Diagnostics> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let ext = Path::new(file)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if ext == "json" {
        return json::parse(file, text);
    }
    if ext == "yaml" || ext == "yml" {
        return yaml::parse(file, text);
    }
    if text.trim_start().starts_with(['{', '['])
        && let Ok(node) = json::parse(file, text)
    {
        return Ok(node);
    }
    yaml::parse(file, text)
}
