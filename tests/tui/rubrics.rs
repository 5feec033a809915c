//! The Rubrics pane: the tree, lint, edits in place, search, drafts saved as versions.

use rubricate::tui::msg::{Failure, FailureKind};

use super::*;

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
    assert_eq!(ui.app.panes().rubrics.new_from, Some(0));
    assert!(ui.screen().contains("a copy of the built-in 'code'"));
    ui.press([code(KeyCode::Enter)]);
    let path = std::path::Path::new(&ui.root).join("rubrics/new-rubric.yaml");
    assert!(path.is_file());
    let view = ui.app.panes().rubrics.view.as_ref().expect("opened");
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
    assert_eq!(ui.app.shared().rubric_files.len(), 4);
    // From a built-in: a copy named after it, its id the file's, at 0.1.0, valid.
    ui.press([
        code(KeyCode::Esc),
        key('a'),
        code(KeyCode::Down),
        code(KeyCode::Down),
    ]);
    ui.press([code(KeyCode::Enter)]);
    let code_copy = std::path::Path::new(&ui.root).join("rubrics/code.yaml");
    let view = ui.app.panes().rubrics.view.as_ref().expect("opened");
    assert_eq!(view.path, code_copy);
    assert!(view.problems.is_empty(), "{:?}", view.problems);
    let r = view.rubric.as_ref().unwrap();
    assert_eq!((r.id.as_str(), r.version.as_str()), ("code", "0.1.0"));
    let builtin = rubricate::formats::load_rubric("code").unwrap();
    assert_eq!(r.criteria.len(), builtin.rubric.criteria.len());
    // esc at the question starts nothing.
    ui.press([code(KeyCode::Esc), key('a'), code(KeyCode::Esc)]);
    assert_eq!(ui.app.shared().rubric_files.len(), 5);
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
    ui.app.shared_mut().front = PaneId::Rubrics;
    let view = ui.app.panes().rubrics.view.as_ref().unwrap();
    assert!(view.rubric.is_none());
    let screen = ui.screen();
    assert!(
        screen.contains("empty.yaml:5:11: the rubric has no"),
        "{screen}"
    );
    assert!(screen.contains("a writes a first criterion"), "{screen}");
    ui.press([key('a')]);
    let view = ui.app.panes().rubrics.view.as_ref().unwrap();
    assert!(view.problems.is_empty(), "{:?}", view.problems);
    assert_eq!(view.rubric.as_ref().unwrap().criteria.len(), 1);
    assert!(!ui.app.panes().rubrics.saving());
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
    let files = ui.app.shared().rubric_files.clone();
    ui.press([key('/')]);
    for c in "SUPPORT".chars() {
        ui.press([key(c)]);
    }
    let at = ui.app.panes().rubrics.file;
    assert!(files[at].to_string_lossy().contains("support"), "{files:?}");
    ui.press([code(KeyCode::Enter), code(KeyCode::Enter)]);
    let r = ui
        .app
        .panes()
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
    assert_eq!(ui.app.panes().rubrics.rubric_criterion(), Some(i));
    assert!(ui.screen().contains(&format!("/{word}")));
    // esc goes back where the search began; nothing there matches: said so.
    ui.press([code(KeyCode::Esc)]);
    assert_eq!(ui.app.panes().rubrics.line, 0);
    ui.press([key('/'), key('#'), key('#')]);
    assert!(ui.screen().contains("no line has '##'"));
    ui.press([code(KeyCode::Esc)]);
    // ↓ goes to the next match, wrapping: "binary" is on every criterion's line.
    ui.press([key('/')]);
    for c in "binary".chars() {
        ui.press([key(c)]);
    }
    let first = ui.app.panes().rubrics.line;
    ui.press([code(KeyCode::Down)]);
    let second = ui.app.panes().rubrics.line;
    assert!(second > first);
    ui.press([code(KeyCode::Up)]);
    assert_eq!(ui.app.panes().rubrics.line, first);
    ui.press([code(KeyCode::Enter)]);
    assert!(ui.app.panes().rubrics.search.is_none());
    assert_eq!(ui.app.panes().rubrics.line, first, "enter keeps the line");
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
    let line = ui.app.panes().rubrics.line;
    assert!(line > 20, "{line}");
    let screen = ui.screen();
    assert!(screen.contains("├ safety — Safety"), "{screen}");
    // A click on the row just above the selection selects the line drawn there.
    let offset = ui.app.panes().rubrics.rubrics_offset(ui.app.shared());
    let row = u16::try_from(line - offset).unwrap() + 2 - 1;
    ui.press([Msg::Mouse(MouseEvent {
        kind: MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column: 5,
        row,
        modifiers: KeyModifiers::NONE,
    })]);
    assert_eq!(ui.app.panes().rubrics.line, line - 1);
}

