//! The workspace config, `rubricate.yaml`, found by walking up from a folder (like git):
//! `allow_commands`, judge defaults, named providers and prices. An unknown key is a
//! located warning, a bad value a located error. Keys never live here: a provider names
//! the environment variable that holds its key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::engine::judge::Strategy;
use crate::formats::fields::{Ctx, Fields, string_of};
use crate::formats::node::Node;
use crate::formats::{Diagnostic, Diagnostics, MAX_RUBRIC_BYTES, parse_document, read_text};
use crate::llm::{NamedProvider, Price, ProviderKind};

/// The workspace's config file, at its root.
pub const CONFIG_FILE: &str = "rubricate.yaml";

/// The JSON Schema of `rubricate.yaml` (for editors; `rubricate schema --config`), kept to
/// the keys read here by a test.
pub const CONFIG_SCHEMA: &str = include_str!("../../assets/config.schema.json");

const KNOWN: &[&str] = &[
    "allow_commands",
    "judge",
    "providers",
    "prices",
    "artifact_types",
    "gates",
];
const JUDGE_KNOWN: &[&str] = &[
    "model",
    "strategy",
    "concurrency",
    "rpm",
    "tpm",
    "timeout",
    "max_retries",
    "max_cost",
    "confirm_calls",
    "confirm_cost",
    "max_reply_bytes",
    "batch_max_requests",
    "batch_max_mb",
    "batch_poll",
    "batch_create_settle",
    "reasoning_effort",
    "thinking_budget",
    "extra",
];
const PROVIDER_KNOWN: &[&str] = &["base_url", "api_key_env", "kind"];

/// `rubricate.yaml`, read and checked (what an untrusted config asks for is withheld).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkspaceConfig {
    /// The file this came from; `None` when there is no workspace config.
    pub path: Option<PathBuf>,
    /// Lets `command` checks run programs.
    pub allow_commands: bool,
    /// Judge defaults for every run.
    pub judge: JudgeDefaults,
    /// OpenAI-compatible (or Anthropic) services reached as `NAME/MODEL`.
    pub providers: Vec<NamedProvider>,
    /// Dollars per million tokens, by model id (`openai/gpt-4o-mini`).
    pub prices: BTreeMap<String, Price>,
    /// The same through the provider's batch engine (`prices: {M: {batch: {…}}}`).
    pub batch_prices: BTreeMap<String, Price>,
    /// Artifact types and the rubrics their review evaluates.
    pub artifact_types: BTreeMap<String, Vec<String>>,
    /// Keymap overrides for the terminal UI, checked when it starts (the UI owns the
    /// action names).
    pub keymap: Option<Node>,
    /// Theme overrides for the terminal UI, checked when it starts.
    pub theme: Option<Node>,
    /// Who labels in the terminal UI.
    pub annotator: Option<String>,
    /// What every graded run must reach for `grade` to exit 0 (`gates: [pass_rate>=0.9]`).
    pub gates: Vec<crate::model::RunGate>,
    /// What the config asked for but was not honoured because the user has not trusted it
    /// (`rubricate trust DIR`): `allow_commands`, providers that send a key or leave the
    /// machine. Empty when trusted or when it asks for none of that.
    pub untrusted: Vec<String>,
    /// The providers among those, kept apart so a judge model naming one is told it is
    /// defined but not trusted (not that no such provider exists).
    pub withheld_providers: Vec<NamedProvider>,
    /// What to do to have them honoured: `rubricate trust DIR`, or for a config that is a
    /// symbolic link (never trusted), to replace the link with a copy first.
    pub trust_hint: String,
}

/// Judge settings for every run in the workspace (flags and the rubric's `judge:` win).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeDefaults {
    /// The judge model id.
    pub model: Option<String>,
    /// How judges are asked.
    pub strategy: Option<Strategy>,
    /// Calls in flight at once per endpoint.
    pub concurrency: Option<usize>,
    /// Requests per minute per endpoint.
    pub rpm: Option<u32>,
    /// Tokens per minute per endpoint.
    pub tpm: Option<u32>,
    /// Seconds one judge call may take.
    pub timeout: Option<f64>,
    /// Tries after the first.
    pub max_retries: Option<u32>,
    /// The cost limit of every run in dollars (`--max-cost` wins).
    pub max_cost: Option<f64>,
    /// The terminal UI asks before starting a run that sends more judge calls than this
    /// (default [`CONFIRM_CALLS`]).
    pub confirm_calls: Option<u64>,
    /// … or that is estimated to cost more dollars than this (default [`CONFIRM_COST`]).
    pub confirm_cost: Option<f64>,
    /// The most bytes one judge reply may take (`llm::ClientOptions::max_reply_bytes`).
    pub max_reply_bytes: Option<usize>,
    /// The most requests in one provider batch (below the provider's own).
    pub batch_max_requests: Option<usize>,
    /// The most megabytes of requests in one provider batch (below the provider's own).
    pub batch_max_mb: Option<u64>,
    /// Seconds between asking about a batch run's batches (`runs resume --wait`).
    pub batch_poll: Option<f64>,
    /// Seconds after a batch's create began that a resumed run looks for it at the
    /// provider before making it again (the run stopped while the provider made it).
    pub batch_create_settle: Option<f64>,
    /// `reasoning_effort`, `thinking_budget` and `extra` for every judge (a rubric's
    /// `judge:` and the flags win).
    pub reasoning: crate::formats::reasoning::Reasoning,
}

