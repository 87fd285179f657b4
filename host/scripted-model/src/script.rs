//! Scripts: the replies the server plays, loaded from JSON or YAML (format in the crate docs).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::{NeutralAction, ToolCallSpec};

/// Why a script could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read script {}: {source}", path.display())]
    Read {
        /// The script path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The text is not valid JSON/YAML or not a valid script. `message` carries the
    /// offending key and, where the parser knows it, the line and column.
    #[error("invalid script {origin}: {message}")]
    Invalid {
        /// The file path (or the origin given to [`Script::from_str`]).
        origin: String,
        /// The parser's message.
        message: String,
    },
}

/// The largest script file [`Script::load`] reads: 16 MiB (a script of many replies
/// takes a few KiB; a file past this is a mistake, not a script).
pub const MAX_SCRIPT_BYTES: u64 = 16 * 1024 * 1024;

/// A loaded script. Deserializable on its own, so a caller can embed one in its own
/// JSON/YAML (e.g. a task file); the same rules and errors apply.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawScript")]
pub struct Script {
    /// Script name (default `"script"`).
    pub name: String,
    /// Free text, ignored by the server.
    pub description: Option<String>,
    /// Model id reported back when the request names none (default `"mock-model"`).
    pub model: String,
    /// Replies in order: reply n answers a request holding n completed assistant turns.
    pub replies: Vec<Reply>,
    /// Reply used once the script is exhausted (default: text `"done"`).
    pub after_end: Reply,
    /// Text answered to side requests (default `"Mock title"`).
    pub side_text: String,
    /// Pause between streamed SSE events (default zero).
    pub chunk_delay: Duration,
}

/// One scripted assistant turn.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(try_from = "RawReply")]
pub struct Reply {
    /// Assistant text, streamed in small deltas.
    pub text: Option<String>,
    /// Reasoning text.
    pub thinking: Option<String>,
    /// Tool calls of this turn; two or more are parallel calls.
    pub tool_calls: Vec<ScriptToolCall>,
    /// Wait before answering (script keys `delay_ms`, or `delay_s` in seconds).
    pub delay: Duration,
    /// Answer with an HTTP error instead.
    pub http_error: Option<HttpErrorSpec>,
}

/// An `http_error` reply.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpErrorSpec {
    /// HTTP status, 400–599 (default 500).
    #[serde(default = "default_status")]
    pub status: u16,
    /// Error message put in the vendor-shaped body (default `"mock error"`).
    #[serde(default = "default_error_message")]
    pub message: String,
    /// Vendor error type override (Anthropic/OpenAI `error.type`, Gemini `error.status`).
    #[serde(default, rename = "type")]
    pub error_type: Option<String>,
    /// Only the first `times` requests at this turn index get the error (default: all).
    #[serde(default)]
    pub times: Option<u32>,
}

/// One scripted tool call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawToolCall")]
pub struct ScriptToolCall {
    /// Call id to send; `None` = generated (`toolu_mock_<turn>_<i>` / `call_mock_<turn>_<i>`).
    pub id: Option<String>,
    /// What to call.
    pub call: ScriptCall,
}

/// The body of a scripted tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptCall {
    /// A CLI-specific call, sent as written (after `{{workspace}}` substitution).
    Raw(ToolCallSpec),
    /// A neutral action, translated by the server's [`crate::ActionTranslator`].
    Action(NeutralAction),
}

