//! The terminal UI's streaming passes over saved runs (`tui::run_scan`), each checked
//! against what the run engine replays of the demo run: the join with the labels, the
//! Results list's filters, the Datasets filters on the run, and a comparison of two runs
//! joined by position.
#![cfg(feature = "tui")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rubricate::model::Evaluation;
use rubricate::store::Workspace;
use rubricate::tui::app::label_text;
use rubricate::tui::data::Labels;
use rubricate::tui::panes::results::verdict_text;
use rubricate::tui::run_scan::{self, ItemsQuery, RunFilter};

#[path = "support/later_run.rs"]
mod later_run;
use later_run::{DEMO_RUN as RUN, later_run, q01_loses_the_reset_link};

/// The demo workspace, its runs folder and alice's labels.
fn demo() -> (tempfile::TempDir, PathBuf, Labels) {
    let dir = tempfile::tempdir().unwrap();
    rubricate::store::workspace::create_demo(dir.path()).unwrap();
    let ws = Workspace::at(dir.path()).unwrap();
    let labels = rubricate::tui::runtime::reads::labels(&ws, "support-answers", "alice");
    assert!(!labels.is_empty(), "the demo has alice's labels");
    (dir, ws.runs_dir(), labels)
}

/// Every item of a run as the run engine replays it, with its dataset position.
fn replayed(runs: &Path, run: &str) -> Vec<(usize, Evaluation)> {
    let mut out = Vec::new();
    rubricate::run::record::Recording::open(runs, run)
        .unwrap()
        .replay(|p, e| out.push((p, e.clone())))
        .unwrap();
    out
}

#[test]
fn the_join_keeps_the_judges_verdicts_on_labelled_cells_and_where_they_differ() {
    let (_dir, runs, labels) = demo();
    let mut judged = BTreeMap::new();
    let mut disagree = Vec::new();
    for (p, e) in replayed(&runs, RUN) {
        let mut differs = false;
        for x in &e.results {
            let cell = (e.target_id.clone(), x.criterion_id.clone());
            if let (Some(v), Some(h)) = (&x.verdict, labels.get(&cell)) {
                differs |= label_text(h) != v.to_string();
                judged.insert(cell, v.clone());
            }
        }
        if differs {
            disagree.push(p);
        }
    }
    let join = run_scan::join_labels(&runs, RUN, &labels, 7).unwrap();
    assert!(!judged.is_empty() && !disagree.is_empty());
    // The judge's verdict on every labelled cell, as the replay gives it.
    for cell in labels.keys() {
        assert_eq!(join.verdict(&cell.0, &cell.1), judged.get(cell), "{cell:?}");
    }
    assert_eq!(join.disagree, disagree);
    assert_eq!((join.run_id.as_str(), join.labels_gen), (RUN, 7));
    // Without labels nothing is kept, whatever the run's size.
    let none = run_scan::join_labels(&runs, RUN, &Labels::new(), 8).unwrap();
    assert!(none.is_empty() && none.disagree.is_empty());
}

#[test]
fn the_results_list_keeps_the_positions_of_the_verdict_or_failure_asked_for() {
    let (_dir, runs, _) = demo();
    let items = replayed(&runs, RUN);
    let texts: std::collections::BTreeSet<String> = items
        .iter()
        .filter_map(|(_, e)| e.results.iter().find(|x| x.criterion_id == "reset-link"))
        .map(verdict_text)
        .collect();
    assert!(texts.len() > 1, "{texts:?}");
    for text in texts {
        let want: Vec<usize> = items
            .iter()
            .filter(|(_, e)| {
                e.results
                    .iter()
                    .any(|x| x.criterion_id == "reset-link" && verdict_text(x) == text)
            })
            .map(|(p, _)| *p)
            .collect();
        let q = ItemsQuery {
            criterion: Some("reset-link".into()),
            verdict: Some(text.clone()),
            failed: false,
        };
        assert_eq!(
            run_scan::filter_items(&runs, RUN, &q).unwrap(),
            want,
            "{text}"
        );
    }
    let failed: Vec<usize> = items
        .iter()
        .filter(|(_, e)| e.results.iter().any(|x| x.failure.is_some()))
        .map(|(p, _)| *p)
        .collect();
    let q = ItemsQuery {
        failed: true,
        ..ItemsQuery::default()
    };
    assert_eq!(run_scan::filter_items(&runs, RUN, &q).unwrap(), failed);
    // No filter: every item, in dataset order.
    let all: Vec<usize> = items.iter().map(|(p, _)| *p).collect();
    assert_eq!(
        run_scan::filter_items(&runs, RUN, &ItemsQuery::default()).unwrap(),
        all
    );
}

