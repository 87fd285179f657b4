//! What a harness can do, from its component: harness@0.2.0 `describe()`, or the fixed
//! 0.1.0 list for a component that speaks harness@0.1.0. A task is checked against it at
//! load ([`check_task`]): its agent fields ([`check_agent_fields`]) and `budget_mode: time`
//! (which needs a harness that can resume a session).

use crate::runtime::harness::Launcher;
use crate::runtime::{ComponentError, LoadedComponent};
use crate::task::agent::{AgentField, HarnessCapabilities, UnhonouredField, check_agent_fields};
use crate::task::time_budget::BudgetMode;
use crate::task::{AgentSpec, Task};

/// A harness's capabilities and the sentence naming its contract ("its component speaks
/// harness@0.2.0").
#[derive(Debug, Clone)]
pub struct Described {
    pub caps: HarnessCapabilities,
    pub contract: String,
}

/// Asks the component what it can do (instantiating it once).
pub fn describe(loaded: &LoadedComponent) -> Result<Described, ComponentError> {
    let mut launcher = Launcher::new(loaded)?;
    describe_with(&mut launcher)
}

/// [`describe`] on an instance already made.
pub fn describe_with(launcher: &mut Launcher) -> Result<Described, ComponentError> {
    let contract = format!("its component speaks harness@{}", launcher.version());
    let caps = launcher.describe()?;
    Ok(Described {
        caps: HarnessCapabilities {
            agent_fields: caps.agent_fields.into_iter().map(field).collect(),
            resume: caps.resume,
            reports_cost: caps.reports_cost,
            usage_per_call: caps.usage_per_call,
        },
        contract,
    })
}

fn field(f: harness_kit::AgentField) -> AgentField {
    use harness_kit::AgentField as K;
    match f {
        K::Model => AgentField::Model,
        K::AllowedTools => AgentField::AllowedTools,
        K::DisallowedTools => AgentField::DisallowedTools,
        K::PermissionMode => AgentField::PermissionMode,
        K::SystemPrompt => AgentField::SystemPrompt,
        K::SystemPromptReplace => AgentField::SystemPromptReplace,
        K::ThinkingLevel => AgentField::ThinkingLevel,
        K::ModelVariant => AgentField::ModelVariant,
        K::Pure => AgentField::Pure,
        K::SettingSources => AgentField::SettingSources,
        K::Settings => AgentField::Settings,
        K::Plugins => AgentField::Plugins,
        K::Skills => AgentField::Skills,
        K::SdkOptions => AgentField::SdkOptions,
    }
}

/// Why a task cannot run on a harness, found at load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unfit {
    /// An agent field the harness does not honour.
    #[error(transparent)]
    Field(#[from] UnhonouredField),
    /// `budget_mode: time` on a harness that cannot resume a session.
    #[error(
        "`agent.budget_mode: time` needs a harness that can resume a session, and the \
         `{harness}` harness cannot ({contract}); use `budget_mode: iterations`, or run on a \
         harness with resume (`coder-eval harnesses --parity` lists them)"
    )]
    NoResume { harness: String, contract: String },
}

/// Checks a task's agent section against what `harness` can do.
pub(crate) fn check_task(task: &Task, harness: &str, described: &Described) -> Result<(), Unfit> {
    check_agent(&task.agent, harness, described)
}

/// [`check_task`] on the agent section alone.
pub(crate) fn check_agent(
    agent: &AgentSpec,
    harness: &str,
    described: &Described,
) -> Result<(), Unfit> {
    check_agent_fields(agent, harness, &described.caps, &described.contract)?;
    if agent.budget_mode == Some(BudgetMode::Time) && !described.caps.resume {
        // harness@0.1.0 has no resume form at all; a later component says it has none.
        let contract = if described.contract.contains("@0.1.") {
            format!("{}, which has no resume form", described.contract)
        } else {
            format!("{}, and declares no resume form", described.contract)
        };
        return Err(Unfit::NoResume {
            harness: harness.to_string(),
            contract,
        });
    }
    Ok(())
}
