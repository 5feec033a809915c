//! The Label pane on pairs: two answers shown blind (shuffled per item by its id, the
//! candidates' ids never on screen), side by side from 100 columns and one above the other
//! below; `h`/`l`/`t` say A, B or tie and the journal names the candidate, not the side;
//! long answers scroll; coming back to a half-labelled pair focuses what is left.

use super::*;

/// The demo workspace with examples/pairs-30.jsonl in `datasets/` and the pairwise
/// examples/compare.yaml in `rubrics/`, the pairs opened in the Label pane.
fn pairs(w: u16, h: u16) -> Ui {
    pairs_with(w, h, |_| {})
}

/// [`pairs`] with `prepare` done to the workspace's folder first.
fn pairs_with(w: u16, h: u16, prepare: impl FnOnce(&std::path::Path)) -> Ui {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut ui = Ui::with(w, h, |root| {
        prepare(root);
        std::fs::copy(
            examples.join("pairs-30.jsonl"),
            root.join("datasets/pairs-30.jsonl"),
        )
        .unwrap();
        std::fs::copy(
            examples.join("compare.yaml"),
            root.join("rubrics/compare.yaml"),
        )
        .unwrap();
    });
    open_named(&mut ui, "pairs-30");
    ui.press([key('L')]);
    assert_eq!(ui.app.pane(), PaneId::Label);
    ui
}

/// The journal's (item, criterion, verdict) in the order written.
fn journal(ui: &Ui) -> Vec<(String, String, String)> {
    let path = std::path::Path::new(&ui.root).join("labels/pairs-30/alice.jsonl");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (s("item"), s("criterion"), s("verdict"))
        })
        .collect()
}

fn pair_snapshots(w: u16, h: u16) {
    let mut ui = pairs(w, h);
    let size = format!("{w}x{h}");
    let screen = ui.screen();
    // Blind: no candidate's id anywhere on screen.
    assert!(!screen.contains("assistant-v"), "{screen}");
    insta::assert_snapshot!(format!("label_pair_{size}"), screen);
    // The long answers (item 29 of 30), scrolled down once.
    ui.press((0..28).map(|_| key('n')));
    assert_eq!(current(&ui), "long");
    ui.press([code(KeyCode::PageDown)]);
    insta::assert_snapshot!(format!("label_pair_scrolled_{size}"), ui.screen());
}

#[test]
fn a_pair_at_120x40_side_by_side() {
    pair_snapshots(120, 40);
}

#[test]
fn a_pair_at_80x24_one_above_the_other() {
    pair_snapshots(80, 24);
}

