//! Early stop and budgets on every harness's real CLI against the scripted model
//! (tasks/scenarios/{early_pass,early_fail,decide_within,token_budget}): the same decision
//! on the same event everywhere, recorded in task.json, and a replay of each recording
//! reaches the same decision at the same event (`assert_replay_matches` compares the whole
//! turn record, its `early_stop` and `budget` included).
//!
//! Copilot CLI reports tokens only in its usage file, read after it exits: a token budget
//! is found over there, once the CLI has run every step (`reporting` says `FinalResult`),
//! never between model calls as on the CLIs that stream usage per call.

use crate::live_claude::{assert_replay_matches, run_on_harnesses};
use crate::support::scratch;
use coder_eval::limits::budget::{ReportedAt, reporting};
use coder_eval::results::{
    BudgetKind, EarlyStopReason, StopReason, TaskResult, TaskStatus, ToolOutcome, TotalsStatus,
    TurnStatus,
};
use std::collections::BTreeMap;
use std::path::Path;

const HARNESSES: [&str; 6] = [
    "claude-code",
    "codex",
    "pi",
    "opencode",
    "gemini-cli",
    "copilot",
];
const SCENARIOS: [&str; 4] = ["early_pass", "early_fail", "decide_within", "token_budget"];

fn run_matrix(out: &Path) -> BTreeMap<(String, String), TaskResult> {
    let tasks = SCENARIOS.map(|s| format!("tasks/scenarios/{s}/task.yaml"));
    let tasks: Vec<&str> = tasks.iter().map(String::as_str).collect();
    run_on_harnesses(&tasks, &HARNESSES, out, 2)
        .into_iter()
        .map(|(row, r)| ((row.task_id, row.harness), r))
        .collect()
}

fn steps(out: &Path, scenario: &str, harness: &str) -> String {
    std::fs::read_to_string(out.join(scenario).join(harness).join("workspace/steps.txt"))
        .unwrap_or_default()
}

