//! The Review pane: artifacts made, revised, submitted and decided.

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
    ui.app.shared_mut().artifact_types = vec![(
        "support_answer".into(),
        vec!["rubrics/support-answer.yaml".into()],
    )];
    // From the selected item of a dataset.
    ui.press([code(KeyCode::Enter), code(KeyCode::Down), key('A')]);
    let Some(Modal::NewArtifact(new)) = ui.app.modal().cloned() else {
        panic!("the line is open")
    };
    assert_eq!(new.from, "item q02 of support-answers");
    assert_eq!(new.name.text(), "q02");
    assert!(
        ui.screen()
            .contains("new artifact name: q02  · type support_answer (tab)")
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
    let item = ui
        .app
        .shared()
        .browse
        .as_ref()
        .unwrap()
        .current()
        .unwrap()
        .clone();
    assert_eq!(a.content, serde_json::json!(item.submission));
    assert!(
        ui.app
            .shared()
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
    assert!(matches!(ui.app.modal(), Some(Modal::NewArtifact(n)) if n.name.text() == "answer"));
    ui.press([code(KeyCode::Enter)]);
    assert_eq!(ui.app.panes().review.artifacts.len(), 2);
    assert!(
        ui.app
            .panes()
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
    assert_eq!(ui.app.panes().review.artifacts.len(), 2);
}

#[test]
fn without_artifact_types_the_ui_says_where_to_define_them() {
    let mut ui = Ui::new(120, 40);
    ui.app.shared_mut().artifact_types.clear();
    ui.press([code(KeyCode::Enter), key('A')]);
    assert!(ui.app.modal().is_none());
    assert!(
        ui.app
            .shared()
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
    assert!(
        ui.app
            .shared()
            .message
            .as_deref()
            .unwrap()
            .contains("revised")
    );
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
    let at = rubricate::tui::panes::review::ordered(&ui.app.panes().review.artifacts)
        .iter()
        .position(|x| x.id == id)
        .unwrap();
    ui.app.panes_mut().review.selected = at;
    assert!(ui.app.update(key('e')).is_empty());
    assert!(
        ui.app
            .shared()
            .message
            .as_deref()
            .unwrap()
            .contains("is approved")
    );
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
    let at = rubricate::tui::panes::review::ordered(&ui.app.panes().review.artifacts)
        .iter()
        .position(|x| x.id == id)
        .unwrap();
    ui.press((0..at).map(|_| code(KeyCode::Down)));
    assert_eq!(ui.app.panes().review.selected_artifact().unwrap().id, id);
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
    let end = ui.app.panes().review.detail_scroll;
    ui.press([code(KeyCode::PageDown), code(KeyCode::PageDown)]);
    assert_eq!(ui.app.panes().review.detail_scroll, end);
    let times = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d").unwrap();
    let ids = regex::Regex::new(r"art_[0-9a-f]{32}").unwrap();
    let screen = ids.replace_all(&ui.screen(), "art_[id]").into_owned();
    insta::assert_snapshot!(
        "review_scrolled_120x40",
        times.replace_all(&screen, "[time]")
    );
    ui.press([code(KeyCode::PageUp)]);
    assert!(ui.app.panes().review.detail_scroll < end);
    // Another artifact starts at its top.
    ui.press([code(KeyCode::Up)]);
    assert_eq!(ui.app.panes().review.detail_scroll, 0);
}

#[test]
fn submit_refuses_an_artifact_that_needs_revision_until_it_is_revised() {
    let mut ui = with_artifacts();
    ui.press([key('V')]);
    let store = Artifacts::new(std::path::Path::new(&ui.root));
    let id = ui.app.panes().review.artifacts[0].id.clone();
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
    let at = rubricate::tui::panes::review::ordered(&ui.app.panes().review.artifacts)
        .iter()
        .position(|a| a.id == id)
        .unwrap();
    ui.app.panes_mut().review.selected = at;
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
    assert_eq!(ui.app.pane(), PaneId::Review);
    assert!(ui.screen().contains("decide on an artifact in review"));
    ui.press([code(KeyCode::Esc)]);
    assert!(ui.app.modal().is_none());
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
            .panes()
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
    assert_eq!(ui.app.panes().review.artifacts.len(), 2);
    // A draft cannot be approved; it is submitted.
    assert!(ui.app.update(key('a')).is_empty());
    assert!(
        ui.app
            .shared()
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
        .panes()
        .review
        .artifacts
        .iter()
        .find(|a| a.id == submitted)
        .unwrap();
    assert_eq!(a.status, Status::Approved, "{:?}", ui.app.shared().message);
    assert_eq!(a.reviews.len(), 1);
    // The review shows each criterion's verdict and reason.
    let screen = ui.screen();
    assert!(
        screen.contains("  reset-link: MET") && screen.contains("  asks-password: UNMET"),
        "{screen}"
    );
    // The other one, by hand: needs a note, then the decision is recorded.
    ui.press([key('k')]);
    let other = ui
        .app
        .panes()
        .review
        .selected_artifact()
        .unwrap()
        .id
        .clone();
    assert_ne!(other, submitted);
    std::fs::write(
        std::path::Path::new(&ui.root).join(format!("artifacts/{other}.json")),
        {
            let mut a = ui.app.panes().review.selected_artifact().unwrap().clone();
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
        .panes()
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
