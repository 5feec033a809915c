//! Carries out the app's effects off the UI loop (on blocking worker threads) and answers
//! with messages. Reading a window builds the dataset's index the first time (in the
//! background: the UI keeps drawing); a scan stops early when a newer one supersedes it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::app::{Effect, Msg};
use super::data::{self, DatasetInfo};
use crate::formats::dataset::index::LineIndex;
use crate::store::Workspace;
use crate::store::labels::{Journal, Op};

pub struct Runtime {
    pub ws: Workspace,
    /// The datasets, by the position the UI knows them at (new ones are only appended).
    pub(super) datasets: std::sync::RwLock<Vec<DatasetInfo>>,
    annotator: Mutex<String>,
    /// The open label journal (its lock held while labelling one dataset).
    journal: Mutex<Option<(usize, Journal)>>,
    /// Indexes read so far, by dataset.
    pub(super) indexes: Mutex<BTreeMap<usize, Arc<LineIndex>>>,
    pub(super) latest_scan: AtomicU64,
    /// Where runs send their events (set by the event loop).
    pub tx: Mutex<Option<tokio::sync::mpsc::Sender<Msg>>>,
    runs: super::run::Runs,
    /// Set when the UI quits: long walks (estimates) stop at once.
    pub(super) quitting: std::sync::atomic::AtomicBool,
    /// When the last "labels next" plan finished and how long it took (plans are spaced
    /// so that, labelling a large dataset fast, planning takes at most a quarter of a core).
    pub(super) plan_cost: Mutex<(Option<std::time::Instant>, std::time::Duration)>,
    /// Batch runs being watched, each with its "ask now" flag.
    pub(super) batch_watch:
        Mutex<std::collections::HashMap<String, Arc<std::sync::atomic::AtomicBool>>>,
}

impl Runtime {
    pub fn new(ws: Workspace, datasets: Vec<DatasetInfo>, annotator: String) -> Self {
        Self {
            ws,
            datasets: std::sync::RwLock::new(datasets),
            annotator: Mutex::new(annotator),
            journal: Mutex::new(None),
            indexes: Mutex::new(BTreeMap::new()),
            latest_scan: AtomicU64::new(0),
            tx: Mutex::new(None),
            runs: super::run::Runs::default(),
            quitting: std::sync::atomic::AtomicBool::new(false),
            plan_cost: Mutex::new((None, std::time::Duration::ZERO)),
            batch_watch: Mutex::default(),
        }
    }

    /// The UI is quitting: runs stop sending (their journals keep what was graded; they
    /// can be continued), and estimates stop walking.
    pub fn quit(&self) {
        self.quitting.store(true, Ordering::SeqCst);
        self.runs.cancel_all();
    }

    pub(super) fn ui(&self) -> Option<tokio::sync::mpsc::Sender<Msg>> {
        self.tx.lock().ok()?.clone()
    }

    /// The dataset at `i` (as the UI numbers them).
    pub(super) fn dataset(&self, i: usize) -> Option<DatasetInfo> {
        self.datasets.read().ok()?.get(i).cloned()
    }

    pub(super) fn annotator(&self) -> String {
        self.annotator.lock().map(|a| a.clone()).unwrap_or_default()
    }

    /// Marks a scan as the newest (older ones stop).
    pub fn note(&self, effect: &Effect) {
        if let Effect::Scan { tag, .. } = effect {
            self.latest_scan.fetch_max(*tag, Ordering::SeqCst);
        }
    }

