//! Binds a [`Harness`] to the WIT world `coder-eval:harness/harness@0.2.0` (with
//! `coder-eval:events@0.2.0`). Only built for wasm32; [`export_harness!`](crate::export_harness)
//! is the entry point.

use crate::{Harness, Reducer, model};
use std::cell::RefCell;
use std::marker::PhantomData;

wit_bindgen::generate!({
    path: ["../../wit/events@0.2.0", "../../wit/harness@0.2.0"],
    world: "coder-eval:harness/harness@0.2.0",
    pub_export_macro: true,
    default_bindings_module: "harness_kit::wasm",
    generate_all,
});

use coder_eval::events::types as wit;
use exports::coder_eval::harness::{launch, reducer};

/// The component type a harness is exported as.
pub struct Component<H>(PhantomData<H>);

/// The `stream-reducer` resource around a harness's [`Reducer`].
pub struct StreamReducer<H: Harness>(RefCell<H::Reducer>);

fn settings_of(s: launch::AgentSettings) -> model::AgentSettings {
    model::AgentSettings {
        model: s.model,
        allowed_tools: s.allowed_tools,
        disallowed_tools: s.disallowed_tools,
        permission_mode: s.permission_mode,
        system_prompt: s.system_prompt,
        model_base_url: s.model_base_url,
        api_key: s.api_key,
        as_root: s.as_root,
        system_prompt_mode: match s.system_prompt_mode {
            launch::SystemPromptMode::Append => model::SystemPromptMode::Append,
            launch::SystemPromptMode::Replace => model::SystemPromptMode::Replace,
        },
        thinking_level: s.thinking_level,
        model_variant: s.model_variant,
        pure: s.pure,
        setting_sources: s.setting_sources,
        settings_json: s.settings_json,
        plugin_dirs: s.plugin_dirs,
        skill_dirs: s.skill_dirs,
        sdk_options_json: s.sdk_options_json,
        session: s.session.map(|r| match r {
            launch::SessionRequest::Start(id) => model::SessionRequest::Start(id),
            launch::SessionRequest::Resume(id) => model::SessionRequest::Resume(id),
        }),
    }
}

fn field(f: model::AgentField) -> launch::AgentField {
    use launch::AgentField as W;
    use model::AgentField as M;
    match f {
        M::Model => W::Model,
        M::AllowedTools => W::AllowedTools,
        M::DisallowedTools => W::DisallowedTools,
        M::PermissionMode => W::PermissionMode,
        M::SystemPrompt => W::SystemPrompt,
        M::SystemPromptReplace => W::SystemPromptReplace,
        M::ThinkingLevel => W::ThinkingLevel,
        M::ModelVariant => W::ModelVariant,
        M::Pure => W::Pure,
        M::SettingSources => W::SettingSources,
        M::Settings => W::Settings,
        M::Plugins => W::Plugins,
        M::Skills => W::Skills,
        M::SdkOptions => W::SdkOptions,
    }
}

impl<H: Harness> launch::Guest for Component<H> {
    fn describe() -> launch::Capabilities {
        let c = H::describe();
        launch::Capabilities {
            agent_fields: c.agent_fields.into_iter().map(field).collect(),
            resume: c.resume,
            reports_cost: c.reports_cost,
            usage_per_call: c.usage_per_call,
        }
    }

    fn totals(cli_version: Option<String>) -> launch::TotalsScope {
        scope(H::totals(cli_version.as_deref()))
    }

    fn usage_totals(cli_version: Option<String>) -> launch::TotalsScope {
        scope(H::usage_totals(cli_version.as_deref()))
    }

