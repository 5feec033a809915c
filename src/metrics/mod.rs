//! Judge-versus-human agreement and score metrics (SCORING.md "Metrics against human labels").
//!
//! Pure functions, no I/O. [`criterion_report`] is the entry point: given each criterion's
//! paired (human, judge) verdicts it reports, per criterion and pooled over the binary
//! criteria, the classification metrics (binary, nominal or ordinal) or the score metrics,
//! with seeded percentile bootstrap intervals over items when asked. The pieces are usable on
//! their own:
//!
//! - [`classification`]: binary confusion and metrics (MET positive: accuracy, precision,
//!   recall, F1, macro-F1, Cohen's κ, φ, leniency) and k×k confusions with unweighted or
//!   quadratic-weighted κ;
//! - [`scores`]: RMSE, MAE, Pearson, Spearman, Kendall τ-b, bias with a paired t-test and
//!   Cohen's d;
//! - [`agreement`]: Krippendorff's α and Fleiss' κ between several raters;
//! - [`bootstrap`]: the percentile bootstrap;
//! - [`paired`]: paired tests of two runs (exact McNemar, paired bootstrap of a mean).
//!
//! An undefined metric (precision when the judge never says MET, κ when both sides use one
//! class, a correlation with a constant side, …) is `None` — `null` in JSON — never 0.

pub mod agreement;
pub mod bootstrap;
pub mod classification;
pub mod judge_vs_human;
pub mod paired;
pub mod pairwise;
pub mod ppi;
pub mod preference;
mod report;
pub mod scores;
mod special;

pub use agreement::{AlphaLevel, FleissKappa, UnitTally, fleiss_kappa, krippendorff_alpha};
pub use bootstrap::{Bootstrap, Ci, bootstrap, bootstrap_weighted};
pub use classification::{
    BinaryConfusion, BinaryLabel, BinaryMetrics, CategoryConfusion, MulticlassMetrics, Weighting,
};
pub use paired::{PairedMean, mcnemar_exact, paired_bootstrap, paired_share_change};

/// The standard normal's 97.5th percentile: the half-width of a two-sided 95 % interval in
/// standard errors.
pub const Z_95: f64 = 1.959_963_984_540_054;
pub use report::{
    BinaryIntervals, BinaryReport, CategoricalReport, CriterionLabels, CriterionMetrics,
    CriterionReport, LabelPair, LabelScale, MetricsReport, MulticlassIntervals, ScoreIntervals,
    ScoreReport, criterion_report,
};
pub use scores::{PairedTTest, ScoreMetrics, paired_t_test, score_metrics};
