//! The five-criterion answer rubric and its generated dataset, shared by the grading and
//! saved-run benchmarks (`#[path]`-included by each).
#![allow(dead_code)]

use std::io::Write as _;
use std::path::Path;

/// The rubric with `WORDS` as the word limit of `brief` (see [`rubric`]).
pub const RUBRIC: &str = r#"
id: bench
name: Bench
version: 1.0.0
pass_threshold: 0.6
criteria:
  - id: mentions_paris
    requirement: Mentions Paris
    weight: 2
    method: { check: contains, args: { text: paris } }
  - id: no_filler
    requirement: Opens with filler
    weight: -1
    method: { check: regex, args: { pattern: '"answer": "(As an AI|Great question)', case_insensitive: true } }
  - id: brief
    requirement: At most WORDS words
    method: { check: word_count, args: { max: WORDS } }
  - id: cites
    requirement: Cites at least two sources
    method: { check: json_path, args: { path: $.sources, min_length: 2 } }
  - id: shape
    requirement: Matches the answer schema
    method:
      schema:
        type: object
        required: [answer, sources]
        properties:
          answer: { type: string, minLength: 1 }
          sources: { type: array, items: { type: string } }
          confidence: { type: number, minimum: 0, maximum: 1 }
"#;

/// The rubric with `brief` limited to `max_words` words.
pub fn rubric(max_words: u32) -> String {
    RUBRIC.replace("WORDS", &max_words.to_string())
}

/// `n` answers as JSONL items: four kinds of answer, 0–3 sources, a confidence.
pub fn write_dataset(path: &Path, n: usize) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    let answers = [
        "The capital of France is Paris.",
        "Great question! Paris has been the capital of France since the tenth century.",
        "Lyon is a large city in France, known for its food.",
        "Paris. It sits on the Seine and has about two million people in the city proper.",
    ];
    for i in 0..n {
        let answer = answers[i % answers.len()];
        let sources: Vec<String> = (0..(i % 4))
            .map(|k| format!("https://example.org/{k}"))
            .collect();
        let submission = serde_json::json!({ "answer": answer, "sources": sources, "confidence": (i % 10) as f64 / 10.0 }).to_string();
        let line = serde_json::json!({ "id": format!("item-{i}"), "prompt": "What is the capital of France?", "submission": submission });
        writeln!(w, "{line}")?;
    }
    w.flush()
}
