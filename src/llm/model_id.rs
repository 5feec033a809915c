//! Model ids (`openai/gpt-4o-mini`, `anthropic/claude-…`, `ollama/llama3.2`) → which wire
//! format, where, and with which key (from the environment).

use super::LlmError;

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// OpenAI-compatible chat completions (`OpenAI`, vLLM, Ollama, llama.cpp, …).
    OpenAi,
    /// Anthropic's Messages API.
    Anthropic,
}

/// Everything needed to reach one model. `key` is never printed (see `Debug`).
#[derive(Clone, PartialEq, Eq)]
pub struct ProviderSpec {
    /// The prefix of the id: `openai`, `anthropic`, `ollama`.
    pub name: String,
    /// Its wire format.
    pub kind: ProviderKind,
    /// The provider's own model name.
    pub model: String,
    /// Where requests go (for `OpenAI`-compatible servers, up to and including `/v1`).
    pub base_url: String,
    /// More servers of the same model (replicas); calls are spread over all of them.
    pub replicas: Vec<String>,
    /// The API key, when one is set.
    pub key: Option<String>,
    /// The environment variable the key is read from, named in errors.
    pub key_var: String,
}

impl std::fmt::Debug for ProviderSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSpec")
            .field("name", &self.name)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("key", &self.key.as_ref().map(|_| "<set>"))
            .finish_non_exhaustive()
    }
}

impl ProviderSpec {
    /// Where requests go: calls to one endpoint share its limits and cache namespace.
    pub fn endpoint(&self) -> String {
        format!("{} {}", self.name, self.base_url)
    }
}

/// A service named in `rubricate.yaml` (`providers:`): `NAME/MODEL` ids go to its base URL
/// with the key from its environment variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedProvider {
    /// The id prefix it answers to (`NAME/MODEL`).
    pub name: String,
    /// Its wire format.
    pub kind: ProviderKind,
    /// Where requests go.
    pub base_url: String,
    /// Further base URLs of replicas of the same server (`base_url: [a, b, …]`).
    pub replicas: Vec<String>,
    /// The environment variable holding its key (none for a local server).
    pub key_env: Option<String>,
}

