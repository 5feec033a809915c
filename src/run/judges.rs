//! The judges of a run, from its judge settings, the rubric's `judge:` block and the
//! workspace config (in that order of precedence): models and weights, strategy, samples
//! and ensemble rule, limits per endpoint, the cache, prices, the cost budget and the
//! run's pause gate.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::{Error, JudgeSettings};
use crate::engine::judge::{Judge, JudgeOptions, Panel, Strategy};
use crate::formats::LoadedRubric;
use crate::llm::{self, Cache, Client, ClientOptions, Limits, Meter};
use crate::model::{Method, Rubric};
use crate::store::WorkspaceConfig;

/// The run's judges and what they share.
pub struct RunJudges {
    pub panel: Arc<Panel>,
    pub meter: Arc<Meter>,
    /// Settings that work but probably not as meant (the front end shows them).
    pub warnings: Vec<String>,
}

/// Where the judges get their cache and which gate they wait at.
#[derive(Debug, Clone)]
pub struct JudgeEnv<'a> {
    pub config: &'a WorkspaceConfig,
    /// Judge calls in flight per endpoint (`None`: the workspace's, else 16).
    pub concurrency: Option<usize>,
    /// Where the response cache is looked for (the workspace, or the current folder).
    pub cache_from: &'a std::path::Path,
    /// Every call of the run waits here while the run is paused.
    pub gate: Option<llm::Gate>,
    /// A batch run's pass: calls are answered from (or go into) provider batches.
    pub batch: Option<Arc<super::batch::Desk>>,
}

