//! Launch plan and neutral-action translation for Pi 0.73 (`pi -p --mode json`).
//!
//! Command line, environment and config file as recorded in `shared/corpus/live/README.md`:
//!
//! ```text
//! PI_OFFLINE=1 pi -p --mode json --provider mock --model mock-model --no-session <prompt>
//! ```
//!
//! with `{{home}}/.pi/agent/models.json` declaring the `mock` provider (an
//! `openai-completions` endpoint at `<model_base_url>/v1`) when the task gives a model base
//! URL. Without one, Pi runs with its own provider defaults and no `models.json`.

use harness_kit::{
    AgentField, AgentSettings, Capabilities, ConfigFile, Harness, LaunchPlan, NeutralAction,
    PromptDelivery, RunLimits, SessionRequest, SystemPromptMode, ToolCall, TotalsScope,
};
use serde_json::json;

/// The Pi harness (`@mariozechner/pi-coding-agent` 0.73.1, `pi -p --mode json`): launch plan
/// and [`PiReducer`](crate::PiReducer).
pub struct Pi;

/// The model id declared for the mock provider when the task names none.
pub const DEFAULT_MODEL: &str = "mock-model";

/// The tools Pi offers by default (`--tools` default in 0.73).
pub const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

/// Pi's built-in tools, and the task-file (Claude Code) names that map to them.
const TOOL_NAMES: [(&str, &str); 14] = [
    ("read", "read"),
    ("bash", "bash"),
    ("edit", "edit"),
    ("write", "write"),
    ("grep", "grep"),
    ("find", "find"),
    ("ls", "ls"),
    ("Read", "read"),
    ("Bash", "bash"),
    ("Edit", "edit"),
    ("Write", "write"),
    ("Grep", "grep"),
    ("Glob", "find"),
    ("LS", "ls"),
];

impl Harness for Pi {
    type Reducer = crate::PiReducer;

