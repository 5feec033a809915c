use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Modifier, Style};

use super::{Edit, LineInput, one_line};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn alt(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::ALT)
}

fn ctrl_key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::CONTROL)
}

/// Types `text` key by key.
fn typed(input: &mut LineInput, text: &str) {
    for c in text.chars() {
        assert_eq!(input.handle_key(&key(KeyCode::Char(c))), Edit::Changed);
    }
}

/// The text with `|` where the cursor is.
fn at(input: &LineInput) -> String {
    let mut s = input.text().to_owned();
    s.insert(input.cursor, '|');
    s
}

fn press(input: &mut LineInput, k: &KeyEvent, times: usize) {
    for _ in 0..times {
        input.handle_key(k);
    }
}

#[test]
fn typing_appends_and_the_cursor_starts_at_the_end() {
    let mut input = LineInput::new("ab");
    assert_eq!(at(&input), "ab|");
    typed(&mut input, "c D");
    assert_eq!(at(&input), "abc D|");
    assert_eq!(input.clone().into_text(), "abc D");
}

#[test]
fn a_character_typed_mid_line_goes_in_at_the_cursor() {
    let mut input = LineInput::new("helo world");
    press(&mut input, &key(KeyCode::Left), 7);
    assert_eq!(at(&input), "hel|o world");
    typed(&mut input, "l");
    assert_eq!(at(&input), "hell|o world");
    assert_eq!(input.handle_key(&key(KeyCode::Right)), Edit::Moved);
    assert_eq!(at(&input), "hello| world");
}

#[test]
fn left_and_right_stop_at_the_ends() {
    let mut input = LineInput::new("ab");
    press(&mut input, &key(KeyCode::Right), 3);
    assert_eq!(at(&input), "ab|");
    press(&mut input, &key(KeyCode::Left), 5);
    assert_eq!(at(&input), "|ab");
    assert_eq!(input.handle_key(&key(KeyCode::Left)), Edit::Moved);
}

#[test]
fn home_end_and_ctrl_a_ctrl_e() {
    let mut input = LineInput::new("one two");
    input.handle_key(&key(KeyCode::Home));
    assert_eq!(at(&input), "|one two");
    input.handle_key(&key(KeyCode::End));
    assert_eq!(at(&input), "one two|");
    input.handle_key(&ctrl('a'));
    assert_eq!(at(&input), "|one two");
    input.handle_key(&ctrl('e'));
    assert_eq!(at(&input), "one two|");
}

/// Where the cursor is after each of `times` presses of `k`.
fn stops(input: &mut LineInput, k: &KeyEvent, times: usize) -> Vec<String> {
    (0..times)
        .map(|_| {
            input.handle_key(k);
            at(input)
        })
        .collect()
}

#[test]
fn word_jumps_stop_around_words_with_ctrl_alt_arrows_and_alt_b_f() {
    let text = "see openai/gpt-4o  now";
    for back in [
        ctrl_key(KeyCode::Left),
        alt(KeyCode::Left),
        alt(KeyCode::Char('b')),
    ] {
        let mut input = LineInput::new(text);
        assert_eq!(
            stops(&mut input, &back, 6),
            [
                "see openai/gpt-4o  |now",
                "see openai/gpt-|4o  now",
                "see openai/|gpt-4o  now",
                "see |openai/gpt-4o  now",
                "|see openai/gpt-4o  now",
                "|see openai/gpt-4o  now",
            ],
            "{back:?}"
        );
    }
    for forward in [
        ctrl_key(KeyCode::Right),
        alt(KeyCode::Right),
        alt(KeyCode::Char('f')),
    ] {
        let mut input = LineInput::new(text);
        input.handle_key(&key(KeyCode::Home));
        assert_eq!(
            stops(&mut input, &forward, 4),
            [
                "see| openai/gpt-4o  now",
                "see openai|/gpt-4o  now",
                "see openai/gpt|-4o  now",
                "see openai/gpt-4o|  now",
            ],
            "{forward:?}"
        );
    }
}

#[test]
fn backspace_and_delete_remove_one_character_each_side() {
    let mut input = LineInput::new("abcd");
    press(&mut input, &key(KeyCode::Left), 2);
    assert_eq!(input.handle_key(&key(KeyCode::Backspace)), Edit::Changed);
    assert_eq!(at(&input), "a|cd");
    assert_eq!(input.handle_key(&key(KeyCode::Delete)), Edit::Changed);
    assert_eq!(at(&input), "a|d");
    input.handle_key(&ctrl('h'));
    assert_eq!(at(&input), "|d");
    // Nothing to remove: the key is still the field's, the text stays.
    assert_eq!(input.handle_key(&key(KeyCode::Backspace)), Edit::Moved);
    input.handle_key(&key(KeyCode::End));
    assert_eq!(input.handle_key(&key(KeyCode::Delete)), Edit::Moved);
    assert_eq!(at(&input), "d|");
}

