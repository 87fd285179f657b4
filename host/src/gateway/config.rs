//! The gateway's public configuration and checks: which `--pass-env` names are
//! credentials (and go to the gateway, not the agent), `--upstream`'s check,
//! [`Credentials`], [`GatewayConfig`], [`GatewayError`] and the redaction of an upstream
//! URL's userinfo.

use crate::limits::budget::Budgets;

/// Host environment variables that hold model API credentials: with `--gateway` and a
/// real `--upstream`, those among `--pass-env` go to the gateway, never to the CLI.
pub(crate) const CREDENTIAL_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
];

/// Whether `name` looks like a secret (a heuristic on the name, ASCII case ignored): it
/// ends `_KEY`, `_TOKEN`, `_SECRET`, `_PASSWORD`, `_PWD`, `_PASS`, `_PAT`, `_APIKEY`,
/// `_CREDENTIALS` or `_CUSTOM_HEADERS`, contains `API_KEY`, starts `AWS_BEARER_TOKEN_`, or
/// is `PGPASSWORD` or `DATABASE_URL`. With `--gateway`, such a `--pass-env` variable is
/// held back from the agent ([`to_agent`]).
pub(crate) fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "_KEY",
        "_TOKEN",
        "_SECRET",
        "_PASSWORD",
        "_PWD",
        "_PASS",
        "_PAT",
        "_APIKEY",
        "_CREDENTIALS",
        "_CUSTOM_HEADERS",
    ]
    .iter()
    .any(|s| upper.ends_with(s))
        || upper.contains("API_KEY")
        || upper.starts_with("AWS_BEARER_TOKEN_")
        || matches!(upper.as_str(), "PGPASSWORD" | "DATABASE_URL")
}

/// Whether the `--pass-env` variable `name` reaches the agent: always without the gateway
/// (the CLI then calls its API itself); with it (`gateway`), never for a credential the
/// gateway uses ([`CREDENTIAL_VARS`]: it goes to the gateway with `--upstream`, and the
/// scripted model needs none) nor for any other name that [`looks_secret`]; the rest
/// pass.
pub(crate) fn to_agent(name: &str, gateway: bool) -> bool {
    !gateway || !(CREDENTIAL_VARS.contains(&name) || looks_secret(name))
}

/// Checks `--upstream`: an absolute `http://` or `https://` URL with a host. Errors: a
/// sentence saying what is wrong with it.
pub fn check_upstream(url: &str) -> Result<(), String> {
    let trimmed = url.trim_end_matches('/');
    if !(trimmed.starts_with("http://") || trimmed.starts_with("https://")) {
        return Err(format!(
            "`{url}` is not an http:// or https:// URL (e.g. https://api.anthropic.com)"
        ));
    }
    match reqwest::Url::parse(trimmed) {
        Ok(parsed) if parsed.host_str().is_some_and(|h| !h.is_empty()) => Ok(()),
        Ok(_) => Err(format!("`{url}` names no host")),
        Err(err) => Err(format!("`{url}` is not a URL: {err}")),
    }
}

/// The notes `run --gateway` prints about `--pass-env` (`pass_env`) before any agent
/// starts, `upstream` saying whether `--upstream` is given: each variable held back from
/// the agent ([`to_agent`]) and what becomes of it, and, with `--upstream`, a warning
/// when no API key among [`CREDENTIAL_VARS`] is passed (the upstream then gets the CLI's
/// dummy key and answers 401).
pub fn pass_env_notes(pass_env: &[String], upstream: bool) -> Vec<String> {
    let mut notes = Vec::new();
    for name in pass_env.iter().filter(|n| !to_agent(n, true)) {
        let what = if CREDENTIAL_VARS.contains(&name.as_str()) {
            if upstream {
                "it goes to the gateway, which adds it upstream"
            } else {
                "the scripted model needs no key, so it goes nowhere"
            }
        } else {
            "its name looks like a secret (…_KEY, …_TOKEN, …_SECRET, …_PASSWORD, …_PWD, …API_KEY…, see README), \
             and the gateway does not use it: run without --gateway to give it to the CLI"
        };
        notes.push(format!(
            "note: --pass-env {name} is held back from the agent under --gateway: {what}"
        ));
    }
    if upstream
        && !pass_env
            .iter()
            .any(|n| CREDENTIAL_VARS.contains(&n.as_str()))
    {
        notes.push(format!(
            "warning: --upstream without an API key: pass one with --pass-env ({}), else the \
             upstream gets the CLI's dummy key",
            CREDENTIAL_VARS.join(", ")
        ));
    }
    notes
}

