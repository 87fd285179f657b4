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
//! (so replay gives it); the CLI's stream then enforces `max_usd` only, unless a price
//! table is given ([`GatewayConfig::price_table`]): then `max_usd` is counted and held
//! here too, on each call's priced cost ([`PriceTable::price`]; an unpriced call adds
//! nothing). A call whose answer reports no usage adds nothing (`usage_unreported`).
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
//! ([`ApiUsage`]), with a price table its cost or why it has none
//! ([`ModelCall::price_with`]), and the bodies only with `--gateway-bodies` (off by default; request
//! body as JSON, or over [`BODY_KEEP_BYTES`] of JSON text its first [`BODY_KEEP_BYTES`]
//! as a string; response body as text up to [`BODY_KEEP_BYTES`]).

mod answer;
mod body;
mod breach;
mod call;
mod config;
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

pub(crate) use call::ApiUsage;
pub use call::{CallKind, ModelCall};
pub(crate) use config::Credentials;
pub use config::GatewayConfig;
pub(crate) use config::GatewayError;
pub use config::check_upstream;
pub(crate) use config::error_sentence;
pub(crate) use config::to_agent;
pub use config::{pass_env_notes, redact_userinfo};
pub use price::PriceTable;
pub(crate) use price::Priced;
pub(crate) use turn::apply_priced as apply_to_turn_priced;
#[cfg(test)]
pub(crate) use {breach::budget_breach, call::BODY_KEEP_BYTES, turn::apply as apply_to_turn};

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

/// How long [`Gateway::shutdown`] waits for the server task once every open request was
/// told to end.
const SHUTDOWN_GRACE: Duration = crate::limits::GATEWAY_SHUTDOWN_GRACE;

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
    /// `--price-table`: prices each call's usage (the records' `cost_usd`, and `max_usd`).
    pub(crate) price_table: Option<PriceTable>,
}

/// The gateway's running usage (every model call's, as its answer ended) and the first
/// budget it went over.
#[derive(Debug, Default)]
pub(crate) struct Meter {
    pub(crate) total: harness_kit::Usage,
    /// USD of the calls priced so far (with a price table and `max_usd` only).
    pub(crate) usd: f64,
    pub(crate) over: Option<BudgetKind>,
}

impl Shared {
    /// Adds one finished call's usage to the count; true when this took it over a
    /// budget (the first time).
    /// `max_usd` is counted only with a price table (the budget is then kept: see
    /// [`Gateway::start`]), on the call's priced cost; an unpriced call adds nothing.
    pub(crate) fn count_usage(
        &self,
        api: Option<coder_eval_scripted_model::Api>,
        model: Option<&str>,
        usage: &ApiUsage,
    ) -> bool {
        if !self.budgets.any() || usage.is_empty() {
            return false;
        }
        let usd = match (&self.price_table, self.budgets.max_usd) {
            (Some(table), Some(_)) => match table.price(api, model, usage) {
                Priced::Usd(usd) => usd,
                Priced::Unpriced(_) => 0.0,
            },
            _ => 0.0,
        };
        let mut meter = self.meter.lock().unwrap_or_else(|e| e.into_inner());
        meter.total = meter.total.saturating_add(&usage.to_usage());
        meter.usd += usd;
        if meter.over.is_some() {
            return false;
        }
        let input = budget::input_tokens(&self.budgets, &meter.total);
        let usd = self.budgets.max_usd.map(|_| meter.usd);
        meter.over = budget::over(&self.budgets, input, meter.total.output_tokens, usd)
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
            .connect_timeout(crate::limits::GATEWAY_CONNECT_TIMEOUT)
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
            // `max_usd` only with a price table: the gateway prices nothing without one.
            budgets: match config.price_table {
                Some(_) => config.budgets,
                None => config.budgets.tokens_only(),
            },
            meter: Mutex::new(Meter::default()),
            price_table: config.price_table,
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

    /// The budgets the gateway counts: the token budgets, and `max_usd` only with a
    /// price table (cleared without one).
    pub fn budgets(&self) -> Budgets {
        self.shared.budgets
    }

    /// The price table the calls are priced with (`--price-table`), if any.
    pub fn price_table(&self) -> Option<&PriceTable> {
        self.shared.price_table.as_ref()
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
    pub(crate) fn stopper(&self) -> coder_eval_scripted_model::Stopper {
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

    /// The calls finished so far (a call still open is not in it), stamped from `t0`,
    /// each priced with the price table when there is one ([`ModelCall::price_with`]).
    pub fn calls(&self, t0: Instant) -> Vec<ModelCall> {
        let mut calls: Vec<ModelCall> = self
            .shared
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|c| {
                let mut call = c.to_record(t0);
                if let Some(table) = &self.shared.price_table {
                    call.price_with(table);
                }
                call
            })
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
