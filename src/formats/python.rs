//! Which Python the other systems' libraries run on, for the formats whose library sums
//! with Python's `sum()` (rubric, dataknobs, `agentic_v2_eval`): `CPython` 3.12 made that sum
//! compensated, so the same file can score differently, in the last bit, on 3.11 and on
//! 3.12+. `RUBRICATE_PYTHON` names the version (`3.11`); unset, it is 3.12 or later, what
//! a new install runs.

use crate::model::Summation;

/// The environment variable naming the Python version.
pub const VAR: &str = "RUBRICATE_PYTHON";

/// `RUBRICATE_PYTHON` holds something that is not a Python version; says what to write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{VAR} is '{given}': give the Python version your other systems' libraries run on, such as 3.11 or 3.13 (unset: 3.12 or later)"
)]
pub struct UnknownPython {
    /// The variable's value as given.
    pub given: String,
}

/// How the user's Python sums, from `RUBRICATE_PYTHON`.
pub fn summation() -> Result<Summation, UnknownPython> {
    match std::env::var(VAR) {
        Ok(v) if !v.trim().is_empty() => {
            of_version(v.trim()).ok_or_else(|| UnknownPython { given: v.clone() })
        }
        _ => Ok(Summation::Compensated),
    }
}

/// `3.11` → in order; `3.12`, `3.13`, `4` → compensated.
fn of_version(v: &str) -> Option<Summation> {
    let mut parts = v.strip_prefix("python").unwrap_or(v).split('.');
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = match parts.next() {
        Some(m) => m.parse().ok()?,
        None => 0,
    };
    let compensated = major > 3 || (major == 3 && minor >= 12);
    Some(if compensated {
        Summation::Compensated
    } else {
        Summation::Sequential
    })
}

/// How `inspect` names the summation in force for such a format.
pub fn describe(s: Summation) -> String {
    match s {
        Summation::Compensated => format!(
            "totals summed as Python 3.12+'s sum() (compensated); {VAR}=3.11 sums them in order, as 3.11 and earlier"
        ),
        Summation::Sequential => format!(
            "totals summed in order, as Python 3.11 and earlier ({VAR}); unset, as 3.12+'s compensated sum()"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_name_their_summation() {
        assert_eq!(of_version("3.11"), Some(Summation::Sequential));
        assert_eq!(of_version("3.11.7"), Some(Summation::Sequential));
        assert_eq!(of_version("3.12"), Some(Summation::Compensated));
        assert_eq!(of_version("python3.13"), Some(Summation::Compensated));
        assert_eq!(of_version("2.7"), Some(Summation::Sequential));
        assert_eq!(of_version("latest"), None);
    }
}
