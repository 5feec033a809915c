//! A document tree that remembers where every value came from, so that problems found
//! after parsing (duplicate ids, bad weights, unknown checks) still point at a line.

use serde_json::{Map, Number, Value};

use crate::core::diag::Pos;

/// A parsed value and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The value.
    pub value: NodeValue,
    /// Where it starts.
    pub pos: Pos,
    /// The scalar as written, when it resolved to a number (so `version: 1.0` reads back
    /// as "1.0", not "1").
    pub raw: Option<Box<str>>,
}

/// A parsed value, of the kinds YAML and JSON share.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeValue {
    /// `null`, `~` or nothing.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// Any other number.
    Float(f64),
    /// Text.
    Str(String),
    /// A list.
    Seq(Vec<Node>),
    /// A mapping, its entries in document order (duplicates are refused by the readers).
    Map(Vec<(Key, Node)>),
}

/// A mapping's key and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// The key.
    pub text: String,
    /// Where it starts.
    pub pos: Pos,
}

impl Node {
    /// A node at `pos`, with no text as written.
    pub fn new(value: NodeValue, pos: Pos) -> Self {
        Self {
            value,
            pos,
            raw: None,
        }
    }

    /// How many values this node holds, itself included.
    pub fn size(&self) -> usize {
        1 + match &self.value {
            NodeValue::Seq(items) => items.iter().map(Node::size).sum(),
            NodeValue::Map(entries) => entries.iter().map(|(_, v)| v.size()).sum(),
            _ => 0,
        }
    }

    /// A short name of the value's type for messages: "a string", "a list", …
    pub fn type_name(&self) -> &'static str {
        match self.value {
            NodeValue::Null => "null",
            NodeValue::Bool(_) => "a boolean",
            NodeValue::Int(_) | NodeValue::Float(_) => "a number",
            NodeValue::Str(_) => "a string",
            NodeValue::Seq(_) => "a list",
            NodeValue::Map(_) => "a mapping",
        }
    }

    /// The text, when the node is text.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            NodeValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The number, when the node is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self.value {
            NodeValue::Int(i) => Some(i as f64),
            NodeValue::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The entries, when the node is a mapping.
    pub fn as_map(&self) -> Option<&[(Key, Node)]> {
        match &self.value {
            NodeValue::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The values, when the node is a list.
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            NodeValue::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// The value of `key`, when the node is a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.text == key)
            .map(|(_, v)| v)
    }

    /// Follows a path like `sections[1].criteria[0].levels[2].score`, as far as it goes:
    /// returns the deepest node that exists and whether the whole path was found.
    pub fn locate(&self, path: &str) -> (&Node, bool) {
        let mut node = self;
        for seg in path_segments(path) {
            let next = match seg {
                Segment::Key(k) => node.get(k),
                Segment::Index(i) => node.as_seq().and_then(|s| s.get(i)),
            };
            match next {
                Some(n) => node = n,
                None => return (node, false),
            }
        }
        (node, true)
    }

    /// Where a key of this mapping is written (the key itself), if present.
    pub fn key_pos(&self, key: &str) -> Option<Pos> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.text == key)
            .map(|(k, _)| k.pos)
    }

    /// The plain JSON value, positions dropped.
    pub fn to_json(&self) -> Value {
        match &self.value {
            NodeValue::Null => Value::Null,
            NodeValue::Bool(b) => Value::Bool(*b),
            NodeValue::Int(i) => Value::Number((*i).into()),
            NodeValue::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
            NodeValue::Str(s) => Value::String(s.clone()),
            NodeValue::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            NodeValue::Map(entries) => {
                let mut m = Map::new();
                for (k, v) in entries {
                    m.insert(k.text.clone(), v.to_json());
                }
                Value::Object(m)
            }
        }
    }
}

enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

fn path_segments(path: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, rest) = part.split_once('[').map_or((part, ""), |(k, r)| (k, r));
        if !key.is_empty() {
            out.push(Segment::Key(key));
        }
        for idx in rest.split('[') {
            if let Ok(i) = idx.trim_end_matches(']').parse() {
                out.push(Segment::Index(i));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(value: NodeValue, line: usize) -> Node {
        Node::new(value, Pos::new(line, 1))
    }

    #[test]
    fn locate_walks_keys_and_indexes_and_stops_at_the_deepest_node() {
        let leaf = n(NodeValue::Int(3), 4);
        let item = n(
            NodeValue::Map(vec![(
                Key {
                    text: "w".into(),
                    pos: Pos::new(4, 1),
                },
                leaf,
            )]),
            3,
        );
        let list = n(NodeValue::Seq(vec![n(NodeValue::Null, 2), item]), 2);
        let root = n(
            NodeValue::Map(vec![(
                Key {
                    text: "criteria".into(),
                    pos: Pos::new(1, 1),
                },
                list,
            )]),
            1,
        );
        assert_eq!(root.locate("criteria[1].w").0.pos.line, 4);
        assert!(root.locate("criteria[1].w").1);
        let (node, found) = root.locate("criteria[1].missing");
        assert!(!found);
        assert_eq!(node.pos.line, 3);
        assert_eq!(
            root.to_json(),
            serde_json::json!({"criteria": [null, {"w": 3}]})
        );
    }
}
