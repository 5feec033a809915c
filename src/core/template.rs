//! Templates (minijinja) in a safe environment: strict undefined names, no escaping, a fuel
//! limit, a bounded `format` filter and a cap on what a render may produce. Judge prompts
//! (`engine::template`) and agentv's `{{ vars }}` (`formats::agentv`) both render here.

use minijinja::{AutoEscape, Environment, UndefinedBehavior};

/// Loops in templates stop after this much work.
pub const FUEL: u64 = 50_000;

/// The widest field (and the longest precision) the `format` filter may pad to: far more
/// than a prompt needs, far less than what exhausts memory.
pub const MAX_FORMAT_WIDTH: u64 = 10_000;

/// The most a rendered template may hold (a long submission included); beyond it a
/// criterion fails with a clear error instead of sending a prompt no judge takes.
pub const MAX_RENDERED_BYTES: usize = 8 * 1024 * 1024;

/// An environment with strict undefined, no auto-escaping, a fuel limit and a bounded
/// `format` filter, set up before any template is added (escaping is fixed when a
/// template is added).
pub fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_fuel(Some(FUEL));
    env.add_filter("format", bounded_format);
    env
}

/// minijinja's printf-style `format`, refusing a width or precision over
/// [`MAX_FORMAT_WIDTH`] (`"%999999999999s"` would otherwise abort the process).
fn bounded_format(
    state: &mut minijinja::State<'_, '_>,
    format: &minijinja::Value,
    args: minijinja::value::Rest<minijinja::value::ValueOrKwargs>,
) -> Result<minijinja::Value, minijinja::Error> {
    if let Some(spec) = format.as_str() {
        let widest = spec
            .split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            // Digits past u64 are wider than any bound.
            .map(|n| n.parse::<u64>().unwrap_or(u64::MAX))
            .max()
            .unwrap_or(0);
        if widest > MAX_FORMAT_WIDTH {
            return Err(minijinja::Error::new(
                minijinja::ErrorKind::InvalidOperation,
                format!("the format filter pads to at most {MAX_FORMAT_WIDTH} characters"),
            ));
        }
    }
    minijinja::filters::format(state, format, args)
}

/// Why a template cannot be used: it does not compile or render (with the template's
/// line when minijinja knows it), or renders more than a judge is sent.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// minijinja knows the template line that failed.
    #[error("template error on template line {line}: {detail}")]
    AtLine {
        /// The template's own line (1-based).
        line: usize,
        /// minijinja's message, without its own location.
        detail: String,
        /// The error minijinja gave.
        #[source]
        source: minijinja::Error,
    },
    /// No line is known: the template as a whole failed.
    #[error("template error: {detail}")]
    Whole {
        /// minijinja's message.
        detail: String,
        /// The error minijinja gave.
        #[source]
        source: minijinja::Error,
    },
    #[error(
        "template error: the template renders {:.1} MB; at most {} MiB is sent to a judge",
        *.bytes as f64 / 1e6,
        MAX_RENDERED_BYTES / (1024 * 1024)
    )]
    /// The rendered text is longer than a judge is sent.
    TooLong {
        /// How long it rendered.
        bytes: usize,
    },
}

impl From<minijinja::Error> for TemplateError {
    fn from(source: minijinja::Error) -> Self {
        let detail = source
            .detail()
            .map_or_else(|| source.kind().to_string(), str::to_owned);
        match source.line() {
            Some(line) => TemplateError::AtLine {
                line,
                detail,
                source,
            },
            None => TemplateError::Whole { detail, source },
        }
    }
}

/// Renders `source` with `vars` as its variables, each also under `vars` (`{{ name }}`
/// and `{{ vars.name }}`), an unknown name rendering empty: how agentv renders a case's
/// `{{ vars }}` (nunjucks, `throwOnUndefined: false`), with this module's limits.
pub fn render_vars(
    source: &str,
    vars: &serde_json::Map<String, serde_json::Value>,
) -> Result<String, TemplateError> {
    let mut env = environment();
    env.set_undefined_behavior(UndefinedBehavior::Chainable);
    let template = env.template_from_str(source)?;
    let mut ctx: std::collections::BTreeMap<&str, minijinja::Value> = vars
        .iter()
        .map(|(k, v)| {
            (
                k.as_str(),
                minijinja::Value::from(minijinja::value::Serde(v)),
            )
        })
        .collect();
    ctx.insert(
        "vars",
        minijinja::Value::from(minijinja::value::Serde(vars)),
    );
    let out = template.render(ctx)?;
    if out.len() > MAX_RENDERED_BYTES {
        return Err(TemplateError::TooLong { bytes: out.len() });
    }
    Ok(out)
}
