//! The documentation generated from the code is current: the command-line reference (from
//! clap) and the keymap table (from `assets/keymap.yaml`). `UPDATE_DOCS=1` writes them
//! again (`scripts/update-docs.sh`); CI never does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/docs.rs"]
mod docs;

use docs::current;

#[test]
fn the_command_line_reference_is_current() {
    let reference = rubricate::cli::cli_reference();
    for command in [
        "## rubricate grade",
        "## rubricate labels next",
        "## rubricate completions",
    ] {
        assert!(reference.contains(command), "{command}");
    }
    current("docs/cli-reference.md", None, &reference);
}

#[test]
fn the_keymap_table_is_current() {
    let table = rubricate::tui::keymap::Keymap::load(None)
        .unwrap()
        .markdown_table();
    assert!(table.contains("| label | "), "{table}");
    assert!(table.contains("`m` label MET"), "{table}");
    current(
        "docs/tui.md",
        Some(("<!-- keymap:start -->", "<!-- keymap:end -->")),
        &table,
    );
}
