//! `rubricate artifacts`: create artifacts, submit them for review (every rubric their type
//! requires is evaluated; approved only if all pass), review by hand, show and list.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{CliError, JudgeArgs, exit};
use crate::engine::executor::evaluate_item;
use crate::engine::{ExecOptions, compile};
use crate::formats::{LoadedRubric, load_rubric_as};
use crate::model::Item;
use crate::store::Workspace;
use crate::store::artifacts::{Artifact, ArtifactError, Artifacts, Provenance, Review, Status};
use crate::store::registry::Registry;

#[derive(Debug, clap::Subcommand)]
pub enum ArtifactsAction {
    /// A new artifact (draft) from a file's content (JSON stays structured).
    Create {
        #[arg(long = "type")]
        kind: String,
        #[arg(long)]
        name: String,
        /// The content: a file (`-` for stdin).
        #[arg(long)]
        content: PathBuf,
        /// Who or what made it, e.g. `bot:quizbot` (default: user:$USER).
        #[arg(long)]
        source: Option<String>,
        /// How it was made (generator, human, import…).
        #[arg(long, default_value = "human")]
        provenance_kind: String,
        /// A rubric its review evaluates (repeatable; default: its type's in rubricate.yaml).
        #[arg(long)]
        rubric: Vec<String>,
    },
    /// Submits for review (`pending_review`, then `in_review`), evaluates every required
    /// rubric, then `approved` if all pass, else `needs_revision`.
    Submit {
        id: String,
        #[command(flatten)]
        judge: Box<JudgeArgs>,
    },
    /// A reviewer's decision on an artifact in review, with a note.
    Review {
        id: String,
        #[arg(value_enum)]
        decision: Decision,
        #[arg(long, default_value = "")]
        note: String,
    },
    /// New content for an artifact that needs revision (back to draft).
    Revise {
        id: String,
        #[arg(long)]
        content: PathBuf,
        #[arg(long, default_value = "")]
        note: String,
    },
    /// An artifact: status, history, and its reviews' scores.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Every artifact, optionally of one status.
    List {
        #[arg(long, value_enum)]
        status: Option<Status>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Decision {
    Approve,
    RequestRevision,
    Reject,
}

impl From<ArtifactError> for CliError {
    fn from(e: ArtifactError) -> Self {
        CliError::input(e.to_string())
    }
}

fn read_content(path: &Path) -> Result<serde_json::Value, CliError> {
    let text = if path.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| CliError::input(format!("stdin: {e}")))?
    } else {
        std::fs::read_to_string(path)
            .map_err(|e| CliError::input(format!("{}: {e}", path.display())))?
    };
    Ok(match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v @ (serde_json::Value::Object(_) | serde_json::Value::Array(_))) => v,
        _ => serde_json::Value::String(text),
    })
}

pub fn run(action: &ArtifactsAction, ws_flag: Option<&Path>) -> Result<u8, CliError> {
    let ws = super::runs::workspace(ws_flag)?;
    let store = Artifacts::new(&ws.root);
    match action {
        ArtifactsAction::Create {
            kind,
            name,
            content,
            source,
            provenance_kind,
            rubric,
        } => {
            let rubrics = if rubric.is_empty() {
                ws.config
                    .artifact_types
                    .get(kind)
                    .cloned()
                    .unwrap_or_default()
            } else {
                rubric.clone()
            };
            let source = source.clone().unwrap_or_else(|| {
                format!(
                    "user:{}",
                    std::env::var("USER").unwrap_or_else(|_| "unknown".into())
                )
            });
            let a = store.create(
                kind,
                name,
                read_content(content)?,
                Provenance {
                    source,
                    kind: provenance_kind.clone(),
                    created_at: jiff::Timestamp::now().to_string(),
                },
                rubrics,
            )?;
            println!(
                "{} created (draft, type {}, rubrics: {})",
                a.id,
                a.kind,
                a.rubrics.join(", ")
            );
            Ok(exit::OK)
        }
        ArtifactsAction::Submit { id, judge } => submit(&ws, &store, id, judge),
        ArtifactsAction::Review { id, decision, note } => {
            let mut a = store.get(id)?;
            if a.status == Status::PendingReview {
                a.transition(Status::InReview, "")?;
            }
            let to = match decision {
                Decision::Approve => Status::Approved,
                Decision::RequestRevision => Status::NeedsRevision,
                Decision::Reject => Status::Rejected,
            };
            a.transition(to, note)?;
            store.save(&a)?;
            println!("{}: {}", a.id, a.status.as_str());
            Ok(exit::OK)
        }
        ArtifactsAction::Revise { id, content, note } => {
            let mut a = store.get(id)?;
            a.transition(Status::Draft, note)?;
            a.content = read_content(content)?;
            store.save(&a)?;
            println!("{}: draft with new content", a.id);
            Ok(exit::OK)
        }
        ArtifactsAction::Show { id, json } => {
            let a = store.get(id)?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&a).unwrap_or_default());
            } else {
                print!("{}", describe(&a));
            }
            Ok(exit::OK)
        }
        ArtifactsAction::List { status } => {
            for a in store.list()? {
                match a {
                    Ok(a) if status.is_none_or(|s| s == a.status) => println!(
                        "{:<38} {:<15} {:<12} {}",
                        a.id,
                        a.status.as_str(),
                        a.kind,
                        a.name
                    ),
                    Ok(_) => {}
                    Err(e) => println!("(damaged) {e}"),
                }
            }
            Ok(exit::OK)
        }
    }
}

