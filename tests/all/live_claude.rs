//! Live runs of the real Claude Code CLI (installed from `harnesses/package-lock.json`)
//! against the scripted model, inside a loopback-only network namespace when the machine
//! allows one. Each test runs the `coder-eval` binary as a user would.

use crate::support::{bin, root, scratch};
use coder_eval::results::{RunRow, RunSummary, TaskResult, TaskStatus};
use coder_eval::results::{ToolOutcome, TurnRecord, TurnStatus};
use coder_eval::turn::replay::{ReplayOptions, replay};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `tasks` on every harness in `harnesses` in one `coder-eval run` into `out`
/// (`--jobs jobs`, inside a loopback-only network namespace when the machine allows one),
/// prints its output, and gives each `run.json` row with its `task.json`, in row order.
/// Panics unless there is one row per task and harness.
pub fn run_on_harnesses(
    tasks: &[&str],
    harnesses: &[&str],
    out: &Path,
    jobs: u32,
) -> Vec<(RunRow, TaskResult)> {
    run_on_harnesses_with(tasks, harnesses, out, jobs, |_| {}).rows
}

/// What one `coder-eval run` on several harnesses gave.
pub struct HarnessRun {
    /// What the run printed on stdout (a summary line per task).
    pub stdout: String,
    /// Each `run.json` row with its `task.json`, in row order.
    pub rows: Vec<(RunRow, TaskResult)>,
}

