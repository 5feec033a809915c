//! The Align view (Results `l`, Rubrics `l`): a `rubricate align` report read off the UI
//! loop, its candidates with the requirement diffed against the original, the test result,
//! and adopting its winner as the rubric's next minor version.

use super::*;
use rubricate::run::align_report::{self, Wanted};
use rubricate::tui::app::AlignSource;

const STEPS: &str = "Gives the steps in order (first, then, finally, or a numbered list)";
const REWORDED: &str =
    "Gives the steps in order as a numbered list (first, then, finally), each one action";

fn figures(kappa: f64, low: f64, high: f64, wrong: usize, lenient: f64) -> serde_json::Value {
    serde_json::json!({
        "pairs": 12, "disagreements": wrong, "kappa": kappa,
        "kappa_ci": {"low": low, "high": high}, "accuracy": 0.8,
        "accuracy_ci": {"low": 0.6, "high": 0.95}, "leniency": lenient
    })
}

/// A report as `rubricate align` keeps it: `steps` reworded (the winner) against alice's
/// labels of the demo dataset; `with_winner: false` is a search where nothing beat the
/// original.
fn report(root: &std::path::Path, with_winner: bool) -> serde_json::Value {
    let loaded = rubricate::formats::load_rubric(
        &root
            .join("rubrics/support-answer.yaml")
            .display()
            .to_string(),
    )
    .unwrap();
    let mut winner = (*loaded.rubric).clone();
    winner
        .criteria
        .iter_mut()
        .find(|c| c.id == "steps")
        .unwrap()
        .requirement = REWORDED.into();
    let ids = |from: usize, n: usize| -> Vec<String> {
        (from..from + n).map(|i| format!("q{i}")).collect()
    };
    serde_json::json!({
        "rubric": "support-answer",
        "rubric_version": "1.0.0",
        "dataset": "support-answers",
        "annotator": "alice",
        "created_at": "2026-11-28T08:00:00Z",
        "split": {"train": ids(1, 6), "dev": ids(7, 12), "test": ids(19, 12), "seed": 7},
        "weak_criteria": ["steps"],
        "candidates": [
            {"criterion": "steps", "round": 0, "label": "original", "requirement": STEPS,
             "examples": 0, "run": "r0", "dev": figures(0.31, 0.02, 0.6, 5, 25.0),
             "indistinguishable": false},
            {"criterion": "steps", "round": 1, "label": "reworded", "requirement": REWORDED,
             "examples": 0, "run": "r1", "dev": figures(0.83, 0.6, 1.0, 1, 8.3),
             "indistinguishable": false},
            {"criterion": "steps", "round": 1, "label": "few-shot", "requirement": STEPS,
             "examples": 4, "run": "r2", "dev": figures(0.7, 0.45, 0.95, 2, 16.7),
             "indistinguishable": true}
        ],
        "test": [
            {"criterion": "reset-link", "worked_on": false,
             "before": figures(1.0, 1.0, 1.0, 0, 0.0), "after": figures(1.0, 1.0, 1.0, 0, 0.0)},
            {"criterion": "steps", "worked_on": true,
             "before": figures(0.4, 0.1, 0.7, 4, 33.3), "after": figures(0.82, 0.55, 1.0, 1, 8.3)}
        ],
        "changed": with_winner,
        "cost": 0.0123,
        "stopped": null,
        "adopted": null,
        "winner": if with_winner { serde_json::to_value(&winner).unwrap() } else { serde_json::Value::Null }
    })
}

fn keep(root: &std::path::Path, name: &str, doc: &serde_json::Value) -> std::path::PathBuf {
    let dir = root.join("aligns");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(doc).unwrap()).unwrap();
    path
}

const NAME: &str = "20261128-080000-support-answer.json";

fn view(ui: &Ui) -> &rubricate::tui::panes::results::AlignView {
    ui.app
        .panes()
        .results
        .align
        .as_ref()
        .expect("the Align view")
}

