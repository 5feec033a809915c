//! `rubricate labels`: human labels per dataset and annotator, kept in append-only journals
//! (`labels/<dataset>/<annotator>.jsonl`). Every label is synced to disk before it is
//! reported saved.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::labels_export::{export_autorubric, export_csv, list};
use super::labels_pairs::PairCandidates;
use super::{CliError, exit};
use crate::formats::dataset::{ReadOptions, open_dataset};
use crate::model::parse_verdict_text;
use crate::model::{Rubric, Verdict};
use crate::store::labels::{self, Journal, Op, dataset_key};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum LabelsAction {
    /// Datasets with labels, and each annotator's count.
    List,
    /// Label cells: `ITEM CRITERION VERDICT`, or `--stdin` for one `ITEM CRITERION VERDICT
    /// [NOTE…]` per line (each answered `saved N` once it is on disk).
    Set {
        #[command(flatten)]
        who: Who,
        /// The rubric the verdicts are checked against (and recorded with).
        #[arg(long, short)]
        rubric: Option<String>,
        #[arg(long)]
        stdin: bool,
        #[arg(long)]
        note: Option<String>,
        /// ITEM CRITERION VERDICT
        cell: Vec<String>,
    },
    /// Takes back the label event with this number (a new event; nothing is erased).
    Undo {
        #[command(flatten)]
        who: Who,
        seq: u64,
    },
    /// Reads labels: an autorubric-style dataset whose items carry `ground_truth` (needs the
    /// rubric for criterion order), or a CSV with columns item,criterion,verdict[,note].
    Import {
        #[command(flatten)]
        who: Who,
        file: PathBuf,
        #[arg(long, short)]
        rubric: Option<String>,
    },
    /// Writes the current labels as CSV (item,criterion,verdict,annotator,note,time), or
    /// as the dataset with `ground_truth` lists (`--as autorubric`, needs --rubric).
    Export {
        /// The dataset file the labels belong to.
        #[arg(long)]
        dataset: PathBuf,
        /// One annotator (default: all, CSV only).
        #[arg(long)]
        annotator: Option<String>,
        #[arg(long = "as", value_enum, default_value_t = ExportAs::Csv)]
        export_as: ExportAs,
        #[arg(long, short)]
        rubric: Option<String>,
        #[arg(long, short)]
        out: Option<PathBuf>,
    },
    /// Rewrites a journal with only its current labels (atomically).
    Compact {
        #[command(flatten)]
        who: Who,
    },
    /// The items to label next: where the judges of the dataset's runs disagree, abstain
    /// or fail first, stratified over criteria and verdicts; and per criterion, κ's
    /// interval now and about how many more labels reach the target.
    Next {
        #[command(flatten)]
        who: Who,
        /// How many items to list.
        #[arg(long, short, default_value_t = 20)]
        n: usize,
        /// The κ interval half-width to reach.
        #[arg(long, default_value_t = crate::run::label_next::DEFAULT_TARGET)]
        target: f64,
        /// Only these runs (two or more; id, name or prefix): the items that would tell
        /// candidates apart (`calibrate`'s, or `align`'s over the same items) come first.
        #[arg(long, value_name = "RUN")]
        between: Vec<String>,
        #[arg(long, value_enum, default_value_t = super::metrics::MetricsFormat::Table)]
        format: super::metrics::MetricsFormat,
    },
    /// Assigns the dataset's items among annotators, a share of them to two people (each
    /// pair in turn) so people can be compared; the queues and `labels next` keep to each
    /// annotator's items.
    Assign {
        #[command(flatten)]
        dataset: PeopleArgs,
        /// Who labels: `--annotators alice,bob,carol`.
        #[arg(long, value_delimiter = ',', required = true)]
        annotators: Vec<String>,
        /// The share of items given to two annotators.
        #[arg(long, default_value_t = 0.2)]
        overlap: f64,
        /// The shuffle's seed (the same seed, the same assignment).
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// People against people: per criterion κ for every pair of annotators on the items
    /// both labelled and Krippendorff's α over all of them, beside the latest run's judge
    /// against each annotator (and against the adjudicated labels).
    Agreement {
        #[command(flatten)]
        dataset: PeopleArgs,
        /// Bootstrap resamples for 95 % intervals (0: none).
        #[arg(long, default_value_t = 1000)]
        bootstrap: usize,
        #[arg(long, value_enum, default_value_t = super::metrics::MetricsFormat::Table)]
        format: super::metrics::MetricsFormat,
    },
}

#[derive(Debug, clap::Args)]
pub(crate) struct PeopleArgs {
    /// The dataset file the labels belong to.
    #[arg(long)]
    pub(crate) dataset: PathBuf,
}

#[derive(Debug, clap::Args)]
pub(crate) struct Who {
    /// The dataset file the labels belong to (its name keys the journal).
    #[arg(long)]
    pub(crate) dataset: PathBuf,
    /// Who labels (default: `$RUBRICATE_ANNOTATOR`, else `$USER`).
    #[arg(long)]
    pub(crate) annotator: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ExportAs {
    Csv,
    Autorubric,
}

fn annotator(who: &Who) -> Result<String, CliError> {
    who.annotator
        .clone()
        .or_else(|| std::env::var("RUBRICATE_ANNOTATOR").ok())
        .or_else(|| std::env::var("USER").ok())
        .filter(|a| !a.is_empty())
        .ok_or_else(|| {
            CliError::input("who is labelling? pass --annotator NAME (or set RUBRICATE_ANNOTATOR)")
        })
}

pub(crate) fn run(action: &LabelsAction, ws_flag: Option<&Path>) -> Result<u8, CliError> {
    let ws = super::workspace(ws_flag)?;
    let dir = ws.labels_dir();
    match action {
        LabelsAction::List => list(&dir),
        LabelsAction::Assign {
            dataset,
            annotators,
            overlap,
            seed,
        } => super::people::assign(&ws, &dataset.dataset, annotators, *overlap, *seed),
        LabelsAction::Agreement {
            dataset,
            bootstrap,
            format,
        } => super::people::agreement(&ws, &dataset.dataset, *bootstrap, *format),
        LabelsAction::Next {
            who,
            n,
            target,
            between,
            format,
        } => super::label_next::next(
            &ws,
            // Its runs are found by the file: a name is looked up as `calibrate` does.
            &super::calibrate::dataset_path(&ws, &who.dataset.to_string_lossy())?,
            &annotator(who)?,
            *n,
            *target,
            between,
            *format,
        ),
        LabelsAction::Set {
            who,
            rubric,
            stdin,
            note,
            cell,
        } => {
            let rubric = rubric
                .as_deref()
                .map(|r| super::rubric_arg::load(r, None, Some(&ws.root)))
                .transpose()?;
            let mut journal = Journal::open(&dir, &dataset_key(&who.dataset), &annotator(who)?)?;
            let mut against = Against::new(rubric.as_ref().map(|l| &*l.rubric), &who.dataset);
            if *stdin {
                return set_from_stdin(&mut journal, against);
            }
            let [item, criterion, verdict] = cell.as_slice() else {
                return Err(CliError::input("give ITEM CRITERION VERDICT, or --stdin"));
            };
            let seq = set(
                &mut journal,
                &mut against,
                item,
                criterion,
                verdict,
                note.as_deref().unwrap_or(""),
            )?;
            outln!("saved {seq} in {}", journal.path().display());
            Ok(exit::OK)
        }
        LabelsAction::Undo { who, seq } => {
            let mut journal = Journal::open(&dir, &dataset_key(&who.dataset), &annotator(who)?)?;
            let (events, _) = labels::read(journal.path())?;
            if !events
                .iter()
                .any(|e| e.seq == *seq && matches!(e.op, Op::Set { .. }))
            {
                return Err(CliError::input(format!(
                    "{}: no label event {seq} to undo",
                    journal.path().display()
                )));
            }
            let n = journal.append(Op::Undo { undoes: *seq })?;
            outln!("saved {n}: undoes {seq}");
            Ok(exit::OK)
        }
        LabelsAction::Import { who, file, rubric } => {
            let rubric = rubric
                .as_deref()
                .map(|r| super::rubric_arg::load(r, None, Some(&ws.root)))
                .transpose()?;
            let mut journal = Journal::open(&dir, &dataset_key(&who.dataset), &annotator(who)?)?;
            let imported = import(
                &mut journal,
                file,
                Against::new(rubric.as_ref().map(|l| &*l.rubric), &who.dataset),
            );
            // One sync for the whole import (what a failed import wrote before its error
            // stays, synced too: the error names the line it stopped at).
            journal.sync()?;
            let n = imported?;
            outln!("imported {n} labels into {}", journal.path().display());
            Ok(exit::OK)
        }
        LabelsAction::Export {
            dataset,
            annotator,
            export_as,
            rubric,
            out,
        } => {
            let text = match export_as {
                ExportAs::Csv => export_csv(&dir, dataset, annotator.as_deref())?,
                ExportAs::Autorubric => {
                    let Some(r) = rubric else {
                        return Err(CliError::input(
                            "--as autorubric needs --rubric (its criteria give the ground_truth order)",
                        ));
                    };
                    let Some(a) = annotator else {
                        return Err(CliError::input(
                            "--as autorubric writes one annotator's labels: pass --annotator NAME",
                        ));
                    };
                    export_autorubric(
                        &dir,
                        dataset,
                        a,
                        &super::rubric_arg::load(r, None, Some(&ws.root))?.rubric,
                    )?
                }
            };
            match out {
                Some(path) => crate::core::atomic::AtomicFile::write_whole(path, text.as_bytes())
                    .map_err(|e| CliError::input(format!("{}: {e}", path.display())))?,
                None => out!("{text}"),
            }
            Ok(exit::OK)
        }
        LabelsAction::Compact { who } => {
            let mut journal = Journal::open(&dir, &dataset_key(&who.dataset), &annotator(who)?)?;
            let kept = journal.compact()?;
            outln!("{}: {kept} current labels kept", journal.path().display());
            Ok(exit::OK)
        }
    }
}

/// Appends one label, checked against the rubric when there is one.
/// The most labels one sync acknowledges: a steady stream is acknowledged at least this
/// often.
const GROUP_COMMIT: usize = 4096;

/// `labels set --stdin`: one `ITEM CRITERION VERDICT [NOTE…]` a line, each acknowledged
/// (`saved SEQ`) once it is on disk. Group commit: the labels that arrived together (whole
/// lines already read in) are written and then synced once, so a fast producer is not held
/// to one sync a label, and a slow one (a person, a script waiting for each answer) gets
/// each acknowledged at once. A bad line stops the input, after what came before it is
/// synced and acknowledged.
fn set_from_stdin(journal: &mut Journal, mut against: Against<'_>) -> Result<u8, CliError> {
    use std::io::BufRead as _;
    let mut input = std::io::BufReader::with_capacity(256 * 1024, std::io::stdin().lock());
    let mut out = std::io::BufWriter::new(super::out::Stdout);
    let mut pending: Vec<u64> = Vec::new();
    let mut line = String::new();
    let mut n = 0usize;
    loop {
        line.clear();
        let step = match input.read_line(&mut line) {
            Ok(0) => Ok(true),
            Ok(_) => {
                n += 1;
                stdin_line(journal, &mut against, &line, n).map(|seq| {
                    pending.extend(seq);
                    false
                })
            }
            Err(e) => Err(CliError::input(format!("stdin line {}: {e}", n + 1))),
        };
        let more_waiting = input.buffer().contains(&b'\n');
        if !matches!(step, Ok(false)) || !more_waiting || pending.len() >= GROUP_COMMIT {
            journal.sync()?;
            // Acknowledged only now: the events are on disk.
            for seq in pending.drain(..) {
                let _ = writeln!(out, "saved {seq}");
            }
            let _ = out.flush();
        }
        match step {
            Ok(true) => return Ok(exit::OK),
            Ok(false) => {}
            Err(e) => return Err(e),
        }
    }
}

/// One line of `labels set --stdin`, written (not yet synced): its sequence number, or
/// none for a blank line.
fn stdin_line(
    journal: &mut Journal,
    against: &mut Against<'_>,
    line: &str,
    n: usize,
) -> Result<Option<u64>, CliError> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.is_empty() {
        return Ok(None);
    }
    let [item, criterion, verdict, rest @ ..] = words.as_slice() else {
        return Err(CliError::input(format!(
            "stdin line {n}: expected ITEM CRITERION VERDICT [NOTE…], found {:?}",
            line.trim_end_matches(['\n', '\r'])
        )));
    };
    let op = label_op(against, item, criterion, verdict, &rest.join(" "))
        .map_err(|e| CliError::input(format!("stdin line {n}: {}", e.message)))?;
    Ok(Some(journal.write(op)?))
}

fn set(
    journal: &mut Journal,
    against: &mut Against<'_>,
    item: &str,
    criterion: &str,
    verdict: &str,
    note: &str,
) -> Result<u64, CliError> {
    Ok(journal.append(label_op(against, item, criterion, verdict, note)?)?)
}

/// What a label is checked against: the rubric (when given) and, for a pairwise one, the
/// dataset's candidates.
struct Against<'a> {
    rubric: Option<&'a Rubric>,
    dataset: &'a Path,
    pairs: PairCandidates,
}

