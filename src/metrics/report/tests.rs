//! Tests of the per-criterion and pooled reports.

use super::*;
use crate::metrics::bootstrap::bootstrap;

fn ids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("item-{i}")).collect()
}

fn pairs<'a>(
    items: &'a [String],
    human: &'a [Verdict],
    judge: &'a [Verdict],
) -> Vec<LabelPair<'a>> {
    items
        .iter()
        .zip(human.iter().zip(judge))
        .map(|(item, (human, judge))| LabelPair { item, human, judge })
        .collect()
}

fn binary_of(report: &CriterionReport) -> &BinaryReport {
    match &report.metrics {
        CriterionMetrics::Binary(b) => b,
        other => panic!("expected binary, got {other:?}"),
    }
}

use Verdict::{CannotAssess as CA, Met as M, Unmet as U};

/// The public case in SCORING.md, through the entry point.
#[test]
fn public_case_through_the_report() {
    let items = ids(4);
    let (human, judge) = ([M, M, U, U], [M, U, U, U]);
    let labels = [CriterionLabels {
        criterion: "c1",
        scale: LabelScale::Binary,
        pairs: pairs(&items, &human, &judge),
    }];
    let report = criterion_report(&labels, None);
    let c = binary_of(&report.criteria[0]);
    assert_eq!(c.metrics.accuracy, Some(0.75));
    assert_eq!(c.metrics.precision, Some(1.0));
    assert_eq!(c.metrics.recall, Some(0.5));
    assert!(c.metrics.f1.is_some_and(|f| (f - 0.666_667).abs() < 5e-7));
    assert!(c.metrics.kappa.is_some_and(|k| (k - 0.5).abs() < 1e-12));
    assert!(c.metrics.phi.is_some_and(|p| (p - 0.577_35).abs() < 5e-6));
    assert_eq!(report.pooled.as_ref().map(|p| p.metrics), Some(c.metrics));
    assert_eq!(c.ci, None);
}

#[test]
fn pooled_adds_binary_criteria_and_sets_aside_the_rest() {
    let items = ids(4);
    let (h1, j1) = ([M, M, U, CA], [M, U, U, U]);
    let (h2, j2) = ([U, M, Verdict::Level("x".into()), M], [U, M, M, CA]);
    let categories = vec!["low".to_owned(), "High".to_owned()];
    let h3 = [
        Verdict::Level("low".into()),
        Verdict::Choice(" high ".into()),
        Verdict::Choice("n/a".into()),
        M,
    ];
    let j3 = [
        Verdict::Level("HIGH".into()),
        Verdict::Level("high".into()),
        Verdict::Level("low".into()),
        Verdict::Level("low".into()),
    ];
    let labels = [
        CriterionLabels {
            criterion: "a",
            scale: LabelScale::Binary,
            pairs: pairs(&items, &h1, &j1),
        },
        CriterionLabels {
            criterion: "b",
            scale: LabelScale::Binary,
            pairs: pairs(&items, &h2, &j2),
        },
        CriterionLabels {
            criterion: "c",
            scale: LabelScale::Nominal(&categories),
            pairs: pairs(&items, &h3, &j3),
        },
    ];
    let report = criterion_report(&labels, None);
    let (a, b) = (
        binary_of(&report.criteria[0]),
        binary_of(&report.criteria[1]),
    );
    assert_eq!((a.abstained, report.criteria[0].mismatched), (1, 0));
    assert_eq!((b.abstained, report.criteria[1].mismatched), (1, 1));
    let pooled = report.pooled.expect("two binary criteria");
    assert_eq!(pooled.confusion, a.confusion + b.confusion);
    assert_eq!(pooled.confusion, BinaryConfusion::from_array([2, 0, 1, 2]));
    assert_eq!(pooled.abstained, 2);
    let CriterionMetrics::Nominal(c) = &report.criteria[2].metrics else {
        panic!("expected nominal");
    };
    // "n/a" is outside the categories: abstained; MET on a nominal criterion: mismatched.
    assert_eq!((c.abstained, report.criteria[2].mismatched), (1, 1));
    assert_eq!(c.confusion, vec![vec![0, 1], vec![0, 1]]);
    assert_eq!(c.metrics.accuracy, Some(0.5));
    assert_eq!(c.metrics.kappa, Some(0.0));
}

