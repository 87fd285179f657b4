use super::*;
use crate::{Continue, SESSION_FILE};
use harness_kit::testing::diagnostic_kinds;
use harness_kit::{AgentSettings, Caveat, Harness, NeutralAction, PromptDelivery, RunLimits};

fn corpus(file: &str) -> Vec<u8> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join("tests/corpus/live/continue").join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The scenario's stdout, then its session file as the host hands it over, then `finish`.
fn run(stdout: &[u8], session: Option<&[u8]>) -> Vec<Event> {
    let mut r = ContinueReducer::new(ReducerConfig::default());
    let mut events = Vec::new();
    for line in stdout.split(|b| *b == b'\n') {
        if !line.is_empty() {
            events.extend(r.feed(line, 0));
        }
    }
    if let Some(session) = session {
        events.extend(r.side_file(SESSION_FILE, Some(session)));
    }
    events.extend(r.finish(None));
    events
}

fn live(scenario: &str) -> Vec<Event> {
    let session = corpus(&format!("{scenario}.session.json"));
    run(&corpus(&format!("{scenario}.jsonl")), Some(&session))
}

fn tools(events: &[Event]) -> Vec<(String, String, Option<ToolStatus>, Option<i32>)> {
    let mut out: Vec<(String, String, Option<ToolStatus>, Option<i32>)> = Vec::new();
    for e in events {
        match e {
            Event::ToolCallStarted { call_id, name, .. } => {
                out.push((call_id.clone(), name.clone(), None, None))
            }
            Event::ToolCallFinished {
                call_id,
                status,
                exit_code,
                ..
            } => {
                let t = out.iter_mut().find(|t| &t.0 == call_id).unwrap();
                t.2 = Some(*status);
                t.3 = *exit_code;
            }
            _ => {}
        }
    }
    out
}

fn final_result(events: &[Event]) -> &Event {
    let finals: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::FinalResult { .. }))
        .collect();
    assert_eq!(finals.len(), 1, "{events:?}");
    finals[0]
}

fn calls(events: &[Event]) -> Vec<(String, Option<Usage>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::AssistantMessage { text, usage, .. } => Some((text.clone(), *usage)),
            _ => None,
        })
        .collect()
}

#[test]
fn hello_from_the_session_file_three_calls_two_tools_and_usage() {
    let events = live("hello");
    let c = calls(&events);
    assert_eq!(c.len(), 3);
    assert_eq!(c[0].0, "I'll create the file.");
    assert_eq!(
        c[0].1.map(|u| (u.input_tokens, u.output_tokens)),
        Some((1988, 28))
    );
    assert_eq!(
        tools(&events),
        [
            (
                "call_mock_0_0".into(),
                "Write".into(),
                Some(ToolStatus::Ok),
                None
            ),
            (
                "call_mock_1_0".into(),
                "Bash".into(),
                Some(ToolStatus::Ok),
                None
            ),
        ]
    );
    match final_result(&events) {
        Event::FinalResult {
            success,
            num_turns,
            text,
            usage,
            cost_usd,
            ..
        } => {
            assert!(success);
            assert_eq!(*num_turns, Some(3));
            assert_eq!(text.as_deref(), Some("done"));
            let u = usage.unwrap();
            assert_eq!((u.input_tokens, u.output_tokens), (6221, 33));
            assert_eq!(u.cache_write_tokens, Some(0));
            // Continue's totalCost is its own estimate: not the run's cost.
            assert_eq!(*cost_usd, None);
        }
        _ => unreachable!(),
    }
    assert!(diagnostic_kinds(&events).is_empty(), "{events:?}");
}

#[test]
fn an_errored_command_is_an_error_with_its_exit_code_and_parallel_calls_both_end() {
    let events = live("tool_error");
    assert_eq!(
        tools(&events),
        [(
            "call_mock_0_0".into(),
            "Bash".into(),
            Some(ToolStatus::Error),
            Some(2)
        )]
    );
    let events = live("parallel");
    assert_eq!(calls(&events).len(), 2);
    let t = tools(&events);
    assert_eq!(t.len(), 2);
    assert!(t.iter().all(|t| t.2 == Some(ToolStatus::Ok)), "{t:?}");
}

