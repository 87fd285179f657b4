//! Golden replay of the Qwen Code and Kilo recordings (`tests/corpus/live/{qwen,kilo}`,
//! Qwen Code 0.24.4 and Kilo 7.7.7 against the scripted model): every capture replays
//! without a reducer error, its turn record is pinned by an insta snapshot, and the
//! scenarios the harnesses share give the same counts as on the first five.

use crate::support::{captures, corpus, diagnostic_kinds, main_calls, tools};
use coder_eval::results::{ToolOutcome, TurnRecord, TurnStatus};
use coder_eval::turn::replay::{ReplayOptions, replay};

fn replay_of(harness: &str, rel: &str) -> TurnRecord {
    let path = corpus(rel);
    replay(&path, &ReplayOptions::new(harness))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn qwen(scenario: &str) -> TurnRecord {
    replay_of("qwen-code", &format!("live/qwen/{scenario}.jsonl"))
}

fn kilo(scenario: &str) -> TurnRecord {
    replay_of("kilo", &format!("live/kilo/{scenario}.jsonl"))
}

#[test]
fn every_qwen_and_kilo_capture_replays_and_matches_its_snapshot() {
    let mut count = 0;
    for (harness, dir) in [("qwen-code", "live/qwen"), ("kilo", "live/kilo")] {
        for path in captures(dir) {
            count += 1;
            let record = replay(&path, &ReplayOptions::new(harness))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(record.reducer_error.is_none(), "{}", path.display());
            let name = format!(
                "{}__{}",
                path.parent()
                    .unwrap()
                    .file_name()
                    .unwrap()
                    .to_str()
                    .unwrap(),
                path.file_stem().unwrap().to_str().unwrap()
            );
            insta::assert_json_snapshot!(name, record);
        }
    }
    assert_eq!(count, 8, "hello, parallel, tool_error, probe_hello of each");
}

#[test]
fn hello_has_three_calls_and_two_ok_tools() {
    let r = qwen("hello");
    assert_eq!((r.num_turns, main_calls(&r)), (3, 3));
    assert_eq!(
        tools(&r),
        [
            ("write_file", ToolOutcome::Ok),
            ("run_shell_command", ToolOutcome::Ok)
        ]
    );
    assert_eq!(r.commands, ["date"]);
    // A reply's text line and its tool line (different ids) are one message.
    assert_eq!(r.messages[0].text, "I'll create the file.");
    assert_eq!(r.usage.unwrap().input_tokens, 17780 + 17888 + 17988);
    assert_eq!(r.usage.unwrap().output_tokens, 27 + 4 + 1);
    assert_eq!(r.cost_usd, None);
    assert_eq!(r.cli_version.as_deref(), Some("0.24.4"));
    assert_eq!(r.cli_result.as_ref().unwrap().num_turns, Some(3));
    assert_eq!(r.final_status, TurnStatus::Completed);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);

    let r = kilo("hello");
    assert_eq!((r.num_turns, main_calls(&r)), (3, 3));
    assert_eq!(
        tools(&r),
        [("write", ToolOutcome::Ok), ("bash", ToolOutcome::Ok)]
    );
    assert_eq!(
        r.session_id.as_deref(),
        Some("ses_dd2e60cf8ffea1xBF4JzI24s9C")
    );
    assert_eq!(r.usage.unwrap().input_tokens, 12650 + 12734 + 12806);
    assert_eq!(r.cost_usd, Some(0.0));
    assert_eq!(r.final_status, TurnStatus::Completed);
    // As OpenCode: a tool is printed once finished, with its step.
    assert!(
        diagnostic_kinds(&r)
            .iter()
            .all(|k| *k == "tool_duration_clipped"),
        "{:?}",
        r.diagnostics
    );
}

#[test]
fn parallel_has_two_tools_in_one_call() {
    for r in [qwen("parallel"), kilo("parallel")] {
        assert_eq!(r.tool_calls.len(), 2, "{}", r.harness);
        assert_eq!(main_calls(&r), 2, "{}", r.harness);
        assert!(
            r.tool_calls.iter().all(|t| t.status == ToolOutcome::Ok),
            "{}",
            r.harness
        );
    }
}

#[test]
fn tool_error_is_an_error_with_exit_code_2() {
    for r in [qwen("tool_error"), kilo("tool_error")] {
        assert_eq!(r.tool_calls.len(), 1, "{}", r.harness);
        assert_eq!(r.tool_calls[0].status, ToolOutcome::Error, "{}", r.harness);
        assert_eq!(r.tool_calls[0].exit_code, Some(2), "{}", r.harness);
        assert_eq!(r.final_status, TurnStatus::Completed, "{}", r.harness);
    }
}

/// Without the opt-outs, Kilo's probe run also asks for a session title (a side request
/// with no tools): the stream is the same three calls.
#[test]
fn probe_runs_reduce_as_the_plain_ones() {
    for (r, plain) in [
        (qwen("probe_hello"), qwen("hello")),
        (kilo("probe_hello"), kilo("hello")),
    ] {
        assert_eq!(r.num_turns, plain.num_turns, "{}", r.harness);
        assert_eq!(tools(&r), tools(&plain), "{}", r.harness);
    }
}
