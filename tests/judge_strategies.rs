//! Grading strategies, ensembles and run controls through the real binary against the
//! loopback server: one-shot (with a repair for missing criteria), the reversed double pass,
//! holistic scores, ensembles and samples with their agreement, criterion-level models,
//! streaming, identical calls in flight, the cost budget, dry runs, named providers and
//! LLM feedback; under every strategy, only replies that were read are cached, and a
//! reply with nothing readable is sent again before it is repaired.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use support::{LlmServer, Reply, Seen, verdict};

const RUBRIC: &str = r"
id: strat
name: Strategies
pass_threshold: 0.5
criteria:
  - id: correct
    requirement: Names Paris as the capital
    weight: 2
  - id: rude
    requirement: Insults the user
    weight: -1
  - id: tone
    requirement: The tone of the answer
    options:
      - { label: Formal, value: 1 }
      - { label: Casual, value: 0.5 }
      - { label: Rude, value: 0 }
";

struct Run {
    dir: tempfile::TempDir,
}

impl Run {
    fn new(rubric: &str, items: &[Value]) -> Run {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("rubric.yaml"), rubric).unwrap();
        let run = Run { dir };
        run.items(items);
        run
    }

    fn items(&self, items: &[Value]) {
        let lines: String = items.iter().map(|i| i.to_string() + "\n").collect();
        std::fs::write(self.dir.path().join("items.jsonl"), lines).unwrap();
    }

    fn config(&self, text: &str) {
        std::fs::write(self.dir.path().join("rubricate.yaml"), text).unwrap();
    }

    /// `rubricate trust` for the run's folder (a config with a key is honoured only then).
    fn trust(&self) {
        let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
            .current_dir(self.dir.path())
            .arg("trust")
            .env("XDG_CONFIG_HOME", self.path("user-config"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }

    /// `rubricate grade` in the run's folder (so its rubricate.yaml is the workspace's).
    fn grade(&self, server: &LlmServer, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rubricate"));
        cmd.current_dir(self.dir.path())
            .args([
                "grade",
                "--rubric",
                "rubric.yaml",
                "items.jsonl",
                "--format",
                "jsonl",
            ])
            .args(args)
            .env("NO_COLOR", "1")
            .env("OPENAI_BASE_URL", format!("{}/v1", server.url))
            .env("OPENAI_API_KEY", "sk-test-strategies")
            .env("ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", "ak-test-strategies")
            .env("RUBRICATE_CACHE_DIR", self.path("cache"))
            // Trust is recorded here, not in the user's config folder.
            .env("XDG_CONFIG_HOME", self.path("user-config"));
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }
}

fn item(id: &str, submission: &str) -> Value {
    json!({"id": id, "submission": submission, "prompt": "What is the capital of France?"})
}

fn results(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn criterion<'a>(result: &'a Value, id: &str) -> &'a Value {
    result["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no criterion {id} in {result}"))
}

