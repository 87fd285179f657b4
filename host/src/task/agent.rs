//! The `agent:` section of a task file, and which of its fields a harness honours.
//!
//! The fields beyond harness@0.1.0's (`plugins`, `setting_sources`, `claude_settings`,
//! `system_prompt_file`, `system_prompt_mode`, `thinking_level`, `variant`, `pure`,
//! `sdk_options`) are coder_eval's (v0.12, `src/coder_eval/models/agent_config.py`). They
//! are parsed, resolved (paths made absolute, `$VAR` expanded, files read) and kept typed
//! in [`AgentSpec`], ready for a harness@0.2.0 launch plan (`agent-settings` in
//! `wit/harness@0.2.0/harness.wit`). Whether a harness honours a field is its
//! [`HarnessCapabilities`]; a task that sets a field the chosen harness does not honour is
//! refused at load ([`check_agent_fields`]), naming the field and the harness.
//!
//! Here: the section's types as the task file spells them. Which fields a harness honours
//! (the fields, the capabilities, the check) is in `honoured.rs`; resolving paths and
//! files against the task folder is in `resolve.rs`. `$VAR` expansion, shared with the
//! `sandbox:` section, is in [`super::expand`]; the unit tests are in `tests`.

mod honoured;
mod resolve;
#[cfg(test)]
mod tests;

pub use honoured::AgentField;
pub(crate) use honoured::{HarnessCapabilities, UnhonouredField, check_agent_fields};

use super::time_budget::{Requested, TimeBudget};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// `agent:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// The harness (`claude-code`, `codex`, `pi`, `opencode`, `gemini-cli`, `qwen-code`,
    /// `kilo`, `cline`, `copilot`, `letta`, `grok-cli`, `continue`, or one a `--components` folder adds).
    #[serde(default, rename = "type")]
    pub harness: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub allowed_tools: Vec<String>,
    #[serde(default)]
    pub disallowed_tools: Vec<String>,
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// The system prompt text; `system_prompt_file` is read into it at load.
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// A model script to play instead of a real model (relative to the task file).
    #[serde(default)]
    pub scripted_model: Option<PathBuf>,
    /// A file holding the system prompt (relative to the task file); read into
    /// `system_prompt` at load. Exclusive with `system_prompt`.
    #[serde(default)]
    pub system_prompt_file: Option<PathBuf>,
    /// Whether `system_prompt` is appended to the CLI's own (`append`, coder_eval's
    /// default) or replaces it (`replace`, which needs a prompt).
    #[serde(default)]
    pub(crate) system_prompt_mode: Option<SystemPromptMode>,
    /// Local plugin folders (`[{type: local, path}]`). `$VAR` / `${VAR}` in `path` expand
    /// from the host environment; a relative path is relative to the task file. Resolved
    /// to absolute, existing folders at load.
    #[serde(default)]
    pub plugins: Vec<PluginSpec>,
    /// Which settings files Claude Code loads (`user`, `project`, `local`); `[]` = none.
    #[serde(default)]
    pub(crate) setting_sources: Option<Vec<SettingSource>>,
    /// Claude Code settings (`--settings`): an object, or a path to a JSON file relative
    /// to the task file. Resolved at load to the JSON object.
    #[serde(default)]
    pub claude_settings: Option<ClaudeSettings>,
    /// Reasoning effort (Pi `--thinking`): `off`, `minimal`, `low`, `medium`, `high`,
    /// `xhigh`, `max`.
    #[serde(default)]
    pub thinking_level: Option<ThinkingLevel>,
    /// A model variant (OpenCode `--variant`, e.g. `high`).
    #[serde(default)]
    pub variant: Option<String>,
    /// Run without the CLI's own plugins (OpenCode `--pure`).
    #[serde(default)]
    pub pure: Option<bool>,
    /// Options passed through to the CLI where it has a flag for them (coder_eval passes
    /// them to the Claude Agent SDK), e.g. `{effort: high}`.
    #[serde(default)]
    pub sdk_options: BTreeMap<String, serde_json::Value>,
    /// Ignore-pattern overrides for judge sub-agent workspace copies (coder_eval); kept
    /// for the judges, not used by the agent run.
    #[serde(default, alias = "additional_ignore_patterns")]
    pub ignore_patterns: Vec<String>,
    /// `iterations` (default: one session) or `time` (sessions resumed until the time
    /// budget is spent; see [`super::time_budget`]).
    #[serde(default)]
    pub(crate) budget_mode: Option<super::time_budget::BudgetMode>,
    /// The time budget of `budget_mode: time`, s (else `run_limits.task_timeout`).
    #[serde(default, deserialize_with = "super::time_budget::timeout_seconds")]
    pub timeout_seconds: Option<std::time::Duration>,
    /// Time mode: resume only while at least this much is left, s (default 600).
    #[serde(default, deserialize_with = "super::time_budget::min_resume_seconds")]
    pub min_resume_seconds: Option<std::time::Duration>,
    /// Time mode: sessions at most, the first included (default 20).
    #[serde(default, deserialize_with = "super::time_budget::max_sessions")]
    pub max_sessions: Option<u32>,
    /// Legacy placement of `run_limits.max_turns` (mapped there with a warning).
    #[serde(default)]
    pub max_turns: Option<u32>,
    /// Legacy placement of `run_limits.turn_timeout` (mapped there with a warning).
    #[serde(default, deserialize_with = "crate::limits::turn_timeout")]
    pub turn_timeout: Option<std::time::Duration>,
}

/// `system_prompt_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SystemPromptMode {
    /// After the CLI's own system prompt.
    Append,
    /// Instead of the CLI's own system prompt.
    Replace,
}

/// `setting_sources` entries (Claude Code `--setting-sources`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SettingSource {
    User,
    Project,
    Local,
}

/// `thinking_level` (Pi 0.87 `--thinking` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingLevel {
    Off,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
    Max,
}

/// One `plugins` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSpec {
    /// Only `local` exists.
    #[serde(rename = "type")]
    pub kind: PluginKind,
    /// The plugin folder; absolute after load.
    pub path: String,
}

/// `plugins[].type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PluginKind {
    Local,
}

/// `claude_settings`: inline object or a file path.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ClaudeSettings {
    /// A path to a JSON file (relative to the task file).
    Path(String),
    /// The settings object itself.
    Object(serde_json::Map<String, serde_json::Value>),
}

impl AgentSpec {
    /// The time budget of a `budget_mode: time` task, `None` in iterations mode
    /// (`task_timeout` = the run limit; errors: [`Requested::resolve`]).
    pub fn time_budget(
        &self,
        task_timeout: Option<Duration>,
    ) -> Result<Option<TimeBudget>, String> {
        Requested {
            mode: self.budget_mode,
            timeout: self.timeout_seconds,
            min_resume: self.min_resume_seconds,
            max_sessions: self.max_sessions,
        }
        .resolve(task_timeout)
    }
}
