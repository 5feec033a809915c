use super::*;

#[test]
fn labels_needed_follow_the_standard_error_of_kappa() {
    // 35 of 40 agree, half MET on each side: p₀ 0.875, pₑ 0.5 → 1.96²·0.109/(0.25·0.0025).
    let confusion = vec![vec![18, 2], vec![3, 17]];
    let n = labels_for(&confusion, 0.05).unwrap();
    assert!((660..=680).contains(&n), "{n}");
    // Twice the half-width, a quarter of the labels.
    let wide = labels_for(&confusion, 0.10).unwrap();
    assert!(wide * 4 >= n && wide * 4 <= n + 4, "{wide} vs {n}");
    assert_eq!(labels_for(&[], 0.05), None);
}

/// The plan as it was made before the runs were streamed: every run's journal read
/// whole, every cell kept, every open item scored and sorted.
fn read_whole(ws: &Workspace, dataset: &Path, annotator: &str, n: usize) -> Vec<NextItem> {
    let key = dataset_key(dataset);
    let labelled: HashSet<(String, String)> = read_verdicts(&ws.labels_dir(), &key, annotator)
        .unwrap()
        .into_keys()
        .collect();
    let mut cells: HashMap<String, BTreeMap<String, Seen>> = HashMap::new();
    let mut positions: HashMap<String, usize> = HashMap::new();
    let mut criteria: Vec<String> = Vec::new();
    for m in runs_over(&ws.runs_dir(), &ws.root, dataset) {
        let (journal, _) = RunDir::new(&ws.runs_dir(), &m.id).read_cells(&m).unwrap();
        for cell in journal.into_values() {
            let r = &cell.result;
            if !criteria.contains(&r.criterion_id) {
                criteria.push(r.criterion_id.clone());
            }
            positions.entry(cell.item_id.clone()).or_insert(cell.item);
            let item = cells.entry(cell.item_id.clone()).or_default();
            item.entry(r.criterion_id.clone()).or_default().add(r);
        }
    }
    let scored = positions
        .iter()
        .filter_map(|(item, &at)| score(item, at, &cells[item], &criteria, &labelled))
        .collect();
    stratified(scored, n)
}

/// A judged result with a verdict (or a failure) and perhaps a confidence.
fn judged(criterion: &str, verdict: Option<&str>, confidence: Option<f64>) -> serde_json::Value {
    let mut r = serde_json::json!({
        "criterion_id": criterion,
        "verdict": verdict,
        "value": verdict.map(|v| if v == "MET" { 1.0 } else { 0.0 }),
        "method": "judge",
    });
    if verdict.is_none() {
        r["failure"] =
            serde_json::to_value(crate::model::Failure::error("timeout", "timed out")).unwrap();
    }
    if let Some(p) = confidence {
        r["invocation"] = serde_json::json!({
            "model": "m", "strategy": "s", "prompt_hash": "p", "response_hash": "r",
            "timestamp": "t", "usage": {"input_tokens": 1, "output_tokens": 1},
            "latency_ms": 5, "attempts": 1, "cache_hit": false, "confidence": p,
        });
    }
    r
}

