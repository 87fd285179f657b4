//! The launch types of harness@0.1.0 and @0.2.0, converted to and from the host's one
//! model (harness-kit's), and what a 0.1.0 component is taken to be able to do.

use super::bindings::exports::coder_eval::harness::launch as wl;
use super::bindings_v0_2::exports::coder_eval::harness::launch as wl2;
use harness_kit::{
    AgentField, AgentSettings, Capabilities, Caveat, ConfigFile, ExitCode, LaunchPlan, LimitKind,
    PromptDelivery, RunLimits, SessionRequest, SystemPromptMode,
};

/// What a harness@0.1.0 component can do, since it cannot say: the agent fields of 0.1.0,
/// no resume, and (not knowing) no cost or per-call usage it could promise.
pub(super) fn capabilities_v0_1() -> Capabilities {
    Capabilities {
        agent_fields: vec![
            AgentField::Model,
            AgentField::AllowedTools,
            AgentField::DisallowedTools,
            AgentField::PermissionMode,
            AgentField::SystemPrompt,
        ],
        resume: false,
        reports_cost: false,
        usage_per_call: false,
    }
}

pub(super) fn settings_v0_1(s: &AgentSettings) -> wl::AgentSettings {
    wl::AgentSettings {
        model: s.model.clone(),
        allowed_tools: s.allowed_tools.clone(),
        disallowed_tools: s.disallowed_tools.clone(),
        permission_mode: s.permission_mode.clone(),
        system_prompt: s.system_prompt.clone(),
        model_base_url: s.model_base_url.clone(),
        api_key: s.api_key.clone(),
        as_root: s.as_root,
    }
}

pub(super) fn limits_v0_1(l: &RunLimits) -> wl::RunLimits {
    wl::RunLimits {
        max_turns: l.max_turns,
        max_tool_calls: l.max_tool_calls,
        turn_timeout_ms: l.turn_timeout_ms,
    }
}

pub(super) fn plan_v0_1(p: wl::LaunchPlan) -> LaunchPlan {
    LaunchPlan {
        argv: p.argv,
        env: p.env,
        files: p
            .files
            .into_iter()
            .map(|f| ConfigFile {
                path: f.path,
                content: f.content,
            })
            .collect(),
        prompt: match p.prompt {
            wl::PromptDelivery::ArgvAt(i) => PromptDelivery::ArgvAt(i),
            wl::PromptDelivery::Stdin => PromptDelivery::Stdin,
        },
        native_limits: p.native_limits.into_iter().map(limit_kind).collect(),
        unsupported_limits: p.unsupported_limits.into_iter().map(limit_kind).collect(),
        caveats: p
            .caveats
            .into_iter()
            .map(|c| match c {
                wl::Caveat::ParallelCallsSerialized => Caveat::ParallelCallsSerialized,
                wl::Caveat::ShellFailuresUnreported => Caveat::ShellFailuresUnreported,
                wl::Caveat::ToolStartFromCliDuration => Caveat::ToolStartFromCliDuration,
                wl::Caveat::ToolStartReportedLate => Caveat::ToolStartReportedLate,
            })
            .collect(),
        exit_codes: p
            .exit_codes
            .into_iter()
            .map(|e| ExitCode {
                code: e.code,
                kind: e.kind,
                meaning: e.meaning,
            })
            .collect(),
        // harness@0.1.0 has no side files.
        side_files: Vec::new(),
    }
}

pub(super) fn limit_kind(kind: wl::LimitKind) -> LimitKind {
    match kind {
        wl::LimitKind::MaxTurns => LimitKind::MaxTurns,
        wl::LimitKind::MaxToolCalls => LimitKind::MaxToolCalls,
        wl::LimitKind::TurnTimeout => LimitKind::TurnTimeout,
    }
}

pub(super) fn settings_v0_2(s: &AgentSettings) -> wl2::AgentSettings {
    wl2::AgentSettings {
        model: s.model.clone(),
        allowed_tools: s.allowed_tools.clone(),
        disallowed_tools: s.disallowed_tools.clone(),
        permission_mode: s.permission_mode.clone(),
        system_prompt: s.system_prompt.clone(),
        model_base_url: s.model_base_url.clone(),
        api_key: s.api_key.clone(),
        as_root: s.as_root,
        system_prompt_mode: match s.system_prompt_mode {
            SystemPromptMode::Append => wl2::SystemPromptMode::Append,
            SystemPromptMode::Replace => wl2::SystemPromptMode::Replace,
        },
        thinking_level: s.thinking_level.clone(),
        model_variant: s.model_variant.clone(),
        pure: s.pure,
        setting_sources: s.setting_sources.clone(),
        settings_json: s.settings_json.clone(),
        plugin_dirs: s.plugin_dirs.clone(),
        skill_dirs: s.skill_dirs.clone(),
        sdk_options_json: s.sdk_options_json.clone(),
        session: s.session.clone().map(|r| match r {
            SessionRequest::Start(id) => wl2::SessionRequest::Start(id),
            SessionRequest::Resume(id) => wl2::SessionRequest::Resume(id),
        }),
    }
}

