//! Infrastructure retries, the suite's plain progress lines and the CLI's version without
//! its probe, offline: `coder-eval run` on the real Claude Code CLI against the scripted
//! model, started through a stand-in script (`--cli`) that counts its launches and its
//! `--version` probes, and crashes on its first launch where a test asks it to.

use crate::support::{
    Crash, bin, executable, lines, root, run_isolated, scratch, show, stand_in_claude, task_json,
};
use coder_eval::results::TaskStatus;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A task the scripted model solves (it writes `out.txt`); `criterion` is the shell
/// command that grades it.
fn task(dir: &Path, criterion: &str) -> PathBuf {
    task_with(dir, criterion, "")
}

/// [`task`], with `extra` (top-level YAML) appended to the task file.
fn task_with(dir: &Path, criterion: &str, extra: &str) -> PathBuf {
    std::fs::write(
        dir.join("script.yaml"),
        "name: write\nreplies:\n  - text: I'll write it.\n    tool_calls:\n      - write_file: {path: out.txt, content: \"hi\\n\"}\n  - text: Done.\n",
    )
    .unwrap();
    let task = dir.join("task.yaml");
    std::fs::write(
        &task,
        format!(
            "task_id: retried\ninitial_prompt: Write out.txt.\nagent:\n  type: claude-code\n  scripted_model: script.yaml\nrun_limits:\n  max_turns: 5\n  turn_timeout: 120\nsuccess_criteria:\n  - type: run_command\n    description: graded\n    command: \"{criterion}\"\n    expected_exit_code: 0\n{extra}"
        ),
    )
    .unwrap();
    task
}

/// [`stand_in_claude`] at `<dir>/claude`, crashing on launch `crash_on` (0: none), without
/// a pause; returns its path.
fn stand_in(dir: &Path, crash_on: u32) -> PathBuf {
    let cli = dir.join("claude");
    stand_in_claude(&cli, dir, Crash::Launches(&[crash_on]), 0);
    cli
}

/// `coder-eval ARGS… --out OUT --cli CLI TASK` (isolated where the machine can), waited
/// for.
fn run_task(args: &[&str], out: &Path, cli: &Path, task: &Path) -> Output {
    let mut args = args.to_vec();
    args.push("--out");
    run_isolated(&args, &[out, Path::new("--cli"), cli, task])
}

/// A task `id` on the scripted model playing `replies` (the script's `replies:` list, as
/// YAML), stopped after `turn_timeout` s, passed when `out.txt` exists.
fn scripted_task(dir: &Path, id: &str, replies: &str, turn_timeout: u32) -> PathBuf {
    std::fs::write(
        dir.join("script.yaml"),
        format!("name: {id}\nreplies:\n{replies}"),
    )
    .unwrap();
    let task = dir.join("task.yaml");
    std::fs::write(
        &task,
        format!("task_id: {id}\ninitial_prompt: Write out.txt.\nagent:\n  type: claude-code\n  scripted_model: script.yaml\nrun_limits:\n  max_turns: 5\n  turn_timeout: {turn_timeout}\nsuccess_criteria:\n  - type: file_exists\n    path: out.txt\n"),
    )
    .unwrap();
    task
}

/// A stand-in for `claude` at `<dir>/claude`: answers `--version`, appends a line to
/// `<dir>/launches` at each launch, runs the bash lines `setup`, then the real Claude Code
/// CLI.
fn counting_claude(dir: &Path, setup: &str) -> PathBuf {
    let cli = dir.join("claude");
    let real = root().join("harnesses/node_modules/.bin/claude");
    executable(
        &cli,
        &format!(
            "#!/bin/bash\nif [ \"$1\" = \"--version\" ]; then echo \"stand-in 1.0\"; exit 0; fi\necho l >> {d}/launches\n{setup}\nexec {real} \"$@\"\n",
            d = dir.display(),
            real = real.display()
        ),
    );
    cli
}

