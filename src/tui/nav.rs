//! Which pane is which, and a request to show one: what a pane or a modal asks the app
//! for when the person should see another pane.

use super::keymap::Context;
use super::open_dataset::Filter;

/// Which pane (the tabs, in order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneId {
    Datasets,
    Rubrics,
    Label,
    Grade,
    Results,
    Review,
}

impl PaneId {
    pub const ALL: [PaneId; 6] = [
        PaneId::Datasets,
        PaneId::Rubrics,
        PaneId::Label,
        PaneId::Grade,
        PaneId::Results,
        PaneId::Review,
    ];

    /// Where the pane's keys are looked up.
    pub fn context(self) -> Context {
        match self {
            PaneId::Datasets => Context::List,
            PaneId::Label => Context::Label,
            PaneId::Grade => Context::Grade,
            PaneId::Results => Context::Results,
            PaneId::Review => Context::Review,
            PaneId::Rubrics => Context::Rubrics,
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            PaneId::Datasets => "Datasets",
            PaneId::Rubrics => "Rubrics",
            PaneId::Label => "Label",
            PaneId::Grade => "Grade",
            PaneId::Results => "Results",
            PaneId::Review => "Review",
        }
    }
}

/// A request to show another pane, applied by `app.rs` alone.
#[derive(Debug, Clone, PartialEq)]
pub enum Nav {
    /// The pane, as its tab key opens it.
    To(PaneId),
    /// The Datasets pane listing the open dataset's items that pass `filter`.
    Filtered(Filter),
    /// The Datasets pane with one item open (the whole list behind it).
    Item { id: String, position: usize },
    /// The Results pane's Align view on the newest align report of the rubric in this file.
    Align(std::path::PathBuf),
    /// The Review pane's new-artifact line, for content from elsewhere.
    NewArtifact {
        from: String,
        content: serde_json::Value,
        name: String,
    },
}
