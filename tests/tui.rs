//! The terminal UI without a terminal: `App::update` (state and effects), and every pane
//! drawn from the demo workspace at 120×40 and 80×24 into insta snapshots.
#![cfg(feature = "tui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use rubricate::store::Workspace;
use rubricate::tui::app::{App, Effect, Msg, Pane};
use rubricate::tui::runtime::Runtime;
use rubricate::tui::{build, render_text, settle};

#[path = "support/later_run.rs"]
mod later_run;
#[path = "support/levels.rs"]
mod levels;

fn demo() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    rubricate::store::workspace::create_demo(dir.path()).unwrap();
    std::fs::write(dir.path().join("rubricate.yaml"), "annotator: alice\n").unwrap();
    let ws = Workspace::at(dir.path()).unwrap();
    (dir, ws)
}

fn key(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

fn code(k: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(k, KeyModifiers::NONE))
}

/// The app on the demo workspace, its runtime, and a helper that presses keys and carries
/// out their effects.
struct Ui {
    app: App,
    runtime: Runtime,
    _dir: tempfile::TempDir,
    root: String,
}

impl Ui {
    fn new(w: u16, h: u16) -> Ui {
        Ui::with(w, h, |_| {})
    }

    /// The demo workspace with `prepare` done to its folder before the UI starts.
    fn with(w: u16, h: u16, prepare: impl FnOnce(&std::path::Path)) -> Ui {
        let (dir, _) = demo();
        prepare(dir.path());
        let ws = Workspace::at(dir.path()).unwrap();
        let mut app = build(&ws).unwrap();
        let runtime = Runtime::new(ws.clone(), app.datasets.clone(), app.annotator.clone());
        let effects = app.update(Msg::Resize(w, h));
        settle(&mut app, &runtime, effects);
        let root = dir.path().display().to_string();
        Ui {
            app,
            runtime,
            _dir: dir,
            root,
        }
    }

    fn press(&mut self, msgs: impl IntoIterator<Item = Msg>) {
        for m in msgs {
            let effects = self.app.update(m);
            settle(&mut self.app, &self.runtime, effects);
        }
    }

    /// The workspace's folder of saved runs.
    fn app_workspace_runs(&self) -> std::path::PathBuf {
        Workspace::at(std::path::Path::new(&self.root))
            .unwrap()
            .runs_dir()
    }

    fn screen(&self) -> String {
        let (w, h) = self.app.size;
        render_text(&self.app, w, h)
            .replace(&self.root, "[workspace]")
            .lines()
            .map(|l| {
                // The labelling rate depends on the clock.
                match (l.find("this sitting"), l.find("/min)")) {
                    (Some(a), Some(b)) if b > a => format!("{}[rate]{}", &l[..a], &l[b + 5..]),
                    _ => l.to_owned(),
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[test]
fn opening_a_dataset_reads_only_a_window_and_stale_answers_are_dropped() {
    let (_dir, ws) = demo();
    let mut app = build(&ws).unwrap();
    app.update(Msg::Resize(100, 30));
    let effects = app.update(code(KeyCode::Enter));
    assert!(matches!(effects[0], Effect::Open { dataset: 0 }));
    let Effect::LoadWindow {
        tag, start, count, ..
    } = effects[1]
    else {
        panic!("{effects:?}")
    };
    assert_eq!(start, 0);
    assert!(count < 200, "only the visible rows and a margin: {count}");
    // An answer to an older request changes nothing.
    app.update(Msg::Window {
        tag: tag - 1,
        total: 50,
        items: vec![(0, rubricate::model::Item::default())],
    });
    assert!(app.browse.as_ref().unwrap().window.is_empty());
    app.update(Msg::Window {
        tag,
        total: 50,
        items: vec![(
            0,
            rubricate::model::Item {
                id: "q01".into(),
                ..Default::default()
            },
        )],
    });
    assert_eq!(app.browse.as_ref().unwrap().total, Some(50));
}

/// The item the cursor is on.
fn current(ui: &Ui) -> String {
    ui.app
        .browse
        .as_ref()
        .unwrap()
        .current()
        .unwrap()
        .id
        .clone()
}

#[test]
fn labelling_saves_each_label_and_quit_waits_for_the_disk() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('L')]);
    assert_eq!(ui.app.pane, Pane::Label);
    let effects = ui.app.update(key('m'));
    let [
        Effect::SaveLabel {
            item,
            criterion,
            verdict,
            ..
        },
    ] = effects.as_slice()
    else {
        panic!("{effects:?}")
    };
    assert_eq!(
        (item.as_str(), criterion.as_str(), verdict.as_str()),
        ("q01", "reset-link", Some("MET"))
    );
    // Every other criterion of q01 has alice's label: on to the next item, never onto an
    // answered criterion (the next key would replace its label).
    assert_eq!(ui.app.browse.as_ref().unwrap().current().unwrap().id, "q02");
    // Not yet on disk: quitting waits for it (esc stays).
    ui.app.update(key('q'));
    assert!(!ui.app.quit);
    assert!(
        ui.app
            .message
            .as_deref()
            .unwrap()
            .contains("quitting when they are saved")
    );
    ui.app.update(code(KeyCode::Esc));
    settle(&mut ui.app, &ui.runtime, effects);
    assert!(!ui.app.quit, "esc kept the UI open");
    assert_eq!(ui.app.label.pending.len(), 0);
    assert_eq!(ui.app.label.sitting, 1);
    // A key that does not answer this criterion says so and saves nothing.
    assert!(ui.app.update(key('3')).is_empty());
    // A label that replaces another one (the focus put on it by hand) says so.
    ui.press([key('p'), key('u')]);
    let said = ui.app.message.clone().unwrap_or_default();
    assert!(
        said.contains("q01 'reset-link' was MET, now UNMET (z undoes)"),
        "{said}"
    );
    // Undo is a new event; the label returns to alice's earlier one.
    ui.press([key('z')]);
    assert_eq!(
        ui.app
            .labels
            .get(&("q01".into(), "reset-link".into()))
            .unwrap(),
        "MET"
    );
    ui.press([key('q')]);
    assert!(ui.app.quit);
}

#[test]
fn the_last_criterion_moves_to_the_next_item_in_the_queue() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('L'), key('o')]);
    assert!(
        ui.app
            .message
            .as_deref()
            .unwrap()
            .contains("unlabelled first")
    );
    // alice labelled q01–q32: q01 has nothing left to answer, so unlabelled first jumps
    // to q33 after one label; its four criteria take the queue on to q34.
    ui.press([key('m')]);
    assert_eq!(current(&ui), "q33");
    ui.press([key('m'), key('m'), key('m'), key('u')]);
    assert_eq!(current(&ui), "q34");
}

#[test]
fn the_labels_next_queue_follows_the_plan_and_its_stop_rule_moves_with_each_label() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('L')]);
    ui.press([key('o'), key('o'), key('o')]);
    assert!(
        ui.app
            .message
            .as_deref()
            .unwrap()
            .contains("where it matters"),
        "{:?}",
        ui.app.message
    );
    // The plan is `rubricate labels next`'s, worked out in the background.
    let plan = ui
        .app
        .label_plan()
        .expect("a plan for the open dataset")
        .clone();
    assert_eq!(plan.annotator, "alice");
    assert!(plan.runs >= 1);
    let first = plan.next.first().expect("unlabelled items to plan").clone();
    let criterion = ui.app.label_criteria()[0].id.clone();
    let before = ui.app.stop_rule(&criterion).unwrap().labelled;
    ui.press([key('n')]);
    assert_eq!(
        current(&ui),
        first.item,
        "the plan's first item comes first"
    );
    // Its reasons and the focused criterion's stop rule are on screen.
    let screen = ui.screen();
    assert!(screen.contains(&format!("{criterion}: κ")), "{screen}");
    if !first.reasons.is_empty() {
        assert!(screen.contains("why this item:"), "{screen}");
    }
    let n = ui.app.label_criteria().len();
    ui.press((0..n).map(|_| key('m')));
    // The label landed, the plan was worked out again with it and the queue went on.
    let after = ui.app.stop_rule(&criterion).unwrap().labelled;
    assert_eq!(after, before + 1, "the stop rule counts the new label");
    assert_ne!(current(&ui), first.item);
    let planned: Vec<&str> = plan.next.iter().map(|n| n.item.as_str()).collect();
    assert!(planned.contains(&current(&ui).as_str()), "{}", current(&ui));
    assert!(
        !ui.app
            .label_plan()
            .unwrap()
            .next
            .iter()
            .any(|n| n.item == first.item),
        "a labelled item leaves the plan"
    );
}

#[test]
fn labels_typed_faster_than_the_disk_never_send_the_queue_back() {
    let mut ui = Ui::new(80, 24);
    ui.press([code(KeyCode::Enter), key('L')]);
    ui.press([key('o'), key('o'), key('o'), key('n')]);
    assert!(ui.app.label_plan().is_some());
    let n = ui.app.label_criteria().len();
    let current = |ui: &Ui| {
        ui.app
            .browse
            .as_ref()
            .unwrap()
            .current()
            .map(|i| i.id.clone())
    };
    // Four items' labels typed before the disk answers any of them (nothing settles).
    let mut effects = Vec::new();
    let mut seen = vec![current(&ui).unwrap()];
    for _ in 0..4 {
        for _ in 0..n {
            effects.extend(ui.app.update(key('m')));
        }
        // The next item's window may still be loading: read it, but write nothing yet.
        let (writes, reads): (Vec<_>, Vec<_>) = effects
            .drain(..)
            .partition(|e| matches!(e, Effect::SaveLabel { .. }));
        effects = writes;
        settle(&mut ui.app, &ui.runtime, reads);
        seen.push(current(&ui).unwrap());
    }
    let mut distinct = seen.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        seen.len(),
        "an item came round twice: {seen:?}"
    );
    assert_eq!(ui.app.label.pending.len(), 4 * n);
    settle(&mut ui.app, &ui.runtime, effects);
    assert!(ui.app.label.pending.is_empty());
}

#[test]
fn moving_to_an_item_focuses_its_first_unanswered_criterion() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter)]);
    // q33 is the first item alice has not labelled.
    ui.press((0..32).map(|_| code(KeyCode::Down)));
    ui.press([key('L')]);
    assert_eq!(current(&ui), "q33");
    assert_eq!(ui.app.label.criterion, 0);
    // Answer the first criterion, then move on before finishing the item.
    ui.press([key('m')]);
    assert_eq!(ui.app.label.criterion, 1);
    ui.press([key('n')]);
    assert_eq!(current(&ui), "q34");
    assert_eq!(
        ui.app.label.criterion, 0,
        "a new item starts at its first unanswered criterion, not where the last one was left"
    );
    // Back on q33, the first criterion without a label is the second.
    ui.press([key('p')]);
    assert_eq!(current(&ui), "q33");
    assert_eq!(ui.app.label.criterion, 1);
    // A fully labelled item starts at the top.
    ui.press([key('p')]);
    assert_eq!(current(&ui), "q32");
    assert_eq!(ui.app.label.criterion, 0);
}

#[test]
fn a_label_moves_on_to_the_next_unanswered_criterion_and_never_onto_an_answered_one() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter)]);
    // q33 is the first item alice has not labelled; give it only its second criterion.
    ui.press((0..32).map(|_| code(KeyCode::Down)));
    ui.press([key('L'), key('j'), key('u')]);
    assert_eq!(current(&ui), "q33");
    assert_eq!(ui.app.label.criterion, 2);
    // Away and back: the first criterion without a label is focused.
    ui.press([key('n'), key('p')]);
    assert_eq!(current(&ui), "q33");
    assert_eq!(ui.app.label.criterion, 0);
    // A label skips the answered second criterion (it used to land on it).
    ui.press([key('m')]);
    assert_eq!(
        ui.app.label.criterion, 2,
        "the answered criterion is skipped"
    );
    // From the last criterion, round to one left before it: none here, so the third and
    // fourth, then the next item.
    ui.press([key('m'), key('m')]);
    assert_eq!(
        current(&ui),
        "q34",
        "every criterion answered: the next item"
    );
    // Labels are out of order on q35 (the last first): the focus wraps to those before.
    ui.press([key('n')]);
    let n = ui.app.label_criteria().len();
    ui.press((1..n).map(|_| key('j')));
    ui.press([key('m')]);
    assert_eq!(current(&ui), "q35");
    assert_eq!(ui.app.label.criterion, 0, "round to the first one left");
    // Nothing was labelled twice: one label per (item, criterion) in alice's journal.
    let journal = std::fs::read_to_string(
        std::path::Path::new(&ui.root).join("labels/support-answers/alice.jsonl"),
    )
    .unwrap();
    let mut cells: Vec<(String, String)> = journal
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| ["q33", "q35"].contains(&e["item"].as_str().unwrap_or_default()))
        .map(|e| (e["item"].to_string(), e["criterion"].to_string()))
        .collect();
    assert_eq!(cells.len(), n + 1, "{cells:?}");
    cells.sort();
    cells.dedup();
    assert_eq!(cells.len(), n + 1, "a label was replaced");
}

/// The demo workspace with autorubric's essay-grading dataset (a rubric of its own and
/// each item's ground truth) in `datasets/`, opened.
fn with_autorubric_essays() -> Ui {
    let mut ui = Ui::with(120, 40, |root| {
        std::fs::copy(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
                "tests/fixtures/corpus/delip_autorubric/examples/data/essay_grading_dataset.json",
            ),
            root.join("datasets/essays.json"),
        )
        .unwrap();
    });
    let at = ui
        .app
        .datasets
        .iter()
        .position(|d| d.name == "essays")
        .unwrap();
    ui.press((0..at).map(|_| code(KeyCode::Down)));
    ui.press([code(KeyCode::Enter)]);
    ui
}

