//! The real binary in a real pseudo-terminal (tmux), driven by keys the way a person would:
//! label by keyboard, quit, find the labels on disk; SIGKILL right after a label is
//! acknowledged on screen, then find that label on disk; the label cursor on a new item;
//! 25 rapid edits; a rubric that does not validate refused before it is saved; the focused
//! line kept in view at 80×24; quit while labels are being written; a levels criterion's κ
//! in Results equal to `rubricate metrics`; thirty items labelled in a row and a
//! half-labelled one gone back to, with no label replaced; SIGTERM and SIGHUP quitting as `q`
//! does, and a terminal closing unseen (SIGHUP blocked) ending the UI; a bracketed paste into
//! the Datasets search. Skipped where tmux is missing, except under `CI=true`.
#![cfg(feature = "tui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/tmux.rs"]
mod tmux;

#[path = "support/levels.rs"]
mod levels;

use std::path::Path;
use std::process::Command;

use tmux::{Tmux, wait_for_condition};

/// The UI on the demo workspace in `home`, labelling as `pat`.
fn demo(name: &str, home: &Path, width: u16, height: u16) -> Tmux {
    let command = Tmux::rubricate(&[
        ("RUBRICATE_HOME", home.display().to_string()),
        ("RUBRICATE_ANNOTATOR", "pat".into()),
        ("NO_COLOR", "1".into()),
    ]);
    Tmux::start(name, Path::new("/"), width, height, &command)
}

/// From the first screen into the demo dataset, once its first item shows.
fn open_dataset(t: &Tmux) {
    t.wait_for("support-answers");
    t.keys(&["Enter"]);
    t.wait_for("q01");
}

/// From the first screen to the first item in Label, once its rubric is read (a key
/// before that says so and labels nothing).
fn open_label(t: &Tmux) {
    open_dataset(t);
    t.keys(&["L"]);
    label_shown(t, "q01 (1 of 50)");
}

/// Waits for the Label pane on `title`, with its rubric read: keys label from then on.
fn label_shown(t: &Tmux, title: &str) {
    t.wait_for(title);
    t.wait_for("keys: m MET");
}

