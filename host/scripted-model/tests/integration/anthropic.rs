//! Anthropic Messages API, with request shapes as Claude Code sends them.

use coder_eval_scripted_model::{RequestKind, Script, ScriptedModel, ServerConfig};
use serde_json::{Value, json};

use crate::common::{WS, concat, post, start};

const PATH: &str = "/v1/messages?beta=true";

fn tools() -> Value {
    json!([
        {"name": "Bash", "description": "Executes a given bash command",
         "input_schema": {"type": "object", "properties": {"command": {"type": "string"},
                          "description": {"type": "string"}}, "required": ["command"]}},
        {"name": "Write", "description": "Writes a file to the local filesystem.",
         "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"},
                          "content": {"type": "string"}}, "required": ["file_path", "content"]}}
    ])
}

/// A Claude Code main-thread request holding `turns` completed assistant turns.
fn request(turns: usize, stream: bool) -> Value {
    let mut messages = vec![json!({"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>context</system-reminder>"},
        {"type": "text", "text": "Create app.py and run it.", "cache_control": {"type": "ephemeral"}}]})];
    for t in 0..turns {
        let id = format!("toolu_mock_{t}_0");
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": "Working."},
            {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "date"}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": "ok", "is_error": false}]}));
    }
    json!({"model": "claude-sonnet-4-5-20250929", "max_tokens": 32000, "stream": stream,
           "system": [{"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."}],
           "messages": messages, "tools": tools(), "metadata": {"user_id": "user_test"}})
}

/// The tool_use blocks of a streamed answer: (id, name, input parsed from the deltas).
fn tool_uses(events: &[(Option<String>, Value)]) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (_, e) in events {
        if e["type"] == "content_block_start" && e["content_block"]["type"] == "tool_use" {
            let idx = &e["index"];
            let json: String = events
                .iter()
                .filter(|(_, d)| d["type"] == "content_block_delta" && &d["index"] == idx)
                .filter_map(|(_, d)| d["delta"]["partial_json"].as_str())
                .collect();
            let b = &e["content_block"];
            out.push((
                b["id"].as_str().unwrap().to_string(),
                b["name"].as_str().unwrap().to_string(),
                serde_json::from_str(&json).unwrap(),
            ));
        }
    }
    out
}

#[tokio::test]
async fn turn0_streams_text_thinking_and_translated_write() {
    let server = start().await;
    let events = post(server.port(), PATH, &request(0, true)).await.sse();
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_deref().unwrap()).collect();
    assert_eq!(names[..2], ["message_start", "ping"]);
    assert_eq!(names[names.len() - 2..], ["message_delta", "message_stop"]);
    for (name, data) in &events {
        assert_eq!(Some(data["type"].as_str().unwrap()), name.as_deref());
    }
    assert_eq!(
        events[0].1["message"]["model"],
        "claude-sonnet-4-5-20250929"
    );
    assert_eq!(
        concat(&events, "content_block_delta", "/delta/text"),
        "I'll create the file app.py and then run it for you."
    );
    assert_eq!(
        concat(&events, "content_block_delta", "/delta/thinking"),
        "Plan: write the file, then run it."
    );
    assert_eq!(
        concat(&events, "content_block_delta", "/delta/signature"),
        "mock-signature"
    );
    let calls = tool_uses(&events);
    assert_eq!(
        calls,
        vec![(
            "toolu_mock_0_0".to_string(),
            "Write".to_string(),
            json!({"file_path": format!("{WS}/app.py"), "content": "print('hi')\n"})
        )]
    );
    let delta = &events[events.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert!(delta["usage"]["output_tokens"].as_u64().unwrap() > 1);
    assert!(delta["usage"]["input_tokens"].as_u64().unwrap() > 10);
    let log = server.requests();
    assert_eq!(log.len(), 1);
    assert_eq!(
        (log[0].kind, log[0].turn, log[0].stream),
        (RequestKind::Main, Some(0), Some(true))
    );
    assert_eq!(log[0].tools, ["Bash", "Write"]);
    assert_eq!(log[0].path, PATH);
    server.shutdown().await;
}

