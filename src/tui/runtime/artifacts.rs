//! The runtime's artifact work: the artifacts read for the Review pane, one made from a
//! typed or read content, a submission evaluated (watched live on the Grade pane's grid), a
//! reviewer's decision, a revision's content file written for `$EDITOR` and saved back.

use super::{Runtime, Topic, failed, misrouted};
use crate::store::artifacts::{Artifacts, Provenance, Status};
use crate::tui::effect::Effect;
use crate::tui::msg::FailureKind;
use crate::tui::msg::Msg;
use crate::tui::path_prompt;

/// Why an artifact effect failed, worded once for the Review pane (whose list comes back
/// with the words, or, for a content file, for the status line).
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("{path}: {error}")]
    ReadContent { path: String, error: std::io::Error },
    #[error("no artifact made: {0}")]
    Create(String),
    #[error("{id}: not revised ({error}); the edit is kept in {kept}")]
    Revise {
        id: String,
        error: String,
        kept: String,
    },
    #[error("{id}: no runtime to evaluate on")]
    NoRuntime { id: String },
    #[error("{id}: {error}")]
    Review { id: String, error: String },
    /// A decision refused: the store's own words.
    #[error("{0}")]
    Decide(String),
}

impl super::Failed for Failure {
    fn kind(&self) -> FailureKind {
        match self {
            Failure::ReadContent { error, .. } => FailureKind::of_io(error),
            _ => FailureKind::Other,
        }
    }
}

impl Runtime {
    /// Carries out an artifact effect (`Topic::Artifacts`).
    pub(super) fn handle_artifacts(&self, effect: Effect) -> Option<Msg> {
        Some(match effect {
            Effect::LoadArtifacts => self.artifacts(None),
            Effect::ReadArtifactFile(typed) => {
                let path = path_prompt::resolve(&typed, &self.ws.root);
                match std::fs::read_to_string(&path) {
                    Ok(text) => Msg::ArtifactContent {
                        from: path.display().to_string(),
                        content: crate::store::artifacts::content_of(text),
                    },
                    Err(error) => failed(&Failure::ReadContent {
                        path: path.display().to_string(),
                        error,
                    }),
                }
            }
            Effect::CreateArtifact {
                kind,
                name,
                content,
                rubrics,
            } => {
                let store = Artifacts::new(&self.ws.root);
                let provenance = Provenance {
                    source: format!("user:{}", self.annotator()),
                    kind: "human".into(),
                    created_at: jiff::Timestamp::now().to_string(),
                };
                let message = match store.create(&kind, &name, content, provenance, rubrics) {
                    Ok(a) => format!("{} made: a {kind} draft; s submits it for review", a.id),
                    Err(e) => Failure::Create(e.to_string()).to_string(),
                };
                self.artifacts(Some(message))
            }
            Effect::ReviseArtifact { id, file } => self.revise_artifact(&id, &file),
            Effect::SubmitArtifact { id, tag } => self.submit_artifact(&id, tag),
            Effect::DecideArtifact { id, to, note } => self.decide_artifact(&id, to, &note),
            // The event loop hands the terminal to the editor itself (`artifact_draft`).
            Effect::EditArtifact { .. } => return None,
            other => misrouted(Topic::Artifacts, &other),
        })
    }

    /// A reviewer's decision (an artifact pending review is taken into review first).
    fn decide_artifact(&self, id: &str, to: Status, note: &str) -> Msg {
        let store = Artifacts::new(&self.ws.root);
        let result = store.get(id).and_then(|mut a| {
            if a.status == Status::PendingReview {
                a.transition(Status::InReview, "")?;
            }
            a.transition(to, note)?;
            store.save(&a)
        });
        let message = match result {
            Ok(()) => format!("{id}: {}", to.as_str()),
            Err(e) => Failure::Decide(e.to_string()).to_string(),
        };
        self.artifacts(Some(message))
    }

