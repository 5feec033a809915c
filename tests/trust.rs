//! A `rubricate.yaml` found by walking up (a downloaded project, a parent folder) is not
//! trusted until the user says so: its `allow_commands` runs nothing and its providers that
//! send a key or leave the machine get nothing, with one line saying what was ignored and
//! how to trust it; `rubricate trust DIR` honours it, until the file changes. The real
//! binary, its user config folder in a temporary home.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::json;
use support::{LlmServer, verdict};

fn rubricate(dir: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rubricate"))
        .current_dir(dir)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("NO_COLOR", "1")
        .env("SECRET_TOKEN", "s3cret-value")
        .env_remove("RUBRICATE_HOME")
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const COMMAND_RUBRIC: &str = "id: cmd\ncriteria:\n  - id: paris\n    requirement: Names Paris\n    method:\n      check: command\n      args: { program: sh, args: ['-c', 'grep -q Paris && echo MET || echo UNMET'] }\n";

#[test]
fn allow_commands_in_an_ancestor_config_runs_nothing_until_trusted() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join("rubricate.yaml"),
        "allow_commands: true\n",
    )
    .unwrap();
    let deep = project.path().join("a/b");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("cmd.yaml"), COMMAND_RUBRIC).unwrap();
    std::fs::write(
        deep.join("d.jsonl"),
        "{\"id\":\"x\",\"submission\":\"Paris is the capital\"}\n",
    )
    .unwrap();
    let grade = [
        "grade", "--rubric", "cmd.yaml", "d.jsonl", "--format", "jsonl",
    ];
    let o = rubricate(&deep, home.path(), &grade);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("--allow-commands"),
        "the check did not run"
    );
    let said = text(&o.stderr);
    assert!(
        said.contains("not trusted, so ignored: allow_commands (running programs)")
            && said.contains(&format!("rubricate trust {}", project.path().display())),
        "{said}"
    );
    // Trusted: honoured.
    let t = rubricate(
        &deep,
        home.path(),
        &["trust", project.path().to_str().unwrap()],
    );
    assert_eq!(t.status.code(), Some(0), "{}", text(&t.stderr));
    assert!(text(&t.stdout).contains("honoured: allow_commands"));
    let o = rubricate(&deep, home.path(), &grade);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("\"verdict\":\"MET\""));
    assert!(!text(&o.stderr).contains("not trusted"));
    // Changed after it was trusted: not honoured again until trusted again.
    std::fs::write(
        project.path().join("rubricate.yaml"),
        "allow_commands: true\n# edited\n",
    )
    .unwrap();
    let o = rubricate(&deep, home.path(), &grade);
    assert_eq!(o.status.code(), Some(3));
    assert!(text(&o.stderr).contains("not trusted"));
    // The flag still works without any trust.
    let mut flagged = grade.to_vec();
    flagged.push("--allow-commands");
    assert_eq!(
        rubricate(&deep, home.path(), &flagged).status.code(),
        Some(0)
    );
}

/// A project folder with `config` as its rubricate.yaml, a one-criterion judged rubric
/// (`r.yaml`) and a one-item dataset (`d.jsonl`).
fn judged_project(config: &str) -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("rubricate.yaml"), config).unwrap();
    std::fs::write(
        project.path().join("r.yaml"),
        "id: r\ncriteria:\n  - id: c\n    requirement: Is fine\n",
    )
    .unwrap();
    std::fs::write(
        project.path().join("d.jsonl"),
        "{\"id\":\"x\",\"submission\":\"hi\"}\n",
    )
    .unwrap();
    project
}