    /// The Pi versions this harness was checked against (2026-12-01): the recordings in
    /// `tests/corpus/live/pi/` replay, and the live scenarios passed, on each. The stream
    /// names no version, so no `unchecked_cli_version` note can come from it: the run's
    /// `cli_version` (the CLI's `--version`) says which one ran.
    const CHECKED_VERSIONS: &'static [&'static str] = &["0.73.1"];

    /// Checked against `pi --help` of 0.73.1: `--model`, `--tools`, `--system-prompt`
    /// (replace) and `--append-system-prompt`, `--thinking`, `--skill <dir>`, and
    /// `--session <file>` (a session file of our naming: created when missing, resumed when
    /// present). No permission modes, plugins, settings files or sdk options. Each
    /// assistant `message_end` carries its call's usage and `cost.total` in USD.
    fn describe() -> Capabilities {
        use AgentField::*;
        Capabilities {
            agent_fields: vec![
                Model,
                AllowedTools,
                DisallowedTools,
                SystemPrompt,
                SystemPromptReplace,
                ThinkingLevel,
                Skills,
            ],
            resume: true,
            reports_cost: true,
            usage_per_call: true,
        }
    }

    /// Usage and cost come per assistant message (B22): the host sums them.
    fn totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerCall
    }

    /// Pi has no native turn or tool-call cap (`native_limits` is empty: the host's backstop
    /// enforces them) and no permission prompts, so a task with a `permission_mode` is
    /// refused. `allowed_tools` / `disallowed_tools` become `--tools` (Pi's names, or the
    /// Claude Code names of the same tools).
    fn plan(settings: &AgentSettings, _limits: &RunLimits) -> Result<LaunchPlan, String> {
        if let Some(mode) = &settings.permission_mode {
            return Err(format!(
                "pi has no permission modes (it runs every tool without asking): remove \
                 `permission_mode: {mode}` from the task to run it on pi"
            ));
        }
        Self::describe().check(settings)?;
        if let Some(level) = &settings.thinking_level
            && !THINKING_LEVELS.contains(&level.as_str())
        {
            return Err(format!(
                "pi has no thinking level `{level}`: use one of {}",
                THINKING_LEVELS.join(", ")
            ));
        }
        let mut argv: Vec<String> = ["pi", "-p", "--mode", "json"].map(String::from).to_vec();
        let mut files = Vec::new();
        match &settings.model_base_url {
            Some(url) => {
                let model = settings.model.as_deref().unwrap_or(DEFAULT_MODEL);
                argv.extend(["--provider".into(), "mock".into(), "--model".into()]);
                argv.push(model.to_string());
                files.push(ConfigFile {
                    path: ".pi/agent/models.json".into(),
                    content: models_json(url, model, settings.api_key.as_deref()),
                });
            }
            None => {
                if let Some(model) = &settings.model {
                    argv.extend(["--model".into(), model.clone()]);
                }
            }
        }
        match &settings.session {
            None => argv.push("--no-session".into()),
            // Pi opens the file when it exists and starts a new session in it when not.
            Some(SessionRequest::Start(id) | SessionRequest::Resume(id)) => {
                argv.extend(["--session".into(), session_file(id)?]);
                // Makes the folder (Pi writes the file but not its folder).
                files.push(ConfigFile {
                    path: ".pi/coder-eval-sessions/README".into(),
                    content: "Pi session files of coder-eval's time-budget runs.\n".into(),
                });
            }
        }
        if let Some(tools) = tool_list(settings)? {
            if tools.is_empty() {
                argv.push("--no-tools".into());
            } else {
                argv.extend(["--tools".into(), tools.join(",")]);
            }
        }
        if let Some(prompt) = &settings.system_prompt {
            let flag = match settings.system_prompt_mode {
                SystemPromptMode::Append => "--append-system-prompt",
                SystemPromptMode::Replace => "--system-prompt",
            };
            argv.extend([flag.into(), prompt.clone()]);
        }
        if let Some(level) = &settings.thinking_level {
            argv.extend(["--thinking".into(), level.clone()]);
        }
        for dir in &settings.skill_dirs {
            argv.extend(["--skill".into(), dir.clone()]);
        }
        let prompt_index = argv.len() as u32;
        Ok(LaunchPlan {
            argv,
            // Pi's fetch ignores HTTPS_PROXY; PI_OFFLINE stops its start-up network checks.
            env: vec![("PI_OFFLINE".into(), "1".into())],
            files,
            // The prompt is the last argument.
            prompt: PromptDelivery::ArgvAt(prompt_index),
            native_limits: Vec::new(),
            unsupported_limits: Vec::new(),
            caveats: Vec::new(),
            // No documented exit codes beyond 0 and 1.
            exit_codes: Vec::new(),
            side_files: Vec::new(),
        })
    }

    /// `write_file` → `write {path, content}`, `shell` → `bash {command}`, `read_file` →
    /// `read {path}`. Pi resolves relative paths against its working directory (the
    /// workspace), so paths stay as given.
    fn translate_action(action: &NeutralAction, _workspace: &str) -> ToolCall {
        let (name, args) = match action {
            NeutralAction::WriteFile { path, content } => {
                ("write", json!({"path": path, "content": content}))
            }
            NeutralAction::Shell { command } => ("bash", json!({"command": command})),
            NeutralAction::ReadFile { path } => ("read", json!({"path": path})),
        };
        ToolCall {
            name: name.to_string(),
            arguments_json: args.to_string(),
        }
    }
}

/// Pi's `--thinking` levels (0.73.1).
pub const THINKING_LEVELS: [&str; 6] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/// The session file for session id `id`, under the private HOME: a path (with a `/`), so
/// Pi opens it as a file rather than searching its own session ids.
fn session_file(id: &str) -> Result<String, String> {
    if id.is_empty()
        || !id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(format!(
            "session id `{id}` must be letters, digits, `-` and `_` only"
        ));
    }
    Ok(format!("{{{{home}}}}/.pi/coder-eval-sessions/{id}.jsonl"))
}

