//! The HTML report in a real browser: Debian's headless Chromium driven over `WebDriver`
//! (`chromedriver`, loopback only). The page loads from `file://` with no console error, its
//! histogram and tables are there, typing in the search box filters the rows, and a click on
//! an item shows its verdicts. `.ci/run` installs Chromium when it is missing; under
//! `CI=true` a missing browser fails this test rather than skipping it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn rubricate(dir: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env("RUBRICATE_CACHE_DIR", dir.join("cache"))
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether the browser and its driver are here (under `CI=true` they must be).
fn browser_here() -> bool {
    let here = ["chromium", "chromedriver"].iter().all(|b| {
        Command::new(b)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if !here {
        assert!(
            std::env::var("CI").is_err(),
            "CI=true: chromium and chromedriver are needed (Debian: chromium chromium-driver; .ci/run installs them)"
        );
        eprintln!("skipped: chromium or chromedriver is missing");
    }
    here
}

/// The driver, killed when the test ends however it ends.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

struct Session {
    http: reqwest::Client,
    base: String,
}

impl Session {
    async fn call(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.base);
        let reply = self
            .http
            .request(method, &url)
            .json(&body)
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap();
        assert!(
            reply["value"].get("error").is_none(),
            "{path}: {}",
            reply["value"]
        );
        reply["value"].clone()
    }

    async fn script(&self, js: &str) -> Value {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            json!({"script": js, "args": []}),
        )
        .await
    }

    async fn element(&self, css: &str) -> String {
        let found = self
            .call(
                reqwest::Method::POST,
                "/element",
                json!({"using": "css selector", "value": css}),
            )
            .await;
        found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap()
            .to_owned()
    }

    /// Polls `js` until it returns `want` (the page draws after events).
    async fn until(&self, js: &str, want: &Value) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.script(js).await;
            if &got == want {
                return;
            }
            assert!(Instant::now() < deadline, "{js}: {got}, not {want}");
            tokio::task::yield_now().await;
        }
    }
}

#[tokio::test]
async fn the_report_opens_from_a_file_filters_as_you_type_and_shows_an_items_verdicts() {
    if !browser_here() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("rubricate.yaml"), "").unwrap();
    std::fs::write(
        d.join("rubric.yaml"),
        "id: yes\nname: Says yes\ncriteria:\n  - { id: says-yes, requirement: Says yes, weight: 1, method: { check: contains, args: { text: yes } } }\n",
    )
    .unwrap();
    let mut items = String::new();
    for i in 0..40 {
        let text = if i % 4 == 0 { "no" } else { "yes" };
        items.push_str(&json!({"id": format!("item-{i:02}"), "submission": text}).to_string());
        items.push('\n');
    }
    std::fs::write(d.join("items.jsonl"), items).unwrap();
    rubricate(
        d,
        &["grade", "--rubric", "rubric.yaml", "items.jsonl", "--save"],
    );
    let run = std::fs::read_dir(d.join("runs"))
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.path().is_dir())
        .unwrap()
        .file_name();
    rubricate(d, &["report", &run.to_string_lossy(), "-o", "report.html"]);

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _driver = Driver(
        Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let http = reqwest::Client::new();
    let root = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while http.get(format!("{root}/status")).send().await.is_err() {
        assert!(Instant::now() < deadline, "chromedriver did not start");
        tokio::task::yield_now().await;
    }
    let profile = d.join("chromium-profile");
    let created: Value = http
        .post(format!("{root}/session"))
        .json(&json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--window-size=1280,800", format!("--user-data-dir={}", profile.display())]
            }
        }}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["value"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {created}"));
    let s = Session {
        http,
        base: format!("{root}/session/{id}"),
    };
    let page = format!("file://{}", d.join("report.html").display());
    s.call(reqwest::Method::POST, "/url", json!({"url": page}))
        .await;

    // Drawn: the histogram's ten bars, the criteria table, every item's row.
    s.until(
        "return document.querySelectorAll('.hist rect').length",
        &json!(10),
    )
    .await;
    s.until(
        "return document.querySelectorAll('#criteria tbody tr').length",
        &json!(1),
    )
    .await;
    s.until(
        "return document.querySelectorAll('#items tbody tr').length",
        &json!(40),
    )
    .await;
    // Typing in the search box filters the rows.
    let search = s.element("#search").await;
    s.call(
        reqwest::Method::POST,
        &format!("/element/{search}/value"),
        json!({"text": "item-0"}),
    )
    .await;
    s.until(
        "return document.querySelectorAll('#items tbody tr').length",
        &json!(10),
    )
    .await;
    // A click on an item shows its verdicts.
    let first = s.element("#items tbody tr").await;
    s.call(
        reqwest::Method::POST,
        &format!("/element/{first}/click"),
        json!({}),
    )
    .await;
    s.until(
        "return document.getElementById('detail').hidden",
        &json!(false),
    )
    .await;
    let detail = s
        .script("return document.getElementById('detail').textContent")
        .await;
    let detail = detail.as_str().unwrap();
    assert!(detail.contains("item-00"), "{detail}");
    assert!(
        detail.contains("says-yes") && detail.contains("UNMET"),
        "{detail}"
    );
    // A second run's page compared with the first: the comparison drawn, and the
    // "regressed" filter keeps the 30 items that passed and now fail.
    std::fs::write(
        d.join("rubric.yaml"),
        std::fs::read_to_string(d.join("rubric.yaml"))
            .unwrap()
            .replace("text: yes", "text: \"yes!\""),
    )
    .unwrap();
    rubricate(
        d,
        &[
            "grade",
            "--rubric",
            "rubric.yaml",
            "items.jsonl",
            "--save",
            "--name",
            "b",
        ],
    );
    rubricate(
        d,
        &["report", &run.to_string_lossy(), "b", "-o", "cmp.html"],
    );
    let page = format!("file://{}", d.join("cmp.html").display());
    s.call(reqwest::Method::POST, "/url", json!({"url": page}))
        .await;
    s.until(
        "return document.getElementById('comparison').hidden",
        &json!(false),
    )
    .await;
    s.script("const f = document.getElementById('filter'); f.value = 'regressed'; f.dispatchEvent(new Event('change')); return 0")
        .await;
    s.until(
        "return document.querySelectorAll('#items tbody tr').length",
        &json!(30),
    )
    .await;
    // No console error on the way.
    let log = s
        .call(reqwest::Method::POST, "/se/log", json!({"type": "browser"}))
        .await;
    let errors: Vec<&Value> = log
        .as_array()
        .map(|l| l.iter().filter(|e| e["level"] == "SEVERE").collect())
        .unwrap_or_default();
    assert!(errors.is_empty(), "console errors: {errors:?}");
    s.call(reqwest::Method::DELETE, "", json!({})).await;
}
