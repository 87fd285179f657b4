//! Launch plan and neutral-action translation for OpenCode 1.18.x.
//!
//! OpenCode reads its configuration from the file named by `OPENCODE_CONFIG`; the plan
//! writes `opencode.json` under the task's private HOME with, when the task gives a
//! `model_base_url`, an `@ai-sdk/openai-compatible` provider named [`PROVIDER`] pointing at
//! `<model_base_url>/v1`. Every XDG folder points under HOME too, so nothing of the user's
//! own OpenCode state leaks in.

use harness_kit::{
    AgentField, AgentSettings, Capabilities, Caveat, ConfigFile, Harness, LaunchPlan,
    NeutralAction, PromptDelivery, RunLimits, SessionRequest, ToolCall, TotalsScope,
};
use serde_json::{Map, Value, json};

/// The OpenCode harness.
pub struct OpenCode;

/// The provider id the plan gives the task's `model_base_url` server in `opencode.json`.
pub const PROVIDER: &str = "mock";

/// The model id used with a `model_base_url` when the task names none.
pub const DEFAULT_MODEL: &str = "mock-model";

/// The config file, relative to the private HOME (`OPENCODE_CONFIG` points at it).
pub const CONFIG_PATH: &str = "opencode.json";

/// The file holding the task's `system_prompt`, relative to HOME; `opencode.json` lists it
/// in `instructions`, which OpenCode appends to its system prompt.
pub const INSTRUCTIONS_PATH: &str = ".coder-eval/opencode-instructions.md";

/// Permission values OpenCode 1.18 accepts for a tool family (`permission.edit`, ...).
const PERMISSIONS: [&str; 3] = ["allow", "ask", "deny"];

impl Harness for OpenCode {
    type Reducer = crate::OpenCodeReducer;

    /// Checked against `opencode run --help` of 1.18: `-m`, the config's permissions,
    /// tools and `instructions` (appended: no way to replace the system prompt), `--variant`,
    /// `--pure`, and `--session <id>` to continue a session (OpenCode names its sessions:
    /// none can be started with a chosen id). No thinking level (`--thinking` only shows
    /// thinking blocks), plugins, settings files, skills or sdk options. Each `step_finish`
    /// carries its step's tokens and `cost` in USD.
    fn describe() -> Capabilities {
        use AgentField::*;
        Capabilities {
            agent_fields: vec![
                Model,
                AllowedTools,
                DisallowedTools,
                PermissionMode,
                SystemPrompt,
                ModelVariant,
                Pure,
            ],
            resume: true,
            reports_cost: true,
            usage_per_call: true,
        }
    }