#[test]
fn a_cli_crash_before_the_first_model_call_is_run_again_and_the_attempt_kept() {
    let dir = scratch("retry-crash");
    let cli = stand_in(&dir, 1);
    let task = task(&dir, "test -f out.txt");
    let out = dir.join("out");
    let o = run_task(
        &[
            "run",
            "--retry-initial-delay",
            "0.2",
            "--repeats",
            "2",
            "--jobs",
            "1",
        ],
        &out,
        &cli,
        &task,
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    // Replicate r00's first launch crashes: r00 runs twice, r01 once.
    assert_eq!(lines(&dir.join("launches")), 3, "{}", show(&o));
    let unit = out.join("retried/claude-code/r00");
    let t = task_json(&unit.join("task.json"));
    assert_eq!(t.status, TaskStatus::Success);
    assert_eq!(t.attempts, Some(2));
    assert_eq!(t.infra_retries.len(), 1, "{:?}", t.infra_retries);
    let r = &t.infra_retries[0];
    assert_eq!(
        (r.attempt, r.cause.as_str(), r.path.as_str(), r.delay_ms),
        (1, "crash_before_first_call", "attempts/1", 200)
    );
    // The first attempt is kept whole: its task.json (the error), its stderr, its
    // workspace; the final attempt's files are where a task's result belongs.
    let first = task_json(&unit.join("attempts/1/task.json"));
    assert_eq!(first.status, TaskStatus::Error);
    assert_eq!(first.attempts, None);
    let stderr = std::fs::read_to_string(unit.join("attempts/1/stderr.log")).unwrap();
    assert!(
        stderr.contains("crashed before the first model call"),
        "{stderr}"
    );
    assert!(unit.join("attempts/1/workspace").is_dir());
    assert!(!unit.join("attempts/1/workspace/out.txt").exists());
    assert!(unit.join("workspace/out.txt").exists());
    assert!(unit.join("recording.jsonl").exists());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("retried/claude-code/r00: attempt 1 ended in an infrastructure error"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_graded_failure_is_never_run_again() {
    let dir = scratch("retry-graded");
    let cli = stand_in(&dir, 0);
    let task = task(&dir, "test -f missing.txt");
    let out = dir.join("out");
    let o = run_task(&["run", "--retry-initial-delay", "0.2"], &out, &cli, &task);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert_eq!(lines(&dir.join("launches")), 1, "{}", show(&o));
    let unit = out.join("retried/claude-code");
    let t = task_json(&unit.join("task.json"));
    assert_eq!(t.status, TaskStatus::Failure);
    assert_eq!(t.attempts, Some(1));
    // A unit run once says nothing of attempts in its row.
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("[attempt"),
        "{}",
        show(&o)
    );
    assert!(t.infra_retries.is_empty());
    assert!(!unit.join("attempts").exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn retries_can_be_turned_off() {
    let dir = scratch("retry-off");
    let cli = stand_in(&dir, 1);
    let task = task(&dir, "test -f out.txt");
    let out = dir.join("out");
    let o = run_task(&["run", "--infra-retries", "0"], &out, &cli, &task);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert_eq!(lines(&dir.join("launches")), 1);
    let t = task_json(&out.join("retried/claude-code/task.json"));
    assert_eq!(t.status, TaskStatus::Error);
    assert_eq!(t.attempts, Some(1));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_interrupt_during_a_retry_backoff_leaves_the_unit_for_resume_to_run_again() {
    use std::io::BufRead;
    let dir = scratch("retry-sigterm");
    let cli = stand_in(&dir, 1);
    let task = task(&dir, "test -f out.txt");
    let out = dir.join("out");
    let mut child = Command::new(bin())
        .args(["run", "--retry-initial-delay", "120", "--out"])
        .arg(&out)
        .arg("--cli")
        .arg(&cli)
        .arg(&task)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the run ended before its backoff: {seen}"
        );
        seen.push_str(&line);
        if line.contains("running it again in 120.0 s") {
            break;
        }
    }
    // SIGTERM while it waits to run the crashed attempt again.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{seen}{rest}");
    let t = task_json(&out.join("retried/claude-code/task.json"));
    assert_eq!(t.status, TaskStatus::Error);
    assert_eq!(
        t.error_kind.as_deref(),
        Some("interrupted"),
        "{:?}",
        t.error
    );
    assert!(
        t.error
            .as_deref()
            .is_some_and(|e| e.contains("before retrying an infrastructure error")),
        "{:?}",
        t.error
    );
    assert_eq!(lines(&dir.join("launches")), 1);
    // Options that would change the units are refused with --resume, not ignored.
    for extra in [&["--tags", "x"][..], &["--cli", "/bin/true"][..]] {
        let o = Command::new(bin())
            .args(["run", "--resume"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", show(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("cannot be given with it"),
            "{extra:?}: {}",
            show(&o)
        );
    }
    assert_eq!(lines(&dir.join("launches")), 1);
    // Resume does not keep it as done: it runs again (and passes).
    let o = Command::new(bin())
        .args(["run", "--resume"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("0 unit(s) complete and kept, 1 to run"),
        "{}",
        show(&o)
    );
    assert_eq!(lines(&dir.join("launches")), 2);
    let t = task_json(&out.join("retried/claude-code/task.json"));
    assert_eq!((t.status, t.attempts), (TaskStatus::Success, Some(1)));
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 15 trial: a unit run again into its folder (a shard run again, `run --resume`)
/// replaced the attempts/ an earlier run kept there.
#[test]
fn a_unit_run_again_keeps_the_attempts_of_the_earlier_run_and_numbers_on() {
    let dir = scratch("retry-again");
    let cli = dir.join("claude");
    stand_in_claude(&cli, &dir, Crash::Launches(&[1, 2]), 0);
    let task = task(&dir, "test -f out.txt");
    let out = dir.join("out");
    // Both launches crash: attempt 1 is kept, attempt 2 is the result (retries ran out).
    let o = run_task(
        &[
            "run",
            "--infra-retries",
            "1",
            "--retry-initial-delay",
            "0.1",
        ],
        &out,
        &cli,
        &task,
    );
    let unit = out.join("retried/claude-code");
    let t = task_json(&unit.join("task.json"));
    assert_eq!(
        (t.status, t.attempts),
        (TaskStatus::Error, Some(2)),
        "{}",
        show(&o)
    );
    assert_eq!(lines(&dir.join("launches")), 2);
    let o = Command::new(bin())
        .args(["run", "--resume"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert_eq!(lines(&dir.join("launches")), 3);
    let t = task_json(&unit.join("task.json"));
    assert_eq!((t.status, t.attempts), (TaskStatus::Success, Some(3)));
    let kept: Vec<(u32, &str, &str)> = t
        .infra_retries
        .iter()
        .map(|r| (r.attempt, r.cause.as_str(), r.path.as_str()))
        .collect();
    assert_eq!(
        kept,
        vec![
            (1, "crash_before_first_call", "attempts/1"),
            (2, "crash_before_first_call", "attempts/2"),
        ]
    );
    for n in [1, 2] {
        let a = task_json(&unit.join(format!("attempts/{n}/task.json")));
        assert_eq!(a.status, TaskStatus::Error, "attempt {n}");
        assert!(
            unit.join(format!("attempts/{n}/stderr.log")).is_file(),
            "attempt {n}"
        );
    }
    assert!(unit.join("workspace/out.txt").exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_suite_off_a_terminal_prints_plain_progress_lines_and_probes_the_version_once_across_runs() {
    let dir = scratch("progress-plain");
    let cli = stand_in(&dir, 0);
    let task = task(&dir, "test -f out.txt");
    let mut outputs = Vec::new();
    for n in 0..2 {
        let out = dir.join(format!("out{n}"));
        let o = run_task(&["run", "--repeats", "2"], &out, &cli, &task);
        assert_eq!(o.status.code(), Some(0), "{}", show(&o));
        let t = task_json(&out.join("retried/claude-code/r01/task.json"));
        assert_eq!(t.cli.version.as_deref(), Some("stand-in 1.0"));
        outputs.push(o);
    }
    // One probe in all: the second unit of the first run asked the process's cache, the
    // second run the cache on disk (same file, same mtime and size).
    assert_eq!(lines(&dir.join("versions")), 1);
    let o = &outputs[0];
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(
        stderr.contains("progress: 1/2 done, ")
            && stderr.contains("progress: 2/2 done, 0 running, 0 failed; elapsed "),
        "{stderr}"
    );
    // Claude Code reports its cost: a figure, no unknown.
    let last = stderr
        .lines()
        .find(|l| l.starts_with("progress: 2/2"))
        .unwrap();
    assert!(
        last.contains("; cost $") && !last.contains("unknown"),
        "{last}"
    );
    // stdout keeps the task rows alone.
    assert!(!stdout.contains("progress:"), "{stdout}");
    assert_eq!(
        stdout.lines().filter(|l| l.contains("retried")).count(),
        2,
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_version_comes_from_the_package_manifest_without_a_probe() {
    let dir = scratch("version-manifest");
    let pkg = dir.join("node_modules/stand-in-agent");
    std::fs::create_dir_all(pkg.join("bin")).unwrap();
    std::fs::write(
        pkg.join("package.json"),
        r#"{"name":"stand-in-agent","version":"7.7.7","bin":{"claude":"bin/claude.sh"}}"#,
    )
    .unwrap();
    stand_in_claude(&pkg.join("bin/claude.sh"), &dir, Crash::Launches(&[0]), 0);
    std::fs::create_dir_all(dir.join("node_modules/.bin")).unwrap();
    let link = dir.join("node_modules/.bin/claude");
    std::os::unix::fs::symlink("../stand-in-agent/bin/claude.sh", &link).unwrap();
    let task = task(&dir, "test -f out.txt");
    let out = dir.join("out");
    let o = run_task(&["run"], &out, &link, &task);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let t = task_json(&out.join("retried/claude-code/task.json"));
    assert_eq!(t.cli.version.as_deref(), Some("7.7.7"));
    assert_eq!(lines(&dir.join("versions")), 0, "the CLI was probed");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_transient_api_status_is_read_from_recorded_streams_and_a_refusal_is_not_one() {
    use coder_eval::suite::infra::api_status_of;
    use coder_eval::turn::replay::{ReplayOptions, replay};
    let status = |harness: &str, rel: &str| {
        let turn = replay(&crate::support::corpus(rel), &ReplayOptions::new(harness)).unwrap();
        api_status_of(&turn)
    };
    // Claude Code's result `error: "Rate limit exceeded…"`; OpenCode's error event.
    assert_eq!(
        status(
            "claude-code",
            "public/claude-code/takopi-api-error-result.jsonl"
        ),
        Some(429)
    );
    assert_eq!(
        status("opencode", "public/opencode/takopi-stream_error.jsonl"),
        Some(429)
    );
    // An API error that would repeat (the organization disabled access): not transient.
    assert_eq!(
        status(
            "claude-code",
            "field2/claude-code/B38-api-error-reported-as-success.recording.jsonl"
        ),
        None
    );
}

#[test]
fn the_progress_never_counts_more_tasks_running_than_the_jobs() {
    use coder_eval::run::progress::Progress;
    let dir = scratch("progress-running");
    // Every launch crashes at once (no retries): the suite is quick, and each task ends
    // while the next one waits for its place.
    let cli = dir.join("claude");
    executable(&cli, "#!/bin/sh\nexit 3\n");
    let task = task(&dir, "true");
    let overrides = coder_eval::suite::experiment::Overrides {
        repeats: Some(4),
        ..Default::default()
    };
    let (resolved, _) =
        coder_eval::suite::experiment::resolve_file(&task, &Default::default(), None, &overrides)
            .unwrap();
    let mut options = coder_eval::run::RunOptions::new(dir.join("out"));
    options.cli_override = Some(cli);
    options.retry.max_retries = 0;
    let progress = std::sync::Arc::new(Progress::new(false));
    options.progress = Some(progress.clone());
    let prepared = coder_eval::run::prepare_units(resolved, &[], &options).unwrap();
    assert_eq!(prepared.len(), 4);
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // The host takes its time over each finished task (printing, writing run.json): the
    // next task has started by then.
    let results = runtime
        .block_on(coder_eval::run::run_all(
            prepared,
            Vec::new(),
            &options,
            1,
            rx,
            |_| std::thread::sleep(std::time::Duration::from_millis(300)),
        ))
        .unwrap();
    assert_eq!(results.len(), 4);
    let snap = progress.snapshot();
    assert_eq!((snap.done, snap.running), (4, 0));
    assert_eq!(snap.peak_running, 1, "--jobs 1 showed more running");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_task_files_retry_block_sets_its_retries_and_the_command_line_beats_it() {
    // `retry: {max_retries: 0}`: the crash is the result.
    let dir = scratch("retry-block-off");
    let cli = stand_in(&dir, 1);
    let task = task_with(&dir, "test -f out.txt", "retry:\n  max_retries: 0\n");
    let out = dir.join("out");
    let o = run_task(&["run"], &out, &cli, &task);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert_eq!(lines(&dir.join("launches")), 1);
    std::fs::remove_dir_all(&dir).ok();
    // The command line beats the file: one retry, after 0.1 s.
    let dir = scratch("retry-block-cli");
    let cli = stand_in(&dir, 1);
    let task = task_with(&dir, "test -f out.txt", "retry:\n  max_retries: 0\n");
    let out = dir.join("out");
    let o = run_task(
        &[
            "run",
            "--infra-retries",
            "1",
            "--retry-initial-delay",
            "0.1",
        ],
        &out,
        &cli,
        &task,
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let t = task_json(&out.join("retried/claude-code/task.json"));
    assert_eq!(t.attempts, Some(2));
    assert_eq!(t.infra_retries[0].delay_ms, 100);
    std::fs::remove_dir_all(&dir).ok();

    // The block's delay, set from the command line's -D layer (merged per key).
    let dir = scratch("retry-block-delay");
    let cli = stand_in(&dir, 1);
    let task = task_with(&dir, "test -f out.txt", "retry:\n  max_retries: 1\n");
    let out = dir.join("out");
    let o = run_task(&["run", "-D", "retry.initial_delay=0.3"], &out, &cli, &task);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let t = task_json(&out.join("retried/claude-code/task.json"));
    assert_eq!((t.attempts, t.infra_retries[0].delay_ms), (Some(2), 300));
    std::fs::remove_dir_all(&dir).ok();

    // A bad block is refused before anything starts, naming the field and its line.
    let dir = scratch("retry-block-bad");
    let cli = stand_in(&dir, 0);
    for (block, says) in [
        ("retry:\n  max_retries: 50\n", "retry.max_retries"),
        ("retry:\n  max_retry: 1\n", "max_retry"),
    ] {
        let task = task_with(&dir, "true", block);
        let o = run_task(&["run"], &dir.join("out"), &cli, &task);
        assert_eq!(o.status.code(), Some(2), "{}", show(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(says) && (err.contains("task.yaml:15:") || err.contains("task.yaml:16:")),
            "{err}"
        );
        assert_eq!(lines(&dir.join("launches")), 0);
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_429_from_the_model_api_is_retried_and_recorded_with_its_status() {
    // The scripted model answers the first request of turn 1 with HTTP 429 (once per
    // server: each attempt plays the script anew). The first launch of Claude Code is
    // told not to retry by itself (CLAUDE_CODE_MAX_RETRIES=0), so its turn ends on the
    // 429; the second may retry once and gets past it.
    let dir = scratch("retry-429");
    let task = scripted_task(
        &dir,
        "r429",
        "  - http_error: {status: 429, message: Slow down, times: 1}\n    text: I'll write it.\n    tool_calls:\n      - write_file: {path: out.txt, content: \"hi\\n\"}\n  - text: Done.\n",
        120,
    );
    let cli = counting_claude(
        &dir,
        &format!(
            "if [ \"$(wc -l < {d}/launches)\" -eq 1 ]; then export CLAUDE_CODE_MAX_RETRIES=0; else export CLAUDE_CODE_MAX_RETRIES=2; fi",
            d = dir.display()
        ),
    );
    let out = dir.join("out");
    let o = run_task(&["run", "--retry-initial-delay", "0.2"], &out, &cli, &task);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert_eq!(lines(&dir.join("launches")), 2);
    let unit = out.join("r429/claude-code");
    let t = task_json(&unit.join("task.json"));
    assert_eq!((t.status, t.attempts), (TaskStatus::Success, Some(2)));
    let r = &t.infra_retries[0];
    assert_eq!(
        (r.cause.as_str(), r.http_status, r.path.as_str()),
        ("api_status", Some(429), "attempts/1")
    );
    let first = task_json(&unit.join("attempts/1/task.json"));
    assert_eq!(first.status, TaskStatus::Error);
    assert!(
        first.error.as_deref().is_some_and(|e| e.contains("429")),
        "{:?}",
        first.error
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("infrastructure error (HTTP 429)"),
        "{}",
        show(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_sustained_5xx_outage_that_runs_into_the_timeout_is_an_infrastructure_retry() {
    // The scripted model answers every request with HTTP 503; Claude Code retries by
    // itself (up to 10 times, with its own backoff) until the turn's timeout stops it.
    let dir = scratch("retry-outage");
    let task = scripted_task(
        &dir,
        "outage",
        "  - http_error: {status: 503, message: Service Unavailable}\n    text: never seen\n",
        8,
    );
    let cli = counting_claude(&dir, "export CLAUDE_CODE_MAX_RETRIES=10");
    let out = dir.join("out");
    let o = run_task(
        &[
            "run",
            "--infra-retries",
            "1",
            "--retry-initial-delay",
            "0.1",
        ],
        &out,
        &cli,
        &task,
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    // Run again once (the outage went on): two launches, both kept.
    assert_eq!(lines(&dir.join("launches")), 2, "{}", show(&o));
    let unit = out.join("outage/claude-code");
    let t = task_json(&unit.join("task.json"));
    assert_eq!((t.status, t.attempts), (TaskStatus::Timeout, Some(2)));
    let r = &t.infra_retries[0];
    assert_eq!(
        (r.cause.as_str(), r.http_status, r.path.as_str()),
        ("api_outage", Some(503), "attempts/1")
    );
    assert_eq!(
        task_json(&unit.join("attempts/1/task.json")).status,
        TaskStatus::Timeout
    );
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("infrastructure error (HTTP 503 from the model API until the timeout)"),
        "{}",
        show(&o)
    );
    // Out of retries, it stays an infrastructure error: `--resume` runs it again.
    assert_eq!(
        coder_eval::suite::infra::infra_cause(&t),
        Some(coder_eval::suite::infra::InfraCause::ApiOutage(503))
    );
    std::fs::remove_dir_all(&dir).ok();
}
