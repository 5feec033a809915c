//! Typed, located access to the fields of a mapping node, shared by every format reader.
//! Every problem is collected (not just the first) so one run shows them all.

use super::node::{Key, Node, NodeValue};
use crate::core::diag::{Diagnostic, Pos};

/// Where problems are collected while reading one file.
pub struct Ctx<'f> {
    /// The file's name in messages.
    pub file: &'f str,
    /// The problems found so far.
    pub diags: Vec<Diagnostic>,
}

impl<'f> Ctx<'f> {
    /// Collects problems for `file`.
    pub fn new(file: &'f str) -> Self {
        Self {
            file,
            diags: Vec::new(),
        }
    }

    /// A problem at `pos`.
    pub fn err(&mut self, pos: Pos, message: impl Into<String>) {
        self.diags.push(Diagnostic::at(self.file, pos, message));
    }

    /// `what must be {expected}, found {type}` at the node.
    pub fn wrong_type(&mut self, node: &Node, what: &str, expected: &str) {
        self.err(
            node.pos,
            format!("{what} must be {expected}, found {}", node.type_name()),
        );
    }
}

/// The entries of one mapping; fields taken are marked, the rest are reported as unknown.
pub struct Fields<'n> {
    /// The mapping itself (for its position).
    pub node: &'n Node,
    entries: &'n [(Key, Node)],
    used: Vec<bool>,
    what: String,
}

impl<'n> Fields<'n> {
    /// `None` (with a located error) when `node` is not a mapping.
    pub fn of(ctx: &mut Ctx<'_>, node: &'n Node, what: &str) -> Option<Self> {
        if let NodeValue::Map(entries) = &node.value {
            Some(Self {
                node,
                entries,
                used: vec![false; entries.len()],
                what: what.to_owned(),
            })
        } else {
            ctx.wrong_type(node, what, "a mapping");
            None
        }
    }

    /// Whether the mapping has `key` (taken or not).
    pub fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k.text == key)
    }

    /// Every key, in document order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.text.as_str())
    }

    /// Takes a field (marks it known). Null counts as absent.
    pub fn take(&mut self, key: &str) -> Option<&'n Node> {
        let i = self.entries.iter().position(|(k, _)| k.text == key)?;
        self.used[i] = true;
        let node = &self.entries[i].1;
        (node.value != NodeValue::Null).then_some(node)
    }

    /// Takes the first present of several aliases, returning which one was used.
    pub fn take_alias(&mut self, keys: &[&'static str]) -> Option<(&'static str, &'n Node)> {
        let mut found = None;
        for &k in keys {
            if let Some(n) = self.take(k) {
                found.get_or_insert((k, n));
            }
        }
        found
    }

    /// Takes `key` as text (a number is kept as written).
    pub fn string(&mut self, ctx: &mut Ctx<'_>, key: &str) -> Option<String> {
        let node = self.take(key)?;
        string_of(ctx, node, &format!("`{key}`"))
    }

    /// Takes `key` as a number.
    pub fn number(&mut self, ctx: &mut Ctx<'_>, key: &str) -> Option<f64> {
        let node = self.take(key)?;
        number_of(ctx, node, &format!("`{key}`"))
    }

    /// Takes `key` as true or false.
    pub fn boolean(&mut self, ctx: &mut Ctx<'_>, key: &str) -> Option<bool> {
        let node = self.take(key)?;
        if let NodeValue::Bool(b) = node.value {
            Some(b)
        } else {
            ctx.wrong_type(node, &format!("`{key}`"), "true or false");
            None
        }
    }

    /// Reports every field not taken, suggesting the nearest known name. A known field left
    /// untaken (a reader that stopped at an earlier error, already reported) is not unknown.
    pub fn finish(self, ctx: &mut Ctx<'_>, known: &[&str]) {
        for ((key, _), used) in self.entries.iter().zip(&self.used) {
            if !used && !known.contains(&key.text.as_str()) {
                let hint = nearest(&key.text, known).map_or_else(
                    || format!("; known fields: {}", known.join(", ")),
                    |k| format!("; did you mean `{k}`?"),
                );
                ctx.err(
                    key.pos,
                    format!("unknown field `{}` in {}{hint}", key.text, self.what),
                );
            }
        }
    }
}

/// `node` as text (a number as written); `what` names it in the error.
pub fn string_of(ctx: &mut Ctx<'_>, node: &Node, what: &str) -> Option<String> {
    match &node.value {
        NodeValue::Str(s) => Some(s.clone()),
        // Numbers written where text is expected (ids like `1`, versions like `1.0`) are kept
        // as text, as written.
        NodeValue::Int(_) | NodeValue::Float(_) if node.raw.is_some() => {
            node.raw.as_deref().map(str::to_owned)
        }
        NodeValue::Int(i) => Some(i.to_string()),
        NodeValue::Float(f) => Some(f.to_string()),
        _ => {
            ctx.wrong_type(node, what, "text");
            None
        }
    }
}

/// `node` as a number; `what` names it in the error.
pub fn number_of(ctx: &mut Ctx<'_>, node: &Node, what: &str) -> Option<f64> {
    if let Some(x) = node.as_f64() {
        Some(x)
    } else {
        ctx.wrong_type(node, what, "a number");
        None
    }
}

/// The known name closest to `key` by edit distance, if close enough to be a typo.
pub fn nearest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|k| (strsim::levenshtein(&key.to_lowercase(), k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// `gates: [pass_rate>=0.9, criterion:safety>=1]` — a rubric's or `rubricate.yaml`'s run
/// gates; each that cannot be read, or (given the rubric) names a criterion or tag it lacks,
/// is an error at its line.
pub fn gates_of(
    ctx: &mut Ctx<'_>,
    node: &Node,
    rubric: Option<&crate::model::Rubric>,
) -> Vec<crate::model::RunGate> {
    let Some(items) = node.as_seq() else {
        ctx.wrong_type(node, "`gates`", "a list such as [pass_rate>=0.9]");
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items {
        let Some(text) = string_of(ctx, item, "a gate") else {
            continue;
        };
        match crate::model::RunGate::parse(&text) {
            Ok(g) => match rubric.and_then(|r| g.unknown_in(r)) {
                Some(why) => ctx.err(item.pos, format!("gate `{g}`: {why}")),
                None => out.push(g),
            },
            Err(e) => ctx.err(item.pos, e),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_known_key() {
        assert_eq!(nearest("wieght", &["weight", "required"]), Some("weight"));
        assert_eq!(nearest("zzzzzz", &["weight", "required"]), None);
    }
}