#[test]
fn the_datasets_filters_on_the_run_keep_what_the_items_and_labels_say() {
    let (_dir, runs, labels) = demo();
    let items = replayed(&runs, RUN);
    let keep = |f: &dyn Fn(&Evaluation) -> bool| -> Vec<usize> {
        items
            .iter()
            .filter(|(_, e)| f(e))
            .map(|(p, _)| *p)
            .collect()
    };
    let label = |e: &Evaluation, c: &str| {
        labels
            .get(&(e.target_id.clone(), c.to_owned()))
            .map(label_text)
    };
    let judge = |e: &Evaluation, c: &str| {
        e.results
            .iter()
            .find(|x| x.criterion_id == c)
            .and_then(|x| x.verdict.as_ref())
            .map(ToString::to_string)
    };
    let cases: Vec<(RunFilter, Vec<usize>)> = vec![
        (
            RunFilter::Failed,
            keep(&|e| e.results.iter().any(|x| x.failure.is_some())),
        ),
        (
            RunFilter::ScoreLow,
            keep(&|e| e.score.is_some_and(|s| s < 0.5)),
        ),
        (
            RunFilter::ScoreHigh,
            keep(&|e| e.score.is_some_and(|s| s >= 0.5)),
        ),
        (
            RunFilter::Disagreement,
            keep(&|e| {
                e.results.iter().any(|x| {
                    let j = judge(e, &x.criterion_id);
                    let h = label(e, &x.criterion_id);
                    j.is_some() && h.is_some() && j != h
                })
            }),
        ),
        (
            RunFilter::Cell {
                criterion: "reset-link".into(),
                human: "MET".into(),
                judge: "UNMET".into(),
            },
            keep(&|e| {
                label(e, "reset-link").as_deref() == Some("MET")
                    && judge(e, "reset-link").as_deref() == Some("UNMET")
            }),
        ),
    ];
    let mut nonempty = 0;
    for (filter, want) in cases {
        nonempty += usize::from(!want.is_empty());
        assert_eq!(
            run_scan::filter_run(&runs, RUN, &filter, &labels).unwrap(),
            want,
            "{filter:?}"
        );
    }
    assert!(nonempty >= 3, "the demo exercises most filters");
}

#[test]
fn two_runs_are_compared_by_position_and_items_that_differ_are_counted_not_compared() {
    let (_dir, runs, _) = demo();
    let new = "20261122-160000-beef";
    // q01 loses the reset link (a required gate); the item at q02's position is another.
    later_run(&runs, new, |l| {
        q01_loses_the_reset_link(l).replace("\"item_id\":\"q02\"", "\"item_id\":\"q02-renamed\"")
    });
    let c = run_scan::compare(&runs, RUN, new).unwrap();
    let moved: Vec<(&str, bool, usize)> = c
        .moved
        .iter()
        .map(|(id, _, regression, p)| (id.as_str(), *regression, *p))
        .collect();
    assert_eq!(moved, vec![("q01", true, 0)]);
    assert_eq!(c.moved_total, 1);
    assert!(c.moved[0].1 < 0.0, "q01's score fell");
    assert_eq!(c.changed.get("reset-link"), Some(&1));
    assert_eq!(c.changed.values().sum::<usize>(), 1);
    assert_eq!(c.mismatched, 1);
    // A run compared with itself: nothing moved or changed.
    let same = run_scan::compare(&runs, RUN, RUN).unwrap();
    assert!(same.moved.is_empty() && same.changed.is_empty() && same.mismatched == 0);
}
