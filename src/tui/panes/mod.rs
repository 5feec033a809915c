//! The six panes. Each owns its state and its part of `App::update`, reads and changes
//! `Shared`, and never imports another pane or the app.

pub mod datasets;
pub mod grade;
pub mod label;
pub mod results;
pub mod review;
pub mod rubrics;

use super::pane::{Pane, PaneId};

/// Every pane's state, one of each.
#[derive(Default)]
pub struct Panes {
    pub datasets: datasets::DatasetsPane,
    pub rubrics: rubrics::RubricsPane,
    pub label: label::LabelPane,
    pub grade: grade::GradePane,
    pub results: results::ResultsPane,
    pub review: review::ReviewPane,
}

impl Panes {
    pub fn get(&self, id: PaneId) -> &dyn Pane {
        match id {
            PaneId::Datasets => &self.datasets,
            PaneId::Rubrics => &self.rubrics,
            PaneId::Label => &self.label,
            PaneId::Grade => &self.grade,
            PaneId::Results => &self.results,
            PaneId::Review => &self.review,
        }
    }

    pub fn get_mut(&mut self, id: PaneId) -> &mut dyn Pane {
        match id {
            PaneId::Datasets => &mut self.datasets,
            PaneId::Rubrics => &mut self.rubrics,
            PaneId::Label => &mut self.label,
            PaneId::Grade => &mut self.grade,
            PaneId::Results => &mut self.results,
            PaneId::Review => &mut self.review,
        }
    }
}
