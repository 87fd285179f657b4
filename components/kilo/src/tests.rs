use super::*;
use harness_kit::{Event, PromptDelivery, ToolStatus, Usage};
use serde_json::Value;

type Reduced = harness_kit::testing::Reduced<OpenCodeReducer>;

fn live(scenario: &str) -> Reduced {
    Reduced::file(&format!("tests/corpus/live/kilo/{scenario}.jsonl"))
}

#[test]
fn hello_reduces_as_opencode_does() {
    let r = live("hello");
    assert_eq!(r.turns(), 3);
    assert_eq!(
        r.tools(),
        [
            ("call_mock_0_0", "write", Some(ToolStatus::Ok)),
            ("call_mock_1_0", "bash", Some(ToolStatus::Ok)),
        ]
    );
    assert_eq!(
        r.message_usage(),
        Some(Usage {
            input_tokens: 12650 + 12734 + 12806,
            output_tokens: 27 + 13 + 1,
            cache_read_tokens: 0,
            cache_write_tokens: Some(0),
        })
    );
    assert!(r.final_result().is_some());
}

#[test]
fn parallel_and_tool_error() {
    let r = live("parallel");
    assert_eq!(r.turns(), 2);
    assert_eq!(r.tools().len(), 2);
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
fn plan_uses_kilo_names_and_opt_outs() {
    let settings = AgentSettings {
        model_base_url: Some("http://127.0.0.1:9".into()),
        api_key: Some("sk-test".into()),
        ..Default::default()
    };
    let plan = Kilo::plan(&settings, &RunLimits::default()).unwrap();
    assert_eq!(
        plan.argv.join(" "),
        "kilo run --format json -m mock/mock-model"
    );
    assert_eq!(plan.prompt, PromptDelivery::ArgvAt(6));
    assert_eq!(plan.files[0].path, "kilo.json");
    let config: Value = serde_json::from_str(&plan.files[0].content).unwrap();
    assert_eq!(config["$schema"], "https://app.kilo.ai/config.json");
    assert_eq!(
        config["disabled_providers"],
        serde_json::json!(["kilo", "apertis"])
    );
    assert_eq!(
        config["provider"]["mock"]["options"]["baseURL"],
        "http://127.0.0.1:9/v1"
    );
    assert_eq!(config["permission"]["bash"], "allow");
    for (key, value) in [
        ("KILO_CONFIG", "{{home}}/kilo.json"),
        ("XDG_DATA_HOME", "{{home}}/.local/share"),
        ("KILO_TELEMETRY_LEVEL", "off"),
        ("KILO_DISABLE_MODELS_FETCH", "1"),
    ] {
        assert!(
            plan.env.contains(&(key.into(), value.into())),
            "{key} missing"
        );
    }
    assert!(!plan.env.iter().any(|(k, _)| k.starts_with("OPENCODE_")));
    let start = AgentSettings {
        session: Some(harness_kit::SessionRequest::Start("x".into())),
        ..Default::default()
    };
    let err = Kilo::plan(&start, &RunLimits::default()).unwrap_err();
    assert!(err.starts_with("kilo names its own sessions"), "{err}");
}

#[test]
fn neutral_actions_are_opencode_tools() {
    let call = Kilo::translate_action(
        &NeutralAction::WriteFile {
            path: "a.txt".into(),
            content: "x".into(),
        },
        "/w",
    );
    assert_eq!(call.name, "write");
    assert_eq!(
        call.arguments_json,
        r#"{"filePath":"/w/a.txt","content":"x"}"#
    );
}

/// Kilo 7.7.7, live against the scripted model (tasks/scenarios/unknown_tool): a call to a
/// tool Kilo does not have is that call, errored with the AI SDK's text (not OpenCode's
/// `invalid` tool); it never ran, so it is denied.
#[test]
fn a_call_to_a_tool_kilo_does_not_have_is_denied() {
    let r = Reduced::new(
        r#"{"type":"tool_use","timestamp":1796123919985,"sessionID":"ses_dceac6c03ffer8YuGrd2h9u0gm","part":{"id":"prt_2315405e8001jy7foOX6kN4i51","sessionID":"ses_dceac6c03ffer8YuGrd2h9u0gm","messageID":"msg_231540149001vztL8EVisTirR9","type":"tool","callID":"call_mock_0_0","tool":"no_such_tool","state":{"status":"error","input":{"command":"echo ghost >> steps.txt"},"error":"Model tried to call unavailable tool 'no_such_tool'. Available tools: background_process, bash, board_post, board_read, cancel_wakeup, edit, glob, grep, kilo_local_recall, read, schedule_wakeup, skill, task, todowrite, webfetch, write.","time":{"start":1796123919876,"end":1796123919912}}}}"#,
    );
    assert_eq!(
        r.tools(),
        [("call_mock_0_0", "no_such_tool", Some(ToolStatus::Denied))]
    );
}