#[test]
fn ctrl_w_deletes_back_to_a_blank_over_punctuation_and_spaces() {
    let mut input = LineInput::new("look at openai/gpt-4o,  ");
    assert_eq!(input.handle_key(&ctrl('w')), Edit::Changed);
    assert_eq!(at(&input), "look at |");
    input.handle_key(&ctrl('w'));
    assert_eq!(at(&input), "look |");
    // Mid-line, what follows the cursor stays.
    let mut input = LineInput::new("a (b.c) d");
    press(&mut input, &key(KeyCode::Left), 2);
    input.handle_key(&ctrl('w'));
    assert_eq!(at(&input), "a | d");
    input.handle_key(&ctrl('w'));
    assert_eq!(at(&input), "| d");
    assert_eq!(input.handle_key(&ctrl('w')), Edit::Moved);
}

#[test]
fn alt_backspace_and_alt_d_delete_a_word_only() {
    let mut input = LineInput::new("openai/gpt-4o, ");
    assert_eq!(input.handle_key(&alt(KeyCode::Backspace)), Edit::Changed);
    assert_eq!(at(&input), "openai/gpt-|");
    input.handle_key(&ctrl_key(KeyCode::Backspace));
    assert_eq!(at(&input), "openai/|");
    input.handle_key(&key(KeyCode::Home));
    input.handle_key(&alt(KeyCode::Char('d')));
    assert_eq!(at(&input), "|/");
}

#[test]
fn ctrl_u_deletes_to_the_start_and_ctrl_k_to_the_end() {
    let mut input = LineInput::new("keep this, drop that");
    press(&mut input, &key(KeyCode::Left), 10);
    input.handle_key(&ctrl('k'));
    assert_eq!(at(&input), "keep this,|");
    press(&mut input, &key(KeyCode::Left), 5);
    input.handle_key(&ctrl('u'));
    assert_eq!(at(&input), "|this,");
    assert_eq!(input.handle_key(&ctrl('u')), Edit::Moved);
}

#[test]
fn wide_characters_move_the_cursor_by_their_display_width() {
    let mut input = LineInput::new("日本語");
    assert_eq!(input.cursor_column(), 6);
    input.handle_key(&key(KeyCode::Left));
    assert_eq!(input.cursor_column(), 4);
    assert_eq!(at(&input), "日本|語");
    typed(&mut input, "a");
    assert_eq!(input.cursor_column(), 5);
    assert_eq!(input.text(), "日本a語");
    // The terminal cursor goes where ratatui draws: after the prefix and five columns.
    let (_, x) = input.line("> ", "", 40);
    assert_eq!(x, 2 + 5);
}

#[test]
fn an_emoji_is_one_step_and_one_backspace_whatever_it_is_made_of() {
    // Thumbs up with a skin tone (2 code points), a family (ZWJ, 5), a flag (2).
    let mut input = LineInput::new("a👍🏽👨‍👩‍👧🇫🇷b");
    input.handle_key(&key(KeyCode::Left));
    assert_eq!(at(&input), "a👍🏽👨‍👩‍👧🇫🇷|b");
    input.handle_key(&key(KeyCode::Left));
    assert_eq!(at(&input), "a👍🏽👨‍👩‍👧|🇫🇷b");
    input.handle_key(&key(KeyCode::Left));
    assert_eq!(at(&input), "a👍🏽|👨‍👩‍👧🇫🇷b");
    assert_eq!(input.cursor_column(), 3);
    input.handle_key(&key(KeyCode::Backspace));
    assert_eq!(at(&input), "a|👨‍👩‍👧🇫🇷b");
    input.handle_key(&key(KeyCode::Delete));
    assert_eq!(at(&input), "a|🇫🇷b");
    input.handle_key(&key(KeyCode::Right));
    assert_eq!(input.cursor_column(), 3);
    // An accent typed as a combining mark joins its letter.
    let mut input = LineInput::new("e\u{301}t");
    input.handle_key(&key(KeyCode::Left));
    input.handle_key(&key(KeyCode::Left));
    assert_eq!(at(&input), "|e\u{301}t");
    input.handle_key(&key(KeyCode::Right));
    assert_eq!(input.cursor_column(), 1);
}

