use super::*;
use harness_kit::Usage;

type Reduced = harness_kit::testing::Reduced<CodexReducer>;

fn cmd(id: &str, phase: &str, command: &str, status: &str, code: &str) -> String {
    format!(
        r#"{{"type":"item.{phase}","item":{{"id":"{id}","type":"command_execution","command":"{command}","aggregated_output":"out","exit_code":{code},"status":"{status}"}}}}"#
    )
}

fn msg(id: &str, text: &str) -> String {
    format!(
        r#"{{"type":"item.completed","item":{{"id":"{id}","type":"agent_message","text":"{text}"}}}}"#
    )
}

const START: &str =
    "{\"type\":\"thread.started\",\"thread_id\":\"t1\"}\n{\"type\":\"turn.started\"}";
const DONE: &str = r#"{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":5}}"#;

#[test]
fn sequential_single_tool_replies_are_one_call_each() {
    // max_turns.jsonl's shape: five one-command replies, then text = six calls.
    let mut lines = vec![START.to_string()];
    for i in 0..5 {
        let id = format!("item_{i}");
        lines.push(cmd(&id, "started", "echo", "in_progress", "null"));
        lines.push(cmd(&id, "completed", "echo", "completed", "0"));
    }
    lines.push(msg("item_5", "done"));
    lines.push(DONE.to_string());
    let events = Reduced::new(&lines.join("\n"));
    assert_eq!(events.calls(), 6);
    // Each call's tool starts right after its call: the cap on call N+1 never cuts
    // call N's tool.
    let order: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::ModelCallStarted { .. } => Some("call"),
            Event::ToolCallStarted { .. } => Some("start"),
            Event::ToolCallFinished { .. } => Some("end"),
            _ => None,
        })
        .collect();
    assert_eq!(
        &order[..6],
        ["call", "start", "end", "call", "start", "end"]
    );
    let Some(Event::FinalResult { num_turns, .. }) = events.final_result() else {
        panic!("no result")
    };
    assert_eq!(*num_turns, Some(6));
}

#[test]
fn output_while_tools_run_stays_in_the_call() {
    let events = Reduced::new(
        &[
            START.to_string(),
            msg("item_0", "two at once"),
            cmd("item_1", "started", "a", "in_progress", "null"),
            cmd("item_2", "started", "b", "in_progress", "null"),
            cmd("item_1", "completed", "a", "completed", "0"),
            // A repeated line of a finished tool changes nothing.
            cmd("item_1", "completed", "a", "completed", "0"),
            cmd("item_2", "completed", "b", "completed", "0"),
            msg("item_3", "done"),
            DONE.to_string(),
        ]
        .join("\n"),
    );
    assert_eq!(events.calls(), 2);
    let finished = events.count(|e| matches!(e, Event::ToolCallFinished { .. }));
    assert_eq!(finished, 2);
}

#[test]
fn text_then_tool_is_one_call_and_reasoning_opens_calls() {
    let events = Reduced::new(
        &[
            START.to_string(),
            r#"{"type":"item.completed","item":{"id":"r0","type":"reasoning","text":"plan"}}"#
                .to_string(),
            msg("item_0", "I'll run it."),
            cmd("item_1", "started", "ls", "in_progress", "null"),
            cmd("item_1", "completed", "ls", "completed", "0"),
            r#"{"type":"item.completed","item":{"id":"r1","type":"reasoning","text":"ok"}}"#
                .to_string(),
            msg("item_2", "done"),
            DONE.to_string(),
        ]
        .join("\n"),
    );
    assert_eq!(events.calls(), 2);
}

#[test]
fn a_new_turn_closes_the_open_call() {
    let events = Reduced::new(
        &[
            START.to_string(),
            msg("item_0", "first"),
            DONE.to_string(),
            r#"{"type":"turn.started"}"#.to_string(),
            msg("item_1", "second"),
            DONE.to_string(),
        ]
        .join("\n"),
    );
    assert_eq!(events.calls(), 2);
}