#[test]
fn an_autorubric_dataset_is_labelled_and_shown_with_its_own_rubric_and_ground_truth() {
    let mut ui = with_autorubric_essays();
    // Label: the file's rubric, not the workspace's first (support-answer), and what the
    // file's ground truth says beside each criterion.
    ui.press([key('L')]);
    let ids: Vec<String> = ui.app.label_criteria().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, ["causes", "effects", "structure", "britain", "errors"]);
    let screen = ui.screen();
    assert!(screen.contains("dataset-rubric@1.0.0"), "{screen}");
    assert!(!screen.contains("support-answer@"), "{screen}");
    assert!(screen.contains("you: — · judge: — · file: MET"), "{screen}");
    assert!(
        screen.contains("you: — · judge: — · file: UNMET"),
        "{screen}"
    );
    // A label is recorded against the file's rubric.
    let effects = ui.app.update(key('m'));
    assert!(
        matches!(&effects[..], [Effect::SaveLabel { criterion, rubric, .. }]
            if criterion == "causes" && rubric == "dataset-rubric"),
        "{effects:?}"
    );
    settle(&mut ui.app, &ui.runtime, effects);
    // The item's detail: the same criteria, with the file's verdicts.
    ui.press([key('D'), code(KeyCode::Enter)]);
    let screen = ui.screen();
    assert!(screen.contains("human MET · file MET"), "{screen}");
    assert!(screen.contains("human — · file UNMET"), "{screen}");
}

#[test]
fn each_agentv_case_is_labelled_with_its_own_graders() {
    let mut ui = Ui::with(120, 40, |root| {
        std::fs::write(
            root.join("suite.yaml"),
            "tests:\n  - id: hello\n    output: hello world\n    assert:\n      - {type: contains, value: hello}\n      - {type: contains, value: bye}\n  - id: bye\n    output: bye\n    assert:\n      - {type: equals, value: bye}\n",
        )
        .unwrap();
    });
    // Opened by its path (and registered), as a person opens an eval file.
    ui.press([key('o')]);
    ui.press("suite.yaml".chars().map(key));
    ui.press([code(KeyCode::Enter), key('L')]);
    let ids =
        |ui: &Ui| -> Vec<String> { ui.app.label_criteria().into_iter().map(|c| c.id).collect() };
    let hello = ids(&ui);
    assert_eq!(hello.len(), 2, "{hello:?}");
    ui.press([key('m'), key('m')]);
    assert_eq!(
        current(&ui),
        "bye",
        "both of hello's graders answered: the next case"
    );
    assert_eq!(ids(&ui).len(), 1, "bye has one grader");
    assert!(!ui.screen().contains("support-answer@"));
}

#[test]
fn the_grade_pane_grades_an_autorubric_dataset_with_its_own_rubric() {
    let mut ui = with_autorubric_essays();
    ui.press([key('G')]);
    // The last choice: the dataset's own rubric (each item's, when it brings one).
    let files = ui.app.grade.rubrics.len();
    ui.press((0..files).map(|_| code(KeyCode::Down)));
    let effects = ui.app.update(key('e'));
    assert!(
        matches!(&effects[..], [Effect::Estimate { rubric: None, .. }]),
        "{effects:?}"
    );
    settle(&mut ui.app, &ui.runtime, effects);
    let estimate = ui.app.grade.estimate.clone().unwrap_or_default();
    let said = ui.app.message.clone().unwrap_or_default();
    assert!(!said.contains("pass --rubric"), "{said}");
    assert!(
        estimate.contains("no criterion is judged"),
        "{estimate} / {said}"
    );
}

#[test]
fn blind_mode_holds_the_item_until_the_reveal_is_seen_and_queues_wrap() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter)]);
    ui.press((0..32).map(|_| code(KeyCode::Down)));
    ui.press([key('L'), key('b')]);
    assert_eq!(current(&ui), "q33");
    ui.press([key('m'), key('m'), key('u'), key('u')]);
    assert_eq!(
        current(&ui),
        "q33",
        "the reveal is shown on the item just labelled"
    );
    assert!(
        ui.screen().contains("judge: "),
        "the judge's verdicts are revealed"
    );
    assert!(!ui.screen().contains("hidden"));
    ui.press([key('n')]);
    assert_eq!(current(&ui), "q34");
    // Unlabelled first, from the last item: back to the first unlabelled one, said.
    ui.press([key('b'), key('o')]);
    ui.press((0..16).map(|_| key('n')));
    assert_eq!(current(&ui), "q50");
    ui.app.update(key('m'));
    ui.app.update(key('m'));
    ui.app.update(key('m'));
    let effects = ui.app.update(key('m'));
    assert_eq!(
        current(&ui),
        "q34",
        "the queue wraps to the first unlabelled item"
    );
    assert!(
        ui.app
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("wrapped to the top"),
        "{:?}",
        ui.app.message
    );
    settle(&mut ui.app, &ui.runtime, effects);
}

#[test]
fn the_annotator_is_chosen_among_the_workspaces_journals_and_remembered() {
    let mut ui = Ui::new(120, 40);
    // bob labelled q01 and q02 only (a copy of alice's first eight events, as his).
    let journals = std::path::Path::new(&ui.root).join("labels/support-answers");
    let alice = std::fs::read_to_string(journals.join("alice.jsonl")).unwrap();
    let bob: String = alice
        .lines()
        .take(8)
        .map(|l| l.replace("\"alice\"", "\"bob\"") + "\n")
        .collect();
    std::fs::write(journals.join("bob.jsonl"), bob).unwrap();
    ui.press([code(KeyCode::Enter), key('L')]);
    assert_eq!(ui.app.annotator, "alice");
    assert_eq!(ui.app.labels.len(), 128);
    ui.press([key('a')]);
    assert_eq!(ui.app.annotator, "bob");
    assert_eq!(ui.app.labels.len(), 8, "bob's labels are shown");
    assert!(ui.screen().contains("annotator bob"));
    // Remembered: written when chosen, and what the sitting leaves.
    let ws = rubricate::store::Workspace::at(std::path::Path::new(&ui.root)).unwrap();
    assert_eq!(
        rubricate::tui::ui_state::load(&ws).annotator.as_deref(),
        Some("bob")
    );
    let state = ui.app.ui_state();
    assert_eq!(state.dataset.as_deref(), Some("support-answers"));
    assert_eq!(state.pane.as_deref(), Some("Label"));
    ui.press([key('a')]);
    assert_eq!(ui.app.annotator, "alice", "round the journals");
}

#[test]
fn adjudication_shows_each_annotators_label_and_writes_its_own_journal() {
    let mut ui = Ui::new(120, 40);
    // bob labelled q01 and q02 as alice did, but for q02's first criterion.
    let journals = std::path::Path::new(&ui.root).join("labels/support-answers");
    let alice = std::fs::read_to_string(journals.join("alice.jsonl")).unwrap();
    let mut bob = String::new();
    for (i, l) in alice.lines().take(8).enumerate() {
        let mut l = l.replace("\"alice\"", "\"bob\"");
        if i == 1 || i == 4 {
            assert!(
                l.contains(if i == 1 { "\"q01\"" } else { "\"q02\"" }),
                "{l}"
            );
            l = if l.contains("\"UNMET\"") {
                l.replace("\"UNMET\"", "\"MET\"")
            } else {
                l.replace("\"MET\"", "\"UNMET\"")
            };
        }
        bob.push_str(&l);
        bob.push('\n');
    }
    std::fs::write(journals.join("bob.jsonl"), bob).unwrap();
    ui.press([code(KeyCode::Enter), key('L'), key('A')]);
    assert_eq!(ui.app.annotator, "adjudicated");
    assert!(ui.app.adjudicating());
    assert_eq!(
        ui.app.label.criterion, 1,
        "the item's first difference is focused"
    );
    assert_eq!(
        ui.app.ui_state().annotator.as_deref(),
        Some("alice"),
        "quitting now comes back as alice"
    );
    assert_eq!(
        ui.app.peers.keys().collect::<Vec<_>>(),
        ["alice", "bob"],
        "every annotator's labels are read"
    );
    let screen = ui.screen();
    assert!(screen.contains("adjudicating"), "{screen}");
    assert!(screen.contains("≠ DIFFER"), "{screen}");
    // Disagreements first, adjudicating: the items where the annotators differ.
    ui.press([key('o'), key('o'), key('n')]);
    assert_eq!(ui.app.browse.as_ref().unwrap().current().unwrap().id, "q02");
    assert!(ui.screen().contains("≠ DIFFER"), "{}", ui.screen());
    ui.press([key('u')]);
    let settled = std::fs::read_to_string(journals.join("adjudicated.jsonl")).unwrap();
    assert_eq!(settled.lines().count(), 1);
    assert!(
        settled.contains("\"q02\"") && settled.contains("\"UNMET\""),
        "{settled}"
    );
    // Results shows people against people beside the judge against each.
    ui.press([key('R')]);
    let screen = ui.screen();
    assert!(screen.contains("people: alice~bob κ"), "{screen}");
    assert!(screen.contains("judge~alice"), "{screen}");
    // Back to alice; adjudicating was never remembered as who the user is.
    ui.press([key('L'), key('A')]);
    assert_eq!(ui.app.annotator, "alice");
    let ws = rubricate::store::Workspace::at(std::path::Path::new(&ui.root)).unwrap();
    assert_ne!(
        rubricate::tui::ui_state::load(&ws).annotator.as_deref(),
        Some("adjudicated")
    );
    assert!(ui.app.peers.is_empty());
}

#[test]
fn calibrate_ranks_the_datasets_runs_and_adopts_the_selected_judge() {
    let mut ui = Ui::new(120, 40);
    // A second run that names a judge model (the rubric's criteria are checks: nothing is
    // sent, so any key will do).
    let root = std::path::PathBuf::from(&ui.root);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(&root)
        .env("OPENAI_API_KEY", "sk-test")
        .env("XDG_CONFIG_HOME", root.join(".user-config"))
        .args([
            "grade",
            "--rubric",
            "rubrics/support-answer.yaml",
            "datasets/support-answers.jsonl",
            "--save",
            "--name",
            "with judge",
            "--judge",
            "openai/gpt-test",
        ])
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
    ui.press([code(KeyCode::Enter), key('R'), key('K')]);
    let screen = ui.screen();
    assert!(
        screen.contains("Calibrate: 2 runs against alice's labels of 32 items"),
        "{screen}"
    );
    assert!(
        screen.contains("with judge") && screen.contains("demo"),
        "{screen}"
    );
    // The same checks, the same verdicts: the two cannot be told apart.
    assert!(screen.contains("not distinguishable at"), "{screen}");
    let ranked = match &ui.app.results.calibrate.as_ref().unwrap().ranked {
        Some(Ok(c)) => c.clone(),
        other => panic!("{other:?}"),
    };
    let at = ranked
        .candidates
        .iter()
        .position(|c| c.label == "with judge")
        .unwrap();
    ui.press((0..at).map(|_| key('j')));
    ui.press([key('A')]);
    let said = ui.app.message.clone().unwrap_or_default();
    assert!(
        said.contains("adopted: support-answer@1.1.0 now judges with openai/gpt-test"),
        "{said}"
    );
    let reg = rubricate::store::registry::Registry::new(&root);
    let adopted = reg.get("support-answer", None).unwrap();
    assert_eq!(adopted.rubric.version, "1.1.0");
    assert_eq!(
        adopted.rubric.judge.and_then(|j| j.model).as_deref(),
        Some("openai/gpt-test")
    );
    // A label changes the ranking's figures: it is worked out again.
    let before = ranked.labelled;
    ui.press([key('K'), key('L')]);
    ui.press((0..32).map(|_| key('n')));
    assert_eq!(ui.app.browse.as_ref().unwrap().current().unwrap().id, "q33");
    ui.press([key('m'), key('m'), key('m'), key('m'), key('R'), key('K')]);
    let again = match &ui.app.results.calibrate.as_ref().unwrap().ranked {
        Some(Ok(c)) => c.labelled,
        other => panic!("{other:?}"),
    };
    assert_eq!(again, before + 1);
}

#[test]
fn results_show_agreement_for_levels_as_rubricate_metrics_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let kappa = levels::workspace(root, env!("CARGO_BIN_EXE_rubricate"));
    assert!((kappa - 0.75).abs() < 1e-12);
    // The Results pane shows the same κ (quadratic-weighted, levels in score order) and
    // the 3×3 confusion.
    let ws = Workspace::at(root).unwrap();
    let mut app = build(&ws).unwrap();
    let runtime = Runtime::new(ws.clone(), app.datasets.clone(), app.annotator.clone());
    let effects = app.update(Msg::Resize(120, 40));
    settle(&mut app, &runtime, effects);
    let effects = app.update(code(KeyCode::Enter));
    settle(&mut app, &runtime, effects);
    let effects = app.update(key('R'));
    settle(&mut app, &runtime, effects);
    let length_row = |screen: &str| -> String {
        screen
            .lines()
            .find(|l| l.contains("length") && l.contains('%'))
            .unwrap_or_else(|| panic!("{screen}"))
            .to_owned()
    };
    let screen = render_text(&app, 120, 40);
    let row = length_row(&screen);
    assert!(
        row.contains("0.75") && row.contains("0.71"),
        "κ and accuracy: {row}"
    );
    assert!(screen.contains("human \\ judge"), "{screen}");
    assert!(
        screen
            .lines()
            .any(|l| l.contains("short") && l.contains("       2        1        0")),
        "{screen}"
    );
    // The figures are worked out in update, and again when a label lands: correcting the
    // two labels the judge disagreed with makes the agreement perfect.
    for (seq, item, level) in [(100, "i1", "medium"), (101, "i5", "long")] {
        let effects = app.update(Msg::LabelSaved {
            seq,
            item: item.into(),
            criterion: "length".into(),
            verdict: serde_json::json!(level),
            note: String::new(),
        });
        settle(&mut app, &runtime, effects);
    }
    let row = length_row(&render_text(&app, 120, 40));
    assert!(row.contains("1.00"), "κ after the labels changed: {row}");
    assert!(!row.contains("0.75"), "{row}");
}

#[test]
fn ctrl_u_clears_a_typed_line_and_messages_stay_with_their_pane() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('G'), key('m')]);
    for c in "openai/some-model".chars() {
        ui.app.update(key(c));
    }
    let ctrl_u = Msg::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    ui.press([ctrl_u]);
    assert_eq!(ui.app.grade.judge_input.as_deref(), Some(""));
    for c in "x/y".chars() {
        ui.app.update(key(c));
    }
    ui.press([code(KeyCode::Enter)]);
    assert_eq!(ui.app.grade.judge.as_deref(), Some("x/y"));
    // A message said in one pane is not carried into the next.
    ui.app.message = Some("something about grading".into());
    ui.press([key('L')]);
    assert_ne!(ui.app.message.as_deref(), Some("something about grading"));
}