#[test]
fn an_edit_that_joins_a_cluster_leaves_the_cursor_after_it() {
    // A regional indicator typed before another makes one flag: the cursor goes past it.
    let mut input = LineInput::new("\u{1F1F7}");
    input.handle_key(&key(KeyCode::Home));
    typed(&mut input, "\u{1F1EB}");
    assert_eq!(at(&input), "🇫🇷|");
}

#[test]
fn a_paste_is_one_line_and_goes_in_at_the_cursor() {
    let mut input = LineInput::new("[]");
    input.handle_key(&key(KeyCode::Left));
    assert_eq!(
        input.paste("one\r\ntwo\nthree\tfour\u{1b}[0m\n"),
        Edit::Changed
    );
    assert_eq!(at(&input), "[one two three four[0m|]");
    assert_eq!(input.paste("\n"), Edit::Moved);
    assert_eq!(one_line("\n\na\r\rb\n"), "a  b");
    assert_eq!(LineInput::new("x\ny").text(), "x y");
}

#[test]
fn an_offered_text_is_replaced_by_the_first_key_that_types_or_deletes() {
    let mut input = LineInput::offered("alice");
    assert!(input.is_offered());
    typed(&mut input, "b");
    assert_eq!(at(&input), "b|");
    assert!(!input.is_offered());

    let mut input = LineInput::offered("alice");
    assert_eq!(input.handle_key(&key(KeyCode::Backspace)), Edit::Changed);
    assert_eq!(at(&input), "|");

    let mut input = LineInput::offered("alice");
    assert_eq!(input.paste("bob"), Edit::Changed);
    assert_eq!(at(&input), "bob|");

    // A moving key starts editing the offered text instead.
    let mut input = LineInput::offered("alice");
    input.handle_key(&key(KeyCode::Left));
    typed(&mut input, "X");
    assert_eq!(at(&input), "alicX|e");

    // Enter takes it as offered; a key the field does not use keeps the offer.
    let mut input = LineInput::offered("alice");
    assert_eq!(input.handle_key(&key(KeyCode::Tab)), Edit::Ignored);
    assert!(input.is_offered());
    assert_eq!(input.handle_key(&key(KeyCode::Enter)), Edit::Submit);
    assert_eq!(input.text(), "alice");
    // The offer shows dimmed; typed text does not.
    assert!(
        input
            .shown(20)
            .span
            .style
            .add_modifier
            .contains(Modifier::DIM)
    );
    assert!(
        !LineInput::new("a")
            .shown(20)
            .span
            .style
            .add_modifier
            .contains(Modifier::DIM)
    );
    assert!(!LineInput::offered("").is_offered());
}

#[test]
fn enter_submits_esc_cancels_and_other_keys_are_left_to_the_caller() {
    let mut input = LineInput::new("q");
    assert_eq!(input.handle_key(&key(KeyCode::Enter)), Edit::Submit);
    assert_eq!(input.handle_key(&key(KeyCode::Esc)), Edit::Cancel);
    for k in [
        key(KeyCode::Tab),
        key(KeyCode::Up),
        key(KeyCode::Down),
        key(KeyCode::F(1)),
        ctrl('n'),
        ctrl('p'),
        ctrl('s'),
        alt(KeyCode::Char('x')),
    ] {
        assert_eq!(input.handle_key(&k), Edit::Ignored, "{k:?}");
    }
    let mut release = key(KeyCode::Char('x'));
    release.kind = KeyEventKind::Release;
    assert_eq!(input.handle_key(&release), Edit::Ignored);
    assert_eq!(at(&input), "q|");
    input.set_text("new");
    assert_eq!(at(&input), "new|");
}

