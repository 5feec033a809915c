//! Bad input is an input error, never a crash: every malformed file in
//! `tests/fixtures/invalid/` makes the real binary exit 2 (never 101, a panic) with a message
//! located as `file:line:column` (or the item's origin) that tells a person what to change.
//!
//! Each fixture has one problem and is named for it. The table below says how each one is run
//! and what must be printed; `fixtures_are_all_in_the_table` keeps the two in step. Files too
//! large or too dangerous to commit (50 MB lines, a YAML alias bomb) are written at test time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

/// Where the fixtures live, relative to the crate root (the tests' working directory).
const DIR: &str = "tests/fixtures/invalid";
/// The rubric datasets are graded against.
const RUBRIC: &str = "examples/answer-quality.yaml";
/// "Usage, config or input error" (`cli::exit::INPUT`).
const INPUT_ERROR: i32 = 2;

/// How a fixture is fed to the binary.
#[derive(Debug, Clone, Copy)]
enum Run {
    /// `rubricate validate FILE`
    Validate,
    /// `rubricate grade --rubric examples/answer-quality.yaml FILE --format jsonl`
    Grade,
    /// `rubricate score FILE --format jsonl`: the dataset brings its own rubric.
    Score,
    /// `rubricate score --rubric examples/answer-quality.yaml FILE --format jsonl`
    ScoreWithRubric,
    /// `rubricate validate --from FORMAT FILE`: a foreign file, read as its own format (several
    /// are, apart from their one problem, also readable as another format).
    ValidateFrom(&'static str),
}

impl Run {
    fn args(self, path: &str) -> Vec<&str> {
        match self {
            Run::Validate => vec!["validate", path],
            Run::Grade => vec!["grade", "--rubric", RUBRIC, path, "--format", "jsonl"],
            Run::Score => vec!["score", path, "--format", "jsonl"],
            Run::ScoreWithRubric => vec!["score", "--rubric", RUBRIC, path, "--format", "jsonl"],
            Run::ValidateFrom(format) => vec!["validate", "--from", format, path],
        }
    }
}

/// What stderr must hold, on a line of its own (an `error: ` prefix is allowed).
#[derive(Debug)]
enum Want {
    /// Exactly `FILE:AT: MESSAGE`, where `AT` is `line:column` (or `line` for a JSONL item).
    Exact(&'static str, &'static str),
    /// A line starting `FILE:AT` (`AT` may stop early: `"8:"` is anywhere on line 8, `""` anywhere
    /// in the file) that contains every `has` fragment and no `not` fragment. Used where the exact
    /// wording is the fixer's choice (or the OS's), but what it must say is not.
    Like {
        at: &'static str,
        has: &'static [&'static str],
        not: &'static [&'static str],
    },
}

struct Case {
    file: &'static str,
    run: Run,
    want: Want,
    /// `Some` while `src` gets this case wrong: what goes wrong today, printed on failure.
    known_bug: Option<&'static str>,
}

const fn ok(file: &'static str, run: Run, at: &'static str, message: &'static str) -> Case {
    Case {
        file,
        run,
        want: Want::Exact(at, message),
        known_bug: None,
    }
}

const fn bug(file: &'static str, run: Run, want: Want, today: &'static str) -> Case {
    Case {
        file,
        run,
        want,
        known_bug: Some(today),
    }
}

