//! How each system's own code scores its files, and where rubricate differs on purpose:
//! one list, printed by `inspect` for the file at hand and kept word for word in docs/formats.md's
//! "Other systems' files" (a test holds the two together). The differential harnesses in
//! `shared/difftest/` find no other difference.

use super::Format;

/// What a format's home system does, and what rubricate does differently on purpose.
pub struct Fidelity {
    /// How the home system scores, in one sentence.
    pub scoring: &'static str,
    /// What rubricate does differently, each on purpose.
    pub differences: &'static [&'static str],
    /// The home library totals with Python's `sum()`, so the Python it runs on matters.
    pub python_sum: bool,
}

/// What `format`'s home system does; `None` for rubricate's own format.
pub fn of(format: Format) -> Option<Fidelity> {
    let f = match format {
        Format::Native => return None,
        Format::RubricLib => Fidelity {
            scoring: "as rubric's graders (PerCriterionGrader, one-shot, RubricAsJudgeGrader): Σ w·v over the criteria, over the positive weight (all penalties: 1 + Σ w·v / Σ |w|), clamped to 0..1",
            differences: &[
                "a weight must be a number: rubric turns \"2\" into 2 and true into 1",
                "unknown fields are refused with their place (names, ids and descriptions are read); rubric ignores them",
                "an empty requirement or an empty section is refused",
            ],
            python_sum: true,
        },
        Format::Autorubric => Fidelity {
            scoring: "as autorubric's Rubric.compute_score: points, abstentions (CANNOT_ASSESS, an NA option) by its CannotAssessConfig — skip, zero, partial, or fail, which charges the worst scored option for the criterion's sign; option labels match as `strip().lower()`",
            differences: &[
                "ground-truth verdicts are read leniently ('met', 'Not met', true, null); autorubric takes only MET, UNMET and CANNOT_ASSESS",
                "an item without a description or a prompt is read",
                "duplicate option labels, NA options valued outside 0..1, weights given as text or booleans, unknown criterion fields and empty requirements are refused with their place; criteria that share a name are numbered apart",
                "a criterion's own `aggregation` (its ensemble rule) is read and not used: ensembles combine with the run's rule (`--combine`)",
                "weights whose sum overflows give no score; autorubric gives 1.0",
                "a rubric holding both `criteria` and `sections` (autorubric reads `sections`) and a `version` that is not semantic are refused",
                "what autorubric's validation refuses and rubricate reads: `weight: null` (the default, 10), options with fewer than two scored (non-NA) options, an NA option without a value, ground truth given as a map by criterion name",
            ],
            python_sum: false,
        },
        Format::Agentv => Fidelity {
            scoring: "as @agentv/core scores a test: each grader apart — an `llm-rubric`/`rubrics` assertion or evaluator, the `assert` list's strings taken together (weighing as many as there are strings), each deterministic assertion — then the mean of the graders' scores weighted by their `weight` (default 1), 0 when a `required` grader scores below its `min_score` (else 0.8); the test passes at ≥ 0.8, compared exactly, and never reads a grader's own verdict. A rubric grader scores Σ w·v / Σ w over the criteria the judge answered (one it leaves out drops out); its verdict (shown per grader) also needs its gates: an entry without score ranges is required unless it says otherwise (`required ?? true` in its code; its documentation says false), one with ranges only when it says so; with score ranges every criterion is gated at its min_score, required or not, and a required one without min_score needs 10/10",
            differences: &[
                "when the judge answers none of a grader's criteria that grader has no score and is left out of the mean (a test with no scored grader has no score: incomplete); agentv scores it 0",
                "graders rubricate cannot run (scripts, embedding, latency, cost and token graders, `skill-trigger`, `execution-metrics`) are left out of the test's mean, with a note; agentv averages them in",
                "an `assert-set` is one grader over its members' criteria (Σ w·v / Σ w with each deterministic member weighing its own weight); agentv averages its members' scores, which differs when a member is a rubric of several criteria",
                "an entry agentv gates at its min_score while not `required` (left out or false, in a grader with score ranges) shows as required>=min: the same gate, named as rubricate names gates",
                "array vars expand before the prompts are crossed, so each combination's prompt holds its own values (agentv renders the prompt first, the list joined with commas), and the combinations after the first are numbered `-2`, `-3` … (agentv repeats the id)",
                "prompts made by a function or a command are not run: the cases keep their own input, with a note",
            ],
            python_sum: false,
        },
        Format::Agentic => Fidelity {
            scoring: "as agentic_v2_eval's Scorer: Σ w·v / Σ w over all criteria, a missing one counting 0; each value clamped to [min_value, max_value] and normalised, max_value 1 unless given (its evaluators return 0..1), so levels without max_value are placed on 0..1 — its documentation reads them as the scale. Its evaluator rubrics (a `judge_prompt`) as its evaluators: prompt_standard's dimensions weigh the same and pass at a mean of 7/10; prompt_pattern is one rubric per pattern, its 0–5 dimensions summed, passed on its hard gates",
            differences: &[
                "the Scorer has no pass or fail: rubricate passes at thresholds.pass (0.7 without) with every hard gate met (a gate's minimum is a level number)",
                "an evaluator rubric's judge_prompt asks for every dimension in one call; rubricate judges each with its own prompt, and reports the sum of prompt_pattern's dimensions as a share of their maximum",
                "a criterion without a `name` (the Scorer skips it), weights that sum to 0 or less (it scores every result 0), a min_value at or above its max_value, weights given as text and unknown fields (it ignores them) are refused with their place; a `version` that is neither a number like 1.0 nor semantic is kept as `metadata.version`",
            ],
            python_sum: true,
        },
        Format::Dataknobs => Fidelity {
            scoring: "as dataknobs' RubricExecutor: Σ w·v / Σ w over every criterion with signed weights, never clamped (weights summing to 0 score 0); a failed or unscored criterion counts 0; passed when the score ≥ pass_threshold, exactly; `required` is read and never enforced; the feedback is its deterministic summary word for word; `lint` is its meta-rubric",
            differences: &[
                "a level id a criterion does not have is refused with its place (dataknobs scores it 0); level ids in ground truth are trimmed",
                "level scores outside 0..1, levels out of ascending score order, duplicate level or criterion ids, a pass_threshold outside 0..1 and an empty criteria list are refused with their place",
                "a function_ref without a colon is refused with its place; dataknobs loads it and that criterion errors",
                "a criterion may leave out fields dataknobs requires (`scoring_method`, `name`, `weight`…; dataknobs refuses the file): it is read with rubricate's defaults — judged, named by its id, weight 1",
                "with Python 3.12+ sums, a weight written as a whole number (1, not 1.0) after a fractional one is added by dataknobs' sum() without compensation; rubricate compensates every weight, so the total can differ in the last bit",
                "a function_ref is `module:function`, as dataknobs imports it: only rubricate's own module (`rubricate.checks:NAME`, what `convert` writes) and dataknobs' meta-rubric functions are built-in checks; any other is the application's Python, which rubricate does not run: that criterion is judged by an LLM on its levels, with a note, even where a built-in check has the same name",
            ],
            python_sum: true,
        },
    };
    Some(f)
}