#[test]
fn a_narrow_view_scrolls_to_keep_the_cursor_visible_and_stays_put_otherwise() {
    let mut input = LineInput::new("abcdefghijklmnopqrstuvwxyz");
    // At the end: the last nine letters and the cursor's own column.
    let shown = input.shown(10);
    assert_eq!(
        (shown.span.content.as_ref(), shown.cursor),
        ("rstuvwxyz", 9)
    );
    // Moving left inside the view does not scroll it.
    press(&mut input, &key(KeyCode::Left), 3);
    let shown = input.shown(10);
    assert_eq!(
        (shown.span.content.as_ref(), shown.cursor),
        ("rstuvwxyz", 6)
    );
    // Past its left edge, the view follows the cursor.
    press(&mut input, &key(KeyCode::Left), 10);
    let shown = input.shown(10);
    assert_eq!(
        (shown.span.content.as_ref(), shown.cursor),
        ("nopqrstuvw", 0)
    );
    input.handle_key(&key(KeyCode::Home));
    let shown = input.shown(10);
    assert_eq!(
        (shown.span.content.as_ref(), shown.cursor),
        ("abcdefghij", 0)
    );
    // After deleting at the end, no blank tail while text is hidden on the left.
    input.handle_key(&key(KeyCode::End));
    assert_eq!(input.shown(10).span.content, "rstuvwxyz");
    press(&mut input, &key(KeyCode::Backspace), 5);
    let shown = input.shown(10);
    assert_eq!(
        (shown.span.content.as_ref(), shown.cursor),
        ("mnopqrstu", 9)
    );
}

#[test]
fn a_wide_character_cut_by_the_edge_shows_as_a_blank() {
    let mut input = LineInput::new("ab日本語cd");
    input.handle_key(&key(KeyCode::End));
    // 10 columns of text, 6 to show: the cursor's column, and 5 before it: "語cd" is 4,
    // "本" would take 2 but only 1 is left.
    let shown = input.shown(6);
    assert_eq!((shown.span.content.as_ref(), shown.cursor), (" 語cd", 5));
}

#[test]
fn the_field_line_keeps_a_cell_for_the_cursor_and_the_prefix_to_half_the_width() {
    let input = LineInput::new("ab");
    let (line, x) = input.line("note: ", "(enter saves)", 40);
    assert_eq!(line.to_string(), "note: ab (enter saves)");
    assert_eq!(x, 8);
    // A long prefix on a narrow line keeps half the width for the field.
    let input = LineInput::new("abcdefghij");
    let (line, x) = input.line("who is labelling? ", "", 16);
    assert_eq!(line.to_string(), "who is ldefghij ");
    assert_eq!(x, 15);
}

#[test]
fn render_draws_the_field_and_puts_the_terminal_cursor_in_it() {
    let mut input = LineInput::new("日本");
    input.handle_key(&key(KeyCode::Left));
    let Ok(mut terminal) = Terminal::new(TestBackend::new(20, 2));
    let drawn = terminal.draw(|f| {
        input.render(f, Rect::new(2, 1, 18, 1), "/", " (esc)", Style::new());
    });
    assert!(drawn.is_ok());
    let buffer = terminal.backend().buffer();
    // A wide character's second cell is not part of the text.
    let mut row = String::new();
    let mut x = 0;
    while x < 20 {
        let symbol = buffer[(x, 1)].symbol();
        row.push_str(symbol);
        x += u16::try_from(unicode_width::UnicodeWidthStr::width(symbol).max(1)).unwrap_or(1);
    }
    assert_eq!(row.trim_end(), "  /日本 (esc)");
    assert_eq!(
        terminal.get_cursor_position().ok(),
        Some(Position::new(5, 1))
    );
}

#[test]
fn a_field_takes_only_the_characters_its_rules_admit_typed_or_pasted() {
    // A cost limit: digits and a point.
    let mut cost = LineInput::new("").accepting(|c| c.is_ascii_digit() || c == '.');
    typed(&mut cost, "1");
    assert_eq!(cost.handle_key(&key(KeyCode::Char('$'))), Edit::Moved);
    assert_eq!(cost.paste("2 dollars.5\n"), Edit::Changed);
    assert_eq!(at(&cost), "12.5|");
    assert_eq!(cost.paste("abc"), Edit::Moved);
    // A run name: at most five characters here; a paste is cut at the limit.
    let mut name = LineInput::new("ab").max_chars(5);
    name.handle_key(&key(KeyCode::Home));
    assert_eq!(name.paste("xyzw"), Edit::Changed);
    assert_eq!(at(&name), "xyz|ab");
    assert_eq!(name.handle_key(&key(KeyCode::Char('q'))), Edit::Moved);
    assert_eq!(name.text(), "xyzab");
    // An offered text leaves room for what replaces it, and stays if nothing is admitted.
    let mut offered = LineInput::offered("12345").max_chars(5);
    typed(&mut offered, "9");
    assert_eq!(at(&offered), "9|");
    let mut offered = LineInput::offered("5").accepting(|c| c.is_ascii_digit());
    assert_eq!(offered.handle_key(&key(KeyCode::Char('x'))), Edit::Moved);
    assert!(offered.is_offered());
}
