//! The **scripted model**: a loopback HTTP server that speaks the model vendors' APIs and
//! plays a script of replies, so real coding-agent CLIs (Claude Code, Codex, Pi, OpenCode,
//! Gemini CLI) run offline and deterministically. A Rust port of the reference `mockllm.py`.
//!
//! # APIs served
//!
//! Any prefix before `/v1` is ignored (`http://127.0.0.1:PORT/anthropic/v1` works too).
//!
//! | request | API | answer |
//! |---|---|---|
//! | `POST …/messages` (`?beta=true` too) | Anthropic Messages | SSE (`"stream": true`) or JSON |
//! | `POST …/messages/count_tokens` | Anthropic | `{"input_tokens": n}` |
//! | `POST …/responses` | OpenAI Responses (Codex) | SSE `response.*` events or JSON |
//! | `POST …/chat/completions` | OpenAI Chat Completions (Pi, OpenCode) | SSE chunks or JSON |
//! | `POST …/models/M:streamGenerateContent?alt=sse` | Gemini | SSE |
//! | `POST …/models/M:generateContent` | Gemini, non-streaming | JSON (always a side request) |
//! | `POST …/models/M:countTokens` | Gemini | `{"totalTokens": n}` |
//! | `GET …/models`, `GET …/models/{id}` | model listing (mixed OpenAI/Anthropic/Gemini shape) | JSON |
//! | `CONNECT host:443`, absolute-URI requests | a refusing proxy | `403`, logged as `phone_home` |
//! | any other `GET` / `HEAD` | | `200 {}` / `200` empty |
//! | any other request | | `404` JSON error, logged as `unknown` |
//!
//! `PUT` is treated like `POST`. Request bodies may be `gzip` or `deflate` encoded.
//! Token counts are a deterministic stand-in: one token per 4 characters of the JSON.
//!
//! # Script format
//!
//! A script is a JSON or YAML file ([`Script::load`] picks YAML for `.yaml`/`.yml`, JSON
//! otherwise). It is a superset of mockllm's format, so its scripts load unchanged.
//! Unknown keys are errors that name the file and the key (with line and column).
//!
//! ```yaml
//! name: hello                 # optional, default "script"
//! description: free text      # optional, ignored
//! model: mock-model           # optional: model id reported when the request names none
//! chunk_delay_ms: 0           # optional pause between streamed events (or mockllm's chunk_delay_s)
//! replies:                    # reply n answers a request holding n completed assistant turns
//!   - text: "I'll create the file."
//!     thinking: "optional reasoning"   # Anthropic thinking block, Responses reasoning item,
//!                                      # Chat reasoning_content, Gemini thought part
//!     delay_ms: 0                      # wait before answering (or mockllm's delay_s, float seconds)
//!     tool_calls:                      # two or more = parallel tool calls
//!       - write_file: {path: "{{workspace}}/app.py", content: "print('hi')\n"}  # neutral action
//!       - shell: {command: "python3 app.py"}                                     # neutral action
//!       - read_file: {path: "app.py"}                                            # neutral action
//!       - {name: Bash, arguments: {command: date}}          # raw function call, CLI-specific
//!       - {name: apply_patch, input: "*** Begin Patch ..."} # raw free-form (custom) call
//!       - {id: call_1, name: Bash, arguments: {}}           # `id` overrides the generated id
//!   - http_error: {status: 529, message: "overloaded"}      # answer with an HTTP error
//!   - text: done
//! after_end: {text: done}     # reply used past the end of the script (default: text "done")
//! side_text: "Mock title"     # answer to side requests (default "Mock title")
//! ```
//!
//! * **Which reply.** Stateless: reply *n* answers a request that already holds *n*
//!   completed assistant turns — Anthropic/Chat: messages with role `assistant`;
//!   Responses: runs of assistant-side items (`message` with role `assistant`,
//!   `function_call`, `custom_tool_call`, `reasoning`, …) plus the turns of a
//!   `previous_response_id` this server answered; Gemini: contents with role `model`.
//!   A trailing assistant message is a prefill and does not count.
//! * **Side requests.** A request that offers no tools (title generation, quota probes),
//!   and every non-streaming Gemini `generateContent` call, is a side request: it gets
//!   `side_text` — or, when it asks for a JSON-schema output, a minimal JSON object that
//!   satisfies the schema (`"user"` is picked from an enum holding it) — and does not
//!   advance the script.
//! * **Tool calls.** `{name, arguments}` is a function call (`arguments` is a JSON object,
//!   default `{}`); `{name, input}` is a free-form call: a Responses `custom_tool_call`
//!   item (Codex's `apply_patch`), while the other APIs receive the arguments
//!   `{"input": "<text>"}`. `write_file`/`shell`/`read_file` are [`NeutralAction`]s,
//!   translated per CLI by the [`ActionTranslator`] given in [`ServerConfig`]; without
//!   one, a request whose reply holds a neutral action is answered with HTTP 500 and a
//!   message saying so. Generated call ids are `toolu_mock_<turn>_<i>` (Anthropic) and
//!   `call_mock_<turn>_<i>` (the others).
//! * **Workspace.** `{{workspace}}` and mockllm's `{{WORKDIR}}` in any string of a tool
//!   call's arguments or input (and of a neutral action, before translation) are replaced
//!   by [`ServerConfig::workspace`].
//! * **Errors.** `http_error: {status, message, type, times}` answers with `status`
//!   (400–599, default 500) and a vendor-shaped error body carrying `message` (default
//!   `"mock error"`); `type` overrides the vendor error type (Anthropic
//!   `error.type`, OpenAI `error.type`, Gemini `error.status`). Because the server is
//!   stateless, every retry of that turn gets the error again — unless `times: N` is
//!   given: then only the first N requests at that turn index get the error and later
//!   ones get the rest of the reply (`text`, `tool_calls`, …), which lets a script test
//!   a CLI's retry. `delay_ms` applies before the error too.
//!
//! * **Holds** (for a run's caps, [`ServerConfig`]). A main request past `max_turns`
//!   (`hold_from_turn`), or whose reply's tool calls would take the calls handed out past
//!   `max_tool_calls` (`hold_past_tool_calls`; a reply straddling the cap is held whole),
//!   is not answered while the server runs (503 once it shuts down), and
//!   [`ScriptedModel::held`] reports the first ([`Hold`]: turn index, tool calls handed
//!   out before it, which limit).
//! * **The host's stop** ([`Stopper`], [`ScriptedModel::stopper`]): once tripped, no
//!   model call is answered (held as above, logged with status 503 and
//!   [`STOPPED_ERROR`]), so a CLI being stopped cannot go on working in its stop grace.
//! * **The run's tool calls** are counted statefully, over every thread: a sub-agent
//!   (Claude Code's `Agent`) sends a history of its own, which starts again at reply 0,
//!   but the calls its replies hand out count toward `max_tool_calls` with the main
//!   thread's. A request is known by its history (its `messages` / `input` and
//!   `previous_response_id` / `contents`, prompt-cache markers left out): a retry (the
//!   same history again, re-sent because its answer did not go out whole: a dropped
//!   connection) gets the same calls with the same ids and counts nothing; any other
//!   request counts, a new history at a turn index seen before and an identical twin
//!   alike (the same history while the first is being answered or after it was
//!   delivered: two sub-agents started with the same prompt), and gets call ids of its
//!   own (`<id>_<n>`), so no two calls of a run share an id.
//!
//! # Request log
//!
//! Every request gets a [`RequestRecord`] (seq, arrival time, method, path, API, kind —
//! main, side, count_tokens, models, other, phone_home, unknown, invalid — turn index,
//! stream flag, tool names offered, model, status, error), kept in memory
//! ([`ScriptedModel::requests`]) and, with [`ServerConfig::log_file`], appended to a
//! file as one JSON line each (mockllm's `requests.jsonl` field names).
//!
//! # Example
//!
//! ```
//! use coder_eval_scripted_model::{Script, ScriptedModel, ServerConfig};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let yaml = "name: hello\nreplies:\n  - text: hi\n";
//! let script = Script::from_str(yaml, "inline.yaml", true).unwrap();
//! let server = ScriptedModel::start(ServerConfig::new(script, "/tmp/ws")).await.unwrap();
//! // Point a CLI at server.base_url(), e.g. ANTHROPIC_BASE_URL.
//! assert!(server.base_url().starts_with("http://127.0.0.1:"));
//! assert!(server.requests().is_empty());
//! server.shutdown().await;
//! # });
//! ```

