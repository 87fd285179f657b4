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
        /// Whether the stream had shown the failed attempt as a model call (the last one
        /// started on this thread): the host un-counts it. `false`: nothing to un-count.
        call_started: bool,
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

/// The diagnostic (kind, message) an events@0.2.0-only event becomes for a 0.1.0 host:
/// `model_call_retried` or `unreported_<kind>`; `None` for any other event.
pub fn down_to_diagnostic(event: &Event) -> Option<(String, String)> {
    match event {
        Event::ModelCallRetried {
            abandoned_message_id,
            attempt,
            delay_ms,
            status,
            error,
            announced,
            ..
        } => {
            let mut message = String::from(if *announced {
                "the CLI retried a model request"
            } else {
                "a model request was abandoned and retried (inferred from the stream)"
            });
            if let Some(id) = abandoned_message_id {
                message.push_str(&format!("; abandoned attempt `{id}` is not a model call"));
            }
            if let Some(n) = attempt {
                message.push_str(&format!("; attempt {n}"));
            }
            if let Some(ms) = delay_ms {
                message.push_str(&format!("; waiting {ms} ms"));
            }
            if let Some(s) = status {
                message.push_str(&format!("; HTTP {s}"));
            }
            if let Some(e) = error {
                message.push_str(&format!("; error: {e}"));
            }
            Some(("model_call_retried".into(), message))
        }
        Event::Unreported {
            kind,
            call_id,
            reason,
        } => {
            let kind = match kind {
                UnreportedKind::Usage => "usage",
                UnreportedKind::Cost => "cost",
                UnreportedKind::SubagentWork => "subagent_work",
            };
            let message = match call_id {
                Some(id) => format!("{reason} (call `{id}`)"),
                None => reason.clone(),
            };
            Some((format!("unreported_{kind}"), message))
        }
        _ => None,
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

/// The task's `agent` section, as the host validated it. The fields after `as_root` are
/// new in harness@0.2.0; a 0.1.0 component sees none of them (the host refuses a task that
/// sets one for it).
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
    /// Where `system_prompt` goes (coder_eval `system_prompt_mode`).
    pub system_prompt_mode: SystemPromptMode,
    /// Reasoning effort as the CLI names it (coder_eval `thinking_level`).
    pub thinking_level: Option<String>,
    /// A model variant (coder_eval `variant`; OpenCode `--variant`).
    pub model_variant: Option<String>,
    /// Run without the CLI's own plugins and extra context (coder_eval `pure`).
    pub pure: bool,
    /// Settings files the CLI loads (`user`, `project`, `local`); `None` = its default.
    pub setting_sources: Option<Vec<String>>,
    /// A settings object for the CLI, as JSON (coder_eval `claude_settings`).
    pub settings_json: Option<String>,
    /// Absolute paths of local plugin folders.
    pub plugin_dirs: Vec<String>,
    /// Absolute paths of skill folders (each holds a `SKILL.md`).
    pub skill_dirs: Vec<String>,
    /// coder_eval `sdk_options` as a JSON object, passed on where the CLI has a flag.
    pub sdk_options_json: Option<String>,
    /// Start a session with a known id, or resume one; `None` = a fresh session.
    pub session: Option<SessionRequest>,
}

/// Where the agent's `system_prompt` goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemPromptMode {
    /// After the CLI's own system prompt.
    #[default]
    Append,
    /// Instead of the CLI's own system prompt.
    Replace,
}

/// A session to start or resume (time-budget mode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionRequest {
    /// Start a new session with this id.
    Start(String),
    /// Resume this earlier session, in the same workspace and HOME.
    Resume(String),
}

/// An agent setting, for declaring which ones a harness honours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentField {
    Model,
    AllowedTools,
    DisallowedTools,
    PermissionMode,
    SystemPrompt,
    /// `system_prompt_mode: replace` (appending comes with `SystemPrompt`).
    SystemPromptReplace,
    ThinkingLevel,
    ModelVariant,
    Pure,
    SettingSources,
    Settings,
    Plugins,
    Skills,
    SdkOptions,
}

