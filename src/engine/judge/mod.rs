//! LLM judging of `method: judge` criteria (SCORING.md strategies and ensembles).
//!
//! A [`Judge`] is one model with its parameters; a [`Panel`] is who judges a run: one or
//! more judges (an ensemble, with weights), samples per judge, the strategy, and judges for
//! criteria that name a model of their own. Strategies: per criterion (one call each, in
//! parallel), one-shot (all criteria in one call), reversed double pass, holistic (one
//! 0–100 score). Criteria with a template of their own (level decode) are always judged one
//! by one, since their prompt is theirs.

pub mod ensemble;
pub mod examples;
pub mod feedback;
pub mod holistic;
pub mod one_shot;
pub mod parse;
pub mod per_criterion;
mod plan;
pub mod prompt;
mod record;

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::join_all;

pub use ensemble::{Ballot, Rule, ValueRule};

use crate::llm::{ChatRequest, Client, Gate, Message, OnPiece, Piece};
use crate::model::{
    Criterion, CriterionResult, Ensemble, Failure, Item, Method, MethodKind, Rubric, Verdict, Vote,
};

/// Judge parameters (SCORING.md "judge" settings, overridable per run).
#[derive(Debug, Clone)]
pub struct JudgeOptions {
    /// Sampling temperature (0: the judge's most likely answer).
    pub temperature: f64,
    /// The most tokens a reply may take.
    pub max_tokens: u32,
    /// A sampling seed, where the provider honours one.
    pub seed: Option<u64>,
    /// Replaces our system prompt.
    pub system_prompt: Option<String>,
    /// Ask for log-probabilities: a judged verdict then records how sure the judge was.
    pub logprobs: bool,
    /// How hard an OpenAI-compatible reasoning model thinks.
    pub reasoning_effort: Option<crate::model::ReasoningEffort>,
    /// Anthropic's extended thinking budget, in tokens (on top of `max_tokens`).
    pub thinking_budget: Option<u32>,
    /// Fields added to every request body as written.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Default for JudgeOptions {
    fn default() -> Self {
        Self {
            temperature: 0.0,
            max_tokens: 1024,
            seed: None,
            system_prompt: None,
            logprobs: false,
            reasoning_effort: None,
            thinking_budget: None,
            extra: serde_json::Map::new(),
        }
    }
}

/// One judge model with its parameters and its weight in an ensemble.
#[derive(Debug, Clone)]
pub struct Judge {
    /// The client its calls go through.
    pub client: Client,
    /// Its parameters.
    pub opts: JudgeOptions,
    /// Its weight in an ensemble (`weighted` rule).
    pub weight: f64,
}

impl Judge {
    /// A judge of weight 1.
    pub fn new(client: Client, opts: JudgeOptions) -> Self {
        Self {
            client,
            opts,
            weight: 1.0,
        }
    }

    /// The request for these messages (sample `sample`: a seed, when set, moves with it).
    pub fn request(
        &self,
        messages: Vec<Message>,
        schema: Option<serde_json::Value>,
        sample: u32,
    ) -> ChatRequest {
        ChatRequest {
            model: self.client.model.clone(),
            messages,
            temperature: self.opts.temperature,
            // Thinking tokens count against Anthropic's `max_tokens`: the budget comes on
            // top, so the verdict keeps the room `max_tokens` gives it.
            max_tokens: self
                .opts
                .max_tokens
                .saturating_add(self.opts.thinking_budget.unwrap_or(0)),
            seed: self.opts.seed.map(|s| s.wrapping_add(u64::from(sample))),
            schema,
            sample,
            logprobs: self.opts.logprobs,
            reasoning_effort: self.opts.reasoning_effort,
            thinking_budget: self.opts.thinking_budget,
            extra: self.opts.extra.clone(),
        }
    }

    /// Our system prompt unless the run or the rubric replaces it.
    pub fn system_prompt<'a>(&'a self, rubric: &'a Rubric) -> Option<&'a str> {
        self.opts.system_prompt.as_deref().or_else(|| {
            rubric
                .judge
                .as_ref()
                .and_then(|j| j.system_prompt.as_deref())
        })
    }

    /// Judges one criterion on its own (the per-criterion strategy, one sample).
    pub async fn judge_criterion(
        &self,
        rubric: &Rubric,
        c: &Criterion,
        item: &Item,
    ) -> CriterionResult {
        per_criterion::judge(self, rubric, c, item, 0, None).await
    }
}

/// How a judge is asked about an item's criteria.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// One call per criterion, the calls of an item in parallel.
    #[default]
    PerCriterion,
    /// Every criterion of an item in one call.
    OneShot,
    /// One-shot twice, in order and reversed, reconciled (position-bias control).
    DoublePass,
    /// One 0–100 score for the whole rubric.
    Holistic,
}