#[test]
fn without_the_session_file_the_run_is_unknown_not_empty() {
    let events = run(&corpus("hello.jsonl"), None);
    match final_result(&events) {
        Event::FinalResult {
            success,
            error_kind,
            usage,
            num_turns,
            ..
        } => {
            assert!(!success);
            assert_eq!(error_kind.as_deref(), Some("no_session_file"));
            assert_eq!((*usage, *num_turns), (None, None));
        }
        _ => unreachable!(),
    }
    assert!(events.iter().any(|e| matches!(e, Event::Unreported { .. })));

    // Named but not written.
    let mut r = ContinueReducer::new(ReducerConfig::default());
    r.feed(b"{}", 0);
    let mut events = r.side_file(SESSION_FILE, None);
    events.extend(r.finish(None));
    assert_eq!(diagnostic_kinds(&events), ["missing_side_file"]);
    assert!(matches!(
        final_result(&events),
        Event::FinalResult { success: false, .. }
    ));

    // Broken.
    let events = run(b"{}", Some(b"{\"history\": 3"));
    assert_eq!(diagnostic_kinds(&events), ["bad_side_file"]);
    assert!(matches!(
        final_result(&events),
        Event::FinalResult { success: false, .. }
    ));
}

#[test]
fn a_session_stopped_mid_tool_is_incomplete_and_its_call_unfinished() {
    let session = br#"{"history": [
        {"message": {"role": "user", "content": "go"}},
        {"message": {"role": "assistant", "content": [{"type": "text", "text": "on it"}],
            "toolCalls": [{"id": "c1", "function": {"name": "Bash", "arguments": "{\"command\":\"sleep 9\"}"}}]},
         "toolCallStates": [{"toolCallId": "c1", "status": "calling"},
                            {"toolCallId": "c9", "status": "done"}]}
    ]}"#;
    let events = run(b"", Some(session));
    assert_eq!(calls(&events)[0], ("on it".to_string(), None));
    assert_eq!(tools(&events), [("c1".into(), "Bash".into(), None, None)]);
    assert_eq!(
        diagnostic_kinds(&events),
        ["orphan_tool_result", "incomplete_run"]
    );
    match final_result(&events) {
        Event::FinalResult { success, usage, .. } => assert_eq!((*success, *usage), (false, None)),
        _ => unreachable!(),
    }
    assert!(events.iter().any(|e| matches!(e, Event::Unreported { .. })));
}

#[test]
fn exit_codes_are_read_from_the_error_text() {
    assert_eq!(
        exit_code_in("Error executing tool Bash: Error (exit code 2): ls: x"),
        Some(2)
    );
    assert_eq!(exit_code_in("Error executing tool Write: EACCES"), None);
    assert_eq!(exit_code_in("(exit code two)"), None);
}

#[test]
fn the_plan_fixes_the_session_file_and_writes_the_config() {
    let settings = AgentSettings {
        model_base_url: Some("http://127.0.0.1:9".into()),
        model: Some("m\"x".into()),
        ..Default::default()
    };
    let plan = Continue::plan(&settings, &RunLimits::default()).unwrap();
    assert_eq!(
        plan.argv,
        [
            "cn",
            "-p",
            "--format",
            "json",
            "--config",
            "{{home}}/config.yaml",
            "--auto"
        ]
    );
    assert_eq!(plan.prompt, PromptDelivery::ArgvAt(2));
    assert_eq!(plan.side_files, [SESSION_FILE]);
    assert!(plan.env.contains(&(
        "CONTINUE_CLI_TEST_SESSION_ID".into(),
        crate::SESSION_ID.into()
    )));
    assert!(
        plan.env
            .contains(&("CONTINUE_GLOBAL_DIR".into(), "{{home}}/.continue".into()))
    );
    assert!(SESSION_FILE.starts_with("{{home}}/.continue/sessions/"));
    assert_eq!(plan.files[0].path, "config.yaml");
    assert!(
        plan.files[0]
            .content
            .contains(r#"apiBase: "http://127.0.0.1:9/v1""#),
        "{}",
        plan.files[0].content
    );
    assert!(plan.files[0].content.contains(r#"model: "m\"x""#));
    assert_eq!(plan.caveats, [Caveat::ToolStartReportedLate]);
    assert!(Continue::plan(&AgentSettings::default(), &RunLimits::default()).is_err());
}

#[test]
fn neutral_actions_become_continue_tools() {
    let call = Continue::translate_action(
        &NeutralAction::WriteFile {
            path: "a.txt".into(),
            content: "x".into(),
        },
        "/w",
    );
    assert_eq!(call.name, "Write");
    let args: Value = serde_json::from_str(&call.arguments_json).unwrap();
    assert_eq!(
        (args["filepath"].as_str(), args["content"].as_str()),
        (Some("/w/a.txt"), Some("x"))
    );
    let call = Continue::translate_action(
        &NeutralAction::Shell {
            command: "ls".into(),
        },
        "/w",
    );
    assert_eq!(call.name, "Bash");
}