impl Script {
    /// Reads and parses the script at `path`: YAML when the extension is `.yaml`/`.yml`,
    /// JSON otherwise. Error messages name the path.
    pub fn load(path: &Path) -> Result<Script, ScriptError> {
        let read = |source| ScriptError::Read {
            path: path.to_path_buf(),
            source,
        };
        // Checked before opening: opening a FIFO blocks until a writer comes, and a
        // device (`/dev/zero`) never ends.
        let meta = std::fs::metadata(path).map_err(read)?;
        if !meta.is_file() {
            return Err(read(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file (a folder, a FIFO or a device)",
            )));
        }
        if meta.len() > MAX_SCRIPT_BYTES {
            return Err(read(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{} bytes, over the {} MiB a script may take",
                    meta.len(),
                    MAX_SCRIPT_BYTES >> 20
                ),
            )));
        }
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut std::io::Read::take(std::fs::File::open(path).map_err(read)?, MAX_SCRIPT_BYTES),
            &mut text,
        )
        .map_err(read)?;
        let yaml = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        );
        Script::from_str(&text, &path.display().to_string(), yaml)
    }

    /// Parses a script from `text`; `origin` names it in error messages (a file path);
    /// `yaml` selects YAML rather than JSON.
    pub fn from_str(text: &str, origin: &str, yaml: bool) -> Result<Script, ScriptError> {
        let parsed = if yaml {
            serde_yaml_ng::from_str::<Script>(text).map_err(|e| e.to_string())
        } else {
            serde_json::from_str::<Script>(text).map_err(|e| e.to_string())
        };
        parsed.map_err(|message| ScriptError::Invalid {
            origin: origin.to_string(),
            message,
        })
    }

    /// Whether any reply (or `after_end`) holds a neutral action, i.e. whether the
    /// server needs an [`crate::ActionTranslator`] to play this script.
    pub fn has_neutral_actions(&self) -> bool {
        self.replies
            .iter()
            .chain(std::iter::once(&self.after_end))
            .flat_map(|r| &r.tool_calls)
            .any(|c| matches!(c.call, ScriptCall::Action(_)))
    }

    /// The reply for a request holding `turn` completed assistant turns.
    pub fn reply(&self, turn: usize) -> &Reply {
        self.replies.get(turn).unwrap_or(&self.after_end)
    }

    /// The tool calls handed out before reply `turn`: those of replies `0..turn`, each
    /// call of a parallel reply counted (a reply with `http_error` counts its calls too,
    /// as it hands them out once its `times` are spent). Counted from the script alone:
    /// one thread's count. The server's `max_tool_calls` hold counts what it handed out
    /// over every thread instead (see [`crate::ServerConfig::hold_past_tool_calls`]).
    pub fn tool_calls_before(&self, turn: usize) -> u64 {
        (0..turn)
            .map(|i| self.reply(i).tool_calls.len() as u64)
            .sum()
    }
}

impl Default for Script {
    /// An empty script: every main request gets `after_end` (text `"done"`).
    fn default() -> Self {
        Script {
            name: "script".into(),
            description: None,
            model: crate::common::DEFAULT_MODEL.into(),
            replies: Vec::new(),
            after_end: Reply::text("done"),
            side_text: "Mock title".into(),
            chunk_delay: Duration::ZERO,
        }
    }
}

impl Reply {
    /// A reply holding only `text`.
    pub fn text(text: &str) -> Reply {
        Reply {
            text: Some(text.into()),
            ..Reply::default()
        }
    }
}

fn default_status() -> u16 {
    500
}

fn default_error_message() -> String {
    "mock error".into()
}

