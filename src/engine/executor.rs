//! Rubric × item → one stream of grading events, then an [`Evaluation`]. The one place a
//! criterion is scored; everything that grades (CLI, TUI, resumed runs) goes through here.

use std::fmt::Write as _;
use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

use super::aggregate::aggregate_results;
use super::checks::CheckInput;
use super::compile::{CompiledMethod, CompiledRubric, compile};
use super::feedback;
use super::judge::{HolisticOutcome, Panel, Strategy};
use crate::formats::LoadedRubric;
use crate::llm::Piece;
use crate::model::parse_verdict_text;
use crate::model::{
    Criterion, CriterionResult, Evaluation, Failure, Item, Kind, Scope, Verdict, new_evaluation_id,
};

/// One thing that happened while grading.
#[derive(Debug, Clone, PartialEq)]
pub struct GradeEvent {
    /// The run it belongs to.
    pub run: u64,
    /// The item's position in the input (0-based).
    pub item: usize,
    /// The criterion's index, for cell events.
    pub criterion: Option<usize>,
    /// What happened.
    pub kind: EventKind,
}

/// What happened to an item or a cell.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// The cell is waiting for its turn.
    Queued,
    /// The cell is being graded.
    Started,
    /// Text arriving from a streaming judge (`criterion` is `None` when one call covers
    /// several criteria).
    Chunk(String),
    /// The judge call is being tried again: text streamed so far is void.
    Retrying,
    /// The cell has its result.
    Scored(Box<CriterionResult>),
    /// The cell failed.
    Failed(Failure),
    /// The item is graded.
    ItemDone(Box<Evaluation>),
    /// A quick batch's items, done, by position (one message: the consumer wakes once).
    ItemsDone(Vec<(usize, Evaluation)>),
}

/// Stops a run: no new items start after `cancel()` (tokio-util's token, so a task can
/// also await `cancelled()`).
pub use tokio_util::sync::CancellationToken as CancelToken;

/// How a run grades its items.
#[derive(Debug, Clone)]
pub struct ExecOptions {
    /// The run's number, stamped on its events.
    pub run: u64,
    /// Items graded at once.
    pub concurrency: usize,
    /// Lets `command` checks run programs.
    pub allow_commands: bool,
    /// Recorded on each evaluation.
    pub evaluated_by: String,
    /// Also emit per-cell events (`Queued`, `Started`, `Scored`, `Failed`): the TUI wants
    /// them; a batch run reads whole items from `ItemDone` and skips their cost.
    pub cell_events: bool,
    /// Who judges `method: judge` criteria; without a panel they fail with "no judge
    /// configured".
    pub judge: Option<Arc<Panel>>,
    /// Feedback written by the panel's first judge (`--feedback llm`), falling back to
    /// the deterministic summary.
    pub llm_feedback: bool,
    /// Cells already graded (item position, criterion id), skipped: a resumed run grades
    /// only what its journal lacks. Items whose every cell is done should not be sent.
    pub done: Option<Arc<super::CellSet>>,
    /// The run's gate: while it is paused no new item starts (its judge calls wait at the
    /// same gate); once stopped, no item starts at all.
    pub gate: Option<crate::llm::Gate>,
}

impl Default for ExecOptions {
    fn default() -> Self {
        Self {
            run: 0,
            concurrency: 8,
            allow_commands: false,
            evaluated_by: "rubricate".into(),
            cell_events: false,
            judge: None,
            llm_feedback: false,
            done: None,
            gate: None,
        }
    }
}

/// Grades items against compiled rubrics, several at once, reporting as it goes.
#[derive(Debug, Clone)]
pub struct Executor {
    /// How it grades.
    pub opts: ExecOptions,
}

impl Executor {
    /// An executor with these options.
    pub fn new(opts: ExecOptions) -> Self {
        Self { opts }
    }