impl Strategy {
    /// The name rubrics, flags and results use.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::PerCriterion => "per_criterion",
            Strategy::OneShot => "one_shot",
            Strategy::DoublePass => "double_pass",
            Strategy::Holistic => "holistic",
        }
    }

    /// A strategy as rubrics write it (`per_criterion`, `one-shot`, `batch`, …).
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "per_criterion" | "criterion" => Some(Strategy::PerCriterion),
            "one_shot" | "oneshot" | "batch" => Some(Strategy::OneShot),
            "double_pass" | "reversed_double_pass" | "reversed" => Some(Strategy::DoublePass),
            "holistic" => Some(Strategy::Holistic),
            _ => None,
        }
    }
}

impl crate::core::choice::Choice for Strategy {
    const ALL: &'static [Self] = &[
        Strategy::PerCriterion,
        Strategy::OneShot,
        Strategy::DoublePass,
        Strategy::Holistic,
    ];
    const WHAT: &'static str = "judge strategy";
    fn name(self) -> &'static str {
        self.as_str()
    }
    // The names rubrics use too (`batch`, `reversed`).
    fn parse_choice(s: &str) -> Result<Self, crate::core::choice::UnknownChoice> {
        Strategy::parse(s).ok_or_else(|| crate::core::choice::UnknownChoice::of::<Self>(s))
    }
}

impl std::str::FromStr for Strategy {
    type Err = crate::core::choice::UnknownChoice;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        <Self as crate::core::choice::Choice>::parse_choice(s)
    }
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where streamed text goes: the criterion's index (or `None` for a call covering several).
pub type Sink<'a> = &'a (dyn Fn(Option<usize>, Piece<'_>) + Send + Sync);

/// Who judges a run, and how.
#[derive(Debug, Clone)]
pub struct Panel {
    /// The ensemble (one judge for most runs).
    pub judges: Vec<Arc<Judge>>,
    /// Judges for criteria that name their own model (`judge.model`), by model id.
    pub by_model: HashMap<String, Arc<Judge>>,
    /// Samples asked of each judge per criterion.
    pub samples: u32,
    /// How binary votes become a verdict.
    pub rule: Rule,
    /// How graded votes become a value.
    pub values: ValueRule,
    /// How each judge is asked.
    pub strategy: Strategy,
    /// Stream replies (their text goes to the sink, when there is one, as it arrives; a
    /// stream also cuts a connection that goes quiet).
    pub stream: bool,
}

/// Criteria judged in one call, and who judges them.
type Group<'c> = (Vec<Arc<Judge>>, Vec<(usize, &'c Criterion)>);

/// The holistic outcome for an item: its score out of 100 (or the failure), and the
/// result recorded for it.
#[derive(Debug, Clone)]
pub struct HolisticOutcome {
    /// The score out of 100, when there is one.
    pub score: Option<f64>,
    /// The result recorded for it.
    pub result: CriterionResult,
}

/// The id of the one result a holistic evaluation holds.
pub const HOLISTIC_ID: &str = "holistic";

/// The failure category of a call the run stopped before it was sent (its gate was
/// stopped): not a judge error, and not a result to record; the cell is still to grade.
pub const CANCELLED: &str = crate::model::UNSENT_CANCELLED;

impl Panel {
    /// A panel of one judge, one sample, per criterion.
    pub fn single(judge: Arc<Judge>) -> Self {
        Self {
            judges: vec![judge],
            by_model: HashMap::new(),
            samples: 1,
            rule: Rule::default(),
            values: ValueRule::default(),
            strategy: Strategy::default(),
            stream: false,
        }
    }

    /// Every judge's client waits at `gate` (the run's pause and stop; see [`Gate`]).
    #[must_use]
    pub fn with_gate(mut self, gate: &Gate) -> Self {
        for judge in self.judges.iter_mut().chain(self.by_model.values_mut()) {
            let j = Arc::make_mut(judge);
            j.client = j.client.clone().with_gate(gate.clone());
        }
        self
    }

    /// The judges of one criterion: its own model's, else the ensemble.
    fn voters(&self, c: &Criterion) -> Result<Vec<Arc<Judge>>, Failure> {
        match &c.method {
            Method::Judge(j) => match &j.model {
                Some(m) => self.by_model.get(m).map(|j| vec![Arc::clone(j)]).ok_or_else(|| {
                    Failure::error(
                        "judge",
                        format!("criterion '{}' names judge model '{m}', which this run did not set up (it is read from the run's rubric; an item's own rubric cannot add models)", c.id),
                    )
                }),
                None => Ok(self.judges.clone()),
            },
            _ => Ok(self.judges.clone()),
        }
    }

    fn samples(&self) -> u32 {
        self.samples.max(1)
    }