#![warn(missing_docs)]

mod anthropic;
mod classify;
mod common;
mod gemini;
mod openai_chat;
mod openai_responses;
mod play;
mod record;
mod script;
mod server;
mod stop;
mod tally;

use serde_json::Value;

pub use classify::{Classified, classify, model_call_api};
pub use record::{Api, RequestKind, RequestRecord};
pub use script::{
    HttpErrorSpec, MAX_SCRIPT_BYTES, Reply, Script, ScriptCall, ScriptError, ScriptToolCall,
};
pub use server::{Hold, HoldReason, ScriptedModel, ServerConfig, ServerError};
pub use stop::{STOPPED_ERROR, Stopper};

/// A CLI-independent action a script can ask for; an [`ActionTranslator`] turns it into
/// the tool call of one CLI (e.g. `write_file` becomes Claude Code's `Write`, Codex's
/// `apply_patch`, Gemini CLI's `write_file`).
///
/// Paths are given as written in the script after `{{workspace}}` substitution: they
/// may be absolute or relative to the workspace; the translator decides how to pass them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NeutralAction {
    /// Create or overwrite a file.
    WriteFile {
        /// File path, absolute or relative to the workspace.
        path: String,
        /// The whole new content, UTF-8 text.
        content: String,
    },
    /// Run a command in a shell, in the workspace.
    Shell {
        /// The shell command line.
        command: String,
    },
    /// Read a file.
    ReadFile {
        /// File path, absolute or relative to the workspace.
        path: String,
    },
}