/// The credentials the gateway adds upstream, per API (none: the request's own go).
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct Credentials {
    /// Anthropic `x-api-key` (`ANTHROPIC_API_KEY`).
    pub anthropic_api_key: Option<String>,
    /// Anthropic `Authorization: Bearer` (`ANTHROPIC_AUTH_TOKEN`).
    pub anthropic_auth_token: Option<String>,
    /// OpenAI `Authorization: Bearer` (`OPENAI_API_KEY`, else `CODEX_API_KEY`).
    pub openai_api_key: Option<String>,
    /// Gemini `x-goog-api-key` (`GEMINI_API_KEY`, else `GOOGLE_API_KEY`).
    pub gemini_api_key: Option<String>,
}

impl Credentials {
    /// The credentials among `keys` (the `--pass-env` names), read from the host's
    /// environment; a key that is not set is skipped.
    pub(crate) fn from_env(keys: &[String]) -> Credentials {
        let get = |name: &str| {
            keys.iter()
                .any(|k| k == name)
                .then(|| std::env::var(name).ok())
                .flatten()
                .filter(|v| !v.is_empty())
        };
        Credentials {
            anthropic_api_key: get("ANTHROPIC_API_KEY"),
            anthropic_auth_token: get("ANTHROPIC_AUTH_TOKEN"),
            openai_api_key: get("OPENAI_API_KEY").or_else(|| get("CODEX_API_KEY")),
            gemini_api_key: get("GEMINI_API_KEY").or_else(|| get("GOOGLE_API_KEY")),
        }
    }

    /// Every secret value held (what redaction replaces).
    pub(crate) fn secrets(&self) -> Vec<String> {
        [
            &self.anthropic_api_key,
            &self.anthropic_auth_token,
            &self.openai_api_key,
            &self.gemini_api_key,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect()
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = |v: &Option<String>| v.as_ref().map(|_| "[redacted]");
        f.debug_struct("Credentials")
            .field("anthropic_api_key", &set(&self.anthropic_api_key))
            .field("anthropic_auth_token", &set(&self.anthropic_auth_token))
            .field("openai_api_key", &set(&self.openai_api_key))
            .field("gemini_api_key", &set(&self.gemini_api_key))
            .finish()
    }
}

/// How to run a [`Gateway`].
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// The upstream's base URL (`https://api.anthropic.com`, the scripted model's
    /// `http://127.0.0.1:PORT`): a request for `/v1/messages` goes to
    /// `<upstream>/v1/messages`. A trailing `/` is dropped.
    pub upstream: String,
    /// Credentials added upstream ([`Credentials`]).
    pub(crate) credentials: Credentials,
    /// Hold main calls at this turn index or later (`max_turns`); `None`: none held.
    pub hold_from_turn: Option<u32>,
    /// Keep request and response bodies in the call records (`--gateway-bodies`).
    pub keep_bodies: bool,
    /// More values kept bodies have replaced by `[redacted]`, besides the credentials'
    /// (the values of the `--pass-env` variables held back from the agent).
    pub redact: Vec<String>,
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// The run's token budgets, counted on the APIs' own usage as each model call ends
    /// (see *Budgets* in the module doc); `max_usd` is read only with `price_table`.
    pub budgets: Budgets,
    /// `--price-table`: each call's cost (USD) is its API-reported usage times the
    /// table's prices, and `max_usd` is held on that cost; `None`: nothing is priced.
    pub price_table: Option<super::PriceTable>,
}

impl GatewayConfig {
    /// Forward to `upstream`, no credentials, nothing held, no bodies, an ephemeral port.
    pub fn new(upstream: impl Into<String>) -> GatewayConfig {
        GatewayConfig {
            upstream: upstream.into(),
            credentials: Credentials::default(),
            hold_from_turn: None,
            keep_bodies: false,
            redact: Vec::new(),
            port: 0,
            budgets: Budgets::default(),
            price_table: None,
        }
    }
}

/// Why the gateway could not start.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// Binding `127.0.0.1:port` failed.
    #[error("model gateway: cannot bind 127.0.0.1:{port}")]
    Bind {
        /// The port asked for (0 = ephemeral).
        port: u16,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The upstream URL is not an absolute `http`/`https` URL.
    #[error("model gateway: upstream `{0}` is not an http:// or https:// URL")]
    Upstream(String),
    /// The HTTP client could not be built (TLS set-up).
    #[error("model gateway: cannot build the upstream client")]
    Client(#[source] reqwest::Error),
}

/// `error` and its causes as one sentence (for `task.json`'s `error`).
pub(crate) fn error_sentence(error: &GatewayError) -> String {
    let mut out = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        out.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    out
}

/// `url` with its userinfo (`http://user:password@host`: both may be secrets) replaced
/// by `[redacted]`; unchanged when it has none.
pub fn redact_userinfo(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let rest = &url[scheme_end..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    match authority.rfind('@') {
        Some(at) => format!("{}[redacted]{}", &url[..scheme_end], &rest[at..]),
        None => url.to_string(),
    }
}
