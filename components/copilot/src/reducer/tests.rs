use super::*;
use crate::{Copilot, USAGE_FILE};
use harness_kit::{AgentSettings, Harness, NeutralAction, RunLimits};

type Reduced = harness_kit::testing::Reduced<CopilotReducer>;

fn corpus(file: &str) -> Vec<u8> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join("tests/corpus/live/copilot").join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn live(scenario: &str) -> Reduced {
    Reduced::file(&format!("tests/corpus/live/copilot/{scenario}.jsonl"))
}

/// The scenario's events with its recorded usage file handed over as the host does: after
/// the last line, before `finish`.
fn with_side_file(scenario: &str, content: Option<&[u8]>) -> Vec<Event> {
    let mut r = CopilotReducer::new(ReducerConfig::default());
    let mut events = Vec::new();
    for line in corpus(&format!("{scenario}.jsonl")).split(|b| *b == b'\n') {
        if !line.is_empty() {
            events.extend(r.feed(line, 0));
        }
    }
    events.extend(r.side_file(USAGE_FILE, content));
    events.extend(r.finish(None));
    events
}

fn final_usage(events: &[Event]) -> Option<Usage> {
    events.iter().find_map(|e| match e {
        Event::FinalResult { usage, .. } => Some(*usage),
        _ => None,
    })?
}

#[test]
fn hello_three_calls_two_tools_and_the_answer() {
    let r = live("hello");
    assert_eq!(r.turns(), 3);
    assert_eq!(
        r.tools(),
        [
            ("call_mock_0_0", "create", Some(ToolStatus::Ok)),
            ("call_mock_1_0", "bash", Some(ToolStatus::Ok)),
        ]
    );
    assert_eq!(r.messages()[0].1, "I'll create the file.");
    assert_eq!(r.messages()[2].1, "done");
    match r.final_result() {
        Some(Event::FinalResult {
            success,
            num_turns,
            text,
            usage,
            duration_ms,
            ..
        }) => {
            assert!(success);
            assert_eq!(*num_turns, Some(3));
            assert_eq!(text.as_deref(), Some("done"));
            assert_eq!(*usage, None);
            assert_eq!(*duration_ms, Some(346));
        }
        other => panic!("{other:?}"),
    }
    // Without the side file the usage is declared missing, not zero.
    assert_eq!(r.unreported(), [(UnreportedKind::Usage, None)]);
    assert!(r.kinds().is_empty(), "{:?}", r.kinds());
}

#[test]
fn a_shell_tool_that_succeeded_with_exit_code_2_is_an_error() {
    let r = live("tool_error");
    assert_eq!(r.tools()[0].2, Some(ToolStatus::Error));
    let exit = r.iter().find_map(|e| match e {
        Event::ToolCallFinished {
            exit_code,
            output_excerpt,
            ..
        } => Some((*exit_code, output_excerpt.clone())),
        _ => None,
    });
    let (code, text) = exit.unwrap();
    assert_eq!(code, Some(2));
    assert!(text.contains("No such file or directory"), "{text}");

    let ok = Reduced::new(concat!(
        r#"{"type":"tool.execution_start","data":{"toolCallId":"t","toolName":"bash","arguments":{}}}"#,
        "\n",
        r#"{"type":"tool.execution_complete","data":{"toolCallId":"t","success":true,"shellExecution":{"exitCode":0},"result":{"content":"x"}}}"#,
    ));
    assert_eq!(ok.tools()[0].2, Some(ToolStatus::Ok));
    let failed = Reduced::new(concat!(
        r#"{"type":"tool.execution_start","data":{"toolCallId":"t","toolName":"view","arguments":{}}}"#,
        "\n",
        r#"{"type":"tool.execution_complete","data":{"toolCallId":"t","success":false,"error":{"message":"no such file"}}}"#,
    ));
    assert_eq!(failed.tools()[0].2, Some(ToolStatus::Error));
}

#[test]
fn parallel_two_tools_in_one_call() {
    let r = live("parallel");
    assert_eq!(r.turns(), 2);
    assert_eq!(r.tools().len(), 2);
    assert!(r.tools().iter().all(|t| t.2 == Some(ToolStatus::Ok)));
}

