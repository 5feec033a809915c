//! GitHub Actions: workflow-command annotations (`::error file=…,line=…::`) on the dataset
//! line of each failed item and for each failed gate, and the Markdown report appended to
//! the job's summary (`$GITHUB_STEP_SUMMARY`).
//!
//! It is on with `--format github` (annotations on stdout, where nothing else is written)
//! and whenever `GITHUB_ACTIONS=true` (then on stderr, so `--format jsonl` output stays
//! clean — the runner reads workflow commands from both).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::model::{Evaluation, Rubric};
use crate::run::Summary;

use super::gates::Findings;
use super::markdown::{MdReport, penalty_ids, what_cost};
use super::{CliError, OutputFormat};

/// Failed items annotated at most: GitHub shows 10 error annotations per step and 50 per
/// job; the lowest-scoring are kept, and the summary lists the rest.
const ANNOTATIONS: usize = 50;

/// Where the annotations go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

/// An item annotation waiting for the run's end (only the lowest-scoring are written).
#[derive(Debug)]
struct Pending {
    score: f64,
    index: usize,
    line: String,
}

/// The GitHub side of a run, fed each item as it finishes.
#[derive(Debug)]
pub(crate) struct Github {
    stream: Stream,
    md: MdReport,
    penalties: Vec<String>,
    /// Paths are written relative to this (the repository's checkout).
    root: Option<PathBuf>,
    /// The lowest-scoring failed items, at most [`ANNOTATIONS`], lowest first.
    worst: Vec<Pending>,
    failed: usize,
    summary_file: Option<PathBuf>,
    /// The dataset graded, to find regressed items' lines.
    dataset: Option<PathBuf>,
}

impl Github {
    /// `Some` under GitHub Actions or with `--format github`.
    pub(crate) fn from_env(
        format: OutputFormat,
        suite: &str,
        rubric: Option<&Rubric>,
    ) -> Option<Self> {
        let actions = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
        let stream = match (format, actions) {
            (OutputFormat::Github, _) => Stream::Stdout,
            (_, true) => Stream::Stderr,
            (_, false) => return None,
        };
        let root = std::env::var_os("GITHUB_WORKSPACE")
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok());
        Some(Self {
            stream,
            md: MdReport::new(suite, rubric),
            penalties: penalty_ids(rubric),
            root,
            worst: Vec::new(),
            failed: 0,
            summary_file: std::env::var_os("GITHUB_STEP_SUMMARY")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            dataset: None,
        })
    }

    /// The dataset graded: regressed items are annotated on their lines.
    #[must_use]
    pub(crate) fn of_dataset(mut self, dataset: &Path) -> Self {
        self.dataset = Some(dataset.to_path_buf());
        self
    }

    /// One graded item, read at `origin` (`file:line`).
    pub(crate) fn add(&mut self, index: usize, origin: &str, e: &Evaluation) {
        self.md.add(e);
        if e.passed {
            return;
        }
        self.failed += 1;
        let score = e.score.unwrap_or(-1.0);
        if self.worst.len() == ANNOTATIONS && self.worst.last().is_some_and(|w| w.score <= score) {
            return;
        }
        let line = self.item_annotation(origin, e);
        let at = self.worst.partition_point(|w| w.score <= score);
        self.worst.insert(at, Pending { score, index, line });
        self.worst.truncate(ANNOTATIONS);
    }

    fn item_annotation(&self, origin: &str, e: &Evaluation) -> String {
        let (file, line) = split_origin(origin);
        let file = self.relative(file);
        let score = e.score.map_or_else(
            || "not scored".into(),
            |s| format!("score {:.1}%", s * 100.0),
        );
        let why: Vec<String> = what_cost(e, &self.penalties)
            .take(5)
            .map(|(id, why)| format!("{id}: {}", crate::core::text::clipped(&why, 300)))
            .collect();
        let line = line.map(|l| format!(",line={l}")).unwrap_or_default();
        let props = format!(
            "file={}{line},title={}",
            property(&file),
            property(&format!(
                "rubricate: item {} did not pass ({score})",
                e.target_id
            ))
        );
        let message = if why.is_empty() {
            e.feedback.clone()
        } else {
            why.join("\n")
        };
        format!("{props}::{}", data(&message))
    }

    /// `file` as the repository names it: relative to the checkout when under it.
    fn relative(&self, file: &str) -> String {
        let path = Path::new(file);
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            match std::env::current_dir() {
                Ok(cwd) => cwd.join(path),
                Err(_) => return file.to_owned(),
            }
        };
        self.root
            .as_deref()
            .and_then(|root| absolute.strip_prefix(root).ok())
            .map_or_else(|| file.to_owned(), |p| p.display().to_string())
    }

    /// Writes the annotations (items in file order, then the failed gates and the
    /// regression) and appends the Markdown report to the job summary. Failed items are
    /// errors when the job fails, else warnings (a job its gates pass shows no red).
    pub(crate) fn finish(
        mut self,
        summary: &Summary,
        findings: &Findings,
        job_fails: bool,
    ) -> Result<(), CliError> {
        self.worst.sort_by_key(|w| w.index);
        let level = if job_fails { "error" } else { "warning" };
        let mut lines: Vec<String> = self
            .worst
            .iter()
            .map(|w| format!("::{level} {}", w.line))
            .collect();
        if self.failed > self.worst.len() {
            lines.push(format!(
                "::notice title=rubricate::{}",
                data(&format!(
                    "{} items did not pass; the {} lowest-scoring are annotated (the job summary lists the worst)",
                    self.failed,
                    self.worst.len()
                ))
            ));
        }
        for g in findings.gates.iter().filter(|g| !g.held) {
            lines.push(format!(
                "::error title={}::{}",
                property(&format!("rubricate: gate {} failed", g.gate)),
                data(&format!(
                    "{} is {} ({}; set by {})",
                    g.gate,
                    g.value.map_or_else(|| "n/a".into(), |v| format!("{v:.3}")),
                    g.basis,
                    g.source.label()
                ))
            ));
        }
        if let Some(b) = findings.baseline.as_ref().filter(|b| b.regressed) {
            lines.push(format!(
                "::error title={}::{}",
                property("rubricate: regression against the baseline"),
                data(&b.text)
            ));
            lines.extend(self.regressed_lines(&b.items));
        }
        let mut text = lines.join("\n");
        if !text.is_empty() {
            text.push('\n');
        }
        match self.stream {
            Stream::Stdout => out!("{text}"),
            Stream::Stderr => eprint!("{text}"),
        }
        let md = self.md.render(summary, findings);
        match &self.summary_file {
            Some(path) => append(path, &md),
            None if self.stream == Stream::Stdout => {
                out!("{md}");
                Ok(())
            }
            None => Ok(()),
        }
    }
}

