use super::*;
use crate::ToolStatus;

type Reduced = crate::testing::Reduced<OpenCodeReducer>;

fn step_start(session: &str, part_session: &str, msg: &str) -> String {
    format!(
        r#"{{"type":"step_start","sessionID":"{session}","part":{{"messageID":"{msg}","sessionID":"{part_session}","type":"step-start"}}}}"#
    )
}

fn step_finish(msg: &str, reason: &str) -> String {
    format!(
        r#"{{"type":"step_finish","sessionID":"s","part":{{"messageID":"{msg}","sessionID":"s","type":"step-finish","reason":"{reason}","tokens":{{"input":100,"output":10,"reasoning":5,"cache":{{"read":40,"write":2}}}},"cost":0.25}}}}"#
    )
}

fn text(msg: &str, text: &str) -> String {
    format!(
        r#"{{"type":"text","sessionID":"s","part":{{"messageID":"{msg}","sessionID":"s","type":"text","text":"{text}"}}}}"#
    )
}

fn tool(msg: &str, call: &str, state: &str) -> String {
    format!(
        r#"{{"type":"tool_use","sessionID":"s","part":{{"type":"tool","tool":"bash","callID":"{call}","messageID":"{msg}","sessionID":"s","state":{state}}}}}"#
    )
}

#[test]
fn steps_bound_model_calls_and_carry_usage_and_cost() {
    let events = Reduced::new(
        &[
            step_start("s", "s", "m1"),
            text("m1", "hi"),
            tool(
                "m1",
                "c1",
                r#"{"status":"completed","input":{"command":"date"},"output":"Sun\n","metadata":{"exit":0}}"#,
            ),
            step_finish("m1", "tool-calls"),
            step_start("s", "s", "m2"),
            text("m2", "done"),
            step_finish("m2", "stop"),
        ]
        .join("\n"),
    );
    assert_eq!(
        events[0],
        Event::SessionStarted {
            session_id: Some("s".into()),
            cli_version: None,
            model: None,
            tools: vec![],
        }
    );
    let calls: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::ModelCallStarted { .. }))
        .collect();
    assert_eq!(
        calls,
        [
            &Event::ModelCallStarted {
                message_id: Some("m1".into()),
                parent_call_id: None
            },
            &Event::ModelCallStarted {
                message_id: Some("m2".into()),
                parent_call_id: None
            },
        ]
    );
    // The second call starts only after the first call's tool finished.
    let finished_at = events
        .iter()
        .position(|e| matches!(e, Event::ToolCallFinished { .. }))
        .unwrap();
    let second_call_at = events.iter().position(|e| *e == *calls[1]).unwrap();
    assert!(finished_at < second_call_at);
    assert!(events.contains(&Event::AssistantMessage {
        message_id: "m1".into(),
        parent_call_id: None,
        text: "hi".into(),
        usage: Some(Usage {
            input_tokens: 100,
            output_tokens: 15,
            cache_read_tokens: 40,
            cache_write_tokens: Some(2),
        }),
        cost_usd: Some(0.25),
    }));
    assert!(events.contains(&Event::ToolCallFinished {
        call_id: "c1".into(),
        status: ToolStatus::Ok,
        output_excerpt: "Sun\n".into(),
        exit_code: Some(0),
        cli_duration_ms: None,
    }));
    assert_eq!(
        events.final_result(),
        Some(&Event::FinalResult {
            success: true,
            error_kind: None,
            error_message: None,
            max_turns_reached: false,
            num_turns: Some(2),
            cost_usd: None,
            duration_ms: None,
            text: Some("done".into()),
            usage: None,
        })
    );
}

