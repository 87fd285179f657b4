//! A PID namespace per agent turn (on by default; `coder-eval run --no-pid-namespace`
//! opts out): the CLI starts under an init, the first process (PID 1) of a namespace of
//! its own, made by util-linux `unshare` (`--pid --fork --kill-child --mount-proc`, plus
//! `--user --map-current-user` when the host is not root, which needs unprivileged user
//! namespaces). Whether the kernel allows it is probed once per host process.
//!
//! The init is Debian's `tini` (0.19, `scripts/setup.sh` installs it) run as
//! `tini -g -p SIGKILL -- CLI ARGS`: PID 1 ignores every signal it has no handler for,
//! so a CLI started as PID 1 would be deaf to the host's SIGTERM; tini handles
//! SIGTERM, SIGINT and SIGHUP (and the rest) by forwarding them to the CLI's process
//! group (`-g`), reaps the zombies of orphans, sets its own parent-death signal (`-p`),
//! and exits with the CLI's exit code, or 128 + N when a signal N ended the CLI (the
//! host reads that back as the signal: [`signal_from_init`]). Without `tini` on PATH the
//! CLI itself is PID 1, as before (a CLI deaf to SIGTERM then ends by the SIGKILL after
//! the grace), and a warning says so.
//!
//! What it adds to the process group and the environment mark (which stay, and are the
//! fallback where the kernel refuses a namespace):
//! - when the namespace's first process (the CLI) ends, the kernel SIGKILLs every other
//!   process in it: a process that cleared its environment (`env -i`), left the group
//!   (`setsid`) and lost its parent (a double fork) dies too;
//! - the `unshare` process the host starts has a parent-death signal (SIGKILL, set with
//!   `prctl(PR_SET_PDEATHSIG)` before it runs), and `--kill-child` gives PID 1 one too:
//!   when the host is SIGKILLed, `unshare` dies, then PID 1, then the whole namespace.
//!
//! The cost: two more processes (`unshare`, `tini`) and a fresh `/proc` mount per turn;
//! the `pid_namespace` bench prints it.

use std::path::PathBuf;
use std::sync::OnceLock;

/// How a turn's processes were held together, for `task.json`'s `cli.containment`.
pub(crate) const PID_NAMESPACE: &str = "pid_namespace";
/// The process group, the leader's descendants and the environment mark only.
pub(crate) const PROCESS_GROUP: &str = "process_group";

/// The `unshare` program and its flags, when a namespace can be made here.
#[derive(Debug, Clone)]
pub(crate) struct Unshare {
    pub program: PathBuf,
    pub flags: Vec<&'static str>,
    /// `tini`, the namespace's PID 1, when it is on PATH.
    pub init: Option<PathBuf>,
}

/// tini's flags and the CLI's parent, before the CLI's argv: tini forwards signals to its
/// child's process group (`-g`) and dies with its parent, `unshare` (`-p SIGKILL`); its
/// child is a shell that runs the CLI and exits with its status (128 + N after signal N).
/// The shell is there so that the CLI's parent is not PID 1: CLIs that watch for their
/// parent's death by `ppid == 1` (OpenCode, on a 10 s check) would kill themselves. The
/// shell's handler (`:`, not an ignore, which the CLI would inherit) keeps it waiting
/// for the CLI when the group is signalled, so the CLI gets its grace.
pub(crate) const INIT_PREFIX: [&str; 8] = [
    "-g",
    "-p",
    "SIGKILL",
    "--",
    "/bin/sh",
    "-c",
    "trap : TERM INT HUP; \"$@\"; exit $?",
    "coder-eval-init",
];

/// The signal that ended the CLI, read back from the exit code of its init (tini exits
/// 128 + N when signal N ended its child); `None` for an ordinary exit code.
pub(crate) fn signal_from_init(code: i32) -> Option<i32> {
    (129..=128 + 64).contains(&code).then_some(code - 128)
}

/// The first `name` file in the host's PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// The flags that make a PID namespace for a child, as this user.
fn flags() -> Vec<&'static str> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut flags = Vec::new();
    if !root {
        flags.extend(["--user", "--map-current-user"]);
    }
    flags.extend(["--pid", "--fork", "--kill-child", "--mount-proc"]);
    flags
}

/// `unshare` with its flags, when this kernel and user can make a PID namespace (probed
/// once per host process by running `unshare FLAGS -- true`); `None` otherwise, with
/// the reason.
pub(crate) fn unshare() -> Result<&'static Unshare, &'static str> {
    static PROBED: OnceLock<Result<Unshare, String>> = OnceLock::new();
    PROBED
        .get_or_init(|| {
            let program = on_path("unshare")
                .ok_or_else(|| "`unshare` (util-linux) is not on PATH".to_string())?;
            let flags = flags();
            let out = std::process::Command::new(&program)
                .args(&flags)
                .args(["--", "true"])
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| format!("`unshare` could not start: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "`unshare {}` failed: {}",
                    flags.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            Ok(Unshare {
                program,
                flags,
                init: on_path("tini"),
            })
        })
        .as_ref()
        .map_err(String::as_str)
}

/// Starts `cmd` (made with [`kill_with_parent`]) from the host's spawner thread, which
/// lives as long as the host process: the kernel sends the parent-death signal when the
/// *thread* that forked the child ends, not the process, and the threads of tokio's
/// blocking pool end after 10 s idle, which would SIGKILL a namespace mid-turn. Runs
/// on the caller's tokio runtime (`handle`), which reaps the child.
pub(crate) fn spawn_from_lasting_thread(
    cmd: tokio::process::Command,
    handle: tokio::runtime::Handle,
) -> std::io::Result<tokio::process::Child> {
    type Request = (
        tokio::process::Command,
        tokio::runtime::Handle,
        std::sync::mpsc::Sender<std::io::Result<tokio::process::Child>>,
    );
    static SPAWNER: OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<Request>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("coder-eval-spawner".into())
            .spawn(move || {
                for (mut cmd, handle, reply) in rx {
                    let _runtime = handle.enter();
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("could not start the spawner thread");
        std::sync::Mutex::new(tx)
    });
    let (reply, answer) = std::sync::mpsc::channel();
    let sent = spawner
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .send((cmd, handle, reply));
    match sent {
        Ok(()) => answer
            .recv()
            .unwrap_or_else(|_| Err(std::io::Error::other("the spawner thread has ended"))),
        Err(std::sync::mpsc::SendError((mut cmd, _, _))) => cmd.spawn(),
    }
}

/// Makes the process `cmd` starts receive SIGKILL when the host thread that started it
/// ends (the host dying, even by SIGKILL, included): start it with
/// [`spawn_from_lasting_thread`].
pub(crate) fn kill_with_parent(cmd: &mut tokio::process::Command) {
    // SAFETY: prctl is async-signal-safe and only sets the new process's parent-death
    // signal; nothing is allocated between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