    /// Grades every item received (tagged with its position) and sends the events.
    /// Items run concurrently; consumers restore input order with [`InOrder`]. Items only
    /// checks and schemas grade (no judge, no command, no per-cell events) run in batches
    /// of up to [`QUICK_BATCH`] per task: a million quick items then cost thousands of tasks
    /// and wake-ups, not a million (judged items keep a task each, so their calls overlap).
    pub async fn run(
        &self,
        rubric: Option<Arc<CompiledRubric>>,
        mut items: mpsc::Receiver<(usize, Item)>,
        events: mpsc::Sender<GradeEvent>,
        cancel: CancelToken,
    ) {
        // Quick batches: a few at a time keep both cores busy; more would only hold items.
        let (batch, in_flight) = if quick(rubric.as_deref(), &self.opts) {
            (QUICK_BATCH, QUICK_TASKS)
        } else {
            (1, self.opts.concurrency.max(1))
        };
        let permits = Arc::new(Semaphore::new(in_flight));
        let mut tasks = JoinSet::new();
        loop {
            let mut chunk = Vec::with_capacity(batch);
            if items.recv_many(&mut chunk, batch).await == 0 {
                break;
            }
            if cancel.is_cancelled() {
                break;
            }
            let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
                break;
            };
            if let Some(gate) = &self.opts.gate
                && gate.wait().await.is_err()
            {
                break;
            }
            if cancel.is_cancelled() {
                break;
            }
            let rubric = rubric.clone();
            let events = events.clone();
            let opts = self.opts.clone();
            let cancel = cancel.clone();
            tasks.spawn(async move {
                // A batch's items are sent together once graded, as one message: the
                // consumer wakes once and takes them all (a batch of one goes as soon as
                // it is graded).
                let first = chunk.first().map_or(0, |(i, _)| *i);
                let mut done = Vec::with_capacity(chunk.len());
                for (index, item) in chunk {
                    // A stop between the items of a batch: the rest are not started.
                    if cancel.is_cancelled()
                        || opts.gate.as_ref().is_some_and(crate::llm::Gate::is_stopped)
                    {
                        break;
                    }
                    let evaluation =
                        evaluate_item(rubric.as_deref(), &item, index, &opts, &events).await;
                    done.push((index, evaluation));
                }
                let kind = match done.len() {
                    0 => None,
                    1 => done.pop().map(|(_, e)| EventKind::ItemDone(Box::new(e))),
                    _ => Some(EventKind::ItemsDone(done)),
                };
                if let Some(kind) = kind {
                    let _ = events
                        .send(GradeEvent {
                            run: opts.run,
                            item: first,
                            criterion: None,
                            kind,
                        })
                        .await;
                }
                drop(permit);
            });
            // Reap finished tasks so the set does not grow with the dataset.
            while tasks.try_join_next().is_some() {}
        }
        while tasks.join_next().await.is_some() {}
    }
}

/// Items per task when only checks and schemas grade them.
pub const QUICK_BATCH: usize = 64;
/// Quick batches graded at once: two keep both cores busy; four only held more items and
/// woke the writer more often (measured: 4 → 2 took 4–10 % off a million items).
const QUICK_TASKS: usize = 2;

/// Whether the run's items are quick to grade: one rubric whose criteria are all checks or
/// schemas, no LLM feedback and no per-cell events (the TUI watches cells one by one).
fn quick(rubric: Option<&CompiledRubric>, opts: &ExecOptions) -> bool {
    !opts.cell_events
        && !opts.llm_feedback
        && rubric.is_some_and(|r| {
            r.methods
                .iter()
                .all(|m| matches!(m, CompiledMethod::Check(_) | CompiledMethod::Schema(_)))
        })
}

