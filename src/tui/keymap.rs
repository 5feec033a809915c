//! Keymaps are data: the defaults in `assets/keymap.yaml`, overrides under `keymap:` in
//! rubricate.yaml. A key is looked up in the focused context (`list`, `label`, `results`),
//! then in `global`. The help overlay and the status hints are generated from this map.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::formats::Diagnostic;
use crate::formats::node::{Node, NodeValue};

pub const DEFAULTS: &str = include_str!("../../assets/keymap.yaml");

/// Everything a key can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    Quit,
    Help,
    Palette,
    NextPane,
    PrevPane,
    DatasetsPane,
    LabelPane,
    GradePane,
    ResultsPane,
    ReviewPane,
    RubricsPane,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Open,
    OpenPath,
    NewArtifact,
    ReviseArtifact,
    Back,
    Search,
    Filter,
    Met,
    Unmet,
    CannotAssess,
    Choice(u8),
    NextCriterion,
    PrevCriterion,
    NextItem,
    PrevItem,
    Undo,
    Note,
    Blind,
    Queue,
    Estimate,
    Strategy,
    Model,
    MaxCost,
    RunName,
    Annotator,
    Export,
    Items,
    NextVerdict,
    FailedOnly,
    OlderB,
    NewerB,
    Continue,
    RegradeChanged,
    Pause,
    Retry,
    RetryAll,
    Edit,
    Save,
    Diff,
    EditId,
    EditName,
    EditRequirement,
    EditWeight,
    EditMinScore,
    EditTemplate,
    EditArgs,
    ToggleRequired,
    NextKind,
    AddCriterion,
    DuplicateCriterion,
    DeleteCriterion,
    MoveUp,
    MoveDown,
    Compare,
    Older,
    Newer,
    Submit,
    Approve,
    RequestRevision,
    Reject,
}

/// Every action's name as a keymap writes it (`choice_0`…`choice_9` aside).
const NAMES: &[(&str, Action)] = &[
    ("quit", Action::Quit),
    ("help", Action::Help),
    ("palette", Action::Palette),
    ("next_pane", Action::NextPane),
    ("prev_pane", Action::PrevPane),
    ("datasets_pane", Action::DatasetsPane),
    ("label_pane", Action::LabelPane),
    ("results_pane", Action::ResultsPane),
    ("grade_pane", Action::GradePane),
    ("review_pane", Action::ReviewPane),
    ("rubrics_pane", Action::RubricsPane),
    ("edit", Action::Edit),
    ("save", Action::Save),
    ("diff", Action::Diff),
    ("edit_id", Action::EditId),
    ("edit_name", Action::EditName),
    ("edit_requirement", Action::EditRequirement),
    ("edit_weight", Action::EditWeight),
    ("edit_min_score", Action::EditMinScore),
    ("edit_template", Action::EditTemplate),
    ("edit_args", Action::EditArgs),
    ("toggle_required", Action::ToggleRequired),
    ("next_kind", Action::NextKind),
    ("add_criterion", Action::AddCriterion),
    ("duplicate_criterion", Action::DuplicateCriterion),
    ("delete_criterion", Action::DeleteCriterion),
    ("move_up", Action::MoveUp),
    ("move_down", Action::MoveDown),
    ("compare", Action::Compare),
    ("older", Action::Older),
    ("newer", Action::Newer),
    ("submit", Action::Submit),
    ("approve", Action::Approve),
    ("request_revision", Action::RequestRevision),
    ("reject", Action::Reject),
    ("estimate", Action::Estimate),
    ("regrade_changed", Action::RegradeChanged),
    ("strategy", Action::Strategy),
    ("model", Action::Model),
    ("max_cost", Action::MaxCost),
    ("run_name", Action::RunName),
    ("annotator", Action::Annotator),
    ("export", Action::Export),
    ("items", Action::Items),
    ("next_verdict", Action::NextVerdict),
    ("failed_only", Action::FailedOnly),
    ("older_b", Action::OlderB),
    ("newer_b", Action::NewerB),
    ("continue", Action::Continue),
    ("pause", Action::Pause),
    ("retry", Action::Retry),
    ("retry_all", Action::RetryAll),
    ("up", Action::Up),
    ("down", Action::Down),
    ("page_up", Action::PageUp),
    ("page_down", Action::PageDown),
    ("top", Action::Top),
    ("bottom", Action::Bottom),
    ("open", Action::Open),
    ("open_path", Action::OpenPath),
    ("new_artifact", Action::NewArtifact),
    ("revise_artifact", Action::ReviseArtifact),
    ("back", Action::Back),
    ("search", Action::Search),
    ("filter", Action::Filter),
    ("met", Action::Met),
    ("unmet", Action::Unmet),
    ("cannot_assess", Action::CannotAssess),
    ("next_criterion", Action::NextCriterion),
    ("prev_criterion", Action::PrevCriterion),
    ("next_item", Action::NextItem),
    ("prev_item", Action::PrevItem),
    ("undo", Action::Undo),
    ("note", Action::Note),
    ("blind", Action::Blind),
    ("queue", Action::Queue),
];

