//! The Results pane's part of `App::update`: the selected criterion, a confusion cell's
//! items, run comparison (both sides move), export, and whose labels are compared.

use super::app::{App, Effect, Filter, Pane};
use super::keymap::Action;

impl App {
    pub(super) fn results_action(&mut self, action: Action) -> Vec<Effect> {
        let n = self
            .browse
            .as_ref()
            .and_then(|b| b.run.as_ref())
            .map_or(0, |r| r.rubric.criteria.len());
        match action {
            Action::Up => self.results_cursor = self.results_cursor.saturating_sub(1),
            Action::Down if n > 0 => self.results_cursor = (self.results_cursor + 1).min(n - 1),
            // Jump to the items of one cell of the selected criterion's confusion matrix.
            Action::Choice(cell @ 1..=4) if n > 0 => {
                if let Some(b) = &mut self.browse {
                    b.filter = Filter::Cell {
                        criterion: self.results_cursor,
                        cell: cell - 1,
                    };
                    b.detail = false;
                }
                self.pane = Pane::Datasets;
                return self.rescan(String::new());
            }
            Action::Export => {
                if self.browse.as_ref().and_then(|b| b.run.as_ref()).is_some() {
                    self.export_prompt = true;
                    self.message =
                        Some("export the run as: c CSV · j JSONL · m Markdown (esc: no)".into());
                } else {
                    self.message = Some("no run of this dataset to export".into());
                }
            }
            Action::Compare => {
                if self.compare.is_some() {
                    self.compare = None;
                    self.compare_b = None;
                    self.compare_b_back = 0;
                    return Vec::new();
                }
                if let Some(b) = &self.browse {
                    return vec![Effect::LoadEarlierRun {
                        dataset: b.dataset,
                        back: 1,
                        b: false,
                    }];
                }
            }
            Action::Older | Action::Newer if self.compare.is_some() => {
                let back = if action == Action::Older {
                    self.compare_back + 1
                } else {
                    self.compare_back.saturating_sub(1).max(1)
                };
                if let Some(b) = &self.browse {
                    return vec![Effect::LoadEarlierRun {
                        dataset: b.dataset,
                        back,
                        b: false,
                    }];
                }
            }
            // Side B moves too: any two runs of the dataset can be compared.
            Action::OlderB | Action::NewerB if self.compare.is_some() => {
                let back = if action == Action::OlderB {
                    self.compare_b_back + 1
                } else {
                    self.compare_b_back.saturating_sub(1)
                };
                if back == 0 {
                    self.compare_b = None;
                    self.compare_b_back = 0;
                    return Vec::new();
                }
                if let Some(b) = &self.browse {
                    return vec![Effect::LoadEarlierRun {
                        dataset: b.dataset,
                        back,
                        b: true,
                    }];
                }
            }
            _ => {}
        }
        Vec::new()
    }

    /// Shows (and labels as) the next annotator with labels for the open dataset.
    pub(super) fn next_annotator(&mut self) -> Vec<Effect> {
        let mut names = self.annotators.clone();
        if !names.contains(&self.annotator) {
            names.push(self.annotator.clone());
        }
        names.sort();
        let at = names.iter().position(|n| *n == self.annotator).unwrap_or(0);
        let Some(next) = names.get((at + 1) % names.len().max(1)).cloned() else {
            return Vec::new();
        };
        if next == self.annotator {
            self.message = Some(format!(
                "only {next} has labels for this dataset; type another name in rubricate.yaml (annotator:) or at the Label prompt"
            ));
            return Vec::new();
        }
        self.annotator.clone_from(&next);
        self.annotator_confirmed = true;
        self.annotator_prompt = None;
        self.message = Some(format!(
            "labels of {next}: shown, and new labels are {next}'s"
        ));
        vec![Effect::SetAnnotator {
            name: next,
            dataset: self.browse.as_ref().map(|b| b.dataset),
        }]
    }
}
