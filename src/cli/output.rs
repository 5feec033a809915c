//! Writing evaluations as a table, JSON, JSONL, CSV or `JUnit` XML, streaming where the
//! format allows, and the run summary.

use crate::core::text::clipped;
use std::io::{self, Write};
use std::path::Path;

use serde_json::json;

use super::gates::Findings;
use super::style;
use super::{CliError, OutputFormat};
use crate::core::atomic::AtomicFile;
use crate::model::{Evaluation, Rubric};

pub(crate) use crate::run::Summary;

/// The summary line, coloured on a terminal that wants colour.
pub(crate) fn summary_line(s: &Summary, color: bool) -> String {
    use crate::run::Tone;
    s.line_styled(&|tone, text| match tone {
        Tone::Good => style::green(text, color),
        Tone::Bad => style::red(text, color),
        Tone::Warn => style::yellow(text, color),
    })
}

pub(crate) use crate::formats::results::item_json;
use crate::formats::results::{csv_header, csv_row, write_csv_row};

enum Dest {
    Stdout(io::BufWriter<super::out::Stdout>),
    File(AtomicFile),
}

impl Write for Dest {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Dest::Stdout(w) => w.write(buf),
            Dest::File(f) => f.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Dest::Stdout(w) => w.flush(),
            Dest::File(f) => f.flush(),
        }
    }
}

/// Receives evaluations in input order and writes them.
pub(crate) struct Sink {
    format: OutputFormat,
    dest: Dest,
    color: bool,
    /// The CSV's criterion and tag columns.
    csv: crate::formats::results::CsvColumns,
    penalties: Vec<String>,
    /// `JUnit` test cases, spooled to an unnamed temporary file until the counts for the
    /// suite's header are known (memory stays flat however long the run).
    junit: Option<io::BufWriter<std::fs::File>>,
    junit_failures: usize,
    junit_errors: usize,
    /// Items of a saved run still waiting for cells (`runs show` of an unfinished run).
    junit_skipped: usize,
    suite: String,
    first: bool,
    /// One item serialized at a time (JSON, JSONL), reused.
    scratch: Vec<u8>,
    /// Markdown: the report, built as items arrive.
    md: Option<super::markdown::MdReport>,
    pub(crate) summary: Summary,
    /// A pairwise run's rubric and its results so far.
    pairs: Option<(Rubric, crate::metrics::pairwise::PairTally)>,
}

/// What `JUnit` and Markdown name a run's suite: its rubric, else (items that bring their own
/// rubrics) the dataset's name — the same for `grade` and `runs show` of the run it saved,
/// wherever either was run from.
pub(crate) fn suite_name(
    rubric: Option<&crate::model::Rubric>,
    dataset: &std::path::Path,
) -> String {
    rubric.map_or_else(
        || crate::store::labels::dataset_key(dataset),
        |r| r.id.clone(),
    )
}

fn io_err(e: &io::Error) -> CliError {
    CliError::input(format!("cannot write results: {e}"))
}

impl Sink {
    /// `rubric` is the main rubric (its criteria become CSV columns); `suite` names the
    /// `JUnit` suite.
    pub(crate) fn open(
        format: OutputFormat,
        out: Option<&Path>,
        rubric: Option<&Rubric>,
        suite: &str,
    ) -> Result<Self, CliError> {
        Self::open_after("", format, out, rubric, suite)
    }

    /// [`Sink::open`], with `head` (text of the caller's: `runs show`'s lines naming the run)
    /// written first, into the same destination.
    pub(crate) fn open_after(
        head: &str,
        format: OutputFormat,
        out: Option<&Path>,
        rubric: Option<&Rubric>,
        suite: &str,
    ) -> Result<Self, CliError> {
        let penalties = super::markdown::penalty_ids(rubric);
        // `--out -` is stdout, as for most tools.
        let out = out.filter(|p| p.as_os_str() != "-");
        let dest = match out {
            Some(p) => Dest::File(
                AtomicFile::create(p)
                    .map_err(|e| CliError::input(format!("{}: cannot create: {e}", p.display())))?,
            ),
            None => Dest::Stdout(io::BufWriter::with_capacity(256 * 1024, super::out::Stdout)),
        };
        let color = out.is_none() && style::color_enabled(style::stdout_is_terminal());
        let junit = if format == OutputFormat::Junit {
            Some(io::BufWriter::new(tempfile::tempfile().map_err(|e| {
                CliError::input(format!(
                    "cannot make a temporary file for the JUnit report: {e}"
                ))
            })?))
        } else {
            None
        };
        let mut sink = Self {
            format,
            dest,
            color,
            csv: crate::formats::results::CsvColumns::of(rubric),
            penalties,
            junit,
            junit_failures: 0,
            junit_errors: 0,
            junit_skipped: 0,
            suite: suite.to_owned(),
            first: true,
            scratch: Vec::with_capacity(4096),
            md: (format == OutputFormat::Md).then(|| super::markdown::MdReport::new(suite, rubric)),
            summary: Summary::default(),
            pairs: rubric
                .and_then(|r| crate::metrics::pairwise::PairTally::of(r).map(|t| (r.clone(), t))),
        };
        sink.dest
            .write_all(head.as_bytes())
            .and_then(|()| sink.header())
            .map_err(|e| io_err(&e))?;
        Ok(sink)
    }

