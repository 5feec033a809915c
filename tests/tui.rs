//! The terminal UI without a terminal: `App::update` (state and effects), and every pane
//! drawn from the demo workspace at 120×40 and 80×24 into insta snapshots.
#![cfg(feature = "tui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use rubricate::store::Workspace;
use rubricate::tui::app::{App, Effect, Msg, Pane};
use rubricate::tui::effects::Runtime;
use rubricate::tui::{build, render_text, settle};

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
        let (dir, ws) = demo();
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
    assert_eq!(ui.app.label.criterion, 1, "on to the next criterion");
    // Not yet on disk: quitting asks to wait.
    ui.app.update(key('q'));
    assert!(!ui.app.quit);
    assert!(
        ui.app
            .message
            .as_deref()
            .unwrap()
            .contains("still being saved")
    );
    settle(&mut ui.app, &ui.runtime, effects);
    assert_eq!(ui.app.label.unsaved, 0);
    assert_eq!(ui.app.label.sitting, 1);
    // A key that does not answer this criterion says so and saves nothing.
    assert!(ui.app.update(key('3')).is_empty());
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
    ui.press([key('m'), key('m'), key('m'), key('u')]);
    // alice labelled q01–q32: unlabelled first jumps to q33.
    assert_eq!(ui.app.browse.as_ref().unwrap().current().unwrap().id, "q33");
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
    ui.press([key('?')]);
    insta::assert_snapshot!(format!("help_{size}"), ui.screen());
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
    assert!(ui.screen().contains("who is labelling? login"));
    // Typed keys go to the prompt, not to the labels.
    for _ in 0..5 {
        ui.app.update(code(KeyCode::Backspace));
    }
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