/// Grades one item against its own rubric if it has one, else `rubric`, sending cell events.
pub async fn evaluate_item(
    rubric: Option<&CompiledRubric>,
    item: &Item,
    index: usize,
    opts: &ExecOptions,
    events: &mpsc::Sender<GradeEvent>,
) -> Evaluation {
    let own;
    let compiled = match (&item.rubric, rubric) {
        (None, Some(rubric)) => Ok(rubric),
        (None, None) => {
            // The caller checks every item has a rubric; an item without one scores nothing.
            let r = crate::model::Rubric::new("none", Vec::new());
            return build_evaluation(&r, item, Vec::new(), &opts.evaluated_by);
        }
        (Some(r), _) => match compile(&LoadedRubric::detached((**r).clone(), &item.origin)) {
            Ok(c) => {
                own = c;
                Ok(&own)
            }
            Err(d) => Err((r, d.to_string())),
        },
    };
    let holistic = opts
        .judge
        .as_deref()
        .filter(|p| p.strategy == Strategy::Holistic);
    if let (Some(panel), Ok(c)) = (holistic, &compiled) {
        let outcome = panel.judge_holistic(c.rubric(), item, None).await;
        return holistic_evaluation(c.rubric(), item, outcome, &opts.evaluated_by);
    }
    let (rubric_ref, results) = match compiled {
        Ok(c) => {
            let results = score_criteria(c, item, index, opts, events).await;
            (Arc::clone(&c.loaded.rubric), results)
        }
        Err((r, message)) => {
            let results = r
                .criteria
                .iter()
                .map(|c| {
                    CriterionResult::failed(
                        &c.id,
                        c.method.kind(),
                        Failure::error("rubric", message.clone()),
                    )
                })
                .collect();
            (Arc::clone(r), results)
        }
    };
    let mut evaluation = build_evaluation(&rubric_ref, item, results, &opts.evaluated_by);
    if opts.llm_feedback
        && let Some(judge) = opts.judge.as_deref().and_then(|p| p.judges.first())
        && let Some(text) =
            super::judge::feedback::write(judge, &rubric_ref, item, &evaluation).await
    {
        evaluation.feedback = text;
    }
    evaluation
}

async fn score_criteria(
    rubric: &CompiledRubric,
    item: &Item,
    index: usize,
    opts: &ExecOptions,
    events: &mpsc::Sender<GradeEvent>,
) -> Vec<CriterionResult> {
    let send = |criterion: usize, kind: EventKind| GradeEvent {
        run: opts.run,
        item: index,
        criterion: Some(criterion),
        kind,
    };
    if opts.cell_events {
        for (i, c) in rubric.rubric().criteria.iter().enumerate() {
            if !opts.done.as_ref().is_some_and(|d| d.contains(index, &c.id)) {
                let _ = events.send(send(i, EventKind::Queued)).await;
            }
        }
    }
    let input = CheckInput::new(item);
    let mut results: Vec<Option<CriterionResult>> = vec![None; rubric.methods.len()];
    let mut judged = Vec::new();
    let mut per_turn = Vec::new();
    let criteria = &rubric.rubric().criteria;
    let done = |c: &Criterion| opts.done.as_ref().is_some_and(|d| d.contains(index, &c.id));
    for (i, (criterion, method)) in criteria.iter().zip(&rubric.methods).enumerate() {
        if done(criterion) {
            continue;
        }
        if let Scope::Turn(rule) = criterion.scope {
            per_turn.push((i, criterion, method, rule));
            continue;
        }
        if matches!(method, CompiledMethod::Judge) && opts.judge.is_some() {
            judged.push((i, criterion));
            continue;
        }
        if opts.cell_events {
            let _ = events.send(send(i, EventKind::Started)).await;
        }
        let result = score_criterion(criterion, method, &input, opts).await;
        if opts.cell_events {
            let _ = events.send(send(i, cell_outcome(&result))).await;
        }
        results[i] = Some(result);
    }
    // Judge calls of one item run in parallel; the client caps calls in flight overall.
    if let Some(panel) = &opts.judge
        && !judged.is_empty()
    {
        if opts.cell_events {
            for &(i, _) in &judged {
                let _ = events.send(send(i, EventKind::Started)).await;
            }
        }
        // Streamed text is for watching: when the consumer falls behind, pieces are
        // dropped rather than slowing the judges (verdicts are always delivered).
        let sink = |criterion: Option<usize>, piece: Piece<'_>| {
            let kind = match piece {
                Piece::Text(t) => EventKind::Chunk(t.to_owned()),
                Piece::Retry => EventKind::Retrying,
            };
            let _ = events.try_send(GradeEvent {
                run: opts.run,
                item: index,
                criterion,
                kind,
            });
        };
        let sink: Option<super::judge::Sink<'_>> = opts.cell_events.then_some(&sink);
        for (i, result) in panel
            .judge_criteria(rubric.rubric(), &judged, item, sink)
            .await
        {
            if opts.cell_events {
                let _ = events.send(send(i, cell_outcome(&result))).await;
            }
            results[i] = Some(result);
        }
    }
    for (i, criterion, method, rule) in per_turn {
        if opts.cell_events {
            let _ = events.send(send(i, EventKind::Started)).await;
        }
        let result =
            super::turns::score_turns(rubric, (i, criterion), method, rule, item, opts).await;
        if opts.cell_events {
            let _ = events.send(send(i, cell_outcome(&result))).await;
        }
        results[i] = Some(result);
    }
    results.into_iter().flatten().collect()
}

