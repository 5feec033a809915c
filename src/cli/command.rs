//! What the command line accepts: every command, its flags and its `--help` (clap's
//! definitions; completions, man pages and the reference are made from them). What each
//! command does lives in its own file; `run` in mod.rs sends each there.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use super::{
    CommonArgs, JudgeArgs, LintFormat, align, artifacts, baseline, calibrate, datasets, labels,
    metrics, pairs, rubrics, runs,
};
use crate::formats::Format;

const AFTER_HELP: &str = "\
Examples:
  rubricate validate rubrics/answer.yaml
  rubricate lint code
  rubricate grade --rubric examples/answer-quality.yaml examples/answers.jsonl
  rubricate grade --rubric examples/answer-quality.yaml examples/answers.jsonl --format junit --out report.xml --fail-under 0.8
  rubricate score examples/essays.json
  rubricate inspect eval.yaml
  rubricate convert rubric.json --to agentv -o rubric.eval.yaml
  rubricate split examples/essays.json --train 2 -o train.json -o test.json

Exit codes: 0 pass · 1 below threshold / --fail-under · 2 usage, config or input error · 3 failures over --max-error-rate";

#[derive(Debug, Parser)]
#[command(name = "rubricate", version, about = "Rubric-based evaluation of LLM and human outputs", after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    /// The workspace folder (default: the nearest holding rubricate.yaml, else the default
    /// workspace in the user data folder).
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
}

