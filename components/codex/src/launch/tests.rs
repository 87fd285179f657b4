//! Codex launch-plan tests: argv, config files, the fields Codex refuses.

use super::*;
use harness_kit::LimitKind;

fn mock_settings() -> AgentSettings {
    AgentSettings {
        model_base_url: Some("http://127.0.0.1:9/".into()),
        api_key: Some("sk-test".into()),
        ..Default::default()
    }
}

#[test]
fn plan_matches_the_recorded_command_line() {
    let limits = RunLimits {
        max_turns: Some(2),
        max_tool_calls: Some(3),
        ..Default::default()
    };
    let plan = Codex::plan(&mock_settings(), &limits).unwrap();
    assert_eq!(
        plan.argv,
        [
            "codex",
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox"
        ]
    );
    assert_eq!(plan.prompt, PromptDelivery::ArgvAt(5));
    // No native caps: the host's backstop enforces both.
    assert_eq!(plan.native_limits, Vec::<LimitKind>::new());
    assert!(plan.unsupported_limits.is_empty());
    assert_eq!(
        plan.env,
        [
            ("CODEX_HOME".to_string(), "{{home}}/.codex".to_string()),
            ("MOCK_API_KEY".to_string(), "sk-test".to_string()),
        ]
    );
    assert_eq!(plan.files.len(), 1);
    assert_eq!(plan.files[0].path, ".codex/config.toml");
    assert_eq!(
        plan.files[0].content,
        "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\
         \n[analytics]\nenabled = false\n\n[features]\nplugins = false\n\
         \n[model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
         wire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n"
    );
}

#[test]
fn no_base_url_means_no_mock_provider() {
    let settings = AgentSettings {
        model: Some("gpt-5.4".into()),
        api_key: Some("sk-real".into()),
        system_prompt: Some("Say \"hi\"\nfirst.".into()),
        ..Default::default()
    };
    let plan = Codex::plan(&settings, &RunLimits::default()).unwrap();
    let config = &plan.files[0].content;
    assert!(config.starts_with("model = \"gpt-5.4\"\n"));
    assert!(!config.contains("mock"), "{config}");
    // Root keys come before the first table.
    let instructions = config.find("developer_instructions = \"Say \\\"hi\\\"\\nfirst.\"");
    assert!(instructions.unwrap() < config.find("[analytics]").unwrap());
    assert!(
        plan.env
            .contains(&("CODEX_API_KEY".into(), "sk-real".into()))
    );
}

#[test]
fn permission_modes_and_tool_lists() {
    let settings = AgentSettings {
        permission_mode: Some("workspace-write".into()),
        ..mock_settings()
    };
    let plan = Codex::plan(&settings, &RunLimits::default()).unwrap();
    assert!(plan.argv.join(" ").ends_with("--sandbox workspace-write"));
    assert!(
        !plan
            .argv
            .contains(&"--dangerously-bypass-approvals-and-sandbox".into())
    );

    let settings = AgentSettings {
        permission_mode: Some("acceptEdits".into()),
        ..mock_settings()
    };
    let err = Codex::plan(&settings, &RunLimits::default()).unwrap_err();
    assert!(err.contains("acceptEdits"), "{err}");

    let settings = AgentSettings {
        allowed_tools: vec!["Bash".into()],
        ..mock_settings()
    };
    assert!(Codex::plan(&settings, &RunLimits::default()).is_err());
}

#[test]
fn neutral_actions() {
    let call = Codex::translate_action(
        &NeutralAction::WriteFile {
            path: "hello.txt".into(),
            content: "hello from mock\n".into(),
        },
        "/w",
    );
    assert_eq!(call.name, "apply_patch");
    // A JSON string: the free-form patch text, exactly as the recorded script has it.
    let text: Value = serde_json::from_str(&call.arguments_json).unwrap();
    assert_eq!(
        text,
        "*** Begin Patch\n*** Add File: hello.txt\n+hello from mock\n*** End Patch\n"
    );

    let call = Codex::translate_action(
        &NeutralAction::WriteFile {
            path: "a.txt".into(),
            content: "one\n\nthree".into(),
        },
        "/w",
    );
    let text: Value = serde_json::from_str(&call.arguments_json).unwrap();
    assert_eq!(
        text,
        "*** Begin Patch\n*** Add File: a.txt\n+one\n+\n+three\n*** End Patch\n"
    );

    let call = Codex::translate_action(
        &NeutralAction::Shell {
            command: "echo step 1".into(),
        },
        "/w",
    );
    assert_eq!(
        (call.name.as_str(), call.arguments_json.as_str()),
        ("exec_command", r#"{"cmd":"echo step 1"}"#)
    );

    let call = Codex::translate_action(
        &NeutralAction::ReadFile {
            path: "it's here.txt".into(),
        },
        "/w",
    );
    assert_eq!(call.arguments_json, r#"{"cmd":"cat 'it'\\''s here.txt'"}"#);
    let call = Codex::translate_action(
        &NeutralAction::ReadFile {
            path: "src/app.py".into(),
        },
        "/w",
    );
    assert_eq!(call.arguments_json, r#"{"cmd":"cat src/app.py"}"#);
}

#[test]
fn resume_uses_exec_resume_with_the_sandbox_as_a_config_override() {
    let settings = AgentSettings {
        permission_mode: Some("workspace-write".into()),
        session: Some(harness_kit::SessionRequest::Resume("01a2-thread".into())),
        ..Default::default()
    };
    let plan = Codex::plan(&settings, &RunLimits::default()).unwrap();
    assert_eq!(
        plan.argv.join(" "),
        r#"codex exec resume --json --skip-git-repo-check -c sandbox_mode="workspace-write" 01a2-thread"#
    );
    assert_eq!(
        plan.prompt,
        PromptDelivery::ArgvAt(8),
        "the prompt follows the id"
    );
    let start = AgentSettings {
        session: Some(harness_kit::SessionRequest::Start("x".into())),
        ..Default::default()
    };
    assert!(Codex::plan(&start, &RunLimits::default()).is_err());
}

#[test]
fn a_replacing_prompt_and_a_thinking_level_go_in_the_config() {
    let settings = AgentSettings {
        system_prompt: Some("Only answer.".into()),
        system_prompt_mode: harness_kit::SystemPromptMode::Replace,
        thinking_level: Some("high".into()),
        ..Default::default()
    };
    let plan = Codex::plan(&settings, &RunLimits::default()).unwrap();
    let toml = &plan.files[0].content;
    assert!(
        toml.contains(r#"model_instructions_file = "{{home}}/.codex/coder-eval-instructions.md""#)
    );
    assert!(toml.contains(r#"model_reasoning_effort = "high""#));
    assert!(!toml.contains("developer_instructions"));
    assert_eq!(plan.files[1].path, ".codex/coder-eval-instructions.md");
    assert_eq!(plan.files[1].content, "Only answer.");
    let plugins = AgentSettings {
        plugin_dirs: vec!["/p".into()],
        ..Default::default()
    };
    let err = Codex::plan(&plugins, &RunLimits::default()).unwrap_err();
    assert!(err.contains("plugins"), "{err}");
}

#[test]
fn the_pinned_version_is_a_checked_one() {
    harness_kit::testing::assert_pin_checked::<Codex>("@openai/codex");
}
