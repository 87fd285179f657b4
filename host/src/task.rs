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

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::limits::RunLimitsSpec;
use crate::sandbox::docker::DockerNetwork;

pub mod agent;
pub mod compat;
pub mod dataset;
pub mod every_error;
pub mod expand;
pub mod sandbox;
pub mod time_budget;
pub mod yaml_limits;

pub use agent::{AgentField, AgentSpec, HarnessCapabilities};
pub use compat::{LoadNote, NoteAction};
pub use sandbox::{Driver, Reference, SandboxSpec, Step};

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
    pub post_run: Vec<Step>,
    pub success_criteria: Vec<CriterionSpec>,
    /// coder_eval's `expected_commands`: a tool-call budget, recorded (not enforced).
    pub expected_commands: Option<u32>,
    /// The dataset row this task was made from.
    pub row: Option<RowInfo>,
    /// Keys the loader ignored, dropped or mapped (the same for every row of a file).
    pub load_notes: Vec<LoadNote>,
}

/// Which dataset row a task is.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RowInfo {
    /// The task file's own `task_id`.
    pub suite_id: String,
    /// The row's id (`dataset.id_field`).
    pub row_id: String,
}

/// The tasks of one file (one, or one per dataset row) and the notes of its loading.
#[derive(Debug, Clone)]
pub struct LoadedFile {
    pub tasks: Vec<Task>,
    pub notes: Vec<LoadNote>,
}

/// The task file as written. Unknown top-level keys are not errors (coder_eval's rule):
/// [`compat::top_level_notes`] reports them. `C` is the criterion type: the criteria of
/// a dataset task are parsed once per row, after `${row.x}` substitution.
#[derive(Debug, Deserialize)]
#[serde(bound(deserialize = "C: Deserialize<'de>"))]
struct TaskFile<C> {
    task_id: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    initial_prompt: Option<String>,
    #[serde(default)]
    initial_prompt_file: Option<PathBuf>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    skip: bool,
    #[serde(default)]
    agent: AgentSpec,
    #[serde(default)]
    run_limits: RunLimitsSpec,
    #[serde(default)]
    sandbox: SandboxSpec,
    #[serde(default)]
    reference: Option<sandbox::ReferenceSpec>,
    #[serde(default)]
    pre_run: Vec<Step>,
    #[serde(default)]
    post_run: Vec<Step>,
    #[serde(default)]
    success_criteria: Vec<C>,
    #[serde(default)]
    dataset: Option<dataset::DatasetSpec>,
    #[serde(default)]
    expected_commands: Option<u32>,
    #[serde(default)]
    simulation: Option<serde_yaml_ng::Value>,
    /// Legacy placement of `run_limits.task_timeout`.
    #[serde(default, deserialize_with = "crate::limits::task_timeout")]
    task_timeout: Option<Duration>,
    /// Legacy placement of `run_limits.max_turns`.
    #[serde(default)]
    max_turns: Option<u32>,
    /// Legacy placement of `run_limits.turn_timeout`.
    #[serde(default, deserialize_with = "crate::limits::turn_timeout")]
    turn_timeout: Option<Duration>,
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
    /// Loads and validates a task file that holds one task (not a `dataset:` task: see
    /// [`Task::load_file`]).
    pub fn load(path: &Path) -> Result<Task, TaskError> {
        let text = read(path)?;
        Task::parse(&text, path)
    }

    /// Loads and validates a task file: one task, or one per dataset row.
    pub fn load_file(path: &Path) -> Result<LoadedFile, TaskError> {
        Task::load_file_with(path, &dataset::Selection::default())
    }

    /// [`Task::load_file`] with a command-line selection of dataset rows.
    pub fn load_file_with(
        path: &Path,
        select: &dataset::Selection,
    ) -> Result<LoadedFile, TaskError> {
        let text = read(path)?;
        Task::parse_file_with(&text, path, select)
    }

