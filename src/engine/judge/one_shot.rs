//! All criteria in one call, and the reversed double pass built on it. A reply that leaves
//! criteria out (or answers them unreadably) gets one repair request for just those; what
//! is still missing is `unable_to_evaluate`, never UNMET.

use super::parse::Answer;
use super::per_criterion::option_order;
use super::record::{Record, Reply, merge, share_usage, unreadable};
use super::{Judge, parse, prompt};
use crate::engine::aggregate::reconcile_double_pass;
use crate::llm::{IfUnreadable, OnPiece, Reading};
use crate::model::{Criterion, CriterionResult, Item, Kind, Rubric, Verdict};

/// Judges `criteria` in one call; results come back in the order given. With `reversed`
/// the judge sees them last to first (the second pass of a double pass).
pub async fn judge(
    judge: &Judge,
    rubric: &Rubric,
    criteria: &[&Criterion],
    item: &Item,
    sample: u32,
    reversed: bool,
    on_piece: Option<OnPiece<'_>>,
) -> Vec<CriterionResult> {
    let plan = Plan::new(judge, rubric, criteria, item, sample, reversed);
    let Plan {
        shown,
        formats,
        mut request,
    } = plan;
    let schema_of = |which: &[usize]| schema(criteria, &formats, which);
    let strategy = if reversed { "double_pass" } else { "one_shot" };
    let mut record = Record::new(judge, strategy, &request.messages);
    let in_order: Vec<&Criterion> = shown.iter().map(|&i| criteria[i]).collect();
    // A reply with nothing readable is sent again like a failed request; one that answers
    // some criteria goes straight to the repair for the rest.
    let (first, found, problems) = match record
        .call(judge, &request, on_piece, "", IfUnreadable::Retry, |text| {
            reading(&in_order, text)
        })
        .await
    {
        Ok(Reply::Read {
            value: (found, problems),
            text,
        }) => (text, found, problems),
        Ok(Reply::Unreadable { text, .. }) => {
            let (found, problems) = parse::read_one_shot(&in_order, &text);
            (text, found, problems)
        }
        Err(f) => return criteria.iter().map(|c| record.fail(c, f.clone())).collect(),
    };
    let mut answers: Vec<Option<(String, Verdict)>> = vec![None; criteria.len()];
    for (pos, answer) in found.into_iter().enumerate() {
        answers[shown[pos]] = answer;
    }
    let mut responses = first.clone();
    let mut still: Vec<(usize, String)> = Vec::new();
    if !problems.is_empty() {
        let missing: Vec<usize> = problems.iter().map(|(pos, _)| shown[*pos]).collect();
        let list: Vec<String> = problems.iter().map(|(_, p)| parse::short(p)).collect();
        let ids: Vec<String> = missing
            .iter()
            .map(|&i| {
                format!(
                    "\"{}\" ({})",
                    criteria[i].id,
                    formats[i].0.lines().next().unwrap_or_default()
                )
            })
            .collect();
        let form = format!(
            ", for these criteria only: {}. Form: {{\"<id>\": {{\"reason\": \"…\", \"verdict\": …}}}}",
            ids.join(", ")
        );
        request.schema = Some(schema_of(&missing));
        let asked: Vec<&Criterion> = missing.iter().map(|&i| criteria[i]).collect();
        let repaired = record
            .repair(
                judge,
                &mut request,
                on_piece,
                &first,
                ("Part of your reply", &list.join("; "), &form),
                |text| reading(&asked, text),
            )
            .await;
        let (second, found, problems) = match repaired {
            Ok(Reply::Read {
                value: (found, problems),
                text,
            }) => (text, found, problems),
            Ok(Reply::Unreadable { text, .. }) => {
                let (found, problems) = parse::read_one_shot(&asked, &text);
                (text, found, problems)
            }
            Err(f) => {
                let mut out: Vec<CriterionResult> = Vec::new();
                for (i, c) in criteria.iter().enumerate() {
                    out.push(match answers[i].take() {
                        Some((reason, verdict)) => record.scored(c, reason, verdict, &responses),
                        None => record.fail(c, f.clone()),
                    });
                }
                share_usage(&mut out);
                return out;
            }
        };
        for (pos, answer) in found.into_iter().enumerate() {
            if answer.is_some() {
                answers[missing[pos]] = answer;
            }
        }
        still = problems
            .into_iter()
            .map(|(pos, p)| (missing[pos], p))
            .collect();
        responses.push('\n');
        responses.push_str(&second);
    }
    let mut out: Vec<CriterionResult> = criteria
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if let Some((reason, verdict)) = answers[i].take() {
                return record.scored(c, reason, verdict, &responses);
            }
            let problem = still
                .iter()
                .find(|(j, _)| *j == i)
                .map_or("no answer", |(_, p)| p.as_str());
            record.fail(c, unreadable(problem))
        })
        .collect();
    share_usage(&mut out);
    out
}

/// Each criterion's answer where it could be read, and what is wrong with the others.
type OneShotReading = (Vec<Option<Answer>>, Vec<(usize, String)>);

