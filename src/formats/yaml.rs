//! YAML → [`Node`] with positions, from the saphyr event parser (the tree is built here,
//! not by a YAML-to-serde crate, so every node keeps where it was written).
//!
//! Supports anchors, aliases and `<<` merge keys (real rubric files use them); rejects
//! duplicate keys and non-scalar keys with a located message.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};

use super::node::{Key, Node, NodeValue};
use crate::core::diag::{Diagnostic, Diagnostics, Pos};

/// Parses the first document of `text`. An empty document is `Null`.
pub fn parse(file: &str, text: &str) -> Result<Node, Diagnostics> {
    let mut builder = Builder {
        file,
        anchors: HashMap::new(),
        expanded: 0,
        problems: Vec::new(),
        depth: 0,
    };
    let mut parser = Parser::new_from_str(text);
    let root = builder.document(&mut parser)?;
    builder.only_document(&mut parser)?;
    if builder.problems.is_empty() {
        Ok(root)
    } else {
        Err(Diagnostics(builder.problems).sorted())
    }
}

const MAX_DEPTH: usize = 256;
/// Aliases may copy at most this many values in one document.
const MAX_EXPANDED: usize = 1_000_000;

struct Builder<'f> {
    file: &'f str,
    anchors: HashMap<usize, (Node, usize)>,
    /// Values copied by aliases so far, against [`MAX_EXPANDED`].
    expanded: usize,
    problems: Vec<Diagnostic>,
    depth: usize,
}

fn pos_of(span: &Span) -> Pos {
    Pos::new(span.start.line(), span.start.col() + 1)
}

type Ev<'i> = (Event<'i>, Span);

