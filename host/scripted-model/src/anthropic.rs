//! Anthropic Messages API (`POST …/messages`): request inspection and answers.
//!
//! Streaming answer: `message_start`, `ping`, then per content block (thinking, text,
//! tool_use in that order) `content_block_start` / `content_block_delta`… /
//! `content_block_stop`, then `message_delta` (stop_reason `tool_use` when there are
//! tool calls, else `end_turn`, and the usage) and `message_stop`.

use serde_json::{Value, json};

use crate::common::{
    Answer, Inspect, Planned, SseEvent, count_turns, flag, str_chunks, text_chunks,
};

/// Prefix of generated tool-call ids.
pub(crate) const ID_PREFIX: &str = "toolu_mock";

/// Reads turn, tool names and stream flag of a Messages request.
pub(crate) fn inspect(req: &Value) -> Inspect {
    let tools = req
        .get("tools")
        .and_then(Value::as_array)
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    t.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default();
    Inspect {
        turn: count_turns(req.get("messages"), "assistant"),
        tools,
        stream: flag(req, "stream"),
    }
}

/// A vendor-shaped error body (`{"type": "error", "error": {type, message}}`).
pub(crate) fn error_body(status: u16, message: &str, ty: Option<&str>) -> Value {
    let default = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": ty.unwrap_or(default), "message": message}})
}

/// The content blocks of the answer.
fn blocks(p: &Planned) -> Vec<Value> {
    let mut blocks = Vec::new();
    if !p.thinking.is_empty() {
        blocks.push(
            json!({"type": "thinking", "thinking": p.thinking, "signature": "mock-signature"}),
        );
    }
    if !p.text.is_empty() {
        blocks.push(json!({"type": "text", "text": p.text}));
    }
    for c in &p.calls {
        blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.args}));
    }
    blocks
}

/// Renders a planned reply as a Messages answer, streamed or not.
pub(crate) fn render(p: &Planned, stream: bool) -> Answer {
    let stop = if p.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    let msg_id = format!("msg_mock_{}_{}", p.turn, p.seq);
    let usage = |out: u64| {
        json!({"input_tokens": p.in_tokens, "output_tokens": out,
               "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
    };
    let blocks = blocks(p);
    if !stream {
        return Answer::Json(
            200,
            json!({"id": msg_id, "type": "message", "role": "assistant", "model": p.model,
                   "content": blocks, "stop_reason": stop, "stop_sequence": null,
                   "usage": usage(p.out_tokens())}),
        );
    }
    let mut ev = Vec::new();
    let mut push = |name: &str, data: Value| ev.push(SseEvent::named(name, &data));
    push(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": p.model,
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage(1)}}),
    );
    push("ping", json!({"type": "ping"}));
    for (idx, b) in blocks.iter().enumerate() {
        let delta = |d: Value| json!({"type": "content_block_delta", "index": idx, "delta": d});
        match b["type"].as_str() {
            Some("thinking") => {
                push(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": idx,
                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
                );
                for d in text_chunks(&p.thinking) {
                    push(
                        "content_block_delta",
                        delta(json!({"type": "thinking_delta", "thinking": d})),
                    );
                }
                push(
                    "content_block_delta",
                    delta(json!({"type": "signature_delta", "signature": b["signature"]})),
                );
            }
            Some("text") => {
                push(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": idx,
                           "content_block": {"type": "text", "text": ""}}),
                );
                for d in text_chunks(&p.text) {
                    push(
                        "content_block_delta",
                        delta(json!({"type": "text_delta", "text": d})),
                    );
                }
            }
            _ => {
                push(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": idx, "content_block":
                           {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}),
                );
                for d in str_chunks(&b["input"].to_string()) {
                    push(
                        "content_block_delta",
                        delta(json!({"type": "input_json_delta", "partial_json": d})),
                    );
                }
            }
        }
        push(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": idx}),
        );
    }
    push(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": usage(p.out_tokens())}),
    );
    push("message_stop", json!({"type": "message_stop"}));
    Answer::Sse(ev)
}
