//! The HTTP server: configuration, start and shutdown, and routing of every request
//! (model calls, token counting, model listing, the refusing proxy, unknown paths).

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::common::{Answer, approx_tokens};
use crate::play::{Shared, model_call};
use crate::record::{Api, Log, RequestKind, RequestRecord};
use crate::{ActionTranslator, Script};

mod body;
mod hold;
mod respond;
use body::read_body;
pub use hold::{Hold, HoldReason};
use respond::{answer_response, json_response};

/// Largest request body accepted, in bytes, as sent and once decoded (a gzip or deflate
/// body that inflates past it is refused: a small body can inflate without bound).
const MAX_BODY: usize = 256 * 1024 * 1024;

/// How long [`ScriptedModel::shutdown`] waits for open connections to finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Binding `127.0.0.1:port` failed (port 0 = ephemeral).
    #[error("cannot bind 127.0.0.1:{port}: {source}")]
    Bind {
        /// The port asked for.
        port: u16,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The request log file could not be opened for appending.
    #[error("cannot open request log {}: {source}", path.display())]
    LogFile {
        /// The log file path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// How to run a [`ScriptedModel`].
#[derive(Clone)]
pub struct ServerConfig {
    /// The script to play.
    pub script: Script,
    /// Absolute workspace path: replaces `{{workspace}}`/`{{WORKDIR}}` in tool calls and
    /// is passed to the translator.
    pub workspace: String,
    /// Translates neutral actions into this CLI's tool calls; `None` = a reply holding
    /// a neutral action is answered with HTTP 500.
    pub translator: Option<Arc<dyn ActionTranslator>>,
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Append one JSON line per request ([`crate::RequestRecord`]) to this file.
    pub log_file: Option<PathBuf>,
    /// Hold main requests at this turn index or later (a request holding `n` completed
    /// assistant turns asks for call `n + 1`): they are not answered while the server runs
    /// (503 once it shuts down) and [`ScriptedModel::held`] reports the first. With
    /// `max_turns: N`, `Some(N)` stops call N+1 where it begins, before the CLI can act on
    /// a reply. `None` (default): every request is answered.
    pub hold_from_turn: Option<u32>,
    /// Hold a main request whose reply would take the tool calls handed out past this
    /// many (cumulative over the server's life and over every thread of the run: the main
    /// thread and each sub-agent, whose own history restarts the turn index; each call of
    /// a parallel reply counted; a retried request, the same history re-sent because its
    /// answer did not go out whole, counted once; an identical twin thread counted apart):
    /// with `max_tool_calls: N`, `Some(N)` stops the reply holding tool call N+1 before
    /// the CLI sees it, so tool N+1 never runs, in whichever thread asks for it. A
    /// reply that straddles the cap (N-1 handed out, a reply with 2 calls) is held whole:
    /// fewer than N tools then run. A reply without tool calls is never held by this.
    /// `None` (default): no hold for tool calls.
    pub hold_past_tool_calls: Option<u32>,
}

impl ServerConfig {
    /// A config with no translator, an ephemeral port and no log file.
    pub fn new(script: Script, workspace: impl Into<String>) -> ServerConfig {
        ServerConfig {
            script,
            workspace: workspace.into(),
            translator: None,
            port: 0,
            log_file: None,
            hold_from_turn: None,
            hold_past_tool_calls: None,
        }
    }

    /// Sets the action translator.
    pub fn with_translator(mut self, translator: Arc<dyn ActionTranslator>) -> ServerConfig {
        self.translator = Some(translator);
        self
    }
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("script", &self.script.name)
            .field("workspace", &self.workspace)
            .field("translator", &self.translator.as_ref().map(|_| "…"))
            .field("port", &self.port)
            .field("log_file", &self.log_file)
            .finish()
    }
}

/// A running scripted-model server, bound to 127.0.0.1. Dropping it signals the server
/// to stop; [`ScriptedModel::shutdown`] also waits for it.
pub struct ScriptedModel {
    port: u16,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl ScriptedModel {
    /// Binds `127.0.0.1:config.port` and starts serving on the current tokio runtime.
    pub async fn start(config: ServerConfig) -> Result<ScriptedModel, ServerError> {
        let log = Log::open(config.log_file.as_deref()).map_err(|source| ServerError::LogFile {
            path: config.log_file.clone().unwrap_or_default(),
            source,
        })?;
        let bind_err = |source| ServerError::Bind {
            port: config.port,
            source,
        };
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, config.port))
            .await
            .map_err(bind_err)?;
        let port = listener.local_addr().map_err(bind_err)?.port();
        let mut shared = Shared::new(config.script, config.workspace, config.translator, log);
        shared.hold_from_turn = config.hold_from_turn.map(|n| n as usize);
        shared.hold_past_tool_calls = config.hold_past_tool_calls;
        let shared = Arc::new(shared);
        let app = Router::new().fallback(handle).with_state(shared.clone());
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
        Ok(ScriptedModel {
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

    /// `"http://127.0.0.1:PORT"` (no trailing slash; add `/v1` etc. as a CLI needs).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The first held main request (see [`ServerConfig::hold_from_turn`] and
    /// [`ServerConfig::hold_past_tool_calls`]): `None` until one arrives.
    pub fn held(&self) -> tokio::sync::watch::Receiver<Option<Hold>> {
        self.shared.held.subscribe()
    }

    /// The host's stop switch for this server ([`crate::Stopper`]): once tripped, no model
    /// call is answered.
    pub fn stopper(&self) -> crate::Stopper {
        self.shared.stopper.clone()
    }

    /// Every request logged so far, in arrival (`seq`) order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.log.snapshot()
    }

    /// Stops accepting, lets open answers finish (at most 5 s; held requests get 503),
    /// then returns.
    pub async fn shutdown(mut self) {
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
    }
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("port", &self.port)
            .field("script", &self.shared.script.name)
            .finish_non_exhaustive()
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.shared.closing.send_replace(true);
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Every request lands here; routing is by path suffix, as in mockllm.
async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let seq = shared.log.next_seq();
    let method = req.method().clone();
    let target = req.uri().to_string();
    let mut record = RequestRecord::new(seq, method.as_str(), &target);
    if method == Method::CONNECT || req.uri().scheme().is_some() {
        record.kind = RequestKind::PhoneHome;
        record.status = 403;
        shared.log.push(record);
        return (
            StatusCode::FORBIDDEN,
            [(header::CONNECTION, "close")],
            "scripted-model: outbound traffic refused",
        )
            .into_response();
    }
    let path = req.uri().path().to_string();
    if method == Method::GET || method == Method::HEAD {
        let body = if method == Method::GET {
            models_answer(&shared.script.model, &path)
        } else {
            None
        };
        record.kind = if body.is_some() {
            RequestKind::Models
        } else {
            RequestKind::Other
        };
        shared.log.push(record);
        return match (method == Method::GET, body) {
            (_, Some(body)) => json_response(200, &body),
            (true, None) => json_response(200, &json!({})),
            (false, None) => StatusCode::OK.into_response(),
        };
    }
    if method != Method::POST && method != Method::PUT {
        return unknown(&shared, record, &path);
    }
    let (parts, body) = req.into_parts();
    // A body announced over the cap is refused on its announcement, not after waiting
    // for (and holding) up to the cap of it.
    let announced = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let parsed = match announced {
        Some(n) if n > MAX_BODY as u64 => Err(format!(
            "cannot read body: Content-Length {n} is over the {MAX_BODY}-byte cap"
        )),
        _ => read_body(&parts.headers, body).await,
    };
    let body = match parsed {
        Ok(v) => v,
        Err(message) => {
            record.kind = RequestKind::Invalid;
            record.status = 400;
            record.error = Some(message.clone());
            shared.log.push(record);
            let body = json!({"error": {"type": "invalid_request_error", "message": message}});
            return json_response(400, &body);
        }
    };
    let api = if path.ends_with("/messages/count_tokens") {
        return count_tokens(&shared, record, Api::Anthropic, &body);
    } else if path.ends_with("/messages") {
        Api::Anthropic
    } else if path.ends_with("/chat/completions") {
        Api::Chat
    } else if path.ends_with("/responses") {
        Api::Responses
    } else if path.contains(":streamGenerateContent") || path.contains(":generateContent") {
        Api::Gemini
    } else if path.contains(":countTokens") {
        return count_tokens(&shared, record, Api::Gemini, &body);
    } else {
        return unknown(&shared, record, &path);
    };
    if shared.stopper.is_stopped() {
        return stopped(&shared, record, api, &path, &body).await;
    }
    let (answer, delay, claim) =
        model_call(&shared, seq, api, method.as_str(), &target, &path, &body);
    if let Answer::Held(hold) = answer {
        shared.held.send_if_modified(|held| {
            let first = held.is_none();
            held.get_or_insert(hold);
            first
        });
        let _ = shared
            .closing
            .subscribe()
            .wait_for(|closing| *closing)
            .await;
        let message = format!("scripted-model: held: {}", hold.describe());
        return json_response(503, &crate::play::error_body(api, 503, &message, None));
    }
    if !delay.is_zero() {
        // A stop cuts the wait short: the answer is not sent anyway. When the CLI closes
        // its connection first (killed by that stop before this task saw it), the server
        // drops this future mid-wait: the guard still withdraws the answer on the record.
        let guard = WithdrawnIfDropped {
            shared: shared.clone(),
            seq: Some(seq),
        };
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = shared.stopper.stopped() => {}
        }
        guard.disarm();
    }
    // The host stopped the run while the answer waited: it is not sent.
    if shared.stopper.is_stopped() {
        shared.log.amend(seq, 503, crate::STOPPED_ERROR);
        return not_answered(&shared, api).await;
    }
    answer_response(answer, shared.script.chunk_delay, claim)
}

/// Withdraws the answer to request `seq` on the record (503, [`crate::STOPPED_ERROR`])
/// when dropped before [`WithdrawnIfDropped::disarm`] while the host's stop is on: the
/// request's handler was cancelled in its scripted delay because the CLI went away.
struct WithdrawnIfDropped {
    shared: Arc<Shared>,
    seq: Option<u64>,
}

impl WithdrawnIfDropped {
    /// The wait ended normally: the handler decides what the record says.
    fn disarm(mut self) {
        self.seq = None;
    }
}

impl Drop for WithdrawnIfDropped {
    fn drop(&mut self) {
        if let Some(seq) = self.seq
            && self.shared.stopper.is_stopped()
        {
            self.shared.log.amend(seq, 503, crate::STOPPED_ERROR);
        }
    }
}

/// A model call that arrived after the host's stop: logged (status 503,
/// [`crate::STOPPED_ERROR`]), left unanswered until the server shuts down, then `503`.
async fn stopped(
    shared: &Shared,
    mut record: RequestRecord,
    api: Api,
    path: &str,
    body: &Value,
) -> Response {
    let c = crate::classify::classify(api, path, body, |id| shared.prev_turns(id));
    record.api = Some(api);
    record.kind = if c.side {
        RequestKind::Side
    } else {
        RequestKind::Main
    };
    record.turn = Some(c.turn);
    record.stream = Some(c.stream);
    record.tools = c.tools;
    record.model = c.model;
    record.status = 503;
    record.error = Some(crate::STOPPED_ERROR.to_string());
    shared.log.push(record);
    not_answered(shared, api).await
}

/// Waits for the server to shut down, then answers `503` (the host stopped the run).
async fn not_answered(shared: &Shared, api: Api) -> Response {
    let _ = shared
        .closing
        .subscribe()
        .wait_for(|closing| *closing)
        .await;
    let message = format!("scripted-model: {}", crate::STOPPED_ERROR);
    json_response(503, &crate::play::error_body(api, 503, &message, None))
}

/// The body of `GET …/models` (a list) or `GET …/models/{id}` (one model), in a shape
/// that suits OpenAI, Anthropic and Gemini clients at once; `None` for other paths.
fn models_answer(default_model: &str, path: &str) -> Option<Value> {
    let trimmed = path.trim_end_matches('/');
    let entry = |id: &str| {
        json!({"id": id, "object": "model", "type": "model", "created": 0,
               "created_at": "2025-01-01T00:00:00Z", "display_name": id, "owned_by": "mockllm",
               "name": format!("models/{id}"), "displayName": id,
               "supportedGenerationMethods": ["generateContent"]})
    };
    if trimmed.ends_with("/models") {
        let m = default_model;
        return Some(json!({
            "object": "list", "data": [entry(m)],
            "models": [{"name": format!("models/{m}"), "displayName": m,
                        "supportedGenerationMethods": ["generateContent"]}],
            "has_more": false, "first_id": m, "last_id": m}));
    }
    let (_, id) = trimmed.rsplit_once("/models/")?;
    (!id.is_empty() && !id.contains(':')).then(|| entry(id))
}

fn count_tokens(shared: &Shared, mut record: RequestRecord, api: Api, body: &Value) -> Response {
    record.api = Some(api);
    record.kind = RequestKind::CountTokens;
    shared.log.push(record);
    let n = approx_tokens(body);
    match api {
        Api::Gemini => json_response(200, &json!({"totalTokens": n})),
        _ => json_response(200, &json!({"input_tokens": n})),
    }
}

fn unknown(shared: &Shared, mut record: RequestRecord, path: &str) -> Response {
    let message = format!("scripted-model: no route {path}");
    record.kind = RequestKind::Unknown;
    record.status = 404;
    record.error = Some(message.clone());
    shared.log.push(record);
    json_response(
        404,
        &json!({"error": {"type": "not_found", "message": message}}),
    )
}