const fn like(at: &'static str, has: &'static [&'static str]) -> Want {
    Want::Like { at, has, not: &[] }
}

use Run::{Grade, Score, ScoreWithRubric, Validate, ValidateFrom};

const RUBRIC_LIB: Run = ValidateFrom("rubric-lib");
const AUTORUBRIC: Run = ValidateFrom("autorubric");
const AGENTV: Run = ValidateFrom("agentv");
const AGENTIC: Run = ValidateFrom("agentic");
const DATAKNOBS: Run = ValidateFrom("dataknobs");

#[rustfmt::skip]
const CASES: &[Case] = &[
    // ----- rubrics: YAML and JSON syntax ---------------------------------------------------
    // The YAML parser (saphyr) notices an unclosed `{` only where the next line breaks the
    // flow, and a tab at the scalar it interrupts; these pin its locations as they are.
    ok("rubric_yaml_syntax.yaml", Validate, "9:3", "YAML syntax error: invalid indentation"),
    ok("rubric_yaml_tab_indent.yaml", Validate, "5:9",
        "YAML syntax error: while scanning a plain scalar, found a tab"),
    ok("rubric_yaml_unknown_alias.yaml", Validate, "7:13",
        "YAML syntax error: while parsing node, found unknown anchor"),
    ok("rubric_duplicate_yaml_key.yaml", Validate, "8:5",
        "duplicate key 'weight'; each key may appear once in a mapping"),
    ok("rubric_empty_file.yaml", Validate, "1:1",
        "the file is empty; a rubric needs at least `criteria`"),
    ok("rubric_non_utf8.yaml", Validate, "6:54",
        "the file is not valid UTF-8 (byte 0xFF); save it as UTF-8"),
    bug("rubric_json_trailing_comma.json", Validate, like("", &["JSON syntax error", "trailing comma"]),
        "reads `7:3: JSON syntax error: unexpected character ']' where a value was expected`; \
         the most common JSON mistake deserves its name (the dataset reader says `trailing comma`)"),
    bug("rubric_json_nan.json", Validate, like("5:95:", &["JSON syntax error", "NaN"]),
        "reads `unexpected character 'N' where a value was expected`; the parser's own \
         `(NaN and Infinity are not JSON)` hint is given for `nan` and `-Infinity` but not for \
         `NaN` or `Infinity`, which are what Python's json.dumps writes"),
    ok("rubric_json_duplicate_key.json", Validate, "7:3",
        "duplicate key 'id'; each key may appear once in an object"),
    // ----- rubrics: shape -------------------------------------------------------------------
    ok("rubric_not_a_mapping.yaml", Validate, "1:1", "the rubric must be a mapping, found a string"),
    ok("rubric_no_criteria.yaml", Validate, "1:1", "the rubric has no `criteria`; add a list of criteria"),
    ok("rubric_criteria_not_list.yaml", Validate, "5:3", "`criteria` must be a list, found a mapping"),
    ok("rubric_criteria_and_sections.yaml", Validate, "5:3", "give either `criteria` or `sections`, not both"),
    bug("rubric_wrapper_null.yaml", Validate, like("2:", &["`rubric`"]),
        "prints no diagnostic at all (an empty line, then `1 of 1 files are not valid`): \
         read_root returns None for `rubric: null` without recording a problem"),
    ok("rubric_unknown_field.yaml", Validate, "7:5",
        "unknown field `wieght` in a criterion; did you mean `weight`?"),
    ok("rubric_missing_requirement.yaml", Validate, "5:5",
        "criterion 'correct' has no `requirement`; say what is checked"),
    ok("rubric_empty_requirement.yaml", Validate, "8:18",
        "criterion 'concise' has an empty requirement; say what is checked"),
    ok("rubric_duplicate_ids.yaml", Validate, "10:9",
        "duplicate criterion id 'correct'; ids must be unique within a rubric"),
    // ----- rubrics: values ------------------------------------------------------------------
    ok("rubric_wrong_type_weight.yaml", Validate, "7:13", "`weight` must be a number, found a string"),
    ok("rubric_nan_weight.yaml", Validate, "7:13",
        "criterion 'correct' has weight NaN, which is not a finite number"),
    ok("rubric_infinite_weight.yaml", Validate, "10:13",
        "criterion 'rude' has weight -inf, which is not a finite number"),
    ok("rubric_required_not_bool.yaml", Validate, "7:15", "`required` must be true or false, found a string"),
    ok("rubric_bad_threshold.yaml", Validate, "4:17",
        "pass_threshold 70 is outside 0..1; normalized scores are between 0 and 1"),
    ok("rubric_bad_version.yaml", Validate, "3:10", "version '1.0' is not a semantic version like 1.0.0"),
    bug("rubric_version_unquoted_float.yaml", Validate,
        Want::Exact("3:10", "version '1.0' is not a semantic version like 1.0.0"),
        "`version: 1.0` is read as the float 1.0 and reported as `version '1'`, \
         which is not what the file says"),
    ok("rubric_bad_temperature.yaml", Validate, "6:16", "temperature -0.5 must be a number ≥ 0"),
    ok("rubric_unknown_aggregate.yaml", Validate, "5:14", "unknown aggregate 'average'; use points, mean, min, weighted_mean"),
    // ----- rubrics: kinds, levels, options, scales ------------------------------------------
    ok("rubric_unknown_kind.yaml", Validate, "7:11", "unknown kind 'likert'; use binary, levels, options or scale"),
    ok("rubric_kind_mismatch.yaml", Validate, "7:11", "kind 'levels' needs a `levels` list"),
    ok("rubric_levels_out_of_order.yaml", Validate, "10:66",
        "levels out of order: 'ok' scores 0.7 after a level scoring 1; list levels from lowest to highest score"),
    ok("rubric_level_score_out_of_range.yaml", Validate, "9:55", "level 'ok' has score 5; scores are between 0 and 1"),
    ok("rubric_duplicate_level_ids.yaml", Validate, "10:15", "duplicate level id 'ok'"),
    ok("rubric_options_all_na.yaml", Validate, "9:7",
        "options criterion has no choice that is not NA; add at least one scored option"),
    ok("rubric_bad_scale.yaml", Validate, "8:12", "scale min 10 must be a number below max 1"),
    // ----- rubrics: methods, checks, schemas, templates -------------------------------------
    ok("rubric_unknown_method.yaml", Validate, "7:13", "unknown method 'llm'; use judge, check or schema"),
    ok("rubric_method_two_kinds.yaml", Validate, "8:7", "`method` needs exactly one of `judge`, `check` or `schema`"),
    ok("rubric_unknown_check.yaml", Validate, "7:22",
        "criterion 'correct': unknown check 'contain'; did you mean `contains`? built-in checks: contains, \
         not_contains, regex, equals, starts_with, ends_with, length, word_count, max_sentences, count, \
         is_json, json_path, similarity, map_levels, command, rubric_coverage, rubric_independence, \
         rubric_weights, rubric_threshold, rubric_level_order, unscorable, tool_called, tool_not_called, \
         tool_args, tool_trajectory"),
    ok("rubric_unknown_check_arg.yaml", Validate, "7:66",
        "criterion 'correct': unknown argument `ignore_case`; this check takes: case_sensitive, text, any, all"),
    ok("rubric_check_missing_arg.yaml", Validate, "7:13", "criterion 'concise': max_sentences needs `n`"),
    bug("rubric_bad_regex.yaml", Validate,
        Want::Exact("8:46", "criterion 'filler': invalid regex \"^(as an ai|great question\": unclosed group"),
        "the regex crate's `error: ` prefix leaks into the message: \
         `invalid regex \"…\": error: unclosed group`"),
    ok("rubric_map_levels_unknown_level.yaml", Validate, "15:22",
        "criterion 'length': unknown level 'great'; expected one of 'terse', 'good'"),
    ok("rubric_schema_not_compiling.yaml", Validate, "9:9",
        "criterion 'shape': the JSON Schema does not compile: 12 is not valid under any of the schemas \
         listed in the 'anyOf' keyword (at /type)"),
    // The OS words the missing-file error itself, so only our part is pinned.
    Case {
        file: "rubric_schema_file_missing.yaml",
        run: Validate,
        want: like("7:23: ", &[
            "criterion 'shape': tests/fixtures/invalid/schemas/answer.schema.json: cannot read schema file: ",
        ]),
        known_bug: None,
    },
    ok("rubric_bad_template.yaml", Validate, "10:11",
        "template error on template line 3: unexpected end of input, expected end of block"),
    // ----- JSONL datasets -------------------------------------------------------------------
    ok("dataset_bad_json_line.jsonl", Grade, "2:72", "not valid JSON: expected value"),
    bug("dataset_bad_json_line_accents.jsonl", Grade, Want::Exact("1:111", "not valid JSON: expected value"),
        "reports 1:114: serde_json counts the column in bytes ('–' and 'é' take 5 bytes for 2 \
         characters) while every other message counts characters (diag.rs)"),
    ok("dataset_torn_last_line.jsonl", Grade, "3:76",
        "the last line is cut short (no newline at the end and the JSON is incomplete); \
         the file was truncated or is still being written"),
    ok("dataset_not_object_line.jsonl", Grade, "2:1", "each line must be a JSON object, found a list"),
    ok("dataset_missing_submission.jsonl", Grade, "2:1",
        "item 'a2' has no submission; give it a `submission` (or `output`) field, or its conversation as `messages`"),
    ok("dataset_non_utf8.jsonl", Grade, "2:36", "the file is not valid UTF-8 (byte 0xE9); save it as UTF-8"),
    ok("dataset_id_wrong_type.jsonl", Grade, "1:1", "`id` must be text or a number, found a list"),
    ok("dataset_prompt_wrong_type.jsonl", Grade, "1:1", "item 'a1': `prompt` must be text, found a boolean"),
    ok("dataset_metadata_not_object.jsonl", Grade, "1:1", "item 'a1': `metadata` must be an object, found text"),
    ok("dataset_line_rubric_invalid.jsonl", Score, "1:177", "`scale_type` belongs to options criteria"),
    bug("dataset_line_rubric_wrapper_null.jsonl", Grade, like("2:", &["`rubric`"]),
        "panics in the reader thread (jsonl.rs line_rubric: `d.0.remove(0)` on an empty \
         Diagnostics) and grade then exits 0 having graded only line 1 of 3, because \
         grade.rs ignores the reader's join error"),
    ok("dataset_gt_unknown_criterion.jsonl", ScoreWithRubric, "1",
        "item 'a1': ground_truth names criterion 'polite', which rubric 'answer-quality' does not have; \
         its criteria are 'correct', 'concise', 'filler', 'length'"),
    // ----- CSV datasets ---------------------------------------------------------------------
    ok("dataset_csv_no_submission_column.csv", Grade, "1:1",
        "the header row has no submission column; name one `submission` (or `output`). \
         Columns found: id, prompt, answer_text"),
    ok("dataset_csv_short_row.csv", Grade, "3:1",
        "this row has 2 fields but the header has 3; a row may be cut short or have an unquoted comma"),
    ok("dataset_csv_bad_metadata.csv", Grade, "2:1",
        "`metadata` column is not a JSON object: EOF while parsing an object at line 1 column 18"),
    ok("dataset_csv_non_utf8.csv", Grade, "3:1", "the file is not valid UTF-8 in field 3; save it as UTF-8"),
    bug("dataset_csv_empty.csv", Grade, like("1:1: ", &["empty"]),
        "an empty file reads `the header row has no submission column; … Columns found: ` \
         (with nothing after it); the file has no header row at all"),
    // ----- JSON (autorubric) datasets -------------------------------------------------------
    ok("dataset_json_no_items.json", Grade, "1:1",
        "the dataset has no `items` list; give `items: [{\"submission\": …}, …]`"),
    ok("dataset_json_syntax.json", Grade, "5:5", "not a valid dataset: expected `,` or `]`"),
    bug("dataset_json_trailing_comma_accents.json", Grade, Want::Exact("3:55", "not a valid dataset: trailing comma"),
        "reports 3:58: serde_json's column is in bytes, every other message counts characters"),
    bug("dataset_json_null.json", Grade, Want::Like { at: "1:", has: &["`items`"], not: &["JsonDataset"] },
        "reads `1:4: not a valid dataset: invalid type: null, expected struct JsonDataset`, \
         which names a Rust type instead of saying a dataset is an object with `items`"),
    ok("dataset_json_item_not_object.json", Grade, "5:5", "item 2: an item must be an object, found text"),
    ok("dataset_json_bad_rubric.json", Score, "5:36", "`weight` must be a number, found a string"),
    bug("dataset_rubric_wrapper_null.json", Score, like("4:", &["`rubric`"]),
        "exits 2 with an empty message (`error: ` and nothing else): read_rubric returns an \
         empty Diagnostics for `{\"rubric\": null}`"),
    bug("dataset_item_rubric_wrapper_null.json", Score, like("9:", &["`rubric`"]),
        "panics (exit 101) in json_file.rs `first()`: `d.0.remove(0)` on an empty Diagnostics"),
    ok("dataset_item_no_rubric.json", Score, "6:5",
        "item '1' has no rubric and tests/fixtures/invalid/dataset_item_no_rubric.json has none; \
         pass --rubric FILE or NAME"),
    // ----- ground truth ---------------------------------------------------------------------
    ok("dataset_gt_wrong_length.json", Score, "11:5",
        "item '2': ground_truth has 2 values but rubric 'dataset-rubric' has 3 criteria; \
         give one verdict per criterion, in order"),
    ok("dataset_gt_unknown_verdict.json", Score, "9:5",
        "item '1': ground_truth for criterion 'concise' (#2) is 'MAYBE', expected MET, UNMET or CANNOT_ASSESS"),
    ok("dataset_gt_unknown_option.json", Score, "18:5",
        "item '1': ground_truth for criterion 'tone' (#2): unknown option 'Polite'; \
         expected one of 'Friendly', 'Neutral', 'Curt'"),
    bug("dataset_gt_not_list.json", Score,
        Want::Like {
            at: "7:5: ",
            has: &["ground_truth must be a list or a map of criterion ids, found a number"],
            not: &["item 1: item '1'"],
        },
        "the item is named twice: `item 1: item '1': ground_truth must be …`"),
    // ----- foreign formats (FOREIGN.md says what each file's one problem is) ----------------
    // rubric (The LLM Data Company)
    ok("rubric_lib_empty_list.json", RUBRIC_LIB, "1:1",
        "the list of criteria is empty; a rubric_lib rubric needs at least one {weight, requirement}"),
    ok("rubric_lib_missing_weight.json", RUBRIC_LIB, "3:3",
        "a rubric_lib criterion needs a `weight` (negative for a penalty)"),
    ok("rubric_lib_object_with_other_keys.json", RUBRIC_LIB, "6:3",
        "a rubric_lib file is a list of {weight, requirement}, `{sections: [{criteria: […]}]}` or \
         `{rubric: …}` alone; remove `grader`"),
    ok("rubric_lib_weight_not_number.yaml", RUBRIC_LIB, "3:11", "`weight` must be a number, found a string"),
    ok("rubric_lib_empty_requirement.yaml", RUBRIC_LIB, "4:16",
        "criterion 'c2' has an empty requirement; say what is checked"),
    ok("rubric_lib_criteria_not_list.yaml", RUBRIC_LIB, "8:7",
        "`criteria` must be a list of {weight, requirement}, found a mapping"),
    ok("rubric_lib_requirement_not_text.yaml", RUBRIC_LIB, "4:16",
        "a rubric_lib `requirement` must be text (what the answer must do), found a number"),
    // autorubric rubrics
    ok("autorubric_option_no_label.yaml", AUTORUBRIC, "10:7", "an option needs a `label`"),
    ok("autorubric_bad_scale_type.yaml", AUTORUBRIC, "7:15", "unknown scale_type 'likert'; use ordinal or nominal"),
    ok("autorubric_option_value_out_of_range.yaml", AUTORUBRIC, "11:35",
        "option 'Fully' has value 1.5; values are between 0 and 1"),
    ok("autorubric_missing_requirement.yaml", AUTORUBRIC, "5:5",
        "criterion 'evidence' has no `requirement`; say what is checked"),
    // autorubric datasets: what plain `validate` (format detected) already says is wanted from
    // `--from autorubric` too.
    ok("autorubric_dataset_gt_wrong_length.json", AUTORUBRIC, "9:5",
        "item '1': ground_truth has 3 values but rubric 'dataset-rubric' has 2 criteria; \
         give one verdict per criterion, in order"),
    ok("autorubric_dataset_item_no_rubric.json", AUTORUBRIC, "12:5",
        "item '2' has no rubric and the dataset has none; give the item a `rubric` or the dataset one"),
    ok("autorubric_dataset_unknown_verdict.json", AUTORUBRIC, "9:5",
        "item '1': ground_truth for criterion 'null_semantics' (#2) is 'FAIL', expected MET, UNMET or CANNOT_ASSESS"),
    // agentv
    ok("agentv_score_ranges_gap.yaml", AGENTV, "12:26",
        "agentv score_ranges must cover 0..10; 'faithful' is missing 4"),
    ok("agentv_score_ranges_overlap.yaml", AGENTV, "12:26",
        "agentv score_ranges must not overlap; 'faithful' has 5 twice"),
    ok("agentv_score_range_out_of_bounds.yaml", AGENTV, "15:30",
        "score_range [8, 12] of 'form' goes outside 0..10; agentv scores are whole numbers from 0 to 10"),
    ok("agentv_score_ranges_map_no_zero.yaml", AGENTV, "11:13",
        "agentv score_ranges must cover 0..10; 'naming' is missing 0..2"),
    ok("agentv_required_min_score_out_of_range.yaml", AGENTV, "9:33",
        "agentv required_min_score is an integer on the 0..10 scale; found 80"),
    ok("agentv_rubric_no_outcome.yaml", AGENTV, "10:9",
        "agentv rubric 'new-date' needs `outcome` (or `expected_outcome`): what the output must do"),
    ok("agentv_score_range_not_integer.yaml", AGENTV, "10:26",
        "score_range [0, 4.5] of 'fidelity' has 4.5; bounds are whole numbers from 0 to 10"),
    // agentic_v2_eval
    ok("agentic_weights_sum_zero.yaml", AGENTIC, "3:3",
        "the weights sum to 0: agentic_v2_eval's Scorer scores every result 0 unless they sum to more than 0; give the criteria positive weights"),
    ok("agentic_criterion_without_name.yaml", AGENTIC, "6:5",
        "criterion 2 has no `name`: agentic_v2_eval's Scorer keys results by name (and skips a criterion without one); give it a name"),
    ok("agentic_gate_unknown_criterion.yaml", AGENTIC, "13:5",
        "hard gate names criterion 'Security', which the rubric does not have"),
    ok("agentic_judge_no_template.yaml", AGENTIC, "11:5",
        "dimension 'fluency' needs a non-empty `prompt_template`"),
    ok("agentic_min_above_max.yaml", AGENTIC, "9:16",
        "criterion 'Response Time': min_value 10 must be below max_value 1"),
    Case {
        file: "agentic_level_key_not_integer.yaml",
        run: AGENTIC,
        want: like("10:7: ", &["key 'high' of `levels`"]),
        known_bug: None,
    },
    // dataknobs
    ok("dataknobs_level_score_out_of_range.yaml", DATAKNOBS, "15:92",
        "level 'excellent' has score 10; scores are between 0 and 1"),
    ok("dataknobs_bad_scoring_method_type.yaml", DATAKNOBS, "16:13",
        "unknown scoring_method type 'llm'; dataknobs uses deterministic, schema or llm_decode"),
    ok("dataknobs_type_in_capitals.yaml", DATAKNOBS, "16:13",
        "scoring_method type 'LLM_DECODE' is refused by dataknobs, which reads the type as written (lowercase only); write 'llm_decode'"),
    ok("dataknobs_pass_threshold_out_of_range.yaml", DATAKNOBS, "6:17",
        "pass_threshold 70 is outside 0..1; normalized scores are between 0 and 1"),
    ok("dataknobs_function_ref_no_colon.yaml", DATAKNOBS, "17:21",
        "function_ref 'is_json' is not in \"module:function\" form (e.g. 'scoring:is_json')"),
];

/// Fixtures whose one defect shows in more than one place (two levels out of order, two scores
/// out of range), so a message for each is right. Every other fixture must get exactly one
/// located error.
const SEVERAL_MESSAGES: &[&str] = &[
    "rubric_levels_out_of_order.yaml",
    "rubric_level_score_out_of_range.yaml",
];

// ---------------------------------------------------------------------------------------
// helpers

fn rubricate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .env_remove("RUBRICATE_LOG")
        .output()
        .expect("run the rubricate binary")
}

