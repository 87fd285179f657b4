//! `max_tool_calls` over every thread of a run: a sub-agent's requests carry a history of
//! their own (Claude Code's `Agent` tool), which starts again at reply 0, but the tool
//! calls its replies hand out count with the main thread's; a retry (a re-send of an
//! answer that was not delivered whole) counts once, an identical twin thread counts
//! apart.

use coder_eval_scripted_model::{Hold, HoldReason, Script, ScriptedModel, ServerConfig};
use serde_json::{Value, json};

use crate::common::{WS, post};

const PATH: &str = "/v1/messages";

/// A JSON (non-streamed) request of the thread started by `prompt`, holding `turns`
/// completed assistant turns, as Claude Code sends it (tools offered: a main request).
fn request(prompt: &str, turns: usize) -> Value {
    let mut messages = vec![json!({"role": "user", "content": [
        {"type": "text", "text": prompt, "cache_control": {"type": "ephemeral"}}]})];
    for t in 0..turns {
        let id = format!("toolu_mock_{t}_0");
        messages.push(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "date"}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": "ok"}]}));
    }
    json!({"model": "m", "max_tokens": 100, "stream": false, "messages": messages,
           "tools": [{"name": "Bash", "input_schema": {"type": "object"}}]})
}

fn tool_ids(body: &Value) -> Vec<String> {
    body["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["id"].as_str().unwrap().to_string())
        .collect()
}

/// Main thread: call 1, then starts a sub-agent (call 2). The sub-agent's first request
/// is at turn 0 again: its reply hands out call 3, with an id of its own; a second
/// sub-agent would hand out call 4, so it is held.
#[tokio::test]
async fn a_sub_agent_thread_counts_toward_max_tool_calls_and_a_retry_does_not() {
    let script = Script::from_str(
        "replies:\n  - tool_calls: [{name: Bash, arguments: {command: a}}]\n  \
         - tool_calls: [{name: Agent, arguments: {prompt: sub}}]\n  - text: done\n",
        "threads.yaml",
        true,
    )
    .unwrap();
    let mut config = ServerConfig::new(script, WS);
    config.hold_past_tool_calls = Some(3);
    let server = ScriptedModel::start(config).await.unwrap();
    let port = server.port();
    let mut held = server.held();

    let first = post(port, PATH, &request("main", 0)).await;
    assert_eq!(tool_ids(&first.json()), ["toolu_mock_0_0"]);
    let agent = post(port, PATH, &request("main", 1)).await;
    assert_eq!(tool_ids(&agent.json()), ["toolu_mock_1_0"]);
    // The sub-agent's first request: reply 0 again, call 3 of the run (allowed), with an
    // id no earlier call had.
    let sub = post(port, PATH, &request("sub", 0)).await;
    assert_eq!(sub.status, 200);
    let sub_ids = tool_ids(&sub.json());
    assert_eq!(sub_ids.len(), 1);
    assert!(
        !["toolu_mock_0_0", "toolu_mock_1_0"].contains(&sub_ids[0].as_str()),
        "{sub_ids:?}"
    );
    // A second sub-agent would hand out call 4: held.
    let pending = tokio::spawn(async move { post(port, PATH, &request("sub 2", 0)).await });
    held.changed().await.unwrap();
    assert_eq!(
        *held.borrow(),
        Some(Hold {
            turn: 0,
            tool_calls_before: 3,
            reason: HoldReason::MaxToolCalls
        })
    );
    // The first sub-agent's next reply, the Agent call, would be call 4 too: held.
    let also = tokio::spawn(async move { post(port, PATH, &request("sub", 1)).await });
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(!pending.is_finished() && !also.is_finished());
    // A reply without tool calls is answered.
    assert_eq!(post(port, PATH, &request("main", 2)).await.status, 200);
    let log = server.requests();
    assert_eq!(log.iter().filter(|r| r.status == 503).count(), 2, "{log:?}");
    server.shutdown().await;
    assert_eq!(pending.await.unwrap().status, 503);
    assert_eq!(also.await.unwrap().status, 503);
}

/// The same history again once its answer was delivered is an identical twin (two
/// Claude Code sub-agents started with the same prompt), not a retry: a thread of its
/// own, counted, so past the cap it is held. (A retry, the re-send of an answer that did
/// not go out whole, is the tally's unit test: `tally::tests`.)
#[tokio::test]
async fn an_identical_twin_counts_apart() {
    let script = Script::from_str(
        "replies:\n  - tool_calls: [{name: Bash, arguments: {command: a}}]\n",
        "twins.yaml",
        true,
    )
    .unwrap();
    let mut config = ServerConfig::new(script, WS);
    config.hold_past_tool_calls = Some(1);
    let server = ScriptedModel::start(config).await.unwrap();
    let port = server.port();
    let mut held = server.held();
    let first = post(port, PATH, &request("sub", 0)).await;
    assert_eq!(tool_ids(&first.json()), ["toolu_mock_0_0"]);
    // Its twin, once that answer was delivered: call 2 of the run, held.
    let twin = tokio::spawn(async move { post(port, PATH, &request("sub", 0)).await });
    held.changed().await.unwrap();
    assert_eq!(
        *held.borrow(),
        Some(Hold {
            turn: 0,
            tool_calls_before: 1,
            reason: HoldReason::MaxToolCalls
        })
    );
    server.shutdown().await;
    assert_eq!(twin.await.unwrap().status, 503);
}