#[test]
fn a_provider_that_sends_a_key_gets_nothing_until_trusted() {
    let server = LlmServer::start(Duration::ZERO, |_| verdict("ok", json!("MET")));
    let home = tempfile::tempdir().unwrap();
    let project = judged_project(&format!(
        "providers:\n  grab:\n    base_url: {}/v1\n    api_key_env: SECRET_TOKEN\njudge:\n  model: grab/m\n",
        server.url
    ));
    let grade = [
        "grade", "--rubric", "r.yaml", "d.jsonl", "--format", "jsonl",
    ];
    let o = rubricate(project.path(), home.path(), &grade);
    assert!(server.seen().is_empty(), "nothing was sent");
    let said = text(&o.stderr);
    assert!(
        said.contains("provider 'grab' (sends $SECRET_TOKEN to"),
        "{said}"
    );
    assert_ne!(o.status.code(), Some(0));
    let t = rubricate(project.path(), home.path(), &["trust"]);
    assert_eq!(t.status.code(), Some(0), "{}", text(&t.stderr));
    let o = rubricate(project.path(), home.path(), &grade);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].header("authorization"),
        Some("Bearer s3cret-value"),
        "trusted: the key goes where the user agreed"
    );
    // The trust is kept in the user's config folder, never in the project.
    assert!(home.path().join(".config/rubricate/trusted.json").is_file());
}

#[test]
fn a_local_provider_without_a_key_needs_no_trust() {
    let server = LlmServer::start(Duration::ZERO, |_| verdict("ok", json!("MET")));
    let home = tempfile::tempdir().unwrap();
    let project = judged_project(&format!(
        "providers:\n  local:\n    base_url: {}/v1\njudge:\n  model: local/m\n",
        server.url
    ));
    let o = rubricate(
        project.path(),
        home.path(),
        &[
            "grade", "--rubric", "r.yaml", "d.jsonl", "--format", "jsonl",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("not trusted"));
    assert_eq!(server.seen().len(), 1);
}

/// A folder `T` whose config allows commands, trusted; returns the user's home and `T`'s
/// parent (the tests put their other folders beside `T`).
fn trusted_commands_folder() -> (tempfile::TempDir, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let top = tempfile::tempdir().unwrap();
    let trusted = top.path().join("T");
    std::fs::create_dir(&trusted).unwrap();
    std::fs::write(trusted.join("rubricate.yaml"), "allow_commands: true\n").unwrap();
    let t = rubricate(top.path(), home.path(), &["trust", "T"]);
    assert_eq!(t.status.code(), Some(0), "{}", text(&t.stderr));
    (home, top)
}

/// A folder beside `T` holding the command rubric and a dataset, with `config` made by
/// `link` as its rubricate.yaml.
fn other_folder(top: &Path, name: &str, link: impl FnOnce(&Path, &Path)) -> std::path::PathBuf {
    let other = top.join(name);
    std::fs::create_dir(&other).unwrap();
    link(&top.join("T/rubricate.yaml"), &other.join("rubricate.yaml"));
    std::fs::write(other.join("cmd.yaml"), COMMAND_RUBRIC).unwrap();
    std::fs::write(
        other.join("d.jsonl"),
        "{\"id\":\"x\",\"submission\":\"Paris is the capital\"}\n",
    )
    .unwrap();
    other
}

const GRADE_COMMAND: [&str; 6] = [
    "grade", "--rubric", "cmd.yaml", "d.jsonl", "--format", "jsonl",
];

#[test]
fn a_symlinked_config_pointing_at_a_trusted_file_is_not_trusted_and_says_what_to_do() {
    let (home, top) = trusted_commands_folder();
    // As a cloned repository could ship it: a relative link to the trusted file.
    let other = other_folder(top.path(), "clone", |_, link| {
        std::os::unix::fs::symlink("../T/rubricate.yaml", link).unwrap();
    });
    let o = rubricate(&other, home.path(), &GRADE_COMMAND);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("--allow-commands") && !text(&o.stdout).contains("\"MET\""),
        "the check did not run: {}",
        text(&o.stdout)
    );
    let said = text(&o.stderr);
    let real = std::fs::canonicalize(top.path().join("T/rubricate.yaml")).unwrap();
    assert!(
        said.contains(&format!(
            "{}: a symbolic link (to ../T/rubricate.yaml), never trusted",
            other.join("rubricate.yaml").display()
        )) && said.contains("so ignored: allow_commands (running programs)")
            && said.contains(&format!(
                "cp --remove-destination {} {}",
                real.display(),
                other.join("rubricate.yaml").display()
            ))
            && said.contains(&format!("rubricate trust {}", other.display())),
        "{said}"
    );
    // Trusting the link itself is refused, and says what to do instead.
    let t = rubricate(&other, home.path(), &["trust"]);
    assert_eq!(t.status.code(), Some(2), "{}", text(&t.stdout));
    let said = text(&t.stderr);
    assert!(
        said.contains("is a symbolic link (to ../T/rubricate.yaml), and a link is never trusted")
            && said.contains("cp --remove-destination"),
        "{said}"
    );
    // The trusted folder itself keeps its trust.
    let inside = other_folder(top.path(), "T/sub", |_, _| {});
    let o = rubricate(&inside, home.path(), &GRADE_COMMAND);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // Doing what the warning says: a copy, trusted, is honoured.
    std::fs::remove_file(other.join("rubricate.yaml")).unwrap();
    std::fs::copy(&real, other.join("rubricate.yaml")).unwrap();
    let t = rubricate(&other, home.path(), &["trust"]);
    assert_eq!(t.status.code(), Some(0), "{}", text(&t.stderr));
    let o = rubricate(&other, home.path(), &GRADE_COMMAND);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("\"verdict\":\"MET\""));
}