/// stderr's lines, each without the `error: ` prefix the CLI puts on its last message.
fn stderr_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| l.strip_prefix("error: ").unwrap_or(l).to_owned())
        .collect()
}

fn matches(line: &str, path: &str, want: &Want) -> bool {
    match want {
        Want::Exact(at, message) => line == format!("{path}:{at}: {message}"),
        // The fragments are looked for after the location, never in the file's name.
        Want::Like { at, has, not } => {
            line.strip_prefix(&format!("{path}:{at}"))
                .is_some_and(|rest| {
                    has.iter().all(|h| rest.contains(h)) && !not.iter().any(|n| rest.contains(n))
                })
        }
    }
}

/// Everything wrong with one run: exit code, panics, the expected line, and any other located error.
fn problems(out: &Output, path: &str, want: &Want) -> Vec<String> {
    let mut found = Vec::new();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(INPUT_ERROR) {
        found.push(format!(
            "exit status {:?}, expected {INPUT_ERROR} (101 is a panic)",
            out.status.code()
        ));
    }
    if stderr.contains("panicked") || stderr.contains("internal error") {
        found.push("it panicked".to_owned());
    }
    let lines = stderr_lines(out);
    if lines.iter().any(|l| matches(l, path, want)) {
        // One problem, one message: a second located error is a knock-on effect of the first
        // (or a problem the file does not have) and sends the reader looking in the wrong place.
        // The line saying which format a refused rubric was read as, and why, is context.
        let prefix = format!("{path}:");
        let read_as = format!("{path}: read as ");
        let several = SEVERAL_MESSAGES
            .iter()
            .any(|f| path.ends_with(&format!("/{f}")));
        for extra in lines.iter().filter(|l| {
            !several
                && l.starts_with(&prefix)
                && !l.starts_with(&read_as)
                && !matches(l, path, want)
        }) {
            found.push(format!("it also reports `{extra}`"));
        }
    } else {
        found.push(match want {
            Want::Exact(at, message) => format!("no stderr line `{path}:{at}: {message}`"),
            Want::Like { at, has, not } if !not.is_empty() => {
                format!("no stderr line starting `{path}:{at}` with {has:?} and without {not:?}")
            }
            Want::Like { at, has, .. } => {
                format!("no stderr line starting `{path}:{at}` with {has:?}")
            }
        });
    }
    found
}

