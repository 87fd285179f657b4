//! Launch plan and neutral-action translation for Codex 0.171 (`codex exec --json`).
//!
//! Command line, environment and config file as recorded in `shared/corpus/live/README.md`:
//!
//! ```text
//! CODEX_HOME={{home}}/.codex MOCK_API_KEY=<key> \
//! codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox <prompt>
//! ```
//!
//! with `{{home}}/.codex/config.toml` naming the model (a slug of Codex's built-in catalog:
//! with an unknown slug Codex adds an `error` item and offers no `apply_patch`), turning off
//! update checks, analytics and plugins (they phone home), and, when the task gives a model
//! base URL, a `mock` provider on the Responses wire API (0.171 refuses `wire_api = "chat"`).

use harness_kit::{
    AgentField, AgentSettings, Capabilities, Caveat, ConfigFile, Harness, LaunchPlan,
    NeutralAction, PromptDelivery, RunLimits, SessionRequest, SystemPromptMode, ToolCall,
    TotalsScope,
};
use serde_json::{Value, json};

/// The Codex harness (`@openai/codex` 0.171.0, `codex exec --json`): launch plan and
/// [`CodexReducer`](crate::CodexReducer).
pub struct Codex;

/// The model asked for when the task names none: a slug of Codex 0.171's built-in catalog.
pub const DEFAULT_MODEL: &str = "gpt-5.5";

/// The `permission_mode` values Codex understands: its `--sandbox` modes. `None` (no
/// permission mode) = `--dangerously-bypass-approvals-and-sandbox`.
pub const SANDBOX_MODES: [&str; 3] = ["read-only", "workspace-write", "danger-full-access"];

impl Harness for Codex {
    type Reducer = crate::CodexReducer;

    /// The Codex versions this harness was checked against (2026-12-01): the recordings
    /// in `tests/corpus/live/codex/` replay, and the live scenarios passed, on each. The
    /// stream names no version, so no `unchecked_cli_version` note can come from it: the
    /// run's `cli_version` (the CLI's `--version`) says which one ran.
    const CHECKED_VERSIONS: &'static [&'static str] = &["0.171.0"];

    /// Checked against `codex exec --help` / `codex exec resume --help` of 0.171.0: the
    /// model and the sandbox mode (`permission_mode`), instructions added
    /// (`developer_instructions`) or replaced (`model_instructions_file`), the reasoning
    /// effort (`thinking_level` as `model_reasoning_effort`), and `codex exec resume <id>`.
    /// No per-tool lists, plugins, settings files or sdk options; a session cannot be
    /// started with a chosen id (Codex names its threads). The stream carries no cost, and
    /// usage only at `turn.completed`.
    fn describe() -> Capabilities {
        use AgentField::*;
        Capabilities {
            agent_fields: vec![
                Model,
                PermissionMode,
                SystemPrompt,
                SystemPromptReplace,
                ThinkingLevel,
            ],
            resume: true,
            reports_cost: false,
            usage_per_call: false,
        }
    }

    /// `turn.completed.usage` is the thread's running total (B10), and a resumed thread
    /// (`exec resume`) goes on counting: per session, on every version checked.
    fn totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerSession
    }

    /// Codex has no native turn or tool-call cap (`native_limits` is empty: the host's
    /// backstop enforces `max_turns` and `max_tool_calls`) and no per-tool allow or deny
    /// list, so a task with `allowed_tools` or `disallowed_tools` is refused.
    fn plan(settings: &AgentSettings, _limits: &RunLimits) -> Result<LaunchPlan, String> {
        if !settings.allowed_tools.is_empty() || !settings.disallowed_tools.is_empty() {
            return Err(
                "codex exec has no per-tool allow or deny list: remove `allowed_tools` and \
                 `disallowed_tools` from the task to run it on codex"
                    .into(),
            );
        }
        Self::describe().check(settings)?;
        let resume = match &settings.session {
            None => None,
            Some(SessionRequest::Resume(id)) => Some(id.clone()),
            Some(SessionRequest::Start(_)) => {
                return Err(
                    "codex names its own threads: it cannot start a session with a \
                            chosen id (start without one, then resume the thread id its \
                            `thread.started` reported)"
                        .into(),
                );
            }
        };
        // `codex exec resume <id> <prompt>` takes the same output flags but no `--sandbox`:
        // there the sandbox mode goes in as a config override.
        let mut argv: Vec<String> = if resume.is_some() {
            ["codex", "exec", "resume", "--json", "--skip-git-repo-check"]
                .map(String::from)
                .to_vec()
        } else {
            ["codex", "exec", "--json", "--skip-git-repo-check"]
                .map(String::from)
                .to_vec()
        };
        match settings.permission_mode.as_deref() {
            None => argv.push("--dangerously-bypass-approvals-and-sandbox".into()),
            Some(mode) if SANDBOX_MODES.contains(&mode) && resume.is_some() => {
                argv.extend(["-c".into(), format!("sandbox_mode={}", toml_string(mode))]);
            }
            Some(mode) if SANDBOX_MODES.contains(&mode) => {
                argv.extend(["--sandbox".into(), mode.to_string()]);
            }
            Some(mode) => {
                return Err(format!(
                    "codex has no permission mode `{mode}`: use one of its sandbox modes ({}) \
                     or none",
                    SANDBOX_MODES.join(", ")
                ));
            }
        }

        let mut env = vec![("CODEX_HOME".to_string(), "{{home}}/.codex".to_string())];
        let api_key = settings.api_key.clone();
        match (&settings.model_base_url, api_key) {
            // The mock provider reads its key from the variable named by `env_key`, which
            // must be set even when the model server ignores it.
            (Some(_), key) => env.push(("MOCK_API_KEY".into(), key.unwrap_or("none".into()))),
            // `codex exec` takes an API key for the default provider from CODEX_API_KEY.
            (None, Some(key)) => env.push(("CODEX_API_KEY".into(), key)),
            (None, None) => {}
        }

        if let Some(id) = resume {
            argv.push(id);
        }
        let mut files = vec![ConfigFile {
            path: ".codex/config.toml".into(),
            content: config_toml(settings),
        }];
        if let (Some(prompt), SystemPromptMode::Replace) =
            (&settings.system_prompt, settings.system_prompt_mode)
        {
            files.push(ConfigFile {
                path: INSTRUCTIONS_PATH.into(),
                content: prompt.clone(),
            });
        }
        let prompt_index = argv.len() as u32;
        Ok(LaunchPlan {
            argv,
            env,
            files,
            // The prompt is the last argument.
            prompt: PromptDelivery::ArgvAt(prompt_index),
            native_limits: Vec::new(),
            unsupported_limits: Vec::new(),
            caveats: vec![
                // Codex streams one reply's tool calls one after another (it may run them
                // at once); the stream does not tell them from calls in separate replies.
                Caveat::ParallelCallsSerialized,
                // `item.started` of a command arrives ~0.1-0.2 s after the command began
                // (measured with codex 0.171.0), and items carry no duration.
                Caveat::ToolStartReportedLate,
            ],
            // No documented exit codes beyond 0 and 1.
            exit_codes: Vec::new(),
            side_files: Vec::new(),
        })
    }

    /// `write_file` → the free-form `apply_patch` tool (arguments = a JSON string of the
    /// patch text, see the crate docs); `shell` → `exec_command {"cmd"}`; `read_file` →
    /// `exec_command {"cmd": "cat <path>"}`. Paths stay as given (Codex resolves relative
    /// ones against its working directory, the workspace).
    fn translate_action(action: &NeutralAction, _workspace: &str) -> ToolCall {
        let (name, args) = match action {
            NeutralAction::WriteFile { path, content } => {
                ("apply_patch", Value::String(add_file_patch(path, content)))
            }
            NeutralAction::Shell { command } => ("exec_command", json!({"cmd": command})),
            NeutralAction::ReadFile { path } => (
                "exec_command",
                json!({"cmd": format!("cat {}", shell_quote(path))}),
            ),
        };
        ToolCall {
            name: name.to_string(),
            arguments_json: args.to_string(),
        }
    }
}

