//! Task files (YAML): what to ask an agent, with which limits, and how to judge it.
//!
//! ```yaml
//! task_id: hello_date
//! description: Write app.py that prints a greeting and today's date, then run it.
//! initial_prompt: |            # or initial_prompt_file: prompt.md (relative to this file)
//!   Write app.py ...
//! tags: [smoke]
//! agent:
//!   type: claude-code          # the default harness; `run --harness` overrides it
//!   model: claude-sonnet-4-5   # optional
//!   allowed_tools: [Bash, Write]
//!   disallowed_tools: []
//!   permission_mode: null      # null = skip permission prompts
//!   system_prompt: null        # appended to the CLI's system prompt
//!   scripted_model: script.yaml  # play this script instead of calling a real model
//! run_limits:
//!   max_turns: 10              # main-thread model calls
//!   max_tool_calls: 50         # resolved tool calls
//!   turn_timeout: 300          # seconds (or "90s", "5m", "1500ms")
//!   task_timeout: 600
//! sandbox:
//!   starter_files: {README.md: "# demo\n"}   # path -> content, written into the workspace
//!   template_dir: template     # copied into the workspace first (relative to this file)
//! pre_run: ["git init -q"]     # shell commands in the workspace before the agent starts
//! post_run: []                 # after it ends, before grading
//! success_criteria:
//!   - type: file_exists
//!     path: app.py
//! ```
//!
//! Unknown keys are errors naming the file, the line and the closest valid key. A task
//! file is fully validated (criteria included) before any agent starts. The parameters
//! of each built-in criterion are documented in `components/criteria-*/src/lib.rs` and
//! `host/src/grading/run_command.rs`; common keys (`weight`, `pass_threshold`,
//! `description`) in [`crate::grading::CriterionSpec`].

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::grading::CriterionSpec;
use crate::limits::RunLimitsSpec;

/// A loaded, validated task.
#[derive(Debug, Clone)]
pub struct Task {
    /// The task file.
    pub path: PathBuf,
    /// The folder of the task file (relative paths resolve against it).
    pub dir: PathBuf,
    pub task_id: String,
    pub description: Option<String>,
    /// The prompt, read from `initial_prompt_file` when given.
    pub prompt: String,
    pub agent: AgentSpec,
    pub run_limits: RunLimitsSpec,
    pub sandbox: SandboxSpec,
    pub pre_run: Vec<String>,
    pub post_run: Vec<String>,
    pub success_criteria: Vec<CriterionSpec>,
}

/// The task file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    task_id: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    initial_prompt: Option<String>,
    #[serde(default)]
    initial_prompt_file: Option<PathBuf>,
    /// Labels for the reader's own grouping: accepted, not used by the host.
    #[serde(default)]
    #[allow(dead_code)]
    tags: Vec<String>,
    #[serde(default)]
    agent: AgentSpec,
    #[serde(default)]
    run_limits: RunLimitsSpec,
    #[serde(default)]
    sandbox: SandboxSpec,
    #[serde(default)]
    pre_run: Vec<String>,
    #[serde(default)]
    post_run: Vec<String>,
    #[serde(default)]
    success_criteria: Vec<CriterionSpec>,
}

/// `agent:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// The harness (`claude-code`, `codex`, `pi`, `opencode`, `gemini-cli`).
    #[serde(default, rename = "type")]
    pub harness: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub allowed_tools: Vec<String>,
    #[serde(default)]
    pub disallowed_tools: Vec<String>,
    #[serde(default)]
    pub permission_mode: Option<String>,
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// A model script to play instead of a real model (relative to the task file).
    #[serde(default)]
    pub scripted_model: Option<PathBuf>,
}

/// `sandbox:`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSpec {
    /// Files written into the fresh workspace: relative path → content.
    #[serde(default)]
    pub starter_files: BTreeMap<String, String>,
    /// A folder copied into the workspace first (relative to the task file).
    #[serde(default)]
    pub template_dir: Option<PathBuf>,
}

/// Why a task file was rejected.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The file could not be read.
    #[error("{path}: could not read the task file")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// YAML or schema error, with its position.
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// A rule beyond the schema.
    #[error("{path}: {message}")]
    Rule { path: PathBuf, message: String },
}

