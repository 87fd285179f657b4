use super::*;
use crate::Letta;
use harness_kit::{AgentSettings, Harness, NeutralAction, RunLimits};

type Reduced = harness_kit::testing::Reduced<LettaReducer>;

fn live(scenario: &str) -> Reduced {
    Reduced::file(&format!("tests/corpus/live/letta/{scenario}.jsonl"))
}

fn final_parts(
    r: &Reduced,
) -> (
    bool,
    Option<u32>,
    Option<String>,
    Option<Usage>,
    Option<u64>,
) {
    match r.final_result() {
        Some(Event::FinalResult {
            success,
            num_turns,
            text,
            usage,
            duration_ms,
            ..
        }) => (*success, *num_turns, text.clone(), *usage, *duration_ms),
        other => panic!("{other:?}"),
    }
}

#[test]
fn hello_three_calls_two_tools_of_unknown_outcome() {
    let r = live("hello");
    assert_eq!(r.turns(), 3);
    // No tool results in the stream: unknown, never ok.
    assert_eq!(
        r.tools(),
        [
            ("call_mock_0_0", "Write", Some(ToolStatus::Unknown)),
            ("call_mock_1_0", "Bash", Some(ToolStatus::Unknown)),
        ]
    );
    let messages = r.messages();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(messages[0].1, "I'll create the file.");
    assert_eq!(messages[1].1, "", "the Bash call's reply has no text");
    assert_eq!(messages[2].1, "done");
    let (success, num_turns, text, usage, duration) = final_parts(&r);
    assert!(success);
    // `num_turns` is 0 in the line: counted from the stream instead.
    assert_eq!(num_turns, Some(3));
    assert_eq!(text.as_deref(), Some("done"));
    assert_eq!(duration, Some(303));
    let usage = usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (45994, 42));
    // Per-call usage adds up to the result's totals.
    let per_call = r.message_usage().unwrap();
    assert_eq!(
        (per_call.input_tokens, per_call.output_tokens),
        (15242 + 15340 + 15412, 28 + 13 + 1)
    );
    assert_eq!(per_call.cache_write_tokens, Some(0));
    assert!(r.kinds().is_empty(), "{:?}", r.kinds());
    match r.iter().next() {
        Some(Event::SessionStarted { model, tools, .. }) => {
            assert_eq!(model.as_deref(), Some("llama.cpp/mock-model"));
            assert!(tools.iter().any(|t| t == "Bash"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_tool_ends_when_the_next_call_starts() {
    let r = live("hello");
    let order: Vec<String> = r
        .iter()
        .filter_map(|e| match e {
            Event::ModelCallStarted { message_id, .. } => message_id.clone(),
            Event::ToolCallStarted { call_id, .. } => Some(format!("start {call_id}")),
            Event::ToolCallFinished { call_id, .. } => Some(format!("end {call_id}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        order,
        [
            "letta-call-1",
            "start call_mock_0_0",
            "end call_mock_0_0",
            "letta-call-2",
            "start call_mock_1_0",
            "end call_mock_1_0",
            "letta-call-3",
        ]
    );
}

#[test]
fn parallel_two_tools_in_one_call() {
    let r = live("parallel");
    assert_eq!(r.turns(), 2);
    let names: Vec<&str> = r.tools().iter().map(|t| t.1).collect();
    assert_eq!(names, ["Write", "Bash"]);
    assert!(r.kinds().is_empty(), "{:?}", r.kinds());
}

#[test]
fn tool_error_is_unknown_not_ok() {
    let r = live("tool_error");
    assert_eq!(r.turns(), 2);
    assert_eq!(r.tools()[0].2, Some(ToolStatus::Unknown));
    let exit = r.iter().find_map(|e| match e {
        Event::ToolCallFinished { exit_code, .. } => Some(*exit_code),
        _ => None,
    });
    assert_eq!(exit, Some(None), "no exit code is reported");
    let (success, num_turns, ..) = final_parts(&r);
    assert!(success);
    assert_eq!(num_turns, Some(2));
}

#[test]
fn cache_reads_are_apart_from_the_input() {
    let line = r#"{"type":"message","message_type":"usage_statistics","prompt_tokens":10,"completion_tokens":2,"cached_input_tokens":30,"run_id":"r1"}"#;
    let r = Reduced::new(line);
    assert_eq!(r.turns(), 1);
    let u = r.message_usage().unwrap();
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.cache_read_tokens),
        (10, 2, 30)
    );
    // Absent is not zero.
    assert_eq!(u.cache_write_tokens, None);
}

#[test]
fn a_failed_result_says_why() {
    let text = [
        r#"{"type":"message","message_type":"stop_reason","stop_reason":"llm_api_error"}"#,
        r#"{"type":"result","subtype":"error","num_turns":0}"#,
    ]
    .join("\n");
    let r = Reduced::new(&text);
    match r.final_result() {
        Some(Event::FinalResult {
            success,
            error_kind,
            error_message,
            ..
        }) => {
            assert!(!success);
            assert_eq!(error_kind.as_deref(), Some("error"));
            assert!(
                error_message.as_deref().unwrap().contains("llm_api_error"),
                "{error_message:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_lines_are_diagnostics_and_a_cut_stream_leaves_tools_open() {
    let text = [
        r#"{"type":"auto_approval","tool_call":{"name":"Bash","tool_call_id":"t1","arguments":"{\"command\":\"sleep 9\"}"}}"#,
        r#"{"type":"message","message_type":"tool_return_message_v9"}"#,
        r#"{"type":"surprise"}"#,
        r#"{"type":"auto_approval","tool_call":{"name":"Bash"}}"#,
    ]
    .join("\n");
    let r = Reduced::new(&text);
    assert_eq!(
        r.kinds(),
        [
            "unknown_message_type",
            "unknown_type",
            "missing_field",
            "incomplete_run"
        ]
    );
    // Without a result the running tool is not ended here (the host says interrupted).
    assert_eq!(r.tools(), [("t1", "Bash", None)]);
    assert_eq!(r.turns(), 1);
}

#[test]
fn a_retry_abandons_the_open_call_only() {
    let text = [
        r#"{"type":"message","message_type":"assistant_message","content":[{"type":"text","text":"Hal"}],"run_id":"r1"}"#,
        r#"{"type":"retry","reason":"llm_api_error","attempt":1,"max_attempts":3,"delay_ms":1000}"#,
        r#"{"type":"message","message_type":"assistant_message","content":[{"type":"text","text":"done"}],"run_id":"r2"}"#,
        r#"{"type":"message","message_type":"usage_statistics","prompt_tokens":5,"completion_tokens":1,"run_id":"r2"}"#,
        r#"{"type":"retry","reason":"llm_api_error","attempt":1,"delay_ms":500}"#,
        r#"{"type":"result","subtype":"success","num_turns":0,"result":"done"}"#,
    ]
    .join("\n");
    let r = Reduced::new(&text);
    assert_eq!(r.turns(), 1);
    assert_eq!(r.messages(), [("letta-call-2", "done")]);
    let retries: Vec<(bool, Option<String>, Option<u64>)> = r
        .iter()
        .filter_map(|e| match e {
            Event::ModelCallRetried {
                call_started,
                abandoned_message_id,
                delay_ms,
                ..
            } => Some((*call_started, abandoned_message_id.clone(), *delay_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(
        retries,
        [
            (true, Some("letta-call-1".to_string()), Some(1000)),
            // A retry before any output of its call: nothing to un-count.
            (false, None, Some(500)),
        ]
    );
    assert_eq!(final_parts(&r).1, Some(1));
    assert!(r.kinds().is_empty(), "{:?}", r.kinds());
}

#[test]
fn no_output_at_all() {
    let r = Reduced::new("");
    assert!(matches!(
        r.final_result(),
        Some(Event::FinalResult { success: false, .. })
    ));
}

#[test]
fn launch_plan() {
    let settings = AgentSettings {
        model_base_url: Some("http://127.0.0.1:9/".into()),
        api_key: Some("sk-test".into()),
        ..Default::default()
    };
    let plan = Letta::plan(&settings, &RunLimits::default()).unwrap();
    assert_eq!(plan.argv[..4], ["letta", "--backend", "local", "-p"]);
    assert_eq!(plan.prompt, harness_kit::PromptDelivery::ArgvAt(4));
    let argv = plan.argv.join(" ");
    for flag in [
        "--output-format stream-json",
        "-m llama.cpp/mock-model",
        "--new-agent",
        "--yolo",
    ] {
        assert!(argv.contains(flag), "{argv}");
    }
    let env = |k: &str| {
        plan.env
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(env("LETTA_LOCAL_BACKEND_EXPERIMENTAL"), Some("1"));
    assert_eq!(env("LLAMA_CPP_BASE_URL"), Some("http://127.0.0.1:9/v1"));
    assert_eq!(env("LLAMA_CPP_API_KEY"), Some("sk-test"));
    assert_eq!(env("DISABLE_AUTOUPDATER"), Some("1"));
    assert!(plan.native_limits.is_empty(), "the host enforces the caps");

    let named = AgentSettings {
        model: Some("llama.cpp/other".into()),
        ..settings.clone()
    };
    let argv = Letta::plan(&named, &RunLimits::default()).unwrap().argv;
    assert!(argv.join(" ").contains("-m llama.cpp/other "), "{argv:?}");

    let err = Letta::plan(&AgentSettings::default(), &RunLimits::default()).unwrap_err();
    assert!(err.contains("model_base_url"), "{err}");
    let system = AgentSettings {
        system_prompt: Some("x".into()),
        ..settings
    };
    let err = Letta::plan(&system, &RunLimits::default()).unwrap_err();
    assert!(err.contains("system-prompt"), "{err}");
}

#[test]
fn neutral_actions() {
    let call = Letta::translate_action(
        &NeutralAction::Shell {
            command: "date".into(),
        },
        "/w",
    );
    assert_eq!(call.name, "Bash");
    assert_eq!(
        call.arguments_json,
        r#"{"command":"date","description":"Run a shell command"}"#
    );
    let call = Letta::translate_action(
        &NeutralAction::WriteFile {
            path: "a.txt".into(),
            content: "x".into(),
        },
        "/w",
    );
    assert_eq!(call.name, "Write");
    assert_eq!(
        call.arguments_json,
        r#"{"file_path":"/w/a.txt","content":"x"}"#
    );
}
