//! Keymaps are data: the defaults in `assets/keymap.yaml`, overrides under `keymap:` in
//! rubricate.yaml. A key is looked up in the focused context (`list`, `label`, `results`),
//! then in `global`. The help overlay and the status hints are generated from this map.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::formats::Diagnostic;
use crate::formats::node::{Node, NodeValue};

pub const DEFAULTS: &str = include_str!("../../assets/keymap.yaml");

/// Everything a key can do: each action's keymap name (`next_pane`) comes from its variant
/// (`snake_case`), and what help says from its message; `choice_0`…`choice_9` are read and
/// named by hand (the one action with a number).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::EnumMessage,
    strum::EnumIter,
)]
#[strum(serialize_all = "snake_case")]
pub enum Action {
    #[strum(message = "quit")]
    Quit,
    #[strum(message = "this help")]
    Help,
    #[strum(message = "every action by name (type to find one, enter runs it)")]
    Palette,
    #[strum(message = "next pane")]
    NextPane,
    #[strum(message = "previous pane")]
    PrevPane,
    #[strum(message = "Datasets pane")]
    DatasetsPane,
    #[strum(message = "Label pane")]
    LabelPane,
    #[strum(message = "Grade pane")]
    GradePane,
    #[strum(message = "Results pane")]
    ResultsPane,
    #[strum(message = "Review pane")]
    ReviewPane,
    #[strum(message = "Rubrics pane")]
    RubricsPane,
    #[strum(message = "up")]
    Up,
    #[strum(message = "down")]
    Down,
    #[strum(message = "page up")]
    PageUp,
    #[strum(message = "page down")]
    PageDown,
    #[strum(message = "first")]
    Top,
    #[strum(message = "last")]
    Bottom,
    #[strum(message = "open")]
    Open,
    #[strum(message = "open a dataset file by its path (tab completes; it is registered)")]
    OpenPath,
    #[strum(message = "a new artifact (Datasets: from the selected item; Review: from a file)")]
    NewArtifact,
    #[strum(message = "revise the artifact's content in $EDITOR")]
    ReviseArtifact,
    #[strum(message = "back / close")]
    Back,
    #[strum(message = "search submissions")]
    Search,
    #[strum(message = "next filter")]
    Filter,
    #[strum(message = "label MET")]
    Met,
    #[strum(message = "label UNMET")]
    Unmet,
    #[strum(message = "label CANNOT_ASSESS")]
    CannotAssess,
    #[strum(message = "a pair: answer A (left, or top) is better")]
    PreferA,
    #[strum(message = "a pair: answer B (right, or below) is better")]
    PreferB,
    #[strum(message = "a pair: neither is better (tie)")]
    PreferTie,
    #[strum(disabled)]
    Choice(u8),
    #[strum(message = "next criterion")]
    NextCriterion,
    #[strum(message = "previous criterion")]
    PrevCriterion,
    #[strum(message = "next item")]
    NextItem,
    #[strum(message = "previous item")]
    PrevItem,
    #[strum(message = "undo (the last label; in Rubrics the last edit)")]
    Undo,
    #[strum(message = "a note on the current label")]
    Note,
    #[strum(message = "a conversation's tool calls in full / folded to a line each")]
    ToolCalls,
    #[strum(message = "blind mode on/off")]
    Blind,
    #[strum(message = "next queue order")]
    Queue,
    #[strum(message = "dry-run estimate (nothing is sent)")]
    Estimate,
    #[strum(message = "next judging strategy")]
    Strategy,
    #[strum(message = "type the judge model")]
    Model,
    #[strum(message = "type the run's cost limit in dollars")]
    MaxCost,
    #[strum(message = "name the next run (listed by `runs list`)")]
    RunName,
    #[strum(
        message = "live calls / the providers' batch engines (about half the price, answered within 24 hours)"
    )]
    BatchMode,
    #[strum(message = "next annotator (whose labels are shown, and who labels from now on)")]
    Annotator,
    #[strum(
        message = "adjudicate: label as 'adjudicated' with every annotator's label shown (again: back)"
    )]
    Adjudicate,
    #[strum(
        message = "calibrate: rank every run of the dataset against your labels (again: close)"
    )]
    Calibrate,
    #[strum(message = "adopt Calibrate's selected judge or Align's winner (a new rubric version)")]
    Adopt,
    #[strum(message = "align report: candidates, their diffs, the test result (again: close)")]
    Align,
    #[strum(message = "export the run shown, or the items listed, as CSV, JSONL or Markdown")]
    Export,
    #[strum(message = "the run's items (score, verdicts, reasons) / back to the criteria")]
    Items,
    #[strum(message = "items: only those the judge gave the next verdict on this criterion")]
    NextVerdict,
    #[strum(message = "items: only those with a cell that failed, on/off")]
    FailedOnly,
    #[strum(message = "an older run (comparing: side B)")]
    OlderB,
    #[strum(message = "a newer run, back to the latest (comparing: side B)")]
    NewerB,
    #[strum(message = "continue the dataset's unfinished run")]
    Continue,
    #[strum(message = "re-grade only the criteria changed since the last run")]
    RegradeChanged,
    #[strum(message = "pause / resume the run")]
    Pause,
    #[strum(message = "retry the selected failed cell")]
    Retry,
    #[strum(message = "retry every failed cell")]
    RetryAll,
    #[strum(message = "edit the rubric in $EDITOR (a draft)")]
    Edit,
    #[strum(message = "save the draft as a new version (with a note)")]
    Save,
    #[strum(message = "diff of the last two saved versions")]
    Diff,
    #[strum(message = "edit the criterion's id")]
    EditId,
    #[strum(message = "edit the criterion's name")]
    EditName,
    #[strum(message = "edit the criterion's requirement")]
    EditRequirement,
    #[strum(message = "edit the criterion's weight")]
    EditWeight,
    #[strum(message = "edit the criterion's min_score")]
    EditMinScore,
    #[strum(message = "edit the judge template (ctrl-s keeps it)")]
    EditTemplate,
    #[strum(message = "edit the check's arguments (JSON)")]
    EditArgs,
    #[strum(message = "required gate on/off")]
    ToggleRequired,
    #[strum(message = "next kind (binary, options, levels, scale)")]
    NextKind,
    #[strum(message = "add a criterion after this one")]
    AddCriterion,
    #[strum(message = "duplicate the criterion")]
    DuplicateCriterion,
    #[strum(message = "delete the criterion")]
    DeleteCriterion,
    #[strum(message = "move the criterion up")]
    MoveUp,
    #[strum(message = "move the criterion down")]
    MoveDown,
    #[strum(message = "compare with an earlier run on/off")]
    Compare,
    #[strum(message = "compare with an older run")]
    Older,
    #[strum(message = "compare with a newer run")]
    Newer,
    #[strum(message = "submit the artifact for review")]
    Submit,
    #[strum(message = "approve (with a note)")]
    Approve,
    #[strum(message = "request a revision (with a note)")]
    RequestRevision,
    #[strum(message = "reject (with a note)")]
    Reject,
}

