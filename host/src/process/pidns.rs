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

/// tini's flags before the CLI's argv: forward signals to the CLI's process group, and
/// die with its parent (`unshare`).
pub(crate) const INIT_FLAGS: [&str; 4] = ["-g", "-p", "SIGKILL", "--"];

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

/// Makes the process `cmd` starts receive SIGKILL when the host thread that started it
/// ends (the host dying, even by SIGKILL, included).
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
