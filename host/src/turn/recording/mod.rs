//! The recording: everything a CLI wrote, with receive stamps, written before any parsing.
//!
//! # Format (`recording.jsonl`, version 1)
//!
//! JSON Lines. The first line is the header; every later line is one record:
//!
//! ```text
//! {"format":"coder-eval-recording","version":1,"harness":"claude-code","cli_version":"2.1.197","argv":["claude","-p","…"],"max_turns":2}
//! {"t":"out","us":1523,"text":"{\"type\":\"system\",…}"}   one stdout line, newline removed
//! {"t":"out","us":1525,"b64":"/+7/…"}                      a stdout line that is not UTF-8
//! {"t":"out","us":1530,"text":"{\"type\":","eof":true}     bytes after the last newline
//! {"t":"err","us":1400,"text":"warning: …\n"}              a stderr chunk, as read
//! {"t":"call","us":2040,"turn":2}                          the scripted model held call 3
//! {"t":"call","us":2040,"turn":2,"reason":"max_tool_calls","tools":2}
//!                                                          … held call 3 as its reply would
//!                                                          hand out tool calls past the cap
//! {"t":"model_call","seq":1,"us":900,"first_byte_us":950,…} one request through the gateway
//! {"t":"stop","us":2050,"reason":"max_turns"}              the host decided to end the turn
//! {"t":"exit","us":2100,"code":0}                          the CLI ended (`code` or `signal`;
//!                                                          `"turn_limit":true` when the code
//!                                                          is the CLI's documented turn limit)
//! ```
//!
//! - `us`: µs since the turn started, from the host's one monotonic clock.
//! - Exactly one of `text` (the bytes are valid UTF-8) or `b64` (standard base64 of the
//!   exact bytes) per `out`/`err` record, so any byte sequence round-trips.
//! - `stop` is written the moment the host decides to end the turn (a cap, a timeout,
//!   Ctrl-C, ...; reasons as in `task.json`): stdout lines after it arrived while the CLI
//!   was being stopped, and replay keeps them without counting them, as the live run did.
//! - `call` is written when the scripted model receives a main request past `max_turns`
//!   (`turn` = its completed assistant turns, so it asks for call `turn + 1`) and holds it
//!   unanswered: that call began although the stream never shows it, and the cap fires on
//!   it. Replay counts it at the same place among the stdout lines. `reason` says which
//!   cap held it (absent = `max_turns`, as every recording before it was written);
//!   `max_tool_calls` = the reply would have handed out tool calls past that cap, and
//!   `tools` is the number of tool calls the model had handed out before it.
//! - `model_call` (added within version 1; a host that predates it reads such a line as an
//!   unreadable-line diagnostic and replays the rest unchanged) is one request the CLI sent
//!   through the model gateway (`run --gateway`, header `"gateway":true`), with its
//!   stamps (`us` = arrival, `first_byte_us`, `end_us`), status, kind (`main`, `side`,
//!   `other`), turn index, model, the API's own usage and, with `--gateway-bodies`, the
//!   redacted bodies: [`crate::gateway::ModelCall`]. They follow the `exit` record, in the
//!   order the requests arrived. Replay of a gateway recording takes `num_turns` and the
//!   usage from them ([`crate::gateway::apply_to_turn`]); a recording without the header
//!   flag replays exactly as before.
//! - Header fields other than `format` and `version` are optional; readers ignore fields
//!   they do not know.
//!
//! A file whose first line is not such a header is read as a **plain stdout capture**
//! (a CLI's JSONL output saved as is): its lines get synthesized stamps 1 ms apart.

use crate::results::StopReason;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

mod flat;
mod read;
mod write;

pub use read::Item;
pub(crate) use read::Reader;
pub(crate) use write::RecordingWriter;

/// The `format` value of a recording header.
pub(crate) const FORMAT: &str = "coder-eval-recording";
/// The recording format version this host writes and reads.
pub(crate) const VERSION: u32 = 1;

