//! The Results pane: agreement, the item list, runs compared, export and calibration.

use super::*;

#[test]
fn calibrate_ranks_the_datasets_runs_and_adopts_the_selected_judge() {
    let mut ui = Ui::new(120, 40);
    // A second run that names a judge model (the rubric's criteria are checks: nothing is
    // sent, so any key will do).
    let root = std::path::PathBuf::from(&ui.root);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(&root)
        .env("OPENAI_API_KEY", "sk-test")
        .env("XDG_CONFIG_HOME", root.join(".user-config"))
        .args([
            "grade",
            "--rubric",
            "rubrics/support-answer.yaml",
            "datasets/support-answers.jsonl",
            "--save",
            "--name",
            "with judge",
            "--judge",
            "openai/gpt-test",
        ])
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
    ui.press([code(KeyCode::Enter), key('R'), key('K')]);
    let screen = ui.screen();
    assert!(
        screen.contains("Calibrate: 2 runs against alice's labels of 32 items"),
        "{screen}"
    );
    assert!(
        screen.contains("with judge") && screen.contains("demo"),
        "{screen}"
    );
    // The same checks, the same verdicts: the two cannot be told apart.
    assert!(screen.contains("not distinguishable at"), "{screen}");
    let ranked = match &ui.app.panes().results.calibrate.as_ref().unwrap().ranked {
        Some(Ok(c)) => c.clone(),
        other => panic!("{other:?}"),
    };
    let at = ranked
        .candidates
        .iter()
        .position(|c| c.label == "with judge")
        .unwrap();
    ui.press((0..at).map(|_| key('j')));
    ui.press([key('A')]);
    let said = ui.app.shared().message.clone().unwrap_or_default();
    assert!(
        said.contains("adopted: support-answer@1.1.0 now judges with openai/gpt-test"),
        "{said}"
    );
    let reg = rubricate::store::registry::Registry::new(&root);
    let adopted = reg.get("support-answer", None).unwrap();
    assert_eq!(adopted.rubric.version, "1.1.0");
    assert_eq!(
        adopted.rubric.judge.and_then(|j| j.model).as_deref(),
        Some("openai/gpt-test")
    );
    // A label changes the ranking's figures: it is worked out again.
    let before = ranked.labelled;
    ui.press([key('K'), key('L')]);
    ui.press((0..32).map(|_| key('n')));
    assert_eq!(
        ui.app
            .shared()
            .browse
            .as_ref()
            .unwrap()
            .current()
            .unwrap()
            .id,
        "q33"
    );
    ui.press([key('m'), key('m'), key('m'), key('m'), key('R'), key('K')]);
    let again = match &ui.app.panes().results.calibrate.as_ref().unwrap().ranked {
        Some(Ok(c)) => c.labelled,
        other => panic!("{other:?}"),
    };
    assert_eq!(again, before + 1);
}

#[test]
fn results_show_agreement_for_levels_as_rubricate_metrics_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let kappa = levels::workspace(root, env!("CARGO_BIN_EXE_rubricate"));
    assert!((kappa - 0.75).abs() < 1e-12);
    // The Results pane shows the same κ (quadratic-weighted, levels in score order) and
    // the 3×3 confusion.
    let ws = Workspace::at(root).unwrap();
    let mut app = build(&ws).unwrap();
    let runtime = Runtime::new(
        ws.clone(),
        app.shared().datasets.clone(),
        app.shared().annotator.clone(),
    );
    let effects = app.update(Msg::Resize(120, 40));
    settle(&mut app, &runtime, effects);
    let effects = app.update(code(KeyCode::Enter));
    settle(&mut app, &runtime, effects);
    let effects = app.update(key('R'));
    settle(&mut app, &runtime, effects);
    let length_row = |screen: &str| -> String {
        screen
            .lines()
            .find(|l| l.contains("length") && l.contains('%'))
            .unwrap_or_else(|| panic!("{screen}"))
            .to_owned()
    };
    let screen = render_text(&app, 120, 40);
    let row = length_row(&screen);
    assert!(
        row.contains("0.75") && row.contains("0.71"),
        "κ and accuracy: {row}"
    );
    assert!(screen.contains("human \\ judge"), "{screen}");
    assert!(
        screen
            .lines()
            .any(|l| l.contains("short") && l.contains("       2        1        0")),
        "{screen}"
    );
    // The figures are worked out in update, and again when a label lands: correcting the
    // two labels the judge disagreed with makes the agreement perfect.
    for (seq, item, level) in [(100, "i1", "medium"), (101, "i5", "long")] {
        let effects = app.update(Msg::LabelSaved {
            seq,
            item: item.into(),
            criterion: "length".into(),
            verdict: serde_json::json!(level),
            note: String::new(),
        });
        settle(&mut app, &runtime, effects);
    }
    let row = length_row(&render_text(&app, 120, 40));
    assert!(row.contains("1.00"), "κ after the labels changed: {row}");
    assert!(!row.contains("0.75"), "{row}");
}