    /// The file an artifact's content is edited in (`.rubricate/drafts/<id>.json|txt`),
    /// written from the content unless an unsaved edit is already there.
    pub fn artifact_draft(&self, id: &str) -> Result<std::path::PathBuf, crate::store::FileError> {
        use crate::store::FileError;
        crate::store::names::check("artifact id", id).map_err(|e| e.to_string())?;
        let store = Artifacts::new(&self.ws.root);
        let a = store.get(id).map_err(|e| e.to_string())?;
        let ext = if a.content.is_string() { "txt" } else { "json" };
        let file = self
            .ws
            .path(".rubricate/drafts")
            .join(format!("{id}.{ext}"));
        if !file.exists() {
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir).map_err(FileError::at(dir))?;
            }
            let text = crate::store::artifacts::content_text(&a.content);
            crate::store::AtomicFile::write_whole(&file, text.as_bytes())
                .map_err(FileError::at(&file))?;
        }
        Ok(file)
    }

    /// Saves an edited content file as the artifact's revision (the file goes once saved;
    /// kept, with the reason said, when the revision is refused).
    fn revise_artifact(&self, id: &str, file: &std::path::Path) -> Msg {
        let store = Artifacts::new(&self.ws.root);
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(error) => {
                let path = file.display().to_string();
                return self.artifacts(Some(Failure::ReadContent { path, error }.to_string()));
            }
        };
        let content = crate::store::artifacts::content_of(text);
        let unchanged = store.get(id).is_ok_and(|a| a.content == content);
        let message = if unchanged {
            format!("{id}: unchanged; nothing revised")
        } else {
            match store.revise(id, content, "revised in the terminal UI") {
                Ok(a) => format!(
                    "{}: revised, {} (s submits it again)",
                    a.id,
                    a.status.as_str()
                ),
                Err(e) => {
                    return self.artifacts(Some(
                        Failure::Revise {
                            id: id.to_owned(),
                            error: e.to_string(),
                            kept: file.display().to_string(),
                        }
                        .to_string(),
                    ));
                }
            }
        };
        let _ = std::fs::remove_file(file);
        self.artifacts(Some(message))
    }

    /// Submits an artifact: its rubrics are evaluated here (a worker thread), with the
    /// workspace's judge when one is set.
    fn submit_artifact(&self, id: &str, tag: u64) -> Msg {
        let judge = super::sessions::judge_settings(None, None, None);
        let store = Artifacts::new(&self.ws.root);
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return self.artifacts(Some(Failure::NoRuntime { id: id.to_owned() }.to_string()));
        };
        let watch = self.watch_review(&store, id, tag, &handle);
        let message = match handle.block_on(crate::run::review::review(
            &self.ws, &store, id, &judge, watch,
        )) {
            Ok(o) if o.incomplete => format!("{id}: the review is incomplete; it stays in review"),
            Ok(o) => format!("{id}: {}", o.artifact.status.as_str()),
            Err(e) => Failure::Review {
                id: id.to_owned(),
                error: e.to_string(),
            }
            .to_string(),
        };
        self.artifacts(Some(message))
    }

    /// Shows a review on the Grade pane's grid as it runs: rows are the required rubrics,
    /// columns every criterion among them. `None` when there is no UI to show it on.
    fn watch_review(
        &self,
        store: &Artifacts,
        id: &str,
        tag: u64,
        handle: &tokio::runtime::Handle,
    ) -> Option<crate::run::review::ReviewWatch> {
        let ui = self.tx.lock().ok()?.clone()?;
        let artifact = store.get(id).ok()?;
        let rubrics: Vec<_> = artifact
            .rubrics
            .iter()
            .filter_map(|spec| crate::run::review::review_rubric(&self.ws, spec).ok())
            .collect();
        let mut columns: Vec<(String, bool)> = Vec::new();
        let mut maps: Vec<Vec<usize>> = Vec::new();
        for r in &rubrics {
            let mut map = Vec::new();
            for c in &r.rubric.criteria {
                let at = columns
                    .iter()
                    .position(|(x, _)| *x == c.id)
                    .unwrap_or_else(|| {
                        columns.push((c.id.clone(), c.weight < 0.0));
                        columns.len() - 1
                    });
                map.push(at);
            }
            maps.push(map);
        }
        let _ = ui.blocking_send(Msg::RunStarted {
            tag,
            run_id: format!("review of {id}"),
            criteria: columns,
            items: Some(rubrics.len()),
        });
        let (watch, mut events) =
            tokio::sync::mpsc::channel::<(usize, crate::engine::GradeEvent)>(1024);
        handle.spawn(async move {
            while let Some((k, mut ev)) = events.recv().await {
                ev.item = k;
                ev.criterion = ev
                    .criterion
                    .and_then(|c| maps.get(k).and_then(|m| m.get(c)).copied());
                if ui
                    .send(Msg::Grade {
                        tag,
                        event: Box::new(ev),
                    })
                    .await
                    .is_err()
                {
                    return;
                }
            }
            let _ = ui
                .send(Msg::GradeFinished {
                    tag,
                    summary: "review finished".into(),
                    end: crate::tui::msg::RunEnd::Finished,
                    tokens: 0,
                    cost: 0.0,
                })
                .await;
        });
        Some(watch)
    }

    /// Every artifact of the workspace (damaged files are skipped and said).
    fn artifacts(&self, message: Option<String>) -> Msg {
        let store = Artifacts::new(&self.ws.root);
        let mut damaged = 0;
        let artifacts = store
            .list()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|a| a.map_err(|_| damaged += 1).ok())
            .collect();
        let message = match (message, damaged) {
            (m, 0) => m,
            (Some(m), n) => Some(format!("{m} ({n} damaged artifact files skipped)")),
            (None, n) => Some(format!("{n} damaged artifact files skipped")),
        };
        Msg::Artifacts { artifacts, message }
    }
}
