//! Where each part of a loaded rubric was written, so that problems found later (by
//! validation, compilation or lint) point at a line and column.

use std::sync::Arc;

use super::fields::Ctx;
use super::node::Node;
use crate::core::diag::{Diagnostic, Diagnostics, Pos};
use crate::model::{Rubric, validate_rubric};

/// Runs a format's reader over `root`, then the structural rules every rubric obeys, and
/// locates every problem. `read` records each criterion's document path as it goes.
pub fn read_validated(
    file: &str,
    root: &Node,
    read: impl FnOnce(&mut Ctx<'_>, &mut Vec<String>) -> Option<Rubric>,
) -> Result<(Rubric, SourceMap), Diagnostics> {
    read_validated_in(file, &Arc::new(root.clone()), read)
}

/// [`read_validated`] for a document several rubrics share (their maps point into it).
fn read_validated_in(
    file: &str,
    root: &Arc<Node>,
    read: impl FnOnce(&mut Ctx<'_>, &mut Vec<String>) -> Option<Rubric>,
) -> Result<(Rubric, SourceMap), Diagnostics> {
    let mut ctx = Ctx::new(file);
    let mut paths = Vec::new();
    let rubric = read(&mut ctx, &mut paths);
    let map = SourceMap::new(Arc::clone(root), paths);
    let Some(rubric) = rubric.filter(|_| ctx.diags.is_empty()) else {
        return Err(Diagnostics(ctx.diags).sorted());
    };
    let problems = validate_rubric(&rubric);
    if problems.is_empty() {
        Ok((rubric, map))
    } else {
        Err(Diagnostics(
            problems
                .iter()
                .map(|p| map.diagnostic(file, p.criterion, &p.field, &p.message))
                .collect(),
        ))
    }
}

/// Where a rubric's fields were written: the document and each criterion's path in it,
/// so a problem found after reading still points at a line.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    /// Shared: every case rubric of an agentv file points into the same document.
    root: Option<Arc<Node>>,
    /// For each criterion (in `Rubric::criteria` order), its path in the document.
    criteria: Vec<String>,
}

impl SourceMap {
    /// A map over the document `root`, with each criterion's path (in rubric order).
    pub fn new(root: impl Into<Arc<Node>>, criteria: Vec<String>) -> Self {
        Self {
            root: Some(root.into()),
            criteria,
        }
    }

    /// A map that knows no positions (rubrics built in code, or from formats without them).
    pub fn empty() -> Self {
        Self::default()
    }

    /// The document path of a field: `criteria[2].weight`, `sections[0].criteria[1].levels[0]`.
    pub fn path(&self, criterion: Option<usize>, field: &str) -> String {
        let base = criterion.map(|i| {
            self.criteria
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("criteria[{i}]"))
        });
        match (base, field.is_empty()) {
            (Some(b), true) => b,
            (Some(b), false) => format!("{b}.{field}"),
            (None, _) => field.to_owned(),
        }
    }

    /// The best position for a field: the value if written, else its parent.
    pub fn pos(&self, criterion: Option<usize>, field: &str) -> Option<Pos> {
        let root = self.root.as_ref()?;
        let path = self.path(criterion, field);
        let (node, found) = root.locate(&path);
        if found {
            return Some(node.pos);
        }
        Some(node.pos)
    }

    /// A problem with `field` of `criterion` (`None`: the rubric) in `file`, at its position
    /// when known.
    pub fn diagnostic(
        &self,
        file: &str,
        criterion: Option<usize>,
        field: &str,
        message: &str,
    ) -> Diagnostic {
        match self.pos(criterion, field) {
            Some(pos) => Diagnostic::at(file, pos, message),
            None => Diagnostic::whole(file, format!("{}: {message}", self.path(criterion, field))),
        }
    }
}