/// The text in the panel titled `Answer {name}`, its rows joined and blanks collapsed.
fn panel_text(screen: &str, name: &str) -> String {
    let rows: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let title: Vec<char> = format!("┌ Answer {name}").chars().collect();
    let Some((top, col)) = rows.iter().enumerate().find_map(|(r, row)| {
        row.windows(title.len())
            .position(|w| w == title.as_slice())
            .map(|c| (r, c))
    }) else {
        return String::new();
    };
    let mut text = String::new();
    for row in &rows[top + 1..] {
        if row.get(col) == Some(&'└') {
            break;
        }
        let inside: String = row[col + 1..].iter().take_while(|c| **c != '│').collect();
        text.push(' ');
        text.push_str(&inside);
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn thirty_pairs_labelled_in_a_row_name_candidates_in_the_journal() {
    let mut ui = pairs(80, 24);
    let mut journalled = 0;
    for n in 0..30 {
        let item = current(&ui);
        let b = ui.app.shared().browse.as_ref().unwrap();
        let candidates = b.current().unwrap().candidates.clone();
        // Which candidate answer A is, read off the screen as a person would.
        let screen = ui.screen();
        let shown_a = panel_text(&screen, "A");
        let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        let a: Vec<&str> = candidates
            .iter()
            .filter(|c| {
                let whole = flat(&c.submission);
                whole.starts_with(&shown_a) || shown_a.starts_with(&whole)
            })
            .map(|c| c.id.as_str())
            .collect();
        assert!(
            !a.is_empty(),
            "answer A of {item} is no candidate:\n{screen}"
        );
        // Item n: correct A, actionable B, concise tie — or A and B the other way.
        let keys = if n % 2 == 0 {
            ['h', 'l', 't']
        } else {
            ['l', 'h', 't']
        };
        ui.press(keys.map(key));
        let said = journal(&ui);
        let mine: Vec<&(String, String, String)> =
            said.iter().filter(|(i, _, _)| *i == item).collect();
        assert_eq!(mine.len(), 3, "{said:?}");
        journalled += 3;
        let (correct, actionable) = (&mine[0].2, &mine[1].2);
        assert_eq!(
            (mine[0].1.as_str(), mine[1].1.as_str(), mine[2].2.as_str()),
            ("correct", "actionable", "tie")
        );
        // Identical answers (one item) cannot tell the sides apart: either will do.
        let chosen_a = if n % 2 == 0 { correct } else { actionable };
        assert!(
            a.contains(&chosen_a.as_str()),
            "{item}: A is {a:?}, saved {mine:?}"
        );
        assert_ne!(correct, actionable, "A and B name different candidates");
        if n < 29 {
            assert_ne!(
                current(&ui),
                item,
                "on to the next pair after its last criterion"
            );
        }
    }
    let said = journal(&ui);
    assert_eq!(said.len(), journalled);
    // Both orders were shown: the first candidate was answer A on some items, B on others.
    let first_as_a = said
        .chunks(3)
        .enumerate()
        .filter(|(n, c)| {
            let a = if n % 2 == 0 { &c[0].2 } else { &c[1].2 };
            a == "assistant-v1"
        })
        .count();
    assert!(first_as_a > 0 && first_as_a < 30, "{first_as_a}");
    // The screen says sides, never ids.
    let screen = ui.screen();
    assert!(!screen.contains("assistant-v"), "{screen}");
    assert!(screen.contains("you: tie"), "{screen}");
}

#[test]
fn a_half_labelled_pair_is_taken_up_where_it_was_left_and_keys_of_single_answers_say_what_to_press()
{
    let mut ui = pairs(120, 40);
    let first = current(&ui);
    ui.press([key('h')]);
    // Back after the next item: the pair's second criterion has the focus.
    ui.press([key('n'), key('p')]);
    assert_eq!(current(&ui), first);
    assert_eq!(ui.app.panes().label.criterion, 1);
    // MET means nothing on a pair: nothing saved, and the keys are named.
    assert!(ui.app.update(key('m')).is_empty());
    let said = ui.app.shared().message.clone().unwrap_or_default();
    assert!(
        said.contains("compares two answers: say which is better (h A better · l B better · t tie · c can't tell)"),
        "{said}"
    );
    // The label survives a restart of the UI on the same workspace (the journal).
    let labels = journal(&ui);
    assert_eq!(labels.len(), 1);
    assert_eq!(
        (labels[0].0.as_str(), labels[0].1.as_str()),
        (first.as_str(), "correct")
    );
}

#[test]
fn quitting_mid_way_and_coming_back_goes_on_at_the_same_pair() {
    let mut ui = pairs(80, 24);
    // Two pairs labelled whole, the third half.
    ui.press("hltlht".chars().map(key));
    ui.press([key('h')]);
    let third = current(&ui);
    let state = ui.app.ui_state();
    assert_eq!(state.item, Some(2));
    // A new sitting on the same workspace, as `rubricate` starts one after the last
    // remembered what it left.
    let ws = Workspace::at(std::path::Path::new(&ui.root)).unwrap();
    rubricate::tui::ui_state::save(&ws, &state).unwrap();
    let mut app = build(&ws).unwrap();
    let runtime = Runtime::new(
        ws.clone(),
        app.shared().datasets.clone(),
        app.shared().annotator.clone(),
    );
    let mut effects = app.update(Msg::Resize(80, 24));
    effects.extend(app.resume_effects());
    settle(&mut app, &runtime, effects);
    assert_eq!(app.pane(), PaneId::Label);
    let b = app.shared().browse.as_ref().unwrap();
    assert_eq!(b.current().unwrap().id, third);
    // Its first criterion has a label: the focus is on the next.
    assert_eq!(app.panes().label.criterion, 1);
}

#[test]
fn adjudicating_a_pair_shows_each_annotators_preference_as_a_side_never_a_candidate() {
    let mut ui = pairs_with(120, 40, |root| {
        std::fs::create_dir_all(root.join("labels/pairs-30")).unwrap();
        std::fs::write(
            root.join("labels/pairs-30/bob.jsonl"),
            "{\"seq\":1,\"op\":\"set\",\"item\":\"refund\",\"criterion\":\"correct\",\"verdict\":\"assistant-v2\",\"annotator\":\"bob\",\"time\":\"2026-11-28T10:00:00Z\"}\n",
        )
        .unwrap();
    });
    assert_eq!(current(&ui), "refund");
    // Alice says tie on its first criterion, then adjudicates.
    ui.press([key('t'), key('A')]);
    let screen = ui.screen();
    assert!(screen.contains("adjudicating"), "{screen}");
    assert!(!screen.contains("assistant-v"), "{screen}");
    // refund shows assistant-v2 as A (its id's shuffle): bob's label is A, alice's tie.
    assert!(screen.contains("alice: tie · bob: A  ≠ DIFFER"), "{screen}");
}
