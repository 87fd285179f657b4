//! The harness@0.2.0 agent fields reach the launch plan of the real CLI (against the
//! scripted model): the host takes what each harness honours from its component's
//! `describe()` and hands the fields over (tasks/agent_fields/).

use crate::live_claude::netns_available;
use crate::support::{bin, root, scratch};
use coder_eval::results::{TaskResult, TaskStatus};
use std::process::Command;

fn run(task: &str, name: &str) -> TaskResult {
    let out = scratch(&format!("agent-fields-{name}"));
    let mut cmd = Command::new(bin());
    cmd.arg("run")
        .arg(root().join("tasks/agent_fields").join(task))
        .arg("--out")
        .arg(&out);
    if netns_available() {
        cmd.arg("--isolate-network");
    }
    let output = cmd.output().unwrap();
    let harness = name.replace('_', "-");
    let path = out
        .join(format!("agent_fields_{name}"))
        .join(&harness)
        .join("task.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}\n{}",
            path.display(),
            String::from_utf8_lossy(&output.stderr)
        )
    }))
    .unwrap()
}

#[test]
fn new_agent_fields_reach_the_cli_command_line() {
    let plugin = root()
        .join("tasks/coder_eval/shared/plugin")
        .canonicalize()
        .unwrap();
    // The folder after `flag` in argv, resolved.
    let after = |r: &TaskResult, flag: &str| {
        let i = r.cli.argv.iter().position(|a| a == flag)?;
        std::fs::canonicalize(r.cli.argv.get(i + 1)?).ok()
    };
    let r = run("claude_code.yaml", "claude_code");
    let argv = r.cli.argv.join(" ");
    assert_eq!(r.status, TaskStatus::Success, "{:?} {argv}", r.error);
    for flag in [
        "--system-prompt You are terse.",
        "--setting-sources ",
        r#"--settings {"cleanupPeriodDays":3}"#,
    ] {
        assert!(argv.contains(flag), "`{flag}` not in {argv}");
    }
    assert!(!argv.contains("--append-system-prompt"), "{argv}");
    assert_eq!(after(&r, "--plugin-dir"), Some(plugin.clone()), "{argv}");

    let r = run("pi.yaml", "pi");
    let argv = r.cli.argv.join(" ");
    assert_eq!(r.status, TaskStatus::Success, "{:?} {argv}", r.error);
    assert!(argv.contains("--thinking high"), "{argv}");
    let skill = plugin.join("skills/greet");
    assert_eq!(after(&r, "--skill"), Some(skill), "{argv}");
}