#[test]
fn early_stop_and_budgets_on_every_harness() {
    let out = scratch("live-early-stop");
    let results = run_matrix(&out);
    for ((scenario, harness), r) in &results {
        let what = format!("{scenario} on {harness}");
        let t = r
            .turn
            .as_ref()
            .unwrap_or_else(|| panic!("{what}: {:?}", r.error));
        assert_replay_matches(&out, r);
        // A stop before the CLI's final result cut off what the CLI reports there or last
        // (Codex's usage in `turn.completed`, Gemini CLI's in its `result`): `cost.json`
        // says so (partial), never that the CLI reports none.
        if r.stop.is_some() && t.cli_result.is_none() {
            let cost = crate::live_cost::cost_record(&out.join(scenario).join(harness));
            assert_ne!(
                cost.usage_status,
                TotalsStatus::NotReported,
                "{what}: {cost:#?}"
            );
        }
        // Only a call known to have run is a command: one the host stopped as it started
        // (no end: `interrupted`) or the CLI refused (`denied`) is not.
        for call in &t.tool_calls {
            if matches!(call.status, ToolOutcome::Interrupted | ToolOutcome::Denied)
                && let Some(cmd) = call.input.get("command").and_then(|c| c.as_str())
            {
                assert!(
                    !t.commands.iter().any(|c| c == cmd),
                    "{what}: {:?} call `{cmd}` listed in commands {:?}",
                    call.status,
                    t.commands
                );
            }
        }
        let stop = r.stop.as_ref().map(|s| s.reason);
        match scenario.as_str() {
            "early_pass" | "early_fail" | "decide_within" => {
                let outcome = t.early_stop.as_ref().expect("armed");
                let fired = outcome
                    .fired
                    .as_ref()
                    .unwrap_or_else(|| panic!("{what}: no early stop: {outcome:?}"));
                assert_eq!(stop, Some(StopReason::EarlyStop), "{what}");
                assert_eq!(t.final_status, TurnStatus::EarlyStopped, "{what}");
                assert_eq!(fired.gate_threshold, 1.0);
                assert_eq!(fired.armed.len(), 1, "{what}");
                assert!(!steps(&out, scenario, harness).contains("step 5"), "{what}");
                let gate = r.armed_gate.as_ref().expect("gated on the armed criteria");
                assert_eq!(gate.armed, [0], "{what}");
                match scenario.as_str() {
                    "early_pass" => {
                        assert_eq!(fired.reason, EarlyStopReason::CriterionPassed, "{what}");
                        assert_eq!(fired.tool_call_index, 2, "{what}");
                        assert_eq!(fired.model_call_index, 2, "{what}");
                        assert_eq!(fired.turns_remaining, Some(6), "{what}");
                        // Decided when `echo step 2` finished: it ran, and it is the
                        // command credited.
                        assert!(steps(&out, scenario, harness).contains("step 2"), "{what}");
                        let step2 = t
                            .tool_calls
                            .iter()
                            .find(|c| c.input.to_string().contains("echo step 2"))
                            .unwrap_or_else(|| panic!("{what}: no step 2 call"));
                        assert_eq!(step2.status, ToolOutcome::Ok, "{what}");
                        assert!(
                            t.commands.iter().any(|c| c.contains("echo step 2")),
                            "{what}: {:?}",
                            t.commands
                        );
                        // The advisory criterion failed (step 5 never ran): the run passes
                        // on its armed criterion alone.
                        assert!(r.criteria[1].score < 1.0, "{what}");
                        assert_eq!(r.status, TaskStatus::Success, "{what}");
                        assert!(gate.passed);
                    }
                    "early_fail" => {
                        assert_eq!(fired.reason, EarlyStopReason::CriterionFailed, "{what}");
                        assert_eq!(fired.tool_call_index, 2, "{what}");
                        assert_eq!(fired.turns_remaining, None, "{what}");
                        // A call counts once it ran (README, `harnesses --parity`): the
                        // forbidden command ran, and the turn stopped right after it.
                        assert!(
                            steps(&out, scenario, harness).contains("step 2"),
                            "{what}: the forbidden command did not run"
                        );
                        assert_eq!(r.status, TaskStatus::Failure, "{what}");
                        assert!(!gate.passed);
                    }
                    _ => {
                        assert_eq!(
                            fired.reason,
                            EarlyStopReason::DecisionBudgetExceeded,
                            "{what}"
                        );
                        assert_eq!(fired.tool_call_index, 2, "{what}");
                        assert!(outcome.armed[0].verdict.contains("decide_within 2"));
                        assert_eq!(r.status, TaskStatus::Failure, "{what}");
                    }
                }
            }
            "token_budget" => {
                let breach = t
                    .budget
                    .as_ref()
                    .unwrap_or_else(|| panic!("{what}: no budget breach"));
                assert_eq!(breach.budget, BudgetKind::MaxOutputTokens, "{what}");
                assert!(breach.actual > 20.0 && breach.limit == 20.0, "{what}");
                assert_eq!(t.final_status, TurnStatus::TokenBudgetExceeded, "{what}");
                assert_eq!(r.status, TaskStatus::TokenBudgetExceeded, "{what}");
                if reporting(harness).unwrap().output == ReportedAt::EachCall {
                    // Stopped between model calls: the fifth step never ran.
                    assert_eq!(stop, Some(StopReason::MaxOutputTokens), "{what}");
                    assert!(!steps(&out, scenario, harness).contains("step 5"), "{what}");
                } else {
                    // Found over in the final result: the host stopped nothing (the CLI
                    // was ending), or the exiting CLI's last moments.
                    assert!(
                        matches!(stop, None | Some(StopReason::MaxOutputTokens)),
                        "{what}: {stop:?}"
                    );
                }
                // expected_tool_calls 2: a warning, never a stop.
                let soft = &r.soft_budget_warnings;
                let over = soft.iter().find(|w| w.budget == "expected_tool_calls");
                if t.tool_calls.len() > 2 {
                    let over = over.unwrap_or_else(|| panic!("{what}: {soft:?}"));
                    assert_eq!(over.actual as usize, t.tool_calls.len(), "{what}");
                } else {
                    assert_eq!(over, None, "{what}");
                }
            }
            _ => unreachable!(),
        }
    }
}

/// Model requests the scripted model answered (`status` 200, main or side) after the
/// host's stop decision: those that arrived later than the stop's wall-clock time (the
/// recording's `started_unix_ms`, taken just before the turn's clock starts, plus
/// `stop.at_ms`; 50 ms more covers the few ms between the two, so a request answered
/// just before the decision is never counted).
fn answered_after_stop(out: &Path, r: &TaskResult) -> Vec<serde_json::Value> {
    let dir = out.join(&r.task_id).join(&r.harness);
    let text = std::fs::read_to_string(dir.join("recording.jsonl")).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let started = header["started_unix_ms"].as_u64().expect("started_unix_ms");
    let at_ms = r.stop.as_ref().and_then(|s| s.at_ms).expect("stop.at_ms");
    let stop_ms = (started + at_ms + 50) as f64;
    let requests = r
        .scripted_model_requests
        .as_ref()
        .expect("a scripted model");
    requests
        .iter()
        .filter(|q| q["kind"] == "main" || q["kind"] == "side")
        .filter(|q| q["status"] == 200)
        .filter(|q| q["t"].as_f64().unwrap() * 1000.0 > stop_ms)
        .cloned()
        .collect()
}