/// `~/.pi/agent/models.json` with the `mock` provider serving `model`.
fn models_json(base_url: &str, model: &str, api_key: Option<&str>) -> String {
    let url = base_url.trim_end_matches('/');
    let base = if url.ends_with("/v1") {
        url.to_string()
    } else {
        format!("{url}/v1")
    };
    let config = json!({"providers": {"mock": {
        "baseUrl": base,
        "api": "openai-completions",
        // Pi refuses a provider without a key, even when the server ignores it.
        "apiKey": api_key.unwrap_or("none"),
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{
            "id": model, "name": model, "reasoning": false, "input": ["text"],
            "contextWindow": 128000, "maxTokens": 8192,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        }],
    }}});
    serde_json::to_string_pretty(&config).expect("a JSON value serializes")
}

/// The `--tools` list for the task's tool settings; `None` = Pi's default set.
fn tool_list(settings: &AgentSettings) -> Result<Option<Vec<&'static str>>, String> {
    if settings.allowed_tools.is_empty() && settings.disallowed_tools.is_empty() {
        return Ok(None);
    }
    let map = |names: &[String]| -> Result<Vec<&'static str>, String> {
        names
            .iter()
            .map(|name| {
                TOOL_NAMES
                    .iter()
                    .find(|(task_name, _)| task_name == name)
                    .map(|(_, pi)| *pi)
                    .ok_or_else(|| {
                        format!(
                            "pi has no tool `{name}` (its tools: read, bash, edit, write, grep, \
                             find, ls)"
                        )
                    })
            })
            .collect()
    };
    let allowed = if settings.allowed_tools.is_empty() {
        DEFAULT_TOOLS.to_vec()
    } else {
        map(&settings.allowed_tools)?
    };
    let denied = map(&settings.disallowed_tools)?;
    let mut tools: Vec<&'static str> = Vec::new();
    for tool in allowed {
        if !denied.contains(&tool) && !tools.contains(&tool) {
            tools.push(tool);
        }
    }
    Ok(Some(tools))
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_kit::LimitKind;
    use serde_json::Value;

    #[test]
    fn the_pinned_version_is_a_checked_one() {
        harness_kit::testing::assert_pin_checked::<Pi>("@mariozechner/pi-coding-agent");
    }

    #[test]
    fn plan_matches_the_recorded_command_line() {
        let settings = AgentSettings {
            model_base_url: Some("http://127.0.0.1:9".into()),
            api_key: Some("sk-test".into()),
            ..Default::default()
        };
        let limits = RunLimits {
            max_turns: Some(2),
            ..Default::default()
        };
        let plan = Pi::plan(&settings, &limits).unwrap();
        assert_eq!(
            plan.argv,
            [
                "pi",
                "-p",
                "--mode",
                "json",
                "--provider",
                "mock",
                "--model",
                "mock-model",
                "--no-session"
            ]
        );
        assert_eq!(plan.prompt, PromptDelivery::ArgvAt(9));
        assert_eq!(plan.native_limits, Vec::<LimitKind>::new());
        assert_eq!(plan.env, [("PI_OFFLINE".to_string(), "1".to_string())]);
        assert_eq!(plan.files[0].path, ".pi/agent/models.json");
        let models: Value = serde_json::from_str(&plan.files[0].content).unwrap();
        let mock = &models["providers"]["mock"];
        assert_eq!(mock["baseUrl"], "http://127.0.0.1:9/v1");
        assert_eq!(mock["api"], "openai-completions");
        assert_eq!(mock["apiKey"], "sk-test");
        assert_eq!(mock["models"][0]["id"], "mock-model");
    }

    #[test]
    fn model_tools_and_system_prompt() {
        let settings = AgentSettings {
            model: Some("qwen3".into()),
            model_base_url: Some("http://127.0.0.1:9/".into()),
            allowed_tools: vec!["Bash".into(), "Write".into(), "read".into()],
            disallowed_tools: vec!["read".into()],
            system_prompt: Some("Be brief.".into()),
            ..Default::default()
        };
        let plan = Pi::plan(&settings, &RunLimits::default()).unwrap();
        let argv = plan.argv.join(" ");
        assert!(
            argv.contains("--model qwen3 --no-session --tools bash,write"),
            "{argv}"
        );
        assert!(argv.ends_with("--append-system-prompt Be brief."), "{argv}");
        let models: Value = serde_json::from_str(&plan.files[0].content).unwrap();
        assert_eq!(models["providers"]["mock"]["models"][0]["id"], "qwen3");

        let settings = AgentSettings {
            disallowed_tools: vec!["Bash".into(), "Edit".into()],
            ..Default::default()
        };
        let plan = Pi::plan(&settings, &RunLimits::default()).unwrap();
        assert_eq!(
            plan.argv.join(" "),
            "pi -p --mode json --no-session --tools read,write"
        );
        assert!(plan.files.is_empty());

        let settings = AgentSettings {
            allowed_tools: vec!["WebFetch".into()],
            ..Default::default()
        };
        assert!(Pi::plan(&settings, &RunLimits::default()).is_err());
        let settings = AgentSettings {
            permission_mode: Some("plan".into()),
            ..Default::default()
        };
        assert!(Pi::plan(&settings, &RunLimits::default()).is_err());
    }

    #[test]
    fn neutral_actions() {
        let call = Pi::translate_action(
            &NeutralAction::WriteFile {
                path: "hello.txt".into(),
                content: "hello from mock\n".into(),
            },
            "/w",
        );
        assert_eq!(call.name, "write");
        assert_eq!(
            call.arguments_json,
            r#"{"path":"hello.txt","content":"hello from mock\n"}"#
        );
        let call = Pi::translate_action(
            &NeutralAction::Shell {
                command: "date".into(),
            },
            "/w",
        );
        assert_eq!(
            (call.name.as_str(), call.arguments_json.as_str()),
            ("bash", r#"{"command":"date"}"#)
        );
        let call = Pi::translate_action(
            &NeutralAction::ReadFile {
                path: "a.txt".into(),
            },
            "/w",
        );
        assert_eq!(
            (call.name.as_str(), call.arguments_json.as_str()),
            ("read", r#"{"path":"a.txt"}"#)
        );
    }

    #[test]
    fn thinking_skills_replace_and_sessions_reach_the_command_line() {
        let settings = AgentSettings {
            system_prompt: Some("Terse.".into()),
            system_prompt_mode: harness_kit::SystemPromptMode::Replace,
            thinking_level: Some("high".into()),
            skill_dirs: vec!["/skills/a".into()],
            session: Some(harness_kit::SessionRequest::Start("run-1".into())),
            ..Default::default()
        };
        let plan = Pi::plan(&settings, &RunLimits::default()).unwrap();
        let argv = plan.argv.join(" ");
        assert!(argv.contains("--system-prompt Terse."), "{argv}");
        assert!(argv.contains("--thinking high"), "{argv}");
        assert!(argv.contains("--skill /skills/a"), "{argv}");
        assert!(
            argv.contains("--session {{home}}/.pi/coder-eval-sessions/run-1.jsonl"),
            "{argv}"
        );
        assert!(!argv.contains("--no-session"));
        let resume = AgentSettings {
            session: Some(harness_kit::SessionRequest::Resume("run-1".into())),
            ..Default::default()
        };
        let again = Pi::plan(&resume, &RunLimits::default()).unwrap();
        assert!(
            again
                .argv
                .join(" ")
                .contains("--session {{home}}/.pi/coder-eval-sessions/run-1.jsonl")
        );
        for bad in ["../x", ""] {
            let s = AgentSettings {
                session: Some(harness_kit::SessionRequest::Resume(bad.into())),
                ..Default::default()
            };
            assert!(Pi::plan(&s, &RunLimits::default()).is_err(), "{bad}");
        }
        let level = AgentSettings {
            thinking_level: Some("extreme".into()),
            ..Default::default()
        };
        assert!(
            Pi::plan(&level, &RunLimits::default())
                .unwrap_err()
                .contains("extreme")
        );
    }
}
