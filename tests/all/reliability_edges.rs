//! The host's edges that issue 17 left open: a PID namespace with an init by default, a
//! closed stderr, write faults, and the stop paths and limits exercised end to end. Each
//! test drives the real binary against a stand-in CLI (a script printing a recorded
//! Claude Code stream), so nothing leaves the machine.

use crate::support::{bin, corpus, scratch};
use coder_eval::results::TaskResult;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A stand-in CLI: answers `--version`, else runs `body` (`{HELLO}` = the recorded
/// Claude Code stream of a successful turn).
pub fn cli(dir: &Path, body: &str) -> PathBuf {
    let cli = dir.join("cli.sh");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        &cli,
        format!(
            "#!/bin/bash\nif [ \"$1\" = \"--version\" ]; then echo 'stand-in 1.0'; exit 0; fi\n{}\n",
            body.replace(
                "{HELLO}",
                &corpus("live/claude/hello.jsonl").display().to_string()
            )
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    cli
}

/// A task file `id` with `extra` YAML lines.
pub fn task(dir: &Path, id: &str, extra: &str) -> PathBuf {
    let path = dir.join(format!("{id}.yaml"));
    std::fs::write(&path, format!("task_id: {id}\ninitial_prompt: hi\n{extra}")).unwrap();
    path
}

/// `coder-eval run TASK --harness claude-code --cli CLI --out OUT EXTRA…`, waited for.
pub fn run(task: &Path, cli: &Path, out: &Path, extra: &[&str]) -> Output {
    Command::new(bin())
        .arg("run")
        .arg(task)
        .args(["--harness", "claude-code", "--cli"])
        .arg(cli)
        .arg("--out")
        .arg(out)
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

pub fn result(out: &Path, id: &str) -> TaskResult {
    let path = out.join(id).join("claude-code/task.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn pid_namespace_available() -> bool {
    Command::new("unshare")
        .args(if unsafe { libc::geteuid() } == 0 {
            &[][..]
        } else {
            &["--user", "--map-current-user"][..]
        })
        .args([
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

/// By default (no flag) each CLI runs in a PID namespace of its own under an init that
/// forwards the host's SIGTERM: a CLI with no SIGTERM handler (`exec sleep`, which as
/// PID 1 would be deaf to it) stopped by its turn_timeout dies of that SIGTERM, not of
/// the SIGKILL after the grace; `--no-pid-namespace` opts out.
#[test]
fn by_default_a_cli_runs_in_a_pid_namespace_whose_init_forwards_sigterm() {
    if !pid_namespace_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must be able to make a PID namespace"
        );
        eprintln!("note: no PID namespace can be made here; the test has nothing to check");
        return;
    }
    let dir = scratch("pidns-default");
    let cli = cli(&dir, "head -n 2 {HELLO}\nexec sleep 300");
    let task = task(&dir, "deaf", "run_limits: {turn_timeout: 3}\n");
    let o = run(&task, &cli, &dir.join("out"), &[]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r = result(&dir.join("out"), "deaf");
    assert_eq!(r.cli.containment.as_deref(), Some("pid_namespace"));
    assert_eq!(
        r.stop.as_ref().map(|s| s.reason.as_str()),
        Some("turn_timeout")
    );
    let exit = r.turn.as_ref().and_then(|t| t.exit).expect("exit");
    assert_eq!(
        (exit.code, exit.signal),
        (None, Some(libc::SIGTERM)),
        "{exit:?}"
    );

    let o = run(&task, &cli, &dir.join("out-plain"), &["--no-pid-namespace"]);
    assert_eq!(o.status.code(), Some(1));
    let r = result(&dir.join("out-plain"), "deaf");
    assert_eq!(r.cli.containment.as_deref(), Some("process_group"));
}

/// A stderr the host cannot write does not stop it: with the pipe's reader gone
/// (`2>&1 | head -1` style) and with stderr closed outright (`2>&-`), a run that prints
/// its summary to stderr ends with its own exit code (no "failed printing
/// to stderr" panic, 101) and a complete task.json. The stand-in CLI is given as a
/// relative path (`./cli.sh`), found all the same from the task's workspace.
#[test]
fn a_closed_stderr_does_not_stop_the_run() {
    let dir = scratch("closed-stderr");
    cli(&dir, "cat {HELLO}");
    let task = task(&dir, "a", "");
    let args = |out: &str| -> Vec<String> {
        [
            "run",
            task.to_str().unwrap(),
            "--harness",
            "claude-code",
            "--cli",
            "./cli.sh",
            "--out",
            dir.join(out).to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    // The reader of stderr is gone before the host writes to it.
    let mut child = Command::new(bin())
        .args(args("out-pipe"))
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
    let r = result(&dir.join("out-pipe"), "a");
    assert_eq!(r.status, coder_eval::results::TaskStatus::Success);
    // stderr closed outright: the host's next file must not become its stderr.
    let status = Command::new("bash")
        .arg("-c")
        .arg("exec \"$@\" 2>&-")
        .arg("bash")
        .arg(bin())
        .args(args("out-closed"))
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
    let r = result(&dir.join("out-closed"), "a");
    assert_eq!(r.status, coder_eval::results::TaskStatus::Success);
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out-closed/run.json")).unwrap())
            .unwrap();
    assert_eq!(run["rows"].as_array().map(Vec::len), Some(1), "{run}");
}
