//! Launch plan and neutral-action translation for Qwen Code 0.24.x.
//!
//! The plan writes `.qwen/settings.json` under the task's private HOME and gives the model
//! server through the environment (`--auth-type openai` with `OPENAI_BASE_URL`,
//! `OPENAI_API_KEY`, `OPENAI_MODEL`). The settings turn off, besides telemetry and the
//! update check:
//!
//! - `memory.enableManagedAutoMemory` (and `enableManagedAutoDream`): **required**. By
//!   default, after the answer, Qwen Code sends one more request *with tools*, the
//!   "managed memory extraction" sub-agent, carrying the whole conversation: a model (the
//!   scripted one included) answers it as the next main turn, and a tool call in that
//!   answer would run in the workspace after the agent finished;
//! - `privacy.usageStatisticsEnabled`: otherwise it reports to an Aliyun RUM endpoint
//!   (2 requests a run, `shared/corpus/live/qwen/probe_hello.requests.jsonl`).

use harness_kit::{
    AgentField, AgentSettings, Capabilities, Caveat, ConfigFile, ExitCode, Harness, LaunchPlan,
    NeutralAction, PromptDelivery, RunLimits, SystemPromptMode, ToolCall, TotalsScope,
};
use serde_json::json;

/// The Qwen Code harness.
pub struct QwenCode;

/// The model asked for when the task names none.
pub const DEFAULT_MODEL: &str = "qwen3-coder-plus";

/// The settings file, relative to the private HOME.
pub const SETTINGS_PATH: &str = ".qwen/settings.json";

/// Qwen Code 0.24's `--approval-mode` values.
const APPROVAL_MODES: [&str; 5] = ["plan", "default", "auto-edit", "auto", "yolo"];

/// Qwen Code 0.24's fatal exit codes (its `Fatal*Error` classes, inherited from Gemini CLI,
/// and the run budgets of `--max-wall-time` / `--max-tool-calls`).
const EXIT_CODES: [(i32, &str, &str); 6] = [
    (42, "input_error", "the prompt or arguments were invalid"),
    (44, "sandbox_error", "the sandbox could not be set up"),
    (
        52,
        "config_error",
        "the configuration (settings.json) is invalid",
    ),
    (53, "turn_limit", "the session's turn limit was reached"),
    (
        55,
        "budget_exceeded",
        "a run budget (--max-wall-time, --max-tool-calls) was exceeded",
    ),
    (130, "cancelled", "cancelled (SIGINT)"),
];

impl Harness for QwenCode {
    type Reducer = crate::QwenReducer;

    /// Checked against `qwen --help` of 0.24.4: `-m`, `--core-tools` / `--exclude-tools`,
    /// `--approval-mode`, `--system-prompt` (replace) and `--append-system-prompt`. Sessions
    /// (`--session-id`, `--resume`) exist but were not checked here: no resume. The stream
    /// reports usage per model call (`assistant.message.usage`) and no cost.
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
            resume: false,
            reports_cost: false,
            usage_per_call: true,
        }
    }

    /// Each `assistant` line's usage is its own call's; `result.usage` sums the process's
    /// calls (its session metrics start at zero in each process).
    fn totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerProcess
    }

    fn plan(settings: &AgentSettings, _limits: &RunLimits) -> Result<LaunchPlan, String> {
        Self::describe().check(settings)?;
        if settings.session.is_some() {
            return Err(
                "the Qwen Code harness does not start or resume sessions (its \
                        `--session-id` and `--resume` were not checked)"
                    .into(),
            );
        }
        let model = settings
            .model
            .clone()
            .unwrap_or_else(|| DEFAULT_MODEL.into());
        // The prompt is the first positional argument (`-p` is deprecated in 0.24); it
        // comes before the array flags, which would take it as one more element.
        let mut argv: Vec<String> = ["qwen", "-o", "stream-json", "--auth-type", "openai", "-m"]
            .map(String::from)
            .to_vec();
        argv.push(model.clone());
        match settings.permission_mode.as_deref() {
            None => argv.push("--yolo".into()),
            Some(mode) if APPROVAL_MODES.contains(&mode) => {
                argv.extend(["--approval-mode".into(), mode.into()]);
            }
            Some(mode) => {
                return Err(format!(
                    "Qwen Code approval mode must be one of {APPROVAL_MODES:?}; got `{mode}`"
                ));
            }
        }
        for tool in &settings.allowed_tools {
            argv.extend(["--core-tools".into(), tool.clone()]);
        }
        for tool in &settings.disallowed_tools {
            argv.extend(["--exclude-tools".into(), tool.clone()]);
        }
        if let Some(prompt) = &settings.system_prompt {
            let flag = match settings.system_prompt_mode {
                SystemPromptMode::Append => "--append-system-prompt",
                SystemPromptMode::Replace => "--system-prompt",
            };
            argv.extend([flag.into(), prompt.clone()]);
        }
        let config = json!({
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
            "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
        });
        let mut env = vec![
            ("OPENAI_MODEL".to_string(), model),
            (
                "QWEN_CODE_SUPPRESS_YOLO_WARNING".to_string(),
                "1".to_string(),
            ),
        ];
        if let Some(key) = &settings.api_key {
            env.push(("OPENAI_API_KEY".into(), key.clone()));
        }
        if let Some(url) = &settings.model_base_url {
            env.push((
                "OPENAI_BASE_URL".into(),
                format!("{}/v1", url.trim_end_matches('/')),
            ));
        }
        Ok(LaunchPlan {
            argv,
            env,
            files: vec![ConfigFile {
                path: SETTINGS_PATH.into(),
                content: config.to_string(),
            }],
            prompt: PromptDelivery::ArgvAt(1),
            // `--max-session-turns` and `--max-tool-calls` exist, but how the stream ends on
            // them was not checked: the host enforces both.
            native_limits: Vec::new(),
            unsupported_limits: Vec::new(),
            side_files: Vec::new(),
            // Qwen Code's shell tool refuses `sleep N && …` (N >= 2) as "Blocked: …"
            // before running it (its validator; no setting turns it off).
            caveats: vec![Caveat::BlockingShellRefused],
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

    /// Qwen Code's tools, as Gemini CLI's: `write_file {file_path, content}`,
    /// `run_shell_command {command}`, `read_file {file_path}`; paths absolute.
    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
        let (name, args) = match action {
            NeutralAction::WriteFile { path, content } => (
                "write_file",
                json!({"file_path": harness_kit::workspace_path(path, workspace), "content": content}),
            ),
            NeutralAction::Shell { command } => ("run_shell_command", json!({"command": command})),
            NeutralAction::ReadFile { path } => (
                "read_file",
                json!({"file_path": harness_kit::workspace_path(path, workspace)}),
            ),
        };
        ToolCall {
            name: name.to_string(),
            arguments_json: args.to_string(),
        }
    }
}
