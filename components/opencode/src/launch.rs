//! Launch plan and neutral-action translation for OpenCode 1.18.x: the OpenCode family's
//! ([`harness_kit::streams::opencode::launch`]) with OpenCode's names.
//!
//! OpenCode reads its configuration from the file named by `OPENCODE_CONFIG`; the plan
//! writes `opencode.json` under the task's private HOME with, when the task gives a
//! `model_base_url`, an `@ai-sdk/openai-compatible` provider named `mock` ([`launch::PROVIDER`]) pointing at
//! `<model_base_url>/v1`. Every XDG folder points under HOME too, so nothing of the user's
//! own OpenCode state leaks in.

use harness_kit::streams::opencode::launch::{self, Fork};
use harness_kit::{
    AgentSettings, Capabilities, Harness, LaunchPlan, NeutralAction, RunLimits, ToolCall,
    TotalsScope,
};

/// The OpenCode harness.
pub struct OpenCode;

/// The config file, relative to the private HOME (`OPENCODE_CONFIG` points at it).
pub const CONFIG_PATH: &str = "opencode.json";

/// The file holding the task's `system_prompt`, relative to HOME; `opencode.json` lists it
/// in `instructions`, which OpenCode appends to its system prompt.
pub const INSTRUCTIONS_PATH: &str = ".coder-eval/opencode-instructions.md";

/// OpenCode 1.18's names and opt-outs.
pub const FORK: Fork = Fork {
    program: "opencode",
    name: "OpenCode",
    schema: "https://opencode.ai/config.json",
    config_env: "OPENCODE_CONFIG",
    config_path: CONFIG_PATH,
    instructions_path: INSTRUCTIONS_PATH,
    env: &[
        ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
        ("OPENCODE_DISABLE_SHARE", "1"),
        ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"),
    ],
    disabled_providers: &[],
};

impl Harness for OpenCode {
    type Reducer = crate::OpenCodeReducer;