impl AgentField {
    /// The fields set in `settings` (`SystemPromptReplace` when the mode is `replace` and a
    /// prompt is given), in declaration order. `model_base_url`, `api_key`, `as_root` and
    /// `session` are the host's, not the task's, and have no field here.
    pub fn used_by(settings: &AgentSettings) -> Vec<AgentField> {
        let s = settings;
        [
            (AgentField::Model, s.model.is_some()),
            (AgentField::AllowedTools, !s.allowed_tools.is_empty()),
            (AgentField::DisallowedTools, !s.disallowed_tools.is_empty()),
            (AgentField::PermissionMode, s.permission_mode.is_some()),
            (AgentField::SystemPrompt, s.system_prompt.is_some()),
            (
                AgentField::SystemPromptReplace,
                s.system_prompt.is_some() && s.system_prompt_mode == SystemPromptMode::Replace,
            ),
            (AgentField::ThinkingLevel, s.thinking_level.is_some()),
            (AgentField::ModelVariant, s.model_variant.is_some()),
            (AgentField::Pure, s.pure),
            (AgentField::SettingSources, s.setting_sources.is_some()),
            (AgentField::Settings, s.settings_json.is_some()),
            (AgentField::Plugins, !s.plugin_dirs.is_empty()),
            (AgentField::Skills, !s.skill_dirs.is_empty()),
            (AgentField::SdkOptions, s.sdk_options_json.is_some()),
        ]
        .into_iter()
        .filter_map(|(f, set)| set.then_some(f))
        .collect()
    }
}

/// How the totals a CLI reports (its final result's cost and usage) accumulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TotalsScope {
    /// Each report covers one model call; the host sums them.
    PerCall,
    /// A running total for one process of the CLI; a resumed process starts from zero.
    PerProcess,
    /// A running total for the whole session, across resumed processes.
    PerSession,
}

/// What a harness can do, checked against a task at load time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// The agent settings the harness honours.
    pub agent_fields: Vec<AgentField>,
    /// Whether `SessionRequest::Resume` works.
    pub resume: bool,
    /// Whether the stream reports cost in USD.
    pub reports_cost: bool,
    /// Whether the stream reports usage once per model call.
    pub usage_per_call: bool,
}

impl Capabilities {
    /// The agent fields `settings` sets that these capabilities do not honour, so a plan
    /// can refuse them by name (`Err` lists them, kebab-case, comma-separated).
    pub fn check(&self, settings: &AgentSettings) -> Result<(), String> {
        let missing: Vec<String> = AgentField::used_by(settings)
            .into_iter()
            .filter(|f| !self.agent_fields.contains(f))
            .map(|f| {
                serde_json::to_value(f)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default()
            })
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "this harness does not honour the agent field(s) {}",
                missing.join(", ")
            ))
        }
    }
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
    /// Files the CLI writes that the reducer needs, read after it exits and handed to
    /// [`Reducer::side_file`](crate::Reducer::side_file); `{{home}}`/`{{workspace}}`
    /// allowed. New in harness@0.2.0 (a 0.1.0 component names none).
    pub side_files: Vec<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_names_each_field_set_but_not_honoured() {
        let caps = Capabilities {
            agent_fields: vec![AgentField::Model, AgentField::SystemPrompt],
            resume: false,
            reports_cost: false,
            usage_per_call: false,
        };
        let plain = AgentSettings {
            model: Some("m".into()),
            system_prompt: Some("p".into()),
            // The host's own settings are no agent fields.
            model_base_url: Some("http://127.0.0.1:1".into()),
            as_root: true,
            session: Some(SessionRequest::Start("s".into())),
            ..Default::default()
        };
        assert_eq!(caps.check(&plain), Ok(()));
        let more = AgentSettings {
            system_prompt_mode: SystemPromptMode::Replace,
            pure: true,
            setting_sources: Some(Vec::new()),
            ..plain
        };
        assert_eq!(
            caps.check(&more),
            Err(
                "this harness does not honour the agent field(s) system-prompt-replace, pure, \
                 setting-sources"
                    .into()
            )
        );
        // `replace` without a prompt asks for nothing.
        let no_prompt = AgentSettings {
            system_prompt_mode: SystemPromptMode::Replace,
            ..Default::default()
        };
        assert!(AgentField::used_by(&no_prompt).is_empty());
    }

    #[test]
    fn new_events_go_down_as_diagnostics() {
        let retry = Event::ModelCallRetried {
            call_started: true,
            abandoned_message_id: Some("m1".into()),
            parent_call_id: None,
            attempt: Some(1),
            delay_ms: Some(600),
            status: Some(529),
            error: Some("overloaded".into()),
            announced: true,
        };
        assert_eq!(
            down_to_diagnostic(&retry),
            Some((
                "model_call_retried".into(),
                "the CLI retried a model request; abandoned attempt `m1` is not a model call; \
                 attempt 1; waiting 600 ms; HTTP 529; error: overloaded"
                    .into()
            ))
        );
        let gap = Event::Unreported {
            kind: UnreportedKind::SubagentWork,
            call_id: Some("t1".into()),
            reason: "nothing printed".into(),
        };
        assert_eq!(
            down_to_diagnostic(&gap),
            Some((
                "unreported_subagent_work".into(),
                "nothing printed (call `t1`)".into()
            ))
        );
        assert_eq!(down_to_diagnostic(&Event::diagnostic("x", "y", b"")), None);
    }
}
