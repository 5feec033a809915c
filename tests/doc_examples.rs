//! Every example in README.md and docs/ runs, as a reader would run it, page by page in one
//! shell session (a `cd` in one block holds for the next), against the binary this suite
//! built and a judge on loopback that answers whatever the request's schema allows:
//!
//! - ```` ```sh ```` blocks run line by line; a `rubricate` that exits above 1 (a usage or
//!   input error, failures over the error rate) fails the page;
//! - ```` ```console ```` blocks run their `$ ` lines and compare what they print with the
//!   lines shown;
//! - a ```` ```yaml ```` block after `<!-- doc-example: file=PATH -->` is written to PATH; a
//!   rubric in a ```` ```yaml ```` block of its own is validated;
//! - ```` ```python ```` blocks run with the module of `python/`;
//! - `<!-- doc-example: cwd=demo -->` runs the next block in the demo workspace, and
//!   `<!-- doc-example: not-run: WHY -->` leaves it out and must say why (an HTML comment, so
//!   no renderer shows it); a block with no language (output, a synopsis) is not an example.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use support::{LlmServer, Reply};

/// One fenced block: its info string and its lines, and where it starts.
struct Block {
    info: String,
    body: String,
    line: usize,
}

/// The blocks of a page, each with its language and the directives of the
/// `<!-- doc-example: … -->` line right above it (an HTML comment: no renderer shows it, and
/// the fence keeps a plain language every renderer reads).
fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    let mut directive = String::new();
    for (n, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("```") {
            match open.take() {
                Some(b) => out.push(b),
                None => {
                    open = Some(Block {
                        info: format!("{} {directive}", rest.trim()).trim().to_owned(),
                        body: String::new(),
                        line: n + 1,
                    });
                }
            }
            directive.clear();
        } else if let Some(b) = &mut open {
            b.body.push_str(line);
            b.body.push('\n');
        } else {
            directive = line
                .trim()
                .strip_prefix("<!-- doc-example:")
                .and_then(|d| d.strip_suffix("-->"))
                .map(|d| d.trim().to_owned())
                .unwrap_or_default();
        }
    }
    out
}

/// A value the JSON Schema allows: the first of an enum, an object with every property,
/// the least number.
fn valid(schema: &Value) -> Value {
    if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(first) = schema.get(key).and_then(|e| e.get(0)) {
            return valid(first);
        }
    }
    let kind = match schema.get("type") {
        Some(Value::Array(kinds)) => kinds.first().and_then(Value::as_str).unwrap_or("string"),
        Some(Value::String(k)) => k.as_str(),
        _ => "string",
    };
    match kind {
        "object" => {
            let mut out = serde_json::Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, v) in props {
                    out.insert(k.clone(), valid(v));
                }
            }
            Value::Object(out)
        }
        "array" => {
            let n = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let item = schema.get("items").map_or(Value::Null, valid);
            Value::Array((0..n).map(|_| item.clone()).collect())
        }
        "number" | "integer" => schema.get("minimum").cloned().unwrap_or(json!(0)),
        "boolean" => json!(true),
        _ => json!("the documentation's judge"),
    }
}

/// The judge of the examples: whatever the request's schema allows; a request without one
/// (a proposer) gets a rewording.
fn judge(seen: &support::Seen) -> Reply {
    let schema = &seen.body["response_format"]["json_schema"]["schema"];
    if schema.is_object() {
        return Reply::Text(valid(schema).to_string());
    }
    Reply::Text(
        json!({"requirement": "Says what to do next, in steps", "rule": "Steps count."})
            .to_string(),
    )
}