impl Action {
    pub fn parse(s: &str) -> Option<Self> {
        if let Some(&(_, a)) = NAMES.iter().find(|(n, _)| *n == s) {
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
        NAMES
            .iter()
            .find(|(_, a)| *a == self)
            .map_or_else(String::new, |(n, _)| (*n).to_owned())
    }

    /// What the help overlay says.
    pub fn describe(self) -> String {
        match self {
            Action::Quit => "quit".into(),
            Action::Help => "this help".into(),
            Action::Palette => "every action by name (type to find one, enter runs it)".into(),
            Action::NextPane => "next pane".into(),
            Action::PrevPane => "previous pane".into(),
            Action::DatasetsPane => "Datasets pane".into(),
            Action::LabelPane => "Label pane".into(),
            Action::ResultsPane => "Results pane".into(),
            Action::GradePane => "Grade pane".into(),
            Action::ReviewPane => "Review pane".into(),
            Action::RubricsPane => "Rubrics pane".into(),
            Action::Edit => "edit the rubric in $EDITOR (a draft)".into(),
            Action::Save => "save the draft as a new version (with a note)".into(),
            Action::Diff => "diff of the last two saved versions".into(),
            Action::EditId => "edit the criterion's id".into(),
            Action::EditName => "edit the criterion's name".into(),
            Action::EditRequirement => "edit the criterion's requirement".into(),
            Action::EditMinScore => "edit the criterion's min_score".into(),
            Action::EditTemplate => "edit the judge template (ctrl-s keeps it)".into(),
            Action::EditArgs => "edit the check's arguments (JSON)".into(),
            Action::EditWeight => "edit the criterion's weight".into(),
            Action::NextKind => "next kind (binary, options, levels, scale)".into(),
            Action::ToggleRequired => "required gate on/off".into(),
            Action::AddCriterion => "add a criterion after this one".into(),
            Action::DuplicateCriterion => "duplicate the criterion".into(),
            Action::DeleteCriterion => "delete the criterion".into(),
            Action::MoveUp => "move the criterion up".into(),
            Action::MoveDown => "move the criterion down".into(),
            Action::Compare => "compare with an earlier run on/off".into(),
            Action::Older => "compare with an older run".into(),
            Action::Newer => "compare with a newer run".into(),
            Action::Submit => "submit the artifact for review".into(),
            Action::Approve => "approve (with a note)".into(),
            Action::RequestRevision => "request a revision (with a note)".into(),
            Action::Reject => "reject (with a note)".into(),
            Action::Estimate => "dry-run estimate (nothing is sent)".into(),
            Action::Continue => "continue the dataset's unfinished run".into(),
            Action::Strategy => "next judging strategy".into(),
            Action::Model => "type the judge model".into(),
            Action::RunName => "name the next run (listed by `runs list`)".into(),
            Action::MaxCost => "type the run's cost limit in dollars".into(),
            Action::Items => {
                "the run's items (score, verdicts, reasons) / back to the criteria".into()
            }
            Action::NextVerdict => {
                "items: only those the judge gave the next verdict on this criterion".into()
            }
            Action::FailedOnly => "items: only those with a cell that failed, on/off".into(),
            Action::Export => {
                "export the run shown, or the items listed, as CSV, JSONL or Markdown".into()
            }
            Action::OlderB => "an older run (comparing: side B)".into(),
            Action::NewerB => "a newer run, back to the latest (comparing: side B)".into(),
            Action::Annotator => {
                "next annotator (whose labels are shown, and who labels from now on)".into()
            }
            Action::RegradeChanged => {
                "re-grade only the criteria changed since the last run".into()
            }
            Action::Pause => "pause / resume the run".into(),
            Action::Retry => "retry the selected failed cell".into(),
            Action::RetryAll => "retry every failed cell".into(),
            Action::Up => "up".into(),
            Action::Down => "down".into(),
            Action::PageUp => "page up".into(),
            Action::PageDown => "page down".into(),
            Action::Top => "first".into(),
            Action::Bottom => "last".into(),
            Action::Open => "open".into(),
            Action::NewArtifact => {
                "a new artifact (Datasets: from the selected item; Review: from a file)".into()
            }
            Action::ReviseArtifact => "revise the artifact's content in $EDITOR".into(),
            Action::OpenPath => {
                "open a dataset file by its path (tab completes; it is registered)".into()
            }
            Action::Back => "back / close".into(),
            Action::Search => "search submissions".into(),
            Action::Filter => "next filter".into(),
            Action::Met => "label MET".into(),
            Action::Unmet => "label UNMET".into(),
            Action::CannotAssess => "label CANNOT_ASSESS".into(),
            Action::Choice(n) => format!("option / level {n} (Results: confusion cell {n})"),
            Action::NextCriterion => "next criterion".into(),
            Action::PrevCriterion => "previous criterion".into(),
            Action::NextItem => "next item".into(),
            Action::PrevItem => "previous item".into(),
            Action::Undo => "undo (the last label; in Rubrics the last edit)".into(),
            Action::Note => "a note on the current label".into(),
            Action::Blind => "blind mode on/off".into(),
            Action::Queue => "next queue order".into(),
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
        for &(name, action) in NAMES {
            assert_eq!(Action::parse(name), Some(action), "{name}");
            assert_eq!(action.name(), name);
        }
        assert_eq!(Action::Choice(7).name(), "choice_7");
        assert_eq!(Action::parse("choice_7"), Some(Action::Choice(7)));
        assert_eq!(Action::parse("choice_10"), None);
    }
}
