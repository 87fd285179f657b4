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
//! `$VAR` expansion, shared with the `sandbox:` section, is in [`super::expand`]; the unit
//! tests are in `tests`.

#[cfg(test)]
mod tests;

use super::expand::expand_env;
use super::time_budget::{Requested, TimeBudget};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `agent:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// The harness (`claude-code`, `codex`, `pi`, `opencode`, `gemini-cli`, `qwen-code`,
    /// `kilo`, `cline`, `copilot`, or one a `--components` folder adds).
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
    pub system_prompt_mode: Option<SystemPromptMode>,
    /// Local plugin folders (`[{type: local, path}]`). `$VAR` / `${VAR}` in `path` expand
    /// from the host environment; a relative path is relative to the task file. Resolved
    /// to absolute, existing folders at load.
    #[serde(default)]
    pub plugins: Vec<PluginSpec>,
    /// Which settings files Claude Code loads (`user`, `project`, `local`); `[]` = none.
    #[serde(default)]
    pub setting_sources: Option<Vec<SettingSource>>,
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
    pub budget_mode: Option<super::time_budget::BudgetMode>,
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
pub enum SystemPromptMode {
    /// After the CLI's own system prompt.
    Append,
    /// Instead of the CLI's own system prompt.
    Replace,
}

/// `setting_sources` entries (Claude Code `--setting-sources`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingSource {
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

/// An agent setting, for declaring which ones a harness honours (WIT
/// `harness@0.2.0` `agent-field`; the same names, snake_case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentField {
    Model,
    AllowedTools,
    DisallowedTools,
    PermissionMode,
    SystemPrompt,
    /// `system_prompt_mode: replace`.
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
    /// Every field, in declaration order.
    pub const ALL: [AgentField; 14] = [
        AgentField::Model,
        AgentField::AllowedTools,
        AgentField::DisallowedTools,
        AgentField::PermissionMode,
        AgentField::SystemPrompt,
        AgentField::SystemPromptReplace,
        AgentField::ThinkingLevel,
        AgentField::ModelVariant,
        AgentField::Pure,
        AgentField::SettingSources,
        AgentField::Settings,
        AgentField::Plugins,
        AgentField::Skills,
        AgentField::SdkOptions,
    ];

    /// The task-file key that sets it (`agent.<key>`).
    pub fn task_key(self) -> &'static str {
        match self {
            AgentField::Model => "model",
            AgentField::AllowedTools => "allowed_tools",
            AgentField::DisallowedTools => "disallowed_tools",
            AgentField::PermissionMode => "permission_mode",
            AgentField::SystemPrompt => "system_prompt",
            AgentField::SystemPromptReplace => "system_prompt_mode: replace",
            AgentField::ThinkingLevel => "thinking_level",
            AgentField::ModelVariant => "variant",
            AgentField::Pure => "pure",
            AgentField::SettingSources => "setting_sources",
            AgentField::Settings => "claude_settings",
            AgentField::Plugins => "plugins",
            AgentField::Skills => "plugins (as skills)",
            AgentField::SdkOptions => "sdk_options",
        }
    }
}

/// What a harness can do (WIT `harness@0.2.0` `capabilities`, from `describe`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HarnessCapabilities {
    /// The agent settings it honours.
    pub agent_fields: BTreeSet<AgentField>,
    /// Whether a session can be resumed.
    pub resume: bool,
    /// Whether its stream reports cost in USD.
    pub reports_cost: bool,
    /// Whether its stream reports usage once per model call.
    pub usage_per_call: bool,
}

impl HarnessCapabilities {
    /// A harness@0.1.0 component: the 0.1.0 agent fields only (model, allowed_tools,
    /// disallowed_tools, permission_mode, a system prompt appended), no resume, and (as
    /// 0.1.0 cannot say) neither cost nor per-call usage promised.
    pub fn harness_0_1_0() -> HarnessCapabilities {
        HarnessCapabilities {
            agent_fields: [
                AgentField::Model,
                AgentField::AllowedTools,
                AgentField::DisallowedTools,
                AgentField::PermissionMode,
                AgentField::SystemPrompt,
            ]
            .into_iter()
            .collect(),
            resume: false,
            reports_cost: false,
            usage_per_call: false,
        }
    }
}

/// A task sets agent fields the harness does not honour.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{key} {verb} not honoured by the `{harness}` harness ({contract}); remove {pronoun}, or run \
     on a harness that honours {pronoun} (`coder-eval harnesses --parity` lists them)",
    verb = if self.fields.len() == 1 { "is" } else { "are" },
    pronoun = if self.fields.len() == 1 { "it" } else { "them" }
)]
pub struct UnhonouredField {
    /// The first field not honoured.
    pub field: AgentField,
    /// Every field not honoured, in [`AgentField`] order.
    pub fields: Vec<AgentField>,
    /// The task-file keys, quoted: "`agent.plugins`, `agent.pure`".
    pub key: String,
    pub harness: String,
    /// Which contract the harness speaks and what it honours.
    pub contract: String,
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

    /// The agent fields this task sets. `plugins` count as [`AgentField::Plugins`]; a
    /// harness without plugins but with skills honours them as [`AgentField::Skills`]
    /// (see [`check_agent_fields`]).
    pub fn fields_set(&self) -> BTreeSet<AgentField> {
        let mut set = BTreeSet::new();
        let mut add = |on: bool, f: AgentField| {
            if on {
                set.insert(f);
            }
        };
        add(self.model.is_some(), AgentField::Model);
        add(!self.allowed_tools.is_empty(), AgentField::AllowedTools);
        add(
            !self.disallowed_tools.is_empty(),
            AgentField::DisallowedTools,
        );
        add(self.permission_mode.is_some(), AgentField::PermissionMode);
        add(self.system_prompt.is_some(), AgentField::SystemPrompt);
        add(
            self.system_prompt_mode == Some(SystemPromptMode::Replace),
            AgentField::SystemPromptReplace,
        );
        add(self.thinking_level.is_some(), AgentField::ThinkingLevel);
        add(self.variant.is_some(), AgentField::ModelVariant);
        add(self.pure.is_some(), AgentField::Pure);
        add(self.setting_sources.is_some(), AgentField::SettingSources);
        add(self.claude_settings.is_some(), AgentField::Settings);
        add(!self.plugins.is_empty(), AgentField::Plugins);
        add(!self.sdk_options.is_empty(), AgentField::SdkOptions);
        set
    }

    /// The skill folders the plugins hold (`<plugin>/skills/<name>/SKILL.md`, and a
    /// plugin folder that is itself a skill), for harnesses with skills but no plugins.
    pub fn skill_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        for plugin in &self.plugins {
            let root = Path::new(&plugin.path);
            if root.join("SKILL.md").is_file() {
                dirs.push(root.to_path_buf());
            }
            if let Ok(entries) = std::fs::read_dir(root.join("skills")) {
                let mut found: Vec<PathBuf> = entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.join("SKILL.md").is_file())
                    .collect();
                found.sort();
                dirs.extend(found);
            }
        }
        dirs
    }

    /// Resolves paths and files against the task folder `dir`: plugin paths (`$VAR`
    /// expanded, must be folders), `system_prompt_file` (read into `system_prompt`),
    /// `claude_settings` given as a path (read and parsed). Errors are one sentence
    /// naming the `agent.` key.
    pub(crate) fn resolve(&mut self, dir: &Path) -> Result<(), String> {
        for (i, plugin) in self.plugins.iter_mut().enumerate() {
            let expanded = expand_env(&plugin.path)
                .map_err(|var| format!("agent.plugins[{i}].path `{}`: the environment variable `{var}` is not set (export it, or write the path)", plugin.path))?;
            let path = dir.join(&expanded);
            if !path.is_dir() {
                return Err(format!(
                    "agent.plugins[{i}].path: {} is not a folder (a local plugin is a folder holding the plugin or its skills)",
                    path.display()
                ));
            }
            plugin.path = std::path::absolute(&path)
                .unwrap_or(path)
                .display()
                .to_string();
        }
        match (&self.system_prompt, &self.system_prompt_file) {
            (Some(_), Some(_)) => {
                return Err("agent: give system_prompt or system_prompt_file, not both".into());
            }
            (None, Some(file)) => {
                let path = dir.join(file);
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("agent.system_prompt_file: {}: {e}", path.display()))?;
                self.system_prompt = Some(text);
            }
            _ => {}
        }
        // coder_eval: a blank prompt is no prompt.
        if self
            .system_prompt
            .as_deref()
            .is_some_and(|p| p.trim().is_empty())
        {
            self.system_prompt = None;
        }
        if self.system_prompt_mode == Some(SystemPromptMode::Replace)
            && self.system_prompt.is_none()
        {
            return Err(
                "agent.system_prompt_mode: `replace` needs a system_prompt (or system_prompt_file) to replace the CLI's own with".into(),
            );
        }
        if let Some(ClaudeSettings::Path(file)) = &self.claude_settings {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("agent.claude_settings: {}: {e}", path.display()))?;
            let object: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
                .map_err(|e| {
                    format!(
                        "agent.claude_settings: {} is not a JSON object: {e}",
                        path.display()
                    )
                })?;
            self.claude_settings = Some(ClaudeSettings::Object(object));
        }
        for pattern in &self.ignore_patterns {
            super::sandbox::check_ignore_pattern(pattern)
                .map_err(|e| format!("agent.ignore_patterns: {e}"))?;
        }
        Ok(())
    }
}

/// Checks the task's agent fields against what `harness` honours. Plugins pass on a
/// harness that honours plugins, or skills (it gets the skills the plugins hold).
pub fn check_agent_fields(
    agent: &AgentSpec,
    harness: &str,
    caps: &HarnessCapabilities,
    contract: &str,
) -> Result<(), UnhonouredField> {
    let missing: Vec<AgentField> = agent
        .fields_set()
        .into_iter()
        .filter(|field| match field {
            AgentField::Plugins => {
                !(caps.agent_fields.contains(&AgentField::Plugins)
                    || caps.agent_fields.contains(&AgentField::Skills))
            }
            other => !caps.agent_fields.contains(other),
        })
        .collect();
    let Some(&field) = missing.first() else {
        return Ok(());
    };
    let names: Vec<&str> = caps.agent_fields.iter().map(|f| f.task_key()).collect();
    Err(UnhonouredField {
        field,
        key: missing
            .iter()
            .map(|f| format!("`agent.{}`", f.task_key()))
            .collect::<Vec<_>>()
            .join(", "),
        fields: missing,
        harness: harness.to_string(),
        contract: format!("{contract}: it honours {}", names.join(", ")),
    })
}
