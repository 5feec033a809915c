//! The Grade pane: its set-up, and the live grid a run streams into.

use super::*;

#[test]
fn the_grade_pane_grades_an_autorubric_dataset_with_its_own_rubric() {
    let mut ui = with_autorubric_essays();
    ui.press([key('G')]);
    // The last choice: the dataset's own rubric (each item's, when it brings one).
    let files = ui.app.shared().rubric_files.len();
    ui.press((0..files).map(|_| code(KeyCode::Down)));
    let effects = ui.app.update(key('e'));
    assert!(
        matches!(&effects[..], [Effect::Estimate { rubric: None, .. }]),
        "{effects:?}"
    );
    settle(&mut ui.app, &ui.runtime, effects);
    let estimate = ui.app.panes().grade.estimate.clone().unwrap_or_default();
    let said = ui.app.shared().message.clone().unwrap_or_default();
    assert!(!said.contains("pass --rubric"), "{said}");
    assert!(
        estimate.contains("no criterion is judged"),
        "{estimate} / {said}"
    );
}

use rubricate::engine::{EventKind, GradeEvent};
use rubricate::model::{CriterionResult, Failure, MethodKind, Verdict};

const CRITERIA: [&str; 3] = ["reset-link", "steps", "asks-password"];

fn ev(item: usize, criterion: usize, kind: EventKind) -> Msg {
    Msg::Grade {
        tag: 7,
        event: Box::new(GradeEvent {
            run: 7,
            item,
            criterion: Some(criterion),
            kind,
        }),
    }
}

fn scored(c: usize, verdict: Verdict, value: f64, reason: &str) -> EventKind {
    let mut r = CriterionResult::failed(CRITERIA[c], MethodKind::Judge, Failure::error("x", "y"));
    r.failure = None;
    r.verdict = Some(verdict);
    r.value = Some(value);
    r.reason = reason.into();
    EventKind::Scored(Box::new(r))
}

/// The Grade pane watching run 7 over the demo dataset, mid-stream.
fn watching(w: u16, h: u16) -> Ui {
    let mut ui = Ui::new(w, h);
    ui.press([code(KeyCode::Enter), key('G')]);
    ui.press([Msg::RunStarted {
        tag: 7,
        run_id: "20261122-120000-abcd".into(),
        criteria: CRITERIA
            .iter()
            .map(|c| ((*c).to_owned(), *c == "asks-password"))
            .collect(),
        items: Some(50),
    }]);
    ui.press([
        ev(
            0,
            0,
            scored(0, Verdict::Met, 1.0, "It names the Forgot password link."),
        ),
        ev(0, 1, scored(1, Verdict::Unmet, 0.0, "No steps.")),
        ev(0, 2, scored(2, Verdict::Met, 1.0, "Asks for the password.")),
        ev(1, 0, EventKind::Queued),
        ev(1, 1, EventKind::Queued),
        ev(1, 2, EventKind::Queued),
        ev(
            1,
            0,
            EventKind::Chunk("{\"reason\": \"The answer points".into()),
        ),
        ev(
            1,
            1,
            EventKind::Failed(Failure::error(
                "judge",
                "openai/j: rate limited by the provider (HTTP 429)",
            )),
        ),
    ]);
    ui
}

