//! Normalised Levenshtein similarity between the submission and a reference text.

use super::text::range_text;
use super::{Args, Check, CheckError, CheckInput, CheckOutput, SpecError};

#[derive(Debug)]
struct Similarity {
    reference: Option<String>,
    min: Option<f64>,
    case_sensitive: bool,
}

pub fn similarity(args: &mut Args<'_>, inner: bool) -> Result<Box<dyn Check>, SpecError> {
    let reference = args.string("reference")?;
    let min = args.number("min")?;
    let case_sensitive = args.boolean("case_sensitive", false)?;
    if let Some(m) = min {
        if !(0.0..=1.0).contains(&m) {
            return Err(SpecError::new(
                "args.min",
                "`min` is a similarity between 0 and 1",
            ));
        }
    } else if !inner {
        return Err(SpecError::new(
            "args",
            "similarity needs `min` (0..1), or use it inside map_levels",
        ));
    }
    Ok(Box::new(Similarity {
        reference,
        min,
        case_sensitive,
    }))
}

/// 1 − distance / longer length; two empty texts are identical.
fn normalized_similarity(a: &str, b: &str) -> f64 {
    let longer = a.chars().count().max(b.chars().count());
    if longer == 0 {
        return 1.0;
    }
    1.0 - strsim::levenshtein(a, b) as f64 / longer as f64
}

/// Texts longer than this are compared on their first part only (distance is quadratic).
const MAX_CHARS: usize = 20_000;

impl Check for Similarity {
    fn run(&self, input: &CheckInput<'_>) -> Result<CheckOutput, CheckError> {
        let reference = self
            .reference
            .as_deref()
            .or(input.item.reference.as_deref())
            .ok_or(CheckError::NoReference)?;
        let cut = |s: &str| -> String {
            let s: String = s.chars().take(MAX_CHARS).collect();
            if self.case_sensitive {
                s
            } else {
                s.to_lowercase()
            }
        };
        let sim = normalized_similarity(&cut(input.text()), &cut(reference));
        let met = self.min.is_none_or(|m| sim + 1e-12 >= m);
        let ev = format!(
            "similarity {sim:.3} to the reference (allowed {})",
            range_text(self.min, None)
        );
        Ok(CheckOutput::binary(met, Some(sim), ev))
    }
}

#[cfg(test)]
mod tests {
    use super::normalized_similarity;

    #[test]
    fn similarity_bounds() {
        assert_eq!(normalized_similarity("", ""), 1.0);
        assert_eq!(normalized_similarity("abc", "abc"), 1.0);
        assert_eq!(normalized_similarity("abc", "xyz"), 0.0);
        assert!((normalized_similarity("kitten", "sitting") - (1.0 - 3.0 / 7.0)).abs() < 1e-12);
    }
}