#[test]
fn the_usage_file_gives_the_run_totals() {
    let usage = corpus("hello.usage.json");
    let events = with_side_file("hello", Some(&usage));
    assert_eq!(
        final_usage(&events),
        Some(Usage {
            input_tokens: 36271,
            output_tokens: 41,
            cache_read_tokens: 0,
            cache_write_tokens: Some(0),
        })
    );
    assert!(!events.iter().any(|e| matches!(e, Event::Unreported { .. })));
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::FinalResult { .. }))
            .count(),
        1
    );

    // No file: a diagnostic, the result still comes, and the usage is unreported.
    let events = with_side_file("hello", None);
    assert_eq!(final_usage(&events), None);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Diagnostic { kind, .. } if kind == "missing_side_file"
    )));
    assert!(events.iter().any(|e| matches!(e, Event::Unreported { .. })));
}

#[test]
fn a_bad_usage_file_names_the_field() {
    let err = usage_of(br#"{"modelMetrics":{"m":{"usage":{"inputTokens":1}}}}"#).unwrap_err();
    assert!(err.contains("modelMetrics.m.usage.outputTokens"), "{err}");
    let err = usage_of(b"{}").unwrap_err();
    assert!(err.contains("modelMetrics"), "{err}");
    let err = usage_of(b"nope").unwrap_err();
    assert!(err.contains("not JSON"), "{err}");
    let two = usage_of(
        br#"{"modelMetrics":{
            "a":{"usage":{"inputTokens":1,"outputTokens":2,"cacheReadTokens":3}},
            "b":{"usage":{"inputTokens":10,"outputTokens":20,"cacheReadTokens":30,"cacheWriteTokens":4}}}}"#,
    )
    .unwrap();
    assert_eq!(
        (two.input_tokens, two.output_tokens, two.cache_read_tokens),
        (11, 22, 33)
    );
    assert_eq!(two.cache_write_tokens, Some(4));
}

