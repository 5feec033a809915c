//! `rubricate pairs RUN_A RUN_B`: two saved runs' answers joined by item id into a pair
//! dataset, written with `--out FILE`, and graded with `--rubric R` (a pairwise rubric) as
//! `grade` grades any dataset. Ids only one run graded are reported on stderr.

use std::path::PathBuf;

use super::{CliError, CommonArgs, JudgeArgs, OutputFormat};
use crate::run::join_pairs::{Joined, join};

/// `pairs`' flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct PairsArgs {
    /// The first run (id, name or prefix): its answers are the first candidate.
    pub(crate) run_a: String,
    /// The second run: its answers are the second candidate.
    pub(crate) run_b: String,
    /// A rubric in `mode: pairwise` to grade the pairs with.
    #[arg(long, short)]
    pub(crate) rubric: Option<String>,
    /// Write the pair dataset (JSONL) to FILE (replaced atomically); without --rubric,
    /// that is all `pairs` does.
    #[arg(long, short, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Output format of the graded results (default: table on a terminal, else jsonl).
    #[arg(long, value_enum)]
    pub(crate) format: Option<OutputFormat>,
    /// Record the graded run in the workspace (needs --out: a saved run reads its dataset
    /// again when it is resumed or shown).
    #[arg(long, requires = "out")]
    pub(crate) save: bool,
    /// Judge calls in flight at once (default 16).
    #[arg(long)]
    pub(crate) concurrency: Option<usize>,
    #[command(flatten)]
    pub(crate) judge: Box<JudgeArgs>,
}

pub(crate) fn run(args: &PairsArgs, workspace: Option<&std::path::Path>) -> Result<u8, CliError> {
    if args.rubric.is_none() && args.out.is_none() {
        return Err(CliError::input(
            "give --rubric RUBRIC (a pairwise rubric) to grade the pairs, or --out FILE to write them as a pair dataset",
        ));
    }
    let ws = super::workspace(workspace)?;
    // Graded without --out: the pair dataset lives as long as this command.
    let (dataset, _scratch) = if let Some(out) = &args.out {
        (out.clone(), None)
    } else {
        let dir = tempfile::tempdir().map_err(|e| {
            CliError::input(format!("cannot make a temporary folder for the pairs: {e}"))
        })?;
        (dir.path().join("pairs.jsonl"), Some(dir))
    };
    let joined = join(&ws.runs_dir(), &args.run_a, &args.run_b, &dataset)?;
    say(&joined, args.out.as_deref());
    if joined.pairs == 0 {
        return Err(CliError::input(format!(
            "runs {} and {} graded no item id in common; nothing to compare",
            args.run_a, args.run_b
        )));
    }
    let Some(rubric) = &args.rubric else {
        return Ok(super::exit::OK);
    };
    let common = CommonArgs {
        dataset,
        rubric: Some(rubric.clone()),
        from: None,
        format: args.format,
        out: None,
        fail_under: None,
        gate: Vec::new(),
        max_item_mb: 16,
    };
    super::grade::run(
        &common,
        &args.judge,
        &super::grade::GradeOptions {
            grade: crate::run::GradeSettings {
                concurrency: args.concurrency,
                ..crate::run::GradeSettings::default()
            },
            save: args.save.then_some(super::grade::SaveAs { name: None }),
            batch: false,
            subset: super::grade::SubsetArgs::default(),
            baseline: super::baseline::BaselineArgs::none(),
        },
        workspace,
    )
}

/// What was joined, and the ids left out, on stderr.
fn say(j: &Joined, out: Option<&std::path::Path>) {
    let listed = |ids: &[String]| {
        let mut s: Vec<String> = ids.iter().take(10).map(|i| format!("'{i}'")).collect();
        if ids.len() > 10 {
            s.push(format!("and {} more", ids.len() - 10));
        }
        s.join(", ")
    };
    eprintln!(
        "pairs: {} item{} graded by both {} and {}{}",
        j.pairs,
        if j.pairs == 1 { "" } else { "s" },
        j.systems[0],
        j.systems[1],
        out.map(|p| format!(", written to {}", p.display()))
            .unwrap_or_default()
    );
    for (who, ids) in [(&j.systems[0], &j.only_a), (&j.systems[1], &j.only_b)] {
        if !ids.is_empty() {
            eprintln!(
                "pairs: {} only in {who} (left out): {}",
                crate::engine::checks::plural(ids.len(), "item"),
                listed(ids)
            );
        }
    }
}