/// Accepts either milliseconds or mockllm's float seconds, never both.
fn delay(ms: Option<u64>, s: Option<f64>, what: &str) -> Result<Duration, String> {
    match (ms, s) {
        (Some(_), Some(_)) => Err(format!("give either {what}_ms or {what}_s, not both")),
        (Some(ms), None) => Ok(Duration::from_millis(ms)),
        (None, Some(s)) => Duration::try_from_secs_f64(s)
            .map_err(|_| format!("{what}_s must be a non-negative number of seconds, got {s}")),
        (None, None) => Ok(Duration::ZERO),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScript {
    name: Option<String>,
    description: Option<String>,
    model: Option<String>,
    #[serde(default)]
    replies: Vec<Reply>,
    after_end: Option<Reply>,
    side_text: Option<String>,
    chunk_delay_ms: Option<u64>,
    chunk_delay_s: Option<f64>,
}

impl TryFrom<RawScript> for Script {
    type Error = String;
    fn try_from(raw: RawScript) -> Result<Self, String> {
        let d = Script::default();
        Ok(Script {
            name: raw.name.unwrap_or(d.name),
            description: raw.description,
            model: raw.model.unwrap_or(d.model),
            replies: raw.replies,
            after_end: raw.after_end.unwrap_or(d.after_end),
            side_text: raw.side_text.unwrap_or(d.side_text),
            chunk_delay: delay(raw.chunk_delay_ms, raw.chunk_delay_s, "chunk_delay")?,
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReply {
    text: Option<String>,
    thinking: Option<String>,
    tool_calls: Option<Vec<ScriptToolCall>>,
    delay_ms: Option<u64>,
    delay_s: Option<f64>,
    http_error: Option<HttpErrorSpec>,
}

impl TryFrom<RawReply> for Reply {
    type Error = String;
    fn try_from(raw: RawReply) -> Result<Self, String> {
        if let Some(err) = &raw.http_error
            && !(400..=599).contains(&err.status)
        {
            return Err(format!(
                "http_error.status must be 400-599, got {}",
                err.status
            ));
        }
        Ok(Reply {
            text: raw.text,
            thinking: raw.thinking,
            tool_calls: raw.tool_calls.unwrap_or_default(),
            delay: delay(raw.delay_ms, raw.delay_s, "delay")?,
            http_error: raw.http_error,
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteFileArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShellArgs {
    command: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadFileArgs {
    path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolCall {
    id: Option<String>,
    name: Option<String>,
    arguments: Option<Value>,
    input: Option<String>,
    write_file: Option<WriteFileArgs>,
    shell: Option<ShellArgs>,
    read_file: Option<ReadFileArgs>,
}

impl TryFrom<RawToolCall> for ScriptToolCall {
    type Error = String;
    fn try_from(raw: RawToolCall) -> Result<Self, String> {
        let mut actions = Vec::new();
        if let Some(a) = raw.write_file {
            actions.push(NeutralAction::WriteFile {
                path: a.path,
                content: a.content,
            });
        }
        if let Some(a) = raw.shell {
            actions.push(NeutralAction::Shell { command: a.command });
        }
        if let Some(a) = raw.read_file {
            actions.push(NeutralAction::ReadFile { path: a.path });
        }
        let raw_keys = raw.name.is_some() || raw.arguments.is_some() || raw.input.is_some();
        let call = match (actions.len(), raw_keys) {
            (1, false) => ScriptCall::Action(actions.remove(0)),
            (0, true) => raw_call(raw.name, raw.arguments, raw.input)?,
            (0, false) => {
                return Err("a tool call needs `name` (with `arguments` or `input`) \
                            or one of write_file, shell, read_file"
                    .into());
            }
            _ => {
                return Err("a tool call holds exactly one of: a raw call (`name`), \
                            write_file, shell, read_file"
                    .into());
            }
        };
        Ok(ScriptToolCall { id: raw.id, call })
    }
}

fn raw_call(
    name: Option<String>,
    arguments: Option<Value>,
    input: Option<String>,
) -> Result<ScriptCall, String> {
    let name = name.ok_or("a tool call with `arguments` or `input` needs a `name`")?;
    let spec = match (arguments, input) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "tool call `{name}`: give `arguments` (function call) or `input` \
                 (free-form call), not both"
            ));
        }
        (None, Some(input)) => ToolCallSpec::Custom { name, input },
        (Some(Value::Object(m)), None) => ToolCallSpec::Function {
            name,
            arguments: Value::Object(m),
        },
        (Some(other), None) => {
            return Err(format!(
                "tool call `{name}`: `arguments` must be an object, got {other}"
            ));
        }
        (None, None) => ToolCallSpec::Function {
            name,
            arguments: Value::Object(Map::new()),
        },
    };
    Ok(ScriptCall::Raw(spec))
}