#[test]
fn a_labels_note_is_shown_under_it() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter)]);
    ui.press((0..32).map(|_| code(KeyCode::Down)));
    ui.press([key('L'), key('m'), key('k')]);
    assert_eq!(ui.app.label.criterion, 0);
    ui.press([key('N')]);
    for c in "the link is only hinted at".chars() {
        ui.app.update(key(c));
    }
    ui.press([code(KeyCode::Enter)]);
    assert!(
        ui.screen().contains("note: the link is only hinted at"),
        "{}",
        ui.screen()
    );
    // Read back from the journal when the dataset opens again.
    ui.press([key('D'), code(KeyCode::Esc), code(KeyCode::Enter), key('L')]);
    assert_eq!(
        ui.app
            .notes
            .get(&("q33".to_owned(), "reset-link".to_owned()))
            .map(String::as_str),
        Some("the link is only hinted at")
    );
}

#[test]
fn help_starts_with_this_panes_keys_and_scrolls() {
    let mut ui = Ui::new(80, 24);
    ui.press([code(KeyCode::Enter), key('L'), key('?')]);
    let screen = ui.screen();
    let first = screen
        .lines()
        .find(|l| l.contains("(this pane)"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(first.contains("LABEL"), "{first}");
    // Scrolling shows later keys; another key closes; the pane is as it was.
    ui.press((0..40).map(|_| code(KeyCode::Down)));
    assert!(ui.app.help);
    assert!(
        !ui.screen().contains("(this pane)"),
        "scrolled past the first lines"
    );
    ui.press([key('x')]);
    assert!(!ui.app.help);
    assert_eq!(ui.app.pane, Pane::Label);
}

#[test]
fn tabs_name_their_keys_and_a_click_opens_one() {
    let mut ui = Ui::new(120, 40);
    let top = ui.screen().lines().next().unwrap_or_default().to_owned();
    assert!(
        top.contains("D Datasets") && top.contains("V Review"),
        "{top}"
    );
    // Click in the middle of "G Grade".
    let at = top.find("G Grade").unwrap();
    let column = u16::try_from(top[..at].chars().count() + 2).unwrap();
    ui.press([Msg::Mouse(MouseEvent {
        kind: MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column,
        row: 0,
        modifiers: KeyModifiers::NONE,
    })]);
    assert_eq!(ui.app.pane, Pane::Grade);
}

#[test]
fn the_first_start_says_what_is_where() {
    for (w, h) in [(120, 40), (80, 24)] {
        let mut ui = Ui::new(w, h);
        ui.app.first_start = true;
        let screen = ui.screen();
        assert!(
            screen.contains("This workspace holds 1 dataset and 2 rubric files"),
            "{screen}"
        );
        insta::assert_snapshot!(format!("overview_{w}x{h}"), screen);
        // It is a part of the Datasets pane, not a dialog: keys work as ever.
        ui.press([code(KeyCode::Enter)]);
        assert!(ui.app.browse.is_some());
    }
}

#[test]
fn a_search_says_how_far_it_has_read() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter)]);
    let effects = ui.app.update(key('/'));
    assert!(effects.is_empty());
    let effects = ui.app.update(key('S'));
    let Effect::Scan { tag, .. } = &effects[0] else {
        panic!("{effects:?}")
    };
    assert!(
        ui.screen().contains("searching… 0 of 50 items read"),
        "{}",
        ui.screen()
    );
    ui.app.update(Msg::ScanProgress {
        tag: *tag,
        read: 25,
        total: Some(50),
    });
    assert!(ui.screen().contains("searching… 25 of 50 items read (50%)"));
    settle(&mut ui.app, &ui.runtime, effects);
    assert!(
        !ui.screen().contains("searching…"),
        "done: the count replaces it"
    );
}

#[test]
fn a_dataset_added_while_the_ui_runs_shows_up_in_the_list() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter)]);
    std::fs::write(
        std::path::Path::new(&ui.root).join("datasets/extra.jsonl"),
        "{\"id\": \"e1\", \"submission\": \"Use the reset link.\"}\n",
    )
    .unwrap();
    // Back on the list: the new file is there, after the ones already known.
    ui.press([code(KeyCode::Esc)]);
    assert_eq!(ui.app.datasets.len(), 2);
    assert_eq!(ui.app.datasets[1].name, "extra");
    assert!(ui.screen().contains("extra"));
    // And it opens like any other (the runtime knows it at the same position).
    ui.press([code(KeyCode::Down), code(KeyCode::Enter)]);
    assert_eq!(ui.app.browse.as_ref().unwrap().current().unwrap().id, "e1");
}

#[test]
fn the_results_run_exports_as_csv_jsonl_and_markdown() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('R')]);
    let root = std::path::PathBuf::from(&ui.root);
    for (k, ext) in [('c', "csv"), ('j', "jsonl"), ('m', "md")] {
        ui.press([key('x'), key(k)]);
        let said = ui.app.message.clone().unwrap_or_default();
        assert!(
            said.starts_with("exported 50 items of run 20261122-141552-3353 to exports/"),
            "{said}"
        );
        let text =
            std::fs::read_to_string(root.join(format!("exports/20261122-141552-3353.{ext}")))
                .unwrap();
        match ext {
            "csv" => {
                assert!(text.starts_with("item,rubric,rubric_version,score"));
                // Feedback spans lines inside quotes: count records, not lines.
                let records = csv::Reader::from_reader(text.as_bytes())
                    .records()
                    .collect::<Result<Vec<_>, _>>()
                    .unwrap();
                assert_eq!(records.len(), 50);
                assert_eq!(&records[0][0], "q01");
            }
            "jsonl" => {
                assert_eq!(text.lines().count(), 50);
                let first: serde_json::Value =
                    serde_json::from_str(text.lines().next().unwrap()).unwrap();
                assert_eq!(first["item"], "q01");
            }
            _ => {
                assert!(text.starts_with("# Run 20261122-141552-3353"));
                assert!(text.contains("| q01 |"), "{text}");
            }
        }
    }
    // Anything else at the question exports nothing.
    ui.press([key('x'), code(KeyCode::Esc)]);
    assert_eq!(ui.app.message.as_deref(), Some("not exported"));
    // The filtered item list exports only what it lists.
    ui.press([key('i'), key('v'), key('x')]);
    assert!(
        ui.app
            .message
            .as_deref()
            .unwrap()
            .contains("export the items listed")
    );
    ui.press([key('j')]);
    let view = ui.app.results.items.clone().unwrap();
    // The positions a pass over the run kept; the export wrote those items.
    let listed = view.rows.as_ref().expect("a filtered list").len();
    assert!(listed < 50);
    let said = ui.app.message.clone().unwrap();
    assert!(
        said.starts_with(&format!("exported {listed} of 50 items of run")),
        "{said}"
    );
    let text =
        std::fs::read_to_string(root.join("exports/20261122-141552-3353-filtered.jsonl")).unwrap();
    assert_eq!(text.lines().count(), listed);
}

#[test]
fn results_shows_any_run_of_the_dataset_with_braces() {
    let mut ui = Ui::new(120, 40);
    let runs = std::path::Path::new(&ui.root).join("runs");
    let old = "20261122-141552-3353";
    let new = "20261122-160000-beef";
    std::fs::create_dir_all(runs.join(new)).unwrap();
    for f in ["manifest.json", "results.jsonl"] {
        let text = std::fs::read_to_string(runs.join(old).join(f))
            .unwrap()
            .replace(old, new);
        std::fs::write(runs.join(new).join(f), text).unwrap();
    }
    ui.press([code(KeyCode::Enter), key('R')]);
    assert!(ui.screen().contains(&format!("run {new}")));
    assert!(ui.screen().contains("the latest run ({ older · } newer)"));
    ui.press([key('{')]);
    let screen = ui.screen();
    assert!(
        screen.contains(&format!("run {old}")) && screen.contains("1 runs back"),
        "{screen}"
    );
    ui.press([key('{')]);
    assert!(
        ui.app
            .message
            .as_deref()
            .unwrap()
            .contains("no run that far back")
    );
    ui.press([key('}')]);
    assert!(ui.screen().contains(&format!("run {new}")));
    // Another dataset opened (here: the same one again) starts from its latest run.
    ui.press([key('{'), key('D'), code(KeyCode::Esc), code(KeyCode::Enter)]);
    assert!(ui.app.results.compare_b.is_none());
}

#[test]
fn a_new_rubric_starts_from_the_list_and_opens_ready_to_edit() {
    let mut ui = Ui::new(120, 40);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let _inside = rt.enter();
    // `a` asks what to start from: blank first.
    ui.press([key('B'), key('a')]);
    assert_eq!(ui.app.rubrics.new_from, Some(0));
    assert!(ui.screen().contains("a copy of the built-in 'code'"));
    ui.press([code(KeyCode::Enter)]);
    let path = std::path::Path::new(&ui.root).join("rubrics/new-rubric.yaml");
    assert!(path.is_file());
    let view = ui.app.rubrics.view.as_ref().expect("opened");
    assert_eq!(view.path, path);
    assert!(view.problems.is_empty(), "{:?}", view.problems);
    assert_eq!(view.rubric.as_ref().unwrap().criteria.len(), 1);
    // A second one does not replace the first; the Grade pane offers both.
    ui.press([code(KeyCode::Esc), key('a'), code(KeyCode::Enter)]);
    assert!(
        std::path::Path::new(&ui.root)
            .join("rubrics/new-rubric-2.yaml")
            .is_file()
    );
    assert_eq!(ui.app.grade.rubrics.len(), 4);
    // From a built-in: a copy named after it, its id the file's, at 0.1.0, valid.
    ui.press([
        code(KeyCode::Esc),
        key('a'),
        code(KeyCode::Down),
        code(KeyCode::Down),
    ]);
    ui.press([code(KeyCode::Enter)]);
    let code_copy = std::path::Path::new(&ui.root).join("rubrics/code.yaml");
    let view = ui.app.rubrics.view.as_ref().expect("opened");
    assert_eq!(view.path, code_copy);
    assert!(view.problems.is_empty(), "{:?}", view.problems);
    let r = view.rubric.as_ref().unwrap();
    assert_eq!((r.id.as_str(), r.version.as_str()), ("code", "0.1.0"));
    let builtin = rubricate::formats::load_rubric("code").unwrap();
    assert_eq!(r.criteria.len(), builtin.rubric.criteria.len());
    // esc at the question starts nothing.
    ui.press([code(KeyCode::Esc), key('a'), code(KeyCode::Esc)]);
    assert_eq!(ui.app.grade.rubrics.len(), 5);
}

#[test]
fn a_rubric_with_no_criteria_opens_and_a_writes_its_first_one() {
    let mut ui = Ui::new(120, 40);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let _inside = rt.enter();
    let path = std::path::Path::new(&ui.root).join("rubrics/empty.yaml");
    std::fs::write(
        &path,
        "# kept\nid: empty\nname: Empty\nversion: 0.1.0\ncriteria: []  # none yet\n",
    )
    .unwrap();
    settle(
        &mut ui.app,
        &ui.runtime,
        vec![Effect::LoadRubric {
            path: path.clone(),
            draft: None,
        }],
    );
    ui.app.pane = Pane::Rubrics;
    let view = ui.app.rubrics.view.as_ref().unwrap();
    assert!(view.rubric.is_none());
    let screen = ui.screen();
    assert!(
        screen.contains("empty.yaml:5:11: the rubric has no"),
        "{screen}"
    );
    assert!(screen.contains("a writes a first criterion"), "{screen}");
    ui.press([key('a')]);
    let view = ui.app.rubrics.view.as_ref().unwrap();
    assert!(view.problems.is_empty(), "{:?}", view.problems);
    assert_eq!(view.rubric.as_ref().unwrap().criteria.len(), 1);
    assert!(!ui.app.rubrics.saving());
    let draft = std::fs::read_to_string(
        std::path::Path::new(&ui.root).join(".rubricate/drafts/empty.yaml"),
    )
    .unwrap();
    assert!(draft.starts_with("# kept\n"), "{draft}");
    // The file itself is untouched until a version is saved.
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("criteria: []")
    );
}

#[test]
fn slash_finds_a_line_in_the_rubric_by_its_text_or_requirement() {
    let mut ui = Ui::new(120, 40);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let _inside = rt.enter();
    ui.press([key('B')]);
    // On the list, by file name.
    let files = ui.app.rubrics.files.clone();
    ui.press([key('/')]);
    for c in "SUPPORT".chars() {
        ui.press([key(c)]);
    }
    let at = ui.app.rubrics.file;
    assert!(files[at].to_string_lossy().contains("support"), "{files:?}");
    ui.press([code(KeyCode::Enter), code(KeyCode::Enter)]);
    let r = ui
        .app
        .rubrics
        .view
        .as_ref()
        .unwrap()
        .rubric
        .clone()
        .unwrap();
    // By a word of a requirement only (not in any name).
    let (i, word) = r
        .criteria
        .iter()
        .enumerate()
        .find_map(|(i, c)| {
            c.requirement
                .split_whitespace()
                .find(|w| w.len() > 5 && !tree_text(&r).to_lowercase().contains(&w.to_lowercase()))
                .map(|w| (i, w.to_owned()))
        })
        .expect("a word only in a requirement");
    ui.press([key('/')]);
    for c in word.chars() {
        ui.press([key(c)]);
    }
    assert_eq!(ui.app.rubric_criterion(), Some(i));
    assert!(ui.screen().contains(&format!("/{word}")));
    // esc goes back where the search began; nothing there matches: said so.
    ui.press([code(KeyCode::Esc)]);
    assert_eq!(ui.app.rubrics.line, 0);
    ui.press([key('/'), key('#'), key('#')]);
    assert!(ui.screen().contains("no line has '##'"));
    ui.press([code(KeyCode::Esc)]);
    // ↓ goes to the next match, wrapping: "binary" is on every criterion's line.
    ui.press([key('/')]);
    for c in "binary".chars() {
        ui.press([key(c)]);
    }
    let first = ui.app.rubrics.line;
    ui.press([code(KeyCode::Down)]);
    let second = ui.app.rubrics.line;
    assert!(second > first);
    ui.press([code(KeyCode::Up)]);
    assert_eq!(ui.app.rubrics.line, first);
    ui.press([code(KeyCode::Enter)]);
    assert!(ui.app.rubrics.search.is_none());
    assert_eq!(ui.app.rubrics.line, first, "enter keeps the line");
}