/// How long a resumed run looks for a batch whose create was cut short, by default: a
/// provider answers a create within seconds, and a second batch is paid twice.
pub const BATCH_CREATE_SETTLE: f64 = 60.0;

impl JudgeDefaults {
    /// How long a resumed run looks for a batch whose create was cut short.
    pub fn batch_create_settle(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(
            self.batch_create_settle
                .unwrap_or(BATCH_CREATE_SETTLE)
                .clamp(0.0, 86_400.0),
        )
    }

    /// Configured batch limits (`None`: the provider's own).
    pub fn batch_limits(&self) -> Option<crate::llm::batch::Limits> {
        (self.batch_max_requests.is_some() || self.batch_max_mb.is_some()).then(|| {
            crate::llm::batch::Limits {
                requests: self.batch_max_requests.unwrap_or(usize::MAX),
                bytes: self
                    .batch_max_mb
                    .map_or(u64::MAX, |mb| mb.saturating_mul(1_000_000)),
            }
        })
    }
}

impl WorkspaceConfig {
    /// A model's price through its provider's batch engine: its `batch` entry, else half
    /// its live price (what `OpenAI` and Anthropic charge).
    pub fn batch_price(&self, model: &str) -> Option<Price> {
        self.batch_prices.get(model).copied().or_else(|| {
            self.prices.get(model).map(|p| Price {
                input: p.input / 2.0,
                output: p.output / 2.0,
            })
        })
    }
}

/// Judge calls above which the terminal UI asks before starting a run.
pub const CONFIRM_CALLS: u64 = 10_000;
/// Estimated dollars above which the terminal UI asks before starting a run.
pub const CONFIRM_COST: f64 = 1.0;

/// The bounds of `judge.max_reply_bytes`: a verdict fits in far less than the least, and
/// the most keeps one reply from straining memory.
const MIN_REPLY_BYTES: usize = 1024;
const MAX_REPLY_BYTES: usize = 1024 * 1024 * 1024;

/// The nearest `rubricate.yaml` at or above `start`.
pub fn find_config(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|d| d.join(CONFIG_FILE))
        .find(|p| p.is_file())
}

/// Reads the config at or above `start`, honouring what needs trust only when the user
/// trusted it (`store::trust`). Returns the config and its warnings.
pub fn load_config(start: &Path) -> Result<(WorkspaceConfig, Vec<Diagnostic>), Diagnostics> {
    let Some(path) = find_config(start) else {
        return Ok((WorkspaceConfig::default(), Vec::new()));
    };
    // Read once: what is parsed is what is checked against the trusted hash.
    let text = read_text(&path, MAX_RUBRIC_BYTES, "config")?;
    let (mut config, mut warnings) = parse_config(&path, &text)?;
    if let Some(w) = withhold_untrusted(&mut config, &path, &text) {
        warnings.push(w);
    }
    Ok((config, warnings))
}

/// Reads one config file as it is written (trust not applied). Returns the config and its
/// warnings.
pub fn read_config(path: &Path) -> Result<(WorkspaceConfig, Vec<Diagnostic>), Diagnostics> {
    let text = read_text(path, MAX_RUBRIC_BYTES, "config")?;
    parse_config(path, &text)
}

