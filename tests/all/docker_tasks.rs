//! `driver: docker` tasks through the `coder-eval` binary: the `docker:` block checked at
//! load, a missing daemon, and whole runs in containers (Claude Code against the scripted
//! model, the task's own commands in the container, clean stops, leftover containers).
//! Each run test says why and returns early when no daemon answers or the image or the
//! CLI is missing.

use crate::docker::{base_image, docker_ready};
use crate::support::{root, scratch};
use coder_eval::sandbox::docker;
use std::path::{Path, PathBuf};

/// A task file with `driver: docker` and the given `docker:` block lines (indented by 4).
fn docker_task(dir: &Path, name: &str, docker_block: &str) -> PathBuf {
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &path,
        format!(
            "task_id: {name}\ndescription: d\ninitial_prompt: p\nsandbox:\n  driver: docker\n  docker:\n{docker_block}\n  limits:\n    max_memory_mb: 512\nsuccess_criteria:\n  - type: file_exists\n    path: x\n"
        ),
    )
    .unwrap();
    path
}

/// `coder-eval check FILE` with `DOCKER_HOST` set as given: (exit code, stderr).
fn check_with(file: &Path, docker_host: &str) -> (i32, String) {
    let out = std::process::Command::new(crate::support::bin())
        .args(["check", file.to_str().unwrap()])
        .env("DOCKER_HOST", docker_host)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_docker_block_is_checked_at_load_naming_the_field_and_its_line() {
    let dir = scratch("docker-load-fields");
    let socket = "unix:///nonexistent/docker.sock";
    // A field check: working_dir `/work` is reserved (coder_eval refuses it too).
    let bad = docker_task(
        &dir,
        "bad_workdir",
        "    image: coder-eval-base:local\n    working_dir: /work",
    );
    let (code, stderr) = check_with(&bad, socket);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(":8:5: sandbox.docker.working_dir"),
        "{stderr}"
    );
    // A Dockerfile that leaves the task folder.
    let out = docker_task(
        &dir,
        "bad_dockerfile",
        "    dockerfile_path: ../../Dockerfile",
    );
    let (code, stderr) = check_with(&out, socket);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("sandbox.docker.dockerfile_path"),
        "{stderr}"
    );
    // network_enabled: false with a network that contradicts it.
    let open = docker_task(
        &dir,
        "contradiction",
        "    image: coder-eval-base:local\n    network: bridge\n  network_enabled: false",
    );
    let (code, stderr) = check_with(&open, socket);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            ":8:5: sandbox.docker.network: bridge contradicts sandbox.network_enabled: false"
        ),
        "{stderr}"
    );
    // An unknown key: the schema error with file:line and the closest key.
    let typo = docker_task(&dir, "typo", "    imgae: coder-eval-base:local");
    let (code, stderr) = check_with(&typo, socket);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("typo.yaml:7:"), "{stderr}");
    assert!(stderr.contains("image"), "{stderr}");
}

#[test]
fn a_docker_task_without_a_daemon_is_a_clear_load_error() {
    let dir = scratch("docker-load-no-daemon");
    let task = docker_task(
        &dir,
        "no_daemon",
        "    image: coder-eval-base:local\n    network: none",
    );
    let (code, stderr) = check_with(&task, "unix:///nonexistent/docker.sock");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "no Docker daemon at /nonexistent/docker.sock: start dockerd or use driver: tempdir"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    // `run` stops at the same load error, before anything is written.
    let out = dir.join("out");
    let run = std::process::Command::new(crate::support::bin())
        .arg("run")
        .arg(&task)
        .arg("--out")
        .arg(&out)
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .output()
        .unwrap();
    let run_err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{run_err}");
    assert!(run_err.contains("no Docker daemon at"), "{run_err}");
    assert!(!out.join("no_daemon").exists(), "{run_err}");
    // A remote daemon is refused by name, not tried.
    let (code, stderr) = check_with(&task, "tcp://127.0.0.1:2375");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a local unix socket"), "{stderr}");
}

