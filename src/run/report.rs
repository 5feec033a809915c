//! One self-contained HTML page of a saved run, for people who never open a terminal: no
//! network (styles, script and the histogram are inline; it opens from `file://`). The run is
//! read as a stream: the figures count every item, and the page embeds the items whole only
//! up to a bound — the worst ones, then a seeded sample of the rest — and says so, so the
//! page of a 1,000,000-item run stays small and opens fast.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt as _, SeedableRng as _};
use serde_json::{Value, json};

use super::Error;
use super::agreement::RunAgreement;
use super::record::Recording;
use crate::core::diag::Diagnostic;
use crate::model::{Evaluation, Item, met_as_wanted};

/// How many items a page embeds whole (the worst first, then a sample of the rest).
#[derive(Debug, Clone, Copy)]
pub struct Embed {
    pub worst: usize,
    pub sample: usize,
}

impl Default for Embed {
    fn default() -> Self {
        Self {
            worst: 1_000,
            sample: 1_000,
        }
    }
}

/// What a page holds: how many items the run has and how many the page shows whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub items: usize,
    pub embedded: usize,
}

/// A submission is shown up to this many characters (its length is said when cut).
const SUBMISSION_CHARS: usize = 4_000;
/// Evidence quotes shown per criterion.
const EVIDENCE: usize = 3;

/// Per criterion: items graded, graded well (full marks; for a penalty, not applied),
/// failed.
#[derive(Debug, Default, Clone)]
struct CriterionTally {
    penalty: bool,
    graded: usize,
    good: usize,
    failed: usize,
    value_sum: f64,
}

/// What a page may show besides the run itself, worked out by the caller.
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// The run compared with a baseline run (`runs compare --format json`'s document).
    pub comparison: Option<Value>,
    /// The dataset's runs ranked against the labels, as `calibrate` ranks them.
    pub calibration: Option<Value>,
}

/// Writes the page of `run` to `out`, with its agreement with a person's labels when given.
pub fn write_html(
    run: &Recording,
    agreement: Option<&RunAgreement>,
    embed: Embed,
    extras: &Extras,
    out: &mut impl Write,
) -> Result<Written, Error> {
    let m = &run.manifest;
    let mut items = 0usize;
    let mut passed = 0usize;
    let mut incomplete = 0usize;
    let mut score_sum = 0.0;
    let mut scored = 0usize;
    let mut bins = [0usize; 10];
    let mut criteria: BTreeMap<String, CriterionTally> = BTreeMap::new();
    // Each tag's item scores, for its mean and interval (as `grade` prints them).
    let mut tags = super::Summary::default();
    let mut order: Vec<String> = Vec::new();
    // The worst items kept whole (highest first, so the best of them goes first), and a
    // reservoir of the rest (a seeded sample: the same run gives the same page).
    let mut worst: Vec<(f64, usize, Value)> = Vec::new();
    let mut sample: Vec<(usize, Value)> = Vec::new();
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed);
    let mut dataset =
        crate::formats::dataset::open_dataset(&run.dataset_path(), run.settings()?.read_options())
            .ok()
            .map(|d| d.items.enumerate());
    let mut evaluations = run.evaluations()?;
    while let Some(next) = evaluations.next() {
        let (index, e) = next?;
        items += 1;
        for (t, v) in &e.tags {
            tags.tags.entry(t.clone()).or_default().push(*v);
        }
        if e.passed {
            passed += 1;
        }
        if e.incomplete {
            incomplete += 1;
        }
        if let Some(s) = e.score {
            score_sum += s;
            scored += 1;
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // in [0, 9]
            let bin = ((s.clamp(0.0, 1.0) * 10.0) as usize).min(9);
            bins[bin] += 1;
        }
        let penalties: Vec<&str> = evaluations
            .last_rubric()
            .map(|r| {
                r.criteria
                    .iter()
                    .filter(|c| c.weight < 0.0)
                    .map(|c| c.id.as_str())
                    .collect()
            })
            .unwrap_or_default();
        for r in &e.results {
            if !criteria.contains_key(&r.criterion_id) {
                order.push(r.criterion_id.clone());
            }
            let t = criteria.entry(r.criterion_id.clone()).or_default();
            t.penalty = penalties.contains(&r.criterion_id.as_str());
            match (r.failure.is_some(), r.value) {
                (true, _) => t.failed += 1,
                (false, Some(v)) => {
                    t.graded += 1;
                    t.value_sum += v;
                    if met_as_wanted(v, t.penalty) {
                        t.good += 1;
                    }
                }
                (false, None) => {}
            }
        }
        let key = e.score.unwrap_or(-1.0);
        let keep_worst =
            worst.len() < embed.worst || worst.first().is_some_and(|(w, _, _)| key < *w);
        let wanted = keep_worst || embed.sample > 0;
        let item = if wanted {
            item_at(&mut dataset, index)
        } else {
            None
        };
        if keep_worst {
            let row = item_json(index, &e, item.as_ref(), &penalties);
            let at = worst.partition_point(|(w, _, _)| *w > key);
            worst.insert(at, (key, index, row));
            if worst.len() > embed.worst {
                // The best of the worst goes to the sample's draw.
                let (_, i, row) = worst.remove(0);
                reservoir(&mut sample, &mut rng, embed.sample, items, i, row);
            }
        } else {
            let row = item_json(index, &e, item.as_ref(), &penalties);
            reservoir(&mut sample, &mut rng, embed.sample, items, index, row);
        }
    }
    let replay = evaluations.finish();
    let mut rows: Vec<(usize, Value)> = worst.into_iter().map(|(_, i, r)| (i, r)).collect();
    rows.extend(sample);
    rows.sort_by_key(|(i, _)| *i);
    let embedded = rows.len();
    let criteria_rows: Vec<Value> = order
        .iter()
        .filter_map(|id| {
            let t = criteria.get(id)?;
            #[allow(clippy::cast_precision_loss)] // counts of items
            let rate = (t.graded > 0).then(|| t.good as f64 / t.graded as f64);
            #[allow(clippy::cast_precision_loss)]
            let mean = (t.graded > 0).then(|| t.value_sum / t.graded as f64);
            Some(
                json!({"id": id, "penalty": t.penalty, "graded": t.graded, "good": t.good,
                "failed": t.failed, "rate": rate, "mean": mean}),
            )
        })
        .collect();
    #[allow(clippy::cast_precision_loss)]
    let mean = (scored > 0).then(|| score_sum / scored as f64);
    let judge = m
        .settings
        .pointer("/judge/model")
        .and_then(Value::as_str)
        .unwrap_or("the rubric's");
    let data = json!({
        "run": {"id": m.id, "name": m.name, "rubric": m.rubric_label(),
            "dataset": m.dataset.path, "judge": judge, "started": m.started_at,
            "finished": m.finished_at,
            "tokens": m.totals.as_ref().map(|t| t.input_tokens + t.output_tokens),
            "cost": m.totals.as_ref().map(|t| t.cost)},
        "figures": {"items": items, "passed": passed, "incomplete": incomplete, "mean": mean,
            "partial": replay.partial_items, "without_rubric": replay.without_rubric},
        "criteria": criteria_rows,
        "tags": tags.tag_scores(1000),
        "items": rows.into_iter().map(|(_, r)| r).collect::<Vec<_>>(),
        "embedded": embedded,
        "comparison": extras.comparison,
        "calibration": extras.calibration,
        "agreement": agreement.map(|a| json!({
            "annotator": a.annotator,
            "criteria": serde_json::to_value(&a.report.criteria).unwrap_or(Value::Null),
        })),
    });
    let page = PAGE
        .replace("{{title}}", &escape(&format!("rubricate · run {}", m.id)))
        .replace("{{histogram}}", &histogram(&bins))
        .replace("{{data}}", &script_safe(&data.to_string()));
    out.write_all(page.as_bytes())
        .map_err(|e| Error::input(format!("the report was not written: {e}")))?;
    Ok(Written { items, embedded })
}