#[test]
fn completed_with_nonzero_exit_is_an_error() {
    let events = Reduced::new(&tool(
        "m1",
        "c1",
        r#"{"status":"completed","input":{},"output":"ls: nope\n","metadata":{"exit":2}}"#,
    ));
    // The part opened its step implicitly.
    assert!(matches!(events[1], Event::ModelCallStarted { .. }));
    assert!(events.contains(&Event::ToolCallFinished {
        call_id: "c1".into(),
        status: ToolStatus::Error,
        output_excerpt: "ls: nope\n".into(),
        exit_code: Some(2),
        cli_duration_ms: None,
    }));
    // `exitCode` (another spelling seen in the wild) works too.
    let events = Reduced::new(&tool(
        "m1",
        "c1",
        r#"{"status":"completed","metadata":{"exitCode":1}}"#,
    ));
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ToolCallFinished {
            status: ToolStatus::Error,
            exit_code: Some(1),
            ..
        }
    )));
}

#[test]
fn interrupted_tool_is_an_error_with_a_diagnostic_and_the_run_incomplete() {
    let events = Reduced::new(
        &[
            step_start("s", "s", "m1"),
            tool(
                "m1",
                "call_orphan_1",
                r#"{"status":"error","input":{},"error":"Tool execution aborted","metadata":{"interrupted":true}}"#,
            ),
            step_finish("m1", "stop"),
        ]
        .join("\n"),
    );
    assert!(events.contains(&Event::ToolCallFinished {
        call_id: "call_orphan_1".into(),
        status: ToolStatus::Error,
        output_excerpt: "Tool execution aborted".into(),
        exit_code: None,
        cli_duration_ms: None,
    }));
    assert_eq!(events.kinds(), ["tool_interrupted", "incomplete_run"]);
    assert_eq!(events.final_result(), None);
}

#[test]
fn genuine_tool_error_is_not_interrupted() {
    let events = Reduced::new(&tool(
        "m1",
        "c1",
        r#"{"status":"error","input":{"filePath":"/x"},"error":"file not found"}"#,
    ));
    assert!(events.iter().any(|e| matches!(e,
        Event::ToolCallFinished { status: ToolStatus::Error, output_excerpt, .. }
            if output_excerpt == "file not found")));
    assert!(!events.kinds().contains(&"tool_interrupted"));
}

