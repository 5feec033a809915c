//! The runtime's work for labelling and judge trust: what an opened dataset brings for the
//! annotator, the "labels next" plan (with people against people), and ranking and adopting
//! judges for the Calibrate view. Each reads the workspace off the UI loop.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::app::Msg;
use super::data::{self, DatasetInfo};
use super::effects::Runtime;

/// How many items of the "labels next" order the Label pane keeps (its queue walks them in
/// turn; past them it goes on with the unlabelled items in order).
const PLAN_ITEMS: usize = 5000;

impl Runtime {
    /// What belongs to an open dataset for the annotator: their labels and notes, everyone
    /// with a journal, the items assigned to them, and — while adjudicating — every other
    /// annotator's labels.
    pub(super) fn opened(
        &self,
        dataset: usize,
        d: &DatasetInfo,
        run: Option<Arc<data::RunData>>,
        rubric: Option<Arc<crate::model::Rubric>>,
    ) -> Msg {
        let annotator = self.annotator();
        let labels_dir = self.ws.labels_dir();
        let annotators = crate::store::labels::annotators(&labels_dir, &d.key);
        let peers = if annotator == crate::store::labels::ADJUDICATED {
            annotators
                .iter()
                .filter(|a| **a != annotator)
                .map(|a| (a.clone(), data::labels(&self.ws, &d.key, a)))
                .collect()
        } else {
            BTreeMap::new()
        };
        let assignment = match crate::store::assignments::read(&labels_dir, &d.key) {
            Ok(a) => a.and_then(|a| a.of(&annotator)),
            Err(e) => {
                tracing::warn!("{e}");
                None
            }
        };
        let (labels, notes) = data::labels_and_notes(&self.ws, &d.key, &annotator);
        Msg::Opened {
            dataset,
            run,
            rubric,
            labels,
            notes,
            annotators,
            peers,
            assignment,
        }
    }

    /// The dataset's runs of one rubric ranked against `annotator`'s labels.
    pub(super) fn calibration(
        &self,
        d: &DatasetInfo,
        annotator: &str,
    ) -> Result<crate::run::calibration::Calibration, String> {
        let runs = crate::run::calibration::dataset_runs(&self.ws, &d.path);
        if runs.is_empty() {
            return Err("no run of one rubric over this dataset yet: grade it (G), once per judge to compare".into());
        }
        crate::run::calibration::rank(
            &self.ws,
            &d.key,
            annotator,
            runs,
            Some(&crate::metrics::Bootstrap::default()),
        )
        .map_err(|e| e.to_string())
    }

    /// The "labels next" plan for `annotator`, and people against people once two people
    /// have labels.
    pub(super) fn plan_labels(
        &self,
        d: &DatasetInfo,
        dataset: usize,
        annotator: String,
        labels_gen: u64,
    ) -> Msg {
        // Three times the last plan's time since it finished (at most 10 s): labels typed
        // meanwhile are read with the rest.
        let (finished, took) = self.plan_cost.lock().map_or((None, Duration::ZERO), |c| *c);
        if let Some(done) = finished {
            let rest = (took * 3)
                .min(Duration::from_secs(10))
                .saturating_sub(done.elapsed());
            if !rest.is_zero() {
                std::thread::sleep(rest);
            }
        }
        let start = Instant::now();
        let plan = crate::run::label_next::plan(
            &self.ws,
            &d.path,
            &annotator,
            PLAN_ITEMS,
            crate::run::label_next::DEFAULT_TARGET,
            &crate::metrics::Bootstrap::default(),
        )
        .map(Arc::new)
        .map_err(|e| e.to_string());
        let people = crate::run::people::people(&self.ws, &d.path, None)
            .ok()
            .filter(|r| !r.pairs.is_empty())
            .map(Arc::new);
        if let Ok(mut cost) = self.plan_cost.lock() {
            *cost = (Some(Instant::now()), start.elapsed());
        }
        Msg::LabelPlan {
            dataset,
            annotator,
            labels_gen,
            plan,
            people,
        }
    }

    /// Writes the judge of run `run_id`, ranked against `annotator`'s labels, into its
    /// rubric as the next registry version; what happened, to tell.
    pub(super) fn adopt(&self, d: &DatasetInfo, annotator: &str, run_id: &str) -> Msg {
        let adopted = self.calibration(d, annotator).and_then(|cal| {
            let chosen = cal
                .candidates
                .iter()
                .find(|c| c.agreement.manifest.id == run_id)
                .ok_or_else(|| format!("run {run_id} is no longer a candidate"))?;
            crate::run::calibration::adopt(&self.ws, &cal, chosen).map_err(|e| e.to_string())
        });
        Msg::Info(match adopted {
            Ok(a) => format!(
                "adopted: {}@{} now judges with {} (the figures are in its history)",
                a.rubric, a.version, a.model
            ),
            Err(e) => format!("nothing adopted: {e}"),
        })
    }
}