#[test]
fn at_80x24_the_selected_tree_line_stays_on_screen_and_a_click_selects_what_is_drawn() {
    let mut ui = Ui::new(80, 24);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let _inside = rt.enter();
    // The agent built-in's tree (6 criteria × 6 levels) is far taller than the screen.
    ui.press([key('B'), key('a'), code(KeyCode::Down), code(KeyCode::Down)]);
    ui.press([code(KeyCode::Down), code(KeyCode::Enter)]);
    ui.press([key('/')]);
    for c in "safety".chars() {
        ui.press([key(c)]);
    }
    ui.press([code(KeyCode::Enter)]);
    let line = ui.app.rubrics.line;
    assert!(line > 20, "{line}");
    let screen = ui.screen();
    assert!(screen.contains("├ safety — Safety"), "{screen}");
    // A click on the row just above the selection selects the line drawn there.
    let offset = ui.app.rubrics_offset();
    let row = u16::try_from(line - offset).unwrap() + 2 - 1;
    ui.press([Msg::Mouse(MouseEvent {
        kind: MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column: 5,
        row,
        modifiers: KeyModifiers::NONE,
    })]);
    assert_eq!(ui.app.rubrics.line, line - 1);
}

fn tree_text(r: &rubricate::model::Rubric) -> String {
    rubricate::tui::rubrics::tree(r)
        .into_iter()
        .map(|(_, l)| l)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_dataset_file_outside_the_workspace_opens_by_path_with_tab_completion() {
    let mut ui = Ui::new(120, 40);
    let elsewhere = tempfile::tempdir().unwrap();
    let file = elsewhere.path().join("outside-evals.jsonl");
    let lines: Vec<String> = (0..30)
        .map(|i| format!(r#"{{"id":"x{i:02}","prompt":"p","submission":"answer {i}"}}"#))
        .collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let before = ui.app.datasets.len();
    ui.press([key('o')]);
    assert!(ui.app.path_prompt.is_some());
    let typed = format!("{}/outs", elsewhere.path().display());
    for c in typed.chars() {
        ui.press([key(c)]);
    }
    ui.press([code(KeyCode::Tab)]);
    let p = ui.app.path_prompt.clone().unwrap();
    assert_eq!(p.text, file.display().to_string(), "tab completed the name");
    assert!(ui.screen().contains("open a dataset file:"));
    ui.press([code(KeyCode::Enter)]);
    assert!(ui.app.path_prompt.is_none());
    assert_eq!(ui.app.datasets.len(), before + 1);
    let b = ui.app.browse.as_ref().expect("opened");
    assert_eq!(b.dataset, before);
    assert_eq!(b.total, Some(30));
    assert!(ui.screen().contains("x00"), "{}", ui.screen());
    // Registered: the CLI lists it, and the UI's runtime reads the same entry.
    let listed = rubricate::store::datasets::Datasets::new(std::path::Path::new(&ui.root))
        .list()
        .unwrap();
    assert!(
        listed
            .iter()
            .any(|d| d.name == "outside-evals" && d.items == Some(30))
    );
    // The same file again is the same entry; a path that is not a file says so.
    ui.press([code(KeyCode::Esc), key('o')]);
    for c in file.display().to_string().chars() {
        ui.press([key(c)]);
    }
    ui.press([code(KeyCode::Enter)]);
    assert_eq!(ui.app.datasets.len(), before + 1);
    ui.press([
        code(KeyCode::Esc),
        key('o'),
        key('n'),
        key('o'),
        code(KeyCode::Enter),
    ]);
    let message = ui.app.message.clone().unwrap();
    assert!(message.contains("no such file"), "{message}");
}

#[test]
fn search_and_filters_run_in_the_background_and_the_newest_wins() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter)]);
    let first = ui.app.update(key('/'));
    assert!(first.is_empty());
    let a = ui.app.update(key('S'));
    let b = ui.app.update(key('e'));
    let (Effect::Scan { tag: ta, .. }, Effect::Scan { tag: tb, query, .. }) = (&a[0], &b[0]) else {
        panic!()
    };
    assert!(tb > ta);
    assert_eq!(query, "Se");
    settle(&mut ui.app, &ui.runtime, b);
    ui.press([code(KeyCode::Enter)]);
    let rows = ui.app.browse.as_ref().unwrap().row_count();
    assert!(rows > 0 && rows < 50, "{rows}");
    // Results → a confusion cell → the Datasets pane showing just those items.
    ui.press([
        key('R'),
        code(KeyCode::Down),
        code(KeyCode::Down),
        code(KeyCode::Down),
        key('2'),
    ]);
    assert_eq!(ui.app.pane, Pane::Datasets);
    let b = ui.app.browse.as_ref().unwrap();
    assert_eq!(b.filter.name(), "confusion cell");
    // asks-password: alice said MET where the check said UNMET on 6 items.
    assert_eq!(b.row_count(), 6);
    // Worked out by a pass over the run joined with the labels: positions only, no item
    // (nor every item's id) read for it.
    assert!(b.ids.is_empty(), "{} ids kept", b.ids.len());
    assert_eq!(b.total, Some(50));
}

#[test]
fn the_mouse_wheel_scrolls_and_resizing_keeps_the_cursor_visible() {
    let mut ui = Ui::new(80, 24);
    ui.press([code(KeyCode::Enter)]);
    for _ in 0..30 {
        ui.press([Msg::Mouse(MouseEvent {
            kind: MouseEventKind::ScrollDown,
            column: 5,
            row: 5,
            modifiers: KeyModifiers::NONE,
        })]);
    }
    let b = ui.app.browse.as_ref().unwrap();
    assert_eq!(b.cursor, 30);
    assert!(b.offset <= 30 && 30 < b.offset + ui.app.list_height());
    assert!(ui.screen().contains("q31"));
    ui.press([Msg::Resize(60, 12)]);
    let text = ui.screen();
    assert!(text.lines().count() == 12 && text.contains("q31"), "{text}");
    let _ = KeyEventKind::Press;
}

fn snapshots(w: u16, h: u16) {
    let mut ui = Ui::new(w, h);
    let size = format!("{w}x{h}");
    insta::assert_snapshot!(format!("datasets_list_{size}"), ui.screen());
    ui.press([code(KeyCode::Enter)]);
    insta::assert_snapshot!(format!("datasets_items_{size}"), ui.screen());
    ui.press([
        code(KeyCode::Down),
        code(KeyCode::Down),
        code(KeyCode::Enter),
    ]);
    insta::assert_snapshot!(format!("item_detail_{size}"), ui.screen());
    ui.press([code(KeyCode::Esc), key('L')]);
    insta::assert_snapshot!(format!("label_{size}"), ui.screen());
    ui.press([
        key('b'),
        code(KeyCode::Down),
        code(KeyCode::Down),
        code(KeyCode::Down),
    ]);
    insta::assert_snapshot!(format!("label_blind_{size}"), ui.screen());
    ui.press([
        key('R'),
        code(KeyCode::Down),
        code(KeyCode::Down),
        code(KeyCode::Down),
    ]);
    insta::assert_snapshot!(format!("results_{size}"), ui.screen());
    ui.press([key('i'), code(KeyCode::Down)]);
    insta::assert_snapshot!(format!("results_items_{size}"), ui.screen());
    ui.press([code(KeyCode::Esc), key('?')]);
    insta::assert_snapshot!(format!("help_{size}"), ui.screen());
    ui.press([code(KeyCode::Esc), key(':')]);
    for c in "label".chars() {
        ui.press([key(c)]);
    }
    insta::assert_snapshot!(format!("palette_{size}"), ui.screen());
    ui.press([code(KeyCode::Esc), key('B')]);
    insta::assert_snapshot!(format!("rubrics_files_{size}"), ui.screen());
    ui.press([code(KeyCode::Down), code(KeyCode::Enter)]);
    insta::assert_snapshot!(format!("rubrics_tree_{size}"), ui.screen());
    ui.press([key('G')]);
    insta::assert_snapshot!(format!("grade_idle_{size}"), ui.screen());
    ui.press([key('V')]);
    let times = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d").unwrap();
    insta::assert_snapshot!(
        format!("review_list_{size}"),
        times.replace_all(&ui.screen(), "[time]")
    );
}

#[test]
fn the_palette_finds_an_action_by_words_and_runs_it_in_its_pane() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key(':')]);
    assert!(ui.app.palette.is_some());
    // Words of the description, in any order; case ignored.
    for c in "BLIND mode".chars() {
        ui.press([key(c)]);
    }
    let found = ui.app.palette_matches();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(!ui.app.label.blind);
    ui.press([code(KeyCode::Enter)]);
    assert!(ui.app.palette.is_none());
    assert_eq!(ui.app.pane, Pane::Label, "switched to the action's pane");
    assert!(ui.app.label.blind, "and ran it there");
    // ctrl-p opens it too; this pane's actions come first; esc closes without running.
    ui.press([Msg::Key(KeyEvent::new(
        KeyCode::Char('p'),
        KeyModifiers::CONTROL,
    ))]);
    let all = ui.app.palette_matches();
    assert_eq!(all[0].pane(), Some(Pane::Label));
    assert!(
        all.iter().any(|e| e.pane() == Some(Pane::Rubrics)),
        "every pane's actions are listed"
    );
    ui.press([key('z'), key('z'), key('z')]);
    assert!(ui.app.palette_matches().is_empty());
    assert!(ui.screen().contains("no action has those words"));
    ui.press([code(KeyCode::Esc)]);
    assert!(ui.app.palette.is_none() && ui.app.label.blind);
    assert_eq!(ui.app.label.sitting, 0, "z was typed, not an undo");
}

#[test]
fn every_pane_at_120x40() {
    snapshots(120, 40);
}

#[test]
fn every_pane_at_80x24() {
    snapshots(80, 24);
}

#[test]
fn with_no_annotator_configured_the_label_pane_asks_once() {
    let mut ui = Ui::new(120, 40);
    ui.app.annotator_confirmed = false;
    ui.app.annotator = "login".into();
    ui.press([code(KeyCode::Enter), key('L')]);
    assert_eq!(ui.app.annotator_prompt.as_deref(), Some("login"));
    assert!(
        ui.screen()
            .contains("who is labelling? [login] (enter keeps it")
    );
    // Typed keys go to the prompt, not to the labels; the first replaces the name offered
    // (typing "bob" gave "loginbob").
    for c in "bo".chars() {
        ui.app.update(key(c));
    }
    assert_eq!(ui.app.annotator_prompt.as_deref(), Some("bo"));
    ui.app.update(code(KeyCode::Backspace));
    ui.app.update(code(KeyCode::Backspace));
    for c in "../x".chars() {
        ui.app.update(key(c));
    }
    assert!(
        ui.app.update(code(KeyCode::Enter)).is_empty(),
        "a name that is not a file name is refused"
    );
    for _ in 0..4 {
        ui.app.update(code(KeyCode::Backspace));
    }
    for c in "alice".chars() {
        ui.app.update(key(c));
    }
    let effects = ui.app.update(code(KeyCode::Enter));
    assert!(
        matches!(&effects[0], Effect::SetAnnotator { name, .. } if name == "alice"),
        "{effects:?}"
    );
    settle(&mut ui.app, &ui.runtime, effects);
    assert!(ui.app.annotator_prompt.is_none() && ui.app.annotator_confirmed);
    assert_eq!(ui.app.labels.len(), 128, "alice's labels are shown");
}

mod grid {
    use super::*;
    use rubricate::engine::{EventKind, GradeEvent};
    use rubricate::model::{CriterionResult, Failure, MethodKind, Verdict};

    const CRITERIA: [&str; 3] = ["reset-link", "steps", "asks-password"];

    fn ev(item: usize, criterion: usize, kind: EventKind) -> Msg {
        Msg::Grade {
            tag: 7,
            event: Box::new(GradeEvent {
                run: 7,
                item,
                criterion: Some(criterion),
                kind,
            }),
        }
    }

    fn scored(c: usize, verdict: Verdict, value: f64, reason: &str) -> EventKind {
        let mut r =
            CriterionResult::failed(CRITERIA[c], MethodKind::Judge, Failure::error("x", "y"));
        r.failure = None;
        r.verdict = Some(verdict);
        r.value = Some(value);
        r.reason = reason.into();
        EventKind::Scored(Box::new(r))
    }

    /// The Grade pane watching run 7 over the demo dataset, mid-stream.
    fn watching(w: u16, h: u16) -> Ui {
        let mut ui = Ui::new(w, h);
        ui.press([code(KeyCode::Enter), key('G')]);
        ui.press([Msg::RunStarted {
            tag: 7,
            run_id: "20261122-120000-abcd".into(),
            criteria: CRITERIA
                .iter()
                .map(|c| ((*c).to_owned(), *c == "asks-password"))
                .collect(),
            items: Some(50),
        }]);
        ui.press([
            ev(
                0,
                0,
                scored(0, Verdict::Met, 1.0, "It names the Forgot password link."),
            ),
            ev(0, 1, scored(1, Verdict::Unmet, 0.0, "No steps.")),
            ev(0, 2, scored(2, Verdict::Met, 1.0, "Asks for the password.")),
            ev(1, 0, EventKind::Queued),
            ev(1, 1, EventKind::Queued),
            ev(1, 2, EventKind::Queued),
            ev(
                1,
                0,
                EventKind::Chunk("{\"reason\": \"The answer points".into()),
            ),
            ev(
                1,
                1,
                EventKind::Failed(Failure::error(
                    "judge",
                    "openai/j: rate limited by the provider (HTTP 429)",
                )),
            ),
        ]);
        ui
    }

    #[test]
    fn time_comes_in_as_ticks_so_rate_and_eta_follow_the_messages_not_the_clock() {
        use std::time::{Duration, Instant};
        let t0 = Instant::now();
        let mut ui = Ui::new(120, 40);
        ui.press([Msg::Tick(t0), code(KeyCode::Enter), key('G')]);
        ui.press([Msg::RunStarted {
            tag: 7,
            run_id: "20261122-120000-abcd".into(),
            criteria: CRITERIA.iter().map(|c| ((*c).to_owned(), false)).collect(),
            items: Some(50),
        }]);
        // Ten seconds later by the ticks, three cells are graded: 0.3 cells/s, and 147
        // cells left at that rate take 490 s — whatever the wall clock did meanwhile.
        ui.press([
            Msg::Tick(t0 + Duration::from_secs(10)),
            ev(0, 0, scored(0, Verdict::Met, 1.0, "a")),
            ev(0, 1, scored(1, Verdict::Met, 1.0, "b")),
            ev(0, 2, scored(2, Verdict::Met, 1.0, "c")),
        ]);
        let run = ui.app.grade.run.as_ref().unwrap();
        assert!((run.rate(ui.app.now) - 0.3).abs() < 1e-9);
        assert_eq!(run.eta(ui.app.now).map(f64::round), Some(490.0));
        let screen = ui.screen();
        assert!(
            screen.contains("0.3 cells/s") && screen.contains("ETA 490s"),
            "{screen}"
        );
        // The labelling rate counts from the first label, by the ticks too.
        let mut ui = Ui::new(120, 40);
        ui.press([Msg::Tick(t0), code(KeyCode::Enter), key('L'), key('m')]);
        ui.press([Msg::Tick(t0 + Duration::from_secs(60)), key('m')]);
        let text = rubricate::tui::render_text(&ui.app, 120, 40);
        assert!(text.contains("this sitting 2 labelled (2.0/min)"), "{text}");
    }