impl Builder<'_> {
    fn next<'i>(
        &self,
        parser: &mut Parser<'i, saphyr_parser::StrInput<'i>>,
    ) -> Result<Ev<'i>, Diagnostics> {
        match parser.next_event() {
            Some(Ok(ev)) => Ok(ev),
            Some(Err(e)) => {
                let m = e.marker();
                Err(Diagnostics::one(Diagnostic::at(
                    self.file,
                    Pos::new(m.line(), m.col() + 1),
                    format!("YAML syntax error: {}", e.info()),
                )))
            }
            None => Err(Diagnostics::one(Diagnostic::whole(
                self.file,
                "YAML ended unexpectedly",
            ))),
        }
    }

    fn document<'i>(
        &mut self,
        parser: &mut Parser<'i, saphyr_parser::StrInput<'i>>,
    ) -> Result<Node, Diagnostics> {
        loop {
            let (ev, span) = self.next(parser)?;
            match ev {
                Event::StreamStart | Event::DocumentStart(_) | Event::Nothing => {}
                Event::StreamEnd => return Ok(Node::new(NodeValue::Null, Pos::new(1, 1))),
                other => return self.node(parser, other, span),
            }
        }
    }

    /// After the first document: its end and the stream's, nothing else. A second document
    /// (`---` and more) would be silently dropped: it is refused where it starts.
    fn only_document<'i>(
        &self,
        parser: &mut Parser<'i, saphyr_parser::StrInput<'i>>,
    ) -> Result<(), Diagnostics> {
        loop {
            let Some(next) = parser.next_event() else {
                return Ok(());
            };
            let (ev, span) = match next {
                Ok(ev) => ev,
                Err(e) => {
                    let m = e.marker();
                    return Err(Diagnostics::one(Diagnostic::at(
                        self.file,
                        Pos::new(m.line(), m.col() + 1),
                        format!("YAML syntax error: {}", e.info()),
                    )));
                }
            };
            match ev {
                Event::DocumentEnd | Event::Nothing => {}
                Event::StreamEnd => return Ok(()),
                _ => {
                    return Err(Diagnostics::one(Diagnostic::at(
                        self.file,
                        pos_of(&span),
                        "a second YAML document starts here; rubricate reads one document per file (split it into files)",
                    )));
                }
            }
        }
    }

    fn node<'i>(
        &mut self,
        parser: &mut Parser<'i, saphyr_parser::StrInput<'i>>,
        ev: Event<'i>,
        span: Span,
    ) -> Result<Node, Diagnostics> {
        let pos = pos_of(&span);
        match ev {
            Event::Scalar(text, style, anchor, tag) => {
                let mut node = Node::new(resolve_scalar(&text, style, tag.as_deref()), pos);
                if matches!(node.value, NodeValue::Int(_) | NodeValue::Float(_)) {
                    node.raw = Some(text.as_ref().into());
                }
                self.remember(anchor, &node);
                Ok(node)
            }
            Event::Alias(id) => match self.anchors.get(&id) {
                Some((n, size)) => {
                    self.expanded += size;
                    if self.expanded > MAX_EXPANDED {
                        return Err(Diagnostics::one(Diagnostic::at(
                            self.file,
                            pos,
                            format!(
                                "YAML aliases expand to more than {MAX_EXPANDED} values; refusing to expand (an alias bomb?)"
                            ),
                        )));
                    }
                    let mut n = n.clone();
                    n.pos = pos;
                    Ok(n)
                }
                None => Err(Diagnostics::one(Diagnostic::at(
                    self.file,
                    pos,
                    "YAML alias refers to an unknown anchor",
                ))),
            },
            Event::SequenceStart(anchor, _) => {
                self.enter(pos)?;
                let mut items = Vec::new();
                loop {
                    let (ev, span) = self.next(parser)?;
                    if matches!(ev, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.node(parser, ev, span)?);
                }
                self.depth -= 1;
                let node = Node::new(NodeValue::Seq(items), pos);
                self.remember(anchor, &node);
                Ok(node)
            }
            Event::MappingStart(anchor, _) => {
                self.enter(pos)?;
                let mut entries: Vec<(Key, Node)> = Vec::new();
                let mut merged: Vec<(Key, Node)> = Vec::new();
                // Keys seen, so a duplicate is found in one lookup (a mapping may be large).
                let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
                loop {
                    let (ev, kspan) = self.next(parser)?;
                    if matches!(ev, Event::MappingEnd) {
                        break;
                    }
                    let kpos = pos_of(&kspan);
                    let key = match &ev {
                        Event::Scalar(text, ..) => Some(text.to_string()),
                        _ => None,
                    };
                    let key_node = self.node(parser, ev, kspan)?;
                    let (ev, vspan) = self.next(parser)?;
                    let value = self.node(parser, ev, vspan)?;
                    let Some(key) = key.or_else(|| alias_key(&key_node)) else {
                        self.problems.push(Diagnostic::at(
                            self.file,
                            kpos,
                            "mapping keys must be plain text",
                        ));
                        continue;
                    };
                    if key == "<<" {
                        self.merge(&value, &mut merged);
                        continue;
                    }
                    if !seen.insert(key.clone()) {
                        self.problems.push(Diagnostic::at(
                            self.file,
                            kpos,
                            format!("duplicate key '{key}'; each key may appear once in a mapping"),
                        ));
                        continue;
                    }
                    entries.push((
                        Key {
                            text: key,
                            pos: kpos,
                        },
                        value,
                    ));
                }
                for (k, v) in merged {
                    if seen.insert(k.text.clone()) {
                        entries.push((k, v));
                    }
                }
                self.depth -= 1;
                let node = Node::new(NodeValue::Map(entries), pos);
                self.remember(anchor, &node);
                Ok(node)
            }
            _ => Err(Diagnostics::one(Diagnostic::at(
                self.file,
                pos,
                "unexpected YAML structure",
            ))),
        }
    }

    fn enter(&mut self, pos: Pos) -> Result<(), Diagnostics> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Diagnostics::one(Diagnostic::at(
                self.file,
                pos,
                format!("YAML nests deeper than {MAX_DEPTH} levels"),
            )));
        }
        Ok(())
    }

    fn merge(&mut self, value: &Node, into: &mut Vec<(Key, Node)>) {
        match &value.value {
            NodeValue::Map(m) => {
                for (k, v) in m {
                    if !into.iter().any(|(e, _)| e.text == k.text) {
                        into.push((k.clone(), v.clone()));
                    }
                }
            }
            NodeValue::Seq(items) => {
                for item in items {
                    self.merge(item, into);
                }
            }
            _ => self.problems.push(Diagnostic::at(
                self.file,
                value.pos,
                "a `<<` merge key needs a mapping",
            )),
        }
    }

    fn remember(&mut self, anchor: usize, node: &Node) {
        if anchor > 0 {
            self.anchors.insert(anchor, (node.clone(), node.size()));
        }
    }
}