impl Task {
    /// Loads and validates a task file.
    pub fn load(path: &Path) -> Result<Task, TaskError> {
        let text = std::fs::read_to_string(path).map_err(|source| TaskError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Task::parse(&text, path)
    }

    /// Parses a task file's text; `path` names it in errors and anchors relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Task, TaskError> {
        let file: TaskFile = serde_yaml_ng::from_str(text).map_err(|err| {
            let (line, column) = err.location().map_or((0, 0), |l| (l.line(), l.column()));
            TaskError::Invalid {
                path: path.to_path_buf(),
                line,
                column,
                message: with_suggestion(&err.to_string()),
            }
        })?;
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let rule = |message: String| TaskError::Rule {
            path: path.to_path_buf(),
            message,
        };
        let prompt = match (file.initial_prompt, file.initial_prompt_file) {
            (Some(p), None) => p,
            (None, Some(f)) => {
                let f = dir.join(f);
                std::fs::read_to_string(&f)
                    .map_err(|e| rule(format!("initial_prompt_file {}: {e}", f.display())))?
            }
            (Some(_), Some(_)) => {
                return Err(rule(
                    "give initial_prompt or initial_prompt_file, not both".into(),
                ));
            }
            (None, None) => return Err(rule("initial_prompt is required".into())),
        };
        // It names a folder and appears in reports: no path tricks, no control characters.
        if file.task_id.trim().is_empty()
            || file.task_id.contains(['/', '\\'])
            || file.task_id.starts_with('.')
            || file.task_id.chars().any(char::is_control)
        {
            return Err(rule(format!(
                "task_id `{}` must be a non-empty name without slashes or control characters",
                file.task_id.escape_debug()
            )));
        }
        let mut agent = file.agent;
        if let Some(script) = &agent.scripted_model {
            let script = dir.join(script);
            if !script.exists() {
                return Err(rule(format!(
                    "agent.scripted_model: {} does not exist",
                    script.display()
                )));
            }
            agent.scripted_model = Some(script);
        }
        if let Some(template) = &file.sandbox.template_dir
            && !dir.join(template).is_dir()
        {
            return Err(rule(format!(
                "sandbox.template_dir: {} is not a folder",
                dir.join(template).display()
            )));
        }
        for name in file.sandbox.starter_files.keys() {
            if Path::new(name).is_absolute() || name.split('/').any(|c| c == "..") {
                return Err(rule(format!(
                    "sandbox.starter_files: `{name}` must be a relative path inside the workspace"
                )));
            }
        }
        // Kept absolute, so a run's task.json names a file that can be found from anywhere.
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        Ok(Task {
            path: absolute,
            dir,
            task_id: file.task_id,
            description: file.description,
            prompt,
            agent,
            run_limits: file.run_limits,
            sandbox: file.sandbox,
            pre_run: file.pre_run,
            post_run: file.post_run,
            success_criteria: file.success_criteria,
        })
    }
}

/// Drops serde_yaml_ng's trailing " at line L column C" (the error already leads with the
/// position) and adds "did you mean `x`?" to an "unknown field `y`, expected one of ..."
/// message.
fn with_suggestion(message: &str) -> String {
    let message = match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => message,
    };
    let Some((_, rest)) = message.split_once("unknown field `") else {
        return message.to_string();
    };
    let Some((unknown, expected)) = rest.split_once('`') else {
        return message.to_string();
    };
    match crate::suggest::closest(unknown, expected.split('`').skip(1).step_by(2)) {
        Some(best) => format!("{message} (did you mean `{best}`?)"),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn parse(text: &str) -> Result<Task, TaskError> {
        Task::parse(text, Path::new("/tmp/t/task.yaml"))
    }

    #[test]
    fn minimal_task() {
        let t = parse(
            "task_id: t\ninitial_prompt: hi\nrun_limits: {max_turns: 3, turn_timeout: 90s}\n",
        )
        .unwrap();
        assert_eq!(t.run_limits.max_turns, Some(3));
        assert_eq!(t.run_limits.turn_timeout, Some(Duration::from_secs(90)));
    }

    #[test]
    fn unknown_key_names_file_line_and_closest_key() {
        let err =
            parse("task_id: t\ninitial_prompt: hi\nrun_limits:\n  max_turn: 3\n").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("/tmp/t/task.yaml:4:"), "{text}");
        assert!(text.contains("unknown field `max_turn`"), "{text}");
        assert!(text.contains("did you mean `max_turns`?"), "{text}");
    }

    #[test]
    fn rules_beyond_the_schema() {
        assert!(
            parse("task_id: t\n")
                .unwrap_err()
                .to_string()
                .contains("initial_prompt is required")
        );
        assert!(parse("task_id: a/b\ninitial_prompt: x\n").is_err());
        let bad =
            parse("task_id: t\ninitial_prompt: x\nrun_limits: {turn_timeout: soon}\n").unwrap_err();
        assert!(bad.to_string().contains("not a duration"), "{bad}");
    }

    #[test]
    fn a_task_id_names_a_folder() {
        for bad in [
            r#""nul\0id""#,
            r#""new\nline""#,
            r#""ctl\u0001id""#,
            "a/b",
            ".hidden",
            "' '",
        ] {
            let err = parse(&format!("task_id: {bad}\ninitial_prompt: hi\n"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("must be a non-empty name without slashes or control characters"),
                "{bad}: {err}"
            );
        }
        assert!(parse("task_id: café-1\ninitial_prompt: hi\n").is_ok());
    }
}
