//! The **model gateway**: a loopback HTTP server, started per task, that the agent CLI is
//! pointed at instead of its vendor (the same base-URL setting the scripted model uses:
//! the launch plan's `model_base_url`), and that forwards every request unchanged to an
//! upstream: the real API (`--upstream URL`) or the scripted model, which is then just
//! one more upstream.
//!
//! # What passes through
//!
//! A request's path is checked first, as the upstream will see it: a path not in its one
//! normal form (percent-escapes, backslashes, `.`/`..` segments, `//`, a trailing `/`,
//! any character but `A-Z a-z 0-9 - . _ ~ : @ + ,`) is **refused** with `400` and never
//! forwarded, so no spelling of a path is classified as one thing and reaches the
//! upstream as another (the upstream URL's parsed path is checked too). A normal path is
//! matched exactly against an allow-list (the table in `route::route`):
//!
//! - **model calls**: `POST /v1/messages`, `/v1/responses`, `/v1/chat/completions`,
//!   `/v1beta/models/M:generateContent` and `…:streamGenerateContent` (also under `v1`
//!   and `v1alpha`): classified, counted, held and stopped (below), sent with the
//!   gateway's credentials;
//! - **keyed requests**: token counting (`POST /v1/messages/count_tokens`,
//!   `…/models/M:countTokens`) and model listing (`GET /v1/models[/ID]`,
//!   `/v1beta/models[/ID]`): sent with the credentials, not counted, refused after the
//!   host's stop;
//! - **anything else** (Anthropic batches and files, `/v1/responses/ID`, any other path
//!   or method): forwarded with the CLI's own headers only, never the gateway's
//!   credentials, not counted.
//!
//! Forwarded requests go upstream as received: method, path and query, headers (minus the
//! hop-by-hop ones and `Host`; a model call's `accept-encoding` keeps only the codings
//! the gateway reads, gzip and deflate, else `identity`) and body; status, headers and
//! body come back as the upstream sent them, a redirect (3xx) included: the gateway never
//! follows one, so its credentials go to the upstream's host only. Response bodies are
//! **streamed** chunk by chunk as they arrive (SSE framing untouched, nothing buffered
//! whole), so a CLI sees the upstream's errors (429, 5xx, with their bodies and
//! `retry-after`) and makes the retries it would make. The gateway itself answers only
//! when the upstream cannot: `502` with a vendor-shaped error naming the upstream (its
//! userinfo redacted) and the cause (connection refused, TLS, reset; never the query),
//! `503` for a held call (below), and a `4xx` for a request it refuses: a path not in
//! normal form, or a model call whose body it cannot read (`415` for a
//! `Content-Encoding` other than gzip/deflate, `400` for a body that is not JSON, `413`
//! over 256 MiB): a model call it cannot read could not be counted, so it is never
//! forwarded (fail closed). Each refusal is a `gateway_refused` diagnostic of the turn.
//!
//! An answer in `Content-Encoding: gzip` or `deflate` is inflated for reading its usage
//! (the CLI gets the bytes as sent); one in another encoding leaves its usage unknown:
//! the record's `error` says so and the turn gets a `gateway_usage_unknown` diagnostic.
//!
//! # Credentials
//!
//! With a real upstream, the API keys among `--pass-env` ([`CREDENTIAL_VARS`]) go to the
//! gateway and never to the CLI, which gets a dummy key: the gateway replaces the
//! request's credentials with them (Anthropic `x-api-key`, or `Authorization: Bearer`
//! for `ANTHROPIC_AUTH_TOKEN`; OpenAI `Authorization: Bearer`; Gemini `x-goog-api-key`,
//! its `key=` query parameter dropped), for model calls and keyed requests only (the
//! allow-list above), and to a known vendor host (`api.anthropic.com`,
//! `api.openai.com`, `generativelanguage.googleapis.com`) only that vendor's key. Key values never reach a record: bodies, when kept, have them
//! replaced by `[redacted]`, and no header is recorded; the upstream URL's userinfo is
//! shown as `[redacted]` and error texts never hold a request's query.
//!
//! # Main thread or side request (how a call is classified)
//!
//! By what the request carries, with the scripted model's own rule
//! ([`coder_eval_scripted_model::classify`]): a model-call request (`…/messages`,
//! `…/responses`, `…/chat/completions`, Gemini `…:generateContent` /
//! `…:streamGenerateContent`) that offers the model tools is a **main-thread** call, one
//! that offers none (title generation, quota probes, summaries) or a non-streaming Gemini
//! `generateContent` (Gemini CLI's routing and next-speaker checks) is a **side** request;
//! any other request (token counting, model listing) is **other**. A main call's `turn`
//! is the number of completed assistant turns its body holds (Responses: plus those of a
//! `previous_response_id` the gateway saw answered), so a CLI's retry of a call has the
//! same `turn` as the call. Sub-agents that offer tools count as main calls (nothing in a
//! request marks a sub-agent reliably on every CLI): a limit of the rule.
//!
//! # Turns and the `max_turns` hold
//!
//! The turn index read from a request's history alone would undercount a CLI that
//! compacts or trims its history (its next call holds fewer turns than it made), so the
//! gateway keeps a count across calls: a main call's **counted turn** is the larger of its
//! `turn` and the number of main calls answered before it arrived (a 2xx answer that
//! ended whole; a 429/5xx, a cut or a held call is not answered, so its retry keeps its
//! `turn`). Without compaction the two agree (call N+1 is sent after N answers); a call
//! whose history shrank counts on from the calls made. A 2xx answer whose end the API
//! marked (Anthropic `message_stop`, Responses `response.completed`, Chat `[DONE]` or a
//! `finish_reason`, Gemini a `finishReason`, a whole JSON body) counts as answered even
//! when the CLI closed its connection before the body's last byte. Main calls under way
//! at once each count: a main call that arrives while another forwarded main call holds
//! its counted turn (its answer not yet ended) counts as the next turn no open call
//! holds, so parallel calls (sub-agents, a CLI's concurrent requests) cannot share one
//! turn. A retry comes after its call ended, so it keeps the turn. Codex's parallel tool
//! calls come in one reply and their results go back in one next call (sequential
//! calls), so they count once. The record keeps `turn` (what the request holds) and,
//! when larger, `counted_turn`. A limit of the rule: a sub-agent's calls (main calls,
//! above) count on too, as does a CLI's re-send of a call it had an answer to, and a
//! retry sent before the gateway saw its call end (the CLI's own timeout) counts as a
//! new turn: the count errs high, never low.
//!
//! The gateway's `num_turns` is the number of distinct counted turns among main calls (a
//! retried call counts once). With `max_turns: N`, a main call at counted turn `N` or later is **held**: never
//! forwarded (never billed), left unanswered while the turn runs and answered `503` when
//! the gateway shuts down; [`Gateway::held`] reports it to the turn loop, which stops the
//! turn with `max_turns` exactly as on the scripted model's hold.
//!
//! # Budgets
//!
//! With token budgets (`run_limits.max_input_tokens`, `max_output_tokens`,
//! `max_total_tokens`: [`GatewayConfig::budgets`]) the gateway counts every model call's
//! usage (main and side; a cut answer's too, it was billed) as the API reported it, when
//! its answer ends, counted as the CLI's figures are (`count_cached_input`,
//! `count_cache_creation`; over, not at). Once the count is over a budget, every later
//! model call is **held** as a `max_turns` call N+1 is (never forwarded, answered `503` at
//! shutdown; its record says `held` and `over_budget`) and [`Gateway::held`] reports it
//! with the budget's reason, so the turn stops with it however late the CLI's stream
//! reports usage. The record's breach is [`budget_breach`], a pure function of the calls
//! (so replay gives it); the CLI's stream then enforces `max_usd` only. A call whose
//! answer reports no usage adds nothing (`usage_unreported`).
//!
//! # The host's stop
//!
//! Once the host decides to stop the turn (an early stop, a cap, a budget, a deadline:
//! [`Gateway::stopper`] is tripped), no model call and no keyed request (nothing that
//! would carry the gateway's credentials) is forwarded any more: like a held call it is left unanswered while the turn ends and
//! answered `503` at shutdown, its record saying the host stopped the run. The CLI
//! cannot go on working in its stop grace.
//!
//! A model call already under way when the stop trips is cut too: one still waiting for
//! the upstream's answer has its upstream request dropped and waits like a call that
//! arrived after the stop; one whose answer is streaming ends at once (the CLI's
//! connection is closed mid-body, so it sees the answer end unfinished) and the upstream
//! is read no further (its connection closed). Either record says `stopped: true` and
//! `cut: true` (it was forwarded, unlike a call refused on arrival); a cut stream's keeps
//! its status (the upstream's), `response_bytes` (what the CLI got) and an `error` saying
//! it was cut. A cut stream counts as a turn (its answer began), a call dropped before
//! its answer began does not.
//!
//! # What is recorded
//!
//! One [`ModelCall`] per request, appended to the recording as a `model_call` record
//! after the turn (see `turn::recording`): request time, first response byte (time to
//! first token), end, status, API, kind, turn, model, the usage the API itself reported
//! ([`ApiUsage`]), and the bodies only with `--gateway-bodies` (off by default; request
//! body as JSON, or over [`BODY_KEEP_BYTES`] of JSON text its first [`BODY_KEEP_BYTES`]
//! as a string; response body as text up to [`BODY_KEEP_BYTES`]).