/// A one-shot reply as the client sees it: accepted (and cached) only when every criterion
/// asked was read, partial when some were, rejected when none was.
fn reading(criteria: &[&Criterion], text: &str) -> Reading<OneShotReading> {
    let (found, problems) = parse::read_one_shot(criteria, text);
    if problems.is_empty() {
        Reading::Accepted((found, problems))
    } else if found.iter().any(Option::is_some) {
        Reading::Partial((found, problems))
    } else {
        let why = problems
            .first()
            .map_or_else(|| "no answer".to_owned(), |(_, p)| p.clone());
        Reading::Rejected(why)
    }
}

/// The first request of a one-shot call, and what reading its reply needs.
pub struct Plan {
    /// The order the judge sees the criteria in (indexes into the criteria).
    pub shown: Vec<usize>,
    /// Each criterion's answer format and verdict schema.
    pub formats: Vec<(String, serde_json::Value)>,
    /// The request asking for every criterion.
    pub request: crate::llm::ChatRequest,
}

impl Plan {
    /// The plan for judging `criteria` of `item` in one call (sample `sample`).
    pub fn new(
        judge: &Judge,
        rubric: &Rubric,
        criteria: &[&Criterion],
        item: &Item,
        sample: u32,
        reversed: bool,
    ) -> Self {
        let mut shown: Vec<usize> = (0..criteria.len()).collect();
        if reversed {
            shown.reverse();
        }
        let formats: Vec<(String, serde_json::Value)> = criteria
            .iter()
            .map(|c| prompt::answer_format(c, &option_order(judge, c, item, sample)))
            .collect();
        let listed: Vec<(&Criterion, String)> = shown
            .iter()
            .map(|&i| (criteria[i], formats[i].0.clone()))
            .collect();
        let messages =
            prompt::one_shot_messages(rubric, &listed, item, judge.system_prompt(rubric));
        let request = judge.request(messages, Some(schema(criteria, &formats, &shown)), sample);
        Self {
            shown,
            formats,
            request,
        }
    }
}

fn schema(
    criteria: &[&Criterion],
    formats: &[(String, serde_json::Value)],
    which: &[usize],
) -> serde_json::Value {
    let parts: Vec<(&Criterion, serde_json::Value)> = which
        .iter()
        .map(|&i| (criteria[i], formats[i].1.clone()))
        .collect();
    prompt::one_shot_schema(&parts)
}

/// The reversed double pass (position-bias control): the criteria judged in order and in
/// reverse, reconciled per SCORING.md.
pub async fn double_pass(
    judge: &Judge,
    rubric: &Rubric,
    criteria: &[&Criterion],
    item: &Item,
    sample: u32,
    on_piece: Option<OnPiece<'_>>,
) -> Vec<CriterionResult> {
    let (forward, backward) = futures_util::join!(
        self::judge(judge, rubric, criteria, item, sample, false, on_piece),
        self::judge(judge, rubric, criteria, item, sample, true, on_piece),
    );
    criteria
        .iter()
        .zip(forward.into_iter().zip(backward))
        .map(|(c, (a, b))| reconcile(c, a, b))
        .collect()
}

/// Binary: SCORING.md's rule. Graded kinds: the worse of the two answers for the
/// criterion's sign. A pass that failed makes the criterion fail.
fn reconcile(c: &Criterion, first: CriterionResult, second: CriterionResult) -> CriterionResult {
    let invocation = match (&first.invocation, &second.invocation) {
        (Some(one), Some(two)) => merge(&[one, two], "double_pass").map(Box::new),
        (one, two) => one.clone().or_else(|| two.clone()),
    };
    let (Some(va), Some(vb)) = (&first.verdict, &second.verdict) else {
        // A pass never sent (a stopped run, a batch still out) leaves the cell ungraded.
        let unsent = |r: &CriterionResult| {
            r.failure
                .as_ref()
                .is_some_and(crate::model::Failure::unsent)
        };
        let mut failed = if first.failure.is_some() && !unsent(&second) {
            first
        } else {
            second
        };
        failed.invocation = invocation;
        return failed;
    };
    let verdict = if matches!(c.kind, Kind::Binary) {
        reconcile_double_pass(c.weight, va, vb)
    } else {
        let value = |v: &Verdict| c.value_of(v).ok().flatten();
        match (value(va), value(vb)) {
            // The worse for the criterion's sign: lower for a positive weight.
            (Some(x), Some(y)) if (y < x) == (c.weight >= 0.0) && x != y => vb.clone(),
            (None, Some(_)) => vb.clone(),
            _ => va.clone(),
        }
    };
    let reason = if first.reason == second.reason {
        first.reason.clone()
    } else {
        format!("in order: {} | reversed: {}", first.reason, second.reason)
    };
    let mut out = first;
    out.value = c.value_of(&verdict).ok().flatten();
    out.verdict = Some(verdict);
    out.reason = reason;
    out.invocation = invocation;
    out
}