#[test]
fn the_streamed_plan_is_the_plan_of_the_journals_read_whole() {
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt as _, SeedableRng as _};
    use std::fmt::Write as _;
    for seed in 0..6 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::init(dir.path()).unwrap();
        let dataset = ws.path("datasets/d.jsonl");
        std::fs::create_dir_all(dataset.parent().unwrap()).unwrap();
        let items = 400;
        std::fs::write(&dataset, "{}\n".repeat(items)).unwrap();
        let criteria = ["tone", "cites", "brief"];
        for run in 0..rng.random_range(1..4) {
            let dir = RunDir::new(&ws.runs_dir(), &format!("2026010{run}-000000-r{run}"));
            let m: crate::store::runs::Manifest = serde_json::from_value(serde_json::json!({
                "id": dir.dir.file_name().unwrap().to_string_lossy(),
                "rubric_id": "r", "rubric_version": "1", "rubric_hash": "h",
                "rubric": {"criteria": criteria.map(|c| serde_json::json!({"id": c}))},
                "dataset": {"path": dataset.display().to_string(), "hash": "d"},
                "settings": {},
                "started_at": format!("2026-01-0{}T00:00:00Z", run + 1),
            }))
            .unwrap();
            dir.write_manifest(&m).unwrap();
            let mut w = crate::store::runs::RunWriter::create(&dir, &m).unwrap();
            // A run killed part way and resumed: two passes, the second out of order.
            let cut = rng.random_range(0..items);
            for pass in [0..cut, cut..items] {
                for item in pass {
                    let mut cells = Vec::new();
                    for c in criteria {
                        let verdict = match rng.random_range(0..12) {
                            0 => None,
                            1 => Some("CANNOT_ASSESS"),
                            2..=6 => Some("MET"),
                            _ => Some("UNMET"),
                        };
                        let p = (rng.random_range(0..4) == 0).then(|| rng.random_range(0.5..1.0));
                        cells.push(serde_json::from_value(judged(c, verdict, p)).unwrap());
                    }
                    w.append(item, &format!("i{item}"), &cells).unwrap();
                }
            }
            w.finish().unwrap();
        }
        // pat labelled some cells.
        let mut journal = String::new();
        let mut seq = 0;
        for item in 0..items {
            for c in criteria {
                if rng.random_range(0..5) == 0 {
                    seq += 1;
                    let _ = writeln!(
                        journal,
                        r#"{{"seq":{seq},"op":"set","item":"i{item}","criterion":"{c}","verdict":"MET","annotator":"pat","time":"2026-01-01T00:00:00Z"}}"#
                    );
                }
            }
        }
        let labels = crate::store::labels::journal_path(&ws.labels_dir(), "d", "pat");
        std::fs::create_dir_all(labels.parent().unwrap()).unwrap();
        std::fs::write(&labels, journal).unwrap();
        for n in [1, 7, 40, 1000] {
            let plan = plan(
                &ws,
                &dataset,
                "pat",
                n,
                DEFAULT_TARGET,
                &Bootstrap::default(),
                &[],
            )
            .unwrap();
            let whole = read_whole(&ws, &dataset, "pat", n);
            let flat = |next: &[NextItem]| -> Vec<(String, usize, f64, Vec<String>)> {
                next.iter()
                    .map(|i| (i.item.clone(), i.position, i.priority, i.reasons.clone()))
                    .collect()
            };
            assert_eq!(flat(&plan.next), flat(&whole), "seed {seed}, n {n}");
            assert_eq!(plan.next.len(), whole.len().min(n));
        }
    }
}

#[test]
fn the_shortlist_stays_within_twice_n_per_stratum_and_keeps_each_strata_best() {
    let mut shortlist = Shortlist::new(5);
    for i in 0..10_000 {
        let item = NextItem {
            item: format!("i{i}"),
            position: i,
            priority: (i % 7) as f64,
            reasons: Vec::new(),
        };
        shortlist.push((item, format!("c{}", i % 3)));
        assert!(
            shortlist.strata.values().all(|kept| kept.len() < 10),
            "a stratum grew past 2n at item {i}"
        );
    }
    let mut kept = shortlist.into_vec();
    kept.sort_by(|(a, _), (b, _)| rank(a, b));
    // Stratum c0 (i ≡ 0 mod 3) with something to teach: priority 6 at i ≡ 6 mod 21, first.
    let best: Vec<usize> = kept
        .iter()
        .filter(|(i, s)| s == "c0" && i.priority > 0.0)
        .map(|(i, _)| i.position)
        .collect();
    assert_eq!(best[..5], [6, 27, 48, 69, 90]);
}