/// The dataset item at `index` (the stream read forward to it), if the file still holds it.
fn item_at(
    dataset: &mut Option<impl Iterator<Item = (usize, Result<Item, Diagnostic>)>>,
    index: usize,
) -> Option<Item> {
    let items = dataset.as_mut()?;
    for (at, item) in items.by_ref() {
        if at == index {
            return item.ok();
        }
        if at > index {
            return None;
        }
    }
    None
}

/// Algorithm R: every item seen so far has the same chance to be in the sample.
fn reservoir(
    sample: &mut Vec<(usize, Value)>,
    rng: &mut ChaCha8Rng,
    size: usize,
    seen: usize,
    index: usize,
    row: Value,
) {
    if size == 0 {
        return;
    }
    if sample.len() < size {
        sample.push((index, row));
    } else {
        let at = rng.random_range(0..seen.max(1));
        if at < size {
            sample[at] = (index, row);
        }
    }
}

/// An item as the page shows it: its score and every criterion's verdict, reason and
/// evidence, and its submission (cut, saying so).
fn item_json(index: usize, e: &Evaluation, item: Option<&Item>, penalties: &[&str]) -> Value {
    let submission = item.map(|i| {
        let n = i.submission.chars().count();
        if n > SUBMISSION_CHARS {
            let cut: String = i.submission.chars().take(SUBMISSION_CHARS).collect();
            format!("{cut}\n… ({n} characters in all)")
        } else {
            i.submission.clone()
        }
    });
    json!({
        "n": index + 1,
        "id": e.target_id,
        "score": e.score,
        "passed": e.passed,
        "incomplete": e.incomplete,
        "submission": submission,
        "results": e.results.iter().map(|r| json!({
            "criterion": r.criterion_id,
            "verdict": r.verdict.as_ref().map(ToString::to_string),
            "value": r.value,
            "good": r.failure.is_none()
                && r.value.is_some_and(|v| met_as_wanted(v, penalties.contains(&r.criterion_id.as_str()))),
            "reason": r.reason,
            "evidence": r.evidence.iter().take(EVIDENCE).collect::<Vec<_>>(),
            "failure": r.failure.as_ref().map(ToString::to_string),
        })).collect::<Vec<_>>(),
    })
}

/// The score histogram, ten bins, as inline SVG.
fn histogram(bins: &[usize; 10]) -> String {
    let max = bins.iter().copied().max().unwrap_or(0).max(1);
    let mut svg = String::from(
        r#"<svg viewBox="0 0 420 186" role="img" aria-label="score histogram" class="hist">"#,
    );
    for (i, n) in bins.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let h = 130.0 * (*n as f64) / (max as f64);
        // Bars stand on y = 156, their counts above them, the bins' labels below.
        let x = 10 + i * 40;
        let _ = write!(
            svg,
            r#"<rect x="{x}" y="{y:.1}" width="34" height="{h:.1}"><title>{lo}–{hi}%: {n}</title></rect><text x="{tx}" y="180">{lo}</text><text x="{tx}" y="{ny:.1}" class="n">{n}</text>"#,
            y = 156.0 - h,
            lo = i * 10,
            hi = i * 10 + 10,
            tx = x + 17,
            ny = 152.0 - h,
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Text for HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JSON inside a `<script>` element: nothing in it can close the element (the run's text is
/// data — a submission holding `</script>` stays text).
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

const PAGE: &str = include_str!("report.html");
