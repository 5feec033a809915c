//! `grade --baseline RUN|latest|FILE`: grade and compare in one step. The run just graded
//! is compared with its baseline as `runs compare BASELINE RUN` compares them — the same
//! definitions of a regression, paired tests and `--tolerance`/`--fail-on`.
//!
//! Both sides are saved runs while they are compared. A run not kept (`grade` without
//! `--save`) and a results file (the JSONL `grade --format jsonl` writes, committed to a
//! repository) are kept for the comparison only, in a temporary folder — so CI needs no
//! workspace. A results file's verdicts are scored by the rubric graded now, as the run's
//! are: a change of weights or threshold moves both sides alike, and what is compared is
//! what the judge and the checks said.

use std::path::{Path, PathBuf};

use super::CliError;
use super::runs::compare::{FailOn, GateOptions, against_baseline};
use crate::formats::LoadedRubric;
use crate::run::{Recording, RunsHome};

/// The flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct BaselineArgs {
    /// Compare the run with a baseline, and exit 1 when it regresses: a saved run (id, name
    /// or prefix), `latest` (the workspace's newest finished run of the same rubric and
    /// dataset), or a results file `grade --format jsonl` wrote (committed to the
    /// repository; no workspace needed).
    #[arg(help_heading = "Baseline", long, value_name = "RUN|latest|FILE")]
    pub(crate) baseline: Option<String>,
    /// With --baseline: how far an item's score or the mean score (0 to 1) may drop before
    /// it counts as a regression.
    #[arg(
        help_heading = "Baseline",
        long,
        default_value_t = 0.0,
        value_name = "SCORE",
        requires = "baseline"
    )]
    pub(crate) tolerance: f64,
    /// With --baseline: fail on any regression, or only on one a paired test finds
    /// significant (p < 0.05).
    #[arg(help_heading = "Baseline", long, value_enum, default_value_t = FailOn::Any, requires = "baseline")]
    pub(crate) fail_on: FailOn,
}

/// Where the baseline is, found before anything is graded (so a typo costs nothing).
#[derive(Debug)]
pub(crate) enum Source {
    /// A saved run of the workspace.
    Run(Box<Recording>),
    /// The workspace's newest finished run like this one, found once this one is made.
    Latest(PathBuf),
    /// A results file.
    File(PathBuf),
}

impl BaselineArgs {
    /// No baseline (a command that grades with none, like `pairs`).
    pub(crate) fn none() -> Self {
        Self {
            baseline: None,
            tolerance: 0.0,
            fail_on: FailOn::Any,
        }
    }

    /// The baseline asked for; a run is looked up now.
    pub(crate) fn source(&self, workspace: Option<&Path>) -> Result<Option<Source>, CliError> {
        let Some(spec) = self.baseline.as_deref() else {
            return Ok(None);
        };
        let options = self.options();
        options.check()?;
        let path = Path::new(spec);
        if path.is_file() {
            // Read once now, so a file that is not results costs no run.
            crate::formats::results_read::results_as_run(path, None)?;
            return Ok(Some(Source::File(path.to_path_buf())));
        }
        let ws = super::workspace(workspace).map_err(|e| {
            CliError::input(format!(
                "--baseline {spec}: no such file, and no workspace to find a run in ({})",
                e.message
            ))
        })?;
        if spec == "latest" {
            return Ok(Some(Source::Latest(ws.runs_dir())));
        }
        match Recording::open(&ws.runs_dir(), spec) {
            Ok(run) => Ok(Some(Source::Run(Box::new(run)))),
            Err(e) => Err(CliError::input(format!(
                "--baseline {spec}: no such file, and {e}; give a results file `grade --format jsonl` wrote, a saved run, or `latest`"
            ))),
        }
    }

    fn options(&self) -> GateOptions {
        GateOptions {
            top: 20,
            tolerance: self.tolerance,
            fail_on: self.fail_on,
        }
    }
}

/// A home for runs kept only while they are compared (removed when dropped).
pub(crate) struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    pub(crate) fn new() -> Result<Self, CliError> {
        let dir = tempfile::Builder::new()
            .prefix("rubricate-baseline-")
            .tempdir()
            .map_err(|e| CliError::input(format!("cannot make a temporary folder: {e}")))?;
        Ok(Self { dir })
    }

    /// Runs recorded here; datasets are recorded by their path from the current folder.
    pub(crate) fn home(&self) -> RunsHome {
        RunsHome {
            runs_dir: self.dir.path().join("runs"),
            root: std::env::current_dir().unwrap_or_else(|_| ".".into()),
        }
    }
}

/// The run `current` (just graded from `dataset` with `rubric`) against the baseline; a
/// results file is kept as a run in `scratch` while it is compared.
pub(crate) fn compare(
    args: &BaselineArgs,
    source: Source,
    current: &Recording,
    dataset: &Path,
    rubric: Option<&LoadedRubric>,
    scratch: &Scratch,
) -> Result<super::gates::Baseline, CliError> {
    let baseline = match source {
        Source::Run(r) => *r,
        Source::Latest(runs) => latest_like(&runs, current)?,
        Source::File(path) => {
            let results =
                crate::formats::results_read::results_as_run(&path, rubric.map(|r| &*r.rubric))?;
            let home = scratch.home();
            let name = format!("baseline {}", path.display());
            let done = crate::run::import::import(&home, &results, dataset, Some(&name), rubric)
                .map_err(|e| CliError::input(format!("--baseline {}: {e}", path.display())))?;
            if !done.unmatched_items.is_empty() {
                eprintln!(
                    "note: the baseline has {} items this dataset does not; compared on the items both have",
                    done.unmatched_items.len()
                );
            }
            Recording::open(&home.runs_dir, &done.run_id)?
        }
    };
    against_baseline(&baseline, current, &args.options())
}

/// The newest finished run other than `current` with its rubric and dataset.
fn latest_like(runs: &Path, current: &Recording) -> Result<Recording, CliError> {
    let m = &current.manifest;
    let newest = crate::store::runs::list_runs(runs)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|r| {
            r.id != m.id
                && r.rubric_id == m.rubric_id
                && r.dataset.hash == m.dataset.hash
                && r.state().is_finished()
        })
        .max_by(|x, y| x.started_at.cmp(&y.started_at));
    match newest {
        Some(r) => Ok(Recording::open(runs, &r.id)?),
        None => Err(CliError::input(format!(
            "--baseline latest: no finished run of rubric '{}' over this dataset in the workspace; save one first (`grade --save`)",
            m.rubric_id
        ))),
    }
}
