use super::*;
use crate::GrokCli;
use harness_kit::{AgentSettings, Caveat, Harness, NeutralAction, PromptDelivery, RunLimits};

type Reduced = harness_kit::testing::Reduced<GrokReducer>;

fn live(scenario: &str) -> Reduced {
    Reduced::file(&format!("tests/corpus/live/grok/{scenario}.jsonl"))
}

fn final_of(r: &Reduced) -> (bool, Option<String>, bool, Option<u32>, Option<String>) {
    match r.final_result() {
        Some(Event::FinalResult {
            success,
            error_kind,
            max_turns_reached,
            num_turns,
            text,
            usage,
            ..
        }) => {
            assert_eq!(*usage, None, "grok reports no usage");
            (
                *success,
                error_kind.clone(),
                *max_turns_reached,
                *num_turns,
                text.clone(),
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn hello_three_calls_two_tools_the_answer_and_usage_unreported() {
    let r = live("hello");
    assert_eq!(r.turns(), 3);
    assert_eq!(
        r.tools(),
        [
            ("call_mock_0_0", "create_file", Some(ToolStatus::Ok)),
            ("call_mock_1_0", "bash", Some(ToolStatus::Ok)),
        ]
    );
    // grok's stand-in for the empty text of a tool-call reply is not the model's text.
    let texts: Vec<&str> = r.messages().iter().map(|m| m.1).collect();
    assert_eq!(texts, ["I'll create the file.", "", "done"]);
    assert_eq!(
        final_of(&r),
        (true, None, false, Some(3), Some("done".into()))
    );
    // Unknown, not zero.
    assert_eq!(r.unreported(), [(UnreportedKind::Usage, None)]);
    assert!(r.kinds().is_empty(), "{:?}", r.kinds());
}

#[test]
fn a_failed_command_is_an_error_and_parallel_calls_both_end() {
    let r = live("tool_error");
    assert_eq!(
        r.tools(),
        [("call_mock_0_0", "bash", Some(ToolStatus::Error))]
    );
    assert!(final_of(&r).0);
    let r = live("parallel");
    assert_eq!(r.turns(), 2);
    assert_eq!(r.tool_ends(), [ToolStatus::Ok, ToolStatus::Ok]);
}

#[test]
fn a_command_printing_an_error_word_later_is_ok_and_error_texts_follow_the_tool() {
    assert_eq!(
        status_of("bash", "all good\nCommand failed: no"),
        ToolStatus::Ok
    );
    assert_eq!(status_of("bash", "Command failed: x"), ToolStatus::Error);
    assert_eq!(
        status_of("create_file", "Command failed: x"),
        ToolStatus::Ok
    );
    assert_eq!(
        status_of("view_file", "File not found: /a"),
        ToolStatus::Error
    );
    assert_eq!(
        status_of("search", "Tool execution error: bad"),
        ToolStatus::Error
    );
    assert_eq!(status_of("frob", "Unknown tool: frob"), ToolStatus::Denied);
    assert_eq!(status_of("bash", "Unknown tool: frob"), ToolStatus::Ok);
}

#[test]
fn grok_s_own_lines_are_no_model_call() {
    let rounds = concat!(
        r#"{"role":"user","content":"go"}"#,
        "\n",
        r#"{"role":"assistant","content":"Using tools to help you...","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"true\"}"}}]}"#,
        "\n",
        r#"{"role":"tool","tool_call_id":"c1","content":"Command executed successfully (no output)"}"#,
        "\n",
        r#"{"role":"assistant","content":"Maximum tool execution rounds reached. Stopping to prevent infinite loops."}"#,
    );
    let r = Reduced::new(rounds);
    assert_eq!(r.turns(), 1);
    assert_eq!(
        final_of(&r),
        (true, None, true, Some(1), Some(String::new()))
    );

    let r = Reduced::new(concat!(
        r#"{"role":"user","content":"go"}"#,
        "\n",
        r#"{"role":"assistant","content":"Sorry, I encountered an error: 500 boom"}"#,
    ));
    assert_eq!(r.turns(), 0);
    let (success, kind, ..) = final_of(&r);
    assert!(!success);
    assert_eq!(kind.as_deref(), Some("cli_error"));

    let r = Reduced::new(r#"{"role":"assistant","content":"Error: no key"}"#);
    assert_eq!((r.turns(), final_of(&r).0), (0, false));
}

#[test]
fn a_transcript_without_a_final_reply_is_incomplete_and_no_output_fails() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/corpus/live/grok/hello.jsonl"),
    )
    .unwrap();
    let cut: Vec<&str> = text.lines().take(3).collect();
    let r = Reduced::new(&cut.join("\n"));
    let (success, kind, ..) = final_of(&r);
    assert!(!success);
    assert_eq!(kind.as_deref(), Some("incomplete_run"));
    assert!(r.kinds().contains(&"incomplete_run"));

    let r = Reduced::new("");
    assert!(!final_of(&r).0);
    let r = Reduced::new(r#"{"content":"x"}"#);
    assert_eq!(r.kinds(), ["missing_field", "incomplete_run"]);
}

#[test]
fn the_plan_points_grok_at_the_base_url_and_declares_late_starts() {
    let settings = AgentSettings {
        model_base_url: Some("http://127.0.0.1:9/".into()),
        ..Default::default()
    };
    let plan = GrokCli::plan(&settings, &RunLimits::default()).unwrap();
    assert_eq!(plan.argv, ["grok", "-p"]);
    assert_eq!(plan.prompt, PromptDelivery::ArgvAt(2));
    assert!(
        plan.env
            .contains(&("GROK_BASE_URL".into(), "http://127.0.0.1:9/v1".into()))
    );
    assert!(
        plan.env
            .contains(&("GROK_MODEL".into(), "mock-model".into()))
    );
    assert_eq!(plan.caveats, [Caveat::ToolStartReportedLate]);
    // Without a base URL, a key is required.
    assert!(GrokCli::plan(&AgentSettings::default(), &RunLimits::default()).is_err());
    let thinking = AgentSettings {
        thinking_level: Some("high".into()),
        ..settings
    };
    assert!(GrokCli::plan(&thinking, &RunLimits::default()).is_err());
}

#[test]
fn neutral_actions_become_grok_tools() {
    let call = GrokCli::translate_action(
        &NeutralAction::WriteFile {
            path: "a.txt".into(),
            content: "x".into(),
        },
        "/w",
    );
    assert_eq!(call.name, "create_file");
    let args: Value = serde_json::from_str(&call.arguments_json).unwrap();
    assert_eq!(args["path"], "/w/a.txt");
    let call = GrokCli::translate_action(
        &NeutralAction::Shell {
            command: "ls".into(),
        },
        "/w",
    );
    assert_eq!(
        (call.name.as_str(), call.arguments_json.as_str()),
        ("bash", r#"{"command":"ls"}"#)
    );
}
