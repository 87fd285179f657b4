//! Gemini API, with request shapes as Gemini CLI sends them.

use coder_eval_scripted_model::RequestKind;
use serde_json::{Value, json};

use crate::common::{WS, post, start};

const STREAM: &str = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
const PLAIN: &str = "/v1beta/models/gemini-2.5-flash:generateContent";

fn tools() -> Value {
    json!([{"functionDeclarations": [
        {"name": "write_file", "description": "Writes a file",
         "parametersJsonSchema": {"type": "object", "properties": {"file_path": {"type": "string"},
                                                                   "content": {"type": "string"}}}},
        {"name": "run_shell_command", "description": "Runs a shell command",
         "parametersJsonSchema": {"type": "object", "properties": {"command": {"type": "string"}}}}
    ]}])
}

/// A Gemini CLI request holding `turns` completed model turns.
fn request(turns: usize) -> Value {
    let mut contents =
        vec![json!({"role": "user", "parts": [{"text": "Create app.py and run it."}]})];
    for _ in 0..turns {
        contents.push(json!({"role": "model", "parts": [{"text": "Working."},
            {"functionCall": {"name": "run_shell_command", "args": {"command": "date"}}}]}));
        contents.push(json!({"role": "user", "parts": [{"functionResponse":
            {"name": "run_shell_command", "response": {"output": "ok"}}}]}));
    }
    json!({"contents": contents, "tools": tools(),
           "systemInstruction": {"role": "user", "parts": [{"text": "You are Gemini CLI."}]},
           "generationConfig": {"temperature": 0, "topP": 1,
                                "thinkingConfig": {"includeThoughts": true}}})
}

fn parts(events: &[(Option<String>, Value)]) -> Vec<Value> {
    events
        .iter()
        .flat_map(|(_, e)| {
            e["candidates"][0]["content"]["parts"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .collect()
}

fn text(parts: &[Value], thought: bool) -> String {
    parts
        .iter()
        .filter(|p| p.get("thought").is_some() == thought)
        .filter_map(|p| p["text"].as_str())
        .collect()
}

fn calls(parts: &[Value]) -> Vec<(String, Value)> {
    parts
        .iter()
        .filter_map(|p| p.get("functionCall"))
        .map(|c| (c["name"].as_str().unwrap().to_string(), c["args"].clone()))
        .collect()
}

#[tokio::test]
async fn turn0_streams_thought_text_and_translated_write() {
    let server = start().await;
    let events = post(server.port(), STREAM, &request(0)).await.sse();
    let all = parts(&events);
    assert_eq!(
        text(&all, false),
        "I'll create the file app.py and then run it for you."
    );
    assert_eq!(text(&all, true), "Plan: write the file, then run it.");
    assert_eq!(
        calls(&all),
        [(
            "Write".to_string(),
            json!({"file_path": format!("{WS}/app.py"), "content": "print('hi')\n"})
        )]
    );
    let last = &events.last().unwrap().1;
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert!(last["usageMetadata"]["totalTokenCount"].as_u64().unwrap() > 0);
    assert_eq!(last["modelVersion"], "gemini-2.5-flash");
    let log = server.requests();
    assert_eq!(
        (log[0].kind, log[0].turn, log[0].stream),
        (RequestKind::Main, Some(0), Some(true))
    );
    assert_eq!(log[0].tools, ["write_file", "run_shell_command"]);
    assert_eq!(log[0].model.as_deref(), Some("gemini-2.5-flash"));
    server.shutdown().await;
}

#[tokio::test]
async fn turn1_parallel_calls_then_error() {
    let server = start().await;
    let events = post(server.port(), STREAM, &request(1)).await.sse();
    let found = calls(&parts(&events));
    assert_eq!(found.len(), 2);
    assert_eq!(
        found[0],
        (
            "first_tool".to_string(),
            json!({"command": "echo one", "cwd": WS})
        )
    );
    assert_eq!(found[1].0, "second_tool");
    let resp = post(server.port(), STREAM, &request(2)).await;
    assert_eq!(resp.status, 529);
    assert_eq!(
        resp.json(),
        json!({"error": {"code": 529, "message": "overloaded", "status": "UNAVAILABLE"}})
    );
    let events = post(server.port(), STREAM, &request(3)).await.sse();
    assert_eq!(text(&parts(&events), false), "done");
    server.shutdown().await;
}

#[tokio::test]
async fn generate_content_and_toolless_requests_are_side_requests() {
    let server = start().await;
    // Gemini CLI's next-speaker check: non-streaming, JSON schema output.
    let mut check = request(1);
    check["generationConfig"]["responseJsonSchema"] = json!({"type": "object", "properties": {
        "reasoning": {"type": "string"},
        "next_speaker": {"type": "string", "enum": ["user", "model"]}},
        "required": ["reasoning", "next_speaker"]});
    let body = post(server.port(), PLAIN, &check).await.json();
    let answer: Value = serde_json::from_str(
        body["candidates"][0]["content"]["parts"][0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        answer,
        json!({"reasoning": "Mock title", "next_speaker": "user"})
    );
    let mut toolless = request(0);
    toolless.as_object_mut().unwrap().remove("tools");
    let events = post(server.port(), STREAM, &toolless).await.sse();
    assert_eq!(text(&parts(&events), false), "Mock title");
    // The main thread is not advanced.
    let events = post(server.port(), STREAM, &request(0)).await.sse();
    assert_eq!(calls(&parts(&events))[0].0, "Write");
    let kinds: Vec<_> = server
        .requests()
        .iter()
        .map(|r| (r.kind, r.stream))
        .collect();
    assert_eq!(
        kinds,
        [
            (RequestKind::Side, Some(false)),
            (RequestKind::Side, Some(true)),
            (RequestKind::Main, Some(true))
        ]
    );
    let resp = post(
        server.port(),
        "/v1beta/models/gemini-2.5-flash:countTokens",
        &request(0),
    )
    .await;
    assert!(resp.json()["totalTokens"].as_u64().unwrap() > 0);
    server.shutdown().await;
}
