//! The invocation record behind a judged result, and the one way a judge call is made:
//! through the client, with its usage counted into the record and its error turned into a
//! failure that names the model.

use std::time::{SystemTime, UNIX_EPOCH};

use super::{CANCELLED, Judge, parse, prompt};
use crate::llm::{
    ChatRequest, Completion, IfUnreadable, LlmError, Message, OnPiece, ReadError, Reading,
};
use crate::model::{
    Criterion, CriterionResult, Failure, FailureKind, Invocation, MethodKind, Usage, Verdict,
};

/// The record being built for one judged result (one or two calls: the first and a repair).
#[derive(Debug, Clone)]
pub struct Record {
    model: String,
    strategy: &'static str,
    /// Every call was answered without a request of its own.
    cache_hit: bool,
    calls: u32,
    prompt_hash: String,
    usage: Usage,
    attempts: u32,
    latency_ms: u64,
    /// The last reply's token log-probabilities (empty when none were given).
    logprobs: Vec<(String, f64)>,
}

impl Record {
    pub fn new(judge: &Judge, strategy: &'static str, messages: &[Message]) -> Self {
        Self {
            model: judge.client.id.clone(),
            strategy,
            cache_hit: true,
            calls: 0,
            prompt_hash: prompt::hash(&render_messages(messages)),
            usage: Usage::default(),
            attempts: 0,
            latency_ms: 0,
            logprobs: Vec::new(),
        }
    }

    /// Sends `request` and reads its reply with `read` (only a reply read in full is
    /// cached; see [`crate::llm::Client::complete_read`]). The reading and the reply's
    /// text, the text of a reply that could not be read and why (for the repair request),
    /// or the failure: `judge`, `budget` when the cost limit stopped it before it was sent,
    /// [`CANCELLED`] when the run was stopped first.
    pub async fn call<T: Send>(
        &mut self,
        judge: &Judge,
        request: &ChatRequest,
        on_piece: Option<OnPiece<'_>>,
        what: &str,
        if_unreadable: IfUnreadable,
        read: impl Fn(&str) -> Reading<T> + Send + Sync,
    ) -> Result<Reply<T>, Failure> {
        match judge
            .client
            .complete_read(request, on_piece, if_unreadable, read)
            .await
        {
            Ok(r) => {
                self.count(&r.completion);
                Ok(Reply::Read {
                    value: r.value,
                    text: r.completion.response.text,
                })
            }
            Err(ReadError::Unreadable {
                completion,
                problem,
            }) => {
                self.count(&completion);
                Ok(Reply::Unreadable {
                    text: completion.response.text,
                    problem,
                })
            }
            Err(ReadError::Call { error, attempts }) => {
                self.attempts += attempts;
                let category = match error {
                    LlmError::Budget(_) => crate::model::UNSENT_BUDGET,
                    LlmError::Cancelled => CANCELLED,
                    LlmError::Batched => crate::model::UNSENT_BATCHED,
                    _ => "judge",
                };
                Err(Failure::error(
                    category,
                    format!("{}{what}: {error}", judge.client.id),
                ))
            }
        }
    }

    /// The one repair request: `request` goes again with the unreadable reply quoted back
    /// and a user turn saying `{what} could not be read: {problems}. Reply again with JSON
    /// only{form}`; its reply is the last word (an unreadable one is returned, not retried).
    pub async fn repair<T: Send>(
        &mut self,
        judge: &Judge,
        request: &mut ChatRequest,
        on_piece: Option<OnPiece<'_>>,
        unreadable: &str,
        (what, problems, form): (&str, &str, &str),
        read: impl Fn(&str) -> Reading<T> + Send + Sync,
    ) -> Result<Reply<T>, Failure> {
        request
            .messages
            .push(Message::assistant(parse::quote_reply(unreadable)));
        request.messages.push(Message::user(format!(
            "{what} could not be read: {problems}. Reply again with JSON only{form}"
        )));
        self.call(
            judge,
            request,
            on_piece,
            " (repair request)",
            IfUnreadable::Return,
            read,
        )
        .await
    }