#[test]
fn time_comes_in_as_ticks_so_rate_and_eta_follow_the_messages_not_the_clock() {
    use std::time::{Duration, Instant};
    let t0 = Instant::now();
    let mut ui = Ui::new(120, 40);
    ui.press([Msg::Tick(t0), code(KeyCode::Enter), key('G')]);
    ui.press([Msg::RunStarted {
        tag: 7,
        run_id: "20261122-120000-abcd".into(),
        criteria: CRITERIA.iter().map(|c| ((*c).to_owned(), false)).collect(),
        items: Some(50),
    }]);
    // Ten seconds later by the ticks, three cells are graded: 0.3 cells/s, and 147
    // cells left at that rate take 490 s — whatever the wall clock did meanwhile.
    ui.press([
        Msg::Tick(t0 + Duration::from_secs(10)),
        ev(0, 0, scored(0, Verdict::Met, 1.0, "a")),
        ev(0, 1, scored(1, Verdict::Met, 1.0, "b")),
        ev(0, 2, scored(2, Verdict::Met, 1.0, "c")),
    ]);
    let run = ui.app.panes().grade.run.as_ref().unwrap();
    assert!((run.rate(ui.app.shared().now) - 0.3).abs() < 1e-9);
    assert_eq!(run.eta(ui.app.shared().now).map(f64::round), Some(490.0));
    let screen = ui.screen();
    assert!(
        screen.contains("0.3 cells/s") && screen.contains("ETA 490s"),
        "{screen}"
    );
    // The labelling rate counts from the first label, by the ticks too.
    let mut ui = Ui::new(120, 40);
    ui.press([Msg::Tick(t0), code(KeyCode::Enter), key('L'), key('m')]);
    ui.press([Msg::Tick(t0 + Duration::from_secs(60)), key('m')]);
    let text = rubricate::tui::render_text(&ui.app, 120, 40);
    assert!(text.contains("this sitting 2 labelled (2.0/min)"), "{text}");
}

#[test]
fn a_chunk_from_a_superseded_run_is_ignored() {
    let mut ui = watching(120, 40);
    let before = ui.app.panes().grade.run.as_ref().unwrap().rows[1].clone();
    ui.press([Msg::Grade {
        tag: 6,
        event: Box::new(GradeEvent {
            run: 6,
            item: 1,
            criterion: Some(2),
            kind: EventKind::Chunk("stale".into()),
        }),
    }]);
    assert_eq!(
        format!("{:?}", ui.app.panes().grade.run.as_ref().unwrap().rows[1]),
        format!("{before:?}")
    );
    // The selected cell's stream is kept; others are only counted.
    ui.press([code(KeyCode::Down)]);
    ui.press([ev(1, 0, EventKind::Chunk(" to the reset page\"".into()))]);
    let run = ui.app.panes().grade.run.as_ref().unwrap();
    assert_eq!(run.stream, " to the reset page\"");
}

#[test]
fn cancel_produces_the_cancel_effect_and_pause_the_pause_effect() {
    let mut ui = watching(120, 40);
    assert_eq!(
        ui.app.update(key(' ')),
        vec![Effect::PauseRun {
            tag: 7,
            paused: true
        }]
    );
    assert_eq!(
        ui.app.update(code(KeyCode::Esc)),
        vec![Effect::CancelRun { tag: 7 }]
    );
    assert!(ui.app.panes().grade.run.as_ref().unwrap().cancelled);
}

fn finished() -> Msg {
    Msg::GradeFinished {
        tag: 7,
        summary: "done".into(),
        end: rubricate::tui::app::RunEnd::Finished,
        tokens: 0,
        cost: 0.0,
    }
}

/// The cells `k` (`r` or `A`) retries in run 7, once `y` answers its question (the
/// question alone sends nothing).
fn retried(ui: &mut Ui, k: char) -> Vec<(usize, String)> {
    assert!(ui.app.update(key(k)).is_empty());
    match ui.app.update(key('y')).as_slice() {
        [
            Effect::RetryCells {
                tag: 7,
                cells,
                max_cost: None,
            },
        ] => cells.clone(),
        other => panic!("{other:?}"),
    }
}

/// An item's evaluation with `results`.
fn evaluation(target: &str, results: Vec<CriterionResult>) -> rubricate::model::Evaluation {
    rubricate::model::Evaluation {
        id: "eval_1".into(),
        rubric_id: "case".into(),
        rubric_version: "1".into(),
        target_id: target.into(),
        target_type: "item".into(),
        failures: results.iter().filter(|r| r.failure.is_some()).count(),
        results,
        score: None,
        raw: None,
        passed: false,
        incomplete: true,
        feedback: String::new(),
        evaluated_at: String::new(),
        evaluated_by: String::new(),
        graders: Vec::new(),
        tags: std::collections::BTreeMap::new(),
        pending: Vec::new(),
    }
}

