//! Launch plan and neutral-action translation for Claude Code 2.1.x.

use harness_kit::{
    AgentSettings, Harness, LaunchPlan, LimitKind, NeutralAction, PromptDelivery, RunLimits,
    ToolCall,
};
use serde_json::json;

/// The Claude Code harness.
pub struct ClaudeCode;

impl Harness for ClaudeCode {
    type Reducer = crate::ClaudeReducer;

    fn plan(settings: &AgentSettings, limits: &RunLimits) -> Result<LaunchPlan, String> {
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
            argv.extend(["--append-system-prompt".into(), prompt.clone()]);
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
