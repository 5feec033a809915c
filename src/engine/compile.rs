//! A rubric made ready to run: checks, regexes and schemas compiled once, every problem
//! reported with its location.

use super::checks::{self, Check, CommandCheck, Compiled};
use super::schema::{self, CompiledSchema};
use super::template;
use crate::formats::{Diagnostics, LoadedRubric};
use crate::model::{Method, SchemaSource};

/// A criterion's method, ready to run.
#[derive(Debug)]
pub enum CompiledMethod {
    /// Asked of the run's judges.
    Judge,
    /// A check run in process.
    Check(Box<dyn Check>),
    /// A program run on the submission.
    Command(CommandCheck),
    /// A compiled JSON Schema.
    Schema(CompiledSchema),
}

/// A rubric with every criterion's method compiled: checks, commands and schemas are
/// checked once, before any item is graded.
#[derive(Debug)]
pub struct CompiledRubric {
    /// The rubric and where it came from.
    pub loaded: LoadedRubric,
    /// One per criterion, in order.
    pub methods: Vec<CompiledMethod>,
}

impl CompiledRubric {
    /// The rubric.
    pub fn rubric(&self) -> &crate::model::Rubric {
        &self.loaded.rubric
    }
}

/// Compiles every criterion's method; collects every problem.
pub fn compile(loaded: &LoadedRubric) -> Result<CompiledRubric, Diagnostics> {
    let mut methods = Vec::new();
    let mut problems = Vec::new();
    for (i, c) in loaded.rubric.criteria.iter().enumerate() {
        let compiled = match &c.method {
            Method::Judge(j) => {
                if let Some(t) = &j.template
                    && let Err(m) = template::check_syntax(t)
                {
                    problems.push(loaded.diagnostic(
                        Some(i),
                        "method.judge.template",
                        &m.to_string(),
                    ));
                }
                Some(CompiledMethod::Judge)
            }
            Method::Check(spec) => match checks::compile(spec, c, false) {
                Ok(Compiled::Sync(check)) => Some(CompiledMethod::Check(check)),
                Ok(Compiled::Command(cmd)) => Some(CompiledMethod::Command(cmd)),
                Err(e) => {
                    let field = if e.field == "check" {
                        "method.check".to_owned()
                    } else {
                        format!("method.{}", e.field)
                    };
                    problems.push(loaded.diagnostic(
                        Some(i),
                        &field,
                        &format!("criterion '{}': {}", c.id, e.message),
                    ));
                    None
                }
            },
            Method::Schema(src) => {
                let value = match src {
                    SchemaSource::Inline(v) => Ok(v.clone()),
                    SchemaSource::File(p) => schema::load_file(&loaded.base_dir, p),
                };
                match value.and_then(|v| schema::compile(&v)) {
                    Ok(s) => Some(CompiledMethod::Schema(s)),
                    Err(m) => {
                        problems.push(loaded.diagnostic(
                            Some(i),
                            "method.schema",
                            &format!("criterion '{}': {m}", c.id),
                        ));
                        None
                    }
                }
            }
        };
        if let Some(m) = compiled {
            methods.push(m);
        }
    }
    if problems.is_empty() {
        Ok(CompiledRubric {
            loaded: loaded.clone(),
            methods,
        })
    } else {
        Err(Diagnostics(problems))
    }
}
