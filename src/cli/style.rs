//! Terminal styling: colour only on a terminal and only when `NO_COLOR` is unset.

use std::io::IsTerminal;

pub(crate) fn color_enabled(stream_is_terminal: bool) -> bool {
    stream_is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

pub(crate) fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

fn paint(text: &str, code: &str, on: bool) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

pub(crate) fn green(text: &str, on: bool) -> String {
    paint(text, "32", on)
}

pub(crate) fn red(text: &str, on: bool) -> String {
    paint(text, "31", on)
}

pub(crate) fn yellow(text: &str, on: bool) -> String {
    paint(text, "33", on)
}

pub(crate) fn bold(text: &str, on: bool) -> String {
    paint(text, "1", on)
}

/// An error message for stderr, prefixed `error:` (red on a terminal).
pub(crate) fn error_text(message: &str) -> String {
    let on = color_enabled(std::io::stderr().is_terminal());
    format!("{} {message}", red("error:", on))
}
