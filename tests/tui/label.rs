//! The Label pane: one key per verdict, the queue, notes, undo, blind mode, annotators and
//! adjudication, and quit waiting for every label to reach the disk.

use rubricate::tui::msg::{Failure, FailureKind};

use super::*;

#[test]
fn labelling_saves_each_label_and_quit_waits_for_the_disk() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('L')]);
    assert_eq!(ui.app.pane(), PaneId::Label);
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
    assert_eq!(
        ui.app
            .shared()
            .browse
            .as_ref()
            .unwrap()
            .current()
            .unwrap()
            .id,
        "q02"
    );
    // Not yet on disk: quitting waits for it (esc stays).
    ui.app.update(key('q'));
    assert!(!ui.app.quit());
    assert!(
        ui.app
            .shared()
            .message
            .as_deref()
            .unwrap()
            .contains("quitting when they are saved")
    );
    ui.app.update(code(KeyCode::Esc));
    settle(&mut ui.app, &ui.runtime, effects);
    assert!(!ui.app.quit(), "esc kept the UI open");
    assert_eq!(ui.app.panes().label.pending.len(), 0);
    assert_eq!(ui.app.panes().label.sitting, 1);
    // A key that does not answer this criterion says so and saves nothing.
    assert!(ui.app.update(key('3')).is_empty());
    // A label that replaces another one (the focus put on it by hand) says so.
    ui.press([key('p'), key('u')]);
    let said = ui.app.shared().message.clone().unwrap_or_default();
    assert!(
        said.contains("q01 'reset-link' was MET, now UNMET (z undoes)"),
        "{said}"
    );
    // Undo is a new event; the label returns to alice's earlier one.
    ui.press([key('z')]);
    assert_eq!(
        ui.app
            .shared()
            .labels
            .get(&("q01".into(), "reset-link".into()))
            .unwrap(),
        "MET"
    );
    ui.press([key('q')]);
    assert!(ui.app.quit());
}

#[test]
fn the_last_criterion_moves_to_the_next_item_in_the_queue() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('L'), key('o')]);
    assert!(
        ui.app
            .shared()
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
            .shared()
            .message
            .as_deref()
            .unwrap()
            .contains("where it matters"),
        "{:?}",
        ui.app.shared().message
    );
    // The plan is `rubricate labels next`'s, worked out in the background.
    let plan = ui
        .app
        .shared()
        .label_plan()
        .expect("a plan for the open dataset")
        .clone();
    assert_eq!(plan.annotator, "alice");
    assert!(plan.runs >= 1);
    let first = plan.next.first().expect("unlabelled items to plan").clone();
    let criterion = ui.app.shared().label_criteria()[0].id.clone();
    let before = ui.app.shared().stop_rule(&criterion).unwrap().labelled;
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
    let n = ui.app.shared().label_criteria().len();
    ui.press((0..n).map(|_| key('m')));
    // The label landed, the plan was worked out again with it and the queue went on.
    let after = ui.app.shared().stop_rule(&criterion).unwrap().labelled;
    assert_eq!(after, before + 1, "the stop rule counts the new label");
    assert_ne!(current(&ui), first.item);
    let planned: Vec<&str> = plan.next.iter().map(|n| n.item.as_str()).collect();
    assert!(planned.contains(&current(&ui).as_str()), "{}", current(&ui));
    assert!(
        !ui.app
            .shared()
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
    assert!(ui.app.shared().label_plan().is_some());
    let n = ui.app.shared().label_criteria().len();
    let current = |ui: &Ui| {
        ui.app
            .shared()
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
    assert_eq!(ui.app.panes().label.pending.len(), 4 * n);
    settle(&mut ui.app, &ui.runtime, effects);
    assert!(ui.app.panes().label.pending.is_empty());
}

#[test]
fn moving_to_an_item_focuses_its_first_unanswered_criterion() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter)]);
    // q33 is the first item alice has not labelled.
    ui.press((0..32).map(|_| code(KeyCode::Down)));
    ui.press([key('L')]);
    assert_eq!(current(&ui), "q33");
    assert_eq!(ui.app.panes().label.criterion, 0);
    // Answer the first criterion, then move on before finishing the item.
    ui.press([key('m')]);
    assert_eq!(ui.app.panes().label.criterion, 1);
    ui.press([key('n')]);
    assert_eq!(current(&ui), "q34");
    assert_eq!(
        ui.app.panes().label.criterion,
        0,
        "a new item starts at its first unanswered criterion, not where the last one was left"
    );
    // Back on q33, the first criterion without a label is the second.
    ui.press([key('p')]);
    assert_eq!(current(&ui), "q33");
    assert_eq!(ui.app.panes().label.criterion, 1);
    // A fully labelled item starts at the top.
    ui.press([key('p')]);
    assert_eq!(current(&ui), "q32");
    assert_eq!(ui.app.panes().label.criterion, 0);
}