    /// Tokens and cost come per step (`step_finish`): the host sums them.
    fn totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerCall
    }

    fn plan(settings: &AgentSettings, limits: &RunLimits) -> Result<LaunchPlan, String> {
        Self::describe().check(settings)?;
        let mut argv: Vec<String> = ["opencode", "run", "--format", "json"]
            .map(String::from)
            .to_vec();
        match &settings.session {
            None => {}
            Some(SessionRequest::Resume(id)) => argv.extend(["--session".into(), id.clone()]),
            Some(SessionRequest::Start(_)) => {
                return Err(
                    "opencode names its own sessions: it cannot start one with a \
                            chosen id (start without one, then resume the `sessionID` its \
                            stream reported)"
                        .into(),
                );
            }
        }
        if let Some(variant) = &settings.model_variant {
            argv.extend(["--variant".into(), variant.clone()]);
        }
        if settings.pure {
            argv.push("--pure".into());
        }
        let mut config = Map::new();
        config.insert(
            "$schema".into(),
            Value::from("https://opencode.ai/config.json"),
        );

        let model_ref = match (&settings.model_base_url, &settings.model) {
            (Some(url), model) => {
                let id = model.as_deref().unwrap_or(DEFAULT_MODEL);
                let mut options = Map::new();
                options.insert(
                    "baseURL".into(),
                    format!("{}/v1", url.trim_end_matches('/')).into(),
                );
                if let Some(key) = &settings.api_key {
                    options.insert("apiKey".into(), key.clone().into());
                }
                config.insert(
                    "provider".into(),
                    json!({PROVIDER: {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "coder-eval model server",
                        "options": options,
                        "models": {id: {
                            "name": id,
                            "tool_call": true,
                            "limit": {"context": 128000, "output": 8192},
                        }},
                    }}),
                );
                Some(format!("{PROVIDER}/{id}"))
            }
            (None, Some(model)) if model.contains('/') => Some(model.clone()),
            (None, Some(model)) => {
                return Err(format!(
                    "OpenCode names models as `provider/model`; got `{model}`"
                ));
            }
            (None, None) => None,
        };
        if let Some(model_ref) = &model_ref {
            argv.extend(["-m".into(), model_ref.clone()]);
            // The title of the session is made by `small_model`: keep it on the same server.
            config.insert("model".into(), model_ref.clone().into());
            config.insert("small_model".into(), model_ref.clone().into());
        }
        config.insert("autoupdate".into(), false.into());
        config.insert("share".into(), "disabled".into());

        let permission = match settings.permission_mode.as_deref() {
            None => "allow",
            Some(mode) if PERMISSIONS.contains(&mode) => mode,
            Some(mode) => {
                return Err(format!(
                    "OpenCode permission mode must be one of {PERMISSIONS:?}; got `{mode}`"
                ));
            }
        };
        config.insert(
            "permission".into(),
            json!({"edit": permission, "bash": permission, "webfetch": permission}),
        );

        if !settings.allowed_tools.is_empty() || !settings.disallowed_tools.is_empty() {
            let mut tools = Map::new();
            if !settings.allowed_tools.is_empty() {
                tools.insert("*".into(), false.into());
                for tool in &settings.allowed_tools {
                    tools.insert(tool.clone(), true.into());
                }
            }
            for tool in &settings.disallowed_tools {
                tools.insert(tool.clone(), false.into());
            }
            config.insert("tools".into(), tools.into());
        }

        let mut files = Vec::new();
        if let Some(prompt) = &settings.system_prompt {
            files.push(ConfigFile {
                path: INSTRUCTIONS_PATH.into(),
                content: prompt.clone(),
            });
            config.insert(
                "instructions".into(),
                json!([format!("{{{{home}}}}/{INSTRUCTIONS_PATH}")]),
            );
        }

        if let Some(n) = limits.max_turns {
            // `steps` is advisory: from step `steps` on, OpenCode asks the model for a
            // text-only wrap-up (and still runs any tool it calls). `max_turns: N` must let
            // call N use tools, so the wrap-up request goes to call N+1, the call at whose
            // start the host's backstop (the real cap) ends the turn.
            config.insert(
                "agent".into(),
                json!({"build": {"steps": n.saturating_add(1)}}),
            );
        }

        files.insert(
            0,
            ConfigFile {
                path: CONFIG_PATH.into(),
                content: Value::Object(config).to_string(),
            },
        );

        let env = [
            ("OPENCODE_CONFIG", format!("{{{{home}}}}/{CONFIG_PATH}")),
            ("XDG_CONFIG_HOME", "{{home}}/.config".into()),
            ("XDG_DATA_HOME", "{{home}}/.local/share".into()),
            ("XDG_CACHE_HOME", "{{home}}/.cache".into()),
            ("XDG_STATE_HOME", "{{home}}/.local/state".into()),
            ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
            ("OPENCODE_DISABLE_SHARE", "1".into()),
            ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".into()),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .to_vec();

        let prompt_at = argv.len() as u32;
        Ok(LaunchPlan {
            argv,
            env,
            files,
            // The message is the last positional argument of `opencode run`.
            prompt: PromptDelivery::ArgvAt(prompt_at),
            // `steps` only asks the model to stop: the host's backstop is the cap.
            native_limits: Vec::new(),
            unsupported_limits: Vec::new(),
            side_files: Vec::new(),
            caveats: vec![
                // `opencode run --format json` prints a tool only once it has finished.
                Caveat::ToolStartFromCliDuration,
            ],
            // No documented exit codes beyond 0 and 1.
            exit_codes: Vec::new(),
        })
    }

    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
        let (name, args) = match action {
            NeutralAction::WriteFile { path, content } => (
                "write",
                json!({"filePath": harness_kit::workspace_path(path, workspace), "content": content}),
            ),
            NeutralAction::Shell { command } => (
                "bash",
                json!({"command": command, "description": format!("Run {command}")}),
            ),
            NeutralAction::ReadFile { path } => (
                "read",
                json!({"filePath": harness_kit::workspace_path(path, workspace)}),
            ),
        };
        ToolCall {
            name: name.to_string(),
            arguments_json: args.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_kit::LimitKind;

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
