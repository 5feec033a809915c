//! Artifacts and their review (the seed's review flow): an artifact has a type, content,
//! provenance and the rubrics its type requires; its status moves `draft` → `pending_review`
//! → `in_review` → `approved` | `needs_revision` | `rejected` by validated transitions, each kept in
//! its history; the evaluations of a review are stored with it. One file per artifact,
//! `artifacts/<id>.json`, replaced atomically on every change.

use crate::store::StoreError;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::core::atomic::AtomicFile;

/// Where an artifact is in its review flow: draft → pending review → in review →
/// approved, needs revision (back to draft) or rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Being written; not yet submitted.
    Draft,
    /// Submitted, waiting for a reviewer.
    PendingReview,
    /// A reviewer has taken it.
    InReview,
    /// Accepted.
    Approved,
    /// Sent back for changes.
    NeedsRevision,
    /// Refused for good.
    Rejected,
}

crate::choice_enum!(Status, "review status", {
    Status::Draft => "draft",
    Status::PendingReview => "pending_review",
    Status::InReview => "in_review",
    Status::Approved => "approved",
    Status::NeedsRevision => "needs_revision",
    Status::Rejected => "rejected",
});

impl Status {
    /// The name files and flags use (`pending_review`).
    pub fn as_str(self) -> &'static str {
        crate::core::choice::Choice::name(self)
    }

    /// The moves the review flow allows.
    fn can_move_to(self, to: Status) -> bool {
        use Status::{Approved, Draft, InReview, NeedsRevision, PendingReview, Rejected};
        matches!(
            (self, to),
            (Draft, PendingReview)
                | (PendingReview, InReview)
                | (InReview, Approved | NeedsRevision | Rejected)
                // A revised artifact goes back to draft with its new content (and only
                // then is submitted again: see [`Artifact::check_submit`]).
                | (NeedsRevision, Draft)
        )
    }
}

/// Where an artifact came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// Who or what made it (`bot:quizbot`, `user:ana`).
    pub source: String,
    /// How (`generator`, `human`, `import`…).
    pub kind: String,
    /// When it was made (RFC 3339).
    pub created_at: String,
}

/// One move in an artifact's review flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    /// Where it was (`None`: it was just made).
    pub from: Option<Status>,
    /// Where it went.
    pub to: Status,
    /// When (RFC 3339).
    pub time: String,
    /// The reviewer's note, if any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// On a move to `needs_revision`: the hash of the content the review asked changes to
    /// ([`Artifact::content_hash`]), so a resubmission can tell a revision from the same
    /// content sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_sha256: Option<String>,
}

/// One rubric's evaluation from a review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Review {
    /// The rubric evaluated.
    pub rubric_id: String,
    /// Its version.
    pub rubric_version: String,
    /// The evaluation passed.
    pub passed: bool,
    /// Its score, when there is one.
    pub score: Option<f64>,
    /// The whole evaluation, as `grade --format json` writes an item.
    pub evaluation: serde_json::Value,
    /// When it was evaluated (RFC 3339).
    pub time: String,
}

/// Something made by a person or a bot (a quiz, a summary) going through review: its
/// content, where it came from, where it stands, and every review of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Artifact {
    /// Its id, which names its file in `artifacts/`.
    pub id: String,
    /// Its type (`type` in the file), which names the rubrics its review evaluates.
    #[serde(rename = "type")]
    pub kind: String,
    /// The name people see.
    pub name: String,
    /// Text, or any JSON (graded as its JSON text; templates see its fields).
    pub content: serde_json::Value,
    /// Who made it, how and when.
    pub provenance: Provenance,
    /// The rubrics a review evaluates (registry ids, files or built-in names).
    pub rubrics: Vec<String>,
    /// Where it stands in review.
    pub status: Status,
    /// Every move so far, oldest first.
    pub history: Vec<Transition>,
    /// Every review's evaluations, oldest first.
    #[serde(default)]
    pub reviews: Vec<Review>,
}