/// The page as one bash script.
fn script(page: &str, text: &str) -> String {
    let mut out = String::from(
        "set -u\nfail() { echo \"EXAMPLE FAILED ($1): $2\" >&2; exit 1; }\n\
         rubricate() { command rubricate \"$@\"; local rc=$?; [ $rc -le 1 ] || fail \"exit $rc\" \"rubricate $*\"; return 0; }\n",
    );
    for (k, b) in blocks(text).into_iter().enumerate() {
        let mut words = b.info.split_whitespace();
        let lang = words.next().unwrap_or_default();
        let rest: Vec<&str> = words.collect();
        if let Some(i) = rest.iter().position(|w| *w == "not-run:") {
            assert!(
                rest.len() > i + 1,
                "{page}:{}: a block that is not run says why (`<!-- doc-example: not-run: WHY -->`)",
                b.line
            );
            continue;
        }
        assert!(
            !b.info.contains("not-run"),
            "{page}:{}: write `not-run: WHY`",
            b.line
        );
        let demo = rest.contains(&"cwd=demo");
        let file = rest.iter().find_map(|w| w.strip_prefix("file="));
        let where_ = format!("{page}:{}", b.line);
        if demo {
            out.push_str("pushd \"$SANDBOX/demo\" >/dev/null\n");
        }
        match (lang, file) {
            ("yaml", Some(path)) => {
                let _ = write!(
                    out,
                    "mkdir -p \"$(dirname '{path}')\" && cat > '{path}' <<'DOC_EOF'\n{}DOC_EOF\n",
                    b.body
                );
            }
            ("yaml", None) if b.body.contains("\ncriteria:") || b.body.starts_with("criteria:") => {
                let _ = write!(
                    out,
                    "cat > \"$SANDBOX/block-{k}.yaml\" <<'DOC_EOF'\n{}DOC_EOF\nrubricate validate \"$SANDBOX/block-{k}.yaml\" >/dev/null || fail '{where_}' 'the rubric does not validate'\n",
                    b.body
                );
            }
            ("sh", None) => {
                let mut command = String::new();
                for line in b.body.lines() {
                    let line = line.trim_end();
                    if line.trim_start().starts_with('#') || line.trim().is_empty() {
                        continue;
                    }
                    if let Some(head) = line.strip_suffix('\\') {
                        command.push_str(head);
                        continue;
                    }
                    command.push_str(line);
                    let _ = writeln!(out, "echo '>> {where_}: {}' >&2", command.replace('\'', ""));
                    let _ = writeln!(out, "{command} >/dev/null || fail '{where_}' \"$?\"");
                    command.clear();
                }
            }
            ("console", None) => {
                let mut lines = b.body.lines().peekable();
                while let Some(line) = lines.next() {
                    let Some(command) = line.strip_prefix("$ ") else {
                        continue;
                    };
                    let mut shown = String::new();
                    while let Some(next) = lines.peek().filter(|l| !l.starts_with("$ ")) {
                        shown.push_str(next.trim_end());
                        shown.push('\n');
                        lines.next();
                    }
                    let _ = write!(
                        out,
                        "echo '>> {where_}: {}' >&2\ngot=$({command} 2>/dev/null | sed 's/[[:space:]]*$//')\nwant=$(cat <<'DOC_EOF'\n{}DOC_EOF\n)\n[ \"$got\" = \"$want\" ] || {{ diff <(echo \"$want\") <(echo \"$got\") >&2; fail '{where_}' 'prints something else'; }}\n",
                        command.replace('\'', ""),
                        shown.trim_end_matches('\n').to_owned() + "\n"
                    );
                }
            }
            ("python", None) => {
                let _ = write!(
                    out,
                    "echo '>> {where_}: python' >&2\npython3 - <<'DOC_EOF' || fail '{where_}' python\n{}DOC_EOF\n",
                    b.body
                );
            }
            ("" | "text", None) => {}
            (other, _) => panic!("{where_}: a ```{other} block: run it, or say `not-run: WHY`"),
        }
        if demo {
            out.push_str("popd >/dev/null\n");
        }
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Runs one page's examples in a sandbox of their own: the repository's `examples/`, a demo
/// workspace in `demo/`, a home holding `answers.jsonl`, the binary first on `PATH`.
fn run_page(page: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(page)).unwrap();
    let sandbox = tempfile::tempdir().unwrap();
    let s = sandbox.path();
    copy_dir(&root.join("examples"), &s.join("examples"));
    rubricate::store::workspace::create_demo(&s.join("demo")).unwrap();
    let home = s.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::copy(
        root.join("examples/answers.jsonl"),
        home.join("answers.jsonl"),
    )
    .unwrap();
    let server = LlmServer::start(Duration::ZERO, judge);
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_rubricate"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-c", &script(page, &text)])
        .current_dir(s)
        .env("PATH", path)
        .env("HOME", &home)
        .env("SANDBOX", s)
        .env("RUBRICATE_HOME", s.join("data"))
        .env("RUBRICATE_CACHE_DIR", s.join("cache"))
        .env("XDG_CONFIG_HOME", s.join("config"))
        .env("XDG_DATA_HOME", s.join("data-home"))
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url))
        .env("OPENAI_API_KEY", "sk-docs")
        .env("ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", "ak-docs")
        .env("RUBRICATE_BIN", &bin)
        .env("PYTHONPATH", root.join("python"))
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{page}: an example failed\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_readme_examples_run() {
    run_page("README.md");
}

#[test]
fn the_docs_examples_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut pages: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| Path::new(n).extension().is_some_and(|e| e == "md") && n != "cli-reference.md")
        .collect();
    pages.sort();
    for page in pages {
        run_page(&format!("docs/{page}"));
    }
}