impl Cli {
    /// A command was given (without one, the terminal UI may start, which logs to its own
    /// file rather than stderr).
    pub fn has_command(&self) -> bool {
        self.command.is_some()
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Check rubric and dataset files; print every problem with <file:line:column>.
    #[command(
        after_help = "Examples:\n  rubricate validate my-rubric.yaml\n  rubricate validate rubrics/*.yaml data.jsonl"
    )]
    Validate {
        /// Rubric files (any supported format), built-in rubric names, or datasets.
        #[arg(required = true)]
        files: Vec<String>,
        /// Read rubric files as this format instead of detecting it.
        #[arg(long, value_parser = Format::parse, value_name = "FORMAT")]
        from: Option<Format>,
    },
    /// Score a rubric's structure with the built-in meta-rubric and extra checks.
    #[command(
        after_help = "Examples:\n  rubricate lint my-rubric.yaml\n  rubricate lint code --format json\n\nExit 0 when the meta-rubric passes, 1 when it does not, 2 when the rubric does not load."
    )]
    Lint {
        /// A rubric file or a built-in name.
        rubric: String,
        /// Read the rubric as this format instead of detecting it.
        #[arg(long, value_parser = Format::parse, value_name = "FORMAT")]
        from: Option<Format>,
        #[arg(long, value_enum, default_value_t = LintFormat::Text)]
        format: LintFormat,
    },
    /// Grade every item of a dataset against a rubric.
    #[command(
        after_help = "Examples:\n  rubricate grade --rubric answer.yaml answers.jsonl\n  rubricate grade --rubric answer.yaml answers.jsonl --format jsonl --out results.jsonl\n  rubricate grade --rubric answer.yaml answers.csv --format junit --out junit.xml --fail-under 0.8"
    )]
    Grade {
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        judge: Box<JudgeArgs>,
        /// Judge calls in flight at once (default 16), or items graded at once when no
        /// criterion is judged (default: the number of CPU cores).
        #[arg(help_heading = "Limits", long)]
        concurrency: Option<usize>,
        /// Let `command` checks run programs (off by default).
        #[arg(help_heading = "Limits", long)]
        allow_commands: bool,
        /// Largest share of criterion failures (judge/check errors) tolerated before exit 3.
        #[arg(help_heading = "Gates", long, default_value_t = 0.0)]
        max_error_rate: f64,
        /// Record the run in the workspace (runs/<id>/: manifest and a crash-safe cell
        /// journal); `rubricate runs resume ID` finishes it after a crash or a kill.
        #[arg(help_heading = "Saving", long)]
        save: bool,
        /// A name for the saved run (implies --save).
        #[arg(help_heading = "Saving", long, value_name = "NAME")]
        name: Option<String>,
        /// Grade only the first N items.
        #[arg(help_heading = "Subset", long, value_name = "N", conflicts_with_all = ["sample", "items"])]
        limit: Option<usize>,
        /// Grade N items chosen at random by --seed (default 0), stratified by ground truth
        /// when items have it.
        #[arg(
            help_heading = "Subset",
            long,
            value_name = "N",
            conflicts_with = "items"
        )]
        sample: Option<usize>,
        /// Grade only these items: `ID,ID,…` or `@FILE` (one id a line).
        #[arg(help_heading = "Subset", long, value_name = "IDS")]
        items: Option<String>,
        /// Send the judge calls to the providers' batch engines (`OpenAI` Batch API,
        /// Anthropic Message Batches: about half the price, answered within 24 hours)
        /// and return; `rubricate runs resume ID --wait` collects the answers and
        /// finishes the run. Implies --save.
        #[arg(help_heading = "Judge", long)]
        batch: bool,
        #[command(flatten)]
        baseline: baseline::BaselineArgs,
    },
    /// Compare two saved runs' answers: join them by item id into a pair dataset and grade
    /// it with a pairwise rubric (or write it with --out).
    #[command(
        after_help = "Examples:\n  rubricate pairs baseline candidate --rubric compare.yaml --judge openai/gpt-4o-mini\n  rubricate pairs baseline candidate --out pairs.jsonl"
    )]
    Pairs {
        #[command(flatten)]
        args: pairs::PairsArgs,
    },
    /// Make a folder a workspace: rubricate.yaml and its folders (rubrics, datasets, labels,
    /// runs, artifacts).
    #[command(
        after_help = "Examples:\n  rubricate init my-evals\n  rubricate init            # the current folder"
    )]
    Init {
        /// The folder (default: the current one).
        dir: Option<PathBuf>,
    },
    /// Trust a workspace's rubricate.yaml as it is now, so its settings that can run
    /// programs or send a key (`allow_commands`, providers with `api_key_env` or a remote
    /// `base_url`) are honoured. A changed file needs trusting again.
    #[command(
        after_help = "Examples:\n  rubricate trust           # the workspace the current folder is in\n  rubricate trust ../evals"
    )]
    Trust {
        /// The folder holding rubricate.yaml (default: the nearest at or above the current
        /// folder).
        dir: Option<PathBuf>,
    },
    /// Artifacts and their review: create, submit (evaluates every required rubric),
    /// review, revise, show, list.
    #[command(
        after_help = "Examples:\n  rubricate artifacts create --type quiz --name week-1 --content quiz.json\n  rubricate artifacts submit week-1\n  rubricate artifacts review week-1 approve --note 'reads well'\n  rubricate artifacts list"
    )]
    Artifacts {
        #[command(subcommand)]
        action: artifacts::ArtifactsAction,
    },
    /// Datasets registered in the workspace (read in place; JSONL indexed).
    #[command(
        after_help = "Examples:\n  rubricate datasets add answers.jsonl\n  rubricate datasets list\n  rubricate datasets show answers --start 100 --count 5"
    )]
    Datasets {
        #[command(subcommand)]
        action: datasets::DatasetsAction,
    },
    /// Human labels per dataset and annotator (append-only journals).
    #[command(
        after_help = "Examples:\n  rubricate labels import labels.csv --dataset answers.jsonl --annotator pat\n  rubricate labels next --dataset answers --annotator pat -n 20\n  rubricate labels agreement --dataset answers.jsonl\n  rubricate labels export --dataset answers.jsonl --as csv -o labels.csv"
    )]
    Labels {
        #[command(subcommand)]
        action: labels::LabelsAction,
    },
    /// The workspace's rubric registry: every saved version, its history and diffs.
    #[command(
        after_help = "Examples:\n  rubricate rubrics add rubrics/answer.yaml --note \"first version\"\n  rubricate rubrics list --target-type answer\n  rubricate rubrics show answer@1.0.0\n  rubricate rubrics history answer\n  rubricate rubrics diff answer 1.0.0 1.1.0\n  rubricate rubrics delete answer --note retired"
    )]
    Rubrics {
        #[command(subcommand)]
        action: rubrics::RubricsAction,
    },
    /// Which judge agrees with your people: each candidate judge grades the labelled items
    /// (a saved run each; --run adds runs already made), ranked by κ against the labels
    /// with bootstrap intervals, F1, accuracy, leniency, item-score bias, calls and cost.
    #[command(
        after_help = "Examples:\n  rubricate calibrate --dataset answers --rubric answer --judge openai/gpt-4o-mini --judge openai/gpt-4o\n  rubricate calibrate --dataset answers --run 20261124-1012-ab12 --run 20261124-1030-cd34 --format json"
    )]
    Calibrate {
        #[command(flatten)]
        args: calibrate::CalibrateArgs,
    },
    /// Make the judge agree with your people: split the labelled items into train, dev and
    /// test; propose rewordings of the criteria the judge gets wrong (from train), rank
    /// them on dev, and report the winner against the original on test, graded once.
    #[command(
        after_help = "Examples:\n  rubricate align --dataset answers --rubric answer --judge openai/gpt-4o-mini\n  rubricate align --dataset answers --rubric answer --annotator adjudicated --split 30/35/35 --rounds 3 --max-cost 2 --adopt"
    )]
    Align {
        #[command(flatten)]
        args: align::AlignArgs,
    },
    /// A run's judge against human labels: per criterion and pooled (accuracy, F1, κ, φ,
    /// leniency, confusion), item scores (RMSE, correlations, bias), bootstrap intervals.
    #[command(
        after_help = "Examples:\n  rubricate metrics --run nightly\n  rubricate metrics --run 20261122 --annotator adjudicated --format json"
    )]
    Metrics {
        #[command(flatten)]
        args: metrics::MetricsArgs,
    },
    /// The workspace's saved runs.
    #[command(
        after_help = "Examples:\n  rubricate runs list\n  rubricate runs show nightly --format md\n  rubricate runs resume nightly\n  rubricate runs compare baseline nightly"
    )]
    Runs {
        #[command(subcommand)]
        action: runs::RunsAction,
    },
    /// Score each item from its ground-truth verdicts (no judge), with feedback.
    #[command(
        after_help = "Examples:\n  rubricate score essays.json\n  rubricate score labelled.jsonl --rubric answer.yaml --format json\n\nGround truth is a list matched to criteria by position, or a map by criterion id; entries are\nMET/UNMET/CANNOT_ASSESS, option labels, level ids, or numbers for scale criteria."
    )]
    Score {
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Show what a file was detected as and what it became: rubrics, criteria, knobs, items.
    #[command(
        after_help = "Examples:\n  rubricate inspect evals/dataset.yaml\n  rubricate inspect rubric.json --from rubric-lib\n  rubricate inspect config.yaml#quiz-quality --format json"
    )]
    Inspect {
        /// A file in any supported format (FILE#ID picks one rubric), or a built-in name.
        file: String,
        #[arg(long, value_parser = Format::parse, value_name = "FORMAT")]
        from: Option<Format>,
        #[arg(long, value_enum, default_value_t = LintFormat::Text)]
        format: LintFormat,
    },
    /// Convert a rubric (or an eval/dataset file) to another system's format.
    #[command(
        after_help = "Formats: native, rubric-lib, autorubric, agentv, agentic, dataknobs.\nWhat the target cannot hold is listed on stderr as `note:` lines; --strict refuses instead.\n\nExamples:\n  rubricate convert rubric.json --to native -o rubric.yaml\n  rubricate convert evals/dataset.yaml --to autorubric -o dataset.json\n  rubricate convert code --to agentic"
    )]
    Convert {
        /// A file in any supported format (FILE#ID picks one rubric), or a built-in name.
        input: String,
        /// The format to write.
        #[arg(long, value_parser = Format::parse, value_name = "FORMAT")]
        to: Format,
        /// Read the input as this format instead of detecting it.
        #[arg(long, value_parser = Format::parse, value_name = "FORMAT")]
        from: Option<Format>,
        /// Write to FILE (replaced atomically; `.json` writes JSON) instead of stdout.
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// Fail (exit 2) instead of writing when the target cannot hold everything.
        #[arg(long)]
        strict: bool,
    },
    /// Split a dataset into train and test sets, stratified by ground truth and seeded.
    #[command(
        after_help = "Examples:\n  rubricate split essays.json --train 40 -o train.json -o test.json\n  rubricate split labels.jsonl --train 500 --seed 7 --no-stratify -o train.jsonl -o test.jsonl"
    )]
    Split {
        /// The dataset: .json (autorubric shape), .jsonl, .csv or an agentv eval file.
        dataset: PathBuf,
        /// Exactly this many items go to the training set.
        #[arg(long, value_name = "N")]
        train: usize,
        /// Seed of the shuffle (same seed, same split).
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Do not stratify by the ground-truth signature.
        #[arg(long)]
        no_stratify: bool,
        /// The train file, then the test file.
        #[arg(long, short, required = true, num_args = 1)]
        out: Vec<PathBuf>,
    },
    /// The judge response cache: `stats` or `clear`.
    #[command(
        after_help = "Examples:\n  rubricate cache stats\n  rubricate cache clear\n\nThe cache lives in RUBRICATE_CACHE_DIR, else the workspace's .rubricate/cache, else the user cache folder."
    )]
    Cache {
        #[arg(value_enum)]
        action: CacheAction,
    },
    /// Print the JSON Schema of the native rubric format, or of rubricate.yaml (for editors).
    #[command(
        after_help = "Examples:\n  rubricate schema > rubric.schema.json\n  rubricate schema --config > config.schema.json\n\nA new workspace has both in .rubricate/; rubricate.yaml's first line points editors at its own:\n  # yaml-language-server: $schema=.rubricate/config.schema.json"
    )]
    Schema {
        /// The schema of the workspace config, rubricate.yaml.
        #[arg(long)]
        config: bool,
    },
    /// Print the shell's tab-completion script (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "Examples:\n  source <(rubricate completions bash)\n  rubricate completions zsh > \"${fpath[1]}/_rubricate\"\n  rubricate completions fish > ~/.config/fish/completions/rubricate.fish"
    )]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (`--dir`: write every page, one per subcommand, there).
    #[command(
        after_help = "Examples:\n  rubricate man | man -l -\n  rubricate man --dir ~/.local/share/man/man1"
    )]
    Man {
        /// Write rubricate.1 and a page per subcommand (rubricate-grade.1, …) into DIR.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Write a saved run as one self-contained HTML page (no network: it opens from file://),
    /// for people who never open a terminal.
    #[command(
        after_help = "Examples:\n  rubricate report 20261122-141552 -o report.html\n  rubricate report nightly -o nightly.html --worst 200 --sample 0\n\nThe figures count every item; the page holds the lowest-scoring items and a fixed random\nsample of the rest whole (by default up to 1,000 each) and says so."
    )]
    Report {
        /// The run (id, name or prefix); with a second run, the baseline it is compared with.
        run: String,
        /// A second run: the page shows it, compared with RUN (regressions first, per
        /// criterion the change with its interval and p-value), as `runs compare RUN RUN_B`.
        run_b: Option<String>,
        /// Where to write the page.
        #[arg(short, long, value_name = "FILE")]
        output: std::path::PathBuf,
        /// Whose labels the judge is measured against (default: the adjudicated ones, else
        /// the dataset's only annotator; none: no agreement section).
        #[arg(long, value_name = "NAME")]
        annotator: Option<String>,
        /// How many of the lowest-scoring items the page holds whole.
        #[arg(long, default_value_t = 1_000)]
        worst: usize,
        /// How many of the other items (a fixed random sample) the page holds whole.
        #[arg(long, default_value_t = 1_000)]
        sample: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CacheAction {
    Stats,
    Clear,
}