    /// Carries out one effect (blocking) and returns its answer.
    pub fn handle(&self, effect: Effect) -> Option<Msg> {
        match effect {
            Effect::LoadArtifacts => Some(self.artifacts(None)),
            Effect::ExportRun {
                run_id,
                format,
                only,
            } => Some(
                match super::export::export(&self.ws, &run_id, format, only.as_deref()) {
                    Ok(said) => Msg::Info(said),
                    Err(e) => Msg::Error(format!("not exported: {e}")),
                },
            ),
            Effect::NewRubric { from } => Some(
                match super::rubric_files::create(&self.ws, from.as_deref()) {
                    Ok(path) => Msg::RubricCreated(path),
                    Err(e) => Msg::Error(format!("no new rubric: {e}")),
                },
            ),
            Effect::AddFirstCriterion { path, seq } => Some(
                match super::rubric_files::add_first_criterion(&self.ws, &path) {
                    Ok(draft) => Msg::RubricLoaded {
                        view: super::rubric_files::load(&self.ws, &path, Some(&draft)),
                        message: Some(
                            "a first criterion, in the draft: edit it in place (r n w …)".into(),
                        ),
                        draft: Some(seq),
                    },
                    Err(e) => Msg::RubricLoaded {
                        view: super::rubric_files::load(&self.ws, &path, None),
                        message: Some(format!("no criterion added: {e}")),
                        draft: Some(seq),
                    },
                },
            ),
            Effect::CompletePath(typed) => {
                let (text, candidates) = super::path_prompt::complete(&typed, &self.ws.root);
                Some(Msg::PathCompleted {
                    typed,
                    text,
                    candidates,
                })
            }
            Effect::AddDataset(typed) => Some(match self.add_dataset(&typed) {
                Ok(info) => Msg::DatasetAdded(info),
                Err(e) => Msg::Error(format!("not opened: {e}")),
            }),
            Effect::ReadArtifactFile(typed) => {
                let path = super::path_prompt::resolve(&typed, &self.ws.root);
                Some(match std::fs::read_to_string(&path) {
                    Ok(text) => Msg::ArtifactContent {
                        from: path.display().to_string(),
                        content: crate::store::artifacts::content_of(text),
                    },
                    Err(e) => Msg::Error(format!("{}: {e}", path.display())),
                })
            }
            Effect::CreateArtifact {
                kind,
                name,
                content,
                rubrics,
            } => {
                let store = crate::store::artifacts::Artifacts::new(&self.ws.root);
                let provenance = crate::store::artifacts::Provenance {
                    source: format!("user:{}", self.annotator()),
                    kind: "human".into(),
                    created_at: jiff::Timestamp::now().to_string(),
                };
                let message = match store.create(&kind, &name, content, provenance, rubrics) {
                    Ok(a) => format!("{} made: a {kind} draft; s submits it for review", a.id),
                    Err(e) => format!("no artifact made: {e}"),
                };
                Some(self.artifacts(Some(message)))
            }
            Effect::ReviseArtifact { id, file } => Some(self.revise_artifact(&id, &file)),
            Effect::FindDatasets => {
                let fresh = self.new_datasets();
                (!fresh.is_empty()).then_some(Msg::DatasetsFound(fresh))
            }
            Effect::LoadRubric { path, draft } => Some(Msg::RubricLoaded {
                view: super::rubric_files::load(&self.ws, &path, draft.as_deref()),
                message: None,
                draft: None,
            }),
            // The event loop hands the terminal to the editor itself.
            Effect::EditRubric { .. } | Effect::EditArtifact { .. } => None,
            Effect::SaveRubric {
                path,
                draft,
                note,
                version,
            } => Some(super::rubric_files::save(
                &self.ws, &path, &draft, &note, &version,
            )),
            Effect::DiffRubric { id, back } => Some(super::rubric_files::diff(&self.ws, &id, back)),
            Effect::WriteDraft { path, rubric, seq } => Some(super::rubric_files::write_draft(
                &self.ws, &path, &rubric, seq,
            )),
            Effect::LoadEarlierRun { dataset, back, b } => {
                let d = &self.dataset(dataset)?;
                Some(Msg::EarlierRun {
                    back,
                    run: data::earlier_run(&self.ws, &d.path, back).map(Arc::new),
                    b,
                })
            }
            Effect::LoadRunDetails { run_id, positions } => Some(Msg::RunDetails {
                items: data::run_details(&self.ws.runs_dir(), &run_id, &positions)
                    .map_err(|e| e.to_string()),
                run_id,
                positions,
            }),
            Effect::SubmitArtifact { id, tag } => Some(self.submit_artifact(&id, tag)),
            Effect::DecideArtifact { id, to, note } => {
                let store = crate::store::artifacts::Artifacts::new(&self.ws.root);
                let result = store.get(&id).and_then(|mut a| {
                    if a.status == crate::store::artifacts::Status::PendingReview {
                        a.transition(crate::store::artifacts::Status::InReview, "")?;
                    }
                    a.transition(to, &note)?;
                    store.save(&a)
                });
                let message = match result {
                    Ok(()) => format!("{id}: {}", to.as_str()),
                    Err(e) => e.to_string(),
                };
                Some(self.artifacts(Some(message)))
            }
            Effect::Estimate {
                dataset,
                rubric,
                judge,
                strategy,
                max_cost,
                after,
            } => {
                let d = &self.dataset(dataset)?;
                let spec = super::run::RunSpec {
                    rubric: rubric.as_deref(),
                    judge: judge.as_deref(),
                    strategy,
                    max_cost,
                    changed_only: false,
                    name: None,
                };
                let ui = self.ui();
                let mut progress = |items| {
                    if let Some(ui) = &ui {
                        let _ = ui.try_send(Msg::EstimateProgress(items));
                    }
                };
                let result =
                    super::run::estimate(&self.ws, d, &spec, &self.quitting, &mut progress);
                Some(Msg::Estimate { result, after })
            }
            Effect::StartRun {
                tag,
                dataset,
                rubric,
                judge,
                strategy,
                max_cost,
                changed_only,
                name,
            } => {
                let d = &self.dataset(dataset)?;
                let tx = self.ui()?;
                let spec = super::run::RunSpec {
                    rubric: rubric.as_deref(),
                    judge: judge.as_deref(),
                    strategy,
                    max_cost,
                    changed_only,
                    name: name.as_deref(),
                };
                match super::run::start(&self.ws, tag, d, &spec, tx) {
                    Ok((control, id)) => {
                        self.runs.insert(tag, control, id, d.clone());
                        None
                    }
                    Err(e) => Some(Msg::Error(format!("the run did not start: {e}"))),
                }
            }
            Effect::StartBatch {
                dataset,
                rubric,
                judge,
                strategy,
                name,
            } => self.start_batch(
                dataset,
                &super::run::RunSpec {
                    rubric: rubric.as_deref(),
                    judge: judge.as_deref(),
                    strategy,
                    max_cost: None,
                    changed_only: false,
                    name: name.as_deref(),
                },
            ),
            Effect::WatchBatch { dataset, run_id } => self.watch_batch(dataset, &run_id),
            Effect::ResumeRun {
                tag,
                dataset,
                run_id,
                max_cost,
            } => {
                let d = &self.dataset(dataset)?;
                let tx = self.ui()?;
                match super::run::reopen(&self.ws, tag, d, &run_id, &[], max_cost, tx) {
                    Ok(control) => {
                        self.runs.insert(tag, control, run_id, d.clone());
                        None
                    }
                    Err(e) => Some(Msg::Error(format!("run {run_id} did not continue: {e}"))),
                }
            }
            Effect::PauseRun { tag, paused } => {
                self.runs.pause(tag, paused, self.ui());
                None
            }
            Effect::CancelRun { tag } => {
                self.runs.cancel(tag);
                None
            }
            Effect::RetryCells {
                tag,
                cells,
                max_cost,
            } => {
                let tx = self.ui()?;
                self.runs
                    .retry(&self.ws, tag, &cells, max_cost, tx)
                    .err()
                    .map(Msg::Error)
            }
            Effect::SetAnnotator { name, dataset } => {
                // Adjudicating is a mode, not who the user is: the UI comes back as them.
                if name != crate::store::labels::ADJUDICATED
                    && let Err(e) = super::ui_state::remember_annotator(&self.ws, &name)
                {
                    tracing::warn!("the annotator was not remembered: {e}");
                }
                if let Ok(mut a) = self.annotator.lock() {
                    *a = name;
                }
                // The next label opens this annotator's journal.
                if let Ok(mut j) = self.journal.lock() {
                    *j = None;
                }
                let dataset = dataset?;
                let d = &self.dataset(dataset)?;
                let run = data::latest_run(&self.ws, &d.path).map(Arc::new);
                Some(self.opened(dataset, d, run, None))
            }
            Effect::PlanLabels {
                dataset,
                annotator,
                labels_gen,
            } => Some(self.plan_labels(&self.dataset(dataset)?, dataset, annotator, labels_gen)),
            Effect::Calibrate {
                dataset,
                annotator,
                labels_gen,
            } => Some(Msg::Calibrated {
                labels_gen,
                ranked: self
                    .calibration(&self.dataset(dataset)?, &annotator)
                    .map(Arc::new),
            }),
            Effect::Adopt {
                dataset,
                annotator,
                run_id,
            } => Some(self.adopt(&self.dataset(dataset)?, &annotator, &run_id)),
            Effect::Open { dataset } => {
                let d = &self.dataset(dataset)?;
                let run = data::latest_run(&self.ws, &d.path).map(Arc::new);
                let rubric = data::labelling_rubric(&self.ws, d, run.as_deref());
                Some(self.opened(dataset, d, run, rubric))
            }
            Effect::LoadWindow {
                tag,
                dataset,
                start,
                count,
            } => Some(
                self.window(tag, dataset, start, count)
                    .unwrap_or_else(Msg::Error),
            ),
            Effect::Scan {
                tag,
                dataset,
                query,
                run,
            } => self.scan(tag, dataset, &query, run.as_ref()),
            Effect::JoinLabels {
                run_id,
                labels,
                labels_gen,
            } => Some(Msg::LabelsJoined {
                join: super::run_scan::join_labels(
                    &self.ws.runs_dir(),
                    &run_id,
                    &labels,
                    labels_gen,
                )
                .map(Arc::new)
                .map_err(|e| e.to_string()),
                run_id,
                labels_gen,
            }),
            Effect::FilterRunItems { tag, run_id, query } => Some(Msg::RunItemsFiltered {
                tag,
                positions: super::run_scan::filter_items(&self.ws.runs_dir(), &run_id, &query)
                    .map_err(|e| e.to_string()),
            }),
            Effect::CompareRuns { a, b } => Some(Msg::Compared {
                result: super::run_scan::compare(&self.ws.runs_dir(), &a, &b)
                    .map(Arc::new)
                    .map_err(|e| e.to_string()),
                a,
                b,
            }),
            Effect::SaveLabel {
                dataset,
                item,
                criterion,
                verdict,
                note,
                rubric,
                rubric_version,
            } => {
                let result = self.with_journal(dataset, |j| {
                    j.append(Op::Set {
                        item: item.clone(),
                        criterion: criterion.clone(),
                        verdict: verdict.clone(),
                        note: note.clone(),
                        rubric,
                        rubric_version,
                    })
                    .map_err(|e| e.to_string())
                });
                Some(match result {
                    Ok(seq) => Msg::LabelSaved {
                        seq,
                        item,
                        criterion,
                        verdict,
                        note,
                    },
                    Err(e) => Msg::LabelFailed(format!("the label was NOT saved: {e}")),
                })
            }
            Effect::Undo {
                dataset,
                seq,
                item,
                criterion,
            } => {
                let result = self.with_journal(dataset, |j| {
                    j.append(Op::Undo { undoes: seq })
                        .map_err(|e| e.to_string())?;
                    let (events, _) =
                        crate::store::labels::read(j.path()).map_err(|e| e.to_string())?;
                    let now = crate::store::labels::fold(&events);
                    Ok(now
                        .get(&(item.clone(), criterion.clone()))
                        .map(|l| l.verdict.clone()))
                });
                Some(match result {
                    Ok(verdict) => Msg::LabelUndone {
                        item,
                        criterion,
                        verdict,
                    },
                    Err(e) => Msg::LabelFailed(format!("undo failed: {e}")),
                })
            }
        }
    }

    fn with_journal<T>(
        &self,
        dataset: usize,
        f: impl FnOnce(&mut Journal) -> Result<T, String>,
    ) -> Result<T, String> {
        let mut slot = self
            .journal
            .lock()
            .map_err(|_| "the label journal is unavailable")?;
        if slot.as_ref().is_none_or(|(d, _)| *d != dataset) {
            let d = &self.dataset(dataset).ok_or("no such dataset")?;
            *slot = None; // release the previous journal's lock first
            let j = Journal::open(&self.ws.labels_dir(), &d.key, &self.annotator())
                .map_err(|e| e.to_string())?;
            *slot = Some((dataset, j));
        }
        let (_, j) = slot.as_mut().ok_or("the label journal is unavailable")?;
        f(j)
    }
}
