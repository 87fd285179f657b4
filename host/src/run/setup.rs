//! A task's fresh folders: the workspace (template, starter files, pre_run) and the
//! CLI's private HOME.

use crate::results::StepRecord;
use crate::sandbox::docker::{CONTAINER_PATH, DockerSandbox};
use crate::task::{Step, Task};
use crate::workspace::WorkspaceEnv;
use std::path::{Path, PathBuf};

/// The folders of one task run.
pub(super) struct Dirs {
    /// Absolute path of the agent's workspace.
    pub workspace: PathBuf,
    /// Absolute path of the CLI's private HOME.
    pub home: PathBuf,
    /// The task's own temporary folder ([`TMP_DIR`] in the HOME), given to the CLI as
    /// `TMPDIR`, `TMP` and `TEMP`: what the CLI and the agent's commands leave there is
    /// removed with the task ([`remove_tmp`]) instead of piling up in the host's `/tmp`
    /// (OpenCode 1.x, a Bun single-file program, unpacks a 5.4 MB native library there on
    /// every start and never removes it).
    pub tmp: PathBuf,
    /// PATH additions (mock commands, the task's `.venv`, `node_modules/.bin`).
    pub env: WorkspaceEnv,
    /// What each `pre_run` step did.
    pub pre_run: Vec<StepRecord>,
}

/// The task's temporary folder, relative to the CLI's private HOME (inside it, so a
/// container that mounts the HOME sees it at the same path).
pub(super) const TMP_DIR: &str = ".tmp";

/// Removes the temporary folder of the task whose result folder is `dir` (best effort:
/// what cannot be removed stays in the result folder, never outside it).
pub(super) fn remove_tmp(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir.join("home").join(TMP_DIR));
}

