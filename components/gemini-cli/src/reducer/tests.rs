use super::*;
use harness_kit::testing::diagnostic_kinds;

type Reduced = harness_kit::testing::Reduced<GeminiReducer>;

/// A compact picture of the events: C = call started, M = message, S = tool started,
/// F = tool finished, R = final result, D = diagnostic, I = session, Y = retry,
/// U = unreported.
fn shape(events: &[Event]) -> String {
    events
        .iter()
        .map(|e| match e {
            Event::SessionStarted { .. } => 'I',
            Event::ModelCallStarted { .. } => 'C',
            Event::AssistantMessage { .. } => 'M',
            Event::ToolCallStarted { .. } => 'S',
            Event::ToolCallFinished { .. } => 'F',
            Event::FinalResult { .. } => 'R',
            Event::Diagnostic { .. } => 'D',
            Event::ModelCallRetried { .. } => 'Y',
            Event::Unreported { .. } => 'U',
        })
        .collect()
}

const HELLO: &str = r#"{"type":"init","session_id":"sess-1","model":"gemini-2.5-flash"}
{"type":"message","role":"user","content":"Create hello.txt"}
{"type":"message","role":"assistant","content":"I'll create ","delta":true}
{"type":"message","role":"assistant","content":"the file.","delta":true}
{"type":"tool_use","tool_name":"write_file","tool_id":"t1","parameters":{"file_path":"hello.txt","content":"hi"}}
{"type":"tool_result","tool_id":"t1","status":"success"}
{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t2","parameters":{"command":"date"}}
{"type":"tool_result","tool_id":"t2","status":"success","output":"Sun"}
{"type":"message","role":"assistant","content":"done","delta":true}
{"type":"result","status":"success","stats":{"total_tokens":130,"input_tokens":100,"output_tokens":24,"cached":40,"input":60,"duration_ms":692,"tool_calls":2}}"#;

#[test]
fn delta_chunks_group_and_tool_results_bound_calls() {
    let events = Reduced::new(HELLO);
    assert_eq!(shape(&events), "ICMMSFCSFCMR");
    assert_eq!(
        events[0],
        Event::SessionStarted {
            session_id: Some("sess-1".into()),
            cli_version: None,
            model: Some("gemini-2.5-flash".into()),
            tools: vec![],
        }
    );
    assert_eq!(
        events[3],
        Event::AssistantMessage {
            message_id: "gemini-cli-msg-1".into(),
            parent_call_id: None,
            text: "I'll create the file.".into(),
            usage: None,
            cost_usd: None,
        }
    );
    assert_eq!(
        events.final_result(),
        Some(&Event::FinalResult {
            success: true,
            error_kind: None,
            error_message: None,
            max_turns_reached: false,
            num_turns: None,
            cost_usd: None,
            duration_ms: Some(692),
            text: Some("done".into()),
            usage: Some(Usage {
                input_tokens: 60,
                output_tokens: 30,
                cache_read_tokens: 40,
                // The stream carries no cache-write figure: unknown, not zero.
                cache_write_tokens: None,
            }),
        })
    );
}

#[test]
fn parallel_tools_stay_in_one_call() {
    let events = Reduced::new(
        r#"{"type":"message","role":"assistant","content":"Two at once.","delta":true}
{"type":"tool_use","tool_name":"write_file","tool_id":"a","parameters":{}}
{"type":"tool_use","tool_name":"run_shell_command","tool_id":"b","parameters":{}}
{"type":"tool_result","tool_id":"a","status":"success"}
{"type":"tool_result","tool_id":"b","status":"success","output":"two"}
{"type":"message","role":"assistant","content":"done","delta":true}"#,
    );
    assert_eq!(shape(&events), "CMSSFFCMD");
    assert_eq!(events.kinds(), ["incomplete_run"]);
}

#[test]
fn repeated_result_does_not_reopen_or_double_count() {
    let events = Reduced::new(
        r#"{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{}}
{"type":"tool_result","tool_id":"t1","status":"success","output":"one"}
{"type":"tool_result","tool_id":"t1","status":"error","output":"again"}
{"type":"tool_result","tool_id":"zz","status":"success"}
{"type":"result","status":"success"}"#,
    );
    assert_eq!(shape(&events), "CSFDDR");
    assert_eq!(
        events.kinds(),
        ["duplicate_tool_result", "orphan_tool_result"]
    );
}

#[test]
fn tool_status_and_exit_code() {
    let events = Reduced::new(
        r#"{"type":"tool_use","tool_name":"run_shell_command","tool_id":"a","parameters":{}}
{"type":"tool_use","tool_name":"run_shell_command","tool_id":"b","parameters":{}}
{"type":"tool_use","tool_name":"read_file","tool_id":"c","parameters":{}}
{"type":"tool_use","tool_name":"x","tool_id":"d","parameters":{}}
{"type":"tool_use","tool_name":"no_such_tool","tool_id":"e","parameters":{"command":"echo ghost"}}
{"type":"tool_result","tool_id":"a","status":"success","output":"Command exited with code: 2"}
{"type":"tool_result","tool_id":"b","status":"success","output":"ls: cannot access 'x'"}
{"type":"tool_result","tool_id":"c","status":"error","output":"Error reading file","error":{"type":"file_not_found","message":"File not found: /w/c"}}
{"type":"tool_result","tool_id":"d","status":"skipped"}
{"type":"tool_result","tool_id":"e","status":"error","output":"Tool \"no_such_tool\" not found.","error":{"type":"tool_not_registered","message":"Tool \"no_such_tool\" not found."}}"#,
    );
    let ends: Vec<(ToolStatus, &str, Option<i32>)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallFinished {
                status,
                output_excerpt,
                exit_code,
                ..
            } => Some((*status, output_excerpt.as_str(), *exit_code)),
            _ => None,
        })
        .collect();
    assert_eq!(
        ends,
        [
            (ToolStatus::Error, "Command exited with code: 2", Some(2)),
            // The CLI reports success and the stream has no exit code: ok it stays.
            (ToolStatus::Ok, "ls: cannot access 'x'", None),
            (ToolStatus::Error, "File not found: /w/c", None),
            (ToolStatus::Unknown, "", None),
            // A tool the CLI does not have (0.61, scripted model): it never ran.
            (ToolStatus::Denied, "Tool \"no_such_tool\" not found.", None),
        ]
    );
}

