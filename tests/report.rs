//! `rubricate report`: a saved run as one self-contained HTML page — no network, the run's
//! text kept as data, the figures over every item and the items held whole bounded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::checked::{rubricate, run_ids};

use serde_json::Value;

/// A workspace with a run of `n` items graded by a check (`yes` in the submission is MET),
/// one item's submission trying to end the page's script.
fn saved_run(n: usize) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("rubricate.yaml"), "").unwrap();
    std::fs::write(
        d.join("rubric.yaml"),
        "id: yes\nname: Says yes\ncriteria:\n  - { id: yes, requirement: Says yes, weight: 1, method: { check: contains, args: { text: yes } } }\n  - { id: long, requirement: Says enough, weight: 1, method: { check: contains, args: { text: really } } }\n",
    )
    .unwrap();
    let mut items = String::new();
    for i in 0..n {
        let text = match i % 3 {
            0 => "yes, really".to_owned(),
            1 => "yes".to_owned(),
            _ => format!("no </script><script>document.title='owned {i}'</script>"),
        };
        items.push_str(
            &serde_json::json!({"id": format!("i{i:03}"), "submission": text}).to_string(),
        );
        items.push('\n');
    }
    std::fs::write(d.join("items.jsonl"), items).unwrap();
    let out = rubricate(
        d,
        &[
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--save",
            "--format",
            "jsonl",
        ],
    );
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = run_ids(d).remove(0);
    (dir, run)
}

