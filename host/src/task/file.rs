//! The task file as written ([`TaskFile`], generic in its criterion type) and how its
//! fields become a [`Task`] ([`common`]): the prompt, the agentless rules, the legacy
//! placements of run limits (mapped, with a note) and the sandbox checks.

use super::compat::{self, LoadNote, NoteAction};
use super::dataset;
use super::sandbox::{self, Driver, SandboxSpec, Step};
use super::{AgentSpec, Task, workspace_python};
use crate::limits::RunLimitsSpec;
use crate::sandbox::docker::DockerNetwork;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The task file as written. Unknown top-level keys are not errors (coder_eval's rule):
/// [`compat::top_level_notes`] reports them. `C` is the criterion type: the criteria of
/// a dataset task are parsed once per row, after `${row.x}` substitution.
#[derive(Debug, Deserialize)]
#[serde(bound(deserialize = "C: Deserialize<'de>"))]
pub(super) struct TaskFile<C> {
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
    retry: super::retry::RetrySpec,
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

/// Everything but the criteria (returned as written) and the dataset (returned typed).
pub(super) fn common<C>(
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
    agent.time_budget(limits.task_timeout).map_err(|e| {
        // The line of the field the error names (`agent.budget_mode`, `agent.max_sessions`).
        let field = e
            .strip_prefix("agent.")
            .and_then(|rest| rest.split([':', ' ']).next())
            .unwrap_or("budget_mode");
        match compat::key_line(text, &["agent", field]) {
            Some(line) => format!("line {line}: {e}"),
            None => e,
        }
    })?;
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
        if crate::locate::find_cli(&program, None).is_err() {
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
        && crate::locate::find_cli("npm", None).is_err()
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
        retry: file.retry,
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
