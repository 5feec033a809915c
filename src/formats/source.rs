//! Where each part of a loaded rubric was written, so that problems found later (by
//! validation, compilation or lint) point at a line and column.

use super::diag::{Diagnostic, Pos};
use super::node::Node;

#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    root: Option<Node>,
    /// For each criterion (in `Rubric::criteria` order), its path in the document.
    criteria: Vec<String>,
}

impl SourceMap {
    pub fn new(root: Node, criteria: Vec<String>) -> Self {
        Self {
            root: Some(root),
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
