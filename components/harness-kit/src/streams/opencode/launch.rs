//! The launch plan and neutral-action translation shared by OpenCode and its forks (Kilo):
//! the same `run --format json` command line and config schema, with the program name,
//! the config file's variable and the opt-out variables of each ([`Fork`]).
//!
//! The plan writes the config file under the task's private HOME with, when the task
//! gives a `model_base_url`, an `@ai-sdk/openai-compatible` provider named [`PROVIDER`]
//! pointing at `<model_base_url>/v1`. Every XDG folder points under HOME too, so nothing of
//! the user's own state leaks in.

use crate::{
    AgentField, AgentSettings, Capabilities, Caveat, ConfigFile, LaunchPlan, NeutralAction,
    PromptDelivery, RunLimits, SessionRequest, ToolCall,
};
use serde_json::{Map, Value, json};

/// One CLI of the OpenCode family.
#[derive(Debug, Clone, Copy)]
pub struct Fork {
    /// The program (`argv[0]`): `opencode`, `kilo`.
    pub program: &'static str,
    /// The CLI's name in messages.
    pub name: &'static str,
    /// The config's `$schema`.
    pub schema: &'static str,
    /// The variable naming the config file: `OPENCODE_CONFIG`, `KILO_CONFIG`.
    pub config_env: &'static str,
    /// The config file, relative to the private HOME.
    pub config_path: &'static str,
    /// The file holding the task's `system_prompt` (listed in the config's
    /// `instructions`, which the CLI appends to its system prompt), relative to HOME.
    pub instructions_path: &'static str,
    /// Fixed variables: the telemetry, model-list, update, share and plugin opt-outs.
    pub env: &'static [(&'static str, &'static str)],
    /// Built-in providers the config turns off (each fetches its model list at start).
    pub disabled_providers: &'static [&'static str],
}

/// The provider id the plan gives the task's `model_base_url` server.
pub const PROVIDER: &str = "mock";

/// The model id used with a `model_base_url` when the task names none.
pub const DEFAULT_MODEL: &str = "mock-model";

/// Permission values the family accepts for a tool family (`permission.edit`, ...).
const PERMISSIONS: [&str; 3] = ["allow", "ask", "deny"];

/// What every CLI of the family honours: the agent fields its `run` flags and config
/// take (`-m`, `--variant`, `--pure`, `--session`; permissions, tools, `instructions`),
/// resume, and tokens and cost per step (`step_finish`).
pub fn capabilities() -> Capabilities {
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

/// The launch plan of `fork` for these settings and limits (the harness checks the
/// settings against its capabilities first).
pub fn plan(
    fork: &Fork,
    settings: &AgentSettings,
    limits: &RunLimits,
) -> Result<LaunchPlan, String> {
    let mut argv: Vec<String> = [fork.program, "run", "--format", "json"]
        .map(String::from)
        .to_vec();
    match &settings.session {
        None => {}
        Some(SessionRequest::Resume(id)) => argv.extend(["--session".into(), id.clone()]),
        Some(SessionRequest::Start(_)) => {
            return Err(format!(
                "{} names its own sessions: it cannot start one with a chosen id (start \
                 without one, then resume the `sessionID` its stream reported)",
                fork.program
            ));
        }
    }
    if let Some(variant) = &settings.model_variant {
        argv.extend(["--variant".into(), variant.clone()]);
    }
    if settings.pure {
        argv.push("--pure".into());
    }
    let mut config = Map::new();
    config.insert("$schema".into(), Value::from(fork.schema));

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
                "{} names models as `provider/model`; got `{model}`",
                fork.name
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
    if !fork.disabled_providers.is_empty() {
        config.insert("disabled_providers".into(), json!(fork.disabled_providers));
    }
    config.insert("autoupdate".into(), false.into());
    config.insert("share".into(), "disabled".into());

    let permission = match settings.permission_mode.as_deref() {
        None => "allow",
        Some(mode) if PERMISSIONS.contains(&mode) => mode,
        Some(mode) => {
            return Err(format!(
                "{} permission mode must be one of {PERMISSIONS:?}; got `{mode}`",
                fork.name
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
            path: fork.instructions_path.into(),
            content: prompt.clone(),
        });
        config.insert(
            "instructions".into(),
            json!([format!("{{{{home}}}}/{}", fork.instructions_path)]),
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
            path: fork.config_path.into(),
            content: Value::Object(config).to_string(),
        },
    );

    let mut env: Vec<(String, String)> = [
        (
            fork.config_env,
            format!("{{{{home}}}}/{}", fork.config_path),
        ),
        ("XDG_CONFIG_HOME", "{{home}}/.config".into()),
        ("XDG_DATA_HOME", "{{home}}/.local/share".into()),
        ("XDG_CACHE_HOME", "{{home}}/.cache".into()),
        ("XDG_STATE_HOME", "{{home}}/.local/state".into()),
    ]
    .map(|(k, v)| (k.to_string(), v))
    .to_vec();
    env.extend(fork.env.iter().map(|(k, v)| (k.to_string(), v.to_string())));

    let prompt_at = argv.len() as u32;
    Ok(LaunchPlan {
        argv,
        env,
        files,
        // The message is the last positional argument of `<program> run`.
        prompt: PromptDelivery::ArgvAt(prompt_at),
        // `steps` only asks the model to stop: the host's backstop is the cap.
        native_limits: Vec::new(),
        unsupported_limits: Vec::new(),
        side_files: Vec::new(),
        caveats: vec![
            // `<program> run --format json` prints a tool only once it has finished.
            Caveat::ToolStartFromCliDuration,
        ],
        // No documented exit codes beyond 0 and 1.
        exit_codes: Vec::new(),
    })
}

/// The family's tools: `write {filePath, content}`, `bash {command, description}`,
/// `read {filePath}`; paths absolute.
pub fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
    let (name, args) = match action {
        NeutralAction::WriteFile { path, content } => (
            "write",
            json!({"filePath": crate::workspace_path(path, workspace), "content": content}),
        ),
        NeutralAction::Shell { command } => (
            "bash",
            json!({"command": command, "description": format!("Run {command}")}),
        ),
        NeutralAction::ReadFile { path } => (
            "read",
            json!({"filePath": crate::workspace_path(path, workspace)}),
        ),
    };
    ToolCall {
        name: name.to_string(),
        arguments_json: args.to_string(),
    }
}
