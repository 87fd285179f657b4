//! Launch plan and neutral-action translation for Gemini CLI 0.61.x.
//!
//! The plan writes `.gemini/settings.json` under the task's private HOME. Its
//! `security.auth.selectedType = "gemini-api-key"` is required: `GOOGLE_GEMINI_BASE_URL` on
//! its own switches the auth type to `gateway`, which headless mode refuses ("Invalid auth
//! method selected.", exit 41).

use harness_kit::{
    AgentField, AgentSettings, Capabilities, Caveat, ConfigFile, ExitCode, Harness, LaunchPlan,
    LimitKind, NeutralAction, PromptDelivery, RunLimits, SessionRequest, SystemPromptMode,
    ToolCall, TotalsScope,
};
use serde_json::{Map, Value, json};

/// The Gemini CLI harness.
pub struct GeminiCli;

/// The model asked for when the task names none.
pub const DEFAULT_MODEL: &str = "gemini-2.5-flash";

/// The settings file, relative to the private HOME.
pub const SETTINGS_PATH: &str = ".gemini/settings.json";

/// The global context file, relative to HOME: Gemini CLI adds it to its system instruction,
/// so the task's `system_prompt` goes there.
pub const CONTEXT_PATH: &str = ".gemini/GEMINI.md";

/// The file that replaces Gemini CLI's system prompt (`GEMINI_SYSTEM_MD` points at it),
/// relative to HOME.
pub const SYSTEM_MD_PATH: &str = ".gemini/coder-eval-system.md";

/// Gemini CLI 0.61's fatal exit codes (its `Fatal*Error` classes): headless mode often
/// prints nothing on stdout for these, only the exit code and a line on stderr (B33).
const EXIT_CODES: [(i32, &str, &str); 8] = [
    (41, "auth_error", "authentication failed"),
    (42, "input_error", "the prompt or arguments were invalid"),
    (44, "sandbox_error", "the sandbox could not be set up"),
    (
        52,
        "config_error",
        "the configuration (settings.json) is invalid",
    ),
    (53, "turn_limit", "the session's turn limit was reached"),
    (54, "tool_error", "a tool failed fatally"),
    (
        55,
        "untrusted_workspace",
        "the workspace folder is not trusted",
    ),
    (130, "cancelled", "cancelled (SIGINT)"),
];

/// Gemini CLI's `--approval-mode` values.
const APPROVAL_MODES: [&str; 4] = ["default", "auto_edit", "yolo", "plan"];

impl Harness for GeminiCli {
    type Reducer = crate::GeminiReducer;