/// The first line of a recording.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The harness name (e.g. `claude-code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<String>,
    /// The CLI's version as `--version` printed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_version: Option<String>,
    /// The exact argv the CLI was started with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<String>,
    /// The task's `max_turns`, when it had one (replay needs it to judge the cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// The task's `max_tool_calls`, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<u32>,
    /// The armed criteria of an early stop (their graders and parameters, the bar): replay
    /// re-arms them and reaches the same decision at the same event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub early_stop: Option<crate::turn::early_stop::LivePlan>,
    /// The task's token and USD budgets, when it had any (replay enforces them again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budgets: Option<BudgetsHeader>,
    /// Whether this process started a session or resumed one (replay reads the CLI's
    /// running totals by it). Absent in recordings made before it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionHeader>,
    /// Wall-clock time the recording began, just before the CLI started (ms since the
    /// Unix epoch; the stamps of the lines are µs from the turn's start, a few ms later).
    /// What exports anchor absolute times to (ATIF timestamps, OpenTelemetry spans).
    /// Absent in recordings made before it was written, and in plain captures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_ms: Option<u64>,
    /// The CLI talked to its model through the model gateway (`run --gateway`): the
    /// recording's `model_call` records are every request it sent, and replay counts
    /// `num_turns` from them. Absent (false) otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gateway: bool,
    /// With the gateway and `--price-table`: the table's file as given; the
    /// `model_call` records then carry their `cost_usd`, and `max_usd` was held at the
    /// gateway on them. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_table: Option<String>,
}

/// The session of a recorded process, as the host launched it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionHeader {
    /// `true` when the process resumed an earlier session.
    pub resumed: bool,
    /// USD the session's earlier processes had spent, when known (a resumed process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_cost_usd: Option<f64>,
    /// Tokens the session's earlier processes had used, when known (a resumed process;
    /// absent in recordings made before it was written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_usage: Option<harness_kit::Usage>,
    /// A time-budget continuation: µs from the first session's start to this session's
    /// (the offset its stamps get in the run's joined trajectory, so a replay of all the
    /// sessions joins them as the live run did). Absent for a first session, and in
    /// recordings made before it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_us: Option<u64>,
    /// Main-thread model calls the session's earlier launches made (a time-budget
    /// continuation; the assistant turns its resumed history replays): a held call's
    /// index counts them, the launch's own `num_turns` does not. Absent for a first
    /// session, and in recordings made before it was written (then taken as 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_turns: Option<u32>,
    /// Tool calls the session's earlier launches made (a time-budget continuation).
    /// Absent for a first session, and in recordings made before it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_tool_calls: Option<u32>,
}

impl SessionHeader {
    /// `caps` (the task's `max_turns`, `max_tool_calls`, which count every session of a
    /// time-budget run) as they apply to this launch: less what the session's earlier
    /// launches made (at least 0). The caps the host's collector enforces on this launch,
    /// and the native limits a continuation is started with.
    pub(crate) fn remaining(&self, caps: crate::limits::Caps) -> crate::limits::Caps {
        let less =
            |cap: Option<u32>, used: Option<u32>| cap.map(|n| n.saturating_sub(used.unwrap_or(0)));
        crate::limits::Caps {
            max_turns: less(caps.max_turns, self.earlier_turns),
            max_tool_calls: less(caps.max_tool_calls, self.earlier_tool_calls),
        }
    }

    /// How the collector reads this process's running totals.
    pub(crate) fn launch(&self) -> crate::turn::collect::Launch {
        use crate::turn::collect::Launch;
        if self.resumed {
            Launch::Resumed {
                earlier_cost_usd: self.earlier_cost_usd,
                earlier_usage: self.earlier_usage,
            }
        } else {
            Launch::Fresh
        }
    }
}

/// The budgets as a recording's header keeps them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BudgetsHeader {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_total_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub count_cached_input: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub count_cache_creation: bool,
}

impl BudgetsHeader {
    /// From the task's budgets; `None` when it sets none.
    pub fn of(b: crate::limits::budget::Budgets) -> Option<BudgetsHeader> {
        b.any().then_some(BudgetsHeader {
            max_input_tokens: b.max_input_tokens,
            max_output_tokens: b.max_output_tokens,
            max_total_tokens: b.max_total_tokens,
            max_usd: b.max_usd,
            count_cached_input: b.count_cached_input,
            count_cache_creation: b.count_cache_creation,
        })
    }