/// `None` when no judge model is named anywhere (judge criteria then fail with "no judge
/// configured").
pub fn build(
    args: &JudgeSettings,
    rubric: Option<&LoadedRubric>,
    env: &JudgeEnv<'_>,
) -> Result<Option<RunJudges>, Error> {
    let config = env.config;
    let concurrency = env.concurrency;
    let rubric = rubric.map(|r| &*r.rubric);
    let settings = rubric.and_then(|r| r.judge.clone()).unwrap_or_default();
    let models: Vec<String> = if args.judge.is_empty() {
        settings
            .model
            .clone()
            .or_else(|| config.judge.model.clone())
            .into_iter()
            .collect()
    } else {
        args.judge.clone()
    };
    let own_models = rubric.map(criterion_models).unwrap_or_default();
    if models.is_empty() && own_models.is_empty() {
        return Ok(None);
    }
    let strategy = match args.strategy {
        Some(s) => s,
        None => match settings.strategy.as_deref() {
            Some(s) => Strategy::parse(s).ok_or_else(|| {
                Error::input(format!(
                    "the rubric's judge.strategy '{s}' is not per_criterion, one_shot, double_pass or holistic"
                ))
            })?,
            None => config.judge.strategy.unwrap_or_default(),
        },
    };
    if strategy == Strategy::Holistic
        && let Some(r) = rubric
        && let Some(c) = r
            .criteria
            .iter()
            .find(|c| !matches!(c.method, Method::Judge(_)))
    {
        return Err(Error::input(format!(
            "holistic judging scores the whole rubric with one number, but criterion '{}' is graded by a {}; use --strategy per-criterion or one-shot",
            c.id,
            c.method.kind().as_str()
        )));
    }
    if models.is_empty() && strategy == Strategy::Holistic {
        return Err(Error::input(
            "holistic judging needs a judge: pass --judge MODEL",
        ));
    }
    let timeout = args.timeout.or(config.judge.timeout).unwrap_or(120.0);
    if !(timeout.is_finite() && timeout > 0.0) {
        return Err(Error::input(
            "--timeout must be a positive number of seconds",
        ));
    }
    let max_cost = args.max_cost.or(config.judge.max_cost);
    if let Some(max) = max_cost
        && !(max.is_finite() && max > 0.0)
    {
        return Err(Error::input(
            "--max-cost must be a positive number of dollars",
        ));
    }
    if args.samples == 0 || args.samples > 100 {
        return Err(Error::input("--samples must be from 1 to 100"));
    }
    let opts = judge_options(args, &settings, &config.judge.reasoning)?;
    let mut warnings = Vec::new();
    if args.samples > 1 && opts.temperature == 0.0 {
        warnings.push(format!(
            "--samples {} at temperature 0 asks the same question several times; most providers answer the same way (pass --temperature 0.7)",
            args.samples
        ));
    }
    let client_opts = ClientOptions {
        concurrency: concurrency
            .or(config.judge.concurrency)
            .unwrap_or(16)
            .max(1),
        rpm: args.rpm.or(config.judge.rpm),
        tpm: args.tpm.or(config.judge.tpm),
        max_retries: args.max_retries.or(config.judge.max_retries).unwrap_or(4),
        timeout: Duration::from_secs_f64(timeout.min(86_400.0)),
        max_reply_bytes: config
            .judge
            .max_reply_bytes
            .unwrap_or(llm::DEFAULT_MAX_REPLY_BYTES),
        ..ClientOptions::default()
    };
    let meter = Arc::new(Meter::new(max_cost));
    let cache = if args.no_cache {
        None
    } else {
        crate::store::workspace::cache_dir(env.cache_from).map(|dir| {
            // What killed runs left in the cache goes, once per process (the first run).
            static SWEPT: std::sync::Once = std::sync::Once::new();
            let cache = Cache::new(dir);
            SWEPT.call_once(|| {
                cache.sweep_stale();
            });
            cache
        })
    };
    let mut factory = Factory {
        config,
        client_opts,
        opts,
        meter: Arc::clone(&meter),
        cache,
        limits: HashMap::new(),
        needs_price: max_cost.is_some(),
        gate: env.gate.clone(),
        batch: env.batch.clone(),
    };
    let mut judges = Vec::new();
    for spec in &models {
        let (id, weight) = split_weight(spec)?;
        let mut judge = factory.judge(id)?;
        judge.weight = weight;
        judges.push(Arc::new(judge));
    }
    let mut by_model = HashMap::new();
    for m in own_models {
        let judge = match judges.iter().find(|j| j.client.id == m) {
            Some(j) => Arc::clone(j),
            None => Arc::new(factory.judge(&m)?),
        };
        by_model.insert(m, judge);
    }
    let panel = Panel {
        judges,
        by_model,
        samples: args.samples,
        rule: args.ensemble,
        values: args.combine,
        strategy,
        stream: args.stream,
    };
    Ok(Some(RunJudges {
        panel: Arc::new(panel),
        meter,
        warnings,
    }))
}

/// Models named by criteria of their own (`judge.model` on a criterion).
fn criterion_models(r: &Rubric) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in &r.criteria {
        if let Method::Judge(j) = &c.method
            && let Some(m) = &j.model
            && !out.contains(m)
        {
            out.push(m.clone());
        }
    }
    out
}

fn judge_options(
    args: &JudgeSettings,
    settings: &crate::model::JudgeSettings,
    workspace: &crate::formats::reasoning::Reasoning,
) -> Result<JudgeOptions, Error> {
    let defaults = JudgeOptions::default();
    let temperature = args
        .temperature
        .or(settings.temperature)
        .unwrap_or(defaults.temperature);
    if !(0.0..=2.0).contains(&temperature) {
        return Err(Error::input("--temperature must be from 0 to 2"));
    }
    let system_prompt = match &args.system_prompt {
        Some(path) => Some(std::fs::read_to_string(path).map_err(|e| {
            Error::input(format!(
                "{}: cannot read the system prompt: {e}",
                path.display()
            ))
        })?),
        None => settings.system_prompt.clone(),
    };
    let thinking_budget = args
        .thinking_budget
        .or(settings.thinking_budget)
        .or(workspace.thinking_budget);
    if let Some(why) = thinking_budget.and_then(crate::model::thinking_budget_problem) {
        return Err(Error::input(format!("--thinking-budget: {why}")));
    }
    // The rubric's fields over the workspace's, field by field.
    let mut extra = workspace.extra.clone();
    extra.extend(settings.extra.clone());
    if let Some(why) = crate::model::owned_extra_field(&extra) {
        return Err(Error::input(format!("judge.{why}")));
    }
    Ok(JudgeOptions {
        temperature,
        max_tokens: args
            .max_tokens
            .or(settings.max_tokens)
            .unwrap_or(defaults.max_tokens)
            .max(1),
        seed: args.seed.or(settings.seed),
        system_prompt,
        logprobs: args.logprobs,
        reasoning_effort: args
            .reasoning_effort
            .or(settings.reasoning_effort)
            .or(workspace.effort),
        thinking_budget,
        extra,
    })
}

