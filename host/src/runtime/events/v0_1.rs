//! events@0.1.0 ↔ the host model. 0.1.0 is a subset of the model: what it lacks goes
//! down as noted on [`to_wit`].

use super::wit;
use harness_kit::{Event, ToolStatus, Usage};

fn usage_from(u: wit::Usage) -> Usage {
    Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens,
        // events@0.1.0 has no way to say "not reported": its count is taken as given.
        cache_write_tokens: Some(u.cache_write_tokens),
    }
}

/// The WIT event as the host's (and the guests' shared) Rust model: what a reducer
/// returns.
pub(crate) fn from_wit(e: wit::Event) -> Event {
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
            usage: m.usage.map(usage_from),
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
            usage: r.usage.map(usage_from),
        },
        wit::Event::Diagnostic(d) => Event::Diagnostic {
            kind: d.kind,
            message: d.message,
            raw: d.raw,
        },
    }
}

fn usage_to(u: &Usage) -> wit::Usage {
    wit::Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens,
        // events@0.1.0 cannot say "not reported": 0, as 0.1.0 components always saw it.
        cache_write_tokens: u.cache_writes_or_zero(),
    }
}

fn len(s: &Option<String>) -> usize {
    s.as_ref().map_or(0, String::len)
}

/// The host event as the events@0.1.0 event, and its approximate size in bytes (for
/// fuel): what a 0.1.0 grader receives. `None` for the events 0.1.0 does not have (a 0.1.0
/// grader never saw them); a denied call goes down as `error`.
pub(crate) fn to_wit(e: &Event) -> Option<(wit::Event, usize)> {
    Some(match e.clone() {
        Event::SessionStarted {
            session_id,
            cli_version,
            model,
            tools,
        } => {
            let size = len(&session_id)
                + len(&cli_version)
                + len(&model)
                + tools.iter().map(String::len).sum::<usize>();
            let event = wit::SessionStarted {
                session_id,
                cli_version,
                model,
                tools,
            };
            (wit::Event::SessionStarted(event), size)
        }
        Event::ModelCallStarted {
            message_id,
            parent_call_id,
        } => {
            let size = len(&message_id) + len(&parent_call_id);
            let event = wit::ModelCallStarted {
                message_id,
                parent_call_id,
            };
            (wit::Event::ModelCallStarted(event), size)
        }
        Event::AssistantMessage {
            message_id,
            parent_call_id,
            text,
            usage: u,
            cost_usd,
        } => {
            let size = message_id.len() + len(&parent_call_id) + text.len();
            let event = wit::AssistantMessage {
                message_id,
                parent_call_id,
                text,
                usage: u.as_ref().map(usage_to),
                cost_usd,
            };
            (wit::Event::AssistantMessage(event), size)
        }
        Event::ToolCallStarted {
            call_id,
            name,
            input_json,
            parent_call_id,
        } => {
            let size = call_id.len() + name.len() + input_json.len() + len(&parent_call_id);
            let event = wit::ToolCallStarted {
                call_id,
                name,
                input_json,
                parent_call_id,
            };
            (wit::Event::ToolCallStarted(event), size)
        }
        Event::ToolCallFinished {
            call_id,
            status,
            output_excerpt,
            exit_code,
            cli_duration_ms,
        } => {
            let size = call_id.len() + output_excerpt.len();
            let event = wit::ToolCallFinished {
                call_id,
                status: match status {
                    ToolStatus::Ok => wit::ToolStatus::Ok,
                    ToolStatus::Error | ToolStatus::Denied => wit::ToolStatus::Error,
                    ToolStatus::Unknown => wit::ToolStatus::Unknown,
                },
                output_excerpt,
                exit_code,
                cli_duration_ms,
            };
            (wit::Event::ToolCallFinished(event), size)
        }
        Event::FinalResult {
            success,
            error_kind,
            error_message,
            max_turns_reached,
            num_turns,
            cost_usd,
            duration_ms,
            text,
            usage: u,
        } => {
            let size = len(&error_kind) + len(&error_message) + len(&text);
            let event = wit::FinalResult {
                success,
                error_kind,
                error_message,
                max_turns_reached,
                num_turns,
                cost_usd,
                duration_ms,
                text,
                usage: u.as_ref().map(usage_to),
            };
            (wit::Event::FinalResult(event), size)
        }
        Event::Diagnostic { kind, message, raw } => {
            let size = kind.len() + message.len() + raw.len();
            let event = wit::Diagnostic { kind, message, raw };
            (wit::Event::Diagnostic(event), size)
        }
        Event::ModelCallRetried { .. } | Event::Unreported { .. } => return None,
    })
}