impl<'a> Against<'a> {
    fn new(rubric: Option<&'a Rubric>, dataset: &'a Path) -> Self {
        Self {
            rubric,
            dataset,
            pairs: PairCandidates::default(),
        }
    }
}

/// The event that labels one cell, its verdict read as the rubric's criterion reads it (a
/// pairwise rubric's as a preference: the better candidate's id, or tie).
fn label_op(
    against: &mut Against<'_>,
    item: &str,
    criterion: &str,
    verdict: &str,
    note: &str,
) -> Result<Op, CliError> {
    let rubric = against.rubric;
    let value = match rubric {
        Some(r) if r.mode.is_pairwise() => {
            Value::String(
                against
                    .pairs
                    .preference(against.dataset, r, item, criterion, verdict)?,
            )
        }
        Some(r) => {
            let c = r
                .criteria
                .iter()
                .find(|c| c.id == criterion)
                .ok_or_else(|| {
                    CliError::input(format!("rubric '{}' has no criterion '{criterion}'", r.id))
                })?;
            let v = parse_verdict_text(c, verdict).map_err(CliError::input)?;
            verdict_json(&v)
        }
        None => match verdict.parse::<f64>() {
            Ok(x) if x.is_finite() => serde_json::json!(x),
            _ => Value::String(
                Verdict::parse_binary(verdict)
                    .map_or_else(|| verdict.to_owned(), |v| v.to_string()),
            ),
        },
    };
    Ok(Op::Set {
        item: item.to_owned(),
        criterion: criterion.to_owned(),
        verdict: value,
        note: note.to_owned(),
        rubric: rubric.map(|r| r.id.clone()).unwrap_or_default(),
        rubric_version: rubric.map(|r| r.version.clone()).unwrap_or_default(),
    })
}

