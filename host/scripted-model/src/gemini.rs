//! Gemini API (`POST …/models/M:streamGenerateContent?alt=sse`, `:generateContent`).
//!
//! Streaming answer: unnamed `data:` chunks `{"candidates": [{"content": {"role":
//! "model", "parts": […]}, "index": 0}], "modelVersion", "responseId"}` — thought parts
//! (`{"text", "thought": true}`), text parts, one chunk with all `functionCall` parts,
//! and a last chunk with `finishReason: "STOP"` and `usageMetadata`. The non-streaming
//! answer is one such object holding all parts.

use serde_json::{Value, json};

use crate::common::{Answer, Inspect, Planned, SseEvent, count_turns, text_chunks};

/// Prefix of generated tool-call ids (used only in the log: Gemini calls carry none).
pub(crate) const ID_PREFIX: &str = "call_mock";

/// Reads turn and tool names; `stream` comes from the path (`:streamGenerateContent`).
pub(crate) fn inspect(req: &Value, stream: bool) -> Inspect {
    let mut tools = Vec::new();
    for t in req
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let decls = t.get("functionDeclarations").and_then(Value::as_array);
        for f in decls.into_iter().flatten() {
            let name = f.get("name").and_then(Value::as_str).unwrap_or("?");
            tools.push(name.to_string());
        }
    }
    Inspect {
        turn: count_turns(req.get("contents"), "model"),
        tools,
        stream,
    }
}

/// The model id in a Gemini URL path (`/v1beta/models/M:streamGenerateContent` → `M`).
pub(crate) fn path_model(path: &str) -> Option<String> {
    let (_, rest) = path.rsplit_once("/models/")?;
    let model = rest.split(':').next().unwrap_or_default();
    (!model.is_empty()).then(|| model.to_string())
}

/// The Google RPC status name for an HTTP status.
fn rpc_status(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        500 => "INTERNAL",
        504 => "DEADLINE_EXCEEDED",
        _ => "UNAVAILABLE",
    }
}

/// A vendor-shaped error body (`{"error": {code, message, status}}`).
pub(crate) fn error_body(status: u16, message: &str, ty: Option<&str>) -> Value {
    json!({"error": {"code": status, "message": message,
                     "status": ty.unwrap_or(rpc_status(status))}})
}

/// Renders a planned reply as a Gemini answer, streamed or not.
pub(crate) fn render(p: &Planned, stream: bool) -> Answer {
    let (in_tok, out_tok) = (p.in_tokens, p.out_tokens());
    let usage = json!({"promptTokenCount": in_tok, "candidatesTokenCount": out_tok,
                       "totalTokenCount": in_tok + out_tok});
    let chunk = |parts: Vec<Value>, last: bool| {
        let mut cand = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        let mut obj = json!({"candidates": [], "modelVersion": p.model,
                             "responseId": format!("mock-{}-{}", p.turn, p.seq)});
        if last {
            cand["finishReason"] = json!("STOP");
            obj["usageMetadata"] = usage.clone();
        }
        obj["candidates"] = json!([cand]);
        obj
    };
    let calls: Vec<Value> = p
        .calls
        .iter()
        .map(|c| json!({"functionCall": {"name": c.name, "args": c.args}}))
        .collect();
    if !stream {
        let mut parts = Vec::new();
        if !p.thinking.is_empty() {
            parts.push(json!({"text": p.thinking, "thought": true}));
        }
        if !p.text.is_empty() {
            parts.push(json!({"text": p.text}));
        }
        parts.extend(calls);
        if parts.is_empty() {
            parts.push(json!({"text": ""}));
        }
        return Answer::Json(200, chunk(parts, true));
    }
    let mut ev = Vec::new();
    for d in text_chunks(&p.thinking) {
        ev.push(SseEvent::data(&chunk(
            vec![json!({"text": d, "thought": true})],
            false,
        )));
    }
    for d in text_chunks(&p.text) {
        ev.push(SseEvent::data(&chunk(vec![json!({"text": d})], false)));
    }
    let last_parts = if calls.is_empty() {
        vec![json!({"text": ""})]
    } else {
        ev.push(SseEvent::data(&chunk(calls, false)));
        Vec::new()
    };
    ev.push(SseEvent::data(&chunk(last_parts, true)));
    Answer::Sse(ev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_from_path() {
        assert_eq!(
            path_model("/v1beta/models/gemini-2.5-flash:streamGenerateContent").as_deref(),
            Some("gemini-2.5-flash")
        );
        assert_eq!(path_model("/v1/chat/completions"), None);
    }
}
