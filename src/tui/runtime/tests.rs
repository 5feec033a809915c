//! The router: every effect reaches the topic that carries it out (a variant whose topic
//! file does not name it would come back as an internal error).

use std::sync::Arc;

use super::{MISROUTED, Runtime};
use crate::store::Workspace;
use crate::store::artifacts::Status;
use crate::tui::effect::AfterEstimate;
use crate::tui::effect::{Effect, RunScan};
use crate::tui::export::ExportFormat;
use crate::tui::msg::Msg;
use crate::tui::run_scan::{ItemsQuery, RunFilter};

/// One effect of every variant, each naming things the empty workspace does not hold, so
/// carrying it out changes nothing outside the temporary folder.
#[allow(clippy::too_many_lines)] // one effect of each variant, listed: a list, not logic
fn one_of_each(root: &std::path::Path) -> Vec<Effect> {
    let rubric = root.join("rubrics/none.yaml");
    let labels = Arc::new(crate::tui::data::Labels::new());
    let run = || "no-such-run".to_owned();
    vec![
        Effect::Estimate {
            dataset: 0,
            rubric: None,
            judge: None,
            strategy: None,
            max_cost: None,
            after: AfterEstimate::Show,
        },
        Effect::StartRun {
            tag: 1,
            dataset: 0,
            rubric: None,
            judge: None,
            strategy: None,
            max_cost: None,
            changed_only: false,
            name: None,
        },
        Effect::StartBatch {
            dataset: 0,
            rubric: None,
            judge: None,
            strategy: None,
            name: None,
        },
        Effect::WatchBatch {
            dataset: 0,
            run_id: run(),
        },
        Effect::PauseRun {
            tag: 1,
            paused: true,
        },
        Effect::ResumeRun {
            tag: 1,
            dataset: 0,
            run_id: run(),
            max_cost: None,
        },
        Effect::LoadArtifacts,
        Effect::FindDatasets,
        Effect::CompletePath("rub".into()),
        Effect::AddDataset("no-such-file.jsonl".into()),
        Effect::ReadArtifactFile("no-such-file.txt".into()),
        Effect::CreateArtifact {
            kind: "note".into(),
            name: "a".into(),
            content: serde_json::json!("text"),
            rubrics: Vec::new(),
        },
        Effect::EditArtifact { id: "art_0".into() },
        Effect::ReviseArtifact {
            id: "art_0".into(),
            file: root.join("no-such-file.txt"),
        },
        Effect::NewRubric { from: None },
        Effect::AddFirstCriterion {
            path: rubric.clone(),
            seq: 1,
        },
        Effect::ExportRun {
            run_id: run(),
            format: ExportFormat::Csv,
            only: None,
        },
        Effect::LoadRubric {
            path: rubric.clone(),
            draft: None,
        },
        Effect::EditRubric {
            path: rubric.clone(),
        },
        Effect::SaveRubric {
            path: rubric.clone(),
            draft: root.join("no-such-draft.yaml"),
            note: String::new(),
            version: "1.0.1".into(),
        },
        Effect::DiffRubric {
            id: "none".into(),
            back: 1,
        },
        Effect::WriteDraft {
            path: rubric,
            rubric: Box::new(crate::model::Rubric::new("none", Vec::new())),
            seq: 2,
        },
        Effect::LoadEarlierRun {
            dataset: 0,
            back: 1,
            b: false,
        },
        Effect::LoadRunDetails {
            run_id: run(),
            positions: vec![0],
        },
        Effect::SubmitArtifact {
            id: "art_0".into(),
            tag: 2,
        },
        Effect::DecideArtifact {
            id: "art_0".into(),
            to: Status::Approved,
            note: String::new(),
        },
        Effect::CancelRun { tag: 1 },
        Effect::RetryCells {
            tag: 1,
            cells: Vec::new(),
            max_cost: None,
        },
        Effect::Open { dataset: 0 },
        Effect::LoadWindow {
            tag: 3,
            dataset: 0,
            start: 0,
            count: 10,
        },
        Effect::Scan {
            tag: 4,
            dataset: 0,
            query: "x".into(),
            run: Some(RunScan {
                run_id: run(),
                filter: RunFilter::Failed,
                labels: Arc::clone(&labels),
            }),
        },
        Effect::JoinLabels {
            run_id: run(),
            labels,
            labels_gen: 1,
        },
        Effect::FilterRunItems {
            tag: 5,
            run_id: run(),
            query: ItemsQuery::default(),
        },
        Effect::CompareRuns { a: run(), b: run() },
        Effect::SaveLabel {
            dataset: 0,
            item: "i".into(),
            criterion: "c".into(),
            verdict: serde_json::json!("MET"),
            note: String::new(),
            rubric: "r".into(),
            rubric_version: "1".into(),
        },
        Effect::Undo {
            dataset: 0,
            seq: 1,
            item: "i".into(),
            criterion: "c".into(),
        },
        Effect::PlanLabels {
            dataset: 0,
            annotator: "pat".into(),
            labels_gen: 1,
            between_top_two: false,
        },
        Effect::Calibrate {
            dataset: 0,
            annotator: "pat".into(),
            labels_gen: 1,
        },
        Effect::Adopt {
            dataset: 0,
            annotator: "pat".into(),
            run_id: run(),
        },
        Effect::SetAnnotator {
            name: "pat".into(),
            dataset: None,
        },
        Effect::ReadAlign(crate::tui::effect::AlignSource::Dataset(0)),
        Effect::AdoptAlign {
            path: root.join("aligns/none.json"),
        },
    ]
}

