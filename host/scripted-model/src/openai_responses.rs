//! OpenAI Responses API (`POST …/responses`, Codex).
//!
//! Output items: a `reasoning` item (thinking), a `message` item (text), then per tool
//! call a `function_call` item (`arguments` JSON string) or a `custom_tool_call` item
//! (free-form `input`, Codex's `apply_patch`). Streaming answer: named events
//! `response.created`, `response.in_progress`, per item `response.output_item.added`,
//! its deltas and `….done` events, `response.output_item.done`, then
//! `response.completed` carrying the whole response and usage. Every event has a
//! `sequence_number` from 1.

use serde_json::{Value, json};

use crate::common::{Answer, CREATED, Inspect, Planned, SseEvent, flag, str_chunks, text_chunks};

/// Prefix of generated tool-call ids.
pub(crate) const ID_PREFIX: &str = "call_mock";

/// Input item types produced by the assistant side.
const ASSISTANT_ITEMS: &[&str] = &[
    "function_call",
    "custom_tool_call",
    "reasoning",
    "local_shell_call",
    "web_search_call",
    "tool_search_call",
];

/// The response id for a reply (also the key under which its turn count is remembered).
pub(crate) fn response_id(turn: usize, seq: u64) -> String {
    format!("resp_mock_{turn}_{seq}")
}

/// Reads turn, tool names and stream flag. The turn is the number of runs of
/// assistant-side input items, plus `prev_turns(previous_response_id)` when the
/// request continues a response this server gave.
pub(crate) fn inspect(req: &Value, prev_turns: impl Fn(&str) -> Option<usize>) -> Inspect {
    let mut turn = 0;
    if let Some(items) = req.get("input").and_then(Value::as_array) {
        let mut in_assistant = false;
        for it in items {
            let ty = it.get("type").and_then(Value::as_str).unwrap_or("message");
            let assistant_side = ASSISTANT_ITEMS.contains(&ty)
                || (ty == "message" && it.get("role").and_then(Value::as_str) == Some("assistant"));
            if assistant_side && !in_assistant {
                turn += 1;
            }
            in_assistant = assistant_side;
        }
    }
    if let Some(prev) = req.get("previous_response_id").and_then(Value::as_str) {
        turn += prev_turns(prev).unwrap_or(0);
    }
    let tools = req
        .get("tools")
        .and_then(Value::as_array)
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    t.get("name")
                        .or_else(|| t.get("type"))
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default();
    Inspect {
        turn,
        tools,
        stream: flag(req, "stream"),
    }
}

/// A vendor-shaped error body (`{"error": {type, message, code}}`).
pub(crate) fn error_body(status: u16, message: &str, ty: Option<&str>) -> Value {
    crate::openai_chat::error_body(status, message, ty)
}

/// The output items of the answer.
fn output_items(p: &Planned) -> Vec<Value> {
    let turn = p.turn;
    let mut output = Vec::new();
    if !p.thinking.is_empty() {
        output.push(json!({"type": "reasoning", "id": format!("rs_mock_{turn}"),
                           "summary": [{"type": "summary_text", "text": p.thinking}]}));
    }
    if !p.text.is_empty() {
        output.push(json!({"type": "message", "id": format!("msg_mock_{turn}"),
                           "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": p.text, "annotations": []}]}));
    }
    for (i, c) in p.calls.iter().enumerate() {
        output.push(match &c.custom_input {
            Some(input) => json!({"type": "custom_tool_call", "id": format!("ctc_mock_{turn}_{i}"),
                                  "call_id": c.id, "name": c.name, "input": input,
                                  "status": "completed"}),
            None => json!({"type": "function_call", "id": format!("fc_mock_{turn}_{i}"),
                           "call_id": c.id, "name": c.name, "arguments": c.args_json(),
                           "status": "completed"}),
        });
    }
    output
}

