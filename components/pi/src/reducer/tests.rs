use super::*;
use harness_kit::ToolStatus;

type Reduced = harness_kit::testing::Reduced<PiReducer>;

fn assistant_end(text: &str, response: &str, stop: &str, input: u64) -> String {
    format!(
        r#"{{"type":"message_end","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"usage":{{"input":{input},"output":3,"cacheRead":10,"cacheWrite":2,"totalTokens":0,"cost":{{"total":0.25}}}},"stopReason":"{stop}","responseId":"{response}"}}}}"#
    )
}

const TOOL: &str = concat!(
    r#"{"type":"tool_execution_start","toolCallId":"c1","toolName":"bash","args":{"command":"ls x"}}"#,
    "\n",
    r#"{"type":"tool_execution_update","toolCallId":"c1","toolName":"bash","args":{},"partialResult":{"content":[]}}"#,
    "\n",
    r#"{"type":"tool_execution_end","toolCallId":"c1","toolName":"bash","result":{"content":[{"type":"text","text":"ls: x: No such file\n\n\nCommand exited with code 2"}],"details":{}},"isError":true}"#,
);

fn run(last_stop: &str) -> String {
    [
        r#"{"type":"session","version":3,"id":"s1","cwd":"/w"}"#.to_string(),
        r#"{"type":"agent_start"}"#.to_string(),
        r#"{"type":"turn_start"}"#.to_string(),
        r#"{"type":"message_start","message":{"role":"user","content":[]}}"#.to_string(),
        r#"{"type":"message_start","message":{"role":"assistant","content":[]}}"#.to_string(),
        r#"{"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":"I'll"}}"#
            .to_string(),
        assistant_end("I'll look.", "r1", "toolUse", 100),
        TOOL.to_string(),
        r#"{"type":"turn_end","message":{"role":"assistant"},"toolResults":[]}"#.to_string(),
        r#"{"type":"turn_start"}"#.to_string(),
        assistant_end("done", "r2", last_stop, 200),
        r#"{"type":"turn_end","message":{"role":"assistant"},"toolResults":[]}"#.to_string(),
    ]
    .join("\n")
}

#[test]
fn turns_messages_usage_and_tools() {
    let events = Reduced::new(&format!(
        "{}\n{}",
        run("stop"),
        r#"{"type":"agent_end","messages":[{"role":"user"},{"role":"assistant","content":[]},{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop"}]}"#
    ));
    assert_eq!(events.calls(), 2);
    assert!(events.contains(&Event::SessionStarted {
        session_id: Some("s1".into()),
        cli_version: None,
        model: None,
        tools: vec![],
    }));
    assert!(events.contains(&Event::AssistantMessage {
        message_id: "r1".into(),
        parent_call_id: None,
        text: "I'll look.".into(),
        usage: Some(Usage {
            input_tokens: 100,
            output_tokens: 3,
            cache_read_tokens: 10,
            cache_write_tokens: Some(2),
        }),
        cost_usd: Some(0.25),
    }));
    assert!(events.contains(&Event::ToolCallFinished {
        call_id: "c1".into(),
        status: ToolStatus::Error,
        output_excerpt: "ls: x: No such file\n\n\nCommand exited with code 2".into(),
        exit_code: Some(2),
        cli_duration_ms: None,
    }));
    let Some(Event::FinalResult {
        success,
        num_turns,
        text,
        usage,
        cost_usd,
        ..
    }) = events.final_result()
    else {
        panic!("no result")
    };
    assert!(success);
    assert_eq!(*num_turns, Some(2));
    assert_eq!(text.as_deref(), Some("done"));
    // Per-message usage and cost: the collector sums the messages.
    assert_eq!((*usage, *cost_usd), (None, None));
    assert!(events.kinds().is_empty(), "{events:?}");
}

