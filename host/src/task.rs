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
//! Relative paths in a task file resolve from the folder of the path it was given by:
//! for a symbolic link to a task file, the link's folder, not its target's (so a
//! linked file can be shared by task folders that each hold their own fixtures). An
//! experiment file's paths follow the same rule.
//!
//! coder_eval's keys (v0.12) load with coder_eval's meaning: `skip`, `dataset`
//! ([`dataset`]), `reference`, `pre_run`/`post_run` objects and the `sandbox` keys
//! ([`sandbox`]), the agent fields beyond harness@0.1.0 ([`agent`]) and the legacy keys
//! and placements ([`compat`]). An unknown *top-level* key is a warning (coder_eval's
//! rule), recorded as a load note; unknown keys inside a section are errors naming the
//! file, the line and the closest valid key. A task
//! file is fully validated (criteria included) before any agent starts. The parameters
//! of each built-in criterion are documented in `components/criteria-*/src/lib.rs` and
//! `host/src/grading/run_command.rs`; common keys (`weight`, `pass_threshold`,
//! `description`) in [`crate::grading::CriterionSpec`].
//!
//! The rooms: this file holds the loaded shapes ([`Task`], [`LoadedFile`], [`TaskError`]);
//! `load` reads a file or text ([`Task::load_file`] and kin), `file` turns the file as
//! written into a task (legacy placements, agentless rules), `rules` checks what the
//! criteria need of the task; each section's own room is named above.

use std::path::PathBuf;

use crate::limits::RunLimitsSpec;

pub mod agent;
pub(crate) mod compat;
pub mod dataset;
pub(crate) mod duplicate_key;
pub mod every_error;
pub(crate) mod expand;
mod field_line;
pub use field_line::locate;
mod file;
mod load;
mod reads;
pub mod retry;
mod rules;
pub mod sandbox;
#[cfg(test)]
mod tests;
pub mod time_budget;
pub(crate) mod yaml_limits;

pub use agent::AgentField;
pub(crate) use agent::AgentSpec;
pub use compat::{LoadNote, NoteAction};
pub use sandbox::{Driver, Reference};
pub(crate) use sandbox::{SandboxSpec, Step};

/// One criterion of `success_criteria` (validated as the file is read).
pub use crate::grading::CriterionSpec;

/// A loaded, validated task.
#[derive(Debug, Clone)]
pub struct Task {
    /// The task file.
    pub path: PathBuf,
    /// The folder of the task file (relative paths resolve against it).
    pub dir: PathBuf,
    /// The task's id; `<task_id>/<row_id>` for a row of a `dataset:` task.
    pub task_id: String,
    pub description: Option<String>,
    /// The prompt, read from `initial_prompt_file` when given (`${row.x}` substituted).
    pub prompt: String,
    pub tags: Vec<String>,
    /// `skip: true`: recorded as SKIPPED, not run (unless `--include-skipped`).
    pub skip: bool,
    pub agent: AgentSpec,
    pub run_limits: RunLimitsSpec,
    pub sandbox: SandboxSpec,
    /// The reference solution, kept out of the agent's reach until it has finished.
    pub reference: Option<Reference>,
    pub pre_run: Vec<Step>,
    pub(crate) post_run: Vec<Step>,
    pub success_criteria: Vec<CriterionSpec>,
    /// coder_eval's `expected_commands`: a tool-call budget, recorded (not enforced).
    pub expected_commands: Option<u32>,
    /// `retry:`: how hard an infrastructure error is retried ([`retry::RetrySpec`]).
    pub retry: retry::RetrySpec,
    /// The dataset row this task was made from.
    pub row: Option<RowInfo>,
    /// Keys the loader ignored, dropped or mapped (the same for every row of a file).
    pub load_notes: Vec<LoadNote>,
}

pub(crate) use crate::results::RowInfo;

/// The tasks of one file (one, or one per dataset row) and the notes of its loading.
#[derive(Debug, Clone)]
pub struct LoadedFile {
    pub tasks: Vec<Task>,
    pub notes: Vec<LoadNote>,
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

/// The name among `candidates` closest to a mistyped `unknown` ("did you mean"), for
/// front ends that check task files (`coder-eval check`).
pub fn closest<'a>(
    unknown: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    crate::suggest::closest(unknown, candidates)
}

/// The interpreter a task's `.venv` is made with: `python<version>`, else `python3`.
pub(crate) fn workspace_python(version: Option<&str>) -> String {
    match version {
        Some(v) => format!("python{}", v.trim()),
        None => "python3".into(),
    }
}