impl Artifact {
    /// The content as the text a rubric grades.
    pub fn submission(&self) -> String {
        match &self.content {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }

    /// Moves to `to`, or says why it cannot.
    pub fn transition(&mut self, to: Status, note: &str) -> Result<(), StoreError> {
        if !self.status.can_move_to(to) {
            return Err(StoreError::Refused(format!(
                "artifact {} is {}; it cannot become {} (the flow is draft → pending_review → in_review → approved | needs_revision | rejected)",
                self.id,
                self.status.as_str(),
                to.as_str()
            )));
        }
        self.history.push(Transition {
            from: Some(self.status),
            to,
            time: jiff::Timestamp::now().to_string(),
            note: note.to_owned(),
            content_sha256: (to == Status::NeedsRevision).then(|| self.content_hash()),
        });
        self.status = to;
        Ok(())
    }

    /// SHA-256 of the content as a rubric grades it: what "revised" is measured by.
    fn content_hash(&self) -> String {
        crate::core::hash::sha256_hex(self.submission())
    }

    /// The review decision that asked for changes, when the artifact's last decision did
    /// (by a rubric or by hand).
    fn revision_asked(&self) -> Option<&Transition> {
        self.history
            .iter()
            .rev()
            .find(|t| {
                matches!(
                    t.to,
                    Status::Approved | Status::NeedsRevision | Status::Rejected
                )
            })
            .filter(|t| t.to == Status::NeedsRevision)
    }

    /// The rule for submitting an artifact for review, for every front end (`artifacts
    /// submit`, the Review pane, through [`crate::run::review::review`]): one whose last
    /// review asked for changes is submitted again only once revised — moved back to draft
    /// with content that differs from the content that review saw.
    pub fn check_submit(&self) -> Result<(), StoreError> {
        let Some(asked) = self.revision_asked() else {
            return Ok(());
        };
        let what_to_do = format!(
            "revise it first (`rubricate artifacts revise {} --content FILE`, or `e` in the Review pane), then submit it",
            self.id
        );
        let why = if asked.note.is_empty() {
            String::new()
        } else {
            format!(" (\"{}\")", asked.note)
        };
        if self.status == Status::NeedsRevision {
            return Err(StoreError::Refused(format!(
                "artifact {} needs revision: its review of {} asked for changes{why}; {what_to_do}",
                self.id, asked.time
            )));
        }
        if self.status == Status::Draft
            && asked.content_sha256.as_deref() == Some(self.content_hash().as_str())
        {
            return Err(StoreError::Refused(format!(
                "artifact {}'s content is unchanged since its review of {} asked for changes{why}; {what_to_do}",
                self.id, asked.time
            )));
        }
        Ok(())
    }
}

/// An artifact's content from a file's text: a JSON object or array stays structured,
/// anything else is text.
pub fn content_of(text: String) -> serde_json::Value {
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v @ (serde_json::Value::Object(_) | serde_json::Value::Array(_))) => v,
        _ => serde_json::Value::String(text),
    }
}

