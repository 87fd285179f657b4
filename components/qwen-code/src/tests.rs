use super::*;
use harness_kit::{
    AgentSettings, Event, Harness, NeutralAction, PromptDelivery, RunLimits, ToolStatus, Usage,
};

type Reduced = harness_kit::testing::Reduced<QwenReducer>;

fn live(scenario: &str) -> Reduced {
    Reduced::file(&format!("tests/corpus/live/qwen/{scenario}.jsonl"))
}

/// A reply's text line and its tool-call line carry different ids: one model call, with
/// the usage of the line that has it.
#[test]
fn hello_groups_each_reply_into_one_call() {
    let r = live("hello");
    assert_eq!(r.turns(), 3);
    let messages = r.messages();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[0].1, "I'll create the file.");
    assert_eq!(messages[2].1, "done");
    assert_eq!(
        r.tools(),
        [
            ("call_mock_0_0", "write_file", Some(ToolStatus::Ok)),
            ("call_mock_1_0", "run_shell_command", Some(ToolStatus::Ok)),
        ]
    );
    assert_eq!(
        r.message_usage(),
        Some(Usage {
            input_tokens: 17780 + 17888 + 17988,
            output_tokens: 27 + 4 + 1,
            cache_read_tokens: 0,
            cache_write_tokens: None,
        })
    );
    assert!(r.iter().any(
        |e| matches!(e, Event::SessionStarted { cli_version: Some(v), model: Some(m), .. }
            if v == "0.24.4" && m == "mock-model")
    ));
    let Some(Event::FinalResult {
        success,
        num_turns,
        cost_usd,
        text,
        usage,
        ..
    }) = r.final_result()
    else {
        panic!("no result")
    };
    assert!(success);
    assert_eq!(*num_turns, Some(3));
    assert_eq!(*cost_usd, None);
    assert_eq!(text.as_deref(), Some("done"));
    assert_eq!(usage.unwrap().input_tokens, 53656);
    assert!(r.kinds().is_empty(), "{:?}", r.kinds());
}

#[test]
fn parallel_is_one_call_with_two_tools() {
    let r = live("parallel");
    assert_eq!(r.turns(), 2);
    assert_eq!(r.tools().len(), 2);
    assert!(r.tools().iter().all(|t| t.2 == Some(ToolStatus::Ok)));
}

#[test]
fn a_failed_command_is_an_error_with_its_exit_code() {
    let r = live("tool_error");
    assert_eq!(r.turns(), 2);
    assert!(r.iter().any(|e| matches!(
        e,
        Event::ToolCallFinished {
            status: ToolStatus::Error,
            exit_code: Some(2),
            ..
        }
    )));
}

/// The whole prompt is `input_tokens`; cache reads are taken out of it, and thinking
/// (total past prompt + output) is output.
#[test]
fn usage_counts_the_prompt_once() {
    let r = Reduced::new(concat!(
        r#"{"type":"assistant","message":{"id":"a","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":100,"output_tokens":5,"cache_read_input_tokens":60,"total_tokens":112}}}"#,
        "\n",
        r#"{"type":"user","message":{"content":[]}}"#,
        "\n",
        r#"{"type":"assistant","message":{"id":"b","content":[{"type":"text","text":"y"}]}}"#,
    ));
    assert_eq!(r.turns(), 2, "a user line ends the call");
    let first = r
        .iter()
        .find_map(|e| match e {
            Event::AssistantMessage { usage, .. } => *usage,
            _ => None,
        })
        .unwrap();
    assert_eq!(
        first,
        Usage {
            input_tokens: 40,
            output_tokens: 12,
            cache_read_tokens: 60,
            cache_write_tokens: None,
        }
    );
}

#[test]
fn plan_turns_off_the_memory_request_and_telemetry() {
    let settings = AgentSettings {
        model_base_url: Some("http://127.0.0.1:9/".into()),
        api_key: Some("sk-test".into()),
        model: Some("mock-model".into()),
        ..Default::default()
    };
    let plan = QwenCode::plan(&settings, &RunLimits::default()).unwrap();
    assert_eq!(
        plan.argv.join(" "),
        "qwen -o stream-json --auth-type openai -m mock-model --yolo"
    );
    assert_eq!(plan.prompt, PromptDelivery::ArgvAt(1));
    for (k, v) in [
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        ("OPENAI_API_KEY", "sk-test"),
        ("OPENAI_MODEL", "mock-model"),
    ] {
        assert!(plan.env.contains(&(k.into(), v.into())), "{k}");
    }
    let config: serde_json::Value = serde_json::from_str(&plan.files[0].content).unwrap();
    assert_eq!(plan.files[0].path, SETTINGS_PATH_FOR_TEST);
    assert_eq!(config["memory"]["enableManagedAutoMemory"], false);
    assert_eq!(config["privacy"]["usageStatisticsEnabled"], false);
    assert_eq!(config["telemetry"]["enabled"], false);
}

