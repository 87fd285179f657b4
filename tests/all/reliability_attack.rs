//! Fixes for what an attack run on the host found (issue 17): a closed stdout, a signal
//! while grading, a signal sent to both processes of an isolated run, huge durations,
//! result file modes. Each test drives the real binary against a stand-in CLI that
//! prints a recorded Claude Code stream, so nothing leaves the machine.

use crate::reliability::{alive_with, start_run, tasks, temporary_files, wait_for};
use crate::support::{bin, corpus, scratch};
use coder_eval::results::TaskResult;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

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

/// A signal while the task is being graded: a `run_command` criterion that sleeps, or a
/// `post_run` step that sleeps. Either way the task is ERROR with `error_kind:
/// interrupted` (never a finished FAILURE), nothing of the step outlives the host, and
/// `--resume` runs the task again (it passes then: the flag file is there).
#[test]
fn a_signal_while_grading_makes_the_task_interrupted_and_resume_reruns_it() {
    for (name, stage) in [("criterion", "criterion"), ("post-run", "post_run")] {
        let dir = scratch(&format!("signal-grading-{name}"));
        let marker = format!("ce-sig-grade-{name}-{}", std::process::id());
        let cli = quick_cli(&dir);
        let flag = dir.join("flag");
        let slow = format!(
            "test -e {} || bash -c 'exec -a {marker} sleep 60'",
            flag.display()
        );
        let task = dir.join("slow.yaml");
        let body = match stage {
            "criterion" => format!(
                "success_criteria:\n  - type: run_command\n    command: \"{slow}\"\n    description: slow\n"
            ),
            _ => format!(
                "post_run:\n  - command: \"{slow}\"\n    timeout: 300\nsuccess_criteria:\n  - type: run_command\n    command: \"true\"\n    description: quick\n"
            ),
        };
        std::fs::write(&task, format!("task_id: slow\ninitial_prompt: hi\n{body}")).unwrap();
        let out = dir.join("out");
        let mut child = start_run(&[task], &cli, &out);
        wait_for(&marker, 1, Duration::from_secs(60));
        // SAFETY: plain syscall to our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(143), "{name}: {stderr}");
        assert!(
            alive_with(&marker).is_empty(),
            "{name}: the step outlived the host"
        );
        let r: TaskResult = read_json(&out.join("slow/claude-code/task.json"));
        assert_eq!(r.status.as_str(), "ERROR", "{name}: {:?}", r.error);
        assert_eq!(r.error_kind.as_deref(), Some("interrupted"), "{name}");
        assert_eq!(r.stop.as_ref().unwrap().reason.as_str(), "interrupted");
        // The turn ran to its end before the signal: it is kept.
        assert!(r.turn.is_some(), "{name}: the finished turn is kept");
        // No criterion ran as if the task had been graded whole.
        assert!(r.criteria.is_empty(), "{name}: {:?}", r.criteria);

        std::fs::write(&flag, "").unwrap();
        let o = Command::new(bin())
            .arg("run")
            .arg("--resume")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let r: TaskResult = read_json(&out.join("slow/claude-code/task.json"));
        assert_eq!(r.status.as_str(), "SUCCESS", "{name}: {:?}", r.error);
    }
}

/// Durations past 30 days are load errors naming their field, in `check` and in `run`
/// (never a panic converting them or adding them to the task's start).
#[test]
fn a_huge_duration_is_a_load_error_naming_its_field() {
    let dir = scratch("huge-duration");
    let cli = quick_cli(&dir);
    for (name, body, field) in [
        (
            "float",
            "run_limits: {turn_timeout: 1e20}\n",
            "turn_timeout",
        ),
        (
            "hours",
            "run_limits: {turn_timeout: \"99999999999999h\", task_timeout: 1e19}\n",
            "turn_timeout",
        ),
        (
            "criterion",
            "success_criteria:\n  - {type: run_command, command: \"true\", timeout: 1e30, description: x}\n",
            "timeout",
        ),
    ] {
        let task = dir.join(format!("{name}.yaml"));
        std::fs::write(
            &task,
            format!("task_id: {name}\ninitial_prompt: hi\n{body}"),
        )
        .unwrap();
        let check = Command::new(bin())
            .arg("check")
            .arg(&task)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&check.stderr);
        assert_eq!(check.status.code(), Some(2), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        assert!(stderr.contains(field), "{name}: {stderr}");
        assert!(stderr.contains("at most 30 days"), "{name}: {stderr}");
        let out = dir.join(format!("out-{name}"));
        let run = Command::new(bin())
            .arg("run")
            .arg(&task)
            .args(["--harness", "claude-code", "--cli"])
            .arg(&cli)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        assert!(stderr.contains("at most 30 days"), "{name}: {stderr}");
    }
}