/// A journalled cell of an item with its own rubric.
fn journalled(item: usize, criterion: &str, failed: bool) -> rubricate::store::runs::Cell {
    let mut r = CriterionResult::failed(
        criterion,
        MethodKind::Judge,
        Failure::error("judge", "HTTP 500"),
    );
    if !failed {
        r.failure = None;
        r.verdict = Some(Verdict::Met);
        r.value = Some(1.0);
    }
    rubricate::store::runs::Cell {
        item,
        item_id: format!("case-{item}"),
        result: r,
    }
}

#[test]
fn a_retry_in_a_run_of_items_with_their_own_rubrics_keeps_every_other_cell() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('G')]);
    // An agentv eval's run continued after a restart (each case its own rubric: no
    // criteria for the run): five cases, two criteria each, four failed cells.
    let started = || Msg::RunStarted {
        tag: 7,
        run_id: "20261122-120000-abcd".into(),
        criteria: Vec::new(),
        items: Some(5),
    };
    let cells: Vec<_> = (0..5)
        .flat_map(|i| {
            [
                journalled(i, &format!("contains-{i}"), i == 1),
                journalled(i, &format!("judge-{i}"), i % 2 == 1 || i == 4),
            ]
        })
        .collect();
    ui.press([
        started(),
        Msg::Preload {
            tag: 7,
            cells: cells.clone(),
        },
        finished(),
    ]);
    let failed = |ui: &Ui| ui.app.panes().grade.run.as_ref().unwrap().failed_cells();
    assert_eq!(
        failed(&ui),
        [
            (1, "contains-1".to_owned()),
            (1, "judge-1".to_owned()),
            (3, "judge-3".to_owned()),
            (4, "judge-4".to_owned())
        ],
        "the failed cells of a continued run can be retried"
    );
    // `r` on the first failed cell (case 1, first column).
    ui.press([code(KeyCode::Down)]);
    assert_eq!(retried(&mut ui, 'r'), [(1, "contains-1".into())]);
    // What the runtime says for the retry: the run started again (the same tag), the
    // other cells from its journal, then the retried cell's new failure and its item's
    // evaluation, which lists only the cell graded again.
    let others: Vec<_> = cells
        .iter()
        .filter(|c| !(c.item == 1 && c.result.criterion_id == "contains-1"))
        .cloned()
        .collect();
    ui.press([
        started(),
        Msg::Preload {
            tag: 7,
            cells: others,
        },
        ev(
            1,
            0,
            EventKind::Failed(Failure::error("judge", "HTTP 500 again")),
        ),
        Msg::Grade {
            tag: 7,
            event: Box::new(GradeEvent {
                run: 7,
                item: 1,
                criterion: None,
                kind: EventKind::ItemDone(Box::new(evaluation(
                    "case-1",
                    vec![journalled(1, "contains-1", true).result],
                ))),
            }),
        },
        finished(),
    ]);
    let run = ui.app.panes().grade.run.as_ref().unwrap();
    assert_eq!(
        run.rows.iter().flatten().count(),
        5,
        "every case is still shown"
    );
    assert_eq!(run.cells_done, 10);
    // `A` retries all four failures, not "no failed cells" nor only the retried one's.
    assert_eq!(
        retried(&mut ui, 'A'),
        [
            (1, "contains-1".into()),
            (1, "judge-1".into()),
            (3, "judge-3".into()),
            (4, "judge-4".into())
        ]
    );
}

#[test]
fn a_failed_cells_retry_requeues_only_that_cell() {
    let mut ui = watching(120, 40);
    ui.press([ev(
        2,
        2,
        EventKind::Failed(Failure::error("judge", "timeout")),
    )]);
    ui.press([finished()]);
    // Select row 1, column 1 (the 429).
    ui.press([code(KeyCode::Down), code(KeyCode::Right)]);
    // A retry sends a judge call: asked first, `y` goes ahead.
    assert_eq!(retried(&mut ui, 'r'), [(1, "steps".into())]);
    let run = ui.app.panes().grade.run.as_ref().unwrap();
    let rows: Vec<String> = run
        .rows
        .iter()
        .flatten()
        .map(|r| r.cells.iter().map(|c| c.symbol(false)).collect())
        .collect();
    assert_eq!(
        rows,
        ["✓✗✓", "…··", "··!"],
        "only the retried cell is queued again"
    );
    // Retrying everything that failed waits for the run to end again.
    ui.press([finished()]);
    assert_eq!(retried(&mut ui, 'A'), [(2, "asks-password".into())]);
}

