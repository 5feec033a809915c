//! Checks on the submission's text: containment, regex, equality, affixes, lengths, counts.

use regex::{Regex, RegexBuilder};

use super::{Args, Check, CheckError, CheckInput, CheckOutput, SpecError, line_col, quote};

/// Compiled regexes may not grow past this (defence against pathological patterns).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

#[derive(Debug)]
struct Contains {
    /// As written, for evidence.
    shown: Vec<String>,
    /// Literal matchers; case-insensitive ones match in the submission itself, so evidence
    /// quotes its own text at its own position.
    needles: Vec<Regex>,
    all: bool,
    negate: bool,
}

pub fn contains(args: &mut Args<'_>, negate: bool) -> Result<Box<dyn Check>, SpecError> {
    let case_sensitive = args.boolean("case_sensitive", false)?;
    let text = args.strings("text")?;
    let any = args.strings("any")?;
    let all = args.strings("all")?;
    let (shown, is_all) = match (text, any, all) {
        (Some(t), None, None) => (t, false),
        (None, Some(a), None) => (a, false),
        (None, None, Some(a)) => (a, true),
        _ => {
            return Err(SpecError::new(
                "args",
                "give exactly one of `text`, `any` or `all`",
            ));
        }
    };
    if shown.is_empty() || shown.iter().any(String::is_empty) {
        return Err(SpecError::new(
            "args",
            "the texts to look for must not be empty",
        ));
    }
    let needles = shown
        .iter()
        .map(|n| {
            build_regex(&regex::escape(n), !case_sensitive).map_err(|m| SpecError::new("args", m))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Box::new(Contains {
        shown,
        needles,
        all: is_all,
        negate,
    }))
}

impl Check for Contains {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let text = input.text();
        let mut evidence = Vec::new();
        let mut found = 0;
        for (re, shown) in self.needles.iter().zip(&self.shown) {
            match re.find(text) {
                Some(m) => {
                    found += 1;
                    let (l, c) = line_col(text, m.start());
                    evidence.push(format!(
                        "found {} at line {l}, column {c}",
                        quote(m.as_str())
                    ));
                }
                None => evidence.push(format!("{} not found", quote(shown))),
            }
        }
        let hit = if self.all {
            found == self.needles.len()
        } else {
            found > 0
        };
        let met = hit != self.negate;
        Ok(CheckOutput {
            verdict: verdict(met),
            measure: Some(found as f64),
            evidence,
        })
    }
}

fn verdict(met: bool) -> crate::model::Verdict {
    if met {
        crate::model::Verdict::Met
    } else {
        crate::model::Verdict::Unmet
    }
}

fn build_regex(pattern: &str, case_insensitive: bool) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .case_insensitive(case_insensitive)
        .multi_line(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            let detail = e.to_string();
            let last = detail.lines().last().unwrap_or("").trim();
            format!(
                "invalid regex {}: {}",
                quote(pattern),
                last.strip_prefix("error: ").unwrap_or(last)
            )
        })
}

#[derive(Debug)]
struct RegexCheck {
    re: Regex,
    negate: bool,
}

pub fn regex(args: &mut Args<'_>) -> Result<Box<dyn Check>, SpecError> {
    let pattern = args.required_string("pattern")?;
    let ci = args.boolean("case_insensitive", false)?;
    let negate = args.boolean("negate", false)?;
    let re = build_regex(&pattern, ci).map_err(|m| SpecError::new("args.pattern", m))?;
    Ok(Box::new(RegexCheck { re, negate }))
}

impl Check for RegexCheck {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let text = input.text();
        let (hit, evidence) = match self.re.find(text) {
            Some(m) => {
                let (l, c) = line_col(text, m.start());
                (
                    true,
                    format!("matched {} at line {l}, column {c}", quote(m.as_str())),
                )
            }
            None => (false, format!("no match for /{}/", self.re.as_str())),
        };
        Ok(CheckOutput::binary(
            hit != self.negate,
            Some(f64::from(u8::from(hit))),
            evidence,
        ))
    }
}

