//! Pairwise judging as data: items with two or more candidate answers, rubrics in
//! `mode: pairwise`, and the judged cells such a rubric becomes for a run.
//!
//! A pairwise rubric is graded as an ordinary rubric whose criteria are the written ones
//! times every ordered pair of candidates ([`expand`]): criterion `accuracy` over candidates
//! `a` and `b` becomes the cells `accuracy.ab` (a shown as answer A, b as B) and
//! `accuracy.ba` (the other order), each an `options` criterion answered A, B or tie. So
//! cache, batch, resume and ensembles see two ordinary judged calls, and the two orders'
//! raw replies are journalled like any other. [`combine`] puts the two orders back together.

use serde::{Deserialize, Serialize};

use super::{Criterion, JudgeMethod, Kind, Method, OptionChoice, OptionScale, Rubric, Verdict};

/// The most candidates an item may carry: every pair is judged in both orders, so six
/// candidates make 30 calls per criterion and item.
pub const MAX_CANDIDATES: usize = 6;

/// The judge's answer "answer A meets it better".
pub const ANSWER_A: &str = "A";
/// The judge's answer "answer B meets it better".
pub const ANSWER_B: &str = "B";
/// The judge's answer "neither meets it better".
pub const ANSWER_TIE: &str = "tie";

/// One candidate answer of a pair item.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Candidate {
    /// Names the candidate (the system or run that wrote it): `a`, `b`, a model name.
    pub id: String,
    /// Its answer.
    pub submission: String,
}

/// How a rubric is graded: one answer at a time, or answers compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Each criterion is judged on one submission.
    #[default]
    Single,
    /// Each criterion asks which of two answers meets it better (A, B or tie).
    Pairwise,
}

impl Mode {
    /// The mode as rubric files write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Single => "single",
            Mode::Pairwise => "pairwise",
        }
    }

    /// Whether answers are compared.
    pub fn is_pairwise(self) -> bool {
        self == Mode::Pairwise
    }
}

/// Which written criterion a judged cell asks about, and which candidates it shows first
/// (as answer A) and second (as answer B), by position in the rubric's `systems`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairOrder {
    /// The written criterion's id.
    pub criterion: String,
    /// The candidate shown as answer A.
    pub first: usize,
    /// The candidate shown as answer B.
    pub second: usize,
}

/// The letter naming candidate `i` in cell ids (`a`, `b`, …).
pub fn letter(i: usize) -> char {
    u8::try_from(i)
        .ok()
        .filter(|&n| n < 26)
        .map_or('z', |n| char::from(b'a' + n))
}

/// The id of the cell judging `criterion` with candidate `first` shown first.
pub fn order_id(criterion: &str, first: usize, second: usize) -> String {
    format!("{criterion}.{}{}", letter(first), letter(second))
}

/// The order a judged cell shows, when it is a cell of a pairwise run.
pub fn pair_order(c: &Criterion) -> Option<&PairOrder> {
    match &c.method {
        Method::Judge(j) => j.pair.as_ref(),
        _ => None,
    }
}

/// Every unordered pair of `n` candidates, `(i, j)` with `i < j`.
pub fn pairs(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).flat_map(move |i| (i + 1..n).map(move |j| (i, j)))
}

/// The rubric a pairwise run grades: each written criterion once per ordered pair of
/// `systems` (the candidates' ids, in the order every item's candidates are put in). The
/// first candidate of a cell's pair scores 1 for a win, ½ for a tie, 0 for a loss, so an
/// item's score is the first candidate's share of wins (and every item passes: which
/// candidate is better is the result, not a failure). A rubric already expanded (it has
/// systems) is returned unchanged: a resumed run reads its expanded snapshot.
pub fn expand(rubric: &Rubric, systems: &[String]) -> Rubric {
    if !rubric.systems.is_empty() || !rubric.mode.is_pairwise() {
        return rubric.clone();
    }
    let mut out = rubric.clone();
    out.systems = systems.to_vec();
    // An item's score is the first candidate's share of wins: no item "fails" for losing.
    out.pass_threshold = 0.0;
    out.criteria = Vec::new();
    for c in &rubric.criteria {
        for (i, j) in pairs(systems.len()) {
            for (first, second) in [(i, j), (j, i)] {
                out.criteria.push(order_cell(c, first, second));
            }
        }
    }
    out
}