fn tree_text(r: &rubricate::model::Rubric) -> String {
    rubricate::tui::panes::rubrics::tree(r)
        .into_iter()
        .map(|(_, l)| l)
        .collect::<Vec<_>>()
        .join("\n")
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
    assert_eq!(ui.app.pane(), PaneId::Rubrics);
    // The second file is the deterministic rubric.
    ui.press([code(KeyCode::Down)]);
    let effects = ui.app.update(code(KeyCode::Enter));
    assert!(
        matches!(&effects[0], Effect::LoadRubric { draft: None, .. }),
        "{effects:?}"
    );
    settle(&mut ui.app, &ui.runtime, effects);
    assert!(
        ui.app
            .panes()
            .rubrics
            .view
            .as_ref()
            .unwrap()
            .score
            .is_some(),
        "linted"
    );
    ui.press([code(KeyCode::Down)]);
    assert_eq!(ui.app.panes().rubrics.rubric_criterion(), Some(0));
    // Nothing to save without a draft.
    ui.press([key('s')]);
    assert!(
        ui.app
            .shared()
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
        ui.app
            .panes()
            .rubrics
            .view
            .as_ref()
            .unwrap()
            .draft
            .is_some(),
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
        ui.app.shared().message.as_deref(),
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
        ui.app
            .panes()
            .rubrics
            .view
            .as_ref()
            .unwrap()
            .draft
            .is_none(),
        "the draft is gone once saved"
    );
    // The original and the edit are two versions: the diff is the edit.
    ui.press([key('d')]);
    let diff = ui.app.panes().rubrics.diff.clone().expect("a diff");
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
    let diff = ui.app.panes().rubrics.diff.clone().expect("a diff");
    assert!(
        diff.contains("-version: 1.1.0") && diff.contains("+version: 1.2.0"),
        "{diff}"
    );
    assert!(diff.contains("+  name: Brief"), "{diff}");
    // Older than the oldest stays on the oldest; any other key closes.
    ui.press([key('['), key('['), key('[')]);
    assert_eq!(ui.app.panes().rubrics.diff_back, 2);
    ui.press([key('x')]);
    assert!(ui.app.panes().rubrics.diff.is_none());
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
    let dialog = ui.app.panes().rubrics.save.clone().expect("the save asks");
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
        ui.app.shared().message.as_deref(),
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
        ui.app.panes().rubrics.save.as_ref().unwrap().offers,
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
    let problems = ui
        .app
        .panes()
        .rubrics
        .view
        .as_ref()
        .unwrap()
        .problems
        .clone();
    assert!(
        problems
            .iter()
            .any(|p| p.contains("support-answer.yaml:16:") && p.contains("regex")),
        "{problems:?}"
    );
    // Save refuses at once, naming the problem and where it is.
    assert!(ui.app.update(key('s')).is_empty());
    assert!(
        ui.app.panes().rubrics.save.is_none(),
        "no note is asked for"
    );
    let message = ui.app.shared().message.clone().unwrap_or_default();
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
    let message = ui.app.shared().message.clone().unwrap_or_default();
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
            .panes()
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
    assert!(ui.app.panes().rubrics.saving());
    // Quitting waits for the draft writes.
    ui.app.update(key('q'));
    assert!(!ui.app.quit());
    // The writes land in order (the last one last); answers to older ones change nothing.
    settle(&mut ui.app, &ui.runtime, effects);
    assert!(!ui.app.panes().rubrics.saving());
    assert!(
        ui.app.quit(),
        "quit once the last draft write was confirmed"
    );
    assert_eq!(count(&ui), before + 25);
    let draft = std::path::Path::new(&ui.root).join(".rubricate/drafts/support-answer.yaml");
    let on_disk =
        rubricate::formats::load_rubric(&draft.display().to_string()).expect("the draft loads");
    assert_eq!(on_disk.rubric.criteria.len(), before + 25);
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
    assert_eq!(ui.app.panes().rubrics.rubric_criterion(), Some(1), "steps");
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
            .panes()
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
            .shared()
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
        ui.app.panes().rubrics.rubric_criterion(),
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
            .shared()
            .message
            .as_deref()
            .unwrap()
            .starts_with("delete criterion 'new-1-1'?"),
        "{:?}",
        ui.app.shared().message
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
    assert!(
        ui.app
            .panes()
            .rubrics
            .view
            .as_ref()
            .unwrap()
            .problems
            .is_empty()
    );
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
    assert!(
        ui.app
            .shared()
            .message
            .as_deref()
            .unwrap()
            .contains("a JSON object")
    );
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
    assert_eq!(
        ui.app.panes().rubrics.rubric_criterion(),
        Some(2),
        "new-1, judged"
    );
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
fn a_rubric_edit_that_did_not_reach_the_disk_stops_a_quit() {
    let mut ui = Ui::new(120, 40);
    ui.press([key('B'), code(KeyCode::Enter)]);
    let view = ui.app.panes().rubrics.view.clone().expect("a rubric open");
    // An edit on its way to the draft: quit waits for it.
    ui.app.panes_mut().rubrics.draft_seq += 1;
    let seq = ui.app.panes().rubrics.draft_seq;
    ui.app.update(key('q'));
    assert!(ui.app.quitting() && !ui.app.quit());
    ui.app.update(Msg::RubricLoaded {
        view,
        message: None,
        failed: Some(Failure::new(
            FailureKind::Unwritten,
            "the edit was NOT written to .rubricate/drafts/x.yaml: No space left on device",
        )),
        draft: Some(seq),
    });
    assert!(
        !ui.app.quit() && !ui.app.quitting(),
        "the edit was not saved"
    );
    assert!(ui.screen().contains("⚠ the edit was NOT written"));
}