/// Resolves a model id; `env` reads environment variables (a parameter so tests need not
/// touch the process environment). Named providers come first, so a config can also point
/// `openai/` somewhere else.
pub fn resolve(
    id: &str,
    env: &dyn Fn(&str) -> Option<String>,
    named: &[NamedProvider],
) -> Result<ProviderSpec, LlmError> {
    let Some((prefix, model)) = id
        .split_once('/')
        .filter(|(p, m)| !p.is_empty() && !m.is_empty())
    else {
        return Err(LlmError::Config(format!(
            "judge model '{id}' needs a provider prefix: openai/MODEL, anthropic/MODEL or ollama/MODEL"
        )));
    };
    let var = |k: &str| {
        env(k)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let spec = |kind, base_url: String, key: Option<String>, key_var: &str| ProviderSpec {
        name: prefix.to_owned(),
        kind,
        model: model.to_owned(),
        base_url: base_url.trim_end_matches('/').to_owned(),
        replicas: Vec::new(),
        key,
        key_var: key_var.to_owned(),
    };
    if let Some(p) = named.iter().find(|p| p.name == prefix) {
        let key = p.key_env.as_deref().and_then(var);
        if let Some(k) = &p.key_env
            && key.is_none()
        {
            return Err(LlmError::Config(format!(
                "set {k} to judge with {prefix}/ models (the key variable of provider '{prefix}' in rubricate.yaml)"
            )));
        }
        return Ok(ProviderSpec {
            replicas: p
                .replicas
                .iter()
                .map(|u| u.trim_end_matches('/').to_owned())
                .collect(),
            ..spec(
                p.kind,
                p.base_url.clone(),
                key,
                p.key_env.as_deref().unwrap_or("its base URL"),
            )
        });
    }
    match prefix {
        "openai" => {
            let custom = var("OPENAI_BASE_URL");
            let key = var("OPENAI_API_KEY");
            if key.is_none() && custom.is_none() {
                return Err(LlmError::Config(
                    "set OPENAI_API_KEY (or OPENAI_BASE_URL for a server that needs no key) to judge with openai/ models".into(),
                ));
            }
            Ok(spec(
                ProviderKind::OpenAi,
                custom.unwrap_or_else(|| "https://api.openai.com/v1".into()),
                key,
                "OPENAI_API_KEY",
            ))
        }
        "anthropic" => {
            let custom = var("ANTHROPIC_BASE_URL");
            let key = var("ANTHROPIC_API_KEY");
            if key.is_none() && custom.is_none() {
                return Err(LlmError::Config(
                    "set ANTHROPIC_API_KEY to judge with anthropic/ models".into(),
                ));
            }
            Ok(spec(
                ProviderKind::Anthropic,
                custom.unwrap_or_else(|| "https://api.anthropic.com".into()),
                key,
                "ANTHROPIC_API_KEY",
            ))
        }
        "ollama" => {
            let host = var("OLLAMA_HOST").unwrap_or_else(|| "localhost:11434".into());
            let host = if host.contains("://") {
                host
            } else {
                format!("http://{host}")
            };
            Ok(spec(
                ProviderKind::OpenAi,
                format!("{}/v1", host.trim_end_matches('/')),
                None,
                "OLLAMA_HOST",
            ))
        }
        other => Err(LlmError::Config(format!(
            "unknown provider '{other}' in judge model '{id}'; use openai/, anthropic/, ollama/ or a provider named in rubricate.yaml"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    fn resolve_env(id: &str, e: &dyn Fn(&str) -> Option<String>) -> Result<ProviderSpec, LlmError> {
        resolve(id, e, &[])
    }

    #[test]
    fn named_providers_have_their_own_base_and_key_variable() {
        let named = [NamedProvider {
            name: "together".into(),
            kind: ProviderKind::OpenAi,
            base_url: "https://api.together.example/v1/".into(),
            replicas: Vec::new(),
            key_env: Some("TOGETHER_KEY".into()),
        }];
        let e = env(&[("TOGETHER_KEY", "tk")]);
        let s = resolve("together/meta-llama/Llama-3-70b", &e, &named).unwrap();
        assert_eq!(s.model, "meta-llama/Llama-3-70b");
        assert_eq!(s.base_url, "https://api.together.example/v1");
        assert_eq!(s.key.as_deref(), Some("tk"));
        let err = resolve("together/x", &env(&[]), &named)
            .unwrap_err()
            .to_string();
        assert!(err.contains("set TOGETHER_KEY"), "{err}");
    }

    #[test]
    fn ids_resolve_to_wire_format_base_and_key() {
        let e = env(&[
            ("OPENAI_API_KEY", "sk-test"),
            ("OLLAMA_HOST", "0.0.0.0:9999"),
        ]);
        let s = resolve_env("openai/gpt-4o-mini", &e).unwrap();
        assert_eq!(
            (s.kind, s.model.as_str(), s.base_url.as_str()),
            (
                ProviderKind::OpenAi,
                "gpt-4o-mini",
                "https://api.openai.com/v1"
            )
        );
        assert!(
            !format!("{s:?}").contains("sk-test"),
            "Debug never shows the key"
        );
        let s = resolve_env("ollama/llama3.2", &e).unwrap();
        assert_eq!(s.base_url, "http://0.0.0.0:9999/v1");
        assert!(
            resolve_env("anthropic/claude", &e)
                .unwrap_err()
                .to_string()
                .contains("ANTHROPIC_API_KEY")
        );
        assert!(
            resolve_env("gpt-4o", &e)
                .unwrap_err()
                .to_string()
                .contains("provider prefix")
        );
        assert!(
            resolve_env("mistral/x", &e)
                .unwrap_err()
                .to_string()
                .contains("unknown provider 'mistral'")
        );
    }
}