fn journal(home: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(home.join("labels/support-answers/pat.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn label_three_criteria_by_keyboard_then_survive_a_kill() {
    if !Tmux::required() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");

    let t = demo("label", &home, 120, 40);
    open_label(&t);
    for (key, seq) in [("m", 1), ("u", 2), ("m", 3)] {
        t.keys(&[key]);
        t.wait_for(&format!("saved label {seq}"));
    }
    t.keys(&["q"]);
    t.wait_gone();
    let events = journal(&home);
    let got: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            (
                e["criterion"].as_str().unwrap(),
                e["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("reset-link", "MET"),
            ("steps", "UNMET"),
            ("concise", "MET")
        ]
    );
    drop(t);

    // Killed right after the screen says a label is saved: the label is on disk.
    // The UI comes back where it was left: labelling support-answers.
    let t = demo("kill", &home, 120, 40);
    label_shown(&t, "q01 (1 of 50)");
    t.keys(&["c"]);
    t.wait_for("saved label 4");
    let pid = t.pid();
    Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    let events = journal(&home);
    assert_eq!(events.len(), 4, "{events:?}");
    assert_eq!(events[3]["verdict"], "CANNOT_ASSESS");
}

#[test]
fn a_new_item_starts_at_its_first_unanswered_criterion_and_the_focus_stays_in_view_at_80x24() {
    if !Tmux::required() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let t = demo("cursor", &home, 80, 24);
    open_dataset(&t);
    // q33 is the first item nobody labelled.
    for _ in 0..32 {
        t.keys(&["Down"]);
    }
    t.keys(&["L"]);
    label_shown(&t, "q33 (33 of 50)");
    t.keys(&["m"]);
    t.wait_for("saved label 1");
    t.wait_for("▶ Gives steps");
    t.keys(&["n"]);
    t.wait_for("q34 (34 of 50)");
    // The first key on the new item answers its first criterion, not the second.
    t.wait_for("▶ Points to the reset");
    t.keys(&["u"]);
    t.wait_for("saved label 2");
    let events = journal(&home);
    assert_eq!(events[1]["item"], "q34");
    assert_eq!(events[1]["criterion"], "reset-link");
    // The last criterion, focused, is on screen at 80×24.
    t.keys(&["m", "m"]);
    t.wait_for("saved label 4");
    t.wait_for("▶ Asks for the");
}

/// The demo workspace with `EDITOR` set to `editor` (a command taking the file).
fn demo_with_editor(name: &str, home: &Path, editor: &str) -> Tmux {
    let command = Tmux::rubricate(&[
        ("RUBRICATE_HOME", home.display().to_string()),
        ("RUBRICATE_ANNOTATOR", "pat".into()),
        ("NO_COLOR", "1".into()),
        ("EDITOR", editor.into()),
    ]);
    Tmux::start(name, Path::new("/"), 120, 40, &command)
}

fn draft_criteria(home: &Path) -> Option<usize> {
    let draft = home.join(".rubricate/drafts/support-answer.yaml");
    rubricate::formats::load_rubric(&draft.display().to_string())
        .ok()
        .map(|r| r.rubric.criteria.len())
}

#[test]
fn twenty_five_rapid_duplicates_all_land_in_the_draft_and_on_screen() {
    if !Tmux::required() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let t = demo("rapid", &home, 120, 40);
    t.wait_for("support-answers");
    t.keys(&["B"]);
    t.wait_for("support-answer.yaml");
    t.keys(&["Down", "Enter"]);
    t.wait_for("reset-link");
    t.keys(&["Down"]);
    // 25 presses at once, faster than any draft write returns.
    t.type_text(&"y".repeat(25));
    wait_for_condition("29 criteria in the draft", || {
        draft_criteria(&home) == Some(29)
    });
    t.wait_for("Support answer (29 criteria");
    t.wait_for("draft (s saves a version)");
    // Nothing is left to write: quit goes at once.
    t.keys(&["q"]);
    t.wait_gone();
    assert_eq!(draft_criteria(&home), Some(29));
}

#[test]
fn a_pattern_that_does_not_compile_is_shown_where_it_is_and_never_saved() {
    if !Tmux::required() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    // The "editor" breaks the reset-link pattern and bumps the version.
    let editor = dir.path().join("edit.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/forgot password|reset (page|link)/(unclosed/; s/version: 1.0.0/version: 1.1.0/' \"$1\"\n",
    )
    .unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&editor)
        .status()
        .unwrap();
    let t = demo_with_editor("invalid", &home, &editor.display().to_string());
    t.wait_for("support-answers");
    t.keys(&["B"]);
    t.wait_for("support-answer.yaml");
    t.keys(&["Down", "Enter"]);
    t.wait_for("reset-link");
    t.keys(&["C-e"]);
    t.wait_for("support-answer.yaml:16:");
    t.keys(&["s"]);
    t.wait_for("not saved: the draft does not validate");
    t.keys(&["q"]);
    t.wait_gone();
    let rubric = std::fs::read_to_string(home.join("rubrics/support-answer.yaml")).unwrap();
    assert!(rubric.contains("version: 1.0.0") && !rubric.contains("(unclosed"));
    assert!(
        !home
            .join(".rubricate/registry/support-answer/1.1.0.yaml")
            .exists(),
        "no version was registered"
    );
}

#[test]
fn quit_pressed_while_a_label_is_being_written_waits_for_it_and_the_label_is_on_disk() {
    if !Tmux::required() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let t = demo("quit-pending", &home, 80, 24);
    open_label(&t);
    // Three labels and quit in one burst: q arrives before the disk confirms them. One q
    // is enough — the UI quits by itself once the last one is written.
    t.type_text("mucq");
    t.wait_gone();
    let events = journal(&home);
    let got: Vec<&str> = events
        .iter()
        .map(|e| e["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(got, ["MET", "UNMET", "CANNOT_ASSESS"], "{events:?}");
}

#[test]
fn results_show_the_kappa_rubricate_metrics_gives_for_a_levels_criterion() {
    if !Tmux::required() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let kappa = levels::workspace(root, env!("CARGO_BIN_EXE_rubricate"));
    let command = Tmux::rubricate(&[("NO_COLOR", "1".into())]);
    let t = Tmux::start("levels", root, 80, 24, &command);
    t.wait_for("ans");
    t.keys(&["Enter"]);
    t.wait_for("i0");
    t.keys(&["R"]);
    // The criterion's row: full-marks rate, then κ as `metrics` printed it.
    let want = format!("{kappa:>5.2}");
    t.wait_until("the levels criterion's κ", |screen| {
        screen.lines().any(|l| l.contains('%') && l.contains(&want))
    });
    let screen = t.screen();
    let row = screen
        .lines()
        .find(|l| l.contains('%') && l.contains(&want))
        .unwrap_or_else(|| panic!("no row with κ {want}:\n{screen}"));
    assert!(row.contains("0.71"), "accuracy beside κ: {row}");
    t.keys(&["q"]);
    t.wait_gone();
}

#[test]
fn rubricate_log_goes_to_the_log_file_never_onto_the_screen() {
    if !Tmux::required() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let state = dir.path().join("state");
    let command = Tmux::rubricate(&[
        ("RUBRICATE_HOME", home.display().to_string()),
        ("RUBRICATE_ANNOTATOR", "pat".into()),
        ("RUBRICATE_LOG", "debug".into()),
        ("XDG_STATE_HOME", state.display().to_string()),
        ("NO_COLOR", "1".into()),
    ]);
    let t = Tmux::start("log", Path::new("/"), 80, 24, &command);
    open_dataset(&t);
    let screen = t.screen();
    assert!(
        !screen.contains("INFO") && !screen.contains("DEBUG"),
        "a log line on the screen:\n{screen}"
    );
    t.keys(&["q"]);
    t.wait_gone();
    let log = std::fs::read_to_string(state.join("rubricate/rubricate.log")).unwrap_or_default();
    assert!(log.contains("terminal UI started"), "{log}");
}

#[test]
fn labelling_thirty_items_then_going_back_to_a_half_labelled_one_never_replaces_a_label() {
    if !Tmux::required() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let t = demo("advance", &home, 80, 24);
    open_label(&t);
    // Thirty items in a row, four criteria each, typed as a person types them.
    for item in 1..=30 {
        t.type_text("mumc");
        t.wait_for(&format!("q{:02} ({} of 50)", item + 1, item + 1));
    }
    t.wait_for("saved label 120");
    // q31: skip the first criterion, answer the second, leave, and come back.
    t.keys(&["j", "u"]);
    t.wait_for("saved label 121");
    t.keys(&["n"]);
    t.wait_for("q32 (32 of 50)");
    t.keys(&["p"]);
    t.wait_for("q31 (31 of 50)");
    // Keep typing: the first, third and fourth of q31, then three of q32.
    t.type_text("mmmmmm");
    t.wait_for("saved label 127");
    t.wait_for("q32 (32 of 50)");
    t.keys(&["q"]);
    t.wait_gone();
    let events = journal(&home);
    let mut cells: Vec<(String, String)> = events
        .iter()
        .map(|e| (e["item"].to_string(), e["criterion"].to_string()))
        .collect();
    assert_eq!(cells.len(), 127);
    cells.sort();
    cells.dedup();
    assert_eq!(cells.len(), 127, "a label replaced another");
    let q31: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["item"] == "q31")
        .map(|e| {
            (
                e["criterion"].as_str().unwrap(),
                e["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        q31,
        [
            ("steps", "UNMET"),
            ("reset-link", "MET"),
            ("concise", "MET"),
            ("asks-password", "MET")
        ]
    );
}

/// SIGTERM (`kill`) and SIGHUP (the terminal closed) quit as `q` does — the UI's own quit,
/// logged, not the signal's default death — with every label typed on disk.
#[test]
fn sigterm_and_sighup_quit_as_q_does_with_every_label_on_disk() {
    if !Tmux::required() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let state = dir.path().join("state");
    let log = state.join("rubricate/rubricate.log");
    for (round, signal) in ["TERM", "HUP"].into_iter().enumerate() {
        let command = Tmux::rubricate(&[
            ("RUBRICATE_HOME", home.display().to_string()),
            ("RUBRICATE_ANNOTATOR", "pat".into()),
            ("XDG_STATE_HOME", state.display().to_string()),
            ("NO_COLOR", "1".into()),
        ]);
        let t = Tmux::start(&format!("stop-{signal}"), Path::new("/"), 80, 24, &command);
        if round == 0 {
            open_dataset(&t);
            t.keys(&["L"]);
        }
        label_shown(&t, "(1 of 50)");
        t.type_text("mu");
        let want = 2 * (round + 1);
        t.wait_for(&format!("label {want}"));
        Command::new("kill")
            .args([&format!("-{signal}"), &t.pid().to_string()])
            .status()
            .unwrap();
        t.wait_gone();
        assert_eq!(journal(&home).len(), want, "after SIG{signal}");
        let quits = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.ends_with("quit: a stop signal"))
            .count();
        assert_eq!(quits, round + 1, "SIG{signal} quit as q does");
    }
}

#[test]
fn a_terminal_that_closes_unseen_ends_the_ui() {
    if !Tmux::required() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    // Started with SIGHUP blocked (as some launchers and `nohup`-like wrappers leave it):
    // the terminal closing sends nothing the UI can see. perl-base is part of every Debian.
    let command = Tmux::rubricate(&[
        ("RUBRICATE_HOME", home.display().to_string()),
        ("RUBRICATE_ANNOTATOR", "pat".into()),
        ("NO_COLOR", "1".into()),
    ])
    .replacen(
        "env ",
        "perl -MPOSIX -e 'sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGHUP)) or die; exec @ARGV' env ",
        1,
    );
    let t = Tmux::start("unseen-hup", Path::new("/"), 80, 24, &command);
    t.wait_for("support-answers");
    let pid = t.pid();
    let blocked = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("SigBlk:").map(|m| m.trim().to_owned()))
        .unwrap();
    assert_eq!(
        u64::from_str_radix(&blocked, 16).unwrap() & 1,
        1,
        "SIGHUP is blocked"
    );
    // The terminal goes away while the UI waits for a key: it ends by itself (it does not
    // spin on the dead device).
    drop(t);
    wait_for_condition("the UI to end after its terminal closed", || {
        !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
    });
}

#[test]
fn a_paste_into_the_datasets_search_is_one_line_of_text_and_finds_its_matches() {
    if !Tmux::required() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let t = demo("paste", &home, 80, 24);
    open_dataset(&t);
    t.keys(&["/"]);
    t.wait_for("(enter keeps, esc clears)");
    // A line break inside and one at the end, as a copied line has. Pasted as keys, the
    // first would end the search; a bracketed paste is text, made one line.
    t.paste("example.com/reset\nSorry\n");
    t.wait_for("/example.com/reset Sorry  (enter keeps, esc clears)");
    t.wait_for("— 0 of 50 items");
    // Six backspaces leave the address alone: its ten matches.
    t.keys(&["BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace"]);
    t.wait_for("/example.com/reset  (enter keeps");
    t.wait_for("10 of 50 items");
    let screen = t.screen();
    for id in ["q02", "q12", "q27", "q40"] {
        assert!(screen.contains(id), "{id} is a match:\n{screen}");
    }
    assert!(!screen.contains("q01 "), "q01 is not a match:\n{screen}");
}
