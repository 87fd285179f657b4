//! One command in the container: a Docker exec, its output as two byte streams, its
//! exit code, and the stop of every process it started.

use super::{DockerError, DockerSandbox};
use crate::process::{MARK_VAR, new_mark};
use bollard::Docker;
use bollard::container::LogOutput;
use bollard::exec::{StartExecOptions, StartExecResults};
use bollard::models::ExecConfig;
use futures_util::StreamExt;
use std::path::PathBuf;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWriteExt, DuplexStream, ReadBuf};

/// Bytes buffered per stream between the daemon and the reader.
const PIPE_BYTES: usize = 256 * 1024;
/// How often [`DockerExec::wait`] asks the daemon whether the exec ended (at once when
/// its output stream ends, which is when it exits unless it left processes behind).
const POLL: Duration = Duration::from_millis(20);

/// What to run: the launch plan's argv, environment, working folder, and stdin. Nothing of
/// the host's environment is added but the mark; Docker puts the image's own `ENV` under
/// `env` (which overrides it).
#[derive(Debug, Clone, Default)]
pub struct ExecRequest {
    /// Program and arguments; the program is looked up on `env`'s `PATH` in the container.
    pub argv: Vec<String>,
    /// The environment (`PATH` included: the image's is used otherwise).
    pub env: Vec<(String, String)>,
    /// The working folder (a path in the container: the workspace's host path works).
    pub cwd: PathBuf,
    /// Written to stdin, which is then closed; `None` = no stdin (reads see end of file).
    pub stdin: Option<Vec<u8>>,
}

/// A running exec. Read `stdout` and `stderr` (take them, like a child's pipes), then
/// [`wait`](Self::wait) for the exit code; [`stop`](Self::stop) ends every process the
/// exec started, wherever it went. Dropping it stops nothing: what it started runs until
/// a stop or the container's removal.
pub struct DockerExec {
    docker: Docker,
    container: String,
    id: String,
    mark: String,
    host_sees_processes: bool,
    /// Becomes `true` when the daemon closed the output stream.
    output_ended: tokio::sync::watch::Receiver<bool>,
    /// The command's stdout: bytes as the command writes them; end of file once every
    /// process holding it closed it.
    pub stdout: Option<ExecOutput>,
    /// The command's stderr, likewise.
    pub stderr: Option<ExecOutput>,
}

/// One output stream of an exec: an [`AsyncRead`], fed by the host as the daemon sends
/// (bounded: a reader that does not read slows the command, as a pipe would).
pub struct ExecOutput(DuplexStream);

impl AsyncRead for ExecOutput {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

pub(super) async fn start(
    sandbox: &DockerSandbox,
    request: ExecRequest,
) -> Result<DockerExec, DockerError> {
    let docker = sandbox.docker.clone();
    let mark = new_mark();
    let mut env: Vec<String> = request
        .env
        .iter()
        .filter(|(k, _)| k != MARK_VAR)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    env.push(format!("{MARK_VAR}={mark}"));
    let config = ExecConfig {
        attach_stdin: Some(request.stdin.is_some()),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        tty: Some(false),
        env: Some(env),
        cmd: Some(request.argv.clone()),
        user: Some(sandbox.user().to_string()),
        working_dir: Some(request.cwd.display().to_string()),
        ..Default::default()
    };
    let api = |what| move |source| DockerError::Api { what, source };
    let created = docker
        .create_exec(&sandbox.id, config)
        .await
        .map_err(api("create an exec"))?;
    let started = docker
        .start_exec(
            &created.id,
            Some(StartExecOptions {
                detach: false,
                tty: false,
                output_capacity: None,
            }),
        )
        .await
        .map_err(api("start an exec"))?;
    let StartExecResults::Attached {
        mut output,
        mut input,
    } = started
    else {
        unreachable!("an exec started without detach is attached");
    };
    let (out_reader, mut out_writer) = tokio::io::duplex(PIPE_BYTES);
    let (err_reader, mut err_writer) = tokio::io::duplex(PIPE_BYTES);
    let (ended_tx, output_ended) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        // A reader that went away stops being fed; the rest is still drained so the exec
        // never blocks on a full connection.
        let (mut out_open, mut err_open) = (true, true);
        while let Some(item) = output.next().await {
            match item {
                Ok(LogOutput::StdOut { message }) | Ok(LogOutput::Console { message }) => {
                    if out_open && out_writer.write_all(&message).await.is_err() {
                        out_open = false;
                    }
                }
                Ok(LogOutput::StdErr { message }) => {
                    if err_open && err_writer.write_all(&message).await.is_err() {
                        err_open = false;
                    }
                }
                Ok(LogOutput::StdIn { .. }) => {}
                Err(_) => break,
            }
        }
        let _ = ended_tx.send(true);
    });
    let stdin = request.stdin;
    tokio::spawn(async move {
        if let Some(bytes) = stdin {
            let _ = input.write_all(&bytes).await;
        }
        // Half-closes the connection: the command reads end of file.
        let _ = input.shutdown().await;
    });
    Ok(DockerExec {
        docker,
        container: sandbox.id.clone(),
        id: created.id,
        mark,
        host_sees_processes: sandbox.host_sees_processes,
        output_ended,
        stdout: Some(ExecOutput(out_reader)),
        stderr: Some(ExecOutput(err_reader)),
    })
}