#[test]
fn the_runtime_reads_the_newest_report_of_a_dataset_and_of_a_rubric() {
    let (dir, ws) = demo();
    let root = dir.path();
    // An older report with no winner, and the newest one.
    keep(
        root,
        "20261127-080000-support-answer.json",
        &report(root, false),
    );
    let newest = keep(root, NAME, &report(root, true));
    let runtime = Runtime::new(
        ws.clone(),
        build(&ws).unwrap().shared().datasets.clone(),
        "alice".into(),
    );
    let Some(Msg::AlignRead { source, found }) =
        runtime.handle(Effect::ReadAlign(AlignSource::Dataset(0)))
    else {
        panic!("ReadAlign answers AlignRead");
    };
    assert_eq!(source, AlignSource::Dataset(0));
    let found = found.unwrap();
    assert_eq!(found.path, newest);
    assert_eq!(found.report.candidates.len(), 3);
    assert!(found.report.winner.is_some());
    assert_eq!(found.report.original_requirement("steps"), Some(STEPS));
    let by_rubric = runtime.handle(Effect::ReadAlign(AlignSource::Rubric(
        root.join("rubrics/support-answer.yaml"),
    )));
    let Some(Msg::AlignRead { found, .. }) = by_rubric else {
        panic!("ReadAlign answers AlignRead");
    };
    assert_eq!(found.unwrap().path, newest);
    // Another rubric has none: the answer says how to make one.
    let none = align_report::newest(&ws, Wanted::Rubric("support-answer-judged")).unwrap_err();
    assert!(
        none.contains("rubricate align --dataset DATASET --rubric support-answer-judged"),
        "{none}"
    );
}

#[test]
fn a_garbage_report_is_said_with_its_file_line_and_column_never_a_panic() {
    let (dir, ws) = demo();
    let root = dir.path();
    keep(
        root,
        "20261126-080000-support-answer.json",
        &report(root, true),
    );
    // Newer: not JSON at all, and JSON without the candidates.
    let dir_a = root.join("aligns");
    std::fs::write(
        dir_a.join(NAME),
        "{\n  \"rubric\": \"support-answer\",\n  oops\n}",
    )
    .unwrap();
    let mut partial = report(root, true);
    partial.as_object_mut().unwrap().remove("candidates");
    keep(root, "20261127-080000-support-answer.json", &partial);
    let found = align_report::newest(&ws, Wanted::Rubric("support-answer")).unwrap();
    // The readable one is shown, the two newer files said.
    assert!(found.path.ends_with("20261126-080000-support-answer.json"));
    assert_eq!(found.skipped.len(), 2, "{:?}", found.skipped);
    assert!(
        found.skipped[0].contains(NAME) && found.skipped[0].contains("line 3, column 3"),
        "{}",
        found.skipped[0]
    );
    assert!(
        found.skipped[1].contains("missing field `candidates`"),
        "{}",
        found.skipped[1]
    );
    // With only garbage, the view says why and how to make one.
    std::fs::remove_file(dir_a.join("20261126-080000-support-answer.json")).unwrap();
    let mut ui = Ui::with(80, 24, |r| {
        std::fs::create_dir_all(r.join("aligns")).unwrap();
        std::fs::write(r.join("aligns").join(NAME), "not json").unwrap();
    });
    ui.press([code(KeyCode::Enter), key('R'), key('l')]);
    let Some(Err(said)) = &view(&ui).found else {
        panic!("a garbage report is an error");
    };
    assert!(
        said.contains("rubricate align --dataset support-answers"),
        "{said}"
    );
    assert!(
        said.contains(NAME) && said.contains("line 1, column 2"),
        "{said}"
    );
    let screen = ui.screen();
    assert!(
        screen.contains("no readable align report for dataset"),
        "{screen}"
    );
}

#[test]
fn align_view_from_results_shows_candidates_diff_and_test_result_and_adopts_the_winner() {
    for (w, h) in [(120, 40), (80, 24)] {
        let mut ui = Ui::with(w, h, |root| {
            keep(root, NAME, &report(root, true));
        });
        let size = format!("{w}x{h}");
        ui.press([code(KeyCode::Enter), key('R'), key('l')]);
        let screen = ui.screen();
        assert!(
            screen.contains("reworded") && screen.contains("0.83"),
            "{screen}"
        );
        assert!(screen.contains("THE RESULT"), "{screen}");
        insta::assert_snapshot!(format!("align_original_{size}"), screen);
        ui.press([key('j')]);
        let screen = ui.screen();
        // The reworded requirement against the original, marked without colour (read
        // across the lines it wraps to).
        let words = screen
            .replace('│', " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            words.contains(
                "in order {+as a numbered list+} (first, then, [-finally, or a numbered list)-]{+finally), each one action+}"
            ),
            "{screen}"
        );
        insta::assert_snapshot!(format!("align_reworded_{size}"), screen);
        ui.press([key('j')]);
        assert!(ui.screen().contains("not distinguishable"));
        ui.press([code(KeyCode::Esc)]);
        assert!(ui.app.panes().results.align.is_none());
    }
}