/// `MODEL=WEIGHT` → the model and its weight (1 when not given).
fn split_weight(spec: &str) -> Result<(&str, f64), Error> {
    let Some((id, w)) = spec.rsplit_once('=') else {
        return Ok((spec, 1.0));
    };
    match w.trim().parse::<f64>() {
        Ok(w) if w.is_finite() && w > 0.0 => Ok((id, w)),
        _ => Err(Error::input(format!(
            "--judge {spec}: the weight after '=' must be a positive number"
        ))),
    }
}

/// Builds judges that share one meter, the cache and one `Limits` per endpoint.
struct Factory<'a> {
    config: &'a WorkspaceConfig,
    client_opts: ClientOptions,
    opts: JudgeOptions,
    meter: Arc<Meter>,
    cache: Option<Cache>,
    limits: HashMap<String, Arc<Limits>>,
    needs_price: bool,
    gate: Option<llm::Gate>,
    batch: Option<Arc<super::batch::Desk>>,
}

impl Factory<'_> {
    fn judge(&mut self, id: &str) -> Result<Judge, Error> {
        let spec = self
            .config
            .resolve_model(id, &|k| std::env::var(k).ok())
            .map_err(Error::from)?;
        let servers = 1 + spec.replicas.len();
        // A batch pass that sends nothing live asks no server: answers come from disk and
        // new requests go into files, so no rate or concurrency limit holds them back.
        let unlimited = self.batch.as_ref().is_some_and(|d| !d.live());
        let limits = Arc::clone(self.limits.entry(spec.endpoint()).or_insert_with(|| {
            Arc::new(if unlimited {
                Limits::new(1024, None, None)
            } else {
                llm::endpoint_limits(&self.client_opts, servers)
            })
        }));
        let price = self.config.prices.get(id).copied();
        if self.needs_price && price.is_none() {
            return Err(Error::input(format!(
                "a cost limit (--max-cost, judge.max_cost or the Grade pane's $) needs the price of {id}: add it to rubricate.yaml, e.g.\nprices:\n  {id}: {{input: 0.15, output: 0.60}}   # dollars per million tokens"
            )));
        }
        let client = match &self.batch {
            None => Client::new(id, spec, self.client_opts.clone())
                .map_err(Error::from)?
                .with_meter(Arc::clone(&self.meter), price),
            Some(desk) => {
                let api = llm::batch::BatchApi::new(&spec, self.client_opts.max_reply_bytes)
                    .map_err(Error::from)?;
                let endpoint = spec.endpoint();
                // Answers read from a batch are not waited for between tries: a retry is
                // the next attempt, in a later batch.
                let opts = ClientOptions {
                    backoff: Duration::ZERO,
                    max_backoff: Duration::ZERO,
                    ..self.client_opts.clone()
                };
                Client::new(id, spec, opts)
                    .map_err(Error::from)?
                    .map_provider(|live| {
                        Arc::new(super::batch::BatchProvider::new(
                            Arc::clone(desk),
                            id,
                            &endpoint,
                            api,
                            live,
                        ))
                    })
                    .with_meter(Arc::clone(&self.meter), self.config.batch_price(id))
            }
        }
        .with_cache(self.cache.clone())
        .with_limits(limits);
        let client = match &self.gate {
            Some(gate) => client.with_gate(gate.clone()),
            None => client,
        };
        Ok(Judge::new(client, self.opts.clone()))
    }
}
