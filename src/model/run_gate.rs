//! A run gate: a threshold on one of a run's figures that a CI job fails on —
//! `pass_rate>=0.9`, `mean>=0.75`, `criterion:safety>=1.0`, `tag:axis:accuracy>=0.8`.
//! Written the same way on the command line (`grade --gate`), in a rubric (`gates:`) and in
//! `rubricate.yaml` (`gates:`).

use std::fmt;

/// The run figure a gate looks at, each a share or a score in [0, 1].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "metric", content = "of")]
pub enum GateMetric {
    /// The share of items that passed.
    PassRate,
    /// The mean item score.
    Mean,
    /// The share of items on which the criterion is met: full marks, or for a penalty (a
    /// negative weight) not applied. An item whose cell failed counts as not met.
    Criterion(String),
    /// The mean of the items' scores over the criteria that carry the tag.
    Tag(String),
}

/// How a figure is compared with the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum GateOp {
    /// `>=`
    #[serde(rename = ">=")]
    AtLeast,
    /// `>`
    #[serde(rename = ">")]
    Above,
    /// `<=`
    #[serde(rename = "<=")]
    AtMost,
    /// `<`
    #[serde(rename = "<")]
    Below,
}

impl GateOp {
    /// The operators as written, longest first (so `>=` is not read as `>`).
    const WRITTEN: [(&'static str, GateOp); 4] = [
        (">=", GateOp::AtLeast),
        ("<=", GateOp::AtMost),
        (">", GateOp::Above),
        ("<", GateOp::Below),
    ];

    fn text(self) -> &'static str {
        match self {
            GateOp::AtLeast => ">=",
            GateOp::Above => ">",
            GateOp::AtMost => "<=",
            GateOp::Below => "<",
        }
    }

    /// Whether `value` satisfies the gate. A value within rounding of the threshold
    /// counts as equal to it (0.1 + 0.2 reaches 0.3).
    pub fn holds(self, value: f64, threshold: f64) -> bool {
        const EPS: f64 = 1e-9;
        match self {
            GateOp::AtLeast => value >= threshold - EPS,
            GateOp::Above => value > threshold + EPS,
            GateOp::AtMost => value <= threshold + EPS,
            GateOp::Below => value < threshold - EPS,
        }
    }
}

/// One gate: `metric op threshold`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunGate {
    /// The figure looked at.
    #[serde(flatten)]
    pub metric: GateMetric,
    /// How it is compared.
    pub op: GateOp,
    /// With what, in [0, 1].
    pub threshold: f64,
}

/// What a gate may be written as, for error messages.
pub const GATE_FORMS: &str = "pass_rate>=0.9, mean>=0.75, criterion:ID>=1.0 or tag:NAME>=0.8 (operators >=, >, <=, <; a share as 0.9 or 90%)";

impl RunGate {
    /// Reads `pass_rate>=0.9`, `mean >= 75%`, `criterion:safety>=1`, `tag:axis:accuracy>0.8`.
    /// The figure is everything before the operator, so tag and criterion names may hold
    /// colons.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let bad = |why: &str| format!("gate `{text}`: {why}; write it as {GATE_FORMS}");
        let Some((at, written, op)) = GateOp::WRITTEN
            .iter()
            .filter_map(|(w, op)| text.find(w).map(|at| (at, *w, *op)))
            .min_by_key(|(at, w, _)| (*at, std::cmp::Reverse(w.len())))
        else {
            return Err(bad("no comparison"));
        };
        let (name, number) = (text[..at].trim(), text[at + written.len()..].trim());
        let metric = match name {
            "pass_rate" => GateMetric::PassRate,
            "mean" | "mean_score" | "score" => GateMetric::Mean,
            _ => match name.split_once(':') {
                Some(("criterion", id)) if !id.trim().is_empty() => {
                    GateMetric::Criterion(id.trim().to_owned())
                }
                Some(("tag", tag)) if !tag.trim().is_empty() => {
                    GateMetric::Tag(tag.trim().to_owned())
                }
                _ => return Err(bad(&format!("`{name}` is not a figure a gate knows"))),
            },
        };
        let threshold = match number.strip_suffix('%') {
            Some(pct) => pct.trim().parse::<f64>().map(|p| p / 100.0),
            None => number.parse::<f64>(),
        }
        .ok()
        .filter(|t| t.is_finite())
        .ok_or_else(|| bad(&format!("`{number}` is not a number")))?;
        if !(0.0..=1.0).contains(&threshold) {
            return Err(bad(&format!(
                "{number} is outside 0 to 1 (every figure a gate looks at is a share or a score)"
            )));
        }
        Ok(Self {
            metric,
            op,
            threshold,
        })
    }
}

