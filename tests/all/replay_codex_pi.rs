//! Golden replay of the Codex and Pi recordings: every capture in the corpus replays
//! without a reducer error, its turn record is pinned by an insta snapshot, and the shared
//! scenarios give the counts the scripts imply.

use crate::support::{captures, corpus, diagnostic_kinds, main_calls, tools};
use coder_eval::Usage;
use coder_eval::limits::Caps;
use coder_eval::results::{ToolOutcome, TurnRecord, TurnStatus};
use coder_eval::turn::replay::{ReplayOptions, replay};
use serde_json::Value;

fn replay_with(harness: &str, rel: &str, caps: Option<Caps>) -> TurnRecord {
    let path = corpus(rel);
    let options = ReplayOptions {
        caps,
        ..ReplayOptions::new(harness)
    };
    replay(&path, &options).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn codex(rel: &str) -> TurnRecord {
    replay_with("codex", rel, None)
}

fn pi(rel: &str) -> TurnRecord {
    replay_with("pi", rel, None)
}

/// The JSON lines of a capture that parse (the CLI's own numbers, read independently).
fn json_lines(rel: &str) -> Vec<Value> {
    std::fs::read_to_string(corpus(rel))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn assert_buckets_tile(r: &TurnRecord) {
    let t = &r.timing;
    let sum = t.harness_startup_ms.unwrap()
        + t.generation_duration_ms.unwrap()
        + t.tool_union_ms.unwrap()
        + t.harness_teardown_ms.unwrap()
        + t.retry_wait_ms.unwrap_or(0);
    assert_eq!(sum, t.turn_duration_ms, "{t:?}");
}

#[test]
fn every_capture_replays_and_matches_its_snapshot() {
    let sets = [
        ("codex", "live", "codex"),
        ("codex", "public", "codex"),
        ("pi", "live", "pi"),
        ("pi", "public", "pi"),
    ];
    let mut count = 0;
    for (harness, kind, dir) in sets {
        for path in captures(&format!("{kind}/{dir}")) {
            count += 1;
            let record = replay(&path, &ReplayOptions::new(harness))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(record.reducer_error.is_none(), "{}", path.display());
            assert_buckets_tile(&record);
            let name = format!(
                "{kind}__{dir}__{}",
                path.file_stem().unwrap().to_str().unwrap()
            );
            insta::assert_json_snapshot!(name, record);
        }
    }
    assert!(count >= 33, "corpus went missing: {count} captures");
}

#[test]
fn replay_is_byte_identical() {
    for (harness, dir) in [("codex", "live/codex"), ("pi", "live/pi")] {
        for path in captures(dir) {
            let options = ReplayOptions::new(harness);
            let a = serde_json::to_string(&replay(&path, &options).unwrap()).unwrap();
            let b = serde_json::to_string(&replay(&path, &options).unwrap()).unwrap();
            assert_eq!(a, b, "{}", path.display());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Codex

#[test]
fn codex_hello_has_three_main_calls_and_two_ok_tools() {
    let r = codex("live/codex/hello.jsonl");
    assert_eq!((r.num_turns, main_calls(&r)), (3, 3));
    assert_eq!(
        tools(&r),
        [
            ("apply_patch", ToolOutcome::Ok),
            ("exec_command", ToolOutcome::Ok)
        ]
    );
    assert_eq!(
        r.session_id.as_deref(),
        Some("01a2288a-815f-76d0-8ef3-fb72eed1fd3f")
    );
    assert_eq!(r.commands, ["date"]);
    assert_eq!(r.final_status, TurnStatus::Completed);
    assert_eq!(r.cli_result.as_ref().unwrap().text.as_deref(), Some("done"));
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    // Codex reports no cost: not reported, never 0.
    assert_eq!(r.cost_usd, None);
}

#[test]
fn codex_max_turns_counts_every_request() {
    // Five one-command replies and a text reply: the mock saw six requests.
    let requests = std::fs::read_to_string(corpus("live/codex/max_turns.requests.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"kind\": \"main\""))
        .count();
    assert_eq!(requests, 6);
    let r = codex("live/codex/max_turns.jsonl");
    assert_eq!((r.num_turns, main_calls(&r)), (6, 6));
    assert_eq!(r.tool_calls.len(), 5);
    assert_eq!(r.final_status, TurnStatus::Completed);
}

#[test]
fn codex_max_turns_cap_stops_at_call_three_after_two_tools() {
    let caps = Caps {
        max_turns: Some(2),
        ..Default::default()
    };
    let r = replay_with("codex", "live/codex/max_turns.jsonl", Some(caps));
    assert_eq!(r.num_turns, 3);
    assert!(r.max_turns_exhausted);
    assert_eq!(r.final_status, TurnStatus::MaxTurnsExhausted);
    // Exactly the tools of the two allowed calls, both finished.
    assert_eq!(r.commands, ["echo step 1", "echo step 2"]);
    assert!(r.tool_calls.iter().all(|t| t.status == ToolOutcome::Ok));
}

#[test]
fn codex_parallel_reply_runs_its_tools_one_after_the_other() {
    let r = codex("live/codex/parallel.jsonl");
    assert_eq!(
        tools(&r),
        [
            ("apply_patch", ToolOutcome::Ok),
            ("exec_command", ToolOutcome::Ok)
        ]
    );
    // Codex runs the patch, then the command: in its stream the two never overlap, and the
    // stream is the same as hello.jsonl's (tools of two replies). The reducer cannot tell
    // them apart, so the reply's second tool counts as a call of its own (3, not the 2
    // requests the mock saw): a known over-count, never an under-count of tools.
    let (a, b) = (&r.tool_calls[0], &r.tool_calls[1]);
    assert!(a.finished_ms.unwrap() <= b.started_ms);
    assert_eq!(r.num_turns, 3);
    assert_eq!(r.final_status, TurnStatus::Completed);
}

#[test]
fn codex_tool_error_is_an_error_with_exit_code() {
    let r = codex("live/codex/tool_error.jsonl");
    assert_eq!(r.tool_calls[0].status, ToolOutcome::Error);
    assert_eq!(r.tool_calls[0].exit_code, Some(2));
    assert_eq!(r.commands, ["ls does-not-exist"]);
    // A failed tool is not a failed run.
    assert_eq!(r.final_status, TurnStatus::Completed);
}

/// Codex's own totals: the last `turn.completed.usage` (cumulative, overlapping buckets).
fn codex_cli_usage(rel: &str) -> Value {
    json_lines(rel)
        .into_iter()
        .rfind(|l| l["type"] == "turn.completed")
        .unwrap()["usage"]
        .clone()
}

#[test]
fn codex_usage_is_disjoint_and_not_double_counted() {
    for rel in [
        "live/codex/hello.jsonl",
        "live/codex/max_turns.jsonl",
        "public/codex/fullsend-basic-run-live.jsonl",
        "public/codex/docs-exec-sample.jsonl",
    ] {
        let r = codex(rel);
        let cli = codex_cli_usage(rel);
        let n = |k: &str| cli[k].as_u64().unwrap_or(0);
        let u = r.usage.expect("reported");
        assert_eq!(r.usage_source, "cli_result", "{rel}");
        // The disjoint buckets add back up to the CLI's input; output is taken as is.
        assert_eq!(
            u.input_tokens + u.cache_read_tokens + u.cache_writes_or_zero(),
            n("input_tokens"),
            "{rel}"
        );
        assert_eq!(u.cache_read_tokens, n("cached_input_tokens"), "{rel}");
        assert_eq!(u.output_tokens, n("output_tokens"), "{rel}");
    }
    let r = codex("public/codex/fullsend-basic-run-live.jsonl");
    assert_eq!(
        r.usage,
        Some(Usage {
            input_tokens: 9,
            output_tokens: 295,
            cache_read_tokens: 27386,
            cache_write_tokens: Some(13925),
        })
    );
    // Two turns in one stream: the thread total of the later one, not a sum of both.
    let r = codex("public/codex/takopi-all-item-formats.jsonl");
    assert_eq!(
        r.usage.unwrap().input_tokens + r.usage.unwrap().cache_read_tokens,
        1840
    );
    assert_eq!(r.usage.unwrap().output_tokens, 732);
}

#[test]
fn codex_errors_and_ends() {
    // error item + top-level error, then turn.completed: not a failure.
    let r = codex("public/codex/fullsend-error-item-nonfatal.jsonl");
    assert_eq!(r.final_status, TurnStatus::Completed);
    assert_eq!(diagnostic_kinds(&r), ["error_item", "cli_error"]);

    // turn.failed is the failure, with its message.
    let r = codex("public/codex/issue-capacity-error-then-turn-failed.jsonl");
    assert_eq!(r.final_status, TurnStatus::CliError);
    let cli = r.cli_result.unwrap();
    assert!(!cli.success);
    assert_eq!(
        cli.error_message.as_deref(),
        Some("Selected model is at capacity. Please try a different model.")
    );

    // No terminal event: incomplete, with the error kept.
    let r = codex("public/codex/fullsend-critical-error-no-terminal.jsonl");
    assert_eq!(r.final_status, TurnStatus::Incomplete);
    assert!(r.diagnostics[0].message.contains("401 Unauthorized"));

    // Turn 1 completed, turn 2 never ended: incomplete, not a success.
    let r = codex("public/codex/fullsend-second-turn-unfinished.jsonl");
    assert_eq!(r.final_status, TurnStatus::Incomplete);

    // A later turn.failed wins over an earlier turn.completed.
    let r = codex("public/codex/takopi-all-item-formats.jsonl");
    assert_eq!(r.final_status, TurnStatus::CliError);
}

#[test]
fn codex_broken_and_unknown_lines_are_diagnostics() {
    let r = codex("public/codex/fullsend-malformed-lines.jsonl");
    assert!(r.reducer_error.is_none());
    assert_eq!(diagnostic_kinds(&r), ["not_json", "not_json"]);
    assert_eq!(r.final_status, TurnStatus::Completed);

    let r = codex("public/codex/fullsend-truncated-midline.jsonl");
    assert!(r.reducer_error.is_none());
    assert_eq!(r.final_status, TurnStatus::Incomplete);
    assert!(diagnostic_kinds(&r).contains(&"missing_terminal_event"));

    let r = codex("public/codex/fullsend-unknown-types.jsonl");
    assert_eq!(diagnostic_kinds(&r), ["unknown_type", "unknown_item_type"]);
    assert_eq!(r.final_status, TurnStatus::Completed);

    let r = codex("public/codex/app-server-v1-token-count-and-v2-turn-interrupted.jsonl");
    assert_eq!(
        diagnostic_kinds(&r),
        ["unsupported_stream_schema", "unsupported_stream_schema"]
    );
    assert_eq!(r.final_status, TurnStatus::Incomplete);
    assert_eq!(r.usage_source, "none");

    // phase: final_answer is the answer.
    let r = codex("public/codex/takopi-phase-and-unknown-item.jsonl");
    assert_eq!(
        r.cli_result.unwrap().text.as_deref(),
        Some("Implemented the requested changes.")
    );
}

// ---------------------------------------------------------------------------------------
// Pi

#[test]
fn pi_hello_has_three_main_calls_and_two_ok_tools() {
    let r = pi("live/pi/hello.jsonl");
    assert_eq!((r.num_turns, main_calls(&r)), (3, 3));
    assert_eq!(
        tools(&r),
        [("write", ToolOutcome::Ok), ("bash", ToolOutcome::Ok)]
    );
    assert_eq!(
        r.session_id.as_deref(),
        Some("01a22884-d75c-741b-88fc-916b57a2c84f")
    );
    assert_eq!(r.commands, ["date"]);
    assert_eq!(r.final_status, TurnStatus::Completed);
    assert_eq!(r.messages.len(), 3);
    assert_eq!(r.messages[0].message_id, "chatcmpl-mock-0-1");
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    // Pi reports a cost per message (0 for the mock's zero prices).
    assert_eq!(r.cost_usd, Some(0.0));
}

#[test]
fn pi_parallel_tools_overlap_and_count_once() {
    let r = pi("live/pi/parallel.jsonl");
    assert_eq!((r.num_turns, main_calls(&r)), (2, 2));
    assert_eq!(
        tools(&r),
        [("write", ToolOutcome::Ok), ("bash", ToolOutcome::Ok)]
    );
    let (a, b) = (&r.tool_calls[0], &r.tool_calls[1]);
    // Both started before either finished: their intervals overlap.
    assert!(b.started_ms < a.finished_ms.unwrap());
    assert!(b.started_ms < b.finished_ms.unwrap());
    let t = &r.timing;
    assert!(t.tool_union_ms.unwrap() < t.tool_sum_ms, "{t:?}");
}

#[test]
fn pi_max_turns_cap_stops_at_call_three_after_two_tools() {
    let r = pi("live/pi/max_turns.jsonl");
    assert_eq!((r.num_turns, r.tool_calls.len()), (6, 5));

    let caps = Caps {
        max_turns: Some(2),
        ..Default::default()
    };
    let r = replay_with("pi", "live/pi/max_turns.jsonl", Some(caps));
    assert_eq!(r.num_turns, 3);
    assert!(r.max_turns_exhausted);
    assert_eq!(r.final_status, TurnStatus::MaxTurnsExhausted);
    assert_eq!(r.commands, ["echo step 1", "echo step 2"]);
    assert!(r.tool_calls.iter().all(|t| t.status == ToolOutcome::Ok));
}

#[test]
fn pi_tool_error_is_an_error_with_exit_code() {
    let r = pi("live/pi/tool_error.jsonl");
    assert_eq!(r.tool_calls[0].status, ToolOutcome::Error);
    assert_eq!(r.tool_calls[0].exit_code, Some(2));
    assert_eq!(r.final_status, TurnStatus::Completed);
}

/// Pi's own numbers: the sum of the assistant `message_end` usages (per call).
fn pi_cli_usage(rel: &str) -> (Usage, f64) {
    let mut usage = Usage::default();
    let mut cost = 0.0;
    for line in json_lines(rel) {
        if line["type"] == "message_end" && line["message"]["role"] == "assistant" {
            let u = &line["message"]["usage"];
            let n = |k: &str| u[k].as_u64().unwrap_or(0);
            usage.input_tokens += n("input");
            usage.output_tokens += n("output");
            usage.cache_read_tokens += n("cacheRead");
            usage.cache_write_tokens = Some(usage.cache_writes_or_zero() + n("cacheWrite"));
            cost += u["cost"]["total"].as_f64().unwrap_or(0.0);
        }
    }
    (usage, cost)
}

#[test]
fn pi_usage_is_summed_once_per_call() {
    // The live captures repeat the growing usage in every message_update `partial`, and
    // turn_end / agent_end repeat the messages: only message_end counts.
    for rel in [
        "live/pi/hello.jsonl",
        "live/pi/max_turns.jsonl",
        "public/pi/fullsend-multi_step.jsonl",
        "public/pi/takopi-print_mode_events.jsonl",
    ] {
        let r = pi(rel);
        let (usage, cost) = pi_cli_usage(rel);
        assert_eq!(r.usage_source, "messages", "{rel}");
        assert_eq!(r.usage, Some(usage), "{rel}");
        assert!((r.cost_usd.unwrap() - cost).abs() < 1e-12, "{rel}");
    }
    let r = pi("public/pi/fullsend-multi_step.jsonl");
    assert_eq!(r.usage.unwrap().input_tokens, 300);
    assert!((r.cost_usd.unwrap() - 0.03).abs() < 1e-12);
}

#[test]
fn pi_errors_and_ends() {
    let r = pi("public/pi/fullsend-error_run.jsonl");
    assert_eq!(r.final_status, TurnStatus::CliError);
    assert_eq!(r.tool_calls[0].status, ToolOutcome::Error);
    assert_eq!(
        r.cli_result.unwrap().error_message.as_deref(),
        Some("quota exhausted")
    );

    let r = pi("public/pi/takopi-stream_error.jsonl");
    assert_eq!(r.final_status, TurnStatus::CliError);

    // An automatic retry after a failed run: the retry's success is the result.
    let r = pi("public/pi/takopi-print_mode_events.jsonl");
    assert_eq!(r.final_status, TurnStatus::Completed);
    assert!(diagnostic_kinds(&r).contains(&"retry"));
    assert!(diagnostic_kinds(&r).contains(&"compact_boundary"));
}

#[test]
fn pi_broken_lines_are_diagnostics() {
    let r = pi("public/pi/fullsend-malformed.jsonl");
    assert!(r.reducer_error.is_none());
    assert_eq!(diagnostic_kinds(&r), ["not_json"]);
    assert_eq!(r.final_status, TurnStatus::Completed);

    // Stops after a message_end: no turn_end, no agent_end.
    let r = pi("public/pi/fullsend-truncated.jsonl");
    assert!(r.reducer_error.is_none());
    assert_eq!(r.final_status, TurnStatus::Incomplete);
    assert_eq!(diagnostic_kinds(&r), ["missing_terminal_event"]);
    assert_eq!(r.messages[0].text, "Starting work...");
}