/// Renders a planned reply as a Responses answer, streamed or not.
pub(crate) fn render(p: &Planned, stream: bool) -> Answer {
    let (in_tok, out_tok) = (p.in_tokens, p.out_tokens());
    let usage = json!({"input_tokens": in_tok, "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens": out_tok, "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": in_tok + out_tok});
    let output = output_items(p);
    let resp = json!({"id": response_id(p.turn, p.seq), "object": "response",
                      "created_at": CREATED, "status": "completed", "model": p.model,
                      "output": output, "usage": usage});
    if !stream {
        return Answer::Json(200, resp);
    }
    let mut events = Vec::new();
    let mut ev = |mut obj: Value| {
        obj["sequence_number"] = json!(events.len() + 1);
        let name = obj["type"].as_str().unwrap_or_default().to_string();
        events.push(SseEvent::named(&name, &obj));
    };
    let mut pending = resp.clone();
    pending["status"] = json!("in_progress");
    pending["output"] = json!([]);
    pending["usage"] = Value::Null;
    ev(json!({"type": "response.created", "response": pending}));
    ev(json!({"type": "response.in_progress", "response": pending}));
    for (oi, item) in output.iter().enumerate() {
        let id = &item["id"];
        let in_progress = |key: &str, value: Value| {
            let mut v = item.clone();
            v[key] = value;
            if v.get("status").is_some() {
                v["status"] = json!("in_progress");
            }
            v
        };
        match item["type"].as_str().unwrap_or_default() {
            "message" => {
                ev(
                    json!({"type": "response.output_item.added", "output_index": oi,
                          "item": in_progress("content", json!([]))}),
                );
                ev(json!({"type": "response.content_part.added", "item_id": id,
                          "output_index": oi, "content_index": 0,
                          "part": {"type": "output_text", "text": "", "annotations": []}}));
                for d in text_chunks(&p.text) {
                    ev(json!({"type": "response.output_text.delta", "item_id": id,
                              "output_index": oi, "content_index": 0, "delta": d}));
                }
                ev(json!({"type": "response.output_text.done", "item_id": id,
                          "output_index": oi, "content_index": 0, "text": p.text}));
                ev(json!({"type": "response.content_part.done", "item_id": id,
                          "output_index": oi, "content_index": 0, "part": item["content"][0]}));
            }
            "reasoning" => {
                ev(
                    json!({"type": "response.output_item.added", "output_index": oi,
                          "item": in_progress("summary", json!([]))}),
                );
                ev(
                    json!({"type": "response.reasoning_summary_part.added", "item_id": id,
                          "output_index": oi, "summary_index": 0,
                          "part": {"type": "summary_text", "text": ""}}),
                );
                for d in text_chunks(&p.thinking) {
                    ev(
                        json!({"type": "response.reasoning_summary_text.delta", "item_id": id,
                              "output_index": oi, "summary_index": 0, "delta": d}),
                    );
                }
                ev(
                    json!({"type": "response.reasoning_summary_text.done", "item_id": id,
                          "output_index": oi, "summary_index": 0, "text": p.thinking}),
                );
                ev(
                    json!({"type": "response.reasoning_summary_part.done", "item_id": id,
                          "output_index": oi, "summary_index": 0, "part": item["summary"][0]}),
                );
            }
            "function_call" => {
                let args = item["arguments"].as_str().unwrap_or_default();
                ev(
                    json!({"type": "response.output_item.added", "output_index": oi,
                          "item": in_progress("arguments", json!(""))}),
                );
                for d in str_chunks(args) {
                    ev(
                        json!({"type": "response.function_call_arguments.delta", "item_id": id,
                              "output_index": oi, "delta": d}),
                    );
                }
                ev(
                    json!({"type": "response.function_call_arguments.done", "item_id": id,
                          "output_index": oi, "arguments": args}),
                );
            }
            _ => {
                let input = item["input"].as_str().unwrap_or_default();
                ev(
                    json!({"type": "response.output_item.added", "output_index": oi,
                          "item": in_progress("input", json!(""))}),
                );
                for d in str_chunks(input) {
                    ev(
                        json!({"type": "response.custom_tool_call_input.delta", "item_id": id,
                              "output_index": oi, "delta": d}),
                    );
                }
                ev(
                    json!({"type": "response.custom_tool_call_input.done", "item_id": id,
                          "output_index": oi, "input": input}),
                );
            }
        }
        ev(json!({"type": "response.output_item.done", "output_index": oi, "item": item}));
    }
    ev(json!({"type": "response.completed", "response": resp}));
    Answer::Sse(events)
}