#[test]
fn running_part_starts_once_and_completion_finishes_once() {
    let events = Reduced::new(
        &[
            tool(
                "m1",
                "c1",
                r#"{"status":"running","input":{"command":"sleep 1"}}"#,
            ),
            tool(
                "m1",
                "c1",
                r#"{"status":"completed","output":"","metadata":{"exit":0}}"#,
            ),
            tool(
                "m1",
                "c1",
                r#"{"status":"completed","output":"","metadata":{"exit":0}}"#,
            ),
        ]
        .join("\n"),
    );
    let starts = events.count(|e| matches!(e, Event::ToolCallStarted { .. }));
    let ends = events.count(|e| matches!(e, Event::ToolCallFinished { .. }));
    assert_eq!((starts, ends), (1, 1));
    assert!(events.iter().any(|e| matches!(e,
        Event::ToolCallStarted { input_json, .. } if input_json == r#"{"command":"sleep 1"}"#)));
}

#[test]
fn error_line_is_a_failed_final_result() {
    let events = Reduced::new(
        &[
            step_start("s", "s", "m1"),
            r#"{"type":"error","sessionID":"s","error":{"name":"APIError","data":{"message":"Rate limit exceeded","statusCode":429}}}"#.to_string(),
        ]
        .join("\n"),
    );
    assert_eq!(
        events.final_result(),
        Some(&Event::FinalResult {
            success: false,
            error_kind: Some("APIError".into()),
            error_message: Some("Rate limit exceeded".into()),
            max_turns_reached: false,
            num_turns: Some(1),
            cost_usd: None,
            duration_ms: None,
            text: None,
            usage: None,
        })
    );
}

#[test]
fn stream_ending_mid_run_is_incomplete() {
    for lines in [
        vec![step_start("s", "s", "m1")],
        vec![step_start("s", "s", "m1"), step_finish("m1", "tool-calls")],
        vec![r#"{"type":"mystery"}"#.to_string()],
    ] {
        let events = Reduced::new(&lines.join("\n"));
        assert_eq!(events.final_result(), None, "{lines:?}");
        assert!(events.kinds().contains(&"incomplete_run"), "{lines:?}");
    }
}

#[test]
fn step_finish_without_reason_is_a_clean_end() {
    let events = Reduced::new(
        r#"{"type":"step_finish","sessionID":"s","part":{"messageID":"m1","sessionID":"s","type":"step-finish","cost":0.002,"tokens":{"input":12,"output":3,"reasoning":0,"cache":{"read":0,"write":0}}}}"#,
    );
    assert!(matches!(
        events.final_result(),
        Some(Event::FinalResult { success: true, .. })
    ));
}

#[test]
fn no_output_is_a_failure() {
    let mut r = OpenCodeReducer::new(ReducerConfig::default());
    let events = r.finish(None);
    assert!(matches!(&events[..],
        [Event::FinalResult { success: false, error_kind: Some(k), .. }] if k == "no_output"));
}

#[test]
fn second_step_on_one_message_gets_its_own_id() {
    let events = Reduced::new(
        &[
            step_start("s", "s", "m1"),
            step_finish("m1", "tool-calls"),
            step_start("s", "s", "m1"),
            step_finish("m1", "stop"),
        ]
        .join("\n"),
    );
    let ids: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::AssistantMessage { message_id, .. } => Some(message_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["m1", "m1#2"]);
}

#[test]
fn sub_agent_parts_are_attributed_by_session() {
    let task = r#"{"type":"tool_use","sessionID":"main","part":{"type":"tool","tool":"task","callID":"task1","messageID":"m1","sessionID":"main","state":{"status":"running","input":{},"metadata":{"sessionId":"child"}}}}"#;
    let child_tool = r#"{"type":"tool_use","sessionID":"main","part":{"type":"tool","tool":"read","callID":"c9","messageID":"cm1","sessionID":"child","state":{"status":"completed","input":{},"output":"x"}}}"#;
    let events = Reduced::new(
        &[
            step_start("main", "main", "m1"),
            task.to_string(),
            step_start("main", "child", "cm1"),
            child_tool.to_string(),
            // A sub-agent whose task call was not announced: its session names it.
            step_start("main", "other", "om1"),
        ]
        .join("\n"),
    );
    let parents: Vec<Option<&str>> = events
        .iter()
        .filter_map(|e| match e {
            Event::ModelCallStarted { parent_call_id, .. } => Some(parent_call_id.as_deref()),
            _ => None,
        })
        .collect();
    assert_eq!(parents, [None, Some("task1"), Some("other")]);
    assert!(events.iter().any(|e| matches!(e,
        Event::ToolCallStarted { call_id, parent_call_id: Some(p), .. }
            if call_id == "c9" && p == "task1")));
}

#[test]
fn unknown_and_broken_lines_are_diagnostics() {
    let events = Reduced::new(
        &[
            "{invalid json here".to_string(),
            step_start("s", "s", "m1"),
            r#"{"type":"snapshot","sessionID":"s"}"#.to_string(),
            r#"{"type":"text","sessionID":"s"}"#.to_string(),
            r#"{"sessionID":"s"}"#.to_string(),
            r#"{"type":"done","sessionID":"s","reason":"idle","rejected":["bash"]}"#.to_string(),
            step_finish("m1", "stop"),
            "not json at all".to_string(),
        ]
        .join("\n"),
    );
    assert_eq!(
        events.kinds(),
        [
            "not_json",
            "unknown_type",
            "missing_field",
            "missing_field",
            "permission_rejected",
            "not_json"
        ]
    );
    assert!(matches!(
        events.final_result(),
        Some(Event::FinalResult { success: true, .. })
    ));
}

#[test]
fn truncated_tail_is_a_diagnostic() {
    let events = Reduced::truncated("", Some(r#"{"type":"step_sta"#));
    assert_eq!(events.kinds(), ["truncated_line", "incomplete_run"]);
}

#[test]
fn excerpt_is_capped() {
    let mut r = OpenCodeReducer::new(ReducerConfig { excerpt_bytes: 4 });
    let events = r.feed(
        tool("m1", "c1", r#"{"status":"completed","output":"abcdefgh"}"#).as_bytes(),
        0,
    );
    assert!(events.iter().any(|e| matches!(e,
        Event::ToolCallFinished { output_excerpt, .. } if output_excerpt == "abcd")));
}

/// B45 (opencode 1.18.x): a `task` sub-agent whose events the CLI drops. Right values from
/// its expected.md.
#[test]
fn b45_a_silent_sub_agent_is_unreported_work_not_zero() {
    let r = Reduced::file("tests/corpus/field2/opencode/B45-task-subagent-events-dropped.jsonl");
    assert_eq!(r.turns(), 2);
    let ids: Vec<&str> = r.messages().into_iter().map(|(id, _)| id).collect();
    assert_eq!(
        ids,
        [
            "msg_d4ba583e1001Ab3dE5fG7hJ9kL",
            "msg_d4ba6f02a001Mn1pQ3rS5tU7vW"
        ]
    );
    assert_eq!(
        r.tools(),
        [("call_b45task0001", "task", Some(ToolStatus::Ok))]
    );
    assert!(r.iter().any(|e| matches!(
        e,
        Event::ToolCallFinished {
            cli_duration_ms: Some(42_386),
            ..
        }
    )));
    assert_eq!(
        r.unreported(),
        [(UnreportedKind::SubagentWork, Some("call_b45task0001"))]
    );
    assert!(
        r.iter()
            .any(|e| matches!(e, Event::Unreported { reason, .. }
        if reason.contains("ses_2b45a9d04ffeVb7Lq2cXn5HuWs")
            && reason.contains("anthropic/claude-sonnet-4-6")))
    );
    let u = r.message_usage().unwrap();
    assert_eq!(
        (
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens
        ),
        (2362, 99, 26121, Some(0))
    );
    let cost: f64 = r
        .iter()
        .filter_map(|e| match e {
            Event::AssistantMessage {
                cost_usd,
                message_id,
                ..
            } => Some((message_id.clone(), *cost_usd)),
            _ => None,
        })
        .collect::<std::collections::HashMap<_, _>>()
        .values()
        .flatten()
        .sum();
    assert!((cost - 0.0164).abs() < 1e-9, "{cost}");
    assert!(
        matches!(r.final_result(), Some(Event::FinalResult { success: true, text: Some(t), .. })
        if t == "Config is loaded in load.ts, overridden in flags.ts and consumed in boot.ts.")
    );
}

#[test]
fn a_sub_agent_whose_parts_show_is_not_unreported_and_a_cut_step_is() {
    let main = "ses_main";
    let child = "ses_child";
    let r = Reduced::new(
        &[
            step_start(main, main, "m1"),
            step_start(main, child, "c1"),
            step_finish("c1", "stop"),
            format!(
                r#"{{"type":"tool_use","sessionID":"{main}","part":{{"type":"tool","tool":"task","callID":"k1","messageID":"m1","sessionID":"{main}","state":{{"status":"completed","input":{{}},"output":"x","metadata":{{"sessionId":"{child}"}}}}}}}}"#
            ),
            step_finish("m1", "tool-calls"),
            step_start(main, main, "m2"),
        ]
        .join("\n"),
    );
    assert_eq!(
        r.unreported(),
        [(UnreportedKind::Usage, Some("m2"))],
        "{r:?}"
    );
}

/// OpenCode 1.x, live against the scripted model: a call to a tool it does not have is
/// answered by its `invalid` tool, `completed`; the call the model made never ran: denied.
#[test]
fn the_invalid_tool_standing_in_for_a_missing_one_is_denied() {
    let line = r#"{"type":"tool_use","sessionID":"s","part":{"type":"tool","tool":"invalid","callID":"c1","messageID":"m1","sessionID":"s","state":{"status":"completed","input":{"tool":"no_such_tool","error":"Model tried to call unavailable tool 'no_such_tool'."},"output":"The arguments provided to the tool are invalid: Model tried to call unavailable tool 'no_such_tool'."}}}"#;
    let events = Reduced::new(line);
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::ToolCallFinished {
                status: ToolStatus::Denied,
                ..
            }
        )),
        "{events:?}"
    );
}
