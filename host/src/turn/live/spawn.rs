//! Starting a turn's CLI: as a child of the host in its own process group (and PID
//! namespace, when asked and allowed), or as an exec in the task's container; and the
//! readers that stamp its stdout and stderr chunks on receipt.

use super::{Chunk, LaunchSpec};
use crate::process::{LiveGroup, MARK_VAR, new_mark, own_group, pidns};
use crate::sandbox::docker::DockerExec;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// The CLI as a child of the host, in its own process group (and PID namespace, when
/// asked and allowed): the child, its mark, its group, the group's registration for a
/// second interrupt, and what holds its processes ([`pidns::PID_NAMESPACE`] or
/// [`pidns::PROCESS_GROUP`]), and whether the namespace's init started it.
#[allow(clippy::type_complexity)]
pub(super) fn spawn_local(
    spec: &LaunchSpec,
    tx: mpsc::UnboundedSender<Chunk>,
    t0: Instant,
) -> std::io::Result<(
    tokio::process::Child,
    String,
    Option<i32>,
    Option<LiveGroup>,
    &'static str,
    bool,
)> {
    let mark = new_mark();
    let namespace = if spec.pid_namespace {
        match pidns::unshare() {
            Ok(unshare) => Some(unshare),
            Err(why) => {
                warn_once(why);
                None
            }
        }
    } else {
        None
    };
    if namespace.is_some() {
        // Inside the namespace a missing program is the init's exit 127, not a failed
        // start: refuse it here, as a plain start would.
        runnable(spec)?;
    }
    let mut cmd = match namespace {
        Some(unshare) => {
            let mut cmd = tokio::process::Command::new(&unshare.program);
            cmd.args(&unshare.flags).arg("--");
            match &unshare.init {
                Some(tini) => {
                    cmd.arg(tini).args(pidns::INIT_PREFIX);
                }
                None => warn_no_init(),
            }
            cmd.arg(&spec.program);
            // The host dying kills `unshare`, whose death kills PID 1 (`--kill-child`),
            // whose death kills the namespace.
            pidns::kill_with_parent(&mut cmd);
            cmd
        }
        None => tokio::process::Command::new(&spec.program),
    };
    let init = namespace.is_some_and(|u| u.init.is_some());
    let held = if namespace.is_some() {
        pidns::PID_NAMESPACE
    } else {
        pidns::PROCESS_GROUP
    };
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env(MARK_VAR, &mark);
    own_group(&mut cmd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if spec.stdin.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = if namespace.is_some() {
        pidns::spawn_from_lasting_thread(cmd, tokio::runtime::Handle::current())?
    } else {
        cmd.spawn()?
    };
    let pgid = child.id().map(|id| id as i32);
    // Until the group is stopped and reaped, a second Ctrl-C can kill it at once.
    let live = pgid.map(|pgid| LiveGroup::register(pgid, &mark));
    if let (Some(text), Some(mut stdin)) = (spec.stdin.clone(), child.stdin.take()) {
        tokio::spawn(async move {
            let _ = stdin.write_all(text.as_bytes()).await;
        });
    }
    spawn_reader(child.stdout.take().expect("piped"), tx.clone(), true, t0);
    spawn_reader(child.stderr.take().expect("piped"), tx, false, t0);
    Ok((child, mark, pgid, live, held, init))
}

/// Says once per host process why `--pid-namespace` falls back to the process group
/// and the mark.
fn warn_once(why: &str) {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        eprintln!(
            "warning: no PID namespace can be made here ({why}); the \
             process group and the process mark hold each task's processes instead \
             (task.json: cli.containment)"
        );
    });
}

/// Says once per host process that the namespace has no init (no `tini` on PATH).
fn warn_no_init() {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        eprintln!(
            "warning: `tini` is not on PATH (scripts/setup.sh installs it): each CLI is PID 1 \
             of its namespace itself, deaf to a SIGTERM it has no handler for (it ends by \
             SIGKILL after the grace instead)"
        );
    });
}

/// The running CLI: a child of the host (`true` when started under the namespace's init,
/// whose exit code 128 + N means signal N), or an exec in the task's container.
pub(super) enum Agent {
    Local(tokio::process::Child, bool),
    Container(Arc<DockerExec>),
}

impl Agent {
    /// Waits for the CLI's own process to end: (exit code, signal).
    pub(super) async fn wait(&mut self) -> std::io::Result<(Option<i32>, Option<i32>)> {
        use std::os::unix::process::ExitStatusExt;
        match self {
            Agent::Local(child, init) => {
                let status = child.wait().await?;
                match status.code().and_then(pidns::signal_from_init) {
                    Some(signal) if *init => Ok((None, Some(signal))),
                    _ => Ok((status.code(), status.signal())),
                }
            }
            Agent::Container(exec) => {
                let code = exec.wait().await.map_err(std::io::Error::other)?;
                Ok((Some(i32::try_from(code).unwrap_or(i32::MAX)), None))
            }
        }
    }
}

/// Reads a pipe in chunks, stamping each on receipt with the turn's one clock.
pub(super) fn spawn_reader<R: AsyncRead + Unpin + Send + 'static>(
    mut reader: R,
    tx: mpsc::UnboundedSender<Chunk>,
    stdout: bool,
    t0: Instant,
) {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => {
                    let _ = tx.send(if stdout { Chunk::OutEof } else { Chunk::ErrEof });
                    return;
                }
                Ok(n) => {
                    let at = t0.elapsed().as_micros() as u64;
                    let bytes = buf[..n].to_vec();
                    let _ = tx.send(if stdout {
                        Chunk::Out(bytes, at)
                    } else {
                        Chunk::Err(bytes, at)
                    });
                }
            }
        }
    });
}

/// `Ok` when `spec.program` names an executable file: a path as it is, a bare name
/// through the CLI's own `PATH` (else the host's). The error is the one a plain start
/// would give: `NotFound` ("no such executable") when there is no such file,
/// `PermissionDenied` ("not executable") when there is one that cannot be run (no execute
/// permission, a folder). The run checks it before a local turn (`run::launch::runnable`),
/// so a CLI that is not there is a launch error whichever way it was named.
pub(crate) fn runnable(spec: &LaunchSpec) -> std::io::Result<()> {
    let program = &spec.program;
    let candidates: Vec<std::path::PathBuf> = if program.components().count() > 1 {
        vec![program.clone()]
    } else {
        let path = spec
            .env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| std::ffi::OsString::from(v))
            .or_else(|| std::env::var_os("PATH"))
            .unwrap_or_default();
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .collect()
    };
    let mut not_runnable = None;
    for candidate in &candidates {
        match crate::locate::executable(candidate) {
            Ok(()) => return Ok(()),
            Err(why) if not_runnable.is_none() && candidate.exists() => {
                not_runnable = Some((candidate.clone(), why));
            }
            Err(_) => {}
        }
    }
    Err(match not_runnable {
        Some((path, why)) => std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{}: not executable ({why})", path.display()),
        ),
        None => std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{}: no such executable", program.display()),
        ),
    })
}
