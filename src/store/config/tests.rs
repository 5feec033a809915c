use super::*;

#[test]
fn found_by_walking_up_with_warnings_and_errors_located() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a/b");
    std::fs::create_dir_all(&nested).unwrap();
    assert!(!load_config(&nested).unwrap().0.allow_commands);
    std::fs::write(
        dir.path().join(CONFIG_FILE),
        "allow_commands: true\nallow_comands: 1\n",
    )
    .unwrap();
    let (config, warnings) = read_config(&dir.path().join(CONFIG_FILE)).unwrap();
    assert!(config.allow_commands, "as written");
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].to_string().ends_with(
            ":2:1: unknown field `allow_comands` in rubricate.yaml; did you mean `allow_commands`?"
        ),
        "{}",
        warnings[0]
    );
    // Found by walking up and not trusted: not honoured, and said so.
    let (config, warnings) = load_config(&nested).unwrap();
    assert!(!config.allow_commands);
    assert_eq!(config.untrusted, ["allow_commands (running programs)"]);
    assert!(
        warnings[1]
            .to_string()
            .contains("not trusted, so ignored: allow_commands"),
        "{}",
        warnings[1]
    );
    std::fs::write(dir.path().join(CONFIG_FILE), "allow_commands: yes please\n").unwrap();
    let err = load_config(&nested).unwrap_err().to_string();
    assert!(
        err.ends_with(":1:17: `allow_commands` must be true or false, found a string"),
        "{err}"
    );
}

#[test]
fn a_base_url_list_is_replicas_and_any_remote_one_asks_for_trust() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(CONFIG_FILE);
    std::fs::write(
        &file,
        "providers:\n  vllm:\n    base_url: [http://127.0.0.1:8000/v1, http://127.0.0.1:8001/v1]\n",
    )
    .unwrap();
    let (config, _) = read_config(&file).unwrap();
    let p = &config.providers[0];
    assert_eq!(p.base_url, "http://127.0.0.1:8000/v1");
    assert_eq!(p.replicas, ["http://127.0.0.1:8001/v1"]);
    assert!(
        config.asks_for_trust().is_empty(),
        "loopback replicas need no trust"
    );
    std::fs::write(
        &file,
        "providers:\n  vllm:\n    base_url: [http://127.0.0.1:8000/v1, https://gpu.example/v1]\n",
    )
    .unwrap();
    let (config, _) = read_config(&file).unwrap();
    assert_eq!(config.asks_for_trust().len(), 1);
    std::fs::write(&file, "providers:\n  vllm:\n    base_url: []\n").unwrap();
    let err = read_config(&file).unwrap_err().to_string();
    assert!(err.contains("`base_url` lists no URL"), "{err}");
}

#[test]
fn judge_defaults_providers_and_prices() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(CONFIG_FILE),
        "judge:\n  model: local/qwen\n  strategy: one-shot\n  rpm: 60\n  colour: red\nproviders:\n  local:\n    base_url: http://127.0.0.1:8080/v1\n  claude:\n    kind: anthropic\n    base_url: https://proxy.example\n    api_key_env: PROXY_KEY\nprices:\n  openai/gpt-4o-mini: {input: 0.15, output: 0.6}\n",
    )
    .unwrap();
    let (config, warnings) = read_config(&dir.path().join(CONFIG_FILE)).unwrap();
    assert_eq!(config.judge.model.as_deref(), Some("local/qwen"));
    assert_eq!(config.judge.strategy, Some(Strategy::OneShot));
    assert_eq!(config.judge.rpm, Some(60));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0]
            .to_string()
            .contains(":5:3: unknown field `colour` in `judge`"),
        "{}",
        warnings[0]
    );
    assert_eq!(config.providers.len(), 2);
    assert_eq!(config.providers[1].kind, ProviderKind::Anthropic);
    assert_eq!(config.providers[1].key_env.as_deref(), Some("PROXY_KEY"));
    assert_eq!(config.prices["openai/gpt-4o-mini"].output, 0.6);

    std::fs::write(
        dir.path().join(CONFIG_FILE),
        "providers:\n  x:\n    base_url: http://h\n    api_key_env: sk-live-123\nprices:\n  m: {input: -1, output: 2}\njudge:\n  concurrency: 0\n",
    )
    .unwrap();
    let err = load_config(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains(":4:18: `api_key_env` names an environment variable"),
        "{err}"
    );
    assert!(!err.contains("needs `input` and `output`"), "{err}");
    assert!(
        !err.contains("sk-live-123"),
        "a key pasted by mistake is not echoed: {err}"
    );
    assert!(
        err.contains(":6:14: `input` is dollars per million tokens"),
        "{err}"
    );
    assert!(
        err.contains(":8:16: `concurrency` must be a whole number of at least 1"),
        "{err}"
    );
}