#[tokio::test]
async fn turn1_gets_reply1_as_parallel_calls() {
    let server = start().await;
    let events = post(server.port(), PATH, &request(1, true)).await.sse();
    let calls = tool_uses(&events);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].1, "first_tool");
    assert_eq!(calls[0].2, json!({"command": "echo one", "cwd": WS}));
    assert_eq!(
        (calls[1].0.as_str(), calls[1].1.as_str()),
        ("toolu_mock_1_1", "second_tool")
    );
    assert_eq!(concat(&events, "content_block_delta", "/delta/text"), "");
    // Past the error reply (turn 2) the script says "done", then after_end.
    for turns in [3, 9] {
        let body = post(server.port(), PATH, &request(turns, false))
            .await
            .json();
        assert_eq!(body["content"], json!([{"type": "text", "text": "done"}]));
        assert_eq!(body["stop_reason"], "end_turn");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn non_streaming_reply_and_prefill() {
    let server = start().await;
    let mut req = request(1, false);
    // A trailing assistant message is a prefill: still turn 1.
    req["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "assistant", "content": "{"}));
    let body = post(server.port(), PATH, &req).await.json();
    assert_eq!(body["type"], "message");
    assert_eq!(body["stop_reason"], "tool_use");
    let content = body["content"].as_array().unwrap();
    assert_eq!(content.len(), 2);
    assert_eq!(content[1]["input"], json!({"command": "echo two"}));
    assert_eq!(server.requests()[0].turn, Some(1));
    server.shutdown().await;
}

#[tokio::test]
async fn side_requests_get_side_text_and_do_not_advance() {
    let server = start().await;
    let mut title = request(0, false);
    title.as_object_mut().unwrap().remove("tools");
    title["model"] = json!("claude-haiku-4-5");
    title["output_config"] = json!({"format": {"type": "json_schema", "schema": {"type": "object",
        "properties": {"title": {"type": "string"}}, "required": ["title"],
        "additionalProperties": false}}});
    let body = post(server.port(), PATH, &title).await.json();
    assert_eq!(body["content"][0]["text"], r#"{"title":"Mock title"}"#);
    assert_eq!(body["model"], "claude-haiku-4-5");
    let mut probe = request(0, true);
    probe["tools"] = json!([]);
    let events = post(server.port(), PATH, &probe).await.sse();
    assert_eq!(
        concat(&events, "content_block_delta", "/delta/text"),
        "Mock title"
    );
    // The main thread still starts at reply 0.
    let events = post(server.port(), PATH, &request(0, true)).await.sse();
    assert_eq!(tool_uses(&events)[0].1, "Write");
    let kinds: Vec<RequestKind> = server.requests().iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [RequestKind::Side, RequestKind::Side, RequestKind::Main]
    );
    server.shutdown().await;
}

#[tokio::test]
async fn http_error_reply_and_count_tokens() {
    let server = start().await;
    let resp = post(server.port(), PATH, &request(2, true)).await;
    assert_eq!(resp.status, 529);
    assert_eq!(
        resp.json(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "overloaded"}})
    );
    let log = server.requests();
    assert_eq!((log[0].status, log[0].turn), (529, Some(2)));
    let resp = post(
        server.port(),
        "/v1/messages/count_tokens?beta=true",
        &request(0, false),
    )
    .await;
    assert!(resp.json()["input_tokens"].as_u64().unwrap() > 10);
    assert_eq!(server.requests()[1].kind, RequestKind::CountTokens);
    server.shutdown().await;
}

#[tokio::test]
async fn neutral_action_without_translator_is_a_500() {
    let script = Script::from_str(crate::common::SCRIPT, "t.yaml", true).unwrap();
    let server = ScriptedModel::start(ServerConfig::new(script, WS))
        .await
        .unwrap();
    let resp = post(server.port(), PATH, &request(0, true)).await;
    assert_eq!(resp.status, 500);
    let message = resp.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("write_file") && message.contains("no action translator"),
        "{message}"
    );
    let log = server.requests();
    assert_eq!(log[0].status, 500);
    assert_eq!(log[0].error.as_deref(), Some(message.as_str()));
    // Replies without neutral actions still work.
    let events = post(server.port(), PATH, &request(1, true)).await.sse();
    assert_eq!(tool_uses(&events).len(), 2);
    server.shutdown().await;
}
