use super::*;
use crate::{ToolStatus, UnreportedKind};

type Reduced = crate::testing::Reduced<ClaudeReducer>;

#[test]
fn groups_by_message_id_and_pairs_tools() {
    let events = Reduced::new(concat!(
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"a"}],"usage":{"input_tokens":5,"output_tokens":1}},"parent_tool_use_id":null}"#,
        "\n",
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls x"}}],"usage":{"input_tokens":5,"output_tokens":7}},"parent_tool_use_id":null}"#,
        "\n",
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"Exit code 2\nls: x","is_error":true}]}}"#,
    ));
    let starts = events.calls();
    assert_eq!(starts, 1);
    assert!(events.contains(&Event::ToolCallFinished {
        call_id: "t1".into(),
        status: ToolStatus::Error,
        output_excerpt: "Exit code 2\nls: x".into(),
        exit_code: Some(2),
        cli_duration_ms: None,
    }));
    let Some(Event::AssistantMessage { usage, text, .. }) = events
        .iter()
        .rfind(|e| matches!(e, Event::AssistantMessage { .. }))
    else {
        panic!("no message")
    };
    assert_eq!(text, "a");
    assert_eq!(usage.unwrap().output_tokens, 7);
}

#[test]
fn sub_agent_attributed_by_parent_id() {
    let events = Reduced::new(
        r#"{"type":"assistant","parent_tool_use_id":"task1","message":{"id":"m9","content":[{"type":"tool_use","id":"t9","name":"Bash","input":{}}]}}"#,
    );
    assert!(events.contains(&Event::ModelCallStarted {
        message_id: Some("m9".into()),
        parent_call_id: Some("task1".into())
    }));
    assert!(events.iter().any(|e| matches!(e,
        Event::ToolCallStarted { parent_call_id: Some(p), .. } if p == "task1")));
}

/// Claude Code 2.1.197 (tasks/run_limits/max_tool_calls_subagent, no cap): the result's
/// `usage` is the main thread's alone, so each sub-agent `task_started` announced is
/// unreported work at the result (once, however many progress lines it prints), and a
/// background shell (`local_bash`) is not.
#[test]
fn sub_agents_announced_by_task_started_are_unreported_at_the_result_and_task_lines_are_known() {
    let events = Reduced::new(concat!(
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"a1","name":"Agent","input":{"prompt":"p"}}],"usage":{"input_tokens":5,"output_tokens":1}},"parent_tool_use_id":null}"#,
        "\n",
        r#"{"type":"system","subtype":"task_started","task_id":"x1","tool_use_id":"a1","task_type":"local_agent","prompt":"p"}"#,
        "\n",
        r#"{"type":"system","subtype":"task_started","task_id":"x2","tool_use_id":"a1_3","task_type":"local_agent","prompt":"p"}"#,
        "\n",
        r#"{"type":"system","subtype":"task_started","task_id":"x1","tool_use_id":"a1","task_type":"local_agent","prompt":"p"}"#,
        "\n",
        r#"{"type":"system","subtype":"task_started","task_id":"b1","tool_use_id":"t9","task_type":"local_bash"}"#,
        "\n",
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a1","content":"done"}]},"parent_tool_use_id":null}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":false,"result":"done","num_turns":2,"total_cost_usd":1.15,"usage":{"input_tokens":57383,"output_tokens":44},"modelUsage":{"m":{"inputTokens":229432}}}"#,
    ));
    let unreported: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Unreported { kind, call_id, .. } => Some((*kind, call_id.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        unreported,
        [
            (UnreportedKind::SubagentWork, Some("a1".to_string())),
            (UnreportedKind::SubagentWork, Some("a1_3".to_string())),
        ]
    );
    // The task lines are known: no `unknown_subtype` diagnostic.
    assert!(
        !events.iter().any(|e| matches!(e, Event::Diagnostic { .. })),
        "{events:?}"
    );
    // A run without sub-agents reports nothing unreported.
    let plain = Reduced::new(
        r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","num_turns":1,"usage":{"input_tokens":5,"output_tokens":1}}"#,
    );
    assert!(!plain.iter().any(|e| matches!(e, Event::Unreported { .. })));
}

