//! The `schema` method: JSON Schema validation of the submission parsed as JSON.

use std::path::Path;

use serde_json::Value;

use super::checks::{CheckInput, CheckOutput};
use crate::model::Verdict;

/// A schema compiled once per rubric and reused for every item.
#[derive(Debug)]
pub struct CompiledSchema {
    validator: jsonschema::Validator,
}

/// Errors listed as evidence past this many are summarised.
const MAX_EVIDENCE: usize = 50;

/// Why a schema cannot be used: its file cannot be read, or it does not compile.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The schema file cannot be read or is not JSON.
    #[error("{0}")]
    File(#[source] crate::formats::Diagnostics),
    #[error(
        "the schema file '{file}' {why}; schema files are read from the rubric's folder and the one above it"
    )]
    /// The schema file may not be read: it is outside the folders schemas are read from.
    Elsewhere {
        /// The file as the rubric names it.
        file: String,
        /// Why it may not be read (an absolute path, outside those folders).
        why: &'static str,
    },
    #[error("the JSON Schema does not compile: {message} (at {at})")]
    /// The schema is not a valid JSON Schema.
    Invalid {
        /// What is wrong.
        message: String,
        /// Where in the schema.
        at: String,
    },
    /// The schema asks for a draft rubricate does not implement.
    #[error("the JSON Schema names a `$schema` draft rubricate does not know")]
    UnknownDraft,
}

/// Compiles a schema; an error says what is wrong with it.
pub fn compile(schema: &Value) -> Result<CompiledSchema, SchemaError> {
    // A schema naming an unknown `$schema` draft may make the library panic; refuse it cleanly.
    let built = std::panic::catch_unwind(|| jsonschema::validator_for(schema));
    match built {
        Ok(Ok(validator)) => Ok(CompiledSchema { validator }),
        // The library's error borrows the schema; its text and place are kept.
        Ok(Err(e)) => Err(SchemaError::Invalid {
            message: e.to_string(),
            at: location(e.instance_path().as_str()),
        }),
        Err(_) => Err(SchemaError::UnknownDraft),
    }
}

/// Reads a schema file (JSON or YAML) relative to `base`.
pub fn load_file(base: &Path, rel: &str) -> Result<Value, SchemaError> {
    let path = crate::formats::nearby(base, rel).map_err(|why| SchemaError::Elsewhere {
        file: rel.to_owned(),
        why,
    })?;
    let text = crate::formats::read_text(&path, crate::formats::MAX_RUBRIC_BYTES, "schema")
        .map_err(SchemaError::File)?;
    let node = crate::formats::parse_document(&path.display().to_string(), &text)
        .map_err(SchemaError::File)?;
    Ok(node.to_json())
}

fn location(path: &str) -> String {
    if path.is_empty() {
        "/".into()
    } else {
        path.to_owned()
    }
}

impl CompiledSchema {
    /// Every way `doc` breaks the schema (instance path and message), the first
    /// `MAX_EVIDENCE` listed and the rest summed up; empty when it is valid.
    pub fn errors(&self, doc: &Value) -> Vec<String> {
        self.listed_errors(doc).1
    }

    /// How many errors `doc` has, and their list as `errors` gives it.
    fn listed_errors(&self, doc: &Value) -> (usize, Vec<String>) {
        let mut evidence = Vec::new();
        let mut count = 0usize;
        for err in self.validator.iter_errors(doc) {
            count += 1;
            if count <= MAX_EVIDENCE {
                evidence.push(format!("{}: {err}", location(err.instance_path().as_str())));
            }
        }
        if count > MAX_EVIDENCE {
            evidence.push(format!("… and {} more errors", count - MAX_EVIDENCE));
        }
        (count, evidence)
    }

    /// Valid → MET, invalid → UNMET with every error (instance path + message) as evidence;
    /// a submission that is not JSON → UNMET with that as evidence.
    pub fn run(&self, input: &CheckInput<'_>) -> CheckOutput {
        let doc = match input.json() {
            Ok(v) => v,
            Err(e) => {
                return CheckOutput {
                    verdict: Verdict::Unmet,
                    measure: None,
                    evidence: vec![e.to_owned()],
                };
            }
        };
        let (count, evidence) = self.listed_errors(doc);
        if count == 0 {
            CheckOutput {
                verdict: Verdict::Met,
                measure: Some(0.0),
                evidence: vec!["valid against the schema".into()],
            }
        } else {
            CheckOutput {
                verdict: Verdict::Unmet,
                measure: Some(count as f64),
                evidence,
            }
        }
    }
}

/// "an object", "a list", … for evidence.
pub fn json_type(v: &Value) -> &'static str {
    crate::formats::dataset::kind_of(v)
}
