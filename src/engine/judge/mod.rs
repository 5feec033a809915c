//! LLM judging of `method: judge` criteria. Today: the per-criterion strategy (one call per
//! criterion, the calls of an item in parallel), level decode with a criterion's own
//! template, scales with anchors, options shuffled per call (seeded) and mapped back, and
//! one repair request for an unreadable reply before the result is `unable_to_evaluate`.

pub mod parse;
pub mod prompt;

use std::time::{SystemTime, UNIX_EPOCH};

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;

use crate::llm::{ChatRequest, Client, Message};
use crate::model::{
    Criterion, CriterionResult, Failure, FailureKind, Invocation, Item, Kind, Method, MethodKind,
    Rubric, Usage,
};

/// Judge parameters (SCORING.md "judge" settings, overridable per run).
#[derive(Debug, Clone)]
pub struct JudgeOptions {
    pub temperature: f64,
    pub max_tokens: u32,
    pub seed: Option<u64>,
    /// Replaces our system prompt.
    pub system_prompt: Option<String>,
}

impl Default for JudgeOptions {
    fn default() -> Self {
        Self {
            temperature: 0.0,
            max_tokens: 1024,
            seed: None,
            system_prompt: None,
        }
    }
}

/// One judge model with its parameters.
#[derive(Debug, Clone)]
pub struct Judge {
    pub client: Client,
    pub opts: JudgeOptions,
}

impl Judge {
    pub fn new(client: Client, opts: JudgeOptions) -> Self {
        Self { client, opts }
    }

    /// Judges one criterion of one item. Never panics; every problem is a failure.
    pub async fn judge_criterion(
        &self,
        rubric: &Rubric,
        c: &Criterion,
        item: &Item,
    ) -> CriterionResult {
        let order = self.option_order(c, item);
        let (answer, verdict_schema) = prompt::answer_format(c, &order);
        let rendered = match &c.method {
            Method::Judge(j) => match &j.template {
                Some(t) => match crate::engine::template::render(t, item) {
                    Ok(text) => Some(text),
                    Err(m) => {
                        return CriterionResult::failed(
                            &c.id,
                            MethodKind::Judge,
                            Failure::error("template", m),
                        );
                    }
                },
                None => None,
            },
            _ => None,
        };
        let system = self.opts.system_prompt.as_deref().or_else(|| {
            rubric
                .judge
                .as_ref()
                .and_then(|j| j.system_prompt.as_deref())
        });
        let mut messages =
            prompt::criterion_messages(rubric, c, item, &answer, rendered.as_deref(), system);
        let mut request = ChatRequest {
            model: self.client.model.clone(),
            messages: messages.clone(),
            temperature: self.opts.temperature,
            max_tokens: self.opts.max_tokens,
            seed: self.opts.seed,
            schema: Some(prompt::reply_schema(&verdict_schema)),
        };
        let prompt_text = render_messages(&messages);
        let mut record = Record::new(self, &prompt_text);
        let first = match self.client.complete(&request).await {
            Ok(done) => done,
            Err((e, attempts)) => {
                record.attempts += attempts;
                return record.fail(
                    c,
                    Failure::error("judge", format!("{}: {e}", self.client.id)),
                );
            }
        };
        record.add(&first);
        let problem = match parse::read_reply(c, &first.response.text) {
            Ok((reason, verdict)) => {
                return record.scored(c, reason, verdict, &first.response.text);
            }
            Err(p) => p,
        };
        // One repair request quoting the problem.
        messages.push(Message::assistant(first.response.text.clone()));
        messages.push(Message::user(format!(
            "Your reply could not be read: {problem}. Reply again with JSON only: {{\"reason\": \"…\", \"verdict\": …}}, where {answer}"
        )));
        request.messages = messages;
        match self.client.complete(&request).await {
            Ok(second) => {
                record.add(&second);
                match parse::read_reply(c, &second.response.text) {
                    Ok((reason, verdict)) => record.scored(c, reason, verdict, &second.response.text),
                    Err(p) => record.fail(
                        c,
                        Failure {
                            kind: FailureKind::UnableToEvaluate,
                            category: "judge".into(),
                            message: format!("the judge's reply could not be read, even after a repair request: {p}"),
                        },
                    ),
                }
            }
            Err((e, attempts)) => {
                record.attempts += attempts;
                record.fail(
                    c,
                    Failure::error("judge", format!("{} (repair request): {e}", self.client.id)),
                )
            }
        }
    }

    /// Options are shown in a seeded shuffled order per call (position bias), identical for
    /// the same seed, item and criterion.
    fn option_order(&self, c: &Criterion, item: &Item) -> Vec<usize> {
        let Kind::Options { options, .. } = &c.kind else {
            return Vec::new();
        };
        let mut order: Vec<usize> = (0..options.len()).collect();
        let key = prompt::hash(&format!(
            "{}\u{0}{}\u{0}{}",
            self.opts.seed.unwrap_or(0),
            item.id,
            c.id
        ));
        let seed = u64::from_str_radix(&key[..16], 16).unwrap_or(0);
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        order
    }
}

fn render_messages(messages: &[Message]) -> String {
    messages
        .iter()
        .map(|m| format!("{:?}: {}", m.role, m.content))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The invocation record being built for one judged result.
struct Record {
    model: String,
    /// Every call of this result was answered from the cache.
    cache_hit: bool,
    calls: u32,
    prompt_hash: String,
    usage: Usage,
    attempts: u32,
    latency_ms: u64,
}

impl Record {
    fn new(judge: &Judge, prompt_text: &str) -> Self {
        Self {
            model: judge.client.id.clone(),
            cache_hit: true,
            calls: 0,
            prompt_hash: prompt::hash(prompt_text),
            usage: Usage::default(),
            attempts: 0,
            latency_ms: 0,
        }
    }

    fn add(&mut self, done: &crate::llm::Completion) {
        self.usage.input_tokens += done.response.input_tokens;
        self.usage.output_tokens += done.response.output_tokens;
        self.attempts += done.attempts;
        self.calls += 1;
        self.cache_hit &= done.cache_hit;
        self.latency_ms += u64::try_from(done.latency.as_millis()).unwrap_or(u64::MAX);
    }

    fn invocation(&self, response: &str) -> Invocation {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        Invocation {
            model: self.model.clone(),
            strategy: "per_criterion".into(),
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
        }
    }

    fn scored(
        &self,
        c: &Criterion,
        reason: String,
        verdict: crate::model::Verdict,
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
                invocation: Some(self.invocation(response)),
            },
            Err(m) => self.fail(c, Failure::error("judge", m)),
        }
    }

    fn fail(&self, c: &Criterion, failure: Failure) -> CriterionResult {
        let mut r = CriterionResult::failed(&c.id, MethodKind::Judge, failure);
        r.invocation = Some(self.invocation(""));
        r
    }
}
