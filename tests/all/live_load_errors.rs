//! Early stop and budgets that cannot work as written are refused at load, before any agent
//! starts, with an error naming the field (exit code 2, nothing run).

use crate::support::{bin, root, scratch};
use std::process::Command;

/// Runs `coder-eval run`, then `coder-eval check`, on a task whose `run_limits` and
/// criteria are given; returns each one's exit code and stderr.
fn load(name: &str, harness: &str, run_limits: &str, criteria: &str) -> (i32, String, i32, String) {
    let dir = scratch(&format!("live-load-{name}"));
    let task = dir.join("task.yaml");
    std::fs::write(
        &task,
        format!(
            "task_id: {name}\ninitial_prompt: hi\nagent: {{type: {harness}}}\nrun_limits: {run_limits}\nsuccess_criteria:\n{criteria}"
        ),
    )
    .unwrap();
    let out = Command::new(bin())
        .arg("run")
        .arg(&task)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let checked = Command::new(bin())
        .arg("check")
        .arg(&task)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        checked.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&checked.stderr).into_owned(),
    )
}

const CE: &str = "  - type: command_executed\n    command_pattern: x\n";

#[track_caller]
fn refused(name: &str, harness: &str, run_limits: &str, criteria: &str, wants: &[&str]) {
    let (code, stderr, check_code, check_stderr) = load(name, harness, run_limits, criteria);
    assert_eq!(code, 2, "{name}: {stderr}");
    // `check` promises the checks `run` makes before any agent starts: same verdict, same
    // words.
    assert_eq!(
        check_code, 2,
        "{name}: check accepts what run refuses: {check_stderr}"
    );
    for w in wants {
        assert!(stderr.contains(w), "{name}: `{w}` not in: {stderr}");
        assert!(
            check_stderr.contains(w),
            "{name}: check: `{w}` not in: {check_stderr}"
        );
    }
}

#[test]
fn bad_budgets_name_their_field() {
    for (field, value) in [
        ("max_input_tokens", "0"),
        ("max_output_tokens", "-5"),
        ("max_total_tokens", "1.5"),
        ("max_usd", "0"),
        ("max_usd", "-1"),
        ("expected_turns", "0"),
        ("expected_tool_calls", "0"),
        ("stop_early_gate_threshold", "0"),
        ("stop_early_gate_threshold", "1.5"),
    ] {
        refused(
            field,
            "claude-code",
            &format!("{{{field}: {value}}}"),
            CE,
            &[field],
        );
    }
}

#[test]
fn max_usd_is_refused_where_the_stream_reports_no_cost() {
    for harness in ["codex", "gemini-cli"] {
        refused(
            "usd",
            harness,
            "{max_usd: 1.0}",
            CE,
            &["max_usd", "reports no"],
        );
    }
}

#[test]
fn arming_what_cannot_be_live_is_refused() {
    refused(
        "not_live",
        "claude-code",
        "{}",
        "  - type: file_exists\n    path: a.txt\n    stop_early: {}\n",
        &["file_exists", "cannot be judged live"],
    );
    refused(
        "weight0",
        "claude-code",
        "{}",
        &format!("{CE}    weight: 0\n    stop_early: {{}}\n"),
        &["weight 0", "stop_early"],
    );
    refused(
        "dead",
        "claude-code",
        "{}",
        &format!("{CE}    min_count: 0\n    stop_early: {{on_pass: stop}}\n"),
        &["success_criteria[0]", "can decide nothing"],
    );
    refused(
        "inert",
        "claude-code",
        "{}",
        &format!("{CE}    min_count: 0\n    stop_early: {{}}\n"),
        &["success_criteria[0]"],
    );
    refused(
        "stop_when",
        "claude-code",
        "{stop_early: true}",
        &format!("{CE}    max_count: 2\n    stop_when: pass\n"),
        &["stop_when: pass", "never pass"],
    );
    refused(
        "master_arm",
        "claude-code",
        "{stop_early: true}",
        &format!("{CE}    stop_early: {{}}\n"),
        &["run_limits.stop_early: true", "stop_when"],
    );
    refused(
        "decide_within0",
        "claude-code",
        "{}",
        &format!("{CE}    stop_early: {{decide_within: 0}}\n"),
        &["decide_within"],
    );
}

/// `check --harness codex` refuses `max_usd` as `run --harness codex` does, whatever the
/// task's own `agent.type`.
#[test]
fn check_with_harness_flag_refuses_what_run_refuses() {
    let dir = scratch("live-load-usd-flag");
    let task = dir.join("usd.yaml");
    std::fs::write(
        &task,
        "task_id: my_usd\ninitial_prompt: hi\nagent: {type: claude-code}\nrun_limits: {max_usd: 1.0}\nsuccess_criteria:\n  - type: command_executed\n    command_pattern: x\n",
    )
    .unwrap();
    let run = Command::new(bin())
        .args(["run", "--harness", "codex", "--out"])
        .arg(dir.join("out"))
        .arg(&task)
        .output()
        .unwrap();
    let check = Command::new(bin())
        .args(["check", "--harness", "codex"])
        .arg(&task)
        .output()
        .unwrap();
    let check_err = String::from_utf8_lossy(&check.stderr);
    assert_eq!(run.status.code(), Some(2));
    assert_eq!(check.status.code(), Some(2), "{check_err}");
    assert!(check_err.contains("max_usd"), "{check_err}");
}