pub(super) fn limits_v0_2(l: &RunLimits) -> wl2::RunLimits {
    let b = l.budgets;
    wl2::RunLimits {
        max_turns: l.max_turns,
        max_tool_calls: l.max_tool_calls,
        turn_timeout_ms: l.turn_timeout_ms,
        budgets: wl2::Budgets {
            max_input_tokens: b.max_input_tokens,
            max_output_tokens: b.max_output_tokens,
            max_total_tokens: b.max_total_tokens,
            max_usd: b.max_usd,
            count_cached_input: b.count_cached_input,
            count_cache_creation: b.count_cache_creation,
        },
    }
}

pub(super) fn plan_v0_2(p: wl2::LaunchPlan) -> LaunchPlan {
    LaunchPlan {
        argv: p.argv,
        env: p.env,
        files: p
            .files
            .into_iter()
            .map(|f| ConfigFile {
                path: f.path,
                content: f.content,
            })
            .collect(),
        prompt: match p.prompt {
            wl2::PromptDelivery::ArgvAt(i) => PromptDelivery::ArgvAt(i),
            wl2::PromptDelivery::Stdin => PromptDelivery::Stdin,
        },
        native_limits: p.native_limits.into_iter().map(limit_kind_v0_2).collect(),
        unsupported_limits: p
            .unsupported_limits
            .into_iter()
            .map(limit_kind_v0_2)
            .collect(),
        caveats: p
            .caveats
            .into_iter()
            .map(|c| match c {
                wl2::Caveat::ParallelCallsSerialized => Caveat::ParallelCallsSerialized,
                wl2::Caveat::ShellFailuresUnreported => Caveat::ShellFailuresUnreported,
                wl2::Caveat::ToolStartFromCliDuration => Caveat::ToolStartFromCliDuration,
                wl2::Caveat::ToolStartReportedLate => Caveat::ToolStartReportedLate,
                wl2::Caveat::BlockingShellRefused => Caveat::BlockingShellRefused,
            })
            .collect(),
        exit_codes: p
            .exit_codes
            .into_iter()
            .map(|e| ExitCode {
                code: e.code,
                kind: e.kind,
                meaning: e.meaning,
            })
            .collect(),
        side_files: p.side_files,
    }
}

pub(super) fn limit_kind_v0_2(kind: wl2::LimitKind) -> LimitKind {
    match kind {
        wl2::LimitKind::MaxTurns => LimitKind::MaxTurns,
        wl2::LimitKind::MaxToolCalls => LimitKind::MaxToolCalls,
        wl2::LimitKind::TurnTimeout => LimitKind::TurnTimeout,
        wl2::LimitKind::MaxInputTokens => LimitKind::MaxInputTokens,
        wl2::LimitKind::MaxOutputTokens => LimitKind::MaxOutputTokens,
        wl2::LimitKind::MaxTotalTokens => LimitKind::MaxTotalTokens,
        wl2::LimitKind::MaxUsd => LimitKind::MaxUsd,
    }
}

pub(super) fn agent_field(f: wl2::AgentField) -> AgentField {
    use wl2::AgentField as W;
    match f {
        W::Model => AgentField::Model,
        W::AllowedTools => AgentField::AllowedTools,
        W::DisallowedTools => AgentField::DisallowedTools,
        W::PermissionMode => AgentField::PermissionMode,
        W::SystemPrompt => AgentField::SystemPrompt,
        W::SystemPromptReplace => AgentField::SystemPromptReplace,
        W::ThinkingLevel => AgentField::ThinkingLevel,
        W::ModelVariant => AgentField::ModelVariant,
        W::Pure => AgentField::Pure,
        W::SettingSources => AgentField::SettingSources,
        W::Settings => AgentField::Settings,
        W::Plugins => AgentField::Plugins,
        W::Skills => AgentField::Skills,
        W::SdkOptions => AgentField::SdkOptions,
    }
}
