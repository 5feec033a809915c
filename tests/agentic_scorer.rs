//! `agentic_v2_eval`'s `Scorer` schema as its users write it (scorer.py's docstring: `name`,
//! `version`, `criteria: [{name, weight = 1.0, description = "", min_value = 0, max_value = 1}]`):
//! every rubric in that schema loads and scores as the Scorer scores it; the project's own
//! conventions (weights summing to 1, a description per criterion) are `lint` findings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::Command;

use serde_json::Value;

fn rubricate(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// One criterion as the Scorer parses it; `None`: the field is left out.
struct Crit {
    name: String,
    weight: Option<f64>,
    description: Option<String>,
    range: Option<(f64, f64)>,
}

/// `Scorer.score(results).weighted_score`, as scorer.py computes it: each given value
/// clamped to `[min_value, max_value]` and normalised; Σ w·norm / Σ w over every criterion
/// (a missing one adds nothing); 0 when Σ w ≤ 0.
fn scorer(criteria: &[Crit], results: &HashMap<&str, f64>) -> f64 {
    let total: f64 = criteria.iter().map(|c| c.weight.unwrap_or(1.0)).sum();
    let mut weighted = 0.0;
    for c in criteria {
        let Some(&v) = results.get(c.name.as_str()) else {
            continue;
        };
        let (lo, hi) = c.range.unwrap_or((0.0, 1.0));
        let v = lo.max(hi.min(v));
        let norm = if hi - lo > 0.0 {
            (v - lo) / (hi - lo)
        } else {
            v
        };
        weighted += c.weight.unwrap_or(1.0) * norm;
    }
    if total > 0.0 { weighted / total } else { 0.0 }
}

/// A small seeded generator (xorshift64*), so the set is the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn yaml_of(name: Option<&str>, version: Option<&str>, criteria: &[Crit]) -> String {
    let mut y = String::new();
    if let Some(n) = name {
        writeln!(y, "name: {n}").unwrap();
    }
    if let Some(v) = version {
        writeln!(y, "version: {v}").unwrap();
    }
    y.push_str("criteria:\n");
    for c in criteria {
        writeln!(y, "  - name: {}", c.name).unwrap();
        if let Some(w) = c.weight {
            writeln!(y, "    weight: {w:?}").unwrap();
        }
        if let Some(d) = &c.description {
            writeln!(y, "    description: {d}").unwrap();
        }
        if let Some((lo, hi)) = c.range {
            writeln!(y, "    min_value: {lo:?}\n    max_value: {hi:?}").unwrap();
        }
    }
    y
}

#[test]
fn the_scorer_docstring_example_scores_five_sixths() {
    let work = tempfile::tempdir().unwrap();
    let rubric = work.path().join("my_rubric.yaml");
    // scorer.py's module docstring, as written there.
    std::fs::write(
        &rubric,
        "name: My Rubric\nversion: \"1.0\"\ncriteria:\n  - name: Accuracy\n    weight: 2.0\n    min_value: 0.0\n    max_value: 1.0\n  - name: Completeness\n    weight: 1.0\n",
    )
    .unwrap();
    let data = work.path().join("results.jsonl");
    // Its class docstring's results.
    std::fs::write(
        &data,
        "{\"id\": \"doc\", \"submission\": \"x\", \"ground_truth\": [0.8, 0.9]}\n",
    )
    .unwrap();
    let r = rubric.to_str().unwrap();
    let out = rubricate(&[
        "score",
        data.to_str().unwrap(),
        "--rubric",
        r,
        "--format",
        "jsonl",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row: Value = serde_json::from_slice(&out.stdout).unwrap();
    // (2 × 0.8 + 1 × 0.9) / 3
    assert_eq!(row["score"], 2.5 / 3.0, "{row}");
    assert_eq!(row["rubric_version"], "1.0.0");
    // The project's conventions are findings, not refusals.
    let lint = rubricate(&["lint", r]);
    let said = String::from_utf8_lossy(&lint.stdout);
    assert!(
        said.contains("my_rubric.yaml:4:3: warning: agentic_v2_eval's own rubrics keep weights summing to 1 (±0.01); these sum to 3"),
        "{said}"
    );
    assert!(
        said.contains("warning: criterion 'Accuracy' has no description beyond its name"),
        "{said}"
    );
    // Said once: the generic note on weights not summing to 1 is not repeated.
    assert!(!said.contains("info: weights sum to 3"), "{said}");
    // A file that follows them draws neither finding.
    std::fs::write(
        &rubric,
        "criteria:\n  - {name: Accuracy, weight: 0.6, description: Facts are right}\n  - {name: Completeness, weight: 0.4, description: Nothing left out}\n",
    )
    .unwrap();
    let said = String::from_utf8_lossy(&rubricate(&["lint", r]).stdout).into_owned();
    assert!(!said.contains("agentic_v2_eval's own rubrics"), "{said}");
}

#[test]
fn rubrics_in_the_scorer_schema_all_load_and_score_as_the_scorer_does() {
    let work = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut compared = 0;
    for r in 0..60 {
        let n = 1 + rng.below(6) as usize;
        let criteria: Vec<Crit> = (0..n)
            .map(|k| Crit {
                name: format!("Crit {k}"),
                weight: (!rng.chance(30)).then(|| (1 + rng.below(50)) as f64 / 10.0),
                description: rng.chance(50).then(|| format!("What criterion {k} checks")),
                range: match rng.below(10) {
                    0..4 => None,
                    4..7 => Some((0.0, 1.0)),
                    _ => Some((
                        rng.below(2) as f64,
                        [5.0, 10.0, 100.0][rng.below(3) as usize],
                    )),
                },
            })
            .collect();
        let name = rng.chance(50).then_some("Generated rubric");
        let version = [None, Some("\"1.0\""), Some("2"), Some("1.2.3")][rng.below(4) as usize];
        let rubric = work.path().join(format!("r{r}.yaml"));
        std::fs::write(&rubric, yaml_of(name, version, &criteria)).unwrap();
        let mut sets = Vec::new();
        let mut data = String::new();
        for j in 0..4 {
            let mut results = HashMap::new();
            let mut truth = Vec::new();
            for c in &criteria {
                let (lo, hi) = c.range.unwrap_or((0.0, 1.0));
                let v = match rng.below(10) {
                    0 => None,
                    1 => Some([hi + 3.0, lo - 1.0, 1.7, -0.2][rng.below(4) as usize]),
                    _ => Some(lo + (hi - lo) * rng.below(101) as f64 / 100.0),
                };
                if let Some(v) = v {
                    results.insert(c.name.as_str(), v);
                }
                truth.push(v);
            }
            writeln!(
                data,
                "{}",
                serde_json::json!({"id": format!("s{j}"), "submission": "x", "ground_truth": truth})
            )
            .unwrap();
            sets.push(results);
        }
        let file = work.path().join(format!("r{r}.jsonl"));
        std::fs::write(&file, data).unwrap();
        let out = rubricate(&[
            "score",
            file.to_str().unwrap(),
            "--rubric",
            rubric.to_str().unwrap(),
            "--format",
            "jsonl",
        ]);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{} is refused:\n{}\n{}",
            rubric.display(),
            std::fs::read_to_string(&rubric).unwrap(),
            String::from_utf8_lossy(&out.stderr)
        );
        let rows: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), sets.len());
        for (row, results) in rows.iter().zip(&sets) {
            let want = scorer(&criteria, results);
            let got = row["score"].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1e-12,
                "{}: rubricate {got}, the Scorer {want} for {results:?}",
                rubric.display()
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 240);
}
