//! The task's temporary folder: the CLI and the agent's commands get `TMPDIR` (and `TMP`,
//! `TEMP`) inside the task's private HOME, and it is gone when the task ends. Without it
//! a Bun-built CLI (OpenCode) left a 5.4 MB native library in the host's `/tmp` on every
//! run: 648 of them (3.4 GB) after a day of tests here. The Copilot CLI unpacks its
//! 235 MB bundle into its cache folder on every start: it is pointed at the same folder.

use crate::support::{bin, scratch};
use coder_eval::results::{TaskResult, TaskStatus};
use std::process::Command;

#[test]
fn the_agent_gets_a_private_tmpdir_removed_with_the_task() {
    let dir = scratch("tmpdir");
    let task = dir.join("task");
    std::fs::create_dir_all(&task).unwrap();
    std::fs::write(
        task.join("task.yaml"),
        "task_id: tmpdir\ninitial_prompt: Note the temporary folder.\n\
         agent: {scripted_model: script.yaml}\nrun_limits: {turn_timeout: 120}\n\
         success_criteria:\n  - type: file_exists\n    path: tmpdir.txt\n",
    )
    .unwrap();
    std::fs::write(
        task.join("script.yaml"),
        "replies:\n  - tool_calls: [{shell: {command: 'printf %s \"$TMPDIR|$TMP|$TEMP\" > tmpdir.txt \
         && echo kept > \"$TMPDIR/left-behind.txt\"'}}]\n  - text: done\n",
    )
    .unwrap();
    let out = dir.join("out");
    let harnesses = ["claude-code", "opencode", "copilot"];
    let mut cmd = Command::new(bin());
    cmd.arg("run").arg(task.join("task.yaml"));
    for h in harnesses {
        cmd.args(["--harness", h]);
    }
    let status = cmd.arg("--out").arg(&out).status().unwrap();
    assert!(status.success(), "{status}");
    for h in harnesses {
        let unit = out.join("tmpdir").join(h);
        let r: TaskResult =
            serde_json::from_str(&std::fs::read_to_string(unit.join("task.json")).unwrap())
                .unwrap();
        assert_eq!(r.status, TaskStatus::Success, "{h}: {:?}", r.error);
        let home = unit.join("home").canonicalize().unwrap();
        let tmp = home.join(".tmp").display().to_string();
        let seen = std::fs::read_to_string(unit.join("workspace/tmpdir.txt")).unwrap();
        assert_eq!(seen, format!("{tmp}|{tmp}|{tmp}"), "{h}");
        assert!(
            !home.join(".tmp").exists(),
            "{h}: the task's temporary folder outlived it"
        );
    }
    // Copilot's binary unpacks its 235 MB bundle on start: into the task's temporary
    // folder (gone), not into the private HOME kept with the results.
    let home = out.join("tmpdir/copilot/home");
    for kept in [".cache/copilot", ".copilot/pkg"] {
        assert!(!home.join(kept).exists(), "copilot left {kept} in its HOME");
    }
}
