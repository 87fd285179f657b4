//! The field2 cases (tests/corpus/field2, each with its right values in `*.expected.md`)
//! replayed through the host, as `coder-eval replay --json` prints them: what happened is
//! counted, and nothing else (retries are no turns, a denied call is no command, absent
//! figures are null, a running total is not counted twice).

use crate::support::{bin, corpus, main_calls};
use coder_eval::Usage;
use coder_eval::results::{ToolOutcome, TotalsStatus, TurnRecord, TurnStatus};
use std::process::Command;

/// `coder-eval replay FILE --harness HARNESS --json`, parsed.
fn replay(harness: &str, rel: &str) -> TurnRecord {
    let path = corpus(&format!("field2/{rel}"));
    let out = Command::new(bin())
        .args([
            "replay",
            path.to_str().unwrap(),
            "--harness",
            harness,
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{rel}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        cache_write_tokens: Some(cache_write),
    }
}

fn texts(r: &TurnRecord) -> Vec<&str> {
    r.messages.iter().map(|m| m.text.as_str()).collect()
}

#[test]
fn b38_an_api_error_is_no_turn_and_no_answer() {
    let r = replay(
        "claude-code",
        "claude-code/B38-api-error-reported-as-success.recording.jsonl",
    );
    assert_eq!(r.final_status, TurnStatus::CliError);
    assert_eq!((r.num_turns, r.cli_num_turns), (1, Some(2)));
    assert_eq!(main_calls(&r), 1);
    assert_eq!(texts(&r), ["I'll run the test suite first."]);
    assert_eq!(r.commands, ["npm test"]);
    assert_eq!(r.tool_calls[0].status, ToolOutcome::Ok);
    assert_eq!(r.usage, Some(usage(6, 57, 18200, 1400)));
    assert_eq!(r.cost_usd, Some(0.019305));
    let cli = r.cli_result.as_ref().unwrap();
    assert!(!cli.success);
    assert_eq!(cli.error_kind.as_deref(), Some("api_error"));
    // The synthetic error sentence is not the agent's answer, and neither is its first
    // message: a failed turn has none.
    assert_eq!(r.final_text(), None);
}

#[test]
fn b39_a_retried_stream_is_one_call_recorded_as_retries() {
    let r = replay(
        "claude-code",
        "claude-code/B39-partial-messages-retry-restarts-stream.jsonl",
    );
    assert_eq!(r.final_status, TurnStatus::Completed);
    assert_eq!(r.num_turns, 2);
    assert_eq!(main_calls(&r), 2);
    assert_eq!(
        texts(&r),
        [
            "I'll run the tests.",
            "All 12 tests passed; nothing to fix."
        ]
    );
    assert_eq!(r.commands, ["pytest -q"]);
    assert_eq!(r.usage, Some(usage(9, 52, 41150, 1210)));
    assert_eq!(r.cost_usd, Some(0.029483));
    assert_eq!(r.retries.len(), 2, "{:?}", r.retries);
    let announced: Vec<_> = r.retries.iter().filter(|x| x.announced).collect();
    assert_eq!(announced.len(), 1);
    assert_eq!(
        (announced[0].status, announced[0].delay_ms),
        (Some(529), Some(600))
    );
    assert_eq!(r.final_text(), Some("All 12 tests passed; nothing to fix."));
}

#[test]
fn b40_a_resumed_session_total_is_not_this_run_s_cost() {
    let r = replay(
        "claude-code",
        "claude-code/B40-resume-restores-cost-total.recording.jsonl",
    );
    assert_eq!(r.final_status, TurnStatus::Completed);
    assert_eq!(r.num_turns, 1);
    assert_eq!(r.usage, Some(usage(3, 400, 26808, 0)));
    // Kept as reported, but not taken as this run's cost: the earlier processes' spend is
    // not in this recording, so the run's own cost is unknown (never priced from tokens).
    assert_eq!(r.cli_result.as_ref().unwrap().cost_usd, Some(0.386463));
    assert_eq!(r.cost_usd, None);
    assert_eq!(r.totals, TotalsStatus::Ambiguous);
    let note = r
        .diagnostics
        .iter()
        .find(|d| d.kind == "cumulative_total")
        .expect("a cumulative_total diagnostic");
    assert!(note.message.contains("0.386463"), "{}", note.message);
}

#[test]
fn b42_a_failed_turn_has_no_turns_and_no_usage() {
    let r = replay("codex", "codex/B42-turn-failed-exit-zero.recording.jsonl");
    assert_eq!(r.final_status, TurnStatus::CliError);
    assert_eq!(
        r.cli_result.as_ref().unwrap().error_message.as_deref(),
        Some("Internal server error")
    );
    assert_eq!(r.num_turns, 0);
    assert!(r.tool_calls.is_empty());
    assert_eq!(r.usage_source, "none");
    assert_eq!(r.cost_usd, None);
    assert_eq!(r.totals, TotalsStatus::Partial);
    assert_eq!(r.final_text(), None);
}

#[test]
fn b45_a_sub_agent_the_cli_drops_makes_the_totals_partial() {
    let r = replay(
        "opencode",
        "opencode/B45-task-subagent-events-dropped.jsonl",
    );
    assert_eq!(r.final_status, TurnStatus::Completed);
    assert_eq!(r.num_turns, 2);
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].call_id, "call_b45task0001");
    assert_eq!(r.usage, Some(usage(2362, 99, 26121, 0)));
    assert!((r.cost_usd.unwrap() - 0.0164).abs() < 1e-9);
    assert_eq!(r.totals, TotalsStatus::Partial);
    assert_eq!(r.unreported.len(), 1, "{:?}", r.unreported);
    assert_eq!(r.unreported[0].call_id.as_deref(), Some("call_b45task0001"));
}

#[test]
fn b47_a_pi_retry_is_no_turn_and_its_backoff_no_generation() {
    let r = replay("pi", "pi/B47-agent-end-then-auto-retry.recording.jsonl");
    assert_eq!(r.final_status, TurnStatus::Completed);
    assert_eq!(r.num_turns, 2);
    assert_eq!(r.commands, ["pytest -q"]);
    assert_eq!(r.usage, Some(usage(3108, 31, 0, 0)));
    assert_eq!(r.final_text(), Some("All 12 tests passed."));
    assert_eq!(r.retries.len(), 1);
    assert_eq!(
        (r.retries[0].attempt, r.retries[0].delay_ms),
        (Some(1), Some(2000))
    );
    let t = &r.timing;
    // The 2 s backoff is retry wait; generation is about 0.33 s.
    assert!(t.retry_wait_ms.unwrap() >= 2000, "{t:?}");
    assert!(t.generation_duration_ms.unwrap() < 500, "{t:?}");
}

#[test]
fn b47b_exhausted_pi_retries_are_an_error_with_no_turns() {
    let r = replay(
        "pi",
        "pi/B47b-auto-retry-exhausted-exit-zero.recording.jsonl",
    );
    assert_eq!(r.final_status, TurnStatus::CliError);
    assert_eq!(r.num_turns, 0);
    assert!(r.tool_calls.is_empty());
    assert_eq!(r.retries.len(), 4, "{:?}", r.retries);
    let backoff: u64 = r.retries.iter().filter_map(|x| x.delay_ms).sum();
    assert_eq!(backoff, 14_000);
    assert_eq!(r.final_text(), None);
}