fn parse_config(
    path: &Path,
    text: &str,
) -> Result<(WorkspaceConfig, Vec<Diagnostic>), Diagnostics> {
    let path = path.to_path_buf();
    let file = path.display().to_string();
    let root = parse_document(&file, text)?;
    let mut config = WorkspaceConfig {
        path: Some(path),
        ..WorkspaceConfig::default()
    };
    if root.value == crate::formats::node::NodeValue::Null {
        return Ok((config, Vec::new()));
    }
    let mut ctx = Ctx::new(&file);
    let Some(mut fields) = Fields::of(&mut ctx, &root, "rubricate.yaml") else {
        return Err(Diagnostics(ctx.diags));
    };
    config.allow_commands = fields.boolean(&mut ctx, "allow_commands").unwrap_or(false);
    let mut unknown = Vec::new();
    if let Some(node) = fields.take("judge") {
        config.judge = judge_defaults(&mut ctx, node, &mut unknown);
    }
    if let Some(node) = fields.take("providers") {
        config.providers = providers(&mut ctx, node, &mut unknown);
    }
    if let Some(node) = fields.take("prices") {
        (config.prices, config.batch_prices) =
            super::prices::prices(&mut ctx, node, &mut |ctx, f, known| {
                finish_warning(ctx, f, known, &mut unknown);
            });
    }
    config.keymap = fields.take("keymap").cloned();
    config.theme = fields.take("theme").cloned();
    config.annotator = fields.string(&mut ctx, "annotator");
    if let Some(node) = fields.take("gates") {
        config.gates = crate::formats::fields::gates_of(&mut ctx, node, None);
    }
    if let Some(node) = fields.take("artifact_types") {
        config.artifact_types = artifact_types(&mut ctx, node, &mut unknown);
    }
    let errors = std::mem::take(&mut ctx.diags);
    fields.finish(&mut ctx, KNOWN);
    let mut warnings = ctx.diags;
    warnings.extend(unknown);
    if errors.is_empty() {
        Ok((config, warnings))
    } else {
        Err(Diagnostics(errors))
    }
}

/// A provider that sends a key, or sends anything off this machine.
fn needs_trust(p: &NamedProvider) -> bool {
    p.key_env.is_some()
        || std::iter::once(&p.base_url)
            .chain(&p.replicas)
            .any(|u| !super::trust::is_loopback(u))
}

impl WorkspaceConfig {
    /// The settings of this config that can run programs or send a secret, in words.
    pub fn asks_for_trust(&self) -> Vec<String> {
        let mut asked = Vec::new();
        if self.allow_commands {
            asked.push("allow_commands (running programs)".to_owned());
        }
        for p in self.providers.iter().filter(|p| needs_trust(p)) {
            asked.push(match &p.key_env {
                Some(k) => format!("provider '{}' (sends ${k} to {})", p.name, p.base_url),
                None => format!("provider '{}' (sends requests to {})", p.name, p.base_url),
            });
        }
        asked
    }
}

/// Drops the settings that can run programs or send a secret when the user has not trusted
/// this config (see `store::trust`), and says what was dropped and how to trust it.
fn withhold_untrusted(config: &mut WorkspaceConfig, path: &Path, text: &str) -> Option<Diagnostic> {
    let asked = config.asks_for_trust();
    if asked.is_empty() || super::trust::is_trusted(path, text) {
        return None;
    }
    config.allow_commands = false;
    let (withheld, kept) = std::mem::take(&mut config.providers)
        .into_iter()
        .partition(needs_trust);
    config.providers = kept;
    config.withheld_providers = withheld;
    let dir = path.parent().unwrap_or(path);
    let message = if let Some(target) = super::trust::link_target(path) {
        config.trust_hint = super::trust::copy_instead(path);
        format!(
            "a symbolic link (to {}), never trusted (trust belongs to a workspace's own file, not to the file a link leads to), so ignored: {}. If this folder should have them, {}",
            target.display(),
            asked.join(", "),
            config.trust_hint
        )
    } else {
        config.trust_hint = format!("run `rubricate trust {}`", dir.display());
        format!(
            "not trusted, so ignored: {}; if you wrote this config (or checked it), `rubricate trust {}` honours it",
            asked.join(", "),
            dir.display()
        )
    };
    config.untrusted = asked;
    Some(Diagnostic::whole(&path.display().to_string(), message))
}