    /// The task with id `task_id` from a task file (a dataset row's id is
    /// `<task_id>/<row_id>`), e.g. to grade a run again.
    pub fn load_id(path: &Path, task_id: &str) -> Result<Task, TaskError> {
        let loaded = Task::load_file(path)?;
        let ids: Vec<String> = loaded.tasks.iter().map(|t| t.task_id.clone()).collect();
        loaded
            .tasks
            .into_iter()
            .find(|t| t.task_id == task_id)
            .ok_or_else(|| TaskError::Rule {
                path: path.to_path_buf(),
                message: format!("holds no task `{task_id}` (it holds {})", ids.join(", ")),
            })
    }

    /// Parses a task file's text that holds one task; `path` names it in errors and
    /// anchors relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Task, TaskError> {
        let mut loaded = Task::parse_file(text, path)?;
        if loaded.tasks.len() != 1 || loaded.tasks[0].row.is_some() {
            return Err(TaskError::Rule {
                path: path.to_path_buf(),
                message: format!(
                    "a dataset task: it fans out into {} tasks (load it with Task::load_file)",
                    loaded.tasks.len()
                ),
            });
        }
        Ok(loaded.tasks.remove(0))
    }

    /// Parses a task file's text: one task, or one per `dataset:` row.
    pub fn parse_file(text: &str, path: &Path) -> Result<LoadedFile, TaskError> {
        Task::parse_file_with(text, path, &dataset::Selection::default())
    }

    /// [`Task::parse_file`] with a command-line selection of dataset rows.
    pub fn parse_file_with(
        text: &str,
        path: &Path,
        select: &dataset::Selection,
    ) -> Result<LoadedFile, TaskError> {
        let invalid = |err: serde_yaml_ng::Error| {
            let (line, column) = err.location().map_or((0, 0), |l| (l.line(), l.column()));
            TaskError::Invalid {
                path: path.to_path_buf(),
                line,
                column,
                message: with_suggestion(&err.to_string()),
            }
        };
        let rule = |message: String| TaskError::Rule {
            path: path.to_path_buf(),
            message,
        };
        yaml_limits::check(text).map_err(rule)?;
        let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(invalid)?;
        if !value.is_mapping() {
            return Err(rule(
                "a task file is a mapping of keys (task_id, initial_prompt, ...)".into(),
            ));
        }
        let mut notes = compat::top_level_notes(text, &value);
        let is_dataset = value.get("dataset").is_some_and(|d| !d.is_null());
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        // Kept absolute, so a run's task.json names a file that can be found from anywhere.
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        if !is_dataset {
            let file: TaskFile<CriterionSpec> = serde_yaml_ng::from_str(text).map_err(invalid)?;
            let (mut task, criteria, _) =
                common(file, text, &dir, &absolute, &mut notes).map_err(rule)?;
            suite_thresholds_need_rows(&criteria, text).map_err(rule)?;
            criteria_have_their_inputs(&criteria, &task, text).map_err(rule)?;
            task.success_criteria = criteria;
            task.load_notes = notes.clone();
            return Ok(LoadedFile {
                tasks: vec![task],
                notes,
            });
        }
        // A dataset task: the criteria are parsed per row, after substitution.
        let file: TaskFile<serde_yaml_ng::Value> =
            serde_yaml_ng::from_str(text).map_err(invalid)?;
        let (template, criteria, spec) =
            common(file, text, &dir, &absolute, &mut notes).map_err(rule)?;
        let spec = spec.ok_or_else(|| rule("dataset: an empty block".into()))?;
        let rows = dataset::load_rows_with(&spec, &dir, select).map_err(rule)?;
        if rows.is_empty()
            && let Some(split) = &select.split
        {
            notes.push(LoadNote {
                key: "dataset".into(),
                action: NoteAction::Ignored,
                to: None,
                line: compat::key_line(text, &["dataset"]),
                message: format!(
                    "no row of this dataset is in split `{split}`: the task is left out"
                ),
            });
        }
        let mut tasks = Vec::with_capacity(rows.len());
        for row in rows {
            let mut task = template.clone();
            task.task_id = format!("{}/{}", template.task_id, row.id);
            task.prompt = dataset::substitute(&template.prompt, &row).map_err(rule)?;
            task.success_criteria = Vec::with_capacity(criteria.len());
            for (i, criterion) in criteria.iter().enumerate() {
                let mut criterion = criterion.clone();
                dataset::substitute_value(&mut criterion, &row).map_err(rule)?;
                let parsed: CriterionSpec = serde_yaml_ng::from_value(criterion).map_err(|e| {
                    rule(format!(
                        "dataset row `{}` ({}): success_criteria[{i}]: {}",
                        row.id,
                        row.origin,
                        with_suggestion(&e.to_string())
                    ))
                })?;
                task.success_criteria.push(parsed);
            }
            task.row = Some(RowInfo {
                suite_id: template.task_id.clone(),
                row_id: row.id.clone(),
            });
            task.load_notes = notes.clone();
            tasks.push(task);
        }
        Ok(LoadedFile { tasks, notes })
    }
}