/// As [`run_on_harnesses`], with the command's own arguments and environment added by
/// `with` (after `--jobs`), and its stdout kept.
pub fn run_on_harnesses_with(
    tasks: &[&str],
    harnesses: &[&str],
    out: &Path,
    jobs: u32,
    with: impl FnOnce(&mut Command),
) -> HarnessRun {
    let mut cmd = Command::new(bin());
    cmd.arg("run");
    for task in tasks {
        cmd.arg(root().join(task));
    }
    for h in harnesses {
        cmd.args(["--harness", h]);
    }
    cmd.arg("--out")
        .arg(out)
        .args(["--jobs", &jobs.to_string()]);
    with(&mut cmd);
    if netns_available() {
        cmd.arg("--isolate-network");
    }
    let output = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    eprintln!("{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let summary: RunSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(summary.rows.len(), tasks.len() * harnesses.len());
    let rows = summary
        .rows
        .into_iter()
        .map(|row| {
            let r: TaskResult =
                serde_json::from_str(&std::fs::read_to_string(out.join(&row.result)).unwrap())
                    .unwrap();
            (row, r)
        })
        .collect();
    HarnessRun { stdout, rows }
}

/// Whether `unshare -n` works here (root, or user namespaces allowed).
pub fn netns_available() -> bool {
    Command::new("unshare")
        .args(["-n", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `coder-eval run TASK --out DIR EXTRA...` and reads `task.json`.
pub fn run_task(task: &str, harness: &str, out: &Path, extra: &[&str]) -> TaskResult {
    let mut cmd = Command::new(bin());
    cmd.arg("run")
        .arg(root().join(task))
        .args(["--harness", harness, "--out"])
        .arg(out)
        .args(extra);
    if netns_available() {
        cmd.arg("--isolate-network");
    } else {
        eprintln!("note: `unshare -n` is not available here; running without network isolation");
    }
    let output = cmd.output().expect("coder-eval runs");
    let task_id = Path::new(task)
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    let path = out.join(task_id).join(harness).join("task.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}\nstdout: {}\nstderr: {}",
            path.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    serde_json::from_str(&text).unwrap()
}

/// The folder holding a task's artifacts.
pub fn result_dir(out: &Path, task_id: &str, harness: &str) -> PathBuf {
    out.join(task_id).join(harness)
}

/// The four buckets add up to the turn's duration exactly.
pub fn assert_buckets_tile(turn: &TurnRecord) {
    let t = &turn.timing;
    let sum = t.harness_startup_ms.unwrap()
        + t.generation_duration_ms.unwrap()
        + t.tool_union_ms.unwrap()
        + t.harness_teardown_ms.unwrap()
        + t.retry_wait_ms.unwrap_or(0);
    assert_eq!(sum, t.turn_duration_ms, "{t:?}");
}

/// Replaying the run's recording gives the live turn record, field for field.
pub fn assert_replay_matches(out: &Path, result: &TaskResult) {
    assert_replay_matches_in(out, result, None);
}

/// As [`assert_replay_matches`], with the harness's component from a `--components` folder.
pub fn assert_replay_matches_in(out: &Path, result: &TaskResult, components: Option<&Path>) {
    let dir = result_dir(out, &result.task_id, &result.harness);
    let mut options = ReplayOptions::new(&result.harness);
    options.components.dir = components.map(Path::to_path_buf);
    let replayed = replay(&dir.join("recording.jsonl"), &options).unwrap();
    let live = serde_json::to_value(result.turn.as_ref().unwrap()).unwrap();
    assert_eq!(serde_json::to_value(&replayed).unwrap(), live);
}

/// The scripted model saw every model request of the run and no unexpected one.
pub fn assert_model_saw_every_request(result: &TaskResult) {
    let requests = result
        .scripted_model_requests
        .as_ref()
        .expect("a scripted model ran");
    let kind = |r: &serde_json::Value| r["kind"].as_str().unwrap_or("").to_string();
    let main = requests.iter().filter(|r| kind(r) == "main").count();
    let turn = result.turn.as_ref().unwrap();
    // Every main-thread model call reached the scripted model. The host's cap stops a run
    // once call N+1's output arrived (N+1 requests); a CLI's own cap stops it before
    // sending request N+1, while still counting it (N requests).
    let native_cap = turn.max_turns_exhausted && result.stop.is_none();
    let expected = turn.num_turns - u32::from(native_cap);
    if result
        .cli
        .caveats
        .contains(&harness_kit::Caveat::ParallelCallsSerialized)
    {
        // One request may answer with several tool calls that the stream shows as
        // separate calls.
        assert!(main as u32 <= expected, "{requests:#?}");
    } else if result.stop.is_some() {
        // The host stopped the CLI (its cap, a timeout): between the stop and the signal
        // taking effect the CLI may send a request or two more, which the frozen turn
        // rightly does not count.
        assert!(main as u32 >= expected, "{requests:#?}");
    } else {
        assert_eq!(main as u32, expected, "{requests:#?}");
    }
    // Anything else the CLI tried went to the scripted model too: model-API side
    // requests, or a proxied connection elsewhere, refused and logged as phone_home
    // (OpenCode's background npm install does one). Nothing it could not classify.
    for r in requests {
        assert!(
            ["main", "side", "count_tokens", "models", "phone_home"].contains(&kind(r).as_str()),
            "unexpected request: {r}"
        );
        if kind(r) == "phone_home" {
            assert_eq!(r["status"], 403, "phone-home attempts are refused: {r}");
        }
    }
}

/// How many connections the CLI tried to make elsewhere than the model API.
pub fn phone_home_attempts(result: &TaskResult) -> usize {
    let requests = result
        .scripted_model_requests
        .as_ref()
        .expect("a scripted model ran");
    requests
        .iter()
        .filter(|r| r["kind"] == "phone_home")
        .count()
}

/// Live processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if text.contains(marker) {
                found.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
            }
        }
    }
    found
}

/// The version `harnesses/package.json` pins for the npm package `package`.
fn pinned(package: &str) -> String {
    let text = std::fs::read_to_string(root().join("harnesses/package.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["dependencies"][package]
        .as_str()
        .unwrap_or_else(|| panic!("harnesses/package.json pins no {package}"))
        .to_string()
}

#[test]
fn hello_date_succeeds() {
    let out = scratch("live-claude-hello");
    let r = run_task("tasks/hello_date/task.yaml", "claude-code", &out, &[]);
    assert_eq!(r.status, TaskStatus::Success, "{:?}", r.error);
    let turn = r.turn.as_ref().unwrap();
    assert!(
        result_dir(&out, "hello_date", "claude-code")
            .join("workspace/app.py")
            .exists()
    );
    assert!(turn.tool_calls.len() >= 2);
    assert!(turn.tool_calls.iter().all(|t| t.status == ToolOutcome::Ok));
    assert_eq!(turn.final_status, TurnStatus::Completed);
    // The installed CLI is the pinned one (the stream's `system/init` names it).
    assert_eq!(
        turn.cli_version.as_deref(),
        Some(pinned("@anthropic-ai/claude-code").as_str())
    );
    assert_buckets_tile(turn);
    assert_model_saw_every_request(&r);
    // The telemetry and update opt-outs of the launch plan leave nothing to phone home.
    assert_eq!(phone_home_attempts(&r), 0);
    assert_replay_matches(&out, &r);
}

#[test]
fn a_process_the_agent_detached_does_not_outlive_the_task() {
    let out = scratch("live-claude-detached");
    // The mark at work: without the PID namespace (in one, the kernel kills the detached
    // process with the CLI before the host looks; see the namespace variant below).
    let r = run_task(
        "tasks/cleanup/detached/task.yaml",
        "claude-code",
        &out,
        &["--no-pid-namespace"],
    );
    // The CLI exited on its own, successfully: no stop of the host's was involved.
    assert_eq!(r.status, TaskStatus::Success, "{:?}", r.error);
    assert!(r.stop.is_none());
    // The agent's `setsid ... &` left the group and lost its parent; the host found it
    // by the turn's mark and stopped it.
    assert_eq!(r.cli.leftover_processes, Some(1));
    assert!(r.cli.mark.is_some());
    let left = processes_with("ce-detached-2.71828");
    assert!(left.is_empty(), "survivors: {left:?}");
    assert_replay_matches(&out, &r);

    // By default (a PID namespace per task) the process the agent detached dies with the
    // CLI, however it left: nothing survives, the task is the same success. (In the same
    // test: both runs' processes carry the one marker.)
    let out = scratch("live-claude-detached-pidns");
    let r = run_task("tasks/cleanup/detached/task.yaml", "claude-code", &out, &[]);
    assert_eq!(r.status, TaskStatus::Success, "{:?}", r.error);
    assert!(r.stop.is_none());
    if r.cli.containment.as_deref() == Some("pid_namespace") {
        assert_eq!(r.cli.leftover_processes, Some(0));
    }
    let left = processes_with("ce-detached-2.71828");
    assert!(left.is_empty(), "survivors: {left:?}");
}

#[test]
fn gemini_capped_while_its_stream_is_cut_is_still_a_cap() {
    let out = scratch("live-gemini-cap-large-output");
    let r = run_task(
        "tasks/run_limits/cap_with_large_output/task.yaml",
        "gemini-cli",
        &out,
        &[],
    );
    let t = r.turn.as_ref().unwrap();
    // Gemini CLI exits (53) before its last lines reach the pipe: no final result, yet its
    // documented exit code says its own cap stopped it.
    assert!(t.cli_result.is_none(), "the stream was expected to be cut");
    assert_eq!(r.status, TaskStatus::Success, "{:?}", r.error);
    assert!(t.max_turns_exhausted);
    assert_eq!(t.num_turns, 3);
    assert!(t.diagnostics.iter().any(|d| d.kind == "cap_from_exit_code"));
    assert_eq!(
        r.cap_note().as_deref(),
        Some("stopped by max_turns 2 (the CLI's own cap)")
    );
    assert_replay_matches(&out, &r);
}

/// The fields that must agree between the native cap and the host's backstop.
fn cap_view(r: &TaskResult) -> serde_json::Value {
    let t = r.turn.as_ref().unwrap();
    serde_json::json!({
        "status": r.status,
        "num_turns": t.num_turns,
        "max_turns_exhausted": t.max_turns_exhausted,
        "final_status": t.final_status,
        "tools": t.tool_calls.iter().map(|c| (c.name.clone(), c.status, c.input.clone())).collect::<Vec<_>>(),
    })
}

#[test]
fn max_turns_cap_native_and_backstop_agree() {
    let out = scratch("live-claude-cap");
    let native = run_task(
        "tasks/run_limits/max_turns_cap/task.yaml",
        "claude-code",
        &out.join("native"),
        &[],
    );
    let backstop = run_task(
        "tasks/run_limits/max_turns_cap/task.yaml",
        "claude-code",
        &out.join("backstop"),
        &["--no-native-limits"],
    );
    for r in [&native, &backstop] {
        let t = r.turn.as_ref().unwrap();
        assert_eq!(t.num_turns, 3);
        assert!(t.max_turns_exhausted);
        assert_eq!(t.tool_calls.len(), 2, "the two allowed calls' tools ran");
        let steps = std::fs::read_to_string(
            result_dir(
                &out.join(if std::ptr::eq(r, &native) {
                    "native"
                } else {
                    "backstop"
                }),
                "max_turns_cap",
                "claude-code",
            )
            .join("workspace/steps.txt"),
        )
        .unwrap();
        assert_eq!(steps, "1\n2\n");
        // A capped run is still graded; its criteria pass, so it is a success.
        assert_eq!(r.status, TaskStatus::Success);
    }
    assert!(native.cli.argv.contains(&"--max-turns".to_string()));
    assert!(!backstop.cli.argv.contains(&"--max-turns".to_string()));
    assert_eq!(backstop.stop.as_ref().unwrap().reason.as_str(), "max_turns");
    // Who capped the run is said wherever the run is shown.
    assert_eq!(
        native.cap_note().as_deref(),
        Some("stopped by max_turns 2 (the CLI's own cap)")
    );
    assert_eq!(
        backstop.cap_note().as_deref(),
        Some("stopped by max_turns 2 (the host's backstop)")
    );
    let summary: coder_eval::results::RunSummary =
        serde_json::from_str(&std::fs::read_to_string(out.join("backstop/run.json")).unwrap())
            .unwrap();
    assert_eq!(summary.rows[0].capped, backstop.cap_note());
    assert_eq!(cap_view(&native), cap_view(&backstop));
    assert_replay_matches(&out.join("native"), &native);
    assert_replay_matches(&out.join("backstop"), &backstop);
}

#[test]
fn turn_timeout_kills_the_whole_group() {
    let out = scratch("live-claude-timeout");
    let r = run_task(
        "tasks/run_limits/turn_timeout/task.yaml",
        "claude-code",
        &out,
        &[],
    );
    assert_eq!(r.status, TaskStatus::Timeout);
    assert_eq!(r.stop.as_ref().unwrap().reason.as_str(), "turn_timeout");
    let turn = r.turn.as_ref().unwrap();
    // The partial turn is kept: the model call and the interrupted tool.
    assert_eq!(turn.final_status, TurnStatus::Timeout);
    assert_eq!(turn.num_turns, 1);
    assert_eq!(turn.tool_calls.len(), 1);
    assert_eq!(turn.tool_calls[0].status, ToolOutcome::Interrupted);
    assert_buckets_tile(turn);
    // The agent's `python3` wait (a grandchild) and everything else of the group are gone.
    let left = processes_with("31.4159");
    assert!(left.is_empty(), "survivors: {left:?}");
    assert_replay_matches(&out, &r);
    // In junit.xml a timeout is an error (not a test failure), typed by the status.
    let xml = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    let case = &report.test_suites[0].test_cases[0];
    match &case.status {
        quick_junit::TestCaseStatus::NonSuccess {
            kind, ty, message, ..
        } => {
            assert_eq!(*kind, quick_junit::NonSuccessKind::Error);
            assert_eq!(ty.as_ref().map(|t| t.as_str()), Some("TIMEOUT"));
            let message = message.as_ref().map(|m| m.as_str()).unwrap_or("");
            assert!(message.contains("turn_timeout"), "{message}");
        }
        other => panic!("expected an error: {other:?}"),
    }
}

#[test]
fn ctrl_c_stops_the_cli_and_keeps_what_was_recorded() {
    use std::os::unix::process::CommandExt;
    let out = scratch("live-claude-ctrl-c");
    let mut cmd = Command::new(bin());
    cmd.arg("run")
        .arg(root().join("tasks/run_limits/turn_timeout/task.yaml"))
        .args(["--harness", "claude-code", "--out"])
        .arg(&out)
        .arg("--scripted-model")
        .arg(root().join("tests/fixtures/ctrl_c_script.yaml"))
        .process_group(0);
    if netns_available() {
        cmd.arg("--isolate-network");
    }
    let mut child = cmd.spawn().unwrap();
    // Wait until the agent's long command is running, then press Ctrl-C (SIGINT to the
    // foreground process group, as a terminal does).
    let recording = result_dir(&out, "turn_timeout", "claude-code").join("recording.jsonl");
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(&recording).is_ok_and(|r| r.contains("tool_use")) {
        assert!(started.elapsed().as_secs() < 60, "the tool never started");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "128 + SIGINT");
    let r: TaskResult = serde_json::from_str(
        &std::fs::read_to_string(result_dir(&out, "turn_timeout", "claude-code").join("task.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(r.stop.as_ref().unwrap().reason.as_str(), "interrupted");
    assert_eq!(r.status, TaskStatus::Error);
    let turn = r.turn.as_ref().unwrap();
    assert_eq!(turn.tool_calls.len(), 1, "the partial turn is kept");
    assert!(
        std::fs::read_to_string(&recording)
            .unwrap()
            .contains("\"t\":\"stop\"")
    );
    assert!(!coder_eval::process::group_alive(r.cli.pgid.unwrap()));
    assert!(processes_with("27.1828").is_empty());
}

#[test]
fn a_cli_that_prints_nothing_is_an_error_explained_by_exit_code_and_stderr() {
    let out = scratch("silent-cli");
    let cli = root().join("tests/fixtures/silent-cli.sh");
    let r = run_task(
        "tasks/scenarios/hello/task.yaml",
        "gemini-cli",
        &out,
        &["--cli", cli.to_str().unwrap()],
    );
    assert_eq!(r.status, TaskStatus::Error);
    let error = r.error.unwrap();
    assert!(error.contains("printed nothing on stdout"), "{error}");
    // Gemini CLI's launch plan documents its exit codes: 52 is a configuration error.
    assert!(error.contains("code 52 (config_error: "), "{error}");
    assert!(error.contains("invalid API key"), "{error}");
    assert_eq!(
        r.cli.exit_code_meaning.as_ref().map(|m| m.kind.as_str()),
        Some("config_error")
    );
    let turn = r.turn.unwrap();
    assert_eq!(turn.exit.unwrap().code, Some(52));
    assert_eq!(turn.stdout_lines, 0);
}
