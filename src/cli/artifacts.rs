//! `rubricate artifacts`: create artifacts, submit them for review (every rubric their type
//! requires is evaluated; approved only if all pass), review by hand, show and list.

use super::{CliError, JudgeArgs, exit};
use crate::core::text::{cell, visible};
use crate::store::Workspace;
use crate::store::artifacts::{Artifact, Artifacts, Provenance, Status};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum ArtifactsAction {
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
        #[arg(long, value_parser = super::choice::choice::<Status>())]
        status: Option<Status>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Decision {
    Approve,
    RequestRevision,
    Reject,
}

impl From<crate::run::Error> for CliError {
    fn from(e: crate::run::Error) -> Self {
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
    Ok(crate::store::artifacts::content_of(text))
}

pub(crate) fn run(action: &ArtifactsAction, ws_flag: Option<&Path>) -> Result<u8, CliError> {
    let ws = super::workspace(ws_flag)?;
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
            outln!(
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
            outln!("{}: {}", a.id, a.status.as_str());
            Ok(exit::OK)
        }
        ArtifactsAction::Revise { id, content, note } => {
            let a = store.revise(id, read_content(content)?, note)?;
            outln!("{}: draft with new content", a.id);
            Ok(exit::OK)
        }
        ArtifactsAction::Show { id, json } => {
            let a = store.get(id)?;
            if *json {
                outln!("{}", serde_json::to_string_pretty(&a).unwrap_or_default());
            } else {
                out!("{}", visible(&describe(&a)));
            }
            Ok(exit::OK)
        }
        ArtifactsAction::List { status } => {
            for a in store.list()? {
                match a {
                    Ok(a) if status.is_none_or(|s| s == a.status) => outln!(
                        "{:<38} {:<15} {:<12} {}",
                        cell(&a.id),
                        a.status.as_str(),
                        cell(&a.kind),
                        cell(&a.name)
                    ),
                    Ok(_) => {}
                    Err(e) => outln!("(damaged) {}", cell(&e.to_string())),
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

fn submit(ws: &Workspace, store: &Artifacts, id: &str, judge: &JudgeArgs) -> Result<u8, CliError> {
    judge.one_setting()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::input(format!("cannot start the runtime: {e}")))?;
    let outcome = runtime.block_on(crate::run::review::review(
        ws,
        store,
        id,
        &judge.settings(),
        None,
    ))?;
    for r in &outcome.reviews {
        outln!(
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
    outln!("{}: {}", a.id, a.status.as_str());
    Ok(if a.status == Status::Approved {
        exit::OK
    } else {
        exit::BELOW
    })
}
