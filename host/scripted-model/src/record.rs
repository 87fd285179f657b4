//! The request log: one [`RequestRecord`] per request, kept in memory and optionally
//! appended as JSON lines to a file.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// The vendor API a request was for. Serialized as `"anthropic"`, `"responses"`,
/// `"chat"`, `"gemini"` (mockllm's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// Anthropic Messages (`…/messages`, `…/messages/count_tokens`).
    Anthropic,
    /// OpenAI Responses (`…/responses`).
    Responses,
    /// OpenAI Chat Completions (`…/chat/completions`).
    Chat,
    /// Gemini (`…/models/M:streamGenerateContent`, `:generateContent`, `:countTokens`).
    Gemini,
}

/// What kind of request it was. Serialized in snake_case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// A main-thread model call: it offered tools and was answered from the script.
    Main,
    /// A side request (no tools offered, or Gemini `generateContent`): got `side_text`.
    Side,
    /// A token-counting request.
    CountTokens,
    /// A model listing or model lookup (`GET …/models[/id]`).
    Models,
    /// Any other `GET` or a `HEAD`, answered `200`.
    Other,
    /// A `CONNECT` or absolute-URI (proxy) request: refused with `403`.
    PhoneHome,
    /// A request to a path the server does not know: answered `404`.
    Unknown,
    /// A body that could not be decoded or parsed as JSON: answered `400`.
    Invalid,
}

/// One logged request. Field names follow mockllm's `requests.jsonl` (`seq`, `method`,
/// `path`, `api`, `kind`, `turn`, `stream`, `tools`) plus a few more.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestRecord {
    /// 1-based arrival order.
    pub seq: u64,
    /// Wall-clock arrival time, seconds since the Unix epoch (millisecond precision).
    pub t: f64,
    /// HTTP method (`POST`, `GET`, `CONNECT`, …).
    pub method: String,
    /// Request target as received: path and query (`/v1/messages?beta=true`), or
    /// `host:port` for `CONNECT`, or the absolute URI of a proxy request.
    pub path: String,
    /// The API, for model, token-counting requests and model lookups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api: Option<Api>,
    /// The request kind.
    pub kind: RequestKind,
    /// Completed assistant turns in the request (model calls only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<usize>,
    /// Whether a streamed (SSE) answer was asked for (model calls only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Names of the tools offered, in request order (model calls only; empty otherwise).
    pub tools: Vec<String>,
    /// The model named by the request (or the Gemini URL), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// HTTP status answered (decided before any scripted delay).
    pub status: u16,
    /// Why the request was answered with an error (scripted `http_error`, a neutral
    /// action without a translator, an unparsable body, an unknown path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl RequestRecord {
    /// A record with only the basics set; `kind` [`RequestKind::Other`], status 200.
    pub(crate) fn new(seq: u64, method: &str, path: &str) -> RequestRecord {
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as f64 / 1000.0)
            .unwrap_or(0.0);
        RequestRecord {
            seq,
            t,
            method: method.to_string(),
            path: path.to_string(),
            api: None,
            kind: RequestKind::Other,
            turn: None,
            stream: None,
            tools: Vec::new(),
            model: None,
            status: 200,
            error: None,
        }
    }
}

/// The in-memory log plus the optional JSONL file.
pub(crate) struct Log {
    seq: AtomicU64,
    records: Mutex<Vec<RequestRecord>>,
    file: Option<Mutex<File>>,
}

impl Log {
    /// Opens (creates, appends to) the log file when one is given.
    pub fn open(path: Option<&Path>) -> std::io::Result<Log> {
        let file = match path {
            Some(p) => Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)?,
            )),
            None => None,
        };
        Ok(Log {
            seq: AtomicU64::new(0),
            records: Mutex::new(Vec::new()),
            file,
        })
    }

    /// The next sequence number (1-based).
    pub fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Stores a record and appends it to the file. A failed file write is ignored: the
    /// in-memory log stays complete, and a log file must never break a model answer.
    pub fn push(&self, record: RequestRecord) {
        if let Some(file) = &self.file
            && let Ok(mut line) = serde_json::to_string(&record)
        {
            line.push('\n');
            let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
            let _ = f.write_all(line.as_bytes());
        }
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        records.push(record);
    }

    /// Sets the status and error of the record `seq` (an answer withdrawn after it was
    /// logged: the host stopped the run during its scripted delay). The file keeps the
    /// line as first written, followed by the record again as changed.
    pub fn amend(&self, seq: u64, status: u16, error: &str) {
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        let Some(record) = records.iter_mut().find(|r| r.seq == seq) else {
            return;
        };
        record.status = status;
        record.error = Some(error.to_string());
        if let Some(file) = &self.file
            && let Ok(mut line) = serde_json::to_string(&*record)
        {
            line.push('\n');
            let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
            let _ = f.write_all(line.as_bytes());
        }
    }

    /// All records so far, in sequence order.
    pub fn snapshot(&self) -> Vec<RequestRecord> {
        let mut out = self
            .records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        out.sort_by_key(|r| r.seq);
        out
    }
}