    #[test]
    fn a_chunk_from_a_superseded_run_is_ignored() {
        let mut ui = watching(120, 40);
        let before = ui.app.grade.run.as_ref().unwrap().rows[1].clone();
        ui.press([Msg::Grade {
            tag: 6,
            event: Box::new(GradeEvent {
                run: 6,
                item: 1,
                criterion: Some(2),
                kind: EventKind::Chunk("stale".into()),
            }),
        }]);
        assert_eq!(
            format!("{:?}", ui.app.grade.run.as_ref().unwrap().rows[1]),
            format!("{before:?}")
        );
        // The selected cell's stream is kept; others are only counted.
        ui.press([code(KeyCode::Down)]);
        ui.press([ev(1, 0, EventKind::Chunk(" to the reset page\"".into()))]);
        let run = ui.app.grade.run.as_ref().unwrap();
        assert_eq!(run.stream, " to the reset page\"");
    }

    #[test]
    fn cancel_produces_the_cancel_effect_and_pause_the_pause_effect() {
        let mut ui = watching(120, 40);
        assert_eq!(
            ui.app.update(key(' ')),
            vec![Effect::PauseRun {
                tag: 7,
                paused: true
            }]
        );
        assert_eq!(
            ui.app.update(code(KeyCode::Esc)),
            vec![Effect::CancelRun { tag: 7 }]
        );
        assert!(ui.app.grade.run.as_ref().unwrap().cancelled);
    }

    fn finished() -> Msg {
        Msg::GradeFinished {
            tag: 7,
            summary: "done".into(),
            end: rubricate::tui::app::RunEnd::Finished,
            tokens: 0,
            cost: 0.0,
        }
    }

    /// The cells `k` (`r` or `A`) retries in run 7, once `y` answers its question (the
    /// question alone sends nothing).
    fn retried(ui: &mut Ui, k: char) -> Vec<(usize, String)> {
        assert!(ui.app.update(key(k)).is_empty());
        match ui.app.update(key('y')).as_slice() {
            [
                Effect::RetryCells {
                    tag: 7,
                    cells,
                    max_cost: None,
                },
            ] => cells.clone(),
            other => panic!("{other:?}"),
        }
    }

    /// An item's evaluation with `results`.
    fn evaluation(target: &str, results: Vec<CriterionResult>) -> rubricate::model::Evaluation {
        rubricate::model::Evaluation {
            id: "eval_1".into(),
            rubric_id: "case".into(),
            rubric_version: "1".into(),
            target_id: target.into(),
            target_type: "item".into(),
            failures: results.iter().filter(|r| r.failure.is_some()).count(),
            results,
            score: None,
            raw: None,
            passed: false,
            incomplete: true,
            feedback: String::new(),
            evaluated_at: String::new(),
            evaluated_by: String::new(),
            graders: Vec::new(),
            tags: std::collections::BTreeMap::new(),
            pending: Vec::new(),
        }
    }

    /// A journalled cell of an item with its own rubric.
    fn journalled(item: usize, criterion: &str, failed: bool) -> rubricate::store::runs::Cell {
        let mut r = CriterionResult::failed(
            criterion,
            MethodKind::Judge,
            Failure::error("judge", "HTTP 500"),
        );
        if !failed {
            r.failure = None;
            r.verdict = Some(Verdict::Met);
            r.value = Some(1.0);
        }
        rubricate::store::runs::Cell {
            item,
            item_id: format!("case-{item}"),
            result: r,
        }
    }

    #[test]
    fn a_retry_in_a_run_of_items_with_their_own_rubrics_keeps_every_other_cell() {
        let mut ui = Ui::new(120, 40);
        ui.press([code(KeyCode::Enter), key('G')]);
        // An agentv eval's run continued after a restart (each case its own rubric: no
        // criteria for the run): five cases, two criteria each, four failed cells.
        let started = || Msg::RunStarted {
            tag: 7,
            run_id: "20261122-120000-abcd".into(),
            criteria: Vec::new(),
            items: Some(5),
        };
        let cells: Vec<_> = (0..5)
            .flat_map(|i| {
                [
                    journalled(i, &format!("contains-{i}"), i == 1),
                    journalled(i, &format!("judge-{i}"), i % 2 == 1 || i == 4),
                ]
            })
            .collect();
        ui.press([
            started(),
            Msg::Preload {
                tag: 7,
                cells: cells.clone(),
            },
            finished(),
        ]);
        let failed = |ui: &Ui| ui.app.grade.run.as_ref().unwrap().failed_cells();
        assert_eq!(
            failed(&ui),
            [
                (1, "contains-1".to_owned()),
                (1, "judge-1".to_owned()),
                (3, "judge-3".to_owned()),
                (4, "judge-4".to_owned())
            ],
            "the failed cells of a continued run can be retried"
        );
        // `r` on the first failed cell (case 1, first column).
        ui.press([code(KeyCode::Down)]);
        assert_eq!(retried(&mut ui, 'r'), [(1, "contains-1".into())]);
        // What the runtime says for the retry: the run started again (the same tag), the
        // other cells from its journal, then the retried cell's new failure and its item's
        // evaluation, which lists only the cell graded again.
        let others: Vec<_> = cells
            .iter()
            .filter(|c| !(c.item == 1 && c.result.criterion_id == "contains-1"))
            .cloned()
            .collect();
        ui.press([
            started(),
            Msg::Preload {
                tag: 7,
                cells: others,
            },
            ev(
                1,
                0,
                EventKind::Failed(Failure::error("judge", "HTTP 500 again")),
            ),
            Msg::Grade {
                tag: 7,
                event: Box::new(GradeEvent {
                    run: 7,
                    item: 1,
                    criterion: None,
                    kind: EventKind::ItemDone(Box::new(evaluation(
                        "case-1",
                        vec![journalled(1, "contains-1", true).result],
                    ))),
                }),
            },
            finished(),
        ]);
        let run = ui.app.grade.run.as_ref().unwrap();
        assert_eq!(
            run.rows.iter().flatten().count(),
            5,
            "every case is still shown"
        );
        assert_eq!(run.cells_done, 10);
        // `A` retries all four failures, not "no failed cells" nor only the retried one's.
        assert_eq!(
            retried(&mut ui, 'A'),
            [
                (1, "contains-1".into()),
                (1, "judge-1".into()),
                (3, "judge-3".into()),
                (4, "judge-4".into())
            ]
        );
    }

    #[test]
    fn a_failed_cells_retry_requeues_only_that_cell() {
        let mut ui = watching(120, 40);
        ui.press([ev(
            2,
            2,
            EventKind::Failed(Failure::error("judge", "timeout")),
        )]);
        ui.press([finished()]);
        // Select row 1, column 1 (the 429).
        ui.press([code(KeyCode::Down), code(KeyCode::Right)]);
        // A retry sends a judge call: asked first, `y` goes ahead.
        assert_eq!(retried(&mut ui, 'r'), [(1, "steps".into())]);
        let run = ui.app.grade.run.as_ref().unwrap();
        let rows: Vec<String> = run
            .rows
            .iter()
            .flatten()
            .map(|r| r.cells.iter().map(|c| c.symbol(false)).collect())
            .collect();
        assert_eq!(
            rows,
            ["✓✗✓", "…··", "··!"],
            "only the retried cell is queued again"
        );
        // Retrying everything that failed waits for the run to end again.
        ui.press([finished()]);
        assert_eq!(retried(&mut ui, 'A'), [(2, "asks-password".into())]);
    }

    #[test]
    fn the_selected_row_stays_on_screen_at_80x24() {
        let mut ui = watching(80, 24);
        // Rows for 40 items, then the cursor taken far down the grid.
        for item in 0..40 {
            ui.press([ev(item, 0, EventKind::Queued)]);
        }
        ui.press((0..30).map(|_| code(KeyCode::Down)));
        let run = ui.app.grade.run.as_ref().unwrap();
        assert_eq!(run.cursor.0, 30);
        let screen = ui.screen();
        assert!(
            screen.lines().any(|l| l.starts_with("│#31 ")),
            "the grid draws the selected row:\n{screen}"
        );
    }

    #[test]
    fn mid_stream_grids() {
        let ui = watching(120, 40);
        // Rates and the ETA depend on the clock.
        // The rate is printed in a fixed width (the line wraps the same whatever it is).
        let rate = regex::Regex::new(r" +[0-9]+\.[0-9] cells/s").unwrap();
        let eta = regex::Regex::new(r"ETA [0-9s-]+").unwrap();
        let redact = |s: String| {
            let s = rate.replace_all(&s, " [rate] cells/s").into_owned();
            eta.replace_all(&s, "ETA [eta]").into_owned()
        };
        insta::assert_snapshot!("grade_grid_120x40", redact(ui.screen()));
        let ui = watching(80, 24);
        insta::assert_snapshot!("grade_grid_80x24", redact(ui.screen()));
    }
}

mod review {
    use super::*;
    use rubricate::store::artifacts::{Artifacts, Provenance, Status};

    fn with_artifacts() -> Ui {
        let ui = Ui::new(120, 40);
        let store = Artifacts::new(std::path::Path::new(&ui.root));
        let provenance = || Provenance {
            source: "bot:helper".into(),
            kind: "generator".into(),
            created_at: "2026-11-20T10:00:00Z".into(),
        };
        let rubric = vec!["rubrics/support-answer.yaml".to_owned()];
        store
            .create(
                "support_answer",
                "Reset reply",
                serde_json::json!(
                    "First, click Forgot password on the sign-in page. Then follow the email."
                ),
                provenance(),
                rubric.clone(),
            )
            .unwrap();
        store
            .create(
                "support_answer",
                "Curt reply",
                serde_json::json!("We cannot help."),
                provenance(),
                rubric,
            )
            .unwrap();
        ui
    }

    #[test]
    fn an_artifact_is_made_from_a_dataset_item_or_a_file_with_a_type_and_a_name() {
        let mut ui = Ui::new(120, 40);
        // As the demo's rubricate.yaml defines it (the test workspace's config is replaced).
        ui.app.artifact_types = vec![(
            "support_answer".into(),
            vec!["rubrics/support-answer.yaml".into()],
        )];
        // From the selected item of a dataset.
        ui.press([code(KeyCode::Enter), code(KeyCode::Down), key('A')]);
        let new = ui.app.review.new.clone().expect("the line is open");
        assert_eq!(new.from, "item q02 of support-answers");
        assert_eq!(new.name, "q02");
        assert!(
            ui.screen()
                .contains("new artifact name: q02▏ · type support_answer (tab)")
        );
        for c in " reply".chars() {
            ui.press([key(c)]);
        }
        ui.press([code(KeyCode::Enter)]);
        let store = Artifacts::new(std::path::Path::new(&ui.root));
        let made: Vec<_> = store
            .list()
            .unwrap()
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(made.len(), 1);
        let a = &made[0];
        assert_eq!(
            (a.name.as_str(), a.kind.as_str()),
            ("q02 reply", "support_answer")
        );
        assert_eq!(a.status, Status::Draft);
        assert_eq!(a.rubrics, ["rubrics/support-answer.yaml"]);
        let item = ui.app.browse.as_ref().unwrap().current().unwrap().clone();
        assert_eq!(a.content, serde_json::json!(item.submission));
        assert!(
            ui.app
                .message
                .as_deref()
                .unwrap()
                .contains("made: a support_answer draft")
        );
        // From a file (a path relative to the workspace), in the Review pane.
        std::fs::write(
            std::path::Path::new(&ui.root).join("answer.json"),
            r#"{"text": "Use the reset page."}"#,
        )
        .unwrap();
        ui.press([key('V'), key('n')]);
        for c in "answer.json".chars() {
            ui.press([key(c)]);
        }
        ui.press([code(KeyCode::Enter)]);
        assert_eq!(ui.app.review.new.as_ref().unwrap().name, "answer");
        ui.press([code(KeyCode::Enter)]);
        assert_eq!(ui.app.review.artifacts.len(), 2);
        assert!(
            ui.app
                .review
                .artifacts
                .iter()
                .any(|a| a.content == serde_json::json!({"text": "Use the reset page."}))
        );
        // esc drops the line; nothing is made.
        ui.press([key('n')]);
        for c in "answer.json".chars() {
            ui.press([key(c)]);
        }
        ui.press([code(KeyCode::Enter), code(KeyCode::Esc)]);
        assert_eq!(ui.app.review.artifacts.len(), 2);
    }

    #[test]
    fn without_artifact_types_the_ui_says_where_to_define_them() {
        let mut ui = Ui::new(120, 40);
        ui.app.artifact_types.clear();
        ui.press([code(KeyCode::Enter), key('A')]);
        assert!(ui.app.review.new.is_none());
        assert!(
            ui.app
                .message
                .as_deref()
                .unwrap()
                .contains("artifact_types:")
        );
    }