/// The text a file holds for an artifact's content (JSON pretty-printed): what `$EDITOR`
/// edits and [`content_of`] reads back.
pub fn content_text(content: &serde_json::Value) -> String {
    match content {
        serde_json::Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// The workspace's artifacts folder.
#[derive(Debug, Clone)]
pub struct Artifacts {
    dir: PathBuf,
}

impl Artifacts {
    /// The artifacts of the workspace at `workspace_root`.
    pub fn new(workspace_root: &Path) -> Self {
        Self {
            dir: workspace_root.join("artifacts"),
        }
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Makes and saves a draft artifact; refused without rubrics to review it with.
    pub fn create(
        &self,
        kind: &str,
        name: &str,
        content: serde_json::Value,
        provenance: Provenance,
        rubrics: Vec<String>,
    ) -> Result<Artifact, StoreError> {
        if rubrics.is_empty() {
            return Err(StoreError::Refused(format!(
                "an artifact of type '{kind}' needs the rubrics its review evaluates: pass --rubric, or define the type under `artifact_types:` in rubricate.yaml"
            )));
        }
        let now = jiff::Timestamp::now().to_string();
        let a = Artifact {
            id: format!("art_{}", uuid::Uuid::now_v7().simple()),
            kind: kind.to_owned(),
            name: name.to_owned(),
            content,
            provenance,
            rubrics,
            status: Status::Draft,
            history: vec![Transition {
                from: None,
                to: Status::Draft,
                time: now,
                note: String::new(),
                content_sha256: None,
            }],
            reviews: Vec::new(),
        };
        self.save(&a)?;
        Ok(a)
    }

    /// New content for an artifact: a draft keeps being a draft; one that needs revision
    /// goes back to draft (with the note) when the content changed; any other status
    /// refuses.
    pub fn revise(
        &self,
        id: &str,
        content: serde_json::Value,
        note: &str,
    ) -> Result<Artifact, StoreError> {
        let mut a = self.get(id)?;
        let before = a.content_hash();
        a.content = content;
        if a.status == Status::NeedsRevision && a.content_hash() == before {
            return Err(StoreError::Refused(format!(
                "artifact {}: the new content is the content its review asked changes to; a revision must change it",
                a.id
            )));
        }
        if a.status != Status::Draft {
            a.transition(Status::Draft, note)?;
        }
        self.save(&a)?;
        Ok(a)
    }

    /// Saves `a` (replacing its file whole).
    pub fn save(&self, a: &Artifact) -> Result<(), StoreError> {
        super::names::check("artifact id", &a.id)
            .map_err(|e| StoreError::Refused(e.to_string()))?;
        std::fs::create_dir_all(&self.dir).map_err(|e| StoreError::io(&self.dir, e))?;
        let path = self.path(&a.id);
        let text =
            serde_json::to_string_pretty(a).map_err(|e| StoreError::Refused(e.to_string()))?;
        AtomicFile::write_whole(&path, text.as_bytes()).map_err(|e| StoreError::io(&path, e))
    }

    /// An artifact by id or unique prefix.
    pub fn get(&self, id: &str) -> Result<Artifact, StoreError> {
        let all = self.ids()?;
        let matches: Vec<&String> = all.iter().filter(|a| a.starts_with(id)).collect();
        let found = match matches.as_slice() {
            [one] => (*one).clone(),
            [] => {
                return Err(StoreError::Refused(format!(
                    "no artifact '{id}'; `rubricate artifacts list` shows them"
                )));
            }
            _ if all.iter().any(|a| a == id) => id.to_owned(),
            _ => {
                return Err(StoreError::Refused(format!(
                    "'{id}' matches {} artifacts; give more of the id",
                    matches.len()
                )));
            }
        };
        let path = self.path(&found);
        let text = std::fs::read_to_string(&path).map_err(|e| StoreError::io(&path, e))?;
        let a: Artifact = serde_json::from_str(&text).map_err(|e| {
            StoreError::Refused(format!(
                "{}:{}:{}: the artifact file is damaged ({e})",
                path.display(),
                e.line(),
                e.column()
            ))
        })?;
        // Its id names the file it is saved to: it must be this file's name.
        if a.id != found {
            return Err(StoreError::Refused(format!(
                "{}: its id '{}' is not its file's name; the file was edited or copied by hand",
                path.display(),
                a.id.escape_debug()
            )));
        }
        Ok(a)
    }

    fn ids(&self) -> Result<Vec<String>, StoreError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(&self.dir, e)),
        };
        let mut ids: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let p = e.path();
                (p.extension().is_some_and(|x| x == "json"))
                    .then(|| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                    .flatten()
            })
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// Every artifact, oldest first (ids are time-ordered); damaged files as errors.
    pub fn list(&self) -> Result<Vec<Result<Artifact, StoreError>>, StoreError> {
        Ok(self.ids()?.iter().map(|id| self.get(id)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provenance() -> Provenance {
        Provenance {
            source: "bot:quizbot".into(),
            kind: "generator".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn a_review_that_asked_for_changes_is_answered_only_by_new_content() {
        let dir = tempfile::tempdir().unwrap();
        let store = Artifacts::new(dir.path());
        let mut a = store
            .create("reply", "R", "v1".into(), provenance(), vec!["r".into()])
            .unwrap();
        a.check_submit().unwrap();
        for to in [
            Status::PendingReview,
            Status::InReview,
            Status::NeedsRevision,
        ] {
            a.transition(to, "too short").unwrap();
        }
        store.save(&a).unwrap();
        let e = a.check_submit().unwrap_err().to_string();
        assert!(
            e.contains("needs revision") && e.contains("(\"too short\")"),
            "{e}"
        );
        assert!(
            a.transition(Status::PendingReview, "").is_err(),
            "needs_revision → pending_review skips the revision"
        );
        let e = store
            .revise(&a.id, "v1".into(), "")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a revision must change it"), "{e}");
        // Back to draft with the same content (a file edited by hand): still refused.
        a.transition(Status::Draft, "").unwrap();
        let e = a.check_submit().unwrap_err().to_string();
        assert!(e.contains("content is unchanged since its review"), "{e}");
        a.content = "v2".into();
        a.check_submit().unwrap();
        // An approval after the revision ends the matter, whatever came before.
        let mut a = store.revise(&a.id, "v2".into(), "longer").unwrap();
        assert_eq!(a.status, Status::Draft);
        a.check_submit().unwrap();
        for to in [Status::PendingReview, Status::InReview, Status::Approved] {
            a.transition(to, "").unwrap();
        }
        a.check_submit().unwrap();
    }

    #[test]
    fn the_review_flow_is_validated_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = Artifacts::new(dir.path());
        let mut a = store
            .create(
                "quiz",
                "Biology",
                serde_json::json!({"questions": ["Q1"]}),
                provenance(),
                vec!["quiz".into()],
            )
            .unwrap();
        assert_eq!(a.status, Status::Draft);
        let e = a.transition(Status::Approved, "").unwrap_err().to_string();
        assert!(e.contains("is draft; it cannot become approved"), "{e}");
        a.transition(Status::PendingReview, "").unwrap();
        a.transition(Status::InReview, "").unwrap();
        a.transition(Status::NeedsRevision, "too few questions")
            .unwrap();
        a.transition(Status::Draft, "added questions").unwrap();
        store.save(&a).unwrap();
        let back = store.get(&a.id[..10]).unwrap();
        assert_eq!(back, a);
        assert_eq!(back.history.len(), 5);
        assert_eq!(back.submission(), r#"{"questions":["Q1"]}"#);
        assert!(
            store
                .create("quiz", "x", serde_json::json!("t"), provenance(), vec![])
                .is_err()
        );
        std::fs::write(store.path(&a.id), "{").unwrap();
        let e = store.get(&a.id).unwrap_err().to_string();
        assert!(e.contains("the artifact file is damaged"), "{e}");
    }
}