    /// Back to the budgets.
    pub fn budgets(&self) -> crate::limits::budget::Budgets {
        crate::limits::budget::Budgets {
            max_input_tokens: self.max_input_tokens,
            max_output_tokens: self.max_output_tokens,
            max_total_tokens: self.max_total_tokens,
            max_usd: self.max_usd,
            count_cached_input: self.count_cached_input,
            count_cache_creation: self.count_cache_creation,
        }
    }
}

/// One record after the header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
enum Record {
    Out {
        us: u64,
        #[serde(flatten)]
        data: Data,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        eof: bool,
    },
    Err {
        us: u64,
        #[serde(flatten)]
        data: Data,
    },
    Call {
        us: u64,
        turn: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<StopReason>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tools: Option<u32>,
    },
    ModelCall(Box<crate::gateway::ModelCall>),
    Stop {
        us: u64,
        reason: StopReason,
    },
    /// A side file the launch plan named, read after the CLI exited: `path` as the plan
    /// gave it, its bytes as `text` or `b64`, neither when the CLI wrote none.
    SideFile {
        us: u64,
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        b64: Option<String>,
    },
    Exit {
        us: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<i32>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        turn_limit: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Data {
    Text(String),
    B64(String),
}

impl Data {
    fn of(bytes: &[u8]) -> Data {
        match std::str::from_utf8(bytes) {
            Ok(text) => Data::Text(text.to_string()),
            Err(_) => Data::B64(B64.encode(bytes)),
        }
    }

    fn into_bytes(self) -> Result<Vec<u8>, String> {
        match self {
            Data::Text(text) => Ok(text.into_bytes()),
            Data::B64(b64) => B64.decode(b64).map_err(|e| format!("bad base64: {e}")),
        }
    }
}

/// One stdout line with its stamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StampedLine {
    /// µs since the turn started.
    pub stamp_us: u64,
    /// The line's bytes, newline removed.
    pub bytes: Vec<u8>,
    /// 1-based number of this stdout line in the stream (in a plain capture, its line
    /// number; in a recording, its position among the `out` records).
    pub source_line: u64,
}

/// How the CLI process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitStatus {
    /// µs since the turn started.
    pub stamp_us: u64,
    /// The exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// The CLI documents this exit code as its own turn limit (its launch plan's exit
    /// codes, kind `turn_limit`: Gemini CLI's 53). A CLI that exits so without its final
    /// result (the stream cut as it exited) was still stopped by its own `max_turns` cap.
    pub turn_limit: bool,
}

/// The host's stop decision, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedStop {
    /// µs since the turn started.
    pub stamp_us: u64,
    /// The reason (`max_turns`, `turn_timeout`, ...).
    pub reason: StopReason,
    /// How many complete stdout lines were recorded before it.
    pub after_lines: usize,
}

/// A model call the scripted model held (it never reached the stream), as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldCall {
    /// µs since the turn started.
    pub stamp_us: u64,
    /// Completed assistant turns in the request: it asked for call `turn + 1`.
    pub turn: u32,
    /// The cap that held it: [`StopReason::MaxTurns`] or [`StopReason::MaxToolCalls`].
    pub reason: StopReason,
    /// Tool calls the scripted model had handed out before it, when recorded (a
    /// `max_tool_calls` hold always records it).
    pub tool_calls_before: Option<u32>,
    /// How many complete stdout lines were recorded before it.
    pub after_lines: usize,
}

/// Errors reading a recording.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// The file could not be read.
    #[error("could not read {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The header names a format version this host does not read.
    #[error(
        "{path}:1: recording format version {found} is not supported (this host reads version {VERSION})"
    )]
    Version { path: PathBuf, found: u32 },
}

/// The header of a recording (reading its first line only); `None` for a plain capture.
pub fn read_header(path: &Path) -> Result<Option<Header>, RecordingError> {
    use std::io::BufRead;
    let io = |source| RecordingError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut first = Vec::new();
    std::io::BufReader::new(file)
        .read_until(b'\n', &mut first)
        .map_err(io)?;
    Ok(serde_json::from_slice::<Header>(first.trim_ascii())
        .ok()
        .filter(|h| h.format == FORMAT))
}

#[cfg(test)]
mod tests;