    fn header(&mut self) -> io::Result<()> {
        match self.format {
            OutputFormat::Json => self.dest.write_all(b"{\"items\": [\n"),
            OutputFormat::Csv => write_csv_row(&mut self.dest, &csv_header(&self.csv)),
            OutputFormat::Table => {
                let h = format!(
                    "{:<28} {:>7}  {:<6}  {}",
                    "ITEM", "SCORE", "RESULT", "NOTES"
                );
                writeln!(self.dest, "{}", style::bold(&h, self.color))
            }
            OutputFormat::Jsonl | OutputFormat::Junit | OutputFormat::Md | OutputFormat::Github => {
                Ok(())
            }
        }
    }

    pub(crate) fn write(&mut self, e: &Evaluation) -> Result<(), CliError> {
        self.summary.add(e);
        if let Some((rubric, tally)) = self.pairs.as_mut() {
            tally.add(rubric, &e.results);
        }
        self.write_item(e).map_err(|err| io_err(&err))
    }

    fn write_item(&mut self, e: &Evaluation) -> io::Result<()> {
        match self.format {
            // Each item is serialized into a reused buffer and written at once: serde_json
            // writes token by token, and a buffer's small writes cost more than a Vec's.
            OutputFormat::Jsonl => {
                self.scratch.clear();
                serde_json::to_writer(&mut self.scratch, &item_json(e))?;
                self.scratch.push(b'\n');
                self.dest.write_all(&self.scratch)
            }
            OutputFormat::Json => {
                self.scratch.clear();
                if !self.first {
                    self.scratch.extend_from_slice(b",\n");
                }
                self.first = false;
                serde_json::to_writer(&mut self.scratch, &item_json(e))?;
                self.dest.write_all(&self.scratch)
            }
            OutputFormat::Csv => write_csv_row(&mut self.dest, &csv_row(e, &self.csv)),
            OutputFormat::Md => {
                if let Some(md) = self.md.as_mut() {
                    md.add(e);
                }
                Ok(())
            }
            // The GitHub output (annotations, the job summary) is written by
            // `super::github`, which sees each item's origin.
            OutputFormat::Github => Ok(()),
            OutputFormat::Table => {
                let score = e
                    .score
                    .map_or_else(|| "n/a".into(), |s| format!("{:.1}%", s * 100.0));
                if !e.pending.is_empty() {
                    // A saved run's item still waiting for cells has not failed.
                    let result = format!(
                        "INCOMPLETE (still to come: {})",
                        clipped(&e.pending.join(", "), 60)
                    );
                    return writeln!(
                        self.dest,
                        "{:<28} {:>7}  {}",
                        clipped(&e.target_id, 28),
                        score,
                        style::yellow(&result, self.color)
                    );
                }
                let result = if e.passed {
                    style::green("PASS  ", self.color)
                } else {
                    style::red("FAIL  ", self.color)
                };
                let notes = table_notes(e, &self.penalties);
                writeln!(
                    self.dest,
                    "{:<28} {:>7}  {result}  {notes}",
                    clipped(&e.target_id, 28),
                    score
                )
            }
            OutputFormat::Junit => {
                let Some(spool) = self.junit.as_mut() else {
                    return Ok(());
                };
                let name = xml_escape(&e.target_id);
                write!(
                    spool,
                    "    <testcase classname=\"{}\" name=\"{name}\">",
                    xml_escape(&e.rubric_id)
                )?;
                if !e.pending.is_empty() {
                    // Not graded yet (an unfinished saved run): neither failed nor broken.
                    self.junit_skipped += 1;
                    write!(
                        spool,
                        "<skipped message=\"{}\"/>",
                        xml_escape(&format!("cells still to come: {}", e.pending.join(", ")))
                    )?;
                } else if e.incomplete {
                    self.junit_errors += 1;
                    write!(
                        spool,
                        "<error message=\"{}\">{}</error>",
                        xml_escape(&format!("{} criterion failures", e.failures)),
                        xml_escape(&e.feedback)
                    )?;
                } else if !e.passed {
                    self.junit_failures += 1;
                    let msg = e.score.map_or_else(
                        || "not scored".into(),
                        |s| format!("score {s:.4} did not pass"),
                    );
                    write!(
                        spool,
                        "<failure message=\"{}\">{}</failure>",
                        xml_escape(&msg),
                        xml_escape(&e.feedback)
                    )?;
                }
                spool.write_all(b"</testcase>\n")
            }
        }
    }

