use super::*;
use crate::Cline;
use harness_kit::{AgentSettings, Harness, NeutralAction, RunLimits};

type Reduced = harness_kit::testing::Reduced<ClineReducer>;

fn live(scenario: &str) -> Reduced {
    Reduced::file(&format!("tests/corpus/live/cline/{scenario}.jsonl"))
}

#[test]
fn hello_three_iterations_two_tools_usage_per_call() {
    let r = live("hello");
    assert_eq!(r.turns(), 3);
    assert_eq!(
        r.tools(),
        [
            ("call_mock_0_0", "editor", Some(ToolStatus::Ok)),
            ("call_mock_1_0", "run_commands", Some(ToolStatus::Ok)),
        ]
    );
    assert_eq!(r.messages()[0].1, "I'll create the file.");
    assert_eq!(r.messages()[2].1, "done");
    assert_eq!(
        r.message_usage(),
        Some(Usage {
            input_tokens: 5451 + 5573 + 5651,
            output_tokens: 27 + 5 + 1,
            cache_read_tokens: 0,
            cache_write_tokens: None,
        })
    );
    let Some(Event::FinalResult {
        success: true,
        num_turns: Some(3),
        cost_usd: Some(cost),
        text: Some(text),
        usage: Some(usage),
        ..
    }) = r.final_result()
    else {
        panic!("{:?}", r.final_result())
    };
    assert_eq!((*cost, text.as_str()), (0.0, "done"));
    assert_eq!(usage.input_tokens, 16675);
    assert!(r.kinds().is_empty(), "{:?}", r.kinds());
}

#[test]
fn parallel_tools_belong_to_one_iteration() {
    let r = live("parallel");
    assert_eq!(r.turns(), 2);
    assert_eq!(r.tools().len(), 2);
}

#[test]
fn a_failed_command_is_an_error_with_its_exit_code() {
    let r = live("tool_error");
    assert!(r.iter().any(|e| matches!(
        e,
        Event::ToolCallFinished {
            status: ToolStatus::Error,
            exit_code: Some(2),
            ..
        }
    )));
}

#[test]
fn odd_streams() {
    let r = Reduced::new("");
    assert!(matches!(r.final_result(),
        Some(Event::FinalResult { success: false, error_kind: Some(k), .. }) if k == "no_output"));
    let r = Reduced::new(concat!(
        r#"{"type":"agent_event","event":{"type":"iteration_start","iteration":1}}"#,
        "\n",
        r#"{"type":"agent_event","event":{"type":"brand_new"}}"#,
        "\n",
        r#"{"type":"agent_event","event":{"type":"error","error":{"name":"Error","message":"Forbidden"},"errorClass":"auth"}}"#,
        "\n",
        r#"{"type":"run_result","finishReason":"error","iterations":1}"#,
    ));
    assert_eq!(r.kinds(), ["unknown_event"]);
    assert!(matches!(r.final_result(),
        Some(Event::FinalResult { success: false, error_kind: Some(k), error_message: Some(m), .. })
            if k == "error" && m == "Forbidden"));
}

