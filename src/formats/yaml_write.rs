//! Writes a JSON value as block-style YAML, so that every file rubricate writes is read back
//! as the same value — by rubricate's reader (`formats::yaml`, YAML 1.2) and by the YAML 1.1
//! readers other systems use (`yes`, `on`, `~` are quoted). Kept small and strict rather
//! than clever: a string is written plain only when it is ordinary words; text of several
//! lines as a literal block (`|`, `|-`); anything else double-quoted with escapes. The
//! round trip is proven over arbitrary values by the property test below.

use std::fmt::Write as _;

use serde_json::Value;

/// `value` as a YAML document (ending with a newline).
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(m) if !m.is_empty() => map(&mut out, m, 0),
        Value::Array(a) if !a.is_empty() => seq(&mut out, a, 0),
        other => {
            inline(&mut out, other, 0);
            out.push('\n');
        }
    }
    out
}

/// A mapping's entries, each on its own line at `indent`.
fn map(out: &mut String, m: &serde_json::Map<String, Value>, indent: usize) {
    for (k, v) in m {
        pad(out, indent);
        scalar_text(out, k, indent, true);
        out.push(':');
        match v {
            Value::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                map(out, inner, indent + 2);
            }
            // A sequence under a key starts at the key's own column, as is usual.
            Value::Array(items) if !items.is_empty() => {
                out.push('\n');
                seq(out, items, indent);
            }
            other => {
                out.push(' ');
                inline(out, other, indent);
                out.push('\n');
            }
        }
    }
}

/// A sequence's items, each `- ` at `indent`; a mapping or sequence item starts on the
/// dash's line.
fn seq(out: &mut String, items: &[Value], indent: usize) {
    for item in items {
        pad(out, indent);
        out.push_str("- ");
        let nested = match item {
            Value::Object(m) if !m.is_empty() => {
                let mut body = String::new();
                map(&mut body, m, indent + 2);
                Some(body)
            }
            Value::Array(a) if !a.is_empty() => {
                let mut body = String::new();
                seq(&mut body, a, indent + 2);
                Some(body)
            }
            _ => None,
        };
        if let Some(body) = nested {
            // Its first line goes after the dash, without its indentation (a key or a
            // dash never starts with a space).
            out.push_str(body.trim_start_matches(' '));
        } else {
            inline(out, item, indent);
            out.push('\n');
        }
    }
}

/// A value written where the line already holds its key or dash: a scalar, or an empty
/// collection. A literal block's lines go below at `indent + 2`.
fn inline(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => scalar_text(out, s, indent, false),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// A string, plain when that reads back as the same string, else as a literal block (not
/// for keys) or double-quoted.
fn scalar_text(out: &mut String, s: &str, indent: usize, key: bool) {
    if is_plain_safe(s) {
        out.push_str(s);
    } else if !key && let Some(chomp) = literal_chomping(s) {
        out.push('|');
        out.push_str(chomp);
        for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
            out.push('\n');
            if !line.is_empty() {
                pad(out, indent + 2);
                out.push_str(line);
            }
        }
    } else {
        double_quoted(out, s);
    }
}

/// Words every YAML reader (1.1 and 1.2) takes for something other than a string.
const RESERVED: &[&str] = &["null", "true", "false", "yes", "no", "on", "off", "y", "n"];

/// Ordinary text on one line: starts with a letter (so never an indicator, a number or a
/// date), holds no `:` or `#` (which could start a mapping or a comment), no tab and
/// nothing that must be escaped, does not end with a space, and is not a word a reader
/// resolves to null or a boolean.
fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    (first.is_alphabetic() || is_version(s))
        && !s.ends_with(' ')
        && !s
            .chars()
            .any(|c| matches!(c, ':' | '#' | '\t' | '\n') || needs_escape(c))
        && !RESERVED.iter().any(|r| s.eq_ignore_ascii_case(r))
}

/// A version of three or more numbers (`1.0.0`, `2.1.0-rc.1`, `1.2.3+b.4`): written plain,
/// as rubric versions always were, since no YAML reader takes it for a number or a date
/// (a float has one dot at most, a date has dashes between its numbers).
fn is_version(s: &str) -> bool {
    let end = s.find(['-', '+']).unwrap_or(s.len());
    let (numbers, rest) = s.split_at(end);
    let mut parts = numbers.split('.');
    numbers.split('.').count() >= 3
        && parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && rest.get(1..).is_none_or(|tail| {
            !tail.is_empty()
                && tail
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
        })
}

