//! Which key answers what: MET/UNMET/`CANNOT_ASSESS` for binary criteria, digits for
//! options, levels and small scales.

use crate::model::{Criterion, Kind, Verdict};
use crate::tui::keymap::Action;

/// The verdict a key gives for a criterion: MET/UNMET/`CANNOT_ASSESS` for binary ones; for
/// the others the answer [`choice_keys`] draws beside that digit.
pub fn verdict_for(c: &Criterion, action: Action) -> Option<Verdict> {
    match (action, &c.kind) {
        (Action::CannotAssess, _) => Some(Verdict::CannotAssess),
        (Action::Met, Kind::Binary) => Some(Verdict::Met),
        (Action::Unmet, Kind::Binary) => Some(Verdict::Unmet),
        (Action::Choice(n), _) => choice_keys(c)
            .into_iter()
            .find(|(key, _, _)| *key == n)
            .map(|(_, verdict, _)| verdict),
        _ => None,
    }
}

/// Each answer a criterion takes by a digit key, with the key and what the screen shows:
/// options and levels are numbered from 1 in their order; a whole-number scale of at most
/// ten points is answered by the point itself when it lies in 0–9 (key `5` is 5 on a 0–5
/// scale), else by its position (1–9, then 0 for the tenth).
pub fn choice_keys(c: &Criterion) -> Vec<(u8, Verdict, String)> {
    let positional = |n: usize| u8::try_from((n + 1) % 10).ok();
    match &c.kind {
        Kind::Binary => Vec::new(),
        Kind::Options { options, .. } => options
            .iter()
            .take(9)
            .enumerate()
            .filter_map(|(k, o)| {
                Some((
                    positional(k)?,
                    Verdict::Choice(o.label.clone()),
                    o.label.clone(),
                ))
            })
            .collect(),
        Kind::Levels(levels) => levels
            .iter()
            .take(9)
            .enumerate()
            .filter_map(|(k, l)| {
                Some((
                    positional(k)?,
                    Verdict::Level(l.id.clone()),
                    l.label.clone(),
                ))
            })
            .collect(),
        Kind::Scale(s) => {
            let whole = s.min.fract() == 0.0 && s.max.fract() == 0.0;
            let points = s.max - s.min + 1.0;
            if !whole || !(1.0..=10.0).contains(&points) {
                return Vec::new();
            }
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked above
            let (lo, n) = (s.min as i64, points as usize);
            let by_value = s.min >= 0.0 && s.max <= 9.0;
            (0..n)
                .filter_map(|k| {
                    let value = lo + i64::try_from(k).ok()?;
                    let key = if by_value {
                        u8::try_from(value).ok()?
                    } else {
                        positional(k)?
                    };
                    #[allow(clippy::cast_precision_loss)] // a small whole number
                    let v = value as f64;
                    Some((key, Verdict::Score(v), value.to_string()))
                })
                .collect()
        }
    }
}