impl Action {
    pub fn parse(s: &str) -> Option<Self> {
        if let Ok(a) = s.parse() {
            return Some(a);
        }
        let n: u8 = s.strip_prefix("choice_")?.parse().ok()?;
        (0..=9).contains(&n).then_some(Action::Choice(n))
    }

    /// The action's name as a keymap writes it (`next_pane`, `choice_3`).
    pub fn name(self) -> String {
        if let Action::Choice(n) = self {
            return format!("choice_{n}");
        }
        <&'static str>::from(self).to_owned()
    }

    /// What the help overlay says.
    pub fn describe(self) -> String {
        match self {
            Action::Choice(n) => format!("option / level {n} (Results: confusion cell {n})"),
            other => strum::EnumMessage::get_message(&other)
                .unwrap_or_default()
                .to_owned(),
        }
    }
}

/// Where a key is looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Context {
    Global,
    List,
    Label,
    Grade,
    Results,
    Review,
    Rubrics,
}

impl Context {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "global" => Context::Global,
            "list" => Context::List,
            "label" => Context::Label,
            "grade" => Context::Grade,
            "results" => Context::Results,
            "review" => Context::Review,
            "rubrics" => Context::Rubrics,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Context::Global => "global",
            Context::List => "list",
            Context::Label => "label",
            Context::Grade => "grade",
            Context::Results => "results",
            Context::Review => "review",
            Context::Rubrics => "rubrics",
        }
    }
}

/// A key as written in a keymap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
}