/// Writes `text` to `<scratch>/<file>` and runs `coder-eval ARGS FILE`; the exit code and
/// stderr.
fn on_file(name: &str, file: &str, text: &str, args: &[&str]) -> (i32, String) {
    let dir = scratch(&format!("live-load-{name}"));
    let task = dir.join(file);
    std::fs::write(&task, text).unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(args).arg(&task);
    if args.first() == Some(&"run") {
        cmd.arg("--out").arg(dir.join("out"));
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A refusal made once the file has loaded (a harness refusing `max_usd`, an early stop
/// that cannot work) names FILE:LINE of the field it refuses, from `run` and `check`.
#[test]
fn refusals_name_the_file_and_line_of_their_field() {
    let usd = "task_id: my_usd\ninitial_prompt: hi\nrun_limits:\n  max_turns: 3\n  max_usd: 1\n";
    for cmd in ["run", "check"] {
        let (code, err) = on_file("usd-line", "usd.yaml", usd, &[cmd, "--harness", "codex"]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("usd.yaml:5:3: task `my_usd`"), "{cmd}: {err}");
    }
    let stop = "task_id: st\ninitial_prompt: hi\nagent: {type: claude-code}\nsuccess_criteria:\n  - type: command_executed\n    command_pattern: x\n  - type: file_exists\n    path: a.txt\n    stop_early: {}\n";
    for cmd in ["run", "check"] {
        let (code, err) = on_file("stop-line", "stop.yaml", stop, &[cmd]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("stop.yaml:9:5: task `st`: early stop"),
            "{cmd}: {err}"
        );
    }
}

/// `check` places each bad field at its own line (not the first key of its section),
/// reports every bad field of one section, and says what a token count is.
#[test]
fn check_places_each_bad_field_at_its_own_line() {
    let text = "task_id: t\ninitial_prompt: hi\nagent:\n  type: claude-code\n  timeout_seconds: -3\nrun_limits:\n  max_turns: 3\n  max_usd: -1\n  max_total_tokens: -5\n  max_output_tokens: abc\n";
    let (code, err) = on_file("field-lines", "f.yaml", text, &["check"]);
    assert_eq!(code, 2, "{err}");
    for want in [
        "f.yaml:5:3: agent: agent.timeout_seconds",
        "f.yaml:8:3: run_limits: max_usd",
        "f.yaml:9:3: run_limits: max_total_tokens",
        "f.yaml:10:3: run_limits: max_output_tokens must be a whole number of tokens",
    ] {
        assert!(err.contains(want), "`{want}` not in: {err}");
    }
    assert!(!err.contains("expected f64"), "{err}");
    let time = "task_id: t\ninitial_prompt: hi\nagent:\n  type: claude-code\n  budget_mode: time\n";
    let (code, err) = on_file("budget-line", "b.yaml", time, &["check"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("b.yaml:5:3: agent.budget_mode"), "{err}");
}

/// `check` reports every refusal of a file that loads, not only the first: the early stop
/// and each harness's (`--harness` twice), each on its own `error:` line, and the file
/// counted once as not loaded (exit code 2).
#[test]
fn check_reports_every_refusal_of_a_loaded_file() {
    let text = "task_id: every\ninitial_prompt: hi\nrun_limits:\n  max_turns: 3\n  max_usd: 1\nsuccess_criteria:\n  - type: command_executed\n    command_pattern: x\n  - type: file_exists\n    path: a.txt\n    stop_early: {}\n";
    let args = ["check", "--harness", "codex", "--harness", "gemini-cli"];
    let (code, err) = on_file("every-refusal", "every.yaml", text, &args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("every.yaml:11:5: task `every`: early stop"),
        "{err}"
    );
    for harness in ["codex", "gemini-cli"] {
        assert!(
            err.lines().any(|l| l.starts_with("error: ")
                && l.contains("every.yaml:5:3: task `every`")
                && l.contains(harness)),
            "no max_usd refusal on {harness} in: {err}"
        );
    }
    assert!(err.contains("1 of 1 task files did not load"), "{err}");
}

/// `run --gateway` on a time-budget task is refused at load, before any agent starts:
/// exit code 2, the error naming the option and the task field at its line, no result
/// folder made.
#[test]
fn gateway_on_a_time_budget_task_is_refused_at_load() {
    let dir = scratch("live-load-gateway-time");
    let task = dir.join("tb.yaml");
    std::fs::write(
        &task,
        "task_id: tb\ninitial_prompt: hi\nagent:\n  type: claude-code\n  budget_mode: time\n  timeout_seconds: 30\n",
    )
    .unwrap();
    let out = Command::new(bin())
        .args(["run", "--gateway", "--out"])
        .arg(dir.join("out"))
        .arg(&task)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("tb.yaml:5:3: task `tb`"), "{err}");
    assert!(
        err.contains("--gateway") && err.contains("agent.budget_mode: time"),
        "{err}"
    );
    assert!(!dir.join("out").join("tb").exists(), "a unit started");
}

/// `check` reports every error of a file in one pass (trial of 16, F4, its files
/// t5/bad1.yaml and bad2.yaml): each bad field of a flow-style `run_limits`, and the
/// refusals of the checks after loading (an early stop that cannot work) beside the
/// loader's errors, not once those are fixed.
#[test]
fn check_reports_every_error_of_a_file_in_one_pass() {
    let dir = scratch("check-one-pass");
    std::fs::write(
        dir.join("script.yaml"),
        "name: s\nreplies:\n  - text: done\n",
    )
    .unwrap();
    let bad1 = "task_id: bad1\ndescription: several errors\ninitial_prompt: go\nagent:\n  type: claude-code\n  scripted_model: script.yaml\n  budget_mode: time\n  timeout_seconds: 30\n  min_resume_seconds: 60\n  max_sessions: 0\nrun_limits: {max_tool_calls: -1, max_usd: 0, max_total_tokens: 0}\nsuccess_criteria:\n  - type: file_exists\n    path: x\n    stop_early: {on_pass: stop}\n  - type: command_executed\n    command_pattern: '('\n  - type: command_executed\n    command_pattern: 'x'\n    stop_early: {decide_within: 0}\n";
    let bad2 = "task_id: bad2\ndescription: several errors\ninitial_prompt: go\nagent:\n  type: claude-code\n  scripted_model: script.yaml\nrun_limits: {max_usd: 0}\nsuccess_criteria:\n  - type: file_exists\n    path: x\n    stop_early: {on_pass: stop}\n";
    let check = |file: &str, text: &str| {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        let out = Command::new(bin())
            .arg("check")
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{err}");
        err
    };
    let err = check("bad1.yaml", bad1);
    for want in [
        "bad1.yaml:10:3: agent: agent.max_sessions",
        "bad1.yaml:11:13: run_limits: max_tool_calls",
        "max_usd",
        "max_total_tokens",
        "success_criteria[1].command_pattern",
        "success_criteria[2].stop_early: decide_within",
        "agent.min_resume_seconds (60 s)",
        "bad1.yaml:15:5: task `bad1`: early stop: success_criteria[0] (`file_exists`)",
    ] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("error: ") && l.contains(want)),
            "`{want}` not in: {err}"
        );
    }
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error: ")).count(),
        8,
        "{err}"
    );
    let err = check("bad2.yaml", bad2);
    for want in [
        "bad2.yaml:7:13: run_limits: max_usd",
        "bad2.yaml:11:5: task `bad2`: early stop: success_criteria[0] (`file_exists`)",
    ] {
        assert!(err.contains(want), "`{want}` not in: {err}");
    }
    // A criterion taken out before the one refused later does not shift its number.
    let shifted = "task_id: s\ninitial_prompt: go\nsuccess_criteria:\n  - type: command_executed\n    command_pattern: '('\n  - type: file_exists\n    path: x\n    stop_early: {on_pass: stop}\n";
    let err = check("shifted.yaml", shifted);
    assert!(
        err.contains("shifted.yaml:8:5: task `s`: early stop: success_criteria[1] (`file_exists`)"),
        "{err}"
    );
}

/// `--upstream` is checked before any agent starts (issue 12, M7): a URL without a scheme,
/// and `--upstream` inside `--isolate-network`'s loopback-only namespace, are exit code 2
/// naming the option, no result folder made.
#[test]
fn a_bad_upstream_is_refused_before_any_agent_starts() {
    let dir = scratch("live-load-gateway-upstream");
    let task = root().join("tasks/scenarios/hello/task.yaml");
    for (extra, says) in [
        (
            vec!["--upstream", "127.0.0.1:1"],
            "not an http:// or https:// URL",
        ),
        (vec!["--upstream", "http://"], "--upstream"),
        (
            vec!["--upstream", "http://127.0.0.1:1", "--isolate-network"],
            "--isolate-network",
        ),
    ] {
        let out = Command::new(bin())
            .args(["run", "--gateway", "--harness", "claude-code", "--out"])
            .arg(dir.join("out"))
            .args(&extra)
            .arg(&task)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains("--upstream") && err.contains(says),
            "{extra:?}: {err}"
        );
        assert!(!dir.join("out").join("hello").exists(), "a unit started");
    }
}
