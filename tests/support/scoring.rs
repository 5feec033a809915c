//! Builders shared by the scoring tests (aggregation and ensembles).
#![allow(dead_code)]

use rubricate::model::{OptionChoice, Verdict};

/// A scored option.
pub fn option(label: &str, value: f64) -> OptionChoice {
    OptionChoice {
        label: label.into(),
        value,
        na: false,
    }
}

/// A not-applicable option: choosing it abstains.
pub fn na(label: &str) -> OptionChoice {
    OptionChoice {
        label: label.into(),
        value: 0.0,
        na: true,
    }
}

/// `M` = MET, `U` = UNMET, `A` = `CANNOT_ASSESS`.
pub fn verdict(code: char) -> Verdict {
    match code {
        'M' => Verdict::Met,
        'U' => Verdict::Unmet,
        'A' => Verdict::CannotAssess,
        other => panic!("unknown verdict code {other}"),
    }
}
