//! The task's container (`sandbox.driver: docker`) around the turn: started after setup,
//! given what the commands after the agent need, and the error every failure of it
//! becomes. The run removes it once graded.

use super::Prepared;
use super::error::{Cause, RunError};
use super::setup::Dirs;
use crate::sandbox::docker::{self, DockerError, DockerNetwork, DockerSandbox, SandboxRequest};
use crate::task::Task;
use coder_eval_scripted_model::ScriptedModel;
use std::path::{Path, PathBuf};

/// A container failure as the run's error: a setup error naming the driver.
pub(super) fn failed(e: DockerError) -> RunError {
    RunError::Setup(Cause(format!("sandbox.driver: docker: {e}")))
}

/// The container network the task runs with: `none` when the task sets
/// `sandbox.network_enabled: false` or the whole run is in a network namespace of its own
/// (`--isolate-network`; Docker's `host` mode would be the daemon's network, not the run's),
/// else `sandbox.docker.network` (default `bridge`; `llm_only` runs as `none`). The scripted model's port is
/// forwarded into a `none` container either way.
pub(crate) fn effective_network(task: &Task) -> DockerNetwork {
    let isolated_run = std::env::var_os("CODER_EVAL_NETNS").is_some();
    if task.sandbox.network_enabled == Some(false) || isolated_run {
        return DockerNetwork::None;
    }
    task.sandbox
        .docker
        .as_ref()
        .map(|d| d.network())
        .unwrap_or_default()
}

/// Starts the task's container: the workspace and HOME at their own paths, the agent CLIs
/// and `node` read-only, the scripted model's port forwarded in. A failed image build
/// leaves its log in `docker.log`.
pub(super) async fn start(
    p: &Prepared,
    dirs: &Dirs,
    program: PathBuf,
    model: Option<&ScriptedModel>,
    dir: &Path,
) -> Result<DockerSandbox, RunError> {
    // The CLI program's `node_modules` (the pinned CLIs), at the path the launch plan
    // names and at its real path (node resolves symlinks), else the program alone.
    let mut read_only = docker::host_node_paths();
    let tree = program
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .unwrap_or(&program)
        .to_path_buf();
    if let Ok(real) = tree.canonicalize() {
        read_only.push(real);
    }
    read_only.push(tree);
    read_only.sort();
    read_only.dedup();
    let request = SandboxRequest {
        task_id: p.task.task_id.replace('/', "-"),
        task_dir: p.task.dir.clone(),
        workspace: dirs.workspace.clone(),
        home: dirs.home.clone(),
        read_only,
        limits: p.task.sandbox.docker_limits(),
    };
    let mut spec = p.task.sandbox.docker.clone().unwrap_or_default();
    spec.network = Some(effective_network(&p.task));
    if spec.network == Some(DockerNetwork::LlmOnly) && model.is_none() {
        return Err(RunError::Refused(Cause(
            "sandbox.docker.network: llm_only reaches the scripted model only here (there is \
             no egress allowlist proxy for a real model API): play a scripted model, or use \
             network: bridge"
                .into(),
        )));
    }
    let sandbox = match DockerSandbox::prepare(&spec, &request).await {
        Ok(sandbox) => sandbox,
        Err(e) => {
            if let DockerError::Build { log, .. } = &e {
                let _ = std::fs::write(dir.join("docker.log"), log);
            }
            return Err(failed(e));
        }
    };
    if let Some(model) = model {
        sandbox.forward_host_port(model.port()).map_err(failed)?;
    }
    Ok(sandbox)
}

/// Once the agent has ended: the task's folder (`$TASK_DIR`) and its staged reference
/// (`$REFERENCE_DIR`) are copied into the container at their host paths when a criterion
/// or a `post_run` step runs commands there (the agent never saw them).
pub(super) async fn after_turn(
    container: &DockerSandbox,
    task: &Task,
    reference_dir: Option<&Path>,
) -> Result<(), RunError> {
    let runs_commands =
        !task.post_run.is_empty() || task.success_criteria.iter().any(|c| !c.is_wasm());
    if !runs_commands {
        return Ok(());
    }
    container.copy_path_in(&task.dir).await.map_err(failed)?;
    if let Some(reference) = reference_dir {
        container.copy_path_in(reference).await.map_err(failed)?;
    }
    Ok(())
}
