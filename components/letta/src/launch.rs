//! Launch plan and neutral-action translation for Letta Code 0.25.x.
//!
//! No config file: the local backend and its provider come from the environment.
//! `LETTA_LOCAL_BACKEND_EXPERIMENTAL=1` with `--backend local` runs the agent in-process
//! (no Letta server, no login); `-m llama.cpp/<model>` picks the plain OpenAI-compatible
//! provider, whose server is `LLAMA_CPP_BASE_URL` (`<model_base_url>/v1`) and key
//! `LLAMA_CPP_API_KEY`. The CLI first asks `GET /v1/models`, then streams
//! `POST /v1/chat/completions`. `DISABLE_AUTOUPDATER=1` and `LETTA_DISABLE_LSP_DOWNLOAD=1`
//! keep it off the network: 0 requests off loopback in the recordings, the probe included.
//! The local backend keeps its agent under `$HOME/.letta` (the private HOME).

use harness_kit::{
    AgentField, AgentSettings, Capabilities, Harness, LaunchPlan, NeutralAction, PromptDelivery,
    RunLimits, ToolCall, TotalsScope,
};
use serde_json::json;

/// The Letta Code harness.
pub struct Letta;

/// The model id used with a `model_base_url` when the task names none.
pub const DEFAULT_MODEL: &str = "mock-model";

/// The provider prefix of `-m` for the OpenAI-compatible server in `LLAMA_CPP_BASE_URL`.
const PROVIDER: &str = "llama.cpp/";

impl Harness for Letta {
    type Reducer = crate::LettaReducer;

    /// Checked against `letta --help` of 0.25.9: `-m/--model`. The system prompt flags
    /// (`--system`, `--system-custom`) and the reasoning settings were not checked against
    /// the local backend: not offered. `--resume`/`--continue` need the agent the earlier
    /// run left under HOME; not checked: no resume. No cost; usage per model request
    /// (`usage_statistics`).
    fn describe() -> Capabilities {
        Capabilities {
            agent_fields: vec![AgentField::Model],
            resume: false,
            reports_cost: false,
            usage_per_call: true,
        }
    }

    /// The `result` line's `usage` sums the one process's requests.
    fn totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerProcess
    }

    fn plan(settings: &AgentSettings, _limits: &RunLimits) -> Result<LaunchPlan, String> {
        Self::describe().check(settings)?;
        if settings.session.is_some() {
            return Err("the Letta Code harness does not start or resume sessions".into());
        }
        let Some(url) = &settings.model_base_url else {
            return Err(
                "the Letta Code harness runs the local backend against an OpenAI-compatible \
                 server (no Letta server or login) and needs a model_base_url"
                    .into(),
            );
        };
        let model = settings.model.as_deref().unwrap_or(DEFAULT_MODEL);
        let model = if model.starts_with(PROVIDER) {
            model.to_string()
        } else {
            format!("{PROVIDER}{model}")
        };
        let mut argv: Vec<String> = ["letta", "--backend", "local", "-p"]
            .map(String::from)
            .to_vec();
        let prompt_at = argv.len() as u32;
        argv.extend(
            [
                "--output-format",
                "stream-json",
                "-m",
                &model,
                "--new-agent",
                "--yolo",
            ]
            .map(String::from),
        );
        let env = [
            ("LETTA_LOCAL_BACKEND_EXPERIMENTAL", "1".to_string()),
            (
                "LLAMA_CPP_BASE_URL",
                format!("{}/v1", url.trim_end_matches('/')),
            ),
            (
                "LLAMA_CPP_API_KEY",
                settings.api_key.clone().unwrap_or_else(|| "unused".into()),
            ),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("LETTA_DISABLE_LSP_DOWNLOAD", "1".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        Ok(LaunchPlan {
            argv,
            env,
            files: Vec::new(),
            prompt: PromptDelivery::ArgvAt(prompt_at),
            // No usable turn or tool-call cap: 0.25.9 has `--max-turns`, but it compares
            // the step count, which the local backend leaves at 0 (`step_count: 0` in
            // every recorded result), and checks it only at the end of a run that needs
            // no approval. The host enforces both.
            native_limits: Vec::new(),
            unsupported_limits: Vec::new(),
            side_files: Vec::new(),
            caveats: Vec::new(),
            exit_codes: Vec::new(),
        })
    }

    /// Letta Code's tools: `Write {file_path, content}`, `Bash {command, description}`,
    /// `Read {file_path}`; paths absolute.
    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
        let (name, args) = match action {
            NeutralAction::WriteFile { path, content } => (
                "Write",
                json!({"file_path": harness_kit::workspace_path(path, workspace), "content": content}),
            ),
            NeutralAction::Shell { command } => (
                "Bash",
                json!({"command": command, "description": "Run a shell command"}),
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