#[test]
fn error_stop_reason_fails_the_run() {
    let events = Reduced::new(concat!(
        r#"{"type":"agent_start"}"#,
        "\n",
        r#"{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"Upstream error"}}"#,
        "\n",
        r#"{"type":"agent_end","messages":[{"role":"assistant","content":[],"stopReason":"error","errorMessage":"Upstream error"}]}"#,
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
    assert_eq!(error_kind.as_deref(), Some("error"));
    assert_eq!(error_message.as_deref(), Some("Upstream error"));
    // No turn_start: the message itself opened the call.
    assert_eq!(events.calls(), 1);
}

#[test]
fn will_retry_is_not_the_end() {
    let events = Reduced::new(concat!(
        r#"{"type":"agent_end","messages":[],"willRetry":true}"#,
        "\n",
        r#"{"type":"auto_retry_start"}"#,
    ));
    assert!(events.final_result().is_none());
    assert_eq!(events.kinds(), ["retry", "missing_terminal_event"]);
    // No failed message before it: the retry abandons no call.
    assert_eq!(events.retries(), [(true, false, None, None, None, None)]);
}

#[test]
fn the_last_agent_run_decides() {
    let failed = concat!(
        r#"{"type":"agent_start"}"#,
        "\n",
        r#"{"type":"turn_start"}"#,
        "\n",
        r#"{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"Rate limit exceeded"}}"#,
        "\n",
        r#"{"type":"turn_end","message":{"role":"assistant"}}"#,
        "\n",
        r#"{"type":"agent_end","messages":[{"role":"assistant","stopReason":"error","errorMessage":"Rate limit exceeded"}]}"#,
        "\n",
        r#"{"type":"auto_retry_start"}"#,
        "\n",
        r#"{"type":"agent_start"}"#,
        "\n",
        r#"{"type":"turn_start"}"#,
    );
    // The retry is cut: no result, although the first run ended.
    let events = Reduced::new(failed);
    assert!(events.final_result().is_none());
    assert_eq!(events.calls(), 2);
    // The failed attempt is un-counted (B47).
    assert_eq!(events.turns(), 1);

    // The retry succeeds: one result, the retry's.
    let events = Reduced::new(&format!(
        "{failed}\n{}\n{}",
        assistant_end("ok", "r9", "stop", 1),
        r#"{"type":"agent_end","messages":[{"role":"assistant","content":[{"type":"text","text":"ok"}],"stopReason":"stop"}]}"#
    ));
    let results: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::FinalResult { .. }))
        .collect();
    assert!(
        // One call: the failed attempt was retried, not a turn (B47; this said 2 before).
        matches!(results[..], [Event::FinalResult { success: true, num_turns: Some(1), text: Some(t), .. }] if t == "ok")
    );
}

#[test]
fn missing_agent_end_after_a_finished_turn_still_ends() {
    // B22: the stream stops after the last turn_end.
    let events = Reduced::new(&run("stop"));
    assert!(matches!(
        events.final_result(),
        Some(Event::FinalResult {
            success: true,
            num_turns: Some(2),
            ..
        })
    ));
    assert_eq!(events.kinds(), ["missing_terminal_event"]);

    // Ending after a turn that asked for tools is a cut stream: no result.
    let events = Reduced::new(&run("toolUse"));
    assert!(events.final_result().is_none());
}

#[test]
fn a_cut_message_keeps_its_streamed_text() {
    let events = Reduced::new(concat!(
        r#"{"type":"turn_start"}"#,
        "\n",
        r#"{"type":"message_start","message":{"role":"assistant","content":[]}}"#,
        "\n",
        r#"{"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":"Hal"}}"#,
        "\n",
        r#"{"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":"f"}}"#,
    ));
    assert_eq!(events.calls(), 1);
    assert!(events.contains(&Event::AssistantMessage {
        message_id: "pi-msg-1".into(),
        parent_call_id: None,
        text: "Half".into(),
        usage: None,
        cost_usd: None,
    }));
    assert!(events.final_result().is_none());
}

#[test]
fn snapshot_updates_do_not_add_calls_or_text() {
    // B21: each update repeats the whole message in `partial`.
    let events = Reduced::new(concat!(
        r#"{"type":"turn_start"}"#,
        "\n",
        r#"{"type":"message_update","assistantMessageEvent":{"type":"text_start","partial":{"role":"assistant","content":[{"type":"text","text":"ab"}]}}}"#,
        "\n",
        r#"{"type":"message_update","assistantMessageEvent":{"type":"text_end","partial":{"role":"assistant","content":[{"type":"text","text":"ab"}]}}}"#,
        "\n",
        r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ab"}],"stopReason":"stop"}}"#,
        "\n",
        r#"{"type":"agent_end","messages":[]}"#,
    ));
    assert_eq!(events.calls(), 1);
    let texts: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::AssistantMessage { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["ab"]);
    assert!(matches!(
        events.final_result(),
        Some(Event::FinalResult {
            success: true,
            num_turns: Some(1),
            ..
        })
    ));
}

#[test]
fn unknown_and_broken_lines_are_diagnostics() {
    let events = Reduced::truncated(
        "{this is not valid json}\n{\"type\":\"queue_update\"}\n{\"x\":1}\n{\"type\":\"compaction_start\"}",
        Some("{\"type\":\"mess"),
    );
    assert_eq!(
        events.kinds(),
        [
            "not_json",
            "unknown_type",
            "missing_field",
            "compact_boundary",
            "truncated_line",
            "missing_terminal_event",
        ]
    );
}