#[test]
fn empty_result_text_is_rebuilt() {
    let events = Reduced::new(concat!(
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"the answer"}]},"parent_tool_use_id":null}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":false,"result":"","num_turns":1}"#,
    ));
    assert!(events.iter().any(|e| matches!(e,
        Event::FinalResult { text: Some(t), success: true, .. } if t == "the answer")));
    assert!(events.iter().any(|e| matches!(e,
        Event::Diagnostic { kind, .. } if kind == "result_text_reconstructed")));
}

#[test]
fn unknown_and_broken_lines_are_diagnostics() {
    let events = Reduced::new(
        "{\"type\":\"made_up_type\"}\nnot json\n{\"type\":\"system\",\"subtype\":\"state\"}",
    );
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            Event::Diagnostic { kind, .. } => kind.as_str(),
            _ => "",
        })
        .collect();
    assert_eq!(kinds, ["unknown_type", "not_json", "unknown_subtype"]);
}

#[test]
fn odd_field_types_read_as_absent_and_keep_the_rest_of_the_line() {
    let events = Reduced::new(concat!(
        // A user prompt as a plain string: no tool results, no error.
        r#"{"type":"user","message":{"role":"user","content":"do it"}}"#,
        "\n",
        // A tool_use without input, and one whose id is not a string (skipped).
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash"},{"type":"tool_use","id":5,"name":"Read","input":{}}],"usage":"lots"}}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":"no","num_turns":"3","total_cost_usd":1,"usage":[1],"result":"done"}"#,
    ));
    let started: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallStarted {
                call_id,
                input_json,
                ..
            } => Some((call_id.as_str(), input_json.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(started, [("t1", "null")]);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::AssistantMessage { usage: None, .. }))
    );
    assert!(events.iter().any(|e| matches!(e,
        Event::FinalResult { success: true, num_turns: None, usage: None,
            cost_usd: Some(c), text: Some(t), .. } if *c == 1.0 && t == "done")));
    assert!(!events.iter().any(|e| matches!(e, Event::Diagnostic { .. })));
}