#[test]
fn the_results_run_exports_as_an_html_page() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('R'), key('x')]);
    assert!(ui.screen().contains("h HTML page"));
    ui.press([key('h')]);
    let said = ui.app.shared().message.clone().unwrap_or_default();
    assert!(
        said.starts_with("exported run 20261122-141552-3353 as a page (50 items, 50 held whole)"),
        "{said}"
    );
    let page = std::fs::read_to_string(
        std::path::Path::new(&ui.root).join("exports/20261122-141552-3353.html"),
    )
    .unwrap();
    assert!(page.starts_with("<!doctype html>") && page.contains(r#"id="data""#));
    // The demo's one annotator: the judge against alice's labels is on the page.
    assert!(page.contains(r#""annotator":"alice""#));
}

#[test]
fn the_results_run_exports_as_csv_jsonl_and_markdown() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('R')]);
    let root = std::path::PathBuf::from(&ui.root);
    for (k, ext) in [('c', "csv"), ('j', "jsonl"), ('m', "md")] {
        ui.press([key('x'), key(k)]);
        let said = ui.app.shared().message.clone().unwrap_or_default();
        assert!(
            said.starts_with("exported 50 items of run 20261122-141552-3353 to exports/"),
            "{said}"
        );
        let text =
            std::fs::read_to_string(root.join(format!("exports/20261122-141552-3353.{ext}")))
                .unwrap();
        match ext {
            "csv" => {
                assert!(text.starts_with("item,rubric,rubric_version,score"));
                // Feedback spans lines inside quotes: count records, not lines.
                let records = csv::Reader::from_reader(text.as_bytes())
                    .records()
                    .collect::<Result<Vec<_>, _>>()
                    .unwrap();
                assert_eq!(records.len(), 50);
                assert_eq!(&records[0][0], "q01");
            }
            "jsonl" => {
                assert_eq!(text.lines().count(), 50);
                let first: serde_json::Value =
                    serde_json::from_str(text.lines().next().unwrap()).unwrap();
                assert_eq!(first["item"], "q01");
            }
            _ => {
                assert!(text.starts_with("# Run 20261122-141552-3353"));
                assert!(text.contains("| q01 |"), "{text}");
            }
        }
    }
    // Anything else at the question exports nothing.
    ui.press([key('x'), code(KeyCode::Esc)]);
    assert_eq!(ui.app.shared().message.as_deref(), Some("not exported"));
    // The filtered item list exports only what it lists.
    ui.press([key('i'), key('v'), key('x')]);
    assert!(
        ui.app
            .shared()
            .message
            .as_deref()
            .unwrap()
            .contains("export the items listed")
    );
    ui.press([key('j')]);
    let view = ui.app.panes().results.items.clone().unwrap();
    // The positions a pass over the run kept; the export wrote those items.
    let listed = view.rows.as_ref().expect("a filtered list").len();
    assert!(listed < 50);
    let said = ui.app.shared().message.clone().unwrap();
    assert!(
        said.starts_with(&format!("exported {listed} of 50 items of run")),
        "{said}"
    );
    let text =
        std::fs::read_to_string(root.join("exports/20261122-141552-3353-filtered.jsonl")).unwrap();
    assert_eq!(text.lines().count(), listed);
}