/// Once the host decides a stop, the model answers nothing more: a CLI that keeps
/// working in its stop grace (Cline did: it went on asking for and running steps until it
/// was killed) gets no reply, directly from the scripted model or through the gateway
/// (whose `model_call` records are stamped on the turn's own clock).
#[test]
fn no_model_request_is_answered_after_an_early_stop() {
    let harnesses = ["cline", "claude-code"];
    let out = scratch("live-early-stop-answers");
    let rows = run_on_harnesses(
        &["tasks/scenarios/early_pass/task.yaml"],
        &harnesses,
        &out,
        2,
    );
    for (_, r) in &rows {
        let what = format!("early_pass on {}", r.harness);
        assert_eq!(
            r.stop.as_ref().map(|s| s.reason),
            Some(StopReason::EarlyStop),
            "{what}: {:?}",
            r.error
        );
        let after = answered_after_stop(&out, r);
        assert!(
            after.is_empty(),
            "{what}: answered after the stop: {after:#?}"
        );
    }
    // Through the gateway.
    let out = scratch("live-early-stop-answers-gateway");
    for harness in harnesses {
        let r = crate::live_claude::run_task(
            "tasks/scenarios/early_pass/task.yaml",
            harness,
            &out,
            &["--gateway"],
        );
        let what = format!("early_pass on {harness} through the gateway");
        let at_ms = r.stop.as_ref().and_then(|s| s.at_ms).expect("a stop");
        let text =
            std::fs::read_to_string(out.join("early_pass").join(harness).join("recording.jsonl"))
                .unwrap();
        let calls: Vec<coder_eval::gateway::ModelCall> = text
            .lines()
            .filter(|l| l.starts_with(r#"{"t":"model_call""#))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let after: Vec<_> = calls
            .iter()
            .filter(|c| c.kind != coder_eval::gateway::CallKind::Other)
            .filter(|c| c.us > (at_ms + 1) * 1000 && c.status == Some(200))
            .collect();
        assert!(
            after.is_empty(),
            "{what}: answered after the stop: {after:#?}"
        );
    }
}

/// Continue and grok-cli (early stop only) hand the host every event only once they exited
/// (`EVENTS_AFTER_EXIT`): an early stop or a token budget decides the verdict there, but
/// the CLI had already run every step, so the record keeps them all (the criteria are
/// graded on what ran), and no host stop is claimed.
#[test]
fn a_decision_after_exit_keeps_the_whole_run() {
    let out = scratch("live-after-exit");
    // grok-cli reports no usage: its token budgets are refused at load.
    let mut results = run_on_harnesses(
        &["tasks/scenarios/early_fail/task.yaml"],
        &["continue", "grok-cli"],
        &out,
        2,
    );
    results.extend(run_on_harnesses(
        &["tasks/scenarios/token_budget/task.yaml"],
        &["continue"],
        &out,
        2,
    ));
    assert_eq!(results.len(), 3);
    for (row, r) in &results {
        let (scenario, harness) = (row.task_id.as_str(), row.harness.as_str());
        let what = format!("{scenario} on {harness}");
        let t = r
            .turn
            .as_ref()
            .unwrap_or_else(|| panic!("{what}: {:?}", r.error));
        assert_replay_matches(&out, r);
        assert_eq!(
            r.stop.as_ref().map(|s| s.reason),
            None,
            "{what}: the host stopped nothing"
        );
        let ran = steps(&out, scenario, harness);
        assert!(
            ran.contains("step 5"),
            "{what}: the CLI ran to its end: {ran}"
        );
        // Every step that ran is in the record.
        let steps_in_record = t
            .commands
            .iter()
            .filter(|c| c.contains("echo step"))
            .count();
        assert_eq!(
            steps_in_record,
            ran.lines().count(),
            "{what}: {:?}",
            t.commands
        );
        assert!(
            t.unreported
                .iter()
                .all(|u| !u.reason.contains("host stopped")),
            "{what}: {:?}",
            t.unreported
        );
        match scenario {
            "early_fail" => {
                assert!(
                    t.early_stop
                        .as_ref()
                        .and_then(|o| o.fired.as_ref())
                        .is_some(),
                    "{what}"
                );
                assert_eq!(t.final_status, TurnStatus::EarlyStopped, "{what}");
                assert_eq!(r.status, TaskStatus::Failure, "{what}");
            }
            _ => {
                let breach = t
                    .budget
                    .as_ref()
                    .unwrap_or_else(|| panic!("{what}: no breach"));
                assert_eq!(breach.budget, BudgetKind::MaxOutputTokens, "{what}");
                assert_eq!(t.final_status, TurnStatus::TokenBudgetExceeded, "{what}");
                assert_eq!(r.status, TaskStatus::TokenBudgetExceeded, "{what}");
            }
        }
    }
}