/// The page's embedded data.
fn data(page: &str) -> Value {
    let start = page.find(r#"id="data">"#).unwrap() + r#"id="data">"#.len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

#[test]
fn a_run_becomes_one_page_that_needs_no_network_and_keeps_its_text_as_data() {
    let (dir, run) = saved_run(30);
    let out = rubricate(dir.path(), &["report", &run, "-o", "report.html"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    // Nothing is fetched: no external script, style, font or image.
    for external in ["src=\"http", "href=\"http", "<link", "url(http", "@import"] {
        assert!(!page.contains(external), "{external}");
    }
    // A submission cannot end the script that holds it: only the page's own two close.
    assert_eq!(page.matches("</script>").count(), 2);
    assert!(!page.contains("<script>document.title"));
    let d = data(&page);
    assert_eq!(d["figures"]["items"], 30);
    assert_eq!(d["figures"]["passed"], 10);
    assert_eq!(d["embedded"], 30);
    let hostile = d["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == "i002")
        .unwrap();
    assert!(
        hostile["submission"]
            .as_str()
            .unwrap()
            .contains("</script><script>")
    );
    let yes = &d["criteria"][0];
    assert_eq!(
        (yes["id"].as_str(), yes["good"].as_u64()),
        (Some("yes"), Some(20))
    );
    assert!(page.contains(r#"aria-label="score histogram""#));
}

#[test]
fn a_large_run_holds_its_worst_items_and_a_stated_sample_whole() {
    let (dir, run) = saved_run(40);
    let out = rubricate(
        dir.path(),
        &[
            "report", &run, "-o", "r.html", "--worst", "5", "--sample", "3",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("40 items; 8 held whole"));
    let d = data(&std::fs::read_to_string(dir.path().join("r.html")).unwrap());
    assert_eq!(d["figures"]["items"], 40, "the figures count every item");
    let items = d["items"].as_array().unwrap();
    assert_eq!(items.len(), 8);
    // The five lowest scores are all there (items scoring 0: every third from i002).
    let zero: Vec<&str> = items
        .iter()
        .filter(|i| i["score"].as_f64() == Some(0.0))
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert!(zero.len() >= 5, "{zero:?}");
    // In dataset order on the page.
    let n: Vec<u64> = items.iter().map(|i| i["n"].as_u64().unwrap()).collect();
    assert!(n.windows(2).all(|w| w[0] < w[1]), "{n:?}");
}

#[test]
fn an_unknown_run_is_refused_and_writes_nothing() {
    let (dir, _) = saved_run(3);
    let out = rubricate(dir.path(), &["report", "nope", "-o", "r.html"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
    assert!(!dir.path().join("r.html").exists());
}

#[test]
fn with_labels_the_page_shows_the_judge_against_the_person() {
    let (dir, run) = saved_run(6);
    let d = dir.path();
    // The judge (the check) says MET for i000, i001, i003, i004 on `yes`; the person agrees
    // but for i001.
    std::fs::write(
        d.join("labels.csv"),
        "item,criterion,verdict\ni000,yes,MET\ni001,yes,UNMET\ni002,yes,UNMET\ni003,yes,MET\n",
    )
    .unwrap();
    let out = rubricate(
        d,
        &[
            "labels",
            "import",
            "labels.csv",
            "--dataset",
            "items.jsonl",
            "--annotator",
            "hana",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = rubricate(d, &["report", &run, "-o", "r.html"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = data(&std::fs::read_to_string(d.join("r.html")).unwrap());
    let a = &page["agreement"];
    assert_eq!(a["annotator"], "hana");
    let yes = &a["criteria"][0];
    assert_eq!(yes["criterion"], "yes");
    assert_eq!(yes["pairs"], 4);
    // Person MET & judge MET: i000, i003; person UNMET & judge MET: i001; both UNMET: i002.
    assert_eq!(
        (
            &yes["confusion"]["tp"],
            &yes["confusion"]["fp"],
            &yes["confusion"]["fn"],
            &yes["confusion"]["tn"]
        ),
        (
            &serde_json::json!(2),
            &serde_json::json!(1),
            &serde_json::json!(0),
            &serde_json::json!(1)
        )
    );
}

/// `report A B`: B's page compared with A — the same figures `runs compare A B --format
/// json` gives, regressions first — and, with labels, the dataset's runs ranked.
#[test]
fn two_runs_make_a_page_of_the_second_compared_with_the_first() {
    let (dir, before) = saved_run(9);
    let d = dir.path();
    // The second rubric wants "really" twice over: every item that had it loses `long`.
    let rubric = std::fs::read_to_string(d.join("rubric.yaml")).unwrap();
    std::fs::write(
        d.join("rubric.yaml"),
        rubric.replace("text: really", "text: reallyreally"),
    )
    .unwrap();
    let out = rubricate(
        d,
        &[
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--save",
            "--name",
            "after",
            "--format",
            "jsonl",
        ],
    );
    assert!(out.status.code().is_some_and(|c| c <= 1));
    std::fs::write(
        d.join("labels.csv"),
        "item,criterion,verdict\ni000,yes,MET\ni001,yes,UNMET\ni002,yes,UNMET\ni003,yes,MET\n",
    )
    .unwrap();
    let out = rubricate(
        d,
        &[
            "labels",
            "import",
            "labels.csv",
            "--dataset",
            "items.jsonl",
            "--annotator",
            "hana",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let out = rubricate(d, &["report", &before, "after", "-o", "c.html"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = data(&std::fs::read_to_string(d.join("c.html")).unwrap());
    assert_eq!(page["run"]["name"], "after", "the page shows B");
    let c = &page["comparison"];
    let compared: Value = serde_json::from_slice(
        &rubricate(
            d,
            &[
                "runs", "compare", &before, "after", "--format", "json", "--top", "1000",
            ],
        )
        .stdout,
    )
    .unwrap();
    for key in ["regressions", "criteria", "mean", "items", "failed"] {
        assert_eq!(c[key], compared[key], "{key}");
    }
    assert_eq!(c["failed"], true);
    // Items i000, i003, i006 lost `long`: each a regression, listed after the run's figures.
    let kinds: Vec<&str> = c["regressions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    let first_item = kinds.iter().position(|k| *k == "item").unwrap();
    assert!(kinds[..first_item].iter().all(|k| *k != "item"));
    assert_eq!(c["regressed_items"], 3);
    let long = c["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == "long")
        .unwrap();
    // 9 items, 3 lost, none gained: Δ = −3/9 with a paired Wald interval.
    let delta = long["delta"].as_f64().unwrap();
    assert!((delta + 3.0 / 9.0).abs() < 1e-12, "{long}");
    let half = 1.959_963_984_540_054 * ((3.0 - 9.0 / 9.0) / 81.0_f64).sqrt();
    assert!(
        (long["ci"]["low"].as_f64().unwrap() - (delta - half)).abs() < 1e-9,
        "{long}"
    );
    // The dataset's two runs ranked against hana's labels, this one marked.
    let cal = &page["calibration"];
    assert_eq!(cal["annotator"], "hana");
    let ranked = cal["candidates"].as_array().unwrap();
    assert_eq!(ranked.len(), 2);
    assert_eq!(ranked.iter().filter(|r| r["this"] == true).count(), 1);
}

#[test]
fn grade_writes_markdown_with_the_worst_items_first_and_their_reasons() {
    let (dir, _) = saved_run(9);
    let out = rubricate(
        dir.path(),
        &[
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--format",
            "md",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.starts_with("## rubricate: "), "{md}");
    assert!(md.contains("| 9 | 3 (33.3%) | 6 | 0 |"), "{md}");
    assert!(md.contains("### The 6 items that did not pass"), "{md}");
    // Lowest first (the `no` answers score 0), each with what cost it.
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| i0")).collect();
    assert_eq!(rows.len(), 6, "{md}");
    assert!(rows[0].starts_with("| i002 | 0.0% |"), "{}", rows[0]);
    assert!(
        rows[0].contains("**yes**:") && rows[0].contains("**long**:"),
        "{}",
        rows[0]
    );
    assert!(rows.last().unwrap().contains("50.0%"), "{md}");
    // A table row stays one row: no raw pipe or markup from the run's text.
    for row in &rows {
        assert_eq!(row.matches(" | ").count(), 2, "{row}");
        assert!(!row.contains('<') || row.contains("<br>"), "{row}");
    }
}

#[test]
fn the_page_gives_each_tags_score_with_its_interval() {
    let (dir, _) = saved_run(6);
    let d = dir.path();
    std::fs::write(
        d.join("rubric.yaml"),
        "id: yes\nname: Says yes\ncriteria:\n  - { id: yes, requirement: Says yes, weight: 1, tags: [axis:accuracy], method: { check: contains, args: { text: yes } } }\n",
    )
    .unwrap();
    let out = rubricate(
        d,
        &[
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--save",
            "--name",
            "tagged",
            "--format",
            "jsonl",
        ],
    );
    assert!(out.status.code().is_some_and(|c| c <= 1));
    let out = rubricate(d, &["report", "tagged", "-o", "t.html"]);
    assert_eq!(out.status.code(), Some(0));
    let page = data(&std::fs::read_to_string(d.join("t.html")).unwrap());
    let tag = &page["tags"][0];
    assert_eq!(tag["tag"], "axis:accuracy");
    // i000, i001, i003, i004 say yes: 4 of 6.
    assert!(
        (tag["mean"].as_f64().unwrap() - 4.0 / 6.0).abs() < 1e-12,
        "{tag}"
    );
    assert_eq!(tag["items"], 6);
    assert!(tag["ci"]["low"].is_number());
}
