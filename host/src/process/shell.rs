//! One shell command run to completion in its own marked process group: a timeout that
//! stops the whole group, stdout and stderr each capped.

use super::{LiveGroup, MARK_VAR, new_mark, own_group, stop_group, stop_tree};
use crate::limits::StopPolicy;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// The outcome of [`run_shell`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellOutcome {
    /// The exit code; `None` when a signal ended it or it timed out.
    pub exit_code: Option<i32>,
    /// Stdout, lossy UTF-8, at most `max_output` bytes.
    pub stdout: String,
    /// Stderr, lossy UTF-8, at most `max_output` bytes.
    pub stderr: String,
    /// The timeout fired and the group was stopped.
    pub timed_out: bool,
    /// The host was interrupted (SIGINT, SIGTERM, SIGHUP: [`crate::interrupt`]) and the
    /// group was stopped.
    pub interrupted: bool,
}

/// Runs `sh -c COMMAND` in `cwd` in its own process group, with `env` and a fresh
/// [`MARK_VAR`] added to the host's environment, reading stdout and stderr concurrently
/// with waiting. On timeout the whole group is stopped (SIGTERM, grace, SIGKILL); when the
/// shell ends, whatever it left running (in its group, or detached but marked) is stopped
/// too. Output past `max_output` bytes per stream is read and dropped. Errors: the shell
/// could not be started, or the host is interrupted already ([`crate::interrupt`]; kind
/// `Interrupted`: nothing is started then).
pub(crate) async fn run_shell(
    command: &str,
    cwd: &Path,
    env: &[(String, String)],
    timeout: Duration,
    max_output: usize,
) -> std::io::Result<ShellOutcome> {
    if let Some(signal) = crate::interrupt::raised() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            format!(
                "not started: the run was interrupted ({})",
                crate::interrupt::name(signal)
            ),
        ));
    }
    let mark = new_mark();
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env(MARK_VAR, &mark);
    own_group(&mut cmd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn()?;
    let pgid = child.id().map(|id| id as i32);
    let _live = pgid.map(|pgid| LiveGroup::register(pgid, &mark));
    let stdout = child
        .stdout
        .take()
        .map(|s| tokio::spawn(read_capped(s, max_output)));
    let stderr = child
        .stderr
        .take()
        .map(|s| tokio::spawn(read_capped(s, max_output)));
    // The shell ends, or its time is up, or the host is interrupted (a signal): the
    // latter two stop its group.
    let ended = tokio::select! {
        status = tokio::time::timeout(timeout, child.wait()) => status.ok(),
        _ = crate::interrupt::wait() => None,
    };
    let (exit_code, timed_out, interrupted) = match ended {
        Some(status) => (status?.code(), false, false),
        None => {
            if let Some(pgid) = pgid {
                stop_group(pgid, StopPolicy::DEFAULT.kill_grace).await;
            }
            let _ = child.wait().await;
            let interrupted = crate::interrupt::raised().is_some();
            (None, !interrupted, interrupted)
        }
    };
    // The shell is gone; what it left running (holding the pipes or detached) goes too.
    if let Some(pgid) = pgid {
        stop_tree(pgid, &mark, StopPolicy::DEFAULT.sweep_grace).await;
    }
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

pub(crate) async fn read_capped<R: tokio::io::AsyncRead + Unpin>(
    mut reader: R,
    max: usize,
) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = max.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}