mod call;
mod forward;
mod passing;
mod price;
mod route;
mod scan;
mod turn;

#[cfg(test)]
mod hardening_tests;
#[cfg(test)]
mod tests;

pub use call::{ApiUsage, BODY_KEEP_BYTES, CallKind, ModelCall};
pub use price::{Price, PriceError, PriceTable, Priced};
pub use turn::{GatewaySummary, GatewayTurn, apply as apply_to_turn, budget_breach};

use crate::limits::budget::{self, BudgetKind, Budgets};
use axum::Router;
use axum::serve::ListenerExt;
use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

/// Host environment variables that hold model API credentials: with `--gateway` and a
/// real `--upstream`, those among `--pass-env` go to the gateway, never to the CLI.
pub const CREDENTIAL_VARS: &[&str] = &[
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
pub fn looks_secret(name: &str) -> bool {
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
pub fn to_agent(name: &str, gateway: bool) -> bool {
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
            "its name looks like a secret (…_KEY, …_TOKEN, …_SECRET, …_PASSWORD, …API_KEY…), \
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

/// How long [`Gateway::shutdown`] waits for the server task once every open request was
/// told to end.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// The credentials the gateway adds upstream, per API (none: the request's own go).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Credentials {
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
    pub fn from_env(keys: &[String]) -> Credentials {
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
    pub fn secrets(&self) -> Vec<String> {
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
    pub credentials: Credentials,
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
    /// (see *Budgets* in the module doc); `max_usd` is not read here.
    pub budgets: Budgets,
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
pub fn error_sentence(error: &GatewayError) -> String {
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

/// State shared by the gateway's request handlers.
pub(crate) struct Shared {
    /// The upstream base URL as given (it may hold a password: never shown).
    pub(crate) upstream_url: String,
    /// `upstream_url` with its userinfo replaced (what messages and records show).
    pub(crate) upstream_shown: String,
    pub(crate) client: reqwest::Client,
    pub(crate) credentials: Credentials,
    pub(crate) secrets: Vec<String>,
    pub(crate) hold_from_turn: Option<usize>,
    pub(crate) keep_bodies: bool,
    pub(crate) seq: AtomicU64,
    /// Main calls answered so far: a 2xx answer that ended whole (not cut, not held). A
    /// main call's counted turn is at least this (see *Turns* in the module doc).
    pub(crate) answered_main: AtomicU64,
    /// The counted turns of the main calls forwarded and not yet ended (one entry per
    /// call): a main call that arrives while another at its counted turn is open counts
    /// as the next free turn (see *Turns* in the module doc).
    pub(crate) open_turns: Mutex<Vec<usize>>,
    /// Finished calls (a call is pushed when its response ends, fails or is dropped).
    pub(crate) calls: Mutex<Vec<call::CallState>>,
    /// Responses API: response id → completed assistant turns after it.
    pub(crate) responses_turns: Mutex<HashMap<String, usize>>,
    /// The turn index of the first held main call.
    pub(crate) held: watch::Sender<Option<coder_eval_scripted_model::Hold>>,
    /// Set at shutdown: held calls are answered, open upstream requests and streams end.
    pub(crate) closing: watch::Sender<bool>,
    /// The host's stop: once tripped, no model call is forwarded.
    pub(crate) stopper: coder_eval_scripted_model::Stopper,
    /// The token budgets and the running count against them.
    pub(crate) budgets: Budgets,
    pub(crate) meter: Mutex<Meter>,
}

/// The gateway's running usage (every model call's, as its answer ended) and the first
/// budget it went over.
#[derive(Debug, Default)]
pub(crate) struct Meter {
    pub(crate) total: harness_kit::Usage,
    pub(crate) over: Option<BudgetKind>,
}

impl Shared {
    /// Adds one finished call's usage to the count; true when this took it over a
    /// budget (the first time).
    pub(crate) fn count_usage(&self, usage: &ApiUsage) -> bool {
        if !self.budgets.any() || usage.is_empty() {
            return false;
        }
        let mut meter = self.meter.lock().unwrap_or_else(|e| e.into_inner());
        meter.total = meter.total.saturating_add(&usage.to_usage());
        if meter.over.is_some() {
            return false;
        }
        let input = budget::input_tokens(&self.budgets, &meter.total);
        meter.over = budget::over(&self.budgets, input, meter.total.output_tokens, None)
            .map(|(kind, _, _)| kind);
        meter.over.is_some()
    }

    /// The budget the count went over, once it did.
    pub(crate) fn over_budget(&self) -> Option<BudgetKind> {
        self.meter.lock().unwrap_or_else(|e| e.into_inner()).over
    }
}

/// A running gateway bound to 127.0.0.1. Dropping it signals the server to stop;
/// [`Gateway::shutdown`] also waits for it and returns the calls.
pub struct Gateway {
    port: u16,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Gateway {
    /// Binds `127.0.0.1:config.port` and starts serving on the current tokio runtime.
    /// Errors: [`GatewayError`].
    pub async fn start(config: GatewayConfig) -> Result<Gateway, GatewayError> {
        let upstream = config.upstream.trim_end_matches('/').to_string();
        if check_upstream(&upstream).is_err() {
            return Err(GatewayError::Upstream(config.upstream));
        }
        // The host's own proxy settings are not the agent's: the gateway goes straight to
        // the upstream. No overall timeout: the turn's timeout bounds a call. Redirects
        // are never followed (a 3xx goes back to the CLI as sent): the gateway's
        // credentials go to the upstream's host only.
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(30))
            .tcp_nodelay(true)
            .build()
            .map_err(GatewayError::Client)?;
        let bind_err = |source| GatewayError::Bind {
            port: config.port,
            source,
        };
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, config.port))
            .await
            .map_err(bind_err)?;
        let port = listener.local_addr().map_err(bind_err)?.port();
        let mut secrets = config.credentials.secrets();
        secrets.extend(config.redact.iter().filter(|v| !v.is_empty()).cloned());
        let shared = Arc::new(Shared {
            upstream_shown: redact_userinfo(&upstream),
            upstream_url: upstream,
            client,
            credentials: config.credentials,
            secrets,
            hold_from_turn: config.hold_from_turn.map(|n| n as usize),
            keep_bodies: config.keep_bodies,
            seq: AtomicU64::new(0),
            answered_main: AtomicU64::new(0),
            open_turns: Mutex::new(Vec::new()),
            calls: Mutex::new(Vec::new()),
            responses_turns: Mutex::new(HashMap::new()),
            held: watch::Sender::new(None),
            closing: watch::Sender::new(false),
            stopper: coder_eval_scripted_model::Stopper::new(),
            budgets: config.budgets.tokens_only(),
            meter: Mutex::new(Meter::default()),
        });
        let app = Router::new()
            .fallback(forward::handle)
            .with_state(shared.clone());
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Gateway {
            port,
            shared,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The port bound on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `"http://127.0.0.1:PORT"`: what the CLI is pointed at.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The token budgets the gateway counts (`max_usd` cleared).
    pub fn budgets(&self) -> Budgets {
        self.shared.budgets
    }

    /// The upstream base URL requests go to, any password in it replaced by
    /// `[redacted]` (what may be shown or recorded).
    pub fn upstream(&self) -> &str {
        &self.shared.upstream_shown
    }

    /// The turn index of the first held main call (see [`GatewayConfig::hold_from_turn`]):
    /// `None` until one arrives. The same signal as the scripted model's hold.
    pub fn held(&self) -> watch::Receiver<Option<coder_eval_scripted_model::Hold>> {
        self.shared.held.subscribe()
    }

    /// The host's stop switch for this gateway: once tripped, no model call is forwarded
    /// (see the module doc, *The host's stop*).
    pub fn stopper(&self) -> coder_eval_scripted_model::Stopper {
        self.shared.stopper.clone()
    }

    /// Ends every open request (held calls get `503`, open upstream requests and streams
    /// are cut), stops the server, and returns every call, in the order they began, with
    /// stamps in µs from `t0` (the turn's start; a call before it is stamped 0).
    pub async fn shutdown(mut self, t0: Instant) -> Vec<ModelCall> {
        self.shared.closing.send_replace(true);
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(SHUTDOWN_GRACE, task).await.is_err() {
                abort.abort();
            }
        }
        self.calls(t0)
    }

    /// The calls finished so far (a call still open is not in it), stamped from `t0`.
    pub fn calls(&self, t0: Instant) -> Vec<ModelCall> {
        let mut calls: Vec<ModelCall> = self
            .shared
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|c| c.to_record(t0))
            .collect();
        calls.sort_by_key(|c| c.seq);
        calls
    }
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("port", &self.port)
            .field("upstream", &self.shared.upstream_shown)
            .finish_non_exhaustive()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.shared.closing.send_replace(true);
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
