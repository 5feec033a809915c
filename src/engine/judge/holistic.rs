//! Holistic judging: one 0–100 score for the whole rubric, no per-criterion report.

use super::record::{Record, Reply, unreadable};
use super::{Judge, parse, prompt};
use crate::llm::{ChatRequest, IfUnreadable, OnPiece, Reading};
use crate::model::{Failure, Invocation, Item, Rubric};

/// A holistic answer: the score out of 100 (or why there is none), the reason, the record.
#[derive(Debug, Clone)]
pub struct Holistic {
    /// The score out of 100, or why there is none.
    pub score: Result<f64, Failure>,
    /// The judge's reason.
    pub reason: String,
    /// The record of the call.
    pub invocation: Invocation,
}

/// The holistic request for an item.
pub fn first_request(judge: &Judge, rubric: &Rubric, item: &Item, sample: u32) -> ChatRequest {
    let messages = prompt::holistic_messages(rubric, item, judge.system_prompt(rubric));
    judge.request(messages, Some(prompt::holistic_schema()), sample)
}

/// Asks `judge` for one holistic score of `item` against `rubric` (with one repair
/// request when the reply cannot be read).
pub async fn judge(
    judge: &Judge,
    rubric: &Rubric,
    item: &Item,
    sample: u32,
    on_piece: Option<OnPiece<'_>>,
) -> Holistic {
    let mut request = first_request(judge, rubric, item, sample);
    let mut record = Record::new(judge, "holistic", &request.messages);
    let done = |record: &Record, outcome: Result<(String, f64), Failure>, response: &str| {
        let (score, reason) = match outcome {
            Ok((reason, x)) => (Ok(x), reason),
            Err(f) => (Err(f), String::new()),
        };
        Holistic {
            score,
            reason,
            invocation: record.invocation(response),
        }
    };
    let read = |text: &str| match parse::read_holistic(text) {
        Ok(answer) => Reading::Accepted(answer),
        Err(problem) => Reading::Rejected(problem.to_string()),
    };
    let (first, problem) = match record
        .call(judge, &request, on_piece, "", IfUnreadable::Retry, read)
        .await
    {
        Ok(Reply::Read { value, text }) => return done(&record, Ok(value), &text),
        Ok(Reply::Unreadable { text, problem }) => (text, problem),
        Err(f) => return done(&record, Err(f), ""),
    };
    let form = ": {\"reason\": \"…\", \"score\": <a number from 0 to 100>}";
    let problem = parse::short(&problem);
    match record
        .repair(
            judge,
            &mut request,
            on_piece,
            &first,
            ("Your reply", &problem, form),
            read,
        )
        .await
    {
        Ok(Reply::Read { value, text }) => done(&record, Ok(value), &text),
        Ok(Reply::Unreadable { text, problem }) => done(&record, Err(unreadable(&problem)), &text),
        Err(f) => done(&record, Err(f), ""),
    }
}