#[test]
fn the_selected_row_stays_on_screen_at_80x24() {
    let mut ui = watching(80, 24);
    // Rows for 40 items, then the cursor taken far down the grid.
    for item in 0..40 {
        ui.press([ev(item, 0, EventKind::Queued)]);
    }
    ui.press((0..30).map(|_| code(KeyCode::Down)));
    let run = ui.app.panes().grade.run.as_ref().unwrap();
    assert_eq!(run.cursor.0, 30);
    let screen = ui.screen();
    assert!(
        screen.lines().any(|l| l.starts_with("│#31 ")),
        "the grid draws the selected row:\n{screen}"
    );
}

#[test]
fn mid_stream_grids() {
    let ui = watching(120, 40);
    // Rates and the ETA depend on the clock.
    // The rate is printed in a fixed width (the line wraps the same whatever it is).
    let rate = regex::Regex::new(r" +[0-9]+\.[0-9] cells/s").unwrap();
    let eta = regex::Regex::new(r"ETA [0-9s-]+").unwrap();
    let redact = |s: String| {
        let s = rate.replace_all(&s, " [rate] cells/s").into_owned();
        eta.replace_all(&s, "ETA [eta]").into_owned()
    };
    insta::assert_snapshot!("grade_grid_120x40", redact(ui.screen()));
    let ui = watching(80, 24);
    insta::assert_snapshot!("grade_grid_80x24", redact(ui.screen()));
}

#[test]
fn the_grade_set_up_takes_a_judge_model_and_a_strategy() {
    use rubricate::engine::judge::Strategy;
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('G'), key('t'), key('t')]);
    assert_eq!(ui.app.panes().grade.strategy, Some(Strategy::OneShot));
    ui.press([key('m')]);
    for c in "openai/gpt-4o-mini".chars() {
        ui.app.update(key(c));
    }
    ui.press([code(KeyCode::Enter)]);
    assert_eq!(
        ui.app.panes().grade.judge.as_deref(),
        Some("openai/gpt-4o-mini")
    );
    assert!(ui.screen().contains("strategy one_shot"));
    let effects = ui.app.update(key('e'));
    assert!(
        matches!(&effects[0], Effect::Estimate { judge: Some(j), strategy: Some(Strategy::OneShot), .. } if j == "openai/gpt-4o-mini"),
        "{effects:?}"
    );
}

/// A pairwise rubric's estimate counts both orders of every pair, as the run asks them
/// (5 pair items × 3 criteria × 2 orders).
#[test]
fn the_estimate_of_a_pairwise_run_counts_both_orders() {
    let mut ui = Ui::with(120, 40, |root| {
        let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        std::fs::copy(
            examples.join("pairs.jsonl"),
            root.join("datasets/pairs.jsonl"),
        )
        .unwrap();
        std::fs::copy(
            examples.join("compare.yaml"),
            root.join("rubrics/a-compare.yaml"),
        )
        .unwrap();
        // A judge that needs no key (nothing is sent: an estimate).
        std::fs::write(
            root.join("rubricate.yaml"),
            "annotator: alice\nproviders:\n  local:\n    base_url: http://127.0.0.1:9/v1\n",
        )
        .unwrap();
    });
    ui.press([code(KeyCode::Enter)]);
    assert!(ui.app.shared().browse.is_some());
    ui.press([key('G'), key('m')]);
    for c in "local/judge".chars() {
        ui.app.update(key(c));
    }
    ui.press([code(KeyCode::Enter), key('e')]);
    let estimate = ui.app.panes().grade.estimate.clone().unwrap_or_default();
    let said = ui.app.shared().message.clone().unwrap_or_default();
    assert!(estimate.contains("30 judge calls"), "{estimate} / {said}");
}
