//! Launch plan and neutral-action translation for grok-cli 0.0.34.
//!
//! No config file: `GROK_BASE_URL` (`<model_base_url>/v1`), `GROK_API_KEY` and
//! `GROK_MODEL` select the endpoint (`grok --help`). Headless `-p` mode approves every
//! tool itself (no permission flag). The recordings show no request off loopback.

use harness_kit::{
    AgentField, AgentSettings, Capabilities, Caveat, Harness, LaunchPlan, NeutralAction,
    PromptDelivery, RunLimits, ToolCall, TotalsScope,
};
use serde_json::json;

/// The grok-cli harness.
pub struct GrokCli;

/// The model id used with a `model_base_url` when the task names none.
pub const DEFAULT_MODEL: &str = "mock-model";

impl Harness for GrokCli {
    type Reducer = crate::GrokReducer;

    /// Checked against `grok --help` of 0.0.34: `-m/GROK_MODEL` only. No system-prompt,
    /// effort or session flag; no usage or cost in the output.
    fn describe() -> Capabilities {
        Capabilities {
            agent_fields: vec![AgentField::Model],
            resume: false,
            reports_cost: false,
            usage_per_call: false,
        }
    }

    /// One process, one transcript (and no totals at all).
    fn totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerProcess
    }

    fn plan(settings: &AgentSettings, _limits: &RunLimits) -> Result<LaunchPlan, String> {
        Self::describe().check(settings)?;
        if settings.session.is_some() {
            return Err("the grok-cli harness does not start or resume sessions".into());
        }
        let mut env: Vec<(String, String)> = Vec::new();
        match &settings.model_base_url {
            Some(url) => {
                env.push((
                    "GROK_BASE_URL".into(),
                    format!("{}/v1", url.trim_end_matches('/')),
                ));
                env.push((
                    "GROK_API_KEY".into(),
                    settings.api_key.clone().unwrap_or_else(|| "unused".into()),
                ));
                let model = settings.model.as_deref().unwrap_or(DEFAULT_MODEL);
                env.push(("GROK_MODEL".into(), model.to_string()));
            }
            None => {
                let Some(key) = &settings.api_key else {
                    return Err("grok-cli needs an api_key (GROK_API_KEY) to reach \
                                api.x.ai, or a model_base_url"
                        .into());
                };
                env.push(("GROK_API_KEY".into(), key.clone()));
                if let Some(model) = &settings.model {
                    env.push(("GROK_MODEL".into(), model.clone()));
                }
            }
        }
        Ok(LaunchPlan {
            argv: vec!["grok".into(), "-p".into()],
            env,
            files: Vec::new(),
            prompt: PromptDelivery::ArgvAt(2),
            // `--max-tool-rounds N` stops after N replies with tools but sends one more
            // request whose reply it drops: not the host's max_turns. The host enforces
            // the limits.
            native_limits: Vec::new(),
            unsupported_limits: Vec::new(),
            side_files: Vec::new(),
            // The transcript is printed when the run is over: every start is late.
            caveats: vec![Caveat::ToolStartReportedLate],
            // 1: an error outside the agent loop (the output is one `Error: …` line).
            exit_codes: Vec::new(),
        })
    }

    /// grok's tools: `create_file {path, content}`, `bash {command}`, `view_file {path}`;
    /// paths absolute.
    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
        let (name, args) = match action {
            NeutralAction::WriteFile { path, content } => (
                "create_file",
                json!({"path": harness_kit::workspace_path(path, workspace), "content": content}),
            ),
            NeutralAction::Shell { command } => ("bash", json!({"command": command})),
            NeutralAction::ReadFile { path } => (
                "view_file",
                json!({"path": harness_kit::workspace_path(path, workspace)}),
            ),
        };
        ToolCall {
            name: name.to_string(),
            arguments_json: args.to_string(),
        }
    }
}