/// The fixture files on disk. Markdown files (`FOREIGN.md`, which describes the foreign-format
/// fixtures) are documentation, not fixtures.
fn fixture_names() -> BTreeSet<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR);
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("read a directory entry"))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| Path::new(name).extension().is_none_or(|x| x != "md"))
        .collect()
}

fn fixture_bytes(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR).join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Writes `head`, then `fill` repeated up to `total` bytes in all, then `tail`.
fn write_sized(path: &Path, head: &[u8], fill: u8, tail: &[u8], total: usize) {
    let body = total - head.len() - tail.len();
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create the file"));
    f.write_all(head).unwrap();
    let chunk = vec![fill; 1 << 20];
    let mut left = body;
    while left > 0 {
        let n = left.min(chunk.len());
        f.write_all(&chunk[..n]).unwrap();
        left -= n;
    }
    f.write_all(tail).unwrap();
    f.flush().unwrap();
    assert_eq!(std::fs::metadata(path).unwrap().len(), total as u64);
}

// ---------------------------------------------------------------------------------------
// the table

#[test]
fn every_invalid_fixture_exits_2_with_a_located_message() {
    let mut failures = Vec::new();
    for case in CASES {
        let path = format!("{DIR}/{}", case.file);
        let out = rubricate(&case.run.args(&path));
        let found = problems(&out, &path, &case.want);
        if !found.is_empty() {
            let known = case
                .known_bug
                .map(|b| format!("\n  known src bug: {b}"))
                .unwrap_or_default();
            failures.push(format!(
                "{} ({:?}): {}{known}\n  stderr:\n    {}",
                case.file,
                case.run,
                found.join("; "),
                String::from_utf8_lossy(&out.stderr)
                    .trim_end()
                    .replace('\n', "\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} invalid fixtures are mishandled:\n\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n\n")
    );
}

#[test]
fn fixtures_are_all_in_the_table() {
    let on_disk = fixture_names();
    let mut in_table = BTreeSet::new();
    for case in CASES {
        assert!(
            in_table.insert(case.file.to_owned()),
            "{} is in the table twice",
            case.file
        );
    }
    let untested: Vec<_> = on_disk.difference(&in_table).collect();
    let missing: Vec<_> = in_table.difference(&on_disk).collect();
    assert!(
        untested.is_empty(),
        "fixtures with no row in CASES (add one): {untested:?}"
    );
    assert!(
        missing.is_empty(),
        "rows in CASES whose fixture is missing from {DIR}: {missing:?}"
    );
    assert!(
        on_disk.len() >= 36,
        "expected at least 36 invalid fixtures, found {}",
        on_disk.len()
    );
}

/// Editors and git settings "fix" files: keep the defects the fixtures are about.
#[test]
fn fixtures_keep_their_defects() {
    for name in [
        "rubric_non_utf8.yaml",
        "dataset_non_utf8.jsonl",
        "dataset_csv_non_utf8.csv",
    ] {
        assert!(
            std::str::from_utf8(&fixture_bytes(name)).is_err(),
            "{name} must not be valid UTF-8"
        );
    }
    for name in ["rubric_empty_file.yaml", "dataset_csv_empty.csv"] {
        assert!(fixture_bytes(name).is_empty(), "{name} must be empty");
    }
    let torn = fixture_bytes("dataset_torn_last_line.jsonl");
    assert!(
        !torn.ends_with(b"\n") && !torn.ends_with(b"}"),
        "dataset_torn_last_line.jsonl must end mid-JSON, with no newline"
    );
    assert!(
        fixture_bytes("rubric_yaml_tab_indent.yaml").contains(&b'\t'),
        "rubric_yaml_tab_indent.yaml must indent with a tab"
    );
}

// ---------------------------------------------------------------------------------------
// more than the table

#[test]
fn validate_reports_every_bad_file_of_one_run_and_still_checks_the_good_ones() {
    let a = format!("{DIR}/rubric_duplicate_ids.yaml");
    let b = format!("{DIR}/rubric_unknown_check.yaml");
    let out = rubricate(&["validate", &a, RUBRIC, &b]);
    assert_eq!(out.status.code(), Some(INPUT_ERROR));
    let lines = stderr_lines(&out);
    for want in [
        format!("{a}:10:9: duplicate criterion id 'correct'; ids must be unique within a rubric"),
        "2 of 3 files are not valid".to_owned(),
    ] {
        assert!(lines.contains(&want), "missing `{want}` in {lines:#?}");
    }
    assert!(
        lines.iter().any(|l| l.starts_with(&format!(
            "{b}:7:22: criterion 'correct': unknown check 'contain'"
        ))),
        "{lines:#?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "ok {RUBRIC} (native: rubric 'answer-quality' 1.0.0, 4 criteria)"
        )),
        "{stdout}"
    );
}

#[test]
fn validate_checks_ground_truth_against_the_dataset_rubric() {
    let path = format!("{DIR}/dataset_gt_wrong_length.json");
    let out = rubricate(&["validate", &path]);
    assert_eq!(out.status.code(), Some(INPUT_ERROR));
    let want = format!(
        "{path}:11:5: item '2': ground_truth has 2 values but rubric 'dataset-rubric' has 3 criteria; \
         give one verdict per criterion, in order"
    );
    let lines = stderr_lines(&out);
    assert!(lines.contains(&want), "missing `{want}` in {lines:#?}");
}

#[test]
fn grade_writes_the_items_before_a_bad_line_and_says_where_it_stopped() {
    let path = format!("{DIR}/dataset_missing_submission.jsonl");
    let out = rubricate(&["grade", "--rubric", RUBRIC, &path, "--format", "jsonl"]);
    assert_eq!(out.status.code(), Some(INPUT_ERROR));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let items: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each stdout line is JSON"))
        .collect();
    assert_eq!(
        items.len(),
        1,
        "only the good first line is graded: {stdout}"
    );
    assert_eq!(items[0]["item"], "a1");
    let lines = stderr_lines(&out);
    let want = format!(
        "{path}:2:1: item 'a2' has no submission; give it a `submission` (or `output`) field, or its conversation as `messages`"
    );
    assert!(lines.contains(&want), "missing `{want}` in {lines:#?}");
}

/// A 50 MB JSONL line is refused by the per-item limit (16 MiB unless `--max-item-mb`),
/// named by its line, without grading anything.
#[test]
fn a_50_mb_jsonl_line_is_refused_by_the_per_item_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    write_sized(
        &path,
        br#"{"id": "huge", "prompt": "What is the capital of France?", "submission": ""#,
        b'a',
        b"\"}\n",
        50_000_000,
    );
    let shown = path.to_str().unwrap();
    let out = rubricate(&["grade", "--rubric", RUBRIC, shown, "--format", "jsonl"]);
    assert_eq!(out.status.code(), Some(INPUT_ERROR), "{out:?}");
    assert!(out.stdout.is_empty(), "nothing is graded");
    let want = format!(
        "{shown}:1:1: line is longer than 16 MiB, the most one item may take; \
         split the item or raise --max-item-mb"
    );
    let lines = stderr_lines(&out);
    assert!(lines.contains(&want), "missing `{want}` in {lines:#?}");
}