    /// The Gemini CLI versions this harness was checked against (2026-12-01): the
    /// recordings in `tests/corpus/live/gemini/` replay, and the live scenarios passed, on
    /// each. The stream names no version, so no `unchecked_cli_version` note can come from
    /// it: the run's `cli_version` (the CLI's `--version`) says which one ran.
    const CHECKED_VERSIONS: &'static [&'static str] = &["0.61.0"];

    /// Checked against `gemini --help` and the bundle of 0.61.0: `-m`, `--approval-mode`,
    /// the settings' `tools.core` / `tools.exclude`, the system prompt appended (the global
    /// `GEMINI.md`) or replaced (`GEMINI_SYSTEM_MD`), and `--session-id <uuid>` /
    /// `--resume <uuid>`. No thinking level, plugins, skills folders the plan could hand
    /// over, settings files or sdk options. The stream reports usage only in its final
    /// `result.stats`, and no cost.
    fn describe() -> Capabilities {
        use AgentField::*;
        Capabilities {
            agent_fields: vec![
                Model,
                AllowedTools,
                DisallowedTools,
                PermissionMode,
                SystemPrompt,
                SystemPromptReplace,
            ],
            resume: true,
            reports_cost: false,
            usage_per_call: false,
        }
    }

    /// `result.stats` counts the process's own model calls (its telemetry counters start
    /// at zero in each process): per process.
    fn totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerProcess
    }

    fn plan(settings: &AgentSettings, limits: &RunLimits) -> Result<LaunchPlan, String> {
        Self::describe().check(settings)?;
        let mut argv: Vec<String> = ["gemini", "-p", "--output-format", "stream-json"]
            .map(String::from)
            .to_vec();
        match settings.permission_mode.as_deref() {
            None => argv.push("--yolo".into()),
            Some(mode) if APPROVAL_MODES.contains(&mode) => {
                argv.extend(["--approval-mode".into(), mode.into()]);
            }
            Some(mode) => {
                return Err(format!(
                    "Gemini CLI approval mode must be one of {APPROVAL_MODES:?}; got `{mode}`"
                ));
            }
        }
        argv.extend([
            "-m".into(),
            settings
                .model
                .clone()
                .unwrap_or_else(|| DEFAULT_MODEL.into()),
        ]);

        let mut config = Map::new();
        config.insert(
            "security".into(),
            json!({"auth": {"selectedType": "gemini-api-key"}}),
        );
        config.insert("privacy".into(), json!({"usageStatisticsEnabled": false}));
        config.insert("telemetry".into(), json!({"enabled": false}));
        config.insert(
            "general".into(),
            json!({"disableAutoUpdate": true, "disableUpdateNag": true}),
        );
        let mut native_limits = Vec::new();
        if let Some(n) = limits.max_turns {
            // Gemini CLI refuses model call N+1 itself (exit 53); the host keeps its backstop.
            config.insert("model".into(), json!({"maxSessionTurns": n}));
            native_limits.push(LimitKind::MaxTurns);
        }
        if !settings.allowed_tools.is_empty() || !settings.disallowed_tools.is_empty() {
            let mut tools = Map::new();
            if !settings.allowed_tools.is_empty() {
                tools.insert("core".into(), json!(settings.allowed_tools));
            }
            if !settings.disallowed_tools.is_empty() {
                tools.insert("exclude".into(), json!(settings.disallowed_tools));
            }
            config.insert("tools".into(), tools.into());
        }
        let mut files = vec![ConfigFile {
            path: SETTINGS_PATH.into(),
            content: Value::Object(config).to_string(),
        }];
        let mut env = vec![("GEMINI_CLI_TRUST_WORKSPACE".to_string(), "true".to_string())];
        match (&settings.system_prompt, settings.system_prompt_mode) {
            (None, _) => {}
            (Some(prompt), SystemPromptMode::Append) => files.push(ConfigFile {
                path: CONTEXT_PATH.into(),
                content: prompt.clone(),
            }),
            (Some(prompt), SystemPromptMode::Replace) => {
                files.push(ConfigFile {
                    path: SYSTEM_MD_PATH.into(),
                    content: prompt.clone(),
                });
                env.push((
                    "GEMINI_SYSTEM_MD".into(),
                    format!("{{{{home}}}}/{SYSTEM_MD_PATH}"),
                ));
            }
        }
        match &settings.session {
            None => {}
            Some(SessionRequest::Start(id)) => argv.extend(["--session-id".into(), id.clone()]),
            Some(SessionRequest::Resume(id)) => argv.extend(["--resume".into(), id.clone()]),
        }
        if let Some(key) = &settings.api_key {
            env.push(("GEMINI_API_KEY".into(), key.clone()));
        }
        if let Some(url) = &settings.model_base_url {
            env.push(("GOOGLE_GEMINI_BASE_URL".into(), url.clone()));
        }
        Ok(LaunchPlan {
            argv,
            env,
            files,
            // `-p` is at index 1; the prompt follows it.
            prompt: PromptDelivery::ArgvAt(2),
            native_limits,
            unsupported_limits: Vec::new(),
            side_files: Vec::new(),
            caveats: vec![
                // Gemini CLI 0.61 reports a failing shell command that printed output as
                // `status: "success"`, with no exit code in the stream.
                Caveat::ShellFailuresUnreported,
            ],
            exit_codes: EXIT_CODES
                .iter()
                .map(|&(code, kind, meaning)| ExitCode {
                    code,
                    kind: kind.into(),
                    meaning: meaning.into(),
                })
                .collect(),
        })
    }

    /// Paths are passed as given: Gemini CLI 0.61 resolves a relative path against its
    /// working directory (the workspace) and refuses one outside it.
    fn translate_action(action: &NeutralAction, _workspace: &str) -> ToolCall {
        let (name, args) = match action {
            NeutralAction::WriteFile { path, content } => {
                ("write_file", json!({"file_path": path, "content": content}))
            }
            NeutralAction::Shell { command } => ("run_shell_command", json!({"command": command})),
            // 0.61's `read_file` takes `file_path` (older versions: `absolute_path`).
            NeutralAction::ReadFile { path } => ("read_file", json!({"file_path": path})),
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

    #[test]
    fn the_pinned_version_is_a_checked_one() {
        harness_kit::testing::assert_pin_checked::<GeminiCli>("@google/gemini-cli");
    }

    fn settings_of(plan: &LaunchPlan) -> Value {
        let file = plan.files.iter().find(|f| f.path == SETTINGS_PATH).unwrap();
        serde_json::from_str(&file.content).unwrap()
    }

    #[test]
    fn plan_with_model_server_and_native_turn_cap() {
        let settings = AgentSettings {
            model_base_url: Some("http://127.0.0.1:9".into()),
            api_key: Some("sk-test".into()),
            ..Default::default()
        };
        let limits = RunLimits {
            max_turns: Some(2),
            ..Default::default()
        };
        let plan = GeminiCli::plan(&settings, &limits).unwrap();
        assert_eq!(
            plan.argv.join(" "),
            "gemini -p --output-format stream-json --yolo -m gemini-2.5-flash"
        );
        assert_eq!(plan.prompt, PromptDelivery::ArgvAt(2));
        assert_eq!(plan.native_limits, vec![LimitKind::MaxTurns]);
        let config = settings_of(&plan);
        assert_eq!(config["security"]["auth"]["selectedType"], "gemini-api-key");
        assert_eq!(config["privacy"]["usageStatisticsEnabled"], false);
        assert_eq!(config["telemetry"]["enabled"], false);
        assert_eq!(config["general"]["disableAutoUpdate"], true);
        assert_eq!(config["model"]["maxSessionTurns"], 2);
        for (key, value) in [
            ("GEMINI_API_KEY", "sk-test"),
            ("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9"),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
        ] {
            assert!(
                plan.env.contains(&(key.into(), value.into())),
                "{key} missing"
            );
        }
    }

    #[test]
    fn no_cap_no_native_limit() {
        let plan = GeminiCli::plan(&AgentSettings::default(), &RunLimits::default()).unwrap();
        assert!(plan.native_limits.is_empty());
        assert!(settings_of(&plan).get("model").is_none());
    }

    #[test]
    fn settings_map_to_flags_and_files() {
        let settings = AgentSettings {
            model: Some("gemini-2.5-pro".into()),
            allowed_tools: vec!["run_shell_command".into()],
            disallowed_tools: vec!["web_fetch".into()],
            permission_mode: Some("auto_edit".into()),
            system_prompt: Some("Be brief.".into()),
            ..Default::default()
        };
        let plan = GeminiCli::plan(&settings, &RunLimits::default()).unwrap();
        let argv = plan.argv.join(" ");
        assert!(argv.contains("--approval-mode auto_edit") && !argv.contains("--yolo"));
        assert!(argv.ends_with("-m gemini-2.5-pro"));
        let config = settings_of(&plan);
        assert_eq!(
            config["tools"],
            json!({"core": ["run_shell_command"], "exclude": ["web_fetch"]})
        );
        assert!(
            plan.files
                .iter()
                .any(|f| f.path == CONTEXT_PATH && f.content == "Be brief.")
        );
        let bad = AgentSettings {
            permission_mode: Some("bypassPermissions".into()),
            ..Default::default()
        };
        assert!(GeminiCli::plan(&bad, &RunLimits::default()).is_err());
    }

    #[test]
    fn neutral_actions() {
        let call = GeminiCli::translate_action(
            &NeutralAction::WriteFile {
                path: "hello.txt".into(),
                content: "x".into(),
            },
            "/w",
        );
        assert_eq!(call.name, "write_file");
        assert_eq!(
            call.arguments_json,
            r#"{"file_path":"hello.txt","content":"x"}"#
        );
        let call = GeminiCli::translate_action(
            &NeutralAction::Shell {
                command: "date".into(),
            },
            "/w",
        );
        assert_eq!(call.name, "run_shell_command");
        assert_eq!(call.arguments_json, r#"{"command":"date"}"#);
        let call = GeminiCli::translate_action(
            &NeutralAction::ReadFile {
                path: "a.txt".into(),
            },
            "/w",
        );
        assert_eq!(call.name, "read_file");
        assert_eq!(call.arguments_json, r#"{"file_path":"a.txt"}"#);
    }

    #[test]
    fn a_replacing_prompt_and_sessions() {
        let settings = AgentSettings {
            system_prompt: Some("Only this.".into()),
            system_prompt_mode: harness_kit::SystemPromptMode::Replace,
            session: Some(harness_kit::SessionRequest::Start("3f1c".into())),
            ..Default::default()
        };
        let plan = GeminiCli::plan(&settings, &RunLimits::default()).unwrap();
        assert!(plan.argv.join(" ").ends_with("--session-id 3f1c"));
        assert!(plan.env.contains(&(
            "GEMINI_SYSTEM_MD".into(),
            "{{home}}/.gemini/coder-eval-system.md".into()
        )));
        assert!(
            plan.files
                .iter()
                .any(|f| f.path == SYSTEM_MD_PATH && f.content == "Only this.")
        );
        assert!(!plan.files.iter().any(|f| f.path == CONTEXT_PATH));
        let resume = AgentSettings {
            session: Some(harness_kit::SessionRequest::Resume("3f1c".into())),
            ..Default::default()
        };
        let plan = GeminiCli::plan(&resume, &RunLimits::default()).unwrap();
        assert!(plan.argv.join(" ").ends_with("--resume 3f1c"));
    }
}
