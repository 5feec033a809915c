//! The Results pane on a pairwise run graded by the real binary against the loopback judge:
//! per written criterion the pairs, position consistency and the first shown's share where
//! the orders disagree, each candidate's win / tie / loss rates with intervals, κ against
//! the annotator's preferences (the figure `rubricate metrics` gives), Bradley–Terry with
//! three candidates; at 120×40 and 80×24.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::support::pairs::{answer, binary, set_preferences};
use super::support::{LlmServer, Reply, Seen, verdict};
use super::*;

/// Prefers the longer answer (a tie within ten characters), but always the first shown
/// on the password question: its orders disagree.
fn longer(seen: &Seen) -> Reply {
    if seen.prompt().contains("forgot my password") {
        return verdict("first", json!("A"));
    }
    let (a, b) = (answer(seen, "A").len(), answer(seen, "B").len());
    let v = if a > b + 10 {
        "A"
    } else if b > a + 10 {
        "B"
    } else {
        "tie"
    };
    verdict("longer", json!(v))
}

fn rubricate(root: &Path, url: &str, args: &[&str]) -> std::process::Output {
    let o = binary(root, url, args).output().unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The demo workspace with `dataset` (from examples/ or written) graded under the
/// pairwise examples/compare.yaml and saved, alice's `labels` (ITEM CRITERION VERDICT
/// lines) set; opened in Results. Returns the UI and the run's id.
fn graded(w: u16, h: u16, dataset: &str, write: Option<&str>, labels: &str) -> (Ui, String) {
    let server = LlmServer::start(Duration::from_millis(0), longer);
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let file = format!("datasets/{dataset}.jsonl");
    let mut run = String::new();
    let mut ui = Ui::with(w, h, |root| {
        match write {
            Some(text) => std::fs::write(root.join(&file), text).unwrap(),
            None => {
                std::fs::copy(examples.join(format!("{dataset}.jsonl")), root.join(&file)).unwrap();
            }
        }
        std::fs::copy(
            examples.join("compare.yaml"),
            root.join("rubrics/compare.yaml"),
        )
        .unwrap();
        let args = [
            "grade",
            &file,
            "--rubric",
            "rubrics/compare.yaml",
            "--judge",
            "openai/j",
            "--save",
            // One call at a time: the identical pair's second order is then always a
            // cache hit, so the tokens on screen are the same every time.
            "--concurrency",
            "1",
            "--format",
            "json",
        ];
        rubricate(root, &server.url, &args);
        set_preferences(root, &file, "rubrics/compare.yaml", "alice", labels);
        let mut runs: Vec<String> = std::fs::read_dir(root.join("runs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        runs.sort();
        run = runs.pop().unwrap();
    });
    open_named(&mut ui, dataset);
    ui.press([key('R')]);
    assert_eq!(ui.app.pane(), PaneId::Results);
    (ui, run)
}

/// Alice's preferences on six pairs of pairs-30 (the longer answer is assistant-v1 on all
/// but `password`, `cancel` and `long`'s other way round…): whatever they are, the pane's
/// κ is `metrics`'.
const LABELS: &str = "refund correct assistant-v1\npassword correct assistant-v2\nexport correct tie\ninvoice correct assistant-v1\nseats correct assistant-v2\ncancel correct assistant-v2\n";

fn results_snapshots(w: u16, h: u16) {
    let (ui, run) = graded(w, h, "pairs-30", None, LABELS);
    let screen = ui.screen().replace(&run, "[run]");
    // Every criterion's pairs with their position figures, and κ where alice labelled.
    assert!(
        screen.contains("correct: 30 pairs · orders agree 97% [83–99%]"),
        "{screen}"
    );
    // Where the orders disagree (one pair), both named the first shown.
    assert!(screen.contains("first shown won 100%"), "{screen}");
    let metrics = rubricate(
        Path::new(&ui.root),
        "http://127.0.0.1:9",
        &[
            "metrics",
            "--run",
            &run,
            "--format",
            "json",
            "--bootstrap",
            "0",
        ],
    );
    let m: serde_json::Value = serde_json::from_slice(&metrics.stdout).unwrap();
    let kappa = m["report"]["criteria"][0]["kappa"].as_f64().unwrap();
    assert_eq!(m["report"]["criteria"][0]["support"], 6);
    assert!(
        screen.contains(&format!("κ vs alice's preferences {kappa:.2} ")),
        "κ {kappa}: {screen}"
    );
    insta::assert_snapshot!(format!("results_pairs_{w}x{h}"), screen);
}

#[test]
fn a_pairwise_runs_results_at_120x40() {
    results_snapshots(120, 40);
}

#[test]
fn a_pairwise_runs_results_at_80x24() {
    results_snapshots(80, 24);
}

#[test]
fn three_candidates_get_a_bradley_terry_line_per_criterion() {
    // x longest, z shortest, y between, with y and z alike on one item (a tie).
    let items: String = (0..6)
        .map(|i| {
            let pad = |n: usize| "word ".repeat(n);
            let z = if i == 0 { pad(8) } else { pad(2) };
            json!({"id": format!("t{i}"), "prompt": "Say it.", "candidates": [
                {"id": "x", "submission": pad(20 + i)},
                {"id": "y", "submission": if i % 3 == 0 { pad(1) } else { pad(8) }},
                {"id": "z", "submission": z},
            ]})
            .to_string()
                + "\n"
        })
        .collect();
    let (mut ui, _) = graded(120, 40, "trio", Some(&items), "");
    let screen = ui.screen();
    assert!(screen.contains("Pairs: x vs y vs z"), "{screen}");
    assert!(screen.contains("Bradley–Terry: "), "{screen}");
    assert!(!screen.contains("κ vs alice"), "no labels, no κ: {screen}");
    // Three candidates are no pair to label: a key saves nothing and says why.
    ui.press([key('L')]);
    for k in ['m', 'h'] {
        assert!(ui.app.update(key(k)).is_empty());
        let said = ui.app.shared().message.clone().unwrap_or_default();
        assert!(
            said.contains("'t0' has 3 candidates; preferences are labelled on pairs of two"),
            "{said}"
        );
    }
}