    #[test]
    fn e_revises_a_draft_or_needs_revision_artifact_from_its_edited_file() {
        let mut ui = with_artifacts();
        ui.press([key('V')]);
        // $EDITOR takes the terminal: asked first, `y` goes ahead.
        assert!(ui.app.update(key('e')).is_empty());
        let effects = ui.app.update(key('y'));
        let [Effect::EditArtifact { id }] = effects.as_slice() else {
            panic!("{effects:?}")
        };
        let id = id.clone();
        // What the editor does: the content's file is changed and saved.
        let file = ui.runtime.artifact_draft(&id).unwrap();
        let before = std::fs::read_to_string(&file).unwrap();
        assert!(!before.is_empty());
        std::fs::write(&file, "A better reply, with steps.").unwrap();
        settle(
            &mut ui.app,
            &ui.runtime,
            vec![Effect::ReviseArtifact {
                id: id.clone(),
                file: file.clone(),
            }],
        );
        let store = Artifacts::new(std::path::Path::new(&ui.root));
        let a = store.get(&id).unwrap();
        assert_eq!(a.content, serde_json::json!("A better reply, with steps."));
        assert_eq!(a.status, Status::Draft);
        assert!(!file.exists(), "the edit file goes once saved");
        assert!(ui.app.message.as_deref().unwrap().contains("revised"));
        // One that needs revision goes back to draft, with a note in its history.
        let mut a = store.get(&id).unwrap();
        for to in [
            Status::PendingReview,
            Status::InReview,
            Status::NeedsRevision,
        ] {
            a.transition(to, "").unwrap();
        }
        store.save(&a).unwrap();
        let file = ui.runtime.artifact_draft(&id).unwrap();
        std::fs::write(&file, "Revised again.").unwrap();
        settle(
            &mut ui.app,
            &ui.runtime,
            vec![Effect::ReviseArtifact {
                id: id.clone(),
                file,
            }],
        );
        let a = store.get(&id).unwrap();
        assert_eq!(a.status, Status::Draft);
        assert_eq!(a.history.last().unwrap().note, "revised in the terminal UI");
        // An approved artifact is not revised.
        let mut a = store.get(&id).unwrap();
        for to in [Status::PendingReview, Status::InReview, Status::Approved] {
            a.transition(to, "").unwrap();
        }
        store.save(&a).unwrap();
        settle(&mut ui.app, &ui.runtime, vec![Effect::LoadArtifacts]);
        let at = rubricate::tui::review::ordered(&ui.app.review.artifacts)
            .iter()
            .position(|x| x.id == id)
            .unwrap();
        ui.app.review.selected = at;
        assert!(ui.app.update(key('e')).is_empty());
        assert!(ui.app.message.as_deref().unwrap().contains("is approved"));
    }

    /// An artifact reviewed three times (two failed reviews, then one that approved it):
    /// its panel is longer than the screen.
    fn reviewed_three_times(ui: &Ui) -> String {
        let store = Artifacts::new(std::path::Path::new(&ui.root));
        let mut a = store
            .list()
            .unwrap()
            .into_iter()
            .map(Result::unwrap)
            .find(|a| a.name == "Curt reply")
            .unwrap();
        let criteria = ["reset-link", "steps", "concise", "asks-password"];
        for (round, passed) in [(1, false), (2, false), (3, true)] {
            for to in [Status::PendingReview, Status::InReview] {
                a.transition(to, "").unwrap();
            }
            let verdict = if passed { "MET" } else { "UNMET" };
            let evaluation = serde_json::json!({"criteria": criteria.iter().map(|c| serde_json::json!({
                "id": c,
                "verdict": verdict,
                "reason": format!("round {round}: the reply {} what {c} asks for, as the reviewer read it", if passed { "does" } else { "does not do" }),
            })).collect::<Vec<_>>()});
            a.reviews.push(rubricate::store::artifacts::Review {
                rubric_id: "support-answer".into(),
                rubric_version: format!("1.0.{round}"),
                passed,
                score: Some(if passed { 1.0 } else { 0.25 }),
                evaluation,
                time: "2026-11-21T10:00:00Z".into(),
            });
            if passed {
                a.transition(Status::Approved, "all good now").unwrap();
            } else {
                a.transition(Status::NeedsRevision, "missing the steps")
                    .unwrap();
                a.transition(Status::Draft, "revised").unwrap();
            }
        }
        store.save(&a).unwrap();
        a.id
    }

    #[test]
    fn the_review_panel_scrolls_to_a_review_below_the_edge() {
        let mut ui = with_artifacts();
        let id = reviewed_three_times(&ui);
        ui.press([key('V')]);
        let at = rubricate::tui::review::ordered(&ui.app.review.artifacts)
            .iter()
            .position(|x| x.id == id)
            .unwrap();
        ui.press((0..at).map(|_| code(KeyCode::Down)));
        assert_eq!(ui.app.selected_artifact().unwrap().id, id);
        // At 120×40 the approving review is below the panel's edge; the title says how
        // to reach it, and the hints name the key.
        let screen = ui.screen();
        assert!(!screen.contains("support-answer@1.0.3"), "{screen}");
        assert!(screen.contains("pgdn/pgup scroll"), "{screen}");
        assert!(screen.contains("pgdn scroll the panel"), "{screen}");
        ui.press([code(KeyCode::PageDown)]);
        let screen = ui.screen();
        assert!(
            screen.contains("support-answer@1.0.3  100%  passed"),
            "{screen}"
        );
        // Never past the last row: more presses change nothing, and one page up leaves
        // the end.
        let end = ui.app.review.detail_scroll;
        ui.press([code(KeyCode::PageDown), code(KeyCode::PageDown)]);
        assert_eq!(ui.app.review.detail_scroll, end);
        let times = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d").unwrap();
        let ids = regex::Regex::new(r"art_[0-9a-f]{32}").unwrap();
        let screen = ids.replace_all(&ui.screen(), "art_[id]").into_owned();
        insta::assert_snapshot!(
            "review_scrolled_120x40",
            times.replace_all(&screen, "[time]")
        );
        ui.press([code(KeyCode::PageUp)]);
        assert!(ui.app.review.detail_scroll < end);
        // Another artifact starts at its top.
        ui.press([code(KeyCode::Up)]);
        assert_eq!(ui.app.review.detail_scroll, 0);
    }

    #[test]
    fn submit_refuses_an_artifact_that_needs_revision_until_it_is_revised() {
        let mut ui = with_artifacts();
        ui.press([key('V')]);
        let store = Artifacts::new(std::path::Path::new(&ui.root));
        let id = ui.app.review.artifacts[0].id.clone();
        let mut a = store.get(&id).unwrap();
        for to in [
            Status::PendingReview,
            Status::InReview,
            Status::NeedsRevision,
        ] {
            a.transition(to, "add the steps").unwrap();
        }
        store.save(&a).unwrap();
        settle(&mut ui.app, &ui.runtime, vec![Effect::LoadArtifacts]);
        let at = rubricate::tui::review::ordered(&ui.app.review.artifacts)
            .iter()
            .position(|a| a.id == id)
            .unwrap();
        ui.app.review.selected = at;
        // Refused in a box (not the "submit?" question), and `y` then submits nothing.
        assert!(ui.app.update(key('s')).is_empty());
        assert!(ui.screen().contains("needs revision"), "{}", ui.screen());
        assert!(ui.app.update(key('y')).is_empty());
        ui.press([code(KeyCode::Esc)]);
        assert_eq!(store.get(&id).unwrap().status, Status::NeedsRevision);
    }

    #[test]
    fn keys_after_a_refused_decision_and_a_stray_burst_act_nowhere() {
        let mut ui = with_artifacts();
        ui.press([key('V')]);
        let journal = std::path::Path::new(&ui.root).join("labels/support-answers/alice.jsonl");
        let labels_before = std::fs::read_to_string(&journal).unwrap();
        // `x` on a draft is refused; the note typed after it (`L` is the Label pane, `m`
        // a MET label there) goes nowhere until esc closes the refusal.
        assert!(ui.app.update(key('x')).is_empty());
        for c in "Looks fine. Mostly met".chars() {
            let effects = ui.app.update(key(c));
            assert!(effects.is_empty(), "{c:?} acted: {effects:?}");
        }
        assert_eq!(ui.app.pane, Pane::Review);
        assert!(ui.screen().contains("decide on an artifact in review"));
        ui.press([code(KeyCode::Esc)]);
        assert!(ui.app.ask.is_none());
        // A stray "please review" with no prompt open: `e` (the editor) and `s` (submit)
        // ask first, and the next letter drops the question — nothing is submitted or
        // edited.
        for c in "please review".chars() {
            let effects = ui.app.update(key(c));
            assert!(
                !effects.iter().any(|e| matches!(
                    e,
                    Effect::SubmitArtifact { .. } | Effect::EditArtifact { .. }
                )),
                "{c:?} acted: {effects:?}"
            );
        }
        settle(&mut ui.app, &ui.runtime, vec![Effect::LoadArtifacts]);
        assert!(
            ui.app
                .review
                .artifacts
                .iter()
                .all(|a| a.status == Status::Draft && a.reviews.is_empty())
        );
        assert_eq!(std::fs::read_to_string(&journal).unwrap(), labels_before);
    }

    #[test]
    fn submit_evaluates_and_decisions_take_a_note() {
        let mut ui = with_artifacts();
        let effects = ui.app.update(key('V'));
        assert_eq!(effects, vec![Effect::LoadArtifacts]);
        settle(&mut ui.app, &ui.runtime, effects);
        assert_eq!(ui.app.review.artifacts.len(), 2);
        // A draft cannot be approved; it is submitted.
        assert!(ui.app.update(key('a')).is_empty());
        assert!(
            ui.app
                .message
                .as_deref()
                .unwrap()
                .contains("decide on an artifact in review")
        );
        assert!(ui.screen().contains("esc or enter closes"));
        ui.press([code(KeyCode::Esc)]);
        // Submitting evaluates (judge calls): asked first, `y` goes ahead.
        assert!(ui.app.update(key('s')).is_empty());
        assert!(
            ui.screen().contains("submit 'Reset reply' for review?"),
            "{}",
            ui.screen()
        );
        let effects = ui.app.update(key('y'));
        let [Effect::SubmitArtifact { id, .. }] = effects.as_slice() else {
            panic!("{effects:?}")
        };
        let submitted = id.clone();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        let _inside = rt.enter();
        settle(&mut ui.app, &ui.runtime, effects);
        let a = ui
            .app
            .review
            .artifacts
            .iter()
            .find(|a| a.id == submitted)
            .unwrap();
        assert_eq!(a.status, Status::Approved, "{:?}", ui.app.message);
        assert_eq!(a.reviews.len(), 1);
        // The review shows each criterion's verdict and reason.
        let screen = ui.screen();
        assert!(
            screen.contains("  reset-link: MET") && screen.contains("  asks-password: UNMET"),
            "{screen}"
        );
        // The other one, by hand: needs a note, then the decision is recorded.
        ui.press([key('k')]);
        let other = ui.app.selected_artifact().unwrap().id.clone();
        assert_ne!(other, submitted);
        std::fs::write(
            std::path::Path::new(&ui.root).join(format!("artifacts/{other}.json")),
            {
                let mut a = ui.app.selected_artifact().unwrap().clone();
                a.transition(Status::PendingReview, "").unwrap();
                serde_json::to_string(&a).unwrap()
            },
        )
        .unwrap();
        ui.press([key('V')]);
        assert!(ui.app.update(key('x')).is_empty());
        for c in "too curt".chars() {
            ui.app.update(key(c));
        }
        let effects = ui.app.update(code(KeyCode::Enter));
        assert_eq!(
            effects,
            vec![Effect::DecideArtifact {
                id: other.clone(),
                to: Status::Rejected,
                note: "too curt".into()
            }]
        );
        settle(&mut ui.app, &ui.runtime, effects);
        let a = ui
            .app
            .review
            .artifacts
            .iter()
            .find(|a| a.id == other)
            .unwrap();
        assert_eq!(a.status, Status::Rejected);
        assert_eq!(a.history.last().unwrap().note, "too curt");
        let ids = regex::Regex::new(r"art_[0-9a-f]{32}").unwrap();
        let times = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d").unwrap();
        let screen = ids.replace_all(&ui.screen(), "art_[id]").into_owned();
        insta::assert_snapshot!("review_120x40", times.replace_all(&screen, "[time]"));
    }
}

#[test]
fn runs_of_different_rubrics_compare_only_their_shared_criteria_and_say_so() {
    let mut ui = Ui::new(120, 40);
    // A later run of the demo dataset with the judged rubric (no judge: its judged
    // criteria fail, but it is a run of another rubric all the same).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(&ui.root)
        .args([
            "grade",
            "--rubric",
            "rubrics/support-answer-judged.yaml",
            "datasets/support-answers.jsonl",
            "--save",
            "--max-error-rate",
            "1",
        ])
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    ui.press([code(KeyCode::Enter), key('R'), key('c')]);
    let screen = ui.screen();
    assert!(
        screen.contains("different rubrics: only the 3 criteria both have are compared"),
        "{screen}"
    );
    assert!(
        screen.contains("their item scores are not compared"),
        "{screen}"
    );
    assert!(!screen.contains("REGRESSION"), "{screen}");
}