#[test]
fn a_label_moves_on_to_the_next_unanswered_criterion_and_never_onto_an_answered_one() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter)]);
    // q33 is the first item alice has not labelled; give it only its second criterion.
    ui.press((0..32).map(|_| code(KeyCode::Down)));
    ui.press([key('L'), key('j'), key('u')]);
    assert_eq!(current(&ui), "q33");
    assert_eq!(ui.app.panes().label.criterion, 2);
    // Away and back: the first criterion without a label is focused.
    ui.press([key('n'), key('p')]);
    assert_eq!(current(&ui), "q33");
    assert_eq!(ui.app.panes().label.criterion, 0);
    // A label skips the answered second criterion (it used to land on it).
    ui.press([key('m')]);
    assert_eq!(
        ui.app.panes().label.criterion,
        2,
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
    let n = ui.app.shared().label_criteria().len();
    ui.press((1..n).map(|_| key('j')));
    ui.press([key('m')]);
    assert_eq!(current(&ui), "q35");
    assert_eq!(
        ui.app.panes().label.criterion,
        0,
        "round to the first one left"
    );
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

#[test]
fn an_autorubric_dataset_is_labelled_and_shown_with_its_own_rubric_and_ground_truth() {
    let mut ui = with_autorubric_essays();
    // Label: the file's rubric, not the workspace's first (support-answer), and what the
    // file's ground truth says beside each criterion.
    ui.press([key('L')]);
    let ids: Vec<String> = ui
        .app
        .shared()
        .label_criteria()
        .into_iter()
        .map(|c| c.id)
        .collect();
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
    let ids = |ui: &Ui| -> Vec<String> {
        ui.app
            .shared()
            .label_criteria()
            .into_iter()
            .map(|c| c.id)
            .collect()
    };
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
            .shared()
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("wrapped to the top"),
        "{:?}",
        ui.app.shared().message
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
    assert_eq!(ui.app.shared().annotator, "alice");
    assert_eq!(ui.app.shared().labels.len(), 128);
    ui.press([key('a')]);
    assert_eq!(ui.app.shared().annotator, "bob");
    assert_eq!(ui.app.shared().labels.len(), 8, "bob's labels are shown");
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
    assert_eq!(ui.app.shared().annotator, "alice", "round the journals");
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
    assert_eq!(ui.app.shared().annotator, "adjudicated");
    assert!(ui.app.shared().adjudicating());
    assert_eq!(
        ui.app.panes().label.criterion,
        1,
        "the item's first difference is focused"
    );
    assert_eq!(
        ui.app.ui_state().annotator.as_deref(),
        Some("alice"),
        "quitting now comes back as alice"
    );
    assert_eq!(
        ui.app.shared().peers.keys().collect::<Vec<_>>(),
        ["alice", "bob"],
        "every annotator's labels are read"
    );
    let screen = ui.screen();
    assert!(screen.contains("adjudicating"), "{screen}");
    assert!(screen.contains("≠ DIFFER"), "{screen}");
    // Disagreements first, adjudicating: the items where the annotators differ.
    ui.press([key('o'), key('o'), key('n')]);
    assert_eq!(
        ui.app
            .shared()
            .browse
            .as_ref()
            .unwrap()
            .current()
            .unwrap()
            .id,
        "q02"
    );
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
    assert_eq!(ui.app.shared().annotator, "alice");
    let ws = rubricate::store::Workspace::at(std::path::Path::new(&ui.root)).unwrap();
    assert_ne!(
        rubricate::tui::ui_state::load(&ws).annotator.as_deref(),
        Some("adjudicated")
    );
    assert!(ui.app.shared().peers.is_empty());
}

#[test]
fn a_labels_note_is_shown_under_it() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter)]);
    ui.press((0..32).map(|_| code(KeyCode::Down)));
    ui.press([key('L'), key('m'), key('k')]);
    assert_eq!(ui.app.panes().label.criterion, 0);
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
            .shared()
            .notes
            .get(&("q33".to_owned(), "reset-link".to_owned()))
            .map(String::as_str),
        Some("the link is only hinted at")
    );
}

