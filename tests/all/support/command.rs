//! Running the `coder-eval` binary from a test and reading what it wrote: the output of a
//! run shown in a failed assertion, `--isolate-network` where the machine has it, a
//! unit's `task.json` and a run's `run.json`, an executable stand-in script, and whether
//! the machine can make a PID namespace.

use super::bin;
use coder_eval::results::{RunSummary, TaskResult};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// A finished command's exit status, stdout and stderr, for an assertion's message.
pub fn show(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Adds `--isolate-network` to `cmd` where the machine can make a network namespace.
pub fn isolate(cmd: &mut Command) -> &mut Command {
    if crate::live_claude::netns_available() {
        cmd.arg("--isolate-network");
    }
    cmd
}

/// `coder-eval ARGS EXTRA… [--isolate-network]`, waited for.
pub fn run_isolated(args: &[&str], extra: &[&Path]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args).args(extra);
    isolate(&mut cmd).output().expect("coder-eval runs")
}

/// A unit's `task.json` at `path`; panics naming the file when it is missing or unreadable.
pub fn task_json(path: &Path) -> TaskResult {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `run.json` of the run folder `out`.
pub fn summary(out: &Path) -> RunSummary {
    serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
}

/// Writes `script` to `path` and makes it executable (mode 0755).
pub fn executable(path: &Path, script: &str) {
    std::fs::write(path, script).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// Whether this machine can make a PID namespace with its own `/proc`
/// as this user, which `--pid-namespace` needs (`unshare --pid --fork --kill-child
/// --mount-proc`, in a user namespace when not root).
pub fn pid_namespace_available() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut cmd = Command::new("unshare");
    if !root {
        cmd.args(["--user", "--map-current-user"]);
    }
    cmd.args([
        "--pid",
        "--fork",
        "--kill-child",
        "--mount-proc",
        "--",
        "true",
    ])
    .stderr(Stdio::null())
    .status()
    .is_ok_and(|s| s.success())
}
