//! Running a command for a host-native criterion (`run_command`, `pytest`,
//! `import_check`, `reference_comparison`): `sh -c` in a given folder, in its own process
//! group, stopped as a whole (SIGTERM, grace, SIGKILL) on timeout, with a minimal
//! environment built from nothing.
//!
//! The environment: `PATH` (the task's environment's when [`CommandEnv::path`] is set —
//! e.g. its virtualenv's `bin` first — else the host's), `HOME`, `LANG`, `TERM` from the
//! host, the criterion's own variables, and the host's process mark
//! (`CODER_EVAL_PROCESS_MARK`) so whatever the command leaves running is found and
//! stopped. The host's secrets (API keys) do not reach code the agent wrote.
//!
//! Under `sandbox.driver: docker` ([`CommandEnv::container`]) the command runs in the
//! task's container instead (coder_eval's meaning: there the whole run happens in the
//! container), with the same environment (`PATH` ending in the container's usual folders),
//! in the container's view of `cwd` (the agent's `working_dir` for the workspace).

use crate::process::{MARK_VAR, ShellOutcome, run_shell};
use crate::sandbox::docker::{CONTAINER_PATH, DockerSandbox};
use std::path::Path;
use std::time::Duration;

/// Bytes of each stream read from a command.
pub(crate) const MAX_OUTPUT: usize = 1 << 20;
/// Characters of each stream shown in a criterion's details.
pub(crate) const SHOWN: usize = 4000;

/// The environment a criterion's command sees.
#[derive(Debug, Clone, Default)]
pub struct CommandEnv<'a> {
    /// `PATH` for the command; `None` = the host's.
    pub path: Option<&'a str>,
    /// Extra variables (the criterion's `env`, `REFERENCE_DIR`, ...).
    pub vars: Vec<(String, String)>,
    /// The task's container (`sandbox.driver: docker`): commands run in it; `None` = on
    /// the host.
    pub container: Option<&'a DockerSandbox>,
}

/// Single-quotes `s` for `sh`.
pub(crate) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Runs `command` with `sh -c` in `cwd` under `env` (see the module docs), for at most
/// `timeout`. Errors: the shell could not be started.
pub(crate) async fn run(
    command: &str,
    cwd: &Path,
    env: &CommandEnv<'_>,
    timeout: Duration,
) -> std::io::Result<ShellOutcome> {
    if let Some(container) = env.container {
        return run_in(container, command, cwd, env, timeout).await;
    }
    // `run_shell` adds to the host's environment; start over from a minimal one.
    let mut wrapped = String::from("exec env -i");
    let host_path = std::env::var("PATH").ok();
    if let Some(path) = env.path.or(host_path.as_deref()) {
        wrapped.push_str(&format!(" PATH={}", quote(path)));
    }
    for key in ["HOME", "LANG", "TERM"] {
        if let Some(value) = std::env::var_os(key) {
            wrapped.push_str(&format!(" {key}={}", quote(&value.to_string_lossy())));
        }
    }
    for (key, value) in &env.vars {
        wrapped.push_str(&format!(" {}={}", quote(key), quote(value)));
    }
    // The process mark `run_shell` set survives the cleared environment, so whatever the
    // check leaves running is found and stopped when it ends.
    wrapped.push_str(&format!(" {MARK_VAR}=\"${MARK_VAR}\""));
    wrapped.push_str(&format!(" sh -c {}", quote(command)));
    run_shell(&wrapped, cwd, &[], timeout, MAX_OUTPUT).await
}

/// [`run`] in the task's container: the same variables, built from nothing.
async fn run_in(
    container: &DockerSandbox,
    command: &str,
    cwd: &Path,
    env: &CommandEnv<'_>,
    timeout: Duration,
) -> std::io::Result<ShellOutcome> {
    let host_path = std::env::var("PATH").unwrap_or_default();
    let path = env.path.unwrap_or(&host_path);
    let mut vars = vec![("PATH".to_string(), format!("{path}:{CONTAINER_PATH}"))];
    for key in ["HOME", "LANG", "TERM"] {
        if let Some(value) = std::env::var_os(key) {
            vars.push((key.to_string(), value.to_string_lossy().into_owned()));
        }
    }
    vars.extend(env.vars.iter().cloned());
    container
        .run_shell(
            command,
            &container.in_container(cwd),
            vars,
            timeout,
            MAX_OUTPUT,
        )
        .await
        .map_err(std::io::Error::other)
}

/// `label:` and the text (at most [`SHOWN`] characters), or `label: (empty)`.
pub fn stream(label: &str, text: &str) -> String {
    if text.is_empty() {
        return format!("{label}: (empty)");
    }
    let shown: String = text.chars().take(SHOWN).collect();
    let more = text.chars().count().saturating_sub(SHOWN);
    if more > 0 {
        format!("{label}:\n{shown}… ({more} more characters)")
    } else {
        format!("{label}:\n{shown}")
    }
}

/// The exit code as text: the number, or `none (killed)`.
pub(crate) fn exit_text(out: &ShellOutcome) -> String {
    out.exit_code
        .map_or("none (killed)".to_string(), |c| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn path_override_and_no_host_secrets() {
        // SAFETY: tests in this binary do not read this variable concurrently.
        unsafe { std::env::set_var("CODER_EVAL_EXEC_SECRET", "s3cret") };
        let env = CommandEnv {
            path: Some("/nonexistent-bin:/usr/bin:/bin"),
            vars: vec![("EXTRA".into(), "a 'b'".into())],
            container: None,
        };
        let out = run(
            "echo \"$PATH|$EXTRA|$CODER_EVAL_EXEC_SECRET\"",
            &std::env::temp_dir(),
            &env,
            Duration::from_secs(10),
        )
        .await
        .unwrap();
        assert_eq!(out.stdout.trim(), "/nonexistent-bin:/usr/bin:/bin|a 'b'|");
    }
}
