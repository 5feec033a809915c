//! People's preferences on pairs through the real binary: labelled per written criterion
//! with the better candidate's id or `tie` (`labels set`, `--stdin`, `labels import`),
//! refused with what to do when they name no candidate; `metrics` and `calibrate` compare
//! them with the judge's combined verdict (κ over candidate/tie) and report the judge's
//! position bias.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use serde_json::Value;
use support::pairs::*;
use support::{LlmServer, Reply, Seen};

/// The answer that is right, except on item q5 where it always names the first shown.
fn right_but_first_on_q5(seen: &Seen) -> Reply {
    if seen.prompt().contains("Question 5?") {
        first_always(seen)
    } else {
        prefers_right(seen)
    }
}

/// Six pairs, `a` right on q0–q2 and `b` on q3–q5, graded and saved: the judge's combined
/// verdicts on each criterion are a a a b b tie (q5's orders disagree, both naming the
/// first shown). Returns the folder and the run's id.
fn graded() -> (Folder, LlmServer, String) {
    let server = LlmServer::start(Duration::from_millis(0), right_but_first_on_q5);
    let f = Folder::new(&server, &pair_items_where(6, |i| i < 3));
    let o = f.grade(&["--save"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let id = f.only_run();
    (f, server, id)
}

/// `labels set` by annotator pat against the pairwise rubric, then `rest`.
fn labels_set(f: &Folder, rest: &[&str]) -> std::process::Command {
    let mut args = vec![
        "labels",
        "set",
        "--dataset",
        "pairs.jsonl",
        "--annotator",
        "pat",
        "--rubric",
        "compare.yaml",
    ];
    args.extend_from_slice(rest);
    f.command(&args)
}

#[test]
fn preferences_name_candidates_and_metrics_give_kappa_and_position_bias_by_hand() {
    let (f, _server, run) = graded();
    // People on `correct`: a a b b tie tie (typed as a person might, case and all).
    let o = set_preferences(
        f.path(),
        "pairs.jsonl",
        "compare.yaml",
        "pat",
        "q0 correct a\nq1 correct A\nq2 correct b\nq3 correct b\nq4 correct tie\nq5 correct TIE\n",
    );
    assert_eq!(stdout(&o).matches("saved").count(), 6);
    // The journal names candidates (as the items write them) and the written criterion.
    let journal =
        std::fs::read_to_string(f.path().join("labels/pairs/pat.jsonl")).unwrap_or_default();
    let said: Vec<(String, String)> = journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|e| {
            (
                e["criterion"].as_str().unwrap().to_owned(),
                e["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let verdicts: Vec<&str> = said.iter().map(|(_, v)| v.as_str()).collect();
    assert_eq!(verdicts, ["a", "a", "b", "b", "tie", "tie"]);
    assert!(said.iter().all(|(c, _)| c == "correct"), "{said:?}");

    // By hand: judge a a a b b tie against people a a b b tie tie: 4 of 6 agree (p_o 2/3);
    // people a 2, b 2, tie 2; judge a 3, b 2, tie 1: p_e = (2·3 + 2·2 + 2·1)/36 = 1/3;
    // κ = (2/3 − 1/3)/(1 − 1/3) = 0.5.
    let o = f.run(&[
        "metrics",
        "--run",
        &run,
        "--format",
        "json",
        "--bootstrap",
        "200",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let correct = m["report"]["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["criterion"] == "correct")
        .unwrap()
        .clone();
    assert_eq!(correct["scale"], "nominal");
    assert_eq!(correct["categories"], serde_json::json!(["b", "tie", "a"]));
    let nominal = &correct;
    assert!(
        (nominal["kappa"].as_f64().unwrap() - 0.5).abs() < 1e-12,
        "{correct}"
    );
    assert!((nominal["accuracy"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
    assert!(nominal["ci"]["kappa"]["low"].is_number(), "{correct}");
    // Position bias over the run's six pairs: q5's orders disagree (5 of 6 agree), and both
    // of its orders named the answer shown first.
    let bias = &m["position_bias"]["correct"];
    assert_eq!(bias["position_consistency"]["count"], 5, "{bias}");
    assert_eq!(bias["position_consistency"]["of"], 6);
    assert_eq!(bias["first_shown_wins"]["count"], 2);
    assert_eq!(bias["first_shown_wins"]["rate"], 1.0);
    // The table says the same.
    let table = stdout(&f.run(&["metrics", "--run", &run, "--bootstrap", "0"]));
    assert!(table.contains("position bias"), "{table}");
    assert!(
        table.contains("BOTH ORDERS AGREE      WHERE NOT, FIRST SHOWN WON"),
        "{table}"
    );
    assert!(
        table.contains("correct                83% [44–97%]           100% [34–100%]"),
        "{table}"
    );
    let row = table
        .lines()
        .find(|l| l.starts_with("correct "))
        .unwrap_or_default();
    assert!(row.contains("0.667") && row.contains("0.500"), "{table}");

    // calibrate ranks a judge of a pairwise rubric by the same κ.
    let o = f.run(&[
        "calibrate",
        "--dataset",
        "pairs.jsonl",
        "--rubric",
        "compare.yaml",
        "--judge",
        "openai/j",
        "--format",
        "json",
        "--bootstrap",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let judge = &c["candidates"][0];
    assert_eq!(c["labelled_items"], 6);
    assert_eq!(judge["kappa"], 0.5, "{judge}");
    assert_eq!(judge["criteria"][0]["scale"], "nominal");
}

#[test]
fn a_preference_that_names_no_candidate_is_refused_saying_which_ones_there_are() {
    let server = LlmServer::start(Duration::from_millis(0), prefers_right);
    let f = Folder::new(&server, &pair_items(2));
    let set = |cell: &[&str]| labels_set(&f, cell).output().unwrap();
    let o = set(&["q0", "correct", "c"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains(
            "item 'q0', criterion 'correct': 'c' is not a candidate of this pair; name the better one by its id ('a', 'b') or say tie"
        ),
        "{}",
        stderr(&o)
    );
    let o = set(&["q0", "correct.ab", "a"]);
    assert!(
        stderr(&o).contains("no criterion 'correct.ab'; a preference is labelled per written criterion (correct, brief)"),
        "{}",
        stderr(&o)
    );
    let o = set(&["q9", "correct", "a"]);
    assert!(stderr(&o).contains("no pair item 'q9'"), "{}", stderr(&o));
    // A CSV import is checked the same way, naming the line.
    std::fs::write(
        f.path().join("prefs.csv"),
        "item,criterion,verdict\nq0,correct,b\nq1,brief,Tie\nq1,correct,nobody\n",
    )
    .unwrap();
    let o = f.run(&[
        "labels",
        "import",
        "prefs.csv",
        "--dataset",
        "pairs.jsonl",
        "--annotator",
        "pat",
        "--rubric",
        "compare.yaml",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("prefs.csv:4: item 'q1', criterion 'correct': 'nobody'"),
        "{}",
        stderr(&o)
    );
    let csv = stdout(&f.run(&["labels", "export", "--dataset", "pairs.jsonl"]));
    assert!(csv.contains("q0,correct,b,pat"), "{csv}");
    assert!(csv.contains("q1,brief,tie,pat"), "{csv}");
}
