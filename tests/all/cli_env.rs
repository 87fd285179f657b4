//! The agent CLI's environment, end to end on every harness's real CLI against the
//! scripted model (tasks/environment/cli_env): the minimal base, a private HOME inside the
//! task's folder (never the host's), and host variables only through `--pass-env`.

use crate::live_claude::run_on_harnesses_with;
use crate::support::scratch;
use coder_eval::results::TaskStatus;
use std::collections::BTreeMap;

const HARNESSES: [&str; 5] = ["claude-code", "codex", "pi", "opencode", "gemini-cli"];

#[test]
fn the_cli_sees_the_minimal_env_a_private_home_and_only_passed_variables() {
    let out = scratch("cli-env");
    let task = "tasks/environment/cli_env/task.yaml";
    let run = run_on_harnesses_with(&[task], &HARNESSES, &out, 2, |cmd| {
        cmd.args(["--pass-env", "CE_TEST_PASSED"])
            .env("CE_TEST_PASSED", "passed-value")
            .env("CE_TEST_NOT_PASSED", "host-secret-value")
            .env("HOME", "/nonexistent-host-home");
    });
    for (row, r) in run.rows {
        let what = &row.harness;
        assert_eq!(r.status, TaskStatus::Success, "{what}: {:?}", r.error);
        let dir = out.join("cli_env").join(what);
        let text = std::fs::read_to_string(dir.join("workspace/env.txt")).unwrap();
        let env: BTreeMap<&str, &str> = text.lines().filter_map(|l| l.split_once('=')).collect();
        // Only what --pass-env names gets through from the host.
        assert_eq!(env.get("CE_TEST_PASSED"), Some(&"passed-value"), "{what}");
        assert!(!text.contains("host-secret-value"), "{what}: {text}");
        // A private HOME inside the task's folder, never the host's.
        let home = env.get("HOME").copied().unwrap_or_default();
        assert_ne!(home, "/nonexistent-host-home", "{what}");
        assert!(
            std::path::Path::new(home).starts_with(&out),
            "{what}: HOME {home} is not under {}",
            out.display()
        );
        assert!(std::path::Path::new(home).is_dir(), "{what}: {home}");
        assert_eq!(env.get("LANG"), Some(&"C.UTF-8"), "{what}");
        assert!(env.contains_key("PATH"), "{what}");
        // The agent works in the task's workspace.
        let pwd = std::fs::read_to_string(dir.join("workspace/pwd.txt")).unwrap();
        assert!(
            std::path::Path::new(pwd.trim()).starts_with(&out),
            "{what}: {pwd}"
        );
    }
}