/// The chomping indicator for `s` as a literal block, or `None` when a literal block
/// would not read back exactly: one line only, a first line starting with a space, a
/// character that must be escaped, a line of spaces alone, or more than one final newline.
fn literal_chomping(s: &str) -> Option<&'static str> {
    let body = s.strip_suffix('\n');
    let text = body.unwrap_or(s);
    let fits = text.contains('\n')
        && !text.starts_with([' ', '\n'])
        && !text.ends_with('\n')
        && !text.chars().any(needs_escape)
        && text
            .split('\n')
            .all(|line| line.is_empty() || !line.trim_matches([' ', '\t']).is_empty());
    fits.then_some(if body.is_some() { "" } else { "-" })
}

/// Characters written as escapes in a double-quoted string: controls (a tab or newline is
/// fine in a literal block, not here), the characters YAML 1.1 counts as line breaks, a
/// byte-order mark, and the two non-characters YAML does not allow in a file.
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n')
        || matches!(
            c,
            '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
}

fn double_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn pad(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn read_back(text: &str) -> Value {
        crate::formats::yaml::parse("t.yaml", text)
            .unwrap_or_else(|d| panic!("{d}\n--- written:\n{text}"))
            .to_json()
    }

    #[test]
    fn ordinary_text_is_plain_and_the_rest_says_what_it_is() {
        let v = json!({
            "id": "answer quality",
            "version": "1.0",
            "semver": "1.2.0-rc.1",
            "yes": "no",
            "tilde": "~",
            "empty": "",
            "number": 7,
            "weight": 1.5,
            "text": "line one\nline two\n",
            "cut": "a\nb",
            "colon": "a: b",
            "list": ["x", {"k": "v", "n": null}, [], {}],
        });
        let text = to_yaml(&v);
        assert_eq!(
            text,
            "id: answer quality\nversion: \"1.0\"\nsemver: 1.2.0-rc.1\n\"yes\": \"no\"\ntilde: \"~\"\nempty: \"\"\n\
             number: 7\nweight: 1.5\ntext: |\n  line one\n  line two\ncut: |-\n  a\n  b\n\
             colon: \"a: b\"\nlist:\n- x\n- k: v\n  \"n\": null\n- []\n- {}\n"
        );
        assert_eq!(read_back(&text), v);
    }

    /// Strings that have tripped YAML writers: specials of both YAML versions, numbers as
    /// text, indicators, spaces at the ends, line breaks of every kind, controls.
    fn nasty_string() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[ a-z:#'\"\\-\\n\\t\\r|>~!&*%@`{}\\[\\],?]{0,12}",
            prop::sample::select(vec![
                "yes",
                "No",
                "ON",
                "off",
                "y",
                "N",
                "~",
                "null",
                "Null",
                "true",
                "FALSE",
                "1",
                "-1",
                "1.0",
                "1e3",
                ".inf",
                "-.Inf",
                ".nan",
                "0x1f",
                "0o17",
                "+1",
                "007",
                "- a",
                "? a",
                ": a",
                "a #b",
                "a:",
                "#x",
                "---",
                "...",
                " lead",
                "trail ",
                "\u{85}",
                "\u{2028}",
                "\u{feff}a",
                "a\n\nb",
                "a\n \nb",
                "\n",
                "\na",
                "a\n\n",
                " a\nb",
                "a\r\nb",
                "tab\there",
                "é ü 日本",
                "it's ok!",
                "a:b",
                "C# code",
                "x\u{fffe}",
                "a - b",
                "a 'b' \"c\"",
                "1.0.0",
                "1.0.0-rc.1",
                "10.20.30+b.1",
                "1.0.0.0",
                "1.0.0-",
                "1..0",
                "1.0.0 x",
                "2024-01-02",
                "1.0",
            ])
            .prop_map(str::to_owned),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            nasty_string().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((nasty_string(), inner), 0..6)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn every_value_reads_back_as_itself(v in value()) {
            let text = to_yaml(&v);
            prop_assert_eq!(read_back(&text), v, "written:\n{}", text);
        }
    }
}