#[test]
fn the_reply_size_cap_is_a_whole_number_of_bytes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(CONFIG_FILE),
        "judge:\n  max_reply_bytes: 1048576\n",
    )
    .unwrap();
    let (config, warnings) = load_config(dir.path()).unwrap();
    assert_eq!(config.judge.max_reply_bytes, Some(1_048_576));
    assert!(warnings.is_empty(), "{warnings:?}");
    for bad in ["12", "2.5e9", "1.5", "lots"] {
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            format!("judge:\n  max_reply_bytes: {bad}\n"),
        )
        .unwrap();
        let err = load_config(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains(":2:20: `max_reply_bytes` must be a whole number of bytes from 1024"),
            "{bad}: {err}"
        );
    }
}

/// The schema's keys are exactly the keys read here (top level, `judge:`, a provider), so an
/// editor never offers a key the reader warns about, nor misses one it reads.
#[test]
fn the_config_schema_names_exactly_the_keys_read() {
    let schema: serde_json::Value = serde_json::from_str(CONFIG_SCHEMA).unwrap();
    let keys = |v: &serde_json::Value| -> Vec<String> {
        let mut k: Vec<String> = v["properties"]
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| *k != "$schema")
            .cloned()
            .collect();
        k.sort();
        k
    };
    let sorted = |list: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
        v.sort();
        v
    };
    let mut top: Vec<&str> = KNOWN.to_vec();
    // Read before the known-key check (the UI checks keymap and theme when it starts).
    top.extend(["keymap", "theme", "annotator"]);
    assert_eq!(keys(&schema), sorted(&top));
    assert_eq!(keys(&schema["properties"]["judge"]), sorted(JUDGE_KNOWN));
    assert_eq!(
        keys(&schema["properties"]["providers"]["additionalProperties"]),
        sorted(PROVIDER_KNOWN)
    );
}

/// What the reader takes, the schema takes: docs/configuration.md's example config, the new workspace's and
/// the demo's (both all comments but their first line, the schema's), and a refused one.
#[test]
fn the_configs_we_ship_and_document_meet_the_schema() {
    let schema: serde_json::Value = serde_json::from_str(CONFIG_SCHEMA).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let readme = include_str!("../../../docs/configuration.md");
    let start = readme.find("## Configuration").unwrap();
    let block = &readme[start..];
    let block = &block[block.find("```yaml").unwrap()..];
    let block = &block[block.find('\n').unwrap() + 1..];
    let example = &block[..block.find("```").unwrap()];
    for (name, text) in [
        ("README", example),
        ("new", crate::store::workspace::NEW_CONFIG),
        ("demo", include_str!("../../../assets/demo/rubricate.yaml")),
    ] {
        assert!(
            text.starts_with("# yaml-language-server: $schema=.rubricate/config.schema.json")
                || name == "README",
            "{name}"
        );
        let (_, warnings) = parse_config(Path::new("rubricate.yaml"), text).unwrap();
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
        let doc = crate::formats::parse_document("rubricate.yaml", text).unwrap();
        let mut value = doc.to_json();
        if value.is_null() {
            value = serde_json::json!({});
        }
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
    let wrong = serde_json::json!({"judge": {"modle": "x"}, "prices": {"m": {"input": 1}}});
    assert!(validator.iter_errors(&wrong).count() >= 2);
}
