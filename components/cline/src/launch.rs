//! Launch plan and neutral-action translation for Cline 3.0.x.
//!
//! The plan writes what `cline auth -p openai -k KEY -m MODEL -b BASEURL` would, directly:
//! `~/.cline/data/settings/providers.json` with one `openai-compatible` provider at
//! `<model_base_url>/v1` (its `updatedAt` is required: without it Cline 3.0.65 drops the
//! entry and uses its own `cline` provider), and `global-settings.json` with telemetry
//! and auto-update off.
//! `CLINE_SESSION_BACKEND_MODE=local` is **required**: with the default (`auto`) every
//! run starts a hub daemon (`cline --cline-hub-daemon … --port 25463`) that outlives the
//! CLI; `local` runs the session in the CLI's own process and the stream is the same.
//!
//! Phone-home left: one request for PostHog feature flags (`data.cline.bot`), which no
//! setting turns off; it does not block the run (a network-isolated run refuses it).
//!
//! **The prompt must hold whitespace** (checked in 3.0.65's bundle and live): the prompt is
//! only ever its argv operands, and a run with a prompt (`--json` needs one) refuses
//! anything but one operand with whitespace in it: `cline --json go` exits 1 with
//! "Unknown command or unquoted prompt: go", and `cline --json version` prints the
//! version (a subcommand). `--` does not help (the same check), nor stdin: in `--json`
//! mode Cline never reads it ("JSON output mode requires a prompt argument or piped
//! stdin", piped or not). A one-word prompt cannot reach Cline as a prompt through this
//! plan; the host would have to change the text (e.g. a trailing newline).

use harness_kit::{
    AgentField, AgentSettings, Capabilities, ConfigFile, Harness, LaunchPlan, NeutralAction,
    PromptDelivery, RunLimits, SystemPromptMode, ToolCall, TotalsScope,
};
use serde_json::json;

/// The Cline harness.
pub struct Cline;

/// The model id used with a `model_base_url` when the task names none.
pub const DEFAULT_MODEL: &str = "mock-model";

/// The provider settings, relative to the private HOME.
pub const PROVIDERS_PATH: &str = ".cline/data/settings/providers.json";

/// The global settings, relative to the private HOME.
pub const GLOBAL_SETTINGS_PATH: &str = ".cline/data/settings/global-settings.json";

/// `--thinking` levels of 3.0.65.
const THINKING: [&str; 5] = ["none", "low", "medium", "high", "xhigh"];

impl Harness for Cline {
    type Reducer = crate::ClineReducer;

    /// Checked against `cline --help` of 3.0.65: `-m`, `-s` (replaces the system prompt;
    /// nothing appends), `--thinking <level>`. Sessions (`--id`) were not checked: no
    /// resume. Each request's usage comes in a `usage` event, and the run's cost in USD in
    /// `run_result` (0 for a model without a known price, as against the scripted model).
    fn describe() -> Capabilities {
        use AgentField::*;
        Capabilities {
            agent_fields: vec![Model, SystemPrompt, SystemPromptReplace, ThinkingLevel],
            resume: false,
            reports_cost: true,
            usage_per_call: true,
        }
    }

    /// `usage` events carry each request's tokens: the host sums them.
    fn totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerCall
    }

    fn plan(settings: &AgentSettings, _limits: &RunLimits) -> Result<LaunchPlan, String> {
        Self::describe().check(settings)?;
        if settings.session.is_some() {
            return Err("the Cline harness does not start or resume sessions".into());
        }
        let mut argv: Vec<String> = vec!["cline".into(), "--json".into()];
        let mut files = vec![ConfigFile {
            path: GLOBAL_SETTINGS_PATH.into(),
            content: json!({"telemetryOptOut": true, "autoUpdateEnabled": false}).to_string(),
        }];
        if let Some(url) = &settings.model_base_url {
            let model = settings.model.as_deref().unwrap_or(DEFAULT_MODEL);
            let providers = json!({
                "version": 1,
                "lastUsedProvider": "openai-compatible",
                "modes": {},
                "providers": {"openai-compatible": {
                    "settings": {
                        "provider": "openai-compatible",
                        "apiKey": settings.api_key.as_deref().unwrap_or("unused"),
                        "model": model,
                        "baseUrl": format!("{}/v1", url.trim_end_matches('/')),
                    },
                    // Required: an entry without it is dropped, and Cline falls back to
                    // its own `cline` provider (its servers; refused offline).
                    "updatedAt": "2026-01-01T00:00:00.000Z",
                    "tokenSource": "manual",
                }},
            });
            files.push(ConfigFile {
                path: PROVIDERS_PATH.into(),
                content: providers.to_string(),
            });
        } else if let Some(model) = &settings.model {
            argv.extend(["-m".into(), model.clone()]);
        }
        match (&settings.system_prompt, settings.system_prompt_mode) {
            (None, _) => {}
            (Some(prompt), SystemPromptMode::Replace) => {
                argv.extend(["-s".into(), prompt.clone()]);
            }
            (Some(_), SystemPromptMode::Append) => {
                return Err("Cline can only replace its system prompt (`-s`): set \
                     system_prompt_mode: replace"
                    .into());
            }
        }
        if let Some(level) = &settings.thinking_level {
            if !THINKING.contains(&level.as_str()) {
                return Err(format!(
                    "Cline's thinking level must be one of {THINKING:?}; got `{level}`"
                ));
            }
            argv.extend(["--thinking".into(), level.clone()]);
        }
        let prompt_at = argv.len() as u32;
        Ok(LaunchPlan {
            argv,
            env: vec![(
                "CLINE_SESSION_BACKEND_MODE".to_string(),
                "local".to_string(),
            )],
            files,
            prompt: PromptDelivery::ArgvAt(prompt_at),
            // No turn or tool-call cap (`--retries` counts mistakes, `-t` is a timeout the
            // host's own replaces): the host enforces them.
            native_limits: Vec::new(),
            unsupported_limits: Vec::new(),
            side_files: Vec::new(),
            caveats: Vec::new(),
            exit_codes: Vec::new(),
        })
    }

    /// Cline's tools: `editor {path, new_text}` (no `old_text` = create),
    /// `run_commands {commands: [..]}`, `read_files {files: [{path}]}`; paths absolute.
    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
        let (name, args) = match action {
            NeutralAction::WriteFile { path, content } => (
                "editor",
                json!({"path": harness_kit::workspace_path(path, workspace), "new_text": content}),
            ),
            NeutralAction::Shell { command } => ("run_commands", json!({"commands": [command]})),
            NeutralAction::ReadFile { path } => (
                "read_files",
                json!({"files": [{"path": harness_kit::workspace_path(path, workspace)}]}),
            ),
        };
        ToolCall {
            name: name.to_string(),
            arguments_json: args.to_string(),
        }
    }
}