    fn plan(
        settings: launch::AgentSettings,
        limits: launch::RunLimits,
    ) -> Result<launch::LaunchPlan, String> {
        let settings = settings_of(settings);
        let b = limits.budgets;
        let limits = model::RunLimits {
            max_turns: limits.max_turns,
            max_tool_calls: limits.max_tool_calls,
            turn_timeout_ms: limits.turn_timeout_ms,
            budgets: model::BudgetLimits {
                max_input_tokens: b.max_input_tokens,
                max_output_tokens: b.max_output_tokens,
                max_total_tokens: b.max_total_tokens,
                max_usd: b.max_usd,
                count_cached_input: b.count_cached_input,
                count_cache_creation: b.count_cache_creation,
            },
        };
        let plan = H::plan(&settings, &limits)?;
        Ok(launch::LaunchPlan {
            argv: plan.argv,
            env: plan.env,
            files: plan
                .files
                .into_iter()
                .map(|f| launch::ConfigFile {
                    path: f.path,
                    content: f.content,
                })
                .collect(),
            prompt: match plan.prompt {
                model::PromptDelivery::ArgvAt(i) => launch::PromptDelivery::ArgvAt(i),
                model::PromptDelivery::Stdin => launch::PromptDelivery::Stdin,
            },
            native_limits: plan.native_limits.into_iter().map(limit).collect(),
            unsupported_limits: plan.unsupported_limits.into_iter().map(limit).collect(),
            caveats: plan
                .caveats
                .into_iter()
                .map(|c| match c {
                    model::Caveat::ParallelCallsSerialized => {
                        launch::Caveat::ParallelCallsSerialized
                    }
                    model::Caveat::ShellFailuresUnreported => {
                        launch::Caveat::ShellFailuresUnreported
                    }
                    model::Caveat::ToolStartFromCliDuration => {
                        launch::Caveat::ToolStartFromCliDuration
                    }
                    model::Caveat::ToolStartReportedLate => launch::Caveat::ToolStartReportedLate,
                    model::Caveat::BlockingShellRefused => launch::Caveat::BlockingShellRefused,
                })
                .collect(),
            exit_codes: plan
                .exit_codes
                .into_iter()
                .map(|e| launch::ExitCode {
                    code: e.code,
                    kind: e.kind,
                    meaning: e.meaning,
                })
                .collect(),
            side_files: plan.side_files,
        })
    }

    fn translate_action(action: launch::NeutralAction, workspace: String) -> launch::ToolCall {
        let action = match action {
            launch::NeutralAction::WriteFile((path, content)) => {
                model::NeutralAction::WriteFile { path, content }
            }
            launch::NeutralAction::Shell(command) => model::NeutralAction::Shell { command },
            launch::NeutralAction::ReadFile(path) => model::NeutralAction::ReadFile { path },
        };
        let call = H::translate_action(&action, &workspace);
        launch::ToolCall {
            name: call.name,
            arguments_json: call.arguments_json,
        }
    }
}

fn scope(scope: model::TotalsScope) -> launch::TotalsScope {
    match scope {
        model::TotalsScope::PerCall => launch::TotalsScope::PerCall,
        model::TotalsScope::PerProcess => launch::TotalsScope::PerProcess,
        model::TotalsScope::PerSession => launch::TotalsScope::PerSession,
    }
}

fn limit(kind: model::LimitKind) -> launch::LimitKind {
    match kind {
        model::LimitKind::MaxTurns => launch::LimitKind::MaxTurns,
        model::LimitKind::MaxToolCalls => launch::LimitKind::MaxToolCalls,
        model::LimitKind::TurnTimeout => launch::LimitKind::TurnTimeout,
        model::LimitKind::MaxInputTokens => launch::LimitKind::MaxInputTokens,
        model::LimitKind::MaxOutputTokens => launch::LimitKind::MaxOutputTokens,
        model::LimitKind::MaxTotalTokens => launch::LimitKind::MaxTotalTokens,
        model::LimitKind::MaxUsd => launch::LimitKind::MaxUsd,
    }
}

impl<H: Harness> reducer::Guest for Component<H> {
    type StreamReducer = StreamReducer<H>;
}

impl<H: Harness> reducer::GuestStreamReducer for StreamReducer<H> {
    fn new(config: reducer::ReducerConfig) -> Self {
        StreamReducer(RefCell::new(H::Reducer::new(model::ReducerConfig {
            excerpt_bytes: config.excerpt_bytes,
        })))
    }

