//! What does not fit a rubric: a verdict a criterion cannot take, and ground truth that
//! does not match the rubric. Typed so callers can tell the cases apart; the messages name
//! the criterion and what it expects.

/// A verdict (from a judge, a check, a person or a file) that a criterion cannot take.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VerdictError {
    #[error("unknown level '{given}'; expected one of {expected}")]
    /// A level id the criterion does not have.
    UnknownLevel {
        /// The level as given.
        given: String,
        /// The criterion's level ids, quoted.
        expected: String,
    },
    #[error("unknown option '{given}'; expected one of {expected}")]
    /// An option label the criterion does not have.
    UnknownOption {
        /// The label as given.
        given: String,
        /// The criterion's labels, quoted.
        expected: String,
    },
    #[error("\"{given}\" is not one of the options {expected}")]
    /// Text that names none of the criterion's options.
    NotAnOption {
        /// The text as given.
        given: String,
        /// The criterion's labels, quoted.
        expected: String,
    },
    #[error("{given:?} is not a level of criterion '{criterion}'")]
    /// Text that names none of the criterion's levels (by id or label).
    NotALevel {
        /// The text as given.
        given: String,
        /// The criterion's id.
        criterion: String,
    },
    #[error("{0:?} is not MET, UNMET or CANNOT_ASSESS")]
    /// Text that is no binary verdict.
    NotBinary(String),
    #[error("{0:?} is not a number")]
    /// Text that is no number, for a scale.
    NotANumber(String),
    #[error("score {0} is not a finite number")]
    /// NaN or an infinity, for a scale.
    NotFinite(f64),
    #[error("verdict {verdict} does not fit a {kind} criterion")]
    /// A verdict of another kind (a level for a binary criterion, …).
    WrongKind {
        /// The verdict as given.
        verdict: String,
        /// The criterion's kind (`binary`, `levels`, …).
        kind: &'static str,
    },
}

/// Ground truth that cannot be read against a rubric.
#[derive(Debug, thiserror::Error)]
pub enum GroundTruthError {
    #[error("ground_truth is not valid JSON: {0}")]
    /// The text is not JSON.
    NotJson(#[source] serde_json::Error),
    #[error("ground_truth must be a list or a map of criterion ids, found {0}")]
    /// Neither a list nor a map (what it is instead).
    WrongShape(&'static str),
    #[error(
        "ground_truth has {given} values but rubric '{rubric}' has {expected} criteria; give one verdict per criterion, in order"
    )]
    /// A list with another number of verdicts than the rubric has criteria.
    Count {
        /// Verdicts given.
        given: usize,
        /// The rubric's id.
        rubric: String,
        /// Its criteria.
        expected: usize,
    },
    #[error(
        "ground_truth names criterion '{id}', which rubric '{rubric}' does not have; its criteria are {known}"
    )]
    /// A map naming a criterion the rubric does not have.
    UnknownCriterion {
        /// The id as given.
        id: String,
        /// The rubric's id.
        rubric: String,
        /// Its criteria's ids, quoted.
        known: String,
    },
    #[error("ground_truth for criterion '{criterion}' (#{number}) {problem}")]
    /// An entry that is not a verdict of the criterion's kind.
    Entry {
        /// The criterion's id.
        criterion: String,
        /// Its 1-based place in the rubric.
        number: usize,
        /// What it is and what was expected (`is 'x', expected a number`).
        problem: String,
    },
    #[error("ground_truth for criterion '{criterion}' (#{number}): {source}")]
    /// A verdict the criterion cannot take.
    Verdict {
        /// The criterion's id.
        criterion: String,
        /// Its 1-based place in the rubric.
        number: usize,
        /// Why it does not fit.
        #[source]
        source: VerdictError,
    },
}

/// Names as a message lists them: `'a', 'b'`.
pub(crate) fn quoted_list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names
        .into_iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}
