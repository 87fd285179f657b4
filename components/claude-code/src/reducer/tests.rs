use super::*;

type Reduced = harness_kit::testing::Reduced<ClaudeReducer>;

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
        "{\"type\":\"tool_progress\"}\nnot json\n{\"type\":\"system\",\"subtype\":\"state\"}",
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