impl DockerExec {
    /// The exec's mark: the value of [`MARK_VAR`] in the environment of every process it
    /// started.
    pub fn mark(&self) -> &str {
        &self.mark
    }

    /// The exec's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The command's pid in the host's PID namespace, once it started (0 before).
    pub async fn pid(&self) -> Result<i32, DockerError> {
        let info = self
            .docker
            .inspect_exec(&self.id)
            .await
            .map_err(|source| DockerError::Api {
                what: "inspect an exec",
                source,
            })?;
        Ok(info.pid.unwrap_or(0) as i32)
    }

    /// Waits until the command exited and returns its exit code (128 + n when signal n
    /// ended it). Cancel-safe: it only asks the daemon. It does not wait for the output
    /// streams: a process the command left behind may still hold them (stop it with
    /// [`stop`](Self::stop)).
    pub async fn wait(&self) -> Result<i64, DockerError> {
        loop {
            let info =
                self.docker
                    .inspect_exec(&self.id)
                    .await
                    .map_err(|source| DockerError::Api {
                        what: "inspect an exec",
                        source,
                    })?;
            if info.running == Some(false)
                && let Some(code) = info.exit_code
            {
                return Ok(code);
            }
            let mut ended = self.output_ended.clone();
            if *ended.borrow_and_update() {
                tokio::time::sleep(POLL).await;
            } else {
                let _ = tokio::time::timeout(POLL, ended.changed()).await;
            }
        }
    }

    /// Stops every process the exec started, the command itself and all it spawned,
    /// detached (`setsid`, `nohup`) or not: SIGTERM, up to `grace`, then SIGKILL until none
    /// is left. Returns how many processes it found (0 when the command had ended and left
    /// nothing). Through the host's process table when the host sees the container's
    /// processes, else by a script run in the container.
    pub async fn stop(&self, grace: Duration) -> Result<usize, DockerError> {
        if self.host_sees_processes {
            let pid = self.pid().await?;
            // The pid is only trusted while it carries this exec's mark.
            if pid > 0 && crate::process::carries_mark(pid, &self.mark) {
                let found = crate::process::stop_tree(pid, &self.mark, grace).await;
                return Ok(found.len());
            }
            // The command itself has ended: what is left carries the mark.
            return Ok(stop_marked(&self.mark, grace).await);
        }
        self.stop_in_container(grace).await
    }

