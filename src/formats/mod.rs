//! Reading and writing files: rubricate's native rubric format, datasets, and the five
//! seed systems' formats (detected from their shape). Every loader reports problems as
//! `file:line:column: message`.

pub mod agentic;
pub mod agentv;
pub mod autorubric;
pub mod dataknobs;
pub mod dataset;
pub mod detect;
pub mod export;
pub mod fidelity;
pub mod fields;
pub mod foreign_runs;
pub mod import;
pub mod json;
pub mod library;
pub mod native;
pub mod node;
pub mod python;
pub mod reasoning;
pub mod results;
pub mod results_read;
pub mod rubric_lib;
pub mod source;
mod text;
pub mod yaml;
mod yaml_write;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::core::diag::{Diagnostic, Diagnostics, Pos};
pub use detect::Format;
pub use import::{Imported, import_file, import_text};
pub use source::SourceMap;
pub use text::{MAX_RUBRIC_BYTES, nearby, read_text};

use crate::model::Rubric;
use node::Node;

/// A rubric with where it came from, for locating later problems and resolving
/// relative paths (schema files).
#[derive(Debug, Clone)]
pub struct LoadedRubric {
    /// The rubric.
    pub rubric: Arc<Rubric>,
    /// Where each of its fields is in the file.
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

    /// A problem with `field` of `criterion` (`None`: the rubric), located where the file
    /// wrote it.
    pub fn diagnostic(&self, criterion: Option<usize>, field: &str, message: &str) -> Diagnostic {
        self.source
            .diagnostic(&self.file, criterion, field, message)
    }
}

/// Loads a rubric by bare library name (`code`) or by path (anything with a path
/// separator or an extension), detecting its format.
pub fn load_rubric(spec: &str) -> Result<LoadedRubric, Diagnostics> {
    load_rubric_as(spec, None)
}

/// Loads a rubric in any format (`from` forces one). `FILE#ID` picks one rubric of a file
/// that holds several (an agentv case, a dataknobs config entry).
pub fn load_rubric_as(spec: &str, from: Option<Format>) -> Result<LoadedRubric, Diagnostics> {
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
        return parse_rubric_text(&file, text, spec, Path::new("."), from);
    }
    let (path, pick) = import::split_pick(spec);
    import_file(Path::new(path), from)?.into_rubric(pick)
}

/// Parses rubric text (YAML or JSON) in any format (`from` forces one).
pub fn parse_rubric_text(
    file: &str,
    text: &str,
    fallback_id: &str,
    base_dir: &Path,
    from: Option<Format>,
) -> Result<LoadedRubric, Diagnostics> {
    import_text(file, text, fallback_id, base_dir, from)?.into_rubric(None)
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