#[test]
fn a_hard_link_to_a_trusted_config_is_another_path_and_not_trusted() {
    let (home, top) = trusted_commands_folder();
    let other = other_folder(top.path(), "hard", |target, link| {
        std::fs::hard_link(target, link).unwrap();
    });
    let o = rubricate(&other, home.path(), &GRADE_COMMAND);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let said = text(&o.stderr);
    assert!(
        said.contains("not trusted, so ignored: allow_commands")
            && said.contains(&format!("rubricate trust {}", other.display())),
        "{said}"
    );
}

#[test]
fn a_trusted_workspace_reached_through_a_linked_folder_is_the_same_workspace() {
    // The folder link leads to the trusted folder's own files, rubrics and all, so the
    // trust holds; what a link cannot do is lend a config to another folder's rubrics.
    let (home, top) = trusted_commands_folder();
    let inside = other_folder(top.path(), "T/sub", |_, _| {});
    std::os::unix::fs::symlink(top.path().join("T"), top.path().join("L")).unwrap();
    let o = rubricate(&top.path().join("L/sub"), home.path(), &GRADE_COMMAND);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("\"verdict\":\"MET\""));
    assert!(inside.join("cmd.yaml").is_file());
}

#[test]
fn a_judge_model_naming_an_untrusted_provider_says_it_is_defined_but_not_trusted() {
    let server = LlmServer::start(Duration::ZERO, |_| verdict("ok", json!("MET")));
    let home = tempfile::tempdir().unwrap();
    let project = judged_project(&format!(
        "providers:\n  grab:\n    base_url: {}/v1\n    api_key_env: SECRET_TOKEN\n",
        server.url
    ));
    let o = rubricate(
        project.path(),
        home.path(),
        &[
            "grade", "--rubric", "r.yaml", "d.jsonl", "--judge", "grab/m",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let said = text(&o.stderr);
    assert!(
        said.contains(&format!(
            "provider 'grab' of judge model 'grab/m' is defined in {} but not trusted, so not used (it sends $SECRET_TOKEN to",
            project.path().join("rubricate.yaml").display()
        )) && said.contains(&format!("to use it, run `rubricate trust {}`", project.path().display()))
            && !said.contains("unknown provider"),
        "{said}"
    );
    assert!(server.seen().is_empty(), "nothing was sent");
}
