//! The host's edges that issue 17 left open: a PID namespace with an init by default, a
//! closed stderr, write faults, and the stop paths and limits exercised end to end. Each
//! test drives the real binary against a stand-in CLI (a script printing a recorded
//! Claude Code stream), so nothing leaves the machine.

use crate::support::{bin, corpus, executable, pid_namespace_available, scratch};
use coder_eval::results::TaskResult;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A stand-in CLI: answers `--version`, else runs `body` (`{HELLO}` = the recorded
/// Claude Code stream of a successful turn).
pub fn cli(dir: &Path, body: &str) -> PathBuf {
    let cli = dir.join("cli.sh");
    std::fs::create_dir_all(dir).unwrap();
    executable(
        &cli,
        &format!(
            "#!/bin/bash\nif [ \"$1\" = \"--version\" ]; then echo 'stand-in 1.0'; exit 0; fi\n{}\n",
            body.replace(
                "{HELLO}",
                &corpus("live/claude/hello.jsonl").display().to_string()
            )
        ),
    );
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

/// Runs the sh `script` with the arguments `args` (`$1`…) in a private mount namespace of
/// its own. False when that cannot be done here or the script's tmpfs mount fails (it
/// exits 77): the test has nothing to check, which CI (root) must never meet.
fn in_a_mount_namespace(script: &str, args: &[&Path]) -> bool {
    let status = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", script, "sh"])
        .args(args)
        .status()
        .unwrap();
    if status.code() != Some(0) {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root and can mount a tmpfs"
        );
        eprintln!("note: no tmpfs can be mounted here; the test has nothing to check");
        return false;
    }
    true
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

/// A bench that prints a target can miss it: each one prints FAIL and exits non-zero
/// then, and CI builds them all (`scripts/test.sh`), so none rots unbuilt.
#[test]
fn every_bench_fails_when_it_misses_its_target_and_ci_builds_them() {
    let benches = crate::support::root().join("host/benches");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&benches).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if text.to_lowercase().contains("target") {
            for needle in ["FAIL", "std::process::exit(1)"] {
                if !text.contains(needle) {
                    missing.push(format!("{}: no `{needle}`", path.display()));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    let test_sh = std::fs::read_to_string(crate::support::root().join("scripts/test.sh")).unwrap();
    assert!(
        test_sh
            .lines()
            .any(|l| l.starts_with("cargo bench") && l.contains("--no-run")),
        "scripts/test.sh does not build the benches"
    );
}

/// A full disk while the recording is written (`--out` on a 1 MiB tmpfs, a CLI printing
/// 2 MB): the host does not panic, stops the CLI, says why (ENOSPC) and presents nothing
/// as complete: no task.json (it cannot be written either), or one that is a complete
/// ERROR; run.json, when written, counts the task as unfinished; nothing of the task
/// survives. Root only (a tmpfs is mounted in a mount namespace of the test's own).
#[test]
fn a_full_disk_while_recording_is_an_error_never_a_panic_or_a_partial_result() {
    let dir = scratch("full-disk");
    let marker = format!("ce-full-disk-{}", std::process::id());
    let cli = cli(
        &dir,
        &format!(
            "(exec -a {marker} sleep 300) &\nhead -n 2 {{HELLO}}\npad=$(printf '%0500d' 0)\n\
             for i in $(seq 1 4000); do echo \"{{\\\"type\\\":\\\"noise\\\",\\\"pad\\\":\\\"$pad\\\"}}\"; done\n\
             cat {{HELLO}}"
        ),
    );
    let task = task(&dir, "a", "");
    let mnt = dir.join("mnt");
    let kept = dir.join("kept");
    std::fs::create_dir_all(&mnt).unwrap();
    std::fs::create_dir_all(&kept).unwrap();
    // Inside a private mount namespace: mount, run, copy out what was written.
    let script = r#"mount -t tmpfs -o size=1m tmpfs "$1" || exit 77
"$2" run "$3" --harness claude-code --cli "$4" --out "$1/o" 2>"$5/stderr"
echo $? > "$5/rc"
cp "$1/o/a/claude-code/task.json" "$5/" 2>/dev/null
cp "$1/o/run.json" "$5/" 2>/dev/null
exit 0"#;
    let bin = bin();
    if !in_a_mount_namespace(script, &[&mnt, &bin, &task, &cli, &kept]) {
        return;
    }
    let rc: i32 = std::fs::read_to_string(kept.join("rc"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let stderr = std::fs::read_to_string(kept.join("stderr")).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(rc, 101, "{stderr}");
    assert_ne!(rc, 0, "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    // A failed task (1), or results that could not be written (3, an infrastructure
    // failure): never 2, which says the invocation was bad and nothing ran.
    assert!(matches!(rc, 1 | 3), "exit {rc}: {stderr}");
    if !kept.join("run.json").exists() {
        assert_eq!(rc, 3, "run.json could not be written: {stderr}");
    }
    if let Ok(text) = std::fs::read_to_string(kept.join("task.json")) {
        let r: TaskResult = serde_json::from_str(&text).expect("a complete task.json");
        assert_eq!(r.status, coder_eval::results::TaskStatus::Error, "{text}");
    }
    if let Ok(text) = std::fs::read_to_string(kept.join("run.json")) {
        let run: serde_json::Value = serde_json::from_str(&text).expect("a complete run.json");
        let rows = run["rows"].as_array().map_or(0, Vec::len);
        assert!(
            run["unfinished"] == 1 || rows == 1 && run["rows"][0]["status"] == "ERROR",
            "{run}"
        );
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        crate::reliability::alive_with(&marker).is_empty(),
        "a process of the task survived"
    );
}

/// A CLI that printed its final result but does not exit is stopped after the result
/// grace (`result_grace`), end to end; the turn is still the success it printed, and
/// nothing of it survives.
#[test]
fn a_cli_that_does_not_exit_after_its_result_is_stopped_after_the_grace() {
    let dir = scratch("result-grace");
    let marker = format!("ce-result-grace-{}", std::process::id());
    let cli = cli(&dir, &format!("cat {{HELLO}}\nexec -a {marker} sleep 300"));
    let task = task(&dir, "linger", "");
    let started = std::time::Instant::now();
    let o = run(&task, &cli, &dir.join("out"), &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The grace is 5 s (StopPolicy::DEFAULT.result_grace); far less than the sleep.
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    let r = result(&dir.join("out"), "linger");
    assert_eq!(
        r.stop.as_ref().map(|s| s.reason.as_str()),
        Some("result_grace")
    );
    assert_eq!(r.status, coder_eval::results::TaskStatus::Success);
    let t = r.turn.as_ref().unwrap();
    assert_eq!(t.tool_calls.len(), 2);
    let stop_ms = r.stop.as_ref().unwrap().at_ms.expect("the stop's time");
    assert!(
        stop_ms >= 5_000,
        "stopped at {stop_ms} ms, before the grace"
    );
    assert!(crate::reliability::alive_with(&marker).is_empty());
}

/// The timing buckets against stamps chosen by hand (TEST_AUDIT §1.1: their identity
/// holds by construction, so only known stamps can show a bucket attributed to the wrong
/// phase). The recorded Claude Code `hello` turn, restamped: first model output at 1 s;
/// tool 1 from 1.5 s to 3.5 s; tool 2 from 4.0 s to 4.25 s; the last model output at 5 s;
/// the result line at 5.2 s (not model activity); the exit at 6 s.
#[test]
fn the_timing_buckets_match_known_stamps() {
    let dir = scratch("known-stamps");
    let stamps_us = [
        100_000, 1_000_000, 1_500_000, 3_500_000, 4_000_000, 4_250_000, 5_000_000, 5_200_000,
    ];
    let lines: Vec<String> = std::fs::read_to_string(corpus("live/claude/hello.jsonl"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), stamps_us.len());
    let mut recording = String::from(
        "{\"format\":\"coder-eval-recording\",\"version\":1,\"harness\":\"claude-code\"}\n",
    );
    for (line, us) in lines.iter().zip(stamps_us) {
        recording.push_str(&serde_json::json!({"t": "out", "us": us, "text": line}).to_string());
        recording.push('\n');
    }
    recording.push_str("{\"t\":\"exit\",\"us\":6000000,\"code\":0}\n");
    let path = dir.join("recording.jsonl");
    std::fs::write(&path, recording).unwrap();
    let r = coder_eval::turn::replay::replay(
        &path,
        &coder_eval::turn::replay::ReplayOptions::new("claude-code"),
    )
    .unwrap();
    let t = &r.timing;
    assert_eq!(t.turn_duration_ms, 6000, "{t:?}");
    assert_eq!(t.harness_startup_ms, Some(1000), "{t:?}");
    assert_eq!(t.tool_union_ms, Some(2000 + 250), "{t:?}");
    assert_eq!(t.tool_sum_ms, 2250, "{t:?}");
    // From the first output (1 s) to the last activity (5 s), less the tools.
    assert_eq!(t.generation_duration_ms, Some(4000 - 2250), "{t:?}");
    assert_eq!(t.harness_teardown_ms, Some(1000), "{t:?}");
    let tools: Vec<u64> = r.tool_calls.iter().map(|c| c.duration_ms).collect();
    assert_eq!(tools, [2000, 250]);
}

/// A `task.json` that cannot be written leaves no earlier one behind: the result folder
/// of a reused `--out` holds an earlier run's `task.json` (a SUCCESS) on a full 1 MiB
/// tmpfs; this run's write (a `skip: true` task, which only writes its result) fails, and
/// the stale file is removed rather than left to be read as this run's result. The row
/// in run.json (on the disk beside, not full) is an ERROR. Root only (a tmpfs is mounted
/// in a mount namespace of the test's own).
#[test]
fn a_failed_task_json_write_removes_the_earlier_one() {
    let dir = scratch("stale-task-json");
    let cli = cli(&dir, "cat {HELLO}");
    let task = task(&dir, "a", "skip: true\n");
    let out = dir.join("o");
    let unit = out.join("a/claude-code");
    let kept = dir.join("kept");
    std::fs::create_dir_all(&unit).unwrap();
    std::fs::create_dir_all(&kept).unwrap();
    // The earlier run's result, then a disk with no room left.
    let script = r#"mount -t tmpfs -o size=1m tmpfs "$1" || exit 77
echo '{"status": "SUCCESS", "stale": true}' > "$1/task.json"
dd if=/dev/zero of="$1/filler" bs=4096 2>/dev/null
"$2" run "$3" --harness claude-code --cli "$4" --out "$5" >"$6/stdout" 2>"$6/stderr"
echo $? > "$6/rc"
ls -A "$1" > "$6/ls"
exit 0"#;
    let bin = bin();
    if !in_a_mount_namespace(script, &[&unit, &bin, &task, &cli, &out, &kept]) {
        return;
    }
    let read = |name: &str| std::fs::read_to_string(kept.join(name)).unwrap();
    let (stdout, stderr) = (read("stdout"), read("stderr"));
    let left = read("ls");
    assert!(
        !left.lines().any(|f| f == "task.json"),
        "a stale task.json was left: {left}\n{stdout}\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["rows"][0]["status"], "ERROR", "{run}");
    assert_ne!(read("rc").trim(), "0", "{stdout}\n{stderr}");
}

/// `--no-pid-namespace`: a process the agent starts with a cleared environment (`env -i`:
/// no mark) in a session of its own (`setsid`), orphaned at once, is in neither the CLI's
/// group nor its tree and carries no mark. It is still found (it works in the turn's
/// folder, started during the turn), stopped, and counted in `leftover_processes`.
/// Before, it survived the run and the count said 0.
#[test]
fn an_unmarked_orphan_in_a_session_of_its_own_is_stopped_and_counted() {
    let dir = scratch("env-i-orphan");
    let marker = format!("ce-env-i-{}", std::process::id());
    let cli = cli(
        &dir,
        &format!(
            "setsid env -i /bin/bash -c 'exec -a {marker} sleep 300' </dev/null >/dev/null 2>&1 &\n\
             cat {{HELLO}}"
        ),
    );
    let task = task(&dir, "a", "");
    let out = dir.join("o");
    let output = run(&task, &cli, &out, &["--no-pid-namespace"]);
    let r = result(&out, "a");
    let survivors = crate::reliability::alive_with(&marker);
    for &pid in &survivors {
        // SAFETY: plain syscall, cleaning up after a failed assertion.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    assert!(
        survivors.is_empty(),
        "the orphan survived the run: {survivors:?}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(r.stop.is_none(), "{:?}", r.stop);
    assert!(
        r.cli.leftover_processes.is_some_and(|n| n >= 1),
        "{:?}",
        r.cli.leftover_processes
    );
}