/// Where a replacing system prompt is written, under the private HOME.
const INSTRUCTIONS_PATH: &str = ".codex/coder-eval-instructions.md";

/// `$CODEX_HOME/config.toml`. Root keys first: in TOML a bare key after a `[table]` header
/// belongs to that table.
fn config_toml(settings: &AgentSettings) -> String {
    let model = settings.model.as_deref().unwrap_or(DEFAULT_MODEL);
    let mut toml = format!("model = {}\n", toml_string(model));
    if settings.model_base_url.is_some() {
        toml.push_str("model_provider = \"mock\"\n");
    }
    toml.push_str("check_for_update_on_startup = false\n");
    match (&settings.system_prompt, settings.system_prompt_mode) {
        (None, _) => {}
        // Codex's way to add to its instructions (it has no --append-system-prompt).
        (Some(prompt), SystemPromptMode::Append) => toml.push_str(&format!(
            "developer_instructions = {}\n",
            toml_string(prompt)
        )),
        // A file that replaces Codex's built-in instructions.
        (Some(_), SystemPromptMode::Replace) => toml.push_str(&format!(
            "model_instructions_file = {}\n",
            toml_string(&format!("{{{{home}}}}/{INSTRUCTIONS_PATH}"))
        )),
    }
    if let Some(effort) = &settings.thinking_level {
        toml.push_str(&format!(
            "model_reasoning_effort = {}\n",
            toml_string(effort)
        ));
    }
    toml.push_str("\n[analytics]\nenabled = false\n\n[features]\nplugins = false\n");
    if let Some(url) = &settings.model_base_url {
        let url = url.trim_end_matches('/');
        let base = if url.ends_with("/v1") {
            url.to_string()
        } else {
            format!("{url}/v1")
        };
        toml.push_str(&format!(
            "\n[model_providers.mock]\nname = \"mock\"\nbase_url = {}\n\
             wire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n",
            toml_string(&base)
        ));
    }
    toml
}

/// A TOML basic string (quoted, with `\`, `"` and control characters escaped).
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// An `apply_patch` patch that adds `path` with `content`. Codex ends every added file
/// with a newline, so content without a final newline gets one.
fn add_file_patch(path: &str, content: &str) -> String {
    let mut patch = format!("*** Begin Patch\n*** Add File: {path}\n");
    let body = content.strip_suffix('\n').unwrap_or(content);
    if !content.is_empty() {
        for line in body.split('\n') {
            patch.push('+');
            patch.push_str(line);
            patch.push('\n');
        }
    }
    patch.push_str("*** End Patch\n");
    patch
}

/// `text` as one POSIX shell word.
fn shell_quote(text: &str) -> String {
    let safe = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./-+=:,@%".contains(&b));
    if safe {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests;