impl WorkspaceConfig {
    /// The provider, model and key of a judge model id (`llm::resolve` over this config's
    /// providers); a provider this config defines but the user has not trusted is named as
    /// such, with what to do, and never falls back to a built-in of the same name.
    pub fn resolve_model(
        &self,
        id: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<crate::llm::ProviderSpec, crate::llm::LlmError> {
        let prefix = id.split_once('/').map_or(id, |(p, _)| p);
        if let Some(p) = self.withheld_providers.iter().find(|p| p.name == prefix) {
            let file = self
                .path
                .as_deref()
                .map_or_else(|| CONFIG_FILE.to_owned(), |f| f.display().to_string());
            let sends = match &p.key_env {
                Some(k) => format!("it sends ${k} to {}", p.base_url),
                None => format!("it sends requests to {}", p.base_url),
            };
            return Err(crate::llm::LlmError::Config(format!(
                "provider '{prefix}' of judge model '{id}' is defined in {file} but not trusted, so not used ({sends}); to use it, {}",
                self.trust_hint
            )));
        }
        crate::llm::resolve(id, env, &self.providers)
    }
}

/// Unknown keys inside a section are warnings, like those at the top.
fn finish_warning(
    ctx: &mut Ctx<'_>,
    fields: Fields<'_>,
    known: &[&str],
    unknown: &mut Vec<Diagnostic>,
) {
    let before = ctx.diags.len();
    fields.finish(ctx, known);
    unknown.extend(ctx.diags.drain(before..));
}

fn whole_number<T: TryFrom<u64>>(
    ctx: &mut Ctx<'_>,
    fields: &mut Fields<'_>,
    key: &str,
) -> Option<T> {
    let node = fields.take(key)?;
    let ok = node
        .as_f64()
        .filter(|x| x.fract() == 0.0 && *x >= 1.0 && *x <= 1e12)
        // Exact: whole and far below 2^53.
        .and_then(|x| format!("{x:.0}").parse::<u64>().ok())
        .and_then(|n| T::try_from(n).ok());
    if ok.is_none() {
        ctx.err(
            node.pos,
            format!("`{key}` must be a whole number of at least 1"),
        );
    }
    ok
}

/// A positive number of dollars.
fn dollars(ctx: &mut Ctx<'_>, f: &mut Fields<'_>, key: &str) -> Option<f64> {
    let n = f.take(key)?;
    let x = n.as_f64().filter(|x| x.is_finite() && *x > 0.0);
    if x.is_none() {
        ctx.err(
            n.pos,
            format!("`{key}` must be a positive number of dollars"),
        );
    }
    x
}

fn judge_defaults(ctx: &mut Ctx<'_>, node: &Node, unknown: &mut Vec<Diagnostic>) -> JudgeDefaults {
    let mut out = JudgeDefaults::default();
    let Some(mut f) = Fields::of(ctx, node, "`judge`") else {
        return out;
    };
    out.model = f.string(ctx, "model");
    if let Some(n) = f.take("strategy") {
        out.strategy = n.as_str().and_then(Strategy::parse);
        if out.strategy.is_none() {
            ctx.err(
                n.pos,
                "`strategy` must be per_criterion, one_shot, double_pass or holistic",
            );
        }
    }
    out.concurrency = whole_number(ctx, &mut f, "concurrency");
    out.rpm = whole_number(ctx, &mut f, "rpm");
    out.tpm = whole_number(ctx, &mut f, "tpm");
    if let Some(n) = f.take("timeout") {
        out.timeout = n.as_f64().filter(|t| t.is_finite() && *t > 0.0);
        if out.timeout.is_none() {
            ctx.err(n.pos, "`timeout` must be a positive number of seconds");
        }
    }
    if let Some(n) = f.take("max_retries") {
        out.max_retries = n
            .as_f64()
            .filter(|x| x.fract() == 0.0 && (0.0..=100.0).contains(x))
            .map(|x| {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                // checked: 0..=100
                let n = x as u32;
                n
            });
        if out.max_retries.is_none() {
            ctx.err(n.pos, "`max_retries` must be a whole number from 0 to 100");
        }
    }
    out.max_cost = dollars(ctx, &mut f, "max_cost");
    out.confirm_cost = dollars(ctx, &mut f, "confirm_cost");
    out.confirm_calls = whole_number(ctx, &mut f, "confirm_calls");
    if let Some(n) = f.take("max_reply_bytes") {
        out.max_reply_bytes = n
            .as_f64()
            .filter(|x| x.fract() == 0.0)
            .filter(|x| (MIN_REPLY_BYTES as f64..=MAX_REPLY_BYTES as f64).contains(x))
            .map(|x| x as usize); // checked: whole, from 1 KiB to 1 GiB
        if out.max_reply_bytes.is_none() {
            ctx.err(
                n.pos,
                "`max_reply_bytes` must be a whole number of bytes from 1024 (1 KiB) to 1073741824 (1 GiB); the default is 4194304 (4 MiB)",
            );
        }
    }
    out.batch_max_requests = whole_number(ctx, &mut f, "batch_max_requests");
    out.batch_max_mb = whole_number(ctx, &mut f, "batch_max_mb");
    if let Some(n) = f.take("batch_poll") {
        out.batch_poll = n.as_f64().filter(|t| t.is_finite() && *t > 0.0);
        if out.batch_poll.is_none() {
            ctx.err(n.pos, "`batch_poll` must be a positive number of seconds");
        }
    }
    if let Some(n) = f.take("batch_create_settle") {
        out.batch_create_settle = n.as_f64().filter(|t| (0.0..=86_400.0).contains(t));
        if out.batch_create_settle.is_none() {
            ctx.err(
                n.pos,
                "`batch_create_settle` must be a number of seconds from 0 to 86400 (default 60)",
            );
        }
    }
    out.reasoning = crate::formats::reasoning::read(ctx, &mut f);
    finish_warning(ctx, f, JUDGE_KNOWN, unknown);
    out
}

fn providers(ctx: &mut Ctx<'_>, node: &Node, unknown: &mut Vec<Diagnostic>) -> Vec<NamedProvider> {
    let Some(entries) = node.as_map() else {
        ctx.wrong_type(node, "`providers`", "a mapping of provider names");
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, value) in entries {
        if name.text.is_empty() || name.text.contains('/') {
            ctx.err(
                name.pos,
                format!(
                    "provider name '{}' must be non-empty and have no '/'",
                    name.text
                ),
            );
            continue;
        }
        let Some(mut f) = Fields::of(ctx, value, &format!("provider '{}'", name.text)) else {
            continue;
        };
        let kind = match f.take("kind") {
            None => Some(ProviderKind::OpenAi),
            Some(n) => match n.as_str() {
                Some("openai") => Some(ProviderKind::OpenAi),
                Some("anthropic") => Some(ProviderKind::Anthropic),
                _ => {
                    ctx.err(
                        n.pos,
                        "`kind` must be openai (any OpenAI-compatible server) or anthropic",
                    );
                    None
                }
            },
        };
        let before = ctx.diags.len();
        // One URL, or a list of replicas of the same server.
        let (base_url, replicas) = match f.take("base_url") {
            Some(n) => match n.as_seq() {
                Some(list) => {
                    let mut urls = list
                        .iter()
                        .filter_map(|u| string_of(ctx, u, "each `base_url`"))
                        .collect::<Vec<_>>()
                        .into_iter();
                    if list.is_empty() {
                        ctx.err(n.pos, "`base_url` lists no URL");
                    }
                    (urls.next(), urls.collect())
                }
                None => (string_of(ctx, n, "`base_url`"), Vec::new()),
            },
            None => (None, Vec::new()),
        };
        if base_url.is_none() && ctx.diags.len() == before {
            ctx.err(
                value.pos,
                format!("provider '{}' needs a `base_url`", name.text),
            );
        }
        let key_node = f.take("api_key_env");
        let key_env = key_node.and_then(|n| string_of(ctx, n, "`api_key_env`"));
        if let (Some(k), Some(n)) = (&key_env, key_node)
            && (k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            ctx.err(
                n.pos,
                format!("`api_key_env` names an environment variable (like TOGETHER_API_KEY), not a key; found '{}'", k.chars().take(4).collect::<String>() + "…"),
            );
        }
        finish_warning(ctx, f, PROVIDER_KNOWN, unknown);
        if let (Some(kind), Some(base_url)) = (kind, base_url) {
            out.push(NamedProvider {
                name: name.text.clone(),
                kind,
                base_url,
                replicas,
                key_env,
            });
        }
    }
    out
}

/// `artifact_types: {quiz: {rubrics: [quiz-quality]}}`.
fn artifact_types(
    ctx: &mut Ctx<'_>,
    node: &Node,
    unknown: &mut Vec<Diagnostic>,
) -> BTreeMap<String, Vec<String>> {
    let Some(entries) = node.as_map() else {
        ctx.wrong_type(node, "`artifact_types`", "a mapping of type names");
        return BTreeMap::new();
    };
    let mut out = BTreeMap::new();
    for (name, value) in entries {
        let Some(mut f) = Fields::of(ctx, value, &format!("artifact type '{}'", name.text)) else {
            continue;
        };
        let rubrics: Vec<String> = if let Some(n) = f.take("rubrics") {
            if let Some(items) = n.as_seq() {
                items
                    .iter()
                    .filter_map(|i| string_of(ctx, i, "a rubric name"))
                    .collect()
            } else {
                ctx.wrong_type(n, "`rubrics`", "a list of rubric ids or files");
                Vec::new()
            }
        } else {
            ctx.err(
                value.pos,
                format!(
                    "artifact type '{}' needs `rubrics`: the rubrics its review evaluates",
                    name.text
                ),
            );
            Vec::new()
        };
        finish_warning(ctx, f, &["rubrics"], unknown);
        out.insert(name.text.clone(), rubrics);
    }
    out
}

#[cfg(test)]
mod tests;