#[derive(Debug)]
struct Equals {
    value: String,
    trim: bool,
    case_sensitive: bool,
}

pub fn equals(args: &mut Args<'_>) -> Result<Box<dyn Check>, SpecError> {
    let value = args.required_string("value")?;
    let trim = args.boolean("trim", true)?;
    let case_sensitive = args.boolean("case_sensitive", true)?;
    Ok(Box::new(Equals {
        value,
        trim,
        case_sensitive,
    }))
}

impl Check for Equals {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let (a, b) = prepare(input.text(), &self.value, self.trim, self.case_sensitive);
        let met = a == b;
        let ev = if met {
            format!("equals {}", quote(&self.value))
        } else {
            format!(
                "{} differs from {}",
                quote(input.text()),
                quote(&self.value)
            )
        };
        Ok(CheckOutput::binary(met, None, ev))
    }
}

fn prepare(text: &str, value: &str, trim: bool, case_sensitive: bool) -> (String, String) {
    let (t, v) = if trim {
        (text.trim(), value.trim())
    } else {
        (text, value)
    };
    if case_sensitive {
        (t.to_owned(), v.to_owned())
    } else {
        (t.to_lowercase(), v.to_lowercase())
    }
}

#[derive(Debug)]
struct Affix {
    text: String,
    start: bool,
    case_sensitive: bool,
    trim: bool,
}

pub fn affix(args: &mut Args<'_>, start: bool) -> Result<Box<dyn Check>, SpecError> {
    let text = args.required_string("text")?;
    let case_sensitive = args.boolean("case_sensitive", true)?;
    let trim = args.boolean("trim", true)?;
    Ok(Box::new(Affix {
        text,
        start,
        case_sensitive,
        trim,
    }))
}

impl Check for Affix {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let (t, v) = prepare(input.text(), &self.text, self.trim, self.case_sensitive);
        let met = if self.start {
            t.starts_with(&v)
        } else {
            t.ends_with(&v)
        };
        let which = if self.start { "starts" } else { "ends" };
        let ev = if met {
            format!("{which} with {}", quote(&self.text))
        } else {
            format!(
                "does not {} with {}",
                &which[..which.len() - 1],
                quote(&self.text)
            )
        };
        Ok(CheckOutput::binary(met, None, ev))
    }
}

#[derive(Debug, Clone, Copy)]
pub enum Unit {
    Chars,
    Words,
}

#[derive(Debug)]
struct Bounds {
    unit: Unit,
    min: Option<f64>,
    max: Option<f64>,
    /// `(allowed at most 60)`, written once.
    allowed: String,
}

pub fn bounds(args: &mut Args<'_>, unit: Unit, inner: bool) -> Result<Box<dyn Check>, SpecError> {
    let min = args.number("min")?;
    let max = args.number("max")?;
    if min.is_none() && max.is_none() && !inner {
        return Err(SpecError::new(
            "args",
            "give `min`, `max` or both (or use this check inside map_levels)",
        ));
    }
    if let (Some(lo), Some(hi)) = (min, max)
        && lo > hi
    {
        return Err(SpecError::new(
            "args.min",
            format!("min {lo} is above max {hi}"),
        ));
    }
    Ok(Box::new(Bounds {
        unit,
        min,
        max,
        allowed: format!(" (allowed {})", range_text(min, max)),
    }))
}

pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

impl Check for Bounds {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let (n, unit) = match self.unit {
            Unit::Chars => (input.text().chars().count(), "character"),
            Unit::Words => (word_count(input.text()), "word"),
        };
        let x = n as f64;
        let met = self.min.is_none_or(|m| x >= m) && self.max.is_none_or(|m| x <= m);
        let mut reason = plural(n, unit);
        reason.push_str(&self.allowed);
        Ok(CheckOutput::binary(met, Some(x), reason))
    }
}