    fn count(&mut self, done: &Completion) {
        self.usage.input_tokens += done.response.input_tokens;
        self.usage.output_tokens += done.response.output_tokens;
        self.usage.reasoning_tokens += done.response.reasoning_tokens;
        self.attempts += done.attempts;
        self.calls += 1;
        self.cache_hit &= done.cache_hit;
        self.latency_ms += u64::try_from(done.latency.as_millis()).unwrap_or(u64::MAX);
        self.logprobs.clone_from(&done.response.logprobs);
    }

    pub fn invocation(&self, response: &str) -> Invocation {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        Invocation {
            model: self.model.clone(),
            strategy: self.strategy.into(),
            prompt_hash: self.prompt_hash.clone(),
            response_hash: if response.is_empty() {
                String::new()
            } else {
                prompt::hash(response)
            },
            timestamp: jiff::Timestamp::from_millisecond(i64::try_from(now).unwrap_or(0))
                .map(|t| t.to_string())
                .unwrap_or_default(),
            usage: self.usage,
            latency_ms: self.latency_ms,
            attempts: self.attempts,
            cache_hit: self.calls > 0 && self.cache_hit,
            confidence: None,
        }
    }

    /// A result with this verdict (checked against the criterion once more).
    pub fn scored(
        &self,
        c: &Criterion,
        reason: String,
        verdict: Verdict,
        response: &str,
    ) -> CriterionResult {
        match c.value_of(&verdict) {
            Ok(value) => CriterionResult {
                criterion_id: c.id.clone(),
                verdict: Some(verdict),
                value,
                reason,
                evidence: Vec::new(),
                method: MethodKind::Judge,
                failure: None,
                invocation: Some(Box::new(Invocation {
                    // One verdict per reply: its token is the verdict's (a one-shot reply
                    // holds every criterion's, and is not read so).
                    confidence: (self.strategy == "per_criterion")
                        .then(|| verdict_confidence(&self.logprobs))
                        .flatten(),
                    ..self.invocation(response)
                })),
                ensemble: None,
                turns: Vec::new(),
            },
            Err(m) => self.fail(c, Failure::error("judge", m.to_string())),
        }
    }

    pub fn fail(&self, c: &Criterion, failure: Failure) -> CriterionResult {
        let mut r = CriterionResult::failed(&c.id, MethodKind::Judge, failure);
        r.invocation = Some(Box::new(self.invocation("")));
        r
    }
}

/// What a judge call gave.
#[derive(Debug)]
pub enum Reply<T> {
    /// A reply that was read (in full, or in part for a one-shot call), and its text.
    Read { value: T, text: String },
    /// A reply that could not be read, after its retries: its text and why.
    Unreadable { text: String, problem: String },
}

/// One record for several calls (the two passes of a double pass, an ensemble's votes):
/// usage and attempts add up, latency is the longest, a cache hit only if all were.
pub fn merge(parts: &[&Invocation], strategy: &str) -> Option<Invocation> {
    let first = parts.first()?;
    let mut models: Vec<&str> = Vec::new();
    for p in parts {
        if !models.contains(&p.model.as_str()) {
            models.push(&p.model);
        }
    }
    let joined = |f: fn(&Invocation) -> &str| {
        if parts.len() == 1 {
            return f(first).to_owned();
        }
        prompt::hash(&parts.iter().map(|p| f(p)).collect::<Vec<_>>().join("\n"))
    };
    Some(Invocation {
        model: models.join(","),
        strategy: strategy.to_owned(),
        prompt_hash: joined(|p| &p.prompt_hash),
        response_hash: joined(|p| &p.response_hash),
        timestamp: parts
            .iter()
            .map(|p| p.timestamp.clone())
            .max()
            .unwrap_or_default(),
        usage: Usage {
            input_tokens: parts.iter().map(|p| p.usage.input_tokens).sum(),
            output_tokens: parts.iter().map(|p| p.usage.output_tokens).sum(),
            reasoning_tokens: parts.iter().map(|p| p.usage.reasoning_tokens).sum(),
        },
        latency_ms: parts.iter().map(|p| p.latency_ms).max().unwrap_or(0),
        attempts: parts.iter().map(|p| p.attempts).sum(),
        cache_hit: parts.iter().all(|p| p.cache_hit),
        // The least sure of the parts.
        confidence: parts
            .iter()
            .filter_map(|p| p.confidence)
            .min_by(f64::total_cmp),
    })
}

