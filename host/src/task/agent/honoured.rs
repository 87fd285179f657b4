//! Which agent fields a harness honours: the fields ([`AgentField`], with their
//! task-file keys), what a harness can do ([`HarnessCapabilities`]), the fields a task
//! sets ([`AgentSpec::fields_set`]), and the load-time check that refuses a field the
//! chosen harness does not honour ([`check_agent_fields`], [`UnhonouredField`]).

use super::{AgentSpec, SystemPromptMode};
use serde::Serialize;
use std::collections::BTreeSet;

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
    #[cfg(test)]
    pub(crate) fn harness_0_1_0() -> HarnessCapabilities {
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
    /// The agent fields this task sets. `plugins` count as [`AgentField::Plugins`]; a
    /// harness without plugins but with skills honours them as [`AgentField::Skills`]
    /// (see [`check_agent_fields`]).
    pub(crate) fn fields_set(&self) -> BTreeSet<AgentField> {
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
}

/// Checks the task's agent fields against what `harness` honours. Plugins pass on a
/// harness that honours plugins, or skills (it gets the skills the plugins hold).
pub(crate) fn check_agent_fields(
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