#[test]
fn ordinal_and_interval_criteria() {
    let items = ids(6);
    let levels: Vec<String> = ["fail", "pass", "excellent"].map(String::from).to_vec();
    let level = |s: &str| Verdict::Level(s.to_owned());
    let human = ["fail", "pass", "excellent", "pass", "fail", "excellent"].map(level);
    let judge = ["fail", "excellent", "excellent", "pass", "pass", "pass"].map(level);
    let xs = [0.9, 0.4, 0.7, 0.1, 0.5, 0.8];
    let ys = [1.0, 0.5, 0.5, 0.0, 0.5, 0.6];
    let h_scores = ys.map(Verdict::Score);
    let mut j_scores = xs.map(Verdict::Score);
    j_scores[5] = CA;
    let labels = [
        CriterionLabels {
            criterion: "quality",
            scale: LabelScale::Ordinal(&levels),
            pairs: pairs(&items, &human, &judge),
        },
        CriterionLabels {
            criterion: "scale",
            scale: LabelScale::Interval,
            pairs: pairs(&items, &h_scores, &j_scores),
        },
    ];
    let report = criterion_report(&labels, None);
    assert_eq!(report.pooled, None);
    let CriterionMetrics::Ordinal(o) = &report.criteria[0].metrics else {
        panic!("expected ordinal");
    };
    let expected =
        CategoryConfusion::from_pairs(3, [(0, 0), (1, 2), (2, 2), (1, 1), (0, 1), (2, 1)]);
    assert_eq!(o.metrics, expected.metrics(Weighting::Quadratic));
    let CriterionMetrics::Interval(s) = &report.criteria[1].metrics else {
        panic!("expected interval");
    };
    assert_eq!(s.abstained, 1);
    let scored: Vec<(f64, f64)> = xs.into_iter().zip(ys).take(5).collect();
    assert_eq!(s.metrics, score_metrics(&scored));
}

/// A 60-item criterion where the judge agrees about 80 % of the time.
fn synthetic(n: usize) -> (Vec<String>, Vec<Verdict>, Vec<Verdict>) {
    let human: Vec<Verdict> = (0..n)
        .map(|i| if (i * 7) % 10 < 4 { M } else { U })
        .collect();
    let judge: Vec<Verdict> = human
        .iter()
        .enumerate()
        .map(|(i, h)| match (i % 5 == 3, h) {
            (true, Verdict::Met) => U,
            (true, _) => M,
            (false, v) => v.clone(),
        })
        .collect();
    (ids(n), human, judge)
}

/// The joint fast path draws the same resamples as the generic bootstrap.
#[test]
fn intervals_match_the_generic_bootstrap() {
    let (items, human, judge) = synthetic(60);
    let labels = [CriterionLabels {
        criterion: "a",
        scale: LabelScale::Binary,
        pairs: pairs(&items, &human, &judge),
    }];
    let options = Bootstrap {
        resamples: 400,
        seed: 11,
        level: 0.9,
    };
    let report = criterion_report(&labels, Some(&options));
    let ci = binary_of(&report.criteria[0])
        .ci
        .expect("asked for intervals");
    let metric = |pick: fn(&BinaryMetrics) -> Option<f64>| {
        bootstrap(&labels[0].pairs, &options, move |sample| {
            let labels = sample.iter().filter_map(|p| {
                Some((
                    BinaryLabel::from_verdict(p.human)?,
                    BinaryLabel::from_verdict(p.judge)?,
                ))
            });
            pick(&BinaryConfusion::from_pairs(labels).0.metrics())
        })
    };
    assert_eq!(ci.accuracy, metric(|m| m.accuracy));
    assert_eq!(ci.kappa, metric(|m| m.kappa));
    assert_eq!(ci.phi, metric(|m| m.phi));
    assert_eq!(ci.leniency, metric(|m| m.leniency));
    assert_eq!(report.pooled.and_then(|p| p.ci), Some(ci));
    let point = binary_of(&report.criteria[0]).metrics;
    for (value, interval) in point.values().into_iter().zip([
        ci.accuracy,
        ci.precision,
        ci.recall,
        ci.f1,
        ci.macro_f1,
        ci.kappa,
        ci.phi,
        ci.leniency,
    ]) {
        let (v, i) = (value.expect("defined"), interval.expect("defined"));
        assert!(i.low <= v && v <= i.high, "{v} outside {i:?}");
    }
}

#[test]
fn same_seed_same_report() {
    let (items, human, judge) = synthetic(50);
    let labels = [CriterionLabels {
        criterion: "a",
        scale: LabelScale::Binary,
        pairs: pairs(&items, &human, &judge),
    }];
    let options = Bootstrap {
        resamples: 200,
        seed: 3,
        level: 0.95,
    };
    let first = criterion_report(&labels, Some(&options));
    assert_eq!(first, criterion_report(&labels, Some(&options)));
    let other = criterion_report(&labels, Some(&Bootstrap { seed: 4, ..options }));
    assert_ne!(first, other);
}