#[test]
fn no_output_and_no_result() {
    let r = Reduced::new("");
    assert!(matches!(
        r.final_result(),
        Some(Event::FinalResult { success: false, .. })
    ));
    let r = Reduced::new(r#"{"type":"assistant.turn_start","data":{"turnId":"0"}}"#);
    assert_eq!(r.kinds(), ["incomplete_run"]);
    assert_eq!(r.turns(), 0, "a request without output is no call");
}

#[test]
fn launch_plan() {
    let settings = AgentSettings {
        model_base_url: Some("http://127.0.0.1:9/".into()),
        api_key: Some("sk-test".into()),
        thinking_level: Some("high".into()),
        ..Default::default()
    };
    let plan = Copilot::plan(&settings, &RunLimits::default()).unwrap();
    assert_eq!(plan.argv[..2], ["copilot", "-p"]);
    assert_eq!(plan.prompt, harness_kit::PromptDelivery::ArgvAt(2));
    let argv = plan.argv.join(" ");
    for flag in [
        "--output-format json",
        "--allow-all",
        "--no-auto-update",
        "--disable-client-telemetry",
        "--reasoning-effort high",
    ] {
        assert!(argv.contains(flag), "{argv}");
    }
    assert!(argv.contains(&format!("--usage-output-file {USAGE_FILE}")));
    assert_eq!(plan.side_files, [USAGE_FILE]);
    let env = |k: &str| {
        plan.env
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(env("COPILOT_OFFLINE"), Some("true"));
    assert_eq!(
        env("COPILOT_PROVIDER_BASE_URL"),
        Some("http://127.0.0.1:9/v1")
    );
    assert_eq!(env("COPILOT_PROVIDER_API_KEY"), Some("sk-test"));
    assert_eq!(env("COPILOT_MODEL"), Some("mock-model"));

    let err = Copilot::plan(&AgentSettings::default(), &RunLimits::default()).unwrap_err();
    assert!(err.contains("model_base_url"), "{err}");
    let bad = AgentSettings {
        thinking_level: Some("huge".into()),
        ..settings.clone()
    };
    assert!(Copilot::plan(&bad, &RunLimits::default()).is_err());
    let system = AgentSettings {
        system_prompt: Some("x".into()),
        ..settings
    };
    assert!(Copilot::plan(&system, &RunLimits::default()).is_err());
}

#[test]
fn neutral_actions() {
    let call = Copilot::translate_action(
        &NeutralAction::Shell {
            command: "date".into(),
        },
        "/w",
    );
    assert_eq!(call.name, "bash");
    assert_eq!(
        call.arguments_json,
        r#"{"command":"date","description":"Run a shell command"}"#
    );
    let call = Copilot::translate_action(
        &NeutralAction::WriteFile {
            path: "a.txt".into(),
            content: "x".into(),
        },
        "/w",
    );
    assert_eq!(call.name, "create");
    assert_eq!(
        call.arguments_json,
        r#"{"path":"/w/a.txt","file_text":"x"}"#
    );
}

/// A call to a tool Copilot does not have (live `unknown_tool` scenario, Copilot 1.0.102)
/// ends `success: false` with "Tool 'no_such_tool' does not exist.": it never ran, so it
/// is denied, not an error. Another tool's failure naming a missing tool stays an error.
#[test]
fn a_call_to_a_tool_that_does_not_exist_is_denied() {
    let ghost = Reduced::new(concat!(
        r#"{"type":"tool.execution_start","data":{"toolCallId":"c","toolName":"no_such_tool","arguments":{"command":"echo ghost"}}}"#,
        "\n",
        r#"{"type":"tool.execution_complete","data":{"toolCallId":"c","success":false,"error":{"message":"Tool 'no_such_tool' does not exist.","code":"failure"}}}"#,
    ));
    assert_eq!(ghost.tools()[0].2, Some(ToolStatus::Denied));
    let other = Reduced::new(concat!(
        r#"{"type":"tool.execution_start","data":{"toolCallId":"c","toolName":"bash","arguments":{}}}"#,
        "\n",
        r#"{"type":"tool.execution_complete","data":{"toolCallId":"c","success":false,"error":{"message":"Tool 'no_such_tool' does not exist.","code":"failure"}}}"#,
    ));
    assert_eq!(other.tools()[0].2, Some(ToolStatus::Error));
}

/// A turn without a `turnId` gets a made-up id numbered by model call (the kit's
/// `IdMaker`): a turn that failed before any output is no call and takes no number, and a
/// turn with a `turnId` takes none either.
#[test]
fn a_turn_without_a_turn_id_is_numbered_by_its_call() {
    let mut r = CopilotReducer::new(ReducerConfig::default());
    let lines = [
        r#"{"type":"assistant.turn_start","data":{}}"#,
        r#"{"type":"assistant.turn_start","data":{}}"#,
        r#"{"type":"assistant.message","data":{"content":"a"}}"#,
        r#"{"type":"assistant.turn_start","data":{"turnId":"x"}}"#,
        r#"{"type":"assistant.message","data":{"content":"b"}}"#,
        r#"{"type":"assistant.turn_start","data":{}}"#,
        r#"{"type":"assistant.message_delta","data":{}}"#,
        r#"{"type":"assistant.message","data":{"content":"c"}}"#,
    ];
    let ids: Vec<(&str, String)> = lines
        .iter()
        .flat_map(|l| r.feed(l.as_bytes(), 0))
        .filter_map(|e| match e {
            Event::ModelCallStarted { message_id, .. } => Some(("start", message_id?)),
            Event::AssistantMessage { message_id, .. } => Some(("message", message_id)),
            _ => None,
        })
        .collect();
    let want = [
        ("start", "copilot-turn-1"),
        ("message", "copilot-turn-1"),
        ("start", "copilot-turn-x"),
        ("message", "copilot-turn-x"),
        ("start", "copilot-turn-3"),
        ("message", "copilot-turn-3"),
    ];
    assert_eq!(ids, want.map(|(k, id)| (k, id.to_string())));
}