#[test]
fn results_shows_any_run_of_the_dataset_with_braces() {
    let mut ui = Ui::new(120, 40);
    let runs = std::path::Path::new(&ui.root).join("runs");
    let old = "20261122-141552-3353";
    let new = "20261122-160000-beef";
    std::fs::create_dir_all(runs.join(new)).unwrap();
    for f in ["manifest.json", "results.jsonl"] {
        let text = std::fs::read_to_string(runs.join(old).join(f))
            .unwrap()
            .replace(old, new);
        std::fs::write(runs.join(new).join(f), text).unwrap();
    }
    ui.press([code(KeyCode::Enter), key('R')]);
    assert!(ui.screen().contains(&format!("run {new}")));
    assert!(ui.screen().contains("the latest run ({ older · } newer)"));
    ui.press([key('{')]);
    let screen = ui.screen();
    assert!(
        screen.contains(&format!("run {old}")) && screen.contains("1 runs back"),
        "{screen}"
    );
    ui.press([key('{')]);
    assert!(
        ui.app
            .shared()
            .message
            .as_deref()
            .unwrap()
            .contains("no run that far back")
    );
    ui.press([key('}')]);
    assert!(ui.screen().contains(&format!("run {new}")));
    // Another dataset opened (here: the same one again) starts from its latest run.
    ui.press([key('{'), key('D'), code(KeyCode::Esc), code(KeyCode::Enter)]);
    assert!(ui.app.panes().results.compare_b.is_none());
}

#[test]
fn runs_of_different_rubrics_compare_only_their_shared_criteria_and_say_so() {
    let mut ui = Ui::new(120, 40);
    // A later run of the demo dataset with the judged rubric (no judge: its judged
    // criteria fail, but it is a run of another rubric all the same).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(&ui.root)
        .args([
            "grade",
            "--rubric",
            "rubrics/support-answer-judged.yaml",
            "datasets/support-answers.jsonl",
            "--save",
            "--max-error-rate",
            "1",
        ])
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    ui.press([code(KeyCode::Enter), key('R'), key('c')]);
    let screen = ui.screen();
    assert!(
        screen.contains("different rubrics: only the 3 criteria both have are compared"),
        "{screen}"
    );
    assert!(
        screen.contains("their item scores are not compared"),
        "{screen}"
    );
    assert!(!screen.contains("REGRESSION"), "{screen}");
}