#[test]
fn adopting_asks_first_writes_the_next_minor_version_and_is_refused_once_done() {
    let mut ui = Ui::with(120, 40, |root| {
        keep(root, NAME, &report(root, true));
    });
    let root = std::path::PathBuf::from(&ui.root);
    ui.press([code(KeyCode::Enter), key('R'), key('l'), key('A')]);
    assert!(
        matches!(ui.app.modals().last(), Some(Modal::Confirm { .. })),
        "adopting asks first"
    );
    // Any key but y: nothing is written.
    ui.press([key('n')]);
    let reg = rubricate::store::registry::Registry::new(&root);
    let before = reg.get("support-answer", None);
    assert!(
        !before.is_ok_and(|s| s.rubric.version != "1.0.0"),
        "nothing adopted after n"
    );
    ui.press([key('A'), key('y')]);
    let said = ui.app.shared().message.clone().unwrap_or_default();
    assert!(
        said.contains("adopted: the winner is support-answer@1.1.0"),
        "{said}"
    );
    let adopted = reg.get("support-answer", None).unwrap();
    assert_eq!(adopted.rubric.version, "1.1.0");
    let steps = adopted
        .rubric
        .criteria
        .iter()
        .find(|c| c.id == "steps")
        .unwrap();
    assert_eq!(steps.requirement, REWORDED);
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("aligns").join(NAME)).unwrap())
            .unwrap();
    assert_eq!(kept["adopted"], "support-answer@1.1.0");
    // The view read it again: a second A is refused, and nothing more is written.
    assert_eq!(
        view(&ui)
            .found
            .as_ref()
            .unwrap()
            .as_ref()
            .unwrap()
            .report
            .adopted
            .as_deref(),
        Some("support-answer@1.1.0")
    );
    ui.press([key('A')]);
    match ui.app.modals().last() {
        Some(Modal::Refused(why)) => assert!(why.contains("adopted already"), "{why}"),
        other => panic!("{other:?}"),
    }
    // A report made against 1.0.0 cannot overwrite 1.1.0's changes.
    let older = keep(
        &root,
        "20261128-090000-support-answer.json",
        &report(&root, true),
    );
    let ws = Workspace::at(&root).unwrap();
    let refused = align_report::adopt(&ws, &older).unwrap_err();
    assert!(refused.contains("is at version 1.1.0 now"), "{refused}");
    assert_eq!(
        reg.get("support-answer", None).unwrap().rubric.version,
        "1.1.0"
    );
}

#[test]
fn a_report_without_a_winner_is_refused_and_rubrics_l_opens_the_rubrics_report() {
    let mut ui = Ui::with(120, 40, |root| {
        keep(root, NAME, &report(root, false));
    });
    ui.press([key('B')]);
    let at = ui
        .app
        .shared()
        .rubric_files
        .iter()
        .position(|p| p.ends_with("support-answer.yaml"))
        .unwrap();
    ui.press((0..at).map(|_| code(KeyCode::Down)));
    ui.press([key('l')]);
    assert_eq!(ui.app.shared().front, PaneId::Results);
    assert_eq!(
        view(&ui).source,
        AlignSource::Rubric(std::path::PathBuf::from(&ui.root).join("rubrics/support-answer.yaml"))
    );
    let screen = ui.screen();
    assert!(
        screen.contains("no winner: nothing beat the original"),
        "{screen}"
    );
    ui.press([key('A')]);
    match ui.app.modals().last() {
        Some(Modal::Refused(why)) => assert!(why.contains("no winner"), "{why}"),
        other => panic!("{other:?}"),
    }
}