    /// Reads stdout and stderr to their ends (those not taken) and waits for the exit
    /// code (for short commands: setup steps, criteria, tests).
    pub async fn output(&mut self) -> Result<(Vec<u8>, Vec<u8>, i64), DockerError> {
        use tokio::io::AsyncReadExt;
        let mut out = Vec::new();
        let mut err = Vec::new();
        let (mut o, mut e) = (self.stdout.take(), self.stderr.take());
        let read_out = async {
            if let Some(o) = o.as_mut() {
                let _ = o.read_to_end(&mut out).await;
            }
        };
        let read_err = async {
            if let Some(e) = e.as_mut() {
                let _ = e.read_to_end(&mut err).await;
            }
        };
        tokio::join!(read_out, read_err);
        let code = self.wait().await?;
        Ok((out, err, code))
    }

    /// [`stop`](Self::stop) by a `sh` script run in the container (what `stop` does when
    /// the host cannot see the container's processes): SIGTERM to every process whose
    /// environment holds the mark, up to `grace`, then SIGKILL to the rest. Needs `sh`,
    /// `tr` and `grep` in the image; `dd` reads each environment in one piece (see
    /// [`crate::process::marked`]), else `cat` does.
    pub async fn stop_in_container(&self, grace: Duration) -> Result<usize, DockerError> {
        let needle = format!("{MARK_VAR}={}", self.mark);
        let script = r#"sig=$1; needle=$2; n=0
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  [ "$p" = "$$" ] && continue
  if { dd if="$d/environ" bs=2097152 count=1 2>/dev/null || cat "$d/environ" 2>/dev/null; } \
      | tr '\0' '\n' | grep -qxF "$needle"; then
    kill -"$sig" "$p" 2>/dev/null && n=$((n+1))
  fi
done
echo $n"#;
        let signal = |sig: &'static str| {
            let needle = needle.clone();
            async move {
                let config = ExecConfig {
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    cmd: Some(vec![
                        "sh".into(),
                        "-c".into(),
                        script.into(),
                        "sh".into(),
                        sig.into(),
                        needle,
                    ]),
                    user: Some("0:0".into()),
                    ..Default::default()
                };
                let api = |what| move |source| DockerError::Api { what, source };
                let created = self
                    .docker
                    .create_exec(&self.container, config)
                    .await
                    .map_err(api("create an exec"))?;
                let mut text = String::new();
                if let StartExecResults::Attached { mut output, .. } = self
                    .docker
                    .start_exec(&created.id, None)
                    .await
                    .map_err(api("start an exec"))?
                {
                    while let Some(Ok(item)) = output.next().await {
                        if let LogOutput::StdOut { message } = item {
                            text.push_str(&String::from_utf8_lossy(&message));
                        }
                    }
                }
                Ok::<usize, DockerError>(text.trim().parse().unwrap_or(0))
            }
        };
        let found = signal("TERM").await?;
        if found == 0 {
            return Ok(0);
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if signal("0").await? == 0 {
                return Ok(found);
            }
        }
        let end = Instant::now() + crate::limits::StopPolicy::DEFAULT.give_up;
        while signal("KILL").await? > 0 && Instant::now() < end {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(found)
    }
}

/// SIGTERM to every process carrying `mark`, up to `grace` for them to go, then SIGKILL
/// until none is left (or [`crate::limits::StopPolicy::give_up`] more). Returns how many it found.
async fn stop_marked(mark: &str, grace: Duration) -> usize {
    let signal = |pids: &[i32], sig| {
        for &pid in pids {
            // SAFETY: plain syscall on a positive pid; one that is gone is ESRCH.
            unsafe {
                libc::kill(pid, sig);
            }
        }
    };
    let mut found = crate::process::marked(mark);
    signal(&found, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while !found.is_empty() && Instant::now() < deadline {
        if crate::process::marked(mark).is_empty() {
            return found.len();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let end = Instant::now() + crate::limits::StopPolicy::DEFAULT.give_up;
    loop {
        let alive = crate::process::marked(mark);
        if alive.is_empty() || Instant::now() >= end {
            break;
        }
        for pid in &alive {
            if !found.contains(pid) {
                found.push(*pid);
            }
        }
        signal(&alive, libc::SIGKILL);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    found.len()
}
