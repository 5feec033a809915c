//! An artifact's review: every rubric its type requires is loaded and compiled first, the
//! artifact moves to `in_review` (each step saved), each rubric is evaluated on the
//! artifact's content through the executor (its cell events passed to a watcher, the TUI's
//! grid), the evaluations are stored, and the artifact is approved only if all pass. The CLI's
//! `artifacts submit` and the TUI's Review pane both call this.

use std::sync::Arc;

use super::{Control, Error, JudgeEnv, JudgeSettings};
use crate::engine::executor::evaluate_item;
use crate::engine::{ExecOptions, compile};
use crate::formats::{LoadedRubric, load_rubric_as};
use crate::model::Item;
use crate::store::Workspace;
use crate::store::artifacts::{Artifact, Artifacts, Review, Status};
use crate::store::registry::Registry;

/// A rubric for review: the registry's current version when registered, else a file or
/// built-in name.
pub fn review_rubric(ws: &Workspace, spec: &str) -> Result<LoadedRubric, Error> {
    let registry = Registry::new(&ws.root);
    if let Ok(snapshot) = registry.latest(spec) {
        return Ok(LoadedRubric::detached(
            snapshot.rubric,
            &snapshot.path.display().to_string(),
        ));
    }
    let path = ws.root.join(spec);
    let spec = if path.is_file() {
        path.display().to_string()
    } else {
        spec.to_owned()
    };
    Ok(load_rubric_as(&spec, None)?)
}

/// How a review ended: the artifact as saved, this review's evaluations, and whether one
/// could not be completed (then the artifact stays in review).
pub struct ReviewOutcome {
    pub artifact: Artifact,
    pub reviews: Vec<Review>,
    pub incomplete: bool,
}

/// Cell events of a review as it runs: (the rubric's position among the required ones,
/// the event). Each rubric ends with an `ItemDone` naming it.
pub type ReviewWatch = tokio::sync::mpsc::Sender<(usize, crate::engine::GradeEvent)>;

/// Submits an artifact for review: every required rubric is loaded and compiled first, the
/// status moves to `in_review` (each step saved), every rubric is evaluated and the
/// evaluations stored; then `approved` if all pass, else `needs_revision`.
pub async fn review(
    ws: &Workspace,
    store: &Artifacts,
    id: &str,
    judge: &JudgeSettings,
    watch: Option<ReviewWatch>,
) -> Result<ReviewOutcome, Error> {
    let control = Control::default();
    let mut a = store.get(id)?;
    a.check_submit()?;
    let rubrics: Vec<LoadedRubric> = a
        .rubrics
        .iter()
        .map(|spec| review_rubric(ws, spec))
        .collect::<Result<_, _>>()?;
    let compiled: Vec<_> = rubrics.iter().map(compile).collect::<Result<_, _>>()?;
    // Each step is saved: a crash leaves the artifact where it stopped, never half-moved.
    if a.status != Status::InReview {
        a.transition(Status::PendingReview, "submitted for review")?;
        store.save(&a)?;
        a.transition(Status::InReview, "")?;
        store.save(&a)?;
    }
    let item = Item {
        id: a.id.clone(),
        submission: a.submission(),
        origin: format!("artifact {}", a.id),
        ..Item::default()
    };
    let mut reviews = Vec::new();
    for (k, (loaded, compiled)) in rubrics.iter().zip(&compiled).enumerate() {
        let judges = super::judges::build(
            judge,
            Some(loaded),
            &JudgeEnv {
                config: &ws.config,
                concurrency: None,
                cache_from: &ws.root,
                gate: Some(control.gate().clone()),
                batch: None,
            },
        )?;
        let opts = ExecOptions {
            allow_commands: ws.config.allow_commands,
            judge: judges.map(|j| Arc::clone(&j.panel)),
            cell_events: watch.is_some(),
            gate: Some(control.gate().clone()),
            ..ExecOptions::default()
        };
        let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
        let item = &item;
        let evaluate = async move {
            let e = evaluate_item(Some(compiled), item, 0, &opts, &tx).await;
            drop(tx);
            e
        };
        // The events are passed on as they come (or dropped when nobody watches).
        let forward = async {
            while let Some(ev) = rx.recv().await {
                if let Some(w) = &watch {
                    let _ = w.send((k, ev)).await;
                }
            }
        };
        let (e, ()) = tokio::join!(evaluate, forward);
        if let Some(w) = &watch {
            let mut done = e.clone();
            done.target_id = format!("{}@{}", e.rubric_id, e.rubric_version);
            let _ = w
                .send((
                    k,
                    crate::engine::GradeEvent {
                        run: 0,
                        item: 0,
                        criterion: None,
                        kind: crate::engine::EventKind::ItemDone(Box::new(done)),
                    },
                ))
                .await;
        }
        reviews.push(Review {
            rubric_id: e.rubric_id.clone(),
            rubric_version: e.rubric_version.clone(),
            passed: e.passed,
            score: e.score,
            evaluation: serde_json::to_value(crate::formats::results::item_json(&e))
                .unwrap_or_default(),
            time: jiff::Timestamp::now().to_string(),
        });
    }
    let incomplete = reviews
        .iter()
        .any(|r| r.evaluation["incomplete"] == serde_json::Value::Bool(true));
    a.reviews.extend(reviews.iter().cloned());
    if !incomplete {
        let all = reviews.iter().all(|r| r.passed);
        a.transition(
            if all {
                Status::Approved
            } else {
                Status::NeedsRevision
            },
            if all {
                "every required rubric passed"
            } else {
                "a required rubric failed"
            },
        )?;
    }
    store.save(&a)?;
    Ok(ReviewOutcome {
        artifact: a,
        reviews,
        incomplete,
    })
}
