//! autorubric's length penalty (`LengthPenalty`, `compute_length_penalty`): how much a long
//! submission loses, counted in words as autorubric counts them, from the parts of the
//! submission it counts (`<thinking>` and `<output>` sections, any case, else all output).

use crate::model::{LengthPenalty, PenaltyCount, Scoring};

/// `score` less the rubric's length penalty for `text`, if it has one (as autorubric's
/// grader: never below 0 when scores are normalised; the raw score keeps no penalty).
pub fn penalized(scoring: &Scoring, text: &str, score: f64) -> f64 {
    let Some(cfg) = &scoring.length_penalty else {
        return score;
    };
    let s = score - penalty(cfg, text);
    if scoring.normalize { s.max(0.0) } else { s }
}

/// The penalty for `text`: 0 up to `free_budget` words, `penalty_at_cap` from `max_cap` on,
/// the curve between.
pub fn penalty(cfg: &LengthPenalty, text: &str) -> f64 {
    let (thinking, output) = sections(text);
    let count = match cfg.count {
        PenaltyCount::All => words(&thinking) + words(&output),
        PenaltyCount::Output => words(&output),
        PenaltyCount::Thinking => words(&thinking),
    };
    if count <= cfg.free_budget {
        return 0.0;
    }
    if count >= cfg.max_cap {
        return cfg.penalty_at_cap;
    }
    #[allow(clippy::cast_precision_loss)] // word and token counts are far below 2^52
    let frac = (count - cfg.free_budget) as f64 / (cfg.max_cap - cfg.free_budget) as f64;
    cfg.penalty_at_cap * frac.powf(cfg.exponent)
}

/// Python's `str.split()`: runs of whitespace, the separators U+001C–U+001F included.
fn words(text: &str) -> u64 {
    text.split(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
        .filter(|w| !w.is_empty())
        .count() as u64
}

/// `(thinking, output)` as autorubric's `parse_thinking_output` finds them: the first
/// `<thinking>` section; the first `<output>` section, else the text without its thinking
/// sections, else (no section at all) the whole text.
fn sections(text: &str) -> (String, String) {
    let thinking = section(text, "thinking", 0).map(|(inner, _, _)| inner.to_owned());
    let output = match section(text, "output", 0) {
        Some((inner, _, _)) => inner.to_owned(),
        None if thinking.is_some() => {
            let mut rest = String::with_capacity(text.len());
            let mut at = 0;
            while let Some((_, start, end)) = section(text, "thinking", at) {
                rest.push_str(&text[at..start]);
                at = end;
            }
            rest.push_str(&text[at..]);
            rest
        }
        None => text.to_owned(),
    };
    (thinking.unwrap_or_default(), output)
}

/// The first `<tag>…</tag>` at or after byte `from` (tags in any ASCII case): its inner
/// text and the byte range of the whole section.
fn section<'t>(text: &'t str, tag: &str, from: usize) -> Option<(&'t str, usize, usize)> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = find_ci(text, &open, from)?;
    let inner = start + open.len();
    let end = find_ci(text, &close, inner)?;
    Some((&text[inner..end], start, end + close.len()))
}

/// Byte offset of `needle` (ASCII) in `hay` at or after `from`, ignoring ASCII case.
fn find_ci(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    (from..=h.len().checked_sub(n.len())?).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(count: PenaltyCount) -> LengthPenalty {
        LengthPenalty {
            free_budget: 2,
            max_cap: 10,
            penalty_at_cap: 1.0,
            exponent: 2.0,
            count,
        }
    }

    /// The values autorubric 1.6.1 computes (`compute_length_penalty` on the parsed text).
    #[test]
    fn as_autorubric_computes_it() {
        let long = vec!["w"; 7000].join(" ");
        assert!(
            (penalty(&LengthPenalty::default(), &long) - 0.164_938_488_846_611_77).abs() < 1e-15
        );
        assert_eq!(
            penalty(&LengthPenalty::default(), &vec!["w"; 9000].join(" ")),
            0.5
        );
        let t1 = "<THINKING>a b c d</thinking><output>x y</output>";
        assert_eq!(penalty(&cfg(PenaltyCount::All), t1), 0.25);
        assert_eq!(penalty(&cfg(PenaltyCount::Output), t1), 0.0);
        assert_eq!(penalty(&cfg(PenaltyCount::Thinking), t1), 0.0625);
        let t2 = "<thinking>a b c d</thinking> rest of it here <thinking>e f</thinking> end";
        assert_eq!(penalty(&cfg(PenaltyCount::All), t2), 0.765_625);
        assert_eq!(penalty(&cfg(PenaltyCount::Output), t2), 0.140_625);
        assert_eq!(penalty(&cfg(PenaltyCount::Thinking), t2), 0.0625);
        assert_eq!(
            penalty(&cfg(PenaltyCount::All), "a\u{1f}b c d e"),
            0.140_625
        );
    }
}
