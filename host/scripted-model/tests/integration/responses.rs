//! OpenAI Responses API, with request shapes as Codex sends them.

use std::sync::Arc;

use coder_eval_scripted_model::{
    NeutralAction, RequestKind, Script, ScriptedModel, ServerConfig, ToolCallSpec,
};
use serde_json::{Value, json};

use crate::common::{WS, concat, post, shared_dir, start};

const PATH: &str = "/v1/responses";

fn tools() -> Value {
    json!([
        {"type": "function", "name": "exec_command", "description": "Runs a command",
         "strict": false, "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}},
                                         "required": ["cmd"]}},
        {"type": "custom", "name": "apply_patch", "description": "Apply a patch",
         "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch"}},
        {"type": "web_search"}
    ])
}

/// A Codex request holding `turns` completed assistant turns (full history, store false).
fn request(turns: usize, stream: bool) -> Value {
    let mut input = vec![
        json!({"type": "message", "role": "developer",
               "content": [{"type": "input_text", "text": "<permissions instructions>"}]}),
        json!({"type": "message", "role": "user",
               "content": [{"type": "input_text", "text": "Create app.py and run it."}]}),
    ];
    for t in 0..turns {
        let call_id = format!("call_mock_{t}_0");
        // One assistant turn = a run of reasoning, message and call items.
        input.push(json!({"type": "reasoning", "summary": [], "encrypted_content": null}));
        input.push(json!({"type": "message", "role": "assistant",
                          "content": [{"type": "output_text", "text": "Working."}]}));
        input.push(json!({"type": "function_call", "name": "exec_command",
                          "arguments": "{\"cmd\":\"date\"}", "call_id": call_id}));
        input.push(json!({"type": "function_call_output", "call_id": call_id, "output": "ok"}));
    }
    json!({"model": "gpt-5.5", "instructions": "You are Codex.", "input": input,
           "tools": tools(), "tool_choice": "auto", "parallel_tool_calls": true,
           "reasoning": {"effort": "medium", "summary": "auto"}, "store": false,
           "stream": stream, "include": ["reasoning.encrypted_content"],
           "prompt_cache_key": "test-session"})
}

/// The finished output items of a streamed answer (from `response.output_item.done`).
fn done_items(events: &[(Option<String>, Value)]) -> Vec<Value> {
    events
        .iter()
        .filter(|(_, e)| e["type"] == "response.output_item.done")
        .map(|(_, e)| e["item"].clone())
        .collect()
}

#[tokio::test]
async fn turn0_streams_reasoning_text_and_translated_write() {
    let server = start().await;
    let events = post(server.port(), PATH, &request(0, true)).await.sse();
    for (i, (name, data)) in events.iter().enumerate() {
        assert_eq!(name.as_deref(), data["type"].as_str());
        assert_eq!(data["sequence_number"], json!(i + 1));
    }
    assert_eq!(events[0].1["type"], "response.created");
    let last = &events.last().unwrap().1;
    assert_eq!(last["type"], "response.completed");
    assert!(last["response"]["usage"]["total_tokens"].as_u64().unwrap() > 0);
    assert_eq!(
        concat(&events, "response.output_text.delta", "/delta"),
        "I'll create the file app.py and then run it for you."
    );
    assert_eq!(
        concat(&events, "response.reasoning_summary_text.delta", "/delta"),
        "Plan: write the file, then run it."
    );
    let items = done_items(&events);
    let types: Vec<&str> = items.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["reasoning", "message", "function_call"]);
    assert_eq!(items[2]["name"], "Write");
    assert_eq!(items[2]["call_id"], "call_mock_0_0");
    let args: Value = serde_json::from_str(items[2]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(
        args,
        json!({"file_path": format!("{WS}/app.py"), "content": "print('hi')\n"})
    );
    assert_eq!(
        concat(&events, "response.function_call_arguments.delta", "/delta"),
        items[2]["arguments"].as_str().unwrap()
    );
    assert_eq!(last["response"]["output"], json!(items));
    let log = server.requests();
    assert_eq!((log[0].kind, log[0].turn), (RequestKind::Main, Some(0)));
    assert_eq!(log[0].tools, ["exec_command", "apply_patch", "web_search"]);
    server.shutdown().await;
}