#[test]
fn with_no_annotator_configured_the_label_pane_asks_once() {
    let mut ui = Ui::new(120, 40);
    ui.app.shared_mut().annotator_confirmed = false;
    ui.app.shared_mut().annotator = "login".into();
    ui.press([code(KeyCode::Enter), key('L')]);
    assert!(matches!(ui.app.modal(), Some(Modal::Annotator(name)) if name.text() == "login"));
    assert!(
        ui.screen()
            .contains("who is labelling? [login ] (enter keeps it")
    );
    // Typed keys go to the prompt, not to the labels; the first replaces the name offered
    // (typing "bob" gave "loginbob").
    for c in "bo".chars() {
        ui.app.update(key(c));
    }
    assert!(matches!(ui.app.modal(), Some(Modal::Annotator(name)) if name.text() == "bo"));
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
    assert!(ui.app.modal().is_none() && ui.app.shared().annotator_confirmed);
    assert_eq!(
        ui.app.shared().labels.len(),
        128,
        "alice's labels are shown"
    );
}

#[test]
fn an_unrelated_error_does_not_let_quit_lose_a_pending_label() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('L')]);
    let effects = ui.app.update(key('m'));
    assert_eq!(ui.app.panes().label.pending.len(), 1);
    // Something else fails meanwhile (an estimate, a run that did not start).
    ui.app.update(Msg::Error(Failure::new(
        FailureKind::Other,
        "the run did not start: no judge",
    )));
    ui.app.update(key('q'));
    assert!(!ui.app.quit(), "the label is still on its way to the disk");
    settle(&mut ui.app, &ui.runtime, effects);
    assert_eq!(ui.app.panes().label.pending.len(), 0);
    assert!(ui.app.quit(), "quit once the label was on disk");
}

#[test]
fn a_write_that_fails_while_quitting_keeps_the_ui_open_and_says_why() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('L')]);
    ui.app.update(key('m'));
    ui.app.update(key('q'));
    assert!(ui.app.quitting() && !ui.app.quit());
    ui.app.update(Msg::LabelFailed(Failure::new(
        FailureKind::Unwritten,
        "the label was NOT saved: disk full",
    )));
    assert!(!ui.app.quit() && !ui.app.quitting());
    assert!(
        ui.app
            .shared()
            .message
            .as_deref()
            .unwrap()
            .contains("disk full")
    );
}