/// The criterion ids a one-shot prompt lists, in the order shown.
fn ids_in(prompt: &str) -> Vec<String> {
    prompt
        .split("Criterion id \"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

/// A one-shot reply answering `ids` with `answer(id)`.
fn one_shot_reply(ids: &[String], answer: impl Fn(&str) -> Value) -> Reply {
    let mut map = serde_json::Map::new();
    for id in ids {
        map.insert(
            id.clone(),
            json!({"reason": format!("about {id}"), "verdict": answer(id)}),
        );
    }
    Reply::Text(Value::Object(map).to_string())
}

fn fair(id: &str) -> Value {
    match id {
        "correct" => json!("MET"),
        "rude" => json!("UNMET"),
        _ => json!("Formal"),
    }
}

/// Which criterion a per-criterion prompt is about.
fn about(seen: &Seen) -> &'static str {
    let p = seen.prompt();
    ["correct", "rude", "tone"]
        .into_iter()
        .find(|id| {
            let name = match *id {
                "correct" => "Names Paris",
                "rude" => "Insults the user",
                _ => "The tone of the answer",
            };
            p.contains(&format!(": {name}"))
        })
        .unwrap_or("none")
}

#[test]
fn one_shot_judges_every_criterion_in_one_call() {
    let server = LlmServer::start(Duration::ZERO, |seen| {
        one_shot_reply(&ids_in(&seen.prompt()), fair)
    });
    let run = Run::new(RUBRIC, &[item("a", "Paris."), item("b", "Paris!")]);
    let out = run.grade(
        &server,
        &["--judge", "openai/j", "--strategy", "one-shot"],
        &[],
    );
    let r = results(&out);
    assert_eq!(r.len(), 2, "{}", stderr(&out));
    assert_eq!(server.seen().len(), 2, "one call per item");
    let prompt = server.seen()[0].prompt();
    assert_eq!(ids_in(&prompt), ["correct", "rude", "tone"]);
    assert!(prompt.contains("<<<SUBMISSION "), "{prompt}");
    let schema = &server.seen()[0].body["response_format"]["json_schema"]["schema"];
    assert_eq!(schema["required"], json!(["correct", "rude", "tone"]));
    assert_eq!(criterion(&r[0], "correct")["verdict"], "MET");
    assert_eq!(criterion(&r[0], "rude")["verdict"], "UNMET");
    assert_eq!(criterion(&r[0], "tone")["verdict"], "Formal");
    assert_eq!(criterion(&r[0], "tone")["reason"], "about tone");
    assert_eq!(r[0]["score"], 1.0);
    // The call's tokens (100 in, 20 out) are spread over its criteria, not counted thrice.
    let tokens: u64 = ["correct", "rude", "tone"]
        .iter()
        .map(|id| {
            let u = &criterion(&r[0], id)["invocation"]["usage"];
            u["input_tokens"].as_u64().unwrap() + u["output_tokens"].as_u64().unwrap()
        })
        .sum();
    assert_eq!(tokens, 120);
    assert_eq!(
        criterion(&r[0], "rude")["invocation"]["strategy"],
        "one_shot"
    );
}

#[test]
fn one_shot_missing_criteria_are_asked_again_then_unable_to_evaluate() {
    let server = LlmServer::start(Duration::ZERO, |seen| {
        let p = seen.prompt();
        if p.contains("for these criteria only") {
            // The repair: answers `rude` but still not `tone`.
            Reply::Text(json!({"rude": {"reason": "polite", "verdict": "UNMET"}}).to_string())
        } else {
            Reply::Text(json!({"correct": {"reason": "Paris", "verdict": "MET"}, "tone": {"reason": "?", "verdict": "Shouty"}}).to_string())
        }
    });
    let run = Run::new(RUBRIC, &[item("a", "Paris.")]);
    let out = run.grade(
        &server,
        &[
            "--judge",
            "openai/j",
            "--strategy",
            "one-shot",
            "--max-error-rate",
            "1",
        ],
        &[],
    );
    let r = results(&out);
    assert_eq!(r.len(), 1, "{}", stderr(&out));
    let seen = server.seen();
    assert_eq!(seen.len(), 2, "the first call and one repair");
    let repair = seen[1].prompt();
    assert!(repair.contains("criterion \"rude\" is missing"), "{repair}");
    assert!(
        repair.contains("\"Shouty\" is not one of the options"),
        "{repair}"
    );
    let asked = &seen[1].body["response_format"]["json_schema"]["schema"]["required"];
    assert_eq!(
        asked,
        &json!(["rude", "tone"]),
        "the repair asks only for what is missing"
    );
    assert_eq!(criterion(&r[0], "correct")["verdict"], "MET");
    assert_eq!(criterion(&r[0], "rude")["verdict"], "UNMET");
    let tone = criterion(&r[0], "tone");
    assert_eq!(tone["verdict"], Value::Null, "missing is never UNMET");
    assert_eq!(tone["failure"]["kind"], "unable_to_evaluate");
    assert!(
        tone["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("\"tone\" is missing"),
        "{tone}"
    );
    assert_eq!(r[0]["incomplete"], true);
}

#[test]
fn the_double_pass_reconciles_in_order_and_reversed() {
    // A judge with position bias: it likes whatever it reads in order.
    let server = LlmServer::start(Duration::ZERO, |seen| {
        let ids = ids_in(&seen.prompt());
        let forward = ids.first().is_some_and(|id| id == "correct");
        one_shot_reply(&ids, |id| match id {
            "correct" => json!(if forward { "MET" } else { "UNMET" }),
            "rude" => json!(if forward { "UNMET" } else { "MET" }),
            _ => json!(if forward { "Formal" } else { "Casual" }),
        })
    });
    let run = Run::new(RUBRIC, &[item("a", "Paris.")]);
    let out = run.grade(
        &server,
        &["--judge", "openai/j", "--strategy", "double-pass"],
        &[],
    );
    let r = results(&out);
    assert_eq!(r.len(), 1, "{}", stderr(&out));
    let orders: Vec<Vec<String>> = server.seen().iter().map(|s| ids_in(&s.prompt())).collect();
    assert_eq!(orders.len(), 2);
    assert!(orders.contains(&vec!["correct".into(), "rude".into(), "tone".into()]));
    assert!(orders.contains(&vec!["tone".into(), "rude".into(), "correct".into()]));
    // Positive: MET only if both passes say so. Penalty: MET if either sees it. Options:
    // the worse of the two.
    assert_eq!(criterion(&r[0], "correct")["verdict"], "UNMET");
    assert_eq!(criterion(&r[0], "rude")["verdict"], "MET");
    assert_eq!(criterion(&r[0], "tone")["verdict"], "Casual");
    let c = criterion(&r[0], "correct");
    assert_eq!(
        c["reason"], "about correct",
        "the same reason from both passes once"
    );
    assert_eq!(c["invocation"]["strategy"], "double_pass");
}

#[test]
fn holistic_judging_gives_one_score_for_the_rubric() {
    let rubric = "id: h\nname: Holistic\npass_threshold: 0.8\ncriteria:\n  - { id: a, requirement: Correct, weight: 10 }\n  - { id: b, requirement: Concise, weight: 5 }\n";
    let server = LlmServer::start(Duration::ZERO, |seen| {
        assert!(
            seen.prompt().contains("- a (weight 10): Correct"),
            "{}",
            seen.prompt()
        );
        Reply::Text(json!({"reason": "Mostly right.", "score": 85}).to_string())
    });
    let run = Run::new(rubric, &[item("a", "Paris.")]);
    let out = run.grade(
        &server,
        &["--judge", "openai/j", "--strategy", "holistic"],
        &[],
    );
    let r = results(&out);
    assert_eq!(r.len(), 1, "{}", stderr(&out));
    assert_eq!(server.seen().len(), 1);
    // SCORING.md: weights 10, 5 and judge 85 → 0.85 / raw 12.75.
    assert!(
        (r[0]["score"].as_f64().unwrap() - 0.85).abs() < 1e-9,
        "{}",
        r[0]
    );
    assert!(
        (r[0]["raw"].as_f64().unwrap() - 12.75).abs() < 1e-9,
        "{}",
        r[0]
    );
    assert_eq!(r[0]["passed"], true);
    let only = r[0]["criteria"].as_array().unwrap();
    assert_eq!(only.len(), 1, "no per-criterion report");
    assert_eq!(only[0]["id"], "holistic");
    assert_eq!(only[0]["invocation"]["strategy"], "holistic");

    // A deterministic criterion cannot be part of one holistic number.
    let mixed = format!(
        "{rubric}  - {{ id: c, requirement: Short, weight: 1, method: {{ check: is_json }} }}\n"
    );
    let run = Run::new(&mixed, &[item("a", "Paris.")]);
    let out = run.grade(
        &server,
        &["--judge", "openai/j", "--strategy", "holistic"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("criterion 'c' is graded by a check"),
        "{}",
        stderr(&out)
    );
}

/// Three judges that disagree, by model name.
fn panel(seen: &Seen) -> Reply {
    let model = seen.body["model"].as_str().unwrap_or_default().to_owned();
    let answer = match (model.as_str(), about(seen)) {
        ("a" | "c", "correct") | ("b", "rude") => json!("MET"),
        ("b", "correct") | (_, "rude") => json!("UNMET"),
        ("a", "tone") => json!("Formal"),
        (_, "tone") => json!("Casual"),
        _ => return Reply::Status(400, None, "unexpected".into()),
    };
    verdict(&format!("{model} says so"), answer)
}

#[test]
fn ensembles_vote_by_majority_weight_unanimity_or_any() {
    let server = LlmServer::start(Duration::ZERO, panel);
    let run = Run::new(RUBRIC, &[item("a", "Paris.")]);
    let three = [
        "--judge", "openai/a", "--judge", "openai/b", "--judge", "openai/c",
    ];
    let out = run.grade(&server, &three, &[]);
    let r = results(&out);
    assert_eq!(r.len(), 1, "{}", stderr(&out));
    assert_eq!(server.seen().len(), 9, "three judges × three criteria");
    let correct = criterion(&r[0], "correct");
    assert_eq!(correct["verdict"], "MET");
    assert_eq!(correct["ensemble"]["rule"], "majority");
    assert!((correct["ensemble"]["agreement"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9);
    assert_eq!(correct["ensemble"]["votes"].as_array().unwrap().len(), 3);
    assert_eq!(criterion(&r[0], "rude")["verdict"], "UNMET");
    // Options: mean of 1, 0.5, 0.5 = 0.67, snapped to the nearest option.
    let tone = criterion(&r[0], "tone");
    assert_eq!(tone["verdict"], "Casual");
    assert_eq!(tone["ensemble"]["rule"], "majority/mean");
    assert_eq!(correct["invocation"]["model"], "openai/a,openai/b,openai/c");

    // Two judges that disagree: a tie goes to the worst case for the criterion's sign.
    let out = run.grade(
        &server,
        &["--judge", "openai/a", "--judge", "openai/b"],
        &[],
    );
    let r = results(&out);
    assert_eq!(criterion(&r[0], "correct")["verdict"], "UNMET");
    assert_eq!(criterion(&r[0], "rude")["verdict"], "MET");
    assert_eq!(
        criterion(&r[0], "tone")["verdict"],
        "Casual",
        "0.75 ties Formal and Casual"
    );

    // Weighted: b counts three times.
    let out = run.grade(
        &server,
        &[
            "--judge",
            "openai/a",
            "--judge",
            "openai/b=3",
            "--judge",
            "openai/c",
            "--ensemble",
            "weighted",
        ],
        &[],
    );
    assert_eq!(criterion(&results(&out)[0], "correct")["verdict"], "UNMET");
    let out = run.grade(
        &server,
        &[&three[..], &["--ensemble", "unanimous"]].concat(),
        &[],
    );
    assert_eq!(criterion(&results(&out)[0], "correct")["verdict"], "UNMET");
    let out = run.grade(&server, &[&three[..], &["--ensemble", "any"]].concat(), &[]);
    assert_eq!(criterion(&results(&out)[0], "rude")["verdict"], "MET");
    let out = run.grade(&server, &[&three[..], &["--combine", "max"]].concat(), &[]);
    assert_eq!(criterion(&results(&out)[0], "tone")["verdict"], "Formal");
    assert_eq!(
        server.seen().len(),
        9,
        "the cache answers every repeated vote"
    );
}

#[test]
fn samples_vote_and_stay_apart_in_the_cache() {
    let calls = AtomicUsize::new(0);
    let server = LlmServer::start(Duration::ZERO, move |seen| {
        if about(seen) == "correct" {
            // Two of three samples say MET.
            let n = calls.fetch_add(1, Ordering::SeqCst);
            return verdict("sample", json!(if n % 3 == 2 { "UNMET" } else { "MET" }));
        }
        verdict("x", fair(about(seen)))
    });
    let run = Run::new(RUBRIC, &[item("a", "Paris.")]);
    let args = [
        "--judge",
        "openai/j",
        "--samples",
        "3",
        "--temperature",
        "0.7",
    ];
    let out = run.grade(&server, &args, &[]);
    let r = results(&out);
    assert_eq!(r.len(), 1, "{}", stderr(&out));
    assert_eq!(server.seen().len(), 9, "three samples of each criterion");
    let correct = criterion(&r[0], "correct");
    assert_eq!(correct["verdict"], "MET");
    assert!((correct["ensemble"]["agreement"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9);
    let samples: Vec<u64> = correct["ensemble"]["votes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["sample"].as_u64().unwrap())
        .collect();
    assert_eq!(samples, [0, 1, 2]);
    assert_eq!(server.seen()[0].body["temperature"], 0.7);
    let again = run.grade(&server, &args, &[]);
    assert_eq!(server.seen().len(), 9, "each sample is cached on its own");
    assert_eq!(criterion(&results(&again)[0], "correct")["verdict"], "MET");
}

#[test]
fn a_criterion_can_name_its_own_judge_model() {
    let rubric = RUBRIC.replace(
        "    weight: -1\n",
        "    weight: -1\n    method: { judge: { model: openai/special } }\n",
    );
    let server = LlmServer::start(Duration::ZERO, |seen| verdict("ok", fair(about(seen))));
    let run = Run::new(&rubric, &[item("a", "Paris.")]);
    let out = run.grade(&server, &["--judge", "openai/general"], &[]);
    assert_eq!(results(&out).len(), 1, "{}", stderr(&out));
    for seen in server.seen() {
        let expected = if about(&seen) == "rude" {
            "special"
        } else {
            "general"
        };
        assert_eq!(seen.body["model"], expected, "{}", about(&seen));
    }
}

#[test]
fn streamed_replies_are_read_in_both_wire_formats_and_truncations_retried() {
    let server = LlmServer::start(Duration::ZERO, |seen| {
        let Reply::Text(text) = verdict("streamed", fair(about(seen))) else {
            unreachable!()
        };
        Reply::Text(text)
    });
    let run = Run::new(RUBRIC, &[item("a", "Paris.")]);
    for model in ["openai/j", "anthropic/j"] {
        let before = server.seen().len();
        let truncated = json!({"reason": "streamed", "verdict": "MET"}).to_string();
        server.script([Reply::Truncated(truncated, 12)]);
        let out = run.grade(&server, &["--judge", model, "--stream", "--no-cache"], &[]);
        let r = results(&out);
        assert_eq!(r.len(), 1, "{model}: {}", stderr(&out));
        assert_eq!(
            server.seen().len(),
            before + 4,
            "{model}: three calls, one retried"
        );
        assert!(
            server.seen()[before..]
                .iter()
                .all(|s| s.body["stream"] == true)
        );
        for id in ["correct", "rude", "tone"] {
            let c = criterion(&r[0], id);
            assert_eq!(c["reason"], "streamed", "{model} {id}: {c}");
            assert_eq!(
                c["invocation"]["usage"]["input_tokens"], 100,
                "{model}: usage from the stream"
            );
        }
        let attempts: u64 = ["correct", "rude", "tone"]
            .iter()
            .map(|id| {
                criterion(&r[0], id)["invocation"]["attempts"]
                    .as_u64()
                    .unwrap()
            })
            .sum();
        assert_eq!(attempts, 4, "{model}");
    }
}

#[test]
fn identical_calls_in_flight_share_one_request() {
    let rubric = "id: two\nname: Two\ncriteria:\n  - { id: a, requirement: Names Paris, weight: 1 }\n  - { id: b, requirement: Is short, weight: 1 }\n";
    let server = LlmServer::start(Duration::from_millis(300), |_| {
        verdict("same", json!("MET"))
    });
    let same: Vec<Value> = (0..5).map(|i| item(&format!("i{i}"), "Paris.")).collect();
    let run = Run::new(rubric, &same);
    let out = run.grade(&server, &["--judge", "openai/j"], &[]);
    let r = results(&out);
    assert_eq!(r.len(), 5, "{}", stderr(&out));
    assert_eq!(server.seen().len(), 2, "one request per distinct prompt");
    let shared = r
        .iter()
        .flat_map(|e| e["criteria"].as_array().unwrap().clone())
        .filter(|c| c["invocation"]["cache_hit"] == true)
        .count();
    assert_eq!(shared, 8);
    assert!(
        stderr(&out).contains("judge: 2 requests sent, 8 answered from the cache"),
        "{}",
        stderr(&out)
    );
}

const PRICED: &str = "prices:\n  openai/j: { input: 5, output: 25 }\n";

#[test]
fn the_cost_limit_stops_dispatching_new_calls() {
    let rubric = "id: two\nname: Two\ncriteria:\n  - { id: a, requirement: Names Paris, weight: 1 }\n  - { id: b, requirement: Is short, weight: 1 }\n";
    let server = LlmServer::start(Duration::ZERO, |_| verdict("ok", json!("MET")));
    let items: Vec<Value> = (0..10)
        .map(|i| item(&format!("i{i}"), &format!("Paris {i}.")))
        .collect();
    let run = Run::new(rubric, &items);
    // Without a price, a limit cannot be kept.
    let out = run.grade(
        &server,
        &["--judge", "openai/j", "--max-cost", "0.0035"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("a cost limit (--max-cost, judge.max_cost or the Grade pane's $) needs the price of openai/j"),
        "{}",
        stderr(&out)
    );
    // Each call: 100 tokens in at $5/M and 20 out at $25/M = $0.001.
    run.config(PRICED);
    let out = run.grade(
        &server,
        &[
            "--judge",
            "openai/j",
            "--max-cost",
            "0.0035",
            "--concurrency",
            "1",
        ],
        &[],
    );
    assert_eq!(
        server.seen().len(),
        4,
        "$0.003 spent allows a fourth call, not a fifth"
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("stopped: the cost limit ($0.0035) was reached ($0.0040 spent)"),
        "{err}"
    );
    assert!(err.contains("$0.0040"), "{err}");
    let r = results(&out);
    assert!(r.len() >= 2 && r.len() < 10, "{}", r.len());
    assert_eq!(r[0]["passed"], true);
}

#[test]
fn a_dry_run_counts_calls_tokens_cost_and_cache_and_sends_nothing() {
    let server = LlmServer::start(Duration::ZERO, |seen| verdict("ok", fair(about(seen))));
    let run = Run::new(RUBRIC, &[item("a", "Paris."), item("b", "Lyon.")]);
    run.config(PRICED);
    let _ = run.grade(&server, &["--judge", "openai/j"], &[]);
    assert_eq!(server.seen().len(), 6);
    run.items(&[
        item("a", "Paris."),
        item("b", "Lyon."),
        item("c", "Marseille."),
    ]);
    let out = run.grade(&server, &["--judge", "openai/j", "--dry-run"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(server.seen().len(), 6, "nothing was sent");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("dry run: 3 items, 9 judge calls (6 already cached → 3 to send)"),
        "{text}"
    );
    assert!(
        text.contains("openai/j: 3 calls to send, input ≈ "),
        "{text}"
    );
    assert!(text.contains("estimated cost ≈ $"), "{text}");
    let one_shot = run.grade(
        &server,
        &[
            "--judge",
            "openai/j",
            "--dry-run",
            "--strategy",
            "one-shot",
            "--samples",
            "2",
        ],
        &[],
    );
    let text = String::from_utf8_lossy(&one_shot.stdout);
    assert!(
        text.starts_with("dry run: 3 items, 6 judge calls (0 already cached → 6 to send)"),
        "{text}"
    );
}

#[test]
fn a_provider_named_in_the_workspace_config_has_its_own_url_and_key() {
    let server = LlmServer::start(Duration::ZERO, |seen| verdict("ok", fair(about(seen))));
    let run = Run::new(RUBRIC, &[item("a", "Paris.")]);
    run.config(&format!(
        "providers:\n  local:\n    base_url: {}/v1\n    api_key_env: LOCAL_TEST_KEY\n",
        server.url
    ));
    run.trust();
    let out = run.grade(
        &server,
        &["--judge", "local/qwen-7b"],
        &[
            ("LOCAL_TEST_KEY", "lk-local-123"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9"),
        ],
    );
    assert_eq!(results(&out).len(), 1, "{}", stderr(&out));
    let seen = &server.seen()[0];
    assert_eq!(seen.body["model"], "qwen-7b");
    assert_eq!(seen.header("authorization"), Some("Bearer lk-local-123"));
    let missing = run.grade(&server, &["--judge", "local/qwen-7b"], &[]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("set LOCAL_TEST_KEY"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn llm_feedback_replaces_the_summary_and_falls_back_on_failure() {
    let prose = "The answer names Paris correctly and stays polite. It is formal throughout. A sentence of context would help.";
    let wants_list = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let list_reply = std::sync::Arc::clone(&wants_list);
    let server = LlmServer::start(Duration::ZERO, move |seen| {
        if seen.prompt().contains("Write the feedback now") {
            let p = seen.prompt();
            assert!(p.contains("- correct: MET. ok"), "{p}");
            if list_reply.load(Ordering::SeqCst) {
                return Reply::Text("- good\n- also good".into());
            }
            return Reply::Text(prose.into());
        }
        verdict("ok", fair(about(seen)))
    });
    let run = Run::new(RUBRIC, &[item("a", "Paris.")]);
    let out = run.grade(&server, &["--judge", "openai/j", "--feedback", "llm"], &[]);
    let r = results(&out);
    assert_eq!(r[0]["feedback"], prose, "{}", stderr(&out));
    // A reply that is not prose keeps the deterministic summary.
    wants_list.store(true, Ordering::SeqCst);
    let out = run.grade(
        &server,
        &["--judge", "openai/j", "--feedback", "llm", "--no-cache"],
        &[],
    );
    let r = results(&out);
    let feedback = r[0]["feedback"].as_str().unwrap();
    assert!(
        feedback.starts_with("Evaluation PASSED for rubric 'Strategies'."),
        "{feedback}"
    );
}

#[test]
fn progress_and_usage_go_to_stderr_never_stdout() {
    let server = LlmServer::start(Duration::ZERO, |seen| verdict("ok", fair(about(seen))));
    let run = Run::new(RUBRIC, &[item("a", "Paris.")]);
    let out = run.grade(&server, &["--judge", "openai/j"], &[]);
    assert!(Path::new(&run.path("items.jsonl")).exists());
    assert_eq!(results(&out).len(), 1);
    assert!(
        stderr(&out)
            .contains("judge: 3 requests sent, 0 answered from the cache, 300 tokens in, 60 out"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_one_shot_reply_is_cached_only_once_every_criterion_in_it_was_read() {
    let whole = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let answer_all = std::sync::Arc::clone(&whole);
    let server = LlmServer::start(Duration::ZERO, move |seen| {
        let p = seen.prompt();
        if p.contains("for these criteria only") {
            return Reply::Text(
                json!({"rude": {"reason": "polite", "verdict": "UNMET"}}).to_string(),
            );
        }
        let ids = ids_in(&p);
        if answer_all.load(Ordering::SeqCst) {
            return one_shot_reply(&ids, fair);
        }
        // Leaves `rude` out.
        let some: Vec<String> = ids.into_iter().filter(|id| id != "rude").collect();
        one_shot_reply(&some, fair)
    });
    let run = Run::new(RUBRIC, &[item("a", "Paris.")]);
    let args = ["--judge", "openai/j", "--strategy", "one-shot"];
    let out = run.grade(&server, &args, &[]);
    assert_eq!(criterion(&results(&out)[0], "rude")["verdict"], "UNMET");
    assert_eq!(server.seen().len(), 2, "the call and its repair");
    // The partial reply was not cached: it is asked again. The repair's reply was read in
    // full, so it is answered from the cache.
    let out = run.grade(&server, &args, &[]);
    assert_eq!(results(&out)[0]["score"], 1.0, "{}", stderr(&out));
    assert_eq!(server.seen().len(), 3);
    assert!(
        stderr(&out).contains("judge: 1 requests sent, 1 answered from the cache"),
        "{}",
        stderr(&out)
    );
    // A reply that answers everything is cached.
    whole.store(true, Ordering::SeqCst);
    let _ = run.grade(&server, &args, &[]);
    assert_eq!(server.seen().len(), 4);
    let _ = run.grade(&server, &args, &[]);
    assert_eq!(server.seen().len(), 4, "answered from the cache");
}

#[test]
fn a_reply_with_nothing_readable_is_sent_again_before_any_repair_in_every_strategy() {
    let holistic =
        "id: h\nname: Holistic\ncriteria:\n  - { id: a, requirement: Correct, weight: 1 }\n";
    for (strategy, rubric) in [("one-shot", RUBRIC), ("holistic", holistic)] {
        let first = std::sync::Arc::new(AtomicUsize::new(0));
        let count = std::sync::Arc::clone(&first);
        let server = LlmServer::start(Duration::ZERO, move |seen| {
            // The first reply is prose with no verdict in it, the next ones are fine.
            if count.fetch_add(1, Ordering::SeqCst) == 0 {
                return Reply::Text("Hmm, let me think about it.".into());
            }
            if strategy == "holistic" {
                return Reply::Text(json!({"reason": "ok", "score": 90}).to_string());
            }
            one_shot_reply(&ids_in(&seen.prompt()), fair)
        });
        let run = Run::new(rubric, &[item("a", "Paris.")]);
        let args = [
            "--judge",
            "openai/j",
            "--strategy",
            strategy,
            "--max-retries",
            "1",
        ];
        let out = run.grade(&server, &args, &[]);
        let r = results(&out);
        assert_eq!(r.len(), 1, "{strategy}: {}", stderr(&out));
        for c in r[0]["criteria"].as_array().unwrap() {
            assert!(c["failure"].is_null(), "{strategy}: {c}");
            assert_eq!(c["invocation"]["attempts"], 2, "{strategy}: {c}");
        }
        let seen = server.seen();
        assert_eq!(seen.len(), 2, "{strategy}: sent again, not repaired");
        assert_eq!(seen[0].body, seen[1].body, "{strategy}: the same request");
        let _ = run.grade(&server, &args, &[]);
        assert_eq!(
            server.seen().len(),
            2,
            "{strategy}: the read reply is cached"
        );
    }
}

#[test]
fn feedback_that_was_not_prose_is_not_cached() {
    let prose = "The answer names Paris correctly and stays polite. It is formal throughout. A sentence of context would help.";
    let wants_list = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let list_reply = std::sync::Arc::clone(&wants_list);
    let server = LlmServer::start(Duration::ZERO, move |seen| {
        if seen.prompt().contains("Write the feedback now") {
            if list_reply.load(Ordering::SeqCst) {
                return Reply::Text("- good\n- also good".into());
            }
            return Reply::Text(prose.into());
        }
        verdict("ok", fair(about(seen)))
    });
    let run = Run::new(RUBRIC, &[item("a", "Paris.")]);
    let args = ["--judge", "openai/j", "--feedback", "llm"];
    let out = run.grade(&server, &args, &[]);
    let feedback = results(&out)[0]["feedback"].as_str().unwrap().to_owned();
    assert!(feedback.starts_with("Evaluation PASSED"), "{feedback}");
    assert_eq!(server.seen().len(), 4);
    wants_list.store(false, Ordering::SeqCst);
    let out = run.grade(&server, &args, &[]);
    assert_eq!(results(&out)[0]["feedback"], prose, "{}", stderr(&out));
    assert_eq!(server.seen().len(), 5, "only the feedback was asked again");
}
