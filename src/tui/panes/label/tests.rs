use super::*;
use crate::model::{Criterion, Scale};

fn scale(min: f64, max: f64) -> Criterion {
    let mut c = Criterion::binary("s", "a point", 1.0);
    c.kind = Kind::Scale(Scale {
        min,
        max,
        anchors: Vec::new(),
    });
    c
}

#[test]
fn a_small_scale_is_answered_by_its_point_and_a_larger_one_by_position() {
    // Key 5 on a 0–5 scale is 5 (a user report: it used to store 4).
    let c = scale(0.0, 5.0);
    assert_eq!(
        verdict_for(&c, Action::Choice(5)),
        Some(Verdict::Score(5.0))
    );
    assert_eq!(
        verdict_for(&c, Action::Choice(0)),
        Some(Verdict::Score(0.0))
    );
    assert_eq!(verdict_for(&c, Action::Choice(6)), None);
    let c = scale(1.0, 10.0);
    assert_eq!(
        verdict_for(&c, Action::Choice(1)),
        Some(Verdict::Score(1.0))
    );
    assert_eq!(
        verdict_for(&c, Action::Choice(0)),
        Some(Verdict::Score(10.0)),
        "the tenth point is 0"
    );
    let keys: Vec<String> = choice_keys(&c)
        .iter()
        .map(|(k, _, shown)| format!("{k}={shown}"))
        .collect();
    assert_eq!(keys.last().map(String::as_str), Some("0=10"));
    // A scale with fractions or many points has no keys (and the pane says so).
    assert!(choice_keys(&scale(0.0, 100.0)).is_empty());
}
