//! One call per criterion: our prompt (or the criterion's own template, rendered with the
//! item: level decode), options shown in a seeded shuffled order and mapped back, and one
//! repair request quoting the problem before the result is `unable_to_evaluate`.

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;

use super::record::{Record, Reply, unreadable};
use super::{Judge, parse, prompt};
use crate::llm::{ChatRequest, IfUnreadable, OnPiece, Reading};
use crate::model::{Criterion, CriterionResult, Failure, Item, Kind, Method, MethodKind, Rubric};

/// Judges one criterion of one item (sample `sample` of it). Never panics; every problem is
/// a failure.
pub async fn judge(
    judge: &Judge,
    rubric: &Rubric,
    c: &Criterion,
    item: &Item,
    sample: u32,
    on_piece: Option<OnPiece<'_>>,
) -> CriterionResult {
    let (mut request, answer) = match first_request(judge, rubric, c, item, sample) {
        Ok(r) => r,
        Err(f) => return CriterionResult::failed(&c.id, MethodKind::Judge, f),
    };
    let mut record = Record::new(judge, "per_criterion", &request.messages);
    let read = |text: &str| match parse::read_reply(c, text) {
        Ok(answer) => Reading::Accepted(answer),
        Err(problem) => Reading::Rejected(problem.to_string()),
    };
    // An unreadable reply is first sent again like a failed request; the repair comes after.
    let (first, problem) = match record
        .call(judge, &request, on_piece, "", IfUnreadable::Retry, read)
        .await
    {
        Ok(Reply::Read {
            value: (reason, verdict),
            text,
        }) => return record.scored(c, reason, verdict, &text),
        Ok(Reply::Unreadable { text, problem }) => (text, problem),
        Err(f) => return record.fail(c, f),
    };
    let form = format!(": {{\"reason\": \"…\", \"verdict\": …}}, where {answer}");
    let problem = parse::short(&problem);
    match record
        .repair(
            judge,
            &mut request,
            on_piece,
            &first,
            ("Your reply", &problem, &form),
            read,
        )
        .await
    {
        Ok(Reply::Read {
            value: (reason, verdict),
            text,
        }) => record.scored(c, reason, verdict, &text),
        Ok(Reply::Unreadable { problem, .. }) => record.fail(c, unreadable(&problem)),
        Err(f) => record.fail(c, f),
    }
}

/// The first request for a criterion, and the answer format it asks for (quoted again in a
/// repair request). Fails only when the criterion's own template cannot be rendered.
pub fn first_request(
    judge: &Judge,
    rubric: &Rubric,
    c: &Criterion,
    item: &Item,
    sample: u32,
) -> Result<(ChatRequest, String), Failure> {
    let order = option_order(judge, c, item, sample);
    let (answer, verdict_schema) = prompt::answer_format(c, &order);
    let rendered = own_template(c, item)?;
    let messages = prompt::criterion_messages(
        rubric,
        c,
        item,
        &answer,
        rendered.as_deref(),
        judge.system_prompt(rubric),
    );
    let request = judge.request(
        messages,
        Some(prompt::reply_schema(&verdict_schema)),
        sample,
    );
    Ok((request, answer))
}

/// The criterion's own template rendered with the item, if it has one.
pub fn own_template(c: &Criterion, item: &Item) -> Result<Option<String>, Failure> {
    match &c.method {
        Method::Judge(j) => match &j.template {
            Some(t) => crate::engine::template::render(t, item)
                .map(Some)
                .map_err(|m| Failure::error("template", m.to_string())),
            None => Ok(None),
        },
        _ => Ok(None),
    }
}

/// Options are shown in a seeded shuffled order per call (position bias), identical for
/// the same seed, item, criterion and sample.
pub fn option_order(judge: &Judge, c: &Criterion, item: &Item, sample: u32) -> Vec<usize> {
    let Kind::Options { options, .. } = &c.kind else {
        return Vec::new();
    };
    let mut order: Vec<usize> = (0..options.len()).collect();
    let mut key = format!(
        "{}\u{0}{}\u{0}{}",
        judge.opts.seed.unwrap_or(0),
        item.id,
        c.id
    );
    if sample > 0 {
        key = format!("{key}\u{0}{sample}");
    }
    let key = prompt::hash(&key);
    let seed = u64::from_str_radix(&key[..16], 16).unwrap_or(0);
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    order
}
