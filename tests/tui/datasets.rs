//! The Datasets pane: opening a dataset reads a window, searches and filters run in the
//! background, files outside the workspace open by path, the mouse scrolls.

use super::*;

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
    assert!(app.shared().browse.as_ref().unwrap().window.is_empty());
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
    assert_eq!(app.shared().browse.as_ref().unwrap().total, Some(50));
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
    assert_eq!(ui.app.shared().datasets.len(), 2);
    assert_eq!(ui.app.shared().datasets[1].name, "extra");
    assert!(ui.screen().contains("extra"));
    // And it opens like any other (the runtime knows it at the same position).
    ui.press([code(KeyCode::Down), code(KeyCode::Enter)]);
    assert_eq!(
        ui.app
            .shared()
            .browse
            .as_ref()
            .unwrap()
            .current()
            .unwrap()
            .id,
        "e1"
    );
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
    let before = ui.app.shared().datasets.len();
    ui.press([key('o')]);
    assert!(matches!(ui.app.modal(), Some(Modal::Path(_))));
    let typed = format!("{}/outs", elsewhere.path().display());
    for c in typed.chars() {
        ui.press([key(c)]);
    }
    ui.press([code(KeyCode::Tab)]);
    let Some(Modal::Path(p)) = ui.app.modal().cloned() else {
        panic!("the path prompt is open")
    };
    assert_eq!(
        p.text.text(),
        file.display().to_string(),
        "tab completed the name"
    );
    assert!(ui.screen().contains("open a dataset file:"));
    ui.press([code(KeyCode::Enter)]);
    assert!(ui.app.modal().is_none());
    assert_eq!(ui.app.shared().datasets.len(), before + 1);
    let b = ui.app.shared().browse.as_ref().expect("opened");
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
    assert_eq!(ui.app.shared().datasets.len(), before + 1);
    ui.press([
        code(KeyCode::Esc),
        key('o'),
        key('n'),
        key('o'),
        code(KeyCode::Enter),
    ]);
    let message = ui.app.shared().message.clone().unwrap();
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
    let rows = ui.app.shared().browse.as_ref().unwrap().row_count();
    assert!(rows > 0 && rows < 50, "{rows}");
    // Results → a confusion cell → the Datasets pane showing just those items.
    ui.press([
        key('R'),
        code(KeyCode::Down),
        code(KeyCode::Down),
        code(KeyCode::Down),
        key('2'),
    ]);
    assert_eq!(ui.app.pane(), PaneId::Datasets);
    let b = ui.app.shared().browse.as_ref().unwrap();
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
    let b = ui.app.shared().browse.as_ref().unwrap();
    assert_eq!(b.cursor, 30);
    assert!(b.offset <= 30 && 30 < b.offset + ui.app.list_height());
    assert!(ui.screen().contains("q31"));
    ui.press([Msg::Resize(60, 12)]);
    let text = ui.screen();
    assert!(text.lines().count() == 12 && text.contains("q31"), "{text}");
    let _ = KeyEventKind::Press;
}
