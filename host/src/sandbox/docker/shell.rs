//! Shell commands of the task itself run in its container, with coder_eval's meaning under
//! `driver: docker` (where the whole run happens in the container): the `pre_run` and
//! `post_run` steps and the commands of criteria (`run_command`, `pytest`,
//! `pylint_score`, `import_check`, `reference_comparison`). Each is an exec of
//! `sh -c COMMAND` with an environment built from nothing, bounded by a timeout that
//! stops every process it started, and followed by a sweep of what it left running.

use super::{DockerError, DockerSandbox, ExecRequest};
use crate::limits::StopPolicy;
use crate::process::{ShellOutcome, read_capped};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `PATH` appended after the task's own entries in the container: the usual Debian
/// folders, so the image's tools are found whatever the host's `PATH` holds.
pub(crate) const CONTAINER_PATH: &str =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

impl DockerSandbox {
    /// Runs `sh -c command` in the container in folder `cwd` (a container path: see
    /// [`in_container`](Self::in_container)) with exactly `env` (nothing of the host's
    /// environment but what `env` holds), as the workspace's owner with the agent's
    /// isolation. On `timeout` every process it started is stopped (SIGTERM, grace,
    /// SIGKILL) and `timed_out` is set; when it ends, whatever it left running is stopped
    /// too. At most `max_output` bytes of each stream are kept. Errors: the exec could not
    /// be created or started.
    pub(crate) async fn run_shell(
        &self,
        command: &str,
        cwd: &Path,
        env: Vec<(String, String)>,
        timeout: Duration,
        max_output: usize,
    ) -> Result<ShellOutcome, DockerError> {
        let mut exec = self
            .exec(ExecRequest {
                argv: vec!["sh".into(), "-c".into(), command.into()],
                env,
                cwd: cwd.to_path_buf(),
                stdin: None,
            })
            .await?;
        let stdout = exec
            .stdout
            .take()
            .map(|s| tokio::spawn(read_capped(s, max_output)));
        let stderr = exec
            .stderr
            .take()
            .map(|s| tokio::spawn(read_capped(s, max_output)));
        let policy = StopPolicy::DEFAULT;
        // The command ends, or its time is up, or the host is interrupted (a signal,
        // `crate::interrupt`): the latter two stop it, as a host shell step is stopped.
        let ended = tokio::select! {
            code = tokio::time::timeout(timeout, exec.wait()) => code.ok(),
            _ = crate::interrupt::wait() => None,
        };
        let (exit_code, timed_out, interrupted) = match ended {
            Some(code) => (Some(code? as i32), false, false),
            None => {
                exec.stop(policy.kill_grace).await?;
                let interrupted = crate::interrupt::raised().is_some();
                (None, !interrupted, interrupted)
            }
        };
        // The shell is gone; what it left running (holding the streams or detached) too.
        exec.stop(policy.sweep_grace).await?;
        let join = |h: Option<tokio::task::JoinHandle<Vec<u8>>>| async move {
            match h {
                Some(h) => String::from_utf8_lossy(&h.await.unwrap_or_default()).into_owned(),
                None => String::new(),
            }
        };
        Ok(ShellOutcome {
            exit_code,
            stdout: join(stdout).await,
            stderr: join(stderr).await,
            timed_out,
            interrupted,
        })
    }

    /// Where host path `path` is seen by commands in the container: the workspace (and
    /// what is under it) is the agent's folder (`working_dir` when the task sets one);
    /// every other path is the same path (the workspace, HOME and what
    /// [`copy_path_in`](Self::copy_path_in) copied are at their host paths).
    pub(crate) fn in_container(&self, path: &Path) -> PathBuf {
        match &self.copy_back {
            Some(workspace) => match path.strip_prefix(workspace) {
                Ok(rest) => self.agent_dir.join(rest),
                Err(_) => path.to_path_buf(),
            },
            None => path.to_path_buf(),
        }
    }

    /// Copies host folder (or file) `path` into the container at the same path, for the
    /// commands that run after the agent: the task's folder (`$TASK_DIR`) and its staged
    /// reference (`$REFERENCE_DIR`), which the agent never saw.
    pub(crate) async fn copy_path_in(&self, path: &Path) -> Result<(), DockerError> {
        super::workdir::copy_path_in(&self.docker, &self.id, path).await
    }
}