#[test]
fn a_label_brings_the_runs_join_up_to_date_without_reading_the_run_again() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('L')]);
    let run = ui
        .app
        .shared()
        .browse
        .as_ref()
        .unwrap()
        .run
        .clone()
        .unwrap();
    let joined = |ui: &Ui| {
        ui.app
            .shared()
            .stats
            .join(&run.manifest.id)
            .cloned()
            .unwrap()
    };
    assert_eq!(joined(&ui).labels_gen, ui.app.shared().labels_gen);
    // q01's reset link is labelled MET by alice and the judge; UNMET makes them differ.
    ui.press([key('p'), key('p'), key('p'), key('p')]);
    assert_eq!(ui.app.panes().label.criterion, 0);
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
    assert_eq!(join.labels_gen, ui.app.shared().labels_gen);
    // The same as a pass over the run with the labels as they are now.
    let fresh = rubricate::tui::run_scan::join_labels(
        &ui.app_workspace_runs(),
        &run.manifest.id,
        &ui.app.shared().labels,
        ui.app.shared().labels_gen,
    )
    .unwrap();
    assert_eq!(join, fresh);
    assert!(
        join.disagree.contains(&0),
        "q01 now differs: {:?}",
        join.disagree
    );
}

#[test]
fn only_a_write_that_failed_stops_a_quit_and_a_full_disk_reads_unlike_a_bad_input() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('L')]);
    let effects = ui.app.update(key('m'));
    ui.app.update(key('q'));
    assert!(ui.app.quitting());
    // A run that could not start, or a dataset the runtime refused: the quit goes on.
    ui.app.update(Msg::Error(Failure::new(
        FailureKind::Refused,
        "not opened: datasets/x.jsonl:3:1: not JSON",
    )));
    assert!(
        ui.app.quitting(),
        "an unrelated failure does not stop a quit"
    );
    let said = ui.screen();
    assert!(said.contains("not opened: datasets/x.jsonl:3:1"), "{said}");
    assert!(
        !said.contains('⚠'),
        "a file to fix is said as it is:\n{said}"
    );
    // The disk refusing is marked, so it is not read as a tip.
    ui.app.update(Msg::Error(Failure::new(
        FailureKind::Disk,
        "could not read the run's items: No space left on device",
    )));
    assert!(ui.app.quitting());
    assert!(ui.screen().contains("⚠ could not read the run's items"));
    settle(&mut ui.app, &ui.runtime, effects);
    assert!(ui.app.quit(), "quit once the label was on disk");
}

/// The demo run copied as a second run named "strict" that says the opposite of the demo
/// run on `reset-link` for the items at positions 40–49 (q41–q50, which alice has not
/// labelled): the only items the two runs tell apart.
fn with_a_second_run(root: &std::path::Path) {
    let runs = root.join("runs");
    let demo = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .next()
        .unwrap();
    let old = demo.file_name().unwrap().to_str().unwrap().to_owned();
    let new = "20261122-150000-0001";
    let strict = runs.join(new);
    std::fs::create_dir(&strict).unwrap();
    let manifest = std::fs::read_to_string(demo.join("manifest.json"))
        .unwrap()
        .replace(&old, new)
        .replacen("\"name\": \"demo\"", "\"name\": \"strict\"", 1);
    std::fs::write(strict.join("manifest.json"), manifest).unwrap();
    let journal: Vec<String> = std::fs::read_to_string(demo.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|line| {
            let line = line.replace(&old, new);
            let position = (40..50).find(|p| line.starts_with(&format!("{{\"item\":{p},")));
            if position.is_none() || !line.contains("\"criterion_id\":\"reset-link\"") {
                return line;
            }
            if line.contains("\"verdict\":\"MET\"") {
                line.replace(
                    "\"verdict\":\"MET\",\"value\":1.0",
                    "\"verdict\":\"UNMET\",\"value\":0.0",
                )
            } else {
                line.replace(
                    "\"verdict\":\"UNMET\",\"value\":0.0",
                    "\"verdict\":\"MET\",\"value\":1.0",
                )
            }
        })
        .collect();
    std::fs::write(strict.join("results.jsonl"), journal.join("\n") + "\n").unwrap();
}