const SETTINGS_PATH_FOR_TEST: &str = ".qwen/settings.json";

#[test]
fn settings_map_to_flags_and_unknown_modes_are_refused() {
    let settings = AgentSettings {
        allowed_tools: vec!["run_shell_command".into()],
        disallowed_tools: vec!["web_fetch".into()],
        permission_mode: Some("auto-edit".into()),
        system_prompt: Some("Be brief.".into()),
        system_prompt_mode: harness_kit::SystemPromptMode::Replace,
        ..Default::default()
    };
    let argv = QwenCode::plan(&settings, &RunLimits::default())
        .unwrap()
        .argv
        .join(" ");
    assert!(argv.contains("--approval-mode auto-edit") && !argv.contains("--yolo"));
    assert!(argv.contains("--core-tools run_shell_command --exclude-tools web_fetch"));
    assert!(argv.ends_with("--system-prompt Be brief."));
    let bad = AgentSettings {
        permission_mode: Some("bypassPermissions".into()),
        ..Default::default()
    };
    assert!(QwenCode::plan(&bad, &RunLimits::default()).is_err());
    let resume = AgentSettings {
        session: Some(harness_kit::SessionRequest::Resume("x".into())),
        ..Default::default()
    };
    assert!(QwenCode::plan(&resume, &RunLimits::default()).is_err());
}

#[test]
fn neutral_actions_use_absolute_paths() {
    let call = QwenCode::translate_action(
        &NeutralAction::WriteFile {
            path: "hello.txt".into(),
            content: "x".into(),
        },
        "/w",
    );
    assert_eq!(call.name, "write_file");
    assert_eq!(
        call.arguments_json,
        r#"{"file_path":"/w/hello.txt","content":"x"}"#
    );
    let call = QwenCode::translate_action(
        &NeutralAction::Shell {
            command: "date".into(),
        },
        "/w",
    );
    assert_eq!(
        (call.name.as_str(), call.arguments_json.as_str()),
        ("run_shell_command", r#"{"command":"date"}"#)
    );
}

/// Qwen Code 0.24.4, live against the scripted model (tasks/scenarios/unknown_tool): the
/// model calls a tool Qwen Code does not have; its error result says so, and the call,
/// which never ran, is denied (not an error).
#[test]
fn a_call_to_a_tool_qwen_code_does_not_have_is_denied() {
    let r = Reduced::new(&[
        r#"{"type":"assistant","uuid":"ac5e167a-cdd7-48f6-a542-582358c5ca0d","session_id":"abaae4da-c74b-4ea4-88a6-80f8fe6d79d6","parent_tool_use_id":null,"message":{"id":"ac5e167a-cdd7-48f6-a542-582358c5ca0d","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"tool_use","id":"call_mock_0_0","name":"no_such_tool","input":{"command":"echo ghost >> steps.txt"}}],"stop_reason":"tool_use","usage":{"input_tokens":18047,"output_tokens":9,"cache_read_input_tokens":0,"total_tokens":18056}}}"#,
        r#"{"type":"user","uuid":"ff3591eb-5d90-4874-9a68-8eb3d3981663","session_id":"abaae4da-c74b-4ea4-88a6-80f8fe6d79d6","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_mock_0_0","is_error":true,"content":"Tool \"no_such_tool\" not found in registry. Tools must use the exact names that are registered. Did you mean one of: \"get_goal\", \"update_goal\", \"tool_call\"?"}]}}"#,
    ]
    .join("\n"));
    assert_eq!(
        r.tools(),
        [("call_mock_0_0", "no_such_tool", Some(ToolStatus::Denied))]
    );
    // A shell command Qwen Code refused before running it (its text for a blocking sleep).
    let r = Reduced::new(concat!(
        r#"{"type":"assistant","message":{"id":"a1","content":[{"type":"tool_use","id":"c1","name":"run_shell_command","input":{"command":"sleep 60"}}]}}"#,
        "\n",
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","is_error":true,"content":"Blocked: standalone sleep 60. Run blocking commands in the background with is_background: true."}]}}"#,
    ));
    assert_eq!(
        r.tools(),
        [("c1", "run_shell_command", Some(ToolStatus::Denied))]
    );
}