/// The written rubric of a pairwise run's expanded one: one criterion per written
/// criterion (each judged cell's pair taken off), no systems — what people label, one
/// preference per criterion. Any other rubric is returned unchanged.
pub fn written(rubric: &Rubric) -> Rubric {
    if rubric.systems.is_empty() {
        return rubric.clone();
    }
    let mut out = rubric.clone();
    out.systems = Vec::new();
    out.criteria = Vec::new();
    for c in &rubric.criteria {
        let Some(o) = pair_order(c) else { continue };
        if out.criteria.iter().any(|x| x.id == o.criterion) {
            continue;
        }
        out.criteria.push(Criterion {
            id: o.criterion.clone(),
            kind: Kind::Binary,
            method: Method::Judge(JudgeMethod {
                template: None,
                model: None,
                pair: None,
            }),
            ..c.clone()
        });
    }
    out
}

fn order_cell(c: &Criterion, first: usize, second: usize) -> Criterion {
    // Values are from the lower-numbered candidate's side of the pair.
    let (a, b) = if first < second {
        (1.0, 0.0)
    } else {
        (0.0, 1.0)
    };
    let option = |label: &str, value: f64| OptionChoice {
        label: label.to_owned(),
        value,
        na: false,
    };
    let model = match &c.method {
        Method::Judge(j) => j.model.clone(),
        _ => None,
    };
    Criterion {
        id: order_id(&c.id, first, second),
        // The written name: the judge reads it, and the id tells the cells apart.
        name: c.name.clone(),
        requirement: c.requirement.clone(),
        weight: c.weight.abs(),
        required: false,
        min_score: None,
        kind: Kind::Options {
            options: vec![
                option(ANSWER_A, a),
                option(ANSWER_B, b),
                option(ANSWER_TIE, 0.5),
            ],
            scale: OptionScale::Nominal,
        },
        method: Method::Judge(JudgeMethod {
            template: None,
            model,
            pair: Some(PairOrder {
                criterion: c.id.clone(),
                first,
                second,
            }),
        }),
        section: c.section.clone(),
        tags: c.tags.clone(),
        examples: None,
        scope: super::Scope::default(),
    }
}

/// What one judged order says, in candidates' terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preference {
    /// The candidate at this position is better.
    Wins(usize),
    /// Neither is better.
    Tie,
}

/// What a cell's verdict says about its pair; `None` when it says nothing (an abstention,
/// an error, a verdict that is not A, B or tie).
pub fn preference(order: &PairOrder, verdict: &Verdict) -> Option<Preference> {
    let Verdict::Choice(label) = verdict else {
        return None;
    };
    let label = label.trim();
    if label.eq_ignore_ascii_case(ANSWER_A) {
        Some(Preference::Wins(order.first))
    } else if label.eq_ignore_ascii_case(ANSWER_B) {
        Some(Preference::Wins(order.second))
    } else if label.eq_ignore_ascii_case(ANSWER_TIE) {
        Some(Preference::Tie)
    } else {
        None
    }
}

/// Both orders of one pair put together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Combined {
    /// The pair's outcome: an order-dependent answer is a tie.
    pub outcome: Preference,
    /// Whether the two orders agreed.
    pub consistent: bool,
}

/// The pair's outcome from its two orders' preferences.
pub fn combine(one: Preference, other: Preference) -> Combined {
    if one == other {
        Combined {
            outcome: one,
            consistent: true,
        }
    } else {
        Combined {
            outcome: Preference::Tie,
            consistent: false,
        }
    }
}