#[test]
fn error_line_decides_failure_even_after_success_status() {
    let events = Reduced::new(
        r#"{"type":"error","severity":"error","message":"Maximum session turns exceeded"}
{"type":"result","status":"success","stats":{"input_tokens":1,"output_tokens":1}}"#,
    );
    assert!(matches!(events.final_result(), Some(Event::FinalResult {
        success: false, max_turns_reached: true, error_kind: Some(k), error_message: Some(m), ..
    }) if k == "max_session_turns" && m == "Maximum session turns exceeded"));

    let events = Reduced::new(
        r#"{"type":"error","severity":"error","message":"Invalid stream"}
{"type":"result","status":"error"}"#,
    );
    assert!(matches!(events.final_result(), Some(Event::FinalResult {
        success: false, max_turns_reached: false, error_kind: Some(k), .. }) if k == "error_event"));
}

#[test]
fn turn_limit_result_sets_max_turns_reached() {
    let events = Reduced::new(
        r#"{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{}}
{"type":"tool_result","tool_id":"t1","status":"success","output":"step 1"}
{"type":"result","status":"error","error":{"type":"FatalTurnLimitedError","message":"Reached max session turns for this session."},"stats":{"duration_ms":0}}"#,
    );
    assert!(matches!(events.final_result(), Some(Event::FinalResult {
        success: false, max_turns_reached: true, num_turns: None, text: None, error_kind: Some(k), ..
    }) if k == "FatalTurnLimitedError"));
}

#[test]
fn warning_is_a_diagnostic_not_a_failure() {
    let events = Reduced::new(
        r#"{"type":"error","severity":"warning","message":"Loop detected, stopping execution"}
{"type":"result","status":"success"}"#,
    );
    assert_eq!(events.kinds(), ["cli_warning"]);
    assert!(matches!(
        events.final_result(),
        Some(Event::FinalResult {
            success: true,
            usage: None,
            ..
        })
    ));
}

#[test]
fn no_output_only_when_no_line_at_all() {
    let mut r = GeminiReducer::new(ReducerConfig::default());
    assert!(matches!(&r.finish(None)[..],
        [Event::FinalResult { success: false, error_kind: Some(k), .. }] if k == "no_output"));

    // A blank line is still a line: the stream was not empty.
    let mut r = GeminiReducer::new(ReducerConfig::default());
    r.feed(b"", 0);
    assert_eq!(diagnostic_kinds(&r.finish(None)), ["incomplete_run"]);
}

#[test]
fn error_without_result_still_fails() {
    let events = Reduced::new(r#"{"type":"error","severity":"error","message":"quota"}"#);
    assert!(matches!(events.final_result(),
        Some(Event::FinalResult { success: false, error_message: Some(m), .. }) if m == "quota"));
}

#[test]
fn unknown_and_broken_lines_are_diagnostics() {
    let events = Reduced::new(
        "{\"type\":\"thought\"}\nnot json\n{\"role\":\"x\"}\n{\"type\":\"message\",\"role\":\"system\"}\n{\"type\":\"tool_use\"}",
    );
    assert_eq!(
        events.kinds(),
        [
            "unknown_type",
            "not_json",
            "missing_field",
            "unknown_role",
            "missing_field",
            "incomplete_run"
        ]
    );
    let mut r = GeminiReducer::new(ReducerConfig::default());
    assert_eq!(
        diagnostic_kinds(&r.finish(Some(b"{\"type\":\"res"))),
        ["truncated_line", "incomplete_run"]
    );
}

#[test]
fn user_message_closes_the_call() {
    let events = Reduced::new(
        r#"{"type":"message","role":"assistant","content":"a","delta":true}
{"type":"message","role":"user","content":"again"}
{"type":"message","role":"assistant","content":"b","delta":true}"#,
    );
    assert_eq!(shape(&events), "CMCMD");
}