/// Rubric files over 16 MiB are refused before they are read.
#[test]
fn a_50_mb_single_line_rubric_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.json");
    write_sized(
        &path,
        br#"{"id": "huge", "criteria": [{"id": "c", "requirement": "Names Paris"}], "description": ""#,
        b'a',
        b"\"}",
        50_000_000,
    );
    let shown = path.to_str().unwrap();
    let out = rubricate(&["validate", shown]);
    assert_eq!(out.status.code(), Some(INPUT_ERROR), "{out:?}");
    let want = format!(
        "{shown}: rubric file is 50.0 MB; rubric files over 16 MiB are refused (is this the right file?)"
    );
    let lines = stderr_lines(&out);
    assert!(lines.contains(&want), "missing `{want}` in {lines:#?}");
}

/// "Billion laughs": nine anchors, each a list of nine aliases of the one before, expand to
/// 9^9 (387 million) scalars from a 1 KB file. The YAML reader copies each alias's tree, so today
/// this allocates until memory runs out (src bug: yaml.rs has no expansion limit; the
/// meta-rubric parses submissions, which are untrusted, with the same reader). It must be
/// refused with a located message instead. Run under a 1 GiB address-space cap so that a
/// regression aborts the child rather than the machine.
#[cfg(target_os = "linux")]
#[test]
fn a_yaml_alias_bomb_is_refused_not_expanded() {
    use std::fmt::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("laughs.yaml");
    let mut text = String::from("lol0: &lol0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..9 {
        let refs = vec![format!("*lol{}", i - 1); 9].join(", ");
        writeln!(text, "lol{i}: &lol{i} [{refs}]").unwrap();
    }
    text.push_str(
        "id: answer-quality\ncriteria:\n  - id: correct\n    requirement: Names Paris\n    \
         method: { check: contains, args: { any: *lol8 } }\n",
    );
    std::fs::write(&path, text).unwrap();
    let shown = path.to_str().unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 1048576 && exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_rubricate"))
        .args(["validate", shown])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .output()
        .expect("run rubricate under sh");
    assert_eq!(
        out.status.code(),
        Some(INPUT_ERROR),
        "an alias bomb must be an input error (exit 2), not an abort or a panic; got {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = stderr_lines(&out);
    assert!(
        lines
            .iter()
            .filter_map(|l| l.strip_prefix(&format!("{shown}:")))
            .any(|rest| rest.contains("alias")),
        "expected a located message about YAML aliases in {lines:#?}"
    );
}

/// Ids and names tens of thousands of characters long: located errors from `validate`,
/// `inspect` and `rubrics add` (never a panic in a formatting width), and nothing registered.
#[test]
fn enormous_ids_and_names_are_located_errors() {
    let dir = tempfile::tempdir().unwrap();
    let long_id = dir.path().join("long-id.yaml");
    std::fs::write(
        &long_id,
        format!(
            "id: longid\ncriteria:\n  - id: {}\n    requirement: x\n",
            "a".repeat(70_000)
        ),
    )
    .unwrap();
    let long_name = dir.path().join("long-name.yaml");
    std::fs::write(
        &long_name,
        format!(
            "id: ln\nname: {}\ncriteria:\n  - id: c\n    requirement: x\n",
            "N".repeat(70_000)
        ),
    )
    .unwrap();
    for (file, want) in [
        (&long_id, "long-id.yaml:3:"),
        (&long_name, "long-name.yaml:2:"),
    ] {
        let path = file.to_str().unwrap();
        for args in [vec!["validate", path], vec!["inspect", path]] {
            let out = rubricate(&args);
            assert_eq!(out.status.code(), Some(INPUT_ERROR), "{args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains(want) && err.contains("characters long; at most"),
                "{args:?}: {}",
                &err[..err.len().min(400)]
            );
        }
    }
}

/// `inspect` says what `validate` would refuse — a bad line in a dataset, a pattern that
/// does not compile — and exits 2 as `validate` does.
#[test]
fn inspect_exits_2_on_what_validate_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("bad.jsonl");
    std::fs::write(&data, "{\"id\":\"a\",\"submission\":\"x\"}\nnot json\n").unwrap();
    let rubric = dir.path().join("bad-regex.yaml");
    std::fs::write(
        &rubric,
        "id: r\ncriteria:\n  - id: c\n    requirement: x\n    method: { check: regex, args: { pattern: \"(unclosed\" } }\n",
    )
    .unwrap();
    for (file, want) in [
        (&data, "bad.jsonl:2:"),
        (&rubric, "bad-regex.yaml:5:46: criterion 'c': invalid regex"),
    ] {
        let out = rubricate(&["inspect", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(INPUT_ERROR));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(want),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// Nothing is dropped without a word: a second YAML document, or an agentv file with two
/// lists of cases, is refused where the dropped part starts.
#[test]
fn a_second_document_or_a_second_list_of_cases_is_refused_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let multi = dir.path().join("multi.yaml");
    std::fs::write(
        &multi,
        "id: a\ncriteria:\n  - id: c\n    requirement: x\n---\nid: b\ncriteria: []\n",
    )
    .unwrap();
    let out = rubricate(&["validate", multi.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(INPUT_ERROR));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("multi.yaml:5:1: a second YAML document starts here"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One document with explicit markers is fine.
    let one = dir.path().join("one.yaml");
    std::fs::write(
        &one,
        "---\nid: a\ncriteria:\n  - id: c\n    requirement: x\n...\n",
    )
    .unwrap();
    assert_eq!(
        rubricate(&["validate", one.to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
    let agentv = dir.path().join("both.yaml");
    std::fs::write(
        &agentv,
        "description: x\nevalcases:\n  - id: a\n    expected_outcome: Says hi\n    input_messages: [{role: user, content: hi}]\ntests:\n  - id: b\n    expected_outcome: Says bye\n    input: bye\n",
    )
    .unwrap();
    let out = rubricate(&["validate", "--from", "agentv", agentv.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(INPUT_ERROR));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("both.yaml:7:3: both `evalcases` and `tests` hold eval cases"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A dry run says which judge calls could not be made (a template that does not render)
/// instead of counting them as nothing.
#[test]
fn a_dry_run_names_the_calls_a_template_keeps_from_being_made() {
    let dir = tempfile::tempdir().unwrap();
    let rubric = dir.path().join("t.yaml");
    std::fs::write(
        &rubric,
        "id: t\ncriteria:\n  - id: c\n    requirement: x\n    method:\n      judge:\n        template: \"{{ '%999999999999s' | format('a') }}\"\n",
    )
    .unwrap();
    let data = dir.path().join("d.jsonl");
    std::fs::write(&data, "{\"id\":\"a\",\"submission\":\"x\"}\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir.path())
        .args([
            "grade",
            "--rubric",
            "t.yaml",
            "d.jsonl",
            "--dry-run",
            "--judge",
            "openai/x",
        ])
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "1 judge calls cannot be made and would fail; the first: item a: c: template error"
        ) && text.contains("pads to at most 10000"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
