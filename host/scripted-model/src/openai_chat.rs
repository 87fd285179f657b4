//! OpenAI Chat Completions API (`POST …/chat/completions`, Pi and OpenCode).
//!
//! Streaming answer: unnamed `data:` chunks — a role chunk, `reasoning_content` deltas,
//! `content` deltas, per tool call a `tool_calls` chunk with id and name then argument
//! pieces, a chunk with `finish_reason` (`tool_calls` or `stop`), a usage chunk with
//! empty `choices` when `stream_options.include_usage` is set, and `data: [DONE]`.

use serde_json::{Map, Value, json};

use crate::common::{
    Answer, CREATED, Inspect, Planned, SseEvent, count_turns, flag, str_chunks, text_chunks,
};

/// Prefix of generated tool-call ids.
pub(crate) const ID_PREFIX: &str = "call_mock";

/// Reads turn, tool names and stream flag of a Chat Completions request.
pub(crate) fn inspect(req: &Value) -> Inspect {
    let tools = req
        .get("tools")
        .and_then(Value::as_array)
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    t.pointer("/function/name")
                        .or_else(|| t.get("name"))
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

/// A vendor-shaped error body (`{"error": {type, message, code}}`).
pub(crate) fn error_body(status: u16, message: &str, ty: Option<&str>) -> Value {
    json!({"error": {"type": ty.unwrap_or(&openai_error_type(status)), "message": message,
                     "code": null}})
}

/// The OpenAI error type for a status (shared with the Responses API).
pub(crate) fn openai_error_type(status: u16) -> String {
    match status {
        400 | 404 | 413 | 422 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        429 => "rate_limit_error",
        _ => "server_error",
    }
    .into()
}

/// Renders a planned reply as a Chat Completions answer, streamed or not.
pub(crate) fn render(p: &Planned, req: &Value, stream: bool) -> Answer {
    let in_tok = p.in_tokens;
    let out_tok = p.out_tokens();
    let usage = json!({"prompt_tokens": in_tok, "completion_tokens": out_tok, "total_tokens": in_tok + out_tok});
    let finish = if p.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let cid = format!("chatcmpl-mock-{}-{}", p.turn, p.seq);
    if !stream {
        let mut msg = Map::new();
        msg.insert("role".into(), json!("assistant"));
        let content = if p.text.is_empty() {
            Value::Null
        } else {
            json!(p.text)
        };
        msg.insert("content".into(), content);
        if !p.thinking.is_empty() {
            msg.insert("reasoning_content".into(), json!(p.thinking));
        }
        if !p.calls.is_empty() {
            let calls: Vec<Value> = p
                .calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                           "function": {"name": c.name, "arguments": c.args_json()}})
                })
                .collect();
            msg.insert("tool_calls".into(), Value::Array(calls));
        }
        return Answer::Json(
            200,
            json!({"id": cid, "object": "chat.completion", "created": CREATED, "model": p.model,
                   "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                   "usage": usage}),
        );
    }
    let chunk = |choices: Value| {
        json!({"id": cid, "object": "chat.completion.chunk", "created": CREATED,
               "model": p.model, "choices": choices})
    };
    let delta = |d: Value| chunk(json!([{"index": 0, "delta": d, "finish_reason": null}]));
    let mut ev = vec![SseEvent::data(&delta(
        json!({"role": "assistant", "content": ""}),
    ))];
    for d in text_chunks(&p.thinking) {
        ev.push(SseEvent::data(&delta(json!({"reasoning_content": d}))));
    }
    for d in text_chunks(&p.text) {
        ev.push(SseEvent::data(&delta(json!({"content": d}))));
    }
    for (i, c) in p.calls.iter().enumerate() {
        ev.push(SseEvent::data(&delta(json!({"tool_calls": [{
            "index": i, "id": c.id, "type": "function",
            "function": {"name": c.name, "arguments": ""}}]}))));
        for d in str_chunks(&c.args_json()) {
            ev.push(SseEvent::data(&delta(
                json!({"tool_calls": [{"index": i, "function": {"arguments": d}}]}),
            )));
        }
    }
    ev.push(SseEvent::data(&chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
    )));
    if req
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        == Some(true)
    {
        let mut last = chunk(json!([]));
        last["usage"] = usage;
        ev.push(SseEvent::data(&last));
    }
    ev.push(SseEvent {
        event: None,
        data: "[DONE]".into(),
    });
    Answer::Sse(ev)
}
