//! The model gateway on the five real CLIs (`run --gateway`), with the scripted model as
//! its upstream (CLI → gateway → scripted model): the shared scenarios give the results
//! they give direct, with exact call counts and no parity caveat for Codex's parallel
//! calls; call N+1 is held at the gateway; every call is a `model_call` record with its
//! time to first token; a 429 reaches the CLI, which retries; a stalled upstream is still
//! stopped by the turn timeout; an unreachable upstream is a clear diagnostic.

use crate::live_claude::{
    assert_buckets_tile, assert_replay_matches, run_on_harnesses_with, run_task,
};
use crate::support::scratch;
use coder_eval::gateway::{CallKind, ModelCall};
use coder_eval::results::{StopReason, TaskResult, TaskStatus, ToolOutcome};
use std::collections::BTreeMap;
use std::path::Path;

const HARNESSES: [&str; 5] = ["claude-code", "codex", "pi", "opencode", "gemini-cli"];
const SCENARIOS: [&str; 4] = ["hello", "parallel", "max_turns", "tool_error"];

/// The `model_call` records of a task's recording, in order.
fn model_calls(out: &Path, r: &TaskResult) -> Vec<ModelCall> {
    let path = out
        .join(&r.task_id)
        .join(&r.harness)
        .join("recording.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["gateway"], true, "{}", path.display());
    text.lines()
        .filter(|l| l.starts_with(r#"{"t":"model_call""#))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every request the gateway forwarded reached the scripted model, and only those (not a
/// held call, nor one refused after the host's stop): the
/// scripted model's own log (phone-home attempts go to it directly, not through the
/// gateway) has exactly the gateway's forwarded requests, main and side alike.
fn assert_exact_counts(r: &TaskResult, calls: &[ModelCall]) {
    let requests = r
        .scripted_model_requests
        .as_ref()
        .expect("a scripted model");
    let kind = |k: &str| requests.iter().filter(|q| q["kind"] == k).count();
    // Held calls and those the host's stop refused on arrival were never forwarded (one
    // the stop cut under way was).
    let forwarded = |k: CallKind| {
        calls
            .iter()
            .filter(|c| c.kind == k && c.forwarded())
            .count()
    };
    let what = format!("{} on {}", r.task_id, r.harness);
    assert_eq!(
        forwarded(CallKind::Main),
        kind("main"),
        "{what}: {calls:#?}"
    );
    assert_eq!(forwarded(CallKind::Side), kind("side"), "{what}");
    assert!(
        requests.iter().all(|q| q["kind"] != "unknown"),
        "{what}: {requests:#?}"
    );
    // No call held by the scripted model itself: the gateway holds.
    assert!(requests.iter().all(|q| q["status"] != 503), "{what}");
}

#[test]
fn scenarios_through_the_gateway_on_every_harness() {
    let out = scratch("live-gateway");
    let tasks: Vec<String> = SCENARIOS
        .iter()
        .map(|s| format!("tasks/scenarios/{s}/task.yaml"))
        .collect();
    let tasks: Vec<&str> = tasks.iter().map(String::as_str).collect();
    let run = run_on_harnesses_with(&tasks, &HARNESSES, &out, 2, |cmd| {
        cmd.arg("--gateway");
    });
    let mut views: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (_, r) in run.rows {
        let t = r.turn.as_ref().expect("the CLI ran");
        let what = format!("{} on {}", r.task_id, r.harness);
        let g = t.gateway.as_ref().expect("the gateway's view");
        let calls = model_calls(&out, &r);
        assert_exact_counts(&r, &calls);
        assert_buckets_tile(t);
        // Replay reads the calls back and gives the live record, byte for byte.
        assert_replay_matches(&out, &r);
        // The gateway's count is the turn's; the stream agrees with it, except where a
        // CLI shows one reply's parallel calls as separate replies (Codex): then the
        // cross-check says so.
        assert_eq!(t.num_turns, g.num_turns, "{what}");
        let disagree = t
            .diagnostics
            .iter()
            .filter(|d| d.kind == "gateway_turns_disagree")
            .count();
        if r.harness == "codex" && r.task_id == "parallel" {
            assert_eq!(g.reducer_num_turns, 3, "{what}: the stream's count");
            assert_eq!(disagree, 1, "{what}: {:?}", t.diagnostics);
        } else {
            assert_eq!(
                g.reducer_num_turns, g.num_turns,
                "{what}: {:?}",
                t.diagnostics
            );
            assert_eq!(disagree, 0, "{what}");
        }
        assert!(
            !t.diagnostics
                .iter()
                .any(|d| d.kind == "gateway_upstream_error"),
            "{what}: {:?}",
            t.diagnostics
        );
        // Every answered main call has its time to first token (a held call, or one the
        // host's stop refused, was not answered).
        let answered = calls
            .iter()
            .filter(|c| c.kind == CallKind::Main && !c.held && !c.stopped)
            .count();
        assert_eq!(g.ttft_ms.len(), answered, "{what}");
        for c in calls.iter().filter(|c| !c.held && !c.stopped) {
            assert!(c.first_byte_us >= Some(c.us), "{what}: {c:?}");
            assert!(c.end_us >= c.first_byte_us, "{what}: {c:?}");
            assert!(c.request_body.is_none(), "bodies are off by default");
        }
        // The scripted model reports usage on every answer: the turn's usage is the APIs'.
        assert_eq!(t.usage_source, "gateway", "{what}");
        assert!(t.usage.unwrap().input_tokens > 0, "{what}");
        // No parity caveat is needed: the same view on every harness, Codex included.
        let statuses: Vec<ToolOutcome> = t.tool_calls.iter().map(|c| c.status).collect();
        let view = format!(
            "num_turns={} tools={} max_turns_exhausted={} status={:?}",
            t.num_turns,
            statuses.len(),
            t.max_turns_exhausted,
            r.status
        );
        views
            .entry(r.task_id.clone())
            .or_default()
            .push((r.harness.clone(), view));
        match r.task_id.as_str() {
            "hello" => {
                assert_eq!(r.status, TaskStatus::Success, "{what}: {:?}", r.error);
                assert_eq!((t.num_turns, t.tool_calls.len()), (3, 2), "{what}");
            }
            "parallel" => {
                // One reply holding two tool calls is one model call on every CLI.
                assert_eq!((t.num_turns, t.tool_calls.len()), (2, 2), "{what}");
                assert_eq!(g.num_turns, 2, "{what}");
            }
            "max_turns" => {
                assert_eq!(t.num_turns, 3, "{what}");
                assert!(t.max_turns_exhausted, "{what}");
                let steps = std::fs::read_to_string(
                    out.join("max_turns")
                        .join(&r.harness)
                        .join("workspace/steps.txt"),
                )
                .unwrap_or_default();
                assert_eq!(
                    steps, "step 1\nstep 2\n",
                    "{what}: call 3's command never ran"
                );
                // Call 3 was never forwarded: held at the gateway, or refused because the
                // host had already decided the stop (`stopped`), unless the CLI's own cap
                // stopped it before it asked.
                let not_forwarded = |c: &ModelCall| c.held || c.stopped;
                if r.stop
                    .as_ref()
                    .is_some_and(|s| s.reason == StopReason::MaxTurns)
                {
                    assert!(g.held || calls.iter().any(|c| c.stopped), "{what}");
                    assert!(
                        calls.iter().any(|c| not_forwarded(c) && c.turn == Some(2)),
                        "{what}"
                    );
                }
                assert!(
                    calls.iter().all(|c| not_forwarded(c) || c.turn < Some(2)),
                    "{what}"
                );
            }
            "tool_error" => assert_eq!(t.tool_calls.len(), 1, "{what}"),
            _ => unreachable!(),
        }
    }
    let mut broken = Vec::new();
    for (scenario, list) in &views {
        if list.iter().any(|(_, v)| v != &list[0].1) {
            broken.push(format!("{scenario}: {list:#?}"));
        }
    }
    assert!(broken.is_empty(), "parity broken:\n{}", broken.join("\n"));
}

/// A script: `first` as reply 1, then hello's two replies.
fn script(dir: &Path, first: &str) -> String {
    let path = dir.join("script.yaml");
    std::fs::write(
        &path,
        format!(
            "name: gw\nreplies:\n  - {first}\n  - tool_calls: [{{shell: {{command: date}}}}]\n  - text: done\n"
        ),
    )
    .unwrap();
    path.display().to_string()
}

#[test]
fn an_upstream_429_reaches_the_cli_which_retries() {
    let out = scratch("live-gateway-429");
    let script = script(
        &out,
        "{http_error: {status: 429, message: slow down, times: 1}, text: ok, tool_calls: [{write_file: {path: hello.txt, content: \"hi\\n\"}}]}",
    );
    let r = run_task(
        "tasks/scenarios/hello/task.yaml",
        "claude-code",
        &out,
        &["--gateway", "--scripted-model", &script],
    );
    assert_eq!(r.status, TaskStatus::Success, "{:?}", r.error);
    let calls = model_calls(&out, &r);
    let main: Vec<_> = calls.iter().filter(|c| c.kind == CallKind::Main).collect();
    assert_eq!(main[0].status, Some(429), "{calls:#?}");
    assert_eq!(main[1].status, Some(200), "{calls:#?}");
    assert_eq!(main[0].turn, main[1].turn, "the retry is the same call");
    let t = r.turn.as_ref().unwrap();
    // The retry is not a turn: three calls, as without the error.
    assert_eq!(t.num_turns, 3);
    assert_eq!(t.gateway.as_ref().unwrap().error_responses, 1);
    assert_replay_matches(&out, &r);
}

#[test]
fn a_stalled_upstream_is_stopped_by_the_turn_timeout() {
    let out = scratch("live-gateway-stall");
    let script = script(&out, "{delay_ms: 600000, text: never}");
    let started = std::time::Instant::now();
    let r = run_task(
        "tasks/scenarios/hello/task.yaml",
        "claude-code",
        &out,
        &[
            "--gateway",
            "--scripted-model",
            &script,
            "-D",
            "run_limits.turn_timeout=8",
        ],
    );
    assert!(started.elapsed().as_secs() < 60);
    assert_eq!(
        r.stop.as_ref().map(|s| s.reason),
        Some(StopReason::TurnTimeout),
        "{r:#?}"
    );
    let calls = model_calls(&out, &r);
    let stalled = calls
        .iter()
        .find(|c| c.kind == CallKind::Main)
        .expect("the first call");
    // Never answered: no first byte, no status from upstream, and the record says why
    // (the gateway closed, or the stopped CLI's connection went first).
    assert_eq!(stalled.first_byte_us, None, "{stalled:?}");
    assert_ne!(stalled.status, Some(200), "{stalled:?}");
    assert!(stalled.error.is_some(), "{stalled:?}");
}

#[test]
fn an_unreachable_upstream_is_a_clear_diagnostic() {
    let out = scratch("live-gateway-refused");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let upstream = format!("http://127.0.0.1:{port}");
    let r = run_task(
        "tasks/scenarios/hello/task.yaml",
        "claude-code",
        &out,
        &[
            "--gateway",
            "--upstream",
            &upstream,
            "-D",
            "run_limits.turn_timeout=20",
        ],
    );
    assert_ne!(r.status, TaskStatus::Success);
    let t = r.turn.as_ref().expect("the CLI ran");
    let d = t
        .diagnostics
        .iter()
        .find(|d| d.kind == "gateway_upstream_error")
        .unwrap_or_else(|| panic!("{:#?}", t.diagnostics));
    assert!(d.message.contains(&upstream), "{}", d.message);
    assert!(
        d.message.to_lowercase().contains("refused"),
        "{}",
        d.message
    );
    let calls = model_calls(&out, &r);
    assert!(calls.iter().all(|c| c.status == Some(502)), "{calls:#?}");
    assert!(
        r.scripted_model_requests.is_none(),
        "no scripted model with --upstream"
    );
}

/// Token budgets on the gateway's figures (tasks/scenarios/token_budget: about 9 output
/// tokens per step, `max_output_tokens: 20`): on Claude Code and on Codex (whose stream
/// reports usage only at the end of its turn, so without the gateway all five steps run
/// and the budget is found over at the end), the call after the one that went over is
/// held at the gateway, never forwarded, and the turn stops with `max_output_tokens`
/// between model calls: step 5 never runs. The breach says `figures: gateway`, its figure
/// is the APIs' own output count up to that call, every model call after it was held,
/// and replay gives the live record.
#[test]
fn token_budgets_hold_the_next_call_at_the_gateway_on_claude_code_and_codex() {
    use coder_eval::results::{BudgetFigures, BudgetKind, TurnStatus};
    let out = scratch("live-gateway-budget");
    let run = run_on_harnesses_with(
        &["tasks/scenarios/token_budget/task.yaml"],
        &["claude-code", "codex"],
        &out,
        2,
        |cmd| {
            cmd.arg("--gateway");
        },
    );
    assert_eq!(run.rows.len(), 2);
    for (_, r) in run.rows {
        let what = format!("{} on {}", r.task_id, r.harness);
        let t = r
            .turn
            .as_ref()
            .unwrap_or_else(|| panic!("{what}: {:?}", r.error));
        let calls = model_calls(&out, &r);
        assert_exact_counts(&r, &calls);
        let breach = t.budget.unwrap_or_else(|| panic!("{what}: no breach"));
        assert_eq!(breach.budget, BudgetKind::MaxOutputTokens, "{what}");
        assert_eq!(breach.figures, Some(BudgetFigures::Gateway), "{what}");
        assert_eq!(
            r.stop.as_ref().map(|s| s.reason),
            Some(StopReason::MaxOutputTokens),
            "{what}: {:?}",
            r.stop
        );
        assert_eq!(t.final_status, TurnStatus::TokenBudgetExceeded, "{what}");
        assert_eq!(r.status, TaskStatus::TokenBudgetExceeded, "{what}");
        // The figure is the APIs' own count up to the call that took it over.
        let over = calls
            .iter()
            .find(|c| c.seq == breach.event_index)
            .unwrap_or_else(|| panic!("{what}: {calls:#?}"));
        let before: u64 = calls
            .iter()
            .filter(|c| c.kind != CallKind::Other && c.end_us <= over.end_us)
            .filter_map(|c| c.usage.and_then(|u| u.output_tokens))
            .sum();
        assert_eq!(breach.actual, before as f64, "{what}: {calls:#?}");
        assert!(breach.actual > 20.0, "{what}");
        // Every model call that arrived after it was held, never forwarded, and at least
        // one did (the CLI went on to its next call).
        let after: Vec<&ModelCall> = calls
            .iter()
            .filter(|c| c.api.is_some() && Some(c.us) > over.end_us)
            .collect();
        assert!(!after.is_empty(), "{what}: {calls:#?}");
        for c in after {
            assert!(
                c.held && !c.forwarded() && c.over_budget == Some(BudgetKind::MaxOutputTokens),
                "{what}: {c:?}"
            );
        }
        let steps = std::fs::read_to_string(
            out.join(&r.task_id)
                .join(&r.harness)
                .join("workspace/steps.txt"),
        )
        .unwrap_or_default();
        assert!(!steps.contains("step 5"), "{what}: {steps}");
        assert!(
            r.budget_note()
                .is_some_and(|n| n.contains("the gateway's figures")),
            "{what}: {:?}",
            r.budget_note()
        );
        assert_replay_matches(&out, &r);
    }
}