    /// Writes the closing part (with what the run's gates and baseline found) and commits
    /// the file. Returns the totals.
    pub(crate) fn finish(mut self, findings: &Findings) -> Result<Summary, CliError> {
        self.footer(findings).map_err(|e| io_err(&e))?;
        self.dest.flush().map_err(|e| io_err(&e))?;
        if let Dest::File(f) = self.dest {
            f.commit().map_err(|e| io_err(&e))?;
        }
        Ok(self.summary)
    }

    fn footer(&mut self, findings: &Findings) -> io::Result<()> {
        let s = &self.summary;
        let pairwise = self.pairs.as_ref().map(|(_, t)| t.report());
        match self.format {
            OutputFormat::Json => {
                let summary = json!({
                    "items": s.items,
                    "passed": s.passed,
                    // Items still waiting for cells (a saved run's) are incomplete, not failed.
                    "failed": s.items - s.passed - s.pending,
                    "incomplete": s.incomplete,
                    "pending": s.pending,
                    "mean_score": s.mean_score(),
                    "criterion_results": s.cells,
                    "criterion_failures": s.failed_cells,
                    "tags": s.tag_scores(1000),
                    "gates": findings.gates,
                    "baseline": findings.baseline.as_ref().map(|b| &b.json),
                    "pairwise": pairwise,
                });
                write!(self.dest, "\n], \"summary\": {summary}}}\n")
            }
            OutputFormat::Junit => {
                writeln!(self.dest, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
                let skipped = if self.junit_skipped > 0 {
                    format!(" skipped=\"{}\"", self.junit_skipped)
                } else {
                    String::new()
                };
                writeln!(
                    self.dest,
                    "<testsuites>\n  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\"{skipped}>",
                    xml_escape(&self.suite),
                    s.items,
                    self.junit_failures,
                    self.junit_errors
                )?;
                if let Some(spool) = self.junit.take() {
                    let mut file = spool.into_inner().map_err(io::IntoInnerError::into_error)?;
                    io::Seek::seek(&mut file, io::SeekFrom::Start(0))?;
                    io::copy(&mut file, &mut self.dest)?;
                }
                writeln!(self.dest, "  </testsuite>\n</testsuites>")
            }
            OutputFormat::Table => {
                if let Some(r) = &pairwise {
                    self.dest.write_all(super::pairs_out::table(r).as_bytes())?;
                }
                writeln!(self.dest, "\n{}", summary_line(s, self.color))?;
                match s.tags_line(1000) {
                    Some(tags) => writeln!(self.dest, "{}", crate::core::text::visible(&tags)),
                    None => Ok(()),
                }
            }
            OutputFormat::Md => match &self.md {
                Some(md) => {
                    self.dest.write_all(md.render(s, findings).as_bytes())?;
                    match &pairwise {
                        Some(r) => self
                            .dest
                            .write_all(super::pairs_out::markdown(r).as_bytes()),
                        None => Ok(()),
                    }
                }
                None => Ok(()),
            },
            OutputFormat::Jsonl | OutputFormat::Csv | OutputFormat::Github => Ok(()),
        }
    }

    /// The table already ends with the summary; other formats print it on stderr.
    pub(crate) fn prints_summary(&self) -> bool {
        self.format == OutputFormat::Table && matches!(self.dest, Dest::Stdout(_))
    }
}

/// Failures first; else the criteria that cost points (below their best, or a penalty
/// that was triggered). `penalties` are the main rubric's negative-weight criterion ids.
fn table_notes(e: &Evaluation, penalties: &[String]) -> String {
    let failures: Vec<String> = e
        .results
        .iter()
        .filter_map(|r| {
            r.failure
                .as_ref()
                .map(|f| format!("{}: {} failed", r.criterion_id, f.category))
        })
        .collect();
    if !failures.is_empty() {
        return clipped(&failures.join("; "), 60);
    }
    let lost: Vec<&str> = e
        .results
        .iter()
        .filter(|r| {
            r.value.is_some_and(|v| {
                !crate::model::met_as_wanted(v, penalties.contains(&r.criterion_id))
            })
        })
        .map(|r| r.criterion_id.as_str())
        .collect();
    if lost.is_empty() {
        String::new()
    } else {
        clipped(&format!("lost points: {}", lost.join(", ")), 60)
    }
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Written as references so attribute values keep them.
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            // Characters XML 1.0 cannot carry at all.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}