#[test]
fn every_effect_reaches_the_topic_that_carries_it_out() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::init(dir.path()).unwrap();
    let runtime = Runtime::new(ws, Vec::new(), "pat".into());
    let effects = one_of_each(dir.path());
    let mut topics = std::collections::BTreeSet::new();
    for effect in effects {
        let said = format!("{effect:?}");
        topics.insert(format!("{:?}", effect.topic()));
        if let Some(Msg::Error(failure)) = runtime.handle(effect) {
            assert!(!failure.said.starts_with(MISROUTED), "{said}: {failure}");
        }
    }
    // Every topic was handed something.
    assert_eq!(topics.len(), 8, "{topics:?}");
}

#[test]
fn an_effect_handed_to_another_topic_is_said_not_dropped() {
    let effect = Effect::CancelRun { tag: 1 };
    let Msg::Error(failure) = super::misrouted(super::Topic::Labels, &effect) else {
        panic!("a misrouted effect must answer with an error");
    };
    assert_eq!(
        failure.said,
        "internal error: the Labels runtime was handed CancelRun; please report it"
    );
}

#[test]
fn a_run_started_in_the_ui_without_a_name_takes_the_first_free_ui_name() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::init(dir.path()).unwrap();
    assert_eq!(super::sessions::run_name(&ws, None), "ui");
    // A run named `ui` exists: the next unnamed one is `ui (2)` (names are unique).
    std::fs::write(
        dir.path().join("items.jsonl"),
        "{\"id\": \"a\", \"submission\": \"x\"}\n",
    )
    .unwrap();
    let home = crate::run::RunsHome::of(&ws);
    let (_rec, _writer) = crate::run::Recording::create(
        &home,
        Some("ui"),
        None,
        &dir.path().join("items.jsonl"),
        &crate::run::RunSettings::default(),
    )
    .unwrap();
    assert_eq!(super::sessions::run_name(&ws, None), "ui (2)");
    // A name typed likewise: the set-up keeps it for the next run (a re-grade).
    assert_eq!(super::sessions::run_name(&ws, Some("nightly")), "nightly");
    assert_eq!(super::sessions::run_name(&ws, Some("ui")), "ui (2)");
}