#[test]
fn the_top_two_queue_labels_where_the_two_best_runs_differ_first() {
    let mut ui = Ui::with(120, 40, with_a_second_run);
    ui.press([code(KeyCode::Enter), key('L')]);
    ui.press([key('o'), key('o'), key('o'), key('o')]);
    let said = ui.app.shared().message.clone().unwrap_or_default();
    assert!(said.contains("where the top two runs differ"), "{said}");
    let between = ui.app.shared().plan_between().cloned();
    let mut names = between.expect("planned between the top two").to_vec();
    names.sort();
    assert_eq!(names, ["demo", "strict"]);
    // Ten items in a row come from the ten the runs tell apart, one label each (alice has
    // none of theirs); then the queue goes on past them.
    let differ: Vec<String> = (41..=50).map(|n| format!("q{n}")).collect();
    let n = ui.app.shared().label_criteria().len();
    let mut seen = Vec::new();
    ui.press([key('n')]);
    for _ in 0..differ.len() {
        let item = current(&ui);
        assert!(
            differ.contains(&item),
            "{item} is not one the runs tell apart"
        );
        assert!(!seen.contains(&item), "{item} came round twice");
        seen.push(item);
        let screen = ui.screen();
        assert!(screen.contains("queue: where "), "{screen}");
        assert!(screen.contains(" differ"), "{screen}");
        ui.press((0..n).map(|_| key('m')));
    }
    assert!(!differ.contains(&current(&ui)), "{}", current(&ui));
}

#[test]
fn the_top_two_queue_says_why_with_one_run() {
    let mut ui = Ui::new(80, 24);
    ui.press([code(KeyCode::Enter), key('L')]);
    ui.press([key('o'), key('o'), key('o'), key('o'), key('n')]);
    let said = ui.app.shared().message.clone().unwrap_or_default();
    assert!(said.contains("only one run over this dataset"), "{said}");
    // It goes on with the unlabelled items meanwhile.
    assert_eq!(current(&ui), "q33");
}

/// A conversation reads as a transcript: roles set apart, each assistant turn numbered, tool
/// calls folded to a line until `x`, and a long one scrolled by page.
#[test]
fn a_conversation_is_labelled_from_its_transcript_with_tool_calls_folded_and_scrolled() {
    let mut ui = Ui::with(80, 24, |root| {
        let mut lines = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/conversations.jsonl"
        ))
        .unwrap();
        // A long chat: forty short turns.
        let mut long = vec![serde_json::json!({"role": "user", "content": "Count with me."})];
        for n in 1..=40 {
            long.push(serde_json::json!({"role": "assistant", "content": format!("number {n}")}));
        }
        lines.push_str(&serde_json::json!({"id": "long", "messages": long}).to_string());
        lines.push('\n');
        std::fs::write(root.join("chats.jsonl"), lines).unwrap();
    });
    ui.press([key('o')]);
    ui.press("chats.jsonl".chars().map(key));
    ui.press([code(KeyCode::Enter), key('L')]);
    let screen = ui.screen();
    assert!(screen.contains("weather (1 of 4) · 3 turns"), "{screen}");
    assert!(screen.contains("▌ user"), "{screen}");
    assert!(screen.contains("▌ assistant · turn 1 of 3"), "{screen}");
    assert!(
        screen.contains("→ get_weather({\"city\": \"Paris\""),
        "{screen}"
    );
    assert!(
        screen.contains("← {\"temp\": 18, \"sky\": \"sunny\"}"),
        "{screen}"
    );
    ui.press([key('x')]);
    let screen = ui.screen();
    assert!(
        screen.contains("→ get_weather\n") || screen.contains("→ get_weather "),
        "{screen}"
    );
    assert!(screen.contains("\"city\": \"Paris\","), "{screen}");
    // The long chat starts at the top; a page down shows later turns and says where it is.
    ui.press([key('p')]);
    while current(&ui) != "long" {
        ui.press([key('n')]);
    }
    let top = ui.screen();
    assert!(
        top.contains("number 1\n") || top.contains("number 1 "),
        "{top}"
    );
    assert!(top.contains("pgdn more"), "{top}");
    ui.press([code(KeyCode::PageDown)]);
    assert!(!ui.screen().contains("Count with me."), "{}", ui.screen());
    // A page a press (122 rows at 80x24, 18 a page): at the end within seven, and no
    // further however often it is pressed.
    for _ in 0..10 {
        ui.press([code(KeyCode::PageDown)]);
    }
    let later = ui.screen();
    assert!(later.contains("number 40"), "{later}");
    assert!(later.contains("rows · end"), "{later}");
    ui.press([code(KeyCode::PageUp)]);
    assert!(ui.screen().contains("pgdn more"), "{}", ui.screen());
    // Another item starts at the top again.
    ui.press([key('p')]);
    assert!(ui.screen().contains("▌ user"), "{}", ui.screen());
}

