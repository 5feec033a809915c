//! Typed access to a check's `args`, reporting unknown and mistyped arguments.

use serde_json::{Map, Value};

use super::SpecError;

/// A check's `args`, read field by field; each field read is marked, so the rest can be
/// reported as unknown.
pub struct Args<'a> {
    map: &'a Map<String, Value>,
    used: Vec<&'a str>,
}

impl<'a> Args<'a> {
    /// Reads `map`.
    pub fn new(map: &'a Map<String, Value>) -> Self {
        Self {
            map,
            used: Vec::new(),
        }
    }

    /// The value of `key` (null counts as absent), marked as read.
    pub fn get(&mut self, key: &'a str) -> Option<&'a Value> {
        self.used.push(key);
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// Whether `key` is given (and not null), without marking it.
    pub fn has(&self, key: &str) -> bool {
        self.map.get(key).is_some_and(|v| !v.is_null())
    }

    fn field(key: &str) -> String {
        format!("args.{key}")
    }

    /// `key` as text (a number as written).
    pub fn string(&mut self, key: &'a str) -> Result<Option<String>, SpecError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(SpecError::new(
                Self::field(key),
                format!("`{key}` must be text"),
            )),
        }
    }

    /// `key` as text; an error when it is missing.
    pub fn required_string(&mut self, key: &'a str) -> Result<String, SpecError> {
        self.string(key)?
            .ok_or_else(|| SpecError::new("args", format!("this check needs `{key}` in args")))
    }

    /// `key` as a finite number.
    pub fn number(&mut self, key: &'a str) -> Result<Option<f64>, SpecError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => {
                n.as_f64()
                    .filter(|x| x.is_finite())
                    .map(Some)
                    .ok_or_else(|| {
                        SpecError::new(Self::field(key), format!("`{key}` must be a finite number"))
                    })
            }
            Some(_) => Err(SpecError::new(
                Self::field(key),
                format!("`{key}` must be a number"),
            )),
        }
    }

    /// `key` as true or false, `default` when absent.
    pub fn boolean(&mut self, key: &'a str, default: bool) -> Result<bool, SpecError> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(SpecError::new(
                Self::field(key),
                format!("`{key}` must be true or false"),
            )),
        }
    }

    /// Text or a list of text.
    pub fn strings(&mut self, key: &'a str) -> Result<Option<Vec<String>>, SpecError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(vec![s.clone()])),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    _ => Err(SpecError::new(
                        Self::field(key),
                        format!("`{key}` must be a list of text"),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(SpecError::new(
                Self::field(key),
                format!("`{key}` must be text or a list of text"),
            )),
        }
    }

    /// Errors on the first argument no accessor asked for.
    pub fn finish(&self) -> Result<(), SpecError> {
        for key in self.map.keys() {
            if !self.used.contains(&key.as_str()) {
                let hint = crate::formats::fields::nearest(key, &self.used).map_or_else(
                    || format!("; this check takes: {}", self.used.join(", ")),
                    |k| format!("; did you mean `{k}`?"),
                );
                return Err(SpecError::new(
                    Self::field(key),
                    format!("unknown argument `{key}`{hint}"),
                ));
            }
        }
        Ok(())
    }
}