#[test]
fn results_lists_the_runs_items_filtered_by_verdict_and_failure_and_opens_one() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('R'), key('i')]);
    let run = ui
        .app
        .shared()
        .browse
        .as_ref()
        .unwrap()
        .run
        .clone()
        .unwrap();
    // What the journal holds, read by the run engine (the UI holds only a compact index).
    let mut truth = std::collections::HashMap::new();
    let mut at = std::collections::HashMap::new();
    let runs_dir = ui.app_workspace_runs();
    rubricate::run::record::Recording::open(&runs_dir, &run.manifest.id)
        .unwrap()
        .replay(|position, e| {
            at.insert(position, e.target_id.clone());
            let cell = e.results.iter().find(|x| x.criterion_id == "reset-link");
            let failed = e.results.iter().any(|x| x.failure.is_some());
            truth.insert(
                e.target_id.clone(),
                (
                    cell.map(rubricate::tui::panes::results::verdict_text),
                    failed,
                    cell.map(|x| x.reason.clone()),
                ),
            );
        })
        .unwrap();
    assert_eq!(truth.len(), run.len());
    // The ids of the items listed: the list holds dataset positions (none while unfiltered).
    let shown = |ui: &Ui| {
        let run = ui
            .app
            .shared()
            .browse
            .as_ref()
            .unwrap()
            .run
            .clone()
            .unwrap();
        let view = ui.app.panes().results.items.clone().unwrap();
        assert_eq!(view.filtering, None, "the pass answered");
        (0..view.row_count(&run))
            .map(|k| at[&view.position(&run, k).unwrap()].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(shown(&ui).len(), run.len(), "every item, in dataset order");
    let screen = ui.screen();
    assert!(
        screen.contains(&format!("Items {0}/{0}", run.len())),
        "{screen}"
    );
    // v: only the items the judge gave the first verdict on the selected criterion.
    ui.press([key('v')]);
    let view = ui.app.panes().results.items.clone().unwrap();
    let verdict = view.verdict.clone().expect("a verdict filter");
    let rows = shown(&ui);
    assert!(!rows.is_empty() && rows.len() < run.len());
    // The list was worked out by a pass over the run in the runtime: positions only.
    assert_eq!(
        ui.app
            .panes()
            .results
            .items
            .as_ref()
            .unwrap()
            .rows
            .as_ref()
            .map(Vec::len),
        Some(rows.len())
    );
    for id in &rows {
        assert_eq!(truth[id].0.as_deref(), Some(verdict.as_str()));
    }
    let mut given: Vec<String> = truth.values().filter_map(|t| t.0.clone()).collect();
    given.sort();
    given.dedup();
    assert_eq!(
        rubricate::tui::panes::results::verdicts(&run, "reset-link"),
        given
    );
    assert!(ui.screen().contains(&format!("reset-link = {verdict}")));
    // Each verdict in turn, then none again.
    let all = rubricate::tui::panes::results::verdicts(&run, "reset-link");
    for _ in 1..all.len() {
        ui.press([key('v')]);
    }
    ui.press([key('v')]);
    assert_eq!(ui.app.panes().results.items.as_ref().unwrap().verdict, None);
    // F: only items with a failed cell (the demo's run has none: the list says so).
    ui.press([key('F')]);
    let failed = truth.values().filter(|(_, failed, _)| *failed).count();
    assert_eq!(shown(&ui).len(), failed);
    ui.press([key('F'), code(KeyCode::Down), code(KeyCode::Down)]);
    let third = shown(&ui)[2].clone();
    // The selected item's verdicts and reasons are below the list (its reason read from
    // the journal for the rows on screen); enter opens it.
    let screen = ui.screen();
    assert!(screen.contains(&format!(" {third} ")));
    let reason = truth[&third].2.clone().unwrap();
    let start: String = reason.chars().take(20).collect();
    assert!(
        !start.is_empty() && screen.contains(&start),
        "{start:?} in\n{screen}"
    );
    ui.press([code(KeyCode::Enter)]);
    assert_eq!(ui.app.pane(), PaneId::Datasets);
    let b = ui.app.shared().browse.as_ref().unwrap();
    assert!(b.detail);
    assert_eq!(b.current().map(|i| i.id.clone()), Some(third));
    // Back in Results, the list is where it was; esc goes back to the criteria.
    ui.press([key('R')]);
    assert_eq!(ui.app.panes().results.items.as_ref().unwrap().cursor, 2);
    ui.press([code(KeyCode::Esc)]);
    assert!(ui.app.panes().results.items.is_none());
}

#[test]
fn two_runs_compare_per_criterion_and_regressions_first() {
    let mut ui = Ui::new(120, 40);
    // No earlier run yet.
    ui.press([code(KeyCode::Enter), key('R'), key('c')]);
    assert!(ui.app.panes().results.compare.is_none());
    assert!(
        ui.app
            .shared()
            .message
            .as_deref()
            .unwrap()
            .contains("no earlier run")
    );
    // A later run of the same dataset where q01 lost the reset link (a required gate).
    let runs = std::path::Path::new(&ui.root).join("runs");
    let old = later_run::DEMO_RUN;
    let new = "20261122-160000-beef";
    later_run::later_run(&runs, new, later_run::q01_loses_the_reset_link);
    // Reopen the dataset so the latest run is the new one, then compare with the one before.
    ui.press([
        key('D'),
        code(KeyCode::Esc),
        code(KeyCode::Enter),
        key('R'),
        key('c'),
    ]);
    let a = ui
        .app
        .panes()
        .results
        .compare
        .as_ref()
        .expect("an earlier run");
    assert_eq!(a.manifest.id, old);
    // The changed items were worked out by a pass over both runs, not left to every frame.
    let moved = ui
        .app
        .panes()
        .results
        .shown_comparison(ui.app.shared())
        .expect("the comparison")
        .moved
        .clone();
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0].0, "q01");
    // An answer for two other runs (a comparison asked for before the sides moved) is not
    // what the screen shows.
    let other = rubricate::tui::run_scan::Comparison {
        a: "elsewhere-a".into(),
        b: "elsewhere-b".into(),
        moved: vec![("q09".into(), -1.0, true, 8)],
        ..Default::default()
    };
    ui.press([Msg::Compared {
        a: other.a.clone(),
        b: other.b.clone(),
        result: Ok(std::sync::Arc::new(other)),
    }]);
    assert_eq!(
        ui.app
            .panes()
            .results
            .shown_comparison(ui.app.shared())
            .map(|c| c.moved.clone()),
        Some(moved.clone())
    );
    assert!(!ui.screen().contains("q09"));
    // Side A read again (`]`: the newest earlier run) is compared again, the same.
    ui.press([key(']')]);
    assert_eq!(
        ui.app
            .panes()
            .results
            .shown_comparison(ui.app.shared())
            .map(|c| c.moved.clone()),
        Some(moved)
    );
    let screen = ui.screen();
    assert!(
        screen.contains("1 items changed; regressions first"),
        "{screen}"
    );
    assert!(
        screen.contains("q01") && screen.contains("REGRESSION"),
        "{screen}"
    );
    insta::assert_snapshot!("results_compare_120x40", screen);
    ui.app.shared_mut().size = (80, 24);
    insta::assert_snapshot!("results_compare_80x24", ui.screen());
    ui.app.shared_mut().size = (120, 40);
    // The regression opens: the Datasets pane shows q01, whole.
    ui.press([code(KeyCode::Enter)]);
    assert_eq!(ui.app.pane(), PaneId::Datasets);
    let b = ui.app.shared().browse.as_ref().unwrap();
    assert!(b.detail);
    assert_eq!(b.current().map(|i| i.id.as_str()), Some("q01"));
    ui.press([key('R')]);
    // Older than the oldest: stays, and says so.
    ui.press([key('[')]);
    assert_eq!(ui.app.panes().results.compare_back, 1);
    // Side B moves too: B one back is the old run itself — nothing changed.
    ui.press([key('{')]);
    assert_eq!(ui.app.panes().results.compare_b_back, 1);
    let screen = ui.screen();
    assert!(screen.contains(&format!("B = {old}")), "{screen}");
    assert!(screen.contains("0 items changed"), "{screen}");
    ui.press([key('}')]);
    assert!(
        ui.app.panes().results.compare_b.is_none(),
        "back to the latest"
    );
    ui.press([key('c')]);
    assert!(ui.app.panes().results.compare.is_none());
}