/// `z` after the label that moved the queue on goes back to that item and criterion: the
/// next key answers it again (it was left unanswered on an item behind the labeller).
#[test]
fn undo_goes_back_to_the_label_it_takes_back() {
    let mut ui = Ui::new(80, 24);
    ui.press([code(KeyCode::Enter), key('L'), key('o')]);
    // Unlabelled first: q33's four criteria take the queue on to q34.
    ui.press([key('m')]);
    assert_eq!(current(&ui), "q33");
    ui.press([key('m'), key('m'), key('m'), key('u')]);
    assert_eq!(current(&ui), "q34");
    ui.press([key('z')]);
    assert_eq!(current(&ui), "q33", "back to the item undone");
    let said = ui.app.shared().message.clone().unwrap_or_default();
    assert!(said.contains("undone: q33"), "{said}");
    assert!(said.contains("is unlabelled again"), "{said}");
    let criteria = ui.app.shared().label_criteria();
    let last = criteria.last().unwrap().id.clone();
    assert_eq!(criteria[ui.app.panes().label.criterion].id, last);
    // The next key answers the criterion undone, and the queue goes on again.
    ui.press([key('m')]);
    assert_eq!(
        ui.app.shared().labels.get(&("q33".into(), last)).unwrap(),
        "MET"
    );
    assert_eq!(current(&ui), "q34");
}

/// The item shows before its labels are read (the runtime answers on two threads; the UI
/// coming back to the item it was left on is the common case): once they arrive, the focus
/// moves off an answered criterion, so the next key cannot replace a label.
#[test]
fn labels_read_after_the_item_move_the_focus_to_the_first_unanswered() {
    let mut ui = Ui::with(120, 40, |root| {
        // alice has answered only q01's first criterion.
        let journal = root.join("labels/support-answers/alice.jsonl");
        let first = std::fs::read_to_string(&journal)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_owned();
        assert!(first.contains("\"item\": \"q01\""), "{first}");
        std::fs::write(&journal, first + "\n").unwrap();
    });
    let effects = ui.app.update(code(KeyCode::Enter));
    let (open, rest): (Vec<_>, Vec<_>) = effects
        .into_iter()
        .partition(|e| matches!(e, Effect::Open { .. }));
    assert!(!open.is_empty(), "opening the dataset reads its labels");
    settle(&mut ui.app, &ui.runtime, rest);
    ui.press([key('L')]);
    assert_eq!(current(&ui), "q01");
    // The labels (and the rubric) arrive last.
    settle(&mut ui.app, &ui.runtime, open);
    let criteria = ui.app.shared().label_criteria();
    let focused = &criteria[ui.app.panes().label.criterion].id;
    assert_ne!(
        focused, &criteria[0].id,
        "the focus stayed on an answered criterion"
    );
    assert_eq!(focused, &criteria[1].id);
}
