//! Every line the UI reads typed text from is the one editor (`widgets::LineInput`): each of
//! the twelve is opened as a person opens it and typed into — keys, a cursor move, a
//! mid-line insert, a wide character, a paste with a line break.

use rubricate::store::artifacts::Status;
use rubricate::tui::panes::rubrics::SaveDialog;
use rubricate::tui::widgets::LineInput;

use super::*;

fn paste(text: &str) -> Msg {
    Msg::Paste(text.to_owned())
}

/// The text of the line being typed now.
fn typed(ui: &Ui) -> String {
    ui.app
        .field()
        .expect("a line is being typed")
        .text()
        .to_owned()
}

/// Types into the line being typed now, through the one editor: `ab`, left, `X` (a
/// mid-line insert), end, `漢` (two columns wide), then a paste with a line break (made one
/// line). What the line held is kept (a name offered is replaced by the first key).
fn type_into_the_field(ui: &mut Ui, what: &str) {
    let field = ui.app.field().unwrap_or_else(|| panic!("{what}: no line"));
    let start = if field.is_offered() {
        String::new()
    } else {
        field.text().to_owned()
    };
    let width = start.chars().count();
    ui.press([key('a'), key('b'), code(KeyCode::Left), key('X')]);
    assert_eq!(
        typed(ui),
        format!("{start}aXb"),
        "{what}: a mid-line insert"
    );
    assert_eq!(
        ui.app.field().map(LineInput::cursor_column),
        Some(width + 2),
        "{what}: the cursor after the X"
    );
    ui.press([code(KeyCode::End), key('漢')]);
    assert_eq!(
        typed(ui),
        format!("{start}aXb漢"),
        "{what}: a wide character"
    );
    assert_eq!(
        ui.app.field().map(LineInput::cursor_column),
        Some(width + 5),
        "{what}: a wide character takes two columns"
    );
    ui.press([paste("p\nq")]);
    assert_eq!(
        typed(ui),
        format!("{start}aXb漢p q"),
        "{what}: a paste is one line"
    );
    assert!(
        ui.screen().contains(&format!("{start}aXb")),
        "{what}: shown\n{}",
        ui.screen()
    );
}

#[test]
fn the_datasets_search_the_palette_and_the_path_prompt() {
    let mut ui = Ui::new(120, 40);
    ui.press([key('o')]);
    type_into_the_field(&mut ui, "path prompt");
    ui.press([code(KeyCode::Esc), key(':')]);
    type_into_the_field(&mut ui, "palette");
    ui.press([code(KeyCode::Esc), code(KeyCode::Enter), key('/')]);
    type_into_the_field(&mut ui, "datasets search");
}

#[test]
fn the_annotators_name_and_a_labels_note() {
    let mut ui = Ui::new(120, 40);
    ui.app.shared_mut().annotator_confirmed = false;
    ui.press([code(KeyCode::Enter), key('L')]);
    assert!(ui.app.field().is_some_and(LineInput::is_offered));
    type_into_the_field(&mut ui, "annotator");
    ui.press([code(KeyCode::Enter)]);
    assert_eq!(ui.app.shared().annotator, "aXb漢p q");
    ui.press([key('m'), key('N')]);
    type_into_the_field(&mut ui, "label note");
}

#[test]
fn the_new_artifacts_name_and_a_review_decisions_note() {
    let mut ui = Ui::new(120, 40);
    ui.app.shared_mut().artifact_types = vec![(
        "support_answer".into(),
        vec!["rubrics/support-answer.yaml".into()],
    )];
    ui.press([code(KeyCode::Enter), key('A')]);
    type_into_the_field(&mut ui, "new artifact");
    ui.press([code(KeyCode::Esc), key('V')]);
    // A decision's note line, as `a` on an artifact in review opens it.
    ui.app.panes_mut().review.note = Some((Status::Approved, LineInput::default()));
    type_into_the_field(&mut ui, "review note");
}

#[test]
fn the_rubric_search_and_a_saved_versions_note() {
    let mut ui = Ui::new(120, 40);
    ui.press([key('B'), code(KeyCode::Enter), key('/')]);
    type_into_the_field(&mut ui, "rubric search");
    ui.press([code(KeyCode::Esc)]);
    // The save dialog, as `s` on a valid draft opens it.
    ui.app.panes_mut().rubrics.save = Some(SaveDialog::new("1.0.1", Some("1.0.0")));
    type_into_the_field(&mut ui, "change note");
}

#[test]
fn the_grade_set_ups_judge_and_run_name_and_its_cost_limit_takes_only_dollars() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('G'), key('m')]);
    type_into_the_field(&mut ui, "judge model");
    ui.press([code(KeyCode::Esc), key('n')]);
    type_into_the_field(&mut ui, "run name");
    ui.press([code(KeyCode::Esc), key('$')]);
    // The cost limit is a number: letters, wide or not, are not typed; a pasted number is.
    ui.press([
        key('1'),
        key('2'),
        code(KeyCode::Left),
        key('5'),
        key('x'),
        key('漢'),
    ]);
    assert_eq!(typed(&ui), "152");
    assert_eq!(ui.app.field().map(LineInput::cursor_column), Some(2));
    ui.press([code(KeyCode::End), paste(".5\n")]);
    assert_eq!(typed(&ui), "152.5");
    ui.press([code(KeyCode::Enter)]);
    assert_eq!(ui.app.panes().grade.max_cost, Some(152.5));
}