/// Removes everything in `dir` but `attempts/` (the earlier attempts of a task run
/// again after an infrastructure error, `super::retry`, which clears a stale one itself).
fn clear_keeping_attempts(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name() == super::retry::ATTEMPTS_DIR {
            continue;
        }
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Makes `dir/workspace` and `dir/home` afresh and fills the workspace; runs the
/// `pre_run` steps on the host when `pre_run` says so (under `driver: docker` they run in
/// the container once it started: [`run_pre_steps`]). Errors name the step that failed,
/// with the records of the steps that ran (the failed one included).
pub(super) async fn prepare_dirs(
    task: &Task,
    dir: &Path,
    pre_run: bool,
) -> Result<Dirs, SetupError> {
    if dir.exists() {
        clear_keeping_attempts(dir).map_err(|e| format!("clearing {}: {e}", dir.display()))?;
    }
    let workspace = dir.join("workspace");
    let home = dir.join("home");
    for d in [&workspace, &home] {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let workspace = workspace.canonicalize().map_err(|e| e.to_string())?;
    let home = home.canonicalize().map_err(|e| e.to_string())?;
    let tmp = home.join(TMP_DIR);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    // coder_eval's sources first (a `repo` source needs the empty workspace).
    crate::workspace::apply_template_sources(task, &workspace).await?;
    if let Some(template) = &task.sandbox.template_dir {
        copy_dir(&task.dir.join(template), &workspace)
            .map_err(|e| format!("sandbox.template_dir: {e}"))?;
    }
    for (name, content) in &task.sandbox.starter_files {
        let path = workspace.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&path, content).map_err(|e| format!("sandbox.starter_files {name}: {e}"))?;
    }
    let env = crate::workspace::prepare_env(task, &workspace).await?;
    crate::workspace::write_login_profile(&home, &env)
        .map_err(|e| format!("{}: {e}", home.display()))?;
    let mut dirs = Dirs {
        workspace,
        home,
        tmp,
        env,
        pre_run: Vec::new(),
    };
    if pre_run && let Err(message) = run_pre_steps(task, &mut dirs, None).await {
        return Err(SetupError {
            message,
            steps: dirs.pre_run,
        });
    }
    Ok(dirs)
}

/// Why setup failed, and the `pre_run` steps that ran before it did (the failed one
/// last), for `task.json`'s `steps`.
#[derive(Debug)]
pub(super) struct SetupError {
    pub(super) message: String,
    pub(super) steps: Vec<StepRecord>,
}

impl From<String> for SetupError {
    fn from(message: String) -> Self {
        SetupError {
            message,
            steps: Vec::new(),
        }
    }
}

/// Runs the task's `pre_run` steps in order (in `container` when given), recording each
/// in `dirs.pre_run` (the failing one too); the first failing step with `fail_on_error`
/// is the error.
pub(super) async fn run_pre_steps(
    task: &Task,
    dirs: &mut Dirs,
    container: Option<&DockerSandbox>,
) -> Result<(), String> {
    for step in &task.pre_run {
        let (record, failure) = execute_step(step, dirs, "pre_run", container).await?;
        dirs.pre_run.push(record);
        if let Some(failure) = failure {
            return Err(failure);
        }
    }
    Ok(())
}

/// Runs one pre_run / post_run shell step in the workspace (the task's PATH first) and
/// says what it did; a failure (non-zero exit, timeout) is an error when the step says
/// `fail_on_error`. With `container` (`driver: docker`) the step runs in it, in the
/// agent's folder, with an environment built from nothing (`PATH`, `HOME` = the CLI's
/// private home, `LANG`, `TERM`, the task's variables), as coder_eval runs it there.
pub(super) async fn run_step(
    step: &Step,
    dirs: &Dirs,
    what: &str,
    container: Option<&DockerSandbox>,
) -> Result<StepRecord, String> {
    match execute_step(step, dirs, what, container).await? {
        (_, Some(failure)) => Err(failure),
        (record, None) => Ok(record),
    }
}

/// [`run_step`]: its record, and the failure when the step failed with
/// `fail_on_error`; Err only when its shell could not run.
async fn execute_step(
    step: &Step,
    dirs: &Dirs,
    what: &str,
    container: Option<&DockerSandbox>,
) -> Result<(StepRecord, Option<String>), String> {
    let (workspace, env) = (&dirs.workspace, &dirs.env);
    let command = step.command.as_str();
    let host_path = crate::workspace::host_path();
    let started = std::time::Instant::now();
    let out = match container {
        None => {
            let vars = env.vars(&host_path);
            crate::process::run_shell(command, workspace, &vars, step.timeout, STEP_OUTPUT).await
        }
        Some(container) => {
            let path = env.path(&host_path).unwrap_or(host_path);
            let mut vars = vec![
                ("PATH".to_string(), format!("{path}:{CONTAINER_PATH}")),
                ("LANG".to_string(), "C.UTF-8".to_string()),
                ("TERM".to_string(), "dumb".to_string()),
                ("HOME".to_string(), dirs.home.display().to_string()),
            ];
            vars.extend(env.vars(&path).into_iter().filter(|(k, _)| k != "PATH"));
            container
                .run_shell(
                    command,
                    &container.in_container(workspace),
                    vars,
                    step.timeout,
                    STEP_OUTPUT,
                )
                .await
                .map_err(std::io::Error::other)
        }
    }
    .map_err(|e| format!("{what} `{command}`: {e}"))?;
    let record = StepRecord {
        phase: what.to_string(),
        command: command.to_string(),
        exit_code: out.exit_code,
        timed_out: out.timed_out,
        duration_ms: started.elapsed().as_millis() as u64,
        stdout_tail: tail(&out.stdout),
        stderr_tail: tail(&out.stderr),
    };
    if out.exit_code != Some(0) && step.fail_on_error {
        let failure = format!(
            "{what} `{command}` failed ({}): {}",
            if out.timed_out {
                "timed out".to_string()
            } else if out.interrupted {
                "interrupted".to_string()
            } else {
                format!("exit {:?}", out.exit_code)
            },
            out.stderr.trim()
        );
        return Ok((record, Some(failure)));
    }
    Ok((record, None))
}

/// Bytes of each stream a step keeps.
const STEP_OUTPUT: usize = 64 * 1024;

/// The last 4 KiB of a step's output, cut at a character boundary.
fn tail(text: &str) -> String {
    const KEEP: usize = 4096;
    if text.len() <= KEEP {
        return text.to_string();
    }
    let mut start = text.len() - KEEP;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_string()
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