#[test]
fn results_lists_the_runs_items_filtered_by_verdict_and_failure_and_opens_one() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('R'), key('i')]);
    let run = ui.app.browse.as_ref().unwrap().run.clone().unwrap();
    // What the journal holds, read by the run engine (the UI holds only a compact index).
    let mut truth = std::collections::HashMap::new();
    let mut at = std::collections::HashMap::new();
    let runs_dir = ui.app_workspace_runs();
    rubricate::run::record::Recording::open(&runs_dir, &run.manifest.id)
        .unwrap()
        .replay(|position, e| {
            at.insert(position, e.target_id.clone());
            let cell = e.results.iter().find(|x| x.criterion_id == "reset-link");
            let failed = e.results.iter().any(|x| x.failure.is_some());
            truth.insert(
                e.target_id.clone(),
                (
                    cell.map(rubricate::tui::results::verdict_text),
                    failed,
                    cell.map(|x| x.reason.clone()),
                ),
            );
        })
        .unwrap();
    assert_eq!(truth.len(), run.len());
    // The ids of the items listed: the list holds dataset positions (none while unfiltered).
    let shown = |ui: &Ui| {
        let run = ui.app.browse.as_ref().unwrap().run.clone().unwrap();
        let view = ui.app.results.items.clone().unwrap();
        assert_eq!(view.filtering, None, "the pass answered");
        (0..view.row_count(&run))
            .map(|k| at[&view.position(&run, k).unwrap()].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(shown(&ui).len(), run.len(), "every item, in dataset order");
    let screen = ui.screen();
    assert!(
        screen.contains(&format!("Items {0}/{0}", run.len())),
        "{screen}"
    );
    // v: only the items the judge gave the first verdict on the selected criterion.
    ui.press([key('v')]);
    let view = ui.app.results.items.clone().unwrap();
    let verdict = view.verdict.clone().expect("a verdict filter");
    let rows = shown(&ui);
    assert!(!rows.is_empty() && rows.len() < run.len());
    // The list was worked out by a pass over the run in the runtime: positions only.
    assert_eq!(
        ui.app
            .results
            .items
            .as_ref()
            .unwrap()
            .rows
            .as_ref()
            .map(Vec::len),
        Some(rows.len())
    );
    for id in &rows {
        assert_eq!(truth[id].0.as_deref(), Some(verdict.as_str()));
    }
    let mut given: Vec<String> = truth.values().filter_map(|t| t.0.clone()).collect();
    given.sort();
    given.dedup();
    assert_eq!(rubricate::tui::results::verdicts(&run, "reset-link"), given);
    assert!(ui.screen().contains(&format!("reset-link = {verdict}")));
    // Each verdict in turn, then none again.
    let all = rubricate::tui::results::verdicts(&run, "reset-link");
    for _ in 1..all.len() {
        ui.press([key('v')]);
    }
    ui.press([key('v')]);
    assert_eq!(ui.app.results.items.as_ref().unwrap().verdict, None);
    // F: only items with a failed cell (the demo's run has none: the list says so).
    ui.press([key('F')]);
    let failed = truth.values().filter(|(_, failed, _)| *failed).count();
    assert_eq!(shown(&ui).len(), failed);
    ui.press([key('F'), code(KeyCode::Down), code(KeyCode::Down)]);
    let third = shown(&ui)[2].clone();
    // The selected item's verdicts and reasons are below the list (its reason read from
    // the journal for the rows on screen); enter opens it.
    let screen = ui.screen();
    assert!(screen.contains(&format!(" {third} ")));
    let reason = truth[&third].2.clone().unwrap();
    let start: String = reason.chars().take(20).collect();
    assert!(
        !start.is_empty() && screen.contains(&start),
        "{start:?} in\n{screen}"
    );
    ui.press([code(KeyCode::Enter)]);
    assert_eq!(ui.app.pane, Pane::Datasets);
    let b = ui.app.browse.as_ref().unwrap();
    assert!(b.detail);
    assert_eq!(b.current().map(|i| i.id.clone()), Some(third));
    // Back in Results, the list is where it was; esc goes back to the criteria.
    ui.press([key('R')]);
    assert_eq!(ui.app.results.items.as_ref().unwrap().cursor, 2);
    ui.press([code(KeyCode::Esc)]);
    assert!(ui.app.results.items.is_none());
}

#[test]
fn two_runs_compare_per_criterion_and_regressions_first() {
    let mut ui = Ui::new(120, 40);
    // No earlier run yet.
    ui.press([code(KeyCode::Enter), key('R'), key('c')]);
    assert!(ui.app.results.compare.is_none());
    assert!(
        ui.app
            .message
            .as_deref()
            .unwrap()
            .contains("no earlier run")
    );
    // A later run of the same dataset where q01 lost the reset link (a required gate).
    let runs = std::path::Path::new(&ui.root).join("runs");
    let old = later_run::DEMO_RUN;
    let new = "20261122-160000-beef";
    later_run::later_run(&runs, new, later_run::q01_loses_the_reset_link);
    // Reopen the dataset so the latest run is the new one, then compare with the one before.
    ui.press([
        key('D'),
        code(KeyCode::Esc),
        code(KeyCode::Enter),
        key('R'),
        key('c'),
    ]);
    let a = ui.app.results.compare.as_ref().expect("an earlier run");
    assert_eq!(a.manifest.id, old);
    // The changed items were worked out by a pass over both runs, not left to every frame.
    let moved = ui
        .app
        .shown_comparison()
        .expect("the comparison")
        .moved
        .clone();
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0].0, "q01");
    // An answer for two other runs (a comparison asked for before the sides moved) is not
    // what the screen shows.
    let other = rubricate::tui::run_scan::Comparison {
        a: "elsewhere-a".into(),
        b: "elsewhere-b".into(),
        moved: vec![("q09".into(), -1.0, true, 8)],
        ..Default::default()
    };
    ui.press([Msg::Compared {
        a: other.a.clone(),
        b: other.b.clone(),
        result: Ok(std::sync::Arc::new(other)),
    }]);
    assert_eq!(
        ui.app.shown_comparison().map(|c| c.moved.clone()),
        Some(moved.clone())
    );
    assert!(!ui.screen().contains("q09"));
    // Side A read again (`]`: the newest earlier run) is compared again, the same.
    ui.press([key(']')]);
    assert_eq!(
        ui.app.shown_comparison().map(|c| c.moved.clone()),
        Some(moved)
    );
    let screen = ui.screen();
    assert!(
        screen.contains("1 items changed; regressions first"),
        "{screen}"
    );
    assert!(
        screen.contains("q01") && screen.contains("REGRESSION"),
        "{screen}"
    );
    insta::assert_snapshot!("results_compare_120x40", screen);
    ui.app.size = (80, 24);
    insta::assert_snapshot!("results_compare_80x24", ui.screen());
    ui.app.size = (120, 40);
    // The regression opens: the Datasets pane shows q01, whole.
    ui.press([code(KeyCode::Enter)]);
    assert_eq!(ui.app.pane, Pane::Datasets);
    let b = ui.app.browse.as_ref().unwrap();
    assert!(b.detail);
    assert_eq!(b.current().map(|i| i.id.as_str()), Some("q01"));
    ui.press([key('R')]);
    // Older than the oldest: stays, and says so.
    ui.press([key('[')]);
    assert_eq!(ui.app.results.compare_back, 1);
    // Side B moves too: B one back is the old run itself — nothing changed.
    ui.press([key('{')]);
    assert_eq!(ui.app.results.compare_b_back, 1);
    let screen = ui.screen();
    assert!(screen.contains(&format!("B = {old}")), "{screen}");
    assert!(screen.contains("0 items changed"), "{screen}");
    ui.press([key('}')]);
    assert!(ui.app.results.compare_b.is_none(), "back to the latest");
    ui.press([key('c')]);
    assert!(ui.app.results.compare.is_none());
}

#[test]
fn the_rubrics_pane_shows_the_tree_lint_and_saves_a_draft_as_a_version() {
    let mut ui = Ui::new(120, 40);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let _inside = rt.enter();
    ui.press([key('B')]);
    assert_eq!(ui.app.pane, Pane::Rubrics);
    // The second file is the deterministic rubric.
    ui.press([code(KeyCode::Down)]);
    let effects = ui.app.update(code(KeyCode::Enter));
    assert!(
        matches!(&effects[0], Effect::LoadRubric { draft: None, .. }),
        "{effects:?}"
    );
    settle(&mut ui.app, &ui.runtime, effects);
    assert!(
        ui.app.rubrics.view.as_ref().unwrap().score.is_some(),
        "linted"
    );
    ui.press([code(KeyCode::Down)]);
    assert_eq!(ui.app.rubric_criterion(), Some(0));
    // Nothing to save without a draft.
    ui.press([key('s')]);
    assert!(
        ui.app
            .message
            .as_deref()
            .unwrap()
            .contains("nothing to save")
    );
    // A draft (as $EDITOR would leave it), then save with a note.
    let root_dir = std::path::PathBuf::from(&ui.root);
    let root = root_dir.as_path();
    let text = std::fs::read_to_string(root.join("rubrics/support-answer.yaml")).unwrap();
    std::fs::create_dir_all(root.join(".rubricate/drafts")).unwrap();
    std::fs::write(
        root.join(".rubricate/drafts/support-answer.yaml"),
        text.replace("weight: 2", "weight: 1")
            .replace("version: 1.0.0", "version: 1.1.0"),
    )
    .unwrap();
    let path = root.join("rubrics/support-answer.yaml");
    let effects = vec![Effect::LoadRubric {
        path: path.clone(),
        draft: None,
    }];
    settle(&mut ui.app, &ui.runtime, effects);
    assert!(
        ui.app.rubrics.view.as_ref().unwrap().draft.is_some(),
        "a leftover draft is picked up"
    );
    insta::assert_snapshot!("rubrics_120x40", ui.screen());
    ui.press([key('s')]);
    for c in "steps count less".chars() {
        ui.app.update(key(c));
    }
    let effects = ui.app.update(code(KeyCode::Enter));
    assert!(matches!(&effects[0], Effect::SaveRubric { note, .. } if note == "steps count less"));
    settle(&mut ui.app, &ui.runtime, effects);
    assert_eq!(
        ui.app.message.as_deref(),
        Some(
            "saved support-answer 1.1.0 (steps count less); the original was recorded first as 1.0.0"
        )
    );
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("version: 1.1.0")
    );
    assert!(
        ui.app.rubrics.view.as_ref().unwrap().draft.is_none(),
        "the draft is gone once saved"
    );
    // The original and the edit are two versions: the diff is the edit.
    ui.press([key('d')]);
    let diff = ui.app.rubrics.diff.clone().expect("a diff");
    assert!(
        diff.contains("-version: 1.0.0") && diff.contains("+version: 1.1.0"),
        "{diff}"
    );
    ui.press([key('x')]);
    // A second version; the diff shows what changed, from the one before.
    std::fs::write(
        root.join(".rubricate/drafts/support-answer.yaml"),
        std::fs::read_to_string(&path)
            .unwrap()
            .replace("version: 1.1.0", "version: 1.2.0")
            .replace("Concise", "Brief"),
    )
    .unwrap();
    settle(
        &mut ui.app,
        &ui.runtime,
        vec![Effect::LoadRubric {
            path: path.clone(),
            draft: None,
        }],
    );
    ui.press([key('s')]);
    for c in "rename".chars() {
        ui.app.update(key(c));
    }
    ui.press([code(KeyCode::Enter), key('d')]);
    let diff = ui.app.rubrics.diff.clone().expect("a diff");
    assert!(
        diff.contains("-version: 1.1.0") && diff.contains("+version: 1.2.0"),
        "{diff}"
    );
    assert!(diff.contains("+  name: Brief"), "{diff}");
    // Older than the oldest stays on the oldest; any other key closes.
    ui.press([key('['), key('['), key('[')]);
    assert_eq!(ui.app.rubrics.diff_back, 2);
    ui.press([key('x')]);
    assert!(ui.app.rubrics.diff.is_none());
}

#[test]
fn saving_an_edit_offers_the_next_version_and_records_the_original_first() {
    let mut ui = Ui::new(120, 40);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let _inside = rt.enter();
    ui.press([
        key('B'),
        code(KeyCode::Down),
        code(KeyCode::Enter),
        code(KeyCode::Down),
    ]);
    // An edit in place keeps `version: 1.0.0` in the draft.
    ui.press([key('y')]);
    ui.press([key('s')]);
    let dialog = ui.app.rubrics.save.clone().expect("the save asks");
    assert_eq!(dialog.offers, ["1.0.1", "1.1.0", "2.0.0"]);
    assert_eq!(dialog.version(), "1.0.1");
    // Tab picks a minor version; the note is typed; enter saves.
    ui.press([code(KeyCode::Tab)]);
    assert!(ui.screen().contains("save as version 1.1.0"));
    for c in "copy of reset-link".chars() {
        ui.app.update(key(c));
    }
    let effects = ui.app.update(code(KeyCode::Enter));
    assert!(matches!(&effects[0], Effect::SaveRubric { version, .. } if version == "1.1.0"));
    settle(&mut ui.app, &ui.runtime, effects);
    assert_eq!(
        ui.app.message.as_deref(),
        Some(
            "saved support-answer 1.1.0 (copy of reset-link); the original was recorded first as 1.0.0"
        )
    );
    let root = std::path::PathBuf::from(&ui.root);
    let registry = rubricate::store::registry::Registry::new(&root);
    let original = registry.get("support-answer", Some("1.0.0")).unwrap();
    assert_eq!(original.rubric.criteria.len(), 4, "the file as it was");
    let saved = registry.get("support-answer", Some("1.1.0")).unwrap();
    assert_eq!(saved.rubric.criteria.len(), 5);
    let file = std::fs::read_to_string(root.join("rubrics/support-answer.yaml")).unwrap();
    assert!(file.contains("version: 1.1.0"));
    // The next save offers what comes after the highest saved version.
    ui.press([key('y'), key('s')]);
    assert_eq!(
        ui.app.rubrics.save.as_ref().unwrap().offers,
        ["1.1.1", "1.2.0", "2.0.0"]
    );
}

#[test]
fn a_rubric_validate_would_refuse_shows_where_and_is_never_saved_as_a_version() {
    let mut ui = Ui::new(120, 40);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let _inside = rt.enter();
    ui.press([key('B'), code(KeyCode::Down), code(KeyCode::Enter)]);
    let root = std::path::PathBuf::from(&ui.root);
    let path = root.join("rubrics/support-answer.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::create_dir_all(root.join(".rubricate/drafts")).unwrap();
    // A pattern that does not compile, and a new version number.
    std::fs::write(
        root.join(".rubricate/drafts/support-answer.yaml"),
        text.replace("forgot password|reset (page|link)", "(unclosed")
            .replace("version: 1.0.0", "version: 1.1.0"),
    )
    .unwrap();
    settle(
        &mut ui.app,
        &ui.runtime,
        vec![Effect::LoadRubric {
            path: path.clone(),
            draft: None,
        }],
    );
    let problems = ui.app.rubrics.view.as_ref().unwrap().problems.clone();
    assert!(
        problems
            .iter()
            .any(|p| p.contains("support-answer.yaml:16:") && p.contains("regex")),
        "{problems:?}"
    );
    // Save refuses at once, naming the problem and where it is.
    assert!(ui.app.update(key('s')).is_empty());
    assert!(ui.app.rubrics.save.is_none(), "no note is asked for");
    let message = ui.app.message.clone().unwrap_or_default();
    assert!(
        message.starts_with("not saved: the draft does not validate (")
            && message.contains("support-answer.yaml:16:"),
        "{message}"
    );
    // Even a save that reaches the disk layer (a draft changed behind the UI's back) is
    // refused there.
    let draft = root.join(".rubricate/drafts/support-answer.yaml");
    settle(
        &mut ui.app,
        &ui.runtime,
        vec![Effect::SaveRubric {
            path: path.clone(),
            draft,
            note: "broken".into(),
            version: "1.1.0".into(),
        }],
    );
    let message = ui.app.message.clone().unwrap_or_default();
    assert!(message.starts_with("not saved:"), "{message}");
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("version: 1.0.0"),
        "the rubric file is unchanged"
    );
    let history = rubricate::store::registry::Registry::new(&root).history("support-answer");
    assert!(
        history.map_or(true, |h| h.iter().all(|e| e.version != "1.1.0")),
        "no version 1.1.0 was registered"
    );
}