#[test]
fn json_shape() {
    let items = ids(3);
    let (human, judge) = ([M, M, CA], [M, M, U]);
    let labels = [CriterionLabels {
        criterion: "c1",
        scale: LabelScale::Binary,
        pairs: pairs(&items, &human, &judge),
    }];
    let json = serde_json::to_value(criterion_report(&labels, None)).expect("serializes");
    let expected = serde_json::json!({
        "criteria": [{
            "criterion": "c1",
            "pairs": 3,
            "mismatched": 0,
            "scale": "binary",
            "abstained": 1,
            "confusion": { "tp": 2, "fp": 0, "fn": 0, "tn": 0 },
            "support": 2,
            "accuracy": 1.0,
            "precision": 1.0,
            "recall": 1.0,
            "f1": 1.0,
            "macro_f1": null,
            "kappa": null,
            "phi": null,
            "leniency": 0.0
        }],
        "pooled": {
            "abstained": 1,
            "confusion": { "tp": 2, "fp": 0, "fn": 0, "tn": 0 },
            "support": 2,
            "accuracy": 1.0,
            "precision": 1.0,
            "recall": 1.0,
            "f1": 1.0,
            "macro_f1": null,
            "kappa": null,
            "phi": null,
            "leniency": 0.0
        }
    });
    assert_eq!(json, expected);
    let with_ci = criterion_report(&labels, Some(&Bootstrap::default()));
    let json = serde_json::to_value(with_ci).expect("serializes");
    assert_eq!(json["bootstrap"]["resamples"], 1000);
    assert_eq!(
        json["criteria"][0]["ci"]["accuracy"],
        serde_json::json!({ "low": 1.0, "high": 1.0 })
    );
    assert_eq!(json["criteria"][0]["ci"]["kappa"], serde_json::Value::Null);
}

#[test]
fn empty_input() {
    let report = criterion_report(&[], Some(&Bootstrap::default()));
    assert!(report.criteria.is_empty());
    assert_eq!(report.pooled, None);
}

/// Ordinal and interval intervals come from the same resamples as the generic bootstrap.
#[test]
fn ordinal_and_interval_intervals_match_the_generic_bootstrap() {
    let n = 40;
    let items = ids(n);
    let levels: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let human: Vec<Verdict> = (0..n)
        .map(|i| Verdict::Level(levels[i % 3].clone()))
        .collect();
    let judge: Vec<Verdict> = (0..n)
        .map(|i| Verdict::Level(levels[(i + usize::from(i % 4 == 0)) % 3].clone()))
        .collect();
    let truth: Vec<Verdict> = (0..n).map(|i| Verdict::Score((i % 7) as f64)).collect();
    let predicted: Vec<Verdict> = (0..n)
        .map(|i| Verdict::Score((i % 7) as f64 + ((i * 3) % 5) as f64 / 4.0))
        .collect();
    let labels = [
        CriterionLabels {
            criterion: "o",
            scale: LabelScale::Ordinal(&levels),
            pairs: pairs(&items, &human, &judge),
        },
        CriterionLabels {
            criterion: "s",
            scale: LabelScale::Interval,
            pairs: pairs(&items, &truth, &predicted),
        },
    ];
    let options = Bootstrap {
        resamples: 300,
        seed: 5,
        level: 0.95,
    };
    let report = criterion_report(&labels, Some(&options));
    let CriterionMetrics::Ordinal(o) = &report.criteria[0].metrics else {
        panic!("expected ordinal");
    };
    let index = |v: &Verdict| match v {
        Verdict::Level(l) => levels.iter().position(|c| c == l).expect("known level"),
        _ => unreachable!(),
    };
    let kappa = bootstrap(&labels[0].pairs, &options, |sample| {
        CategoryConfusion::from_pairs(3, sample.iter().map(|p| (index(p.human), index(p.judge))))
            .kappa(Weighting::Quadratic)
    });
    assert_eq!(o.ci.and_then(|ci| ci.kappa), kappa);

    let CriterionMetrics::Interval(s) = &report.criteria[1].metrics else {
        panic!("expected interval");
    };
    let score = |v: &Verdict| match v {
        Verdict::Score(x) => *x,
        _ => unreachable!(),
    };
    let rmse = bootstrap(&labels[1].pairs, &options, |sample| {
        let scored: Vec<(f64, f64)> = sample
            .iter()
            .map(|p| (score(p.judge), score(p.human)))
            .collect();
        score_metrics(&scored).rmse
    })
    .expect("defined");
    let fast = s.ci.and_then(|ci| ci.rmse).expect("defined");
    assert!((fast.low - rmse.low).abs() < 1e-12 && (fast.high - rmse.high).abs() < 1e-12);
    assert!(s.ci.is_some_and(|ci| ci.pearson.is_some() && ci.cohen_d.is_some()));
}