/// `1 sentence`, `3 sentences`.
pub fn plural(n: usize, word: &str) -> String {
    match n {
        1 => format!("1 {word}"),
        _ if word.ends_with("ch") || word.ends_with('s') => format!("{n} {word}es"),
        _ => format!("{n} {word}s"),
    }
}

pub fn range_text(min: Option<f64>, max: Option<f64>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!("{a}..{b}"),
        (Some(a), None) => format!("at least {a}"),
        (None, Some(b)) => format!("at most {b}"),
        (None, None) => "any".into(),
    }
}

#[derive(Debug)]
struct MaxSentences {
    n: f64,
}

pub fn max_sentences(args: &mut Args<'_>) -> Result<Box<dyn Check>, SpecError> {
    let n = args
        .number("n")?
        .ok_or_else(|| SpecError::new("args", "max_sentences needs `n`"))?;
    if n < 0.0 {
        return Err(SpecError::new("args.n", "`n` must be 0 or more"));
    }
    Ok(Box::new(MaxSentences { n }))
}

/// Sentences end at `.`, `!` or `?` followed by white space or the end of the text.
fn sentence_count(text: &str) -> usize {
    let mut count = 0;
    let mut in_sentence = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if matches!(c, '.' | '!' | '?' | '。' | '！' | '？') {
            let at_boundary = chars.peek().is_none_or(|n| n.is_whitespace());
            if in_sentence && at_boundary {
                count += 1;
                in_sentence = false;
            }
        } else if !c.is_whitespace() {
            in_sentence = true;
        }
    }
    count + usize::from(in_sentence)
}

impl Check for MaxSentences {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let n = sentence_count(input.text());
        let x = n as f64;
        Ok(CheckOutput::binary(
            x <= self.n,
            Some(x),
            format!("{} (allowed at most {})", plural(n, "sentence"), self.n),
        ))
    }
}

#[derive(Debug)]
struct Count {
    re: Regex,
    min: Option<f64>,
    max: Option<f64>,
}

pub fn count(args: &mut Args<'_>, inner: bool) -> Result<Box<dyn Check>, SpecError> {
    let pattern = args.string("pattern")?;
    let text = args.string("text")?;
    let ci = args.boolean("case_insensitive", false)?;
    let re = match (pattern, text) {
        (Some(p), None) => build_regex(&p, ci).map_err(|m| SpecError::new("args.pattern", m))?,
        (None, Some(t)) if !t.is_empty() => {
            build_regex(&regex::escape(&t), ci).map_err(|m| SpecError::new("args.text", m))?
        }
        _ => {
            return Err(SpecError::new(
                "args",
                "count needs exactly one of `pattern` or a non-empty `text`",
            ));
        }
    };
    let min = args.number("min")?;
    let max = args.number("max")?;
    if min.is_none() && max.is_none() && !inner {
        return Err(SpecError::new(
            "args",
            "give `min`, `max` or both (or use count inside map_levels)",
        ));
    }
    Ok(Box::new(Count { re, min, max }))
}

impl Check for Count {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let n = self.re.find_iter(input.text()).count();
        let x = n as f64;
        let met = self.min.is_none_or(|m| x >= m) && self.max.is_none_or(|m| x <= m);
        Ok(CheckOutput::binary(
            met,
            Some(x),
            format!(
                "{} of /{}/ (allowed {})",
                plural(n, "match"),
                self.re.as_str(),
                range_text(self.min, self.max)
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences() {
        assert_eq!(sentence_count(""), 0);
        assert_eq!(sentence_count("One. Two! Three?"), 3);
        assert_eq!(sentence_count("Pi is 3.14 exactly. Next"), 2);
        assert_eq!(sentence_count("Ends without stop"), 1);
        assert_eq!(sentence_count("Wait... what?"), 2);
    }
}