    fn feed(&self, line: Vec<u8>, stamp_us: u64) -> Vec<wit::Event> {
        let mut events = self.0.borrow_mut().feed(&line, stamp_us);
        crate::version::add_unchecked_notes(&mut events, H::CHECKED_VERSIONS, &line);
        events.into_iter().map(event).collect()
    }

    fn side_file(&self, path: String, content: Option<Vec<u8>>) -> Vec<wit::Event> {
        let events = self.0.borrow_mut().side_file(&path, content.as_deref());
        events.into_iter().map(event).collect()
    }

    fn finish(&self, truncated: Option<Vec<u8>>) -> Vec<wit::Event> {
        let events = self.0.borrow_mut().finish(truncated.as_deref());
        events.into_iter().map(event).collect()
    }
}

fn usage(u: model::Usage) -> wit::Usage {
    wit::Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens,
        cache_write_tokens: u.cache_write_tokens,
    }
}

fn event(e: model::Event) -> wit::Event {
    use model::Event as E;
    match e {
        E::SessionStarted {
            session_id,
            cli_version,
            model,
            tools,
        } => wit::Event::SessionStarted(wit::SessionStarted {
            session_id,
            cli_version,
            model,
            tools,
        }),
        E::ModelCallStarted {
            message_id,
            parent_call_id,
        } => wit::Event::ModelCallStarted(wit::ModelCallStarted {
            message_id,
            parent_call_id,
        }),
        E::AssistantMessage {
            message_id,
            parent_call_id,
            text,
            usage: u,
            cost_usd,
        } => wit::Event::AssistantMessage(wit::AssistantMessage {
            message_id,
            parent_call_id,
            text,
            usage: u.map(usage),
            cost_usd,
        }),
        E::ToolCallStarted {
            call_id,
            name,
            input_json,
            parent_call_id,
        } => wit::Event::ToolCallStarted(wit::ToolCallStarted {
            call_id,
            name,
            input_json,
            parent_call_id,
        }),
        E::ToolCallFinished {
            call_id,
            status,
            output_excerpt,
            exit_code,
            cli_duration_ms,
        } => wit::Event::ToolCallFinished(wit::ToolCallFinished {
            call_id,
            status: match status {
                model::ToolStatus::Ok => wit::ToolStatus::Ok,
                model::ToolStatus::Error => wit::ToolStatus::Error,
                model::ToolStatus::Unknown => wit::ToolStatus::Unknown,
                model::ToolStatus::Denied => wit::ToolStatus::Denied,
            },
            output_excerpt,
            exit_code,
            cli_duration_ms,
        }),
        E::FinalResult {
            success,
            error_kind,
            error_message,
            max_turns_reached,
            num_turns,
            cost_usd,
            duration_ms,
            text,
            usage: u,
        } => wit::Event::FinalResult(wit::FinalResult {
            success,
            error_kind,
            error_message,
            max_turns_reached,
            num_turns,
            cost_usd,
            duration_ms,
            text,
            usage: u.map(usage),
        }),
        E::Diagnostic { kind, message, raw } => {
            wit::Event::Diagnostic(wit::Diagnostic { kind, message, raw })
        }
        E::ModelCallRetried {
            call_started,
            abandoned_message_id,
            parent_call_id,
            attempt,
            delay_ms,
            status,
            error,
            announced,
        } => wit::Event::ModelCallRetried(wit::ModelCallRetried {
            call_started,
            abandoned_message_id,
            parent_call_id,
            attempt,
            delay_ms,
            status,
            error,
            announced,
        }),
        E::Unreported {
            kind,
            call_id,
            reason,
        } => wit::Event::Unreported(wit::Unreported {
            kind: match kind {
                model::UnreportedKind::Usage => wit::UnreportedKind::Usage,
                model::UnreportedKind::Cost => wit::UnreportedKind::Cost,
                model::UnreportedKind::SubagentWork => wit::UnreportedKind::SubagentWork,
            },
            call_id,
            reason,
        }),
    }
}
