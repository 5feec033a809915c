//! JSON → [`Node`] with positions. A small strict parser: duplicate keys, NaN and
//! trailing garbage are located errors.
//!
//! Written here rather than taken from `serde_json` because every problem found later
//! (a bad weight, an unknown check, a duplicate id) must point at a line and column, and
//! `serde_json::Value` keeps no positions; `serde_json` reads everything without them.

use super::node::{Key, Node, NodeValue};
use crate::core::diag::{Diagnostic, Diagnostics, LineIndex};

const MAX_DEPTH: usize = 256;

/// Parses JSON into a located [`Node`] tree; every problem is located in `file`.
pub fn parse(file: &str, text: &str) -> Result<Node, Diagnostics> {
    let lines = LineIndex::new(text);
    parse_span(file, text, &lines, 0..text.len())
}

/// Parses the JSON value at `span` of `text`, with positions in the whole text
/// (for values embedded in a larger file, like a per-item rubric in a dataset).
pub fn parse_span(
    file: &str,
    text: &str,
    lines: &LineIndex<'_>,
    span: std::ops::Range<usize>,
) -> Result<Node, Diagnostics> {
    let end = span.end.min(text.len());
    let text = text.get(..end).unwrap_or(text);
    let mut p = JsonParser {
        file,
        bytes: text.as_bytes(),
        text,
        at: span.start,
        lines,
        depth: 0,
    };
    p.skip_ws();
    let node = p.value()?;
    p.skip_ws();
    if p.at < p.bytes.len() {
        return Err(p.fail("unexpected text after the JSON value"));
    }
    Ok(node)
}

struct JsonParser<'a> {
    file: &'a str,
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
    lines: &'a LineIndex<'a>,
    depth: usize,
}