#[test]
fn tool_input_is_kept_as_the_cli_wrote_it() {
    let events = Reduced::new(
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"caf\u00e9.txt","content":"a\nb"}}]}}"#,
    );
    assert!(events.iter().any(|e| matches!(e,
        Event::ToolCallStarted { input_json, .. }
            if input_json == r#"{"file_path":"caf\u00e9.txt","content":"a\nb"}"#)));
}

#[test]
fn an_api_error_reported_as_success_keeps_its_message() {
    let events = Reduced::new(
        r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 400 bad request","num_turns":2}"#,
    );
    assert!(events.iter().any(|e| matches!(e,
        Event::FinalResult { success: false, error_kind: Some(k), error_message: Some(m), .. }
            if k == "is_error" && m == "API Error: 400 bad request")));
}

const FIELD2: &str = "tests/corpus/field2/claude-code";

fn field2(case: &str) -> Reduced {
    Reduced::file(&format!("{FIELD2}/{case}.jsonl"))
}

/// B38 (2.1.233): a 403 reported as `subtype: success` with a `<synthetic>` message. Right
/// values from its expected.md.
#[test]
fn b38_synthetic_message_is_no_call_and_the_result_is_an_api_error() {
    let r = field2("B38-api-error-reported-as-success");
    assert_eq!(r.turns(), 1);
    assert_eq!(
        r.messages(),
        [(
            "msg_01B38aaaaaaaaaaaaaaaaaaa",
            "I'll run the test suite first."
        )]
    );
    assert_eq!(
        r.tools(),
        [("toolu_01B38bash0000000000000", "Bash", Some(ToolStatus::Ok))]
    );
    let Some(Event::FinalResult {
        success,
        error_kind,
        error_message,
        num_turns,
        cost_usd,
        text,
        usage,
        ..
    }) = r.final_result()
    else {
        panic!("no result: {r:?}")
    };
    assert!(!success);
    assert_eq!(error_kind.as_deref(), Some("api_error"));
    assert!(
        error_message
            .as_deref()
            .is_some_and(|m| m.starts_with("Your organization has disabled Claude subscription")),
        "{error_message:?}"
    );
    // The synthetic text is the CLI's error, not the agent's answer.
    assert_eq!(*text, None);
    assert_eq!(*num_turns, Some(2), "kept as reported");
    assert_eq!(*cost_usd, Some(0.019305));
    assert_eq!(
        *usage,
        Some(Usage {
            input_tokens: 6,
            output_tokens: 57,
            cache_read_tokens: 18200,
            cache_write_tokens: Some(1400),
        })
    );
    assert_eq!(r.kinds(), ["synthetic_message", "api_error"]);
    assert!(
        r.iter()
            .any(|e| matches!(e, Event::Diagnostic { kind, message, .. }
        if kind == "api_error" && message.contains("HTTP 403")))
    );
}

/// B39 (2.1.251, `--include-partial-messages`): an announced retry (529, 600 ms) and an
/// inferred one (a `message_start` superseded by a complete message of another id).
#[test]
fn b39_abandoned_attempts_are_retries_not_calls() {
    let r = field2("B39-partial-messages-retry-restarts-stream");
    assert_eq!(r.turns(), 2);
    assert_eq!(
        r.messages(),
        [
            ("msg_01B39attempt2bbbbbbbbbb", "I'll run the tests."),
            (
                "msg_01B39call2attempt2ddddd",
                "All 12 tests passed; nothing to fix."
            ),
        ]
    );
    assert!(
        !r.iter()
            .any(|e| matches!(e, Event::AssistantMessage { text, .. }
            if text.contains("I'll look at the") || text.contains("All 12 tests pa")
                && text != "All 12 tests passed; nothing to fix."))
    );
    assert_eq!(
        r.retries(),
        [
            (
                true,
                true,
                Some("msg_01B39attempt1aaaaaaaaaa"),
                Some(1),
                Some(600),
                Some(529)
            ),
            (
                false,
                true,
                Some("msg_01B39call2attempt1ccccc"),
                None,
                None,
                None
            ),
        ]
    );
    assert_eq!(
        r.tools(),
        [(
            "toolu_01B39bash00000000000000",
            "Bash",
            Some(ToolStatus::Ok)
        )]
    );
    assert!(
        r.iter()
            .any(|e| matches!(e, Event::ToolCallStarted { input_json, .. }
        if input_json == r#"{"command":"pytest -q","description":"Run the tests"}"#))
    );
    let Some(Event::FinalResult {
        success,
        text,
        usage,
        cost_usd,
        ..
    }) = r.final_result()
    else {
        panic!("no result")
    };
    assert!(success);
    assert_eq!(
        text.as_deref(),
        Some("All 12 tests passed; nothing to fix.")
    );
    assert_eq!(*cost_usd, Some(0.029483));
    assert_eq!(
        *usage,
        Some(Usage {
            input_tokens: 9,
            output_tokens: 52,
            cache_read_tokens: 41150,
            cache_write_tokens: Some(1210),
        })
    );
    // The messages' own usage leaves the abandoned attempts out too.
    let u = r.message_usage().unwrap();
    assert_eq!((u.input_tokens, u.output_tokens), (9, 52));
}

/// B40 (2.1.278, `--resume`): the reducer reports what the stream says (the session's
/// running total); `totals` tells the host it is per session from 2.1.277 on.
#[test]
fn b40_resumed_total_is_reported_as_seen_and_declared_per_session() {
    let r = field2("B40-resume-restores-cost-total");
    assert_eq!(r.turns(), 1);
    let Some(Event::FinalResult {
        success,
        cost_usd,
        usage,
        ..
    }) = r.final_result()
    else {
        panic!("no result")
    };
    assert!(success);
    assert_eq!(*cost_usd, Some(0.386463));
    assert_eq!(
        *usage,
        Some(Usage {
            input_tokens: 3,
            output_tokens: 400,
            cache_read_tokens: 26808,
            cache_write_tokens: Some(0),
        })
    );
    assert!(r.iter().any(
        |e| matches!(e, Event::SessionStarted { cli_version: Some(v), .. }
        if v == "2.1.278")
    ));
    // How these totals accumulate by version: `claude-code`'s `totals_scope_by_version`.
}

#[test]
fn a_call_claude_codes_security_checks_blocked_is_denied_at_its_own_result() {
    // Claude Code 2.1.197, live against the scripted model with `--permission-mode
    // default`: the texts of its own checks (strings of its binary), each the whole
    // tool_result, an error without an exit code. Each call is denied where its result
    // comes, not only once `result.permission_denials` lists it.
    let blocked = [
        "rm in '/ws/build' was blocked. For security, Claude Code may only remove files from the allowed working directories for this session: '/ws'.",
        "Contains simple_expansion",
        "Contains shell syntax (c_style_for_statement) that cannot be statically analyzed",
        "Output redirection to '/etc/x' was blocked by a deny rule.",
        "Current permission mode (Default) requires approval for this Bash command",
        "This Bash command contains multiple operations. The following part requires approval: curl x",
    ];
    for text in blocked {
        let result = serde_json::json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t5", "content": text, "is_error": true}
        ]}});
        let r = Reduced::new(&format!(
            "{}\n{result}\n{}",
            r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t5","name":"Bash","input":{"command":"rm -rf build"}}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"done","permission_denials":[{"tool_name":"Bash","tool_use_id":"t5"}]}"#,
        ));
        let ends = r.tool_ends();
        assert_eq!(ends, [ToolStatus::Denied], "{text}");
        assert!(r.kinds().is_empty(), "{text}: {:?}", r.kinds());
    }
    // A command's own failure that happens to print such words stays an error.
    let r = Reduced::new(concat!(
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t6","name":"Bash","input":{"command":"grep -c x f"}}]}}"#,
        "\n",
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t6","content":"Exit code 1\nContains simple_expansion","is_error":true}]}}"#,
    ));
    assert_eq!(r.tools(), [("t6", "Bash", Some(ToolStatus::Error))]);
}

