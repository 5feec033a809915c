//! A frame of the terminal UI as an SVG picture (the README's, regenerated from the real UI
//! by `scripts/update-docs.sh`): each run of cells with one style as a `<text>`, its
//! background as a rectangle, on a dark terminal's palette. `hide` blanks text that would
//! differ from machine to machine (a temporary folder's path).

use std::fmt::Write as _;

use ratatui::buffer::{Buffer, Cell};
use ratatui::style::{Color, Modifier};

use super::App;

const CELL_W: f64 = 8.4;
const CELL_H: f64 = 18.0;
const BACKGROUND: &str = "#1d1f21";
const FOREGROUND: &str = "#d8d8d8";

/// The app's frame at `width`×`height` as SVG, with each text in `hide` blanked.
pub fn render(app: &App, width: u16, height: u16, hide: &[&str]) -> String {
    let mut buffer = super::frame(app, width, height);
    for text in hide.iter().filter(|t| !t.is_empty()) {
        blank(&mut buffer, text);
    }
    svg(&buffer)
}

/// Every place `text` is written on a row, made spaces.
fn blank(buffer: &mut Buffer, text: &str) {
    let area = buffer.area;
    let n = text.chars().count();
    for y in 0..area.height {
        let row: Vec<String> = (0..area.width)
            .map(|x| buffer[(x, y)].symbol().to_owned())
            .collect();
        let joined: String = row.concat();
        if !joined.contains(text) {
            continue;
        }
        for start in 0..row.len().saturating_sub(n - 1) {
            if row[start..start + n].concat() == text {
                for x in start..start + n {
                    if let Ok(x) = u16::try_from(x) {
                        buffer[(x, y)].set_symbol(" ");
                    }
                }
            }
        }
    }
}

fn svg(buffer: &Buffer) -> String {
    let (w, h) = (buffer.area.width, buffer.area.height);
    let (pw, ph) = (f64::from(w) * CELL_W + 16.0, f64::from(h) * CELL_H + 16.0);
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{pw:.0}\" height=\"{ph:.0}\" viewBox=\"0 0 {pw:.0} {ph:.0}\" font-family=\"'DejaVu Sans Mono', Menlo, Consolas, monospace\" font-size=\"14\">\n<rect width=\"100%\" height=\"100%\" rx=\"6\" fill=\"{BACKGROUND}\"/>\n<g transform=\"translate(8 8)\">\n"
    );
    for y in 0..h {
        let mut x = 0;
        while x < w {
            let style = look(&buffer[(x, y)]);
            let mut end = x + 1;
            while end < w && look(&buffer[(end, y)]) == style {
                end += 1;
            }
            let text: String = (x..end).map(|c| buffer[(c, y)].symbol()).collect();
            run(&mut out, x, y, end - x, &text, &style);
            x = end;
        }
    }
    out.push_str("</g>\n</svg>\n");
    out
}

/// What a cell looks like: its colours (reversed already applied) and weight.
#[derive(Debug, Clone, PartialEq)]
struct Look {
    fg: &'static str,
    bg: Option<&'static str>,
    bold: bool,
    dim: bool,
    italic: bool,
}

fn look(cell: &Cell) -> Look {
    let m = cell.modifier;
    let (mut fg, mut bg) = (colour(cell.fg), colour(cell.bg));
    if m.contains(Modifier::REVERSED) {
        let shown = fg.unwrap_or(FOREGROUND);
        fg = Some(bg.unwrap_or(BACKGROUND));
        bg = Some(shown);
    }
    Look {
        fg: fg.unwrap_or(FOREGROUND),
        bg,
        bold: m.contains(Modifier::BOLD),
        dim: m.contains(Modifier::DIM),
        italic: m.contains(Modifier::ITALIC),
    }
}

fn run(out: &mut String, x: u16, y: u16, cells: u16, text: &str, look: &Look) {
    let (px, py) = (f64::from(x) * CELL_W, f64::from(y) * CELL_H);
    if let Some(bg) = look.bg {
        let _ = writeln!(
            out,
            "<rect x=\"{px:.1}\" y=\"{py:.1}\" width=\"{:.1}\" height=\"{CELL_H:.1}\" fill=\"{bg}\"/>",
            f64::from(cells) * CELL_W
        );
    }
    if text.trim().is_empty() {
        return;
    }
    let mut attrs = format!("fill=\"{}\"", look.fg);
    if look.bold {
        attrs.push_str(" font-weight=\"bold\"");
    }
    if look.dim {
        attrs.push_str(" opacity=\"0.6\"");
    }
    if look.italic {
        attrs.push_str(" font-style=\"italic\"");
    }
    // Each cell at its column, whatever the font's own advance.
    let _ = writeln!(
        out,
        "<text x=\"{px:.1}\" y=\"{:.1}\" textLength=\"{:.1}\" lengthAdjust=\"spacingAndGlyphs\" xml:space=\"preserve\" {attrs}>{}</text>",
        py + CELL_H * 0.75,
        f64::from(cells) * CELL_W,
        escape(text)
    );
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A terminal colour as a dark theme shows it; `None` for the default.
fn colour(c: Color) -> Option<&'static str> {
    Some(match c {
        Color::Reset => return None,
        Color::Black => "#1d1f21",
        Color::Red => "#cc6666",
        Color::Green => "#b5bd68",
        Color::Yellow => "#f0c674",
        Color::Blue => "#81a2be",
        Color::Magenta => "#b294bb",
        Color::Cyan => "#8abeb7",
        Color::Gray => "#c5c8c6",
        Color::DarkGray => "#7c7f7d",
        Color::LightRed => "#ff7b7b",
        Color::LightGreen => "#d0e08a",
        Color::LightYellow => "#ffe08a",
        Color::LightBlue => "#a3c4e0",
        Color::LightMagenta => "#d0b0e0",
        Color::LightCyan => "#a8e0d8",
        Color::White => "#ffffff",
        // Indexed and true colours are not in the default theme.
        _ => FOREGROUND,
    })
}