    /// Judges `judged` (criterion index, criterion) of one item with the panel's strategy.
    pub async fn judge_criteria(
        &self,
        rubric: &Rubric,
        judged: &[(usize, &Criterion)],
        item: &Item,
        sink: Option<Sink<'_>>,
    ) -> Vec<(usize, CriterionResult)> {
        let mut out = Vec::with_capacity(judged.len());
        let mut alone = Vec::new();
        // Criteria judged together, grouped by who judges them.
        let mut groups: Vec<Group<'_>> = Vec::new();
        for &(i, c) in judged {
            let voters = match self.voters(c) {
                Ok(v) => v,
                Err(f) => {
                    out.push((i, CriterionResult::failed(&c.id, MethodKind::Judge, f)));
                    continue;
                }
            };
            let own_template = matches!(&c.method, Method::Judge(j) if j.judged_alone());
            if self.strategy == Strategy::PerCriterion || own_template {
                alone.push((i, c, voters));
                continue;
            }
            let key: Vec<&str> = voters.iter().map(|j| j.client.id.as_str()).collect();
            match groups.iter_mut().find(|(v, _)| {
                v.iter()
                    .map(|j| j.client.id.as_str())
                    .eq(key.iter().copied())
            }) {
                Some((_, members)) => members.push((i, c)),
                None => groups.push((voters, vec![(i, c)])),
            }
        }
        let singles = alone.iter().map(|(i, c, voters)| async move {
            let piece = move |p: Piece<'_>| {
                if let Some(sink) = sink {
                    sink(Some(*i), p);
                }
            };
            let on_piece: Option<OnPiece<'_>> = self.stream.then_some(&piece);
            let ballots = join_all(voters.iter().flat_map(|judge| {
                (0..self.samples()).map(move |s| async move {
                    ballot(
                        judge,
                        s,
                        per_criterion::judge(judge, rubric, c, item, s, on_piece).await,
                    )
                })
            }))
            .await;
            (*i, self.decide(c, ballots))
        });
        let batches = groups.iter().map(|(voters, members)| async move {
            let criteria: Vec<&Criterion> = members.iter().map(|(_, c)| *c).collect();
            let piece = move |p: Piece<'_>| {
                if let Some(sink) = sink {
                    sink(None, p);
                }
            };
            let on_piece: Option<OnPiece<'_>> = self.stream.then_some(&piece);
            let runs = join_all(voters.iter().flat_map(|judge| {
                let criteria = &criteria;
                (0..self.samples()).map(move |s| async move {
                    let results = if self.strategy == Strategy::DoublePass {
                        one_shot::double_pass(judge, rubric, criteria, item, s, on_piece).await
                    } else {
                        one_shot::judge(judge, rubric, criteria, item, s, false, on_piece).await
                    };
                    (judge, s, results)
                })
            }))
            .await;
            let mut per_criterion: Vec<Vec<Ballot>> = vec![Vec::new(); members.len()];
            for (judge, s, results) in runs {
                for (k, r) in results.into_iter().enumerate() {
                    if let Some(slot) = per_criterion.get_mut(k) {
                        slot.push(ballot(judge, s, r));
                    }
                }
            }
            let decided: Vec<(usize, CriterionResult)> = members
                .iter()
                .zip(per_criterion)
                .map(|((i, c), ballots)| (*i, self.decide(c, ballots)))
                .collect();
            // Criteria judged in one call are decided together: while any of them waits
            // (a repair still in a batch, a stopped run), none is graded, so the next pass
            // asks the same call again — and its repair — rather than a new one for the rest.
            match decided
                .iter()
                .find_map(|(_, r)| r.failure.as_ref().filter(|f| f.unsent()).cloned())
            {
                Some(wait) => decided
                    .into_iter()
                    .map(|(i, r)| {
                        (
                            i,
                            CriterionResult::failed(
                                &r.criterion_id,
                                MethodKind::Judge,
                                wait.clone(),
                            ),
                        )
                    })
                    .collect(),
                None => decided,
            }
        });
        let (singles, batches) = futures_util::join!(join_all(singles), join_all(batches));
        out.extend(singles);
        out.extend(batches.into_iter().flatten());
        out.sort_by_key(|(i, _)| *i);
        out
    }

    /// One ballot is the result; several are combined, unless one was never sent (the
    /// run stopped, or it waits in a batch): then the cell is not graded yet.
    fn decide(&self, c: &Criterion, mut ballots: Vec<Ballot>) -> CriterionResult {
        if let Some(at) = ballots
            .iter()
            .position(|b| b.result.failure.as_ref().is_some_and(Failure::unsent))
        {
            return ballots.swap_remove(at).result;
        }
        if ballots.len() == 1
            && let Some(b) = ballots.pop()
        {
            return b.result;
        }
        ensemble::combine(c, &ballots, self.rule, self.values)
    }

    /// One 0–100 score for the whole rubric from every judge and sample (combined by the
    /// value rule when there are several).
    pub async fn judge_holistic(
        &self,
        rubric: &Rubric,
        item: &Item,
        sink: Option<Sink<'_>>,
    ) -> HolisticOutcome {
        let piece = move |p: Piece<'_>| {
            if let Some(sink) = sink {
                sink(None, p);
            }
        };
        let on_piece: Option<OnPiece<'_>> = self.stream.then_some(&piece);
        let answers = join_all(self.judges.iter().flat_map(|judge| {
            (0..self.samples()).map(move |s| async move {
                (
                    judge,
                    s,
                    holistic::judge(judge, rubric, item, s, on_piece).await,
                )
            })
        }))
        .await;
        // A score never sent (a stopped run, a batch still out) leaves the cell ungraded.
        if let Some(f) = answers
            .iter()
            .find_map(|(_, _, h)| h.score.as_ref().err().filter(|f| f.unsent()).cloned())
        {
            return HolisticOutcome {
                score: None,
                result: CriterionResult::failed(HOLISTIC_ID, MethodKind::Judge, f),
            };
        }
        let invocations: Vec<_> = answers.iter().map(|(_, _, h)| &h.invocation).collect();
        let invocation = record::merge(&invocations, "holistic");
        let mut scores: Vec<(f64, f64)> = answers
            .iter()
            .filter_map(|(j, _, h)| h.score.as_ref().ok().map(|x| (*x, j.weight)))
            .collect();
        let score = combine_scores(&mut scores, self.values, self.rule == Rule::Weighted);
        let reason = answers
            .iter()
            .find(|(_, _, h)| h.score.is_ok())
            .map(|(_, _, h)| h.reason.clone())
            .unwrap_or_default();
        let ensemble = (answers.len() > 1).then(|| Ensemble {
            rule: self.values.as_str().into(),
            agreement: None,
            votes: answers
                .iter()
                .map(|(j, s, h)| Vote {
                    judge: j.client.id.clone(),
                    sample: *s,
                    verdict: h.score.as_ref().ok().map(|x| Verdict::Score(*x)),
                    reason: h.reason.clone(),
                    failure: h.score.as_ref().err().cloned(),
                })
                .collect(),
        });
        let mut result = if let Some(x) = score {
            CriterionResult {
                criterion_id: HOLISTIC_ID.into(),
                verdict: Some(Verdict::Score(x)),
                value: Some((x / 100.0).clamp(0.0, 1.0)),
                reason,
                evidence: Vec::new(),
                method: MethodKind::Judge,
                failure: None,
                invocation: None,
                ensemble: None,
                turns: Vec::new(),
            }
        } else {
            let failure = answers
                .iter()
                .find_map(|(_, _, h)| h.score.as_ref().err().cloned())
                .unwrap_or_else(|| Failure::error("judge", "no judge answered"));
            CriterionResult::failed(HOLISTIC_ID, MethodKind::Judge, failure)
        };
        result.invocation = invocation.map(Box::new);
        result.ensemble = ensemble.map(Box::new);
        HolisticOutcome { score, result }
    }
}