/// An alias used as a key resolves to its scalar text.
fn alias_key(node: &Node) -> Option<String> {
    match &node.value {
        NodeValue::Str(s) => Some(s.clone()),
        NodeValue::Int(i) => Some(i.to_string()),
        NodeValue::Float(f) => Some(f.to_string()),
        NodeValue::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// YAML 1.2 core schema resolution of a scalar.
fn resolve_scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> NodeValue {
    if let Some(tag) = tag.filter(|t| t.is_yaml_core_schema()) {
        return match tag.suffix.as_str() {
            "int" => text
                .trim()
                .parse()
                .map_or_else(|_| NodeValue::Str(text.to_owned()), NodeValue::Int),
            "float" => text
                .trim()
                .parse()
                .map_or_else(|_| NodeValue::Str(text.to_owned()), NodeValue::Float),
            "bool" => resolve_plain(text),
            "null" => NodeValue::Null,
            // `!!str` and tags we do not know keep the text as it is.
            _ => NodeValue::Str(text.to_owned()),
        };
    }
    if style != ScalarStyle::Plain {
        return NodeValue::Str(text.to_owned());
    }
    resolve_plain(text)
}

fn resolve_plain(text: &str) -> NodeValue {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return NodeValue::Null,
        "true" | "True" | "TRUE" => return NodeValue::Bool(true),
        "false" | "False" | "FALSE" => return NodeValue::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return NodeValue::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return NodeValue::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return NodeValue::Float(f64::NAN),
        _ => {}
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && let Ok(i) = text.parse::<i64>()
    {
        return NodeValue::Int(i);
    }
    if let Some(hex) = text.strip_prefix("0x")
        && let Ok(i) = i64::from_str_radix(hex, 16)
    {
        return NodeValue::Int(i);
    }
    if let Some(oct) = text.strip_prefix("0o")
        && let Ok(i) = i64::from_str_radix(oct, 8)
    {
        return NodeValue::Int(i);
    }
    if looks_like_float(digits)
        && let Ok(f) = text.parse::<f64>()
    {
        return NodeValue::Float(f);
    }
    NodeValue::Str(text.to_owned())
}

/// `[0-9]*(\.[0-9]*)?([eE][-+]?[0-9]+)?` with at least one digit before the exponent.
fn looks_like_float(s: &str) -> bool {
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut parts = mantissa.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next().unwrap_or("");
    let ok_mantissa = (!int.is_empty() || !frac.is_empty())
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit());
    let ok_exp = exp.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
    });
    ok_mantissa && ok_exp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Node {
        match parse("t.yaml", text) {
            Ok(n) => n,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn scalars_resolve_like_yaml_1_2() {
        let n =
            p("a: 1\nb: 1.5\nc: true\nd: ~\ne: '1'\nf: 1.0.0\ng: -2\nh: .nan\ni: 1e3\nj: yes\n");
        let j = n.to_json();
        assert_eq!(j["a"], 1);
        assert_eq!(j["b"], 1.5);
        assert_eq!(j["c"], true);
        assert!(j["d"].is_null());
        assert_eq!(j["e"], "1");
        assert_eq!(j["f"], "1.0.0");
        assert_eq!(j["g"], -2);
        assert!(n.get("h").and_then(Node::as_f64).is_some_and(f64::is_nan));
        assert_eq!(j["i"], 1000.0);
        assert_eq!(j["j"], "yes");
    }

    #[test]
    fn positions_are_one_based() {
        let n = p("x: 1\ncriteria:\n  - id: a\n    weight: 2\n");
        let (w, found) = n.locate("criteria[0].weight");
        assert!(found);
        assert_eq!(w.pos, Pos::new(4, 13));
        assert_eq!(n.key_pos("criteria"), Some(Pos::new(2, 1)));
    }

    #[test]
    fn anchors_aliases_and_merge_keys() {
        let n = p("base: &b {w: 1, r: x}\nc: *b\nd:\n  <<: *b\n  w: 2\n");
        let j = n.to_json();
        assert_eq!(j["c"], serde_json::json!({"w": 1, "r": "x"}));
        assert_eq!(j["d"], serde_json::json!({"w": 2, "r": "x"}));
    }

    #[test]
    fn duplicate_keys_and_syntax_errors_are_located() {
        let e = parse("t.yaml", "a: 1\na: 2\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.yaml:2:1: duplicate key 'a'; each key may appear once in a mapping"
        );
        let e = parse("t.yaml", "a: [1, 2\nb: 3\n").unwrap_err();
        assert!(e.to_string().starts_with("t.yaml:"), "{e}");
        assert!(e.to_string().contains("YAML syntax error"), "{e}");
    }
}
