//! The normalized event model and the launch types, mirroring `wit/events@0.2.0` and
//! `wit/harness@0.2.0` field by field (see there for each field's meaning). The 0.1.0
//! contracts are a subset: [`ToolStatus::Denied`], [`Event::ModelCallRetried`] and
//! [`Event::Unreported`] are new in events@0.2.0, and the 0.1.0 binding
//! (`export_harness_v0_1!`) converts them down (denied → error, the new events left out).

use serde::{Deserialize, Serialize};

/// Token usage of one model call, in tokens; the four counters are disjoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Ok,
    Error,
    Unknown,
    /// Never executed: the CLI refused it (a permission rule, a declined approval, a
    /// sandbox policy). Not a command the agent ran. New in events@0.2.0.
    Denied,
}

/// What a stream left out (`coder-eval:events/types@0.2.0.unreported-kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnreportedKind {
    /// Token usage of a model call or a step.
    Usage,
    /// Cost in USD.
    Cost,
    /// The events of a sub-agent (its model calls and tool calls).
    SubagentWork,
}

/// One normalized event (`coder-eval:events/types@0.2.0.event`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    SessionStarted {
        session_id: Option<String>,
        cli_version: Option<String>,
        model: Option<String>,
        tools: Vec<String>,
    },
    ModelCallStarted {
        message_id: Option<String>,
        parent_call_id: Option<String>,
    },
    AssistantMessage {
        message_id: String,
        parent_call_id: Option<String>,
        text: String,
        usage: Option<Usage>,
        cost_usd: Option<f64>,
    },
    ToolCallStarted {
        call_id: String,
        name: String,
        input_json: String,
        parent_call_id: Option<String>,
    },
    ToolCallFinished {
        call_id: String,
        status: ToolStatus,
        output_excerpt: String,
        exit_code: Option<i32>,
        /// ms by the CLI's clock, when it reports the tool's duration.
        cli_duration_ms: Option<u64>,
    },
    FinalResult {
        success: bool,
        error_kind: Option<String>,
        error_message: Option<String>,
        max_turns_reached: bool,
        num_turns: Option<u32>,
        cost_usd: Option<f64>,
        duration_ms: Option<u64>,
        text: Option<String>,
        usage: Option<Usage>,
    },
    Diagnostic {
        kind: String,
        message: String,
        raw: String,
    },
    /// A model call was retried, or an attempt the stream had begun was abandoned for
    /// another: the abandoned attempt is not a model call. New in events@0.2.0.
    ModelCallRetried {
        /// The abandoned attempt's message id, when the stream announced one.
        abandoned_message_id: Option<String>,
        parent_call_id: Option<String>,
        /// The CLI's attempt number (1 = the first retry), when reported.
        attempt: Option<u32>,
        /// ms the CLI said it would wait, when reported.
        delay_ms: Option<u64>,
        /// HTTP status of the failed attempt, when reported.
        status: Option<u32>,
        /// The error as the CLI reports it.
        error: Option<String>,
        /// `true` when the CLI announced the retry; `false` when the reducer inferred it.
        announced: bool,
    },
    /// Work the stream shows happened but whose figures it does not carry: the totals
    /// it would feed are partial. New in events@0.2.0.
    Unreported {
        kind: UnreportedKind,
        /// The tool call (sub-agent) or message the gap belongs to, when known.
        call_id: Option<String>,
        /// What is missing and why, for people.
        reason: String,
    },
}

impl Event {
    /// A diagnostic event; `raw` is kept verbatim (lossy UTF-8) up to 64 KiB.
    pub fn diagnostic(kind: &str, message: impl Into<String>, raw: &[u8]) -> Event {
        const KEEP: usize = 64 * 1024;
        let mut raw_text = String::from_utf8_lossy(&raw[..raw.len().min(KEEP)]).into_owned();
        if raw.len() > KEEP {
            raw_text.push_str(&format!("… [{} bytes in all]", raw.len()));
        }
        Event::Diagnostic {
            kind: kind.to_string(),
            message: message.into(),
            raw: raw_text,
        }
    }
}

/// Settings for one reducer instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReducerConfig {
    /// Bytes of a tool output kept in `output_excerpt`.
    pub excerpt_bytes: u32,
}

impl Default for ReducerConfig {
    fn default() -> Self {
        ReducerConfig {
            excerpt_bytes: 4096,
        }
    }
}

/// The task's `agent` section, as the host validated it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentSettings {
    pub model: Option<String>,
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    pub permission_mode: Option<String>,
    pub system_prompt: Option<String>,
    pub model_base_url: Option<String>,
    pub api_key: Option<String>,
    pub as_root: bool,
}

/// The task's `run_limits`; `None` = no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunLimits {
    pub max_turns: Option<u32>,
    pub max_tool_calls: Option<u32>,
    /// ms
    pub turn_timeout_ms: Option<u64>,
}

/// A run limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    MaxTurns,
    MaxToolCalls,
    TurnTimeout,
}

/// A difference from other harnesses that a CLI imposes (see the WIT `caveat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Caveat {
    /// One reply's tool calls run one after another and look like separate replies.
    ParallelCallsSerialized,
    /// A failing shell command can be reported as a success.
    ShellFailuresUnreported,
    /// Tools appear only once finished; their start comes from the CLI's duration.
    ToolStartFromCliDuration,
    /// A tool's start reaches the stream late: its interval is short by that lag.
    ToolStartReportedLate,
}

/// How the prompt reaches the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptDelivery {
    /// One argv element inserted at this index.
    ArgvAt(u32),
    /// Written to stdin, then stdin is closed.
    Stdin,
}

/// A file the host writes under the private HOME before the CLI starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    pub path: String,
    pub content: String,
}

/// What one exit code of the CLI means, as the CLI documents it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitCode {
    /// The process exit code.
    pub code: i32,
    /// A short snake_case name for the failure: `auth_error`, `config_error`, ...
    pub kind: String,
    /// One line for people.
    pub meaning: String,
}

/// Everything the host needs to start the CLI for one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchPlan {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub files: Vec<ConfigFile>,
    pub prompt: PromptDelivery,
    pub native_limits: Vec<LimitKind>,
    pub unsupported_limits: Vec<LimitKind>,
    pub caveats: Vec<Caveat>,
    /// The CLI's documented exit codes (empty when it documents none).
    pub exit_codes: Vec<ExitCode>,
}

/// A scripted-model action every harness understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NeutralAction {
    WriteFile { path: String, content: String },
    Shell { command: String },
    ReadFile { path: String },
}

/// A tool call in one CLI's own terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub name: String,
    /// A JSON object.
    pub arguments_json: String,
}
