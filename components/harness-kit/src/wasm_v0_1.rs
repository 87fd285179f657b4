//! Binds a [`Harness`] to the released WIT world `coder-eval:harness/harness@0.1.0`, for
//! components the host must load as 0.1.0. Only built for wasm32;
//! [`export_harness_v0_1!`](crate::export_harness_v0_1) is the entry point. What 0.1.0
//! lacks is left out: the new agent fields are never set (the host refuses a task that
//! sets one), no side files, and events@0.2.0's new events are converted down.

use crate::{Harness, Reducer, model};
use std::cell::RefCell;
use std::marker::PhantomData;

wit_bindgen::generate!({
    path: ["../../wit/events@0.1.0", "../../wit/harness@0.1.0", "wit/v0-1"],
    world: "coder-eval:harness-kit/harness-v0-1",
    pub_export_macro: true,
    export_macro_name: "export_v0_1",
    default_bindings_module: "harness_kit::wasm_v0_1",
    generate_all,
});

use coder_eval::events::types as wit;
use exports::coder_eval::harness::{launch, reducer};

/// The component type a harness is exported as.
pub struct Component<H>(PhantomData<H>);

/// The `stream-reducer` resource around a harness's [`Reducer`].
pub struct StreamReducer<H: Harness>(RefCell<H::Reducer>);

impl<H: Harness> launch::Guest for Component<H> {
    fn plan(
        settings: launch::AgentSettings,
        limits: launch::RunLimits,
    ) -> Result<launch::LaunchPlan, String> {
        let settings = model::AgentSettings {
            model: settings.model,
            allowed_tools: settings.allowed_tools,
            disallowed_tools: settings.disallowed_tools,
            permission_mode: settings.permission_mode,
            system_prompt: settings.system_prompt,
            model_base_url: settings.model_base_url,
            api_key: settings.api_key,
            as_root: settings.as_root,
            ..Default::default()
        };
        let limits = model::RunLimits {
            max_turns: limits.max_turns,
            max_tool_calls: limits.max_tool_calls,
            turn_timeout_ms: limits.turn_timeout_ms,
            ..Default::default()
        };
        let plan = H::plan(&settings, &limits)?;
        if !plan.side_files.is_empty() {
            return Err(format!(
                "this harness needs side files ({}), which harness@0.1.0 cannot hand it",
                plan.side_files.join(", ")
            ));
        }
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
            native_limits: plan.native_limits.into_iter().filter_map(limit).collect(),
            unsupported_limits: plan
                .unsupported_limits
                .into_iter()
                .filter_map(limit)
                .collect(),
            caveats: plan
                .caveats
                .into_iter()
                .filter_map(|c| match c {
                    model::Caveat::ParallelCallsSerialized => {
                        Some(launch::Caveat::ParallelCallsSerialized)
                    }
                    model::Caveat::ShellFailuresUnreported => {
                        Some(launch::Caveat::ShellFailuresUnreported)
                    }
                    model::Caveat::ToolStartFromCliDuration => {
                        Some(launch::Caveat::ToolStartFromCliDuration)
                    }
                    model::Caveat::ToolStartReportedLate => {
                        Some(launch::Caveat::ToolStartReportedLate)
                    }
                    // harness@0.1.0 has no word for it: a 0.1.0 host cannot be told.
                    model::Caveat::BlockingShellRefused => None,
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

/// A limit as harness@0.1.0 names it; `None` for a budget (0.1.0 has no budgets, and
/// this binding hands the plan none, so a plan names one only by mistake).
fn limit(kind: model::LimitKind) -> Option<launch::LimitKind> {
    match kind {
        model::LimitKind::MaxTurns => Some(launch::LimitKind::MaxTurns),
        model::LimitKind::MaxToolCalls => Some(launch::LimitKind::MaxToolCalls),
        model::LimitKind::TurnTimeout => Some(launch::LimitKind::TurnTimeout),
        model::LimitKind::MaxInputTokens
        | model::LimitKind::MaxOutputTokens
        | model::LimitKind::MaxTotalTokens
        | model::LimitKind::MaxUsd => None,
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
        events.into_iter().filter_map(event).collect()
    }

    fn finish(&self, truncated: Option<Vec<u8>>) -> Vec<wit::Event> {
        let events = self.0.borrow_mut().finish(truncated.as_deref());
        events.into_iter().filter_map(event).collect()
    }
}

fn usage(u: model::Usage) -> wit::Usage {
    wit::Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens,
        // events@0.1.0 cannot say "not reported": 0, as before.
        cache_write_tokens: u.cache_writes_or_zero(),
    }
}

/// The event as events@0.1.0 has it: `denied` becomes `error`, and a retry or unreported
/// work becomes a diagnostic.
fn event(e: model::Event) -> Option<wit::Event> {
    use model::Event as E;
    Some(match e {
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
                model::ToolStatus::Error | model::ToolStatus::Denied => wit::ToolStatus::Error,
                model::ToolStatus::Unknown => wit::ToolStatus::Unknown,
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
        // 0.1.0 has no such events: they go down as diagnostics, so a 0.1.0 host still
        // shows them (it cannot un-count the call or mark totals partial).
        e @ (E::ModelCallRetried { .. } | E::Unreported { .. }) => {
            let (kind, message) = model::down_to_diagnostic(&e)?;
            wit::Event::Diagnostic(wit::Diagnostic {
                kind,
                message,
                raw: String::new(),
            })
        }
    })
}