/// Candidates' ids as messages list them: `'gpt', 'claude'`.
pub fn quoted(ids: &[String]) -> String {
    ids.iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Puts an item's candidates in the run's order (`systems`, the ids of the run's first
/// pair item); an error says how the item's candidates differ.
pub fn arrange(candidates: &mut Vec<Candidate>, systems: &[String]) -> Result<(), String> {
    let ids = |c: &[Candidate]| {
        c.iter()
            .map(|c| format!("'{}'", c.id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut arranged = Vec::with_capacity(systems.len());
    for s in systems {
        match candidates.iter().position(|c| &c.id == s) {
            Some(p) => arranged.push(candidates.swap_remove(p)),
            None => {
                return Err(format!(
                    "has no candidate '{s}'; every item of a pairwise run carries the same candidates ({})",
                    quoted(systems)
                ));
            }
        }
    }
    if !candidates.is_empty() {
        return Err(format!(
            "has candidates the run's first item has not ({}); every item of a pairwise run carries the same candidates",
            ids(candidates)
        ));
    }
    *candidates = arranged;
    Ok(())
}

/// What a dataset's items are, seen one at a time: pairs with the same candidates, or
/// single answers, never both; each pair item's candidates put in the first one's order.
#[derive(Debug, Clone, Default)]
pub struct PairShape {
    /// The first pair item's candidates' ids.
    systems: Option<Vec<String>>,
    /// Pair items seen.
    pub pairs: usize,
    /// Items of one answer seen.
    pub singles: usize,
}

impl PairShape {
    /// Takes the next item, arranging its candidates; an error (naming the item, not
    /// where it was read) when it does not fit the items before it.
    pub fn add(&mut self, item: &mut super::Item) -> Result<(), String> {
        if item.candidates.is_empty() {
            if self.pairs > 0 {
                return Err(format!(
                    "item '{}' has one answer, but the items before it carry candidates to compare; give it `a` and `b` or `candidates`",
                    item.id
                ));
            }
            self.singles += 1;
            return Ok(());
        }
        if self.singles > 0 {
            return Err(format!(
                "item '{}' carries candidates to compare, but the items before it have one answer; a dataset holds pairs or single answers, not both",
                item.id
            ));
        }
        match &self.systems {
            Some(systems) => arrange(&mut item.candidates, systems)
                .map_err(|e| format!("item '{}' {e}", item.id))?,
            None => self.systems = Some(item.candidates.iter().map(|c| c.id.clone()).collect()),
        }
        self.pairs += 1;
        Ok(())
    }

    /// The candidates' ids, once a pair item was seen.
    pub fn systems(&self) -> Option<&[String]> {
        self.systems.as_deref()
    }

    /// "12 pair items, candidates 'a', 'b'", when the dataset holds pairs.
    pub fn describe(&self) -> Option<String> {
        let systems = self.systems.as_ref()?;
        let ids: Vec<String> = systems.iter().map(|s| format!("'{s}'")).collect();
        Some(format!(
            "{} pair item{} to compare, candidates {} ({} pair{} each, judged in both orders)",
            self.pairs,
            if self.pairs == 1 { "" } else { "s" },
            ids.join(", "),
            pairs(systems.len()).count(),
            if systems.len() == 2 { "" } else { "s" },
        ))
    }
}

/// What a pairwise rubric cannot hold: every criterion is a question put to a judge about
/// two answers (A, B or tie), so checks, kinds of answer, gates, graders, examples and a
/// holistic score have no meaning there.
pub fn problems(rubric: &Rubric) -> Vec<super::Problem> {
    use super::Problem;
    let mut out = Vec::new();
    if !rubric.mode.is_pairwise() {
        return out;
    }
    let refuse = |what: &str| format!("a pairwise rubric cannot have {what}; remove it");
    if !rubric.gates.is_empty() {
        out.push(Problem::rubric("gates", refuse("gates")));
    }
    if !rubric.graders.is_empty() {
        out.push(Problem::rubric("graders", refuse("graders")));
    }
    if rubric.examples.is_some() {
        out.push(Problem::rubric("examples", refuse("few-shot examples")));
    }
    if let Some(s) = rubric.judge.as_ref().and_then(|j| j.strategy.as_deref())
        && !matches!(s.trim(), "per_criterion" | "criterion")
    {
        out.push(Problem::rubric(
            "judge.strategy",
            format!("a pairwise rubric is judged one criterion and one order at a time; strategy '{s}' does not apply (remove it)"),
        ));
    }
    let expanded = !rubric.systems.is_empty();
    for (i, c) in rubric.criteria.iter().enumerate() {
        let Method::Judge(j) = &c.method else {
            out.push(Problem::criterion(
                i,
                "method",
                format!("criterion '{}' is not judged; a pairwise rubric asks a judge which answer meets each criterion better", c.id),
            ));
            continue;
        };
        if j.template.is_some() {
            out.push(Problem::criterion(
                i,
                "method",
                format!("criterion '{}' has a template of its own; a pairwise rubric uses the comparison prompt", c.id),
            ));
        }
        if !expanded && !matches!(c.kind, Kind::Binary) {
            out.push(Problem::criterion(
                i,
                "kind",
                format!("criterion '{}' is {}; a pairwise criterion is answered A, B or tie (remove `kind`)", c.id, c.kind.name()),
            ));
        }
        if c.weight < 0.0 {
            out.push(Problem::criterion(
                i,
                "weight",
                format!("criterion '{}' has a negative weight; a pairwise criterion says what is better, so write the problem as what to avoid with a positive weight", c.id),
            ));
        }
        if c.examples.is_some() {
            out.push(Problem::criterion(
                i,
                "examples",
                refuse("few-shot examples"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn systems(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_pairwise_rubric_becomes_both_orders_of_every_pair() {
        let mut r = Rubric::new("r", vec![Criterion::binary("acc", "Is accurate", 2.0)]);
        r.mode = Mode::Pairwise;
        let x = expand(&r, &systems(&["gpt", "claude", "llama"]));
        let ids: Vec<&str> = x.criteria.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            ["acc.ab", "acc.ba", "acc.ac", "acc.ca", "acc.bc", "acc.cb"]
        );
        assert_eq!(x.systems, systems(&["gpt", "claude", "llama"]));
        // Taken back to what people label: the written criteria, once each.
        let w = written(&x);
        assert_eq!(w.criteria.len(), 1);
        assert_eq!((w.criteria[0].id.as_str(), w.systems.len()), ("acc", 0));
        assert!(w.mode.is_pairwise());
        let ba = &x.criteria[1];
        assert_eq!(
            pair_order(ba),
            Some(&PairOrder {
                criterion: "acc".into(),
                first: 1,
                second: 0
            })
        );
        // Shown second, candidate a wins with B: its side of the pair scores 1.
        assert_eq!(
            ba.value_of(&Verdict::Choice("B".into())).unwrap(),
            Some(1.0)
        );
        assert_eq!(
            expand(&x, &systems(&["q"])),
            x,
            "expanding twice is a no-op"
        );
    }

    #[test]
    fn orders_that_disagree_are_a_tie_and_inconsistent() {
        let ab = PairOrder {
            criterion: "c".into(),
            first: 0,
            second: 1,
        };
        let ba = PairOrder {
            criterion: "c".into(),
            first: 1,
            second: 0,
        };
        let a = |o: &PairOrder| preference(o, &Verdict::Choice("A".into())).unwrap();
        // Always "A": each order prefers whatever is shown first.
        let c = combine(a(&ab), a(&ba));
        assert_eq!(c.outcome, Preference::Tie);
        assert!(!c.consistent);
        let b = preference(&ba, &Verdict::Choice("b".into())).unwrap();
        assert_eq!(
            combine(a(&ab), b),
            Combined {
                outcome: Preference::Wins(0),
                consistent: true
            }
        );
        assert_eq!(preference(&ab, &Verdict::CannotAssess), None);
    }

    #[test]
    fn candidates_are_put_in_the_runs_order_or_refused() {
        let c = |id: &str| Candidate {
            id: id.into(),
            submission: format!("by {id}"),
        };
        let mut list = vec![c("y"), c("x")];
        arrange(&mut list, &systems(&["x", "y"])).unwrap();
        assert_eq!(list, vec![c("x"), c("y")]);
        let mut other = vec![c("x"), c("z")];
        let e = arrange(&mut other, &systems(&["x", "y"])).unwrap_err();
        assert!(e.contains("no candidate 'y'"), "{e}");
    }
}