/// The containers on the daemon that host process `pid` made (by label; running or not).
fn labelled_containers(pid: u32) -> String {
    let out = std::process::Command::new("docker")
        .args(["ps", "-a", "-q", "--filter"])
        .arg(format!("label={}={pid}", docker::LABEL))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[tokio::test]
async fn a_docker_task_runs_claude_code_in_its_container_and_is_graded() {
    let test = "a_docker_task_runs_claude_code_in_its_container_and_is_graded";
    if !docker_ready(test).await {
        return;
    }
    if !root().join("harnesses/node_modules/.bin/claude").exists() {
        eprintln!("skipped {test}: no Claude Code (scripts/setup.sh installs it)");
        return;
    }
    let out = scratch("docker-task-run");
    let task = root().join("tasks/coder_eval/docker/hello_docker.yaml");
    let output = std::process::Command::new(crate::support::bin())
        .arg("run")
        .arg(&task)
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = output.id();
    let output = output.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let result: serde_json::Value = serde_json::from_slice(
        &std::fs::read(out.join("hello_docker/claude-code/task.json"))
            .unwrap_or_else(|e| panic!("no task.json ({e}): {stderr}")),
    )
    .unwrap();
    assert_eq!(result["status"], "SUCCESS", "{result:#}\n{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    // The agent's commands ran in the task's image: the marker exists only there, and the
    // workspace the criteria graded is the one the container wrote.
    let workspace = out.join("hello_docker/claude-code/workspace");
    assert_eq!(
        std::fs::read_to_string(workspace.join("where.txt")).unwrap(),
        "coder-eval docker marker\n"
    );
    assert!(!Path::new("/coder-eval-marker").exists());
    let printed = std::fs::read_to_string(workspace.join("out.txt")).unwrap();
    assert!(
        printed.starts_with("Hello from the container\n"),
        "{printed}"
    );
    // pre_run and post_run ran in the container (the marker is only there), and so did
    // the run_command criteria (one of them reads $TASK_DIR, copied in after the agent).
    for step in ["pre.txt", "post.txt"] {
        assert_eq!(
            std::fs::read_to_string(workspace.join(step)).unwrap(),
            "coder-eval docker marker\n",
            "{step}"
        );
    }
    let phases: Vec<&str> = result["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["pre_run", "post_run"], "{result:#}");
    let run_commands: Vec<&serde_json::Value> = result["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "run_command")
        .collect();
    assert_eq!(run_commands.len(), 2, "{result:#}");
    for c in run_commands {
        assert_eq!(c["score"], 1.0, "{c:#}");
    }
    // No container of the run is left behind.
    assert_eq!(labelled_containers(pid), "");
}

/// Host processes whose command line holds `needle` (the container's processes are the
/// host kernel's).
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) && !cmd.contains("coder-eval-test") {
                found.push(cmd);
            }
        }
    }
    found
}

#[tokio::test]
async fn stops_inside_a_container_are_clean_and_leave_no_container() {
    let test = "stops_inside_a_container_are_clean_and_leave_no_container";
    if !docker_ready(test).await {
        return;
    }
    if !root().join("harnesses/node_modules/.bin/claude").exists() {
        eprintln!("skipped {test}: no Claude Code (scripts/setup.sh installs it)");
        return;
    }
    // A container an earlier run left behind when it was killed: labelled with the pid of
    // a process that is gone. The run removes it before it starts.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = gone.id();
    gone.wait().unwrap();
    let leftover = std::process::Command::new("docker")
        .args(["run", "-d", "--label"])
        .arg(format!("{}={dead_pid}", docker::LABEL))
        .args([&base_image(), "sleep", "600"])
        .output()
        .unwrap();
    assert!(leftover.status.success(), "{leftover:?}");

    let out = scratch("docker-stops");
    let dir = root().join("tasks/coder_eval/docker");
    let child = std::process::Command::new(crate::support::bin())
        .arg("run")
        .arg(dir.join("stop_timeout.yaml"))
        .arg(dir.join("stop_max_turns.yaml"))
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // (Another run started meanwhile, by a concurrent test, may be the one that removed it.)
    assert_eq!(labelled_containers(dead_pid), "", "{stderr}");
    let read = |task: &str| -> serde_json::Value {
        serde_json::from_slice(
            &std::fs::read(out.join(task).join("claude-code/task.json"))
                .unwrap_or_else(|e| panic!("no task.json for {task} ({e}): {stderr}")),
        )
        .unwrap()
    };
    // The timeout: the command and the process it detached are stopped, the partial turn
    // is kept, the status says TIMEOUT.
    let timeout = read("stop_timeout_docker");
    assert_eq!(timeout["status"], "TIMEOUT", "{timeout:#}\n{stderr}");
    assert_eq!(processes_with("sleep 314.159"), Vec::<String>::new());
    assert_eq!(processes_with("sleep 271.828"), Vec::<String>::new());
    // The cap: call 2 never ran; post_run and the run_command criterion ran in the
    // container after the stop (the marker is only there; two.txt was never written).
    let capped = read("stop_max_turns_docker");
    assert_eq!(
        capped["status"], "MAX_TURNS_EXHAUSTED",
        "{capped:#}\n{stderr}"
    );
    let workspace = out.join("stop_max_turns_docker/claude-code/workspace");
    assert!(workspace.join("one.txt").exists());
    assert!(!workspace.join("two.txt").exists());
    assert_eq!(
        std::fs::read_to_string(workspace.join("post.txt")).unwrap(),
        "coder-eval docker marker\n"
    );
    let run_command = &capped["criteria"][1];
    assert_eq!(run_command["score"], 0.0, "{capped:#}");
    assert!(
        run_command["details"]
            .as_str()
            .unwrap()
            .contains("No such file"),
        "{capped:#}"
    );
    // Nothing of the run is left on the daemon.
    assert_eq!(labelled_containers(pid), "");
}