impl JsonParser<'_> {
    fn fail(&self, message: &str) -> Diagnostics {
        self.fail_at(self.at, message)
    }

    fn fail_at(&self, offset: usize, message: &str) -> Diagnostics {
        Diagnostics::one(Diagnostic::at(
            self.file,
            self.lines.pos(offset),
            format!("JSON syntax error: {message}"),
        ))
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Result<Node, Diagnostics> {
        let start = self.at;
        let pos = self.lines.pos(start);
        let value = match self.bytes.get(self.at) {
            None => return Err(self.fail("the document ended where a value was expected")),
            Some(b'{') => self.object()?,
            Some(b'[') => self.array()?,
            Some(b'"') => NodeValue::Str(self.string()?),
            Some(b't') => self.word("true", NodeValue::Bool(true))?,
            Some(b'f') => self.word("false", NodeValue::Bool(false))?,
            Some(b'n') => self.word("null", NodeValue::Null)?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_)
                if ["NaN", "Infinity", "+Infinity"]
                    .iter()
                    .any(|w| self.text[self.at..].starts_with(w)) =>
            {
                return Err(
                    self.fail("NaN and Infinity are not JSON; write a finite number or null")
                );
            }
            Some(_) => {
                let ch = self.text[self.at..].chars().next().unwrap_or('?');
                return Err(self.fail(&format!(
                    "unexpected character '{ch}' where a value was expected"
                )));
            }
        };
        Ok(Node::new(value, pos))
    }

    fn enter(&mut self) -> Result<(), Diagnostics> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.fail(&format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn object(&mut self) -> Result<NodeValue, Diagnostics> {
        self.enter()?;
        self.at += 1;
        let mut entries: Vec<(Key, Node)> = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            self.depth -= 1;
            return Ok(NodeValue::Map(entries));
        }
        // Keys seen, for duplicates in one lookup each (an object may have many keys).
        let mut seen = std::collections::HashSet::new();
        loop {
            self.skip_ws();
            let kstart = self.at;
            // Asked for before the value is read: positions go forward, so on one long line
            // (minified JSON) each is counted from the last, not from the line's start.
            let key_pos = self.lines.pos(kstart);
            if self.bytes.get(self.at) == Some(&b'}') && !entries.is_empty() {
                return Err(self.fail("trailing comma before '}'; remove the last comma"));
            }
            if self.bytes.get(self.at) != Some(&b'"') {
                return Err(self.fail("expected a quoted key"));
            }
            let key = self.string()?;
            if !seen.insert(key.clone()) {
                return Err(Diagnostics::one(Diagnostic::at(
                    self.file,
                    key_pos,
                    format!("duplicate key '{key}'; each key may appear once in an object"),
                )));
            }
            self.skip_ws();
            if self.bytes.get(self.at) != Some(&b':') {
                return Err(self.fail("expected ':' after the key"));
            }
            self.at += 1;
            self.skip_ws();
            let value = self.value()?;
            entries.push((
                Key {
                    text: key,
                    pos: key_pos,
                },
                value,
            ));
            self.skip_ws();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    self.depth -= 1;
                    return Ok(NodeValue::Map(entries));
                }
                _ => return Err(self.fail("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self) -> Result<NodeValue, Diagnostics> {
        self.enter()?;
        self.at += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            self.depth -= 1;
            return Ok(NodeValue::Seq(items));
        }
        loop {
            self.skip_ws();
            if self.bytes.get(self.at) == Some(&b']') && !items.is_empty() {
                return Err(self.fail("trailing comma before ']'; remove the last comma"));
            }
            items.push(self.value()?);
            self.skip_ws();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    self.depth -= 1;
                    return Ok(NodeValue::Seq(items));
                }
                _ => return Err(self.fail("expected ',' or ']'")),
            }
        }
    }

    fn word(&mut self, word: &str, value: NodeValue) -> Result<NodeValue, Diagnostics> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.fail("unexpected word; JSON has only true, false and null (NaN and Infinity are not JSON)"))
        }
    }

    fn number(&mut self) -> Result<NodeValue, Diagnostics> {
        let start = self.at;
        if self.bytes.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        let digits_start = self.at;
        while self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        if self.at == digits_start {
            return Err(self.fail("a number needs digits (NaN and Infinity are not JSON)"));
        }
        let mut is_float = false;
        if self.bytes.get(self.at) == Some(&b'.') {
            is_float = true;
            self.at += 1;
            let f = self.at;
            while self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
                self.at += 1;
            }
            if self.at == f {
                return Err(self.fail("a decimal point needs digits after it"));
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.at) {
            is_float = true;
            self.at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                self.at += 1;
            }
            let e = self.at;
            while self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
                self.at += 1;
            }
            if self.at == e {
                return Err(self.fail("an exponent needs digits"));
            }
        }
        let text = &self.text[start..self.at];
        if !is_float && let Ok(i) = text.parse::<i64>() {
            return Ok(NodeValue::Int(i));
        }
        text.parse::<f64>()
            .map(NodeValue::Float)
            .map_err(|_| self.fail_at(start, "number out of range"))
    }

    fn string(&mut self) -> Result<String, Diagnostics> {
        let start = self.at;
        self.at += 1;
        let mut out = String::new();
        loop {
            let run = self.at;
            while let Some(&b) = self.bytes.get(self.at) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            out.push_str(&self.text[run..self.at]);
            match self.bytes.get(self.at) {
                None => return Err(self.fail_at(start, "unterminated string")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let esc = self.bytes.get(self.at).copied();
                    self.at += 1;
                    match esc {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => out.push(self.unicode_escape()?),
                        _ => return Err(self.fail_at(self.at - 2, "invalid escape in string")),
                    }
                }
                Some(_) => return Err(self.fail("control character in string; escape it")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, Diagnostics> {
        let hex = self
            .text
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.fail("truncated \\u escape"))?;
        let v = u32::from_str_radix(hex, 16).map_err(|_| self.fail("invalid \\u escape"))?;
        self.at += 4;
        Ok(v)
    }

    fn unicode_escape(&mut self) -> Result<char, Diagnostics> {
        let hi = self.hex4()?;
        if (0xD800..0xDC00).contains(&hi) {
            if self.text[self.at..].starts_with("\\u") {
                self.at += 2;
                let lo = self.hex4()?;
                if (0xDC00..0xE000).contains(&lo) {
                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    return char::from_u32(c).ok_or_else(|| self.fail("invalid surrogate pair"));
                }
            }
            return Err(self.fail("unpaired surrogate in \\u escape"));
        }
        char::from_u32(hi).ok_or_else(|| self.fail("invalid \\u escape"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::diag::Pos;

    #[test]
    fn parses_values_with_positions() {
        let n = parse(
            "t.json",
            "{\n  \"a\": [1, 2.5, \"x\\u00e9\\ud83d\\ude00\"],\n  \"b\": null\n}",
        )
        .unwrap();
        assert_eq!(
            n.to_json(),
            serde_json::json!({"a": [1, 2.5, "xé😀"], "b": null})
        );
        assert_eq!(n.locate("a[2]").0.pos, Pos::new(2, 17));
        assert_eq!(n.key_pos("b"), Some(Pos::new(3, 3)));
    }

    #[test]
    fn errors_are_located() {
        let cases = [
            (
                "{\"a\": 1,}",
                "t.json:1:9: JSON syntax error: trailing comma before '}'; remove the last comma",
            ),
            (
                "{\"a\": NaN}",
                "t.json:1:7: JSON syntax error: NaN and Infinity are not JSON; write a finite number or null",
            ),
            (
                "{\"a\": x}",
                "t.json:1:7: JSON syntax error: unexpected character 'x' where a value was expected",
            ),
            (
                "[1, 2",
                "t.json:1:6: JSON syntax error: expected ',' or ']'",
            ),
            (
                "{\"a\": 1, \"a\": 2}",
                "t.json:1:10: duplicate key 'a'; each key may appear once in an object",
            ),
            (
                "\"abc",
                "t.json:1:1: JSON syntax error: unterminated string",
            ),
            (
                "1 2",
                "t.json:1:3: JSON syntax error: unexpected text after the JSON value",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(
                parse("t.json", text).unwrap_err().to_string(),
                want,
                "{text}"
            );
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let text = "[".repeat(10_000);
        assert!(
            parse("t.json", &text)
                .unwrap_err()
                .to_string()
                .contains("nesting deeper")
        );
    }
}
