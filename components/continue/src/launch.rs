//! Launch plan and neutral-action translation for the Continue CLI 1.5.x.
//!
//! The model comes from `{{home}}/config.yaml` (Continue's config schema v1: one `openai`
//! model with `apiBase` `<model_base_url>/v1`), passed with `--config`; `--auto` allows
//! every tool. The recordings show no request off loopback.

use harness_kit::{
    AgentField, AgentSettings, Capabilities, Caveat, ConfigFile, Harness, LaunchPlan,
    NeutralAction, PromptDelivery, RunLimits, ToolCall, TotalsScope,
};
use serde_json::json;

/// The Continue CLI harness.
pub struct Continue;

/// The model id used when the task names none.
pub const DEFAULT_MODEL: &str = "mock-model";

/// The session id the plan fixes (`CONTINUE_CLI_TEST_SESSION_ID`).
pub const SESSION_ID: &str = "coder-eval";

/// Continue's session file for [`SESSION_ID`] under `CONTINUE_GLOBAL_DIR`
/// (`{{home}}/.continue`): the plan's only side file.
pub const SESSION_FILE: &str = "{{home}}/.continue/sessions/coder-eval.json";

/// The config file, under the private HOME.
const CONFIG: &str = "config.yaml";

impl Harness for Continue {
    type Reducer = crate::ContinueReducer;

    /// Checked against `cn --help` of 1.5.47: the model is the config's (`--model` takes
    /// hub slugs only). `--rule` adds to the system prompt but was not checked; `--resume`
    /// resumes only the last session, `--fork` was not checked: no resume. Usage per model
    /// call in the session file; no cost (Continue's `totalCost` is its own estimate).
    fn describe() -> Capabilities {
        Capabilities {
            agent_fields: vec![AgentField::Model],
            resume: false,
            reports_cost: false,
            usage_per_call: true,
        }
    }

    /// The session file holds the one process's session (fresh HOME, fixed id).
    fn totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerProcess
    }

    fn plan(settings: &AgentSettings, _limits: &RunLimits) -> Result<LaunchPlan, String> {
        Self::describe().check(settings)?;
        if settings.session.is_some() {
            return Err("the Continue harness does not start or resume sessions".into());
        }
        let Some(url) = &settings.model_base_url else {
            return Err(
                "the Continue harness needs a model_base_url: its config names one \
                 OpenAI-compatible model (no Continue hub login)"
                    .into(),
            );
        };
        let model = settings.model.as_deref().unwrap_or(DEFAULT_MODEL);
        let key = settings.api_key.as_deref().unwrap_or("unused");
        // YAML takes JSON strings: each value quoted and escaped.
        let q = |s: &str| serde_json::Value::String(s.to_string()).to_string();
        let config = format!(
            "name: coder-eval\nversion: 1.0.0\nschema: v1\nmodels:\n  - name: {name}\n    \
             provider: openai\n    model: {model}\n    apiBase: {base}\n    apiKey: {key}\n    \
             roles: [chat, edit, apply]\n    capabilities: [tool_use]\n",
            name = q(model),
            model = q(model),
            base = q(&format!("{}/v1", url.trim_end_matches('/'))),
            key = q(key),
        );
        let argv = ["cn", "-p", "--format", "json", "--config"]
            .into_iter()
            .map(String::from)
            .chain([format!("{{{{home}}}}/{CONFIG}"), "--auto".to_string()])
            .collect();
        let env = vec![
            (
                "CONTINUE_GLOBAL_DIR".to_string(),
                "{{home}}/.continue".to_string(),
            ),
            (
                "CONTINUE_CLI_TEST_SESSION_ID".to_string(),
                SESSION_ID.to_string(),
            ),
        ];
        Ok(LaunchPlan {
            argv,
            env,
            files: vec![ConfigFile {
                path: CONFIG.to_string(),
                content: config,
            }],
            // The prompt is `cn`'s positional argument, right after `-p`.
            prompt: PromptDelivery::ArgvAt(2),
            // No turn or tool-call cap in `-p` mode: the host enforces them.
            native_limits: Vec::new(),
            unsupported_limits: Vec::new(),
            side_files: vec![SESSION_FILE.to_string()],
            // Everything is read from the session file after exit: no start is live.
            caveats: vec![Caveat::ToolStartReportedLate],
            exit_codes: Vec::new(),
        })
    }

    /// Continue's tools: `Write {filepath, content}`, `Bash {command}`, `Read
    /// {filepath}`; paths absolute.
    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
        let (name, args) = match action {
            NeutralAction::WriteFile { path, content } => (
                "Write",
                json!({"filepath": harness_kit::workspace_path(path, workspace), "content": content}),
            ),
            NeutralAction::Shell { command } => ("Bash", json!({"command": command})),
            NeutralAction::ReadFile { path } => (
                "Read",
                json!({"filepath": harness_kit::workspace_path(path, workspace)}),
            ),
        };
        ToolCall {
            name: name.to_string(),
            arguments_json: args.to_string(),
        }
    }
}
