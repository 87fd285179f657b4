//! Golden replay: every Claude Code recording in the corpus replays without error, its
//! turn record is pinned by an insta snapshot, and replay is byte-identical run to run.

use crate::support::{captures, corpus};
use coder_eval::results::{ToolOutcome, TurnRecord, TurnStatus};
use coder_eval::turn::replay::{ReplayOptions, replay};

fn replay_claude(path: &std::path::Path) -> TurnRecord {
    replay(path, &ReplayOptions::new("claude-code"))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_claude_file_replays_and_matches_its_snapshot() {
    let mut files = captures("live/claude");
    files.extend(captures("public/claude-code"));
    assert!(files.len() >= 12, "corpus went missing: {files:?}");
    for path in files {
        let record = replay_claude(&path);
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

#[test]
fn hello_has_three_calls_and_two_ok_tools() {
    let r = replay_claude(&corpus("live/claude/hello.jsonl"));
    assert_eq!(r.num_turns, 3);
    assert_eq!(
        r.model_calls
            .iter()
            .filter(|c| c.main_index.is_some())
            .count(),
        3
    );
    let tools: Vec<(&str, ToolOutcome)> = r
        .tool_calls
        .iter()
        .map(|t| (t.name.as_str(), t.status))
        .collect();
    assert_eq!(
        tools,
        [("Write", ToolOutcome::Ok), ("Bash", ToolOutcome::Ok)]
    );
    assert_eq!(
        r.session_id.as_deref(),
        Some("3048391a-c289-46bf-9cfc-0aa09c1e9f37")
    );
    assert_eq!(r.cli_version.as_deref(), Some("2.1.197"));
    assert!(r.usage.unwrap().input_tokens > 0 && r.usage.unwrap().output_tokens > 0);
    assert_eq!(r.final_status, TurnStatus::Completed);
    assert!(r.diagnostics.is_empty());
    assert_eq!(r.commands, ["date"]);
}

#[test]
fn usage_counted_once_per_message_id() {
    // parallel.jsonl: one message id over three assistant lines, each repeating usage.
    let r = replay_claude(&corpus("live/claude/parallel.jsonl"));
    let first = &r.messages[0];
    assert_eq!(first.message_id, "msg_mock_0_1");
    assert_eq!(first.usage.unwrap().input_tokens, 19467);
    assert_eq!(r.messages.len(), 2);
}

#[test]
fn parallel_tools_overlap_and_count_once() {
    let r = replay_claude(&corpus("live/claude/parallel.jsonl"));
    assert_eq!(r.tool_calls.len(), 2);
    let (a, b) = (&r.tool_calls[0], &r.tool_calls[1]);
    // Both started before either finished: their intervals overlap.
    assert!(b.started_ms < a.finished_ms.unwrap());
    let t = &r.timing;
    assert!(t.tool_union_ms.unwrap() < t.tool_sum_ms, "{t:?}");
    let sum = t.harness_startup_ms.unwrap()
        + t.generation_duration_ms.unwrap()
        + t.tool_union_ms.unwrap()
        + t.harness_teardown_ms.unwrap()
        + t.retry_wait_ms.unwrap_or(0);
    assert_eq!(sum, t.turn_duration_ms);
}

#[test]
fn max_turns_result_is_seen() {
    let r = replay_claude(&corpus("live/claude/max_turns.jsonl"));
    let cli = r.cli_result.as_ref().unwrap();
    assert_eq!(cli.error_kind.as_deref(), Some("error_max_turns"));
    assert!(cli.max_turns_reached);
    assert!(r.max_turns_exhausted);
    assert_eq!(r.num_turns, 3);
    assert_eq!(r.tool_calls.len(), 2);
    assert_eq!(r.final_status, TurnStatus::MaxTurnsExhausted);
}

#[test]
fn tool_error_is_an_error_with_exit_code() {
    let r = replay_claude(&corpus("live/claude/tool_error.jsonl"));
    assert_eq!(r.tool_calls[0].status, ToolOutcome::Error);
    assert_eq!(r.tool_calls[0].exit_code, Some(2));
}

#[test]
fn partial_messages_start_calls_and_update_output_tokens() {
    let r = replay_claude(&corpus("live/claude/hello_partial.jsonl"));
    assert_eq!(r.num_turns, 3);
    // message_delta's final count (30) wins over the assistant lines' 1.
    assert_eq!(r.messages[0].usage.unwrap().output_tokens, 30);
}

#[test]
fn public_edge_cases() {
    let r = replay_claude(&corpus("public/claude-code/takopi-api-error-result.jsonl"));
    assert_eq!(r.tool_calls[0].status, ToolOutcome::Interrupted);
    assert_eq!(r.final_status, TurnStatus::CliError);
    assert!(
        r.cli_result
            .unwrap()
            .error_message
            .unwrap()
            .contains("Rate limit")
    );

    let r = replay_claude(&corpus("public/claude-code/issue-rate-limit-event.jsonl"));
    assert_eq!(r.diagnostics[0].kind, "rate_limit");

    let r = replay_claude(&corpus(
        "public/claude-code/takopi-compact-boundary-and-unknown-subtype.jsonl",
    ));
    let kinds: Vec<&str> = r.diagnostics.iter().map(|d| d.kind.as_str()).collect();
    assert!(
        kinds.contains(&"compact_boundary") && kinds.contains(&"unknown_subtype"),
        "{kinds:?}"
    );

    let r = replay_claude(&corpus(
        "public/claude-code/takopi-permission-denied-error-result.jsonl",
    ));
    assert!(
        r.model_calls
            .iter()
            .any(|c| c.parent_call_id.as_deref() == Some("toolu_parent"))
    );
    // Sub-agent calls do not count as turns.
    assert_eq!(r.num_turns, 1);
}

#[test]
fn replay_is_byte_identical() {
    for path in captures("live/claude") {
        let a = serde_json::to_string(&replay_claude(&path)).unwrap();
        let b = serde_json::to_string(&replay_claude(&path)).unwrap();
        assert_eq!(a, b, "{}", path.display());
    }
}

/// The Claude Code 2.1.332 recordings (`live/claude/<scenario>-2.1.332.jsonl`, the same
/// scripts as the 2.1.197 ones beside them) reduce to the same counts and statuses, with
/// no diagnostic: the fields 2.1.332 adds (`timestamp` on assistant lines,
/// `tool_result_meta` on user lines, `subagent_stats`, `safety_stops`, … in the result)
/// change nothing, and 2.1.332 is a checked version (no `unchecked_cli_version`).
#[test]
fn claude_2_1_332_recordings_match_2_1_197() {
    let summary = |r: &TurnRecord| {
        let tools: Vec<(String, ToolOutcome, Option<i32>)> = r
            .tool_calls
            .iter()
            .map(|t| (t.name.clone(), t.status, t.exit_code))
            .collect();
        let cli = r.cli_result.as_ref().unwrap();
        (
            r.num_turns,
            tools,
            r.commands.clone(),
            r.final_status,
            r.max_turns_exhausted,
            cli.error_kind.clone(),
            r.messages.len(),
        )
    };
    for s in [
        "hello",
        "parallel",
        "tool_error",
        "max_turns",
        "hello_partial",
        "long_shell",
    ] {
        let old = replay_claude(&corpus(&format!("live/claude/{s}.jsonl")));
        let new = replay_claude(&corpus(&format!("live/claude/{s}-2.1.332.jsonl")));
        assert_eq!(new.cli_version.as_deref(), Some("2.1.332"), "{s}");
        assert!(new.diagnostics.is_empty(), "{s}: {:?}", new.diagnostics);
        assert_eq!(summary(&new), summary(&old), "{s}");
        let usage = new.usage.unwrap();
        assert!(usage.input_tokens > 0 && usage.output_tokens > 0, "{s}");
        assert!(new.cost_usd.unwrap() > 0.0, "{s}");
    }
    let probe = replay_claude(&corpus("live/claude/probe_hello-2.1.332.jsonl"));
    let hello = replay_claude(&corpus("live/claude/hello-2.1.332.jsonl"));
    assert_eq!(summary(&probe), summary(&hello));
    // Partial messages: message_delta's final output count wins over the line's 1.
    let partial = replay_claude(&corpus("live/claude/hello_partial-2.1.332.jsonl"));
    assert!(partial.messages[0].usage.unwrap().output_tokens > 1);
}

/// Claude Code 2.1.332 refuses a Bash command that begins with `sleep N` (N ≥ 25) before
/// running it (`blocked_sleep-2.1.332.jsonl`: the turn_timeout task's old
/// `sleep 31.4159 && echo imported > done.txt`; `long_shell`'s `sleep 3 && …` still runs):
/// the call is denied, no command, with no exit code, and the run goes on to its reply.
#[test]
fn claude_2_1_332_blocked_sleep_is_denied() {
    let r = replay_claude(&corpus("live/claude/blocked_sleep-2.1.332.jsonl"));
    assert_eq!(r.cli_version.as_deref(), Some("2.1.332"));
    let tools: Vec<(&str, ToolOutcome, Option<i32>)> = r
        .tool_calls
        .iter()
        .map(|t| (t.name.as_str(), t.status, t.exit_code))
        .collect();
    assert_eq!(tools, [("Bash", ToolOutcome::Denied, None)]);
    assert!(
        r.tool_calls[0]
            .output_excerpt
            .starts_with("<tool_use_error>Blocked: sleep 31.4159 followed by: "),
        "{}",
        r.tool_calls[0].output_excerpt
    );
    assert!(r.commands.is_empty(), "{:?}", r.commands);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert_eq!(r.num_turns, 2);
    assert_eq!(r.final_status, TurnStatus::Completed);
}

/// Claude Code 2.1.332 running the turn_timeout task's command to its end
/// (`long_command-2.1.332.jsonl`: `python3 -c 'import time; time.sleep(31.4159)' && …`)
/// writes a `tool_progress` heartbeat at 30 s: known, no diagnostic; the call is one ok
/// command, and the run took the whole wait.
#[test]
fn claude_2_1_332_long_command_heartbeat_is_no_diagnostic() {
    let path = corpus("live/claude/long_command-2.1.332.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(r#""type":"tool_progress""#),
        "the heartbeat is recorded"
    );
    let r = replay_claude(&path);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    let tools: Vec<(&str, ToolOutcome)> = r
        .tool_calls
        .iter()
        .map(|t| (t.name.as_str(), t.status))
        .collect();
    assert_eq!(tools, [("Bash", ToolOutcome::Ok)]);
    assert!(r.commands[0].starts_with("python3 -c 'import time; time.sleep(31.4159)'"));
    // A plain capture has no stamps of its own: the CLI's result says how long it took.
    let cli = r.cli_result.as_ref().unwrap();
    assert!(cli.duration_ms.unwrap() >= 31_000, "{cli:?}");
    assert_eq!(r.final_status, TurnStatus::Completed);
}

/// A stream from a Claude Code newer than the versions the harness was checked against
/// (2.1.332's `hello`, its `claude_code_version` changed to 2.1.9999) still reduces to
/// the same record, with one `unchecked_cli_version` note on its `system/init` line.
#[test]
fn a_newer_claude_code_is_a_note_not_an_error() {
    let text = std::fs::read_to_string(corpus("live/claude/hello-2.1.332.jsonl")).unwrap();
    let newer = text.replace(
        r#""claude_code_version":"2.1.332""#,
        r#""claude_code_version":"2.1.9999""#,
    );
    assert_ne!(newer, text, "the init line names the version");
    let dir = crate::support::scratch("claude-newer-version");
    let path = dir.join("hello.jsonl");
    std::fs::write(&path, newer).unwrap();
    let r = replay_claude(&path);
    assert_eq!(r.cli_version.as_deref(), Some("2.1.9999"));
    let notes: Vec<_> = r
        .diagnostics
        .iter()
        .map(|d| (d.kind.as_str(), d.line))
        .collect();
    assert_eq!(notes, [("unchecked_cli_version", 1)]);
    assert!(r.diagnostics[0].message.contains("2.1.9999"));
    let checked = replay_claude(&corpus("live/claude/hello-2.1.332.jsonl"));
    assert_eq!(r.final_status, checked.final_status);
    assert_eq!(r.tool_calls.len(), checked.tool_calls.len());
    assert_eq!(r.usage, checked.usage);
}