#[test]
fn a_listed_refusal_with_an_unfamiliar_text_gets_a_denied_end() {
    // A refusal text the reducer does not know (made up here: a later version's wording),
    // but the result lists the call: a second, denied end.
    let r = Reduced::new(concat!(
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t5","name":"Bash","input":{"command":"rm -rf build"}}]}}"#,
        "\n",
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t5","content":"Claude Code will not run this command here.","is_error":true}]}}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":false,"result":"done","permission_denials":[{"tool_name":"Bash","tool_use_id":"t5"}]}"#,
    ));
    let ends = r.tool_ends();
    assert_eq!(ends, [ToolStatus::Error, ToolStatus::Denied]);
    assert_eq!(r.kinds(), ["permission_denial"]);
}

#[test]
fn a_refused_call_is_denied_and_a_failed_one_an_error() {
    let r = Reduced::new(concat!(
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"rm -rf /"}},{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"false"}},{"type":"tool_use","id":"t3","name":"Write","input":{}},{"type":"tool_use","id":"t4","name":"Bash","input":{"command":"git push"}}]}}"#,
        "\n",
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"Permission to use Bash with command rm -rf / has been denied.","is_error":true},{"type":"tool_result","tool_use_id":"t2","content":"Exit code 1","is_error":true},{"type":"tool_result","tool_use_id":"t3","content":"Claude requested permissions to use Write, but you haven't granted it yet.","is_error":true}]}}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":false,"result":"done","permission_denials":[{"tool_name":"Bash","tool_use_id":"t1"},{"tool_name":"Write","tool_use_id":"t3"},{"tool_name":"Bash","tool_use_id":"t4"},{"tool_name":"Bash","tool_use_id":"t2"}]}"#,
    ));
    assert_eq!(
        r.tools(),
        [
            ("t1", "Bash", Some(ToolStatus::Denied)),
            ("t2", "Bash", Some(ToolStatus::Error)),
            ("t3", "Write", Some(ToolStatus::Denied)),
            // Listed in permission_denials with no result of its own.
            ("t4", "Bash", Some(ToolStatus::Denied)),
        ]
    );
    // t2 is listed but its result was the command's own failure: it stays, with a note.
    assert_eq!(r.kinds(), ["permission_denial"]);

    assert!(!r.iter().any(
        |e| matches!(e, Event::ToolCallFinished { call_id, exit_code: Some(_), .. }
        if call_id == "t1")
    ));
}

/// Claude Code 2.1.x, live against the scripted model: a call to a tool it does not have
/// ends with `<tool_use_error>Error: No such tool available: x</tool_use_error>`; it never
/// ran, so it is denied (not a command), not an error.
#[test]
fn a_call_to_a_tool_that_does_not_exist_is_denied() {
    let r = Reduced::new(concat!(
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"no_such_tool","input":{"command":"echo ghost"}}]}}"#,
        "\n",
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"<tool_use_error>Error: No such tool available: no_such_tool</tool_use_error>","is_error":true,"tool_use_id":"t1"}]}}"#,
    ));
    assert_eq!(
        r.tools(),
        [("t1", "no_such_tool", Some(ToolStatus::Denied))]
    );
}

