//! A pairwise rubric's run: the rubric expanded over the dataset's candidates (both orders
//! of every pair, each an ordinary judged cell), and each item fitted to it as it is read.

use std::path::Path;
use std::sync::Arc;

use super::Error;
use crate::formats::LoadedRubric;
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::formats::source::SourceMap;
use crate::model::Item;
use crate::model::pair::{arrange, expand};

/// The rubric a new run grades: a pairwise rubric expanded over the candidates of the
/// dataset's first item (every item must carry the same); any other unchanged.
pub fn expanded(
    rubric: Option<LoadedRubric>,
    dataset: &Path,
    opts: ReadOptions,
) -> Result<Option<LoadedRubric>, Error> {
    let Some(loaded) = rubric else {
        return Ok(None);
    };
    if !loaded.rubric.mode.is_pairwise() || !loaded.rubric.systems.is_empty() {
        return Ok(Some(loaded));
    }
    let systems: Vec<String> = match open_dataset(dataset, opts)?.items.next() {
        // An empty dataset: the run says so.
        None => return Ok(Some(loaded)),
        Some(Err(d)) => return Err(Error::Diagnostics(crate::core::diag::Diagnostics::one(d))),
        Some(Ok(item)) if item.candidates.is_empty() => {
            return Err(Error::input(format!(
                "{}: item '{}' has one answer, but rubric '{}' is pairwise: give the items `a` and `b` (or `candidates`), or `rubricate pairs RUN_A RUN_B` two runs",
                item.origin, item.id, loaded.rubric.id
            )));
        }
        Some(Ok(item)) => item.candidates.into_iter().map(|c| c.id).collect(),
    };
    Ok(Some(LoadedRubric {
        rubric: Arc::new(expand(&loaded.rubric, &systems)),
        // The cells are not written in the file: problems point at the file itself.
        source: SourceMap::default(),
        ..loaded
    }))
}

/// Fits an item to the rubric it is graded with (`systems`: the run's candidates, empty
/// for a rubric of one answer): a pair item's candidates are put in the run's order; an
/// item of the wrong shape is refused, saying what to do.
pub fn fit(item: &mut Item, systems: &[String]) -> Result<(), String> {
    match (systems.is_empty(), item.candidates.is_empty()) {
        (true, true) => Ok(()),
        (true, false) => Err(format!(
            "item '{}' carries candidates to compare; grade it with a rubric in `mode: pairwise`",
            item.id
        )),
        (false, true) => Err(format!(
            "item '{}' has one answer, but the rubric is pairwise: give it `a` and `b` (or `candidates`)",
            item.id
        )),
        (false, false) => {
            arrange(&mut item.candidates, systems).map_err(|e| format!("item '{}' {e}", item.id))
        }
    }
}

/// A pairwise run cannot be judged holistically (one score for a whole rubric of one
/// answer); every other strategy judges its cells one order at a time.
pub fn check_strategy(
    rubric: Option<&LoadedRubric>,
    strategy: Option<crate::engine::judge::Strategy>,
) -> Result<(), Error> {
    if rubric.is_some_and(|r| !r.rubric.systems.is_empty())
        && strategy == Some(crate::engine::judge::Strategy::Holistic)
    {
        return Err(Error::input(
            "a pairwise rubric is judged one criterion and one order at a time; the holistic strategy gives one score to one answer, so drop `--strategy holistic`",
        ));
    }
    Ok(())
}
