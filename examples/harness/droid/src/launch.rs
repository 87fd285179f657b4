//! Launch plan and neutral-action translation for Droid 0.225.x.
//!
//! With a `model_base_url` the plan writes `~/.factory/settings.json` under the private
//! HOME with one BYOK model (`customModels[]`, provider `generic-chat-completion-api`:
//! `POST <base>/v1/chat/completions`), selected with `-m custom:<model>`; no Factory
//! account is needed. `FACTORY_AIRGAP_ENABLED=1` (with the dynamic-config and auto-update
//! switches) removes the 11 requests to `api.factory.ai` and `telemetry.factory.ai` a
//! default run makes (`tests/corpus/live/droid/probe_hello.requests.jsonl` of the
//! coder-eval repository).

use harness_kit::{
    AgentField, AgentSettings, Capabilities, ConfigFile, Harness, LaunchPlan, NeutralAction,
    PromptDelivery, RunLimits, ToolCall, TotalsScope,
};
use serde_json::json;

/// The Droid harness.
pub struct Droid;

/// The settings file, relative to the private HOME.
pub const SETTINGS_PATH: &str = ".factory/settings.json";

/// The model id used with a `model_base_url` when the task names none.
pub const DEFAULT_MODEL: &str = "mock-model";

/// `droid exec --auto` levels.
const AUTONOMY: [&str; 3] = ["low", "medium", "high"];

impl Harness for Droid {
    type Reducer = crate::DroidReducer;

    /// Checked against `droid exec --help` of 0.225.2: `-m`, `--auto <level>` (the
    /// permission mode; none = `--skip-permissions-unsafe`, without which `exec` is
    /// read-only) and `--append-system-prompt`. Sessions (`-s`) were not checked: no
    /// resume. The stream reports usage only in its final `completion`, and no cost.
    fn describe() -> Capabilities {
        use AgentField::*;
        Capabilities {
            agent_fields: vec![Model, PermissionMode, SystemPrompt],
            resume: false,
            reports_cost: false,
            usage_per_call: false,
        }
    }

    /// `completion.usage` sums this process's model calls.
    fn totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerProcess
    }

    fn plan(settings: &AgentSettings, _limits: &RunLimits) -> Result<LaunchPlan, String> {
        Self::describe().check(settings)?;
        if settings.session.is_some() {
            return Err("the Droid harness does not start or resume sessions".into());
        }
        let mut argv: Vec<String> = ["droid", "exec", "-o", "stream-json"]
            .map(String::from)
            .to_vec();
        let mut files = Vec::new();
        match (&settings.model_base_url, &settings.model) {
            (Some(url), model) => {
                let model = model.as_deref().unwrap_or(DEFAULT_MODEL);
                let settings_json = json!({"customModels": [{
                    "model": model,
                    "displayName": model,
                    "baseUrl": format!("{}/v1", url.trim_end_matches('/')),
                    "apiKey": settings.api_key.as_deref().unwrap_or("unused"),
                    "provider": "generic-chat-completion-api",
                    "maxOutputTokens": 8192,
                }]});
                files.push(ConfigFile {
                    path: SETTINGS_PATH.into(),
                    content: settings_json.to_string(),
                });
                argv.extend(["-m".into(), format!("custom:{model}")]);
            }
            (None, Some(model)) => argv.extend(["-m".into(), model.clone()]),
            (None, None) => {}
        }
        match settings.permission_mode.as_deref() {
            None => argv.push("--skip-permissions-unsafe".into()),
            Some(level) if AUTONOMY.contains(&level) => {
                argv.extend(["--auto".into(), level.into()]);
            }
            Some(level) => {
                return Err(format!(
                    "Droid's permission mode is its autonomy level, one of {AUTONOMY:?}; got \
                     `{level}`"
                ));
            }
        }
        if let Some(prompt) = &settings.system_prompt {
            argv.extend(["--append-system-prompt".into(), prompt.clone()]);
        }
        let prompt_at = argv.len() as u32;
        Ok(LaunchPlan {
            argv,
            env: [
                ("FACTORY_AIRGAP_ENABLED", "1"),
                ("FACTORY_DISABLE_DYNAMIC_CONFIG", "1"),
                ("FACTORY_DROID_AUTO_UPDATE_ENABLED", "false"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .to_vec(),
            files,
            // The prompt is `exec`'s last argument.
            prompt: PromptDelivery::ArgvAt(prompt_at),
            // Droid has no turn or tool-call cap in `exec`: the host enforces both.
            native_limits: Vec::new(),
            unsupported_limits: Vec::new(),
            side_files: Vec::new(),
            caveats: Vec::new(),
            // Droid documents no exit codes besides 0 and 1.
            exit_codes: Vec::new(),
        })
    }

    /// Droid's tools: `Create {file_path, content}`, `Execute {summary, command}` (a
    /// summary is required: 3–8 words, sentence case), `Read {file_path}`; paths absolute.
    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
        let (name, args) = match action {
            NeutralAction::WriteFile { path, content } => (
                "Create",
                json!({"file_path": harness_kit::workspace_path(path, workspace), "content": content}),
            ),
            NeutralAction::Shell { command } => (
                "Execute",
                json!({"summary": "Run a shell command here", "command": command}),
            ),
            NeutralAction::ReadFile { path } => (
                "Read",
                json!({"file_path": harness_kit::workspace_path(path, workspace)}),
            ),
        };
        ToolCall {
            name: name.to_string(),
            arguments_json: args.to_string(),
        }
    }
}