/// The probability of a JSON reply's verdict, read from its tokens: the first token of the
/// value after `"verdict":` (where `MET` and `UNMET`, or one score and another, part). `None`
/// without tokens, or when the reply has no verdict key.
fn verdict_confidence(tokens: &[(String, f64)]) -> Option<f64> {
    if tokens.is_empty() {
        return None;
    }
    let text: String = tokens.iter().map(|(t, _)| t.as_str()).collect();
    let key = text.rfind("\"verdict\"")?;
    let after = &text[key + "\"verdict\"".len()..];
    let colon = after.find(':')?;
    let rest = &after[colon + 1..];
    let skipped = rest.len() - rest.trim_start_matches([' ', '\t', '\n', '\r', '"']).len();
    let value_at = key + "\"verdict\"".len() + colon + 1 + skipped;
    let mut start = 0;
    for (token, lp) in tokens {
        let end = start + token.len();
        if value_at < end {
            return Some(lp.exp());
        }
        start = end;
    }
    None
}

/// A call shared by several criteria: its tokens are spread over them (the first takes the
/// remainder), so totals summed over results stay exact.
pub fn share_usage(results: &mut [CriterionResult]) {
    let n = results.len() as u64;
    let Some(total) = results
        .first()
        .and_then(|r| r.invocation.as_ref())
        .map(|i| i.usage)
    else {
        return;
    };
    if n < 2 {
        return;
    }
    for (i, r) in results.iter_mut().enumerate() {
        if let Some(inv) = &mut r.invocation {
            let extra = |t: u64| if i == 0 { t % n } else { 0 };
            inv.usage = Usage {
                input_tokens: total.input_tokens / n + extra(total.input_tokens),
                output_tokens: total.output_tokens / n + extra(total.output_tokens),
                reasoning_tokens: total.reasoning_tokens / n + extra(total.reasoning_tokens),
            };
        }
    }
}

/// The failure for a reply that stayed unreadable after the repair request.
pub fn unreadable(problem: &str) -> Failure {
    Failure {
        kind: FailureKind::UnableToEvaluate,
        category: "judge".into(),
        message: format!(
            "the judge's reply could not be read, even after a repair request: {}",
            parse::short(problem)
        ),
    }
}

fn render_messages(messages: &[Message]) -> String {
    messages
        .iter()
        .map(|m| format!("{:?}: {}", m.role, m.content))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod confidence_tests {
    use super::verdict_confidence;

    fn tokens(parts: &[(&str, f64)]) -> Vec<(String, f64)> {
        parts
            .iter()
            .map(|(t, p)| ((*t).to_owned(), p.ln()))
            .collect()
    }

    #[test]
    fn the_verdicts_first_token_gives_the_confidence() {
        let t = tokens(&[
            ("{\"", 1.0),
            ("reason", 1.0),
            ("\":\"", 1.0),
            ("fine", 0.5),
            ("\",\"", 1.0),
            ("verdict", 1.0),
            ("\":\"", 1.0),
            ("UN", 0.62),
            ("MET", 0.99),
            ("\"}", 1.0),
        ]);
        let p = verdict_confidence(&t).unwrap();
        assert!((p - 0.62).abs() < 1e-12, "{p}");
        // A number, after a space.
        let t = tokens(&[("{\"verdict\": ", 1.0), ("4", 0.8), ("}", 1.0)]);
        assert!((verdict_confidence(&t).unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(verdict_confidence(&tokens(&[("{}", 1.0)])), None);
        assert_eq!(verdict_confidence(&[]), None);
    }
}