/// An evaluation from one 0–100 score for the whole rubric (SCORING.md "Holistic").
pub fn holistic_evaluation(
    rubric: &crate::model::Rubric,
    item: &Item,
    outcome: HolisticOutcome,
    evaluated_by: &str,
) -> Evaluation {
    let weights: Vec<f64> = rubric.criteria.iter().map(|c| c.weight).collect();
    let (score, raw) = match outcome.score {
        Some(x) => {
            let (normalized, raw) = super::aggregate::holistic(&weights, x);
            let score = if rubric.scoring.normalize {
                normalized
            } else {
                raw
            };
            let score = super::length_penalty::penalized(&rubric.scoring, &item.submission, score);
            (Some(score), Some(raw))
        }
        None => (None, None),
    };
    let failures = usize::from(outcome.result.failure.is_some());
    let passed =
        failures == 0 && score.is_some_and(|s| rubric.scoring.reaches(s, rubric.pass_threshold));
    let mut feedback = format!(
        "Evaluation {} for rubric '{}'.\n",
        if passed { "PASSED" } else { "FAILED" },
        rubric.name
    );
    match (score, &outcome.result.failure) {
        (Some(s), _) if rubric.scoring.normalize => {
            let _ = writeln!(feedback, "Overall score: {:.0}% (holistic)", s * 100.0);
        }
        (Some(s), _) => {
            let _ = writeln!(feedback, "Overall score: {s} (raw, holistic)");
        }
        (None, Some(f)) => {
            let _ = writeln!(feedback, "Overall score: n/a ({f})");
        }
        (None, None) => feedback.push_str("Overall score: n/a\n"),
    }
    if !outcome.result.reason.is_empty() {
        feedback.push('\n');
        feedback.push_str(&outcome.result.reason);
        feedback.push('\n');
    }
    Evaluation {
        id: new_evaluation_id(),
        rubric_id: rubric.id.clone(),
        rubric_version: rubric.version.clone(),
        target_id: item.id.clone(),
        target_type: rubric.target_type.clone(),
        results: vec![outcome.result],
        score,
        raw,
        passed,
        incomplete: failures > 0,
        pending: Vec::new(),
        failures,
        feedback,
        evaluated_at: jiff::Timestamp::now().to_string(),
        evaluated_by: evaluated_by.to_owned(),
        graders: Vec::new(),
        tags: std::collections::BTreeMap::new(),
    }
}

fn cell_outcome(result: &CriterionResult) -> EventKind {
    match &result.failure {
        Some(f) => EventKind::Failed(f.clone()),
        None => EventKind::Scored(Box::new(result.clone())),
    }
}