impl NeutralAction {
    /// The script key of the action: `write_file`, `shell` or `read_file`.
    pub fn key(&self) -> &'static str {
        match self {
            NeutralAction::WriteFile { .. } => "write_file",
            NeutralAction::Shell { .. } => "shell",
            NeutralAction::ReadFile { .. } => "read_file",
        }
    }
}

/// One tool call as it goes on the wire (before the API-specific framing).
///
/// This is what a translator returns, rather than a `(name, arguments)` tuple, so that a
/// CLI whose tool is free-form (Codex's `apply_patch`) can get a `Custom` call.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCallSpec {
    /// A function call.
    Function {
        /// Tool name as the CLI declares it (e.g. `Bash`, `exec_command`).
        name: String,
        /// The arguments, a JSON object.
        arguments: Value,
    },
    /// A free-form (custom) tool call carrying raw text: a Responses `custom_tool_call`
    /// item; the other APIs receive it as a function call with arguments `{"input": input}`.
    Custom {
        /// Tool name (e.g. `apply_patch`).
        name: String,
        /// The raw text input (e.g. a `*** Begin Patch` … `*** End Patch` patch).
        input: String,
    },
}

impl ToolCallSpec {
    /// The tool name.
    pub fn name(&self) -> &str {
        match self {
            ToolCallSpec::Function { name, .. } | ToolCallSpec::Custom { name, .. } => name,
        }
    }
}

/// Translates [`NeutralAction`]s into one CLI's tool calls. Implemented for any
/// `Fn(&NeutralAction, &str) -> ToolCallSpec + Send + Sync + 'static` closure too.
pub trait ActionTranslator: Send + Sync + 'static {
    /// This CLI's tool call for `action`; `workspace` is the absolute workspace path
    /// ([`ServerConfig::workspace`]). `{{workspace}}` is already substituted in `action`.
    fn translate(&self, action: &NeutralAction, workspace: &str) -> ToolCallSpec;
}

impl<F> ActionTranslator for F
where
    F: Fn(&NeutralAction, &str) -> ToolCallSpec + Send + Sync + 'static,
{
    fn translate(&self, action: &NeutralAction, workspace: &str) -> ToolCallSpec {
        self(action, workspace)
    }
}