#[tokio::test]
async fn turn1_parallel_calls_error_and_after_end() {
    let server = start().await;
    let items = done_items(&post(server.port(), PATH, &request(1, true)).await.sse());
    let names: Vec<&str> = items.iter().map(|i| i["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["first_tool", "second_tool"]);
    assert_eq!(
        items[0]["arguments"],
        r#"{"command":"echo one","cwd":"/tmp/coder-eval-ws"}"#
    );
    let resp = post(server.port(), PATH, &request(2, true)).await;
    assert_eq!(resp.status, 529);
    assert_eq!(resp.json()["error"]["message"], "overloaded");
    assert_eq!(resp.json()["error"]["type"], "server_error");
    let body = post(server.port(), PATH, &request(3, false)).await.json();
    assert_eq!(body["object"], "response");
    assert_eq!(body["output"][0]["content"][0]["text"], "done");
    server.shutdown().await;
}

#[tokio::test]
async fn side_request_and_previous_response_id() {
    let server = start().await;
    let mut side = request(0, true);
    side["tools"] = json!([]);
    side["text"] = json!({"format": {"type": "json_schema", "name": "t", "strict": true,
        "schema": {"type": "object", "properties": {"title": {"type": "string"}}}}});
    let events = post(server.port(), PATH, &side).await.sse();
    assert_eq!(
        concat(&events, "response.output_text.delta", "/delta"),
        r#"{"title":"Mock title"}"#
    );
    // A stored conversation: the first answer's id continues at turn 1.
    let first = post(server.port(), PATH, &request(0, false)).await.json();
    let mut next = request(0, false);
    next["previous_response_id"] = first["id"].clone();
    next["input"] =
        json!([{"type": "function_call_output", "call_id": "call_mock_0_0", "output": "ok"}]);
    let second = post(server.port(), PATH, &next).await.json();
    assert_eq!(second["output"].as_array().unwrap().len(), 2);
    let turns: Vec<_> = server.requests().iter().map(|r| (r.kind, r.turn)).collect();
    assert_eq!(
        turns,
        [
            (RequestKind::Side, Some(0)),
            (RequestKind::Main, Some(0)),
            (RequestKind::Main, Some(1))
        ]
    );
    server.shutdown().await;
}

#[tokio::test]
async fn corpus_codex_script_sends_custom_apply_patch() {
    let script =
        Script::load(&shared_dir().join("corpus/live/codex/parallel.script.json")).unwrap();
    let server = ScriptedModel::start(ServerConfig::new(script, WS))
        .await
        .unwrap();
    let events = post(server.port(), PATH, &request(0, true)).await.sse();
    let items = done_items(&events);
    assert_eq!(items[1]["type"], "custom_tool_call");
    assert_eq!(items[1]["name"], "apply_patch");
    let input = items[1]["input"].as_str().unwrap();
    assert!(input.starts_with("*** Begin Patch\n*** Add File: a.txt"));
    assert_eq!(
        concat(&events, "response.custom_tool_call_input.delta", "/delta"),
        input
    );
    assert_eq!(
        (items[2]["type"].as_str(), items[2]["name"].as_str()),
        (Some("function_call"), Some("exec_command"))
    );
    server.shutdown().await;
}

#[tokio::test]
async fn translator_may_return_a_custom_call() {
    let translator = Arc::new(|action: &NeutralAction, _ws: &str| match action {
        NeutralAction::WriteFile { path, content } => ToolCallSpec::Custom {
            name: "apply_patch".into(),
            input: format!("*** Begin Patch\n*** Add File: {path}\n+{content}*** End Patch\n"),
        },
        _ => ToolCallSpec::Function {
            name: "exec_command".into(),
            arguments: json!({}),
        },
    });
    let script = Script::from_str(crate::common::SCRIPT, "t.yaml", true).unwrap();
    let config = ServerConfig::new(script, WS).with_translator(translator);
    let server = ScriptedModel::start(config).await.unwrap();
    let items = done_items(&post(server.port(), PATH, &request(0, true)).await.sse());
    assert_eq!(items[2]["type"], "custom_tool_call");
    assert_eq!(
        items[2]["input"],
        format!("*** Begin Patch\n*** Add File: {WS}/app.py\n+print('hi')\n*** End Patch\n")
    );
    server.shutdown().await;
}