#[test]
fn tool_status_exit_code_and_wrapper() {
    let events = Reduced::new(&[
        START.to_string(),
        r#"{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'ls does-not-exist'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#.to_string(),
        r#"{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'ls does-not-exist'","aggregated_output":"ls: cannot access","exit_code":2,"status":"failed"}}"#.to_string(),
        cmd("item_1", "completed", "rm -rf /", "declined", "null"),
        r#"{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"a.go","kind":"update"}],"status":"failed"}}"#.to_string(),
        r#"{"type":"item.completed","item":{"id":"item_3","type":"mcp_tool_call","server":"github","tool":"get_issue","arguments":{"n":1},"result":{"content":[{"type":"text","text":"body"}]},"error":null,"status":"completed"}}"#.to_string(),
        r#"{"type":"item.completed","item":{"id":"item_4","type":"web_search","query":"q"}}"#.to_string(),
    ]
    .join("\n"));
    let started: Vec<(&str, &str)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallStarted {
                name, input_json, ..
            } => Some((name.as_str(), input_json.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        started[0],
        (
            "exec_command",
            r#"{"command":"ls does-not-exist","command_line":"/bin/bash -lc 'ls does-not-exist'"}"#
        )
    );
    assert_eq!(started[2].0, "apply_patch");
    assert_eq!(started[3].0, "mcp__github__get_issue");
    assert_eq!(started[4].0, "web_search");
    let finished: Vec<(ToolStatus, Option<i32>, &str)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallFinished {
                status,
                exit_code,
                output_excerpt,
                ..
            } => Some((*status, *exit_code, output_excerpt.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        [
            (ToolStatus::Error, Some(2), "ls: cannot access"),
            // Declined by the CLI: never run (this said Error before).
            (ToolStatus::Denied, None, "out"),
            (ToolStatus::Error, None, "update a.go"),
            (ToolStatus::Ok, None, "body"),
            (ToolStatus::Unknown, None, ""),
        ]
    );
}

#[test]
fn usage_is_disjoint_and_never_summed_over_turns() {
    let events = Reduced::new(&[
        START.to_string(),
        msg("item_0", "one"),
        r#"{"type":"turn.completed","usage":{"input_tokens":800,"cached_input_tokens":200,"cache_write_input_tokens":100,"output_tokens":40,"reasoning_output_tokens":5}}"#.to_string(),
        r#"{"type":"turn.started"}"#.to_string(),
        msg("item_1", "two"),
        r#"{"type":"turn.completed","usage":{"input_tokens":1500,"cached_input_tokens":700,"cache_write_input_tokens":100,"output_tokens":90,"reasoning_output_tokens":10}}"#.to_string(),
    ]
    .join("\n"));
    let Some(Event::FinalResult {
        usage,
        cost_usd,
        success,
        text,
        ..
    }) = events.final_result()
    else {
        panic!("no result")
    };
    assert!(success);
    assert_eq!(text.as_deref(), Some("two"));
    assert_eq!(*cost_usd, None);
    assert_eq!(
        *usage,
        Some(Usage {
            input_tokens: 700,
            output_tokens: 90,
            cache_read_tokens: 700,
            cache_write_tokens: Some(100),
        })
    );
    // Only one result, at the end.
    assert_eq!(events.count(|e| matches!(e, Event::FinalResult { .. })), 1);
}

#[test]
fn errors_are_not_failures_but_turn_failed_is() {
    let events = Reduced::new(&[
        START.to_string(),
        r#"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"model rerouted"}}"#.to_string(),
        r#"{"type":"error","message":"stream disconnected; retrying"}"#.to_string(),
        msg("item_1", "done"),
        DONE.to_string(),
    ]
    .join("\n"));
    assert_eq!(events.kinds(), ["error_item", "cli_error"]);
    assert!(matches!(
        events.final_result(),
        Some(Event::FinalResult { success: true, .. })
    ));

    let events = Reduced::new(concat!(
        r#"{"type":"error","message":"Selected model is at capacity."}"#,
        "\n",
        r#"{"type":"turn.failed","error":{"message":"Selected model is at capacity."}}"#,
    ));
    let Some(Event::FinalResult {
        success,
        error_kind,
        error_message,
        ..
    }) = events.final_result()
    else {
        panic!("no result")
    };
    assert!(!success);
    assert_eq!(error_kind.as_deref(), Some("turn_failed"));
    assert_eq!(
        error_message.as_deref(),
        Some("Selected model is at capacity.")
    );
}

#[test]
fn json_failure_message_is_unwrapped() {
    let events = Reduced::new(
        r#"{"type":"turn.failed","error":{"message":"{\"type\":\"error\",\"status\":429,\"error\":{\"type\":\"usage_limit_reached\",\"message\":\"The usage limit has been reached\"}}"}}"#,
    );
    let Some(Event::FinalResult {
        error_kind,
        error_message,
        ..
    }) = events.final_result()
    else {
        panic!("no result")
    };
    assert_eq!(error_kind.as_deref(), Some("usage_limit_reached"));
    assert_eq!(
        error_message.as_deref(),
        Some("The usage limit has been reached (HTTP 429)")
    );
}

#[test]
fn no_terminal_event_no_result() {
    let events = Reduced::new(
        &[
            START.to_string(),
            r#"{"type":"error","message":"401"}"#.to_string(),
        ]
        .join("\n"),
    );
    assert!(events.final_result().is_none());
    assert_eq!(events.kinds(), ["cli_error", "missing_terminal_event"]);

    // Turn 1 completed, turn 2 never ends: incomplete, not a success.
    let events = Reduced::new(
        &[
            START.to_string(),
            msg("item_0", "first"),
            DONE.to_string(),
            r#"{"type":"turn.started"}"#.to_string(),
            cmd("item_1", "completed", "make", "completed", "0"),
        ]
        .join("\n"),
    );
    assert!(events.final_result().is_none());
}

#[test]
fn final_answer_phase_wins() {
    let events = Reduced::new(&[
        START.to_string(),
        r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","phase":"final_answer","text":"the answer"}}"#.to_string(),
        r#"{"type":"item.completed","item":{"id":"item_2","type":"agent_message","phase":"commentary","text":"by the way"}}"#.to_string(),
        DONE.to_string(),
    ]
    .join("\n"));
    assert!(matches!(events.final_result(),
        Some(Event::FinalResult { text: Some(t), .. }) if t == "the answer"));
    assert!(events.contains(&Event::AssistantMessage {
        message_id: "item_2".into(),
        parent_call_id: None,
        text: "by the way".into(),
        usage: None,
        cost_usd: None,
    }));
}

#[test]
fn unknown_broken_and_old_schema_lines_are_diagnostics() {
    let events = Reduced::truncated(
        &[
            START.to_string(),
            r#"{"type":"turn.reticulated"}"#.to_string(),
            r#"{"type":"item.completed","item":{"id":"x","type":"image_generation_call"}}"#
                .to_string(),
            "not json".to_string(),
            String::new(),
            r#"{"id":"1","msg":{"type":"task_started"}}"#.to_string(),
            r#"{"method":"turn/completed","params":{}}"#.to_string(),
            r#"{"item":{}}"#.to_string(),
            DONE.to_string(),
        ]
        .join("\n"),
        Some(r#"{"type":"item.comp"#),
    );
    assert_eq!(
        events.kinds(),
        [
            "unknown_type",
            "unknown_item_type",
            "not_json",
            "unsupported_stream_schema",
            "unsupported_stream_schema",
            "missing_field",
            "truncated_line",
        ]
    );
    // Unknown items are not model output.
    assert_eq!(events.calls(), 0);
}

#[test]
fn the_command_is_unwrapped_as_graders_unwrap_it() {
    let events = Reduced::new(&cmd(
        "item_0",
        "completed",
        r#"/bin/bash -lc \"sh -c 'ls -a'\""#,
        "completed",
        "0",
    ));
    assert!(events.iter().any(|e| matches!(e,
        Event::ToolCallStarted { input_json, .. }
            if input_json.starts_with(r#"{"command":"ls -a","#))));
}

#[test]
fn an_empty_type_is_a_missing_field_as_in_the_other_reducers() {
    let events = Reduced::new("{\"type\":\"\"}\n{\"type\":3}");
    assert_eq!(events.kinds(), ["missing_field", "missing_field"]);
}

#[test]
fn todo_list_updates_are_model_output_not_tools() {
    let events = Reduced::new(
        &[
            START.to_string(),
            r#"{"type":"item.started","item":{"id":"p","type":"todo_list","items":[]}}"#
                .to_string(),
            cmd("item_1", "completed", "ls", "completed", "0"),
            r#"{"type":"item.updated","item":{"id":"p","type":"todo_list","items":[]}}"#
                .to_string(),
            r#"{"type":"item.completed","item":{"id":"p","type":"todo_list","items":[]}}"#
                .to_string(),
            DONE.to_string(),
        ]
        .join("\n"),
    );
    assert_eq!(events.calls(), 2);
    assert_eq!(
        events.count(|e| matches!(e, Event::ToolCallStarted { .. })),
        1
    );
}

/// B42 (codex exec): five reconnects on HTTP 500, `error`, `turn.failed`, exit 0. Right
/// values from its expected.md.
#[test]
fn b42_a_failed_turn_is_an_error_with_unknown_usage() {
    let r = Reduced::file("tests/corpus/field2/codex/B42-turn-failed-exit-zero.jsonl");
    assert_eq!(r.turns(), 0);
    assert!(r.tools().is_empty());
    let retries = r.retries();
    assert_eq!(retries.len(), 5);
    for (n, retry) in retries.iter().enumerate() {
        assert_eq!(
            *retry,
            (true, false, None, Some(n as u32 + 1), None, Some(500))
        );
    }
    assert!(matches!(r.final_result(),
        Some(Event::FinalResult { success: false, error_message: Some(m), usage: None, cost_usd: None, num_turns: Some(0), .. })
            if m == "Internal server error"));
    assert_eq!(r.unreported(), [(UnreportedKind::Usage, None)]);
    // The fatal `error` line stays a diagnostic.
    assert_eq!(r.kinds(), ["cli_error"]);
}

#[test]
fn a_completed_turn_has_nothing_unreported() {
    let r = Reduced::new(&[START.to_string(), msg("item_0", "hi"), DONE.to_string()].join("\n"));
    assert!(r.unreported().is_empty());
    assert!(r.retries().is_empty());
}