#[test]
fn plan_writes_the_provider_and_keeps_the_session_local() {
    let settings = AgentSettings {
        model_base_url: Some("http://127.0.0.1:9/".into()),
        api_key: Some("sk-test".into()),
        ..Default::default()
    };
    let plan = Cline::plan(&settings, &RunLimits::default()).unwrap();
    assert_eq!(plan.argv, ["cline", "--json"]);
    assert_eq!(plan.prompt, harness_kit::PromptDelivery::ArgvAt(2));
    assert!(
        plan.env
            .contains(&("CLINE_SESSION_BACKEND_MODE".into(), "local".into()))
    );
    let providers = plan
        .files
        .iter()
        .find(|f| f.path == crate::launch::PROVIDERS_PATH)
        .unwrap();
    let providers: Value = serde_json::from_str(&providers.content).unwrap();
    let s = &providers["providers"]["openai-compatible"]["settings"];
    assert_eq!(s["baseUrl"], "http://127.0.0.1:9/v1");
    assert_eq!(s["apiKey"], "sk-test");
    assert_eq!(s["model"], "mock-model");
    assert!(providers["providers"]["openai-compatible"]["updatedAt"].is_string());
    let global = plan
        .files
        .iter()
        .find(|f| f.path == crate::launch::GLOBAL_SETTINGS_PATH)
        .unwrap();
    assert!(global.content.contains(r#""telemetryOptOut":true"#));

    let append = AgentSettings {
        system_prompt: Some("x".into()),
        ..Default::default()
    };
    assert!(Cline::plan(&append, &RunLimits::default()).is_err());
    let replace = AgentSettings {
        system_prompt: Some("Only this.".into()),
        system_prompt_mode: harness_kit::SystemPromptMode::Replace,
        thinking_level: Some("high".into()),
        ..Default::default()
    };
    let argv = Cline::plan(&replace, &RunLimits::default()).unwrap().argv;
    assert_eq!(
        argv,
        ["cline", "--json", "-s", "Only this.", "--thinking", "high"]
    );
}

#[test]
fn neutral_actions() {
    let call = Cline::translate_action(
        &NeutralAction::Shell {
            command: "date".into(),
        },
        "/w",
    );
    assert_eq!(call.name, "run_commands");
    assert_eq!(call.arguments_json, r#"{"commands":["date"]}"#);
    let call = Cline::translate_action(
        &NeutralAction::WriteFile {
            path: "a.txt".into(),
            content: "x".into(),
        },
        "/w",
    );
    assert_eq!(call.arguments_json, r#"{"path":"/w/a.txt","new_text":"x"}"#);
}

/// Cline 3.0.65, live against the scripted model (tasks/scenarios/unknown_tool): a call to
/// a tool Cline does not have ends with an `error` that says it "was rejected before
/// execution" (and no `success`): it never ran, so it is denied, not ok.
#[test]
fn a_call_rejected_before_execution_is_denied() {
    let r = Reduced::new(&[
        r#"{"ts":"2026-12-01T11:18:04.478Z","type":"agent_event","event":{"type":"content_start","contentType":"tool","toolName":"no_such_tool","toolCallId":"call_mock_0_0","input":{"command":"echo ghost >> steps.txt"}}}"#,
        r#"{"ts":"2026-12-01T11:18:04.479Z","type":"agent_event","event":{"type":"content_end","contentType":"tool","toolName":"no_such_tool","toolCallId":"call_mock_0_0","output":{"error":"Tool call no_such_tool was rejected before execution: AI_NoSuchToolError: Model tried to call unavailable tool 'no_such_tool'. Available tools: read_files, search_codebase, run_commands, fetch_web_content, editor, ask_question, spawn_agent, team_spawn_teammate, team_shutdown_teammate, team_status, team_task, team_run_task, team_cancel_run, team_list_runs, team_await_runs, team_send_message, team_broadcast, team_read_mailbox, team_mission_log, team_cleanup, team_create_outcome, team_attach_outcome_fragment, team_review_outcome_fragment, team_finalize_outcome, team_list_outcomes."},"error":"{\"error\":\"Tool call no_such_tool was rejected before execution: AI_NoSuchToolError: Model tried to call unavailable tool 'no_such_tool'. Available tools: read_files, search_codebase, run_commands, fetch_web_content, editor, ask_question, spawn_agent, team_spawn_teammate, team_shutdown_teammate, team_status, team_task, team_run_task, team_cancel_run, team_list_runs, team_await_runs, team_send_message, team_broadcast, team_read_mailbox, team_mission_log, team_cleanup, team_create_outcome, team_attach_outcome_fragment, team_review_outcome_fragment, team_finalize_outcome, team_list_outcomes.\"}","durationMs":0}}"#,
    ]
    .join("\n"));
    assert_eq!(
        r.tools(),
        [("call_mock_0_0", "no_such_tool", Some(ToolStatus::Denied))]
    );
}