#[test]
fn tool_end_without_start_and_exit_code_details() {
    let events = Reduced::new(
        r#"{"type":"tool_execution_end","toolCallId":"t","toolName":"bash","result":{"content":[{"type":"text","text":"ok"}],"details":{"exit_code":0}},"isError":false}"#,
    );
    assert!(
        matches!(&events[0], Event::ToolCallStarted { call_id, name, .. } if call_id == "t" && name == "bash")
    );
    assert_eq!(
        events[1],
        Event::ToolCallFinished {
            call_id: "t".into(),
            status: ToolStatus::Ok,
            output_excerpt: "ok".into(),
            exit_code: Some(0),
            cli_duration_ms: None,
        }
    );
}

const FIELD2: &str = "tests/corpus/field2/pi";

/// B47 (pi 0.73.1): a 429, `agent_end`, `auto_retry_start` (2 s), a new run that succeeds.
/// Right values from its expected.md.
#[test]
fn b47_a_retried_attempt_is_not_a_turn_and_the_last_run_decides() {
    let r = Reduced::file(&format!("{FIELD2}/B47-agent-end-then-auto-retry.jsonl"));
    assert_eq!(r.turns(), 2);
    let abandoned: Vec<&str> = r.abandoned().into_iter().collect();
    assert_eq!(r.retries().len(), 1);
    assert_eq!(
        r.retries()[0],
        (
            true,
            true,
            Some(abandoned[0]),
            Some(1),
            Some(2000),
            Some(429)
        )
    );
    assert!(r.iter().any(
        |e| matches!(e, Event::ModelCallRetried { error: Some(m), .. }
        if m == "429 Rate limit reached for requests")
    ));
    let texts: Vec<&str> = r.messages().into_iter().map(|(_, t)| t).collect();
    assert_eq!(texts, ["", "All 12 tests passed."]);
    assert_eq!(r.tools(), [("call_mock_0_0", "bash", Some(ToolStatus::Ok))]);
    let u = r.message_usage().unwrap();
    assert_eq!(
        (
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens
        ),
        (3108, 31, 0, Some(0))
    );
    let costs: Vec<Option<f64>> = r
        .iter()
        .filter_map(|e| match e {
            Event::AssistantMessage { cost_usd, .. } => Some(*cost_usd),
            _ => None,
        })
        .collect();
    assert!(costs.iter().all(|c| *c == Some(0.0)), "{costs:?}");
    let results: Vec<&Event> = r
        .iter()
        .filter(|e| matches!(e, Event::FinalResult { .. }))
        .collect();
    assert!(
        matches!(results[..], [Event::FinalResult { success: true, num_turns: Some(2), text: Some(t), .. }]
            if t == "All 12 tests passed."),
        "{results:?}"
    );
    assert_eq!(r.kinds(), ["retry"], "the recovery is noted");
}

/// B47b: four 429s, three retries, `auto_retry_end {success: false}`, exit 0.
#[test]
fn b47b_exhausted_retries_are_an_error_with_no_turns() {
    let r = Reduced::file(&format!(
        "{FIELD2}/B47b-auto-retry-exhausted-exit-zero.jsonl"
    ));
    assert_eq!(r.calls(), 4, "four attempts started");
    assert_eq!(r.turns(), 0);
    let retries = r.retries();
    assert_eq!(retries.len(), 4, "three retries and the final give-up");
    let delays: u64 = retries.iter().filter_map(|t| t.4).sum();
    assert_eq!(delays, 14_000);
    assert!(retries.iter().all(|t| t.1), "each abandons its attempt");
    assert!(r.tools().is_empty());
    assert!(r.messages().is_empty());
    assert!(matches!(r.final_result(),
        Some(Event::FinalResult { success: false, num_turns: Some(0), error_message: Some(m), text: None, .. })
            if m == "429 Rate limit reached for requests"));
}

/// The model called a tool Pi does not have (pi 0.73, against the scripted model): Pi
/// answers `Tool <name> not found`; the call never ran, so it is denied, not an error.
#[test]
fn a_call_to_a_tool_pi_does_not_have_is_denied() {
    let events = Reduced::new(
        r#"{"type":"tool_execution_end","toolCallId":"call_mock_0_0","toolName":"no_such_tool","result":{"content":[{"type":"text","text":"Tool no_such_tool not found"}],"details":{}},"isError":true}"#,
    );
    assert!(
        matches!(
            &events[1],
            Event::ToolCallFinished {
                status: ToolStatus::Denied,
                ..
            }
        ),
        "{:?}",
        events[1]
    );
    // A tool's own failure stays an error.
    let events = Reduced::new(
        r#"{"type":"tool_execution_end","toolCallId":"c","toolName":"read","result":{"content":[{"type":"text","text":"File x not found"}],"details":{}},"isError":true}"#,
    );
    assert!(matches!(
        &events[1],
        Event::ToolCallFinished {
            status: ToolStatus::Error,
            ..
        }
    ));
}