/// The tag of the item list's pass among effects.
fn filter_pass(effects: &[Effect]) -> Option<u64> {
    effects.iter().find_map(|e| match e {
        Effect::FilterRunItems { tag, .. } => Some(*tag),
        _ => None,
    })
}

#[test]
fn the_item_lists_matches_come_from_a_pass_and_a_stale_answer_changes_nothing() {
    let mut ui = Ui::new(120, 40);
    ui.press([code(KeyCode::Enter), key('R'), key('i')]);
    // Unfiltered, the list is the run's items in order: a count, no pass, no positions.
    let view = ui.app.panes().results.items.clone().unwrap();
    assert_eq!((view.rows.clone(), view.filtering), (None, None));
    let run = ui
        .app
        .shared()
        .browse
        .as_ref()
        .unwrap()
        .run
        .clone()
        .unwrap();
    assert_eq!(view.row_count(&run), 50);
    // v asks the runtime for the matches; until they come, nothing is listed, and says so.
    let effects = ui.app.update(key('v'));
    let first = filter_pass(&effects).expect("a pass for the verdict filter");
    assert!(
        ui.screen()
            .contains("reading the run for the items the filter keeps"),
        "{}",
        ui.screen()
    );
    // The first pass answers only after v asked for the next verdict: its answer is dropped.
    let late: Vec<Msg> = effects
        .into_iter()
        .filter_map(|e| ui.runtime.handle(e))
        .collect();
    let effects = ui.app.update(key('v'));
    let second = filter_pass(&effects).expect("a pass for the next verdict");
    assert_ne!(first, second);
    ui.press(late);
    let view = ui.app.panes().results.items.clone().unwrap();
    assert_eq!(view.filtering, Some(second));
    assert_eq!(view.rows.as_deref(), Some(&[][..]));
    // An answer with a tag no list asked for (another run's pass) is dropped too.
    ui.press([Msg::RunItemsFiltered {
        tag: second + 1000,
        positions: Ok(vec![0, 1, 2]),
    }]);
    assert_eq!(
        ui.app.panes().results.items.as_ref().unwrap().filtering,
        Some(second)
    );
    // The current pass's answer is the list: the items given that verdict, in order.
    settle(&mut ui.app, &ui.runtime, effects);
    let view = ui.app.panes().results.items.clone().unwrap();
    assert_eq!(view.filtering, None);
    let want = rubricate::tui::run_scan::filter_items(
        &ui.app_workspace_runs(),
        &run.manifest.id,
        &rubricate::tui::run_scan::ItemsQuery {
            criterion: Some("reset-link".into()),
            verdict: view.verdict.clone(),
            failed: false,
        },
    )
    .unwrap();
    assert!(!want.is_empty());
    assert_eq!(view.rows, Some(want));
    // The rows on screen were read from the journal by position: no `…` left.
    ui.press([code(KeyCode::End)]);
    let screen = ui.screen();
    assert!(!screen.contains("reading its reasons"), "{screen}");
}