/// What a criterion needs from the task, known at load, so a task that could only fail
/// is refused before any agent starts: `reference_comparison` needs the task's
/// `reference:`; a `component` criterion's `.wasm` file must exist.
fn criteria_have_their_inputs(
    criteria: &[CriterionSpec],
    task: &Task,
    text: &str,
) -> Result<(), String> {
    use crate::grading::{Criterion, HostKind};
    for (i, c) in criteria.iter().enumerate() {
        let line = || {
            compat::key_line(text, &["success_criteria"])
                .map_or(String::new(), |line| format!("line {line}: "))
        };
        match &c.criterion {
            Criterion::Host(HostKind::ReferenceComparison) if task.reference.is_none() => {
                return Err(format!(
                    "{}success_criteria[{i}] (reference_comparison): compares with the \
                     task's reference solution, and this task has no `reference:`: add one",
                    line()
                ));
            }
            Criterion::Component { path, .. } if !task.dir.join(path).is_file() => {
                return Err(format!(
                    "{}success_criteria[{i}] (component): no file {} (the path is relative \
                     to the task file's folder)",
                    line(),
                    task.dir.join(path).display()
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// `suite_thresholds` are judged over the rows of a dataset task: on a task without
/// `dataset:` they would never be judged, so they are refused, naming the criterion and
/// the line.
fn suite_thresholds_need_rows(criteria: &[CriterionSpec], text: &str) -> Result<(), String> {
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim_start().trim_start_matches("- ");
            t.starts_with("suite_thresholds:") || l.contains(" suite_thresholds:")
        })
        .map(|(i, _)| i + 1)
        .collect();
    let with: Vec<usize> = criteria
        .iter()
        .enumerate()
        .filter(|(_, c)| c.suite_thresholds.is_some())
        .map(|(i, _)| i)
        .collect();
    match with.first() {
        None => Ok(()),
        Some(&i) => Err(format!(
            "{}success_criteria[{i}].suite_thresholds: judged over the rows of a dataset task, \
             and this task has no `dataset:`: add one, or remove suite_thresholds",
            lines
                .first()
                .map_or(String::new(), |line| format!("line {line}: "))
        )),
    }
}

fn read(path: &Path) -> Result<String, TaskError> {
    std::fs::read_to_string(path).map_err(|source| TaskError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Everything but the criteria (returned as written) and the dataset (returned typed).
fn common<C>(
    file: TaskFile<C>,
    text: &str,
    dir: &Path,
    path: &Path,
    notes: &mut Vec<LoadNote>,
) -> Result<(Task, Vec<C>, Option<dataset::DatasetSpec>), String> {
    // coder_eval's agentless task: nobody reads a prompt, and the run prepares a folder
    // on this machine.
    let agentless = file.agent.harness.as_deref() == Some("none");
    if agentless {
        if file.initial_prompt.is_some() || file.initial_prompt_file.is_some() {
            return Err(
                "agent.type: none runs no agent, so nothing reads initial_prompt: remove it \
                 (coder_eval refuses it too)"
                    .into(),
            );
        }
        if file.sandbox.driver == Driver::Docker {
            return Err(
                "agent.type: none with sandbox.driver: docker is not supported here: run the \
                 agentless checks with driver: tempdir"
                    .into(),
            );
        }
    }
    let prompt = match (file.initial_prompt, file.initial_prompt_file) {
        (Some(p), None) => p,
        (None, Some(f)) => {
            let f = dir.join(f);
            std::fs::read_to_string(&f)
                .map_err(|e| format!("initial_prompt_file {}: {e}", f.display()))?
        }
        (Some(_), Some(_)) => {
            return Err("give initial_prompt or initial_prompt_file, not both".into());
        }
        (None, None) if agentless => String::new(),
        (None, None) => return Err("initial_prompt is required".into()),
    };
    // It names a folder and appears in reports: no path tricks, no control characters.
    if file.task_id.trim().is_empty()
        || file.task_id.contains(['/', '\\'])
        || file.task_id.starts_with('.')
        || file.task_id.chars().any(char::is_control)
    {
        return Err(format!(
            "task_id `{}` must be a non-empty name without slashes or control characters",
            file.task_id.escape_debug()
        ));
    }
    if let Some(sim) = &file.simulation {
        if sim.get("enabled").and_then(serde_yaml_ng::Value::as_bool) == Some(true) {
            return Err(
                "simulation: a dialog with a simulated user is not supported here (a task is one \
                 prompt, one run of the CLI): set `enabled: false` or remove the block"
                    .into(),
            );
        }
        notes.push(LoadNote {
            key: "simulation".into(),
            action: NoteAction::Ignored,
            to: None,
            line: compat::key_line(text, &["simulation"]),
            message: "`simulation` is not enabled: ignored".into(),
        });
    }
    let mut agent = file.agent;
    if let Some(script) = &agent.scripted_model {
        let script = dir.join(script);
        if !script.exists() {
            return Err(format!(
                "agent.scripted_model: {} does not exist",
                script.display()
            ));
        }
        agent.scripted_model = Some(script);
    }
    agent.resolve(dir)?;
    // Legacy placements of run limits.
    let mut limits = file.run_limits;
    let legacy: [(&[&str], &str, Option<LegacyLimit>); 5] = [
        (
            &["agent", "max_turns"],
            "run_limits.max_turns",
            agent.max_turns.take().map(LegacyLimit::Count),
        ),
        (
            &["agent", "turn_timeout"],
            "run_limits.turn_timeout",
            agent.turn_timeout.take().map(LegacyLimit::Time),
        ),
        (
            &["max_turns"],
            "run_limits.max_turns",
            file.max_turns.map(LegacyLimit::Count),
        ),
        (
            &["turn_timeout"],
            "run_limits.turn_timeout",
            file.turn_timeout.map(LegacyLimit::Time),
        ),
        (
            &["task_timeout"],
            "run_limits.task_timeout",
            file.task_timeout.map(LegacyLimit::Time),
        ),
    ];
    for (from, to, value) in legacy {
        let Some(value) = value else { continue };
        let slot_taken = match (to, value) {
            ("run_limits.max_turns", LegacyLimit::Count(n)) => {
                limits.max_turns.replace(n).is_some_and(|old| old != n)
            }
            ("run_limits.turn_timeout", LegacyLimit::Time(d)) => {
                limits.turn_timeout.replace(d).is_some_and(|old| old != d)
            }
            ("run_limits.task_timeout", LegacyLimit::Time(d)) => {
                limits.task_timeout.replace(d).is_some_and(|old| old != d)
            }
            _ => false,
        };
        if slot_taken {
            return Err(format!(
                "`{}` and `{to}` are both set, to different values: keep `{to}` only",
                from.join(".")
            ));
        }
        notes.push(compat::mapped(text, from, to));
    }
    // Time-budget mode needs a budget; its fields mean nothing without it.
    agent.time_budget(limits.task_timeout)?;
    if file.expected_commands.is_some() {
        notes.push(compat::not_enforced(
            text,
            &["expected_commands"],
            "coder_eval's tool-call budget for its efficiency dashboard (a `commands_efficiency` criterion scores it)",
        ));
    }
    let mut sandbox = file.sandbox;
    sandbox.resolve(dir)?;
    if sandbox.driver == Driver::Docker {
        let spec = sandbox.docker.clone().unwrap_or_default();
        spec.validate(dir, &file.task_id).map_err(|e| {
            let mut key = vec!["sandbox", "docker"];
            key.extend(e.key());
            match compat::key_line(text, &key) {
                Some(line) => format!("line {line}: {e}"),
                None => e.to_string(),
            }
        })?;
        if sandbox.network_enabled == Some(false)
            && let Some(net) = spec
                .network
                .filter(|n| !matches!(n, DockerNetwork::None | DockerNetwork::LlmOnly))
        {
            let at = compat::key_line(text, &["sandbox", "docker", "network"])
                .map_or(String::new(), |line| format!("line {line}: "));
            return Err(format!(
                "{at}sandbox.docker.network: {} contradicts sandbox.network_enabled: false (the \
                 container then runs with network none): remove one of the two",
                net.as_str()
            ));
        }
        if let Some(l) = &sandbox.limits
            && l.max_disk_mb.is_some()
        {
            notes.push(compat::not_enforced(
                text,
                &["sandbox", "limits", "max_disk_mb"],
                "reserved in coder_eval; no driver enforces it",
            ));
        }
        crate::sandbox::docker::probe_daemon()
            .map_err(|e| format!("sandbox.driver: docker: {e}"))?;
    }
    if sandbox.driver == Driver::Tempdir && sandbox.docker.is_some() {
        notes.push(compat::not_enforced(
            text,
            &["sandbox", "docker"],
            "the `docker:` block applies only to `driver: docker`",
        ));
    }
    let tempdir_only = if sandbox.driver == Driver::Tempdir {
        sandbox.docker_only_limits()
    } else {
        Vec::new()
    };
    for limit in tempdir_only {
        notes.push(compat::not_enforced(
            text,
            &["sandbox", "limits", limit],
            "it binds only under `driver: docker` (the tempdir driver enforces `timeout`)",
        ));
    }
    if let Some(secs) = sandbox.limits.as_ref().and_then(|l| l.timeout) {
        let d = Duration::from_secs(secs);
        limits.task_timeout = Some(limits.task_timeout.map_or(d, |t| t.min(d)));
        notes.push(compat::mapped(
            text,
            &["sandbox", "limits", "timeout"],
            "run_limits.task_timeout",
        ));
    }
    if let Some(Some(python)) = &sandbox.python {
        let program = workspace_python(python.python_version.as_deref());
        if crate::run::locate::find_cli(&program, None).is_err() {
            return Err(format!(
                "sandbox.python: `{program}` is not on PATH here{}: install it, or remove python_version",
                python
                    .python_version
                    .as_ref()
                    .map_or(String::new(), |v| format!(" (python_version {v})"))
            ));
        }
    }
    if let Some(node) = &sandbox.node
        && !node.env_packages.is_empty()
        && crate::run::locate::find_cli("npm", None).is_err()
    {
        return Err("sandbox.node: `npm` is not on PATH here: install Node.js and npm".into());
    }
    let reference = file.reference.map(|r| r.resolve(dir)).transpose()?;
    let task = Task {
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
        task_id: file.task_id,
        description: file.description,
        prompt,
        tags: file.tags,
        skip: file.skip,
        agent,
        run_limits: limits,
        sandbox,
        reference,
        pre_run: file.pre_run,
        post_run: file.post_run,
        success_criteria: Vec::new(),
        expected_commands: file.expected_commands,
        row: None,
        load_notes: Vec::new(),
    };
    Ok((task, file.success_criteria, file.dataset))
}

#[derive(Clone, Copy)]
enum LegacyLimit {
    Count(u32),
    Time(Duration),
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
pub fn workspace_python(version: Option<&str>) -> String {
    match version {
        Some(v) => format!("python{}", v.trim()),
        None => "python3".into(),
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