/// A verdict as a label stores it: the word, label or level id; a number for scales.
fn verdict_json(v: &Verdict) -> Value {
    v.label_value()
}

/// Imports a label CSV (item,criterion,verdict[,note]) or a dataset with ground truth.
/// Writes the labels of `file` to the journal (the caller syncs once).
fn import(journal: &mut Journal, file: &Path, mut against: Against<'_>) -> Result<usize, CliError> {
    let rubric = against.rubric;
    let is_label_csv = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
        && std::fs::read_to_string(file)
            .ok()
            .and_then(|t| {
                t.lines()
                    .next()
                    .map(|h| h.split(',').any(|c| c.trim() == "criterion"))
            })
            .unwrap_or(false);
    if is_label_csv {
        let mut reader = csv::Reader::from_path(file)
            .map_err(|e| CliError::input(format!("{}: {e}", file.display())))?;
        let headers = reader
            .headers()
            .map_err(|e| CliError::input(format!("{}: {e}", file.display())))?
            .clone();
        let col = |name: &str| headers.iter().position(|h| h.trim() == name);
        let (Some(ci), Some(cc), Some(cv)) = (col("item"), col("criterion"), col("verdict")) else {
            return Err(CliError::input(format!(
                "{}: a label CSV needs columns item, criterion, verdict",
                file.display()
            )));
        };
        let cn = col("note");
        let mut n = 0;
        for (line, record) in reader.records().enumerate() {
            let record = record.map_err(|e| CliError::input(format!("{}: {e}", file.display())))?;
            let field = |i: usize| record.get(i).unwrap_or_default();
            let op = label_op(
                &mut against,
                field(ci),
                field(cc),
                field(cv),
                cn.map_or("", field),
            )
            .map_err(|e| {
                CliError::input(format!("{}:{}: {}", file.display(), line + 2, e.message))
            })?;
            journal.write(op)?;
            n += 1;
        }
        return Ok(n);
    }
    let dataset = open_dataset(file, ReadOptions::default())?;
    let mut n = 0;
    for item in dataset.items {
        let item = item.map_err(|d| CliError::input(d.to_string()))?;
        let Some(gt) = &item.ground_truth else {
            continue;
        };
        let Some(r) = item.rubric.as_deref().or(rubric) else {
            return Err(CliError::input(format!(
                "item '{}' has ground truth but no rubric to order it; pass --rubric",
                item.id
            )));
        };
        let verdicts = gt
            .resolve(r)
            .map_err(|m| CliError::input(format!("{}: item '{}': {m}", item.origin, item.id)))?;
        for (c, v) in r.criteria.iter().zip(verdicts) {
            if let Some(v) = v {
                journal.write(Op::Set {
                    item: item.id.clone(),
                    criterion: c.id.clone(),
                    verdict: verdict_json(&v),
                    note: String::new(),
                    rubric: r.id.clone(),
                    rubric_version: r.version.clone(),
                })?;
                n += 1;
            }
        }
    }
    Ok(n)
}