#[test]
fn rapid_edits_each_start_from_the_last_and_all_land_in_the_draft_in_order() {
    let mut ui = Ui::new(120, 40);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let _inside = rt.enter();
    ui.press([
        key('B'),
        code(KeyCode::Down),
        code(KeyCode::Enter),
        code(KeyCode::Down),
    ]);
    let count = |ui: &Ui| {
        ui.app
            .rubrics
            .view
            .as_ref()
            .unwrap()
            .rubric
            .as_ref()
            .unwrap()
            .criteria
            .len()
    };
    let before = count(&ui);
    // 25 presses faster than any write returns: every one duplicates, on screen at once.
    let mut effects = Vec::new();
    for _ in 0..25 {
        effects.extend(ui.app.update(key('y')));
    }
    assert_eq!(
        count(&ui),
        before + 25,
        "every edit starts from the one before"
    );
    assert!(ui.app.rubrics.saving());
    // Quitting waits for the draft writes.
    ui.app.update(key('q'));
    assert!(!ui.app.quit);
    // The writes land in order (the last one last); answers to older ones change nothing.
    settle(&mut ui.app, &ui.runtime, effects);
    assert!(!ui.app.rubrics.saving());
    assert!(ui.app.quit, "quit once the last draft write was confirmed");
    assert_eq!(count(&ui), before + 25);
    let draft = std::path::Path::new(&ui.root).join(".rubricate/drafts/support-answer.yaml");
    let on_disk =
        rubricate::formats::load_rubric(&draft.display().to_string()).expect("the draft loads");
    assert_eq!(on_disk.rubric.criteria.len(), before + 25);
}

#[test]
fn an_unrelated_error_does_not_let_quit_lose_a_pending_label() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('L')]);
    let effects = ui.app.update(key('m'));
    assert_eq!(ui.app.label.pending.len(), 1);
    // Something else fails meanwhile (an estimate, a run that did not start).
    ui.app
        .update(Msg::Error("the run did not start: no judge".into()));
    ui.app.update(key('q'));
    assert!(!ui.app.quit, "the label is still on its way to the disk");
    settle(&mut ui.app, &ui.runtime, effects);
    assert_eq!(ui.app.label.pending.len(), 0);
    assert!(ui.app.quit, "quit once the label was on disk");
}

#[test]
fn a_write_that_fails_while_quitting_keeps_the_ui_open_and_says_why() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('L')]);
    ui.app.update(key('m'));
    ui.app.update(key('q'));
    assert!(ui.app.quitting && !ui.app.quit);
    ui.app.update(Msg::LabelFailed(
        "the label was NOT saved: disk full".into(),
    ));
    assert!(!ui.app.quit && !ui.app.quitting);
    assert!(ui.app.message.as_deref().unwrap().contains("disk full"));
}

#[test]
fn criteria_are_edited_in_place_and_every_edit_lands_in_the_draft() {
    let mut ui = Ui::new(120, 40);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let _inside = rt.enter();
    ui.press([
        key('B'),
        code(KeyCode::Down),
        code(KeyCode::Enter),
        code(KeyCode::Down),
        code(KeyCode::Down),
    ]);
    assert_eq!(ui.app.rubric_criterion(), Some(1), "steps");
    // The requirement, in a text area.
    ui.press([key('r')]);
    for c in " clearly".chars() {
        ui.app.update(key(c));
    }
    insta::assert_snapshot!("rubrics_editing_120x40", ui.screen());
    let effects = ui.app.update(code(KeyCode::Enter));
    assert!(
        matches!(&effects[0], Effect::WriteDraft { .. }),
        "{effects:?}"
    );
    settle(&mut ui.app, &ui.runtime, effects);
    let rubric = |ui: &Ui| {
        ui.app
            .rubrics
            .view
            .as_ref()
            .unwrap()
            .rubric
            .clone()
            .unwrap()
    };
    assert!(
        rubric(&ui).criteria[1]
            .requirement
            .ends_with("finally, or a numbered list) clearly")
    );
    let draft = std::path::Path::new(&ui.root).join(".rubricate/drafts/support-answer.yaml");
    assert!(
        std::fs::read_to_string(&draft)
            .unwrap()
            .contains("numbered list) clearly"),
        "on disk at once"
    );
    // A weight that is not a number is refused, and the edit stays open.
    ui.press([key('w')]);
    for c in "x".chars() {
        ui.app.update(key(c));
    }
    assert!(ui.app.update(code(KeyCode::Enter)).is_empty());
    assert!(
        ui.app
            .message
            .as_deref()
            .unwrap()
            .contains("is not a number")
    );
    ui.press([code(KeyCode::Esc)]);
    // Add after, duplicate, move up, delete, gate.
    ui.press([key('a')]);
    let ids = |ui: &Ui| {
        rubric(ui)
            .criteria
            .iter()
            .map(|c| c.id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(&ui),
        ["reset-link", "steps", "new-1", "concise", "asks-password"]
    );
    assert_eq!(
        ui.app.rubric_criterion(),
        Some(2),
        "the new criterion is selected"
    );
    ui.press([key('y')]);
    assert_eq!(
        ids(&ui),
        [
            "reset-link",
            "steps",
            "new-1",
            "new-1-1",
            "concise",
            "asks-password"
        ]
    );
    ui.press([key('K'), key('K')]);
    assert_eq!(
        ids(&ui),
        [
            "reset-link",
            "new-1-1",
            "steps",
            "new-1",
            "concise",
            "asks-password"
        ]
    );
    // Delete asks first; any other key keeps the criterion.
    ui.press([key('X')]);
    assert!(
        ui.app
            .message
            .as_deref()
            .unwrap()
            .starts_with("delete criterion 'new-1-1'?"),
        "{:?}",
        ui.app.message
    );
    ui.press([key('n')]);
    assert_eq!(ids(&ui).len(), 6, "kept");
    ui.press([key('X'), key('y')]);
    assert_eq!(
        ids(&ui),
        ["reset-link", "steps", "new-1", "concise", "asks-password"]
    );
    // z brings it back (selected where it was); deleting it again.
    ui.press([key('z')]);
    assert_eq!(ids(&ui).len(), 6);
    assert_eq!(ids(&ui)[1], "new-1-1");
    ui.press([key('X'), key('y')]);
    assert_eq!(
        ids(&ui),
        ["reset-link", "steps", "new-1", "concise", "asks-password"]
    );
    ui.press([key('g')]);
    assert!(rubric(&ui).criteria[1].required);
    assert!(ui.app.rubrics.view.as_ref().unwrap().problems.is_empty());
    // min_score, and a check's arguments as JSON (refused until they are an object).
    ui.press([key('m')]);
    for c in "0.5".chars() {
        ui.app.update(key(c));
    }
    ui.press([code(KeyCode::Enter)]);
    assert_eq!(rubric(&ui).criteria[1].min_score, Some(0.5));
    ui.press([key('A')]);
    for _ in 0..80 {
        ui.app.update(code(KeyCode::Backspace));
    }
    for c in "[1]".chars() {
        ui.app.update(key(c));
    }
    assert!(ui.app.update(code(KeyCode::Enter)).is_empty());
    assert!(ui.app.message.as_deref().unwrap().contains("a JSON object"));
    for _ in 0..3 {
        ui.app.update(code(KeyCode::Backspace));
    }
    for c in r#"{"pattern": "step \\d"}"#.chars() {
        ui.app.update(key(c));
    }
    ui.press([code(KeyCode::Enter)]);
    let c = &rubric(&ui).criteria[1];
    let rubricate::model::Method::Check(ch) = &c.method else {
        panic!()
    };
    assert_eq!(ch.args["pattern"], "step \\d");
    // A judged criterion's template takes several lines; ctrl-s keeps it.
    ui.press([code(KeyCode::Down)]);
    assert_eq!(ui.app.rubric_criterion(), Some(2), "new-1, judged");
    ui.press([key('T')]);
    for c in "Rate {{ submission }}".chars() {
        ui.app.update(key(c));
    }
    ui.press([code(KeyCode::Enter)]);
    for c in "Answer MET or UNMET.".chars() {
        ui.app.update(key(c));
    }
    ui.press([Msg::Key(KeyEvent::new(
        KeyCode::Char('s'),
        KeyModifiers::CONTROL,
    ))]);
    let rubricate::model::Method::Judge(j) = &rubric(&ui).criteria[2].method else {
        panic!()
    };
    assert_eq!(
        j.template.as_deref(),
        Some("Rate {{ submission }}\nAnswer MET or UNMET.")
    );
}

#[test]
fn the_grade_set_up_takes_a_judge_model_and_a_strategy() {
    use rubricate::engine::judge::Strategy;
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('G'), key('t'), key('t')]);
    assert_eq!(ui.app.grade.strategy, Some(Strategy::OneShot));
    ui.press([key('m')]);
    for c in "openai/gpt-4o-mini".chars() {
        ui.app.update(key(c));
    }
    ui.press([code(KeyCode::Enter)]);
    assert_eq!(ui.app.grade.judge.as_deref(), Some("openai/gpt-4o-mini"));
    assert!(ui.screen().contains("strategy one_shot"));
    let effects = ui.app.update(key('e'));
    assert!(
        matches!(&effects[0], Effect::Estimate { judge: Some(j), strategy: Some(Strategy::OneShot), .. } if j == "openai/gpt-4o-mini"),
        "{effects:?}"
    );
}

#[test]
fn an_untrusted_config_is_said_at_start_with_what_to_run() {
    let (dir, _) = demo();
    std::fs::write(
        dir.path().join("rubricate.yaml"),
        "annotator: alice\nallow_commands: true\n",
    )
    .unwrap();
    let ws = Workspace::at(dir.path()).unwrap();
    assert_eq!(ws.config.untrusted, ["allow_commands (running programs)"]);
    assert!(!ws.config.allow_commands);
    let app = build(&ws).unwrap();
    let said = app.message.clone().unwrap();
    assert!(
        said.starts_with(&format!("run `rubricate trust {}`", dir.path().display())),
        "{said}"
    );
}

/// The tag of the item list's pass among effects.
fn filter_pass(effects: &[Effect]) -> Option<u64> {
    effects.iter().find_map(|e| match e {
        Effect::FilterRunItems { tag, .. } => Some(*tag),
        _ => None,
    })
}

#[test]
fn the_item_lists_matches_come_from_a_pass_and_a_stale_answer_changes_nothing() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('R'), key('i')]);
    // Unfiltered, the list is the run's items in order: a count, no pass, no positions.
    let view = ui.app.results.items.clone().unwrap();
    assert_eq!((view.rows.clone(), view.filtering), (None, None));
    let run = ui.app.browse.as_ref().unwrap().run.clone().unwrap();
    assert_eq!(view.row_count(&run), 50);
    // v asks the runtime for the matches; until they come, nothing is listed, and says so.
    let effects = ui.app.update(key('v'));
    let first = filter_pass(&effects).expect("a pass for the verdict filter");
    assert!(
        ui.screen()
            .contains("reading the run for the items the filter keeps"),
        "{}",
        ui.screen()
    );
    // The first pass answers only after v asked for the next verdict: its answer is dropped.
    let late: Vec<Msg> = effects
        .into_iter()
        .filter_map(|e| ui.runtime.handle(e))
        .collect();
    let effects = ui.app.update(key('v'));
    let second = filter_pass(&effects).expect("a pass for the next verdict");
    assert_ne!(first, second);
    ui.press(late);
    let view = ui.app.results.items.clone().unwrap();
    assert_eq!(view.filtering, Some(second));
    assert_eq!(view.rows.as_deref(), Some(&[][..]));
    // An answer with a tag no list asked for (another run's pass) is dropped too.
    ui.press([Msg::RunItemsFiltered {
        tag: second + 1000,
        positions: Ok(vec![0, 1, 2]),
    }]);
    assert_eq!(
        ui.app.results.items.as_ref().unwrap().filtering,
        Some(second)
    );
    // The current pass's answer is the list: the items given that verdict, in order.
    settle(&mut ui.app, &ui.runtime, effects);
    let view = ui.app.results.items.clone().unwrap();
    assert_eq!(view.filtering, None);
    let want = rubricate::tui::run_scan::filter_items(
        &ui.app_workspace_runs(),
        &run.manifest.id,
        &rubricate::tui::run_scan::ItemsQuery {
            criterion: Some("reset-link".into()),
            verdict: view.verdict.clone(),
            failed: false,
        },
    )
    .unwrap();
    assert!(!want.is_empty());
    assert_eq!(view.rows, Some(want));
    // The rows on screen were read from the journal by position: no `…` left.
    ui.press([code(KeyCode::End)]);
    let screen = ui.screen();
    assert!(!screen.contains("reading its reasons"), "{screen}");
}

#[test]
fn a_label_brings_the_runs_join_up_to_date_without_reading_the_run_again() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('L')]);
    let run = ui.app.browse.as_ref().unwrap().run.clone().unwrap();
    let joined = |ui: &Ui| {
        ui.app
            .results
            .stats
            .join(&run.manifest.id)
            .cloned()
            .unwrap()
    };
    assert_eq!(joined(&ui).labels_gen, ui.app.labels_gen);
    // q01's reset link is labelled MET by alice and the judge; UNMET makes them differ.
    ui.press([key('p'), key('p'), key('p'), key('p')]);
    assert_eq!(ui.app.label.criterion, 0);
    let effects = ui.app.update(key('u'));
    let saved: Vec<Msg> = effects
        .into_iter()
        .filter_map(|e| ui.runtime.handle(e))
        .collect();
    let mut after = Vec::new();
    for m in saved {
        after.extend(ui.app.update(m));
    }
    assert!(
        !after.iter().any(|e| matches!(e, Effect::JoinLabels { .. })),
        "{after:?}"
    );
    settle(&mut ui.app, &ui.runtime, after);
    let join = joined(&ui);
    assert_eq!(join.labels_gen, ui.app.labels_gen);
    // The same as a pass over the run with the labels as they are now.
    let fresh = rubricate::tui::run_scan::join_labels(
        &ui.app_workspace_runs(),
        &run.manifest.id,
        &ui.app.labels,
        ui.app.labels_gen,
    )
    .unwrap();
    assert_eq!(join, fresh);
    assert!(
        join.disagree.contains(&0),
        "q01 now differs: {:?}",
        join.disagree
    );
}
