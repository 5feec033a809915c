//! Checks on the submission as JSON: is it JSON, and what is at a path.

use serde_json::Value;

use super::text::range_text;
use super::{Args, Check, CheckError, CheckInput, CheckOutput, SpecError};

#[derive(Debug)]
struct IsJson;

pub fn is_json() -> Box<dyn Check> {
    Box::new(IsJson)
}

impl Check for IsJson {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        Ok(match input.json() {
            Ok(v) => CheckOutput::binary(
                true,
                None,
                format!("valid JSON ({})", super::super::schema::json_type(v)),
            ),
            Err(e) => CheckOutput::binary(false, None, e),
        })
    }
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// Parses `$.a.b[0]`, `$['a b'][2]`, `a.b` or a JSON pointer `/a/b/0`.
fn parse_path(path: &str) -> Result<Vec<Step>, String> {
    let path = path.trim();
    if let Some(rest) = path.strip_prefix('/') {
        return Ok(rest
            .split('/')
            .map(|seg| {
                let seg = seg.replace("~1", "/").replace("~0", "~");
                seg.parse().map_or(Step::Key(seg), Step::Index)
            })
            .collect());
    }
    let mut steps = Vec::new();
    let rest = path.strip_prefix('$').unwrap_or(path);
    let chars: Vec<char> = rest.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => i += 1,
            '[' => {
                let close = chars[i..]
                    .iter()
                    .position(|c| *c == ']')
                    .ok_or("unclosed '[' in path")?
                    + i;
                let inner: String = chars[i + 1..close].iter().collect();
                let inner = inner.trim();
                if let Some(q) = inner
                    .strip_prefix(['\'', '"'])
                    .and_then(|s| s.strip_suffix(['\'', '"']))
                {
                    steps.push(Step::Key(q.to_owned()));
                } else {
                    steps.push(Step::Index(inner.parse().map_err(|_| {
                        format!("'[{inner}]' is not an array index or a quoted key")
                    })?));
                }
                i = close + 1;
            }
            _ => {
                let start = i;
                while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                    i += 1;
                }
                steps.push(Step::Key(chars[start..i].iter().collect()));
            }
        }
    }
    Ok(steps)
}

pub fn lookup<'v>(value: &'v Value, steps: &[Step]) -> Option<&'v Value> {
    steps.iter().try_fold(value, |v, s| match s {
        Step::Key(k) => v.get(k.as_str()),
        Step::Index(i) => v.get(*i),
    })
}

#[derive(Debug)]
enum Expect {
    Exists(bool),
    Equals(Value),
    /// The bounds, and ` (allowed …)` written once.
    Length(Option<f64>, Option<f64>, String),
}

#[derive(Debug)]
struct JsonPath {
    path: String,
    steps: Vec<Step>,
    expect: Expect,
}

pub fn json_path(args: &mut Args<'_>) -> Result<Box<dyn Check>, SpecError> {
    let path = args.required_string("path")?;
    let steps = parse_path(&path).map_err(|m| SpecError::new("args.path", m))?;
    let exists = match args.get("exists") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => {
            return Err(SpecError::new(
                "args.exists",
                "`exists` must be true or false",
            ));
        }
    };
    let equals = args.get("equals").cloned();
    let min = args.number("min_length")?;
    let max = args.number("max_length")?;
    let expect = match (exists, equals, min.is_some() || max.is_some()) {
        (None, None, false) => Expect::Exists(true),
        (Some(b), None, false) => Expect::Exists(b),
        (None, Some(v), false) => Expect::Equals(v),
        (None, None, true) => {
            Expect::Length(min, max, format!(" (allowed {})", range_text(min, max)))
        }
        _ => {
            return Err(SpecError::new(
                "args",
                "give one of `exists`, `equals`, or `min_length`/`max_length`",
            ));
        }
    };
    Ok(Box::new(JsonPath {
        path,
        steps,
        expect,
    }))
}

impl Check for JsonPath {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let doc = match input.json() {
            Ok(v) => v,
            Err(e) => return Ok(CheckOutput::binary(false, None, e)),
        };
        let found = lookup(doc, &self.steps);
        let measure = found.and_then(|v| match v {
            Value::Array(a) => Some(a.len() as f64),
            Value::String(s) => Some(s.chars().count() as f64),
            Value::Object(o) => Some(o.len() as f64),
            Value::Number(n) => n.as_f64(),
            _ => None,
        });
        let p = &self.path;
        Ok(match (&self.expect, found) {
            (Expect::Exists(want), f) => {
                let ev = if f.is_some() {
                    format!("{p} exists")
                } else {
                    format!("{p} is missing")
                };
                CheckOutput::binary(f.is_some() == *want, measure, ev)
            }
            (Expect::Equals(want), Some(v)) => {
                let ev = if v == want {
                    format!("{p} = {want}")
                } else {
                    format!("{p} is {v}, expected {want}")
                };
                CheckOutput::binary(v == want, measure, ev)
            }
            (Expect::Length(lo, hi, allowed), Some(_)) => match measure {
                Some(n) => {
                    let met = lo.is_none_or(|m| n >= m) && hi.is_none_or(|m| n <= m);
                    CheckOutput::binary(met, Some(n), format!("{p} has length {n}{allowed}"))
                }
                None => CheckOutput::binary(
                    false,
                    None,
                    format!("{p} has no length (not a list, text or object)"),
                ),
            },
            (_, None) => CheckOutput::binary(false, None, format!("{p} is missing")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths() {
        let v = json!({"a": {"b c": [10, {"d": true}]}});
        assert_eq!(
            lookup(&v, &parse_path("$.a['b c'][1].d").unwrap()),
            Some(&json!(true))
        );
        assert_eq!(
            lookup(&v, &parse_path("/a/b c/0").unwrap()),
            Some(&json!(10))
        );
        assert_eq!(lookup(&v, &parse_path("a.x").unwrap()), None);
        assert!(parse_path("$.a[").is_err());
        assert!(parse_path("$.a[x]").is_err());
    }
}