/// Claude Code 2.1.332 refuses a Bash command that begins with `sleep N` (N ≥ 25 s) before
/// running it; the two lines are verbatim from its recording
/// (`tests/corpus/live/claude/blocked_sleep-2.1.332.jsonl`). The call never ran: denied,
/// not an error, with no exit code, and `result.permission_denials` does not list it.
#[test]
fn a_leading_long_sleep_claude_code_blocked_is_denied() {
    let r = Reduced::new(concat!(
        r#"{"type":"assistant","message":{"id":"msg_mock_0_1","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"tool_use","id":"toolu_mock_0_0","name":"Bash","input":{"command":"sleep 31.4159 && echo imported > done.txt","description":"Run sleep 31.4159 && echo imported > done.txt"}}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12601,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"context_management":null},"parent_tool_use_id":null,"session_id":"f649ba24-4096-4fd7-bb60-1b60c3ab9396","uuid":"0baa36b9-c53b-4de5-a636-e2d82728aa79","timestamp":"2026-12-01T20:15:57.425Z"}"#,
        "\n",
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"<tool_use_error>Blocked: sleep 31.4159 followed by: echo imported. To wait for a condition, use Monitor with an until-loop (e.g. `until <check>; do sleep 2; done`). To wait for a command you started, use run_in_background: true. Do not chain shorter sleeps to work around this block.</tool_use_error>","is_error":true,"tool_use_id":"toolu_mock_0_0"}]},"parent_tool_use_id":null,"session_id":"f649ba24-4096-4fd7-bb60-1b60c3ab9396","uuid":"9cabc000-6375-4e35-9470-185928e618d7","timestamp":"2026-12-01T20:15:57.491Z","tool_use_result":"Error: Blocked: sleep 31.4159 followed by: echo imported. To wait for a condition, use Monitor with an until-loop (e.g. `until <check>; do sleep 2; done`). To wait for a command you started, use run_in_background: true. Do not chain shorter sleeps to work around this block."}"#,
    ));
    assert_eq!(
        r.tools(),
        [("toolu_mock_0_0", "Bash", Some(ToolStatus::Denied))]
    );
    assert!(!r.iter().any(|e| matches!(
        e,
        Event::ToolCallFinished {
            exit_code: Some(_),
            ..
        }
    )));
    assert!(r.kinds().is_empty(), "{:?}", r.kinds());
    // Its other form (a sleep alone), and the same words as a command's own output or
    // another tool's validation error, which are not refusals.
    let end = |content: &str| {
        let result = serde_json::json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": content, "is_error": true}
        ]}});
        Reduced::new(&format!(
            "{}\n{result}",
            r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"sleep 25"}}]}}"#,
        ))
        .tool_ends()
    };
    assert_eq!(
        end(
            "<tool_use_error>Blocked: standalone sleep 25. To wait for a condition, use Monitor with an until-loop (e.g. `until <check>; do sleep 2; done`). To wait for a command you started, use run_in_background: true. Do not chain shorter sleeps to work around this block.</tool_use_error>"
        ),
        [ToolStatus::Denied]
    );
    assert_eq!(
        end("Exit code 1\nBlocked: by the firewall"),
        [ToolStatus::Error]
    );
    assert_eq!(
        end(
            "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"
        ),
        [ToolStatus::Error]
    );
}

/// Claude Code 2.1.332 writes a `tool_progress` heartbeat every 30 s a Bash command runs
/// (verbatim from `tests/corpus/live/claude/long_command-2.1.332.jsonl`, between the call
/// and its result). It carries no fact the call's start and end do not: no event, no
/// diagnostic; Qwen Code writes none, so there it stays an unknown type.
#[test]
fn a_tool_progress_heartbeat_is_no_event() {
    let heartbeat = r#"{"type":"tool_progress","tool_use_id":"toolu_mock_0_0-heartbeat-0","tool_name":"Bash","parent_tool_use_id":"toolu_mock_0_0","elapsed_time_seconds":30,"heartbeat":true,"session_id":"71e98a1c-80ff-4d2f-b414-6e9661bb07cb","uuid":"7f6f4d84-0b7a-48c4-b82b-48eea4cc7d31"}"#;
    let r = Reduced::new(&format!(
        "{}\n{heartbeat}\n{}",
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_mock_0_0","name":"Bash","input":{"command":"python3 -c 'import time; time.sleep(31.4159)'"}}]},"parent_tool_use_id":null}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_mock_0_0","type":"tool_result","content":"(Bash completed with no output)","is_error":false}]},"parent_tool_use_id":null}"#,
    ));
    assert_eq!(
        r.tools(),
        [("toolu_mock_0_0", "Bash", Some(ToolStatus::Ok))]
    );
    assert!(r.kinds().is_empty(), "{:?}", r.kinds());
    assert_eq!(Reduced::new(heartbeat).len(), 0);
    let mut qwen = ClaudeReducer::with_dialect(ReducerConfig::default(), Dialect::QwenCode);
    let events = qwen.feed(heartbeat.as_bytes(), 0);
    assert!(
        matches!(&events[..], [Event::Diagnostic { kind, .. }] if kind == "unknown_type"),
        "{events:?}"
    );
}