impl Github {
    /// An annotation on the dataset line of each regressed item: the dataset is read
    /// again, only until every one is found (memory does not grow with the run).
    fn regressed_lines(&self, items: &[(String, f64, f64)]) -> Vec<String> {
        let Some(dataset) = &self.dataset else {
            return Vec::new();
        };
        let mut wanted: std::collections::HashMap<&str, (f64, f64)> = items
            .iter()
            .map(|(id, a, b)| (id.as_str(), (*a, *b)))
            .collect();
        let Ok(ds) = crate::formats::dataset::open_dataset(
            dataset,
            crate::formats::dataset::ReadOptions::default(),
        ) else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        for item in ds.items {
            if wanted.is_empty() {
                break;
            }
            let Ok(item) = item else { continue };
            let Some((a, b)) = wanted.remove(item.id.as_str()) else {
                continue;
            };
            let (file, line) = split_origin(&item.origin);
            let line = line.map(|l| format!(",line={l}")).unwrap_or_default();
            lines.push(format!(
                "::error file={}{line},title={}::{}",
                property(&self.relative(file)),
                property(&format!("rubricate: item {} regressed", item.id)),
                data(&format!(
                    "score {:.1}% in the baseline, {:.1}% now",
                    a * 100.0,
                    b * 100.0
                ))
            ));
        }
        lines
    }
}

/// Appends the report to the job summary (GitHub reads the file when the step ends).
fn append(path: &Path, md: &str) -> Result<(), CliError> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| {
            CliError::input(format!(
                "{} ($GITHUB_STEP_SUMMARY): cannot open: {e}",
                path.display()
            ))
        })?;
    // One write: two steps appending at once do not interleave within a report.
    let mut whole = String::with_capacity(md.len() + 1);
    whole.push_str(md);
    whole.push('\n');
    file.write_all(whole.as_bytes()).map_err(|e| {
        CliError::input(format!(
            "{} ($GITHUB_STEP_SUMMARY): cannot write: {e}",
            path.display()
        ))
    })
}

/// `data.jsonl:12` → (`data.jsonl`, 12); `data.json:3:5` → (`data.json`, 3); `file item 4`
/// → (`file item 4`, none).
fn split_origin(origin: &str) -> (&str, Option<u64>) {
    let number = |s: &str| s.parse::<u64>().ok();
    match origin.rsplit_once(':') {
        Some((rest, last)) if number(last).is_some() => match rest.rsplit_once(':') {
            Some((file, line)) if number(line).is_some() && !file.is_empty() => {
                (file, number(line))
            }
            _ => (rest, number(last)),
        },
        _ => (origin, None),
    }
}

/// A workflow command's message: `%`, CR and LF escaped.
fn data(text: &str) -> String {
    crate::core::text::visible(text)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: as [`data`], and `:` and `,` too.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_give_the_file_and_line() {
        assert_eq!(
            split_origin("evals/d.jsonl:12"),
            ("evals/d.jsonl", Some(12))
        );
        assert_eq!(split_origin("d.json:3:5"), ("d.json", Some(3)));
        assert_eq!(split_origin("d.csv item 4"), ("d.csv item 4", None));
        assert_eq!(split_origin("C:12"), ("C", Some(12)));
    }

    #[test]
    fn commands_escape_what_would_end_them() {
        assert_eq!(data("50% off\nnow"), "50%25 off%0Anow");
        assert_eq!(property("a: b, c"), "a%3A b%2C c");
    }
}
