//! The **model gateway**: a loopback HTTP server, started per task, that the agent CLI is
//! pointed at instead of its vendor (the same base-URL setting the scripted model uses:
//! the launch plan's `model_base_url`), and that forwards every request unchanged to an
//! upstream: the real API (`--upstream URL`) or the scripted model, which is then just
//! one more upstream.
//!
//! # What passes through
//!
//! Every request, whatever its path (Anthropic Messages, OpenAI Responses, Chat
//! Completions, Gemini `generateContent` / `streamGenerateContent`, token counting, model
//! listing, anything else): method, path and query, headers (minus the hop-by-hop ones
//! and `Host`) and body go upstream as received; status, headers and body come back as
//! the upstream sent them. Response bodies are **streamed** chunk by chunk as they arrive
//! (SSE framing untouched, nothing buffered whole), so a CLI sees the upstream's errors
//! (429, 5xx, with their bodies and `retry-after`) and makes the retries it would make.
//! The gateway itself answers only when the upstream cannot: `502` with a vendor-shaped
//! error naming the upstream and the cause (connection refused, TLS, reset), and `503` for
//! a held call (below).
//!
//! # Credentials
//!
//! With a real upstream, the API keys among `--pass-env` ([`CREDENTIAL_VARS`]) go to the
//! gateway and never to the CLI, which gets a dummy key: the gateway replaces the
//! request's credentials with them (Anthropic `x-api-key`, or `Authorization: Bearer`
//! for `ANTHROPIC_AUTH_TOKEN`; OpenAI `Authorization: Bearer`; Gemini `x-goog-api-key`,
//! its `key=` query parameter dropped). Key values never reach a record: bodies, when
//! kept, have them replaced by `[redacted]`, and no header is recorded.
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
//! whose history shrank counts on from the calls made. The record keeps `turn` (what the
//! request holds) and, when larger, `counted_turn`. A limit of the rule: a sub-agent's
//! calls (main calls, above) count on too, as does a CLI's re-send of a call it had an
//! answer to.
//!
//! The gateway's `num_turns` is the number of distinct counted turns among main calls (a
//! retried call counts once; Codex's parallel tool calls come in one reply, so count
//! once). With `max_turns: N`, a main call at counted turn `N` or later is **held**: never
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
//! [`Gateway::stopper`] is tripped), no model call (a request to a model-call path) is
//! forwarded any more: like a held call it is left unanswered while the turn ends and
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
//! body as JSON, response body as text up to [`BODY_KEEP_BYTES`]).

mod call;
mod forward;
mod passing;
mod price;
mod scan;
mod turn;

#[cfg(test)]
mod tests;

pub use call::{ApiUsage, BODY_KEEP_BYTES, CallKind, ModelCall};
pub use price::{Price, PriceError, PriceTable, Priced};
pub use turn::{GatewayTurn, apply as apply_to_turn, budget_breach};

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

/// State shared by the gateway's request handlers.
pub(crate) struct Shared {
    pub(crate) upstream: String,
    pub(crate) client: reqwest::Client,
    pub(crate) credentials: Credentials,
    pub(crate) secrets: Vec<String>,
    pub(crate) hold_from_turn: Option<usize>,
    pub(crate) keep_bodies: bool,
    pub(crate) seq: AtomicU64,
    /// Main calls answered so far: a 2xx answer that ended whole (not cut, not held). A
    /// main call's counted turn is at least this (see *Turns* in the module doc).
    pub(crate) answered_main: AtomicU64,
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
        if !(upstream.starts_with("http://") || upstream.starts_with("https://"))
            || reqwest::Url::parse(&upstream).is_err()
        {
            return Err(GatewayError::Upstream(config.upstream));
        }
        // The host's own proxy settings are not the agent's: the gateway goes straight to
        // the upstream. No overall timeout: the turn's timeout bounds a call.
        let client = reqwest::Client::builder()
            .no_proxy()
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
        let secrets = config.credentials.secrets();
        let shared = Arc::new(Shared {
            upstream,
            client,
            credentials: config.credentials,
            secrets,
            hold_from_turn: config.hold_from_turn.map(|n| n as usize),
            keep_bodies: config.keep_bodies,
            seq: AtomicU64::new(0),
            answered_main: AtomicU64::new(0),
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

    /// The upstream base URL requests go to.
    pub fn upstream(&self) -> &str {
        &self.shared.upstream
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
            .field("upstream", &self.shared.upstream)
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