/// Claude Code 2.1.332 lists the running background tasks at each start and end of one
/// (verbatim from `tests/corpus/live/claude/bg2-2.1.332.jsonl`): a known line, no event,
/// no `unknown_subtype` diagnostic.
#[test]
fn background_tasks_changed_is_a_known_line() {
    let line = r#"{"type":"system","subtype":"background_tasks_changed","tasks":[{"task_id":"bmsdl6hew","run_id":"0mx56c9yq-606b6d55","task_type":"local_bash","description":"python3 -c 'import time; time.sleep(3)'; echo k3 > k3.txt"}],"uuid":"c6c3befe-5b5b-40c4-8c25-484aeb51c257","session_id":"f92b494f-d2b8-4af3-a944-a334cca72faf"}"#;
    let r = Reduced::new(line);
    assert_eq!(r.len(), 0, "{r:?}");
    let empty = r#"{"type":"system","subtype":"background_tasks_changed","tasks":[],"uuid":"1e21ee2e-4dc0-4d4a-8829-e632fe6e548f","session_id":"f92b494f-d2b8-4af3-a944-a334cca72faf"}"#;
    assert_eq!(Reduced::new(empty).len(), 0);
}

/// The `result` lines of a capture, parsed (to compute the right figures apart from the
/// reducer).
fn result_lines(path: &str) -> Vec<serde_json::Value> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(path))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] == "result")
        .collect()
}

/// A `FinalResult`'s (usage, num_turns, cost, duration).
type Figures = (Option<Usage>, Option<u32>, Option<f64>, Option<u64>);

/// The `FinalResult`s of `r`, as [`Figures`].
fn finals(r: &Reduced) -> Vec<Figures> {
    r.iter()
        .filter_map(|e| match e {
            Event::FinalResult {
                usage,
                num_turns,
                cost_usd,
                duration_ms,
                ..
            } => Some((*usage, *num_turns, *cost_usd, *duration_ms)),
            _ => None,
        })
        .collect()
}

/// Claude Code 2.1.332 (trial14c bg2, err1, sub1; 2.1.197 the same): a background task that ends after the
/// final reply starts a follow-up query in the same process, with a second `result`
/// whose `usage`, `num_turns` and `duration_ms` are that query's own and whose
/// `total_cost_usd` is the process's running total. The last `FinalResult` carries the
/// results' sums and the last cost; for bg2 and err1 (no sub-agent) that sum is the
/// last result's `modelUsage` (every model call of the process).
#[test]
fn a_follow_up_query_s_result_adds_to_the_earlier_results() {
    for (name, whole_process) in [
        ("bg2-2.1.332", true),
        ("err1-2.1.332", true),
        ("sub1-2.1.332", false),
        // 2.1.197 starts the follow-up query just the same.
        ("bg2-2.1.197", true),
    ] {
        let path = format!("tests/corpus/live/claude/{name}.jsonl");
        let results = result_lines(&path);
        assert_eq!(results.len(), 2, "{name}: two results");
        let sum = |f: &dyn Fn(&serde_json::Value) -> u64| results.iter().map(f).sum::<u64>();
        let input = sum(&|v| v["usage"]["input_tokens"].as_u64().unwrap());
        let output = sum(&|v| v["usage"]["output_tokens"].as_u64().unwrap());
        let last = &results[1];
        if whole_process {
            let model_usage = last["modelUsage"]
                .as_object()
                .unwrap()
                .values()
                .next()
                .unwrap();
            assert_eq!(
                (input, output),
                (
                    model_usage["inputTokens"].as_u64().unwrap(),
                    model_usage["outputTokens"].as_u64().unwrap()
                ),
                "{name}: the results' usage adds up to the process's modelUsage"
            );
        }
        let r = Reduced::file(&path);
        let finals = finals(&r);
        assert_eq!(finals.len(), 2, "{name}");
        let (usage, turns, cost, duration) = finals[1];
        let usage = usage.unwrap();
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            (input, output),
            "{name}"
        );
        assert_eq!(
            turns.map(u64::from),
            Some(sum(&|v| v["num_turns"].as_u64().unwrap())),
            "{name}"
        );
        assert_eq!(duration, Some(sum(&|v| v["duration_ms"].as_u64().unwrap())));
        assert_eq!(
            cost,
            last["total_cost_usd"].as_f64(),
            "{name}: cost is the running total"
        );
        // The first result stands for itself.
        let first = finals[0].0.unwrap();
        assert_eq!(
            first.input_tokens,
            results[0]["usage"]["input_tokens"].as_u64().unwrap()
        );
        // background_tasks_changed is known; the follow-up's figures are all reported.
        assert!(
            !r.kinds().contains(&"unknown_subtype"),
            "{name}: {:?}",
            r.kinds()
        );
        assert!(
            !r.unreported()
                .iter()
                .any(|(k, _)| *k == UnreportedKind::Usage),
            "{name}: {:?}",
            r.unreported()
        );
    }
}

