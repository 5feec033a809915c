//! The terminal UI without a terminal: `App::update` (state and effects), and every pane
//! drawn from the demo workspace at 120×40 and 80×24 into insta snapshots. Each pane's tests
//! are in tests/tui/<pane>.rs, over the builders here.
#![cfg(feature = "tui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use rubricate::store::Workspace;
use rubricate::tui::app::{App, Effect, Msg, PaneId};
use rubricate::tui::modal::Modal;
use rubricate::tui::runtime::Runtime;
use rubricate::tui::{build, render_text, settle};

#[path = "support/later_run.rs"]
mod later_run;

#[path = "support/levels.rs"]
mod levels;

#[path = "support/docs.rs"]
mod docs;

#[path = "support/mod.rs"]
mod support;

#[path = "tui/align.rs"]
mod align;
#[path = "tui/app.rs"]
mod app;
#[path = "tui/datasets.rs"]
mod datasets;
#[path = "tui/fields.rs"]
mod fields;
#[path = "tui/grade.rs"]
mod grade;
#[path = "tui/label.rs"]
mod label;
#[path = "tui/pair_results.rs"]
mod pair_results;
#[path = "tui/pairs.rs"]
mod pairs;
#[path = "tui/results.rs"]
mod results;
#[path = "tui/review.rs"]
mod review;
#[path = "tui/rubrics.rs"]
mod rubrics;

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
        let runtime = Runtime::new(
            ws.clone(),
            app.shared().datasets.clone(),
            app.shared().annotator.clone(),
        );
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
        let (w, h) = self.app.shared().size;
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

/// The item the cursor is on.
fn current(ui: &Ui) -> String {
    ui.app
        .shared()
        .browse
        .as_ref()
        .unwrap()
        .current()
        .unwrap()
        .id
        .clone()
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
    open_named(&mut ui, "essays");
    ui
}

/// Opens the dataset listed as `name` from the Datasets list, as a person would.
fn open_named(ui: &mut Ui, name: &str) {
    let at = ui
        .app
        .shared()
        .datasets
        .iter()
        .position(|d| d.name == name)
        .unwrap();
    ui.press((0..at).map(|_| code(KeyCode::Down)));
    ui.press([code(KeyCode::Enter)]);
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
fn every_pane_at_120x40() {
    snapshots(120, 40);
}

#[test]
fn every_pane_at_80x24() {
    snapshots(80, 24);
}

/// The README's picture is the real UI: the Results pane on the demo workspace at 120×32,
/// the workspace's temporary path blanked.
#[test]
fn the_readme_picture_is_current() {
    let mut ui = Ui::new(120, 32);
    ui.press([code(KeyCode::Enter), key('R')]);
    let svg = rubricate::tui::svg::render(&ui.app, 120, 32, &[&ui.root]);
    assert!(svg.contains("Criteria vs alice"), "{svg}");
    docs::current("docs/images/tui.svg", None, &svg);
}
