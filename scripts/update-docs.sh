#!/usr/bin/env bash
# Writes the documentation generated from the code again: the README's picture of the UI
# (docs/images/tui.svg), the command-line reference (docs/cli-reference.md) and the keymap
# table in docs/tui.md. The same tests fail in CI when any of them is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
UPDATE_DOCS=1 cargo test --all-features --test docs --test tui -- \
  the_command_line_reference_is_current the_keymap_table_is_current the_readme_picture_is_current
git status --short docs/