impl RunGate {
    /// Why this gate names nothing in `rubric` — a criterion it lacks, or a tag none of its
    /// criteria carries — when it does.
    pub fn unknown_in(&self, rubric: &super::Rubric) -> Option<String> {
        match &self.metric {
            GateMetric::Criterion(id) if rubric.criterion(id).is_none() => {
                let known: Vec<&str> = rubric.criteria.iter().map(|c| c.id.as_str()).collect();
                Some(format!(
                    "rubric '{}' has no criterion '{id}'; its criteria: {}",
                    rubric.id,
                    known.join(", ")
                ))
            }
            GateMetric::Tag(tag) if !rubric.criteria.iter().any(|c| c.tags.contains(tag)) => {
                let mut known: Vec<&str> = rubric
                    .criteria
                    .iter()
                    .flat_map(|c| c.tags.iter().map(String::as_str))
                    .collect();
                known.sort_unstable();
                known.dedup();
                Some(format!(
                    "no criterion of rubric '{}' carries the tag '{tag}'; its tags: {}",
                    rubric.id,
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ))
            }
            _ => None,
        }
    }
}

impl fmt::Display for GateMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateMetric::PassRate => f.write_str("pass_rate"),
            GateMetric::Mean => f.write_str("mean"),
            GateMetric::Criterion(id) => write!(f, "criterion:{id}"),
            GateMetric::Tag(t) => write!(f, "tag:{t}"),
        }
    }
}

impl fmt::Display for RunGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}", self.metric, self.op.text(), self.threshold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_form() {
        let g = RunGate::parse("pass_rate>=0.9").unwrap();
        assert_eq!(
            (g.metric, g.op, g.threshold),
            (GateMetric::PassRate, GateOp::AtLeast, 0.9)
        );
        let g = RunGate::parse(" mean > 75% ").unwrap();
        assert_eq!((g.metric, g.op), (GateMetric::Mean, GateOp::Above));
        assert!((g.threshold - 0.75).abs() < 1e-12);
        let g = RunGate::parse("tag:axis:accuracy>=0.8").unwrap();
        assert_eq!(g.metric, GateMetric::Tag("axis:accuracy".into()));
        let g = RunGate::parse("criterion:safety<=1").unwrap();
        assert_eq!(g.to_string(), "criterion:safety<=1");
        assert_eq!(
            (g.metric, g.op),
            (GateMetric::Criterion("safety".into()), GateOp::AtMost)
        );
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        for bad in [
            "pass_rate",
            "pass_rate>=",
            "pass_rate>=x",
            "pass_rate>=1.5",
            "speed>=0.9",
            "criterion:>=0.9",
            "mean>=NaN",
        ] {
            let e = RunGate::parse(bad).unwrap_err();
            assert!(e.contains("write it as"), "{bad}: {e}");
        }
    }

    #[test]
    fn holds_at_the_threshold_within_rounding() {
        assert!(GateOp::AtLeast.holds(0.1 + 0.2, 0.3));
        assert!(!GateOp::Above.holds(0.1 + 0.2, 0.3));
        assert!(GateOp::Below.holds(0.2, 0.3));
        assert!(!GateOp::AtLeast.holds(0.89, 0.9));
    }
}
