//! `rubricate runs import`: another system's results kept as a run of this workspace.

use std::path::Path;

use crate::cli::{CliError, exit};
use crate::core::text::visible;
use crate::formats::foreign_runs::read_foreign_run;
use crate::run::RunsHome;
use crate::store::Workspace;

pub(crate) fn import(
    ws: &Workspace,
    results: &Path,
    dataset: Option<&Path>,
    name: Option<&str>,
) -> Result<u8, CliError> {
    let foreign = read_foreign_run(results)?;
    let dataset = match (dataset, &foreign.dataset) {
        (Some(d), _) => d.to_path_buf(),
        (None, Some(d)) if d.is_file() => d.clone(),
        (None, Some(d)) => {
            return Err(CliError::input(format!(
                "{}: the experiment names its dataset {}, which is not there; give it with --dataset FILE",
                results.display(),
                d.display()
            )));
        }
        (None, None) => {
            return Err(CliError::input(format!(
                "{}: {} results do not carry the items they graded; give the dataset with --dataset FILE (for agentv, the eval file)",
                results.display(),
                foreign.system
            )));
        }
    };
    let done = crate::run::import::import(&RunsHome::of(ws), &foreign, &dataset, name, None)
        .map_err(CliError::input)?;
    outln!(
        "run {}: {} items, {} cells imported from {} results ({})",
        done.run_id,
        done.items,
        done.cells,
        foreign.system,
        visible(&results.display().to_string())
    );
    if !done.unmatched_items.is_empty() {
        let shown: Vec<String> = done
            .unmatched_items
            .iter()
            .take(5)
            .map(|i| visible(i).into_owned())
            .collect();
        eprintln!(
            "warning: {} results name items {} does not have ({}{}); they were left out",
            done.unmatched_items.len(),
            visible(&dataset.display().to_string()),
            shown.join(", "),
            if done.unmatched_items.len() > 5 {
                ", …"
            } else {
                ""
            }
        );
    }
    if done.unmatched_verdicts > 0 {
        eprintln!(
            "note: {} verdicts name no criterion of their item's rubric (another grader's checks); left out",
            done.unmatched_verdicts
        );
    }
    if done.misfits > 0 {
        eprintln!(
            "warning: {} verdicts do not fit their criterion; recorded as failed cells",
            done.misfits
        );
    }
    Ok(exit::OK)
}