/// Scores one criterion of one item. Never panics; problems become failures.
pub async fn score_criterion(
    criterion: &Criterion,
    method: &CompiledMethod,
    input: &CheckInput<'_>,
    opts: &ExecOptions,
) -> CriterionResult {
    let kind = criterion.method.kind();
    let outcome = match method {
        CompiledMethod::Judge => Err(Failure::error(
            "judge",
            "no judge configured: this criterion needs an LLM judge; give it a `check` or `schema` method to grade it deterministically",
        )),
        CompiledMethod::Check(check) => check
            .run(input)
            .map_err(|m| Failure::error("check", m.to_string())),
        CompiledMethod::Schema(schema) => Ok(schema.run(input)),
        CompiledMethod::Command(cmd) if !opts.allow_commands => Err(Failure::error(
            "command",
            format!(
                "command checks are off; pass --allow-commands or set `allow_commands: true` in rubricate.yaml to run `{}`",
                cmd.program
            ),
        )),
        CompiledMethod::Command(cmd) => match cmd.run(input.item).await {
            Ok(text) => parse_verdict_text(criterion, &text)
                .map(|verdict| super::checks::CheckOutput {
                    verdict,
                    measure: None,
                    evidence: vec![format!("`{}` printed {text:?}", cmd.program)],
                })
                .map_err(|m| Failure::error("command", m.to_string())),
            Err(m) => Err(Failure::error("command", m.to_string())),
        },
    };
    let out = match outcome {
        Ok(out) => out,
        Err(f) => return CriterionResult::failed(&criterion.id, kind, f),
    };
    let verdict = fit_verdict(criterion, out.verdict);
    match criterion.value_of(&verdict) {
        Ok(value) => CriterionResult {
            criterion_id: criterion.id.clone(),
            verdict: Some(verdict),
            value,
            reason: out.evidence.first().cloned().unwrap_or_default(),
            evidence: out.evidence,
            method: kind,
            failure: None,
            invocation: None,
            ensemble: None,
            turns: Vec::new(),
        },
        Err(m) => CriterionResult::failed(
            &criterion.id,
            kind,
            Failure::error(kind.as_str(), m.to_string()),
        ),
    }
}

/// A MET/UNMET from a check, on a graded criterion, becomes its best/worst answer.
fn fit_verdict(c: &Criterion, v: Verdict) -> Verdict {
    let best = |met: bool| match &c.kind {
        Kind::Binary => None,
        Kind::Levels(levels) => {
            let l = if met { levels.last() } else { levels.first() };
            l.map(|l| Verdict::Level(l.id.clone()))
        }
        Kind::Options { options, .. } => {
            let scored = options.iter().filter(|o| !o.na);
            let o = if met {
                scored.max_by(|a, b| a.value.total_cmp(&b.value))
            } else {
                scored.min_by(|a, b| a.value.total_cmp(&b.value))
            };
            o.map(|o| Verdict::Choice(o.label.clone()))
        }
        Kind::Scale(s) => Some(Verdict::Score(if met { s.max } else { s.min })),
    };
    match v {
        Verdict::Met => best(true).unwrap_or(Verdict::Met),
        Verdict::Unmet => best(false).unwrap_or(Verdict::Unmet),
        other => other,
    }
}

/// Aggregates results into an evaluation with feedback.
pub fn build_evaluation(
    rubric: &crate::model::Rubric,
    item: &Item,
    results: Vec<CriterionResult>,
    evaluated_by: &str,
) -> Evaluation {
    let mut agg = aggregate_results(rubric, &results);
    if rubric.scoring.length_penalty.is_some()
        && let Some(s) = agg.score
    {
        let s = super::length_penalty::penalized(&rubric.scoring, &item.submission, s);
        agg.score = Some(s);
        agg.passed =
            rubric.scoring.reaches(s, rubric.pass_threshold) && agg.gates_failed.is_empty();
    }
    let feedback = feedback::summary(rubric, &results, &agg);
    let tags = super::aggregate::tag_scores(rubric, &results);
    Evaluation {
        id: new_evaluation_id(),
        rubric_id: rubric.id.clone(),
        rubric_version: rubric.version.clone(),
        target_id: item.id.clone(),
        target_type: rubric.target_type.clone(),
        results,
        score: agg.score,
        raw: agg.raw,
        passed: agg.passed,
        incomplete: agg.incomplete,
        pending: Vec::new(),
        failures: agg.failures,
        feedback,
        evaluated_at: jiff::Timestamp::now().to_string(),
        evaluated_by: evaluated_by.to_owned(),
        graders: agg.graders,
        tags,
    }
}