    /// The OpenCode versions this harness was checked against (2026-12-01): the
    /// recordings in `tests/corpus/live/opencode/` replay, and the live scenarios passed,
    /// on each. The stream names no version, so no `unchecked_cli_version` note can come
    /// from it: the run's `cli_version` (the CLI's `--version`) says which one ran.
    const CHECKED_VERSIONS: &'static [&'static str] = &["1.18.33"];

    /// Checked against `opencode run --help` of 1.18: `-m`, the config's permissions,
    /// tools and `instructions` (appended: no way to replace the system prompt), `--variant`,
    /// `--pure`, and `--session <id>` to continue a session (OpenCode names its sessions:
    /// none can be started with a chosen id). No thinking level (`--thinking` only shows
    /// thinking blocks), plugins, settings files, skills or sdk options. Each `step_finish`
    /// carries its step's tokens and `cost` in USD.
    fn describe() -> Capabilities {
        launch::capabilities()
    }

    /// Tokens and cost come per step (`step_finish`): the host sums them.
    fn totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerCall
    }

    fn plan(settings: &AgentSettings, limits: &RunLimits) -> Result<LaunchPlan, String> {
        Self::describe().check(settings)?;
        launch::plan(&FORK, settings, limits)
    }

    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
        launch::translate_action(action, workspace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_kit::{LimitKind, PromptDelivery};
    use serde_json::{Value, json};

    #[test]
    fn the_pinned_version_is_a_checked_one() {
        harness_kit::testing::assert_pin_checked::<OpenCode>("opencode-ai");
    }

    fn config_of(plan: &LaunchPlan) -> Value {
        let file = plan.files.iter().find(|f| f.path == CONFIG_PATH).unwrap();
        serde_json::from_str(&file.content).unwrap()
    }

    #[test]
    fn plan_with_model_server() {
        let settings = AgentSettings {
            model_base_url: Some("http://127.0.0.1:9/".into()),
            api_key: Some("sk-test".into()),
            ..Default::default()
        };
        let plan = OpenCode::plan(&settings, &RunLimits::default()).unwrap();
        assert_eq!(
            plan.argv.join(" "),
            "opencode run --format json -m mock/mock-model"
        );
        assert_eq!(plan.prompt, PromptDelivery::ArgvAt(6));
        let config = config_of(&plan);
        let provider = &config["provider"]["mock"];
        assert_eq!(provider["npm"], "@ai-sdk/openai-compatible");
        assert_eq!(provider["options"]["baseURL"], "http://127.0.0.1:9/v1");
        assert_eq!(provider["options"]["apiKey"], "sk-test");
        assert_eq!(provider["models"]["mock-model"]["tool_call"], true);
        assert_eq!(config["model"], "mock/mock-model");
        assert_eq!(config["small_model"], "mock/mock-model");
        assert_eq!(config["autoupdate"], false);
        assert_eq!(config["share"], "disabled");
        assert_eq!(config["permission"]["bash"], "allow");
        assert!(config.get("agent").is_none());
        for (key, value) in [
            ("OPENCODE_CONFIG", "{{home}}/opencode.json"),
            ("XDG_CONFIG_HOME", "{{home}}/.config"),
            ("XDG_DATA_HOME", "{{home}}/.local/share"),
            ("XDG_CACHE_HOME", "{{home}}/.cache"),
            ("XDG_STATE_HOME", "{{home}}/.local/state"),
            ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
            ("OPENCODE_DISABLE_SHARE", "1"),
            ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"),
        ] {
            assert!(
                plan.env.contains(&(key.into(), value.into())),
                "{key} missing"
            );
        }
        assert!(plan.native_limits.is_empty() && plan.unsupported_limits.is_empty());
    }

    #[test]
    fn max_turns_is_advisory_steps_not_native() {
        let settings = AgentSettings {
            model: Some("m1".into()),
            model_base_url: Some("http://h".into()),
            ..Default::default()
        };
        let limits = RunLimits {
            max_turns: Some(2),
            ..Default::default()
        };
        let plan = OpenCode::plan(&settings, &limits).unwrap();
        assert!(plan.argv.ends_with(&["-m".into(), "mock/m1".into()]));
        // Call 3 is the one the host's backstop stops: that is where the wrap-up request goes.
        assert_eq!(config_of(&plan)["agent"]["build"]["steps"], 3);
        assert!(!plan.native_limits.contains(&LimitKind::MaxTurns));
    }

    #[test]
    fn settings_map_to_config() {
        let settings = AgentSettings {
            model: Some("anthropic/claude-sonnet-4-5".into()),
            allowed_tools: vec!["bash".into(), "read".into()],
            disallowed_tools: vec!["webfetch".into()],
            permission_mode: Some("deny".into()),
            system_prompt: Some("Be brief.".into()),
            ..Default::default()
        };
        let plan = OpenCode::plan(&settings, &RunLimits::default()).unwrap();
        assert!(
            plan.argv
                .ends_with(&["-m".into(), "anthropic/claude-sonnet-4-5".into()])
        );
        let config = config_of(&plan);
        assert!(config.get("provider").is_none());
        assert_eq!(
            config["tools"],
            json!({"*": false, "bash": true, "read": true, "webfetch": false})
        );
        assert_eq!(config["permission"]["edit"], "deny");
        assert_eq!(
            config["instructions"],
            json!(["{{home}}/.coder-eval/opencode-instructions.md"])
        );
        assert!(
            plan.files
                .iter()
                .any(|f| f.path == INSTRUCTIONS_PATH && f.content == "Be brief.")
        );
    }

    #[test]
    fn bad_settings_are_rejected() {
        let bare_model = AgentSettings {
            model: Some("gpt-5".into()),
            ..Default::default()
        };
        assert!(OpenCode::plan(&bare_model, &RunLimits::default()).is_err());
        let claude_mode = AgentSettings {
            permission_mode: Some("acceptEdits".into()),
            ..Default::default()
        };
        let err = OpenCode::plan(&claude_mode, &RunLimits::default()).unwrap_err();
        assert!(err.contains("acceptEdits"), "{err}");
    }

    #[test]
    fn neutral_actions() {
        let call = OpenCode::translate_action(
            &NeutralAction::WriteFile {
                path: "hello.txt".into(),
                content: "x".into(),
            },
            "/w/",
        );
        assert_eq!(call.name, "write");
        assert_eq!(
            call.arguments_json,
            r#"{"filePath":"/w/hello.txt","content":"x"}"#
        );
        let call = OpenCode::translate_action(
            &NeutralAction::Shell {
                command: "date".into(),
            },
            "/w",
        );
        assert_eq!(call.name, "bash");
        assert_eq!(
            call.arguments_json,
            r#"{"command":"date","description":"Run date"}"#
        );
        let call = OpenCode::translate_action(
            &NeutralAction::ReadFile {
                path: "/etc/hosts".into(),
            },
            "/w",
        );
        assert_eq!(call.name, "read");
        assert_eq!(call.arguments_json, r#"{"filePath":"/etc/hosts"}"#);
    }

    #[test]
    fn variant_pure_and_resume_reach_the_command_line() {
        let settings = AgentSettings {
            model_variant: Some("high".into()),
            pure: true,
            session: Some(harness_kit::SessionRequest::Resume("ses_abc".into())),
            ..Default::default()
        };
        let plan = OpenCode::plan(&settings, &RunLimits::default()).unwrap();
        assert_eq!(
            plan.argv.join(" "),
            "opencode run --format json --session ses_abc --variant high --pure"
        );
        let start = AgentSettings {
            session: Some(harness_kit::SessionRequest::Start("ses_x".into())),
            ..Default::default()
        };
        assert!(OpenCode::plan(&start, &RunLimits::default()).is_err());
        let replace = AgentSettings {
            system_prompt: Some("x".into()),
            system_prompt_mode: harness_kit::SystemPromptMode::Replace,
            ..Default::default()
        };
        let err = OpenCode::plan(&replace, &RunLimits::default()).unwrap_err();
        assert!(err.contains("system-prompt-replace"), "{err}");
    }
}
