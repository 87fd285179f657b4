//! Cost records and counting only what happened, live: real CLIs against the scripted
//! model. A call the CLI refuses is denied and no command; every task gets a `cost.json`
//! (one attempt per launch, totals that agree with the turn, `null` where the CLI reports
//! nothing, no temporary file left), summarised in `task.json` and `run.json`.

use crate::live_claude::{assert_replay_matches, netns_available, result_dir, run_task};
use crate::support::{bin, root, scratch};
use coder_eval::results::{
    CostRecord, RunSummary, TaskResult, TaskStatus, ToolOutcome, TotalsStatus, TurnStatus,
};
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) fn cost_record(dir: &Path) -> CostRecord {
    let text = std::fs::read_to_string(dir.join("cost.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    // Written atomically: no temporary file is left beside it.
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    serde_json::from_str(&text).unwrap()
}

/// The record agrees with the turn it was built from, and task.json carries its summary.
/// Runs the task file `task` (relative to the repository) on `harness` into a scratch
/// folder `name` (isolated from the network where it can be): that folder, the task's
/// result folder and its `task.json`, read (the run's stderr shown when there is none).
fn run_one(name: &str, task: &str, harness: &str, task_id: &str) -> (PathBuf, PathBuf, TaskResult) {
    let out = scratch(name);
    let mut cmd = Command::new(bin());
    cmd.arg("run")
        .arg(root().join(task))
        .args(["--harness", harness, "--out"])
        .arg(&out);
    if netns_available() {
        cmd.arg("--isolate-network");
    }
    let output = cmd.output().unwrap();
    let dir = result_dir(&out, task_id, harness);
    let result: TaskResult = serde_json::from_str(
        &std::fs::read_to_string(dir.join("task.json")).unwrap_or_else(|e| {
            panic!(
                "task.json: {e}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        }),
    )
    .unwrap();
    (out, dir, result)
}

fn assert_record_matches_turn(record: &CostRecord, result: &TaskResult) {
    let turn = result.turn.as_ref().unwrap();
    assert_eq!(record.cost_version, 1);
    assert_eq!(record.attempts.len(), 1, "one launch, one attempt");
    let attempt = &record.attempts[0];
    assert_eq!(attempt.attempt, 1);
    assert_eq!(attempt.session_id, turn.session_id);
    assert_eq!(attempt.settings.argv, result.cli.argv);
    assert_eq!(
        attempt.agent_seconds,
        Some(turn.timing.turn_duration_ms as f64 / 1000.0)
    );
    assert_eq!(attempt.launcher_error, None);
    // The total is rounded to 1e-10 USD (sums of reported decimals without float noise).
    match (record.total_cost_usd, turn.cost_usd) {
        (Some(total), Some(turn)) => assert!((total - turn).abs() < 1e-9, "{total} {turn}"),
        (total, turn) => assert_eq!(total, turn),
    }
    // Unknown cost: not reported, or cut off by a host stop before the final result.
    assert_eq!(
        matches!(
            record.cost_status,
            TotalsStatus::NotReported | TotalsStatus::Partial
        ) && record.total_cost_usd.is_none(),
        turn.cost_usd.is_none()
    );
    match turn.usage_source.as_str() {
        "none" => assert_eq!(
            (record.usage, record.usage_status),
            (None, TotalsStatus::NotReported)
        ),
        _ => assert_eq!(record.usage, turn.usage),
    }
    assert_eq!(
        attempt
            .provider_reports
            .cli_result
            .as_ref()
            .map(|c| c.cost_usd),
        turn.cli_result.as_ref().map(|c| c.cost_usd)
    );
    assert_eq!(result.cost.as_ref(), Some(&record.summary()));
}

#[test]
fn a_refused_call_is_denied_and_no_command() {
    let out = scratch("live-cost-denied");
    let result = run_task("tasks/cost/denied_bash/task.yaml", "claude-code", &out, &[]);
    let turn = result.turn.as_ref().expect("a turn");
    assert_eq!(turn.tool_calls.len(), 1);
    assert_eq!(turn.tool_calls[0].status, ToolOutcome::Denied);
    assert!(turn.commands.is_empty(), "{:?}", turn.commands);
    let scores: Vec<f64> = result.criteria.iter().map(|c| c.score).collect();
    assert_eq!(scores, [0.0, 1.0], "ran: no; tried (count_attempts): yes");
    assert_eq!(result.status, TaskStatus::Failure);
    assert_replay_matches(&out, &result);
    let record = cost_record(&result_dir(&out, "denied_bash", "claude-code"));
    assert_record_matches_turn(&record, &result);
    // Claude Code reports its cost: complete, and exactly what it reported.
    assert_eq!(record.cost_status, TotalsStatus::Complete);
    assert!(record.total_cost_usd.is_some_and(|c| c > 0.0));
}

#[test]
fn every_harness_writes_a_cost_record() {
    const HARNESSES: [&str; 5] = ["claude-code", "codex", "pi", "opencode", "gemini-cli"];
    let out = scratch("live-cost-every");
    let mut cmd = Command::new(bin());
    cmd.arg("run")
        .arg(root().join("tasks/scenarios/hello/task.yaml"))
        .arg("--out")
        .arg(&out)
        .args(["--jobs", "2"]);
    for h in HARNESSES {
        cmd.args(["--harness", h]);
    }
    if netns_available() {
        cmd.arg("--isolate-network");
    }
    let output = cmd.output().unwrap();
    let summary: RunSummary = serde_json::from_str(
        &std::fs::read_to_string(out.join("run.json")).unwrap_or_else(|e| {
            panic!("run.json: {e}\n{}", String::from_utf8_lossy(&output.stderr))
        }),
    )
    .unwrap();
    assert_eq!(summary.rows.len(), HARNESSES.len());
    for row in &summary.rows {
        let dir = result_dir(&out, &row.task_id, &row.harness);
        let result: TaskResult =
            serde_json::from_str(&std::fs::read_to_string(dir.join("task.json")).unwrap()).unwrap();
        assert_eq!(result.status, TaskStatus::Success, "{}", row.harness);
        let record = cost_record(&dir);
        assert_record_matches_turn(&record, &result);
        assert_eq!(
            row.cost.as_ref(),
            Some(&record.summary()),
            "{}",
            row.harness
        );
        // Usage is reported by every CLI here; dollars only by some, and never estimated
        // from tokens where the CLI gives none.
        assert_eq!(
            record.usage_status,
            TotalsStatus::Complete,
            "{}",
            row.harness
        );
        if matches!(row.harness.as_str(), "codex" | "gemini-cli") {
            assert_eq!(
                (record.total_cost_usd, record.cost_status),
                (None, TotalsStatus::NotReported),
                "{}",
                row.harness
            );
        }
        let scope = record.attempts[0].totals_scope;
        assert!(scope.is_some(), "{}: totals scope asked", row.harness);
    }
}

#[test]
fn an_infrastructure_failure_costs_nothing_known() {
    // Field case B42 run live on Codex: every request fails with HTTP 500.
    let (_, dir, result) = run_one(
        "live-cost-b42",
        "tests/corpus/field2/codex/B42-turn-failed-exit-zero.task.yaml",
        "codex",
        "b42_turn_failed_exit_zero",
    );
    assert_eq!(result.status, TaskStatus::Error);
    let turn = result.turn.as_ref().unwrap();
    assert_eq!(turn.num_turns, 0);
    let record = cost_record(&dir);
    assert_record_matches_turn(&record, &result);
    assert_eq!(
        (record.total_cost_usd, record.cost_status),
        (None, TotalsStatus::NotReported)
    );
    assert_eq!(
        (record.usage, record.usage_status),
        (None, TotalsStatus::NotReported),
        "no usage is not zero usage"
    );
}

#[test]
fn a_retried_request_is_no_turn() {
    // Claude Code announces its retry of the rate-limited first request (`api_retry`).
    let out = scratch("live-cost-retry");
    let result = run_task(
        "tasks/cost/retried_call/task.yaml",
        "claude-code",
        &out,
        &[],
    );
    assert_eq!(result.status, TaskStatus::Success);
    let turn = result.turn.as_ref().unwrap();
    // The failed attempt did not use one of the two turns max_turns allows.
    assert_eq!(turn.num_turns, 2);
    assert!(!turn.max_turns_exhausted);
    assert_eq!(turn.retries.len(), 1, "{:?}", turn.retries);
    let retry = &turn.retries[0];
    assert!(retry.announced);
    assert_eq!(retry.status, Some(429));
    // The wait before the retried request answered is retry wait, not start-up.
    let t = &turn.timing;
    let wait = t.retry_wait_ms.expect("retry wait measured");
    assert!(wait > 0, "{t:?}");
    assert_eq!(
        t.harness_startup_ms.unwrap()
            + t.generation_duration_ms.unwrap()
            + t.tool_union_ms.unwrap()
            + wait
            + t.harness_teardown_ms.unwrap(),
        t.turn_duration_ms
    );
    assert_replay_matches(&out, &result);
}

/// Claude Code stopped by the host (an early pass-stop) before its final result: it
/// reports cost only there, so the cost is `partial` and unknown (`null`, never 0) with
/// the stop as the reason, not "the CLI reported no cost"; the usage streamed per call is
/// a lower bound, never `complete`. Replay gives the same turn.
#[test]
fn a_host_stopped_claude_code_run_has_partial_totals() {
    let out = scratch("live-cost-stopped");
    let r = run_task(
        "tasks/scenarios/early_pass/task.yaml",
        "claude-code",
        &out,
        &[],
    );
    let t = r.turn.as_ref().unwrap_or_else(|| panic!("{:?}", r.error));
    assert!(r.stop.is_some(), "the host stopped it: {:?}", r.stop);
    assert!(t.cli_result.is_none(), "cut before its final result");
    crate::live_claude::assert_replay_matches(&out, &r);
    let record = cost_record(&result_dir(&out, &r.task_id, &r.harness));
    let attempt = &record.attempts[0];
    assert_eq!(
        (record.total_cost_usd, record.cost_status),
        (None, TotalsStatus::Partial),
        "{record:#?}"
    );
    assert!(
        attempt
            .reasons
            .iter()
            .any(|r| r.contains("before its final result, where it reports cost")),
        "{:?}",
        attempt.reasons
    );
    assert!(
        !attempt
            .reasons
            .iter()
            .any(|r| r.contains("reported no cost")),
        "{:?}",
        attempt.reasons
    );
    assert_eq!(record.usage_status, TotalsStatus::Partial, "{record:#?}");
    assert_eq!(t.totals, TotalsStatus::Partial);
    assert_eq!(record.usage, t.usage, "the lower bound is kept");
}

/// Claude Code 2.1.332 starts a follow-up query in the same process when a background
/// command ends after its final reply (trial14c bg2, its task in the corpus): a second
/// `result` whose usage is that query's own. The turn's usage, `cost.json` and the
/// output-token budget (150) all count both queries: the figures equal the sum of the
/// recording's own results, complete, and the budget is exceeded as in the control run.
#[test]
fn a_follow_up_query_after_a_background_command_is_counted() {
    let (out, dir, result) = run_one(
        "live-cost-follow-up",
        "tests/corpus/live/claude/bg2-2.1.332.task.yaml",
        "claude-code",
        "bg2",
    );
    // The right figures, from the recording's own result lines.
    let results: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("recording.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|r| r["t"] == "out")
        .filter_map(|r| serde_json::from_str::<serde_json::Value>(r["text"].as_str()?).ok())
        .filter(|v| v["type"] == "result")
        .collect();
    assert_eq!(
        results.len(),
        2,
        "the follow-up query printed its own result"
    );
    let sum = |field: &str| -> u64 {
        results
            .iter()
            .map(|r| r["usage"][field].as_u64().unwrap())
            .sum()
    };
    let (input, output) = (sum("input_tokens"), sum("output_tokens"));
    let turn = result.turn.as_ref().unwrap();
    let usage = turn.usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (input, output));
    assert_eq!(turn.usage_source, "cli_result");
    assert!(output > 150, "{output}");
    // As in the control run without the background call: the turn went over the budget
    // at its (last) result, the task's status is its criteria's.
    assert_eq!(turn.final_status, TurnStatus::TokenBudgetExceeded);
    let breach = turn.budget.as_ref().unwrap();
    assert_eq!((breach.actual, breach.limit), (output as f64, 150.0));
    let record = cost_record(&dir);
    assert_record_matches_turn(&record, &result);
    assert_eq!(record.usage_status, TotalsStatus::Complete, "{:?}", record);
    assert_eq!(
        record.total_cost_usd,
        results[1]["total_cost_usd"].as_f64(),
        "the cost is the last running total, not a sum"
    );
    assert_replay_matches(&out, &result);
}
