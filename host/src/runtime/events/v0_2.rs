//! events@0.2.0 ↔ the host model (which is 0.2.0's: nothing is lost either way).

use super::wit_v0_2 as wit;
use harness_kit::{Event, ToolStatus, UnreportedKind, Usage};

/// An events@0.2.0 event as the host's model (which is 0.2.0's: nothing is lost).
pub(crate) fn from_wit_v0_2(e: wit::Event) -> Event {
    use wit as w;
    let usage = |u: w::Usage| Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens,
        cache_write_tokens: u.cache_write_tokens,
    };
    match e {
        w::Event::SessionStarted(s) => Event::SessionStarted {
            session_id: s.session_id,
            cli_version: s.cli_version,
            model: s.model,
            tools: s.tools,
        },
        w::Event::ModelCallStarted(m) => Event::ModelCallStarted {
            message_id: m.message_id,
            parent_call_id: m.parent_call_id,
        },
        w::Event::AssistantMessage(m) => Event::AssistantMessage {
            message_id: m.message_id,
            parent_call_id: m.parent_call_id,
            text: m.text,
            usage: m.usage.map(usage),
            cost_usd: m.cost_usd,
        },
        w::Event::ToolCallStarted(t) => Event::ToolCallStarted {
            call_id: t.call_id,
            name: t.name,
            input_json: t.input_json,
            parent_call_id: t.parent_call_id,
        },
        w::Event::ToolCallFinished(t) => Event::ToolCallFinished {
            call_id: t.call_id,
            status: match t.status {
                w::ToolStatus::Ok => ToolStatus::Ok,
                w::ToolStatus::Error => ToolStatus::Error,
                w::ToolStatus::Unknown => ToolStatus::Unknown,
                w::ToolStatus::Denied => ToolStatus::Denied,
            },
            output_excerpt: t.output_excerpt,
            exit_code: t.exit_code,
            cli_duration_ms: t.cli_duration_ms,
        },
        w::Event::FinalResult(r) => Event::FinalResult {
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
        w::Event::Diagnostic(d) => Event::Diagnostic {
            kind: d.kind,
            message: d.message,
            raw: d.raw,
        },
        w::Event::ModelCallRetried(r) => Event::ModelCallRetried {
            call_started: r.call_started,
            abandoned_message_id: r.abandoned_message_id,
            parent_call_id: r.parent_call_id,
            attempt: r.attempt,
            delay_ms: r.delay_ms,
            status: r.status,
            error: r.error,
            announced: r.announced,
        },
        w::Event::Unreported(u) => Event::Unreported {
            kind: match u.kind {
                w::UnreportedKind::Usage => harness_kit::UnreportedKind::Usage,
                w::UnreportedKind::Cost => harness_kit::UnreportedKind::Cost,
                w::UnreportedKind::SubagentWork => harness_kit::UnreportedKind::SubagentWork,
            },
            call_id: u.call_id,
            reason: u.reason,
        },
    }
}

fn len(s: &Option<String>) -> usize {
    s.as_ref().map_or(0, String::len)
}

fn usage_to(u: &Usage) -> wit::Usage {
    wit::Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens,
        cache_write_tokens: u.cache_write_tokens,
    }
}

/// The host event as the events@0.2.0 event (every event: 0.2.0 has them all), and its
/// approximate size in bytes (for fuel).
pub(crate) fn to_wit_v0_2(e: &Event) -> (wit::Event, usize) {
    match e.clone() {
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
            (
                wit::Event::SessionStarted(wit::SessionStarted {
                    session_id,
                    cli_version,
                    model,
                    tools,
                }),
                size,
            )
        }
        Event::ModelCallStarted {
            message_id,
            parent_call_id,
        } => {
            let size = len(&message_id) + len(&parent_call_id);
            (
                wit::Event::ModelCallStarted(wit::ModelCallStarted {
                    message_id,
                    parent_call_id,
                }),
                size,
            )
        }
        Event::AssistantMessage {
            message_id,
            parent_call_id,
            text,
            usage,
            cost_usd,
        } => {
            let size = message_id.len() + len(&parent_call_id) + text.len();
            (
                wit::Event::AssistantMessage(wit::AssistantMessage {
                    message_id,
                    parent_call_id,
                    text,
                    usage: usage.as_ref().map(usage_to),
                    cost_usd,
                }),
                size,
            )
        }
        Event::ToolCallStarted {
            call_id,
            name,
            input_json,
            parent_call_id,
        } => {
            let size = call_id.len() + name.len() + input_json.len() + len(&parent_call_id);
            (
                wit::Event::ToolCallStarted(wit::ToolCallStarted {
                    call_id,
                    name,
                    input_json,
                    parent_call_id,
                }),
                size,
            )
        }
        Event::ToolCallFinished {
            call_id,
            status,
            output_excerpt,
            exit_code,
            cli_duration_ms,
        } => {
            let size = call_id.len() + output_excerpt.len();
            (
                wit::Event::ToolCallFinished(wit::ToolCallFinished {
                    call_id,
                    status: match status {
                        ToolStatus::Ok => wit::ToolStatus::Ok,
                        ToolStatus::Error => wit::ToolStatus::Error,
                        ToolStatus::Unknown => wit::ToolStatus::Unknown,
                        ToolStatus::Denied => wit::ToolStatus::Denied,
                    },
                    output_excerpt,
                    exit_code,
                    cli_duration_ms,
                }),
                size,
            )
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
            usage,
        } => {
            let size = len(&error_kind) + len(&error_message) + len(&text);
            (
                wit::Event::FinalResult(wit::FinalResult {
                    success,
                    error_kind,
                    error_message,
                    max_turns_reached,
                    num_turns,
                    cost_usd,
                    duration_ms,
                    text,
                    usage: usage.as_ref().map(usage_to),
                }),
                size,
            )
        }
        Event::Diagnostic { kind, message, raw } => {
            let size = kind.len() + message.len() + raw.len();
            (
                wit::Event::Diagnostic(wit::Diagnostic { kind, message, raw }),
                size,
            )
        }
        Event::ModelCallRetried {
            call_started,
            abandoned_message_id,
            parent_call_id,
            attempt,
            delay_ms,
            status,
            error,
            announced,
        } => {
            let size = len(&abandoned_message_id) + len(&parent_call_id) + len(&error);
            (
                wit::Event::ModelCallRetried(wit::ModelCallRetried {
                    call_started,
                    abandoned_message_id,
                    parent_call_id,
                    attempt,
                    delay_ms,
                    status,
                    error,
                    announced,
                }),
                size,
            )
        }
        Event::Unreported {
            kind,
            call_id,
            reason,
        } => {
            let size = len(&call_id) + reason.len();
            (
                wit::Event::Unreported(wit::Unreported {
                    kind: match kind {
                        UnreportedKind::Usage => wit::UnreportedKind::Usage,
                        UnreportedKind::Cost => wit::UnreportedKind::Cost,
                        UnreportedKind::SubagentWork => wit::UnreportedKind::SubagentWork,
                    },
                    call_id,
                    reason,
                }),
                size,
            )
        }
    }
}
