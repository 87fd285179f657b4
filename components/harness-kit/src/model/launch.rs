//! The launch types of `wit/harness@0.2.0`: the task's agent settings, a harness's
//! capabilities, and the launch plan it makes.

use serde::{Deserialize, Serialize};

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
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunLimits {
    pub max_turns: Option<u32>,
    pub max_tool_calls: Option<u32>,
    /// ms
    pub turn_timeout_ms: Option<u64>,
    /// The token and USD budgets (harness@0.2.0; a 0.1.0 component never sees them).
    pub budgets: BudgetLimits,
}

/// The task's token and USD budgets (WIT `budgets`); `None` = no budget. The host enforces
/// each from the stream; a plan may also hand one to the CLI (and list it as native).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BudgetLimits {
    /// tokens
    pub max_input_tokens: Option<u64>,
    /// tokens
    pub max_output_tokens: Option<u64>,
    /// tokens
    pub max_total_tokens: Option<u64>,
    /// USD
    pub max_usd: Option<f64>,
    pub count_cached_input: bool,
    pub count_cache_creation: bool,
}

/// A run limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    MaxTurns,
    MaxToolCalls,
    TurnTimeout,
    /// harness@0.2.0 on.
    MaxInputTokens,
    /// harness@0.2.0 on.
    MaxOutputTokens,
    /// harness@0.2.0 on.
    MaxTotalTokens,
    /// harness@0.2.0 on.
    MaxUsd,
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
    /// The CLI refuses some blocking shell commands (a leading `sleep N` followed by more)
    /// without running them: the call ends denied (it never ran), so it is no command.
    /// New in harness@0.2.0.
    BlockingShellRefused,
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