/// Keys sort by how they are written (for a stable help overlay).
impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name().cmp(&other.name())
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Key {
    pub fn parse(s: &str) -> Option<Self> {
        let mut rest = s;
        let (mut ctrl, mut alt) = (false, false);
        loop {
            if let Some(r) = rest.strip_prefix("ctrl-").filter(|r| !r.is_empty()) {
                ctrl = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("alt-").filter(|r| !r.is_empty()) {
                alt = true;
                rest = r;
            } else {
                break;
            }
        }
        let code = match rest {
            "enter" => KeyCode::Enter,
            "esc" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "space" => KeyCode::Char(' '),
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "pageup" => KeyCode::PageUp,
            "pagedown" => KeyCode::PageDown,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "backspace" => KeyCode::Backspace,
            f if f.starts_with('f') && f.len() > 1 => {
                KeyCode::F(f[1..].parse().ok().filter(|n| (1..=12).contains(n))?)
            }
            c if c.chars().count() == 1 => KeyCode::Char(c.chars().next()?),
            _ => return None,
        };
        Some(Self { code, ctrl, alt })
    }

    /// A pressed key as the keymap writes it (shift is part of the character).
    pub fn from_event(e: &KeyEvent) -> Self {
        let code = match e.code {
            KeyCode::Char(c) if e.modifiers.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(c.to_ascii_lowercase())
            }
            other => other,
        };
        Self {
            code,
            ctrl: e.modifiers.contains(KeyModifiers::CONTROL),
            alt: e.modifiers.contains(KeyModifiers::ALT),
        }
    }

    pub fn name(&self) -> String {
        let base = match self.code {
            KeyCode::Enter => "enter".into(),
            KeyCode::Esc => "esc".into(),
            KeyCode::Tab => "tab".into(),
            KeyCode::BackTab => "shift-tab".into(),
            KeyCode::Char(' ') => "space".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::PageUp => "pgup".into(),
            KeyCode::PageDown => "pgdn".into(),
            KeyCode::Home => "home".into(),
            KeyCode::End => "end".into(),
            KeyCode::Backspace => "backspace".into(),
            KeyCode::F(n) => format!("f{n}"),
            KeyCode::Char(c) => c.to_string(),
            _ => "?".into(),
        };
        match (self.ctrl, self.alt) {
            (true, _) => format!("ctrl-{base}"),
            (_, true) => format!("alt-{base}"),
            _ => base,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Keymap {
    pub bindings: BTreeMap<Context, BTreeMap<Key, Action>>,
}

impl Keymap {
    /// The defaults with `overrides` (the `keymap:` node of rubricate.yaml) on top. A bad
    /// context, key or action is a located error.
    pub fn load(overrides: Option<(&str, &Node)>) -> Result<Self, Vec<Diagnostic>> {
        let mut map = Keymap::default();
        let root =
            crate::formats::parse_document("assets/keymap.yaml", DEFAULTS).map_err(|d| d.0)?;
        let mut errors = Vec::new();
        map.apply("assets/keymap.yaml", &root, &mut errors);
        if let Some((file, node)) = overrides {
            map.apply(file, node, &mut errors);
        }
        if errors.is_empty() {
            Ok(map)
        } else {
            Err(errors)
        }
    }

    fn apply(&mut self, file: &str, root: &Node, errors: &mut Vec<Diagnostic>) {
        let NodeValue::Map(contexts) = &root.value else {
            errors.push(Diagnostic::at(
                file,
                root.pos,
                "`keymap` must be a mapping of contexts (global, list, label, results)",
            ));
            return;
        };
        for (ctx_key, keys) in contexts {
            let Some(ctx) = Context::parse(&ctx_key.text) else {
                errors.push(Diagnostic::at(
                    file,
                    ctx_key.pos,
                    format!(
                        "unknown keymap context '{}'; use global, list, rubrics, label, grade, results or review",
                        ctx_key.text
                    ),
                ));
                continue;
            };
            let NodeValue::Map(entries) = &keys.value else {
                errors.push(Diagnostic::at(
                    file,
                    keys.pos,
                    format!("keymap context '{}' must map keys to actions", ctx_key.text),
                ));
                continue;
            };
            for (k, v) in entries {
                let Some(key) = Key::parse(&k.text) else {
                    errors.push(Diagnostic::at(file, k.pos, format!("'{}' is not a key name (a character, enter, esc, tab, up, pageup, f1…, with ctrl-/alt-)", k.text)));
                    continue;
                };
                let Some(action) = v.as_str().and_then(Action::parse) else {
                    errors.push(Diagnostic::at(
                        file,
                        v.pos,
                        format!(
                            "'{}' is not an action (see assets/keymap.yaml for the list)",
                            v.as_str().unwrap_or("?")
                        ),
                    ));
                    continue;
                };
                self.bindings.entry(ctx).or_default().insert(key, action);
            }
        }
    }

    /// The keymap as a Markdown table, a row per context: each action's keys and what it
    /// does (docs/tui.md holds the defaults' table; a test keeps it current).
    pub fn markdown_table(&self) -> String {
        let mut out = String::from("| context | keys |\n|---|---|\n");
        for (ctx, keys) in &self.bindings {
            let mut by_action: BTreeMap<Action, Vec<String>> = BTreeMap::new();
            let mut digits = Vec::new();
            for (key, action) in keys {
                match action {
                    // Ten digits, one meaning: one cell.
                    Action::Choice(n) => digits.push(*n),
                    _ => by_action.entry(*action).or_default().push(key.name()),
                }
            }
            let mut cells: Vec<String> = by_action
                .iter()
                .map(|(action, keys)| {
                    let keys: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
                    format!(
                        "{} {}",
                        keys.join("/"),
                        action.describe().replace('|', "\\|")
                    )
                })
                .collect();
            if let (Some(lo), Some(hi)) = (digits.iter().min(), digits.iter().max()) {
                cells.push(format!(
                    "`{lo}`–`{hi}` an option, level or scale point (Results: the items of a confusion cell)"
                ));
            }
            let _ = writeln!(out, "| {} | {} |", ctx.name(), cells.join(" · "));
        }
        out
    }

    /// The action of a key in a context (falling back to global).
    pub fn action(&self, ctx: Context, key: Key) -> Option<Action> {
        self.bindings
            .get(&ctx)
            .and_then(|m| m.get(&key))
            .or_else(|| {
                self.bindings
                    .get(&Context::Global)
                    .and_then(|m| m.get(&key))
            })
            .copied()
    }

    /// The keys of an action in a context, for hints ("m/u/c").
    pub fn keys_for(&self, ctx: Context, action: Action) -> Vec<String> {
        let mut keys: Vec<String> = [ctx, Context::Global]
            .iter()
            .filter_map(|c| self.bindings.get(c))
            .flat_map(|m| {
                m.iter()
                    .filter(|(_, a)| **a == action)
                    .map(|(k, _)| k.name())
            })
            .collect();
        // The shortest first: `q` before `ctrl-c`.
        keys.sort_by_key(|k| (k.chars().count(), k.clone()));
        keys.dedup();
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_load_and_overrides_win_with_located_errors() {
        let map = Keymap::load(None).unwrap();
        let k = |s: &str| Key::parse(s).unwrap();
        assert_eq!(map.action(Context::Label, k("m")), Some(Action::Met));
        assert_eq!(
            map.action(Context::Label, k("q")),
            Some(Action::Quit),
            "global fallback"
        );
        assert_eq!(map.action(Context::List, k("ctrl-c")), Some(Action::Quit));
        let text = "label:\n  y: met\n  ctrl-zz: undo\nlist:\n  x: explode\nbogus: {}\n";
        let node = crate::formats::parse_document("rubricate.yaml", text).unwrap();
        let errors = Keymap::load(Some(("rubricate.yaml", &node))).unwrap_err();
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(
            text[0].contains("rubricate.yaml:3:3: 'ctrl-zz' is not a key name"),
            "{text:?}"
        );
        assert!(
            text[1].contains("rubricate.yaml:5:6: 'explode' is not an action"),
            "{text:?}"
        );
        assert!(
            text[2].contains("rubricate.yaml:6:1: unknown keymap context 'bogus'"),
            "{text:?}"
        );
        let ok = crate::formats::parse_document("c.yaml", "label:\n  y: met\n").unwrap();
        let map = Keymap::load(Some(("c.yaml", &ok))).unwrap();
        assert_eq!(map.action(Context::Label, k("y")), Some(Action::Met));
        assert_eq!(map.keys_for(Context::Label, Action::Met), ["m", "y"]);
        assert_eq!(map.keys_for(Context::Label, Action::Quit), ["q", "ctrl-c"]);
    }

    #[test]
    fn every_action_name_reads_back_as_its_action() {
        use strum::IntoEnumIterator;
        let mut seen = std::collections::HashSet::new();
        for action in Action::iter().filter(|a| !matches!(a, Action::Choice(_))) {
            let name = action.name();
            assert!(seen.insert(name.clone()), "{name} twice");
            assert_eq!(Action::parse(&name), Some(action), "{name}");
            assert!(!action.describe().is_empty(), "{name} has no help text");
        }
        assert_eq!(Action::NextPane.name(), "next_pane");
        assert_eq!(Action::parse("NextPane"), None);
        assert_eq!(Action::Choice(7).name(), "choice_7");
        assert_eq!(Action::parse("choice_7"), Some(Action::Choice(7)));
        assert_eq!(Action::parse("choice_10"), None);
    }
}
