//! Launch plan and neutral-action translation for the GitHub Copilot CLI 1.0.x.
//!
//! No config file: everything is in the environment (`copilot help environment`).
//! `COPILOT_PROVIDER_BASE_URL` (`<model_base_url>/v1`), `COPILOT_PROVIDER_TYPE=openai`
//! (Chat Completions) and `COPILOT_PROVIDER_API_KEY` select a BYOK provider, so no GitHub
//! login is needed; `COPILOT_OFFLINE=true` turns off auth, telemetry, web tools, the GitHub
//! MCP server and auto-update (no phone-home: 0 requests off loopback in the recordings,
//! 2 to `api.github.com` without it). Offline mode requires a provider: the plan refuses a
//! task without `model_base_url`.
//!
//! Tokens come only from `--usage-output-file`, named as the plan's side file
//! [`USAGE_FILE`].
//!
//! The npm package's native binary unpacks its own JavaScript bundle (235 MB, 1.0.102) on
//! its first start into `$XDG_CACHE_HOME/copilot/pkg`, i.e. into the private HOME, which
//! the host keeps in the result folder: 235 MB per task. [`PKG_CACHE`] points it at the
//! task's temporary folder instead, which the host removes when the task ends.

use harness_kit::{
    AgentField, AgentSettings, Capabilities, Harness, LaunchPlan, NeutralAction, PromptDelivery,
    RunLimits, ToolCall, TotalsScope,
};
use serde_json::json;

/// The Copilot CLI harness.
pub struct Copilot;

/// The model id used with a `model_base_url` when the task names none.
pub const DEFAULT_MODEL: &str = "mock-model";

/// Where `--usage-output-file` writes the run's token usage (JSON), under the private
/// HOME; the plan's only side file.
pub const USAGE_FILE: &str = "{{home}}/copilot-usage.json";

/// Where the binary unpacks its bundle (`COPILOT_PKG_CACHE_HOME`): the task's temporary
/// folder, `.tmp` in the private HOME (the host's `TMPDIR`, removed with the task). Each
/// task pays the unpacking (about 1.5–4 s here) but keeps nothing of it.
pub const PKG_CACHE: &str = "{{home}}/.tmp/copilot";

/// `--reasoning-effort` levels of 1.0.102.
const EFFORT: [&str; 7] = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

impl Harness for Copilot {
    type Reducer = crate::CopilotReducer;

    /// Checked against `copilot --help` of 1.0.102: `--model` (here `COPILOT_MODEL`),
    /// `--reasoning-effort <level>`. No flag sets or appends a system prompt. Sessions
    /// (`--resume`, `--session-id`) were not checked: no resume. No cost in USD (only
    /// premium requests); usage only as the run's totals, in the side file.
    fn describe() -> Capabilities {
        use AgentField::*;
        Capabilities {
            agent_fields: vec![Model, ThinkingLevel],
            resume: false,
            reports_cost: false,
            usage_per_call: false,
        }
    }

    /// The usage file holds the totals of the one process.
    fn totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerProcess
    }

    fn plan(settings: &AgentSettings, _limits: &RunLimits) -> Result<LaunchPlan, String> {
        Self::describe().check(settings)?;
        if settings.session.is_some() {
            return Err("the Copilot harness does not start or resume sessions".into());
        }
        let Some(url) = &settings.model_base_url else {
            return Err(
                "the Copilot harness runs offline (COPILOT_OFFLINE=true, no GitHub \
                 login) and needs a model_base_url for its BYOK provider"
                    .into(),
            );
        };
        let model = settings.model.as_deref().unwrap_or(DEFAULT_MODEL);
        let mut argv: Vec<String> = vec!["copilot".into(), "-p".into()];
        let prompt_at = argv.len() as u32;
        argv.extend(
            [
                "--output-format",
                "json",
                "--allow-all",
                "--no-auto-update",
                "--no-ask-user",
                "--disable-client-telemetry",
                "--usage-output-file",
                USAGE_FILE,
            ]
            .map(String::from),
        );
        if let Some(level) = &settings.thinking_level {
            if !EFFORT.contains(&level.as_str()) {
                return Err(format!(
                    "Copilot's reasoning effort must be one of {EFFORT:?}; got `{level}`"
                ));
            }
            argv.extend(["--reasoning-effort".into(), level.clone()]);
        }
        let env = [
            ("COPILOT_HOME", "{{home}}/.copilot".to_string()),
            (
                "COPILOT_PROVIDER_BASE_URL",
                format!("{}/v1", url.trim_end_matches('/')),
            ),
            ("COPILOT_PROVIDER_TYPE", "openai".into()),
            (
                "COPILOT_PROVIDER_API_KEY",
                settings.api_key.clone().unwrap_or_else(|| "unused".into()),
            ),
            ("COPILOT_MODEL", model.to_string()),
            ("COPILOT_OFFLINE", "true".into()),
            ("COPILOT_AUTO_UPDATE", "false".into()),
            ("COPILOT_PKG_CACHE_HOME", PKG_CACHE.into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        Ok(LaunchPlan {
            argv,
            env,
            files: Vec::new(),
            prompt: PromptDelivery::ArgvAt(prompt_at),
            // No turn or tool-call cap in `-p` mode (`--max-autopilot-continues` is for
            // autopilot only): the host enforces them.
            native_limits: Vec::new(),
            unsupported_limits: Vec::new(),
            side_files: vec![USAGE_FILE.to_string()],
            caveats: Vec::new(),
            exit_codes: Vec::new(),
        })
    }

    /// Copilot's tools: `create {path, file_text}` (the file must not exist yet),
    /// `bash {command, description}`, `view {path}`; paths absolute.
    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
        let (name, args) = match action {
            NeutralAction::WriteFile { path, content } => (
                "create",
                json!({"path": harness_kit::workspace_path(path, workspace), "file_text": content}),
            ),
            NeutralAction::Shell { command } => (
                "bash",
                json!({"command": command, "description": "Run a shell command"}),
            ),
            NeutralAction::ReadFile { path } => (
                "view",
                json!({"path": harness_kit::workspace_path(path, workspace)}),
            ),
        };
        ToolCall {
            name: name.to_string(),
            arguments_json: args.to_string(),
        }
    }
}
