//! Launch plan and neutral-action translation for Claude Code 2.1.x.

use harness_kit::{
    AgentField, AgentSettings, Capabilities, Harness, LaunchPlan, LimitKind, NeutralAction,
    PromptDelivery, RunLimits, SessionRequest, SystemPromptMode, ToolCall, TotalsScope,
};
use serde_json::{Value, json};

/// The first Claude Code version whose `--resume`d process restores the session's saved
/// totals, so its `result.total_cost_usd` is a running total for the whole session
/// (Enderfga/claw-orchestrator PR #112; field case B40). Earlier versions restart at zero.
pub const SESSION_TOTALS_SINCE: (u32, u32, u32) = (2, 1, 277);

/// coder_eval `sdk_options` keys (Claude Agent SDK option names) that have a `claude -p`
/// flag, and the flag (checked against `claude --help` of 2.1.197 and 2.1.332).
pub const SDK_OPTION_FLAGS: [(&str, &str); 3] = [
    ("effort", "--effort"),
    ("max_budget_usd", "--max-budget-usd"),
    ("fallback_model", "--fallback-model"),
];

/// The Claude Code harness.
pub struct ClaudeCode;

impl Harness for ClaudeCode {
    type Reducer = crate::ClaudeReducer;

    /// The Claude Code versions this harness was checked against (2026-12-01): the
    /// recordings `tests/corpus/live/claude/<scenario>.jsonl` (2.1.197) and
    /// `<scenario>-2.1.332.jsonl` replay, and the live scenarios passed, on each; 2.1.332
    /// is the pin (`harnesses/package.json`). A newer version's stream still reduces, with
    /// an `unchecked_cli_version` note after its `system/init` line (which names the
    /// version in `claude_code_version`). 2.1.332 refuses a command that begins with
    /// `sleep N` (N ≥ 25) unrun (`<tool_use_error>Blocked: …`): that call is `denied`.
    const CHECKED_VERSIONS: &'static [&'static str] = &["2.1.197", "2.1.332"];

    /// Checked against `claude --help` of 2.1.197 and 2.1.332: `--system-prompt` (replace),
    /// `--setting-sources`, `--settings`, `--plugin-dir`, the [`SDK_OPTION_FLAGS`],
    /// `--session-id` / `--resume`. Skills come with plugins (no `skills`). The stream
    /// reports `total_cost_usd` and usage per assistant message.
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
                SettingSources,
                Settings,
                Plugins,
                SdkOptions,
            ],
            resume: true,
            reports_cost: true,
            usage_per_call: true,
        }
    }

    /// `result.total_cost_usd` / `usage` are running totals of one process before 2.1.277,
    /// of the whole session from 2.1.277 on (B40). An unknown or unreadable version is
    /// answered for 2.1.197, the version this harness was recorded with: per process.
    fn totals(cli_version: Option<&str>) -> TotalsScope {
        match cli_version.and_then(version_of) {
            Some(v) if v >= SESSION_TOTALS_SINCE => TotalsScope::PerSession,
            _ => TotalsScope::PerProcess,
        }
    }

    /// `result.usage` is the process's own on every version: 2.1.277's resume restores
    /// the session's cost only (B40). A 2.1.332 process that prints several results (a
    /// follow-up query after a background task ended) reports each query's usage in its
    /// own result; the reducer sums them, so each final result the host reads carries the
    /// process's usage so far, and its cost is the CLI's running total (per `totals`).
    fn usage_totals(_cli_version: Option<&str>) -> TotalsScope {
        TotalsScope::PerProcess
    }

    fn plan(settings: &AgentSettings, limits: &RunLimits) -> Result<LaunchPlan, String> {
        Self::describe().check(settings)?;
        let mut argv: Vec<String> = [
            "claude",
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
        ]
        .map(String::from)
        .to_vec();
        match &settings.permission_mode {
            None => argv.push("--dangerously-skip-permissions".into()),
            Some(mode) => argv.extend(["--permission-mode".into(), mode.clone()]),
        }
        let mut native_limits = Vec::new();
        if let Some(n) = limits.max_turns {
            argv.extend(["--max-turns".into(), n.to_string()]);
            native_limits.push(LimitKind::MaxTurns);
        }
        // Claude Code 2.1.197 `--max-budget-usd <amount>` (print mode only): after each
        // message it checks its running cost and, at or past the amount, ends with the
        // result subtype `error_max_budget_usd`, so the budget holds between model calls
        // although the stream reports cost only in the result. The host keeps its own
        // check of that result.
        if let Some(usd) = limits.budgets.max_usd {
            argv.extend(["--max-budget-usd".into(), usd.to_string()]);
            native_limits.push(LimitKind::MaxUsd);
        }
        if let Some(model) = &settings.model {
            argv.extend(["--model".into(), model.clone()]);
        }
        if !settings.allowed_tools.is_empty() {
            argv.extend(["--allowedTools".into(), settings.allowed_tools.join(",")]);
        }
        if !settings.disallowed_tools.is_empty() {
            argv.extend([
                "--disallowedTools".into(),
                settings.disallowed_tools.join(","),
            ]);
        }
        if let Some(prompt) = &settings.system_prompt {
            let flag = match settings.system_prompt_mode {
                SystemPromptMode::Append => "--append-system-prompt",
                SystemPromptMode::Replace => "--system-prompt",
            };
            argv.extend([flag.into(), prompt.clone()]);
        }
        if let Some(sources) = &settings.setting_sources {
            // An empty list loads no settings file (`--setting-sources ""`).
            argv.extend(["--setting-sources".into(), sources.join(",")]);
        }
        if let Some(json) = &settings.settings_json {
            argv.extend(["--settings".into(), json.clone()]);
        }
        for dir in &settings.plugin_dirs {
            argv.extend(["--plugin-dir".into(), dir.clone()]);
        }
        if let Some(options) = &settings.sdk_options_json {
            argv.extend(sdk_option_args(options)?);
        }
        match &settings.session {
            None => {}
            Some(SessionRequest::Start(id)) => argv.extend(["--session-id".into(), id.clone()]),
            Some(SessionRequest::Resume(id)) => argv.extend(["--resume".into(), id.clone()]),
        }

        let mut env: Vec<(String, String)> = [
            ("DISABLE_AUTOUPDATER", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .to_vec();
        if let Some(url) = &settings.model_base_url {
            env.push(("ANTHROPIC_BASE_URL".into(), url.clone()));
        }
        if let Some(key) = &settings.api_key {
            env.push(("ANTHROPIC_API_KEY".into(), key.clone()));
        }
        if settings.as_root {
            // Without it: "--dangerously-skip-permissions cannot be used with root/sudo".
            env.push(("IS_SANDBOX".into(), "1".into()));
        }
        Ok(LaunchPlan {
            argv,
            env,
            files: Vec::new(),
            // `-p` is at index 1; the prompt follows it.
            prompt: PromptDelivery::ArgvAt(2),
            native_limits,
            unsupported_limits: Vec::new(),
            caveats: Vec::new(),
            // No documented exit codes beyond 0 and 1.
            exit_codes: Vec::new(),
            side_files: Vec::new(),
        })
    }

    fn translate_action(action: &NeutralAction, workspace: &str) -> ToolCall {
        let (name, args) = match action {
            NeutralAction::WriteFile { path, content } => (
                "Write",
                json!({"file_path": harness_kit::workspace_path(path, workspace), "content": content}),
            ),
            NeutralAction::Shell { command } => (
                "Bash",
                json!({"command": command, "description": format!("Run {command}")}),
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

/// "2.1.277" (or "2.1.277 (Claude Code)") as a comparable triple.
fn version_of(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.split_whitespace().next()?.split('.');
    let mut next = || parts.next()?.parse::<u32>().ok();
    Some((next()?, next()?, next()?))
}

/// The flags for coder_eval `sdk_options` (a JSON object): each key of
/// [`SDK_OPTION_FLAGS`] with its value (a string, or a number for `max_budget_usd`); any
/// other key is refused by name.
fn sdk_option_args(json: &str) -> Result<Vec<String>, String> {
    let options: serde_json::Map<String, Value> = serde_json::from_str(json)
        .map_err(|e| format!("`sdk_options` is not a JSON object: {e}"))?;
    let mut args = Vec::new();
    for (key, value) in &options {
        let Some((_, flag)) = SDK_OPTION_FLAGS.iter().find(|(k, _)| k == key) else {
            return Err(format!(
                "claude -p has no flag for `sdk_options.{key}` (it passes on: {})",
                SDK_OPTION_FLAGS.map(|(k, _)| k).join(", ")
            ));
        };
        let value = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            other => {
                return Err(format!(
                    "`sdk_options.{key}` must be a string or a number, not {other}"
                ));
            }
        };
        args.extend([flag.to_string(), value]);
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_kit::BudgetLimits;

    #[test]
    fn the_pinned_version_is_a_checked_one() {
        harness_kit::testing::assert_pin_checked::<ClaudeCode>("@anthropic-ai/claude-code");
    }

    #[test]
    fn a_usd_budget_is_native() {
        let limits = RunLimits {
            budgets: BudgetLimits {
                max_usd: Some(0.25),
                max_output_tokens: Some(100),
                ..Default::default()
            },
            ..Default::default()
        };
        let plan = ClaudeCode::plan(&AgentSettings::default(), &limits).unwrap();
        let argv = plan.argv.join(" ");
        assert!(argv.contains("--max-budget-usd 0.25"), "{argv}");
        // No flag for output tokens (`--task-budget` is an API-side hint, not a cap).
        assert_eq!(plan.native_limits, vec![LimitKind::MaxUsd]);
    }

    /// B40 (2.1.278, `--resume`): the stream's totals run over the whole session from
    /// 2.1.277 on (the reducer reports them as seen, `harness_kit::streams::claude`).
    #[test]
    fn totals_scope_by_version() {
        let totals = ClaudeCode::totals;
        assert_eq!(totals(Some("2.1.278")), TotalsScope::PerSession);
        assert_eq!(totals(Some("2.1.277")), TotalsScope::PerSession);
        assert_eq!(totals(Some("2.1.276")), TotalsScope::PerProcess);
        assert_eq!(totals(Some("2.1.197")), TotalsScope::PerProcess);
        assert_eq!(totals(Some("3.0.0 (Claude Code)")), TotalsScope::PerSession);
        assert_eq!(totals(None), TotalsScope::PerProcess);
    }

    #[test]
    fn plan_passes_limits_and_settings() {
        let settings = AgentSettings {
            model: Some("claude-sonnet-4-5".into()),
            allowed_tools: vec!["Bash".into(), "Write".into()],
            model_base_url: Some("http://127.0.0.1:9".into()),
            api_key: Some("sk-test".into()),
            as_root: true,
            ..Default::default()
        };
        let limits = RunLimits {
            max_turns: Some(2),
            ..Default::default()
        };
        let plan = ClaudeCode::plan(&settings, &limits).unwrap();
        let argv = plan.argv.join(" ");
        assert!(!argv.contains("--max-budget-usd"));
        assert!(argv.starts_with("claude -p --output-format stream-json --verbose"));
        assert!(argv.contains("--dangerously-skip-permissions"));
        assert!(argv.contains("--max-turns 2"));
        assert!(argv.contains("--allowedTools Bash,Write"));
        assert!(argv.contains("--model claude-sonnet-4-5"));
        assert_eq!(plan.native_limits, vec![LimitKind::MaxTurns]);
        assert!(plan.env.contains(&("IS_SANDBOX".into(), "1".into())));
        assert!(
            plan.env
                .contains(&("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:9".into()))
        );
    }

    #[test]
    fn neutral_write_uses_absolute_path() {
        let call = ClaudeCode::translate_action(
            &NeutralAction::WriteFile {
                path: "app.py".into(),
                content: "x".into(),
            },
            "/w",
        );
        assert_eq!(call.name, "Write");
        assert_eq!(
            call.arguments_json,
            r#"{"file_path":"/w/app.py","content":"x"}"#
        );
    }

    #[test]
    fn agent_fields_of_0_2_reach_the_command_line() {
        let settings = AgentSettings {
            system_prompt: Some("Be brief.".into()),
            system_prompt_mode: harness_kit::SystemPromptMode::Replace,
            setting_sources: Some(vec!["project".into(), "local".into()]),
            settings_json: Some(r#"{"env":{"A":"1"}}"#.into()),
            plugin_dirs: vec!["/p/one".into(), "/p/two".into()],
            sdk_options_json: Some(r#"{"effort":"high","max_budget_usd":1.5}"#.into()),
            session: Some(SessionRequest::Resume(
                "9a4f2e77-3333-4000-8000-000000000b40".into(),
            )),
            ..Default::default()
        };
        let argv = ClaudeCode::plan(&settings, &RunLimits::default())
            .unwrap()
            .argv
            .join(" ");
        for part in [
            "--system-prompt Be brief.",
            "--setting-sources project,local",
            r#"--settings {"env":{"A":"1"}}"#,
            "--plugin-dir /p/one --plugin-dir /p/two",
            "--effort high --max-budget-usd 1.5",
            "--resume 9a4f2e77-3333-4000-8000-000000000b40",
        ] {
            assert!(argv.contains(part), "{part} missing from {argv}");
        }
        assert!(!argv.contains("--append-system-prompt"));
        let start = AgentSettings {
            session: Some(SessionRequest::Start("0000-1".into())),
            setting_sources: Some(Vec::new()),
            ..Default::default()
        };
        let plan = ClaudeCode::plan(&start, &RunLimits::default()).unwrap();
        let at = plan.argv.iter().position(|a| a == "--session-id").unwrap();
        assert_eq!(plan.argv[at + 1], "0000-1");
        let at = plan
            .argv
            .iter()
            .position(|a| a == "--setting-sources")
            .unwrap();
        assert_eq!(
            plan.argv[at + 1],
            "",
            "an empty list loads no settings file"
        );
    }

    #[test]
    fn unknown_sdk_options_and_unhonoured_fields_are_refused_by_name() {
        let bad = AgentSettings {
            sdk_options_json: Some(r#"{"permission_prompt_tool_name":"x"}"#.into()),
            ..Default::default()
        };
        let err = ClaudeCode::plan(&bad, &RunLimits::default()).unwrap_err();
        assert!(
            err.contains("sdk_options.permission_prompt_tool_name"),
            "{err}"
        );
        let thinking = AgentSettings {
            thinking_level: Some("high".into()),
            skill_dirs: vec!["/s".into()],
            ..Default::default()
        };
        let err = ClaudeCode::plan(&thinking, &RunLimits::default()).unwrap_err();
        assert!(err.contains("thinking-level, skills"), "{err}");
    }
}
