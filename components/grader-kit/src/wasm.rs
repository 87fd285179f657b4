//! Binds a [`Criterion`] to the WIT world `coder-eval:grader/grader@0.1.0`. Only built for
//! wasm32; [`export_grader!`](crate::export_grader) is the entry point.

use crate::{Criterion, Event, GradingInput, StampedEvent, ToolStatus, Usage};
use std::marker::PhantomData;

wit_bindgen::generate!({
    path: ["../../wit/events@0.1.0", "../../wit/grader@0.1.0"],
    world: "coder-eval:grader/grader@0.1.0",
    pub_export_macro: true,
    default_bindings_module: "grader_kit::wasm",
    generate_all,
});

use coder_eval::events::types as wit;
use exports::coder_eval::grader::criterion;

/// The component type a criterion is exported as.
pub struct Component<C>(PhantomData<C>);

impl<C: Criterion> criterion::Guest for Component<C> {
    fn grade(
        input: criterion::GradingInput,
    ) -> Result<criterion::Verdict, criterion::GradingError> {
        let params = if input.params_json.trim().is_empty() {
            serde_json::Value::Object(Default::default())
        } else {
            serde_json::from_str(&input.params_json).map_err(|e| criterion::GradingError {
                message: format!("params are not valid JSON: {e}"),
            })?
        };
        let input = GradingInput {
            params,
            trajectory: input
                .trajectory
                .into_iter()
                .map(|s| StampedEvent {
                    stamp_us: s.stamp_us,
                    event: event(s.event),
                })
                .collect(),
            prompt: input.prompt,
            workspace: input.workspace,
        };
        if input.prompt == crate::VALIDATE_PROMPT && input.trajectory.is_empty() {
            return match C::validate(&input.params) {
                Ok(()) => Ok(criterion::Verdict {
                    score: 1.0,
                    pass: true,
                    details: "params ok".into(),
                }),
                Err(message) => Err(criterion::GradingError { message }),
            };
        }
        match C::grade(&input) {
            Ok(v) => Ok(criterion::Verdict {
                score: v.score,
                pass: v.pass,
                details: v.details,
            }),
            Err(message) => Err(criterion::GradingError { message }),
        }
    }
}

fn usage(u: wit::Usage) -> Usage {
    Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens,
        cache_write_tokens: Some(u.cache_write_tokens),
    }
}

fn event(e: wit::Event) -> Event {
    match e {
        wit::Event::SessionStarted(s) => Event::SessionStarted {
            session_id: s.session_id,
            cli_version: s.cli_version,
            model: s.model,
            tools: s.tools,
        },
        wit::Event::ModelCallStarted(m) => Event::ModelCallStarted {
            message_id: m.message_id,
            parent_call_id: m.parent_call_id,
        },
        wit::Event::AssistantMessage(m) => Event::AssistantMessage {
            message_id: m.message_id,
            parent_call_id: m.parent_call_id,
            text: m.text,
            usage: m.usage.map(usage),
            cost_usd: m.cost_usd,
        },
        wit::Event::ToolCallStarted(t) => Event::ToolCallStarted {
            call_id: t.call_id,
            name: t.name,
            input_json: t.input_json,
            parent_call_id: t.parent_call_id,
        },
        wit::Event::ToolCallFinished(t) => Event::ToolCallFinished {
            call_id: t.call_id,
            status: match t.status {
                wit::ToolStatus::Ok => ToolStatus::Ok,
                wit::ToolStatus::Error => ToolStatus::Error,
                wit::ToolStatus::Unknown => ToolStatus::Unknown,
            },
            output_excerpt: t.output_excerpt,
            exit_code: t.exit_code,
            cli_duration_ms: t.cli_duration_ms,
        },
        wit::Event::FinalResult(r) => Event::FinalResult {
            success: r.success,
            error_kind: r.error_kind,
            error_message: r.error_message,
            max_turns_reached: r.max_turns_reached,
            num_turns: r.num_turns,
            cost_usd: r.cost_usd,
            duration_ms: r.duration_ms,
            text: r.text,
            usage: r.usage.map(usage),
        },
        wit::Event::Diagnostic(d) => Event::Diagnostic {
            kind: d.kind,
            message: d.message,
            raw: d.raw,
        },
    }
}