fn ballot(judge: &Judge, sample: u32, result: CriterionResult) -> Ballot {
    Ballot {
        judge: judge.client.id.clone(),
        sample,
        weight: judge.weight,
        result,
    }
}

/// Several holistic scores → one, by the value rule (weighted mean under `weighted`).
fn combine_scores(scores: &mut [(f64, f64)], rule: ValueRule, weighted: bool) -> Option<f64> {
    if scores.is_empty() {
        return None;
    }
    scores.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = scores.len();
    Some(match rule {
        ValueRule::Mean => {
            let w = |x: &(f64, f64)| if weighted { x.1 } else { 1.0 };
            let total: f64 = scores.iter().map(w).sum();
            if total <= 0.0 {
                return None;
            }
            scores.iter().map(|x| w(x) * x.0).sum::<f64>() / total
        }
        ValueRule::Median if n % 2 == 1 => scores[n / 2].0,
        ValueRule::Median => f64::midpoint(scores[n / 2 - 1].0, scores[n / 2].0),
        // The most frequent; ties to the lower score (the worse case).
        ValueRule::Mode => {
            let mut best = (0usize, scores[0].0);
            for s in scores.iter() {
                let count = scores.iter().filter(|x| (x.0 - s.0).abs() < 1e-9).count();
                if count > best.0 {
                    best = (count, s.0);
                }
            }
            best.1
        }
        ValueRule::Min => scores[0].0,
        ValueRule::Max => scores[n - 1].0,
    })
}