fn describe(a: &Artifact) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} · {} · type {} · {}",
        a.id,
        a.name,
        a.kind,
        a.status.as_str()
    );
    let _ = writeln!(
        out,
        "made by {} ({}) at {}",
        a.provenance.source, a.provenance.kind, a.provenance.created_at
    );
    let _ = writeln!(out, "rubrics: {}", a.rubrics.join(", "));
    out.push_str("history:\n");
    for t in &a.history {
        let from = t.from.map_or("-", Status::as_str);
        let _ = writeln!(out, "  {}  {from} → {}  {}", t.time, t.to.as_str(), t.note);
    }
    if !a.reviews.is_empty() {
        out.push_str("reviews:\n");
        for r in &a.reviews {
            let score = r
                .score
                .map_or_else(|| "n/a".into(), |s| format!("{:.0}%", s * 100.0));
            let _ = writeln!(
                out,
                "  {}  {}@{}  {score}  {}",
                r.time,
                r.rubric_id,
                r.rubric_version,
                if r.passed { "passed" } else { "failed" }
            );
        }
    }
    out
}

/// A rubric for review: the registry's current version when registered, else a file or
/// built-in name.
pub fn review_rubric(ws: &Workspace, spec: &str) -> Result<LoadedRubric, CliError> {
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

fn submit(ws: &Workspace, store: &Artifacts, id: &str, judge: &JudgeArgs) -> Result<u8, CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::input(format!("cannot start the runtime: {e}")))?;
    let outcome = runtime.block_on(review(ws, store, id, judge, None))?;
    for r in &outcome.reviews {
        println!(
            "{}@{}: {} ({})",
            r.rubric_id,
            r.rubric_version,
            r.score
                .map_or_else(|| "n/a".into(), |s| format!("{:.0}%", s * 100.0)),
            if r.passed {
                "passed"
            } else if r.evaluation["incomplete"] == serde_json::Value::Bool(true) {
                "incomplete"
            } else {
                "failed"
            }
        );
    }
    let a = &outcome.artifact;
    if outcome.incomplete {
        eprintln!(
            "{}: the review is incomplete (a criterion could not be scored); it stays in review — fix the cause and submit again",
            a.id
        );
        return Ok(exit::FAILURES);
    }
    println!("{}: {}", a.id, a.status.as_str());
    Ok(if a.status == Status::Approved {
        exit::OK
    } else {
        exit::BELOW
    })
}

/// How a review ended: the artifact as saved, this review's evaluations, and whether one
/// could not be completed (then the artifact stays in review).
pub struct ReviewOutcome {
    pub artifact: Artifact,
    pub reviews: Vec<Review>,
    pub incomplete: bool,
}

/// Submits an artifact for review: every required rubric is loaded and compiled first, the
/// status moves to `in_review` (each step saved), every rubric is evaluated and the
/// evaluations stored; then `approved` if all pass, else `needs_revision`.
/// Cell events of a review as it runs: (the rubric's position among the required ones,
/// the event). Each rubric ends with an `ItemDone` naming it.
pub type ReviewWatch = tokio::sync::mpsc::Sender<(usize, crate::engine::GradeEvent)>;

pub async fn review(
    ws: &Workspace,
    store: &Artifacts,
    id: &str,
    judge: &JudgeArgs,
    watch: Option<ReviewWatch>,
) -> Result<ReviewOutcome, CliError> {
    let mut a = store.get(id)?;
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
        let judges = super::judges::build(judge, Some(loaded), None, &ws.config)?;
        let opts = ExecOptions {
            allow_commands: ws.config.allow_commands,
            judge: judges.map(|j| Arc::clone(&j.panel)),
            cell_events: watch.is_some(),
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
            evaluation: serde_json::to_value(super::output::item_json(&e)).unwrap_or_default(),
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
