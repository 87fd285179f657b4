//! Fixes for what an attack run on the host found (issue 17): a closed stdout, a signal
//! while grading, a signal sent to both processes of an isolated run, huge durations,
//! result file modes. Each test drives the real binary against a stand-in CLI that
//! prints a recorded Claude Code stream, so nothing leaves the machine.

use crate::reliability::{tasks, temporary_files};
use crate::support::{bin, corpus, scratch};
use coder_eval::results::TaskResult;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A stand-in CLI that prints a whole recorded stream (a successful turn) and exits.
fn quick_cli(dir: &Path) -> PathBuf {
    let cli = dir.join("quick-cli.sh");
    std::fs::write(
        &cli,
        format!(
            "#!/bin/bash\nif [ \"$1\" = \"--version\" ]; then echo 'stand-in 1.0'; exit 0; fi\ncat {}\n",
            corpus("live/claude/hello.jsonl").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    cli
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> T {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `coder-eval run … | head -1`: the reader goes away after the first row. The run goes
/// on (no "failed printing to stdout" panic): every task ends SUCCESS with its result
/// written, run.json lists them all, and the exit code is the run's.
#[test]
fn a_closed_stdout_does_not_stop_the_run() {
    let dir = scratch("closed-stdout");
    let cli = quick_cli(&dir);
    let out = dir.join("out");
    let mut child = Command::new(bin())
        .arg("run")
        .args(tasks(&dir, &["a", "b", "c"]))
        .args(["--harness", "claude-code", "--cli"])
        .arg(&cli)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        assert!(first.contains(" a "), "{first}");
        // Dropped here: the pipe's only reader is gone, as with `| head -1`.
    }
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status.code(), Some(0), "{stderr}");
    for id in ["a", "b", "c"] {
        let r: TaskResult = read_json(&out.join(id).join("claude-code/task.json"));
        assert_eq!(r.status.as_str(), "SUCCESS", "{id}: {:?}", r.error);
    }
    let run: serde_json::Value = read_json(&out.join("run.json"));
    assert_eq!(run["rows"].as_array().unwrap().len(), 3, "{run}");
    assert!(temporary_files(&out).is_empty());
}
