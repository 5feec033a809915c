//! What every pane shares: typed lines, help, tabs, the palette, the first start and an
//! untrusted config.

use super::*;

#[test]
fn ctrl_u_clears_a_typed_line_and_messages_stay_with_their_pane() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('G'), key('m')]);
    for c in "openai/some-model".chars() {
        ui.app.update(key(c));
    }
    let ctrl_u = Msg::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    ui.press([ctrl_u]);
    assert_eq!(
        ui.app
            .panes()
            .grade
            .judge_input
            .as_ref()
            .map(rubricate::tui::widgets::LineInput::text),
        Some("")
    );
    for c in "x/y".chars() {
        ui.app.update(key(c));
    }
    ui.press([code(KeyCode::Enter)]);
    assert_eq!(ui.app.panes().grade.judge.as_deref(), Some("x/y"));
    // A message said in one pane is not carried into the next.
    ui.app.shared_mut().message = Some("something about grading".into());
    ui.press([key('L')]);
    assert_ne!(
        ui.app.shared().message.as_deref(),
        Some("something about grading")
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
    assert!(matches!(ui.app.modal(), Some(Modal::Help { .. })));
    assert!(
        !ui.screen().contains("(this pane)"),
        "scrolled past the first lines"
    );
    ui.press([key('x')]);
    assert!(ui.app.modal().is_none());
    assert_eq!(ui.app.pane(), PaneId::Label);
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
    assert_eq!(ui.app.pane(), PaneId::Grade);
}

#[test]
fn the_first_start_says_what_is_where() {
    for (w, h) in [(120, 40), (80, 24)] {
        let mut ui = Ui::new(w, h);
        ui.app.shared_mut().first_start = true;
        let screen = ui.screen();
        assert!(
            screen.contains("This workspace holds 1 dataset and 2 rubric files"),
            "{screen}"
        );
        insta::assert_snapshot!(format!("overview_{w}x{h}"), screen);
        // It is a part of the Datasets pane, not a dialog: keys work as ever.
        ui.press([code(KeyCode::Enter)]);
        assert!(ui.app.shared().browse.is_some());
    }
}

#[test]
fn the_palette_finds_an_action_by_words_and_runs_it_in_its_pane() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key(':')]);
    assert!(matches!(ui.app.modal(), Some(Modal::Palette(_))));
    // Words of the description, in any order; case ignored.
    for c in "BLIND mode".chars() {
        ui.press([key(c)]);
    }
    let found = ui.app.palette_matches();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(!ui.app.panes().label.blind);
    ui.press([code(KeyCode::Enter)]);
    assert!(ui.app.modal().is_none());
    assert_eq!(
        ui.app.pane(),
        PaneId::Label,
        "switched to the action's pane"
    );
    assert!(ui.app.panes().label.blind, "and ran it there");
    // ctrl-p opens it too; this pane's actions come first; esc closes without running.
    ui.press([Msg::Key(KeyEvent::new(
        KeyCode::Char('p'),
        KeyModifiers::CONTROL,
    ))]);
    let all = ui.app.palette_matches();
    assert_eq!(all[0].pane(), Some(PaneId::Label));
    assert!(
        all.iter().any(|e| e.pane() == Some(PaneId::Rubrics)),
        "every pane's actions are listed"
    );
    ui.press([key('z'), key('z'), key('z')]);
    assert!(ui.app.palette_matches().is_empty());
    assert!(ui.screen().contains("no action has those words"));
    ui.press([code(KeyCode::Esc)]);
    assert!(ui.app.modal().is_none() && ui.app.panes().label.blind);
    assert_eq!(ui.app.panes().label.sitting, 0, "z was typed, not an undo");
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
    let said = app.shared().message.clone().unwrap();
    assert!(
        said.starts_with(&format!("run `rubricate trust {}`", dir.path().display())),
        "{said}"
    );
}