/// The coder-eval processes of the run writing to `out` (an isolated run has two: the
/// outer one and the one it re-runs inside the network namespace).
fn run_processes(out: &Path) -> Vec<i32> {
    let exe = std::fs::canonicalize(bin()).unwrap();
    alive_with(&out.to_string_lossy())
        .into_iter()
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e == exe))
        .collect()
}

/// `--isolate-network` runs two coder-eval processes in different process groups. One
/// signal sent to every process of the run (`pkill coder-eval`, a CI killing the process
/// tree) is one signal to the run: the inner run stops its tasks and writes each result
/// (no "interrupted again", no SIGKILL escalation). A signal to the outer process alone
/// (a terminal's Ctrl-C) is still passed on.
#[test]
fn a_signal_to_both_processes_of_an_isolated_run_is_one_signal() {
    let available = Command::new("unshare")
        .args(["-n", "--", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !available {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must allow `unshare -n`"
        );
        eprintln!("note: no network namespace can be made here; nothing to check");
        return;
    }
    for (name, both) in [("both", true), ("outer", false)] {
        let dir = scratch(&format!("isolated-signal-{name}"));
        let marker = format!("ce-iso-sig-{name}-{}", std::process::id());
        let cli = crate::reliability::stand_in_cli(&dir, &marker, false);
        let out = dir.join("out");
        let mut child = crate::reliability::start_run_with(
            &tasks(&dir, &["one", "two", "three"]),
            &cli,
            &out,
            &["--isolate-network"],
        );
        wait_for(&marker, 4, Duration::from_secs(60));
        let processes = run_processes(&out);
        assert_eq!(processes.len(), 2, "{name}: {processes:?}");
        assert!(processes.contains(&(child.id() as i32)));
        for pid in &processes {
            if both || *pid == child.id() as i32 {
                // SAFETY: plain syscall to this test's own run.
                unsafe { libc::kill(*pid, libc::SIGTERM) };
            }
        }
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(143), "{name}: {stderr}");
        assert!(!stderr.contains("interrupted again"), "{name}: {stderr}");
        assert!(alive_with(&marker).is_empty(), "{name}: survivors");
        for id in ["two", "three"] {
            let r: TaskResult = read_json(&out.join(id).join("claude-code/task.json"));
            assert_eq!(r.error_kind.as_deref(), Some("interrupted"), "{name} {id}");
        }
        let one: TaskResult = read_json(&out.join("one/claude-code/task.json"));
        assert_eq!(one.status.as_str(), "SUCCESS", "{name}: {:?}", one.error);
    }
}

/// A task a signal stopped before it started has no figures and no files: its setup,
/// grading and turn-work times and its leftover-process count are `null` (absent is not
/// zero), and its `paths` name no file that does not exist. The task whose `pre_run` the
/// signal stopped has no turn-work or grading figures either, and lists that step.
#[test]
fn a_task_that_never_started_has_null_figures_and_no_paths() {
    let dir = scratch("never-started");
    let marker = format!("ce-never-started-{}", std::process::id());
    let cli = quick_cli(&dir);
    let slow = dir.join("slow.yaml");
    std::fs::write(
        &slow,
        format!(
            "task_id: slow\ninitial_prompt: hi\npre_run:\n  - command: \"bash -c 'exec -a {marker} sleep 60'\"\n    timeout: 300\n"
        ),
    )
    .unwrap();
    let mut files = vec![slow];
    files.extend(tasks(&dir, &["later"]));
    let out = dir.join("out");
    let mut child = start_run(&files, &cli, &out);
    wait_for(&marker, 1, Duration::from_secs(60));
    // SAFETY: plain syscall to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert_eq!(child.wait().unwrap().code(), Some(143));
    let raw: serde_json::Value = read_json(&out.join("later/claude-code/task.json"));
    for field in ["setup_ms", "grading_ms", "host_turn_work_us"] {
        assert!(raw[field].is_null(), "{field}: {raw}");
    }
    assert!(raw["cli"]["leftover_processes"].is_null(), "{raw}");
    let later: TaskResult = read_json(&out.join("later/claude-code/task.json"));
    assert_eq!(later.error_kind.as_deref(), Some("interrupted"));
    assert_eq!(later.paths.recording, None);
    assert_eq!(later.paths.stderr, None);
    assert_eq!(later.paths.workspace, None);
    let slow: TaskResult = read_json(&out.join("slow/claude-code/task.json"));
    assert_eq!(slow.error_kind.as_deref(), Some("interrupted"));
    assert_eq!(slow.host_turn_work_us, None);
    assert_eq!(slow.grading_ms, None);
    assert_eq!(slow.paths.recording, None);
    // The pre_run step the signal stopped is in `steps`, with what it did.
    assert_eq!(slow.steps.len(), 1, "{:?}", slow.steps);
    assert_eq!(slow.steps[0].phase, "pre_run");
    assert!(slow.steps[0].command.contains(&marker));
    assert_ne!(slow.steps[0].exit_code, Some(0));
}