/// A follow-up query's result without usage: the sum of the others is a lower bound,
/// said as unreported usage (once); one without `num_turns` makes the process's count
/// unknown, with a diagnostic, never the other query's count alone.
#[test]
fn a_follow_up_result_without_figures_is_partial_not_low() {
    let r = Reduced::new(concat!(
        r#"{"type":"result","subtype":"success","session_id":"s","num_turns":3,"duration_ms":400,"total_cost_usd":0.15,"usage":{"input_tokens":100,"output_tokens":10}}"#,
        "\n",
        r#"{"type":"system","subtype":"init","session_id":"s"}"#,
        "\n",
        r#"{"type":"result","subtype":"success","session_id":"s","total_cost_usd":0.2}"#,
        "\n",
        r#"{"type":"result","subtype":"success","session_id":"s","num_turns":1,"total_cost_usd":0.3,"usage":{"input_tokens":7,"output_tokens":2}}"#,
    ));
    let finals = finals(&r);
    let usage = |u: Option<Usage>| u.map(|u| (u.input_tokens, u.output_tokens));
    assert_eq!(usage(finals[1].0), Some((100, 10)));
    assert_eq!(usage(finals[2].0), Some((107, 12)));
    assert_eq!((finals[1].1, finals[2].1), (None, None));
    assert_eq!((finals[1].3, finals[2].3), (None, None));
    assert_eq!(finals[2].2, Some(0.3));
    assert_eq!(r.unreported(), [(UnreportedKind::Usage, None)], "said once");
    assert_eq!(
        r.kinds()
            .iter()
            .filter(|k| **k == "result_figures_unknown")
            .count(),
        1
    );
}

/// Two sessions in one stream (takopi's fixture, 2.0.75: distinct session ids, the second
/// cost below the first) are not one process's queries: the last result stands alone.
#[test]
fn results_of_another_session_are_not_added() {
    let r = Reduced::file("tests/corpus/public/claude-code/takopi-stream-json-two-sessions.jsonl");
    let finals = finals(&r);
    let last = finals.last().unwrap();
    let u = last.0.unwrap();
    assert_eq!((u.input_tokens, u.output_tokens, last.1), (40, 12, Some(1)));
}

/// A follow-up query whose result never came (the stream ended first): its model calls'
/// usage is in no result, so the reported usage is partial (unreported), not complete.
#[test]
fn a_follow_up_query_cut_before_its_result_is_unreported_usage() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/corpus/live/claude/bg2-2.1.332.jsonl"),
    )
    .unwrap();
    // Everything up to the follow-up's model call, without its result.
    let cut: Vec<&str> = text
        .lines()
        .take_while(|l| !l.contains("\"msg_mock_3_4\""))
        .collect();
    let follow_up = text
        .lines()
        .find(|l| l.contains("\"msg_mock_3_4\""))
        .unwrap();
    let whole = format!("{}\n{follow_up}", cut.join("\n"));
    let r = Reduced::new(&whole);
    assert_eq!(finals(&r).len(), 1);
    assert_eq!(r.unreported(), [(UnreportedKind::Usage, None)]);
    // Without the follow-up call: complete.
    assert!(Reduced::new(&cut.join("\n")).unreported().is_empty());
}
